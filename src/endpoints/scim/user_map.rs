//! A user as SCIM sees it, and back (RFC 7643 §4.1, §4.3).
//!
//! What a SCIM client writes is kept as it wrote it (`User::scim`, normalized by
//! `user_schema`), and the attributes that mean an OpenID claim set that claim:
//!
//! | SCIM | claim |
//! |---|---|
//! | `displayName`, `nickName`, `profileUrl`, `locale`, `timezone` | `name`, `nickname`, `profile`, `locale`, `zoneinfo` |
//! | `name.givenName`, `name.familyName`, `name.middleName` | `given_name`, `family_name`, `middle_name` |
//! | the primary (else the first) of `emails`, `phoneNumbers`, `photos` | `email`, `phone_number`, `picture` |
//! | the primary (else the first) of `addresses` | `address` |
//!
//! `userName`, `active`, `externalId` and `password` are the user's own fields. Read back, the
//! stored attributes are overlaid with the claims as they are now: a user who changed their
//! name on the account page, or an operator who changed an address, is seen so by SCIM too.
//! A user made elsewhere (no SCIM attributes) is shown from its claims alone.

use super::user_schema::{self, ENTERPRISE, USER};
use super::{location, ScimError};
use crate::registry::directory::Principal;
use crate::registry::users::User;
use crate::tenant::Issuer;
use serde_json::{json, Map, Value};

/// Single-valued attributes and their claims.
const SINGLE: &[(&str, &str)] = &[("displayName", "name"), ("nickName", "nickname"), ("profileUrl", "profile"), ("locale", "locale"), ("timezone", "zoneinfo")];
/// `name`'s sub-attributes and their claims.
const NAME: &[(&str, &str)] = &[("givenName", "given_name"), ("familyName", "family_name"), ("middleName", "middle_name")];
/// Multi-valued attributes whose primary value is a claim.
const PRIMARY: &[(&str, &str)] = &[("emails", "email"), ("phoneNumbers", "phone_number"), ("photos", "picture")];
/// `addresses`' sub-attributes and the address claim's members (OpenID Connect Core §5.1.1).
const ADDRESS: &[(&str, &str)] = &[
    ("formatted", "formatted"), ("streetAddress", "street_address"), ("locality", "locality"),
    ("region", "region"), ("postalCode", "postal_code"), ("country", "country"),
];

/// The index of the primary value of a multi-valued attribute, else the first's.
fn primary(items: &[Value]) -> Option<usize> {
    if items.is_empty() {
        return None;
    }
    Some(items.iter().position(|i| i["primary"] == Value::Bool(true)).unwrap_or(0))
}

fn address_claim(a: &Value) -> Option<Value> {
    let m: Map<String, Value> = ADDRESS.iter().filter_map(|(s, c)| a.get(*s).filter(|v| v.is_string()).map(|v| (c.to_string(), v.clone()))).collect();
    (!m.is_empty()).then_some(Value::Object(m))
}

/// Each mapped claim's value as the SCIM attributes `scim` give it (`None`: absent).
pub fn claims_of(scim: &Map<String, Value>) -> Vec<(&'static str, Option<Value>)> {
    let mut out = Vec::new();
    for (attr, claim) in SINGLE {
        out.push((*claim, scim.get(*attr).filter(|v| v.is_string()).cloned()));
    }
    for (sub, claim) in NAME {
        out.push((*claim, scim.get("name").and_then(|n| n.get(*sub)).filter(|v| v.is_string()).cloned()));
    }
    let items = |attr: &str| scim.get(attr).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    for (attr, claim) in PRIMARY {
        let all = items(attr);
        out.push((*claim, primary(all).and_then(|i| all[i].get("value")).filter(|v| v.is_string()).cloned()));
    }
    let all = items("addresses");
    out.push(("address", primary(all).and_then(|i| address_claim(&all[i]))));
    out
}

