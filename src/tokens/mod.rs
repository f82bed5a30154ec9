//! The tokens Authrim issues: JWT access tokens (RFC 9068) and ID tokens (OpenID Connect
//! Core §2), and the verification of our own access tokens by the endpoints that consume them.

pub mod claims_request;
pub mod directory;
pub mod encryption;
pub mod subject;

use crate::app::App;
use crate::keys::VerifyError;
use crate::registry::User;
use crate::tenant::{Issuer, TenantId};
use crate::util::{b64, now, sha256};
use jsonwebtoken::{Algorithm, Validation};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub const ACCESS_TOKEN_TYP: &str = "at+jwt";
/// The one authentication context we offer: password login.
pub const ACR_PASSWORD: &str = "urn:authrim:acr:password";

/// RFC 9068 §2.2 claims, plus what userinfo needs to honour the `claims` request parameter.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AccessTokenClaims {
    pub iss: String,
    pub sub: String,
    pub aud: Vec<String>,
    pub exp: u64,
    pub iat: u64,
    pub jti: String,
    pub client_id: String,
    pub scope: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_time: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acr: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sid: Option<String>,
    /// Claims the `claims` parameter asked userinfo to return (OpenID Connect Core §5.5).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub userinfo_claims: Vec<String>,
    /// The grant (refresh-token family) this token came from, so revoking the grant revokes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_id: Option<String>,
    /// RFC 8693 §4.1: the acting party of a delegated token, nested for delegation chains.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub act: Option<Value>,
    /// RFC 8693 §4.4: who may act for the subject, if restricted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub may_act: Option<Value>,
    /// RFC 9449 §6.1: the DPoP key the token is bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cnf: Option<Confirmation>,
    /// A pairwise client's token: the user id, sealed (see `subject`), since `sub` cannot be
    /// mapped back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// The organization the user signed in for (issue 31): its id, slug and the user's roles
    /// in it. A token that names one stops being accepted when the membership ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub org_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub org_name: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub org_roles: Vec<String>,
    /// The user's groups and roles on the client (issue 32; RFC 9068 §2.2.3.1's names), as
    /// the client's settings choose them (`directory::DirectoryClaims`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub groups_overage: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<String>,
}

/// The organization a user's tokens are for: what `org_id`, `org_name` and `org_roles` say.
#[derive(Debug, Clone, PartialEq)]
pub struct OrgClaims {
    pub id: String,
    pub name: String,
    pub roles: Vec<String>,
}

impl OrgClaims {
    /// `user_id`'s current membership of organization `org_id` in this tenant, if any.
    pub fn of(app: &Issuer, org_id: &str, user_id: &str) -> Option<Self> {
        let registry = app.registry();
        let member = registry.membership(org_id, user_id)?;
        let org = registry.organization(org_id)?;
        Some(OrgClaims { id: org.id.clone(), name: org.slug.clone(), roles: member.roles.clone() })
    }

    fn insert_into(&self, c: &mut Map<String, Value>) {
        c.insert("org_id".into(), self.id.clone().into());
        c.insert("org_name".into(), self.name.clone().into());
        c.insert("org_roles".into(), self.roles.clone().into());
    }
}

/// Whether `user_id` is still a member of `org_id`, and was when a token of `iat` was issued
/// (a membership removed and given again does not bring back the earlier tokens).
pub fn org_member_at(app: &Issuer, org_id: &str, user_id: &str, iat: u64) -> bool {
    app.registry().membership(org_id, user_id).is_some_and(|m| m.joined_at <= iat)
}

/// RFC 7800 confirmation: what the token's presenter must prove it holds.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Confirmation {
    /// RFC 9449 §6.1: the DPoP key's JWK SHA-256 thumbprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jkt: Option<String>,
    /// RFC 8705 §3.1: the client certificate's SHA-256 thumbprint.
    #[serde(rename = "x5t#S256", default, skip_serializing_if = "Option::is_none")]
    pub x5t_s256: Option<String>,
}

