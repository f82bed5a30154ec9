//! OpenID Connect Session Management 1.0: the OP's `check_session_iframe` and the
//! `session_state` of authentication responses.
//!
//! The OP browser state ("opbs", §3) is a value that changes whenever this browser's session
//! here changes: an HMAC of the session id, so it tells nothing of the id itself. Unlike the
//! session cookie it must be readable by the iframe's script, so it has a cookie of its own,
//! `authrim_opbs`, set and cleared with the session cookie. An RP's page embeds the iframe
//! from another site, where only a `SameSite=None` cookie is readable; that needs `Secure`,
//! so under an `http://` issuer (development) the cookie is `SameSite=Lax` and only RPs on the
//! same site (another port of `localhost`) see changes.
//!
//! `session_state` = base64url(SHA-256(client_id " " origin " " opbs " " salt)) "." salt,
//! where `origin` is the redirect URI's. The iframe (`assets/check_session.js`) computes the
//! same from what the RP posts ("client_id session_state") and the cookie, and answers
//! "unchanged", "changed" or "error" to the posting window only.
//!
//! Limits: a session ended elsewhere (the account page, an operator, expiry) changes the
//! cookie only in the browser that ended it; elsewhere the RP learns it at its next
//! `prompt=none` request. The cookie lives as long as the session cookie.

use crate::http::cookies;
use crate::tenant::Issuer;
use crate::util::{b64, random_bytes, sha256};
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};

/// Where the iframe is (`check_session_iframe`).
pub const PATH: &str = "/session/check";

/// The cookie holding the OP browser state.
pub const OPBS: &str = "authrim_opbs";

/// The OP browser state of the session `sid`.
pub fn browser_state(app: &Issuer, sid: &str) -> String {
    b64(&aws_lc_rs::hmac::sign(&app.tenant.session_state_key, sid.as_bytes()).as_ref()[..18])
}

/// The `session_state` for a response to `client_id` at `redirect_uri` in session `sid`;
/// `None` for a redirect URI without an origin (a custom scheme of a native app, which has no
/// iframe to ask).
pub fn session_state(app: &Issuer, client_id: &str, redirect_uri: &str, sid: &str) -> Option<String> {
    let origin = url::Url::parse(redirect_uri).ok()?.origin();
    if !origin.is_tuple() {
        return None;
    }
    let salt = b64(&random_bytes::<12>());
    let opbs = browser_state(app, sid);
    let hash = b64(&sha256(format!("{client_id} {} {opbs} {salt}", origin.ascii_serialization()).as_bytes()));
    Some(format!("{hash}.{salt}"))
}

/// Set the browser-state cookie for session `sid`, or clear it (`None`, a sign-out).
pub fn set_cookie(app: &Issuer, res: &mut Response, sid: Option<&str>) {
    let value = sid.map(|s| browser_state(app, s)).unwrap_or_default();
    let max_age = if sid.is_some() { app.config.session_ttl } else { 0 };
    cookies::set_script_readable(res, app.base(), OPBS, &value, max_age, app.config.secure_cookies());
}

/// `GET /session/check`: the iframe. No text for people, nothing of theirs; embeddable by
/// any page (that is its purpose), its script from our assets.
pub async fn iframe(app: Issuer) -> Response {
    let html = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>check session</title>\
         <script src=\"{}/assets/check_session.js\" data-cookie=\"{OPBS}\"></script></head><body></body></html>",
        app.base()
    );
    let mut res = html.into_response();
    let h = res.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    h.insert("content-security-policy", HeaderValue::from_static("default-src 'none'; script-src 'self'; base-uri 'none'; form-action 'none'"));
    res
}
