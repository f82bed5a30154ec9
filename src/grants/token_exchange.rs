//! `grant_type=urn:ietf:params:oauth:grant-type:token-exchange` (RFC 8693): a confidential
//! client trades a subject token (and, for delegation, an actor token) for a new token aimed
//! at an audience or resource, with a scope that only ever narrows.
//!
//! Hot path: signature verification uses the KeyManager's cached keys and revocation is a
//! TokenRevocationStore lookup, both in memory with no I/O to overlap; the one expensive
//! step left is the new token's RSA signature.

use super::{allowed_targets, GrantHandler, TokenResponse};
use crate::app::App;
use crate::error::{OAuthError, OAuthResult};
use crate::http::params::Params;
use crate::registry::clients::{TokenExchangePolicy, TOKEN_TYPE_ACCESS_TOKEN, TOKEN_TYPE_ID_TOKEN, TOKEN_TYPE_JWT, TOKEN_TYPE_REFRESH_TOKEN};
use crate::registry::Client;
use crate::tenant::Issuer;
use crate::tokens::{self, AccessTokenSpec, ACCESS_TOKEN_TYP};
use crate::util::{now, split_list};
use async_trait::async_trait;
use serde_json::{Map, Value};

pub const GRANT_TYPE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";

pub struct TokenExchangeGrant;

/// What we know of a validated subject or actor token.
#[derive(Debug)]
struct Party {
    sub: String,
    client_id: Option<String>,
    scope: Option<String>,
    exp: u64,
    act: Option<Value>,
    may_act: Option<Value>,
    grant_id: Option<String>,
    auth_time: Option<u64>,
    /// The DPoP key the token is bound to: presenting it needs a proof of that key.
    jkt: Option<String>,
    /// When the token was issued (0 if it does not say): against the user's token cutoff.
    iat: u64,
}

#[derive(Clone, Copy)]
enum Role {
    Subject,
    Actor,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::Subject => "subject_token",
            Role::Actor => "actor_token",
        }
    }
}

