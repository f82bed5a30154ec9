//! Client authentication (RFC 6749 §2.3, RFC 7521/7523, OpenID Connect Core §9): every method
//! is a module behind `AuthMethod`. A request presents at most one kind of credential; the
//! client it names is looked up, and the method the client is registered with checks it.
//! Used wherever a client authenticates: `/token`, `/revoke`, `/introspect`, `/par`.

pub mod jwt;
pub mod keys;
mod public;
mod secret;
pub mod signed;
pub mod tls;
pub mod x509;

use crate::error::{Challenge, OAuthError};
use crate::http::client_cert::ClientCertificate;
use crate::http::params::Params;
use crate::registry::Client;
use crate::tenant::Issuer;
use async_trait::async_trait;
use axum::http::HeaderMap;
use std::sync::Arc;

/// RFC 7523 §2.2.
pub const ASSERTION_TYPE_JWT: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// Every method, by its `token_endpoint_auth_method` name. A new method is a module and a
/// line here; discovery advertises what is listed.
static METHODS: &[&dyn AuthMethod] =
    &[&secret::Basic, &secret::Post, &jwt::ClientSecretJwt, &jwt::PrivateKeyJwt, &tls::TlsClientAuth, &tls::SelfSignedTlsClientAuth, &public::None];

/// One way for a client to prove who it is.
#[async_trait]
pub trait AuthMethod: Send + Sync {
    /// Its `token_endpoint_auth_method` value.
    fn name(&self) -> &'static str;
    /// Check what the request presented for `client`, which is registered with this method.
    async fn verify(&self, cx: &Context<'_>, client: &Client, presented: &Presented) -> Result<(), Refusal>;
}

/// Where the authentication happens.
pub struct Context<'a> {
    pub app: &'a Issuer,
    /// The path of the endpoint called (`/token`, ...): a client assertion may name its URL
    /// as `aud`.
    pub path: &'a str,
    /// The request's TLS client certificate (RFC 8705), if mTLS is on and it has one.
    pub cert: Option<&'a ClientCertificate>,
}

/// The credentials a request carries: exactly one kind, or none.
pub enum Presented {
    Basic { id: String, secret: String },
    Post { id: String, secret: String },
    /// `client_assertion` with the JWT bearer type; `id` is the client it claims to be.
    Assertion { id: String, jwt: String },
    /// Only a `client_id` (public clients).
    Nothing { id: String },
}

/// Why a method refused.
pub enum Refusal {
    /// The request presented another kind of credential than the client's method.
    WrongMethod,
    /// The right kind, but wrong.
    BadCredentials,
    /// An assertion that is not acceptable, and why (said to the client: it is signed, so
    /// the reasons tell its developer what to fix, not an attacker what to try).
    Invalid(String),
    /// We could not decide (a store or a fetch failed on our side).
    Unavailable(OAuthError),
}

impl Presented {
    /// Read the credentials, refusing requests that present two kinds (RFC 6749 §2.3: "MUST
    /// NOT use more than one authentication method in each request").
    fn read(headers: &HeaderMap, params: &Params) -> Result<Self, OAuthError> {
        let basic = secret::basic_credentials(headers)?;
        let body_id = params.get("client_id");
        let body_secret = params.get("client_secret");
        let assertion = params.get("client_assertion");
        let assertion_type = params.get("client_assertion_type");
        let kinds = basic.is_some() as u8 + body_secret.is_some() as u8 + assertion.is_some() as u8;
        if kinds > 1 {
            return Err(OAuthError::invalid_request("use only one client authentication method"));
        }
        let same_id = |id: &str| {
            if body_id.is_some_and(|b| b != id) {
                return Err(OAuthError::invalid_request("client_id in the body differs from the authenticated client"));
            }
            Ok(())
        };
        if let Some((id, secret)) = basic {
            same_id(&id)?;
            return Ok(Self::Basic { id, secret });
        }
        if let Some(secret) = body_secret {
            let id = body_id.ok_or_else(|| OAuthError::invalid_request("client_secret without client_id"))?;
            return Ok(Self::Post { id: id.to_string(), secret: secret.to_string() });
        }
        match (assertion, assertion_type) {
            (Some(jwt), Some(ASSERTION_TYPE_JWT)) => {
                let id = jwt::claimed_client(jwt)
                    .ok_or_else(|| OAuthError::invalid_client("client_assertion is not a JWT with iss and sub"))?;
                same_id(&id)?;
                Ok(Self::Assertion { id, jwt: jwt.to_string() })
            }
            (Some(_), Some(_)) => Err(OAuthError::invalid_request(format!("client_assertion_type must be {ASSERTION_TYPE_JWT}"))),
            (Some(_), None) => Err(OAuthError::invalid_request("client_assertion without client_assertion_type")),
            (None, Some(_)) => Err(OAuthError::invalid_request("client_assertion_type without client_assertion")),
            (None, None) => {
                let id = body_id.ok_or_else(|| OAuthError::invalid_client("client authentication is required"))?;
                Ok(Self::Nothing { id: id.to_string() })
            }
        }
    }

    fn client_id(&self) -> &str {
        match self {
            Self::Basic { id, .. } | Self::Post { id, .. } | Self::Assertion { id, .. } | Self::Nothing { id } => id,
        }
    }
}

/// The method names, for client validation and discovery.
pub fn method_names() -> Vec<&'static str> {
    METHODS.iter().map(|m| m.name()).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_registrable_method_is_implemented_and_only_those() {
        assert_eq!(super::method_names(), crate::registry::clients::AUTH_METHODS);
    }
}

fn method(name: &str) -> Option<&'static dyn AuthMethod> {
    METHODS.iter().copied().find(|m| m.name() == name)
}

/// Authenticate the client of a request to the endpoint at `path`, which came with `cert`.
pub async fn authenticate(app: &Issuer, headers: &HeaderMap, params: &Params, path: &str, cert: Option<&ClientCertificate>) -> Result<Arc<Client>, OAuthError> {
    let presented = Presented::read(headers, params)?;
    // RFC 6749 §5.2: a client that tried Basic gets a Basic challenge with its 401.
    let refuse = |description: String| {
        let e = OAuthError::invalid_client(description);
        if matches!(presented, Presented::Basic { .. }) { e.with_challenge(Challenge::Basic) } else { e }
    };
    let failed = || refuse("client authentication failed".into());
    let client = match app.resolve_client(presented.client_id()).await {
        Ok(found) => found.ok_or_else(failed)?,
        Err(e) if e.is_transient() => return Err(OAuthError::temporarily_unavailable(e.to_string())),
        Err(e) => return Err(refuse(e.to_string())),
    };
    let method = method(client.auth_method()).ok_or_else(failed)?;
    if !app.profile().allows_auth_method(&client, method.name()) {
        return Err(refuse(format!("this server's security profile (FAPI 2.0) accepts only private_key_jwt or mutual TLS, not {}", method.name())));
    }
    match method.verify(&Context { app, path, cert }, &client, &presented).await {
        Ok(()) => Ok(client),
        Err(Refusal::WrongMethod) if matches!(presented, Presented::Nothing { .. }) => {
            Err(refuse(format!("this client must authenticate ({})", method.name())))
        }
        Err(Refusal::WrongMethod) => Err(refuse(format!("this client authenticates with {}", method.name()))),
        Err(Refusal::BadCredentials) => Err(failed()),
        Err(Refusal::Invalid(why)) => Err(refuse(why)),
        Err(Refusal::Unavailable(e)) => Err(e),
    }
}
