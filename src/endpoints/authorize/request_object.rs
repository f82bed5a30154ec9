//! Signed request objects (RFC 9101, OpenID Connect Core §6.1): the authorization request as
//! a JWT in the `request` parameter, signed with one of the client's keys (or MACed with the
//! secret of a `client_secret_jwt` client). Unsigned (`alg: none`) objects are refused.
//!
//! Once verified, the object's parameters are the request: RFC 9101 §6.3 has the server use
//! only them, so the query's other parameters are dropped. `client_id` must be in the query
//! (so that we know whose keys to use) and match the object's; `response_type`, if in both,
//! must match (OIDC Core §6.3.3).
//!
//! A request object may also come encrypted to the tenant's own keys (RFC 9101 §6.1, OIDC
//! Core §6.3.1: a JWE whose plaintext is the signed JWT). It is decrypted first and then
//! verified as any other; a client that registered `request_object_encryption_alg` must
//! encrypt, with that `alg` and `enc`. The JWE is no larger than the request it came in
//! (`max_authorization_request_bytes`, or the fetcher's bound for a `request_uri`), and
//! compression (`zip`) is refused, so what decrypts is no larger either.

use super::request::Rejection;
use super::response::ResponseMode;
use crate::client_auth::keys::{ASYMMETRIC_ALGS, HMAC_ALGS};
use crate::client_auth::signed::{self, Expect};
use crate::client_auth::Refusal;
use crate::error::OAuthError;
use crate::http::params::Params;
use crate::keys::{jwe, DecryptError};
use crate::registry::Client;
use crate::tenant::Issuer;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};

/// The JWT claims that describe the object rather than the request.
const ENVELOPE: &[&str] = &["iss", "aud", "exp", "nbf", "iat", "jti", "sub"];
/// The parameters that may carry several values (as a JSON array in the object).
const MULTI: &[&str] = &["resource", "audience"];

/// Every algorithm a request object may use.
pub fn algorithms() -> Vec<&'static str> {
    ASYMMETRIC_ALGS.iter().chain(HMAC_ALGS).copied().collect()
}

/// The request `params["request"]` stands for, as parameters.
pub async fn unpack(app: &Issuer, params: &Params) -> Result<Params, Rejection> {
    let jwt = params.get("request").unwrap_or_default();
    let client_id = params.get("client_id").ok_or_else(|| Rejection::Page("The request names no client (client_id is missing).".into()))?;
    let client = app
        .client(client_id)
        .ok_or_else(|| Rejection::Page("The application that sent you here is not registered.".into()))?;
    let fail = |why: String| refuse(&client, params, OAuthError::invalid_request(why).code_as("invalid_request_object"));
    let decrypted;
    let jwt = if jwe::looks_like_jwe(jwt) {
        decrypted = decrypt(app, &client, jwt).map_err(fail)?;
        decrypted.as_str()
    } else if client.meta.request_object_encryption_alg.is_some() {
        return Err(fail("this client registered request_object_encryption_alg: its request objects must be encrypted".into()));
    } else {
        jwt
    };

    let mut v = Validation::new(Algorithm::RS256); // the algorithm is set from the header
    v.leeway = crate::client_auth::jwt::LEEWAY;
    v.validate_nbf = true;
    v.set_required_spec_claims(&["iss", "aud"]);
    v.set_issuer(&[client.id()]);
    v.set_audience(&[app.issuer()]);
    // FAPI 2.0 §5.4: PS256, ES256 or EdDSA for a client held to that profile.
    let profile = app.profile().for_client(&client);
    let algs: Vec<&str> = algorithms().into_iter().filter(|a| profile.allows_alg(a)).collect();
    let expect = Expect { what: "the request object", algs: &algs, pinned: client.meta.request_object_signing_alg.as_deref() };
    let claims: Map<String, Value> = match signed::verify(app, &client, jwt, &expect, v).await {
        Ok(c) => c,
        Err(Refusal::Invalid(why)) => return Err(fail(why)),
        Err(Refusal::Unavailable(e)) => return Err(refuse(&client, params, e)),
        Err(Refusal::BadCredentials | Refusal::WrongMethod) => {
            return Err(fail("the request object's signature does not verify with this client's keys".into()))
        }
    };
    if profile.is_fapi() {
        fapi2_lifetime(&claims, crate::util::now()).map_err(fail)?;
    }
    if claims.get("client_id").is_some_and(|c| c.as_str() != Some(client.id())) {
        return Err(fail("the request object's client_id differs from the request's".into()));
    }
    if let (Some(outer), Some(inner)) = (params.get("response_type"), claims.get("response_type")) {
        if inner.as_str() != Some(outer) {
            return Err(fail("response_type differs between the request and the request object".into()));
        }
    }
    as_params(client.id(), &claims).map_err(fail)
}

