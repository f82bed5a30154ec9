//! CORS for browser-based clients (single-page apps using PKCE) on `/token`, `/revoke` and
//! `/userinfo`. A page may call them only from an origin of the client the request is for:
//! the client's `allowed_cors_origins`, or else the origins of its web redirect URIs.
//!
//! tower-http's `CorsLayer` decides from the request alone, before the handler runs. Here the
//! client is known only after it: /token and /revoke name it in the body (or the Basic
//! header), /userinfo in the access token. So the handler marks its response with the client
//! it served (`ServedClient`), and this layer honours the `Origin` only if that client allows
//! it. A preflight names no client; it is answered positively when some client allows the
//! origin, which only lets the browser send the real request, judged as above.
//!
//! Never `Access-Control-Allow-Credentials`: these endpoints take no cookies, and a token or
//! secret the page holds goes in the request itself. Discovery and `/jwks` are public and
//! answer `Access-Control-Allow-Origin: *` themselves (`endpoints/discovery.rs`).

use crate::app::AppState;
use crate::registry::Client;
use axum::extract::Request;
use axum::http::header::{
    ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS, ACCESS_CONTROL_ALLOW_ORIGIN, ACCESS_CONTROL_EXPOSE_HEADERS,
    ACCESS_CONTROL_MAX_AGE, ACCESS_CONTROL_REQUEST_METHOD, ORIGIN, VARY,
};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// Response extension: the client a CORS-enabled endpoint acted for (authenticated at
/// /token and /revoke, the access token's client at /userinfo).
#[derive(Clone)]
pub struct ServedClient(pub Arc<Client>);

/// The methods a page may use on each CORS-enabled path; `None` for every other path.
pub fn methods(path: &str) -> Option<&'static str> {
    match path {
        "/token" | "/revoke" => Some("POST"),
        "/userinfo" => Some("GET, POST"),
        _ => None,
    }
}

/// Long enough to spare a preflight per token request; a client removed meanwhile is still
/// refused, since the real request is checked against its client.
const PREFLIGHT_MAX_AGE: &str = "600";

/// What a request on a CORS-enabled path leaves for its response (`http::edge` runs both
/// halves around the handler).
pub struct Pending {
    origin: Option<HeaderValue>,
    userinfo: bool,
}

/// Before the handler: a preflight is answered here (`Err`); any other request on a
/// CORS-enabled path gets what `decorate` needs for its response.
pub fn before(app: &AppState, tenant: crate::tenant::TenantId, req: &Request) -> Result<Option<Pending>, Response> {
    let Some(methods) = methods(req.uri().path()) else { return Ok(None) };
    let origin = req.headers().get(ORIGIN).cloned();
    if let Some(origin) = origin.as_ref().and_then(|o| o.to_str().ok()) {
        if is_preflight(req.method(), req.headers(), methods) && app.registry.of(tenant).is_cors_origin(origin) {
            return Err(preflight(origin, methods));
        }
    }
    Ok(Some(Pending { origin, userinfo: req.uri().path() == "/userinfo" }))
}

/// After the handler: allow the origin if the client the handler served allows it.
pub fn decorate(pending: Pending, mut res: Response) -> Response {
    let Pending { origin, userinfo } = pending;
    // The answer's CORS headers depend on the Origin: caches must key on it.
    res.headers_mut().append(VARY, HeaderValue::from_static("origin"));
    let Some(origin) = origin else { return res };
    let allowed = origin.to_str().is_ok_and(|o| res.extensions().get::<ServedClient>().is_some_and(|c| c.0.allows_origin(o)));
    if allowed {
        let h = res.headers_mut();
        h.insert(ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        if userinfo {
            // RFC 6750 §3: the page learns why its token was refused (expired, revoked …).
            h.insert(ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static("www-authenticate"));
        }
    }
    res
}

/// An OPTIONS request asking for one of the path's methods (Fetch standard, CORS preflight).
fn is_preflight(method: &Method, headers: &HeaderMap, methods: &str) -> bool {
    method == Method::OPTIONS
        && headers
            .get(ACCESS_CONTROL_REQUEST_METHOD)
            .and_then(|m| m.to_str().ok())
            .is_some_and(|m| methods.split(", ").any(|allowed| allowed == m))
}

fn preflight(origin: &str, methods: &'static str) -> Response {
    let mut res = StatusCode::NO_CONTENT.into_response();
    let h = res.headers_mut();
    if let Ok(o) = HeaderValue::from_str(origin) {
        h.insert(ACCESS_CONTROL_ALLOW_ORIGIN, o);
    }
    h.insert(ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static(methods));
    // Authorization: a bearer token (userinfo) or Basic client credentials; Content-Type:
    // anything but a form post (which needs no preflight) is refused by the endpoint itself.
    h.insert(ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static("authorization, content-type"));
    h.insert(ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static(PREFLIGHT_MAX_AGE));
    h.insert(VARY, HeaderValue::from_static("origin"));
    res
}
