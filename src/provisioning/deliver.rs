//! The outbox's deliverer of `scim_user` and `scim_group` rows: make one target agree about
//! one user (`users`) or group (`groups`), as they are now (`provisioning` says why a row
//! names who, not what), and remember what the target holds.

use super::remote::{self, Kind, Remote};
use super::{load, record_outcome, seal_label, Target, GROUP_KIND, KIND};
use crate::http::fetch::FetchError;
use crate::logout::backchannel::{Deliverer, Due, Sending};
use crate::tenant::Issuer;
use serde_json::Value;
use std::time::Duration;

pub struct Provisions;

impl Deliverer for Provisions {
    fn kinds(&self) -> &'static [&'static str] {
        &[KIND, GROUP_KIND]
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
        ("scim_provisioned", "scim_provisioning_abandoned")
    }
}

/// What one delivery did to the target's record of the row's user or group: nothing (the
/// target already agreed, or never had it and should not), now holds it as `(remote id,
/// digest of what was sent)`, or no longer holds it.
pub(super) enum Held {
    Unchanged,
    Now(String, Vec<u8>),
    Gone,
}

pub(super) fn digest(body: &Value) -> Vec<u8> {
    crate::util::sha256(body.to_string().as_bytes()).to_vec()
}

/// The resource there: replaced where it is known (by the id remembered, else by its
/// `externalId`: an answer lost after the target made it), else created; a name the target
/// has already (a 409, made before this target was set) is taken as this one (reconciled by
/// `name_attr`). Its id there.
pub(super) async fn put(remote: &Remote<'_>, kind: Kind, known: Option<&str>, external_id: &str, name_attr: &str, name: &str, body: &Value) -> Result<String, FetchError> {
    let mut id = match known {
        Some(id) => Some(id.to_string()),
        None => remote.find(kind, "externalId", external_id).await?,
    };
    if let Some(existing) = &id {
        if !remote.replace(kind, existing, body).await? {
            id = None;
        }
    }
    if let Some(id) = id {
        return Ok(id);
    }
    if let Some(id) = remote.create(kind, body).await? {
        return Ok(id);
    }
    let id = remote.find(kind, name_attr, name).await?.ok_or(FetchError::Status(409))?;
    remote.replace(kind, &id, body).await?;
    Ok(id)
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
    let kind = if row.kind == GROUP_KIND { Kind::Group } else { Kind::User };
    let (c, id) = (client.clone(), row.sub.clone());
    let known = app.db.read(move |sql| remote::known(sql, tenant, &c, kind.name(), &id)).await.map_err(|e| e.to_string())?;
    let known = known.as_ref().map(|(id, sent)| (id.as_str(), sent.as_deref()));
    let outcome = match kind {
        Kind::User => super::users::reconcile(app, &target, &remote, &row.sub, known).await,
        Kind::Group => super::groups::reconcile(app, &target, &remote, &row.sub, known).await,
    };
    let result = match outcome {
        Ok(Held::Unchanged) => Ok(()),
        Ok(held) => {
            remember(app, &target, kind, &row.sub, known.is_some(), held).await?;
            Ok(())
        }
        Err(e) => Err(e),
    };
    let error = result.as_ref().err().map(ToString::to_string);
    if let Err(e) = app.db.write(move |sql| record_outcome(sql, tenant, &client, error.as_deref())).await {
        tracing::warn!(error = %e, "provisioning: cannot record a delivery's outcome");
    }
    Ok(result)
}

/// Record what the target now holds. A user it gains or loses changes the member lists of
/// their groups there: those are queued again, in the same transaction.
async fn remember(app: &Issuer, target: &Target, kind: Kind, local_id: &str, was_known: bool, held: Held) -> Result<(), String> {
    let (tenant, client, id) = (app.tenant.id, target.client_id.clone(), local_id.to_string());
    let groups: Vec<String> = match (kind, &held, was_known) {
        (Kind::User, Held::Now(..), false) | (Kind::User, Held::Gone, true) => app.registry().effective(local_id).map(|e| e.groups.to_vec()).unwrap_or_default(),
        _ => Vec::new(),
    };
    app.db
        .write(move |sql| {
            match &held {
                Held::Now(remote_id, sent) => remote::remember(sql, tenant, &client, kind.name(), &id, Some((remote_id, sent)))?,
                _ => remote::remember(sql, tenant, &client, kind.name(), &id, None)?,
            }
            super::enqueue_for(sql, tenant, std::slice::from_ref(&client), GROUP_KIND, &groups)
        })
        .await
        .map_err(|e| e.to_string())
}
