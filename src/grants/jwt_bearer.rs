//! `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` (RFC 7523 §2.1) for Identity
//! Assertion JWT Authorization Grants (ID-JAG): the authorization server's half. A client
//! presents an assertion an enterprise identity provider issued it (`grants::id_jag` is that
//! provider's half when it is another Authrim) and gets an access token for the user it names.
//!
//! Only ID-JAGs are accepted (`typ` oauth-id-jag+jwt), only from the operator's
//! `trusted_issuers`, and each is checked in full, since each skipped check is a way in for
//! anyone: the signature against the issuer's published keys, `aud` = our issuer, `exp` (and a
//! bounded lifetime), `iat`, `client_id` = the authenticated client, `jti` spent once on every
//! node, and the subject mapped to one of our enabled users by the issuer's configured rule.

use super::{GrantHandler, TokenResponse};
use crate::app::App;
use crate::audit::AuditEvent;
use crate::client_auth::jwt::LEEWAY;
use crate::client_auth::keys::ASYMMETRIC_ALGS;
use crate::client_auth::signed::alg_name;
use crate::config::agents::{SubjectMapping, TrustedIssuer};
use crate::error::{OAuthError, OAuthResult};
use crate::http::params::Params;
use crate::registry::{Client, User};
use crate::tenant::Issuer;
use crate::tokens::{self, AccessTokenSpec};
use crate::util::{now, split_list};
use async_trait::async_trait;
use jsonwebtoken::Validation;
use parking_lot::Mutex;
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;

pub const GRANT_TYPE: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// The trusted issuers' `jwks_uri`s, found in their metadata once.
#[derive(Default)]
pub struct JwtBearerGrant {
    jwks_uris: Mutex<HashMap<String, String>>,
}

#[derive(Deserialize)]
struct Claimed {
    iss: String,
}

#[derive(Deserialize)]
struct IdJag {
    sub: String,
    client_id: String,
    jti: String,
    exp: u64,
    iat: u64,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    resource: Option<Value>,
    #[serde(default)]
    auth_time: Option<u64>,
    #[serde(default)]
    email: Option<String>,
    #[serde(default)]
    email_verified: Option<bool>,
}

fn refused(why: impl Into<std::borrow::Cow<'static, str>>) -> OAuthError {
    OAuthError::invalid_grant(why)
}

#[async_trait]
impl GrantHandler for JwtBearerGrant {
    fn grant_type(&self) -> &'static str {
        GRANT_TYPE
    }

    async fn exchange(&self, app: &Issuer, client: &Client, params: &Params, holder: super::Holder<'_>) -> OAuthResult<TokenResponse> {
        if client.is_public() {
            return Err(OAuthError::unauthorized_client("the jwt-bearer grant needs an authenticated client"));
        }
        let assertion = params.require("assertion")?;
        let header = jsonwebtoken::decode_header(assertion).map_err(|_| refused("the assertion is not a JWS"))?;
        if !header.typ.as_deref().is_some_and(|t| t.eq_ignore_ascii_case(super::id_jag::TYP)) {
            return Err(refused("only identity assertions (typ oauth-id-jag+jwt) are accepted"));
        }
        if !ASYMMETRIC_ALGS.contains(&alg_name(header.alg)) {
            return Err(refused("the assertion's alg is not accepted"));
        }
        // Unverified: only to know whose keys to check it with.
        let claimed: Claimed = jsonwebtoken::dangerous::insecure_decode_claims(assertion).map_err(|_| refused("the assertion has no iss"))?;
        let issuer = app.config.trusted_issuer(&claimed.iss).ok_or_else(|| refused("the assertion's issuer is not trusted here"))?;
        let jwks_uri = self.jwks_uri(app, issuer).await?;
        let keys = app
            .client_keys
            .keys_at(app, &jwks_uri, &issuer.issuer, header.alg, header.kid.as_deref())
            .await
            .map_err(|e| OAuthError::invalid_grant(format!("the issuer's keys cannot be had: {e}")))?;

        let mut v = Validation::new(header.alg);
        v.leeway = LEEWAY;
        v.validate_nbf = true;
        v.set_required_spec_claims(&["exp", "iat", "iss", "aud", "sub", "jti"]);
        v.set_issuer(&[issuer.issuer.as_str()]);
        v.set_audience(&[app.issuer()]);
        let mut verified = None;
        for k in &keys {
            use jsonwebtoken::errors::ErrorKind as K;
            match jsonwebtoken::decode::<IdJag>(assertion, &k.key, &v) {
                Ok(d) => {
                    verified = Some(d.claims);
                    break;
                }
                Err(e) if matches!(e.kind(), K::InvalidSignature | K::InvalidAlgorithm | K::InvalidKeyFormat) => continue,
                Err(e) => {
                    return Err(refused(match e.kind() {
                        K::ExpiredSignature => "the assertion has expired".to_string(),
                        K::InvalidAudience => format!("the assertion is not for this server (aud must be {})", app.issuer()),
                        K::MissingRequiredClaim(c) => format!("the assertion has no {c}"),
                        _ => "the assertion is malformed".to_string(),
                    }))
                }
            }
        }
        let jag = verified.ok_or_else(|| refused("the assertion's signature does not verify with the issuer's keys"))?;
        let t = now();
        if jag.iat > t + LEEWAY {
            return Err(refused("the assertion was issued in the future (iat)"));
        }
        // Its jti is remembered until it expires: a bounded lifetime bounds that memory.
        let max = app.config.client_assertion_max_lifetime;
        if jag.exp > t + max + LEEWAY {
            return Err(refused(format!("the assertion must expire within {max} seconds")));
        }
        if jag.client_id != client.id() {
            return Err(refused("the assertion was issued for another client"));
        }
        let key = format!("id-jag\u{1f}{}\u{1f}{}", issuer.issuer, jag.jti);
        if !app.stores.challenges.first_use(app.tenant.id, &key, jag.exp + LEEWAY).await? {
            return Err(refused("this assertion was already used (jti)"));
        }
        let user = map_subject(app, issuer, &jag).ok_or_else(|| refused("the assertion's subject is no user here"))?;

        let resources = super::allowed_targets_from(app, client, &asserted_resources(&jag), params.get_all("resource"))?;
        let scope = granted_scope(app, client, &resources, jag.scope.as_deref(), params.get("scope"))?;
        let (jti, exp) = tokens::new_token_id(app);
        let spec = AccessTokenSpec {
            sub: &user.id,
            client_id: client.id(),
            scope: &scope,
            auth_time: jag.auth_time,
            acr: None,
            sid: None,
            userinfo_claims: Vec::new(),
            grant_id: None,
            audience: resources.clone(),
            act: None,
            may_act: None,
            cnf: holder.cnf(),
            org: None,
        };
        let access_token = tokens::mint_access_token(app, spec, jti, exp).map_err(|e| OAuthError::internal("signing", e))?;
        app.audit(
                AuditEvent::new("id_jag_accepted")
                    .client(client.id())
                    .user(&user.id)
                    .detail(json!({"iss": issuer.issuer, "sub": jag.sub, "jti": jag.jti, "audience": resources})),
            )
            .await;
        // No refresh token: the assertion is the grant; a new one comes from the provider.
        Ok(TokenResponse::access_only(app, access_token, scope, holder))
    }
}

