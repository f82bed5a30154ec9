//! The admin API: clients and users over JSON, behind `Authorization: Bearer $AUTHRIM_ADMIN_TOKEN`
//! or one of the tenant's admin credentials (`admin_credentials`, which says who may do what).
//! Off (404) when no admin token is configured, but to a tenant's credential.

use crate::app::AppState;
use crate::error::OAuthError;
use crate::http::params::Body;
use super::operations::{self, Actor};
use crate::registry::{clients, ClientInput, UserInput};
use crate::tenant::Issuer;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

pub fn router(app: AppState) -> Router<AppState> {
    let mut r = Router::new();
    if app.config.enable_test_endpoints {
        tracing::warn!("TEST-ONLY BULK ENDPOINTS ENABLED (/test/bulk/*): never run this in production");
        r = r.merge(super::testing::router());
    }
    r
        .route("/admin/clients", get(list_clients).post(create_client))
        .route("/admin/clients/{id}", get(show_client).patch(update_client).put(update_client).delete(delete_client))
        .route("/admin/clients/{id}/secret", post(rotate_secret))
        .route("/admin/users", get(list_users).post(create_user))
        .route("/admin/users/{id}", get(show_user).patch(update_user).put(update_user).delete(delete_user))
        .route("/admin/users/{id}/sessions", get(list_sessions).delete(end_all_sessions))
        .route("/admin/users/{id}/sessions/{sid}", axum::routing::delete(end_one_session))
        .route("/admin/users/{id}/consents/{client_id}", axum::routing::delete(withdraw_consent))
        .route("/admin/audit", get(list_audit))
        .route("/admin/registration-tokens", post(create_registration_token))
        .merge(super::admin_factors::routes())
        .merge(super::admin_tenants::routes(app.config.tenant_settings_body_limit()))
        .merge(super::admin_credentials::routes())
        .merge(super::admin_organizations::routes())
        .merge(super::admin_org_invitations::routes())
        .merge(super::admin_directory::routes())
        .merge(super::admin_provisioning::routes())
        .merge(super::admin_saml::routes())
        .layer(axum::middleware::from_fn_with_state(app, super::admin_credentials::require_admin))
}

pub(crate) fn parse<T: DeserializeOwned>(body: &[u8]) -> Result<T, OAuthError> {
    serde_json::from_slice(body).map_err(|e| OAuthError::invalid_request(format!("invalid JSON body: {e}")))
}

pub use super::operations::check_remote_uris;

fn client_json(c: &clients::Client, secret: Option<String>) -> Value {
    let mut v = serde_json::to_value(&c.meta).unwrap_or_default();
    if let Some(s) = secret {
        v["client_secret"] = Value::String(s);
    }
    v
}

type AdminResult = Result<Response, OAuthError>;

/// An initial access token's terms (RFC 7591 §3).
#[derive(serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RegistrationTokenRequest {
    /// How many clients may register with it (1-100000).
    #[serde(default = "one")]
    #[schema(default = 1)]
    max_uses: u32,
    /// Seconds it stays valid (at most a year).
    #[serde(default = "a_day")]
    #[schema(default = 86400)]
    expires_in: u64,
}

fn one() -> u32 {
    1
}
fn a_day() -> u64 {
    86_400
}

/// An initial access token for dynamic registration (RFC 7591 §3): `{"max_uses": 1,
/// "expires_in": 86400}` by default; the token is shown once.
#[utoipa::path(post, path = "/admin/registration-tokens", tag = "registration", request_body(content = RegistrationTokenRequest, description = "optional: the defaults when empty"), responses((status = 201, description = "`initial_access_token`, `max_uses`, `expires_at`", body = Object), (status = 400, description = "terms out of range"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn create_registration_token(app: Issuer, actor: Actor, Body(body): Body) -> AdminResult {
    let req: RegistrationTokenRequest = if body.is_empty() { parse(b"{}")? } else { parse(&body)? };
    if req.max_uses == 0 || req.max_uses > 100_000 || req.expires_in == 0 || req.expires_in > 366 * 86_400 {
        return Err(OAuthError::invalid_request("max_uses must be 1-100000 and expires_in 1 second to a year"));
    }
    let (expires_at, tenant) = (crate::util::now() + req.expires_in, app.tenant.id);
    let token = app.db.write(move |sql| crate::registry::initial_access::create(sql, tenant, req.max_uses, expires_at)).await?;
    app.audit(actor.event("initial_access_token_created", json!({"max_uses": req.max_uses, "expires_at": expires_at}))).await;
    Ok((StatusCode::CREATED, Json(json!({"initial_access_token": token, "max_uses": req.max_uses, "expires_at": expires_at}))).into_response())
}

/// Every registered client (no secrets).
#[utoipa::path(get, path = "/admin/clients", tag = "clients", responses((status = 200, description = "`{\"clients\": [...]}`", body = Object), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn list_clients(app: Issuer) -> AdminResult {
    let list: Vec<Value> = app.registry().list_clients().iter().map(|c| client_json(c, None)).collect();
    Ok(Json(json!({ "clients": list })).into_response())
}

