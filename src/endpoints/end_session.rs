//! `end_session_endpoint` (OpenID Connect RP-Initiated Logout 1.0), at `/logout`.
//!
//! - The request (GET query or POST form) is checked before anything happens: a hint that is
//!   not an ID token of ours, a `client_id` the hint was not issued to, or a
//!   `post_logout_redirect_uri` the client did not register gets a page, never a redirect.
//! - With a valid `id_token_hint` for the signed-in user (an expired one too: §2 allows it),
//!   the session ends at once. Otherwise the user confirms on a page whose form carries the
//!   request sealed to the session cookie (`http::sealed`), which is the CSRF protection: a
//!   third-party page cannot make a browser sign out.
//! - The session ends through `logout::end_session` (revocation, back-channel outbox); the
//!   page then loads the front-channel iframes, if any client has one, and goes on to the
//!   `post_logout_redirect_uri` with `state`, or says that the user is signed out.

use crate::http::cookies;
use crate::http::pages::{self, error_page};
use crate::ui::Msg;
use crate::http::params::{FormParams, Params};
use crate::http::sealed::Unsealed;
use crate::logout::{end_session, frontchannel, EndedBy};
use crate::stores::{Session, SessionRef};
use crate::tenant::Issuer;
use axum::body::Bytes;
use axum::extract::RawQuery;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A checked logout request: where to go afterwards. What the confirmation form carries.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct LogoutRequest {
    /// An exact match of one of the client's `post_logout_redirect_uris`.
    post_logout_redirect_uri: Option<String>,
    /// RP-Initiated Logout 1.0 §2: the languages the pages should be in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ui_locales: Option<String>,
    state: Option<String>,
}

/// What the request says about who is to be signed out.
struct Hints {
    /// `sub` of a valid `id_token_hint`, and the user it names as the `sub` that the hint's
    /// client knows (pairwise clients know users by their own values): a closure of the
    /// session's user id to that `sub`.
    sub: Option<String>,
    hint_client: Option<String>,
    /// The user `logout_hint` names, if it names one we know; `Some(None)` if it names none.
    logout_hint_user: Option<Option<String>>,
}

const SEALED_KIND: &str = "logout";
/// The longest `ui_locales` kept (a few language tags).
const MAX_UI_LOCALES: usize = 128;

pub async fn get(app: Issuer, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    let query = query.unwrap_or_default();
    handle(&app, &headers, Params::parse(query.as_bytes()), StatusCode::FOUND).await
}

pub async fn post(
    app: Issuer,
    headers: HeaderMap,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    let body = match pages::form_body(&headers, body, "logout request") {
        Ok(b) => b,
        Err(refused) => return refused,
    };
    handle(&app, &headers, Params::parse(&body), StatusCode::SEE_OTHER).await
}

/// The confirmation form's post.
pub async fn confirm(app: Issuer, headers: HeaderMap, form: Result<FormParams, crate::error::OAuthError>) -> Response {
    let Ok(FormParams(params)) = form else { return error_page(StatusCode::BAD_REQUEST, "err-logout-unreadable") };
    let Some(sealed) = params.get("challenge") else { return error_page(StatusCode::BAD_REQUEST, "err-logout-unreadable") };
    let cookie = cookies::get(&headers, cookies::SESSION);
    match app.tenant.sealer.open::<LogoutRequest>(SEALED_KIND, cookie, sealed) {
        Ok(req) => {
            let session = cookie.map(|c| SessionRef::Cookie(c.to_string()));
            finish(&app, session, req, StatusCode::SEE_OTHER).await
        }
        // Signed out meanwhile (another tab): the form's purpose is served. Its redirect is
        // not followed, since the form cannot be tied to this browser any more.
        Err(Unsealed::WrongBinding) if cookie.is_none() => signed_out_response(&app),
        Err(_) => error_page(StatusCode::BAD_REQUEST, "err-logout-expired"),
    }
}

