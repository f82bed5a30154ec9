//! The admin API's tenants (issue 31): create, list, change, disable and delete the issuers
//! this deployment serves besides the default. Managed at the deployment's own issuer only
//! (the default tenant's `/admin/tenants`): a tenant's administrators manage their tenant at
//! `{issuer}/admin/…`, never the list of tenants.
//!
//! A change is saved, announced (the registry's change log, or a notification on
//! PostgreSQL) and built on this node before the answer, so that the tenant the answer
//! describes is served here at once and on every other node within a second.

use super::operations::Actor;
use crate::db::StoreError;
use crate::error::OAuthError;
use crate::http::params::Body;
use crate::tenant::overrides::SettingsPatch;
use crate::tenant::rows::{self, Overrides, State, TenantRow};
use crate::tenant::{Issuer, TenantId};
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

/// The routes, with bodies up to `body_limit` (`Config::tenant_settings_body_limit`: a
/// tenant's settings carry its style sheet and logo).
pub fn routes(body_limit: usize) -> Router<crate::app::AppState> {
    Router::new()
        .route("/admin/tenants", get(list_tenants).post(create_tenant))
        .route("/admin/tenants/{slug}", get(show_tenant).patch(update_tenant).delete(delete_tenant))
        .layer(axum::extract::DefaultBodyLimit::max(body_limit))
}

type AdminResult = Result<Response, OAuthError>;

/// A new tenant.
#[derive(serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewTenant {
    /// Its name in URLs: `[a-z0-9][a-z0-9-]{0,62}`, never changed, never given again.
    pub slug: String,
    /// Hosts it is served at (its issuer is then `https://{first}`); none to serve it at
    /// `{issuer}/t/{slug}`.
    #[serde(default)]
    pub hosts: Vec<String>,
    /// What it sets differently from the deployment (`null` or absent: the deployment's).
    #[serde(default)]
    pub settings: SettingsPatch,
}

/// A change: absent fields keep their value.
#[derive(serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TenantChange {
    /// `active` or `disabled` (a disabled tenant answers 404 and keeps everything).
    pub state: Option<State>,
    pub hosts: Option<Vec<String>>,
    /// Merged into the stored settings key by key: a key absent keeps its value, `null`
    /// clears it (back to the deployment's), a value replaces it (a list whole).
    pub settings: Option<SettingsPatch>,
}

/// Only the deployment's own issuer lists and changes tenants.
pub(crate) fn deployment(app: &Issuer) -> Result<(), OAuthError> {
    match app.tenant.id.is_default() {
        true => Ok(()),
        false => Err(OAuthError::not_found("tenants are managed at the deployment's issuer")),
    }
}

fn check_hosts(hosts: &[String]) -> Result<(), OAuthError> {
    hosts.iter().try_for_each(|h| rows::validate_host(h)).map_err(OAuthError::invalid_request)
}

/// `patch` over `settings` for tenant `slug`, new secrets sealed, checked as the deployment's
/// settings are: 400 and nothing stored when it fails.
fn settled(app: &Issuer, settings: &Overrides, slug: &str, patch: SettingsPatch) -> Result<Overrides, OAuthError> {
    let out = patch.apply(settings, slug, &app.vault);
    out.validate(&app.config, app.tenants.default_tenant().ui.languages()).map_err(OAuthError::invalid_request)?;
    Ok(out)
}

/// The issuer a tenant is served as (`None` while it is not built: deleting, deleted).
pub(crate) fn issuer_of(app: &Issuer, row: &TenantRow) -> Option<String> {
    app.tenants.get(row.id).map(|t| t.issuer.clone())
}

/// A tenant as the API shows it: its row and the issuer it is served as.
fn tenant_json(app: &Issuer, row: &TenantRow) -> Value {
    let mut v = serde_json::to_value(row).unwrap_or_default();
    v["issuer"] = issuer_of(app, row).map_or(Value::Null, Value::String);
    v
}

