//! `POST /login/second-factor`: the second step of a sign-in for a user with a second factor
//! (a TOTP code or a recovery code). The password step hands over a sealed state, bound to the
//! browser cookie as the login form's is, naming the request and the user whose password was
//! right; nothing is stored until both steps pass. Failures count in the login throttle.

use super::authorize::{client_display_name, AuthorizationRequest};
use super::interaction::{client_address, start_session, BUSY, TOO_MANY};
use crate::app::{App, AppState};
use crate::audit::AuditEvent;
use crate::error::OAuthError;
use crate::factors::{self, ACR_MFA};
use crate::http::cookies;
use crate::http::pages::{self, error_page};
use crate::http::params::FormParams;
use crate::util::now;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;

const KIND: &str = "second-factor";
const EXPIRED: &str = "This form has expired. Return to the application and sign in again.";

/// A sign-in whose password step passed.
#[derive(Serialize, Deserialize)]
pub struct Pending {
    pub req: AuthorizationRequest,
    pub user_id: String,
}

/// The second-factor page for `pending`, sealed to the browser cookie the login form used.
pub fn ask(app: &App, headers: &HeaderMap, pending: &Pending, error: Option<&str>, status: StatusCode) -> Response {
    let Some(browser) = cookies::get(headers, cookies::BROWSER) else {
        return error_page(StatusCode::BAD_REQUEST, EXPIRED);
    };
    let challenge = app.sealer.seal(KIND, browser, app.config.challenge_ttl, pending);
    pages::second_factor(&challenge, &client_display_name(app, &pending.req.client_id), error, status)
}

pub async fn verify(
    State(app): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    form: Result<FormParams, OAuthError>,
) -> Response {
    let Ok(FormParams(params)) = form else { return error_page(StatusCode::BAD_REQUEST, EXPIRED) };
    let Some(sealed) = params.get("challenge") else { return error_page(StatusCode::BAD_REQUEST, EXPIRED) };
    let Ok(pending) = app.sealer.open::<Pending>(KIND, cookies::get(&headers, cookies::BROWSER), sealed) else {
        return error_page(StatusCode::BAD_REQUEST, EXPIRED);
    };
    let Some(user) = app.registry.user(&pending.user_id).filter(|u| !u.disabled) else {
        return error_page(StatusCode::BAD_REQUEST, EXPIRED);
    };
    let address = client_address(&app, &headers, peer);
    let account = crate::ratelimit::account_key(Some(&user.id), &user.username);
    let Some(attempt) = app.login_limiter.begin(&account, &address, now()) else {
        return ask(&app, &headers, &pending, Some(TOO_MANY), StatusCode::TOO_MANY_REQUESTS);
    };
    let code = params.get("code").unwrap_or_default();
    match factors::verify(&app.db, app.keys.vault(), &user.id, code, now()).await {
        Err(e) => {
            attempt.unchecked();
            tracing::error!(error = %e, "second factor check failed");
            error_page(StatusCode::SERVICE_UNAVAILABLE, BUSY)
        }
        Ok(None) => {
            attempt.failed(now());
            app.audit.record(AuditEvent::new("second_factor_failure").user(&user.id).client(&pending.req.client_id).address(&address)).await;
            ask(&app, &headers, &pending, Some("That code is not right, or it was already used."), StatusCode::UNAUTHORIZED)
        }
        Ok(Some(proof)) => {
            attempt.succeeded();
            let mut amr = vec!["pwd".to_string()];
            amr.extend(proof.amr().iter().map(|s| s.to_string()));
            let kind = match proof {
                factors::Proof::Otp => "totp",
                factors::Proof::Recovery => "recovery_code",
            };
            app.audit
                .record(AuditEvent::new("second_factor_success").user(&user.id).client(&pending.req.client_id).address(&address).detail(serde_json::json!({"kind": kind})))
                .await;
            start_session(&app, &headers, pending.req, &user, &address, amr, ACR_MFA).await
        }
    }
}
