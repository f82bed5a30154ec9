//! The authorization response: how the code, tokens or error travel back to the client.
//! `query` (RFC 6749 §4.1.2, the default for `code`) redirects with the values in the query
//! string; `fragment` (the default for every response type that returns a token: Multiple
//! Response Type Encoding Practices §5) in the fragment, which the browser keeps from the
//! client's server; `form_post` (OAuth 2.0 Form Post Response Mode) answers with a page whose
//! form posts them to the redirect URI, so that they never appear in a URL (history, logs,
//! `Referer`). All carry `state` and `iss` (RFC 9207).
//!
//! Each has a JARM twin (`query.jwt`, `fragment.jwt`, `form_post.jwt`; `jwt` is the response
//! type's default one): the same values, `iss` included, signed into one JWT sent as the
//! single `response` parameter (`jarm`).

use crate::error::OAuthError;
use crate::http::pages;
use crate::ui::Msg;
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
    #[serde(rename = "query.jwt")]
    QueryJwt,
    #[serde(rename = "fragment.jwt")]
    FragmentJwt,
    #[serde(rename = "form_post.jwt")]
    FormPostJwt,
}

/// What discovery advertises (`response_modes_supported`).
pub const RESPONSE_MODES: &[&str] = &["query", "fragment", "form_post", "jwt", "query.jwt", "fragment.jwt", "form_post.jwt"];

impl ResponseMode {
    /// The `response_mode` parameter for the raw `response_type`; absent means the response
    /// type's default: `fragment` if it asks for a token, else `query`. `jwt` is that default's
    /// JARM twin (JARM §2.3.4).
    pub fn parse(value: Option<&str>, response_type: Option<&str>) -> Result<Self, OAuthError> {
        match value {
            None => Ok(Self::default_for(response_type)),
            Some("query") => Ok(Self::Query),
            Some("fragment") => Ok(Self::Fragment),
            Some("form_post") => Ok(Self::FormPost),
            Some("jwt") => Ok(Self::default_for(response_type).signed()),
            Some("query.jwt") => Ok(Self::QueryJwt),
            Some("fragment.jwt") => Ok(Self::FragmentJwt),
            Some("form_post.jwt") => Ok(Self::FormPostJwt),
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

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Query => "query",
            Self::Fragment => "fragment",
            Self::FormPost => "form_post",
            Self::QueryJwt => "query.jwt",
            Self::FragmentJwt => "fragment.jwt",
            Self::FormPostJwt => "form_post.jwt",
        }
    }

    /// The JARM twin of a plain mode.
    fn signed(self) -> Self {
        match self {
            Self::Query => Self::QueryJwt,
            Self::Fragment => Self::FragmentJwt,
            Self::FormPost => Self::FormPostJwt,
            jwt => jwt,
        }
    }

    /// A JARM mode: the response is one signed JWT.
    pub fn is_jwt(self) -> bool {
        matches!(self, Self::QueryJwt | Self::FragmentJwt | Self::FormPostJwt)
    }

    /// Whether the response travels in the redirect's query (`query`, `query.jwt`), where
    /// logs and `Referer` may show it.
    pub fn in_query(self) -> bool {
        matches!(self, Self::Query | Self::QueryJwt)
    }

    /// The mode an error goes back in, for a request in this mode with the raw
    /// `response_type`: a request for tokens in the query is refused, and not in the query
    /// (the fragment, signed if JARM was asked for).
    pub fn for_errors(self, response_type: Option<&str>) -> Self {
        match (self, response_type.is_some_and(super::response_type::asks_for_tokens)) {
            (Self::Query, true) => Self::Fragment,
            (Self::QueryJwt, true) => Self::FragmentJwt,
            (mode, _) => mode,
        }
    }
}

/// Where, and how, a response goes: a redirect URI already checked against the client's.
#[derive(Debug, Clone, Copy)]
pub struct ReplyTo<'a> {
    /// The client the response is for: a JARM response's audience, signed as it registered.
    pub client_id: &'a str,
    pub redirect_uri: &'a str,
    pub state: Option<&'a str>,
    pub mode: ResponseMode,
    /// A SAML sign-in's: its answers are SAML Responses to this (`endpoints::saml`).
    pub saml: Option<&'a crate::saml::SamlReply>,
}