pub(crate) async fn find(app: &Issuer, slug: String) -> Result<TenantRow, OAuthError> {
    let row = app.db.read(move |sql| rows::find(sql, &slug)).await?;
    row.filter(|r| r.state != State::Deleted).ok_or_else(|| OAuthError::not_found("no such tenant"))
}

/// Build `id` on this node now (others follow the announcement) and record who did what.
async fn applied(app: &Issuer, actor: &Actor, id: TenantId, event: &str, detail: Value) {
    app.registry.tenant_changed(id);
    app.apply_tenant_changes().await;
    app.audit(actor.event(event, detail)).await;
}

/// Every tenant besides the default (deleted ones excepted).
pub(crate) async fn list(app: &Issuer) -> Result<Vec<TenantRow>, OAuthError> {
    deployment(app)?;
    Ok(app.db.read(rows::load_all).await?)
}

/// Create a tenant (the admin API and the console): served at once, its first signing keys
/// made now.
pub(crate) async fn create(app: &Issuer, actor: &Actor, new: NewTenant) -> Result<TenantRow, OAuthError> {
    deployment(app)?;
    rows::validate_slug(&new.slug).map_err(OAuthError::invalid_request)?;
    check_hosts(&new.hosts)?;
    let settings = settled(app, &Overrides::default(), &new.slug, new.settings)?;
    let row = app.db.write(move |sql| rows::create(sql, &new.slug, &new.hosts, &settings)).await?;
    applied(app, actor, row.id, "tenant_created", json!({"tenant_id": row.id.0, "slug": row.slug})).await;
    Ok(row)
}

/// Change a tenant's state (`active`/`disabled`), hosts or settings.
pub(crate) async fn change(app: &Issuer, actor: &Actor, slug: String, change: TenantChange) -> Result<TenantRow, OAuthError> {
    deployment(app)?;
    if matches!(change.state, Some(State::Deleting | State::Deleted)) {
        return Err(OAuthError::invalid_request("delete a tenant with DELETE /admin/tenants/{slug}?confirm={slug}"));
    }
    if let Some(hosts) = &change.hosts {
        check_hosts(hosts)?;
    }
    let (state, hosts, changed) = (change.state, change.hosts.clone(), change.settings.is_some());
    // The settings are read, merged and written in two steps; the write is refused if they
    // changed in between (`rows::STALE`), and the merge is made again on what is now stored,
    // so that simultaneous changes of different settings all land.
    let mut attempts = 0;
    let (id, row) = loop {
        attempts += 1;
        let current = find(app, slug.clone()).await?;
        let id = current.id;
        let settings = match &change.settings {
            Some(patch) => Some(settled(app, &current.settings, &current.slug, patch.clone())?),
            None => None,
        };
        let based_on = settings.is_some().then_some(current.settings);
        let write = rows::Change { state: change.state, hosts: change.hosts.clone(), settings, based_on };
        match app.db.write(move |sql| rows::update(sql, id, write)).await {
            Err(StoreError::Conflict(m)) if m == rows::STALE && attempts < 8 => continue,
            done => break (id, done?.ok_or_else(|| OAuthError::not_found("no such tenant"))?),
        }
    };
    // The settings as they now are, as shown: never an upstream's secret.
    let detail = json!({"tenant_id": id.0, "state": state, "hosts": hosts, "settings": changed.then(|| row.settings.audited())});
    applied(app, actor, id, "tenant_changed", detail).await;
    Ok(row)
}

/// Delete a disabled tenant, `confirm` repeating its slug: it stops being served at once,
/// and its rows are removed in the background. Its id and slug are never given again.
pub(crate) async fn delete(app: &Issuer, actor: &Actor, slug: String, confirm: Option<&str>) -> Result<TenantRow, OAuthError> {
    deployment(app)?;
    if confirm != Some(slug.as_str()) {
        return Err(OAuthError::invalid_request("deleting a tenant removes all its data: repeat its slug to confirm"));
    }
    let id = find(app, slug.clone()).await?.id;
    let row = app.db.write(move |sql| rows::start_deletion(sql, id)).await?.ok_or_else(|| OAuthError::not_found("no such tenant"))?;
    applied(app, actor, id, "tenant_deletion_started", json!({"tenant_id": id.0, "slug": slug})).await;
    Ok(row)
}

