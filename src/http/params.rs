//! Request parameters, parsed strictly: RFC 6749 §3.1 and §3.2 say a parameter must not be
//! repeated and that a parameter sent without a value is treated as omitted.

use crate::error::OAuthError;
use axum::extract::{FromRequest, Request};
use axum::http::header::CONTENT_TYPE;
use axum::http::StatusCode;
use std::collections::HashMap;

/// Longest value we accept for any single parameter.
const MAX_VALUE_LEN: usize = 8 * 1024;
/// Except a `request_uri`: ours carries a whole pushed request, sealed
/// (`endpoints::authorize::pushed`), which is longer than any one of its parameters.
pub const MAX_REQUEST_URI_LEN: usize = 64 * 1024;

/// The parameters that may be repeated: RFC 8693 §2.1 and RFC 8707 §2.
const MULTI_VALUED: &[&str] = &["audience", "resource"];
/// How many values a repeatable parameter may carry.
const MAX_VALUES: usize = 32;

#[derive(Debug, Default, Clone)]
pub struct Params(HashMap<String, Vec<String>>);

impl Params {
    pub fn parse(input: &[u8]) -> Result<Self, OAuthError> {
        let mut map: HashMap<String, Vec<String>> = HashMap::new();
        for (k, v) in url::form_urlencoded::parse(input) {
            if v.is_empty() {
                continue;
            }
            if v.len() > MAX_VALUE_LEN && (k != "request_uri" || v.len() > MAX_REQUEST_URI_LEN) {
                return Err(OAuthError::invalid_request(format!("parameter {k} is too long")));
            }
            let values = map.entry(k.to_string()).or_default();
            if !values.is_empty() && !MULTI_VALUED.contains(&k.as_ref()) {
                return Err(OAuthError::invalid_request(format!("parameter {k} is repeated")));
            }
            if values.len() >= MAX_VALUES {
                return Err(OAuthError::invalid_request(format!("too many {k} values")));
            }
            values.push(v.into_owned());
        }
        Ok(Self(map))
    }

    /// The value of a single-valued parameter (the first, for a repeatable one).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.first()).map(String::as_str)
    }

    /// Every value of a repeatable parameter.
    pub fn get_all(&self, key: &str) -> &[String] {
        self.0.get(key).map(Vec::as_slice).unwrap_or(&[])
    }

    pub fn require(&self, key: &str) -> Result<&str, OAuthError> {
        self.get(key).ok_or_else(|| OAuthError::invalid_request(format!("missing parameter: {key}")))
    }

    /// Set a single-valued parameter, replacing what the request sent.
    pub fn set(&mut self, key: &str, value: &str) {
        self.0.insert(key.to_string(), vec![value.to_string()]);
    }

    pub fn remove(&mut self, key: &str) {
        self.0.remove(key);
    }

    pub fn contains(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    /// The length of these parameters form-encoded (`k=v&…`), leaving out `skip`: how long
    /// the request would be as a query string, for the same bound whichever way it came.
    pub fn encoded_len_without(&self, skip: &[&str]) -> usize {
        let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).map(str::len).sum::<usize>();
        let pairs = self.0.iter().filter(|(k, _)| !skip.contains(&k.as_str())).flat_map(|(k, vs)| vs.iter().map(move |v| (k, v)));
        pairs.map(|(k, v)| enc(k) + enc(v) + 2).sum::<usize>().saturating_sub(1)
    }
}

/// The body of a form post (`application/x-www-form-urlencoded`), strictly parsed.
pub struct FormParams(pub Params);

impl<S: Send + Sync> FromRequest<S> for FormParams {
    type Rejection = OAuthError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        if !is_form(req.headers()) {
            return Err(OAuthError::invalid_request("the body must be application/x-www-form-urlencoded"));
        }
        let Body(body) = Body::from_request(req, state).await?;
        Params::parse(&body).map(FormParams)
    }
}

/// The raw request body, within `max_body_bytes`. Use it instead of `Bytes`, whose rejection
/// is a plain-text 413 or 400: this one is an `OAuthError` with the same status, so the
/// handler can answer it like any other error (with its `WWW-Authenticate` challenge, say).
pub struct Body(pub axum::body::Bytes);

impl<S: Send + Sync> FromRequest<S> for Body {
    type Rejection = OAuthError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        axum::body::Bytes::from_request(req, state).await.map(Body).map_err(|rejection| {
            let status = rejection.status();
            let error = match status {
                StatusCode::PAYLOAD_TOO_LARGE => OAuthError::invalid_request("the request body is too large"),
                _ => OAuthError::invalid_request(format!("cannot read the request body: {}", rejection.body_text())),
            };
            error.with_status(status)
        })
    }
}

pub fn is_form(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/x-www-form-urlencoded"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_length_is_the_query_strings() {
        let p = Params::parse(b"a=b%20c&d=%C3%A9&secret=xyz").unwrap();
        assert_eq!(p.encoded_len_without(&["secret"]), "a=b+c&d=%C3%A9".len());
        assert_eq!(p.encoded_len_without(&[]), "a=b+c&d=%C3%A9&secret=xyz".len());
        assert_eq!(Params::default().encoded_len_without(&[]), 0);
    }

    #[test]
    fn repeated_parameters_are_refused() {
        let e = Params::parse(b"grant_type=a&grant_type=b").unwrap_err();
        assert_eq!(e.code, "invalid_request");
        assert!(e.description.contains("grant_type"));
    }

    #[test]
    fn audience_and_resource_may_repeat() {
        let p = Params::parse(b"audience=a&audience=b&resource=https%3A%2F%2Fx.example%2F").unwrap();
        assert_eq!(p.get_all("audience"), ["a", "b"]);
        assert_eq!(p.get_all("resource"), ["https://x.example/"]);
        assert!(p.get_all("scope").is_empty());
    }

    #[test]
    fn empty_values_count_as_absent() {
        let p = Params::parse(b"scope=&code=x&scope=openid").unwrap();
        assert_eq!(p.get("scope"), Some("openid"));
        assert_eq!(p.get("code"), Some("x"));
        assert!(p.require("state").is_err());
    }

    #[test]
    fn values_are_percent_decoded() {
        let p = Params::parse(b"redirect_uri=https%3A%2F%2Frp.example%2Fcb%3Fa%3D1&scope=openid+email").unwrap();
        assert_eq!(p.get("redirect_uri"), Some("https://rp.example/cb?a=1"));
        assert_eq!(p.get("scope"), Some("openid email"));
    }
}
