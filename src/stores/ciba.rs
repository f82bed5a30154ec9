//! CibaStore: backchannel authentication requests (OpenID Connect CIBA Core 1.0) between the
//! client's request and the tokens it redeems.
//!
//! One row per request, keyed by `shard::key(tenant, "ciba:" ‖ auth_req_id)`: the id is a
//! bearer secret of the client and is never stored, only that hash. The account page names a
//! request by the base64url of its key (`handle`), which is no secret: with it, a user can
//! only answer a request that waits for that same user.
//!
//! Unlike the device store, this one has a single implementation on the `Sql` seam, run on
//! SQLite (in the journal's group commit) and on PostgreSQL alike: a request is made by an
//! authenticated confidential client, answered by a signed-in user and polled at most every
//! `ciba_poll_interval` seconds, so it is rare next to tokens, and every decision (the bounded
//! insert, the answer with its ping, the pacing, the redemption) is one conditional statement
//! that both engines judge the same way. On SQLite the journal runs one transaction at a time,
//! so the bounds are exact; on PostgreSQL concurrent inserts from several nodes can pass them
//! by at most their number, as the device store's can.

pub use super::device::{Approval, Decision};
use super::device::{judge_owned, Limits};
use super::shard::key;
use crate::db::{Database, Sql, StoreError, StoreResult};
use crate::tenant::TenantId;
use crate::util::{b64, b64_decode, now};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};

/// How the client learns that the user answered (CIBA Core §5).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Poll,
    Ping,
    Push,
}

/// What the client asked for, checked by the endpoint, and who is asked.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CibaRequest {
    pub client_id: String,
    pub user_id: String,
    pub scope: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub acr_values: Vec<String>,
    /// Shown to the user beside the client's name, to tie the request to what they see on
    /// the consumption device (CIBA Core §7.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding_message: Option<String>,
    pub mode: Mode,
    pub created_at: u64,
    /// When the `auth_req_id` stops working (`expires_in`).
    pub expires_at: u64,
}

/// A waiting request as the account page lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Waiting {
    /// The request's key, base64url: what the approval form names.
    pub handle: String,
    pub request: CibaRequest,
    /// The sealed `auth_req_id` and `client_notification_token` of a ping or push request
    /// (`ciba::ping::seal`): what a push delivery is addressed with.
    pub sealed: Option<Vec<u8>>,
}

/// What a token request with an `auth_req_id` finds (CIBA Core §11): as a device's poll.
pub type Poll = super::device::Poll<CibaRequest>;

/// SQL to run in the transaction of a change (a notification's mail, a ping's outbox row):
/// both commit or neither does.
pub type Hook = Box<dyn FnOnce(&mut dyn Sql) -> StoreResult<()> + Send>;
/// The hook of an answer: told the request's client and the sealed ping, if it has one.
pub type AnswerHook = Box<dyn FnOnce(&mut dyn Sql, &str, Option<Vec<u8>>) -> StoreResult<()> + Send>;

#[async_trait]
pub trait CibaStore: Send + Sync {
    /// Store `request` under `auth_req_id` (256 random bits the caller drew), unless a bound is
    /// reached (`false`); `ping` is the sealed notification a ping client is sent once the user
    /// answers; `hook` runs in the same transaction.
    #[allow(clippy::too_many_arguments)]
    async fn issue(&self, tenant: TenantId, auth_req_id: &str, request: CibaRequest, interval: u64, ping: Option<Vec<u8>>, limits: Limits, hook: Hook) -> StoreResult<bool>;
    /// The requests waiting for `user_id`, oldest first.
    async fn waiting_for(&self, tenant: TenantId, user_id: &str) -> StoreResult<Vec<Waiting>>;
    /// Record `user_id`'s answer to the request `handle` names; `false` if no such request
    /// waits for this user. `hook` runs in the same transaction.
    async fn decide(&self, tenant: TenantId, handle: &str, user_id: &str, decision: Decision, hook: AnswerHook) -> StoreResult<bool>;
    /// A token request by `client_id` with `auth_req_id`: pacing, then the request's state.
    async fn poll(&self, tenant: TenantId, auth_req_id: &str, client_id: &str) -> StoreResult<Poll>;
    async fn sweep_expired(&self) -> StoreResult<usize>;
}

/// The key of an `auth_req_id`.
pub fn request_key(tenant: TenantId, auth_req_id: &str) -> [u8; 32] {
    key(tenant, &format!("ciba:{auth_req_id}"))
}

/// The parts of a row a poll is judged on.
pub struct PollView<'a> {
    pub request: &'a CibaRequest,
    pub decision: Option<&'a Decision>,
    pub interval: u64,
    pub last_poll: u64,
}

pub use super::device::PollChange;