/// Every tenant besides the default (deleted ones excepted).
#[utoipa::path(get, path = "/admin/tenants", tag = "tenants", responses((status = 200, description = "`{\"tenants\": [...]}`", body = Object), (status = 404, description = "asked of a tenant's issuer, not the deployment's"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn list_tenants(app: Issuer, actor: Actor) -> AdminResult {
    actor.deployment_admin()?;
    let all = list(&app).await?;
    Ok(Json(json!({ "tenants": all.iter().map(|r| tenant_json(&app, r)).collect::<Vec<_>>() })).into_response())
}

/// Create a tenant: served at once (its first signing keys are made now).
#[utoipa::path(post, path = "/admin/tenants", tag = "tenants", request_body = NewTenant, responses((status = 201, description = "the tenant, with its `issuer`", body = Object), (status = 400, description = "a bad slug, host or setting"), (status = 409, description = "the slug (ever) or a host is taken"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn create_tenant(app: Issuer, actor: Actor, Body(body): Body) -> AdminResult {
    actor.deployment_admin()?;
    deployment(&app)?;
    let row = create(&app, &actor, super::admin::parse(&body)?).await?;
    Ok((StatusCode::CREATED, Json(tenant_json(&app, &row))).into_response())
}

/// One tenant.
#[utoipa::path(get, path = "/admin/tenants/{slug}", tag = "tenants", params(("slug" = String, Path, description = "the tenant's slug")), responses((status = 200, description = "the tenant", body = Object), (status = 404, description = "no such tenant"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn show_tenant(app: Issuer, actor: Actor, Path(slug): Path<String>) -> AdminResult {
    actor.deployment_admin()?;
    deployment(&app)?;
    let row = find(&app, slug).await?;
    Ok(Json(tenant_json(&app, &row)).into_response())
}

/// Change a tenant's state (`active`/`disabled`), hosts or settings.
#[utoipa::path(patch, path = "/admin/tenants/{slug}", tag = "tenants", params(("slug" = String, Path, description = "the tenant's slug")), request_body = TenantChange, responses((status = 200, description = "the tenant", body = Object), (status = 400, description = "a bad state, host or setting"), (status = 404, description = "no such tenant"), (status = 409, description = "a host is taken, or the tenant is being deleted"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn update_tenant(app: Issuer, actor: Actor, Path(slug): Path<String>, Body(body): Body) -> AdminResult {
    actor.deployment_admin()?;
    deployment(&app)?;
    let row = change(&app, &actor, slug, super::admin::parse(&body)?).await?;
    Ok(Json(tenant_json(&app, &row)).into_response())
}

#[derive(serde::Deserialize)]
pub(crate) struct Confirm {
    confirm: Option<String>,
}

/// Delete a disabled tenant, its slug typed again as `?confirm=`: it stops being served at
/// once, and its clients, users, keys, factors, consents and audit log are removed in the
/// background. Its id and slug are never given again.
#[utoipa::path(delete, path = "/admin/tenants/{slug}", tag = "tenants", params(("slug" = String, Path, description = "the tenant's slug"), ("confirm" = String, Query, description = "the slug again")), responses((status = 202, description = "deletion under way", body = Object), (status = 400, description = "`confirm` is not the slug"), (status = 404, description = "no such tenant"), (status = 409, description = "the tenant is active: disable it first"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn delete_tenant(app: Issuer, actor: Actor, Path(slug): Path<String>, axum::extract::Query(q): axum::extract::Query<Confirm>) -> AdminResult {
    actor.deployment_admin()?;
    let row = delete(&app, &actor, slug, q.confirm.as_deref()).await?;
    Ok((StatusCode::ACCEPTED, Json(tenant_json(&app, &row))).into_response())
}