impl Confirmation {
    /// `None` when there is nothing to confirm (an unbound token has no `cnf`).
    pub fn of(jkt: Option<&str>, x5t_s256: Option<&str>) -> Option<Self> {
        (jkt.is_some() || x5t_s256.is_some()).then(|| Self { jkt: jkt.map(str::to_string), x5t_s256: x5t_s256.map(str::to_string) })
    }
}

impl AccessTokenClaims {
    /// The user (or client) the token is about, as Authrim knows it: `sub`, unless `sub` is
    /// a pairwise value (then the sealed `uid`). `None` for a `uid` that is not ours.
    pub fn subject_id(&self, app: &crate::tenant::Issuer) -> Option<String> {
        match &self.uid {
            None => Some(self.sub.clone()),
            Some(sealed) => subject::open_user(app, sealed),
        }
    }

    /// The DPoP key thumbprint this token is bound to, if it is.
    pub fn jkt(&self) -> Option<&str> {
        self.cnf.as_ref().and_then(|c| c.jkt.as_deref())
    }

    /// The client certificate thumbprint this token is bound to, if it is.
    pub fn x5t_s256(&self) -> Option<&str> {
        self.cnf.as_ref().and_then(|c| c.x5t_s256.as_deref())
    }

    pub fn has_scope(&self, scope: &str) -> bool {
        crate::util::split_list(&self.scope).any(|s| s == scope)
    }
}

/// What an access token is about, before it gets its times and id.
pub struct AccessTokenSpec<'a> {
    pub sub: &'a str,
    pub client_id: &'a str,
    pub scope: &'a str,
    pub auth_time: Option<u64>,
    pub acr: Option<&'a str>,
    pub sid: Option<&'a str>,
    pub userinfo_claims: Vec<String>,
    pub grant_id: Option<&'a str>,
    /// `aud`; empty means the default resource, the issuer itself.
    pub audience: Vec<String>,
    pub act: Option<Value>,
    pub may_act: Option<Value>,
    /// Bind the token to a DPoP key (RFC 9449 §6) or a client certificate (RFC 8705 §3).
    pub cnf: Option<Confirmation>,
    /// The organization the user signed in for.
    pub org: Option<&'a OrgClaims>,
    /// The user's groups and roles, as the client takes them.
    pub directory: Option<&'a directory::DirectoryClaims>,
}

/// A fresh token id and expiry, chosen before issuance so a code can record them atomically.
pub fn new_token_id(app: &App) -> (String, u64) {
    (crate::util::unique_token(), now() + app.config.access_token_ttl)
}

pub fn mint_access_token(app: &Issuer, spec: AccessTokenSpec<'_>, jti: String, exp: u64) -> anyhow::Result<String> {
    mint_token_with_typ(app, spec, jti, exp, ACCESS_TOKEN_TYP)
}

/// The access-token claims under another JOSE `typ` (token exchange's `jwt` token type).
pub fn mint_token_with_typ(app: &Issuer, spec: AccessTokenSpec<'_>, jti: String, exp: u64, typ: &str) -> anyhow::Result<String> {
    let client = app.client(spec.client_id);
    // A user's token for a pairwise client names the user by the client's pairwise `sub`;
    // a client's own token (client credentials: sub = client_id) names the client.
    let pairwise = client.as_deref().and_then(subject::sector).is_some() && spec.sub != spec.client_id;
    let (sub, uid) = match pairwise {
        true => (subject::subject(app, client.as_deref(), spec.sub), Some(subject::seal_user(app, spec.sub))),
        false => (spec.sub.to_string(), None),
    };
    let claims = AccessTokenClaims {
        iss: app.issuer().to_string(),
        sub,
        // RFC 9068 §3: without a resource indicator the audience is our default resource,
        // the issuer (whose userinfo endpoint these tokens are for).
        aud: if spec.audience.is_empty() { vec![app.issuer().to_string()] } else { spec.audience },
        exp,
        iat: now(),
        jti,
        client_id: spec.client_id.to_string(),
        scope: spec.scope.to_string(),
        auth_time: spec.auth_time,
        acr: spec.acr.map(str::to_string),
        sid: spec.sid.map(str::to_string),
        userinfo_claims: spec.userinfo_claims,
        grant_id: spec.grant_id.map(str::to_string),
        act: spec.act,
        may_act: spec.may_act,
        cnf: spec.cnf,
        uid,
        org_id: spec.org.map(|o| o.id.clone()),
        org_name: spec.org.map(|o| o.name.clone()),
        org_roles: spec.org.map(|o| o.roles.clone()).unwrap_or_default(),
        groups: spec.directory.map(|d| d.groups.clone()).unwrap_or_default(),
        groups_overage: spec.directory.is_some_and(|d| d.overage),
        roles: spec.directory.map(|d| d.roles.clone()).unwrap_or_default(),
    };
    match client.and_then(|c| c.meta.access_token_signing_alg.clone()) {
        Some(alg) => app.keys().sign_as(&alg, typ, &claims),
        None => app.keys().sign(typ, &claims),
    }
}

