//! Grant types: one module per grant, each a `GrantHandler` behind the token endpoint.
//! Adding a grant = one module + one line in `GrantRegistry::standard` + its name in
//! `GRANT_TYPES` (which client registration and discovery advertise).

pub mod authorization_code;

use crate::app::App;
use crate::error::OAuthResult;
use crate::http::params::Params;
use crate::registry::Client;
use async_trait::async_trait;
use serde::Serialize;
use std::collections::HashMap;

/// Every grant type this build implements.
pub const GRANT_TYPES: &[&str] = &["authorization_code"];

/// RFC 6749 §5.1 (and OpenID Connect Core §3.1.3.3) successful token response.
#[derive(Debug, Serialize)]
pub struct TokenResponse {
    pub access_token: String,
    pub token_type: &'static str,
    pub expires_in: u64,
    pub scope: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id_token: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
}

#[async_trait]
pub trait GrantHandler: Send + Sync {
    fn grant_type(&self) -> &'static str;
    /// Exchange the grant in `params` for tokens. The client is already authenticated and
    /// allowed to use this grant type.
    async fn exchange(&self, app: &App, client: &Client, params: &Params) -> OAuthResult<TokenResponse>;
}

pub struct GrantRegistry {
    handlers: HashMap<&'static str, Box<dyn GrantHandler>>,
}

impl GrantRegistry {
    pub fn standard() -> Self {
        let list: Vec<Box<dyn GrantHandler>> = vec![Box::new(authorization_code::AuthorizationCodeGrant)];
        Self { handlers: list.into_iter().map(|h| (h.grant_type(), h)).collect() }
    }

    pub fn get(&self, grant_type: &str) -> Option<&dyn GrantHandler> {
        self.handlers.get(grant_type).map(|b| b.as_ref())
    }

    pub fn names(&self) -> Vec<&'static str> {
        let mut v: Vec<_> = self.handlers.keys().copied().collect();
        v.sort();
        v
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn advertised_grant_types_are_exactly_the_implemented_ones() {
        let mut advertised = super::GRANT_TYPES.to_vec();
        advertised.sort();
        assert_eq!(super::GrantRegistry::standard().names(), advertised);
    }
}
