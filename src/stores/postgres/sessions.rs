//! SessionStore on PostgreSQL: a session created on one node is read by every node.

use super::{col, decode, PgTable};
use crate::db::postgres::PgDb;
use crate::db::StoreResult;
use crate::stores::sessions::{Session, SessionStore};
use crate::stores::shard::parse_prefixed;
use crate::util::now;
use async_trait::async_trait;

pub struct PgSessionStore {
    table: PgTable,
}

impl PgSessionStore {
    pub fn new(db: PgDb, shards: usize) -> Self {
        Self { table: PgTable::new(db, "sessions", "SessionStore", shards) }
    }
}

#[async_trait]
impl SessionStore for PgSessionStore {
    async fn create(&self, session: Session, ttl: u64) -> StoreResult<String> {
        self.table.insert_minted(&session, ttl).await
    }

    async fn get(&self, id: &str) -> StoreResult<Option<Session>> {
        let Some((shard, key)) = parse_prefixed(id, self.table.shard_count()) else { return Ok(None) };
        let _timer = self.table.timer(shard);
        let row = self
            .table
            .read("SELECT data FROM sessions WHERE hash = $1 AND expires_at > $2", &[&key.as_slice(), &(now() as i64)])
            .await?;
        row.map(|r| decode("sessions", &col::<String>(&r, 0)?)).transpose()
    }

    async fn delete(&self, id: &str) -> StoreResult<()> {
        let Some((shard, key)) = parse_prefixed(id, self.table.shard_count()) else { return Ok(()) };
        let _timer = self.table.timer(shard);
        self.table.write("DELETE FROM sessions WHERE hash = $1", &[&key.as_slice()]).await?;
        Ok(())
    }

    async fn sweep_expired(&self) -> StoreResult<usize> {
        self.table.sweep(now()).await
    }

    fn shard_lens(&self) -> Vec<usize> {
        self.table.shard_lens()
    }
}
