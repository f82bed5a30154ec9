//! SessionStore: browser sessions behind the `authrim_session` cookie.
//!
//! A session also records the clients that received a code in it (`clients`): the relying
//! parties to tell, by back-channel and front-channel logout, when it ends; and when it was
//! last used (`last_seen`, to the minute: the user's own list of sessions). Ending a session
//! runs the caller's `EndHook` in the same commit as the deletion, which is how the logout
//! outbox is written atomically with the end it announces (`crate::logout`).

use super::shard::{mint_prefixed, parse_prefixed};
use super::table::{ShardedTable, Turn};
use crate::db::{Journal, Sql, StoreResult};
use crate::tenant::TenantId;
use crate::util::now;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Session {
    /// Whose session: set by the store from the tenant it was created for, and what the
    /// searches by user and by `sid` filter on (the cookie's key carries the tenant already).
    #[serde(default, skip_serializing_if = "TenantId::is_default")]
    pub tenant: TenantId,
    pub user_id: String,
    /// Public session id for the `sid` claim; unlike the cookie value it is not a credential.
    pub sid: String,
    pub auth_time: u64,
    pub amr: Vec<String>,
    pub acr: String,
    /// When the session began (0 for sessions stored before this field existed).
    #[serde(default)]
    pub created_at: u64,
    /// The browser's `User-Agent` at sign-in, cut short, for the operator's session list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<String>,
    /// The address the user signed in from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// When the session was last used (a code issued in it, the account page shown), to
    /// `LAST_SEEN_PRECISION`; 0 for not since it began.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub last_seen: u64,
    /// Clients that received a code in this session, in order: who is told of its end.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<String>,
    /// Signed in through an upstream provider: which, and its ID token (the `id_token_hint`
    /// that ends the session there too when this one ends by logout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<UpstreamLogin>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct UpstreamLogin {
    pub provider: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_token: Option<String>,
}

impl Session {
    /// A session of `user_id` just signed in, with the minimum the protocol needs.
    pub fn new(user_id: &str, sid: String, auth_time: u64, amr: Vec<String>, acr: &str) -> Self {
        Self {
            tenant: TenantId::DEFAULT,
            user_id: user_id.to_string(),
            sid,
            auth_time,
            amr,
            acr: acr.to_string(),
            created_at: now(),
            user_agent: None,
            address: None,
            last_seen: 0,
            clients: Vec::new(),
            upstream: None,
        }
    }
}

/// Which session to end: by its cookie (the browser's own logout) or by its public `sid`
/// (operators).
#[derive(Debug, Clone)]
pub enum SessionRef {
    Cookie(String),
    Sid(String),
}

/// Runs in the transaction that deletes the session, with the session as it was: what it
/// writes commits, or fails, with the end.
pub type EndHook = Box<dyn FnOnce(&Session, &mut dyn Sql) -> StoreResult<()> + Send>;

#[async_trait]
pub trait SessionStore: Send + Sync {
    /// Start a session; returns the cookie value `{shard}_{random}`.
    /// Start a session of `tenant` (which the store writes into `session.tenant`).
    async fn create(&self, tenant: TenantId, session: Session, ttl: u64) -> StoreResult<String>;
    async fn get(&self, tenant: TenantId, id: &str) -> StoreResult<Option<Session>>;
    /// Record that `client_id` took part in the session, and that the session was used now:
    /// written only when the client is new to it or `last_seen` is `LAST_SEEN_PRECISION` old.
    async fn join(&self, tenant: TenantId, id: &str, client_id: &str) -> StoreResult<()>;
    /// End a live session and, in the same commit, run `hook`. `None` if there was none.
    async fn end(&self, tenant: TenantId, which: SessionRef, hook: EndHook) -> StoreResult<Option<Session>>;
    /// Every live session of a user (operators: a scan, off the request path).
    async fn of_user(&self, tenant: TenantId, user_id: &str) -> StoreResult<Vec<Session>>;
    async fn sweep_expired(&self) -> StoreResult<usize>;
    fn shard_lens(&self) -> Vec<usize>;
}

/// The most clients a session remembers; beyond it the oldest are forgotten (a session is a
/// user's, so only a signed-in user can grow it, and only by clients that exist).
pub const MAX_SESSION_CLIENTS: usize = 64;

/// How stale `last_seen` may get: a use within this many seconds of the recorded one writes
/// nothing, so that a session is rewritten at most once a minute however busy, and the user's
/// list of sessions says "last seen" to the minute (a display's precision, not a policy).
pub const LAST_SEEN_PRECISION: u64 = 60;

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// `session` with `client_id` joined and seen at `at`, or `None` if there is nothing to write
/// (the client was there already and the session was seen less than `LAST_SEEN_PRECISION` ago).
pub fn joined(session: &Session, client_id: &str, at: u64) -> Option<Session> {
    let known = session.clients.iter().any(|c| c == client_id);
    let seen = session.last_seen.max(session.created_at);
    if known && at < seen.saturating_add(LAST_SEEN_PRECISION) {
        return None;
    }
    let mut s = session.clone();
    s.last_seen = at;
    if !known {
        if s.clients.len() >= MAX_SESSION_CLIENTS {
            s.clients.remove(0);
        }
        s.clients.push(client_id.to_string());
    }
    Some(s)
}

pub struct EmbeddedSessionStore {
    table: ShardedTable<Session>,
}

