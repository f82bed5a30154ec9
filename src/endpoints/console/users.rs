//! Users in the console: the list (searchable), a form to create one or change their name,
//! e-mail, roles, password and whether they may sign in; their second factors (remove one or
//! all) and sessions (end one or all); their groups and roles (read only); deletion.

use super::clients::enc;
use super::{Id, checked, not_found, notice, refused, text, when, Change, Viewer};
use crate::endpoints::first_party::see_other;
use crate::endpoints::operations;
use crate::registry::directory::Principal;
use crate::registry::users::{UserInput, ROLES};
use crate::registry::User;
use crate::tenant::Issuer;
use crate::ui::Page;
use axum::extract::RawQuery;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};

/// The most users a list page shows (a search narrows it).
const PAGE: usize = 200;

fn row(u: &User) -> Value {
    json!({"id": u.id, "username": u.username, "email": u.email(), "name": u.claims.get("name"), "disabled": u.disabled, "roles": u.roles.join(" ")})
}

pub async fn list(app: Issuer, viewer: Viewer, RawQuery(query): RawQuery) -> Response {
    let params = crate::http::params::Params::parse(query.as_deref().unwrap_or_default().as_bytes()).unwrap_or_default();
    let typed = params.get("q").map(str::trim).unwrap_or_default();
    let q = typed.to_lowercase();
    let all = app.registry().list_users();
    // Names and e-mails in any case; an id (case-sensitive) exactly.
    let matching: Vec<_> = all
        .iter()
        .filter(|u| q.is_empty() || u.id == typed || u.username.to_lowercase().contains(&q) || u.email().is_some_and(|e| e.to_lowercase().contains(&q)))
        .collect();
    let rows: Vec<Value> = matching.iter().take(PAGE).map(|u| row(u)).collect();
    let mut page = viewer
        .page("console_users.html", "console-users", "users")
        .with("users", rows)
        .with("q", typed)
        .with("total", matching.len())
        .with("shown", matching.len().min(PAGE));
    if let Some(n) = notice(query.as_deref()) {
        page = page.msg("notice", n);
    }
    page.into_response()
}

fn form_page(viewer: &Viewer, user: Value, new: bool) -> Page {
    viewer
        .page("console_user.html", if new { "console-user-new" } else { "console-user-title" }, "users")
        .with("user", user)
        .with("new", new)
        .with("all_roles", ROLES)
}

pub async fn new_form(viewer: Viewer) -> Response {
    form_page(&viewer, json!({"roles": []}), true).into_response()
}

/// What the form sets. The e-mail and name are claims (an emptied field removes one); the
/// password only when typed.
fn input(params: &crate::http::params::Params) -> UserInput {
    let mut claims = Map::new();
    for name in ["email", "name"] {
        claims.insert(name.into(), text(params, name).map_or(Value::Null, Value::String));
    }
    claims.insert("email_verified".into(), Value::Bool(checked(params, "email_verified")));
    UserInput {
        username: text(params, "username"),
        password: params.get("password").filter(|p| !p.is_empty()).map(str::to_string),
        disabled: Some(checked(params, "disabled")),
        roles: Some(ROLES.iter().filter(|r| checked(params, &format!("role:{r}"))).map(|r| r.to_string()).collect()),
        claims,
    }
}

fn typed(params: &crate::http::params::Params, id: Option<&str>) -> Value {
    let roles: Vec<&str> = ROLES.iter().copied().filter(|r| checked(params, &format!("role:{r}"))).collect();
    json!({
        "id": id, "username": text(params, "username"), "email": text(params, "email"), "name": text(params, "name"),
        "email_verified": checked(params, "email_verified"), "disabled": checked(params, "disabled"), "roles": roles,
    })
}

pub async fn create(app: Issuer, Change { admin, params }: Change) -> Response {
    let mut input = input(&params);
    // Nothing to remove on a new user.
    input.claims.retain(|_, v| !v.is_null());
    match operations::create_user(&app, &admin.actor(), input).await {
        Ok(user) => see_other(app.base(), &format!("/console/users/{}?done=created", enc(&user.id))),
        Err(e) => refused(form_page(&admin, typed(&params, None), true), &e),
    }
}

