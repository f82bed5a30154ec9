//! Responses encrypted to a client (OpenID Connect Core §10.2, Dynamic Registration §2, RFC
//! 9701 §6): ID tokens, userinfo answers and JWT introspection answers, signed first and
//! then encrypted (a nested JWT, `cty: JWT`), to a key of the client's `jwks` or `jwks_uri`
//! that suits its registered `alg`.
//!
//! A client that registered no encryption pays one field check where it would be encrypted.

use crate::error::OAuthError;
use crate::keys::jwe;
use crate::registry::Client;
use crate::tenant::Issuer;

/// The `alg` and `enc` a client registered for one kind of response.
#[derive(Debug, Clone, Copy)]
pub struct Encryption<'a> {
    pub alg: &'a str,
    pub enc: &'a str,
}

/// What `client`'s ID tokens are encrypted with, if they are.
pub fn for_id_tokens(client: &Client) -> Option<Encryption<'_>> {
    let alg = client.meta.id_token_encrypted_response_alg.as_deref()?;
    Some(Encryption { alg, enc: client.meta.id_token_encrypted_response_enc.as_deref().unwrap_or(jwe::DEFAULT_ENC) })
}

/// What `client`'s userinfo answers are encrypted with, if they are.
pub fn for_userinfo(client: &Client) -> Option<Encryption<'_>> {
    let alg = client.meta.userinfo_encrypted_response_alg.as_deref()?;
    Some(Encryption { alg, enc: client.meta.userinfo_encrypted_response_enc.as_deref().unwrap_or(jwe::DEFAULT_ENC) })
}

/// What `client`'s JWT introspection answers are encrypted with, if they are (RFC 9701 §6).
pub fn for_introspection(client: &Client) -> Option<Encryption<'_>> {
    let alg = client.meta.introspection_encrypted_response_alg.as_deref()?;
    Some(Encryption { alg, enc: client.meta.introspection_encrypted_response_enc.as_deref().unwrap_or(jwe::DEFAULT_ENC) })
}

/// The client's registration cannot be honoured (no key for its `alg`, its `jwks_uri`
/// unreadable): the client's to fix, said as node-oidc-provider and the registration
/// endpoint say it, never a 500.
fn unusable(description: String) -> OAuthError {
    OAuthError::invalid_request(description).code_as("invalid_client_metadata")
}

/// `payload` (a signed JWT when `cty` is `JWT`, else the claims' JSON) encrypted to `client`.
pub async fn encrypt(app: &Issuer, client: &Client, how: Encryption<'_>, cty: Option<&str>, payload: &[u8]) -> Result<String, OAuthError> {
    let keys = app
        .client_keys
        .encryption_keys_for(app, client, how.alg)
        .await
        .map_err(|e| unusable(format!("cannot encrypt to this client ({}): {e}", how.alg)))?;
    let Some(key) = keys.first() else {
        return Err(unusable(format!(
            "the client's keys hold none that {} can encrypt to (use \"enc\" or none, and the key type the alg needs)",
            how.alg
        )));
    };
    jwe::encrypt(key, how.alg, how.enc, cty, payload).map_err(|e| match e {
        jwe::JweError::Crypto => OAuthError::internal("encryption", e),
        e => unusable(format!("cannot encrypt to the client's key: {e}")),
    })
}

/// An ID token as `client` receives it: `signed`, or `signed` encrypted if the client asked.
pub async fn id_token(app: &Issuer, client: &Client, signed: String) -> Result<String, OAuthError> {
    match for_id_tokens(client) {
        None => Ok(signed),
        Some(how) => encrypt(app, client, how, Some("JWT"), signed.as_bytes()).await,
    }
}
