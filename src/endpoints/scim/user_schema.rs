//! The User schema this service supports (RFC 7643 §4.1) and the enterprise extension (§4.3),
//! as one table: what `/Schemas` publishes and what a written user is checked against are
//! the same thing.
//!
//! A written user is *normalized* by it: each attribute the schema names is kept under the
//! schema's spelling (names are case-insensitive, §2.1) once its type is right; attributes
//! the schema does not name, and read-only ones (§2.2: "SHALL be ignored" when sent), are
//! dropped; a value of the wrong type is refused (`invalidValue`). What is kept is what the
//! client sent, so that a client reads back exactly what it wrote.

use super::ScimError;
use serde_json::{json, Map, Value};

pub use crate::scim::user::{ENTERPRISE_SCHEMA as ENTERPRISE, USER_SCHEMA as USER};

#[derive(Clone, Copy)]
pub enum Kind {
    String,
    Boolean,
    /// A URI (§2.3.7); `refs` says to what.
    Reference(&'static [&'static str]),
    /// Base64 (§2.3.6).
    Binary,
    Complex(&'static [Attr]),
}

#[derive(Clone, Copy, PartialEq)]
pub enum Mutability {
    ReadWrite,
    ReadOnly,
    WriteOnly,
}

#[derive(Clone, Copy)]
pub struct Attr {
    pub name: &'static str,
    pub kind: Kind,
    pub multi: bool,
    pub mutability: Mutability,
    pub description: &'static str,
}

const fn attr(name: &'static str, kind: Kind, description: &'static str) -> Attr {
    Attr { name, kind, multi: false, mutability: Mutability::ReadWrite, description }
}

const fn many(name: &'static str, subs: &'static [Attr], description: &'static str) -> Attr {
    Attr { name, kind: Kind::Complex(subs), multi: true, mutability: Mutability::ReadWrite, description }
}

const S: Kind = Kind::String;

/// The sub-attributes of most multi-valued attributes (§2.4).
const PLURAL: &[Attr] = &[
    attr("value", S, "The value"),
    attr("display", S, "A human-readable name"),
    attr("type", S, "A label, e.g. work or home"),
    attr("primary", Kind::Boolean, "Whether this is the primary value"),
];

const PHOTO: &[Attr] = &[
    attr("value", Kind::Reference(&["external"]), "The URL of the photo; its primary one is the picture claim"),
    attr("display", S, "A human-readable name"),
    attr("type", S, "photo or thumbnail"),
    attr("primary", Kind::Boolean, "Whether this is the primary photo"),
];

const CERTIFICATE: &[Attr] = &[
    attr("value", Kind::Binary, "A DER certificate, base64"),
    attr("display", S, "A human-readable name"),
    attr("type", S, "A label"),
    attr("primary", Kind::Boolean, "Whether this is the primary certificate"),
];

const ADDRESS: &[Attr] = &[
    attr("formatted", S, "The full address"),
    attr("streetAddress", S, "Street and number"),
    attr("locality", S, "City"),
    attr("region", S, "State or region"),
    attr("postalCode", S, "Postal code"),
    attr("country", S, "Country, ISO 3166-1 alpha-2"),
    attr("type", S, "work, home or other"),
    attr("primary", Kind::Boolean, "Whether this is the primary address; it is the address claim"),
];

const NAME: &[Attr] = &[
    attr("formatted", S, "The full name, formatted for display"),
    attr("familyName", S, "The family_name claim"),
    attr("givenName", S, "The given_name claim"),
    attr("middleName", S, "The middle_name claim"),
    attr("honorificPrefix", S, "e.g. Ms."),
    attr("honorificSuffix", S, "e.g. III"),
];

const GROUP_REF: &[Attr] = &[
    attr("value", S, "The group's id"),
    attr("$ref", Kind::Reference(&["Group"]), "The group's URI"),
    attr("display", S, "The group's name"),
    attr("type", S, "direct or indirect"),
];

