//! PATCH (RFC 7644 §3.5.2) applied to a SCIM resource held as JSON: `add`, `replace` and
//! `remove`, with or without a `path` (`scim::path`), value filters evaluated by
//! `scim::eval`. The endpoint then reads the changed resource back into the directory, so
//! that one change is checked and written as a whole (a PATCH is all or nothing).
//!
//! What providers send beyond the RFC is taken as they mean it (Entra ID's and Okta's
//! documented shapes): operation names in any case; `remove` on a multi-valued attribute
//! with a `value` removes those values only (`{"op": "Remove", "path": "members", "value":
//! [{"value": "id"}]}`), where the RFC alone would remove every member.

use super::filter::Filter;
use super::path::{self, Path};
use super::{AttrPath, AttributeTypes};
use serde_json::{Map, Value};

/// Why an operation was refused: what a SCIM error (status 400) carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchError {
    /// `invalidPath`, `noTarget`, `invalidValue`, `invalidSyntax` or `mutability`.
    pub scim_type: &'static str,
    pub detail: String,
}

fn err(scim_type: &'static str, detail: impl Into<String>) -> PatchError {
    PatchError { scim_type, detail: detail.into() }
}

/// One operation of a PatchOp request.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    Add(Option<Path>, Value),
    Replace(Option<Path>, Value),
    Remove(Path, Option<Value>),
}

/// The operations of a PatchOp body (`{"schemas": [...PatchOp], "Operations": [...]}`).
pub fn parse_body(body: &Value) -> Result<Vec<Op>, PatchError> {
    const PATCH_OP: &str = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
    let schemas_ok = body.get("schemas").and_then(Value::as_array).is_some_and(|s| s.iter().any(|u| u.as_str().is_some_and(|u| u.eq_ignore_ascii_case(PATCH_OP))));
    if !schemas_ok {
        return Err(err("invalidSyntax", format!("schemas must name {PATCH_OP}")));
    }
    let ops = member(body.as_object().unwrap_or(&Map::new()), "Operations").and_then(Value::as_array).cloned().ok_or_else(|| err("invalidSyntax", "Operations: an array of operations"))?;
    ops.iter().map(parse_op).collect()
}

fn parse_op(op: &Value) -> Result<Op, PatchError> {
    let o = op.as_object().ok_or_else(|| err("invalidSyntax", "each operation is an object"))?;
    let name = member(o, "op").and_then(Value::as_str).ok_or_else(|| err("invalidSyntax", "an operation needs op"))?;
    let path = match member(o, "path") {
        None | Some(Value::Null) => None,
        Some(Value::String(p)) if p.is_empty() => None,
        Some(Value::String(p)) => Some(path::parse(p).map_err(|e| err("invalidPath", e.detail))?),
        Some(_) => return Err(err("invalidPath", "path is a string")),
    };
    let value = member(o, "value").cloned();
    match name.to_ascii_lowercase().as_str() {
        "add" | "replace" => {
            let value = value.ok_or_else(|| err("invalidValue", format!("{name} needs a value")))?;
            if path.is_none() && !value.is_object() {
                return Err(err("invalidValue", format!("{name} without a path takes an object of attributes")));
            }
            Ok(if name.eq_ignore_ascii_case("add") { Op::Add(path, value) } else { Op::Replace(path, value) })
        }
        "remove" => Ok(Op::Remove(path.ok_or_else(|| err("noTarget", "remove needs a path"))?, value)),
        _ => Err(err("invalidSyntax", format!("op {name:?} is not add, replace or remove"))),
    }
}

