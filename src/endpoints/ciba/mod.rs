//! `POST /backchannel` (OpenID Connect CIBA Core 1.0 §7): a client asks that a user, named
//! by a hint, approve a sign-in on their own authentication device. The answer is an
//! `auth_req_id` to redeem at `/token` (`grants::ciba`) once the user has answered on the
//! account page, which lists the requests waiting for them; notifiers (`crate::ciba`) tell
//! the user that one waits.
//!
//! What is offered: poll, ping and push delivery (push: the tokens are sent to the client,
//! `ciba::push`, and `/token` refuses its ids); `login_hint` (a username or e-mail address),
//! `id_token_hint` (an ID token issued here to this client, its signature and issuer checked,
//! its expiry not: CIBA Core §7.1 allows an expired one) and `login_hint_token` (a JWT from an
//! issuer the operator trusts for it, `grants::jwt_bearer::login_hint`); `binding_message`;
//! `requested_expiry`; `acr_values`; `user_code` (`ciba::user_code`: the code the user set on
//! the account page, required of a client that registered `backchannel_user_code_parameter`,
//! checked and throttled like a password); signed requests (§7.1.1, `signed`: the parameters
//! as a JWT the client signs, required of a client that registered
//! `backchannel_authentication_request_signing_alg`).
//!
//! The client authenticates as at `/token` and must be confidential (CIBA Core §4). Requests
//! waiting for their user are bounded per client and in all (`ciba_max_pending_per_client`,
//! `ciba_max_pending`), as a device's are.

use crate::error::OAuthError;
use crate::grants::ciba::GRANT_TYPE;
use crate::http::cors::ServedClient;
use crate::http::params::{FormParams, Params};
use crate::registry::{Client, User};
use crate::stores::ciba::{CibaRequest, Mode};
use crate::stores::device::Limits;
use crate::http::client_cert::{ClientCertificate, PresentedCertificate};
use crate::tenant::Issuer;
use crate::util::{now, random_token, split_list};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{json, Value};
use std::sync::Arc;

pub mod signed;

pub const PATH: &str = "/backchannel";
/// The delivery modes offered (discovery's `backchannel_token_delivery_modes_supported`).
pub const DELIVERY_MODES: &[&str] = &["poll", "ping", "push"];
/// The longest `client_notification_token` kept (CIBA Core §7.1 suggests at least 128 bits of
/// entropy; a kilobyte leaves room for a signed token).
const MAX_NOTIFICATION_TOKEN: usize = 1024;
/// The longest `login_hint` looked up (a username or an e-mail address).
const MAX_LOGIN_HINT: usize = 320;

pub async fn backchannel_authentication(app: Issuer, PresentedCertificate(cert): PresentedCertificate, headers: HeaderMap, form: Result<FormParams, OAuthError>) -> Response {
    let mut served = None;
    let result = handle(&app, &headers, cert.as_ref(), form, &mut served).await;
    crate::endpoints::device_authorization::answer(result, served, "backchannel authentication refused")
}

/// A CIBA Core §13 error: its code with 400.
fn refuse(code: &'static str, description: impl Into<std::borrow::Cow<'static, str>>) -> OAuthError {
    OAuthError::invalid_request(description).code_as(code).with_status(StatusCode::BAD_REQUEST)
}

