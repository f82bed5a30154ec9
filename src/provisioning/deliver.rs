//! The outbox's deliverer of `scim_user` rows: make one target agree about one user, as the
//! user is now (`provisioning` says why a row names who, not what).

use super::remote::{self, Remote};
use super::{load, record_outcome, seal_label, Target, KIND};
use crate::http::fetch::FetchError;
use crate::logout::backchannel::{Deliverer, Due, Sending};
use crate::registry::users::User;
use crate::scim::user::{attributes, ENTERPRISE_SCHEMA, USER_SCHEMA};
use crate::tenant::Issuer;
use serde_json::{json, Value};
use std::time::Duration;

pub struct Provisions;

impl Deliverer for Provisions {
    fn kinds(&self) -> &'static [&'static str] {
        &[KIND]
    }

    /// The target is read from the database when the row is sent (a target removed since
    /// is nobody to tell: the row ends there).
    fn endpoint(&self, _app: &Issuer, _row: &Due) -> Option<String> {
        Some(String::new())
    }

    fn send<'a>(&'a self, app: &'a Issuer, _uri: &'a str, row: &'a Due, timeout: Duration) -> Sending<'a> {
        Box::pin(sync(app, row, timeout))
    }

    /// A target's credential that cannot be opened never will be (a new one is a new target
    /// setting, then a resync).
    fn our_error_is_final(&self) -> bool {
        true
    }

    /// A target that refuses a user (400, 401, 403…) refuses them again; the failure is
    /// shown on the target, and a resync sends again once it is fixed.
    fn refusal_is_final(&self) -> bool {
        true
    }

    fn events(&self) -> (&'static str, &'static str) {
        ("scim_user_provisioned", "scim_provisioning_abandoned")
    }
}

/// What the target should hold of a user.
enum Wanted<'a> {
    /// In scope: created or replaced (`active: false` if disabled here).
    Present(&'a User),
    /// Out of scope (no longer assigned): deactivated there, if it has them.
    Inactive(&'a User),
    /// Deleted here: deleted there, if it has them.
    Gone,
}

fn in_scope(app: &Issuer, target: &Target, user: &User) -> bool {
    target.users == "all" || app.registry().effective(&user.id).is_some_and(|e| e.roles.contains_key(&target.client_id))
}

/// The user as sent: their SCIM attributes, `externalId` their id here (how they are found
/// again), never a password.
fn body(user: &User, active: bool) -> Value {
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

async fn sync(app: &Issuer, row: &Due, timeout: Duration) -> Result<Result<(), FetchError>, String> {
    let (tenant, client) = (row.tenant, row.client_id.clone());
    let c = client.clone();
    let target = app.db.read(move |sql| load(sql, tenant, &c)).await.map_err(|e| e.to_string())?;
    let Some(target) = target.filter(|t| t.enabled) else { return Ok(Ok(())) };
    let token = app.vault().open_sealed(&seal_label(tenant, &client), &target.sealed_token).map_err(|_| "the target's credential cannot be opened".to_string())?;
    let remote = Remote {
        fetcher: &app.fetcher,
        base: target.endpoint.trim_end_matches('/').to_string(),
        token: String::from_utf8(token).map_err(|_| "the target's credential is not text".to_string())?,
        timeout,
    };
    let outcome = reconcile(app, &target, &remote, &row.sub).await?;
    let error = outcome.as_ref().err().map(ToString::to_string);
    if let Err(e) = app.db.write(move |sql| record_outcome(sql, tenant, &client, error.as_deref())).await {
        tracing::warn!(error = %e, "provisioning: cannot record a delivery's outcome");
    }
    Ok(outcome)
}

async fn reconcile(app: &Issuer, target: &Target, remote: &Remote<'_>, user_id: &str) -> Result<Result<(), FetchError>, String> {
    let (tenant, client, uid) = (app.tenant.id, target.client_id.clone(), user_id.to_string());
    let (c, u) = (client.clone(), uid.clone());
    let known = app.db.read(move |sql| remote::known(sql, tenant, &c, &u)).await.map_err(|e| e.to_string())?;
    let user = app.registry().user(user_id);
    let wanted = match &user {
        Some(u) if in_scope(app, target, u) => Wanted::Present(u),
        Some(u) => Wanted::Inactive(u),
        None => Wanted::Gone,
    };
    let remember = |at: Option<(String, Vec<u8>)>| {
        let (c, u) = (client.clone(), uid.clone());
        async move { app.db.write(move |sql| remote::remember(sql, tenant, &c, &u, at.as_ref().map(|(r, h)| (r.as_str(), h.as_slice())))).await.map_err(|e| e.to_string()) }
    };
    let step = async {
        match wanted {
            Wanted::Present(u) => {
                let body = body(u, !u.disabled);
                let digest = crate::util::sha256(body.to_string().as_bytes()).to_vec();
                if known.as_ref().is_some_and(|(_, sent)| sent.as_deref() == Some(digest.as_slice())) {
                    return Ok(None);
                }
                // Known here, or there by its externalId (an answer lost after the target
                // made them): replaced, never made twice.
                let mut id = match &known {
                    Some((id, _)) => Some(id.clone()),
                    None => remote.find("externalId", &u.id).await?,
                };
                if let Some(existing) = &id {
                    if !remote.replace(existing, &body).await? {
                        id = None;
                    }
                }
                let id = match id {
                    Some(id) => id,
                    None => match remote.create(&body).await? {
                        Some(id) => id,
                        // Someone of that userName is there, made before this target was
                        // set: theirs is this user (reconciled by userName).
                        None => {
                            let id = remote.find("userName", &u.username).await?.ok_or(FetchError::Status(409))?;
                            remote.replace(&id, &body).await?;
                            id
                        }
                    },
                };
                Ok(Some(Some((id, digest))))
            }
            // Only a user the target has is deactivated or deleted there: one it never had
            // (the mapping is written once it has them) needs nothing.
            Wanted::Inactive(u) => match &known {
                Some((id, _)) => {
                    let body = body(u, false);
                    let digest = crate::util::sha256(body.to_string().as_bytes()).to_vec();
                    match remote.replace(id, &body).await? {
                        true => Ok(Some(Some((id.clone(), digest)))),
                        false => Ok(Some(None)),
                    }
                }
                None => Ok(None),
            },
            Wanted::Gone => match &known {
                Some((id, _)) => remote.delete(id).await.map(|()| Some(None)),
                None => Ok(None),
            },
        }
    };
    match step.await {
        Ok(None) => Ok(Ok(())),
        Ok(Some(at)) => remember(at).await.map(Ok),
        Err(e) => Ok(Err(e)),
    }
}
