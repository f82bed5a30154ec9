//! The JWT methods (RFC 7523 §2.2 and §3, OpenID Connect Core §9): `private_key_jwt`, signed
//! with a key from the client's `jwks`/`jwks_uri`, and `client_secret_jwt`, MACed with its
//! secret. Both check, after the signature: `iss` = `sub` = the client; `aud` naming us (the
//! issuer, as RFC 7523bis asks, or the token endpoint's URL, as OIDC Core says, or the URL of
//! the endpoint called); `exp` present, not past, and no further ahead than
//! `client_assertion_max_lifetime`; `nbf` and `iat` not in the future; and a `jti` not seen
//! before from this client while the assertion lives (on every node: the ChallengeStore).

use super::keys::{ASYMMETRIC_ALGS, HMAC_ALGS};
use super::{AuthMethod, Context, Presented, Refusal};
use crate::error::OAuthError;
use crate::registry::clients::{AUTH_PRIVATE_KEY_JWT, AUTH_SECRET_JWT};
use crate::registry::Client;
use crate::util::now;
use async_trait::async_trait;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;

/// Clock skew tolerated on `exp`, `nbf` and `iat`, in seconds.
pub const LEEWAY: u64 = 30;

pub struct PrivateKeyJwt;
pub struct ClientSecretJwt;

#[async_trait]
impl AuthMethod for PrivateKeyJwt {
    fn name(&self) -> &'static str {
        AUTH_PRIVATE_KEY_JWT
    }

    async fn verify(&self, cx: &Context<'_>, client: &Client, presented: &Presented) -> Result<(), Refusal> {
        let Presented::Assertion { jwt, .. } = presented else { return Err(Refusal::WrongMethod) };
        let (alg, kid) = header(client, jwt, ASYMMETRIC_ALGS)?;
        let keys = cx.app.client_keys.keys_for(cx.app, client, alg, kid.as_deref()).await.map_err(Refusal::Invalid)?;
        if keys.is_empty() {
            return Err(Refusal::Invalid(format!("no key of this client fits the assertion (alg {alg:?}, kid {kid:?})")));
        }
        let keys: Vec<DecodingKey> = keys.into_iter().map(|k| k.key).collect();
        check(cx, client, jwt, alg, &keys).await
    }
}

#[async_trait]
impl AuthMethod for ClientSecretJwt {
    fn name(&self) -> &'static str {
        AUTH_SECRET_JWT
    }

    async fn verify(&self, cx: &Context<'_>, client: &Client, presented: &Presented) -> Result<(), Refusal> {
        let Presented::Assertion { jwt, .. } = presented else { return Err(Refusal::WrongMethod) };
        let (alg, _) = header(client, jwt, HMAC_ALGS)?;
        let secret = client.open_secret(cx.app.keys.vault()).ok_or(Refusal::BadCredentials)?;
        check(cx, client, jwt, alg, &[DecodingKey::from_secret(&secret)]).await
    }
}

/// The `iss` and `sub` an assertion claims, read without trusting them: they only say which
/// client's keys to check it with. `None` unless both are present and equal.
pub fn claimed_client(jwt: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Claimed {
        iss: String,
        sub: String,
    }
    let c: Claimed = jsonwebtoken::dangerous::insecure_decode_claims(jwt).ok()?;
    (c.iss == c.sub).then_some(c.sub)
}

