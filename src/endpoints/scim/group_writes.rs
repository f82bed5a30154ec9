//! Writing `Groups` through SCIM (RFC 7644 §3.3, §3.5, §3.6): create, replace, patch and
//! delete, each one change of the directory (`save_group_with_members`: checked as a whole,
//! one transaction), each audited as the admin API's changes are (`via: scim`).
//!
//! PUT replaces what it names: `displayName` always (it is required), `externalId` and
//! `members` when present; RFC 7644 §3.5.1 lets a service take an omitted attribute as not
//! asserted, and a provisioning system that renames a group should not empty it by leaving
//! its members out. PATCH is applied to the group's representation (`scim::patch`), then read
//! back. `If-Match` is honoured on all three (412 when the group has changed since).

use super::groups::{etag, representation};
use super::{body_json, written, ScimError};
use crate::endpoints::operations::Actor;
use crate::http::params::Body;
use crate::registry::directory::{Group, GroupInput, Principal, Refusal};
use crate::scim::patch::{self, member};
use crate::tenant::Issuer;
use axum::extract::Path;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use std::sync::Arc;

fn refused(r: Refusal) -> ScimError {
    match r {
        Refusal::NameTaken => ScimError::new(StatusCode::CONFLICT, Some("uniqueness"), r.to_string()),
        Refusal::NoSuchGroup | Refusal::NoSuchRole => ScimError::bad("invalidValue", r.to_string()),
        Refusal::Cycle | Refusal::Limit(_) => ScimError::bad("invalidValue", r.to_string()),
    }
}

/// What a group resource in a request says: its name, external id (`Some(None)`: removed)
/// and members, each as it is present.
struct Written {
    display_name: Option<String>,
    external_id: Option<Option<String>>,
    members: Option<Vec<Principal>>,
}

fn read(app: &Issuer, v: &Value) -> Result<Written, ScimError> {
    let obj = v.as_object().ok_or_else(|| ScimError::bad("invalidSyntax", "a group is a JSON object"))?;
    let display_name = match member(obj, "displayName") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(ScimError::bad("invalidValue", "displayName is a string")),
    };
    let external_id = match member(obj, "externalId") {
        None => None,
        Some(Value::Null) => Some(None),
        Some(Value::String(s)) => Some(Some(s.clone())),
        Some(_) => return Err(ScimError::bad("invalidValue", "externalId is a string")),
    };
    let members = match member(obj, "members") {
        None => None,
        Some(Value::Null) => Some(Vec::new()),
        Some(Value::Array(items)) => Some(items.iter().map(|m| principal(app, m)).collect::<Result<_, _>>()?),
        Some(_) => return Err(ScimError::bad("invalidValue", "members is an array")),
    };
    Ok(Written { display_name, external_id, members })
}

/// A member by its `value` (an id) and optional `type` (`User` or `Group`): one of the
/// tenant's users or groups.
fn principal(app: &Issuer, m: &Value) -> Result<Principal, ScimError> {
    let obj = m.as_object().ok_or_else(|| ScimError::bad("invalidValue", "a member is an object with a value"))?;
    let id = member(obj, "value").and_then(Value::as_str).ok_or_else(|| ScimError::bad("invalidValue", "a member needs a value (an id)"))?;
    let kind = member(obj, "type").and_then(Value::as_str).map(str::to_ascii_lowercase);
    let registry = app.registry();
    let is_user = || registry.user(id).is_some();
    let is_group = || registry.with_directory(|d| d.group(id).is_some());
    match kind.as_deref() {
        Some("user") if is_user() => Ok(Principal::User(id.to_string())),
        Some("group") if is_group() => Ok(Principal::Group(id.to_string())),
        None if is_user() => Ok(Principal::User(id.to_string())),
        None if is_group() => Ok(Principal::Group(id.to_string())),
        Some("user" | "group") | None => Err(ScimError::bad("invalidValue", format!("no user or group {id:?} in this tenant"))),
        Some(other) => Err(ScimError::bad("invalidValue", format!("a member's type is User or Group, not {other:?}"))),
    }
}

fn check_if_match(headers: &HeaderMap, g: &Group) -> Result<(), ScimError> {
    super::check_if_match(headers, &etag(g))
}

fn find(app: &Issuer, id: &str) -> Result<Arc<Group>, ScimError> {
    app.registry().with_directory(|d| d.group(id).cloned()).ok_or_else(|| ScimError::not_found("no such group"))
}