#[async_trait]
impl GrantHandler for TokenExchangeGrant {
    fn grant_type(&self) -> &'static str {
        GRANT_TYPE
    }

    async fn exchange(&self, app: &Issuer, client: &Client, params: &Params, holder: super::Holder<'_>) -> OAuthResult<TokenResponse> {
        let dpop = holder.dpop;
        if client.is_public() {
            return Err(OAuthError::unauthorized_client("token exchange needs a confidential client"));
        }
        let policy = client.meta.token_exchange.clone().unwrap_or_default();
        if params.get("requested_token_type") == Some(super::id_jag::TOKEN_TYPE_ID_JAG) {
            return super::id_jag::issue(app, client, &policy, params).await;
        }
        let (typ, issued_token_type, token_type) = match params.get("requested_token_type") {
            None | Some(TOKEN_TYPE_ACCESS_TOKEN) => (ACCESS_TOKEN_TYP, TOKEN_TYPE_ACCESS_TOKEN, super::token_type(dpop)),
            Some(TOKEN_TYPE_JWT) => ("JWT", TOKEN_TYPE_JWT, "N_A"),
            Some(other) => return Err(OAuthError::invalid_request(format!("requested_token_type {other:?} is not supported"))),
        };
        let subject_token = params.require("subject_token")?;
        let subject_type = params.require("subject_token_type")?;
        let actor = match (params.get("actor_token"), params.get("actor_token_type")) {
            (Some(t), Some(ty)) => Some((t, ty)),
            (None, None) => None,
            _ => return Err(OAuthError::invalid_request("actor_token and actor_token_type go together")),
        };
        match actor {
            Some(_) if !policy.delegation => return Err(OAuthError::unauthorized_client("this client may not delegate (actor_token)")),
            None if !policy.impersonation => return Err(OAuthError::unauthorized_client("this client must present an actor_token")),
            _ => {}
        }
        if !policy.subject_token_types.iter().any(|t| t == subject_type) {
            return Err(OAuthError::invalid_request(format!("subject_token_type {subject_type:?} is not accepted for this client")));
        }
        let audience = allowed_targets(app, client, params)?;

        let subject = validate(app, client, Role::Subject, subject_token, subject_type).await?;
        let actor = match actor {
            Some((t, ty)) => {
                if ![TOKEN_TYPE_ACCESS_TOKEN, TOKEN_TYPE_JWT].contains(&ty) {
                    return Err(OAuthError::invalid_request(format!("actor_token_type {ty:?} is not supported")));
                }
                Some(validate(app, client, Role::Actor, t, ty).await?)
            }
            None => None,
        };
        // A DPoP-bound token is of use only to the holder of its key (RFC 9449 §7): exchanging
        // it takes a proof of that key, as using it would.
        for (party, role) in [(Some(&subject), Role::Subject), (actor.as_ref(), Role::Actor)] {
            if let Some(jkt) = party.and_then(|p| p.jkt.as_deref()) {
                if dpop.is_none_or(|k| k.jkt != jkt) {
                    return Err(OAuthError::invalid_request(format!("the {} is DPoP-bound: send a DPoP proof of its key", role.name())));
                }
            }
        }
        check_may_act(&subject, actor.as_ref(), client)?;
        check_delegation_policy(app, &policy, &subject, actor.as_ref())?;
        let scope = granted_scope(app, client, &subject, params.get("scope"))?;

        let t = now();
        let mut exp = t + app.config.access_token_ttl;
        if !policy.may_outlive_subject {
            exp = exp.min(subject.exp);
            if let Some(a) = &actor {
                exp = exp.min(a.exp);
            }
        }
        let act = match &actor {
            // RFC 8693 §4.1: the current actor on top, earlier actors nested inside.
            Some(a) => {
                let mut m = Map::new();
                m.insert("sub".into(), a.sub.clone().into());
                if let Some(c) = &a.client_id {
                    m.insert("client_id".into(), c.clone().into());
                }
                if let Some(prior) = &subject.act {
                    m.insert("act".into(), prior.clone());
                }
                Some(Value::Object(m))
            }
            None => subject.act.clone(),
        };
        let (jti, _) = tokens::new_token_id(app);
        // The user's groups and roles for the client the new token is for, as every other
        // access token of theirs carries them (none when the subject is no user: a client's).
        let directory = app.registry().user(&subject.sub).and_then(|u| tokens::directory::DirectoryClaims::of(app, client, &u.id));
        let spec = AccessTokenSpec {
            sub: &subject.sub,
            client_id: client.id(),
            scope: &scope,
            auth_time: subject.auth_time,
            acr: None,
            sid: None,
            userinfo_claims: Vec::new(),
            grant_id: subject.grant_id.as_deref(),
            audience,
            act,
            may_act: None,
            cnf: holder.cnf(),
            org: None,
            directory: directory.as_ref(),
        };
        let audit_act = spec.act.clone();
        let audit_aud = spec.audience.clone();
        let token = tokens::mint_token_with_typ(app, spec, jti, exp, typ).map_err(|e| OAuthError::internal("signing", e))?;
        // Every delegated or impersonated issuance, with the whole chain of actors.
        app.audit(
                crate::audit::AuditEvent::new("token_exchanged")
                    .client(client.id())
                    .user(&subject.sub)
                    .detail(serde_json::json!({"act": audit_act, "audience": audit_aud, "scope": scope, "subject_client": subject.client_id})),
            )
            .await;
        Ok(TokenResponse {
            access_token: token,
            token_type,
            expires_in: exp.saturating_sub(t),
            scope,
            id_token: None,
            refresh_token: None,
            issued_token_type: Some(issued_token_type),
        })
    }
}

/// An ID token issued to `client` as a subject token (the ID-JAG grant): its user and
/// `auth_time`.
pub(super) async fn validate_id_token(app: &Issuer, client: &Client, token: &str) -> OAuthResult<(String, Option<u64>)> {
    let party = validate(app, client, Role::Subject, token, TOKEN_TYPE_ID_TOKEN).await?;
    Ok((party.sub, party.auth_time))
}

/// The operator's delegation policy for this client: whose tokens it may exchange, which
/// actors may act through it, and how deep a chain of actors may grow (RFC 8693 §4.1 nests
/// each earlier actor inside the current one; an unbounded chain is an unbounded token).
fn check_delegation_policy(app: &App, policy: &TokenExchangePolicy, subject: &Party, actor: Option<&Party>) -> OAuthResult<()> {
    if !policy.allowed_subject_clients.is_empty()
        && !subject.client_id.as_ref().is_some_and(|c| policy.allowed_subject_clients.contains(c))
    {
        return Err(OAuthError::invalid_request("this client may not exchange tokens of the subject token's client"));
    }
    let Some(actor) = actor else { return Ok(()) };
    if !policy.allowed_actors.is_empty() {
        let who = actor.client_id.as_deref().unwrap_or(actor.sub.as_str());
        if !policy.allowed_actors.iter().any(|a| a == who || a == &actor.sub) {
            return Err(OAuthError::invalid_request("this actor may not act through this client"));
        }
    }
    let max = policy.max_delegation_depth.map_or(app.config.max_delegation_depth, |m| m.min(app.config.max_delegation_depth));
    // The new token's chain: the actor on top of every actor the subject token names.
    let depth = 1 + act_depth(subject.act.as_ref());
    if depth > max {
        return Err(OAuthError::invalid_request(format!("the chain of actors would be {depth} deep; at most {max} is allowed")));
    }
    Ok(())
}