pub struct IdTokenSpec<'a> {
    pub user: &'a User,
    pub client_id: &'a str,
    pub nonce: Option<&'a str>,
    pub auth_time: u64,
    pub sid: &'a str,
    pub acr: Option<&'a str>,
    pub access_token: Option<&'a str>,
    /// The code issued beside the ID token (hybrid flow, OpenID Connect Core §3.3.2.11):
    /// its hash goes in `c_hash`.
    pub code: Option<&'a str>,
    /// Claims requested for the ID token through the `claims` parameter.
    pub requested: &'a [String],
    /// The grant the ID token was issued in: revoking the grant revokes it too (where ID
    /// tokens are accepted: token exchange).
    pub grant_id: Option<&'a str>,
    /// RFC 8176 authentication methods; empty (grants from before it was recorded): `pwd`.
    pub amr: &'a [String],
    /// The organization the user signed in for.
    pub org: Option<&'a OrgClaims>,
    /// The user's groups and roles, as the client takes them.
    pub directory: Option<&'a directory::DirectoryClaims>,
    /// CIBA push mode (CIBA Core §10.3.1): the `auth_req_id` the tokens answer, and the
    /// refresh token delivered beside them (its hash goes in `rt_hash`).
    pub ciba_push: Option<CibaPush<'a>>,
}

/// What an ID token pushed to a CIBA client says of its delivery.
#[derive(Clone, Copy)]
pub struct CibaPush<'a> {
    pub auth_req_id: &'a str,
    pub refresh_token: Option<&'a str>,
}

pub fn mint_id_token(app: &Issuer, spec: IdTokenSpec<'_>) -> anyhow::Result<String> {
    let t = now();
    let mut c = Map::new();
    for name in spec.requested {
        if let Some(v) = spec.user.claim(name) {
            c.insert(name.clone(), v);
        }
    }
    c.insert("iss".into(), app.issuer().into());
    c.insert("sub".into(), subject::subject_for(app, spec.client_id, &spec.user.id).into());
    c.insert("aud".into(), spec.client_id.into());
    c.insert("azp".into(), spec.client_id.into());
    c.insert("exp".into(), (t + app.config.id_token_ttl).into());
    c.insert("iat".into(), t.into());
    c.insert("auth_time".into(), spec.auth_time.into());
    c.insert("sid".into(), spec.sid.into());
    c.insert("amr".into(), if spec.amr.is_empty() { Value::from(vec!["pwd"]) } else { Value::from(spec.amr.to_vec()) });
    if let Some(acr) = spec.acr {
        c.insert("acr".into(), acr.into());
    }
    if let Some(nonce) = spec.nonce {
        c.insert("nonce".into(), nonce.into());
    }
    if let Some(org) = spec.org {
        org.insert_into(&mut c);
    }
    if let Some(d) = spec.directory {
        d.insert_into(&mut c);
    }
    let alg = id_token_alg(app, spec.client_id);
    if let Some(at) = spec.access_token {
        c.insert("at_hash".into(), left_half_hash_for(&alg, at).into());
    }
    if let Some(code) = spec.code {
        c.insert("c_hash".into(), left_half_hash_for(&alg, code).into());
    }
    // CIBA Core §10.3.1: a pushed ID token names its request and hashes the refresh token as
    // at_hash does the access token, so that the client can tie both to what it asked.
    if let Some(push) = spec.ciba_push {
        c.insert("urn:openid:params:jwt:claim:auth_req_id".into(), push.auth_req_id.into());
        if let Some(rt) = push.refresh_token {
            c.insert("urn:openid:params:jwt:claim:rt_hash".into(), left_half_hash_for(&alg, rt).into());
        }
    }
    // The grant the token belongs to travels in its jti (RFC 7519 §4.1.7), not in a claim of
    // our own: an ID token carries only registered claims (OIDC Core §2), and yet revoking the
    // grant still revokes it where ID tokens are accepted (token exchange).
    if let Some(g) = spec.grant_id {
        c.insert("jti".into(), id_token_jti(g).into());
    }
    app.keys().sign_as(&alg, "JWT", &Value::Object(c))
}

