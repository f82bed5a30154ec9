//! Grant types: one module per grant, each a `GrantHandler` behind the token endpoint.
//! Adding a grant = one module + one line in `GrantRegistry::standard` + its name in
//! `GRANT_TYPES` (which client registration and discovery advertise).

pub mod authorization_code;
pub mod ciba;
pub mod client_credentials;
pub mod device_code;
pub mod id_jag;
pub mod jwt_bearer;
pub mod refresh_token;
pub mod token_exchange;

use crate::app::App;
use crate::error::{OAuthError, OAuthResult};
use crate::registry::User;
use crate::tokens::{self, AccessTokenSpec, IdTokenSpec};
use crate::http::params::Params;
use crate::registry::Client;
use crate::tenant::Issuer;
pub use crate::dpop::ProvenKey;
use async_trait::async_trait;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Arc;

/// Every grant type this build implements.
pub const GRANT_TYPES: &[&str] = &[
    "authorization_code",
    "client_credentials",
    "refresh_token",
    "urn:ietf:params:oauth:grant-type:token-exchange",
    "urn:ietf:params:oauth:grant-type:jwt-bearer",
    device_code::GRANT_TYPE,
    ciba::GRANT_TYPE,
];

/// RFC 6749 §5.1 (and OpenID Connect Core §3.1.3.3) successful token response.
#[derive(Debug, Serialize)]
pub struct TokenResponse {
    pub access_token: String,
    pub token_type: &'static str,
    pub expires_in: u64,
    pub scope: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id_token: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// RFC 8693 §2.2.1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issued_token_type: Option<&'static str>,
}

impl TokenResponse {
    /// An access token alone, for the configured lifetime: grants with no user session to
    /// refresh (client credentials, assertions).
    pub fn access_only(app: &App, access_token: String, scope: String, holder: Holder<'_>) -> Self {
        Self {
            access_token,
            token_type: token_type(holder.dpop),
            expires_in: app.config.access_token_ttl,
            scope,
            id_token: None,
            refresh_token: None,
            issued_token_type: None,
        }
    }

    /// The `application/json` answer. Serialized into a buffer sized for the tokens it holds:
    /// axum's `Json` starts at 128 bytes and grew three times for a single ES256 access token.
    pub fn into_json_response(self) -> axum::response::Response {
        use axum::response::IntoResponse;
        let tokens = self.access_token.len() + self.id_token.as_ref().map_or(0, String::len) + self.refresh_token.as_ref().map_or(0, String::len);
        let mut body = Vec::with_capacity(tokens + self.scope.len() + 192);
        if serde_json::to_writer(&mut body, &self).is_err() {
            // Not reached (strings and numbers only); axum's own answer if ever it were.
            return axum::Json(self).into_response();
        }
        let mut res = axum::response::Response::new(axum::body::Body::from(body));
        res.headers_mut().insert(axum::http::header::CONTENT_TYPE, axum::http::HeaderValue::from_static("application/json"));
        res
    }
}

#[async_trait]
pub trait GrantHandler: Send + Sync {
    fn grant_type(&self) -> &'static str;
    /// Exchange the grant in `params` for tokens. The client is already authenticated and
    /// allowed to use this grant type.
    /// `holder`: what the request proved it holds, to bind the tokens to.
    async fn exchange(&self, app: &Issuer, client: &Client, params: &Params, holder: Holder<'_>) -> OAuthResult<TokenResponse>;
}

/// What a token request proved it holds, to bind the tokens it gets to (RFC 7800 `cnf`).
#[derive(Clone, Copy, Default)]
pub struct Holder<'a> {
    /// The DPoP key of the request's proof (RFC 9449).
    pub dpop: Option<&'a ProvenKey>,
    /// The thumbprint of the request's TLS client certificate, for a client registered with
    /// `tls_client_certificate_bound_access_tokens` (RFC 8705 §3).
    pub x5t: Option<&'a str>,
}

impl Holder<'_> {
    /// The access token's `cnf`.
    pub fn cnf(&self) -> Option<tokens::Confirmation> {
        tokens::Confirmation::of(self.dpop.map(|k| k.jkt.as_str()), self.x5t)
    }
}

