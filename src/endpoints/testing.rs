//! The test-only bulk interface, for load-test seeders: create many clients, users and
//! sessions, and mint codes and tokens (valid, expired, revoked) without a browser.
//!
//! NEVER FOR PRODUCTION. Routed only when `AUTHRIM_ENABLE_TEST_ENDPOINTS=true`, behind the
//! admin token; the server refuses to start with it on a non-localhost issuer unless
//! `AUTHRIM_FORCE_TEST_ENDPOINTS=true` (config.rs).

use crate::app::AppState;
use crate::error::OAuthError;
use crate::http::params::Body;
use crate::registry::{clients, users, ClientInput, User};
use crate::stores::{CodeGrant, NewFamily, Session};
use crate::tenant::Issuer;
use crate::tokens::{self, AccessTokenSpec, ACR_PASSWORD};
use crate::util::{now, random_token};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;

const MAX_BULK: usize = 100_000;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/test/bulk/clients", post(bulk_clients))
        .route("/test/bulk/users", post(bulk_users))
        .route("/test/bulk/sessions", post(bulk_sessions))
        .route("/test/bulk/codes", post(bulk_codes))
        .route("/test/bulk/tokens", post(bulk_tokens))
        // Seeding bodies name thousands of users; the global limit stays for everything else.
        .layer(axum::extract::DefaultBodyLimit::max(32 * 1024 * 1024))
}

type TestResult = Result<Response, OAuthError>;

/// Run `f` for every item at once and collect the results in order: concurrent store writes
/// share group commits, so seeding 100,000 codes costs a few hundred fsyncs, not 100,000.
async fn all_at_once<T, R, F, Fut>(app: &Issuer, items: Vec<T>, f: F) -> Result<Vec<R>, OAuthError>
where
    T: Send + 'static,
    R: Send + 'static,
    F: Fn(Issuer, T) -> Fut,
    Fut: std::future::Future<Output = Result<R, OAuthError>> + Send + 'static,
{
    let mut set = tokio::task::JoinSet::new();
    for (i, item) in items.into_iter().enumerate() {
        let fut = f(app.clone(), item);
        set.spawn(async move { (i, fut.await) });
    }
    let mut out: Vec<Option<R>> = Vec::new();
    while let Some(joined) = set.join_next().await {
        let (i, r) = joined.map_err(|e| OAuthError::internal("seeding task", e))?;
        if out.len() <= i {
            out.resize_with(i + 1, || None);
        }
        out[i] = Some(r?);
    }
    Ok(out.into_iter().flatten().collect())
}

fn parse<T: for<'de> Deserialize<'de>>(body: &[u8]) -> Result<T, OAuthError> {
    serde_json::from_slice(body).map_err(|e| OAuthError::invalid_request(format!("invalid JSON body: {e}")))
}

