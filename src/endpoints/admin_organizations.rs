//! The admin API's organizations (issue 31, B2B): a tenant's customer companies, their
//! e-mail domains, upstream connection and members with organization roles. Each tenant
//! manages its own at `{issuer}/admin/organizations`; nothing here reaches another tenant's.
//!
//! Removing a member (or the organization) ends the tokens issued for it at once: a token
//! that names an organization is checked against the membership wherever Authrim reads it
//! (refresh, introspection, userinfo), so no search of the token stores is needed.

use super::operations::Actor;
use crate::error::OAuthError;
use crate::http::params::Body;
use crate::registry::organizations::{validate_roles, Conflict};
use crate::registry::{Organization, OrganizationInput};
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
        .route("/admin/organizations", get(list_organizations).post(create_organization))
        .route("/admin/organizations/{org}", get(show_organization).patch(update_organization).delete(delete_organization))
        .route("/admin/organizations/{org}/members", get(list_members))
        .route("/admin/organizations/{org}/members/{user}", put(put_member).delete(remove_member))
}

type AdminResult = Result<Response, OAuthError>;

/// A member's organization roles (the whole list).
#[derive(serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MemberInput {
    #[serde(default)]
    roles: Vec<String>,
}

pub(crate) fn find(app: &Issuer, org: &str) -> Result<Arc<Organization>, OAuthError> {
    app.registry().organization(org).ok_or_else(|| OAuthError::not_found("no such organization"))
}

/// An upstream connection must be one of the tenant's providers.
fn check(app: &Issuer, org: &Organization) -> Result<(), OAuthError> {
    match &org.upstream {
        Some(id) if app.tenant.upstreams.get(id).is_none() => Err(OAuthError::invalid_request(format!("no upstream identity provider {id:?}"))),
        _ => Ok(()),
    }
}

async fn save(app: &Issuer, org: Organization) -> Result<(), OAuthError> {
    check(app, &org)?;
    match app.registry().save_organization(org).await? {
        Ok(()) => Ok(()),
        Err(Conflict::Slug) => Err(conflict("the slug is another organization's")),
        Err(Conflict::Domain(d)) => Err(conflict(&format!("the domain {d} is another organization's"))),
    }
}

fn conflict(what: &str) -> OAuthError {
    OAuthError::invalid_request(what.to_string()).with_status(StatusCode::CONFLICT)
}

/// Every organization of the tenant.
#[utoipa::path(get, path = "/admin/organizations", tag = "organizations", responses((status = 200, description = "`{\"organizations\": [...]}`", body = Object), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn list_organizations(app: Issuer) -> AdminResult {
    let all: Vec<Value> = app.registry().list_organizations().iter().map(|o| o.to_json()).collect();
    Ok(Json(json!({ "organizations": all })).into_response())
}

/// Create an organization (`slug` required).
#[utoipa::path(post, path = "/admin/organizations", tag = "organizations", request_body = OrganizationInput, responses((status = 201, description = "the organization, with its `id`", body = Object), (status = 400, description = "a bad slug, name, logo, domain or upstream"), (status = 409, description = "the slug or a domain is another organization's"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn create_organization(app: Issuer, actor: Actor, Body(body): Body) -> AdminResult {
    let org = create(&app, &actor, super::admin::parse(&body)?).await?;
    Ok((StatusCode::CREATED, Json(org.to_json())).into_response())
}

// The changes themselves, audited: the admin API's handlers and the console's pages
// (`console::organizations`) both call these, so both check and record alike.

/// Create an organization of `app`'s tenant.
pub(crate) async fn create(app: &Issuer, actor: &Actor, input: OrganizationInput) -> Result<Organization, OAuthError> {
    let org = Organization::new(app.tenant.id, input).map_err(OAuthError::invalid_request)?;
    save(app, org.clone()).await?;
    app.audit(actor.event("organization_created", json!({"org_id": org.id, "slug": org.slug}))).await;
    Ok(org)
}

/// Change an organization (by id or slug): absent fields keep their value.
pub(crate) async fn change(app: &Issuer, actor: &Actor, org: &str, input: OrganizationInput) -> Result<Organization, OAuthError> {
    let mut org = (*find(app, org)?).clone();
    org.apply(input).map_err(OAuthError::invalid_request)?;
    save(app, org.clone()).await?;
    app.audit(actor.event("organization_changed", json!({"org_id": org.id, "organization": org.to_json()}))).await;
    Ok(org)
}

/// Delete an organization (by id or slug) with its domains and memberships.
pub(crate) async fn delete(app: &Issuer, actor: &Actor, org: &str) -> Result<(), OAuthError> {
    let org = find(app, org)?;
    app.registry().delete_organization(&org.id).await?;
    app.audit(actor.event("organization_deleted", json!({"org_id": org.id, "slug": org.slug}))).await;
    Ok(())
}

