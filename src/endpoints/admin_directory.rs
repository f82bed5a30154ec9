//! The admin API's directory (issue 32): a tenant's groups and their members (users and,
//! nested, groups), the roles each client defines and their assignments to users or groups.
//! Every change is audited; the changes themselves are the functions below, which the CLI's
//! and the console's callers share with the handlers.
//!
//! A group or role taken away is gone from the user's next token (issuance and refresh read
//! the directory from memory); tokens already issued keep what they said until they expire.

use super::operations::Actor;
use crate::error::OAuthError;
use crate::http::params::Body;
use crate::registry::directory::{Group, GroupInput, Principal, Refusal};
use crate::tenant::Issuer;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, put};
use axum::{Json, Router};
use serde_json::{json, Value};
use std::sync::Arc;

pub fn routes() -> Router<crate::app::AppState> {
    Router::new()
        .route("/admin/groups", get(list_groups).post(create_group))
        .route("/admin/groups/{group}", get(show_group).patch(update_group).delete(delete_group))
        .route("/admin/groups/{group}/members", get(list_group_members))
        .route("/admin/groups/{group}/members/{kind}/{member}", put(put_group_member).delete(remove_group_member))
        .route("/admin/clients/{client}/roles", get(list_roles))
        .route("/admin/clients/{client}/roles/{role}", put(put_role).delete(delete_role))
        .route("/admin/clients/{client}/roles/{role}/assignments", get(list_assignments))
        .route("/admin/clients/{client}/roles/{role}/assignments/{kind}/{principal}", put(put_assignment).delete(remove_assignment))
        .route("/admin/users/{id}/groups", get(user_groups))
}

type AdminResult = Result<Response, OAuthError>;

/// A role's description.
#[derive(serde::Deserialize, utoipa::ToSchema, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RoleInput {
    #[serde(default)]
    description: String,
}

fn refused(r: Refusal) -> OAuthError {
    match r {
        Refusal::NoSuchGroup => OAuthError::not_found("no such group"),
        Refusal::NoSuchRole => OAuthError::not_found("no such role"),
        Refusal::NameTaken | Refusal::Cycle => OAuthError::invalid_request(r.to_string()).with_status(StatusCode::CONFLICT),
        Refusal::Limit(_) => OAuthError::invalid_request(r.to_string()),
    }
}

pub(crate) fn find_group(app: &Issuer, group: &str) -> Result<Arc<Group>, OAuthError> {
    app.registry().group(group).ok_or_else(|| OAuthError::not_found("no such group"))
}

fn find_client(app: &Issuer, client: &str) -> Result<Arc<crate::registry::Client>, OAuthError> {
    app.registry().client(client).ok_or_else(|| OAuthError::not_found("no such client"))
}

/// A member or assignee named in a path: `users/{id, username or e-mail}` or
/// `groups/{id or name}`, resolved to the tenant's own.
pub(crate) fn principal(app: &Issuer, kind: &str, who: &str) -> Result<Principal, OAuthError> {
    match kind {
        "users" => Ok(Principal::User(app.registry().find_user(who).ok_or_else(|| OAuthError::not_found("no such user"))?.id.clone())),
        "groups" => Ok(Principal::Group(find_group(app, who)?.id.clone())),
        _ => Err(OAuthError::not_found("members are users or groups")),
    }
}

/// How the admin API shows a member or an assignee.
fn principal_json(app: &Issuer, p: &Principal) -> Value {
    let registry = app.registry();
    match p {
        Principal::User(id) => json!({"type": "user", "id": id, "username": registry.user(id).map(|u| u.username.clone())}),
        Principal::Group(id) => json!({"type": "group", "id": id, "display_name": registry.group(id).map(|g| g.display_name.clone())}),
    }
}

// ----- the changes, audited (the admin API's handlers, the CLI and the console share them) -----

pub(crate) async fn create(app: &Issuer, actor: &Actor, input: GroupInput) -> Result<Group, OAuthError> {
    let group = Group::new(app.tenant.id, input).map_err(OAuthError::invalid_request)?;
    let group = app.registry().save_group(group, &app.config.directory_limits()).await?.map_err(refused)?;
    app.audit(actor.event("group_created", json!({"group_id": group.id, "display_name": group.display_name}))).await;
    Ok(group)
}

pub(crate) async fn change(app: &Issuer, actor: &Actor, group: &str, input: GroupInput) -> Result<Group, OAuthError> {
    let mut group = (*find_group(app, group)?).clone();
    group.apply(input).map_err(OAuthError::invalid_request)?;
    let group = app.registry().save_group(group, &app.config.directory_limits()).await?.map_err(refused)?;
    app.audit(actor.event("group_changed", json!({"group_id": group.id, "group": group.to_json()}))).await;
    Ok(group)
}

