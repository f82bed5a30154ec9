//! `POST /login/second-factor`: the second step of a sign-in for a user with a second factor
//! (a passkey, a TOTP code or a recovery code). The password step hands over a sealed state,
//! bound to the browser cookie as the login form's is, naming the request and the user whose
//! password was right; nothing is stored until both steps pass.
//!
//! Codes can be guessed, so wrong ones are counted per account (`second_factor_max_failures`
//! within `login_window`, from every address together) on a counter of their own: the
//! password step's success clears the password's count, never this one, so "right password,
//! then a few wrong codes" repeated from many addresses gains nothing. The failure that locks
//! the codes is audited and mailed to the user. A passkey cannot be guessed: its attempts
//! have a bucket of their own, so a lock of the codes leaves that way in open.

use super::authorize::{client_display_name, required_level, AuthorizationRequest};
use super::interaction::{client_address, start_session, BUSY, TOO_MANY};
use crate::audit::AuditEvent;
use crate::error::OAuthError;
use crate::factors::{self, passkey, Level};
use crate::http::cookies;
use crate::http::pages::{self, error_page, PasskeyForm};
use crate::http::params::FormParams;
use crate::tenant::Issuer;
use crate::util::now;
use axum::extract::ConnectInfo;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;

const KIND: &str = "second-factor";
/// The sealed state of a passkey sign-in ceremony (`factors::passkey::AuthState`).
pub(super) const PASSKEY_KIND: &str = "passkey-auth";
const EXPIRED: &str = "err-second-factor-expired";

/// A sign-in whose first step passed (a password, or an upstream provider).
#[derive(Serialize, Deserialize)]
pub struct Pending {
    pub req: AuthorizationRequest,
    pub user_id: String,
    /// The first step's `amr` values.
    #[serde(default = "password_amr")]
    pub first: Vec<String>,
    /// The upstream provider the first step was, if it was one.
    #[serde(default)]
    pub upstream: Option<crate::stores::sessions::UpstreamLogin>,
}

fn password_amr() -> Vec<String> {
    vec!["pwd".into()]
}

/// The second-factor page for `pending`, sealed to the browser cookie the login form used:
/// a passkey button if the user has passkeys, the code form unless only a passkey will do.
pub async fn ask(app: &Issuer, headers: &HeaderMap, pending: &Pending, error: Option<&'static str>, status: StatusCode) -> Response {
    let Some(browser) = cookies::get(headers, cookies::BROWSER) else {
        return error_page(StatusCode::BAD_REQUEST, EXPIRED);
    };
    let kinds: Vec<String> = match factors::list(&app.db, app.tenant.id, &pending.user_id).await {
        Ok(list) => list.into_iter().map(|f| f.kind).collect(),
        Err(e) => return super::authorize::unavailable(e),
    };
    let ceremony = match (&app.tenant.passkeys, kinds.iter().any(|k| k == passkey::KIND)) {
        (Some(p), true) => match p.start_for_user(&app.db, app.vault(), &pending.user_id).await {
            Ok(c) => c,
            Err(e) => return super::authorize::unavailable(e),
        },
        _ => None,
    };
    let codes = required_level(app, &pending.req) < Level::Passkey && kinds.iter().any(|k| k != passkey::KIND);
    let challenge = app.tenant.sealer.seal(KIND, browser, app.config.challenge_ttl, pending);
    let sealed = ceremony.map(|(options, state)| {
        (serde_json::to_string(&options).expect("options serialise"), app.tenant.sealer.seal(PASSKEY_KIND, browser, app.config.challenge_ttl, &state))
    });
    let form = sealed.as_ref().map(|(options, state)| PasskeyForm { options, state });
    pages::second_factor(&challenge, &client_display_name(app, &pending.req.client_id), form, codes, error, status, pending.req.ui_locales.as_deref())
}