impl JwtBearerGrant {
    /// The issuer's `jwks_uri`: configured, or from its RFC 8414 (then OpenID) metadata, whose
    /// `issuer` must be the one configured (RFC 8414 §3.3).
    async fn jwks_uri(&self, app: &App, issuer: &TrustedIssuer) -> OAuthResult<String> {
        if let Some(u) = &issuer.jwks_uri {
            return Ok(u.clone());
        }
        if let Some(u) = self.jwks_uris.lock().get(&issuer.issuer) {
            return Ok(u.clone());
        }
        let base = issuer.issuer.trim_end_matches('/');
        for well_known in ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"] {
            let Ok(meta) = app.fetcher.get_json(&format!("{base}{well_known}")).await else { continue };
            if meta.get("issuer").and_then(Value::as_str) != Some(issuer.issuer.as_str()) {
                continue;
            }
            if let Some(u) = meta.get("jwks_uri").and_then(Value::as_str) {
                self.jwks_uris.lock().insert(issuer.issuer.clone(), u.to_string());
                return Ok(u.to_string());
            }
        }
        Err(OAuthError::invalid_grant("the issuer's metadata (and so its keys) cannot be had"))
    }
}

/// The issuer's rule: a verified e-mail address that one of our users has verified too, or
/// the issuer's `sub` as our user's id or username.
fn map_subject(app: &Issuer, issuer: &TrustedIssuer, jag: &IdJag) -> Option<Arc<User>> {
    let user = match issuer.subject {
        SubjectMapping::Email => {
            let email = jag.email.as_deref().filter(|_| jag.email_verified == Some(true))?;
            let u = app.registry().user_by_login(email)?;
            let ours = u.claim("email").and_then(|v| v.as_str().map(str::to_string));
            let verified = u.claim("email_verified").and_then(|v| v.as_bool()) == Some(true);
            (ours.is_some_and(|e| e.eq_ignore_ascii_case(email)) && verified).then_some(u)?
        }
        // By id, or by username (not by e-mail: a login name may be either).
        SubjectMapping::Sub => app
            .registry()
            .user(&jag.sub)
            .or_else(|| app.registry().user_by_login(&jag.sub).filter(|u| u.username.eq_ignore_ascii_case(&jag.sub)))?,
    };
    (!user.disabled).then_some(user)
}

fn asserted_resources(jag: &IdJag) -> Vec<String> {
    match &jag.resource {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect(),
        _ => Vec::new(),
    }
}

/// The request's scope (or, without one, the assertion's), within what the assertion says
/// the user allowed and what the client may have.
fn granted_scope(app: &crate::tenant::Issuer, client: &Client, resources: &[String], asserted: Option<&str>, requested: Option<&str>) -> OAuthResult<String> {
    let Some(wanted) = requested.or(asserted) else {
        return Err(OAuthError::invalid_scope("neither the request nor the assertion names a scope"));
    };
    let mut kept: Vec<&str> = Vec::new();
    for s in split_list(wanted) {
        if asserted.is_some_and(|a| !split_list(a).any(|x| x == s)) {
            return Err(OAuthError::invalid_scope(format!("scope {s:?} is beyond the assertion's")));
        }
        if !crate::resources::allows_scope(app, client, s, resources) {
            return Err(OAuthError::invalid_scope(format!("scope {s:?} is not allowed for this client")));
        }
        if !kept.contains(&s) {
            kept.push(s);
        }
    }
    if kept.is_empty() {
        return Err(OAuthError::invalid_scope("empty scope"));
    }
    Ok(kept.join(" "))
}