fn count(n: usize) -> Result<usize, OAuthError> {
    if n == 0 || n > MAX_BULK {
        return Err(OAuthError::invalid_request(format!("count must be 1..={MAX_BULK}")));
    }
    Ok(n)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClientsReq {
    count: usize,
    #[serde(default = "default_client_prefix")]
    prefix: String,
    /// Client metadata shared by every client created (as for `POST /admin/clients`).
    #[serde(default)]
    client: ClientInput,
}

fn default_client_prefix() -> String {
    "load-client".into()
}

/// `{count, prefix, client: {…metadata}}` → `{clients: [{client_id, client_secret}]}`. Client ids
/// are `{prefix}-{i}`; existing ones are replaced (with a new secret).
async fn bulk_clients(app: Issuer, Body(body): Body) -> TestResult {
    let req: ClientsReq = parse(&body)?;
    let mut out = Vec::new();
    for i in 0..count(req.count)? {
        let mut input = req.client.clone();
        input.client_id = Some(format!("{}-{i}", req.prefix));
        let (client, secret) = clients::new_client(input, app.vault()).map_err(|e| OAuthError::invalid_request(e).code_as("invalid_client_metadata"))?;
        out.push(json!({"client_id": client.id(), "client_secret": secret}));
        app.registry().save_client(client).await?;
    }
    Ok(Json(json!({ "clients": out })).into_response())
}

#[derive(Deserialize)]
struct UsersReq {
    count: usize,
    #[serde(default = "default_user_prefix")]
    prefix: String,
    password: String,
}

fn default_user_prefix() -> String {
    "load-user".into()
}

/// `{count, prefix, password}` → `{users: [{id, username}]}`. One Argon2 hash serves them all.
async fn bulk_users(app: Issuer, Body(body): Body) -> TestResult {
    let req: UsersReq = parse(&body)?;
    let n = count(req.count)?;
    let password = req.password.clone();
    let hash = tokio::task::spawn_blocking(move || users::hash_password(&password))
        .await
        .map_err(|e| OAuthError::internal("hash", e))?
        .map_err(OAuthError::invalid_request)?;
    let users: Vec<User> = (0..n)
        .map(|i| {
            let username = format!("{}-{i}", req.prefix);
            let existing = app.registry().user_by_login(&username);
            User {
                tenant: app.tenant.id,
                id: existing.map(|u| u.id.clone()).unwrap_or_else(|| random_token()[..22].to_string()),
                username,
                password_hash: hash.clone(),
                claims: serde_json::from_value(json!({"email": format!("{}-{i}@example.test", req.prefix), "email_verified": true, "name": format!("Load User {i}")}))
                    .unwrap_or_default(),
                disabled: false,
                updated_at: now(),
                roles: Vec::new(),
                tokens_cutoff: 0,
                created_at: now(),
                ..Default::default()
            }
        })
        .collect();
    let out = all_at_once(&app, users, |app, user: User| async move {
        let v = json!({"id": user.id, "username": user.username});
        app.registry().save_user(user).await?;
        Ok(v)
    })
    .await?;
    Ok(Json(json!({ "users": out })).into_response())
}

#[derive(Deserialize)]
struct SessionsReq {
    user_ids: Vec<String>,
    /// Sessions per user (default 1).
    #[serde(default = "one")]
    per_user: usize,
    /// Also record consent of these users to this client for `scope`.
    consent_client_id: Option<String>,
    #[serde(default = "default_scope")]
    scope: String,
}

fn default_scope() -> String {
    "openid profile email".into()
}

/// `{user_ids, consent_client_id?, scope?}` → `{sessions: [{user_id, cookie}]}`: session
/// cookie values (`authrim_session`) for silent-authentication load.
async fn bulk_sessions(app: Issuer, Body(body): Body) -> TestResult {
    let req: SessionsReq = parse(&body)?;
    count(req.user_ids.len() * req.per_user)?;
    for uid in &req.user_ids {
        user(&app, uid)?;
    }
    let (consent, scope) = (req.consent_client_id.clone(), req.scope.clone());
    let owners: Vec<String> = req.user_ids.iter().flat_map(|u| std::iter::repeat_n(u.clone(), req.per_user)).collect();
    let out = all_at_once(&app, owners, move |app, uid: String| {
        let (consent, scope) = (consent.clone(), scope.clone());
        async move {
            let session = Session::new(&uid, random_token(), now(), vec!["pwd".into()], ACR_PASSWORD);
            let cookie = app.stores.sessions.create(app.tenant.id, session, app.config.session_ttl).await?;
            if let Some(c) = &consent {
                app.registry().remember_consent(&uid, c, &scope).await?;
            }
            Ok(json!({"user_id": uid, "cookie": cookie}))
        }
    })
    .await?;
    Ok(Json(json!({ "sessions": out })).into_response())
}

fn user(app: &Issuer, id: &str) -> Result<std::sync::Arc<User>, OAuthError> {
    app.registry().user(id).ok_or_else(|| OAuthError::invalid_request(format!("no user {id:?}")))
}

fn client(app: &Issuer, id: &str) -> Result<std::sync::Arc<clients::Client>, OAuthError> {
    app.registry().client(id).ok_or_else(|| OAuthError::invalid_request(format!("no client {id:?}")))
}

#[derive(Deserialize)]
struct CodesReq {
    client_id: String,
    redirect_uri: String,
    user_ids: Vec<String>,
    /// Codes per user.
    #[serde(default = "one")]
    per_user: usize,
    #[serde(default = "default_scope")]
    scope: String,
    code_challenge: Option<String>,
    nonce: Option<String>,
    /// Code lifetime, seconds (the reference extended it for pre-seeding).
    expires_in: Option<u64>,
}

fn one() -> usize {
    1
}

/// `{client_id, redirect_uri, user_ids, per_user?, scope?, code_challenge?, expires_in?}` → `{codes: [...]}`.
async fn bulk_codes(app: Issuer, Body(body): Body) -> TestResult {
    let req: CodesReq = parse(&body)?;
    count(req.user_ids.len() * req.per_user)?;
    let c = client(&app, &req.client_id)?;
    if !c.has_redirect_uri(&req.redirect_uri) {
        return Err(OAuthError::invalid_request("redirect_uri is not registered for this client"));
    }
    let lifetime = req.expires_in.unwrap_or(app.config.code_expiry);
    let mut grants = Vec::new();
    for uid in &req.user_ids {
        user(&app, uid)?;
        for _ in 0..req.per_user {
            grants.push(CodeGrant {
                client_id: req.client_id.clone(),
                redirect_uri: req.redirect_uri.clone(),
                user_id: uid.clone(),
                scope: req.scope.clone(),
                nonce: req.nonce.clone(),
                code_challenge: req.code_challenge.clone(),
                auth_time: now(),
                sid: random_token(),
                acr: Some(ACR_PASSWORD.into()),
                claims: None,
                dpop_jkt: None,
                resources: vec![],
                amr: vec![],
                org: None,
            });
        }
    }
    let codes = all_at_once(&app, grants, move |app, grant| async move { Ok(app.stores.codes.issue(app.tenant.id, grant, lifetime).await?) }).await?;
    Ok(Json(json!({ "codes": codes })).into_response())
}

#[derive(Deserialize, PartialEq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum Kind {
    Valid,
    Expired,
    Revoked,
}

