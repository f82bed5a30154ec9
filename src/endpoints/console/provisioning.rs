//! A client's outbound provisioning in the console (issue 32, slice 3): its SCIM target's
//! state (where, which users, how many wait, how many it holds, the last delivery and the
//! last failure) and, for an admin, setting it, a resync and removing it. The changes are the
//! admin API's (`admin_provisioning`), audited with the console user as the actor; a refusal
//! is said on the client's page.

use super::clients::{edit_page, enc};
use super::{checked, failed, not_found, refused, text, when, Change, Id};
use crate::endpoints::admin_provisioning as ops;
use crate::endpoints::first_party::see_other;
use crate::tenant::Issuer;
use axum::response::Response;
use serde_json::{json, Value};

/// The target as the client's page shows it (`None`: the client has none, or it cannot be
/// read now, which the page says as "none" rather than failing).
pub(super) async fn state(app: &Issuer, client: &str) -> Option<Value> {
    let target = ops::load(app, client).await.ok()??;
    let mut v = ops::state(app, target).await.ok()?;
    for at in ["last_delivered_at", "last_error_at", "updated_at"] {
        let t = v[at].as_u64().unwrap_or(0);
        v[at] = when(t).into();
    }
    Some(v)
}

fn done(app: &Issuer, client: &str, what: &str) -> Response {
    see_other(app.base(), &format!("/console/clients/{}?done={what}#provisioning", enc(client)))
}

/// Set the target: its endpoint, a credential (left empty: the one it has), which users,
/// enabled or paused.
pub async fn set(app: Issuer, Id(id): Id, Change { admin, params }: Change) -> Response {
    let Some(client) = app.registry().client(&id) else { return not_found() };
    let input = ops::TargetInput {
        endpoint: text(&params, "endpoint").unwrap_or_default(),
        token: text(&params, "token"),
        users: text(&params, "users"),
        enabled: Some(checked(&params, "enabled")),
    };
    let endpoint = input.endpoint.clone();
    match ops::set_target(&app, &admin.actor(), client.id(), input).await {
        Ok(_) => done(&app, client.id(), "saved"),
        Err(e) => {
            let page = edit_page(&app, &admin, &client).await.with("typed_endpoint", endpoint);
            refused(page, &e)
        }
    }
}

pub async fn resync(app: Issuer, Id(id): Id, Change { admin, .. }: Change) -> Response {
    let Some(client) = app.registry().client(&id) else { return not_found() };
    match ops::resync_target(&app, &admin.actor(), client.id()).await {
        Ok(_) => done(&app, client.id(), "queued"),
        Err(e) if e.status == axum::http::StatusCode::NOT_FOUND => not_found(),
        Err(e) => failed(&e),
    }
}

pub async fn remove(app: Issuer, Id(id): Id, Change { admin, .. }: Change) -> Response {
    let Some(client) = app.registry().client(&id) else { return not_found() };
    match ops::remove_target(&app, &admin.actor(), client.id()).await {
        Ok(()) => done(&app, client.id(), "removed"),
        Err(e) if e.status == axum::http::StatusCode::NOT_FOUND => not_found(),
        Err(e) => failed(&e),
    }
}

/// What the page offers for `users`.
pub(super) fn scopes() -> Value {
    json!(crate::provisioning::SCOPES)
}