/// The header's algorithm, if it is one of `allowed` and the client's registered one (if it
/// registered one), and its `kid`.
fn header(client: &Client, jwt: &str, allowed: &[&str]) -> Result<(Algorithm, Option<String>), Refusal> {
    let h = jsonwebtoken::decode_header(jwt).map_err(|_| match header_alg(jwt) {
        // An algorithm outside our lists (or `none`): say which, so the client's developer
        // sees it (openid-client, for one, names Ed25519 keys' JWSs "Ed25519", RFC 9864).
        Some(alg) => Refusal::Invalid(format!("alg {alg:?} is not accepted; see token_endpoint_auth_signing_alg_values_supported")),
        None => Refusal::Invalid("client_assertion is not a JWS".into()),
    })?;
    let name = alg_name(h.alg);
    if !allowed.contains(&name) {
        return Err(Refusal::Invalid(format!("alg {name} is not accepted for {}", client.auth_method())));
    }
    if client.meta.token_endpoint_auth_signing_alg.as_deref().is_some_and(|a| a != name) {
        return Err(Refusal::Invalid(format!("this client signs its assertions with {}", client.meta.token_endpoint_auth_signing_alg.as_deref().unwrap_or_default())));
    }
    Ok((h.alg, h.kid))
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
        // Newer variants of a non-exhaustive enum: not in our lists, so never accepted.
        _ => "unsupported",
    }
}

#[derive(Deserialize)]
struct AssertionClaims {
    exp: u64,
    jti: Option<String>,
    iat: Option<u64>,
}

/// Verify the signature with any of `keys`, then the claims, then spend the `jti`.
async fn check(cx: &Context<'_>, client: &Client, jwt: &str, alg: Algorithm, keys: &[DecodingKey]) -> Result<(), Refusal> {
    let app = cx.app;
    let mut v = Validation::new(alg);
    v.leeway = LEEWAY;
    v.validate_nbf = true;
    v.set_required_spec_claims(&["exp", "iss", "sub", "aud"]);
    v.set_issuer(&[client.id()]);
    v.sub = Some(client.id().to_string());
    v.set_audience(&[app.issuer().to_string(), app.endpoint("/token"), app.endpoint(cx.path)]);
    let mut outcome = Err(Refusal::BadCredentials);
    for key in keys {
        match jsonwebtoken::decode::<AssertionClaims>(jwt, key, &v) {
            Ok(data) => {
                outcome = Ok(data.claims);
                break;
            }
            Err(e) => {
                use jsonwebtoken::errors::ErrorKind as K;
                let why = match e.kind() {
                    K::InvalidSignature | K::InvalidAlgorithm | K::InvalidKeyFormat => continue,
                    K::ExpiredSignature => "the assertion has expired".to_string(),
                    K::ImmatureSignature => "the assertion is not valid yet (nbf)".to_string(),
                    K::InvalidAudience => format!("the assertion's aud must name this server ({})", app.issuer()),
                    K::InvalidIssuer | K::InvalidSubject => "the assertion's iss and sub must be the client_id".to_string(),
                    K::MissingRequiredClaim(c) => format!("the assertion has no {c}"),
                    _ => "the assertion is malformed".to_string(),
                };
                // The signature was good (claims are checked after it): say what is wrong.
                outcome = Err(Refusal::Invalid(why));
                break;
            }
        }
    }
    let claims = outcome?;
    let t = now();
    let max = app.config.client_assertion_max_lifetime;
    if claims.exp > t + max + LEEWAY {
        return Err(Refusal::Invalid(format!("the assertion must expire within {max} seconds")));
    }
    if claims.iat.is_some_and(|iat| iat > t + LEEWAY) {
        return Err(Refusal::Invalid("the assertion was issued in the future (iat)".into()));
    }
    // OIDC Core §9 makes jti required; RFC 7523 §3 lets the server insist.
    let jti = claims.jti.filter(|j| !j.is_empty()).ok_or_else(|| Refusal::Invalid("the assertion has no jti".into()))?;
    let key = format!("client-assertion\u{1f}{}\u{1f}{jti}", client.id());
    match app.stores.challenges.first_use(&key, claims.exp + LEEWAY).await {
        Ok(true) => Ok(()),
        Ok(false) => Err(Refusal::Invalid("this assertion was already used (jti)".into())),
        Err(e) => Err(Refusal::Unavailable(OAuthError::internal("challenge store", e))),
    }
}
