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

    fn sub_is_user(&self, row: &Due) -> bool {
        row.kind != GROUP_KIND
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

/// The row's entry in what the target holds, for a reconcile to write before it creates
/// anything: a mark (`remote_id` empty) that the target *may* hold the resource, so that if
/// the answer is lost and the resource is deleted or leaves the scope before a retry, the
/// next delivery looks it up there (by `externalId`) instead of assuming it was never made.
pub(super) struct Ledger<'a> {
    pub app: &'a Issuer,
    pub client: &'a str,
    pub kind: Kind,
    pub local_id: &'a str,
}

impl Ledger<'_> {
    pub async fn mark_attempt(&self) -> Result<(), FetchError> {
        let (tenant, c, k, id) = (self.app.tenant.id, self.client.to_string(), self.kind.name(), self.local_id.to_string());
        self.app
            .db
            .write(move |sql| {
                let known = remote::known(sql, tenant, &c, k, &id)?;
                match known {
                    Some(_) => Ok(()),
                    None => remote::remember(sql, tenant, &c, k, &id, Some(("", &[]))),
                }
            })
            .await
            .map_err(|e| FetchError::Transport(format!("cannot record the attempt: {e}")))
    }
}

/// The id there of what `known` says the target holds: as remembered, or, after an attempt
/// whose answer was lost (`known` id empty), looked up by `externalId`.
pub(super) async fn resolve(remote: &Remote<'_>, kind: Kind, known: Option<(&str, Option<&[u8]>)>, external_id: &str) -> Result<Option<String>, FetchError> {
    match known {
        None => Ok(None),
        Some(("", _)) => remote.find(kind, "externalId", external_id).await,
        Some((id, _)) => Ok(Some(id.to_string())),
    }
}

pub(super) fn digest(body: &Value) -> Vec<u8> {
    crate::util::sha256(body.to_string().as_bytes()).to_vec()
}

/// The resource there: replaced where it is known (by the id remembered, else by its
/// `externalId`: an answer lost after the target made it), else created; a name the target
/// has already (a 409, made before this target was set) is taken as this one (reconciled by
/// `name_attr`). Its id there.
pub(super) async fn put(remote: &Remote<'_>, ledger: &Ledger<'_>, known: Option<&str>, name_attr: &str, name: &str, body: &Value) -> Result<String, FetchError> {
    let (kind, external_id) = (ledger.kind, ledger.local_id);
    let mut id = match known.filter(|id| !id.is_empty()) {
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
    ledger.mark_attempt().await?;
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
    let ledger = Ledger { app, client: &target.client_id, kind, local_id: &row.sub };
    let outcome = match kind {
        Kind::User => super::users::reconcile(app, &target, &remote, &ledger, known).await,
        Kind::Group => super::groups::reconcile(app, &target, &remote, &ledger, known).await,
    };
    let result = match outcome {
        Ok(Held::Unchanged) => Ok(()),
        Ok(held) => {
            // Held for real before (a mark left by an attempt is not).
            let was_held = known.is_some_and(|(id, _)| !id.is_empty());
            remember(app, &target, kind, &row.sub, was_held, held).await?;
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
