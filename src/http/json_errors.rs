//! The guarantee that every error a client can cause at an API endpoint is an OAuth JSON error.
//!
//! Our handlers and extractors answer with `OAuthError`. What can still slip through is axum's
//! own plain-text or empty answers: an extractor's rejection (a body over `max_body_bytes`, a
//! path or query string that does not deserialise, a body that is not JSON), a default 404 or
//! 405, or whatever an extractor or layer added later answers. Rather than trusting every
//! handler to avoid them, this layer rewrites any error response that is not JSON into an
//! `OAuthError` with the same status. It touches error responses only: the success path pays
//! one status check.
//!
//! The browser pages (`/authorize`, `/login`, `/consent`, `/logout`, `/demo/callback`) answer with HTML
//! error pages by design and are left alone.

use crate::error::OAuthError;
use axum::http::header::{ALLOW, CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

/// The longest rejection text passed on as the error description.
const MAX_DESCRIPTION: usize = 512;

/// As a middleware (the server runs `needs_rewrite` and `rewrite` inside `http::edge`).
#[cfg(test)]
pub async fn json_errors(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let browser_page = is_browser_page(req.uri().path());
    let res = next.run(req).await;
    if needs_rewrite(browser_page, &res) { rewrite(res, false).await } else { res }
}

/// Whether `res` is an error a client caused that is not yet an OAuth JSON error. The success
/// path pays this check and nothing else.
pub fn needs_rewrite(browser_page: bool, res: &Response) -> bool {
    let status = res.status();
    !browser_page && (status.is_client_error() || status.is_server_error()) && !is_json(res.headers())
}

/// Whether `res`, an answer of the SCIM service, is an error that is not yet a SCIM error
/// (axum's rejections, the router's 404 and 405, an OAuth error from a shared layer).
pub fn needs_scim_rewrite(res: &Response) -> bool {
    let status = res.status();
    (status.is_client_error() || status.is_server_error()) && !content_type(res.headers()).is_some_and(|t| t.eq_ignore_ascii_case(crate::endpoints::scim::CONTENT_TYPE))
}

/// The same error as an OAuth JSON error (`scim`: a SCIM error) with the same status.
pub async fn rewrite(res: Response, scim: bool) -> Response {
    let status = res.status();
    let (parts, body) = res.into_parts();
    // axum's rejections explain themselves in a short text/plain body; keep that as the
    // description, and anything else (long, binary, HTML) out of it.
    let text = if is_plain_text(&parts.headers) {
        axum::body::to_bytes(body, MAX_DESCRIPTION).await.ok().and_then(|b| String::from_utf8(b.to_vec()).ok())
    } else {
        None
    };
    let description = text.map(|t| t.trim().to_string()).filter(|t| !t.is_empty()).unwrap_or_else(|| default_description(status).into());
    let mut out = match scim {
        true => crate::endpoints::scim::ScimError::new(status, None, description).into_response(),
        false => error_for(status, description).into_response(),
    };
    for name in [ALLOW, WWW_AUTHENTICATE, RETRY_AFTER] {
        if let Some(v) = parts.headers.get(&name) {
            out.headers_mut().insert(name, v.clone());
        }
    }
    // Keep what handlers attached for the outer layers (metrics labels, CORS).
    let mut extensions = parts.extensions;
    extensions.extend(std::mem::take(out.extensions_mut()));
    *out.extensions_mut() = extensions;
    out
}

/// Whether a request is answered with pages rather than JSON errors: a browser route, or a
/// browser's navigation (the address bar, a bookmark, a link) to a path that is no API
/// endpoint (`/admin`, a mistyped path). API endpoints answer JSON whoever asks.
pub fn answers_pages(path: &str, headers: &HeaderMap) -> bool {
    is_browser_page(path) || (!is_api_path(path) && is_navigation(headers))
}

/// The paths of the API: programs call them, so their errors are JSON even when a browser
/// opens one. Checked before any header, so that API requests pay a few string compares.
fn is_api_path(path: &str) -> bool {
    matches!(path, "/jwks" | "/par" | "/device_authorization" | "/backchannel" | "/token" | "/revoke" | "/introspect" | "/userinfo" | "/healthz" | "/metrics" | "/register")
        || ["/.well-known/", "/register/", "/admin/", "/scim/", "/assets/", "/test/", "/login/upstream/"].iter().any(|p| path.starts_with(p) && path.len() > p.len())
}

/// A top-level navigation: Fetch Metadata says so (every current browser sends it), or, for
/// older browsers, HTML is the first type the request accepts.
fn is_navigation(headers: &HeaderMap) -> bool {
    if let Some(mode) = headers.get("sec-fetch-mode") {
        return mode.as_bytes() == b"navigate";
    }
    headers.get(axum::http::header::ACCEPT).and_then(|v| v.to_str().ok()).is_some_and(|a| a.trim_start().starts_with("text/html"))
}

pub fn is_browser_page(path: &str) -> bool {
    matches!(path, "/" | "/authorize" | "/login" | "/login/second-factor" | "/login/passkey" | "/login/select" | "/login/organization" | "/login/upstream" | "/login/upstream/callback" | "/login/forgot" | "/login/reset" | "/signup" | "/signup/verify" | "/consent" | "/logout" | "/logout/confirm" | "/logout/upstream" | "/demo" | "/demo/start" | "/demo/callback")
        // SAML's single sign-on and logout services: a browser's (both bindings), their
        // answers pages.
        || path == crate::saml::SSO_PATH
        || path.starts_with("/saml/start/")
        // Our SP's assertion consumer service: the IdP's page posts the browser there.
        || path == crate::saml::sp::ACS_PATH
        || path == crate::saml::SLO_PATH
        || path == crate::endpoints::saml::slo_out::POST_PATH
        // The account page and the console are for browsers only, whatever lies below them.
        || path.starts_with("/account")
        || path.starts_with("/console")
        || path == "/device"
        || path.starts_with("/device/")
        || path.starts_with("/organizations/")
}

fn content_type(headers: &HeaderMap) -> Option<&str> {
    headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).and_then(|v| v.split(';').next()).map(str::trim)
}