/// How many actors an `act` claim nests.
fn act_depth(act: Option<&Value>) -> usize {
    let mut depth = 0;
    let mut cur = act;
    while let Some(a) = cur {
        depth += 1;
        cur = a.get("act");
    }
    depth
}

/// Verify a presented token of `token_type` and describe its party. Any failure is
/// `invalid_request` (RFC 8693 §2.2.2), without saying which check failed.
async fn validate(app: &Issuer, client: &Client, role: Role, token: &str, token_type: &str) -> OAuthResult<Party> {
    let invalid = || OAuthError::invalid_request(format!("the {} is invalid, expired or revoked", role.name()));
    let party = match token_type {
        TOKEN_TYPE_ACCESS_TOKEN => {
            let c = tokens::verify_access_token(app, token).map_err(|_| invalid())?;
            if tokens::is_revoked(app, &c).await? {
                return Err(invalid());
            }
            // A pairwise client's token names its user by a value only the sealed uid maps back.
            let Some(sub) = c.subject_id(app) else { return Err(invalid()) };
            Party {
                sub,
                client_id: Some(c.client_id),
                scope: Some(c.scope),
                exp: c.exp,
                act: c.act,
                may_act: c.may_act,
                jkt: c.cnf.and_then(|cnf| cnf.jkt),
                grant_id: c.grant_id,
                auth_time: c.auth_time,
                iat: c.iat,
            }
        }
        TOKEN_TYPE_JWT | TOKEN_TYPE_ID_TOKEN => {
            let mut c = tokens::verify_our_jwt(app, token).map_err(|_| invalid())?;
            // A pairwise sub cannot be mapped back to its user. Access tokens carry the user
            // sealed in `uid`; ID tokens of pairwise clients do not, and are not exchangeable.
            if let Some(uid) = c.get("uid").and_then(Value::as_str).map(str::to_string) {
                let user = crate::tokens::subject::open_user(app, &uid).ok_or_else(invalid)?;
                c.insert("sub".into(), user.into());
            } else if c.get("aud").and_then(Value::as_str).and_then(|a| app.client(a)).as_deref().and_then(crate::tokens::subject::sector).is_some() {
                return Err(OAuthError::invalid_request(format!("the {} names its user by a pairwise sub, which cannot be exchanged", role.name())));
            }
            let str_claim = |k: &str| c.get(k).and_then(Value::as_str).map(str::to_string);
            // An ID token speaks to its audience: only that client may exchange it, whether it
            // is presented as an id_token or as a plain jwt (our access tokens carry client_id).
            if token_type == TOKEN_TYPE_ID_TOKEN || !c.contains_key("client_id") {
                let aud_ok = match c.get("aud") {
                    Some(Value::String(a)) => a == client.id(),
                    Some(Value::Array(a)) => a.iter().any(|x| x.as_str() == Some(client.id())),
                    _ => false,
                };
                if !aud_ok {
                    return Err(invalid());
                }
            }
            if let Some(jti) = str_claim("jti") {
                if app.stores.revocations.is_revoked(app.tenant.id, &jti).await? {
                    return Err(invalid());
                }
            }
            // An access token names its grant; an ID token, in its jti.
            let grant_id = str_claim("grant_id").or_else(|| str_claim("jti").as_deref().and_then(tokens::grant_of_id_token_jti).map(str::to_string));
            if let Some(g) = &grant_id {
                if app.stores.revocations.is_revoked(app.tenant.id, &tokens::grant_revocation_key(g)).await? {
                    return Err(invalid());
                }
            }
            // An ID token attests a login session: it ends with it. A JWT access token does too,
            // unless its grant has offline access (`tokens::is_revoked`).
            if let Some(sid) = str_claim("sid") {
                let outlives = str_claim("scope").is_some_and(|s| tokens::outlives_session(&s));
                if !outlives && tokens::session_ended(app, app.tenant.id, &sid).await? {
                    return Err(invalid());
                }
            }
            Party {
                sub: str_claim("sub").ok_or_else(invalid)?,
                client_id: str_claim("client_id").or_else(|| str_claim("azp")),
                scope: str_claim("scope"),
                exp: c.get("exp").and_then(Value::as_u64).ok_or_else(invalid)?,
                act: c.get("act").cloned(),
                may_act: c.get("may_act").cloned(),
                grant_id,
                auth_time: c.get("auth_time").and_then(Value::as_u64),
                jkt: c.get("cnf").and_then(|v| v.get("jkt")).and_then(Value::as_str).map(str::to_string),
                iat: c.get("iat").and_then(Value::as_u64).unwrap_or(0),
            }
        }
        TOKEN_TYPE_REFRESH_TOKEN => {
            return Err(OAuthError::invalid_request(format!("a refresh token cannot be the {}", role.name())))
        }
        other => return Err(OAuthError::invalid_request(format!("{} type {other:?} is not supported", role.name()))),
    };
    // The party must still exist: an enabled user whose token cutoff (a new password, the end
    // of all sessions) is older than the token, or (for client tokens) a registered client.
    let alive = match app.registry().user(&party.sub) {
        Some(u) => u.accepts_tokens_from(party.iat),
        None => party.client_id.as_deref() == Some(party.sub.as_str()) && app.client(&party.sub).is_some(),
    };
    if !alive {
        return Err(invalid());
    }
    Ok(party)
}

