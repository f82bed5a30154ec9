//! Tenants in the console (issue 31): at the deployment's own console only, the tenants
//! besides the default, a form to create one, and per tenant disable/enable and delete (the
//! slug typed again). The same operations as the admin API (`admin_tenants`), audited with
//! the console user as the actor. A tenant's clients and users are managed in its own console,
//! at its issuer.

use super::{failed, not_found, notice, when, Change, Viewer};
use crate::endpoints::admin_tenants::{self, NewTenant, TenantChange};
use crate::endpoints::first_party::see_other;
use crate::tenant::rows::State;
use crate::tenant::Issuer;
use axum::extract::{Path, RawQuery};
use axum::response::{IntoResponse, Response};
use serde_json::json;

pub async fn list(app: Issuer, viewer: Viewer, RawQuery(query): RawQuery) -> Response {
    if !app.tenant.id.is_default() {
        return not_found();
    }
    let rows = match admin_tenants::list(&app).await {
        Ok(r) => r,
        Err(e) => return failed(&e),
    };
    let tenants: Vec<_> = rows
        .iter()
        .map(|r| {
            json!({"slug": r.slug, "issuer": admin_tenants::issuer_of(&app, r), "state": r.state, "hosts": r.hosts.join(" "),
                   "name": r.settings.product_name, "created": when(r.created_at)})
        })
        .collect();
    let mut page = viewer.page("console_tenants.html", "console-tenants", "tenants").with("tenants", tenants);
    if let Some(n) = notice(query.as_deref()) {
        page = page.msg("notice", n);
    }
    page.into_response()
}

/// A text field, `None` when empty.
fn field(change: &Change, name: &str) -> Option<String> {
    change.params.get(name).map(str::trim).filter(|v| !v.is_empty()).map(str::to_string)
}

pub async fn create(app: Issuer, change: Change) -> Response {
    let new = NewTenant {
        slug: field(&change, "slug").unwrap_or_default(),
        hosts: field(&change, "host").into_iter().collect(),
        settings: crate::tenant::overrides::SettingsPatch::product_name(field(&change, "product_name")),
    };
    match admin_tenants::create(&app, &change.admin.actor(), new).await {
        Ok(_) => see_other(app.base(), "/console/tenants?done=created"),
        Err(e) => failed(&e),
    }
}

/// One of a tenant's buttons: `disable`, `enable`, or `delete` with `confirm`.
pub async fn act(app: Issuer, Path(slug): Path<String>, change: Change) -> Response {
    let actor = change.admin.actor();
    let state = |s| TenantChange { state: Some(s), hosts: None, settings: None };
    let done = match change.params.get("action") {
        Some("disable") => admin_tenants::change(&app, &actor, slug, state(State::Disabled)).await.map(|_| "saved"),
        Some("enable") => admin_tenants::change(&app, &actor, slug, state(State::Active)).await.map(|_| "saved"),
        Some("delete") => admin_tenants::delete(&app, &actor, slug, change.params.get("confirm").map(str::trim)).await.map(|_| "deleted"),
        _ => return not_found(),
    };
    match done {
        Ok(done) => see_other(app.base(), &format!("/console/tenants?done={done}")),
        Err(e) => failed(&e),
    }
}
