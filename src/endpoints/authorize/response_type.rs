//! `response_type` (OAuth 2.0 Multiple Response Type Encoding Practices, OpenID Connect Core
//! §3): what the authorization endpoint returns. `code` alone is the default flow; the others
//! (the hybrid `code id_token`, `code token`, `code id_token token` and the implicit
//! `id_token`, `id_token token`) return tokens in the front channel, which RFC 9700 §2.1.2
//! discourages, so a client may use them only if it registered them (`response_types`).
//! `token` alone (plain OAuth 2.0 implicit) is not offered: no OpenID profile needs it and it
//! returns an access token with nothing to bind it to the request.

use super::response::ResponseMode;
use crate::error::OAuthError;
use crate::registry::Client;
use crate::tenant::Issuer;
use serde::{Deserialize, Serialize};

/// The grant type (RFC 7591 §2.1) a client registers with a response type that returns
/// `id_token` or `token` from the authorization endpoint.
pub const IMPLICIT_GRANT: &str = "implicit";

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ResponseType {
    #[default]
    #[serde(rename = "code")]
    Code,
    #[serde(rename = "code id_token")]
    CodeIdToken,
    #[serde(rename = "code token")]
    CodeToken,
    #[serde(rename = "code id_token token")]
    CodeIdTokenToken,
    #[serde(rename = "id_token")]
    IdToken,
    #[serde(rename = "id_token token")]
    IdTokenToken,
}

/// Every response type this build implements, as discovery lists them.
pub const RESPONSE_TYPES: &[&str] = &["code", "code id_token", "code token", "code id_token token", "id_token", "id_token token"];

impl ResponseType {
    const ALL: [Self; 6] = [Self::Code, Self::CodeIdToken, Self::CodeToken, Self::CodeIdTokenToken, Self::IdToken, Self::IdTokenToken];

    /// A space-separated `response_type` value: its words in any order (Multiple Response
    /// Type Encoding Practices §5: the order does not matter), each once.
    pub fn parse(value: &str) -> Option<Self> {
        let mut words: Vec<&str> = value.split(' ').collect();
        words.sort_unstable();
        let n = words.len();
        words.dedup();
        if words.len() != n {
            return None;
        }
        Self::ALL.into_iter().find(|t| {
            let mut mine: Vec<&str> = t.as_str().split(' ').collect();
            mine.sort_unstable();
            mine == words
        })
    }

    pub fn as_str(self) -> &'static str {
        RESPONSE_TYPES[self as usize]
    }

    pub fn has_code(self) -> bool {
        matches!(self, Self::Code | Self::CodeIdToken | Self::CodeToken | Self::CodeIdTokenToken)
    }

    pub fn has_id_token(self) -> bool {
        matches!(self, Self::CodeIdToken | Self::CodeIdTokenToken | Self::IdToken | Self::IdTokenToken)
    }

    /// An access token from the authorization endpoint.
    pub fn has_token(self) -> bool {
        matches!(self, Self::CodeToken | Self::CodeIdTokenToken | Self::IdTokenToken)
    }

    /// Whether anything but a code comes back from the authorization endpoint: the response
    /// must then not be in the query (Multiple Response Type Encoding Practices §5), and the
    /// client must have registered the type.
    pub fn returns_tokens(self) -> bool {
        self != Self::Code
    }
}

/// Whether a raw `response_type` (perhaps one we do not support) asks for a token from the
/// authorization endpoint: its errors then go in the fragment, never in the query.
pub fn asks_for_tokens(raw: &str) -> bool {
    raw.split(' ').any(|w| w == "id_token" || w == "token")
}