pub(crate) async fn delete(app: &Issuer, actor: &Actor, group: &str) -> Result<(), OAuthError> {
    let group = find_group(app, group)?;
    app.registry().delete_group(&group.id).await?;
    app.audit(actor.event("group_deleted", json!({"group_id": group.id, "display_name": group.display_name}))).await;
    Ok(())
}

/// Add `p` to `group` or take it out; whether anything changed.
pub(crate) async fn set_member(app: &Issuer, actor: &Actor, group: &str, p: Principal, present: bool) -> Result<bool, OAuthError> {
    let group = find_group(app, group)?;
    let changed = app.registry().set_group_member(&group.id, p.clone(), present, &app.config.directory_limits()).await?.map_err(refused)?;
    if changed {
        let event = if present { "group_member_added" } else { "group_member_removed" };
        let mut e = actor.event(event, json!({"group_id": group.id, "member_type": p.kind(), "member_id": p.id()}));
        if let Principal::User(u) = &p {
            e = e.user(u);
        }
        app.audit(e).await;
    }
    Ok(changed)
}

pub(crate) async fn define_role(app: &Issuer, actor: &Actor, client: &str, role: &str, description: &str) -> Result<(), OAuthError> {
    let client = find_client(app, client)?;
    crate::registry::directory::validate_role(role).map_err(OAuthError::invalid_request)?;
    crate::registry::directory::validate_description(description).map_err(OAuthError::invalid_request)?;
    app.registry().put_role(client.id(), role, description, &app.config.directory_limits()).await?.map_err(refused)?;
    app.audit(actor.event("client_role_defined", json!({"client_id": client.id(), "role": role, "description": description}))).await;
    Ok(())
}

pub(crate) async fn remove_role(app: &Issuer, actor: &Actor, client: &str, role: &str) -> Result<(), OAuthError> {
    let client = find_client(app, client)?;
    if !app.registry().delete_role(client.id(), role).await? {
        return Err(OAuthError::not_found("no such role"));
    }
    app.audit(actor.event("client_role_removed", json!({"client_id": client.id(), "role": role}))).await;
    Ok(())
}

/// Assign a role to `p` or take it away; whether anything changed.
pub(crate) async fn set_assignment(app: &Issuer, actor: &Actor, client: &str, role: &str, p: Principal, present: bool) -> Result<bool, OAuthError> {
    let client = find_client(app, client)?;
    let changed = app.registry().set_role_assignment(client.id(), role, p.clone(), present).await?.map_err(refused)?;
    if changed {
        let event = if present { "role_assigned" } else { "role_unassigned" };
        let mut e = actor.event(event, json!({"client_id": client.id(), "role": role, "principal_type": p.kind(), "principal_id": p.id()}));
        if let Principal::User(u) = &p {
            e = e.user(u);
        }
        app.audit(e).await;
    }
    Ok(changed)
}

// ----- handlers -----

/// Every group of the tenant, by name.
#[utoipa::path(get, path = "/admin/groups", tag = "directory", responses((status = 200, description = "`{\"groups\": [...]}`", body = Object), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn list_groups(app: Issuer) -> AdminResult {
    let groups: Vec<Value> = app.registry().list_groups().iter().map(|g| g.to_json()).collect();
    Ok(Json(json!({ "groups": groups })).into_response())
}

/// Create a group (`display_name` required, unique in the tenant without case).
#[utoipa::path(post, path = "/admin/groups", tag = "directory", request_body = GroupInput, responses((status = 201, description = "the group, with its `id`", body = Object), (status = 400, description = "a bad name, or `directory_max_groups` reached"), (status = 409, description = "the name is another group's"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn create_group(app: Issuer, actor: Actor, Body(body): Body) -> AdminResult {
    let group = create(&app, &actor, super::admin::parse(&body)?).await?;
    Ok((StatusCode::CREATED, Json(group.to_json())).into_response())
}

/// One group (by id or name), with how many direct members it has.
#[utoipa::path(get, path = "/admin/groups/{group}", tag = "directory", params(("group" = String, Path, description = "the group's id or name")), responses((status = 200, description = "the group", body = Object), (status = 404, description = "no such group"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn show_group(app: Issuer, Path(group): Path<String>) -> AdminResult {
    let group = find_group(&app, &group)?;
    let mut v = group.to_json();
    v["members"] = app.registry().group_members(&group.id).len().into();
    v["groups"] = app.registry().direct_groups(&Principal::Group(group.id.clone())).iter().map(|g| g.id.clone()).collect::<Vec<_>>().into();
    Ok(Json(v).into_response())
}

