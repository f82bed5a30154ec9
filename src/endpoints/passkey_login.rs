//! `POST /login/passkey`: a passwordless sign-in. The login page offers a discoverable-
//! credential ceremony beside the password form (a button, and the username field's autofill
//! where the browser supports conditional mediation); the authenticator names the user, and a
//! verified passkey with user verification is the whole sign-in (`acr` passkey).

use super::interaction::{client_address, start_session, take_state, BUSY, TOO_MANY};
use super::second_factor::PASSKEY_KIND;
use crate::audit::AuditEvent;
use crate::error::OAuthError;
use crate::factors::passkey::{AuthState, PasskeyError};
use crate::http::cookies;
use crate::http::pages::error_page;
use crate::http::params::FormParams;
use crate::tenant::Issuer;
use crate::util::now;
use axum::extract::ConnectInfo;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use std::net::SocketAddr;

/// The longest credential id looked at for the throttle (WebAuthn allows 1023 bytes).
const MAX_CREDENTIAL_ID: usize = 1400;

pub async fn login(
    app: Issuer,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    form: Result<FormParams, OAuthError>,
) -> Response {
    let (params, _, req) = match take_state(&app, &headers, form, "login", cookies::BROWSER).await {
        Ok(taken) => taken,
        Err(res) => return *res,
    };
    let retry = |message: &'static str, status: StatusCode| {
        let (app, headers, req) = (app.clone(), headers.clone(), req.clone());
        async move { super::authorize::render_login(&app, &headers, &req, Some(message), status).await }
    };
    let (Some(passkeys), Some(credential), Some(Ok(state))) = (
        &app.tenant.passkeys,
        params.get("credential"),
        params.get("passkey_state").map(|s| app.tenant.sealer.open::<AuthState>(PASSKEY_KIND, cookies::get(&headers, cookies::BROWSER), s)),
    ) else {
        return retry("err-passkey-expired", StatusCode::BAD_REQUEST).await;
    };
    if !matches!(app.resolve_client(&req.client_id).await, Ok(Some(_))) {
        return error_page(StatusCode::BAD_REQUEST, "err-client-gone");
    }
    // Throttled by the credential it names (an account's stand-in before it is known) and
    // by address, as passwords are.
    let credential_id: String = serde_json::from_str::<serde_json::Value>(credential)
        .ok()
        .and_then(|v| v.get("id").and_then(|i| i.as_str()).map(|s| s.chars().take(MAX_CREDENTIAL_ID).collect()))
        .unwrap_or_default();
    let address = client_address(&app, &headers, peer);
    let Some(attempt) = app.login_limiter.begin(&format!("passkey:{credential_id}"), &address, now()) else {
        return retry(TOO_MANY, StatusCode::TOO_MANY_REQUESTS).await;
    };
    match passkeys.finish(&app.db, app.vault(), (app.stores.challenges.as_ref(), app.tenant.id), credential, state, None).await {
        Err(PasskeyError::Store(e)) => {
            attempt.unchecked();
            tracing::error!(error = %e, "passkey check failed");
            error_page(StatusCode::SERVICE_UNAVAILABLE, BUSY)
        }
        Err(PasskeyError::Refused(why)) => {
            attempt.failed(now());
            tracing::info!(reason = why, "passkey sign-in refused");
            app.audit(AuditEvent::new("login_failure").address(&address).client(&req.client_id).detail(serde_json::json!({"kind": "passkey"}))).await;
            retry("err-passkey-refused", StatusCode::UNAUTHORIZED).await
        }
        Ok((user_id, proof)) => {
            let Some(user) = app.registry().user(&user_id).filter(|u| !u.disabled) else {
                attempt.failed(now());
                return retry("err-passkey-refused", StatusCode::UNAUTHORIZED).await;
            };
            attempt.succeeded();
            let amr = proof.amr().iter().map(|s| s.to_string()).collect();
            start_session(&app, &headers, req, &user, &address, amr, proof.level(), None).await
        }
    }
}
