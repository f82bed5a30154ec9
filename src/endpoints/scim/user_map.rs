//! A user as SCIM sees it, and back (RFC 7643 §4.1, §4.3): what the SCIM service reads and
//! writes. What a SCIM client writes is kept as it wrote it (`User::scim`, normalized by
//! `user_schema`), and the attributes that mean an OpenID claim set that claim
//! (`scim::user` has the table, and lays the claims as they are now over what was written).
//! `userName`, `active`, `externalId` and `password` are the user's own fields.

use super::user_schema::{self, ENTERPRISE, USER};
use super::{location, ScimError};
use crate::registry::directory::Principal;
use crate::registry::users::User;
use crate::scim::user::{attributes, claims_of};
use crate::tenant::Issuer;
use serde_json::{json, Map, Value};

/// The user as SCIM shows it (`password` never).
pub fn representation(app: &Issuer, user: &User) -> Value {
    let mut m = attributes(user);
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
        assert_eq!(attributes(&u), *kept, "nothing changed since: read back as written");
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
