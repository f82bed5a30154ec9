//! A user's SCIM attributes (RFC 7643 §4.1, §4.3) and the OpenID claims they mean: the one
//! mapping both the SCIM service (`endpoints::scim`, users provisioned in) and outbound
//! provisioning (`provisioning`, users provisioned out) use.
//!
//! | SCIM | claim |
//! |---|---|
//! | `displayName`, `nickName`, `profileUrl`, `locale`, `timezone` | `name`, `nickname`, `profile`, `locale`, `zoneinfo` |
//! | `name.givenName`, `name.familyName`, `name.middleName` | `given_name`, `family_name`, `middle_name` |
//! | the primary (else the first) of `emails`, `phoneNumbers`, `photos` | `email`, `phone_number`, `picture` |
//! | the primary (else the first) of `addresses` | `address` |
//!
//! What a SCIM client wrote is kept (`User::scim`); read back, it is overlaid with the claims
//! as they are now, so that a user who changed their name on the account page, or an
//! operator who changed an address, is seen so by SCIM too. A user made elsewhere (no SCIM
//! attributes) is shown from its claims alone.

use crate::registry::users::User;
use serde_json::{json, Map, Value};

pub const USER_SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:User";
pub const ENTERPRISE_SCHEMA: &str = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

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

/// The user's SCIM attributes (all but `id`, `userName`, `externalId`, `groups` and
/// `meta`): those stored, with the user's claims laid over them where they differ, and
/// `active`.
pub fn attributes(user: &User) -> Map<String, Value> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_changed_elsewhere_is_what_scim_reads() {
        let written = json!({"emails": [{"value": "old@example.com", "type": "work", "primary": true}, {"value": "x@example.com"}], "nickName": "B"});
        let mut u = User { scim: Some(Box::new(written.as_object().unwrap().clone())), ..Default::default() };
        u.claims.insert("email", json!("old@example.com"));
        u.claims.insert("nickname", json!("B"));
        u.claims.insert("email", json!("new@example.com"));
        u.claims.remove("nickname");
        u.claims.insert("given_name", json!("Barbara"));
        let m = attributes(&u);
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
        let m = attributes(&u);
        assert_eq!(m["emails"], json!([{"value": "a@example.com", "primary": true}]));
        assert_eq!(m["phoneNumbers"], json!([{"value": "+1 555", "primary": true}]));
        assert_eq!(m["addresses"], json!([{"country": "JP", "primary": true}]));
        assert_eq!(m["timezone"], "Asia/Tokyo");
    }

}