pub async fn show(app: Issuer, viewer: Viewer, Id(id): Id, RawQuery(query): RawQuery) -> Response {
    let Some(user) = app.registry().user(&id) else { return not_found() };
    let (factors, sessions) = match tokio::try_join!(crate::factors::list(&app.db, app.tenant.id, &id), app.stores.sessions.of_user(app.tenant.id, &id)) {
        Ok(both) => both,
        Err(e) => return crate::endpoints::authorize::unavailable(e),
    };
    let left = crate::factors::recovery::remaining(&app.db, app.tenant.id, &id).await.unwrap_or(0);
    let factors: Vec<Value> = factors
        .iter()
        .map(|f| json!({"id": f.id, "name": f.name, "kind": f.kind, "added": when(f.created_at), "used": when(f.last_used_at)}))
        .collect();
    let sessions: Vec<Value> = sessions
        .iter()
        .map(|s| json!({"sid": s.sid, "signed_in": when(s.auth_time), "acr": s.acr, "amr": s.amr.join(" "), "address": s.address, "user_agent": s.user_agent, "clients": s.clients.join(" ")}))
        .collect();
    let mut values = row(&user);
    values["email_verified"] = user.claims.get("email_verified").cloned().unwrap_or(Value::Bool(false));
    values["roles"] = json!(user.roles);
    values["updated"] = when(user.updated_at).into();
    let mut page = form_page(&viewer, values, false).with("factors", factors).with("sessions", sessions).with("recovery_codes_left", left).with("directory", directory(&app, &id));
    if let Some(n) = notice(query.as_deref()) {
        page = page.msg("notice", n);
    }
    page.into_response()
}

/// The user's groups, direct and effective (through nesting), and their roles on each client
/// (directly or through a group): read only here, changed on the groups' and clients' pages.
fn directory(app: &Issuer, id: &str) -> Value {
    let registry = app.registry();
    // By name, as the groups' page lists them.
    let links = |mut groups: Vec<std::sync::Arc<crate::registry::directory::Group>>| {
        groups.sort_by_cached_key(|g| g.name_key());
        groups.iter().map(|g| json!({"id": g.id, "name": g.display_name})).collect::<Vec<_>>()
    };
    let direct = links(registry.direct_groups(&Principal::User(id.to_string())));
    let effective = registry.effective(id);
    let groups = links(effective.iter().flat_map(|e| e.groups.iter()).filter_map(|g| registry.group(g)).collect());
    let mut roles: Vec<Value> = effective
        .iter()
        .flat_map(|e| e.roles.iter())
        .map(|(client, r)| json!({"client": client, "client_name": registry.client(client).and_then(|c| c.meta.client_name.clone()), "roles": r.join(" ")}))
        .collect();
    roles.sort_by(|a, b| a["client"].as_str().cmp(&b["client"].as_str()));
    json!({"direct": direct, "groups": groups, "roles": roles})
}

pub async fn update(app: Issuer, Id(id): Id, Change { admin, params }: Change) -> Response {
    if app.registry().user(&id).is_none() {
        return not_found();
    }
    // An admin does not lock themselves out of the console by a slip of the mouse.
    let input = input(&params);
    if id == admin.me.user.id && (input.disabled == Some(true) || !input.roles.as_ref().is_some_and(|r| r.iter().any(|r| r == "admin"))) {
        let e = crate::error::OAuthError::invalid_request("you cannot disable yourself or remove your own admin role; ask another admin");
        return refused(form_page(&admin, typed(&params, Some(&id)), false), &e);
    }
    match operations::update_user(&app, &admin.actor(), &id, input).await {
        Ok(_) => see_other(app.base(), &format!("/console/users/{}?done=saved", enc(&id))),
        Err(e) => refused(form_page(&admin, typed(&params, Some(&id)), false), &e),
    }
}

/// `factor` names one to remove; without it, all of them and the recovery codes.
pub async fn remove_factors(app: Issuer, Id(id): Id, Change { admin, params }: Change) -> Response {
    match operations::remove_factors(&app, &admin.actor(), &id, params.get("factor")).await {
        Ok(_) => see_other(app.base(), &format!("/console/users/{}?done=removed", enc(&id))),
        Err(e) if e.status == StatusCode::NOT_FOUND => not_found(),
        Err(e) => super::failed(&e),
    }
}

/// `sid` names one session to end; without it, all of the user's.
pub async fn end_sessions(app: Issuer, Id(id): Id, Change { admin, params }: Change) -> Response {
    match operations::end_sessions(&app, &admin.actor(), &id, params.get("sid")).await {
        Ok(_) => see_other(app.base(), &format!("/console/users/{}?done=ended", enc(&id))),
        Err(e) if e.status == StatusCode::NOT_FOUND => not_found(),
        Err(e) => super::failed(&e),
    }
}

pub async fn delete(app: Issuer, Id(id): Id, Change { admin, .. }: Change) -> Response {
    if id == admin.me.user.id {
        return super::message(StatusCode::BAD_REQUEST, "console-refused-heading", "console-delete-self", ("/console/users", "console-users"));
    }
    match operations::delete_user(&app, &admin.actor(), &id).await {
        Ok(()) => see_other(app.base(), "/console/users?done=deleted"),
        Err(e) if e.status == StatusCode::NOT_FOUND => not_found(),
        Err(e) => super::failed(&e),
    }
}
