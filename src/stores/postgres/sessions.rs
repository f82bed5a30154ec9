//! SessionStore on PostgreSQL: a session created on one node is read by every node.

use super::{col, decode, encode, PgTable};
use crate::db::postgres::PgDb;
use crate::db::{StoreError, StoreResult};
use crate::stores::sessions::{joined, EndHook, Session, SessionRef, SessionStore};
use crate::stores::shard::parse_prefixed;
use crate::tenant::TenantId;
use crate::util::now;
use async_trait::async_trait;

pub struct PgSessionStore {
    table: PgTable,
    db: PgDb,
}

impl PgSessionStore {
    pub fn new(db: PgDb, shards: usize) -> Self {
        Self { table: PgTable::new(db.clone(), "sessions", "SessionStore", shards), db }
    }
}

/// A session row's tenant, compared with a parameter: the `tenant` member of its data, absent
/// for the default tenant (`Session::tenant`). Until rows have a `tenant_id` column, searches
/// that are not by key (by user, by `sid`) filter with it.
pub(super) const TENANT_IS: &str = "COALESCE(((data::jsonb)->>'tenant')::bigint, 0) =";

/// Attempts at a compare-and-set before giving up: a session's row changes only when a client
/// joins it or it is seen again (at most once a minute), so losing more than a few races in a
/// row means something else is wrong.
const JOIN_ATTEMPTS: usize = 5;

#[async_trait]
impl SessionStore for PgSessionStore {
    async fn create(&self, tenant: TenantId, session: Session, ttl: u64) -> StoreResult<String> {
        self.table.insert_minted(tenant, &Session { tenant, ..session }, ttl).await
    }

    async fn get(&self, tenant: TenantId, id: &str) -> StoreResult<Option<Session>> {
        let Some((shard, key)) = parse_prefixed(tenant, id, self.table.shard_count()) else { return Ok(None) };
        let _timer = self.table.timer(shard);
        let row = self
            .table
            .read("SELECT data FROM sessions WHERE hash = $1 AND expires_at > $2", &[&key.as_slice(), &(now() as i64)])
            .await?;
        row.map(|r| decode("sessions", &col::<String>(&r, 0)?)).transpose()
    }

    async fn join(&self, tenant: TenantId, id: &str, client_id: &str) -> StoreResult<()> {
        let Some((shard, key)) = parse_prefixed(tenant, id, self.table.shard_count()) else { return Ok(()) };
        let _timer = self.table.timer(shard);
        for _ in 0..JOIN_ATTEMPTS {
            let Some(row) = self
                .table
                .read("SELECT data FROM sessions WHERE hash = $1 AND expires_at > $2", &[&key.as_slice(), &(now() as i64)])
                .await?
            else {
                return Ok(());
            };
            let before: String = col(&row, 0)?;
            let Some(after) = joined(&decode::<Session>("sessions", &before)?, client_id, now()) else { return Ok(()) };
            // Compare-and-set on the whole value: a concurrent join is not overwritten.
            let written = self
                .table
                .write("UPDATE sessions SET data = $2 WHERE hash = $1 AND data = $3 RETURNING 1", &[&key.as_slice(), &encode(&after), &before])
                .await?;
            if written.is_some() {
                return Ok(());
            }
        }
        Err(StoreError::Conflict("the session changed too often to record the client".into()))
    }

    async fn end(&self, tenant: TenantId, which: SessionRef, hook: EndHook) -> StoreResult<Option<Session>> {
        let shards = self.table.shard_count();
        let t = now() as i64;
        self.db
            .run(true, move |sql| {
                let row = match &which {
                    SessionRef::Cookie(id) => {
                        let Some((_, key)) = parse_prefixed(tenant, id, shards) else { return Ok(None) };
                        sql.query_opt(
                            "DELETE FROM sessions WHERE hash = ?1 AND expires_at > ?2 RETURNING data",
                            crate::params![key.to_vec(), t],
                        )?
                    }
                    SessionRef::Sid(sid) => sql.query_opt(
                        &format!("DELETE FROM sessions WHERE (data::jsonb)->>'sid' = ?1 AND expires_at > ?2 AND {TENANT_IS} ?3 RETURNING data"),
                        crate::params![sid.as_str(), t, tenant.0 as i64],
                    )?,
                };
                let Some(row) = row else { return Ok(None) };
                let session: Session = decode("sessions", &row.text(0)?)?;
                hook(&session, sql)?;
                Ok(Some(session))
            })
            .await
    }

    async fn of_user(&self, tenant: TenantId, user_id: &str) -> StoreResult<Vec<Session>> {
        let rows = self
            .table
            .read_all(
                &format!("SELECT data FROM sessions WHERE (data::jsonb)->>'user_id' = $1 AND expires_at > $2 AND {TENANT_IS} $3"),
                &[&user_id, &(now() as i64), &(tenant.0 as i64)],
            )
            .await?;
        let mut out = rows.iter().map(|r| decode::<Session>("sessions", &col::<String>(r, 0)?)).collect::<StoreResult<Vec<_>>>()?;
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
