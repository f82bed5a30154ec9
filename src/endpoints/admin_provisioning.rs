//! The admin API's outbound provisioning (issue 32, slice 3): a client's SCIM target, read,
//! set, removed and resynced (`provisioning` has the model). The target's credential is
//! written only: it is sealed by the vault and never shown again.

use super::operations::Actor;
use crate::error::OAuthError;
use crate::http::params::Body;
use crate::provisioning::{self, Target, SCOPES};
use crate::tenant::Issuer;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};

pub fn routes() -> Router<crate::app::AppState> {
    Router::new()
        .route("/admin/clients/{client}/provisioning", get(show).put(set).delete(remove))
        .route("/admin/clients/{client}/provisioning/resync", post(resync))
}

type AdminResult = Result<Response, OAuthError>;

/// A client's SCIM target: where, with what credential, which users.
#[derive(serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TargetInput {
    /// The application's SCIM service (`https://app.example/scim/v2`); its `/Users` are
    /// written.
    pub endpoint: String,
    /// The bearer credential the application gave; required for a new target, kept when left
    /// out.
    pub token: Option<String>,
    /// `assigned` (default): users holding one of the client's roles, directly or through a
    /// group; `all`: every user of the tenant.
    pub users: Option<String>,
    /// `false` pauses deliveries (changes are not queued meanwhile: resync when enabling).
    pub enabled: Option<bool>,
}

fn find_client(app: &Issuer, client: &str) -> Result<String, OAuthError> {
    app.registry().client(client).map(|c| c.id().to_string()).ok_or_else(|| OAuthError::not_found("no such client"))
}

pub(crate) async fn load(app: &Issuer, client: &str) -> Result<Option<Target>, OAuthError> {
    let (tenant, c) = (app.tenant.id, client.to_string());
    Ok(app.db.read(move |sql| provisioning::load(sql, tenant, &c)).await?)
}

/// The target as the admin API shows it: never its credential; with how many changes wait
/// and how many users it holds.
pub(crate) async fn state(app: &Issuer, target: Target) -> Result<Value, OAuthError> {
    let (tenant, c) = (app.tenant.id, target.client_id.clone());
    let (pending, users, groups) = app.db.read(move |sql| provisioning::counts(sql, tenant, &c)).await?;
    let mut v = serde_json::to_value(&target).map_err(|e| OAuthError::internal("target", e))?;
    v["pending"] = pending.into();
    v["provisioned"] = users.into();
    v["provisioned_groups"] = groups.into();
    Ok(v)
}

/// The client's SCIM target and its state: the last delivery, the last failure, how many
/// changes wait.
#[utoipa::path(get, path = "/admin/clients/{client}/provisioning", tag = "directory", operation_id = "show_provisioning", params(("client" = String, Path, description = "the client's id")), responses((status = 200, description = "`{endpoint, users, enabled, last_delivered_at, last_error, last_error_at, pending, provisioned}`", body = Object), (status = 404, description = "no such client, or it has no target"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn show(app: Issuer, Path(client): Path<String>) -> AdminResult {
    let client = find_client(&app, &client)?;
    let target = load(&app, &client).await?.ok_or_else(|| OAuthError::not_found("this client has no provisioning target"))?;
    Ok(Json(state(&app, target).await?).into_response())
}

/// Set the client's SCIM target. A new or re-enabled target, or one whose users change, is
/// resynced: every user in scope is sent, and those no longer in scope deactivated there.
#[utoipa::path(put, path = "/admin/clients/{client}/provisioning", tag = "directory", operation_id = "set_provisioning", params(("client" = String, Path, description = "the client's id")), request_body = TargetInput, responses((status = 200, description = "the target's state", body = Object), (status = 400, description = "a bad endpoint (not http(s), or on an address the fetcher refuses), a missing credential, unknown `users`"), (status = 404, description = "no such client"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn set(app: Issuer, actor: Actor, Path(client): Path<String>, Body(body): Body) -> AdminResult {
    let client = find_client(&app, &client)?;
    let target = set_target(&app, &actor, &client, super::admin::parse(&body)?).await?;
    Ok(Json(state(&app, target).await?).into_response())
}

