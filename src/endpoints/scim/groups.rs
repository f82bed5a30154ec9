//! `Groups` (RFC 7643 §4.2) read from the tenant's directory: one by id (with its `ETag`,
//! and `If-None-Match` answered 304), or a list (RFC 7644 §3.4.2) filtered by the grammar of
//! `scim::filter`, sorted, paginated, with `attributes` / `excludedAttributes`.

use super::discovery::MAX_RESULTS;
use super::{location, scim_json, ScimError, LIST_SCHEMA};
use crate::registry::directory::{Group, Principal};
use crate::scim::{AttributeTypes, CoreSchema};
use crate::tenant::Issuer;
use axum::extract::{Path, RawQuery};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};
use std::cmp::Ordering;

const SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:Group";

/// The group as SCIM shows it, with its direct members.
pub fn representation(app: &Issuer, g: &Group) -> Value {
    let registry = app.registry();
    let members: Vec<Value> = registry
        .group_members(&g.id)
        .iter()
        .map(|p| match p {
            Principal::User(id) => json!({"value": id, "type": "User", "$ref": location(app, "Users", id),
                                          "display": registry.user(id).map(|u| u.username.clone())}),
            Principal::Group(id) => json!({"value": id, "type": "Group", "$ref": location(app, "Groups", id),
                                           "display": registry.group(id).map(|g| g.display_name.clone())}),
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

/// Whether an `If-Match` or `If-None-Match` list names `tag` (or is `*`).
pub(super) fn etag_matches(list: &str, tag: &str) -> bool {
    list.split(',').any(|t| t.trim() == "*" || t.trim() == tag)
}

pub async fn one(app: Issuer, Path(id): Path<String>, RawQuery(query): RawQuery, headers: HeaderMap) -> Result<Response, ScimError> {
    let q = Query::parse(query.as_deref())?;
    let g = app.registry().with_directory(|d| d.group(&id).cloned()).ok_or_else(|| ScimError::not_found("no such group"))?;
    let tag = etag(&g);
    if headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()).is_some_and(|v| etag_matches(v, &tag)) {
        return Ok(StatusCode::NOT_MODIFIED.into_response());
    }
    let mut res = scim_json(&q.project(representation(&app, &g)));
    if let Ok(v) = HeaderValue::from_str(&tag) {
        res.headers_mut().insert(header::ETAG, v);
    }
    Ok(res)
}

pub async fn list(app: Issuer, RawQuery(query): RawQuery) -> Result<Response, ScimError> {
    let q = Query::parse(query.as_deref())?;
    let filter = q.filter.as_deref().map(crate::scim::filter::parse).transpose()?;
    let mut found = Vec::new();
    for g in app.registry().list_groups() {
        let v = representation(&app, &g);
        if match &filter {
            Some(f) => f.matches(&v, &CoreSchema)?,
            None => true,
        } {
            found.push(v);
        }
    }
    if let Some(by) = &q.sort_by {
        let key = by.to_ascii_lowercase();
        let exact = CoreSchema.case_exact(None, &key);
        found.sort_by(|a, b| compare(lookup(a, &key), lookup(b, &key), exact));
        if q.descending {
            found.reverse();
        }
    }
    let total = found.len();
    let page: Vec<Value> = found.into_iter().skip(q.start - 1).take(q.count).map(|v| q.project(v)).collect();
    Ok(scim_json(&json!({"schemas": [LIST_SCHEMA], "totalResults": total, "itemsPerPage": page.len(), "startIndex": q.start, "Resources": page})))
}

/// A value at `name` or `name.sub` (lower case), names compared without case.
fn lookup<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    let mut at = v;
    for part in path.split('.') {
        at = crate::scim::patch::member(at.as_object()?, part)?;
    }
    Some(at).filter(|v| !v.is_null())
}

/// RFC 7644 §3.4.2.3: strings by their case-folded form unless `caseExact`; a missing value
/// sorts after every present one.
fn compare(a: Option<&Value>, b: Option<&Value>, exact: bool) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (Some(Value::String(x)), Some(Value::String(y))) if !exact => x.to_lowercase().cmp(&y.to_lowercase()),
        (Some(Value::String(x)), Some(Value::String(y))) => x.cmp(y),
        (Some(x), Some(y)) => x.to_string().cmp(&y.to_string()),
    }
}