async fn handle(app: &Issuer, headers: &HeaderMap, params: Result<Params, crate::error::OAuthError>, status: StatusCode) -> Response {
    let params = match params {
        Ok(p) => p,
        Err(e) => return error_page(StatusCode::BAD_REQUEST, Msg::new("err-logout-invalid").detail(e.description.to_string())),
    };
    let (req, hints) = match validate(app, &params) {
        Ok(checked) => checked,
        Err(msg) => return error_page(StatusCode::BAD_REQUEST, Msg::new("err-logout-invalid").detail(msg)),
    };
    let Some((cookie, session)) = super::authorize::current_session(app, headers).await else {
        // Nobody is signed in here: nothing to end, and the RP may have its user back.
        return finish(app, None, req, status).await;
    };
    if needs_confirmation(app, &hints, &session) {
        let username = app.registry().user(&session.user_id).map(|u| u.username.clone()).unwrap_or_default();
        let challenge = app.tenant.sealer.seal(SEALED_KIND, &cookie, app.config.challenge_ttl, &req);
        return pages::logout_confirm(&challenge, &username, req.ui_locales.as_deref());
    }
    finish(app, Some(SessionRef::Cookie(cookie)), req, status).await
}

/// Check everything the request names before anything is done.
fn validate(app: &Issuer, p: &Params) -> Result<(LogoutRequest, Hints), String> {
    let hint = match p.get("id_token_hint") {
        None => None,
        Some(h) => Some(
            crate::tokens::verify_id_token_hint(app, h)
                .map_err(|_| "The id_token_hint was not issued by this server, or has been altered.".to_string())?,
        ),
    };
    let audiences: Vec<String> = match hint.as_ref().and_then(|h| h.get("aud")) {
        Some(Value::String(a)) => vec![a.clone()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        _ => Vec::new(),
    };
    // §2: with both, the client must be the one the ID token was issued to.
    let client_id = match (p.get("client_id"), hint.as_ref()) {
        (Some(id), Some(_)) if !audiences.iter().any(|a| a == id) => {
            return Err("The client_id does not match the id_token_hint.".into());
        }
        (Some(id), _) => Some(id.to_string()),
        (None, Some(h)) => h.get("azp").and_then(Value::as_str).map(str::to_string).or_else(|| (audiences.len() == 1).then(|| audiences[0].clone())),
        (None, None) => None,
    };
    let client = match &client_id {
        Some(id) => Some(app.client(id).ok_or("The application that sent you here is not registered.")?),
        None => None,
    };
    let post_logout_redirect_uri = match p.get("post_logout_redirect_uri") {
        None => None,
        Some(uri) => {
            let client = client.as_ref().ok_or(
                "The request asks to be sent back after logout without saying which application it is for (id_token_hint or client_id).",
            )?;
            if !client.has_post_logout_redirect_uri(uri) {
                return Err("The post_logout_redirect_uri is not registered for this application.".into());
            }
            Some(uri.to_string())
        }
    };
    let logout_hint_user =
        p.get("logout_hint").map(|h| app.registry().user_by_login(h).map(|u| u.id.clone()).or_else(|| app.registry().user(h).map(|u| u.id.clone())));
    let hints = Hints {
        sub: hint.as_ref().and_then(|h| h.get("sub")).and_then(Value::as_str).map(str::to_string),
        hint_client: client.as_ref().map(|c| c.id().to_string()),
        logout_hint_user,
    };
    let ui_locales = p.get("ui_locales").filter(|l| l.len() <= MAX_UI_LOCALES).map(str::to_string);
    Ok((LogoutRequest { post_logout_redirect_uri, state: p.get("state").map(str::to_string), ui_locales }, hints))
}

/// Sign out without asking only when the request proves it comes from an application of
/// the signed-in user: an ID token of ours for this user, and no `logout_hint` naming another.
fn needs_confirmation(app: &Issuer, hints: &Hints, session: &Session) -> bool {
    let known_as = match &hints.hint_client {
        Some(c) => crate::tokens::subject::subject_for(app, c, &session.user_id),
        None => session.user_id.clone(),
    };
    let hint_is_this_user = hints.sub.as_deref() == Some(known_as.as_str());
    let logout_hint_agrees = match &hints.logout_hint_user {
        None => true,
        Some(named) => named.as_deref() == Some(session.user_id.as_str()),
    };
    !(hint_is_this_user && logout_hint_agrees)
}

/// End the session (if any), then the front-channel iframes, then the way out.
async fn finish(app: &Issuer, session: Option<SessionRef>, req: LogoutRequest, status: StatusCode) -> Response {
    let ended = match session {
        Some(which) => match end_session(app, app.tenant.id, which, EndedBy::User).await {
            Ok(ended) => ended,
            Err(e) => return super::authorize::unavailable(e),
        },
        None => None,
    };
    let next = req.post_logout_redirect_uri.as_deref().and_then(|uri| back_to_client(uri, req.state.as_deref()));
    leave(app, ended.as_ref(), next, req.ui_locales.as_deref(), status, None).await
}

/// The way out of a logout once the session `ended` (if there was one): the upstream
/// provider's logout, then the page whose hidden iframes tell the session's front-channel
/// parties (OpenID clients' `frontchannel_logout_uri`s, SAML SPs' LogoutRequests: every one
/// but `initiator`, the SAML SP whose own LogoutRequest this answers), then `next`. Shared
/// by RP-initiated logout and SAML Single Logout (`endpoints::saml::slo`), so that both end
/// sessions alike.
pub(crate) async fn leave(
    app: &Issuer,
    ended: Option<&Session>,
    mut next: Option<String>,
    ui_locales: Option<&str>,
    status: StatusCode,
    initiator: Option<&str>,
) -> Response {
    // Signed in through an upstream provider that has a logout endpoint: its session ends
    // too, on the way out; it sends the browser back to `/logout/upstream`, which goes on
    // to where this logout was going (sealed into `state`).
    if let Some(up) = ended.and_then(|s| s.upstream.as_ref()) {
        let then = AfterUpstream { next: next.clone(), ui_locales: ui_locales.map(str::to_string) };
        let state = app.tenant.sealer.seal(UPSTREAM_KIND, UPSTREAM_KIND, app.config.challenge_ttl, &then);
        if let Some(url) = app.tenant.upstreams.logout_url(&up.provider, up.id_token.as_deref(), &app.endpoint(UPSTREAM_RETURN), &state).await {
            next = Some(url);
        }
    }
    let mut iframes = ended.map(|s| frontchannel::iframe_urls(app, s)).unwrap_or_default();
    // SAML SPs are told the same way (Profiles §4.4, front channel): their LogoutRequests.
    let saml = ended.map(|s| super::saml::slo_out::logout_requests(app, s, initiator)).unwrap_or_default();
    iframes.extend(saml.frames);
    let mut res = if !iframes.is_empty() {
        pages::frontchannel_logout(&iframes, &saml.origins, next.as_deref(), ui_locales)
    } else if let Some(next) = next {
        let mut res = status.into_response();
        if let Ok(v) = HeaderValue::from_str(&next) {
            res.headers_mut().insert(header::LOCATION, v);
        }
        res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        res
    } else {
        pages::signed_out(ui_locales)
    };
    clear_session_cookie(app, &mut res);
    res
}

const UPSTREAM_KIND: &str = "upstream-logout";
/// Where an upstream provider sends the browser back after its logout.
pub const UPSTREAM_RETURN: &str = "/logout/upstream";

/// Where a logout that went through an upstream provider goes next.
#[derive(serde::Serialize, serde::Deserialize)]
struct AfterUpstream {
    next: Option<String>,
    ui_locales: Option<String>,
}

/// `GET /logout/upstream?state=…`: back from the upstream provider's logout; on to the
/// application's `post_logout_redirect_uri` (checked when the logout began), or the
/// signed-out page.
pub async fn upstream_return(app: Issuer, RawQuery(query): RawQuery) -> Response {
    let params = Params::parse(query.unwrap_or_default().as_bytes()).unwrap_or_default();
    let then = params.get("state").and_then(|s| app.tenant.sealer.open::<AfterUpstream>(UPSTREAM_KIND, Some(UPSTREAM_KIND), s).ok());
    match then {
        Some(AfterUpstream { next: Some(next), .. }) => crate::endpoints::first_party::see_other_url(&next),
        Some(AfterUpstream { next: None, ui_locales }) => pages::signed_out(ui_locales.as_deref()),
        None => signed_out_response(&app),
    }
}

fn signed_out_response(app: &Issuer) -> Response {
    let mut res = pages::signed_out(None);
    clear_session_cookie(app, &mut res);
    res
}

fn clear_session_cookie(app: &Issuer, res: &mut Response) {
    cookies::set(res, app.base(), cookies::SESSION, "", Some(0), app.config.secure_cookies());
    crate::endpoints::check_session::set_cookie(app, res, None);
}

/// The registered URI with `state` added, and nothing else (§3).
fn back_to_client(uri: &str, state: Option<&str>) -> Option<String> {
    let mut url = url::Url::parse(uri).ok()?;
    if let Some(s) = state {
        url.query_pairs_mut().append_pair("state", s);
    }
    Some(url.to_string())
}
