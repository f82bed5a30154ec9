//! `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` (RFC 7523 §2.1): a client presents
//! an assertion a trusted issuer made, and gets an access token for the user it names. Two
//! kinds, told apart by the JOSE header's `typ`:
//!
//! - Identity Assertion JWT Authorization Grants (`typ` oauth-id-jag+jwt, `id_jag`), which an
//!   enterprise identity provider issued the client (`grants::id_jag` is that provider's half
//!   when it is another Authrim);
//! - generic RFC 7523 assertions (`typ` JWT or none, `generic`), from issuers whose `accept`
//!   names `jwt-bearer`.
//!
//! Only from the operator's `trusted_issuers`, only the kinds each issuer is trusted for, only
//! by the clients it lists, and each assertion checked in full (`checks`), since each skipped
//! check is a way in for anyone: the signature against the issuer's published keys, `aud`,
//! `exp` (and a bounded lifetime), `nbf`, `iat`, `jti` spent once on every node, and the
//! subject mapped to one of our enabled users by the issuer's configured rule.

mod checks;
mod generic;
mod id_jag;
pub mod login_hint;

use super::{GrantHandler, TokenResponse};
use crate::app::App;
use crate::audit::AuditEvent;
use crate::client_auth::keys::ASYMMETRIC_ALGS;
use crate::client_auth::signed::alg_name;
use crate::config::agents::{AssertionKind, TrustedIssuer};
use crate::error::{OAuthError, OAuthResult};
use crate::http::params::Params;
use crate::registry::{Client, User};
use crate::tenant::Issuer;
use crate::tokens::{self, AccessTokenSpec};
use async_trait::async_trait;
use checks::refused;
use parking_lot::Mutex;
use serde::Deserialize;
use serde_json::Value;
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

/// One presented assertion and what it is checked against: what each kind's `accept` reads.
struct Presented<'a> {
    grant: &'a JwtBearerGrant,
    app: &'a Issuer,
    client: &'a Client,
    issuer: &'a TrustedIssuer,
    assertion: &'a str,
    header: &'a jsonwebtoken::Header,
    params: &'a Params,
}

/// An assertion that passed every check of its kind: what the access token is for.
struct Accepted {
    user: Arc<User>,
    scope: String,
    resources: Vec<String>,
    auth_time: Option<u64>,
    /// The audit event and its detail.
    event: &'static str,
    detail: Value,
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
        if !ASYMMETRIC_ALGS.contains(&alg_name(header.alg)) {
            return Err(refused("the assertion's alg is not accepted"));
        }
        // Unverified: only to know whose keys to check it with.
        let claimed: Claimed = jsonwebtoken::dangerous::insecure_decode_claims(assertion).map_err(|_| refused("the assertion has no iss"))?;
        let issuer = app.config.trusted_issuer(&claimed.iss).ok_or_else(|| refused("the assertion's issuer is not trusted here"))?;
        let kind = match header.typ.as_deref().is_some_and(|t| t.eq_ignore_ascii_case(super::id_jag::TYP)) {
            true => AssertionKind::IdJag,
            false => AssertionKind::JwtBearer,
        };
        if !issuer.accept.contains(&kind) {
            return Err(refused(match kind {
                AssertionKind::IdJag => "this issuer's identity assertions (ID-JAG) are not accepted here",
                _ if issuer.accept.contains(&AssertionKind::IdJag) => "only identity assertions (typ oauth-id-jag+jwt) are accepted from this issuer",
                // Trusted for CIBA's login_hint_token alone, which is never a grant.
                _ => "this issuer's assertions are not accepted at this grant",
            }));
        }
        if issuer.clients.as_ref().is_some_and(|c| !c.iter().any(|id| id == client.id())) {
            return Err(OAuthError::unauthorized_client("this client may not present assertions from this issuer"));
        }
        let presented = Presented { grant: self, app, client, issuer, assertion, header: &header, params };
        let a = match kind {
            AssertionKind::IdJag => id_jag::accept(&presented).await?,
            _ => generic::accept(&presented).await?,
        };

        let (jti, exp) = tokens::new_token_id(app);
        let spec = AccessTokenSpec {
            sub: &a.user.id,
            client_id: client.id(),
            scope: &a.scope,
            auth_time: a.auth_time,
            acr: None,
            sid: None,
            userinfo_claims: Vec::new(),
            grant_id: None,
            audience: a.resources.clone(),
            act: None,
            may_act: None,
            cnf: holder.cnf(),
            org: None,
            directory: None,
        };
        let access_token = tokens::mint_access_token(app, spec, jti, exp).map_err(|e| OAuthError::internal("signing", e))?;
        app.audit(AuditEvent::new(a.event).client(client.id()).user(&a.user.id).detail(a.detail)).await;
        // No refresh token: the assertion is the grant; a new one comes from its issuer.
        Ok(TokenResponse::access_only(app, access_token, a.scope, holder))
    }
}

/// The registry holds the grant shared with CIBA's `login_hint_token` (`GrantRegistry::jwt_bearer`).
#[async_trait]
impl GrantHandler for Arc<JwtBearerGrant> {
    fn grant_type(&self) -> &'static str {
        GRANT_TYPE
    }

    async fn exchange(&self, app: &Issuer, client: &Client, params: &Params, holder: super::Holder<'_>) -> OAuthResult<TokenResponse> {
        self.as_ref().exchange(app, client, params, holder).await
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

#[cfg(test)]
mod tests {
    #[test]
    fn a_generic_assertion_is_typed_jwt_or_not_at_all() {
        for ok in [None, Some("JWT"), Some("jwt"), Some("application/jwt")] {
            assert!(super::generic::typ_is_generic(ok), "{ok:?}");
        }
        for other in ["at+jwt", "dpop+jwt", "logout+jwt", "oauth-id-jag+jwt", ""] {
            assert!(!super::generic::typ_is_generic(Some(other)), "{other}");
        }
    }
}