/// An ID token's `jti`: its grant's id, a dot, and random characters (unique per token).
fn id_token_jti(grant_id: &str) -> String {
    format!("{grant_id}.{}", b64(&crate::util::random_bytes::<9>()))
}

/// The grant named by an ID token's `jti` (`id_token_jti`); `None` for any other `jti` (ours
/// have no dot: they are base64url).
pub fn grant_of_id_token_jti(jti: &str) -> Option<&str> {
    jti.split_once('.').map(|(g, _)| g).filter(|g| !g.is_empty())
}

/// What `client_id`'s ID tokens (and logout tokens) are signed with: its registered
/// `id_token_signed_response_alg`, else RS256 (OIDC Dynamic Registration §2's default).
/// Under FAPI, which allows no RS256 (FAPI 2.0 §5.4, FAPI 1.0 Part 2 §8.6), a client that
/// registered none gets the deployment's `token_signing_alg` (`Config::validate` holds it
/// to the allowed ones).
pub fn id_token_alg(app: &Issuer, client_id: &str) -> String {
    let client = app.registry().client(client_id);
    let profile = client.as_deref().map_or(app.profile(), |c| app.profile().for_client(c));
    match (client.and_then(|c| c.meta.id_token_signed_response_alg.clone()), profile.is_fapi()) {
        (Some(alg), _) => alg,
        (None, true) => app.config.token_signing_alg.clone(),
        (None, false) => crate::keys::ALG_RS256.to_string(),
    }
}

/// OpenID Connect Core §3.1.3.6: base64url of the left half of SHA-256 of the token.
pub fn left_half_hash(token: &str) -> String {
    b64(&sha256(token.as_bytes())[..16])
}

/// The same with the hash of the ID token's `alg`: SHA-256 for the *256 algorithms; for
/// EdDSA (Ed25519), SHA-512, the hash Ed25519 itself uses (as other providers do).
pub fn left_half_hash_for(alg: &str, token: &str) -> String {
    match alg {
        "EdDSA" => {
            let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA512, token.as_bytes());
            b64(&digest.as_ref()[..32])
        }
        _ => left_half_hash(token),
    }
}

/// Verify one of our access tokens: signature by a published key, `typ`, issuer, expiry.
/// Audience and revocation are the caller's to check.
pub fn verify_access_token(app: &Issuer, token: &str) -> Result<AccessTokenClaims, VerifyError> {
    let mut v = Validation::new(Algorithm::RS256);
    v.set_issuer(&[app.issuer()]);
    v.validate_aud = false;
    v.leeway = 0;
    v.set_required_spec_claims(&["exp", "iss", "sub"]);
    app.keys().verify::<AccessTokenClaims>(token, Some(ACCESS_TOKEN_TYP), &v).map(|d| d.claims)
}

/// How long a grant's revocation entry must live from the moment of revocation: as long as
/// any token already issued with its `grant_id` (access and ID tokens) may still be presented.
pub fn grant_revocation_ttl(app: &App) -> u64 {
    app.config.access_token_ttl.max(app.config.id_token_ttl)
}