impl EmbeddedSessionStore {
    pub fn new(shards: usize, journal: Journal) -> Self {
        Self { table: ShardedTable::new("sessions", shards, journal) }
    }

    pub fn load(&self, conn: &rusqlite::Connection) -> rusqlite::Result<usize> {
        self.table.load(conn, now())
    }

    /// Where the live session of `tenant` with public id `sid` is: (shard, key).
    fn find_sid(&self, tenant: TenantId, sid: &str) -> Option<(usize, [u8; 32])> {
        let t = now();
        (0..self.table.shard_count()).find_map(|shard| {
            self.table.read(shard, |m| {
                m.iter().find(|(_, e)| e.expires_at > t && e.value.sid == sid && e.value.tenant == tenant).map(|(k, _)| (shard, *k))
            })
        })
    }
}

#[async_trait]
impl SessionStore for EmbeddedSessionStore {
    async fn create(&self, tenant: TenantId, session: Session, ttl: u64) -> StoreResult<String> {
        let (shard, id) = mint_prefixed(self.table.shard_count());
        let (_, key) = parse_prefixed(tenant, &id, self.table.shard_count()).expect("minted id parses");
        let mut timer = self.table.timer(shard);
        let expires_at = now() + ttl;
        let mut session = Some(Session { tenant, ..session });
        let ((), at) =
            self.table.update(shard, key, |_| Turn::put((), session.take().expect("a fresh key is never busy"), expires_at)).await?;
        timer.answered_at(at);
        Ok(id)
    }

    async fn get(&self, tenant: TenantId, id: &str) -> StoreResult<Option<Session>> {
        let Some((shard, key)) = parse_prefixed(tenant, id, self.table.shard_count()) else { return Ok(None) };
        let _timer = self.table.timer(shard);
        let t = now();
        Ok(self.table.read(shard, |m| m.get(&key).filter(|e| e.expires_at > t).map(|e| e.value.clone())))
    }

    async fn join(&self, tenant: TenantId, id: &str, client_id: &str) -> StoreResult<()> {
        let Some((shard, key)) = parse_prefixed(tenant, id, self.table.shard_count()) else { return Ok(()) };
        let t = now();
        let mut timer = self.table.timer(shard);
        let ((), at) = self
            .table
            .update(shard, key, |e| match e.filter(|e| e.expires_at > t).and_then(|e| joined(&e.value, client_id, t).map(|s| (s, e.expires_at))) {
                Some((s, expires_at)) => Turn::put((), s, expires_at),
                None => Turn::read(()),
            })
            .await?;
        timer.answered_at(at);
        Ok(())
    }

    async fn end(&self, tenant: TenantId, which: SessionRef, hook: EndHook) -> StoreResult<Option<Session>> {
        let located = match &which {
            SessionRef::Cookie(id) => parse_prefixed(tenant, id, self.table.shard_count()),
            SessionRef::Sid(sid) => self.find_sid(tenant, sid),
        };
        let Some((shard, key)) = located else { return Ok(None) };
        let t = now();
        let mut timer = self.table.timer(shard);
        let mut hook = Some(hook);
        let (ended, at) = self
            .table
            .update(shard, key, |e| match e.filter(|e| e.expires_at > t) {
                Some(e) => {
                    let session = e.value.clone();
                    let hook = hook.take().expect("a turn decides once per write");
                    let ended = session.clone();
                    Turn::delete(Some(ended)).also(move |sql| hook(&session, sql))
                }
                None => Turn::read(None),
            })
            .await?;
        timer.answered_at(at);
        Ok(ended)
    }

    async fn of_user(&self, tenant: TenantId, user_id: &str) -> StoreResult<Vec<Session>> {
        let t = now();
        let mut out = Vec::new();
        for shard in 0..self.table.shard_count() {
            self.table.read(shard, |m| {
                out.extend(
                    m.values().filter(|e| e.expires_at > t && e.value.user_id == user_id && e.value.tenant == tenant).map(|e| e.value.clone()),
                )
            });
        }
        out.sort_by_key(|s| s.created_at);
        Ok(out)
    }

    async fn sweep_expired(&self) -> StoreResult<usize> {
        self.table.sweep(now()).await
    }

    fn shard_lens(&self) -> Vec<usize> {
        self.table.shard_lens()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_remembers_each_client_once_and_at_most_the_last_64() {
        let mut s = Session::new("u", "sid".into(), 1, vec![], "1");
        let t = s.created_at;
        s = joined(&s, "a", t).unwrap();
        assert!(joined(&s, "a", t + 1).is_none(), "a client already there is not written again");
        for i in 0..100 {
            s = joined(&s, &format!("c{i}"), t).unwrap();
        }
        assert_eq!(s.clients.len(), MAX_SESSION_CLIENTS);
        assert_eq!(s.clients.first().map(String::as_str), Some("c36"), "the oldest are forgotten");
        assert_eq!(s.clients.last().map(String::as_str), Some("c99"));
    }

    #[test]
    fn a_session_is_seen_again_at_most_once_a_minute() {
        let s = Session::new("u", "sid".into(), 1, vec![], "1");
        let t = s.created_at;
        let s = joined(&s, "a", t).unwrap();
        assert!(joined(&s, "a", t + LAST_SEEN_PRECISION - 1).is_none(), "seen within the minute: nothing written");
        let later = joined(&s, "a", t + LAST_SEEN_PRECISION).expect("a minute later: written");
        assert_eq!((later.last_seen, later.clients.len()), (t + LAST_SEEN_PRECISION, 1));
    }
}
