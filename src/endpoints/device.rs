//! The device verification page (RFC 8628 §3.3): `verification_uri` (`/device`) and
//! `verification_uri_complete` (`/device?user_code=…`).
//!
//! The user signs in first, and only then is a user code looked up: the page is a first-party
//! client of this server (`first_party::DEVICE`), so the sign-in is the login page's own
//! (password, second factors, passkeys, upstream providers, policies), and every code tried
//! is counted against a signed-in account and an address (`device_user_code_max_failures`,
//! the sign-in throttle's limiter). A code that matches shows which application asks, for
//! what, and the code itself, so that the user can compare it with the device's screen; the
//! answer is a form whose state (the user code and the session) is sealed to the session
//! cookie, which is also its CSRF defence.
//!
//! What the requesting client requires of the sign-in (`require_mfa`, `require_passkey`, the
//! server's `mfa_policy`) and what the device asked for (`acr_values`) are checked against
//! the session: a session below them signs in again first (step-up), as at `/authorize`.

use super::authorize::{client_display_name, required_level_of, step_up_due, unavailable};
use super::first_party::{signed_in, SignedIn, DEVICE};
use crate::audit::AuditEvent;
use crate::error::OAuthError;
use crate::factors::Level;
use crate::http::pages::error_page;
use crate::http::params::{FormParams, Params};
use crate::stores::device::{display_user_code, normalize_user_code, Approval, Decision, DeviceRequest};
use crate::tenant::Issuer;
use crate::ui::Page;
use crate::util::{now, split_list};
use axum::extract::{ConnectInfo, RawQuery};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;

/// The verification URI.
pub const PAGE: &str = "/device";
const DECIDE: &str = "/device/decide";
/// The sealed state of the answer form.
const DECISION_KIND: &str = "device-decision";

pub fn router() -> Router<crate::app::AppState> {
    Router::new()
        .route(PAGE, get(page).post(enter))
        .route(DECIDE, post(decide))
        .route("/device/login", get(login))
        .route(DEVICE.callback, get(callback))
}

/// What the answer form carries, sealed to the session cookie.
#[derive(Serialize, Deserialize)]
struct Answer {
    user_code: String,
    sid: String,
}

/// `GET /device[?user_code=…]`: sign in, then the code's request (or the form to type one).
async fn page(app: Issuer, ConnectInfo(peer): ConnectInfo<SocketAddr>, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    let params = Params::parse(query.unwrap_or_default().as_bytes()).unwrap_or_default();
    let typed = params.get("user_code").filter(|c| !c.is_empty());
    let stepped = params.get("stepped").is_some();
    let Some(me) = signed_in(&app, &headers).await else {
        // What cannot be a code is not carried through the sign-in.
        let then = typed.filter(|c| c.len() <= 64).map(|c| return_path(c, false));
        return DEVICE.login_then(&app, &headers, false, None, then);
    };
    match typed {
        None => entry(&app, &me, None, StatusCode::OK),
        Some(code) if code.len() > 64 => entry(&app, &me, Some("device-code-malformed"), StatusCode::BAD_REQUEST),
        Some(code) => look_up(&app, &headers, peer, &me, code, stepped).await,
    }
}

/// `POST /device` (`user_code`, `csrf`): the code typed into the page's form.
async fn enter(app: Issuer, ConnectInfo(peer): ConnectInfo<SocketAddr>, headers: HeaderMap, form: Result<FormParams, OAuthError>) -> Response {
    let params = match super::first_party::form(form) {
        Ok(p) => p,
        Err(res) => return res,
    };
    let me = match DEVICE.form_user(&app, &headers, &params).await {
        Ok(me) => me,
        Err(res) => return res,
    };
    let typed = params.get("user_code").unwrap_or_default();
    if typed.is_empty() || typed.len() > 64 {
        return entry(&app, &me, Some("device-code-malformed"), StatusCode::BAD_REQUEST);
    }
    look_up(&app, &headers, peer, &me, typed, false).await
}

