//! Who may use the admin API (issue 31): the deployment's `AUTHRIM_ADMIN_TOKEN` everywhere,
//! and a tenant's own admin credentials (`registry::admin_credentials`) at that tenant's admin
//! API only; and the API that manages those credentials, `/admin/credentials`.
//!
//! A credential is looked up in the database at every request (the admin API is not a hot
//! path), so that one revoked or expired on any node is refused at once on every node.

use super::operations::Actor;
use crate::app::AppState;
use crate::error::{Challenge, OAuthError};
use crate::http::params::Body;
use crate::registry::admin_credentials::{self, Credential, PREFIX};
use crate::tenant::Issuer;
use axum::extract::{FromRequestParts, Path, Request};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/admin/credentials", get(list_credentials).post(create_credential))
        .route("/admin/credentials/{id}", axum::routing::delete(revoke_credential))
}

fn refused(why: &'static str) -> OAuthError {
    OAuthError::invalid_token(why).with_challenge(Challenge::Bearer)
}

/// The admin API's guard: the actor the bearer token is, put in the request for the handlers
/// (and their audit events). Without `AUTHRIM_ADMIN_TOKEN` the API stays off (404), as it
/// always was, for every request but one that presents a tenant credential: a deployment may
/// run on tenant credentials alone (made with the CLI), and one holding a revoked credential
/// is told so (401) rather than that the API does not exist.
pub(crate) async fn require_admin(app: Issuer, mut req: Request, next: Next) -> Response {
    match authenticate(&app, req.headers()).await {
        Ok(actor) => {
            req.extensions_mut().insert(actor);
            next.run(req).await
        }
        Err(e) => e.into_response(),
    }
}

async fn authenticate(app: &Issuer, headers: &axum::http::HeaderMap) -> Result<Actor, OAuthError> {
    let deployment = app.config.admin_token.as_deref().filter(|t| !t.is_empty());
    let presented = headers.get(axum::http::header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "));
    let credential = presented.filter(|t| t.starts_with(PREFIX));
    if deployment.is_none() && credential.is_none() {
        return Err(OAuthError::not_found("the admin API is disabled (set AUTHRIM_ADMIN_TOKEN, or use a tenant's admin credential)"));
    }
    if deployment.is_some_and(|expected| crate::http::bearer_matches(headers, expected)) {
        return Ok(Actor::ApiToken);
    }
    let Some(token) = credential else { return Err(refused("admin token required")) };
    let (tenant, token) = (app.tenant.id, token.to_string());
    // Only this tenant's rows are looked at: another tenant's credential is unknown here.
    let found = app.db.read(move |sql| admin_credentials::authenticate(sql, tenant, &token)).await?;
    match found {
        None => Err(refused("unknown, revoked or expired admin credential for this tenant")),
        // A provisioning system's credential opens the SCIM service, not the admin API.
        Some(c) if !c.has_scope(admin_credentials::ADMIN_SCOPE) => Err(refused("this credential is not good for the admin API (its scopes do not include admin)")),
        Some(c) => Ok(Actor::Credential(c.id)),
    }
}

/// The actor `require_admin` found. Outside the admin API (a bug of ours) it is refused, not
/// taken for anyone.
impl<S: Send + Sync> FromRequestParts<S> for Actor {
    type Rejection = OAuthError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, OAuthError> {
        parts.extensions.get::<Actor>().cloned().ok_or_else(|| refused("admin token required"))
    }
}

impl Actor {
    /// For what only the deployment's administrator may do (the tenants): a tenant's
    /// credential is refused as a token not good here, whatever its tenant.
    pub(crate) fn deployment_admin(&self) -> Result<(), OAuthError> {
        match self {
            Actor::Credential(_) | Actor::Directory(_) => Err(refused("a tenant's admin credential does not manage tenants")),
            Actor::ApiToken | Actor::Console(_) => Ok(()),
        }
    }
}

/// A new credential.
#[derive(serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewCredential {
    /// A label for people (1-100 characters): who or what holds it.
    pub name: String,
    /// Seconds it stays valid; absent: until revoked.
    pub expires_in: Option<u64>,
    /// What it may do: `admin` (the tenant's admin API, the default) and/or `scim` (the
    /// tenant's SCIM service only).
    #[serde(default)]
    pub scopes: Option<Vec<String>>,
}

