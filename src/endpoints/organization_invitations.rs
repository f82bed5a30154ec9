//! The page an invitation to an organization links to: `{issuer}/organizations/invitation?token=…`.
//!
//! The token is looked up by its SHA-256 within the request's tenant (a token of another
//! tenant is unknown here). The user signs in first through the ordinary login (the page is a
//! first-party client, `first_party::INVITATION`: password, second factors, passkeys, upstream
//! providers, sign-up), and is offered the invitation only if their verified e-mail address is
//! the invited one. Accepting is a form carrying a CSRF token sealed to the session; it spends
//! the invitation and makes the membership in one transaction. The token travels in the query
//! (not the path), which the request log does not record.

use super::first_party::{signed_in, SignedIn, INVITATION};
use crate::audit::AuditEvent;
use crate::error::OAuthError;
use crate::http::pages::error_page;
use crate::http::params::{FormParams, Params};
use crate::registry::org_invitations::{self, Invitation, State};
use crate::registry::Organization;
use crate::tenant::Issuer;
use crate::ui::{Msg, Page};
use crate::util::{now, sha256};
use axum::extract::RawQuery;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use std::sync::Arc;

/// The invitation page (the mailed link adds `?token=`).
pub const PAGE: &str = "/organizations/invitation";
/// A token is 43 characters; anything much longer is not one and is not looked up.
const MAX_TOKEN: usize = 128;

pub fn router() -> Router<crate::app::AppState> {
    Router::new().route(PAGE, get(page).post(accept)).route("/organizations/invitation/login", get(login)).route(INVITATION.callback, get(callback))
}

/// The pending invitation a token is, with its organization; otherwise the page that says why
/// not (unknown 404; accepted, revoked, expired or its organization gone 410).
async fn pending(app: &Issuer, token: Option<&str>) -> Result<(Invitation, Arc<Organization>), Response> {
    let gone = |m: &'static str| error_page(StatusCode::GONE, m);
    let Some(token) = token.filter(|t| !t.is_empty() && t.len() <= MAX_TOKEN) else { return Err(error_page(StatusCode::NOT_FOUND, "err-invitation-unknown")) };
    let (tenant, hash) = (app.tenant.id, sha256(token.as_bytes()).to_vec());
    let found = app.db.read(move |sql| org_invitations::by_token_hash(sql, tenant, &hash)).await.map_err(crate::endpoints::authorize::unavailable)?;
    let Some(inv) = found else { return Err(error_page(StatusCode::NOT_FOUND, "err-invitation-unknown")) };
    match inv.state(now()) {
        State::Pending => {}
        State::Accepted => return Err(gone("err-invitation-used")),
        State::Revoked => return Err(gone("err-invitation-revoked")),
        State::Expired => return Err(gone("err-invitation-expired")),
    }
    let org = app.registry().organization(&inv.org_id).ok_or_else(|| gone("err-invitation-revoked"))?;
    Ok((inv, org))
}

/// The path back to this page with the token (already found as an invitation's).
fn return_path(token: &str) -> String {
    format!("{PAGE}?token={}", url::form_urlencoded::byte_serialize(token.as_bytes()).collect::<String>())
}

/// Whether the signed-in user may accept: their e-mail address is the invited one, and
/// verified (anyone can type an address into a profile).
fn is_invitee(me: &SignedIn, inv: &Invitation) -> bool {
    let verified = me.user.claim("email_verified").is_some_and(|v| v == true);
    verified && me.user.email().is_some_and(|e| inv.is_for(e))
}

/// The page for a user who is not the invitee: who they are, and a way to sign in as another.
fn not_invitee(app: &Issuer, me: &SignedIn, token: &str) -> Response {
    Page::new(StatusCode::FORBIDDEN, "org_invitation.html", "org-invitation-title")
        .with("step", "wrong_user")
        .with("username", &me.user.username)
        .with("switch", format!("{}{}&switch=1", app.base(), return_path(token)))
        .into_response()
}

/// `GET /organizations/invitation?token=…[&switch=1]`: sign in, then the invitation.
async fn page(app: Issuer, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    let params = Params::parse(query.unwrap_or_default().as_bytes()).unwrap_or_default();
    let token = params.get("token");
    let (inv, org) = match pending(&app, token).await {
        Ok(found) => found,
        Err(res) => return res,
    };
    let token = token.unwrap_or_default();
    let me = match signed_in(&app, &headers).await {
        // Signed in as someone else: sign in again (the login page lets another user in).
        Some(_) if params.get("switch").is_some() => return INVITATION.login_then(&app, &headers, true, None, Some(return_path(token))),
        Some(me) => me,
        None => return INVITATION.login_then(&app, &headers, false, None, Some(return_path(token))),
    };
    if !is_invitee(&me, &inv) {
        return not_invitee(&app, &me, token);
    }
    let mut page = Page::new(StatusCode::OK, "org_invitation.html", "org-invitation-title");
    page.csp.images.extend(crate::endpoints::authorize::logo_origin(org.logo_uri.as_deref()));
    page.with("step", "offer")
        .with("organization", &org.display_name)
        .with("logo", &org.logo_uri)
        .with("roles", &inv.roles)
        .with("username", &me.user.username)
        .with("token", token)
        .with("csrf", INVITATION.csrf(&app, &me))
        .into_response()
}

/// `POST /organizations/invitation` (`token`, `csrf`): accept.
async fn accept(app: Issuer, headers: HeaderMap, form: Result<FormParams, OAuthError>) -> Response {
    let params = match super::first_party::form(form) {
        Ok(p) => p,
        Err(res) => return res,
    };
    let me = match INVITATION.form_user(&app, &headers, &params).await {
        Ok(me) => me,
        Err(res) => return res,
    };
    let token = params.get("token");
    let (inv, org) = match pending(&app, token).await {
        Ok(found) => found,
        Err(res) => return res,
    };
    if !is_invitee(&me, &inv) {
        return not_invitee(&app, &me, token.unwrap_or_default());
    }
    let roles = match app.registry().accept_invitation(&inv, &me.user.id).await {
        Ok(Some(m)) => m.roles.clone(),
        // Accepted in another tab, revoked or expired since the page was shown.
        Ok(None) => return error_page(StatusCode::GONE, "err-invitation-used"),
        Err(e) => return crate::endpoints::authorize::unavailable(e),
    };
    let detail = serde_json::json!({"org_id": org.id, "invitation_id": inv.id, "roles": roles});
    app.audit(AuditEvent::new("organization_invitation_accepted").user(&me.user.id).detail(detail)).await;
    Page::new(StatusCode::OK, "org_invitation.html", "org-invitation-title")
        .with("step", "accepted")
        .msg("done", Msg::new("org-invitation-accepted").arg("organization", org.display_name.clone()))
        .into_response()
}

/// `GET /organizations/invitation/login`: to `/authorize` as the invitation page.
async fn login(app: Issuer, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    INVITATION.login(&app, &headers, query.as_deref(), None)
}

/// `GET /organizations/invitation/callback`: the code spent, back to the invitation.
async fn callback(app: Issuer, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    INVITATION.callback(&app, &headers, query.as_deref(), || error_page(StatusCode::BAD_REQUEST, "err-invitation-not-signed-in")).await
}