/// The TokenRevocationStore key under which a whole grant is revoked.
pub fn grant_revocation_key(grant_id: &str) -> String {
    format!("grant:{grant_id}")
}

/// The grant named by a revocation key made by `grant_revocation_key`.
pub fn grant_of_revocation_key(key: &str) -> Option<&str> {
    key.strip_prefix("grant:")
}

/// The TokenRevocationStore key under which a whole login session is revoked (logout).
pub fn session_revocation_key(sid: &str) -> String {
    format!("session:{sid}")
}

/// How long a session's revocation entry lives: as long as anything issued in the session
/// may still be presented (access and ID tokens, codes, refresh tokens without offline access).
pub fn session_revocation_ttl(app: &App) -> u64 {
    grant_revocation_ttl(app).max(app.config.refresh_token_ttl).max(app.config.code_expiry)
}

/// Whether the login session `sid` has ended (logout, or an operator ended it).
pub async fn session_ended(app: &App, tenant: TenantId, sid: &str) -> crate::db::StoreResult<bool> {
    app.stores.revocations.is_revoked(tenant, &session_revocation_key(sid)).await
}

/// OpenID Connect Core §11: a grant with `offline_access` outlives the login session it was
/// made in; every other grant of a user dies with it.
pub fn outlives_session(scope: &str) -> bool {
    crate::util::split_list(scope).any(|s| s == "offline_access")
}

/// Whether a verified access token has been revoked: by its own id, through its grant, or
/// (unless its grant outlives sessions) through the end of its login session. Every consumer
/// of access tokens asks this one question.
pub async fn is_revoked(app: &Issuer, claims: &AccessTokenClaims) -> crate::db::StoreResult<bool> {
    // A deleted client's tokens die with it (RFC 7592 §2.3): a memory lookup, no store read.
    if !app.client_is_live(&claims.client_id) {
        return Ok(true);
    }
    let revocations = &app.stores.revocations;
    if revocations.is_revoked(app.tenant.id, &claims.jti).await? {
        return Ok(true);
    }
    if let Some(g) = &claims.grant_id {
        if revocations.is_revoked(app.tenant.id, &grant_revocation_key(g)).await? {
            return Ok(true);
        }
    }
    // A token for an organization ends with the membership (a memory lookup).
    if let Some(org) = &claims.org_id {
        if !claims.subject_id(app).is_some_and(|u| org_member_at(app, org, &u, claims.iat)) {
            return Ok(true);
        }
    }
    match &claims.sid {
        Some(sid) if !outlives_session(&claims.scope) => session_ended(app, app.tenant.id, sid).await,
        _ => Ok(false),
    }
}

/// Verify any unexpired JWT we signed (access token, ID token, exchanged JWT), whatever its `typ`.
pub fn verify_our_jwt(app: &Issuer, token: &str) -> Result<Map<String, Value>, VerifyError> {
    let mut v = Validation::new(Algorithm::RS256);
    v.set_issuer(&[app.issuer()]);
    v.validate_aud = false;
    v.leeway = 0;
    v.set_required_spec_claims(&["exp", "iss", "sub"]);
    app.keys().verify::<Map<String, Value>>(token, None, &v).map(|d| d.claims)
}

/// Verify an ID token we issued, ignoring expiry (for `id_token_hint`, OpenID Connect Core §3.1.2.1).
pub fn verify_id_token_hint(app: &Issuer, token: &str) -> Result<Map<String, Value>, VerifyError> {
    let mut v = Validation::new(Algorithm::RS256);
    v.set_issuer(&[app.issuer()]);
    v.validate_aud = false;
    v.validate_exp = false;
    v.set_required_spec_claims(&["iss", "sub"]);
    app.keys().verify::<Map<String, Value>>(token, None, &v).map(|d| d.claims)
}

#[cfg(test)]
mod tests {
    #[test]
    fn at_hash_matches_oidc_core_example() {
        // OpenID Connect Core, Appendix A.3 (id_token token): at_hash of the example token.
        assert_eq!(super::left_half_hash("jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y"), "77QmUPtjPfzWtF2AnpK9RQ");
    }
}