/// Create a credential of `app`'s tenant (the admin API and the console); its token is in
/// the answer, once.
pub(crate) async fn make(app: &Issuer, actor: &Actor, new: NewCredential) -> Result<(Credential, String), OAuthError> {
    admin_credentials::validate_name(&new.name).map_err(OAuthError::invalid_request)?;
    let scopes = admin_credentials::validate_scopes(new.scopes.as_deref()).map_err(OAuthError::invalid_request)?;
    let expires_at = match new.expires_in {
        None => None,
        Some(0) => return Err(OAuthError::invalid_request("expires_in must be positive")),
        Some(s) => Some(crate::util::now().saturating_add(s)),
    };
    let tenant = app.tenant.id;
    let (credential, token) = app.db.write(move |sql| admin_credentials::create(sql, tenant, &new.name, &scopes, expires_at)).await?;
    app.audit(actor.event("admin_credential_created", json!({"id": credential.id, "name": credential.name, "scopes": credential.scopes, "expires_at": expires_at}))).await;
    Ok((credential, token))
}

/// Revoke a credential of `app`'s tenant: refused from the next request on, on every node.
pub(crate) async fn revoke_one(app: &Issuer, actor: &Actor, id: String) -> Result<Credential, OAuthError> {
    let tenant = app.tenant.id;
    let credential = app.db.write(move |sql| admin_credentials::revoke(sql, tenant, &id)).await?.ok_or_else(|| OAuthError::not_found("no such credential"))?;
    app.audit(actor.event("admin_credential_revoked", json!({"id": credential.id, "name": credential.name}))).await;
    Ok(credential)
}

type AdminResult = Result<Response, OAuthError>;

/// This tenant's admin credentials, revoked ones too (never a secret).
#[utoipa::path(get, path = "/admin/credentials", tag = "credentials", responses((status = 200, description = "`{\"credentials\": [...]}`", body = Object), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn list_credentials(app: Issuer) -> AdminResult {
    let tenant = app.tenant.id;
    let all = app.db.read(move |sql| admin_credentials::list(sql, tenant)).await?;
    Ok(Json(json!({ "credentials": all })).into_response())
}

/// Create an admin credential of this tenant: its `token` (`atk_…`) is in the answer, once,
/// and works on this tenant's admin API only (never on `/admin/tenants`).
#[utoipa::path(post, path = "/admin/credentials", tag = "credentials", request_body = NewCredential, responses((status = 201, description = "the credential, with its `token`", body = Object), (status = 400, description = "a bad name or expiry"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn create_credential(app: Issuer, actor: Actor, Body(body): Body) -> AdminResult {
    let (credential, token) = make(&app, &actor, super::admin::parse(&body)?).await?;
    let mut v = serde_json::to_value(&credential).unwrap_or_default();
    v["token"] = token.into();
    let mut res = (StatusCode::CREATED, Json(v)).into_response();
    res.headers_mut().insert(axum::http::header::CACHE_CONTROL, axum::http::HeaderValue::from_static("no-store"));
    Ok(res)
}

/// Revoke an admin credential of this tenant: refused at once, on every node; it stays
/// listed with its `revoked_at`.
#[utoipa::path(delete, path = "/admin/credentials/{id}", tag = "credentials", params(("id" = String, Path, description = "the credential's id")), responses((status = 200, description = "the revoked credential", body = Object), (status = 404, description = "no such credential at this tenant"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn revoke_credential(app: Issuer, actor: Actor, Path(id): Path<String>) -> AdminResult {
    let credential = revoke_one(&app, &actor, id).await?;
    Ok(Json(credential).into_response())
}