/// Apply `ops` in order to `resource`; on an error `resource` may be half changed, so the
/// caller applies them to a copy and keeps it only when all succeeded.
pub fn apply(resource: &mut Value, ops: &[Op], schema: &dyn AttributeTypes) -> Result<(), PatchError> {
    for op in ops {
        match op {
            Op::Add(None, Value::Object(attrs)) | Op::Replace(None, Value::Object(attrs)) => {
                let replace = matches!(op, Op::Replace(..));
                for (name, value) in attrs {
                    let target = AttrPath { urn: None, name: name.clone(), sub: None };
                    set(resource, &Path { attr: target, value_filter: None }, value.clone(), replace, schema)?;
                }
            }
            Op::Add(Some(p), v) => set(resource, p, v.clone(), false, schema)?,
            Op::Replace(Some(p), v) => set(resource, p, v.clone(), true, schema)?,
            Op::Remove(p, v) => remove(resource, p, v.as_ref(), schema)?,
            Op::Add(None, _) | Op::Replace(None, _) => return Err(err("invalidValue", "an object of attributes")),
        }
    }
    Ok(())
}

/// The object an attribute path's attribute lives in: the resource, or its extension's object
/// (made when `create`).
fn container<'a>(resource: &'a mut Value, attr: &AttrPath, create: bool) -> Result<Option<&'a mut Map<String, Value>>, PatchError> {
    let root = resource.as_object_mut().ok_or_else(|| err("invalidSyntax", "the resource is not an object"))?;
    match &attr.urn {
        Some(urn) if !attr.in_core_schema() => {
            let key = key_of(root, urn).unwrap_or_else(|| urn.clone());
            if !root.contains_key(&key) {
                if !create {
                    return Ok(None);
                }
                root.insert(key.clone(), Value::Object(Map::new()));
            }
            match root.get_mut(&key) {
                Some(Value::Object(ext)) => Ok(Some(ext)),
                _ => Err(err("invalidValue", format!("{urn} is not an object"))),
            }
        }
        _ => Ok(Some(root)),
    }
}

/// `add` (`replace == false`) or `replace` at `p`.
fn set(resource: &mut Value, p: &Path, value: Value, replace: bool, schema: &dyn AttributeTypes) -> Result<(), PatchError> {
    // A whole extension named by its URN (`urn:…:enterprise:2.0:User` parses as that URN's
    // last segment): its attributes merged in.
    if let Some(whole) = whole_extension(resource, p, schema) {
        let Value::Object(attrs) = value else { return Err(err("invalidValue", "an extension is set with an object of its attributes")) };
        let root = resource.as_object_mut().ok_or_else(|| err("invalidSyntax", "the resource is not an object"))?;
        let key = key_of(root, &whole).unwrap_or(whole);
        let ext = root.entry(key).or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(ext) = ext else { return Err(err("invalidValue", "the extension is not an object")) };
        for (k, v) in attrs {
            put(ext, &k, v, replace);
        }
        return Ok(());
    }
    let schema_urn = p.attr.urn.clone();
    let obj = container(resource, &p.attr, true)?.expect("made when asked");
    let key = key_of(obj, &p.attr.name).unwrap_or_else(|| p.attr.name.clone());
    match (&p.value_filter, &p.attr.sub) {
        (None, None) => put(obj, &key, value, replace),
        (None, Some(sub)) => {
            let target = obj.entry(key).or_insert_with(|| Value::Object(Map::new()));
            match target {
                Value::Object(complex) => {
                    let sub_key = key_of(complex, sub).unwrap_or_else(|| sub.clone());
                    put(complex, &sub_key, value, replace);
                }
                Value::Array(items) => {
                    for item in items.iter_mut().filter_map(Value::as_object_mut) {
                        let sub_key = key_of(item, sub).unwrap_or_else(|| sub.clone());
                        put(item, &sub_key, value.clone(), true);
                    }
                }
                _ => return Err(err("invalidPath", format!("{} has no sub-attributes", p.attr.name))),
            }
        }
        (Some(filter), sub) => {
            let Some(Value::Array(items)) = obj.get_mut(&key) else {
                return Err(err("noTarget", format!("no value of {} matches the filter", p.attr.name)));
            };
            let within = AttrPath { urn: schema_urn, name: p.attr.name.clone(), sub: None };
            let mut matched = 0;
            for item in items.iter_mut() {
                if !item_matches(filter, item, &within, schema)? {
                    continue;
                }
                matched += 1;
                let Value::Object(complex) = item else { continue };
                match sub {
                    Some(sub) => {
                        let sub_key = key_of(complex, sub).unwrap_or_else(|| sub.clone());
                        complex.insert(sub_key, value.clone());
                    }
                    None => match &value {
                        Value::Object(with) => with.iter().for_each(|(k, v)| {
                            let k = key_of(complex, k).unwrap_or_else(|| k.clone());
                            complex.insert(k, v.clone());
                        }),
                        _ => return Err(err("invalidValue", "the matching values are replaced by an object")),
                    },
                }
            }
            if matched == 0 {
                return Err(err("noTarget", format!("no value of {} matches the filter", p.attr.name)));
            }
        }
    }
    Ok(())
}

