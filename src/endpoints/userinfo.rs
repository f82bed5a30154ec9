//! `/userinfo` (OpenID Connect Core §5.3), a protected resource per RFC 6750: the access token
//! in the `Authorization: Bearer` header or in a form body, never both; errors carry a
//! `WWW-Authenticate: Bearer` challenge. A DPoP-bound token (RFC 9449 §7) comes with the
//! `DPoP` scheme and a proof of its key, and its errors carry a `DPoP` challenge. A
//! certificate-bound token (RFC 8705 §3) comes over a connection with its certificate.

use crate::error::{Challenge, OAuthError};
use crate::http::cors::ServedClient;
use crate::http::params::{is_form, Body, Params};
use crate::registry::users::SCOPE_CLAIMS;
use crate::registry::Client;
use crate::http::client_cert::{ClientCertificate, PresentedCertificate};
use crate::tenant::Issuer;
use crate::tokens::verify_access_token;
use axum::http::{header, HeaderMap, HeaderValue, Method};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};

/// The body is read even for GET: RFC 6750 §2.2 allows the token in a form body only with
/// POST, but a body over the limit is refused the same way (413, JSON, with a challenge).
pub async fn userinfo(app: Issuer, PresentedCertificate(cert): PresentedCertificate, method: Method, headers: HeaderMap, body: Result<Body, OAuthError>) -> Response {
    let mut served = None;
    let result = match body {
        Ok(Body(body)) => handle(&app, &method, &headers, cert.as_ref(), &body, &mut served).await,
        Err(e) => Err(e),
    };
    let mut res = match result {
        Err(e) if e.code == "use_dpop_nonce" || e.code == "invalid_dpop_proof" => {
            e.with_status(axum::http::StatusCode::UNAUTHORIZED).with_challenge(crate::dpop::challenge(&app)).into_response()
        }
        Ok(claims) => {
            let mut res = match served.as_ref() {
                Some(client) => answer(&app, &client.0, claims).await.unwrap_or_else(IntoResponse::into_response),
                None => axum::Json(Value::Object(claims)).into_response(),
            };
            res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            res
        }
        Err(e) if e.challenge.is_some() => e.into_response(),
        Err(e) => e.with_challenge(Challenge::Bearer).into_response(),
    };
    if let Some(client) = served {
        res.extensions_mut().insert(client);
    }
    crate::dpop::offer_nonce(&app, &mut res);
    interaction_id(&headers, &mut res);
    res
}

/// FAPI 1.0 Part 1 (Baseline) §6.2.1 item 11, which FAPI-CIBA keeps for resources: the answer
/// carries `x-fapi-interaction-id`, the value of the client's request header if it sent one
/// (a non-empty one of at most 128 bytes), else a fresh RFC 4122 UUID (version 4).
fn interaction_id(headers: &HeaderMap, res: &mut Response) {
    const NAME: &str = "x-fapi-interaction-id";
    let value = match headers.get(NAME).filter(|v| !v.is_empty() && v.len() <= 128) {
        Some(v) => v.clone(),
        None => {
            // Unique, not secret: from the per-thread block, as request ids are (every
            // userinfo answer carries one, FAPI client or not).
            let mut b = crate::util::unique_random::<16>();
            b[6] = (b[6] & 0x0f) | 0x40;
            b[8] = (b[8] & 0x3f) | 0x80;
            let h = crate::util::hex(&b);
            let uuid = format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..]);
            HeaderValue::from_str(&uuid).expect("hex and hyphens")
        }
    };
    res.headers_mut().insert(header::HeaderName::from_static(NAME), value);
}

/// The claims as `client` registered to receive them (OpenID Connect Core §5.3.2): JSON; or
/// a JWT signed with its `userinfo_signed_response_alg`, naming us and the client; either
/// then encrypted to the client's key if it registered `userinfo_encrypted_response_alg`
/// (signed then encrypted: a nested JWT, `cty: JWT`).
async fn answer(app: &Issuer, client: &Client, mut claims: Map<String, Value>) -> Result<Response, OAuthError> {
    let encryption = crate::tokens::encryption::for_userinfo(client);
    let body = match (&client.meta.userinfo_signed_response_alg, encryption) {
        (None, None) => return Ok(axum::Json(Value::Object(claims)).into_response()),
        (Some(alg), how) => {
            claims.insert("iss".into(), app.issuer().into());
            claims.insert("aud".into(), client.id().into());
            let jwt = app.keys().sign_as(alg, "JWT", &Value::Object(claims)).map_err(|e| OAuthError::internal("signing", e))?;
            match how {
                Some(how) => crate::tokens::encryption::encrypt(app, client, how, Some("JWT"), jwt.as_bytes()).await?,
                None => jwt,
            }
        }
        // Core §5.3.2: encrypted without being signed: the JWE's payload is the claims' JSON.
        (None, Some(how)) => {
            let json = serde_json::to_vec(&claims).map_err(|e| OAuthError::internal("userinfo", e))?;
            crate::tokens::encryption::encrypt(app, client, how, None, &json).await?
        }
    };
    let mut res = body.into_response();
    res.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/jwt"));
    Ok(res)
}

