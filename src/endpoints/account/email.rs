//! Verifying an e-mail address given on the account page. A changed address is unverified
//! (`profile`); with mail configured a link goes to it, and opening the link and confirming
//! (a POST: mail scanners only GET) marks it verified, if it is still the user's address.
//! The account page also sends a new link on request (throttled like password resets). The
//! old address is told of the change.
//!
//! One link per user (the latest: asking again spends the earlier one), stored as a SHA-256,
//! for `email_verification_ttl` seconds, spent by the statement that reads it.

use super::{see_other, Change};
use crate::app::App;
use crate::audit::AuditEvent;
use crate::error::OAuthError;
use crate::http::account_pages as pages;
use crate::http::pages::error_page;
use crate::http::params::{FormParams, Params};
use crate::registry::User;
use crate::tenant::Issuer;
use crate::ui::Page;
use crate::util::{now, random_token, sha256};
use axum::extract::{ConnectInfo, RawQuery};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use std::net::SocketAddr;

pub const VERIFY: &str = "/account/verify-email";
pub const SEND: &str = "/account/verify-email/send";

/// Whether a link can be sent for `user`: mail is configured and they have an address that
/// is not verified.
pub fn can_verify(app: &App, user: &User) -> bool {
    app.mailer.is_some() && user.email().is_some() && user.claims.get("email_verified") != Some(&Value::Bool(true))
}

/// Queue a link for the user's current address, in their language; earlier links stop
/// working.
pub(super) async fn send_link(app: &Issuer, user: &User) -> Result<(), crate::db::StoreError> {
    let Some(email) = user.email().map(str::to_string) else { return Ok(()) };
    let token = random_token();
    let link = format!("{}?token={token}", app.endpoint(VERIFY));
    let hours = app.config.email_verification_ttl.div_ceil(3600).to_string();
    let values = json!({"link": link, "hours": hours});
    let (subject, sealed) = crate::mail::compose(app, &crate::mail::language_of(app, user), "mail-verify-email-subject", "mail_verify_email.txt", values);
    let (hash, id, expires) = (sha256(token.as_bytes()).to_vec(), user.id.clone(), (now() + app.config.email_verification_ttl) as i64);
    let tenant = app.tenant.id;
    app.db
        .write(move |sql| {
            sql.execute("DELETE FROM email_verifications WHERE tenant_id = ?1 AND user_id = ?2", crate::params![tenant, id.as_str()])?;
            sql.execute(
                "INSERT INTO email_verifications (tenant_id, token_hash, user_id, email, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                crate::params![tenant, hash, id.as_str(), email.as_str(), expires],
            )?;
            crate::mail::enqueue(sql, tenant, &email, &subject, sealed)
        })
        .await?;
    if let Some(m) = &app.mailer {
        m.wake.notify_one();
    }
    Ok(())
}

/// `POST /account/verify-email/send`: a new link to the user's unverified address.
pub async fn send(app: Issuer, ConnectInfo(peer): ConnectInfo<SocketAddr>, headers: HeaderMap, Change { me, .. }: Change) -> Response {
    if !can_verify(&app, &me.user) {
        return see_other(app.base(), "/account");
    }
    let address = super::super::interaction::client_address(&app, &headers, peer);
    let Some(attempt) = app.reset_limiter.begin(&format!("verify-email:{}", me.user.id), &address, now()) else {
        return error_page(StatusCode::TOO_MANY_REQUESTS, "err-too-many-requests");
    };
    attempt.failed(now());
    if let Err(e) = send_link(&app, &me.user).await {
        return crate::endpoints::authorize::unavailable(e);
    }
    app.audit(AuditEvent::new("email_verification_sent").user(&me.user.id).address(&address)).await;
    see_other(app.base(), "/account?done=verify-sent")
}

fn dead_link() -> Response {
    error_page(StatusCode::BAD_REQUEST, "err-verify-email-link")
}

