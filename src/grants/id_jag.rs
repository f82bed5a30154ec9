//! Identity Assertion JWT Authorization Grant (draft-ietf-oauth-identity-assertion-authz-grant),
//! the identity provider's half: through token exchange (RFC 8693) with
//! `requested_token_type=urn:ietf:params:oauth:token-type:id-jag`, a client trades the user's
//! ID token (or its refresh token) for a short-lived signed assertion of who the user is,
//! addressed to another authorization server (`audience`), which it then presents there as a
//! `jwt-bearer` grant (`grants::jwt_bearer`, the other half).
//!
//! Which audiences a client may obtain assertions for, and under which client id it is known
//! there, is the operator's per-client policy (`token_exchange.id_jag_audiences`).

use super::TokenResponse;
use crate::audit::AuditEvent;
use crate::error::{OAuthError, OAuthResult};
use crate::http::params::Params;
use crate::registry::clients::{TokenExchangePolicy, TOKEN_TYPE_ID_TOKEN, TOKEN_TYPE_REFRESH_TOKEN};
use crate::registry::Client;
use crate::stores::Presented;
use crate::tenant::Issuer;
use crate::util::{now, random_token};
use serde_json::{json, Map, Value};

pub const TOKEN_TYPE_ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// The JOSE `typ` of an ID-JAG: a receiver that checks it cannot mistake an ID token or an
/// access token for one (RFC 8725 §3.11).
pub const TYP: &str = "oauth-id-jag+jwt";

pub async fn issue(app: &Issuer, client: &Client, policy: &TokenExchangePolicy, params: &Params) -> OAuthResult<TokenResponse> {
    let audience = match params.get_all("audience") {
        [one] => one.as_str(),
        [] => return Err(OAuthError::invalid_request("an ID-JAG needs the audience authorization server's issuer (audience)")),
        _ => return Err(OAuthError::invalid_target("an ID-JAG is for one audience")),
    };
    let Some(client_id_there) = policy.id_jag_audiences.get(audience) else {
        return Err(OAuthError::invalid_target(format!("this client may not obtain identity assertions for {audience:?}")));
    };
    if params.contains("actor_token") {
        return Err(OAuthError::invalid_request("an ID-JAG asserts the user alone; no actor_token"));
    }
    for r in params.get_all("resource") {
        crate::registry::clients::validate_resource(r).map_err(OAuthError::invalid_target)?;
    }
    let (user_id, auth_time) = subject(app, client, params).await?;
    let user = app
        .registry()
        .user(&user_id)
        .filter(|u| !u.disabled)
        .ok_or_else(|| OAuthError::invalid_request("the subject_token is invalid, expired or revoked"))?;

    let t = now();
    let exp = t + app.config.id_jag_lifetime;
    let mut c = Map::new();
    c.insert("iss".into(), app.issuer().into());
    c.insert("sub".into(), crate::tokens::subject::subject_for(app, client.id(), &user.id).into());
    c.insert("aud".into(), audience.into());
    c.insert("client_id".into(), client_id_there.as_str().into());
    c.insert("jti".into(), random_token().into());
    c.insert("iat".into(), t.into());
    c.insert("exp".into(), exp.into());
    if let Some(at) = auth_time {
        c.insert("auth_time".into(), at.into());
    }
    match params.get_all("resource") {
        [] => {}
        [one] => {
            c.insert("resource".into(), one.as_str().into());
        }
        many => {
            c.insert("resource".into(), many.into());
        }
    }
    let scope = params.get("scope").unwrap_or_default().to_string();
    if !scope.is_empty() {
        c.insert("scope".into(), scope.clone().into());
    }
    // What lets the audience find its own account for the user (its subject mapping).
    for claim in ["email", "email_verified"] {
        if let Some(v) = user.claim(claim) {
            c.insert(claim.into(), v);
        }
    }
    let jag = app.keys().sign(TYP, &Value::Object(c)).map_err(|e| OAuthError::internal("signing", e))?;
    app.audit(AuditEvent::new("id_jag_issued").client(client.id()).user(&user.id).detail(json!({"audience": audience, "client_id_there": client_id_there})))
        .await;
    Ok(TokenResponse {
        access_token: jag,
        token_type: "N_A",
        expires_in: exp - t,
        scope,
        id_token: None,
        refresh_token: None,
        issued_token_type: Some(TOKEN_TYPE_ID_JAG),
    })
}

/// The user the subject token speaks for, and when they signed in: an ID token issued to
/// this client, or one of this client's refresh tokens.
async fn subject(app: &Issuer, client: &Client, params: &Params) -> OAuthResult<(String, Option<u64>)> {
    let token = params.require("subject_token")?;
    let invalid = || OAuthError::invalid_request("the subject_token is invalid, expired or revoked");
    match params.require("subject_token_type")? {
        TOKEN_TYPE_ID_TOKEN => {
            let party = super::token_exchange::validate_id_token(app, client, token).await?;
            Ok((party.0, party.1))
        }
        TOKEN_TYPE_REFRESH_TOKEN => {
            let family = match app.stores.refresh.peek(app.tenant.id, token).await? {
                Presented::Current(f) => f,
                _ => return Err(invalid()),
            };
            if family.client_id != client.id()
                || app.stores.revocations.is_revoked(app.tenant.id, &crate::tokens::grant_revocation_key(&family.id)).await?
                || app.registry().user(&family.user_id).is_none_or(|u| !u.accepts_tokens_from(family.created_at))
            {
                return Err(invalid());
            }
            Ok((family.user_id, Some(family.auth_time)))
        }
        other => Err(OAuthError::invalid_request(format!("an ID-JAG is obtained with an ID token or a refresh token, not {other:?}"))),
    }
}