/// `served` is set as soon as the token names a client, so that the client's page may also
/// read the refusals that follow (revoked, insufficient scope).
async fn handle(
    app: &Issuer,
    method: &Method,
    headers: &HeaderMap,
    cert: Option<&ClientCertificate>,
    body: &[u8],
    served: &mut Option<ServedClient>,
) -> Result<Map<String, Value>, OAuthError> {
    let (token, scheme) = access_token(method, headers, body)?;
    let dpop_challenge = |e: OAuthError| if scheme == Scheme::Dpop { e.with_challenge(crate::dpop::challenge(&app)) } else { e };
    let claims = verify_access_token(app, &token).map_err(|_| dpop_challenge(OAuthError::invalid_token("the access token is invalid or expired")))?;
    *served = app.client(&claims.client_id).map(ServedClient);
    // RFC 9449 §7: a bound token only with the DPoP scheme and a proof of its key; the DPoP
    // scheme only for a bound token.
    // The proof's jti is held while the request is answered, and spent only if it succeeds.
    let proof = match (scheme, claims.jkt()) {
        (Scheme::Dpop, Some(jkt)) => {
            let expected = crate::dpop::Expected { method: method.as_str(), url: &app.endpoint("/userinfo"), access_token: Some(&token) };
            match crate::dpop::check(app, headers, &expected)? {
                Some(proof) if proof.jkt == jkt => Some(proof),
                Some(_) => return Err(dpop_challenge(OAuthError::invalid_token("the DPoP proof is for another key than the token's"))),
                None => return Err(OAuthError::invalid_request("a DPoP proof is required").code_as("invalid_dpop_proof")),
            }
        }
        (Scheme::Dpop, None) => return Err(dpop_challenge(OAuthError::invalid_token("this access token is not DPoP-bound; use the Bearer scheme"))),
        (Scheme::Bearer, Some(_)) => {
            return Err(OAuthError::invalid_token("this access token is DPoP-bound; present it with the DPoP scheme and a proof")
                .with_challenge(crate::dpop::challenge(&app)))
        }
        (Scheme::Bearer, None) => None,
    };
    // RFC 8705 §3: a certificate-bound token only over a connection with that certificate.
    if let Some(x5t) = claims.x5t_s256() {
        if !cert.is_some_and(|c| crate::util::ct_eq(c.thumbprint().as_bytes(), x5t.as_bytes())) {
            return Err(dpop_challenge(OAuthError::invalid_token("this access token is bound to a client certificate; present it with that certificate")));
        }
    }
    if !claims.aud.iter().any(|a| a == app.issuer()) {
        return Err(OAuthError::invalid_token("the access token is not meant for this resource"));
    }
    if crate::tokens::is_revoked(app, &claims).await? {
        return Err(OAuthError::invalid_token("the access token has been revoked"));
    }
    if !claims.has_scope("openid") {
        return Err(OAuthError::insufficient_scope("userinfo requires the openid scope"));
    }
    let user = claims
        .subject_id(app)
        .and_then(|id| app.registry().user(&id))
        .filter(|u| u.accepts_tokens_from(claims.iat))
        .ok_or_else(|| OAuthError::invalid_token("the user of this token no longer exists"))?;

    let mut out = Map::new();
    // The sub the client knows the user by: the token's own (pairwise where it is).
    out.insert("sub".into(), Value::String(claims.sub.clone()));
    let scoped = SCOPE_CLAIMS.iter().filter(|(scope, _)| claims.has_scope(scope)).flat_map(|(_, names)| names.iter().copied());
    let requested = claims.userinfo_claims.iter().map(String::as_str);
    for name in scoped.chain(requested) {
        if let Some(v) = user.claim(name) {
            out.insert(name.to_string(), v);
        }
    }
    // The groups and roles as the ID token says them, read now (issue 32).
    if let Some(d) = served.as_ref().and_then(|c| crate::tokens::directory::DirectoryClaims::of(app, &c.0, &user.id)) {
        d.insert_into(&mut out);
    }
    proof.map(crate::dpop::Proof::keep);
    Ok(out)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scheme {
    Bearer,
    Dpop,
}

/// RFC 6750 §2.1 (header) and §2.2 (form body), or RFC 9449 §7.1 (`DPoP` header scheme). A
/// request with no token at all gets a bare challenge without an error code (§3.1).
fn access_token(method: &Method, headers: &HeaderMap, body: &[u8]) -> Result<(String, Scheme), OAuthError> {
    let from_header = match headers.get(header::AUTHORIZATION) {
        None => None,
        Some(v) => {
            let v = v.to_str().map_err(|_| OAuthError::invalid_request("malformed Authorization header"))?;
            let scheme = match v.split_once(' ') {
                Some((s, _)) if s.eq_ignore_ascii_case("bearer") => Some(Scheme::Bearer),
                Some((s, _)) if s.eq_ignore_ascii_case("dpop") => Some(Scheme::Dpop),
                _ => None,
            };
            match (scheme, v.split_once(' ')) {
                (Some(scheme), Some((_, token))) => {
                    let token = token.trim();
                    if token.is_empty() {
                        return Err(OAuthError::invalid_request("empty access token"));
                    }
                    Some((token.to_string(), scheme))
                }
                _ => None,
            }
        }
    };
    let from_body = if method == Method::POST && is_form(headers) {
        Params::parse(body)?.get("access_token").map(|t| (t.to_string(), Scheme::Bearer))
    } else {
        None
    };
    match (from_header, from_body) {
        (Some(_), Some(_)) => Err(OAuthError::invalid_request("the access token was sent more than one way")),
        (Some(t), None) | (None, Some(t)) => Ok(t),
        (None, None) => Err(OAuthError::invalid_request("no access token")
            .with_status(axum::http::StatusCode::UNAUTHORIZED)
            .with_challenge(Challenge::BearerBare)),
    }
}
