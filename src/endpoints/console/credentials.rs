//! The tenant's admin API credentials in the console (issue 31): the list (name, created,
//! expires, revoked; never a secret), a form to create one (its token shown once, on the
//! answer page, which is not cached), and revocation. Tenant admins change them, auditors
//! look; the same store and audit events as `/admin/credentials`.

use super::{failed, not_found, notice, text, when, Change, Id, Viewer};
use crate::endpoints::admin_credentials::{make, revoke_one, NewCredential};
use crate::endpoints::first_party::see_other;
use crate::error::OAuthError;
use crate::registry::admin_credentials;
use crate::tenant::Issuer;
use axum::extract::RawQuery;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

/// The longest expiry the form offers, in days (ten years): beyond it, "never" says it.
const MAX_DAYS: u64 = 3650;

pub async fn list(app: Issuer, viewer: Viewer, RawQuery(query): RawQuery) -> Response {
    let tenant = app.tenant.id;
    let all = match app.db.read(move |sql| admin_credentials::list(sql, tenant)).await {
        Ok(all) => all,
        Err(e) => return crate::endpoints::authorize::unavailable(e),
    };
    let now = crate::util::now();
    let rows: Vec<Value> = all
        .iter()
        .rev()
        .map(|c| {
            let state = if c.revoked_at.is_some() { "revoked" } else if c.usable(now) { "active" } else { "expired" };
            json!({"id": c.id, "name": c.name, "created": when(c.created_at), "expires": c.expires_at.map(when), "revoked": c.revoked_at.map(when), "state": state, "scopes": c.scopes})
        })
        .collect();
    let mut page = viewer.page("console_credentials.html", "console-credentials", "credentials").with("credentials", rows);
    if let Some(n) = notice(query.as_deref()) {
        page = page.msg("notice", n);
    }
    page.into_response()
}

pub async fn create(app: Issuer, Change { admin, params }: Change) -> Response {
    let days = match text(&params, "expires_days").map(|d| d.parse::<u64>()) {
        None => None,
        Some(Ok(d)) if (1..=MAX_DAYS).contains(&d) => Some(d),
        Some(_) => return failed(&OAuthError::invalid_request(format!("the expiry must be a number of days from 1 to {MAX_DAYS}, or empty for none"))),
    };
    // One scope from the form's choice: the admin API, or provisioning (SCIM) only.
    let scopes = text(&params, "scope").map(|s| vec![s.to_string()]);
    let new = NewCredential { name: text(&params, "name").unwrap_or_default(), expires_in: days.map(|d| d * 86_400), scopes };
    match make(&app, &admin.actor(), new).await {
        Ok((credential, token)) => {
            let page = admin
                .page("console_credential.html", "console-credential-created", "credentials")
                .with("name", &credential.name)
                .with("id", &credential.id)
                .with("expires", credential.expires_at.map(when))
                .with("token", &token);
            let mut res = page.into_response();
            // The token is on this page only: not kept by the browser's cache or a proxy.
            res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            res
        }
        Err(e) => failed(&e),
    }
}

pub async fn revoke(app: Issuer, Id(id): Id, Change { admin, .. }: Change) -> Response {
    match revoke_one(&app, &admin.actor(), id).await {
        Ok(_) => see_other(app.base(), "/console/credentials?done=revoked"),
        Err(e) if e.status == StatusCode::NOT_FOUND => not_found(),
        Err(e) => failed(&e),
    }
}