pub struct GrantRegistry {
    handlers: HashMap<&'static str, Box<dyn GrantHandler>>,
    /// The jwt-bearer grant, also for CIBA's `login_hint_token`, which is checked as its
    /// assertions are (and shares its cache of the issuers' metadata).
    jwt_bearer: Arc<jwt_bearer::JwtBearerGrant>,
}

impl GrantRegistry {
    pub fn standard() -> Self {
        let jwt_bearer = Arc::new(jwt_bearer::JwtBearerGrant::default());
        let list: Vec<Box<dyn GrantHandler>> =
            vec![
                Box::new(authorization_code::AuthorizationCodeGrant),
                Box::new(client_credentials::ClientCredentialsGrant),
                Box::new(refresh_token::RefreshTokenGrant),
                Box::new(token_exchange::TokenExchangeGrant),
                Box::new(jwt_bearer.clone()),
                Box::new(device_code::DeviceCodeGrant),
                Box::new(ciba::CibaGrant),
            ];
        Self { handlers: list.into_iter().map(|h| (h.grant_type(), h)).collect(), jwt_bearer }
    }

    pub fn jwt_bearer(&self) -> &jwt_bearer::JwtBearerGrant {
        &self.jwt_bearer
    }

    pub fn get(&self, grant_type: &str) -> Option<&dyn GrantHandler> {
        self.handlers.get(grant_type).map(|b| b.as_ref())
    }

    pub fn names(&self) -> Vec<&'static str> {
        let mut v: Vec<_> = self.handlers.keys().copied().collect();
        v.sort();
        v
    }
}

/// What a user-bound token response is made of, whichever grant produced it.
pub struct Issuance<'a> {
    pub user: &'a User,
    pub client: &'a Client,
    pub scope: &'a str,
    pub auth_time: u64,
    pub sid: &'a str,
    pub acr: Option<&'a str>,
    /// Only the code grant has one (OpenID Connect Core §12.2: none on refresh).
    pub nonce: Option<&'a str>,
    pub userinfo_claims: Vec<String>,
    pub id_token_claims: Vec<String>,
    pub grant_id: Option<&'a str>,
    /// Chosen before issuance so that a store could record them atomically.
    pub jti: String,
    pub exp: u64,
    pub refresh_token: Option<String>,
    /// What the access token is bound to.
    pub holder: Holder<'a>,
    /// RFC 8707: the resources the access token is for (`aud`); empty: Authrim's userinfo.
    pub audience: Vec<String>,
    /// RFC 8176: how the user authenticated.
    pub amr: &'a [String],
    /// The organization (its id) the user signed in for: its claims are read at issuance,
    /// from the current membership.
    pub org: Option<&'a str>,
    /// CIBA push mode: the `auth_req_id` the tokens are pushed for (`ciba::push`).
    pub ciba_push: Option<&'a str>,
}

/// What a user granted a client, however it was asked (an authorization code, a device's
/// request, a backchannel authentication request): what the tokens say.
pub struct UserGrant<'a> {
    pub user: &'a User,
    pub scope: &'a str,
    /// RFC 8707: what was authorized; `audience` is what this token request narrowed it to.
    pub resources: &'a [String],
    pub audience: Vec<String>,
    pub auth_time: u64,
    pub sid: &'a str,
    pub acr: Option<&'a str>,
    pub amr: &'a [String],
    pub nonce: Option<&'a str>,
    pub userinfo_claims: Vec<String>,
    pub id_token_claims: Vec<String>,
    /// The organization (its id) the user signed in for.
    pub org: Option<&'a str>,
    /// CIBA push mode: the `auth_req_id` the tokens are pushed for.
    pub ciba_push: Option<&'a str>,
}

