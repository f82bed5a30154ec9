//! Request parameters, parsed strictly: RFC 6749 §3.1 and §3.2 say a parameter must not be
//! repeated and that a parameter sent without a value is treated as omitted.

use crate::error::OAuthError;
use axum::extract::{FromRequest, Request};
use axum::http::header::CONTENT_TYPE;
use std::collections::HashMap;

/// Longest value we accept for any single parameter.
const MAX_VALUE_LEN: usize = 8 * 1024;

#[derive(Debug, Default, Clone)]
pub struct Params(HashMap<String, String>);

impl Params {
    pub fn parse(input: &[u8]) -> Result<Self, OAuthError> {
        let mut map = HashMap::new();
        for (k, v) in url::form_urlencoded::parse(input) {
            if v.is_empty() {
                continue;
            }
            if v.len() > MAX_VALUE_LEN {
                return Err(OAuthError::invalid_request(format!("parameter {k} is too long")));
            }
            if map.insert(k.to_string(), v.into_owned()).is_some() {
                return Err(OAuthError::invalid_request(format!("parameter {k} is repeated")));
            }
        }
        Ok(Self(map))
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    pub fn require(&self, key: &str) -> Result<&str, OAuthError> {
        self.get(key).ok_or_else(|| OAuthError::invalid_request(format!("missing parameter: {key}")))
    }

    pub fn contains(&self, key: &str) -> bool {
        self.0.contains_key(key)
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
        let body = axum::body::Bytes::from_request(req, state).await.map_err(|e| {
            OAuthError::invalid_request(format!("cannot read the request body: {}", e.body_text()))
                .with_status(e.status())
        })?;
        Params::parse(&body).map(FormParams)
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
    fn repeated_parameters_are_refused() {
        let e = Params::parse(b"grant_type=a&grant_type=b").unwrap_err();
        assert_eq!(e.code, "invalid_request");
        assert!(e.description.contains("grant_type"));
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