/// Register a client; a confidential client's secret is in the answer, once.
#[utoipa::path(post, path = "/admin/clients", tag = "clients", request_body = ClientInput, responses((status = 201, description = "the client, with `client_secret` if it has one", body = Object), (status = 400, description = "`invalid_client_metadata`"), (status = 409, description = "the client id is taken"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn create_client(app: Issuer, actor: Actor, Body(body): Body) -> AdminResult {
    let (client, secret) = operations::create_client(&app, &actor, parse(&body)?).await?;
    Ok((StatusCode::CREATED, Json(client_json(&client, secret))).into_response())
}

/// One client.
#[utoipa::path(get, path = "/admin/clients/{id}", tag = "clients", params(("id" = String, Path, description = "the client id")), responses((status = 200, description = "the client", body = Object), (status = 404, description = "no such client"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn show_client(app: Issuer, Path(id): Path<String>) -> AdminResult {
    let c = app.registry().client(&id).ok_or_else(|| OAuthError::not_found("no such client"))?;
    Ok(Json(client_json(&c, None)).into_response())
}

/// Change a client: absent fields keep their value (PUT is taken as the same).
#[utoipa::path(patch, path = "/admin/clients/{id}", tag = "clients", params(("id" = String, Path, description = "the client id")), request_body = ClientInput, responses((status = 200, description = "the client", body = Object), (status = 400, description = "`invalid_client_metadata`"), (status = 404, description = "no such client"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn update_client(app: Issuer, actor: Actor, Path(id): Path<String>, Body(body): Body) -> AdminResult {
    let (client, secret) = operations::update_client(&app, &actor, &id, parse(&body)?).await?;
    Ok(Json(client_json(&client, secret)).into_response())
}

/// A new secret for a confidential client, shown once; the old one stops working.
#[utoipa::path(post, path = "/admin/clients/{id}/secret", tag = "clients", params(("id" = String, Path, description = "the client id")), responses((status = 200, description = "`client_id`, `client_secret`", body = Object), (status = 404, description = "no such client"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn rotate_secret(app: Issuer, actor: Actor, Path(id): Path<String>) -> AdminResult {
    let (client, secret) = operations::rotate_secret(&app, &actor, &id).await?;
    Ok(Json(client_json(&client, Some(secret))).into_response())
}

/// Delete a client; its tokens stop being honoured.
#[utoipa::path(delete, path = "/admin/clients/{id}", tag = "clients", params(("id" = String, Path, description = "the client id")), responses((status = 204, description = "deleted"), (status = 404, description = "no such client"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn delete_client(app: Issuer, actor: Actor, Path(id): Path<String>) -> AdminResult {
    operations::delete_client(&app, &actor, &id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct AuditQuery {
    /// The most events returned (default 100, at most 10000).
    limit: Option<u32>,
    /// Only events of this kind (`login_failure`, `factor_enrolled`, …).
    event: Option<String>,
    /// Only events about this user: username, e-mail or id (an unknown one: no events).
    user: Option<String>,
    /// Only events of this client (its id).
    client: Option<String>,
}

/// Security events, newest first; each with `at` (seconds since the epoch) and `time` (the
/// same, ISO 8601 UTC).
#[utoipa::path(get, path = "/admin/audit", tag = "audit", params(AuditQuery), responses((status = 200, description = "`{\"events\": [...]}`", body = Object), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn list_audit(app: Issuer, axum::extract::Query(q): axum::extract::Query<AuditQuery>) -> AdminResult {
    // Make events recorded just before this call visible.
    app.audit.flush().await;
    let limit = q.limit.unwrap_or(100).min(10_000);
    // A username or e-mail is resolved here; an unknown one is taken as an id (a deleted
    // user's events stay findable) and so matches nothing else.
    let user_id = q.user.as_deref().map(|u| app.registry().find_user(u).map_or_else(|| u.to_string(), |found| found.id.clone()));
    let filter = crate::audit::Filter { tenant: app.tenant.id, limit, event: q.event, user_id, client_id: q.client, since: None };
    let events = app.db.read(move |sql| crate::audit::list_filtered(sql, &filter)).await?;
    Ok(Json(json!({ "events": events })).into_response())
}

/// Every user (never a password hash).
#[utoipa::path(get, path = "/admin/users", tag = "users", responses((status = 200, description = "`{\"users\": [...]}`", body = Object), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn list_users(app: Issuer) -> AdminResult {
    let list: Vec<Value> = app.registry().list_users().iter().map(|u| serde_json::to_value(u.as_ref()).unwrap_or_default()).collect();
    Ok(Json(json!({ "users": list })).into_response())
}