/// Save, audit, answer with the group (201 for a new one, with its `Location`).
async fn save(app: &Issuer, actor: &Actor, before: Option<&Group>, group: Group, members: Option<Vec<Principal>>) -> Result<Response, ScimError> {
    let old: Vec<Principal> = before.map(|g| app.registry().group_members(&g.id)).unwrap_or_default();
    let saved = app.registry().save_group_with_members(group, members.clone(), &app.config.directory_limits()).await?.map_err(refused)?;
    let event = if before.is_some() { "group_changed" } else { "group_created" };
    app.audit(actor.event(event, json!({"via": "scim", "group_id": saved.id, "display_name": saved.display_name}))).await;
    if let Some(new) = &members {
        let added = new.iter().filter(|p| !old.contains(p)).map(|p| (p, "group_member_added"));
        let removed = old.iter().filter(|p| !new.contains(p)).map(|p| (p, "group_member_removed"));
        let mut seen = std::collections::HashSet::new();
        for (p, event) in added.chain(removed) {
            if !seen.insert((p.clone(), event)) {
                continue;
            }
            let mut e = actor.event(event, json!({"via": "scim", "group_id": saved.id, "member_type": p.kind(), "member_id": p.id()}));
            if let Principal::User(u) = p {
                e = e.user(u);
            }
            app.audit(e).await;
        }
    }
    Ok(written(app, "Groups", &saved.id, before.is_none(), &representation(app, &saved), &etag(&saved)))
}

fn apply(group: &mut Group, w: &Written) -> Result<(), ScimError> {
    let input = GroupInput { display_name: w.display_name.clone(), external_id: w.external_id.clone().map(Option::unwrap_or_default) };
    group.apply(input).map_err(|e| ScimError::bad("invalidValue", e))
}

pub async fn create(app: Issuer, actor: Actor, Body(body): Body) -> Result<Response, ScimError> {
    let w = read(&app, &body_json(&body)?)?;
    let name = w.display_name.clone().ok_or_else(|| ScimError::bad("invalidValue", "displayName is required"))?;
    let mut group = Group::new(app.tenant.id, GroupInput { display_name: Some(name), external_id: None }).map_err(|e| ScimError::bad("invalidValue", e))?;
    apply(&mut group, &w)?;
    save(&app, &actor, None, group, w.members).await
}

pub async fn replace(app: Issuer, actor: Actor, Path(id): Path<String>, headers: HeaderMap, Body(body): Body) -> Result<Response, ScimError> {
    let before = find(&app, &id)?;
    check_if_match(&headers, &before)?;
    let w = read(&app, &body_json(&body)?)?;
    if w.display_name.is_none() {
        return Err(ScimError::bad("invalidValue", "displayName is required"));
    }
    let mut group = (*before).clone();
    apply(&mut group, &w)?;
    save(&app, &actor, Some(&before), group, w.members).await
}

pub async fn modify(app: Issuer, actor: Actor, Path(id): Path<String>, headers: HeaderMap, Body(body): Body) -> Result<Response, ScimError> {
    let before = find(&app, &id)?;
    check_if_match(&headers, &before)?;
    let ops = patch::parse_body(&body_json(&body)?).map_err(|e| ScimError::bad(e.scim_type, e.detail))?;
    let mut resource = representation(&app, &before);
    patch::apply(&mut resource, &ops, &crate::scim::CoreSchema).map_err(|e| ScimError::bad(e.scim_type, e.detail))?;
    let obj = resource.as_object().expect("a representation is an object");
    if member(obj, "id").and_then(Value::as_str) != Some(before.id.as_str()) {
        return Err(ScimError::bad("mutability", "id cannot be changed"));
    }
    let mut w = read(&app, &resource)?;
    // What the PATCH removed is gone: no members, no external id.
    w.members = Some(w.members.unwrap_or_default());
    w.external_id = Some(w.external_id.unwrap_or(None));
    if w.display_name.is_none() {
        return Err(ScimError::bad("invalidValue", "displayName cannot be removed"));
    }
    let mut group = (*before).clone();
    apply(&mut group, &w)?;
    save(&app, &actor, Some(&before), group, w.members).await
}

pub async fn delete(app: Issuer, actor: Actor, Path(id): Path<String>, headers: HeaderMap) -> Result<Response, ScimError> {
    let before = find(&app, &id)?;
    check_if_match(&headers, &before)?;
    app.registry().delete_group(&before.id).await?;
    app.audit(actor.event("group_deleted", json!({"via": "scim", "group_id": before.id, "display_name": before.display_name}))).await;
    Ok(StatusCode::NO_CONTENT.into_response())
}