/// RFC 8693 §4.4: a subject token with `may_act` names who may act for it. The acting party
/// is the actor, or (impersonation) the requesting client.
fn check_may_act(subject: &Party, actor: Option<&Party>, client: &Client) -> OAuthResult<()> {
    let Some(may_act) = &subject.may_act else { return Ok(()) };
    let (acting_sub, acting_client) = match actor {
        Some(a) => (a.sub.as_str(), a.client_id.as_deref().unwrap_or(client.id())),
        None => (client.id(), client.id()),
    };
    let matches = |k: &str, v: &str| may_act.get(k).and_then(Value::as_str).is_none_or(|want| want == v);
    let names_someone = may_act.get("sub").is_some() || may_act.get("client_id").is_some();
    if !names_someone || !matches("sub", acting_sub) || !matches("client_id", acting_client) {
        return Err(OAuthError::invalid_request("the subject token's may_act does not allow this actor"));
    }
    Ok(())
}

/// requested ∩ subject token's scope ∩ client's allowed scopes. A subject token without a
/// scope grants at most what the client may have and the user consented to it (the reference
/// passed the requested scope through unfiltered there).
fn granted_scope(app: &Issuer, client: &Client, subject: &Party, requested: Option<&str>) -> OAuthResult<String> {
    let consented;
    let ceiling: Vec<&str> = match &subject.scope {
        Some(s) => split_list(s).filter(|x| client.allows_scope(x)).collect(),
        None => {
            consented = app.registry().consented_scope(&subject.sub, client.id()).unwrap_or_default();
            split_list(&consented).filter(|x| client.allows_scope(x)).collect()
        }
    };
    let mut granted: Vec<&str> = Vec::new();
    match requested {
        Some(r) => {
            for s in split_list(r) {
                if ceiling.contains(&s) && !granted.contains(&s) {
                    granted.push(s);
                }
            }
            if granted.is_empty() {
                return Err(OAuthError::invalid_scope("none of the requested scopes can be granted"));
            }
        }
        None => granted = ceiling,
    }
    if granted.is_empty() {
        return Err(OAuthError::invalid_scope("no scope can be granted for this subject"));
    }
    Ok(granted.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn may_act_rules() {
        let client = crate::registry::clients::new_client(crate::registry::ClientInput {
            client_id: Some("gw".into()),
            redirect_uris: Some(vec![]),
            grant_types: Some(vec![GRANT_TYPE.into()]),
            ..Default::default()
        }, &crate::keys::Vault::from_key([7; 32]))
        .unwrap()
        .0;
        let party = |sub: &str, may_act: Option<Value>| Party {
            sub: sub.into(),
            client_id: Some("c".into()),
            scope: None,
            exp: 0,
            act: None,
            may_act,
            grant_id: None,
            auth_time: None,
            jkt: None,
            iat: 0,
        };
        let actor = party("svc-a", None);
        assert!(check_may_act(&party("u", None), Some(&actor), &client).is_ok());
        assert!(check_may_act(&party("u", Some(json!({"sub": "svc-a"}))), Some(&actor), &client).is_ok());
        assert!(check_may_act(&party("u", Some(json!({"sub": "svc-b"}))), Some(&actor), &client).is_err());
        assert!(check_may_act(&party("u", Some(json!({"sub": "gw"}))), None, &client).is_ok(), "impersonation by the named client");
        assert!(check_may_act(&party("u", Some(json!({}))), Some(&actor), &client).is_err(), "names no one");
    }
}