/// The stored attributes with the user's claims laid over them where they differ.
fn overlay(user: &User) -> Map<String, Value> {
    let mut m = user.scim.as_deref().cloned().unwrap_or_default();
    // `active` as it was sent, or as it is now if that differs; not shown for a SCIM user who
    // was never given one and is enabled (unassigned, RFC 7643 §2.5), always for the others.
    let sent = m.get("active").and_then(Value::as_bool);
    if user.scim.is_none() || sent.is_some_and(|a| a == user.disabled) || (sent.is_none() && user.disabled) {
        m.insert("active".into(), (!user.disabled).into());
    }
    for (claim, derived) in claims_of(&m.clone()) {
        let now = user.claims.get(claim).cloned();
        if now == derived {
            continue;
        }
        if let Some((attr, _)) = SINGLE.iter().find(|(_, c)| *c == claim) {
            set(&mut m, attr, now);
        } else if let Some((sub, _)) = NAME.iter().find(|(_, c)| *c == claim) {
            let name = m.entry("name").or_insert_with(|| json!({}));
            if let Some(n) = name.as_object_mut() {
                set(n, sub, now);
                if n.is_empty() {
                    m.remove("name");
                }
            }
        } else {
            let attr = PRIMARY.iter().find(|(_, c)| *c == claim).map_or("addresses", |(a, _)| *a);
            let entry = now.map(|v| match claim {
                "address" => Value::Object(ADDRESS.iter().filter_map(|(s, c)| v.get(*c).map(|x| (s.to_string(), x.clone()))).collect()),
                _ => json!({"value": v}),
            });
            set_primary(&mut m, attr, entry);
        }
    }
    m
}

fn set(m: &mut Map<String, Value>, key: &str, v: Option<Value>) {
    match v {
        Some(v) => m.insert(key.to_string(), v),
        None => m.remove(key),
    };
}

/// The primary value of `attr` replaced by `entry`'s members (kept: its `type`, `display`,
/// `primary`), or removed; a first one made primary if there was none.
fn set_primary(m: &mut Map<String, Value>, attr: &str, entry: Option<Value>) {
    let items = m.entry(attr).or_insert_with(|| json!([]));
    let Some(items) = items.as_array_mut() else { return };
    match (primary(items), entry) {
        (Some(i), Some(Value::Object(new))) => {
            if let Some(old) = items[i].as_object_mut() {
                old.retain(|k, _| matches!(k.as_str(), "type" | "display" | "primary"));
                old.extend(new);
            }
        }
        (Some(i), None) => {
            items.remove(i);
        }
        (None, Some(Value::Object(mut new))) => {
            new.insert("primary".into(), true.into());
            items.push(Value::Object(new));
        }
        _ => {}
    }
    if items.is_empty() {
        m.remove(attr);
    }
}

/// The user as SCIM shows it (`password` never).
pub fn representation(app: &Issuer, user: &User) -> Value {
    let mut m = overlay(user);
    let enterprise = m.remove(ENTERPRISE);
    let mut schemas = vec![json!(USER)];
    if let Some(e) = enterprise {
        m.insert(ENTERPRISE.into(), e);
        schemas.push(json!(ENTERPRISE));
    }
    m.insert("schemas".into(), Value::Array(schemas));
    m.insert("id".into(), user.id.clone().into());
    m.insert("userName".into(), user.username.clone().into());
    if let Some(e) = &user.external_id {
        m.insert("externalId".into(), e.clone().into());
    }
    let groups = groups(app, user);
    if !groups.is_empty() {
        m.insert("groups".into(), Value::Array(groups));
    }
    let created = if user.created_at > 0 { user.created_at } else { user.updated_at };
    m.insert(
        "meta".into(),
        json!({"resourceType": "User", "created": crate::util::iso8601(created), "lastModified": crate::util::iso8601(user.updated_at),
               "location": location(app, "Users", &user.id), "version": etag(user)}),
    );
    Value::Object(m)
}