/// Set `client`'s target (the admin API's and the console's change), audited; resynced when
/// it is new, re-enabled, or its endpoint or users changed.
pub(crate) async fn set_target(app: &Issuer, actor: &Actor, client: &str, input: TargetInput) -> Result<Target, OAuthError> {
    crate::http::fetch::check_target(&input.endpoint, app.fetcher.allows_private()).map_err(|e| OAuthError::invalid_request(format!("endpoint: {e}")))?;
    let users = input.users.unwrap_or_else(|| "assigned".into());
    if !SCOPES.contains(&users.as_str()) {
        return Err(OAuthError::invalid_request(format!("users is one of {}", SCOPES.join(", "))));
    }
    let before = load(app, client).await?;
    let token = input.token.filter(|t| !t.is_empty());
    if before.is_none() && token.is_none() {
        return Err(OAuthError::invalid_request("token is required for a new target"));
    }
    if token.as_ref().is_some_and(|t| t.len() > 4096 || t.chars().any(char::is_control)) {
        return Err(OAuthError::invalid_request("token is at most 4096 characters, without control characters"));
    }
    let (tenant, enabled) = (app.tenant.id, input.enabled.unwrap_or(true));
    let sealed = token.map(|t| app.vault().seal(&provisioning::seal_label(tenant, client), t.as_bytes()));
    let (c, endpoint, u) = (client.to_string(), input.endpoint.clone(), users.clone());
    app.db.write(move |sql| provisioning::save(sql, tenant, &c, &endpoint, sealed.as_deref(), &u, enabled)).await?;
    app.audit(actor.event("provisioning_set", json!({"endpoint": input.endpoint, "users": users, "enabled": enabled})).client(client)).await;
    let changed = before.as_ref().is_none_or(|b| (!b.enabled && enabled) || b.users != users || b.endpoint != input.endpoint);
    if changed && enabled {
        queue_all(app, client).await?;
    }
    load(app, client).await?.ok_or_else(|| OAuthError::not_found("the target is gone"))
}

/// Stop provisioning the client (the users it holds stay there).
#[utoipa::path(delete, path = "/admin/clients/{client}/provisioning", tag = "directory", operation_id = "remove_provisioning", params(("client" = String, Path, description = "the client's id")), responses((status = 204, description = "removed"), (status = 404, description = "no such client, or it has no target"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn remove(app: Issuer, actor: Actor, Path(client): Path<String>) -> AdminResult {
    let client = find_client(&app, &client)?;
    remove_target(&app, &actor, &client).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

pub(crate) async fn remove_target(app: &Issuer, actor: &Actor, client: &str) -> Result<(), OAuthError> {
    let (tenant, c) = (app.tenant.id, client.to_string());
    if !app.db.write(move |sql| provisioning::delete(sql, tenant, &c)).await? {
        return Err(OAuthError::not_found("this client has no provisioning target"));
    }
    app.audit(actor.event("provisioning_removed", json!({})).client(client)).await;
    Ok(())
}

/// Send everything again: each user in scope created or replaced, each the target holds and
/// should not deactivated or deleted. After fixing a credential or a target's data.
#[utoipa::path(post, path = "/admin/clients/{client}/provisioning/resync", tag = "directory", operation_id = "resync_provisioning", params(("client" = String, Path, description = "the client's id")), responses((status = 202, description = "`{\"queued\": n}`", body = Object), (status = 404, description = "no such client, or it has no target"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn resync(app: Issuer, actor: Actor, Path(client): Path<String>) -> AdminResult {
    let client = find_client(&app, &client)?;
    let queued = resync_target(&app, &actor, &client).await?;
    Ok((StatusCode::ACCEPTED, Json(json!({"queued": queued}))).into_response())
}

pub(crate) async fn resync_target(app: &Issuer, actor: &Actor, client: &str) -> Result<usize, OAuthError> {
    load(app, client).await?.ok_or_else(|| OAuthError::not_found("this client has no provisioning target"))?;
    let queued = queue_all(app, client).await?;
    app.audit(actor.event("provisioning_resync", json!({"queued": queued})).client(client)).await;
    Ok(queued)
}

/// Queue every user and group the target should hold and every one it holds, in one
/// transaction, with what was last sent forgotten (so that it is sent again). How many users.
pub(crate) async fn queue_all(app: &Issuer, client: &str) -> Result<usize, OAuthError> {
    let registry = app.registry();
    let target = load(app, client).await?.ok_or_else(|| OAuthError::not_found("this client has no provisioning target"))?;
    let mut users: Vec<String> = registry.list_users().iter().filter(|u| provisioning::user_in_scope(app, &target, &u.id)).map(|u| u.id.clone()).collect();
    let mut groups: Vec<String> = registry.list_groups().iter().filter(|g| provisioning::group_in_scope(app, &target, &g.id)).map(|g| g.id.clone()).collect();
    let (tenant, c) = (app.tenant.id, client.to_string());
    let queued = app
        .db
        .write(move |sql| {
            for (kind, ids, row) in [("user", &mut users, provisioning::KIND), ("group", &mut groups, provisioning::GROUP_KIND)] {
                ids.extend(provisioning::known_remotely(sql, tenant, &c, kind)?);
                ids.sort_unstable();
                ids.dedup();
                provisioning::enqueue_for(sql, tenant, std::slice::from_ref(&c), row, ids)?;
            }
            sql.execute("UPDATE scim_remote SET sent_hash = NULL WHERE tenant_id = ?1 AND client_id = ?2", crate::params![tenant, c.as_str()])?;
            Ok(users.len())
        })
        .await?;
    app.backchannel.wake();
    Ok(queued)
}