/// Rename a group or change its external id.
#[utoipa::path(patch, path = "/admin/groups/{group}", tag = "directory", params(("group" = String, Path, description = "the group's id or name")), request_body = GroupInput, responses((status = 200, description = "the group", body = Object), (status = 400, description = "a bad value"), (status = 404, description = "no such group"), (status = 409, description = "the name is another group's"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn update_group(app: Issuer, actor: Actor, Path(group): Path<String>, Body(body): Body) -> AdminResult {
    let group = change(&app, &actor, &group, super::admin::parse(&body)?).await?;
    Ok(Json(group.to_json()).into_response())
}

/// Delete a group with its memberships and role assignments.
#[utoipa::path(delete, path = "/admin/groups/{group}", tag = "directory", params(("group" = String, Path, description = "the group's id or name")), responses((status = 204, description = "deleted"), (status = 404, description = "no such group"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn delete_group(app: Issuer, actor: Actor, Path(group): Path<String>) -> AdminResult {
    delete(&app, &actor, &group).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// The group's direct members (users and groups).
#[utoipa::path(get, path = "/admin/groups/{group}/members", tag = "directory", params(("group" = String, Path, description = "the group's id or name")), responses((status = 200, description = "`{\"members\": [{\"type\": \"user\"|\"group\", \"id\", ..., \"source\": \"local\"|\"ldap:<directory>\"}]}`: `source` says whose the membership is, an operator's or a directory's mapping", body = Object), (status = 404, description = "no such group"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn list_group_members(app: Issuer, Path(group): Path<String>) -> AdminResult {
    let group = find_group(&app, &group)?;
    let sources = app.registry().group_member_sources(&group.id).await?;
    let members: Vec<Value> = app
        .registry()
        .group_members(&group.id)
        .iter()
        .map(|p| {
            let mut v = principal_json(&app, p);
            v["source"] = sources.get(&p.key()).map_or("local", String::as_str).into();
            v
        })
        .collect();
    Ok(Json(json!({ "members": members })).into_response())
}

/// Add a user (by id, username or e-mail) or a group (by id or name; nesting) to the group.
#[utoipa::path(put, path = "/admin/groups/{group}/members/{kind}/{member}", tag = "directory", params(("group" = String, Path, description = "the group's id or name"), ("kind" = String, Path, description = "`users` or `groups`"), ("member" = String, Path, description = "the user's id, username or e-mail, or the group's id or name")), responses((status = 204, description = "a member (already or now)"), (status = 400, description = "a bound of the directory would be passed"), (status = 404, description = "no such group or member"), (status = 409, description = "the group would contain itself"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn put_group_member(app: Issuer, actor: Actor, Path((group, kind, member)): Path<(String, String, String)>) -> AdminResult {
    let p = principal(&app, &kind, &member)?;
    set_member(&app, &actor, &group, p, true).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Take a user or a group out of the group.
#[utoipa::path(delete, path = "/admin/groups/{group}/members/{kind}/{member}", tag = "directory", params(("group" = String, Path, description = "the group's id or name"), ("kind" = String, Path, description = "`users` or `groups`"), ("member" = String, Path, description = "the user's or group's id or name")), responses((status = 204, description = "removed"), (status = 404, description = "no such group, member or membership"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn remove_group_member(app: Issuer, actor: Actor, Path((group, kind, member)): Path<(String, String, String)>) -> AdminResult {
    let p = principal(&app, &kind, &member)?;
    if !set_member(&app, &actor, &group, p, false).await? {
        return Err(OAuthError::not_found("not a member"));
    }
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// The roles a client defines, with their descriptions.
#[utoipa::path(get, path = "/admin/clients/{client}/roles", tag = "directory", params(("client" = String, Path, description = "the client's id")), responses((status = 200, description = "`{\"roles\": [{\"role\", \"description\"}]}`", body = Object), (status = 404, description = "no such client"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn list_roles(app: Issuer, Path(client): Path<String>) -> AdminResult {
    let client = find_client(&app, &client)?;
    let roles: Vec<Value> = app.registry().client_roles(client.id()).into_iter().map(|(role, description)| json!({"role": role, "description": description})).collect();
    Ok(Json(json!({ "roles": roles })).into_response())
}

/// Define a role on the client (or change its description).
#[utoipa::path(put, path = "/admin/clients/{client}/roles/{role}", tag = "directory", params(("client" = String, Path, description = "the client's id"), ("role" = String, Path, description = "1-64 characters of letters, digits, `_`, `.`, `:` and `-`")), request_body = RoleInput, responses((status = 204, description = "defined"), (status = 400, description = "a bad name or description, or `directory_max_roles_per_client` reached"), (status = 404, description = "no such client"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn put_role(app: Issuer, actor: Actor, Path((client, role)): Path<(String, String)>, Body(body): Body) -> AdminResult {
    let input: RoleInput = if body.is_empty() { RoleInput::default() } else { super::admin::parse(&body)? };
    define_role(&app, &actor, &client, &role, &input.description).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Remove a role with its assignments.