/// The list and projection parameters of RFC 7644 §3.4.2 and §3.9.
struct Query {
    filter: Option<String>,
    sort_by: Option<String>,
    descending: bool,
    /// 1-based.
    start: usize,
    count: usize,
    attributes: Vec<String>,
    excluded: Vec<String>,
}

impl Query {
    fn parse(raw: Option<&str>) -> Result<Self, ScimError> {
        let mut q = Query { filter: None, sort_by: None, descending: false, start: 1, count: MAX_RESULTS, attributes: Vec::new(), excluded: Vec::new() };
        let names = |v: &str| v.split(',').map(|a| a.trim().to_ascii_lowercase()).filter(|a| !a.is_empty()).collect::<Vec<_>>();
        for (k, v) in url::form_urlencoded::parse(raw.unwrap_or_default().as_bytes()) {
            match k.as_ref() {
                "filter" => q.filter = Some(v.into_owned()),
                "sortBy" => q.sort_by = Some(v.into_owned()),
                "sortOrder" => match v.as_ref() {
                    "ascending" => q.descending = false,
                    "descending" => q.descending = true,
                    _ => return Err(ScimError::bad("invalidValue", "sortOrder is ascending or descending")),
                },
                // §3.4.2.4: a startIndex under 1 is 1; a negative count is 0; more than the
                // service returns is cut to it.
                "startIndex" => q.start = v.parse::<i64>().map_err(|_| ScimError::bad("invalidValue", "startIndex is an integer"))?.max(1) as usize,
                "count" => q.count = (v.parse::<i64>().map_err(|_| ScimError::bad("invalidValue", "count is an integer"))?.max(0) as usize).min(MAX_RESULTS),
                "attributes" => q.attributes = names(&v),
                "excludedAttributes" => q.excluded = names(&v),
                _ => {}
            }
        }
        Ok(q)
    }

    /// §3.9: only the attributes asked for (and those always returned: `id`, `schemas`), or
    /// all but the excluded ones. A core schema URN before a name is allowed.
    fn project(&self, v: Value) -> Value {
        let Value::Object(mut map) = v else { return v };
        let strip = |a: &str| a.strip_prefix(&format!("{}:", SCHEMA.to_ascii_lowercase())).unwrap_or(a).to_string();
        let always = |k: &str| k.eq_ignore_ascii_case("id") || k.eq_ignore_ascii_case("schemas");
        if !self.attributes.is_empty() {
            let wanted: Vec<String> = self.attributes.iter().map(|a| strip(a)).collect();
            let mut kept = Map::new();
            for (k, val) in std::mem::take(&mut map) {
                let key = k.to_ascii_lowercase();
                if always(&k) || wanted.contains(&key) {
                    kept.insert(k, val);
                } else {
                    let subs: Vec<&str> = wanted.iter().filter_map(|w| w.strip_prefix(&format!("{key}."))).collect();
                    if !subs.is_empty() {
                        kept.insert(k, keep_subs(val, &subs));
                    }
                }
            }
            return Value::Object(kept);
        }
        for a in self.excluded.iter().map(|a| strip(a)) {
            match a.split_once('.') {
                None => map.retain(|k, _| always(k) || !k.eq_ignore_ascii_case(&a)),
                Some((name, sub)) => {
                    for (_, val) in map.iter_mut().filter(|(k, _)| k.eq_ignore_ascii_case(name)) {
                        drop_sub(val, sub);
                    }
                }
            }
        }
        Value::Object(map)
    }
}

/// A complex (or multi-valued complex) value with only the sub-attributes `subs`.
fn keep_subs(v: Value, subs: &[&str]) -> Value {
    match v {
        Value::Array(items) => Value::Array(items.into_iter().map(|i| keep_subs(i, subs)).collect()),
        Value::Object(m) => Value::Object(m.into_iter().filter(|(k, _)| subs.iter().any(|s| k.eq_ignore_ascii_case(s))).collect()),
        other => other,
    }
}

fn drop_sub(v: &mut Value, sub: &str) {
    match v {
        Value::Array(items) => items.iter_mut().for_each(|i| drop_sub(i, sub)),
        Value::Object(m) => m.retain(|k, _| !k.eq_ignore_ascii_case(sub)),
        _ => {}
    }
}
