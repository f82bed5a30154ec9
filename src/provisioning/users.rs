//! A user at a target: created or replaced while in scope (`active: false` if disabled
//! here), deactivated once out of scope, deleted once deleted here.

use super::deliver::{digest, put, resolve, Held, Ledger};
use super::remote::{Kind, Remote};
use super::Target;
use crate::http::fetch::FetchError;
use crate::registry::users::User;
use crate::scim::user::{attributes, ENTERPRISE_SCHEMA, USER_SCHEMA};
use crate::tenant::Issuer;
use serde_json::{json, Value};

/// The user as sent: their SCIM attributes, `externalId` their id here (how they are found
/// again), never a password.
pub(super) fn body(user: &User, active: bool) -> Value {
    let mut m = attributes(user);
    let mut schemas = vec![json!(USER_SCHEMA)];
    if m.contains_key(ENTERPRISE_SCHEMA) {
        schemas.push(json!(ENTERPRISE_SCHEMA));
    }
    m.insert("schemas".into(), Value::Array(schemas));
    m.insert("userName".into(), user.username.clone().into());
    m.insert("externalId".into(), user.id.clone().into());
    m.insert("active".into(), active.into());
    Value::Object(m)
}

pub(super) async fn reconcile(app: &Issuer, target: &Target, remote: &Remote<'_>, ledger: &Ledger<'_>, known: Option<(&str, Option<&[u8]>)>) -> Result<Held, FetchError> {
    let user_id = ledger.local_id;
    let Some(user) = app.registry().user(user_id) else {
        // Deleted here: deleted there, if it has them (or may: an attempt's answer lost).
        return match resolve(remote, Kind::User, known, user_id).await? {
            Some(id) => remote.delete(Kind::User, &id).await.map(|()| Held::Gone),
            None if known.is_some() => Ok(Held::Gone),
            None => Ok(Held::Unchanged),
        };
    };
    if super::user_in_scope(app, target, &user.id) {
        let body = body(&user, !user.disabled);
        let sent = digest(&body);
        if known.is_some_and(|(_, s)| s == Some(sent.as_slice())) {
            return Ok(Held::Unchanged);
        }
        let id = put(remote, ledger, known.map(|(id, _)| id), "userName", &user.username, &body).await?;
        return Ok(Held::Now(id, sent));
    }
    // No longer assigned: deactivated there, if it has them (or may: an attempt's answer
    // lost). One never attempted needs nothing: the ledger is written before any create.
    let body = body(&user, false);
    let digest = digest(&body);
    if known.is_some_and(|(_, sent)| sent == Some(digest.as_slice())) {
        return Ok(Held::Unchanged);
    }
    let Some(id) = resolve(remote, Kind::User, known, user_id).await? else {
        return Ok(if known.is_some() { Held::Gone } else { Held::Unchanged });
    };
    match remote.replace(Kind::User, &id, &body).await? {
        true => Ok(Held::Now(id, digest)),
        false => Ok(Held::Gone),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_is_sent_with_their_id_as_external_id_and_never_a_password() {
        let mut u = User { id: "u1".into(), username: "babs".into(), password_hash: "$argon2id$secret".into(), ..Default::default() };
        u.claims.insert("email", json!("babs@example.com"));
        let sent = body(&u, false);
        assert_eq!((sent["externalId"].as_str(), sent["userName"].as_str(), sent["active"].as_bool()), (Some("u1"), Some("babs"), Some(false)));
        assert_eq!(sent["emails"], json!([{"value": "babs@example.com", "primary": true}]));
        assert_eq!(sent["schemas"], json!([USER_SCHEMA]));
        assert!(sent.get("password").is_none() && !sent.to_string().contains("argon2"));
        assert!(sent.get("id").is_none() && sent.get("meta").is_none(), "the target's own");
    }
}