/// `GET /account/verify-email?token=…`: the button that confirms.
pub async fn page(app: Issuer, RawQuery(query): RawQuery) -> Response {
    let params = Params::parse(query.unwrap_or_default().as_bytes()).unwrap_or_default();
    let token = params.get("token").unwrap_or_default().to_string();
    let (hash, t, tenant) = (sha256(token.as_bytes()).to_vec(), now() as i64, app.tenant.id);
    let row = app.db.read(move |sql| verification(sql, tenant, &hash, t)).await;
    // A link for an address changed since says so now, not after its button.
    let current = |r: &crate::db::Row| matches!((r.text(0), r.text(1)), (Ok(id), Ok(email)) if still_theirs(&app, &id, &email).is_some());
    match row {
        Ok(Some(r)) if current(&r) => Page::new(StatusCode::OK, "signup_verify.html", "verify-email-title")
            .with("token", token)
            .with("action", VERIFY)
            .msg("heading", "signup-verify-heading")
            .msg("submit", "verify-email-submit")
            .into_response(),
        Ok(_) => dead_link(),
        Err(e) => crate::endpoints::authorize::unavailable(e),
    }
}

/// The link whose token hashes to `hash`, if it is good: the user and the address it verifies.
fn verification(sql: &mut dyn crate::db::Sql, tenant: crate::tenant::TenantId, hash: &[u8], t: i64) -> crate::db::StoreResult<Option<crate::db::Row>> {
    sql.query_opt(
        "SELECT user_id, email FROM email_verifications WHERE tenant_id = ?1 AND token_hash = ?2 AND expires_at > ?3",
        crate::params![tenant, hash.to_vec(), t],
    )
}

/// The user `id`, if `email` is still their address.
fn still_theirs(app: &Issuer, id: &str, email: &str) -> Option<std::sync::Arc<User>> {
    app.registry().user(id).filter(|u| u.email().is_some_and(|e| e.eq_ignore_ascii_case(email)))
}

/// Tell the old address that the account's address changed (to whom it now goes), so that
/// an account taken over is noticed by whoever had it.
pub(super) async fn notify_old_address(app: &Issuer, user: &User, old: &str, new: &str) -> Result<(), crate::db::StoreError> {
    let (subject, sealed) = crate::mail::compose(app, &crate::mail::language_of(app, user), "mail-email-changed-subject", "mail_email_changed.txt", json!({"new_email": new, "username": user.username}));
    let to = old.to_string();
    let tenant = app.tenant.id;
    app.db.write(move |sql| crate::mail::enqueue(sql, tenant, &to, &subject, sealed)).await?;
    if let Some(m) = &app.mailer {
        m.wake.notify_one();
    }
    Ok(())
}

/// `POST /account/verify-email` (`token`): the address is verified, if it is still the
/// user's. The token is proof enough (it came by that mail); no sign-in is needed.
pub async fn confirm(app: Issuer, form: Result<FormParams, OAuthError>) -> Response {
    let Ok(FormParams(params)) = form else { return dead_link() };
    let (hash, t, tenant) = (sha256(params.get("token").unwrap_or_default().as_bytes()).to_vec(), now() as i64, app.tenant.id);
    let key = hash.clone();
    let row = app.db.read(move |sql| verification(sql, tenant, &key, t)).await;
    let (id, email) = match row {
        Ok(Some(r)) => match (r.text(0), r.text(1)) {
            (Ok(id), Ok(email)) => (id, email),
            _ => return dead_link(),
        },
        Ok(None) => return dead_link(),
        Err(e) => return crate::endpoints::authorize::unavailable(e),
    };
    // The address changed again since the link was sent: this one proves nothing now.
    let Some(user) = still_theirs(&app, &id, &email) else { return dead_link() };
    let mut user = User::clone(&user);
    user.claims.insert("email_verified", Value::Bool(true));
    user.updated_at = now();
    // The link spent and the address verified together: of two uses racing, one counts; an
    // error leaves the link working.
    let spend = move |sql: &mut dyn crate::db::Sql| {
        Ok(sql.execute("DELETE FROM email_verifications WHERE tenant_id = ?1 AND token_hash = ?2 AND expires_at > ?3", crate::params![tenant, hash, t])? == 1)
    };
    match app.registry().save_user_if(user, spend).await {
        Ok(true) => {}
        Ok(false) => return dead_link(),
        Err(e) => return crate::endpoints::authorize::unavailable(e),
    }
    app.audit(AuditEvent::new("email_verified").user(&id).detail(json!({"by": "link"}))).await;
    pages::email_verified()
}
