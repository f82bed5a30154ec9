//! The JWT methods (RFC 7523 §2.2 and §3, OpenID Connect Core §9): `private_key_jwt`, signed
//! with a key from the client's `jwks`/`jwks_uri`, and `client_secret_jwt`, MACed with its
//! secret. Both check, after the signature: `iss` = `sub` = the client; `aud` naming us (the
//! issuer, as RFC 7523bis asks, or the token endpoint's URL, as OIDC Core says, or the URL of
//! the endpoint called); `exp` present, not past, and no further ahead than
//! `client_assertion_max_lifetime`; `nbf` and `iat` not in the future; and a `jti` not seen
//! before from this client while the assertion lives (on every node: the ChallengeStore).

use super::keys::{ASYMMETRIC_ALGS, HMAC_ALGS};
use super::signed::{self, Expect};
use super::{AuthMethod, Context, Presented, Refusal};
use crate::error::OAuthError;
use crate::registry::clients::{AUTH_PRIVATE_KEY_JWT, AUTH_SECRET_JWT};
use crate::registry::Client;
use crate::util::now;
use async_trait::async_trait;
use jsonwebtoken::{Algorithm, Validation};
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
        check(cx, client, jwt, ASYMMETRIC_ALGS).await
    }
}

#[async_trait]
impl AuthMethod for ClientSecretJwt {
    fn name(&self) -> &'static str {
        AUTH_SECRET_JWT
    }

    async fn verify(&self, cx: &Context<'_>, client: &Client, presented: &Presented) -> Result<(), Refusal> {
        let Presented::Assertion { jwt, .. } = presented else { return Err(Refusal::WrongMethod) };
        check(cx, client, jwt, HMAC_ALGS).await
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

#[derive(Deserialize)]
struct AssertionClaims {
    exp: u64,
    /// Checked by the library against the accepted values; kept to see its shape.
    #[serde(default)]
    aud: serde_json::Value,
    jti: Option<String>,
    iat: Option<u64>,
}

/// Verify the signature with the client's keys (`algs`), then the claims, then spend the `jti`.
async fn check(cx: &Context<'_>, client: &Client, jwt: &str, algs: &[&str]) -> Result<(), Refusal> {
    let app = cx.app;
    let mut v = Validation::new(Algorithm::RS256); // the algorithm is set from the header
    v.leeway = LEEWAY;
    v.validate_nbf = true;
    v.set_required_spec_claims(&["exp", "iss", "sub", "aud"]);
    v.set_issuer(&[client.id()]);
    v.sub = Some(client.id().to_string());
    match app.profile().strict_assertion_audience(client) {
        // FAPI 2.0 §5.3.2.1 item 8: the issuer identifier, as a string (checked below).
        true => v.set_audience(&[app.issuer()]),
        // RFC 7523 §3, OIDC Core §9, RFC 9126 §2: the issuer, the token endpoint, or the
        // endpoint the assertion was sent to. FAPI-CIBA too: FAPI 1.0 sets no rule of its own,
        // and CIBA Core §7.1 asks for the issuer, the token endpoint or the backchannel
        // authentication endpoint (where its assertions are sent).
        false => v.set_audience(&[app.issuer().to_string(), app.endpoint("/token"), app.endpoint(cx.path)]),
    }
    // FAPI 2.0 §5.4: only PS256, ES256 and EdDSA under that profile; FAPI 1.0 Part 2 §8.6
    // (FAPI-CIBA): PS256 and ES256.
    let profile = app.profile().for_client(client);
    let allowed: Vec<&str> = algs.iter().copied().filter(|a| profile.allows_alg(a)).collect();
    let expect = Expect { what: "the assertion", algs: &allowed, pinned: client.meta.token_endpoint_auth_signing_alg.as_deref() };
    let claims: AssertionClaims = signed::verify(app, client, jwt, &expect, v).await?;
    if app.profile().strict_assertion_audience(client) && !claims.aud.is_string() {
        return Err(Refusal::Invalid("the assertion's aud must be the issuer identifier as a string, not an array (FAPI 2.0)".into()));
    }
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
    match app.stores.challenges.first_use(app.tenant.id, &key, claims.exp + LEEWAY).await {
        Ok(true) => Ok(()),
        Ok(false) => Err(Refusal::Invalid("this assertion was already used (jti)".into())),
        Err(e) => Err(Refusal::Unavailable(OAuthError::internal("challenge store", e))),
    }
}