async fn handle(app: &Issuer, headers: &HeaderMap, cert: Option<&ClientCertificate>, form: Result<FormParams, OAuthError>, served: &mut Option<ServedClient>) -> Result<Value, OAuthError> {
    let FormParams(params) = form?;
    let client = crate::client_auth::authenticate(app, headers, &params, PATH, cert).await?;
    *served = Some(ServedClient(client.clone()));
    if !client.allows_grant(GRANT_TYPE) {
        return Err(OAuthError::unauthorized_client("this client is not registered for CIBA"));
    }
    // Every authorization of such a client is for an organization, and this grant has no way
    // to ask which (issue 31): refused rather than tokens for none.
    if client.meta.organization_required {
        return Err(OAuthError::unauthorized_client("this client needs an organization, which this grant cannot give"));
    }
    let mode = match client.meta.backchannel_token_delivery_mode.as_deref() {
        Some("poll") => Mode::Poll,
        Some("ping") => Mode::Ping,
        // A push client registered before its tenant was held to FAPI: refused now (FAPI-CIBA
        // §5.2.2), as its registration would be.
        Some("push") if !app.profile().allows_ciba_push(&client) => {
            return Err(OAuthError::unauthorized_client("this server's security profile (FAPI-CIBA) does not allow push mode: register poll or ping"));
        }
        Some("push") => Mode::Push,
        _ => return Err(OAuthError::unauthorized_client("this client has no token delivery mode this server offers (poll, ping or push)")),
    };
    // From here on, the parameters are the signed request's when there is one.
    let params = signed::request(app, &client, params).await?;
    let scope = params.get("scope").ok_or_else(|| OAuthError::invalid_request("scope is required"))?;
    if !split_list(scope).any(|s| s == "openid") {
        return Err(OAuthError::invalid_scope("scope must include openid (CIBA Core section 7.1)"));
    }
    let resources = crate::resources::allowed(app, &client, params.get_all("resource"))?;
    let scope = crate::endpoints::device_authorization::requested_scope(app, &client, &resources, Some(scope))?;
    let user = hinted_user(app, &client, &params).await?;
    let binding_message = binding_message(app, params.get("binding_message"))?;
    // FAPI-CIBA §5.2.2 item 2: a unique authorization context, or a binding message; the
    // request here carries no context of its own (a scope names no transaction).
    if binding_message.is_none() && app.profile().requires_binding_message(&client) {
        return Err(OAuthError::invalid_request("this server's security profile (FAPI-CIBA) requires a binding_message"));
    }
    let ttl = requested_expiry(app, params.get("requested_expiry"))?;
    // CIBA Core §7.1: required in ping and push modes, where it authorizes what is sent to
    // the client. Push mode seals it with the auth_req_id as ping mode does.
    let token = match (mode, params.get("client_notification_token")) {
        (Mode::Ping | Mode::Push, None) => return Err(OAuthError::invalid_request("client_notification_token is required in ping and push modes")),
        (_, Some(t)) if t.len() > MAX_NOTIFICATION_TOKEN || !t.bytes().all(|b| b.is_ascii_graphic()) => {
            return Err(OAuthError::invalid_request("client_notification_token must be at most 1024 visible ASCII characters"));
        }
        (Mode::Ping | Mode::Push, Some(t)) => Some(t),
        (Mode::Poll, _) => None,
    };
    let mut acr_values: Vec<String> = params.get("acr_values").map(split_list).into_iter().flatten().map(str::to_string).collect();
    if acr_values.is_empty() {
        acr_values = client.meta.default_acr_values.clone();
    }
    if let Some(a) = acr_values.iter().find(|a| !crate::factors::ACR_VALUES.contains(&a.as_str())) {
        return Err(OAuthError::invalid_request(format!("acr_values: {a:?} is not offered here")));
    }
    // Last: a code is checked (and a wrong one counted) only in a request otherwise good.
    crate::ciba::user_code::check(app, &client, &user, params.get("user_code")).await?;
    let t = now();
    let request = CibaRequest {
        client_id: client.id().to_string(),
        user_id: user.id.clone(),
        scope,
        resources,
        acr_values,
        binding_message,
        mode,
        created_at: t,
        expires_at: t + ttl,
    };
    let auth_req_id = random_token();
    let ping = token.map(|tok| crate::ciba::ping::seal(app.vault(), &auth_req_id, tok));
    let hook = crate::ciba::announce(app, &user, &client, &request);
    let limits = Limits { per_client: app.config.ciba_max_pending_per_client, total: app.config.ciba_max_pending };
    let interval = app.config.ciba_poll_interval;
    if !app.stores.ciba.issue(app.tenant.id, &auth_req_id, request, interval, ping, limits, hook).await? {
        return Err(OAuthError::temporarily_unavailable("too many authentication requests are waiting for their users; try again later"));
    }
    if let Some(m) = &app.mailer {
        m.wake.notify_one();
    }
    // A push client never polls, so it is given no interval (CIBA Core §7.3).
    match mode {
        Mode::Push => Ok(json!({ "auth_req_id": auth_req_id, "expires_in": ttl })),
        _ => Ok(json!({ "auth_req_id": auth_req_id, "expires_in": ttl, "interval": interval })),
    }
}

