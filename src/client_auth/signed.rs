//! JWTs a client signs — its authentication assertions, its request objects — checked with
//! the client's own keys: an asymmetric algorithm with a key from its `jwks`/`jwks_uri`, an
//! HMAC one with its secret (kept sealed for that purpose: `client_secret_jwt` clients).

use super::Refusal;
use crate::registry::Client;
use crate::tenant::Issuer;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::de::DeserializeOwned;

/// What is expected of the JWT.
pub struct Expect<'a> {
    /// What the JWT is, for messages ("the assertion", "the request object").
    pub what: &'static str,
    /// The algorithms accepted here.
    pub algs: &'a [&'a str],
    /// The one algorithm the client registered for this use, if it did.
    pub pinned: Option<&'a str>,
}

/// Verify `jwt`'s signature with the client's keys, then its claims under `v` (whose
/// algorithm list is set here from the header, once the header's `alg` is found acceptable).
pub async fn verify<T: DeserializeOwned>(app: &Issuer, client: &Client, jwt: &str, expect: &Expect<'_>, mut v: Validation) -> Result<T, Refusal> {
    let what = expect.what;
    let header = jsonwebtoken::decode_header(jwt).map_err(|_| match header_alg(jwt) {
        // An algorithm outside our lists (or `none`): say which, so the client's developer
        // sees it (openid-client, for one, names Ed25519 keys' JWSs "Ed25519", RFC 9864).
        Some(alg) => Refusal::Invalid(format!("{what}: alg {alg:?} is not accepted")),
        None => Refusal::Invalid(format!("{what} is not a JWS")),
    })?;
    let name = alg_name(header.alg);
    if !expect.algs.contains(&name) {
        return Err(Refusal::Invalid(format!("{what}: alg {name} is not accepted here")));
    }
    if let Some(pinned) = expect.pinned.filter(|p| *p != name) {
        return Err(Refusal::Invalid(format!("{what}: this client signs with {pinned}")));
    }
    let keys: Vec<DecodingKey> = if name.starts_with("HS") {
        let secret = client.open_secret(app.vault()).ok_or(Refusal::BadCredentials)?;
        vec![DecodingKey::from_secret(&secret)]
    } else {
        let kid = header.kid.as_deref();
        let keys = app.client_keys.keys_for(app, client, header.alg, kid).await.map_err(Refusal::Invalid)?;
        if keys.is_empty() {
            let kid = kid.map_or_else(|| "no kid".to_string(), |k| format!("kid '{k}'"));
            return Err(Refusal::Invalid(format!("{what}: no key of this client fits (alg {name}, {kid})")));
        }
        keys.into_iter().map(|k| k.key).collect()
    };
    v.algorithms = vec![header.alg];
    for key in &keys {
        use jsonwebtoken::errors::ErrorKind as K;
        match jsonwebtoken::decode::<T>(jwt, key, &v) {
            Ok(data) => return Ok(data.claims),
            Err(e) if matches!(e.kind(), K::InvalidSignature | K::InvalidAlgorithm | K::InvalidKeyFormat) => continue,
            // Claims are checked after the signature: this JWT is the client's, so say what
            // is wrong with it.
            Err(e) => {
                return Err(Refusal::Invalid(match e.kind() {
                    K::ExpiredSignature => format!("{what} has expired"),
                    K::ImmatureSignature => format!("{what} is not valid yet (nbf)"),
                    K::InvalidAudience => format!("{what}'s aud must name this server ({})", app.issuer()),
                    K::InvalidIssuer | K::InvalidSubject => format!("{what}'s iss (and sub) must be the client_id"),
                    K::MissingRequiredClaim(c) => format!("{what} has no {c}"),
                    _ => format!("{what} is malformed"),
                }))
            }
        }
    }
    Err(Refusal::BadCredentials)
}

/// The `alg` of a JWS header we could not read, if there is one to name.
fn header_alg(jwt: &str) -> Option<String> {
    let header = crate::util::b64_decode(jwt.split('.').next()?)?;
    let v: serde_json::Value = serde_json::from_slice(&header).ok()?;
    let alg = v.get("alg")?.as_str()?;
    (alg.len() <= 32).then(|| alg.to_string())
}

/// The JOSE name of an algorithm.
pub fn alg_name(alg: Algorithm) -> &'static str {
    match alg {
        Algorithm::HS256 => "HS256",
        Algorithm::HS384 => "HS384",
        Algorithm::HS512 => "HS512",
        Algorithm::RS256 => "RS256",
        Algorithm::RS384 => "RS384",
        Algorithm::RS512 => "RS512",
        Algorithm::PS256 => "PS256",
        Algorithm::PS384 => "PS384",
        Algorithm::PS512 => "PS512",
        Algorithm::ES256 => "ES256",
        Algorithm::ES384 => "ES384",
        Algorithm::EdDSA => "EdDSA",
        // Newer variants of a non-exhaustive enum: in none of our lists, so never accepted.
        _ => "unsupported",
    }
}
