//! The list and projection parameters every SCIM resource type shares (RFC 7644 §3.4.2,
//! §3.9): `filter`, `sortBy` / `sortOrder`, `startIndex` / `count`, `attributes` /
//! `excludedAttributes`, applied to resources already in their SCIM form.
//!
//! Names are compared without case (RFC 7643 §2.1). A name may carry its schema's URN: a core
//! schema's is dropped (its attributes sit at the top level), an extension's picks the
//! object under that URN (`urn:…:enterprise:2.0:User:department`).

use super::discovery::MAX_RESULTS;
use super::{scim_json, ScimError, LIST_SCHEMA};
use crate::scim::filter::Filter;
use crate::scim::{AttributeTypes, CoreSchema, CORE_URN_PREFIX};
use axum::response::Response;
use serde_json::{json, Map, Value};
use std::cmp::Ordering;

pub(super) struct Query {
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
    pub(super) fn parse(raw: Option<&str>) -> Result<Self, ScimError> {
        let mut q = Query { filter: None, sort_by: None, descending: false, start: 1, count: MAX_RESULTS, attributes: Vec::new(), excluded: Vec::new() };
        let names = |v: &str| v.split(',').map(|a| strip_core(&a.trim().to_ascii_lowercase())).filter(|a| !a.is_empty()).collect::<Vec<_>>();
        for (k, v) in url::form_urlencoded::parse(raw.unwrap_or_default().as_bytes()) {
            match k.as_ref() {
                "filter" => q.filter = Some(v.into_owned()),
                "sortBy" => q.sort_by = Some(strip_core(&v.to_ascii_lowercase())),
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

    /// §3.4.3: a search sent as a POST, its parameters the members of a `SearchRequest`.
    pub(super) fn from_search(body: &Value) -> Result<Self, ScimError> {
        const SEARCH: &str = "urn:ietf:params:scim:api:messages:2.0:SearchRequest";
        let obj = body.as_object().ok_or_else(|| ScimError::bad("invalidSyntax", "a search request is a JSON object"))?;
        if !obj.get("schemas").and_then(Value::as_array).is_some_and(|s| s.iter().any(|s| s == SEARCH)) {
            return Err(ScimError::bad("invalidSyntax", format!("a search request's schemas name {SEARCH}")));
        }
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        for (k, v) in obj {
            let text = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Array(items) if k == "attributes" || k == "excludedAttributes" => {
                    items.iter().map(|i| i.as_str().ok_or_else(|| ScimError::bad("invalidValue", format!("{k} holds strings")))).collect::<Result<Vec<_>, _>>()?.join(",")
                }
                _ if k == "schemas" => continue,
                _ => return Err(ScimError::bad("invalidValue", format!("{k} has the wrong type"))),
            };
            form.append_pair(k, &text);
        }
        Self::parse(Some(&form.finish()))
    }

    /// The filter, parsed (`None` without one).
    pub(super) fn filter(&self) -> Result<Option<Filter>, ScimError> {
        Ok(self.filter.as_deref().map(crate::scim::filter::parse).transpose()?)
    }

    /// The list response (§3.4.2): the resources the filter keeps, sorted, the page asked
    /// for, each projected.
    pub(super) fn answer(&self, resources: impl Iterator<Item = Value>, filter: Option<&Filter>) -> Result<Response, ScimError> {
        let mut found = Vec::new();
        for v in resources {
            if filter.map_or(Ok(true), |f| f.matches(&v, &CoreSchema))? {
                found.push(v);
            }
        }
        if let Some(key) = &self.sort_by {
            let exact = CoreSchema.case_exact(None, key);
            found.sort_by(|a, b| compare(lookup(a, key), lookup(b, key), exact));
            if self.descending {
                found.reverse();
            }
        }
        let total = found.len();
        let page: Vec<Value> = found.into_iter().skip(self.start - 1).take(self.count).map(|v| self.project(v)).collect();
        Ok(scim_json(&json!({"schemas": [LIST_SCHEMA], "totalResults": total, "itemsPerPage": page.len(), "startIndex": self.start, "Resources": page})))
    }

    /// §3.9: only the attributes asked for (and those always returned: `id`, `schemas`), or
    /// all but the excluded ones.
    pub(super) fn project(&self, v: Value) -> Value {
        let Value::Object(mut map) = v else { return v };
        let always = |k: &str| k.eq_ignore_ascii_case("id") || k.eq_ignore_ascii_case("schemas");
        if !self.attributes.is_empty() {
            let mut kept = Map::new();
            for (k, val) in std::mem::take(&mut map) {
                let key = k.to_ascii_lowercase();
                if always(&k) || self.attributes.contains(&key) {
                    kept.insert(k, val);
                    continue;
                }
                let subs: Vec<&str> = self.attributes.iter().filter_map(|w| sub_of(w, &key)).collect();
                if !subs.is_empty() {
                    kept.insert(k, keep_subs(val, &subs));
                }
            }
            return Value::Object(kept);
        }
        for a in &self.excluded {
            let keys: Vec<String> = map.keys().cloned().collect();
            for k in keys {
                let key = k.to_ascii_lowercase();
                if *a == key && !always(&k) {
                    map.remove(&k);
                } else if let Some(sub) = sub_of(a, &key) {
                    if let Some(val) = map.get_mut(&k) {
                        drop_sub(val, sub);
                    }
                }
            }
        }
        Value::Object(map)
    }
}

/// A name without a core schema's URN (`urn:…:core:2.0:User:userName` is `username`).
fn strip_core(name: &str) -> String {
    match name.strip_prefix(&CORE_URN_PREFIX.to_ascii_lowercase()) {
        Some(rest) => rest.split_once(':').map_or(rest, |(_, attr)| attr).to_string(),
        None => name.to_string(),
    }
}

/// The sub-attribute `name` asks for under the top-level `key` (both lower case): after a
/// `.` (`name.givenname`), or after an extension's URN and `:`.
fn sub_of<'a>(name: &'a str, key: &str) -> Option<&'a str> {
    let rest = name.strip_prefix(key)?;
    rest.strip_prefix('.').or_else(|| rest.strip_prefix(':').filter(|_| key.starts_with("urn:")))
}

/// A value at `name` or `name.sub` (or an extension's `urn:…:attr`), in lower case.
fn lookup<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    let obj = v.as_object()?;
    let at = match obj.iter().find_map(|(k, val)| sub_of(path, &k.to_ascii_lowercase()).filter(|_| k.starts_with("urn:")).map(|sub| (val, sub))) {
        Some((ext, sub)) => crate::scim::patch::member(ext.as_object()?, sub)?,
        None => {
            let mut at = v;
            for part in path.split('.') {
                at = crate::scim::patch::member(at.as_object()?, part)?;
            }
            at
        }
    };
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
