//! Tenants in the console (issue 31): at the deployment's own console only, the tenants
//! besides the default, a form to create one, per tenant a settings page (what it sets
//! differently from the deployment: name, language, password and second-factor policy,
//! sign-up, mail sender, style sheet), disable/enable and delete (the slug typed again). The same operations as the admin API (`admin_tenants`), audited with
//! the console user as the actor. A tenant's clients and users are managed in its own console,
//! at its issuer.

use super::{failed, not_found, notice, when, Change, Viewer};
use crate::endpoints::admin_tenants::{self, NewTenant, TenantChange};
use crate::endpoints::first_party::see_other;
use crate::tenant::overrides::SettingsPatch;
use crate::tenant::rows::State;
use crate::ui::look::ThemeSetting;
use crate::tenant::Issuer;
use axum::extract::{Path, RawQuery};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// The longest style sheet the settings form carries (a form field's limit,
/// `http::params`); a longer one is set with the CLI or the API and kept by the form.
const FORM_CSS_MAX: usize = 8 * 1024;

/// The tenant pages, with bodies up to `body_limit` (`Config::tenant_settings_body_limit`:
/// the settings form carries a style sheet).
pub fn routes(body_limit: usize) -> axum::Router<crate::app::AppState> {
    use axum::routing::get;
    axum::Router::new()
        .route("/console/tenants", get(list).post(create))
        .route("/console/tenants/{slug}", get(show).post(act))
        .layer(axum::extract::DefaultBodyLimit::max(body_limit))
}

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

/// A tenant's settings page: what it sets differently from the deployment, on a form.
pub async fn show(app: Issuer, viewer: Viewer, Path(slug): Path<String>, RawQuery(query): RawQuery) -> Response {
    if !app.tenant.id.is_default() {
        return not_found();
    }
    let row = match admin_tenants::find(&app, slug).await {
        Ok(r) => r,
        Err(e) if e.status == axum::http::StatusCode::NOT_FOUND => return not_found(),
        Err(e) => return failed(&e),
    };
    let s = &row.settings;
    let look = s.look();
    let settings = json!({
        "product_name": s.product_name, "default_locale": s.default_locale, "password_min_length": s.password_min_length,
        "signup": s.signup.map(|on| if on { "on" } else { "off" }), "mfa_policy": s.mfa_policy, "mail_from": s.mail_from,
        // A style sheet longer than the form can carry (set with the CLI or the API) is not
        // put on it: the page says so, and saving keeps it (`settings_patch`).
        "css": s.theme.as_ref().and_then(|t| t.css.clone()).filter(|c| c.len() <= FORM_CSS_MAX),
        "css_elsewhere": s.theme.as_ref().and_then(|t| t.css.as_ref()).filter(|c| c.len() > FORM_CSS_MAX).map(String::len),
        "logo": look.logo.as_ref().map(|l| json!({"type": l.content_type, "bytes": l.bytes.len()})),
        // Set through the API or the CLI: named here so that nobody thinks them unset.
        "upstreams": s.identity_providers.as_ref().map_or(0, Vec::len), "resource_servers": s.resource_servers.as_ref().map_or(0, Vec::len),
    });
    let mut page = viewer
        .page("console_tenant.html", "console-tenant-settings-title", "tenants")
        .with("tn", json!({"slug": row.slug, "issuer": admin_tenants::issuer_of(&app, &row), "state": row.state}))
        .with("settings", settings)
        .with("languages", app.tenant.ui.languages())
        .with("mfa_policies", ["optional", "required", "passkey"]);
    if let Some(n) = notice(query.as_deref()) {
        page = page.msg("notice", n);
    }
    page.into_response()
}

/// The settings form as a change: every key it shows set (an empty field or "the deployment's"
/// clears it), the others (upstreams, resource servers, …) left as they are. The logo is not
/// on the form (it is uploaded with the CLI or the API): kept unless `remove_logo`.
fn settings_patch(change: &Change, stored: &crate::tenant::rows::Overrides) -> Result<SettingsPatch, crate::error::OAuthError> {
    let min = match field(change, "password_min_length") {
        Some(n) => Some(n.parse::<usize>().map_err(|_| crate::error::OAuthError::invalid_request("password_min_length must be a number"))?),
        None => None,
    };
    let signup = match field(change, "signup").as_deref() {
        Some("on") => Some(true),
        Some("off") => Some(false),
        _ => None,
    };
    let logo = stored.theme.as_ref().and_then(|t| t.logo.clone()).filter(|_| change.params.get("remove_logo").is_none());
    let stored_css = stored.theme.as_ref().and_then(|t| t.css.clone());
    let css = match stored_css {
        // Not on the form (too long for it): kept unless removed.
        Some(c) if c.len() > FORM_CSS_MAX => Some(c).filter(|_| change.params.get("remove_css").is_none()),
        _ => change.params.get("css").filter(|c| !c.trim().is_empty()).map(str::to_string),
    };
    let theme = (css.is_some() || logo.is_some()).then_some(ThemeSetting { css, logo });
    Ok(SettingsPatch {
        product_name: Some(field(change, "product_name")),
        default_locale: Some(field(change, "default_locale")),
        password_min_length: Some(min),
        signup: Some(signup),
        mfa_policy: Some(field(change, "mfa_policy")),
        mail_from: Some(field(change, "mail_from")),
        theme: Some(theme),
        ..Default::default()
    })
}

/// One of a tenant's buttons: `settings` (the settings form), `disable`, `enable`, or
/// `delete` with `confirm`.
pub async fn act(app: Issuer, Path(slug): Path<String>, change: Change) -> Response {
    let actor = change.admin.actor();
    let state = |s| TenantChange { state: Some(s), hosts: None, settings: None };
    let done = match change.params.get("action") {
        Some("settings") => {
            let saved = match admin_tenants::find(&app, slug.clone()).await.and_then(|row| settings_patch(&change, &row.settings)) {
                Ok(patch) => admin_tenants::change(&app, &actor, slug.clone(), TenantChange { state: None, hosts: None, settings: Some(patch) }).await,
                Err(e) => Err(e),
            };
            return match saved {
                // A slug is of [a-z0-9-] (found above): safe in a path as it is.
                Ok(_) => see_other(app.base(), &format!("/console/tenants/{slug}?done=saved")),
                Err(e) => failed(&e),
            };
        }
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