pub async fn verify(
    app: Issuer,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    form: Result<FormParams, OAuthError>,
) -> Response {
    let Ok(FormParams(params)) = form else { return error_page(StatusCode::BAD_REQUEST, EXPIRED) };
    let Some(sealed) = params.get("challenge") else { return error_page(StatusCode::BAD_REQUEST, EXPIRED) };
    let browser = cookies::get(&headers, cookies::BROWSER);
    let Ok(pending) = app.tenant.sealer.open::<Pending>(KIND, browser, sealed) else {
        return error_page(StatusCode::BAD_REQUEST, EXPIRED);
    };
    let Some(user) = app.registry().user(&pending.user_id).filter(|u| !u.disabled) else {
        return error_page(StatusCode::BAD_REQUEST, EXPIRED);
    };
    let address = client_address(&app, &headers, peer);
    let passkey = params.get("credential").is_some();
    let account = match passkey {
        true => format!("passkey:{}", user.id),
        false => format!("codes:{}", user.id),
    };
    let Some(attempt) = app.factor_limiter.begin(&account, &address, now()) else {
        return ask(&app, &headers, &pending, Some(TOO_MANY), StatusCode::TOO_MANY_REQUESTS).await;
    };
    let checked = match params.get("credential") {
        Some(credential) => {
            let (Some(passkeys), Some(Ok(state))) =
                (&app.tenant.passkeys, params.get("passkey_state").map(|s| app.tenant.sealer.open::<passkey::AuthState>(PASSKEY_KIND, browser, s)))
            else {
                attempt.unchecked();
                return error_page(StatusCode::BAD_REQUEST, EXPIRED);
            };
            match passkeys.finish(&app.db, app.vault(), (app.stores.challenges.as_ref(), app.tenant.id), credential, state, Some(&user.id)).await {
                Ok((_, proof)) => Ok(Some(proof)),
                Err(passkey::PasskeyError::Refused(why)) => {
                    tracing::info!(reason = why, "passkey refused as a second factor");
                    Ok(None)
                }
                Err(passkey::PasskeyError::Store(e)) => Err(e),
            }
        }
        None if required_level(&app, &pending.req) >= Level::Passkey => Ok(None),
        None => factors::verify(&app.db, app.vault(), app.tenant.id, &user.id, params.get("code").unwrap_or_default(), now()).await,
    };
    match checked {
        Err(e) => {
            attempt.unchecked();
            tracing::error!(error = %e, "second factor check failed");
            error_page(StatusCode::SERVICE_UNAVAILABLE, BUSY)
        }
        Ok(None) => {
            let locked = attempt.failed(now());
            app.audit(AuditEvent::new("second_factor_failure").user(&user.id).client(&pending.req.client_id).address(&address)).await;
            if locked && !passkey {
                codes_locked(&app, &user, &address).await;
            }
            ask(&app, &headers, &pending, Some("err-second-factor-wrong"), StatusCode::UNAUTHORIZED).await
        }
        Ok(Some(proof)) => {
            attempt.succeeded();
            app.audit(AuditEvent::new("second_factor_success").user(&user.id).client(&pending.req.client_id).address(&address).detail(serde_json::json!({"kind": proof.kind()})))
                .await;
            let mut amr = pending.first.clone();
            amr.extend(proof.amr().iter().map(|s| s.to_string()));
            start_session(&app, &headers, pending.req, &user, &address, amr, proof.level(), pending.upstream).await
        }
    }
}

/// The failure that locked `user`'s codes: audited, and told to the user by mail (if mail is
/// configured and they have an address), so that whoever knows their password is noticed.
async fn codes_locked(app: &Issuer, user: &crate::registry::User, address: &str) {
    let (limit, window) = (app.config.second_factor_max_failures, app.config.login_window);
    let mailed = match (&app.mailer, user.email()) {
        (Some(mailer), Some(email)) => {
            let values = serde_json::json!({"username": user.username, "minutes": window.div_ceil(60).to_string()});
            let (subject, sealed) = crate::mail::compose(app, &crate::mail::language_of(app, user), "mail-factor-locked-subject", "mail_factor_locked.txt", values);
            let (to, tenant) = (email.to_string(), app.tenant.id);
            match app.db.write(move |sql| crate::mail::enqueue(sql, tenant, &to, &subject, sealed)).await {
                Ok(()) => {
                    mailer.wake.notify_one();
                    true
                }
                Err(e) => {
                    tracing::warn!(error = %e, "the notice of locked second-factor codes was not queued");
                    false
                }
            }
        }
        _ => false,
    };
    let detail = serde_json::json!({"failures": limit, "window": window, "mailed": mailed});
    app.audit(AuditEvent::new("second_factor_locked").user(&user.id).address(address).detail(detail)).await;
}