/// The request's `response_type` (raw), if `client` may use it in `mode`.
pub fn check(app: &Issuer, client: &Client, raw: Option<&str>, mode: ResponseMode) -> Result<ResponseType, OAuthError> {
    let raw = raw.ok_or_else(|| OAuthError::invalid_request("missing parameter: response_type"))?;
    let unsupported = |why: String| OAuthError::invalid_request(why).code_as("unsupported_response_type");
    let t = ResponseType::parse(raw)
        .ok_or_else(|| unsupported(format!("unsupported response_type {raw:?}; supported: {}", RESPONSE_TYPES.join(", "))))?;
    if t.has_code() && !client.allows_grant("authorization_code") {
        return Err(OAuthError::unauthorized_client("this client may not use the authorization code flow"));
    }
    if !t.returns_tokens() {
        return Ok(t);
    }
    // FAPI 2.0 SP §5.3.2.2: only `code` (and under fapi-ciba, whose code flow is fapi2's).
    let profile = app.profile().for_client(client);
    if profile.is_fapi() {
        return Err(unsupported(format!("response_type {raw:?} is not allowed under {}: use code", profile.title())));
    }
    if !client.meta.response_types.iter().any(|r| ResponseType::parse(r) == Some(t)) {
        return Err(OAuthError::unauthorized_client(format!("this client did not register response_type {:?}", t.as_str())));
    }
    // Multiple Response Type Encoding Practices §5: tokens never in the query (logs, Referer).
    // JARM §2.3.1 allows `query.jwt` with them only if the JWT is encrypted, which is not
    // offered yet (`jarm::seal`): refused as well.
    if mode.in_query() {
        return Err(OAuthError::invalid_request(format!("response_mode={} cannot be used with response_type={}", mode.as_str(), t.as_str())));
    }
    // A token from the authorization endpoint has no DPoP proof to be bound to.
    if t.has_token() && app.profile().requires_dpop(client) {
        return Err(OAuthError::unauthorized_client("this client's access tokens must be DPoP-bound, so none can come from the authorization endpoint"));
    }
    Ok(t)
}

/// Why a client's registered `response_types` and `grant_types` cannot be used together, if
/// they cannot. RFC 7591 §2.1: a type with `code` needs `authorization_code`, one with
/// `id_token` or `token` needs `implicit`. A registered `code` is not checked (every client
/// had it by default before the other types existed).
pub fn registration_refusal(response_types: &[String], grant_types: &[String]) -> Option<String> {
    let has_grant = |g: &str| grant_types.iter().any(|x| x == g);
    for r in response_types {
        let Some(t) = ResponseType::parse(r) else {
            return Some(format!("unsupported response_type {r:?}; supported: {}", RESPONSE_TYPES.join(", ")));
        };
        if !t.returns_tokens() {
            continue;
        }
        if t.has_code() && !has_grant("authorization_code") {
            return Some(format!("response_type {r:?} needs the authorization_code grant type"));
        }
        if !has_grant(IMPLICIT_GRANT) {
            return Some(format!("response_type {r:?} needs the implicit grant type"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_in_any_order_once_each() {
        assert_eq!(ResponseType::parse("token id_token code"), Some(ResponseType::CodeIdTokenToken));
        assert_eq!(ResponseType::parse("id_token code"), Some(ResponseType::CodeIdToken));
        assert_eq!(ResponseType::parse("code"), Some(ResponseType::Code));
        assert_eq!(ResponseType::parse("code code"), None);
        assert_eq!(ResponseType::parse("token"), None);
        assert_eq!(ResponseType::parse("code  id_token"), None);
        assert_eq!(ResponseType::parse(""), None);
        for (i, t) in ResponseType::ALL.iter().enumerate() {
            assert_eq!(t.as_str(), RESPONSE_TYPES[i]);
            assert_eq!(ResponseType::parse(t.as_str()), Some(*t));
        }
    }

    #[test]
    fn registration_needs_the_matching_grant_types() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(registration_refusal(&s(&["code"]), &s(&["client_credentials"])).is_none());
        assert!(registration_refusal(&s(&["id_token"]), &s(&["authorization_code"])).is_some());
        assert!(registration_refusal(&s(&["code id_token"]), &s(&["implicit"])).is_some());
        assert!(registration_refusal(&s(&["code id_token", "id_token token"]), &s(&["authorization_code", "implicit"])).is_none());
        assert!(registration_refusal(&s(&["token"]), &s(&["implicit"])).is_some());
    }
}
