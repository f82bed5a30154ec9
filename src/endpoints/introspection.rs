//! `POST /introspect` (RFC 7662). Callers authenticate as confidential clients (a resource
//! server is registered as one). An active token gets its metadata; anything else — expired,
//! revoked, malformed, foreign, of a disabled user — gets just `{"active": false}`, without
//! saying why. Refresh tokens are described only to the client they belong to.
//!
//! RFC 9701: a caller that sends `Accept: application/token-introspection+jwt` gets the same
//! answer as a JWT signed by us (its `introspection_signed_response_alg`, RS256 by default),
//! encrypted to it if it registered `introspection_encrypted_response_alg`.

use super::revocation::{classify, Known};
use crate::error::OAuthError;
use crate::http::params::FormParams;
use crate::http::client_cert::{ClientCertificate, PresentedCertificate};
use crate::tenant::Issuer;
use crate::tokens::{is_revoked, AccessTokenClaims};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};

/// RFC 9701 §4.1: the media type of a JWT introspection answer (and its `typ`, §5).
pub const JWT_MEDIA_TYPE: &str = "application/token-introspection+jwt";

pub async fn introspect(app: Issuer, PresentedCertificate(cert): PresentedCertificate, headers: HeaderMap, form: Result<FormParams, OAuthError>) -> Response {
    match handle(&app, &headers, cert.as_ref(), form).await {
        Ok((body, caller)) => {
            let mut res = match wants_jwt(&headers) {
                true => jwt_answer(&app, &caller, body).await.unwrap_or_else(IntoResponse::into_response),
                false => axum::Json(body).into_response(),
            };
            res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            res
        }
        Err(e) => e.into_response(),
    }
}

/// Whether `Accept` names the JWT answer's media type (RFC 9701 §4.1).
fn wants_jwt(headers: &HeaderMap) -> bool {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else { return false };
    accept.split(',').any(|t| t.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case(JWT_MEDIA_TYPE))
}

/// RFC 9701 §5: the answer as the claim `token_introspection` of a JWT naming us and the
/// caller, signed, then encrypted if the caller registered it (a nested JWT).
async fn jwt_answer(app: &Issuer, caller: &crate::registry::Client, body: Value) -> Result<Response, OAuthError> {
    let claims = json!({"iss": app.issuer(), "aud": caller.id(), "iat": crate::util::now(), "token_introspection": body});
    let alg = match (&caller.meta.introspection_signed_response_alg, app.profile().for_client(caller).is_fapi()) {
        (Some(alg), _) => alg.as_str(),
        // FAPI signs nothing with RS256 (FAPI 2.0 §5.4, FAPI 1.0 Part 2 §8.6): the
        // deployment's algorithm instead.
        (None, true) => app.config.token_signing_alg.as_str(),
        (None, false) => crate::keys::ALG_RS256,
    };
    let typ = JWT_MEDIA_TYPE.trim_start_matches("application/");
    let jwt = app.keys().sign_as(alg, typ, &claims).map_err(|e| OAuthError::internal("signing", e))?;
    let body = match crate::tokens::encryption::for_introspection(caller) {
        Some(how) => crate::tokens::encryption::encrypt(app, caller, how, Some("JWT"), jwt.as_bytes()).await?,
        None => jwt,
    };
    let mut res = body.into_response();
    res.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(JWT_MEDIA_TYPE));
    Ok(res)
}

type Answer = (Value, std::sync::Arc<crate::registry::Client>);

async fn handle(app: &Issuer, headers: &HeaderMap, cert: Option<&ClientCertificate>, form: Result<FormParams, OAuthError>) -> Result<Answer, OAuthError> {
    let FormParams(params) = form?;
    let caller = crate::client_auth::authenticate(app, headers, &params, "/introspect", cert).await?;
    if caller.is_public() {
        return Err(OAuthError::invalid_client("introspection requires an authenticated (confidential) client"));
    }
    let token = params.require("token")?;
    let inactive = json!({ "active": false });
    match classify(app, token, params.get("token_type_hint")).await? {
        Known::Access(claims) => {
            if is_revoked(app, &claims).await? || !subject_active(app, &claims) || !meant_for(app, &caller, &claims) {
                return Ok((inactive, caller));
            }
            Ok((describe_access(app, claims), caller))
        }
        Known::Refresh(family) if family.client_id == caller.id() => {
            if app.registry().user(&family.user_id).is_none_or(|u| !u.accepts_tokens_from(family.created_at)) {
                return Ok((inactive, caller));
            }
            let described = json!({
                "active": true,
                "token_type": "refresh_token",
                "scope": family.scope,
                "client_id": family.client_id,
                "sub": crate::tokens::subject::subject_for(app, &family.client_id, &family.user_id),
                "iss": app.issuer(),
                "iat": family.created_at,
                "exp": family.expires_at,
            });
            Ok((described, caller))
        }
        Known::Refresh(_) | Known::Neither => Ok((inactive, caller)),
    }
}

/// RFC 7662 §4 lets the server tell a caller that a token is not for it: a registered resource
/// server introspecting (as its `client_id`) learns only of tokens whose audience it is, so it
/// cannot be fooled into honouring a token meant for another resource.
fn meant_for(app: &Issuer, caller: &crate::registry::Client, claims: &AccessTokenClaims) -> bool {
    let mut own = app.tenant.resource_servers.iter().filter(|rs| rs.client_id.as_deref() == Some(caller.id())).peekable();
    own.peek().is_none() || own.any(|rs| claims.aud.iter().any(|a| a == &rs.uri))
}

/// A user token needs its user to exist, be enabled and not have cut off tokens as old (a new
/// password, the end of all sessions); a client token (`sub` = client) its client.
fn subject_active(app: &Issuer, claims: &AccessTokenClaims) -> bool {
    let Some(id) = claims.subject_id(app) else { return false };
    match app.registry().user(&id) {
        Some(u) => u.accepts_tokens_from(claims.iat),
        None => claims.sub == claims.client_id && app.client(&claims.client_id).is_some(),
    }
}

fn describe_access(app: &Issuer, c: AccessTokenClaims) -> Value {
    let mut m = Map::new();
    m.insert("active".into(), true.into());
    // RFC 9449 §6.2: a DPoP-bound token says so; RFC 8705 §3.2: a certificate-bound one stays
    // a bearer token. Either names what binds it for the resource to check.
    m.insert("token_type".into(), if c.jkt().is_some() { "DPoP" } else { "Bearer" }.into());
    if let Some(cnf) = &c.cnf {
        m.insert("cnf".into(), serde_json::to_value(cnf).unwrap_or_default());
    }
    m.insert("scope".into(), c.scope.into());
    m.insert("client_id".into(), c.client_id.into());
    m.insert("sub".into(), c.sub.into());
    m.insert("aud".into(), if c.aud.len() == 1 { c.aud[0].clone().into() } else { c.aud.into() });
    m.insert("iss".into(), app.issuer().into());
    m.insert("exp".into(), c.exp.into());
    m.insert("iat".into(), c.iat.into());
    m.insert("jti".into(), c.jti.into());
    if let Some(t) = c.auth_time {
        m.insert("auth_time".into(), t.into());
    }
    if let Some(act) = c.act {
        m.insert("act".into(), act);
    }
    // What the token itself says of the user's groups and roles (issue 32).
    if !c.groups.is_empty() {
        m.insert("groups".into(), c.groups.into());
    }
    if c.groups_overage {
        m.insert("groups_overage".into(), true.into());
    }
    if !c.roles.is_empty() {
        m.insert("roles".into(), c.roles.into());
    }
    Value::Object(m)
}