/// A verified JWT's claims as the request they carry, for `client_id`: the envelope's claims
/// (`iss`, `aud`, `exp`…) dropped, JSON numbers and booleans as their text, an object (the
/// `claims` request) as JSON, the multi-valued parameters' arrays as repeated parameters. A
/// signed CIBA authentication request (`endpoints::ciba::signed`) is read the same way.
pub fn as_params(client_id: &str, claims: &Map<String, Value>) -> Result<Params, String> {
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    form.append_pair("client_id", client_id);
    for (k, value) in claims {
        if ENVELOPE.contains(&k.as_str()) || k == "client_id" {
            continue;
        }
        if k == "request" || k == "request_uri" {
            return Err(format!("a request object cannot hold {k}"));
        }
        match value {
            Value::String(s) => {
                form.append_pair(k, s);
            }
            Value::Number(n) => {
                form.append_pair(k, &n.to_string());
            }
            Value::Bool(b) => {
                form.append_pair(k, &b.to_string());
            }
            // The `claims` request (OIDC Core §5.5) is an object; as a parameter it is JSON.
            Value::Object(_) => {
                form.append_pair(k, &value.to_string());
            }
            Value::Array(items) if MULTI.contains(&k.as_str()) => {
                for item in items {
                    let s = item.as_str().ok_or_else(|| format!("{k} values must be strings"))?;
                    form.append_pair(k, s);
                }
            }
            Value::Array(_) | Value::Null => return Err(format!("{k} must be a string in the request object")),
        }
    }
    Params::parse(form.finish().as_bytes()).map_err(|e| e.description.into_owned())
}

/// How far in the past a FAPI 2.0 request object's `nbf` may lie, and how long after it its
/// `exp` may be, in seconds.
const FAPI2_OBJECT_WINDOW: u64 = 60 * 60;

/// FAPI 2.0 Message Signing §5.3.1 (as FAPI 1.0 Advanced §5.2.2 items 13 and 17): the request
/// object of a client held to FAPI 2.0 must carry an `nbf` no longer than 60 minutes in the past
/// and an `exp` no longer than 60 minutes after that `nbf`, so that a signed request stands for
/// one moment, not for as long as its client chose. (That `nbf` is not in the future and `exp`
/// not in the past was checked with the signature.)
fn fapi2_lifetime(claims: &Map<String, Value>, now: u64) -> Result<(), String> {
    let time = |name: &str| {
        let value = claims.get(name).ok_or_else(|| format!("the request object must carry {name} (FAPI 2.0 Message Signing)"))?;
        value.as_f64().filter(|t| *t >= 0.0).map(|t| t as u64).ok_or_else(|| format!("the request object's {name} must be a NumericDate"))
    };
    let (nbf, exp) = (time("nbf")?, time("exp")?);
    if now.saturating_sub(nbf) > FAPI2_OBJECT_WINDOW + crate::client_auth::jwt::LEEWAY {
        return Err("the request object's nbf is more than 60 minutes in the past (FAPI 2.0 Message Signing)".into());
    }
    if exp.saturating_sub(nbf) > FAPI2_OBJECT_WINDOW {
        return Err("the request object's exp is more than 60 minutes after its nbf (FAPI 2.0 Message Signing)".into());
    }
    Ok(())
}

/// The signed request object inside the JWE `compact`, encrypted to one of the tenant's keys
/// with the client's registered `alg` and `enc`, if it registered them.
fn decrypt(app: &Issuer, client: &Client, compact: &str) -> Result<String, String> {
    let out = app.keys().decrypt(compact).map_err(|e| match e {
        DecryptError::UnknownKey => "the request object is encrypted to no key of this server's (see its jwks_uri, use \"enc\")".to_string(),
        DecryptError::Jwe(e) => format!("the encrypted request object cannot be read: {e}"),
    })?;
    let text = |name: &str| out.header.get(name).and_then(Value::as_str).unwrap_or_default();
    if let Some(alg) = client.meta.request_object_encryption_alg.as_deref() {
        let enc = client.meta.request_object_encryption_enc.as_deref().unwrap_or(jwe::DEFAULT_ENC);
        if (text("alg"), text("enc")) != (alg, enc) {
            return Err(format!("the request object is encrypted with {} and {}; this client registered {alg} and {enc}", text("alg"), text("enc")));
        }
    }
    // RFC 9101 §6.1: signed, then encrypted. A JWE inside a JWE, or anything but a compact JWS, is not a request object.
    let inner = String::from_utf8(out.plaintext).map_err(|_| "the encrypted request object does not hold a JWT".to_string())?;
    if inner.split('.').count() != 3 {
        return Err("the encrypted request object does not hold a signed JWT".into());
    }
    Ok(inner)
}

/// A request object that cannot be used: redirected with the error to the query's
/// `redirect_uri` if that one is registered for the client (so the client learns of it),
/// else shown as a page.
pub(super) fn refuse(client: &Client, params: &Params, error: OAuthError) -> Rejection {
    match params.get("redirect_uri").filter(|u| client.has_redirect_uri(u)) {
        Some(uri) => Rejection::Redirect {
            client_id: client.id().to_string(),
            redirect_uri: uri.to_string(),
            state: params.get("state").map(str::to_string),
            mode: ResponseMode::parse(params.get("response_mode"), params.get("response_type"))
                .unwrap_or_else(|_| ResponseMode::default_for(params.get("response_type")))
                .for_errors(params.get("response_type")),
            error: Box::new(error),
        },
        None => Rejection::Unredirectable(error),
    }
}