/// §4.1.2 `groups`: the groups the user is in directly, then those through nesting.
fn groups(app: &Issuer, user: &User) -> Vec<Value> {
    let registry = app.registry();
    let direct: Vec<String> = registry.direct_groups(&Principal::User(user.id.clone())).iter().map(|g| g.id.clone()).collect();
    let all = registry.effective(&user.id).map(|e| e.groups.to_vec()).unwrap_or_default();
    let mut out = Vec::new();
    for (ids, kind) in [(direct.clone(), "direct"), (all.into_iter().filter(|g| !direct.contains(g)).collect(), "indirect")] {
        for id in ids {
            let Some(g) = registry.with_directory(|d| d.group(&id).cloned()) else { continue };
            out.push(json!({"value": g.id, "$ref": location(app, "Groups", &g.id), "display": g.display_name, "type": kind}));
        }
    }
    out
}

/// RFC 7644 §3.14: a weak tag of everything a change could alter (the password among it,
/// though it is never shown).
pub fn etag(user: &User) -> String {
    let mut bytes = serde_json::to_vec(user).unwrap_or_default();
    bytes.extend_from_slice(user.password_hash.as_bytes());
    bytes.extend_from_slice(&user.tokens_cutoff.to_le_bytes());
    let d = crate::util::sha256(&bytes);
    format!("W/\"{}\"", d[..8].iter().map(|b| format!("{b:02x}")).collect::<String>())
}

/// What a written user resource says, normalized.
pub struct Written {
    pub user_name: String,
    /// Also kept in `rest`, as sent.
    pub active: Option<bool>,
    pub password: Option<String>,
    pub external_id: Option<String>,
    /// Every other attribute, the enterprise extension under its URN.
    pub rest: Map<String, Value>,
}

pub fn read(v: &Value) -> Result<Written, ScimError> {
    let obj = v.as_object().ok_or_else(|| ScimError::bad("invalidSyntax", "a user is a JSON object"))?;
    let mut rest = user_schema::normalize(obj, user_schema::USER_ATTRS, "")?;
    let user_name = match rest.remove("userName") {
        Some(Value::String(s)) if !s.is_empty() => s,
        _ => return Err(ScimError::bad("invalidValue", "userName is required")),
    };
    let active = rest.get("active").and_then(Value::as_bool);
    let password = rest.remove("password").and_then(|v| v.as_str().map(str::to_string));
    let external_id = match crate::scim::patch::member(obj, "externalId") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(ScimError::bad("invalidValue", "externalId is a string")),
    };
    match crate::scim::patch::member(obj, ENTERPRISE) {
        None | Some(Value::Null) => {}
        Some(Value::Object(e)) => {
            let e = user_schema::normalize(e, user_schema::ENTERPRISE_ATTRS, &format!("{ENTERPRISE}:"))?;
            if !e.is_empty() {
                rest.insert(ENTERPRISE.into(), Value::Object(e));
            }
        }
        Some(_) => return Err(ScimError::bad("invalidValue", "the enterprise extension is an object")),
    }
    Ok(Written { user_name, active, password, external_id, rest })
}

