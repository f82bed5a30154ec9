//! Client authentication at the token endpoint (RFC 6749 §2.3): `client_secret_basic`,
//! `client_secret_post`, or `none` for public clients. A client must use the method it is
//! registered with, and exactly one method per request.

use super::params::Params;
use crate::app::App;
use crate::error::{Challenge, OAuthError};
use crate::registry::clients::{AUTH_BASIC, AUTH_NONE, AUTH_POST};
use crate::registry::Client;
use axum::http::{header::AUTHORIZATION, HeaderMap};
use base64::{engine::general_purpose::STANDARD, Engine};
use std::sync::Arc;

pub fn authenticate_client(app: &App, headers: &HeaderMap, params: &Params) -> Result<Arc<Client>, OAuthError> {
    let basic = basic_credentials(headers)?;
    let body_id = params.get("client_id");
    let body_secret = params.get("client_secret");
    let bad_client = |basic: bool| {
        let e = OAuthError::invalid_client("client authentication failed");
        if basic { e.with_challenge(Challenge::Basic) } else { e }
    };

    match (basic, body_secret) {
        (Some(_), Some(_)) => Err(OAuthError::invalid_request("use only one client authentication method")),
        (Some((id, secret)), None) => {
            if body_id.is_some_and(|b| b != id) {
                return Err(OAuthError::invalid_request("client_id in the body differs from the authenticated client"));
            }
            let client = app.registry.client(&id).ok_or_else(|| bad_client(true))?;
            if client.auth_method() != AUTH_BASIC || !client.check_secret(&secret) {
                return Err(bad_client(true));
            }
            Ok(client)
        }
        (None, Some(secret)) => {
            let id = body_id.ok_or_else(|| OAuthError::invalid_request("client_secret without client_id"))?;
            let client = app.registry.client(id).ok_or_else(|| bad_client(false))?;
            if client.auth_method() != AUTH_POST || !client.check_secret(secret) {
                return Err(bad_client(false));
            }
            Ok(client)
        }
        (None, None) => {
            let id = body_id.ok_or_else(|| bad_client(false).with_description("client authentication is required"))?;
            let client = app.registry.client(id).ok_or_else(|| bad_client(false))?;
            if client.auth_method() != AUTH_NONE {
                return Err(bad_client(false).with_description("this client must authenticate"));
            }
            Ok(client)
        }
    }
}

/// `Authorization: Basic base64(urlencode(id):urlencode(secret))` (RFC 6749 §2.3.1).
fn basic_credentials(headers: &HeaderMap) -> Result<Option<(String, String)>, OAuthError> {
    let Some(value) = headers.get(AUTHORIZATION) else { return Ok(None) };
    let value = value.to_str().map_err(|_| OAuthError::invalid_request("malformed Authorization header"))?;
    let Some((scheme, rest)) = value.split_once(' ') else {
        return Err(OAuthError::invalid_request("malformed Authorization header"));
    };
    if !scheme.eq_ignore_ascii_case("basic") {
        return Err(OAuthError::invalid_client("unsupported authentication scheme").with_challenge(Challenge::Basic));
    }
    let malformed = || OAuthError::invalid_client("malformed Basic credentials").with_challenge(Challenge::Basic);
    let decoded = STANDARD.decode(rest.trim()).map_err(|_| malformed())?;
    let decoded = String::from_utf8(decoded).map_err(|_| malformed())?;
    let (id, secret) = decoded.split_once(':').ok_or_else(malformed)?;
    let unescape = |s: &str| {
        url::form_urlencoded::parse(format!("v={s}").as_bytes()).next().map(|(_, v)| v.into_owned()).unwrap_or_default()
    };
    let (id, secret) = (unescape(id), unescape(secret));
    if id.is_empty() {
        return Err(malformed());
    }
    Ok(Some((id, secret)))
}

impl OAuthError {
    pub fn with_description(mut self, d: &'static str) -> Self {
        self.description = d.into();
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(AUTHORIZATION, HeaderValue::from_str(v).unwrap());
        h
    }

    #[test]
    fn basic_credentials_are_form_decoded() {
        // "my%3Aclient:p%40ss+word" → id "my:client", secret "p@ss word"
        let h = headers(&format!("Basic {}", STANDARD.encode("my%3Aclient:p%40ss+word")));
        assert_eq!(basic_credentials(&h).unwrap(), Some(("my:client".into(), "p@ss word".into())));
    }

    #[test]
    fn malformed_basic_is_invalid_client() {
        for v in ["Basic !!!", "Basic", &format!("Basic {}", STANDARD.encode("nocolon"))] {
            assert!(basic_credentials(&headers(v)).is_err(), "{v}");
        }
        assert!(basic_credentials(&HeaderMap::new()).unwrap().is_none());
    }
}