/// Make a user (by id, username or e-mail) a member of `org` with `roles`, or change a
/// member's roles; the organization and the user.
pub(crate) async fn set_member(app: &Issuer, actor: &Actor, org: &str, user: &str, roles: Vec<String>) -> Result<(Arc<Organization>, Arc<crate::registry::User>), OAuthError> {
    validate_roles(&roles).map_err(OAuthError::invalid_request)?;
    let org = find(app, org)?;
    let user = app.registry().find_user(user).ok_or_else(|| OAuthError::not_found("no such user"))?;
    let was = app.registry().membership(&org.id, &user.id);
    app.registry().put_member(&org.id, &user.id, roles.clone()).await?;
    let event = if was.is_some() { "organization_member_changed" } else { "organization_member_added" };
    app.audit(actor.event(event, json!({"org_id": org.id, "user_id": user.id, "roles": roles})).user(&user.id)).await;
    Ok((org, user))
}

/// Remove a member: the tokens issued to them for this organization stop working at once.
pub(crate) async fn unset_member(app: &Issuer, actor: &Actor, org: &str, user: &str) -> Result<(), OAuthError> {
    let org = find(app, org)?;
    let user = app.registry().find_user(user).ok_or_else(|| OAuthError::not_found("no such user"))?;
    if !app.registry().remove_member(&org.id, &user.id).await? {
        return Err(OAuthError::not_found("the user is not a member"));
    }
    app.audit(actor.event("organization_member_removed", json!({"org_id": org.id, "user_id": user.id})).user(&user.id)).await;
    Ok(())
}

/// One organization (by id or slug), with how many members it has.
#[utoipa::path(get, path = "/admin/organizations/{org}", tag = "organizations", params(("org" = String, Path, description = "the organization's id or slug")), responses((status = 200, description = "the organization", body = Object), (status = 404, description = "no such organization"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn show_organization(app: Issuer, Path(org): Path<String>) -> AdminResult {
    let org = find(&app, &org)?;
    let mut v = org.to_json();
    v["members"] = app.registry().members(&org.id).len().into();
    Ok(Json(v).into_response())
}

/// Change an organization: absent fields keep their value; `domains` is the whole list.
#[utoipa::path(patch, path = "/admin/organizations/{org}", tag = "organizations", params(("org" = String, Path, description = "the organization's id or slug")), request_body = OrganizationInput, responses((status = 200, description = "the organization", body = Object), (status = 400, description = "a bad value"), (status = 404, description = "no such organization"), (status = 409, description = "the slug or a domain is another organization's"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn update_organization(app: Issuer, actor: Actor, Path(org): Path<String>, Body(body): Body) -> AdminResult {
    let org = change(&app, &actor, &org, super::admin::parse(&body)?).await?;
    Ok(Json(org.to_json()).into_response())
}

/// Delete an organization with its domains and memberships; the tokens issued for it stop
/// working at once.
#[utoipa::path(delete, path = "/admin/organizations/{org}", tag = "organizations", params(("org" = String, Path, description = "the organization's id or slug")), responses((status = 204, description = "deleted"), (status = 404, description = "no such organization"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn delete_organization(app: Issuer, actor: Actor, Path(org): Path<String>) -> AdminResult {
    delete(&app, &actor, &org).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// The organization's members: user id, username, roles and when they joined.
#[utoipa::path(get, path = "/admin/organizations/{org}/members", tag = "organizations", params(("org" = String, Path, description = "the organization's id or slug")), responses((status = 200, description = "`{\"members\": [...]}`", body = Object), (status = 404, description = "no such organization"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn list_members(app: Issuer, Path(org): Path<String>) -> AdminResult {
    let org = find(&app, &org)?;
    let registry = app.registry();
    let members: Vec<Value> = registry
        .members(&org.id)
        .into_iter()
        .map(|(user, m)| {
            let username = registry.user(&user).map(|u| u.username.clone());
            json!({"user_id": user, "username": username, "roles": m.roles, "joined_at": m.joined_at})
        })
        .collect();
    Ok(Json(json!({ "members": members })).into_response())
}

/// Make a user of the tenant (by id, username or e-mail) a member with these roles, or
/// change a member's roles.
#[utoipa::path(put, path = "/admin/organizations/{org}/members/{user}", tag = "organizations", params(("org" = String, Path, description = "the organization's id or slug"), ("user" = String, Path, description = "the user's id, username or e-mail")), request_body = MemberInput, responses((status = 200, description = "the membership", body = Object), (status = 400, description = "a bad role"), (status = 404, description = "no such organization or user"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn put_member(app: Issuer, actor: Actor, Path((org, user)): Path<(String, String)>, Body(body): Body) -> AdminResult {
    let input: MemberInput = if body.is_empty() { MemberInput { roles: Vec::new() } } else { super::admin::parse(&body)? };
    let (org, user) = set_member(&app, &actor, &org, &user, input.roles.clone()).await?;
    let m = app.registry().membership(&org.id, &user.id);
    Ok(Json(json!({"org_id": org.id, "user_id": user.id, "roles": input.roles, "joined_at": m.map(|m| m.joined_at)})).into_response())
}

/// Remove a member: the tokens issued to them for this organization stop working at once.
#[utoipa::path(delete, path = "/admin/organizations/{org}/members/{user}", tag = "organizations", params(("org" = String, Path, description = "the organization's id or slug"), ("user" = String, Path, description = "the user's id, username or e-mail")), responses((status = 204, description = "removed"), (status = 404, description = "no such organization, user or membership"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn remove_member(app: Issuer, actor: Actor, Path((org, user)): Path<(String, String)>) -> AdminResult {
    unset_member(&app, &actor, &org, &user).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
