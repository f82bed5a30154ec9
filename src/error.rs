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
    /// RFC 9449 §7.1: a refused DPoP-bound request, with the algorithms proofs may use.
    Dpop,
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
                Self { code: $code, description: description.into(), status: StatusCode::$status, challenge: None }
            })*
        }
    };
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
                self.description.replace(['"', '\\'], "'")
            )),
            Challenge::Dpop => Some(format!(
                "DPoP realm=\"authrim\", algs=\"{}\", error=\"{}\", error_description=\"{}\"",
                crate::dpop::algorithms().join(" "),
                self.code,
                self.description.replace(['"', '\\'], "'")
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