/// Put `value` at `key` of `obj`: `replace` sets it; `add` appends to a multi-valued
/// attribute (skipping values already there), merges into a complex one, else sets.
fn put(obj: &mut Map<String, Value>, key: &str, value: Value, replace: bool) {
    let key = key_of(obj, key).unwrap_or_else(|| key.to_string());
    match (replace, obj.get_mut(&key), value) {
        (false, Some(Value::Array(items)), Value::Array(new)) => {
            for v in new {
                if !items.iter().any(|i| same_value(i, &v)) {
                    items.push(v);
                }
            }
        }
        (false, Some(Value::Array(items)), v) => {
            if !items.iter().any(|i| same_value(i, &v)) {
                items.push(v);
            }
        }
        (false, Some(Value::Object(complex)), Value::Object(new)) => {
            for (k, v) in new {
                let k = key_of(complex, &k).unwrap_or(k);
                complex.insert(k, v);
            }
        }
        (_, _, Value::Null) => drop(obj.remove(&key)),
        (_, _, v) => drop(obj.insert(key, v)),
    }
}

/// The URN of the extension `p` names as a whole, if it does: a path without a filter or
/// sub-attribute whose URN and name together are an extension the schema knows, or one the
/// resource has.
fn whole_extension(resource: &Value, p: &Path, schema: &dyn AttributeTypes) -> Option<String> {
    if p.value_filter.is_some() || p.attr.sub.is_some() {
        return None;
    }
    let whole = format!("{}:{}", p.attr.urn.as_deref()?, p.attr.name);
    let known = schema.is_extension(&whole.to_ascii_lowercase()) || resource.as_object().is_some_and(|r| key_of(r, &whole).is_some());
    known.then_some(whole)
}