/// One poll, judged: another client's request is unknown to it (nothing changes); the
/// client's own is judged as a device's (`device::judge_owned`).
pub fn judge(v: &PollView<'_>, client_id: &str, t: u64) -> (Poll, PollChange) {
    if v.request.client_id != client_id {
        return (Poll::Unknown, PollChange::None);
    }
    judge_owned(v.request, v.request.expires_at, v.decision, v.interval, v.last_poll, t)
}

fn encode<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

fn decode<T: serde::de::DeserializeOwned>(text: &str) -> StoreResult<T> {
    serde_json::from_str(text).map_err(|e| StoreError::Database(format!("ciba_requests: {e}")))
}

/// The least time an expired request's row is kept for a late poll (seconds).
const LATE_POLL_GRACE: i64 = crate::stores::device::LATE_POLL_GRACE as i64;

pub struct SqlCibaStore {
    db: Database,
}

impl SqlCibaStore {
    pub fn new(db: Database) -> Self {
        Self { db }
    }
}

#[async_trait]
impl CibaStore for SqlCibaStore {
    async fn issue(&self, tenant: TenantId, auth_req_id: &str, request: CibaRequest, interval: u64, ping: Option<Vec<u8>>, limits: Limits, hook: Hook) -> StoreResult<bool> {
        let t = now() as i64;
        let k = request_key(tenant, auth_req_id).to_vec();
        let pending_until = request.expires_at as i64;
        // Kept as long again after expiry (and at least `LATE_POLL_GRACE`: a client may ask
        // for a request of a few seconds, and a poll a second late must still hear it), so
        // that a late poll is told `expired_token`, not `invalid_grant`.
        let row_expires = pending_until + (pending_until - t).max(LATE_POLL_GRACE);
        let (client_id, user_id, data) = (request.client_id.clone(), request.user_id.clone(), encode(&request));
        self.db
            .write(move |sql| {
                let stored = sql.query_opt(
                    "INSERT INTO ciba_requests (hash, tenant_id, client_id, user_id, data, decision, poll_interval, last_poll, pending_until, expires_at, ping) \
                     SELECT ?1, ?2, ?3, ?4, ?5, NULL, ?6, 0, ?7, ?8, ?9 \
                     WHERE (SELECT COUNT(*) FROM ciba_requests WHERE pending_until > ?10) < ?11 \
                       AND (SELECT COUNT(*) FROM ciba_requests WHERE tenant_id = ?2 AND client_id = ?3 AND pending_until > ?10) < ?12 \
                     RETURNING 1",
                    crate::params![
                        k,
                        i64::from(tenant.0),
                        client_id.as_str(),
                        user_id.as_str(),
                        data,
                        interval as i64,
                        pending_until,
                        row_expires,
                        ping,
                        t,
                        i64::from(limits.total),
                        i64::from(limits.per_client)
                    ],
                )?;
                if stored.is_some() {
                    hook(sql)?;
                }
                Ok(stored.is_some())
            })
            .await
    }

    async fn waiting_for(&self, tenant: TenantId, user_id: &str) -> StoreResult<Vec<Waiting>> {
        let user_id = user_id.to_string();
        let t = now() as i64;
        let rows = self
            .db
            .read(move |sql| {
                sql.query(
                    "SELECT hash, data, ping FROM ciba_requests WHERE tenant_id = ?1 AND user_id = ?2 AND pending_until > ?3 ORDER BY pending_until",
                    crate::params![i64::from(tenant.0), user_id.as_str(), t],
                )
            })
            .await?;
        let mut out = rows.iter().map(|r| Ok(Waiting { handle: b64(&r.blob(0)?), request: decode(&r.text(1)?)?, sealed: r.opt_blob(2)? })).collect::<StoreResult<Vec<_>>>()?;
        out.sort_by_key(|w| w.request.created_at);
        Ok(out)
    }

    async fn decide(&self, tenant: TenantId, handle: &str, user_id: &str, decision: Decision, hook: AnswerHook) -> StoreResult<bool> {
        let Some(k) = b64_decode(handle).filter(|k| k.len() == 32) else { return Ok(false) };
        let user_id = user_id.to_string();
        let t = now() as i64;
        self.db
            .write(move |sql| {
                // Once answered the request no longer counts against the bounds.
                let row = sql.query_opt(
                    "UPDATE ciba_requests SET decision = ?1, pending_until = 0 \
                     WHERE hash = ?2 AND tenant_id = ?3 AND user_id = ?4 AND decision IS NULL AND pending_until > ?5 \
                     RETURNING client_id, ping",
                    crate::params![encode(&decision), k, i64::from(tenant.0), user_id.as_str(), t],
                )?;
                let Some(row) = row else { return Ok(false) };
                hook(sql, &row.text(0)?, row.opt_blob(1)?)?;
                Ok(true)
            })
            .await
    }