#[derive(Deserialize)]
struct TokensReq {
    client_id: String,
    /// Users the tokens are for; absent: client tokens (`sub` = client), as client credentials.
    #[serde(default)]
    user_ids: Vec<String>,
    #[serde(default = "one")]
    per_user: usize,
    /// Number of client tokens when `user_ids` is empty.
    count: Option<usize>,
    kind: Kind,
    #[serde(default = "default_scope")]
    scope: String,
    #[serde(default)]
    audience: Vec<String>,
    /// "access_token" (default) or "refresh_token".
    #[serde(default = "access")]
    token_type: String,
    /// RFC 8693 §4.4 `may_act` to put in access tokens.
    may_act: Option<serde_json::Value>,
}

fn access() -> String {
    "access_token".into()
}

/// Mint tokens: `{client_id, user_ids | count, kind: valid|expired|revoked, scope?, audience?,
/// token_type?: access_token|refresh_token}` → `{tokens: [...]}`.
async fn bulk_tokens(app: Issuer, Body(body): Body) -> TestResult {
    let req: TokensReq = parse(&body)?;
    let c = client(&app, &req.client_id)?;
    let subjects: Vec<Option<String>> = if req.user_ids.is_empty() {
        vec![None; count(req.count.unwrap_or(1))?]
    } else {
        count(req.user_ids.len() * req.per_user)?;
        req.user_ids.iter().flat_map(|u| std::iter::repeat_n(Some(u.clone()), req.per_user)).collect()
    };
    if !["access_token", "refresh_token"].contains(&req.token_type.as_str()) {
        return Err(OAuthError::invalid_request(format!("token_type {:?}", req.token_type)));
    }
    let req = std::sync::Arc::new(req);
    let out = all_at_once(&app, subjects, move |app, sub: Option<String>| {
        let (c, req) = (c.clone(), req.clone());
        async move {
            let token = if req.token_type == "access_token" {
                mint_access(&app, &c, sub.as_deref(), &req)?
            } else {
                mint_refresh(&app, &c, sub.as_deref(), &req).await?
            };
            if req.kind == Kind::Revoked {
                revoke(&app, &token).await?;
            }
            Ok(token)
        }
    })
    .await?;
    Ok(Json(json!({ "tokens": out })).into_response())
}

fn mint_access(app: &Issuer, c: &clients::Client, sub: Option<&str>, req: &TokensReq) -> Result<String, OAuthError> {
    if let Some(u) = sub {
        user(app, u)?;
    }
    let (jti, exp) = tokens::new_token_id(app);
    let exp = if req.kind == Kind::Expired { now().saturating_sub(60) } else { exp };
    let spec = AccessTokenSpec {
        sub: sub.unwrap_or(c.id()),
        client_id: c.id(),
        scope: &req.scope,
        auth_time: sub.map(|_| now()),
        acr: None,
        sid: None,
        userinfo_claims: Vec::new(),
        grant_id: None,
        audience: req.audience.clone(),
        act: None,
        may_act: req.may_act.clone(),
        cnf: None,
        org: None,
        directory: None,
    };
    tokens::mint_access_token(app, spec, jti, exp).map_err(|e| OAuthError::internal("signing", e))
}

async fn mint_refresh(app: &Issuer, c: &clients::Client, sub: Option<&str>, req: &TokensReq) -> Result<String, OAuthError> {
    let uid = sub.ok_or_else(|| OAuthError::invalid_request("refresh tokens need user_ids"))?;
    user(app, uid)?;
    if req.kind == Kind::Expired {
        return Err(OAuthError::invalid_request("expired refresh tokens are not offered"));
    }
    let new = NewFamily {
        user_id: uid.into(),
        client_id: c.id().into(),
        scope: req.scope.clone(),
        auth_time: now(),
        sid: random_token(),
        acr: None,
        userinfo_claims: Vec::new(),
        jkt: None,
        x5t: None,
        resources: vec![],
        amr: vec![],
        org: None,
    };
    Ok(app.stores.refresh.create(app.tenant.id, &crate::stores::refresh::new_family_id(), new).await?)
}

/// Revoke as the revocation endpoint would (the reference's seeders used its API).
async fn revoke(app: &Issuer, token: &str) -> Result<(), OAuthError> {
    match super::revocation::classify(app, token, None).await? {
        super::revocation::Known::Access(c) => app.stores.revocations.revoke(app.tenant.id, &c.jti, c.exp).await?,
        super::revocation::Known::Refresh(f) => crate::grants::refresh_token::revoke_family(app, &f, "test_seed").await?,
        super::revocation::Known::Neither => {}
    }
    Ok(())
}
