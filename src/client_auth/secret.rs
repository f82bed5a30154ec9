//! The shared-secret methods: `client_secret_basic` and `client_secret_post` (RFC 6749
//! §2.3.1), and the reading of Basic credentials.

use super::{AuthMethod, Context, Presented, Refusal};
use crate::error::{Challenge, OAuthError};
use crate::registry::clients::{AUTH_BASIC, AUTH_POST};
use crate::registry::Client;
use async_trait::async_trait;
use axum::http::{header::AUTHORIZATION, HeaderMap};
use crate::util::percent_decode;
use base64::{engine::general_purpose::STANDARD, Engine};

/// `client_secret_basic` (RFC 6749 §2.3.1): the secret in an `Authorization: Basic` header.
pub struct Basic;

/// `client_secret_post`: the secret as a body parameter.
pub struct Post;

#[async_trait]
impl AuthMethod for Basic {
    fn name(&self) -> &'static str {
        AUTH_BASIC
    }

    async fn verify(&self, _: &Context<'_>, client: &Client, presented: &Presented) -> Result<(), Refusal> {
        match presented {
            Presented::Basic { secret, .. } if client.check_secret(secret) => Ok(()),
            Presented::Basic { .. } => Err(Refusal::BadCredentials),
            _ => Err(Refusal::WrongMethod),
        }
    }
}

#[async_trait]
impl AuthMethod for Post {
    fn name(&self) -> &'static str {
        AUTH_POST
    }

    async fn verify(&self, _: &Context<'_>, client: &Client, presented: &Presented) -> Result<(), Refusal> {
        match presented {
            Presented::Post { secret, .. } if client.check_secret(secret) => Ok(()),
            Presented::Post { .. } => Err(Refusal::BadCredentials),
            _ => Err(Refusal::WrongMethod),
        }
    }
}

/// `Authorization: Basic base64(urlencode(id):urlencode(secret))` (RFC 6749 §2.3.1): split the
/// decoded value at the first ':' and percent-decode each half, nothing more. Parsing it as a
/// form would end the secret at a '&' (so `secret&anything` would pass as `secret`) and read
/// `=` and `+` as syntax. A '+' stays a '+': no client id or secret of ours holds a space, and
/// clients that skip the encoding (most do) mean a literal '+'.
pub(super) fn basic_credentials(headers: &HeaderMap) -> Result<Option<(String, String)>, OAuthError> {
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
    let (id, secret) = (percent_decode(id).ok_or_else(malformed)?, percent_decode(secret).ok_or_else(malformed)?);
    if id.is_empty() {
        return Err(malformed());
    }
    Ok(Some((id, secret)))
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

    fn basic(raw: &str) -> Result<Option<(String, String)>, OAuthError> {
        basic_credentials(&headers(&format!("Basic {}", STANDARD.encode(raw))))
    }

    fn pair(id: &str, secret: &str) -> Option<(String, String)> {
        Some((id.into(), secret.into()))
    }

    #[test]
    fn basic_credentials_are_percent_decoded() {
        assert_eq!(basic("my%3Aclient:p%40ss%20word").unwrap(), pair("my:client", "p@ss word"));
        // Multi-byte UTF-8 survives the round trip.
        assert_eq!(basic("caf%C3%A9:s").unwrap(), pair("café", "s"));
    }

    #[test]
    fn basic_credentials_are_not_a_form() {
        // A form parser would stop the secret at '&' and read '+' as a space.
        assert_eq!(basic("rp:secret&anything").unwrap(), pair("rp", "secret&anything"));
        assert_eq!(basic("rp&x=1:a=b+c").unwrap(), pair("rp&x=1", "a=b+c"));
        // Only the first ':' separates; the secret may hold more.
        assert_eq!(basic("rp:a:b").unwrap(), pair("rp", "a:b"));
        assert_eq!(basic("rp:").unwrap(), pair("rp", ""));
    }

    #[test]
    fn bad_percent_encoding_is_invalid_client_not_a_panic() {
        for raw in ["rp:%", "rp:%4", "rp:%zz", "%g0:x", "rp:%FF", "rp:%C3", "rp:abc%"] {
            let e = basic(raw).unwrap_err();
            assert_eq!((e.code, e.status.as_u16()), ("invalid_client", 401), "{raw}");
            assert_eq!(e.challenge, Some(Challenge::Basic), "{raw}");
        }
    }

    #[test]
    fn malformed_basic_is_invalid_client() {
        for v in ["Basic !!!", "Basic", &format!("Basic {}", STANDARD.encode("nocolon")), &format!("Basic {}", STANDARD.encode(":x"))] {
            assert!(basic_credentials(&headers(v)).is_err(), "{v}");
        }
        // Not UTF-8 once base64-decoded.
        assert!(basic_credentials(&headers(&format!("Basic {}", STANDARD.encode([0xff, b':', b'x'])))).is_err());
        assert!(basic_credentials(&HeaderMap::new()).unwrap().is_none());
    }
}