/// Create a user.
#[utoipa::path(post, path = "/admin/users", tag = "users", request_body = UserInput, responses((status = 201, description = "the user", body = Object), (status = 400, description = "invalid input"), (status = 409, description = "the username or e-mail is taken"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn create_user(app: Issuer, actor: Actor, Body(body): Body) -> AdminResult {
    let user = operations::create_user(&app, &actor, parse(&body)?).await?;
    Ok((StatusCode::CREATED, Json(user)).into_response())
}

/// One user.
#[utoipa::path(get, path = "/admin/users/{id}", tag = "users", params(("id" = String, Path, description = "the user id")), responses((status = 200, description = "the user", body = Object), (status = 404, description = "no such user"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn show_user(app: Issuer, Path(id): Path<String>) -> AdminResult {
    let u = app.registry().user(&id).ok_or_else(|| OAuthError::not_found("no such user"))?;
    Ok(Json(u.as_ref().clone()).into_response())
}

/// Change a user: absent fields keep their value, a `null` claim removes it (PUT is taken as the same).
#[utoipa::path(patch, path = "/admin/users/{id}", tag = "users", params(("id" = String, Path, description = "the user id")), request_body = UserInput, responses((status = 200, description = "the user", body = Object), (status = 404, description = "no such user"), (status = 409, description = "the username or e-mail is taken"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn update_user(app: Issuer, actor: Actor, Path(id): Path<String>, Body(body): Body) -> AdminResult {
    let user = operations::update_user(&app, &actor, &id, parse(&body)?).await?;
    Ok(Json(user).into_response())
}

/// Delete a user; their sessions end and their tokens stop being honoured.
#[utoipa::path(delete, path = "/admin/users/{id}", tag = "users", params(("id" = String, Path, description = "the user id")), responses((status = 204, description = "deleted"), (status = 404, description = "no such user"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn delete_user(app: Issuer, actor: Actor, Path(id): Path<String>) -> AdminResult {
    operations::delete_user(&app, &actor, &id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// A user's live sessions: when, from where, and which applications took part.
/// A user's sessions.
#[utoipa::path(get, path = "/admin/users/{id}/sessions", tag = "sessions", params(("id" = String, Path, description = "the user id")), responses((status = 200, description = "`{\"sessions\": [...]}`", body = Object), (status = 404, description = "no such user"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn list_sessions(app: Issuer, Path(id): Path<String>) -> AdminResult {
    app.registry().user(&id).ok_or_else(|| OAuthError::not_found("no such user"))?;
    let sessions = app.stores.sessions.of_user(app.tenant.id, &id).await?;
    let list: Vec<Value> = sessions
        .iter()
        .map(|s| {
            json!({
                "sid": s.sid, "created_at": s.created_at, "auth_time": s.auth_time, "amr": s.amr, "acr": s.acr,
                "address": s.address, "user_agent": s.user_agent, "clients": s.clients,
            })
        })
        .collect();
    Ok(Json(json!({ "sessions": list })).into_response())
}

/// End every session of a user, with the same notifications as a logout.
/// End every session of a user, with the same back-channel notifications as a logout.
#[utoipa::path(delete, path = "/admin/users/{id}/sessions", tag = "sessions", params(("id" = String, Path, description = "the user id")), responses((status = 200, description = "how many ended", body = Object), (status = 404, description = "no such user"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn end_all_sessions(app: Issuer, actor: Actor, Path(id): Path<String>) -> AdminResult {
    let ended = operations::end_sessions(&app, &actor, &id, None).await?;
    Ok(Json(json!({ "ended": ended })).into_response())
}

/// End one session of a user.
#[utoipa::path(delete, path = "/admin/users/{id}/sessions/{sid}", tag = "sessions", params(("id" = String, Path, description = "the user id"), ("sid" = String, Path, description = "the session id")), responses((status = 204, description = "ended"), (status = 404, description = "no such user or session"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn end_one_session(app: Issuer, actor: Actor, Path((id, sid)): Path<(String, String)>) -> AdminResult {
    operations::end_sessions(&app, &actor, &id, Some(&sid)).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Withdraw a user's consent to an application: forgotten, and its refresh tokens revoked.
/// Withdraw a user's consent to a client; its refresh tokens are revoked.
#[utoipa::path(delete, path = "/admin/users/{id}/consents/{client_id}", tag = "users", params(("id" = String, Path, description = "the user id"), ("client_id" = String, Path, description = "the client id")), responses((status = 204, description = "withdrawn"), (status = 404, description = "no such user"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn withdraw_consent(app: Issuer, Path((id, client_id)): Path<(String, String)>) -> AdminResult {
    app.registry().user(&id).ok_or_else(|| OAuthError::not_found("no such user"))?;
    let done = crate::consent::withdraw(&app, app.tenant.id, &id, &client_id, "operator").await?;
    if !done.consent && done.families == 0 {
        return Err(OAuthError::not_found("this user has no consent or grant at this client"));
    }
    Ok(Json(json!({ "consent_forgotten": done.consent, "families_revoked": done.families })).into_response())
}