#[utoipa::path(delete, path = "/admin/clients/{client}/roles/{role}", tag = "directory", params(("client" = String, Path, description = "the client's id"), ("role" = String, Path, description = "the role")), responses((status = 204, description = "removed"), (status = 404, description = "no such client or role"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn delete_role(app: Issuer, actor: Actor, Path((client, role)): Path<(String, String)>) -> AdminResult {
    remove_role(&app, &actor, &client, &role).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Who holds a role directly (users and groups).
#[utoipa::path(get, path = "/admin/clients/{client}/roles/{role}/assignments", tag = "directory", params(("client" = String, Path, description = "the client's id"), ("role" = String, Path, description = "the role")), responses((status = 200, description = "`{\"assignments\": [{\"type\": \"user\"|\"group\", \"id\", ...}]}`", body = Object), (status = 404, description = "no such client or role"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn list_assignments(app: Issuer, Path((client, role)): Path<(String, String)>) -> AdminResult {
    let client = find_client(&app, &client)?;
    if !app.registry().client_roles(client.id()).contains_key(&role) {
        return Err(OAuthError::not_found("no such role"));
    }
    let assignees: Vec<Value> = app.registry().role_assignees(client.id(), &role).iter().map(|p| principal_json(&app, p)).collect();
    Ok(Json(json!({ "assignments": assignees })).into_response())
}

/// Assign the role to a user or a group (then to its members, through nesting too).
#[utoipa::path(put, path = "/admin/clients/{client}/roles/{role}/assignments/{kind}/{principal}", tag = "directory", params(("client" = String, Path, description = "the client's id"), ("role" = String, Path, description = "the role"), ("kind" = String, Path, description = "`users` or `groups`"), ("principal" = String, Path, description = "the user's id, username or e-mail, or the group's id or name")), responses((status = 204, description = "assigned (already or now)"), (status = 404, description = "no such client, role, user or group"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn put_assignment(app: Issuer, actor: Actor, Path((client, role, kind, who)): Path<(String, String, String, String)>) -> AdminResult {
    let p = principal(&app, &kind, &who)?;
    set_assignment(&app, &actor, &client, &role, p, true).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Take the role away from a user or a group.
#[utoipa::path(delete, path = "/admin/clients/{client}/roles/{role}/assignments/{kind}/{principal}", tag = "directory", params(("client" = String, Path, description = "the client's id"), ("role" = String, Path, description = "the role"), ("kind" = String, Path, description = "`users` or `groups`"), ("principal" = String, Path, description = "the user's or group's id or name")), responses((status = 204, description = "taken away"), (status = 404, description = "no such client, role or assignment"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn remove_assignment(app: Issuer, actor: Actor, Path((client, role, kind, who)): Path<(String, String, String, String)>) -> AdminResult {
    let p = principal(&app, &kind, &who)?;
    if !set_assignment(&app, &actor, &client, &role, p, false).await? {
        return Err(OAuthError::not_found("no such assignment"));
    }
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// A user's groups (direct, and all of them through nesting) and roles on each client.
#[utoipa::path(get, path = "/admin/users/{id}/groups", tag = "directory", params(("id" = String, Path, description = "the user's id, username or e-mail")), responses((status = 200, description = "`{\"groups\": [...direct], \"effective_groups\": [...], \"roles\": {client_id: [...]}}`", body = Object), (status = 404, description = "no such user"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn user_groups(app: Issuer, Path(id): Path<String>) -> AdminResult {
    let registry = app.registry();
    let user = registry.find_user(&id).ok_or_else(|| OAuthError::not_found("no such user"))?;
    let direct: Vec<Value> = registry.direct_groups(&Principal::User(user.id.clone())).iter().map(|g| g.to_json()).collect();
    let effective = registry.effective(&user.id);
    let groups: Vec<Value> = effective.iter().flat_map(|e| e.groups.iter()).filter_map(|g| registry.group(g)).map(|g| json!({"id": g.id, "display_name": g.display_name})).collect();
    let roles: serde_json::Map<String, Value> = effective.iter().flat_map(|e| e.roles.iter()).map(|(c, r)| (c.clone(), r.to_vec().into())).collect();
    Ok(Json(json!({"user_id": user.id, "groups": direct, "effective_groups": groups, "roles": roles})).into_response())
}