/// `application/json`, or a `+json` type such as `application/problem+json`.
fn is_json(headers: &HeaderMap) -> bool {
    content_type(headers).is_some_and(|t| t.eq_ignore_ascii_case("application/json") || t.to_ascii_lowercase().ends_with("+json"))
}

fn is_plain_text(headers: &HeaderMap) -> bool {
    content_type(headers).is_some_and(|t| t.eq_ignore_ascii_case("text/plain"))
}

fn error_for(status: StatusCode, description: String) -> OAuthError {
    let e = match status {
        StatusCode::NOT_FOUND => OAuthError::not_found(description),
        StatusCode::SERVICE_UNAVAILABLE => OAuthError::temporarily_unavailable(description),
        s if s.is_server_error() => OAuthError::server_error(description),
        _ => OAuthError::invalid_request(description),
    };
    e.with_status(status)
}

fn default_description(status: StatusCode) -> &'static str {
    match status {
        StatusCode::NOT_FOUND => "no such endpoint",
        StatusCode::METHOD_NOT_ALLOWED => "method not allowed",
        StatusCode::PAYLOAD_TOO_LARGE => "the request body is too large",
        s if s.is_server_error() => "the server could not complete the request",
        _ => "the request could not be handled",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::{get, post};
    use axum::Router;
    use tower::ServiceExt;

    async fn call(router: Router, method: &str, uri: &str, body: &'static str) -> (StatusCode, HeaderMap, serde_json::Value) {
        let req = axum::extract::Request::builder().method(method).uri(uri).body(axum::body::Body::from(body)).unwrap();
        let res = router.layer(axum::middleware::from_fn(json_errors)).oneshot(req).await.unwrap();
        let (status, headers) = (res.status(), res.headers().clone());
        let bytes = axum::body::to_bytes(res.into_body(), 1 << 16).await.unwrap();
        (status, headers, serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null))
    }

    /// Handlers written the way axum makes easy: its own extractors, its default answers.
    fn naive() -> Router {
        Router::new()
            .route("/body", post(|_: axum::body::Bytes| async { "ok" }))
            .route("/query", get(|_: axum::extract::Query<std::collections::HashMap<String, u32>>| async { "ok" }))
            .route("/json", post(|_: axum::Json<serde_json::Value>| async { "ok" }))
            .route("/get-only", get(|| async { "ok" }))
            .route("/authorize", post(|| async { (StatusCode::BAD_REQUEST, "left alone") }))
            .route("/ok", get(|| async { "plain success" }))
            .layer(axum::extract::DefaultBodyLimit::max(8))
    }

    #[tokio::test]
    async fn axum_rejections_become_oauth_json_with_their_status() {
        let cases = [
            ("POST", "/body", "more than eight bytes", 413, "invalid_request"),
            ("GET", "/query?n=abc", "", 400, "invalid_request"),
            ("POST", "/json", "{", 415, "invalid_request"),
            ("DELETE", "/get-only", "", 405, "invalid_request"),
            ("GET", "/nowhere", "", 404, "not_found"),
        ];
        for (method, uri, body, status, code) in cases {
            let (st, headers, json) = call(naive(), method, uri, body).await;
            assert_eq!(st.as_u16(), status, "{method} {uri}");
            assert_eq!(headers[CONTENT_TYPE], "application/json", "{method} {uri}");
            assert_eq!(json["error"], code, "{method} {uri}");
            assert!(json["error_description"].as_str().is_some_and(|d| !d.is_empty()), "{method} {uri}");
        }
        let (_, headers, _) = call(naive(), "DELETE", "/get-only", "").await;
        assert!(headers.contains_key(ALLOW), "the 405 keeps its Allow header");
    }

    #[tokio::test]
    async fn browser_pages_and_successes_are_left_alone() {
        let (st, headers, _) = call(naive(), "POST", "/authorize", "").await;
        assert_eq!((st, headers[CONTENT_TYPE].to_str().unwrap()), (StatusCode::BAD_REQUEST, "text/plain; charset=utf-8"));
        let (st, headers, _) = call(naive(), "GET", "/ok", "").await;
        assert_eq!((st, headers[CONTENT_TYPE].to_str().unwrap()), (StatusCode::OK, "text/plain; charset=utf-8"));
    }
}
