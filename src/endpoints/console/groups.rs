//! Groups in the console (issue 32): the tenant's groups of users, nestable. A tenant admin
//! lists, creates, renames and deletes them (the name typed again) and adds or removes their
//! direct members, users (by username or e-mail) and groups; an auditor looks. The changes
//! are the admin API's (`admin_directory`), audited with the console user as the actor, and
//! what the directory refuses (a cycle, a name taken, a bound) is said on the page.

use super::clients::enc;
use super::{message, not_found, refused, text, with_notice, Change, Id, Viewer};
use crate::endpoints::admin_directory as ops;
use crate::endpoints::first_party::see_other;
use crate::error::OAuthError;
use crate::http::params::Params;
use crate::registry::directory::{Group, GroupInput, Principal};
use crate::tenant::Issuer;
use crate::ui::Page;
use axum::extract::RawQuery;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Value};
use std::sync::Arc;

/// The most rows a list shows (a search narrows the groups; a group's members are counted).
pub(super) const PAGE: usize = 200;

/// How a page shows a member or an assignee: its kind, a name, and its page in the console.
pub(super) fn principal_row(app: &Issuer, p: &Principal) -> Value {
    let registry = app.registry();
    match p {
        Principal::User(id) => {
            let u = registry.user(id);
            json!({"kind": "users", "id": id, "name": u.as_ref().map_or_else(|| id.clone(), |u| u.username.clone()),
                   "email": u.as_ref().and_then(|u| u.email().map(str::to_string)), "href": format!("/console/users/{}", enc(id))})
        }
        Principal::Group(id) => {
            let name = registry.group(id).map_or_else(|| id.clone(), |g| g.display_name.clone());
            json!({"kind": "groups", "id": id, "name": name, "href": format!("/console/groups/{}", enc(id))})
        }
    }
}

/// The member or assignee a form names: `kind` (`users` or `groups`) and `member` (a
/// username, e-mail or id; a group's name or id), the tenant's own or refused.
pub(super) fn named(app: &Issuer, params: &Params) -> Result<Principal, OAuthError> {
    let who = text(params, "member").unwrap_or_default();
    ops::principal(app, params.get("kind").unwrap_or_default(), &who)
}

fn list_page(app: &Issuer, viewer: &Viewer, q: &str) -> Page {
    let key = q.to_lowercase();
    let all = app.registry().list_groups();
    // Names in any case; an id or an external id exactly.
    let matching: Vec<&Arc<Group>> = all
        .iter()
        .filter(|g| key.is_empty() || g.id == q || g.external_id.as_deref() == Some(q) || g.name_key().contains(&key))
        .collect();
    let rows: Vec<Value> = app.registry().with_directory(|d| {
        matching.iter().take(PAGE).map(|g| json!({"id": g.id, "name": g.display_name, "external_id": g.external_id, "members": d.member_count(&g.id)})).collect()
    });
    viewer
        .page("console_groups.html", "console-groups", "groups")
        .with("groups", rows)
        .with("q", q)
        .with("total", matching.len())
        .with("shown", matching.len().min(PAGE))
        .with("group", json!({}))
}

pub async fn list(app: Issuer, viewer: Viewer, RawQuery(query): RawQuery) -> Response {
    let params = Params::parse(query.as_deref().unwrap_or_default().as_bytes()).unwrap_or_default();
    with_notice(list_page(&app, &viewer, params.get("q").map(str::trim).unwrap_or_default()), query.as_deref())
}

/// The form's fields as the admin API's input: an emptied external id removes it.
fn input(params: &Params) -> GroupInput {
    GroupInput { display_name: Some(params.get("display_name").unwrap_or_default().to_string()), external_id: Some(text(params, "external_id").unwrap_or_default()) }
}

fn typed(params: &Params) -> Value {
    json!({"name": text(params, "display_name"), "external_id": text(params, "external_id")})
}

pub async fn create(app: Issuer, Change { admin, params }: Change) -> Response {
    match ops::create(&app, &admin.actor(), input(&params)).await {
        Ok(g) => see_other(app.base(), &format!("/console/groups/{}?done=created", enc(&g.id))),
        Err(e) => refused(list_page(&app, &admin, "").with("group", typed(&params)), &e),
    }
}

