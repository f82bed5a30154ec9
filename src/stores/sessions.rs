//! SessionStore: browser sessions behind the `authrim_session` cookie.

use super::shard::{mint_prefixed, parse_prefixed};
use super::table::{ShardedTable, Turn};
use crate::db::{Journal, StoreResult};
use crate::util::now;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Session {
    pub user_id: String,
    /// Public session id for the `sid` claim; unlike the cookie value it is not a credential.
    pub sid: String,
    pub auth_time: u64,
    pub amr: Vec<String>,
    pub acr: String,
}

#[async_trait]
pub trait SessionStore: Send + Sync {
    /// Start a session; returns the cookie value `{shard}_{random}`.
    async fn create(&self, session: Session, ttl: u64) -> StoreResult<String>;
    async fn get(&self, id: &str) -> StoreResult<Option<Session>>;
    async fn delete(&self, id: &str) -> StoreResult<()>;
    async fn sweep_expired(&self) -> StoreResult<usize>;
    fn shard_lens(&self) -> Vec<usize>;
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
}

#[async_trait]
impl SessionStore for EmbeddedSessionStore {
    async fn create(&self, session: Session, ttl: u64) -> StoreResult<String> {
        let (shard, id) = mint_prefixed(self.table.shard_count());
        let (_, key) = parse_prefixed(&id, self.table.shard_count()).expect("minted id parses");
        let mut timer = self.table.timer(shard);
        let expires_at = now() + ttl;
        let mut session = Some(session);
        let ((), at) =
            self.table.update(shard, key, |_| Turn::put((), session.take().expect("a fresh key is never busy"), expires_at)).await?;
        timer.answered_at(at);
        Ok(id)
    }

    async fn get(&self, id: &str) -> StoreResult<Option<Session>> {
        let Some((shard, key)) = parse_prefixed(id, self.table.shard_count()) else { return Ok(None) };
        let _timer = self.table.timer(shard);
        let t = now();
        Ok(self.table.read(shard, |m| m.get(&key).filter(|e| e.expires_at > t).map(|e| e.value.clone())))
    }

    async fn delete(&self, id: &str) -> StoreResult<()> {
        let Some((shard, key)) = parse_prefixed(id, self.table.shard_count()) else { return Ok(()) };
        let mut timer = self.table.timer(shard);
        let ((), at) = self.table.update(shard, key, |e| if e.is_some() { Turn::delete(()) } else { Turn::read(()) }).await?;
        timer.answered_at(at);
        Ok(())
    }

    async fn sweep_expired(&self) -> StoreResult<usize> {
        self.table.sweep(now()).await
    }

    fn shard_lens(&self) -> Vec<usize> {
        self.table.shard_lens()
    }
}
