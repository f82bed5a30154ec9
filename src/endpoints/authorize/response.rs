//! The authorization response: how the code, tokens or error travel back to the client.
//! `query` (RFC 6749 §4.1.2, the default for `code`) redirects with the values in the query
//! string; `fragment` (the default for every response type that returns a token: Multiple
//! Response Type Encoding Practices §5) in the fragment, which the browser keeps from the
//! client's server; `form_post` (OAuth 2.0 Form Post Response Mode) answers with a page whose
//! form posts them to the redirect URI, so that they never appear in a URL (history, logs,
//! `Referer`). All carry `state` and `iss` (RFC 9207).

use crate::error::OAuthError;
use crate::http::pages;
use crate::tenant::Issuer;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseMode {
    #[default]
    Query,
    Fragment,
    FormPost,
}

/// What discovery advertises (`response_modes_supported`).
pub const RESPONSE_MODES: &[&str] = &["query", "fragment", "form_post"];

impl ResponseMode {
    /// The `response_mode` parameter for the raw `response_type`; absent means the response
    /// type's default: `fragment` if it asks for a token, else `query`.
    pub fn parse(value: Option<&str>, response_type: Option<&str>) -> Result<Self, OAuthError> {
        match value {
            None => Ok(Self::default_for(response_type)),
            Some("query") => Ok(Self::Query),
            Some("fragment") => Ok(Self::Fragment),
            Some("form_post") => Ok(Self::FormPost),
            Some(other) => Err(OAuthError::invalid_request(format!(
                "unsupported response_mode {other:?}; supported: {}",
                RESPONSE_MODES.join(", ")
            ))),
        }
    }

    /// The default mode of the raw `response_type` (also where an unknown `response_mode` is
    /// reported): `fragment` if it asks for a token, else `query`.
    pub fn default_for(response_type: Option<&str>) -> Self {
        match response_type.is_some_and(super::response_type::asks_for_tokens) {
            true => Self::Fragment,
            false => Self::Query,
        }
    }
}

/// Where, and how, a response goes: a redirect URI already checked against the client's.
#[derive(Debug, Clone, Copy)]
pub struct ReplyTo<'a> {
    pub redirect_uri: &'a str,
    pub state: Option<&'a str>,
    pub mode: ResponseMode,
}

/// Send `pairs` (with `state` and `iss`) to the client. `status` is the redirect's (302 from
/// `/authorize`, 303 after a form post); a form post page is always a 200.
pub fn to_client(app: &Issuer, to: &ReplyTo<'_>, pairs: &[(&str, &str)], status: StatusCode) -> Response {
    let mut all: Vec<(&str, &str)> = pairs.to_vec();
    if let Some(s) = to.state {
        all.push(("state", s));
    }
    all.push(("iss", app.issuer()));
    match to.mode {
        ResponseMode::Query => redirect(to.redirect_uri, &all, false, status),
        ResponseMode::Fragment => redirect(to.redirect_uri, &all, true, status),
        ResponseMode::FormPost => pages::form_post(to.redirect_uri, &all),
    }
}

/// The error `e` for the client (RFC 6749 §4.1.2.1), in the request's response mode.
pub fn error(app: &Issuer, to: &ReplyTo<'_>, e: &OAuthError, status: StatusCode) -> Response {
    let mut res = to_client(app, to, &[("error", e.code), ("error_description", &e.description)], status);
    res.extensions_mut().insert(crate::error::ErrorCode(e.code));
    res
}

fn redirect(redirect_uri: &str, pairs: &[(&str, &str)], in_fragment: bool, status: StatusCode) -> Response {
    let Ok(mut url) = url::Url::parse(redirect_uri) else {
        return pages::error_page(StatusCode::BAD_REQUEST, "err-bad-redirect");
    };
    match in_fragment {
        // Form-encoded as the query would be (Multiple Response Type Encoding Practices §2.1);
        // a registered redirect URI has no fragment of its own to keep.
        true => url.set_fragment(Some(&url::form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish())),
        false => {
            url.query_pairs_mut().extend_pairs(pairs);
        }
    }
    let mut res = status.into_response();
    if let Ok(v) = HeaderValue::from_str(url.as_str()) {
        res.headers_mut().insert(header::LOCATION, v);
    }
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}
