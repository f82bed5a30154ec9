//! An organization's members in the console: add a user of the tenant (by their exact
//! username or e-mail, never a search, so that an organization administrator learns no
//! more of the tenant's users than the addresses they already know), change a member's
//! organization roles, remove one. For a tenant admin and for the organization's own
//! administrators (`Viewer::manages_members`, checked on every request); the admin API's
//! operations, audited with the console user as the actor.

use super::clients::enc;
use super::organizations::{show_page, visible};
use super::{message, not_found, org_only, refused, text, Id, Ids, MemberChange, Role, Viewer};
use crate::endpoints::admin_organizations as ops;
use crate::endpoints::first_party::see_other;
use crate::error::OAuthError;
use crate::registry::organizations::ORG_ADMIN_ROLE;
use crate::registry::Organization;
use crate::tenant::Issuer;
use axum::http::StatusCode;
use axum::response::Response;
use std::sync::Arc;

/// The organization, if the viewer manages its members; else the refusal.
fn managed(app: &Issuer, viewer: &Viewer, id: &str) -> Result<Arc<Organization>, Response> {
    let org = visible(app, viewer, id)?;
    if !viewer.manages_members(&org.id) {
        return Err(org_only());
    }
    Ok(org)
}

/// Roles as typed: separated by spaces or commas.
fn roles(params: &crate::http::params::Params) -> Vec<String> {
    let mut v: Vec<String> = params.get("roles").unwrap_or_default().split([' ', ',', '\t', '\r', '\n']).filter(|r| !r.is_empty()).map(str::to_string).collect();
    v.sort();
    v.dedup();
    v
}

/// An organization administrator does not take away their own administration by a slip
/// (they would be shut out of the page at once); another administrator, or the tenant's,
/// may.
fn locks_self_out(viewer: &Viewer, user_id: &str, roles: Option<&[String]>) -> bool {
    matches!(viewer.role, Role::OrgAdmin(_)) && user_id == viewer.me.user.id && !roles.is_some_and(|r| r.iter().any(|r| r == ORG_ADMIN_ROLE))
}

fn done(app: &Issuer, org: &Organization, what: &str) -> Response {
    see_other(app.base(), &format!("/console/organizations/{}?done={what}", enc(&org.id)))
}

pub async fn add(app: Issuer, Id(id): Id, MemberChange { viewer, params }: MemberChange) -> Response {
    let org = match managed(&app, &viewer, &id) {
        Ok(o) => o,
        Err(res) => return res,
    };
    let typed = text(&params, "user").unwrap_or_default();
    let Some(user) = app.registry().user_by_login(&typed) else {
        let e = OAuthError::not_found(format!("no user has the username or e-mail {typed:?}"));
        return refused(show_page(&app, &viewer, &org).with("typed_user", typed).with("typed_roles", params.get("roles").unwrap_or_default()), &e);
    };
    let roles = roles(&params);
    if locks_self_out(&viewer, &user.id, Some(&roles)) {
        return message(StatusCode::BAD_REQUEST, "console-refused-heading", "console-org-self", ("/console/organizations", "console-organizations"));
    }
    let was = app.registry().membership(&org.id, &user.id).is_some();
    match ops::set_member(&app, &viewer.actor(), &org.id, &user.id, roles).await {
        Ok(_) => done(&app, &org, if was { "saved" } else { "created" }),
        Err(e) => refused(show_page(&app, &viewer, &org).with("typed_user", typed).with("typed_roles", params.get("roles").unwrap_or_default()), &e),
    }
}

/// A member's roles (the whole list). The user must be a member already: this form does
/// not add anyone by id.
pub async fn change(app: Issuer, Ids(id, user): Ids, MemberChange { viewer, params }: MemberChange) -> Response {
    let org = match managed(&app, &viewer, &id) {
        Ok(o) => o,
        Err(res) => return res,
    };
    if app.registry().membership(&org.id, &user).is_none() {
        return not_found();
    }
    let roles = roles(&params);
    if locks_self_out(&viewer, &user, Some(&roles)) {
        return message(StatusCode::BAD_REQUEST, "console-refused-heading", "console-org-self", ("/console/organizations", "console-organizations"));
    }
    match ops::set_member(&app, &viewer.actor(), &org.id, &user, roles).await {
        Ok(_) => done(&app, &org, "saved"),
        Err(e) => refused(show_page(&app, &viewer, &org), &e),
    }
}

/// Remove a member: their tokens for this organization end at once.
pub async fn remove(app: Issuer, Ids(id, user): Ids, MemberChange { viewer, .. }: MemberChange) -> Response {
    let org = match managed(&app, &viewer, &id) {
        Ok(o) => o,
        Err(res) => return res,
    };
    if app.registry().membership(&org.id, &user).is_none() {
        return not_found();
    }
    if locks_self_out(&viewer, &user, None) {
        return message(StatusCode::BAD_REQUEST, "console-refused-heading", "console-org-self", ("/console/organizations", "console-organizations"));
    }
    match ops::unset_member(&app, &viewer.actor(), &org.id, &user).await {
        Ok(()) => done(&app, &org, "removed"),
        Err(e) if e.status == StatusCode::NOT_FOUND => not_found(),
        Err(e) => super::failed(&e),
    }
}