fn remove(resource: &mut Value, p: &Path, value: Option<&Value>, schema: &dyn AttributeTypes) -> Result<(), PatchError> {
    if let Some(whole) = whole_extension(resource, p, schema) {
        if let Some(root) = resource.as_object_mut() {
            if let Some(k) = key_of(root, &whole) {
                root.remove(&k);
            }
        }
        return Ok(());
    }
    let schema_urn = p.attr.urn.clone();
    let Some(obj) = container(resource, &p.attr, false)? else { return Ok(()) };
    let Some(key) = key_of(obj, &p.attr.name) else { return Ok(()) };
    match (&p.value_filter, &p.attr.sub, value) {
        // Entra ID's and Okta's shape: the values to take out of a multi-valued attribute.
        (None, None, Some(given)) if obj.get(&key).is_some_and(Value::is_array) => {
            let given: Vec<&Value> = match given {
                Value::Array(vs) => vs.iter().collect(),
                v => vec![v],
            };
            if let Some(Value::Array(items)) = obj.get_mut(&key) {
                items.retain(|i| !given.iter().any(|g| same_value(i, g)));
            }
        }
        (None, None, _) => drop(obj.remove(&key)),
        (None, Some(sub), _) => match obj.get_mut(&key) {
            Some(Value::Object(complex)) => drop(key_of(complex, sub).map(|k| complex.remove(&k))),
            Some(Value::Array(items)) => items.iter_mut().filter_map(Value::as_object_mut).for_each(|c| drop(key_of(c, sub).map(|k| c.remove(&k)))),
            _ => {}
        },
        (Some(filter), sub, _) => {
            let within = AttrPath { urn: schema_urn, name: p.attr.name.clone(), sub: None };
            let Some(Value::Array(items)) = obj.get_mut(&key) else { return Ok(()) };
            let mut kept = Vec::with_capacity(items.len());
            for mut item in std::mem::take(items) {
                if !item_matches(filter, &item, &within, schema)? {
                    kept.push(item);
                    continue;
                }
                if let (Some(sub), Value::Object(complex)) = (sub, &mut item) {
                    if let Some(k) = key_of(complex, sub) {
                        complex.remove(&k);
                    }
                    kept.push(item);
                }
            }
            *items = kept;
        }
    }
    if obj.get(&key).is_some_and(|v| v.as_array().is_some_and(Vec::is_empty)) {
        obj.remove(&key);
    }
    Ok(())
}

/// Whether one value of a multi-valued attribute matches a value filter (whose names are its
/// sub-attributes): evaluated as `attr[filter]` on a resource holding that value alone.
fn item_matches(filter: &Filter, item: &Value, within: &AttrPath, schema: &dyn AttributeTypes) -> Result<bool, PatchError> {
    let mut alone = Map::new();
    alone.insert(within.name.clone(), Value::Array(vec![item.clone()]));
    let probe = Filter::ValuePath(within.clone(), Box::new(filter.clone()));
    probe.matches(&Value::Object(alone), schema).map_err(|e| err("invalidFilter", e.detail))
}

/// Two values of a multi-valued attribute are one if equal, or (complex ones) if their
/// `value` sub-attributes are.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a.get("value"), b.get("value")) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// The key of `obj` that is `name` without regard to case.
fn key_of(obj: &Map<String, Value>, name: &str) -> Option<String> {
    obj.keys().find(|k| k.eq_ignore_ascii_case(name)).cloned()
}

