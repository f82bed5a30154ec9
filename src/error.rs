//! Every failure a client can cause is an `OAuthError`: an RFC 6749 §5.2 error code, a
//! human description and the HTTP status it travels with. Handlers return it; `IntoResponse`
//! turns it into the JSON body (plus `WWW-Authenticate` where RFC 6749 §5.2 / RFC 6750 §3 ask).

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use std::borrow::Cow;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthError {
    pub code: &'static str,
    pub description: Cow<'static, str>,
    pub status: StatusCode,
    /// `WWW-Authenticate` challenge to send, if any.
    pub challenge: Option<Challenge>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Challenge {
    /// RFC 6749 §5.2: a client that authenticated with HTTP Basic gets a Basic challenge.
    Basic,
    /// RFC 6750 §3: protected resources answer with a Bearer challenge naming the error.
    Bearer,
    /// RFC 6750 §3.1: a request with no credentials at all gets a challenge without an error code.
    BearerBare,
    /// RFC 9449 §7.1: a refused DPoP-bound request, with the algorithms proofs may use
    /// (space-separated).
    Dpop(std::sync::Arc<str>),
}

#[derive(Serialize)]
struct Body<'a> {
    error: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    error_description: &'a str,
}

macro_rules! oauth_errors {
    ($($fn:ident => $code:literal, $status:ident;)*) => {
        impl OAuthError {
            $(pub fn $fn(description: impl Into<Cow<'static, str>>) -> Self {
                Self { code: $code, description: error_description(description.into()), status: StatusCode::$status, challenge: None }
            })*
        }
    };
}

/// RFC 6749 §5.2: `error_description` is `%x20-21 / %x23-5B / %x5D-7E`: printable ASCII
/// without `"` and `\`. The one place that guarantees it, whatever a description quotes (a
/// parameter's name, a value, a library's message): a double quote becomes a single one, a
/// backslash a slash, a section sign the word "section", a dash a hyphen, any other character
/// outside the set (a control, anything else non-ASCII) a question mark. What is already clean is passed through without a copy.
pub fn error_description(d: Cow<'static, str>) -> Cow<'static, str> {
    let allowed = |c: char| matches!(c, '\x20'..='\x21' | '\x23'..='\x5b' | '\x5d'..='\x7e');
    if d.chars().all(allowed) {
        return d;
    }
    let mut out = String::with_capacity(d.len());
    for c in d.chars() {
        match c {
            '"' => out.push('\''),
            '\\' => out.push('/'),
            // The product's own wording cites specifications ("RFC 7636 §4.1") and ranges.
            '§' => out.push_str("section "),
            '–' | '—' => out.push('-'),
            c if allowed(c) => out.push(c),
            _ => out.push('?'),
        }
    }
    Cow::Owned(out)
}

oauth_errors! {
    invalid_request => "invalid_request", BAD_REQUEST;
    invalid_client => "invalid_client", UNAUTHORIZED;
    invalid_grant => "invalid_grant", BAD_REQUEST;
    unauthorized_client => "unauthorized_client", BAD_REQUEST;
    unsupported_grant_type => "unsupported_grant_type", BAD_REQUEST;
    invalid_scope => "invalid_scope", BAD_REQUEST;
    invalid_target => "invalid_target", BAD_REQUEST;
    access_denied => "access_denied", FORBIDDEN;
    invalid_token => "invalid_token", UNAUTHORIZED;
    insufficient_scope => "insufficient_scope", FORBIDDEN;
    server_error => "server_error", INTERNAL_SERVER_ERROR;
    temporarily_unavailable => "temporarily_unavailable", SERVICE_UNAVAILABLE;
    not_found => "not_found", NOT_FOUND;
}

impl OAuthError {
    pub fn with_challenge(mut self, challenge: Challenge) -> Self {
        self.challenge = Some(challenge);
        self
    }

    pub fn with_status(mut self, status: StatusCode) -> Self {
        self.status = status;
        self
    }

    /// A failure of our own (storage, keys): logged in full, reported without detail.
    pub fn internal(context: &str, err: impl std::fmt::Display) -> Self {
        tracing::error!(%context, error = %err, "internal error");
        Self::temporarily_unavailable("the server could not complete the request; retry later")
    }

    fn www_authenticate(&self) -> Option<String> {
        match self.challenge.as_ref()? {
            Challenge::Basic => Some("Basic realm=\"authrim\"".into()),
            Challenge::BearerBare => Some("Bearer realm=\"authrim\"".into()),
            Challenge::Bearer => Some(format!(
                "Bearer realm=\"authrim\", error=\"{}\", error_description=\"{}\"",
                self.code,
                self.description
            )),
            Challenge::Dpop(algs) => Some(format!(
                "DPoP realm=\"authrim\", algs=\"{}\", error=\"{}\", error_description=\"{}\"",
                algs,
                self.code,
                self.description
            )),
        }
    }
}

impl std::fmt::Display for OAuthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.description)
    }
}

impl std::error::Error for OAuthError {}

impl IntoResponse for OAuthError {
    fn into_response(self) -> Response {
        let body = serde_json::to_vec(&Body { error: self.code, error_description: &self.description })
            .unwrap_or_default();
        let mut res = (self.status, body).into_response();
        let h = res.headers_mut();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        if let Some(v) = self.www_authenticate().and_then(|v| HeaderValue::from_str(&v).ok()) {
            h.insert(header::WWW_AUTHENTICATE, v);
        }
        res.extensions_mut().insert(ErrorCode(self.code));
        res
    }
}

pub type OAuthResult<T> = Result<T, OAuthError>;

/// Response extension naming the OAuth error code, for the error metrics.
#[derive(Clone, Copy, Debug)]
pub struct ErrorCode(pub &'static str);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_keep_to_rfc6749s_character_set() {
        let allowed = |c: char| matches!(c, '\x20'..='\x21' | '\x23'..='\x5b' | '\x5d'..='\x7e');
        let e = OAuthError::invalid_client("the assertion: no key fits (kid \"k1\", path C:\\x)\n\tnaïve €");
        assert_eq!(e.description, "the assertion: no key fits (kid 'k1', path C:/x)??na?ve ?");
        assert!(matches!(OAuthError::invalid_request("plain words").description, Cow::Borrowed(_)), "clean text is not copied");
        assert_eq!(OAuthError::invalid_grant("malformed (RFC 7636 §4.1), 43–128 characters").description, "malformed (RFC 7636 section 4.1), 43-128 characters");
        // Every character there is: what comes out is always in the set.
        let every: String = (0u32..0x3000).filter_map(char::from_u32).collect();
        assert!(OAuthError::invalid_grant(every).description.chars().all(allowed));
        assert!(OAuthError::invalid_request(String::new()).description.is_empty());
    }

    #[test]
    fn bearer_challenge_carries_error_code() {
        let e = OAuthError::invalid_token("expired").with_challenge(Challenge::Bearer);
        assert_eq!(
            e.www_authenticate().unwrap(),
            "Bearer realm=\"authrim\", error=\"invalid_token\", error_description=\"expired\""
        );
    }

    #[test]
    fn response_is_json_with_status() {
        let res = OAuthError::invalid_grant("code reused").into_response();
        assert_eq!(res.status(), StatusCode::BAD_REQUEST);
        assert_eq!(res.headers()[header::CONTENT_TYPE], "application/json");
    }
}