/// `user` as `w` says (all but the password, which is hashed apart). The claims SCIM maps
/// are replaced (an attribute left out removes its claim); the others are kept. A new e-mail
/// address is not verified. `active` left out is unassigned, which is enabled: a PUT
/// without it, or a PATCH that removes it, enables the user (a provisioning system sends it
/// whenever it means to disable someone).
pub fn apply(user: &mut User, w: Written) {
    user.username = w.user_name;
    user.disabled = !w.active.unwrap_or(true);
    user.external_id = w.external_id;
    let email_before = user.email().map(str::to_string);
    for (claim, value) in claims_of(&w.rest) {
        match value {
            Some(v) => user.claims.insert(claim, v),
            None => {
                user.claims.remove(claim);
            }
        }
    }
    if user.email() != email_before.as_deref() {
        match user.email() {
            Some(_) => user.claims.insert("email_verified", false.into()),
            None => {
                user.claims.remove("email_verified");
            }
        }
    }
    user.scim = (!w.rest.is_empty()).then(|| Box::new(w.rest));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(v: Value) -> Written {
        read(&v).unwrap()
    }

    #[test]
    fn the_primary_values_become_claims_and_the_rest_is_kept_as_sent() {
        let mut u = User::default();
        apply(&mut u, written(json!({
            "userName": "bjensen", "displayName": "Babs Jensen", "name": {"givenName": "Barbara", "formatted": "Ms. Barbara J Jensen III"},
            "emails": [{"value": "bj@home.example", "type": "home"}, {"value": "bj@work.example", "type": "work", "primary": true}],
            "addresses": [{"streetAddress": "100 Universal City Plaza", "locality": "Hollywood", "postalCode": "91608", "country": "US", "type": "work"}],
            "title": "Tour Guide", ENTERPRISE: {"employeeNumber": "701984", "manager": {"value": "m1", "displayName": "ignored"}},
        })));
        assert_eq!(u.username, "bjensen");
        assert_eq!(u.claims.get("name"), Some(&json!("Babs Jensen")));
        assert_eq!(u.claims.get("given_name"), Some(&json!("Barbara")));
        assert_eq!(u.email(), Some("bj@work.example"));
        assert_eq!(u.claims.get("email_verified"), Some(&json!(false)));
        assert_eq!(u.claims.get("address"), Some(&json!({"street_address": "100 Universal City Plaza", "locality": "Hollywood", "postal_code": "91608", "country": "US"})));
        let kept = u.scim.as_deref().unwrap();
        assert_eq!(kept["title"], "Tour Guide");
        assert_eq!(kept[ENTERPRISE], json!({"employeeNumber": "701984", "manager": {"value": "m1"}}));
        assert_eq!(overlay(&u), *kept, "nothing changed since: read back as written");
    }

    #[test]
    fn a_claim_changed_elsewhere_is_what_scim_reads() {
        let mut u = User::default();
        apply(&mut u, written(json!({"userName": "b", "emails": [{"value": "old@example.com", "type": "work", "primary": true}, {"value": "x@example.com"}], "nickName": "B"})));
        u.claims.insert("email", json!("new@example.com"));
        u.claims.remove("nickname");
        u.claims.insert("given_name", json!("Barbara"));
        let m = overlay(&u);
        assert_eq!(m["emails"], json!([{"value": "new@example.com", "type": "work", "primary": true}, {"value": "x@example.com"}]));
        assert!(!m.contains_key("nickName"));
        assert_eq!(m["name"], json!({"givenName": "Barbara"}));
    }

    #[test]
    fn a_user_made_elsewhere_is_shown_from_its_claims() {
        let mut u = User::default();
        for (k, v) in [("email", json!("a@example.com")), ("phone_number", json!("+1 555")), ("address", json!({"country": "JP"})), ("zoneinfo", json!("Asia/Tokyo"))] {
            u.claims.insert(k, v);
        }
        let m = overlay(&u);
        assert_eq!(m["emails"], json!([{"value": "a@example.com", "primary": true}]));
        assert_eq!(m["phoneNumbers"], json!([{"value": "+1 555", "primary": true}]));
        assert_eq!(m["addresses"], json!([{"country": "JP", "primary": true}]));
        assert_eq!(m["timezone"], "Asia/Tokyo");
    }

    #[test]
    fn leaving_an_attribute_out_removes_its_claim_but_not_the_claims_scim_does_not_map() {
        let mut u = User::default();
        u.claims.insert("birthdate", json!("1970-01-01"));
        apply(&mut u, written(json!({"userName": "b", "displayName": "B", "emails": [{"value": "b@example.com"}]})));
        apply(&mut u, written(json!({"userName": "b"})));
        assert_eq!(u.claims.get("name"), None);
        assert_eq!((u.email(), u.claims.get("email_verified")), (None, None));
        assert_eq!(u.claims.get("birthdate"), Some(&json!("1970-01-01")));
        assert!(u.scim.is_none());
    }

    #[test]
    fn user_name_is_required_and_the_extension_must_be_an_object() {
        assert_eq!(read(&json!({"displayName": "x"})).err().unwrap().detail, "userName is required");
        assert_eq!(read(&json!({"userName": ""})).err().unwrap().detail, "userName is required");
        assert_eq!(read(&json!({"userName": "a", ENTERPRISE: "x"})).err().unwrap().detail, "the enterprise extension is an object");
        assert_eq!(read(&json!({"userName": "a", ENTERPRISE: {"department": 3}})).err().unwrap().detail, format!("{ENTERPRISE}:department is a string"));
    }
}