/// A group's page: its name and external id (a form for an admin), the groups it is in, its
/// direct members with links to their pages (and forms to add and remove them).
async fn show_page(app: &Issuer, viewer: &Viewer, group: &Group) -> Page {
    let registry = app.registry();
    let members = registry.group_members(&group.id);
    // Whose each membership is: a directory's mapping is said on its row (it comes back at
    // the member's next sign-in if it is removed here while the directory still has it). Not
    // readable now: every row as an operator's.
    let sources = registry.group_member_sources(&group.id).await.unwrap_or_default();
    let rows: Vec<Value> = members
        .iter()
        .take(PAGE)
        .map(|p| {
            let mut row = principal_row(app, p);
            if let Some(s) = sources.get(&p.key()) {
                row["directory"] = s.strip_prefix("ldap:").unwrap_or(s).into();
            }
            row
        })
        .collect();
    let parents: Vec<Value> = registry.direct_groups(&Principal::Group(group.id.clone())).iter().map(|g| principal_row(app, &Principal::Group(g.id.clone()))).collect();
    viewer
        .page("console_group.html", "console-group", "groups")
        .with("group", json!({"id": group.id, "name": group.display_name, "external_id": group.external_id, "created": super::when(group.created_at)}))
        .with("members", rows)
        .with("total", members.len())
        .with("shown", members.len().min(PAGE))
        .with("parents", parents)
}

/// The group of the path (by id, or by name as the admin API takes it).
fn found(app: &Issuer, id: &str) -> Result<Arc<Group>, Response> {
    ops::find_group(app, id).map_err(|_| not_found())
}

pub async fn show(app: Issuer, viewer: Viewer, Id(id): Id, RawQuery(query): RawQuery) -> Response {
    match found(&app, &id) {
        Ok(group) => with_notice(show_page(&app, &viewer, &group).await, query.as_deref()),
        Err(res) => res,
    }
}

fn done(app: &Issuer, group: &Group, what: &str) -> Response {
    see_other(app.base(), &format!("/console/groups/{}?done={what}", enc(&group.id)))
}

/// Rename a group or change its external id.
pub async fn update(app: Issuer, Id(id): Id, Change { admin, params }: Change) -> Response {
    let group = match found(&app, &id) {
        Ok(g) => g,
        Err(res) => return res,
    };
    match ops::change(&app, &admin.actor(), &group.id, input(&params)).await {
        Ok(g) => done(&app, &g, "saved"),
        Err(e) => {
            let mut values = typed(&params);
            values["id"] = group.id.clone().into();
            refused(show_page(&app, &admin, &group).await.with("group", values), &e)
        }
    }
}

/// Delete a group, its name typed again: its memberships and role assignments go with it.
pub async fn delete(app: Issuer, Id(id): Id, Change { admin, params }: Change) -> Response {
    let group = match found(&app, &id) {
        Ok(g) => g,
        Err(res) => return res,
    };
    if params.get("confirm").map(str::trim) != Some(group.display_name.as_str()) {
        let back = format!("/console/groups/{}", enc(&group.id));
        return message(StatusCode::BAD_REQUEST, "console-refused-heading", "console-group-confirm-wrong", (&back, "console-back-group"));
    }
    let result = ops::delete(&app, &admin.actor(), &group.id).await;
    removal(result.map(|()| true), || see_other(app.base(), "/console/groups?done=deleted"))
}

/// What a form that removes something answers: `back` once done; not found when there was
/// nothing to remove (a second click, another admin first); else the failure.
pub(super) fn removal(result: Result<bool, OAuthError>, back: impl FnOnce() -> Response) -> Response {
    match result {
        Ok(true) => back(),
        Ok(false) => not_found(),
        Err(e) if e.status == StatusCode::NOT_FOUND => not_found(),
        Err(e) => super::failed(&e),
    }
}

/// Add a user or a group to the group; refused (a cycle, a bound, nobody by that name): the
/// page again with what was typed and why.
pub async fn add_member(app: Issuer, Id(id): Id, Change { admin, params }: Change) -> Response {
    let group = match found(&app, &id) {
        Ok(g) => g,
        Err(res) => return res,
    };
    let result = match named(&app, &params) {
        Ok(p) => ops::set_member(&app, &admin.actor(), &group.id, p, true).await,
        Err(e) => Err(e),
    };
    match result {
        Ok(_) => done(&app, &group, "created"),
        Err(e) => {
            let page = show_page(&app, &admin, &group).await.with("typed_for", "member").with("typed_kind", params.get("kind").unwrap_or_default()).with("typed_member", params.get("member").unwrap_or_default());
            refused(page, &e)
        }
    }
}

/// Take a member out (`kind` and `member`, its id, as the page's button sends them).
pub async fn remove_member(app: Issuer, Id(id): Id, Change { admin, params }: Change) -> Response {
    let group = match found(&app, &id) {
        Ok(g) => g,
        Err(res) => return res,
    };
    let p = match named(&app, &params) {
        Ok(p) => p,
        Err(_) => return not_found(),
    };
    removal(ops::set_member(&app, &admin.actor(), &group.id, p, false).await, || done(&app, &group, "removed"))
}