/// Send `pairs` (with `state` and `iss`) to the client. `status` is the redirect's (302 from
/// `/authorize`, 303 after a form post); a form post page is always a 200.
pub async fn to_client(app: &Issuer, to: &ReplyTo<'_>, pairs: &[(&str, &str)], status: StatusCode) -> Response {
    let mut all: Vec<(&str, &str)> = pairs.to_vec();
    if let Some(s) = to.state {
        all.push(("state", s));
    }
    if to.mode.is_jwt() {
        // `iss` is the JWT's own claim (JARM §2.1), and RFC 9207 §2.4 has it nowhere else.
        return match super::jarm::response(app, to.client_id, &all).await {
            Ok(response) => deliver(to.redirect_uri, to.mode, &[("response", &response)], status),
            // Nothing can go back to the client: it would take only a signed (or encrypted)
            // response. A key it cannot be encrypted to is its registration's fault (400).
            Err(e) if e.status.is_server_error() => {
                tracing::error!(error = %e.description, client_id = to.client_id, "JARM response not made");
                pages::error_page(StatusCode::INTERNAL_SERVER_ERROR, "err-unavailable")
            }
            Err(e) => pages::error_page(StatusCode::BAD_REQUEST, Msg::new("err-bad-request").detail(format!("{}: {}", e.code, e.description))),
        };
    }
    all.push(("iss", app.issuer()));
    deliver(to.redirect_uri, to.mode, &all, status)
}

/// `pairs` to `redirect_uri` where `mode` puts them (a JARM mode: its plain twin's place).
fn deliver(redirect_uri: &str, mode: ResponseMode, pairs: &[(&str, &str)], status: StatusCode) -> Response {
    match mode {
        ResponseMode::Query | ResponseMode::QueryJwt => redirect(redirect_uri, pairs, false, status),
        ResponseMode::Fragment | ResponseMode::FragmentJwt => redirect(redirect_uri, pairs, true, status),
        ResponseMode::FormPost | ResponseMode::FormPostJwt => pages::form_post(redirect_uri, pairs),
    }
}

/// The error `e` for the client (RFC 6749 §4.1.2.1), in the request's response mode.
pub async fn error(app: &Issuer, to: &ReplyTo<'_>, e: &OAuthError, status: StatusCode) -> Response {
    if let Some(reply) = to.saml {
        return crate::endpoints::saml::sso::refuse(app, to.client_id, reply, e).await;
    }
    let mut res = to_client(app, to, &[("error", e.code), ("error_description", &e.description)], status).await;
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

#[cfg(test)]
mod tests {
    use super::ResponseMode::{self, *};

    #[test]
    fn jwt_is_the_response_types_default_signed() {
        let parse = |mode: &str, rt: &str| ResponseMode::parse(Some(mode), Some(rt)).ok();
        assert_eq!(parse("jwt", "code"), Some(QueryJwt));
        for rt in ["code id_token", "id_token token", "token code"] {
            assert_eq!(parse("jwt", rt), Some(FragmentJwt), "{rt}");
        }
        for m in [Query, Fragment, FormPost, QueryJwt, FragmentJwt, FormPostJwt] {
            assert_eq!(parse(m.as_str(), "code"), Some(m));
            assert_eq!(m.is_jwt(), m.as_str().ends_with(".jwt"));
        }
        for unknown in ["JWT", "jwt.query", "query.jws", "form_post.jwt "] {
            assert_eq!(parse(unknown, "code"), None, "{unknown}");
        }
    }

    #[test]
    fn a_request_for_tokens_in_the_query_is_answered_in_the_fragment_signed_if_asked() {
        assert_eq!(Query.for_errors(Some("code id_token")), Fragment);
        assert_eq!(QueryJwt.for_errors(Some("id_token")), FragmentJwt);
        assert_eq!(QueryJwt.for_errors(Some("code")), QueryJwt);
        assert_eq!(FormPostJwt.for_errors(Some("code token")), FormPostJwt);
        assert_eq!(Query.for_errors(None), Query);
    }
}
