//! The admin API for users' second factors: list, remove one, enrol a TOTP factor for a user (its secret
//! and `otpauth://` URI shown once, for the user's authenticator app), make a new set of
//! recovery codes (shown once), and reset them all. Behind the admin token or the tenant's credentials (`admin::router`).

use crate::app::AppState;
use crate::endpoints::operations::{self, Actor};
use crate::error::OAuthError;
use crate::factors::{self, recovery, totp};
use crate::tenant::Issuer;
use axum::body::Bytes;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;

type AdminResult = Result<Response, OAuthError>;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/admin/users/{id}/factors", get(list).delete(reset))
        .route("/admin/users/{id}/factors/totp", post(enrol_totp))
        .route("/admin/users/{id}/factors/{factor_id}", axum::routing::delete(remove))
        .route("/admin/users/{id}/recovery-codes", post(new_recovery_codes))
}

fn user(app: &crate::tenant::Issuer, id: &str) -> Result<std::sync::Arc<crate::registry::User>, OAuthError> {
    app.registry().user(id).ok_or_else(|| OAuthError::not_found("no such user"))
}

/// A user's second factors (never their secrets) and the recovery codes left.
#[utoipa::path(get, path = "/admin/users/{id}/factors", tag = "factors", params(("id" = String, Path, description = "the user id")), responses((status = 200, description = "`factors`, `recovery_codes_left`", body = Object), (status = 404, description = "no such user"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn list(app: Issuer, Path(id): Path<String>) -> AdminResult {
    user(&app, &id)?;
    let list = factors::list(&app.db, app.tenant.id, &id).await?;
    let left = recovery::remaining(&app.db, app.tenant.id, &id).await?;
    Ok(Json(json!({"factors": list, "recovery_codes_left": left})).into_response())
}

/// A TOTP factor's name.
#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Enrol {
    name: Option<String>,
}

/// Enrol a TOTP factor for a user: its secret and `otpauth://` URI are in the answer, once.
#[utoipa::path(post, path = "/admin/users/{id}/factors/totp", tag = "factors", params(("id" = String, Path, description = "the user id")), request_body(content = Enrol, description = "optional"), responses((status = 201, description = "`id`, `secret`, `otpauth_uri`", body = Object), (status = 404, description = "no such user"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn enrol_totp(app: Issuer, actor: Actor, Path(id): Path<String>, body: Bytes) -> AdminResult {
    let u = user(&app, &id)?;
    let input: Enrol = if body.is_empty() {
        Enrol::default()
    } else {
        serde_json::from_slice(&body).map_err(|e| OAuthError::invalid_request(format!("invalid JSON body: {e}")))?
    };
    let name = input.name.unwrap_or_else(|| "Authenticator app".into());
    if name.is_empty() || name.chars().count() > 64 {
        return Err(OAuthError::invalid_request("name must be 1-64 characters"));
    }
    let issuer_host = url::Url::parse(app.issuer()).ok().and_then(|u| u.host_str().map(str::to_string)).unwrap_or_else(|| "Authrim".into());
    let (factor_id, secret, uri) = totp::enrol(&app.db, app.vault(), &issuer_host, app.tenant.id, &u.id, &u.username, &name).await?;
    app.audit(actor.event("factor_enrolled", json!({"kind": "totp", "id": factor_id})).user(&u.id)).await;
    let mut res = (StatusCode::CREATED, Json(json!({"id": factor_id, "kind": "totp", "name": name, "secret": secret, "otpauth_uri": uri}))).into_response();
    res.headers_mut().insert(axum::http::header::CACHE_CONTROL, axum::http::HeaderValue::from_static("no-store"));
    Ok(res)
}

/// A new set of ten recovery codes (the old set stops working), shown once.
#[utoipa::path(post, path = "/admin/users/{id}/recovery-codes", tag = "factors", params(("id" = String, Path, description = "the user id")), responses((status = 201, description = "`codes`", body = Object), (status = 404, description = "no such user"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn new_recovery_codes(app: Issuer, actor: Actor, Path(id): Path<String>) -> AdminResult {
    let u = user(&app, &id)?;
    let codes = recovery::regenerate(&app.db, app.tenant.id, &u.id).await?;
    app.audit(actor.event("recovery_codes_created", json!({})).user(&u.id)).await;
    let mut res = (StatusCode::CREATED, Json(json!({"codes": codes}))).into_response();
    res.headers_mut().insert(axum::http::header::CACHE_CONTROL, axum::http::HeaderValue::from_static("no-store"));
    Ok(res)
}

/// Remove one factor of a user.
#[utoipa::path(delete, path = "/admin/users/{id}/factors/{factor_id}", tag = "factors", params(("id" = String, Path, description = "the user id"), ("factor_id" = String, Path, description = "the factor id")), responses((status = 204, description = "removed"), (status = 404, description = "no such user or factor"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn remove(app: Issuer, actor: Actor, Path((id, factor_id)): Path<(String, String)>) -> AdminResult {
    operations::remove_factors(&app, &actor, &id, Some(&factor_id)).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Remove every factor and recovery code of a user.
#[utoipa::path(delete, path = "/admin/users/{id}/factors", tag = "factors", params(("id" = String, Path, description = "the user id")), responses((status = 204, description = "reset"), (status = 404, description = "no such user"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn reset(app: Issuer, actor: Actor, Path(id): Path<String>) -> AdminResult {
    operations::remove_factors(&app, &actor, &id, None).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