/// The path back to this page with `typed` (already a user code's characters, or refused by
/// the lookup before it is used).
fn return_path(typed: &str, stepped: bool) -> String {
    let code = url::form_urlencoded::byte_serialize(typed.as_bytes()).collect::<String>();
    match stepped {
        true => format!("{PAGE}?user_code={code}&stepped=1"),
        false => format!("{PAGE}?user_code={code}"),
    }
}

/// Find the request a typed code names, counting a miss against the account and the address.
async fn look_up(app: &Issuer, headers: &HeaderMap, peer: SocketAddr, me: &SignedIn, typed: &str, stepped: bool) -> Response {
    // Not of a user code's shape: nothing can match, so nothing is counted (a typo is not a guess).
    let Some(code) = normalize_user_code(typed) else { return entry(app, me, Some("device-code-malformed"), StatusCode::BAD_REQUEST) };
    let address = super::interaction::client_address(app, headers, peer);
    // Reserved before the lookup, as a password attempt is: parallel guesses count while in flight.
    let Some(attempt) = app.device_limiter.begin(&me.user.id, &address, now()) else {
        return entry(app, me, Some("device-code-too-many"), StatusCode::TOO_MANY_REQUESTS);
    };
    let request = match app.stores.device.find(app.tenant.id, &code).await {
        Ok(r) => r,
        Err(e) => {
            attempt.unchecked();
            return unavailable(e);
        }
    };
    let Some(request) = request else {
        attempt.failed(now());
        return entry(app, me, Some("device-code-unknown"), StatusCode::BAD_REQUEST);
    };
    attempt.succeeded();
    if app.client(&request.client_id).is_none() {
        return error_page(StatusCode::BAD_REQUEST, "err-client-gone");
    }
    // The client's and the server's requirements, and what the device asked for: a session
    // below them signs in again (once; a second time below what is required is refused).
    let required = required_level_of(app, &request.client_id);
    let wanted = crate::endpoints::authorize::request::preferred_level(&request.acr_values);
    let have = Level::of(&me.session.acr).unwrap_or(Level::Password);
    if have < required {
        // Nothing the user has enrolled reaches it: signing in again would not help.
        match crate::factors::best_level(&app.db, app.tenant.id, &me.user.id).await {
            Ok(best) if best < required => {
                let message = if required == Level::Passkey { "err-needs-passkey-none" } else { "err-needs-factor-none" };
                return error_page(StatusCode::FORBIDDEN, message);
            }
            Ok(_) => {}
            Err(e) => return unavailable(e),
        }
    }
    if !stepped && step_up_due(app, required, wanted, &me.session).await {
        let level = wanted.unwrap_or(Level::Password).max(required);
        return DEVICE.login_then(app, headers, true, Some(level.acr()), Some(return_path(&code, true)));
    }
    // Signed in again and still below what is required (another method was chosen).
    if have < required {
        return error_page(StatusCode::FORBIDDEN, "err-device-needs-stronger");
    }
    confirm(app, me, &code, &request)
}

/// The page that asks: which application, for what, with the code to compare.
fn confirm(app: &Issuer, me: &SignedIn, code: &str, request: &DeviceRequest) -> Response {
    let answer = Answer { user_code: code.to_string(), sid: me.session.sid.clone() };
    let state = app.tenant.sealer.seal(DECISION_KIND, &me.cookie, app.config.challenge_ttl, &answer);
    let client = app.client(&request.client_id);
    let meta = client.as_deref().map(|c| &c.meta);
    let scopes: Vec<_> = split_list(&request.scope)
        .map(|s| serde_json::json!({"name": s, "described": crate::resources::scope_description(app, &request.resources, s)}))
        .collect();
    let resources: Vec<_> = request
        .resources
        .iter()
        .map(|r| {
            let name = crate::resources::servers(app, std::slice::from_ref(r)).first().map_or(r.as_str(), |rs| rs.name.as_str());
            serde_json::json!({"name": name, "uri": r})
        })
        .collect();
    Page::new(StatusCode::OK, "device.html", "device-title")
        .with("step", "confirm")
        .with("client", client_display_name(app, &request.client_id))
        .with("logo", meta.and_then(|m| m.logo_uri.clone()))
        .with("user_code", display_user_code(code))
        .with("username", &me.user.username)
        .with("scopes", scopes)
        .with("resources", resources)
        .with("state", state)
        .into_response()
}