/// The token response of a user's grant: a refresh-token family when the client has the
/// grant and the scope earns one (`authorization_code::refresh_granted`), then the access and
/// ID tokens. `grant_id` (also the family's id), `jti` and `exp` are chosen by the caller, who
/// may have recorded them first (a code's redemption does).
#[allow(clippy::too_many_arguments)]
pub async fn issue_for_user(
    app: &Issuer,
    client: &Client,
    g: UserGrant<'_>,
    grant_id: &str,
    jti: String,
    exp: u64,
    holder: Holder<'_>,
) -> OAuthResult<TokenResponse> {
    if g.org.is_some_and(|org| app.registry().membership(org, &g.user.id).is_none()) {
        return Err(not_a_member());
    }
    let refresh_token = match client.allows_grant("refresh_token") && authorization_code::refresh_granted(app, g.scope, g.resources) {
        true => {
            let new = crate::stores::NewFamily {
                user_id: g.user.id.clone(),
                client_id: client.id().to_string(),
                scope: g.scope.to_string(),
                auth_time: g.auth_time,
                sid: g.sid.to_string(),
                acr: g.acr.map(str::to_string),
                userinfo_claims: g.userinfo_claims.clone(),
                // RFC 9449 §5: a public client's refresh tokens are bound to its DPoP key (a
                // confidential client's are bound to it by its authentication).
                // RFC 8705 §4: so are they to its certificate, when its tokens are bound to one.
                jkt: holder.dpop.filter(|_| client.is_public()).map(|k| k.jkt.clone()),
                x5t: holder.x5t.filter(|_| client.is_public()).map(str::to_string),
                resources: g.resources.to_vec(),
                amr: g.amr.to_vec(),
                org: g.org.map(str::to_string),
            };
            Some(app.stores.refresh.create(app.tenant.id, grant_id, new).await?)
        }
        false => None,
    };
    issue_tokens(
        app,
        Issuance {
            user: g.user,
            client,
            scope: g.scope,
            auth_time: g.auth_time,
            sid: g.sid,
            acr: g.acr,
            nonce: g.nonce,
            userinfo_claims: g.userinfo_claims,
            id_token_claims: g.id_token_claims,
            grant_id: Some(grant_id),
            jti,
            exp,
            refresh_token,
            holder,
            audience: g.audience,
            amr: g.amr,
            org: g.org,
            ciba_push: g.ciba_push,
        },
    )
    .await
}

/// The tokens of a request a user approved elsewhere (a device's on the verification page, a
/// backchannel one on the account page), once redeemed: the user, if they may still have
/// tokens and the session that approved still stands (its grants end with it, as a code's
/// do); the resources narrowed by the token request's `resource` (RFC 8707 §2.2); then as for
/// a code, without a nonce or a `claims` request (neither flow has them).
pub async fn issue_for_approval(
    app: &Issuer,
    client: &Client,
    params: &Params,
    scope: &str,
    resources: &[String],
    approval: &crate::stores::device::Approval,
    holder: Holder<'_>,
    ciba_push: Option<&str>,
) -> OAuthResult<TokenResponse> {
    if tokens::session_ended(app, app.tenant.id, &approval.sid).await? {
        return Err(OAuthError::invalid_grant("the login session that approved this request has ended"));
    }
    let user = app
        .registry()
        .user(&approval.user_id)
        .filter(|u| !u.disabled)
        .ok_or_else(|| OAuthError::invalid_grant("the user of this authorization no longer exists or is disabled"))?;
    let audience = crate::resources::narrow(resources, params.get_all("resource"))?;
    let (jti, exp) = tokens::new_token_id(app);
    let grant = UserGrant {
        user: &user,
        scope,
        resources,
        audience,
        auth_time: approval.auth_time,
        sid: &approval.sid,
        acr: approval.acr.as_deref(),
        amr: &approval.amr,
        nonce: None,
        userinfo_claims: Vec::new(),
        id_token_claims: Vec::new(),
        org: None,
        ciba_push,
    };
    issue_for_user(app, client, grant, &crate::stores::refresh::new_family_id(), jti, exp, holder).await
}

/// The organization a grant was for no longer has the user (or is gone).
fn not_a_member() -> OAuthError {
    OAuthError::invalid_grant("the user is no longer a member of the organization this authorization was for")
}

/// RFC 9449 §5: `DPoP` for a token bound to a key, else `Bearer`.
pub fn token_type(dpop: Option<&ProvenKey>) -> &'static str {
    if dpop.is_some() { "DPoP" } else { "Bearer" }
}