/// The member of `obj` named `name` without regard to case (RFC 7643 §2.1).
pub fn member<'a>(obj: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    obj.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scim::CoreSchema;
    use serde_json::json;

    fn patch(resource: Value, body: Value) -> Result<Value, PatchError> {
        let mut r = resource;
        apply(&mut r, &parse_body(&body)?, &CoreSchema)?;
        Ok(r)
    }

    fn ops(list: Value) -> Value {
        json!({"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": list})
    }

    fn group() -> Value {
        json!({"id": "g1", "displayName": "Tour Guides", "members": [{"value": "u1", "display": "Babs"}, {"value": "u2"}]})
    }

    /// RFC 7644 §3.5.2.1-3's examples, and what Entra ID and Okta send for groups.
    #[test]
    fn add_replace_and_remove_as_the_rfc_and_the_providers_send_them() {
        let added = patch(group(), ops(json!([{"op": "add", "path": "members", "value": [{"value": "u3"}, {"value": "u1"}]}]))).unwrap();
        assert_eq!(added["members"].as_array().unwrap().len(), 3, "u1 is not added twice");
        let renamed = patch(group(), ops(json!([{"op": "Replace", "path": "displayName", "value": "Guides"}]))).unwrap();
        assert_eq!(renamed["displayName"], "Guides");
        // Entra ID: replace without a path, an object of attributes; names in any case.
        let entra = patch(group(), ops(json!([{"op": "Replace", "value": {"displayname": "Guides", "externalId": "e-1"}}]))).unwrap();
        assert_eq!((entra["displayName"].as_str(), entra["externalId"].as_str()), (Some("Guides"), Some("e-1")));
        // The RFC's remove by filter, and Entra's and Okta's remove with values.
        let one = patch(group(), ops(json!([{"op": "remove", "path": "members[value eq \"u2\"]"}]))).unwrap();
        assert_eq!(one["members"], json!([{"value": "u1", "display": "Babs"}]));
        let entra_remove = patch(group(), ops(json!([{"op": "Remove", "path": "members", "value": [{"value": "u1"}]}]))).unwrap();
        assert_eq!(entra_remove["members"], json!([{"value": "u2"}]));
        let all = patch(group(), ops(json!([{"op": "remove", "path": "members"}]))).unwrap();
        assert!(all.get("members").is_none(), "the RFC's remove without a value removes them all");
        // A filter with a sub-attribute; a filter matching nothing is noTarget.
        let shown = patch(group(), ops(json!([{"op": "replace", "path": "members[value eq \"u2\"].display", "value": "Bob"}]))).unwrap();
        assert_eq!(shown["members"][1]["display"], "Bob");
        let none = patch(group(), ops(json!([{"op": "replace", "path": "members[value eq \"u9\"].display", "value": "x"}])));
        assert_eq!(none.unwrap_err().scim_type, "noTarget");
        // Several operations in order; replace of a multi-valued attribute replaces them all.
        let set = patch(group(), ops(json!([{"op": "replace", "path": "members", "value": [{"value": "u5"}]}, {"op": "add", "path": "members", "value": [{"value": "u6"}]}]))).unwrap();
        assert_eq!(set["members"], json!([{"value": "u5"}, {"value": "u6"}]));
    }

    #[test]
    fn extensions_by_urn() {
        let user = json!({"userName": "babs"});
        let ent = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
        let with = patch(user.clone(), ops(json!([{"op": "add", "path": format!("{ent}:department"), "value": "Tour"}]))).unwrap();
        assert_eq!(with[ent]["department"], "Tour");
        let whole = patch(user.clone(), ops(json!([{"op": "replace", "path": ent, "value": {"employeeNumber": "42"}}]))).unwrap();
        assert_eq!(whole[ent]["employeeNumber"], "42");
        let gone = patch(with.clone(), ops(json!([{"op": "remove", "path": format!("{ent}:department")}]))).unwrap();
        assert!(gone[ent].get("department").is_none());
        // A complex attribute of the extension is set under its name, not merged into the
        // extension; the whole extension can be removed.
        let manager = json!({"value": "m1", "$ref": "https://example.com/Users/m1"});
        let managed = patch(with.clone(), ops(json!([{"op": "add", "path": format!("{ent}:manager"), "value": manager}]))).unwrap();
        assert_eq!(managed[ent], json!({"department": "Tour", "manager": manager}));
        let replaced = patch(managed, ops(json!([{"op": "replace", "path": format!("{ent}:manager"), "value": {"value": "m2"}}]))).unwrap();
        assert_eq!(replaced[ent]["manager"]["value"], "m2");
        let none = patch(with, ops(json!([{"op": "remove", "path": ent}]))).unwrap();
        assert!(none.get(ent).is_none(), "{none}");
    }

    #[test]
    fn malformed_requests_say_what_is_wrong() {
        for (body, want) in [
            (json!({"Operations": []}), "invalidSyntax"),
            (ops(json!([{"op": "move", "path": "displayName"}])), "invalidSyntax"),
            (ops(json!([{"op": "remove"}])), "noTarget"),
            (ops(json!([{"op": "add", "path": "members[value eq", "value": 1}])), "invalidPath"),
            (ops(json!([{"op": "add", "path": "displayName"}])), "invalidValue"),
            (ops(json!([{"op": "replace", "value": "x"}])), "invalidValue"),
            (ops(json!("not a list")), "invalidSyntax"),
        ] {
            assert_eq!(patch(group(), body.clone()).unwrap_err().scim_type, want, "{body}");
        }
    }
}
