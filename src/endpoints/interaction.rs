//! The login and consent form posts. Each consumes the one-time challenge its page was
//! rendered with, checks the cookie the challenge is bound to, then hands the authorization
//! request back to `authorize::continue_authorization`.

use super::authorize::{continue_authorization, issue_code, redirect_error, render_login, unavailable, AuthorizationRequest};
use crate::app::{App, AppState};
use crate::audit::AuditEvent;
use crate::error::OAuthError;
use crate::http::cookies;
use crate::http::pages::error_page;
use crate::http::params::{FormParams, Params};
use crate::stores::Session;
use crate::tokens::ACR_PASSWORD;
use crate::util::{ct_eq, now, random_token, sha256, split_list};
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use std::net::SocketAddr;

const EXPIRED: &str = "This form has expired or was already used. Return to the application and sign in again.";
const NO_COOKIE: &str = "Your browser did not send back the cookie this form relies on. Allow cookies for this site and try again.";

pub async fn login(
    State(app): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    form: Result<FormParams, OAuthError>,
) -> Response {
    let (params, _, req) = match take_challenge(&app, &headers, form, "login", cookies::BROWSER).await {
        Ok(taken) => taken,
        Err(res) => return res,
    };
    if app.registry.client(&req.client_id).is_none() {
        return error_page(StatusCode::BAD_REQUEST, "The application that sent you here is no longer registered.");
    }

    let username = params.get("username").unwrap_or("").to_string();
    let password = params.get("password").unwrap_or("").to_string();
    let address = client_address(&app, &headers, peer);
    if !app.login_limiter.allowed(&username, &address, now()) {
        return render_login(&app, &headers, &req, Some("Too many failed sign-in attempts. Wait a few minutes and try again."), StatusCode::TOO_MANY_REQUESTS).await;
    }
    let user = app.registry.user_by_login(&username);
    // Argon2 takes tens of milliseconds of CPU: keep it off the async workers.
    let candidate = user.clone();
    let ok = tokio::task::spawn_blocking(move || crate::registry::users::verify_password(candidate.as_deref(), &password))
        .await
        .unwrap_or(false);
    let Some(user) = user.clone().filter(|_| ok) else {
        app.login_limiter.record_failure(&username, &address, now());
        let mut event = AuditEvent::new("login_failure").address(&address).client(&req.client_id);
        if let Some(u) = &user {
            event = event.user(&u.id);
        }
        app.audit.record(event).await;
        // Keep what was typed as the username, so only the password has to be entered again.
        let retry = AuthorizationRequest { login_hint: Some(username.clone()), ..req };
        return render_login(&app, &headers, &retry, Some("Incorrect username or password."), StatusCode::UNAUTHORIZED).await;
    };
    app.login_limiter.record_success(&username);

    // A new session id on every sign-in (no fixation); the old session ends.
    if let Some(old) = cookies::get(&headers, cookies::SESSION) {
        let _ = app.stores.sessions.delete(old).await;
    }
    let session = Session {
        user_id: user.id.clone(),
        sid: random_token(),
        auth_time: now(),
        amr: vec!["pwd".into()],
        acr: ACR_PASSWORD.into(),
    };
    let cookie = match app.stores.sessions.create(session.clone(), app.config.session_ttl).await {
        Ok(c) => c,
        Err(e) => return unavailable(e),
    };
    app.audit.record(AuditEvent::new("login_success").user(&user.id).client(&req.client_id).address(&address)).await;
    let mut res = continue_authorization(&app, &headers, req, Some((cookie.clone(), session)), true, StatusCode::SEE_OTHER).await;
    cookies::set(&mut res, cookies::SESSION, &cookie, Some(app.config.session_ttl), app.config.secure_cookies());
    res
}

pub async fn consent(State(app): State<AppState>, headers: HeaderMap, form: Result<FormParams, OAuthError>) -> Response {
    let (params, cookie, req) = match take_challenge(&app, &headers, form, "consent", cookies::SESSION).await {
        Ok(taken) => taken,
        Err(res) => return res,
    };
    let Some((_, session)) = super::authorize::current_session(&app, &headers).await.filter(|(c, _)| *c == cookie) else {
        return error_page(StatusCode::BAD_REQUEST, "Your session has ended. Return to the application and sign in again.");
    };
    match params.get("decision") {
        Some("allow") => {
            let scope = merged_scope(&app, &session.user_id, &req);
            if let Err(e) = app.registry.remember_consent(&session.user_id, &req.client_id, &scope).await {
                return unavailable(e);
            }
            issue_code(&app, &req, &session, StatusCode::SEE_OTHER).await
        }
        Some("deny") => {
            let e = OAuthError::access_denied("the user denied the request");
            redirect_error(&app, &req.redirect_uri, req.state.as_deref(), &e, StatusCode::SEE_OTHER)
        }
        _ => error_page(StatusCode::BAD_REQUEST, "Choose Allow or Deny."),
    }
}

/// Consume the form's challenge of `kind` and check that the browser sent back the cookie it
/// is bound to. Returns the form, that cookie's value and the pending authorization request.
async fn take_challenge(
    app: &App,
    headers: &HeaderMap,
    form: Result<FormParams, OAuthError>,
    kind: &str,
    cookie_name: &str,
) -> Result<(Params, String, AuthorizationRequest), Response> {
    let expired = || error_page(StatusCode::BAD_REQUEST, EXPIRED);
    let FormParams(params) = form.map_err(|_| expired())?;
    let challenge = params.get("challenge").ok_or_else(expired)?;
    let record = match app.stores.challenges.consume(challenge, kind).await {
        Ok(Some(r)) => r,
        Ok(None) => return Err(expired()),
        Err(e) => return Err(unavailable(e)),
    };
    let cookie = cookies::get(headers, cookie_name)
        .filter(|c| ct_eq(&sha256(c.as_bytes()), &record.binding))
        .ok_or_else(|| error_page(StatusCode::BAD_REQUEST, NO_COOKIE))?
        .to_string();
    let req = serde_json::from_value::<AuthorizationRequest>(record.payload).map_err(|_| expired())?;
    Ok((params, cookie, req))
}

/// Scopes consented before plus the ones just granted.
fn merged_scope(app: &App, user_id: &str, req: &AuthorizationRequest) -> String {
    let before = app.registry.consented_scope(user_id, &req.client_id).unwrap_or_default();
    let mut all: Vec<&str> = split_list(&before).collect();
    for s in split_list(&req.scope) {
        if !all.contains(&s) {
            all.push(s);
        }
    }
    all.join(" ")
}

/// The client's address for rate limiting: the peer, or the first `X-Forwarded-For` hop when
/// configured to trust a proxy.
fn client_address(app: &App, headers: &HeaderMap, peer: SocketAddr) -> String {
    if app.config.trust_proxy {
        if let Some(first) = headers
            .get("x-forwarded-for")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(',').next())
            .map(str::trim)
            .filter(|v| !v.is_empty())
        {
            return first.to_string();
        }
    }
    peer.ip().to_string()
}