/// Sign the access token and, when `openid` was granted, the ID token.
pub async fn issue_tokens(app: &Issuer, i: Issuance<'_>) -> OAuthResult<TokenResponse> {
    let org = match i.org {
        Some(id) => Some(tokens::OrgClaims::of(app, id, &i.user.id).ok_or_else(not_a_member)?),
        None => None,
    };
    // Read again at every issuance (a refresh too): a group or role taken away is gone from
    // the next token.
    let directory = tokens::directory::DirectoryClaims::of(app, i.client, &i.user.id);
    let access_token = tokens::mint_access_token(
        app,
        AccessTokenSpec {
            sub: &i.user.id,
            client_id: i.client.id(),
            scope: i.scope,
            auth_time: Some(i.auth_time),
            acr: i.acr,
            sid: Some(i.sid),
            userinfo_claims: i.userinfo_claims,
            grant_id: i.grant_id,
            audience: i.audience,
            act: None,
            may_act: None,
            cnf: i.holder.cnf(),
            org: org.as_ref(),
            directory: directory.as_ref(),
        },
        i.jti,
        i.exp,
    )
    .map_err(|e| OAuthError::internal("signing", e))?;
    let id_token = if crate::util::split_list(i.scope).any(|s| s == "openid") {
        let spec = IdTokenSpec {
            user: i.user,
            client_id: i.client.id(),
            nonce: i.nonce,
            auth_time: i.auth_time,
            sid: i.sid,
            acr: i.acr,
            access_token: Some(&access_token),
            // The token endpoint's ID token may omit c_hash (Core §3.3.3.6).
            code: None,
            requested: &i.id_token_claims,
            grant_id: i.grant_id,
            amr: i.amr,
            org: org.as_ref(),
            directory: directory.as_ref(),
            ciba_push: i.ciba_push.map(|auth_req_id| tokens::CibaPush { auth_req_id, refresh_token: i.refresh_token.as_deref() }),
        };
        let signed = tokens::mint_id_token(app, spec).map_err(|e| OAuthError::internal("signing", e))?;
        Some(tokens::encryption::id_token(app, i.client, signed).await?)
    } else {
        None
    };
    Ok(TokenResponse {
        access_token,
        token_type: token_type(i.holder.dpop),
        expires_in: app.config.access_token_ttl,
        scope: i.scope.to_string(),
        id_token,
        refresh_token: i.refresh_token,
        issued_token_type: None,
    })
}

/// The audiences a token may carry: each requested `audience` and `resource` must be in the
/// client's allowed lists (RFC 8693 §2.2.2 `invalid_target` otherwise). None requested: the
/// default resource.
pub fn allowed_targets(app: &crate::tenant::Issuer, client: &Client, params: &Params) -> OAuthResult<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for a in params.get_all("audience") {
        if !client.meta.allowed_audiences.iter().any(|x| x == a) {
            return Err(OAuthError::invalid_target(format!("audience {a:?} is not allowed for this client")));
        }
        if !out.contains(a) {
            out.push(a.clone());
        }
    }
    for r in crate::resources::allowed(app, client, params.get_all("resource"))? {
        if !out.contains(&r) {
            out.push(r);
        }
    }
    Ok(out)
}

/// The resources of a grant that names its own (an assertion's `resource`): the request may
/// narrow them (RFC 8707 §2.2), and each must be one this client may have.
pub fn allowed_targets_from(app: &crate::tenant::Issuer, client: &Client, granted: &[String], requested: &[String]) -> OAuthResult<Vec<String>> {
    let chosen = match granted.is_empty() {
        true => requested.to_vec(),
        false => crate::resources::narrow(granted, requested)?,
    };
    crate::resources::allowed(app, client, &chosen)
}

#[cfg(test)]
mod tests {
    #[test]
    fn advertised_grant_types_are_exactly_the_implemented_ones() {
        let mut advertised = super::GRANT_TYPES.to_vec();
        advertised.sort();
        assert_eq!(super::GrantRegistry::standard().names(), advertised);
    }
}
