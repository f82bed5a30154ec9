//! `Groups` (RFC 7643 §4.2) read from the tenant's directory: one by id (with its `ETag`,
//! and `If-None-Match` answered 304), or a list (RFC 7644 §3.4.2) filtered by the grammar of
//! `scim::filter`, sorted, paginated, with `attributes` / `excludedAttributes`.

use super::query::Query;
use super::{location, read_one, ScimError};
use crate::registry::directory::{Group, Principal};
use crate::http::params::Body;
use crate::tenant::Issuer;
use axum::extract::{Path, RawQuery};
use axum::http::HeaderMap;
use axum::response::Response;
use serde_json::{json, Value};

pub(super) const SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:Group";

/// The group as SCIM shows it, with its direct members. (A member's name is not shown:
/// `display` is no sub-attribute of RFC 7643 §8.7.1's `members`, and a client that reads back
/// what it wrote should find just that.)
pub fn representation(app: &Issuer, g: &Group) -> Value {
    let members: Vec<Value> = app
        .registry()
        .group_members(&g.id)
        .iter()
        .map(|p| match p {
            Principal::User(id) => json!({"value": id, "type": "User", "$ref": location(app, "Users", id)}),
            Principal::Group(id) => json!({"value": id, "type": "Group", "$ref": location(app, "Groups", id)}),
        })
        .collect();
    let mut v = json!({
        "schemas": [SCHEMA], "id": g.id, "displayName": g.display_name, "members": members,
        "meta": {"resourceType": "Group", "created": crate::util::iso8601(g.created_at), "location": location(app, "Groups", &g.id), "version": etag(g)},
    });
    if let Some(ext) = &g.external_id {
        v["externalId"] = ext.clone().into();
    }
    v
}

/// RFC 7644 §3.14: a weak tag of the group's version (raised by every change to it or its
/// members).
pub(super) fn etag(g: &Group) -> String {
    format!("W/\"{}\"", g.version)
}

pub async fn one(app: Issuer, Path(id): Path<String>, RawQuery(query): RawQuery, headers: HeaderMap) -> Result<Response, ScimError> {
    let q = Query::parse(query.as_deref())?;
    let g = app.registry().with_directory(|d| d.group(&id).cloned()).ok_or_else(|| ScimError::not_found("no such group"))?;
    Ok(read_one(&headers, &etag(&g), || q.project(representation(&app, &g))))
}

pub async fn list(app: Issuer, RawQuery(query): RawQuery) -> Result<Response, ScimError> {
    answer(&app, Query::parse(query.as_deref())?)
}

/// §3.4.3: the same as a list, its parameters in the body.
pub async fn search(app: Issuer, Body(body): Body) -> Result<Response, ScimError> {
    answer(&app, Query::from_search(&super::body_json(&body)?)?)
}

fn answer(app: &Issuer, q: Query) -> Result<Response, ScimError> {
    let filter = q.filter()?;
    let groups = app.registry().list_groups();
    q.answer(groups.iter().map(|g| representation(app, g)), filter.as_ref())
}
