//! A client's roles in the console (issue 32): the roles it defines (a name, a description),
//! and per role who holds it directly, users and groups (a group's members, through nesting
//! too, hold it through the group). A tenant admin defines and removes roles and assigns and
//! takes them away; an auditor looks. The changes are the admin API's (`admin_directory`),
//! audited with the console user as the actor; a refusal is said on the client's page.

use super::clients::{edit_page, enc};
use super::groups::{named, principal_row, removal, PAGE};
use super::{not_found, refused, text, Change, Id, Viewer};
use crate::endpoints::admin_directory as ops;
use crate::endpoints::first_party::see_other;
use crate::error::OAuthError;
use crate::registry::Client;
use crate::tenant::Issuer;
use axum::response::Response;
use serde_json::{json, Value};
use std::sync::Arc;

/// The client's roles as its page shows them, each with its direct assignees (the first
/// `PAGE` of them, and how many there are).
pub(super) fn rows(app: &Issuer, client: &str) -> Vec<Value> {
    let registry = app.registry();
    registry
        .client_roles(client)
        .into_iter()
        .map(|(role, description)| {
            let assignees = registry.role_assignees(client, &role);
            let shown: Vec<Value> = assignees.iter().take(PAGE).map(|p| principal_row(app, p)).collect();
            json!({"role": role, "description": description, "assignees": shown, "total": assignees.len()})
        })
        .collect()
}

fn client(app: &Issuer, id: &str) -> Result<Arc<Client>, Response> {
    app.registry().client(id).ok_or_else(not_found)
}

fn done(app: &Issuer, client: &Client, what: &str) -> Response {
    see_other(app.base(), &format!("/console/clients/{}?done={what}#roles", enc(client.id())))
}

/// The client's page again, with what was refused and why.
async fn again(app: &Issuer, viewer: &Viewer, client: &Client, typed: Value, e: &OAuthError) -> Response {
    let page = edit_page(app, viewer, client).await;
    let page = typed.as_object().into_iter().flatten().fold(page, |page, (k, v)| page.with(k, v));
    refused(page, e)
}

/// Define a role (or change its description).
pub async fn define(app: Issuer, Id(id): Id, Change { admin, params }: Change) -> Response {
    let client = match client(&app, &id) {
        Ok(c) => c,
        Err(res) => return res,
    };
    let (role, description) = (text(&params, "role").unwrap_or_default(), params.get("description").unwrap_or_default().trim().to_string());
    match ops::define_role(&app, &admin.actor(), client.id(), &role, &description).await {
        Ok(()) => done(&app, &client, "saved"),
        Err(e) => again(&app, &admin, &client, json!({"typed_role": role, "typed_description": description}), &e).await,
    }
}

/// Remove a role with its assignments.
pub async fn remove(app: Issuer, Id(id): Id, Change { admin, params }: Change) -> Response {
    let client = match client(&app, &id) {
        Ok(c) => c,
        Err(res) => return res,
    };
    let result = ops::remove_role(&app, &admin.actor(), client.id(), params.get("role").unwrap_or_default()).await;
    removal(result.map(|()| true), || done(&app, &client, "removed"))
}

/// Assign a role to a user (username or e-mail) or a group (its name).
pub async fn assign(app: Issuer, Id(id): Id, Change { admin, params }: Change) -> Response {
    let client = match client(&app, &id) {
        Ok(c) => c,
        Err(res) => return res,
    };
    let role = params.get("role").unwrap_or_default().to_string();
    let result = match named(&app, &params) {
        Ok(p) => ops::set_assignment(&app, &admin.actor(), client.id(), &role, p, true).await,
        Err(e) => Err(e),
    };
    match result {
        Ok(_) => done(&app, &client, "saved"),
        Err(e) => {
            let typed = json!({"typed_for": format!("assign-{role}"), "typed_kind": params.get("kind"), "typed_member": params.get("member")});
            again(&app, &admin, &client, typed, &e).await
        }
    }
}

/// Take a role away (`kind` and `member`, its id, as the page's button sends them).
pub async fn unassign(app: Issuer, Id(id): Id, Change { admin, params }: Change) -> Response {
    let client = match client(&app, &id) {
        Ok(c) => c,
        Err(res) => return res,
    };
    let Ok(p) = named(&app, &params) else { return not_found() };
    let result = ops::set_assignment(&app, &admin.actor(), client.id(), params.get("role").unwrap_or_default(), p, false).await;
    removal(result, || done(&app, &client, "removed"))
}