/// The core User attributes other than `id`, `externalId` and `meta` (§3.1, common to every
/// resource).
pub const USER_ATTRS: &[Attr] = &[
    Attr { name: "userName", kind: S, multi: false, mutability: Mutability::ReadWrite, description: "The login name, unique in the tenant without case" },
    Attr { name: "name", kind: Kind::Complex(NAME), multi: false, mutability: Mutability::ReadWrite, description: "The parts of the user's name" },
    attr("displayName", S, "The name claim"),
    attr("nickName", S, "The nickname claim"),
    attr("profileUrl", Kind::Reference(&["external"]), "The profile claim"),
    attr("title", S, "The user's title, e.g. Vice President"),
    attr("userType", S, "e.g. Employee or Contractor"),
    attr("preferredLanguage", S, "e.g. en-US"),
    attr("locale", S, "The locale claim"),
    attr("timezone", S, "The zoneinfo claim, e.g. Europe/Paris"),
    attr("active", Kind::Boolean, "false disables the user: sessions end and every token is refused"),
    Attr { name: "password", kind: S, multi: false, mutability: Mutability::WriteOnly, description: "Sets the user's password; never returned" },
    many("emails", PLURAL, "E-mail addresses; the primary one (or the first) is the email claim and a login name"),
    many("phoneNumbers", PLURAL, "Phone numbers; the primary one (or the first) is the phone_number claim"),
    many("ims", PLURAL, "Instant messaging addresses"),
    many("photos", PHOTO, "Photos"),
    many("addresses", ADDRESS, "Addresses; the primary one (or the first) is the address claim"),
    Attr { name: "groups", kind: Kind::Complex(GROUP_REF), multi: true, mutability: Mutability::ReadOnly, description: "The user's groups, direct and through nesting" },
    many("entitlements", PLURAL, "Entitlements"),
    many("roles", PLURAL, "Roles, as data (they grant nothing here: application roles are assigned by the admin API)"),
    many("x509Certificates", CERTIFICATE, "Certificates"),
];

const MANAGER: &[Attr] = &[
    attr("value", S, "The manager's id"),
    attr("$ref", Kind::Reference(&["User"]), "The manager's URI"),
    Attr { name: "displayName", kind: S, multi: false, mutability: Mutability::ReadOnly, description: "The manager's name" },
];

pub const ENTERPRISE_ATTRS: &[Attr] = &[
    attr("employeeNumber", S, "A number or code given by the organization"),
    attr("costCenter", S, "A cost center"),
    attr("organization", S, "An organization"),
    attr("division", S, "A division"),
    attr("department", S, "A department"),
    Attr { name: "manager", kind: Kind::Complex(MANAGER), multi: false, mutability: Mutability::ReadWrite, description: "The user's manager" },
];

fn find<'a>(attrs: &'a [Attr], name: &str) -> Option<&'a Attr> {
    attrs.iter().find(|a| a.name.eq_ignore_ascii_case(name))
}

/// The writable attributes of `obj` under `attrs` (see the module's comment). `at` names
/// where, for errors.
pub fn normalize(obj: &Map<String, Value>, attrs: &[Attr], at: &str) -> Result<Map<String, Value>, ScimError> {
    let mut out = Map::new();
    for (k, v) in obj {
        let Some(a) = find(attrs, k) else { continue };
        if a.mutability == Mutability::ReadOnly || v.is_null() {
            continue;
        }
        let value = match (a.multi, v) {
            (true, Value::Array(items)) => {
                let kept: Vec<Value> = items.iter().filter(|i| !i.is_null()).map(|i| single(a, i, at)).collect::<Result<_, _>>()?;
                if kept.is_empty() {
                    continue;
                }
                Value::Array(kept)
            }
            (true, _) => return Err(ScimError::bad("invalidValue", format!("{at}{} is an array", a.name))),
            (false, v) => single(a, v, at)?,
        };
        out.insert(a.name.to_string(), value);
    }
    Ok(out)
}

fn single(a: &Attr, v: &Value, at: &str) -> Result<Value, ScimError> {
    let wrong = |what: &str| ScimError::bad("invalidValue", format!("{at}{} is {what}", a.name));
    match a.kind {
        Kind::String | Kind::Reference(_) | Kind::Binary => v.as_str().map(|s| Value::String(s.to_string())).ok_or_else(|| wrong("a string")),
        Kind::Boolean => match v {
            Value::Bool(b) => Ok(Value::Bool(*b)),
            // Some provisioning systems (Entra ID among them) send booleans as strings.
            Value::String(s) if s.eq_ignore_ascii_case("true") => Ok(Value::Bool(true)),
            Value::String(s) if s.eq_ignore_ascii_case("false") => Ok(Value::Bool(false)),
            _ => Err(wrong("a boolean")),
        },
        // Entra ID sends a manager as its id alone: taken as the complex value's `value`.
        Kind::Complex(subs) if v.is_string() && subs.iter().any(|s| s.name == "value") => Ok(json!({"value": v})),
        Kind::Complex(subs) => {
            let obj = v.as_object().ok_or_else(|| wrong("an object"))?;
            Ok(Value::Object(normalize(obj, subs, &format!("{at}{}.", a.name))?))
        }
    }
}