/// The form to type a code into, with what went wrong (a message id) if anything.
fn entry(app: &Issuer, me: &SignedIn, error: Option<&'static str>, status: StatusCode) -> Response {
    let mut page = Page::new(status, "device.html", "device-title")
        .with("step", "enter")
        .with("csrf", DEVICE.csrf(app, me))
        .with("username", &me.user.username);
    if let Some(e) = error {
        page = page.msg("error", e);
    }
    page.into_response()
}

/// `POST /device/decide` (`state`, `decision`): the user's answer.
async fn decide(app: Issuer, headers: HeaderMap, form: Result<FormParams, OAuthError>) -> Response {
    let params = match super::first_party::form(form) {
        Ok(p) => p,
        Err(res) => return res,
    };
    let Some(me) = signed_in(&app, &headers).await else { return super::first_party::see_other(app.base(), &DEVICE.login_path(false)) };
    let answer = params.get("state").and_then(|s| app.tenant.sealer.open::<Answer>(DECISION_KIND, Some(&me.cookie), s).ok());
    let Some(answer) = answer.filter(|a| a.sid == me.session.sid) else {
        return error_page(StatusCode::BAD_REQUEST, "err-device-form-expired");
    };
    let request = match app.stores.device.find(app.tenant.id, &answer.user_code).await {
        Ok(Some(r)) => r,
        Ok(None) => return error_page(StatusCode::BAD_REQUEST, "err-device-request-gone"),
        Err(e) => return unavailable(e),
    };
    let decision = match params.get("decision") {
        Some("allow") => {
            let acr = crate::endpoints::authorize::request::reported_acr(&request.acr_values, &me.session.acr);
            Decision::Approved(Approval {
                user_id: me.user.id.clone(),
                auth_time: me.session.auth_time,
                sid: me.session.sid.clone(),
                acr: Some(acr),
                amr: me.session.amr.clone(),
            })
        }
        Some("deny") => Decision::Denied,
        _ => return error_page(StatusCode::BAD_REQUEST, "err-choose"),
    };
    let allowed = matches!(decision, Decision::Approved(_));
    match app.stores.device.decide(app.tenant.id, &answer.user_code, decision).await {
        Ok(true) => {}
        // Answered in another tab, or expired, in the meantime.
        Ok(false) => return error_page(StatusCode::BAD_REQUEST, "err-device-request-gone"),
        Err(e) => return unavailable(e),
    }
    if allowed {
        // The approval is the user's consent: the application is listed on the account page,
        // where withdrawing it also ends its refresh tokens; and the session knows the client
        // (logout notifies it).
        let before = app.registry().consented_scope(&me.user.id, &request.client_id).unwrap_or_default();
        let mut scope: Vec<&str> = split_list(&before).collect();
        scope.extend(split_list(&request.scope).filter(|s| !before.split(' ').any(|b| b == *s)));
        if let Err(e) = app.registry().remember_consent(&me.user.id, &request.client_id, &scope.join(" ")).await {
            tracing::warn!(error = %e, "the device approval's consent was not recorded");
        }
        if let Err(e) = app.stores.sessions.join(app.tenant.id, &me.cookie, &request.client_id).await {
            tracing::warn!(error = %e, "the session did not record the device's client");
        }
    }
    let event = if allowed { "device_approved" } else { "device_denied" };
    app.audit(AuditEvent::new(event).user(&me.user.id).client(&request.client_id).detail(serde_json::json!({"scope": request.scope}))).await;
    Page::new(StatusCode::OK, "device.html", "device-title")
        .with("step", if allowed { "approved" } else { "denied" })
        .with("client", client_display_name(&app, &request.client_id))
        .into_response()
}

/// `GET /device/login`: to `/authorize` as the device page.
async fn login(app: Issuer, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    DEVICE.login(&app, &headers, query.as_deref(), None)
}

/// `GET /device/callback`: the code spent, back to the page (and the user code it had).
async fn callback(app: Issuer, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    DEVICE.callback(&app, &headers, query.as_deref(), not_signed_in).await
}

fn not_signed_in() -> Response {
    error_page(StatusCode::BAD_REQUEST, "err-device-not-signed-in")
}
