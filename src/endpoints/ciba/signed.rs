//! Signed authentication requests (CIBA Core §7.1.1): the request's parameters as the claims
//! of a JWT in the `request` parameter, signed by the client with an asymmetric key of its
//! `jwks`/`jwks_uri` (the signature checked as a request object's, `client_auth::signed`),
//! with `aud` = the issuer, `iss` = the client, and `exp`, `iat`, `nbf` and `jti` present. The
//! `jti` is spent here (on every node: the ChallengeStore), so a captured request cannot be
//! replayed while it lives; FAPI-CIBA §5.2.2 bounds that life to an hour after `nbf`.
//!
//! Once verified, the JWT's claims are the request (read as a request object's are,
//! `authorize::request_object_params`); the form's other parameters only authenticate the
//! client. A client that registered `backchannel_authentication_request_signing_alg` must
//! sign, with that algorithm, and so must every client held to the `fapi2` or `fapi-ciba`
//! profile (FAPI-CIBA §5.2.2, `Profile::requires_signed_ciba_requests`).

use crate::client_auth::jwt::LEEWAY;
use crate::client_auth::keys::ASYMMETRIC_ALGS;
use crate::client_auth::signed::{self, Expect};
use crate::client_auth::Refusal;
use crate::error::OAuthError;
use crate::http::params::Params;
use crate::registry::Client;
use crate::tenant::Issuer;
use crate::util::now;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};

/// The longest a signed request may live, from `nbf` to `exp` (FAPI-CIBA §5.2.2: 60 minutes).
const MAX_LIFETIME: u64 = 3600;

/// The algorithms a signed request may use: asymmetric ones only (CIBA Core §7.1.1), those
/// the tenant's profile allows (`backchannel_authentication_request_signing_alg_values_supported`).
pub fn algorithms(app: &Issuer) -> Vec<&'static str> {
    algorithms_for(app, None)
}

fn algorithms_for(app: &Issuer, client: Option<&Client>) -> Vec<&'static str> {
    let profile = match client {
        Some(c) => app.profile().for_client(c),
        None => app.profile(),
    };
    ASYMMETRIC_ALGS.iter().copied().filter(|a| profile.allows_alg(a)).collect()
}

/// The request `params` stand for: the claims of its signed `request` when there is one (a
/// client that registered a signing algorithm must send one), else `params` themselves.
pub async fn request(app: &Issuer, client: &Client, params: Params) -> Result<Params, OAuthError> {
    let Some(jwt) = params.get("request") else {
        if let Some(alg) = &client.meta.backchannel_authentication_request_signing_alg {
            return Err(OAuthError::invalid_request(format!("this client registered backchannel_authentication_request_signing_alg ({alg}): its requests must be signed (request)")));
        }
        if app.profile().requires_signed_ciba_requests(client) {
            return Err(OAuthError::invalid_request("this server's security profile (FAPI-CIBA) accepts only signed authentication requests (request)"));
        }
        return Ok(params);
    };
    let fail = |why: String| OAuthError::invalid_request(format!("signed authentication request: {why}"));
    let mut v = Validation::new(Algorithm::RS256); // the algorithm is set from the header
    v.leeway = LEEWAY;
    v.validate_nbf = true;
    v.set_required_spec_claims(&["iss", "aud", "exp", "nbf"]);
    v.set_issuer(&[client.id()]);
    v.set_audience(&[app.issuer()]);
    let algs = algorithms_for(app, Some(client));
    let expect = Expect { what: "the request", algs: &algs, pinned: client.meta.backchannel_authentication_request_signing_alg.as_deref() };
    let claims: Map<String, Value> = match signed::verify(app, client, jwt, &expect, v).await {
        Ok(c) => c,
        Err(Refusal::Invalid(why)) => return Err(fail(why)),
        Err(Refusal::Unavailable(e)) => return Err(e),
        Err(Refusal::BadCredentials | Refusal::WrongMethod) => return Err(fail("the signature does not verify with this client's keys".into())),
    };
    let number = |name: &str| claims.get(name).and_then(Value::as_u64).ok_or_else(|| fail(format!("{name} is required, as a number of seconds")));
    let (exp, nbf, iat) = (number("exp")?, number("nbf")?, number("iat")?);
    if exp.saturating_sub(nbf) > MAX_LIFETIME {
        return Err(fail(format!("it may live at most {MAX_LIFETIME} seconds from nbf to exp")));
    }
    if iat > now() + LEEWAY {
        return Err(fail("it was issued in the future (iat)".into()));
    }
    let jti = claims.get("jti").and_then(Value::as_str).filter(|j| !j.is_empty()).ok_or_else(|| fail("jti is required".into()))?;
    if claims.get("client_id").is_some_and(|c| c.as_str() != Some(client.id())) {
        return Err(fail("its client_id is another client's".into()));
    }
    let inner = crate::endpoints::authorize::request_object_params(client.id(), &claims).map_err(fail)?;
    // Spent last, so that a request refused for its content can be corrected and sent again
    // with the same jti; kept until it has expired (after which `exp` refuses it anyway).
    let key = format!("ciba-request\u{1f}{}\u{1f}{jti}", client.id());
    match app.stores.challenges.first_use(app.tenant.id, &key, exp + LEEWAY).await {
        Ok(true) => Ok(inner),
        Ok(false) => Err(fail("this request was already sent (jti)".into())),
        Err(e) => Err(OAuthError::internal("challenge store", e)),
    }
}
