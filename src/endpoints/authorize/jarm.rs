//! JWT Secured Authorization Response Mode (JARM, OpenID Foundation final, 2022): the
//! authorization response's parameters (the code, tokens or error, `state`, `session_state`)
//! as claims of one JWT, with `iss` (this tenant), `aud` (the client) and a short `exp`,
//! signed with the tenant's key of the client's `authorization_signed_response_alg`. The
//! client verifies it against `/jwks` before it trusts a value in it: the response cannot be
//! altered, replayed to another client, or mixed up with another issuer's.
//!
//! A client that registered `authorization_encrypted_response_alg` gets the signed JWT
//! encrypted to its key (JARM §2.2: a nested JWT, `cty: JWT`), as its ID tokens would be.
//!
//! Only requests with a `.jwt` response mode come here (`response::to_client`): a client that
//! does not ask for JARM pays nothing for it.

use crate::error::OAuthError;
use crate::registry::Client;
use crate::tokens::encryption::{self, Encryption};
use crate::tenant::Issuer;
use serde_json::{Map, Value};

/// The value of the `response` parameter for `params` (each authorization response
/// parameter, `state` included), addressed to `client_id`.
pub async fn response(app: &Issuer, client_id: &str, params: &[(&str, &str)]) -> Result<String, OAuthError> {
    let client = app.client(client_id);
    let mut claims = Map::with_capacity(params.len() + 3);
    claims.insert("iss".into(), app.issuer().into());
    claims.insert("aud".into(), client_id.into());
    claims.insert("exp".into(), (crate::util::now() + app.config.jarm_response_ttl).into());
    for (k, v) in params {
        claims.insert((*k).into(), (*v).into());
    }
    // JARM defines no `typ`; `JWT` (RFC 7519 §5.1) as for signed userinfo answers.
    let signed = app
        .keys()
        .sign_as(&signing_alg(app, client.as_deref()), "JWT", &Value::Object(claims))
        .map_err(|e| OAuthError::internal("JARM signing", e))?;
    match client.as_deref().and_then(encryption) {
        Some(how) => encryption::encrypt(app, client.as_deref().expect("encryption is a client's"), how, Some("JWT"), signed.as_bytes()).await,
        None => Ok(signed),
    }
}

/// What the client's JARM responses are signed with: its `authorization_signed_response_alg`,
/// else RS256 (JARM §3), or, for a client held to FAPI (which forbids RS256: FAPI 2.0 §5.4,
/// FAPI 1.0 Part 2 §8.6), the server's `token_signing_alg`, as for its ID tokens
/// (`tokens::id_token_alg`).
fn signing_alg(app: &Issuer, client: Option<&Client>) -> String {
    let profile = client.map_or(app.profile(), |c| app.profile().for_client(c));
    match (client.and_then(|c| c.meta.authorization_signed_response_alg.clone()), profile.is_fapi()) {
        (Some(alg), _) => alg,
        (None, true) => app.config.token_signing_alg.clone(),
        (None, false) => crate::keys::ALG_RS256.to_string(),
    }
}

/// What the client's JARM responses are encrypted with, if it asked (JARM §3: `enc`
/// defaults to A128CBC-HS256).
fn encryption(client: &Client) -> Option<Encryption<'_>> {
    let alg = client.meta.authorization_encrypted_response_alg.as_deref()?;
    Some(Encryption { alg, enc: client.meta.authorization_encrypted_response_enc.as_deref().unwrap_or(crate::keys::jwe::DEFAULT_ENC) })
}