/// The user the request names: exactly one hint (CIBA Core §7.1), for an existing, enabled
/// user (else `unknown_user_id`).
async fn hinted_user(app: &Issuer, client: &Client, params: &Params) -> Result<Arc<User>, OAuthError> {
    let hints = ["login_hint", "id_token_hint", "login_hint_token"].iter().filter(|h| params.get(h).is_some()).count();
    if hints != 1 {
        return Err(OAuthError::invalid_request("exactly one of login_hint, id_token_hint and login_hint_token is required"));
    }
    if let Some(token) = params.get("login_hint_token") {
        return crate::grants::jwt_bearer::login_hint::user(app.grants.jwt_bearer(), app, client, token).await;
    }
    let unknown = || refuse("unknown_user_id", "the hint names no user of this server");
    let user = match (params.get("login_hint"), params.get("id_token_hint")) {
        (Some(login), _) if login.len() <= MAX_LOGIN_HINT => app.registry().user_by_login(login),
        (Some(_), _) => None,
        (None, Some(hint)) => {
            let claims = crate::tokens::verify_id_token_hint(app, hint).map_err(|_| OAuthError::invalid_request("id_token_hint is not an ID token issued here"))?;
            // An ID token "previously issued to the Client" (CIBA Core §7.1): its audience.
            let to_client = match claims.get("aud") {
                Some(Value::String(a)) => a == client.id(),
                Some(Value::Array(a)) => a.iter().any(|a| a.as_str() == Some(client.id())),
                _ => false,
            };
            if !to_client {
                return Err(OAuthError::invalid_request("id_token_hint was issued to another client"));
            }
            let sub = claims.get("sub").and_then(Value::as_str).unwrap_or_default();
            user_of_subject(app, client, sub)
        }
        (None, None) => None,
    };
    user.filter(|u| !u.disabled).ok_or_else(unknown)
}

/// The user `client` knows as `sub`: the user id itself for public subjects; for a pairwise
/// client, the user whose pairwise value it is (a scan of the users, each an HMAC: fine for
/// the rare pairwise CIBA client, and it runs only after the client has authenticated).
fn user_of_subject(app: &Issuer, client: &Client, sub: &str) -> Option<Arc<User>> {
    match crate::tokens::subject::sector(client) {
        None => app.registry().user(sub),
        Some(_) => app.registry().list_users().into_iter().find(|u| crate::tokens::subject::subject(app, Some(client), &u.id) == sub),
    }
}

/// CIBA Core §7.1: shown to the user on a small screen, so short and printable; otherwise
/// `invalid_binding_message` (§13).
fn binding_message(app: &Issuer, message: Option<&str>) -> Result<Option<String>, OAuthError> {
    let Some(m) = message else { return Ok(None) };
    let max = app.config.ciba_binding_message_max_length as usize;
    if m.chars().count() > max || m.trim().is_empty() || m.chars().any(char::is_control) {
        return Err(refuse("invalid_binding_message", format!("binding_message must be 1 to {max} printable characters")));
    }
    Ok(Some(m.to_string()))
}

/// The request's life: `requested_expiry` seconds (a positive integer, cut to
/// `ciba_max_request_ttl`), else `ciba_request_ttl`.
fn requested_expiry(app: &Issuer, requested: Option<&str>) -> Result<u64, OAuthError> {
    let Some(r) = requested else { return Ok(app.config.ciba_request_ttl) };
    match r.parse::<u64>() {
        Ok(n) if n > 0 && r.bytes().all(|b| b.is_ascii_digit()) => Ok(n.min(app.config.ciba_max_request_ttl)),
        _ => Err(OAuthError::invalid_request("requested_expiry must be a positive number of seconds")),
    }
}