/// §7: the schema's representation, as `/Schemas` serves it.
pub fn representation(id: &str, name: &str, description: &str, attrs: &[Attr], location: String) -> Value {
    json!({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:Schema"],
        "id": id, "name": name, "description": description,
        "attributes": attrs.iter().map(describe).collect::<Vec<_>>(),
        "meta": {"resourceType": "Schema", "location": location},
    })
}

fn describe(a: &Attr) -> Value {
    let (kind, refs, subs) = match a.kind {
        Kind::String => ("string", None, None),
        Kind::Boolean => ("boolean", None, None),
        Kind::Reference(r) => ("reference", Some(r), None),
        Kind::Binary => ("binary", None, None),
        Kind::Complex(s) => ("complex", None, Some(s)),
    };
    let (mutability, returned) = match a.mutability {
        Mutability::ReadWrite => ("readWrite", "default"),
        Mutability::ReadOnly => ("readOnly", "default"),
        Mutability::WriteOnly => ("writeOnly", "never"),
    };
    let mut v = json!({
        "name": a.name, "type": kind, "multiValued": a.multi, "description": a.description,
        "required": a.name == "userName", "caseExact": matches!(a.kind, Kind::Reference(_) | Kind::Binary),
        "mutability": mutability, "returned": returned,
        "uniqueness": if a.name == "userName" { "server" } else { "none" },
    });
    if let Some(r) = refs {
        v["referenceTypes"] = json!(r);
    }
    if let Some(s) = subs {
        v["subAttributes"] = s.iter().map(describe).collect();
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_is_kept_under_the_schemas_spelling_with_unknown_and_read_only_attributes_dropped() {
        let sent = json!({
            "USERNAME": "bjensen", "Emails": [{"VALUE": "b@example.com", "primary": "True", "extra": 1}, null],
            "groups": [{"value": "g"}], "unknown": "x", "name": {"givenName": "Barbara", "nope": "y"}, "title": null,
        });
        let kept = normalize(sent.as_object().unwrap(), USER_ATTRS, "").unwrap();
        assert_eq!(Value::Object(kept), json!({"userName": "bjensen", "emails": [{"value": "b@example.com", "primary": true}], "name": {"givenName": "Barbara"}}));
        let manager = json!({"manager": "m-1"});
        assert_eq!(Value::Object(normalize(manager.as_object().unwrap(), ENTERPRISE_ATTRS, "").unwrap()), json!({"manager": {"value": "m-1"}}), "Entra ID's manager");
    }

    #[test]
    fn a_value_of_the_wrong_type_is_refused_with_where_it_is() {
        for (sent, says) in [
            (json!({"userName": 7}), "userName is a string"),
            (json!({"emails": {"value": "x"}}), "emails is an array"),
            (json!({"emails": [{"primary": 1}]}), "emails.primary is a boolean"),
            (json!({"name": "Barbara"}), "name is an object"),
            (json!({"emails": [true]}), "emails is an object"),
            (json!({"active": "yes"}), "active is a boolean"),
        ] {
            let e = normalize(sent.as_object().unwrap(), USER_ATTRS, "").unwrap_err();
            assert_eq!((e.scim_type, e.detail.as_str()), (Some("invalidValue"), says), "{sent}");
        }
    }

    #[test]
    fn the_published_schema_says_what_is_written_only_and_read_only() {
        let s = representation(USER, "User", "User", USER_ATTRS, "x".into());
        let find = |n: &str| s["attributes"].as_array().unwrap().iter().find(|a| a["name"] == n).unwrap().clone();
        assert_eq!((find("password")["mutability"].clone(), find("password")["returned"].clone()), (json!("writeOnly"), json!("never")));
        assert_eq!(find("groups")["mutability"], "readOnly");
        assert_eq!((find("userName")["required"].clone(), find("userName")["uniqueness"].clone()), (json!(true), json!("server")));
        assert_eq!(find("emails")["subAttributes"][3]["type"], "boolean");
    }
}