    async fn poll(&self, tenant: TenantId, auth_req_id: &str, client_id: &str) -> StoreResult<Poll> {
        let k = request_key(tenant, auth_req_id).to_vec();
        let t = now();
        let key = k.clone();
        let row = self
            .db
            .read(move |sql| {
                sql.query_opt(
                    "SELECT data, decision, poll_interval, last_poll FROM ciba_requests WHERE hash = ?1 AND tenant_id = ?2 AND expires_at > ?3",
                    crate::params![key, i64::from(tenant.0), t as i64],
                )
            })
            .await?;
        let Some(row) = row else { return Ok(Poll::Unknown) };
        let request: CibaRequest = decode(&row.text(0)?)?;
        let decision: Option<Decision> = row.opt_text(1)?.map(|d| decode(&d)).transpose()?;
        let last_poll = row.i64(3)?;
        let view = PollView { request: &request, decision: decision.as_ref(), interval: row.i64(2)?.max(0) as u64, last_poll: last_poll.max(0) as u64 };
        let (answer, change) = judge(&view, client_id, t);
        match change {
            PollChange::None => Ok(answer),
            PollChange::Consume => {
                // Of two redemptions at once, one deletes the row; the other finds it gone.
                let won = self
                    .db
                    .write(move |sql| sql.query_opt("DELETE FROM ciba_requests WHERE hash = ?1 AND decision IS NOT NULL RETURNING 1", crate::params![k]))
                    .await?;
                Ok(if won.is_some() { answer } else { Poll::Unknown })
            }
            PollChange::Polled { last_poll: polled, interval } => {
                // Written only over the poll it was judged against: a poll that lost that race
                // was too soon in any case.
                let written = self
                    .db
                    .write(move |sql| {
                        sql.query_opt(
                            "UPDATE ciba_requests SET last_poll = ?2, poll_interval = ?3 WHERE hash = ?1 AND last_poll = ?4 AND decision IS NULL RETURNING 1",
                            crate::params![k, polled as i64, interval as i64, last_poll],
                        )
                    })
                    .await?;
                Ok(if written.is_some() { answer } else { Poll::SlowDown })
            }
        }
    }

    async fn sweep_expired(&self) -> StoreResult<usize> {
        let t = now() as i64;
        let n = self
            .db
            .write(move |sql| {
                // Requests whose user never answered stop waiting; a push-mode client is told
                // (CIBA Core §10.3.1: `expired_token`) through the outbox, in this transaction,
                // so that each is told once. The row stays for a late poll, as any other.
                let lapsed = sql.query(
                    "UPDATE ciba_requests SET pending_until = 0 WHERE decision IS NULL AND pending_until > 0 AND pending_until <= ?1 \
                     RETURNING tenant_id, client_id, user_id, data, ping",
                    crate::params![t],
                )?;
                for r in &lapsed {
                    let request: CibaRequest = decode(&r.text(3)?)?;
                    if let (Mode::Push, Some(sealed)) = (request.mode, r.opt_blob(4)?) {
                        crate::ciba::push::enqueue_expired(sql, r.tenant(0)?, &r.text(1)?, &r.text(2)?, sealed, t as u64)?;
                    }
                }
                sql.execute("DELETE FROM ciba_requests WHERE expires_at <= ?1", crate::params![t])
            })
            .await?;
        Ok(n as usize)
    }
}

#[cfg(test)]
mod tests {
    // The behaviour both backends owe is in tests/contract; here, the judgement.
    use super::*;

    #[test]
    fn polls_are_paced_and_only_the_owner_sees_the_request() {
        let request = CibaRequest {
            client_id: "c".into(),
            user_id: "u".into(),
            scope: "openid".into(),
            resources: vec![],
            acr_values: vec![],
            binding_message: None,
            mode: Mode::Poll,
            created_at: 0,
            expires_at: 1_000,
        };
        let view = |last_poll, decision| PollView { request: &request, decision, interval: 5, last_poll };
        assert_eq!(judge(&view(0, None), "c", 100), (Poll::Pending, PollChange::Polled { last_poll: 100, interval: 5 }));
        assert_eq!(judge(&view(100, None), "c", 104), (Poll::SlowDown, PollChange::Polled { last_poll: 104, interval: 10 }));
        assert_eq!(judge(&view(100, None), "c", 105).0, Poll::Pending);
        assert_eq!(judge(&view(100, None), "other", 200), (Poll::Unknown, PollChange::None));
        assert_eq!(judge(&view(0, None), "c", 1_000).0, Poll::Expired);
        assert_eq!(judge(&view(0, Some(&Decision::Denied)), "c", 200).0, Poll::Denied);
        let approval = Approval { user_id: "u".into(), auth_time: 1, sid: "s".into(), acr: None, amr: vec![] };
        assert_eq!(judge(&view(0, Some(&Decision::Approved(approval.clone()))), "c", 200), (Poll::Approved(request.clone(), approval), PollChange::Consume));
    }
}
