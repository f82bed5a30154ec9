//! RefreshTokenRotator on PostgreSQL. The family's version is a column; a rotation is one
//! UPDATE conditioned on the presented version, so of N presentations racing on any nodes
//! exactly one moves the version on. The losers read the row the winner left and are judged
//! by the same rule as the embedded backend (`judge`): grace retry or theft.

use super::{col, decode, encode, PgTable};
use crate::db::postgres::PgDb;
use crate::db::StoreResult;
use crate::stores::refresh::{
    family_shard, judge, new_family, presented, Codec, Family, NewFamily, Presented, RefreshTokenRotator, Rotation,
    RotationPolicy, Verdict,
};
use crate::stores::shard::key;
use crate::tenant::TenantId;
use crate::util::now;
use async_trait::async_trait;
use tokio_postgres::Row;

const COLUMNS: &str = "data, version, last_used, rotated_at, revoked, expires_at";

pub struct PgRefreshRotator {
    table: PgTable,
    codec: Codec,
    policy: RotationPolicy,
    /// Built once: every call reuses the text, and each connection its prepared plan.
    load_sql: String,
    rotate_sql: String,
    revoke_sql: String,
}

/// A family row: the JSON holds what never changes; the columns hold what does.
fn family(row: &Row) -> StoreResult<Family> {
    let mut f: Family = decode("refresh_families", &col::<String>(row, 0)?)?;
    f.version = col::<i64>(row, 1)? as u64;
    f.last_used = col::<i64>(row, 2)? as u64;
    f.rotated_at = col::<i64>(row, 3)? as u64;
    f.revoked = col(row, 4)?;
    f.expires_at = col::<i64>(row, 5)? as u64;
    Ok(f)
}

impl PgRefreshRotator {
    pub fn new(db: PgDb, shards: usize, mac_key: [u8; 32], policy: RotationPolicy) -> Self {
        Self {
            table: PgTable::new(db, "refresh_families", "RefreshTokenRotator", shards),
            codec: Codec::new(mac_key),
            policy,
            load_sql: format!("SELECT {COLUMNS} FROM refresh_families WHERE hash = $1"),
            rotate_sql: format!(
                "UPDATE refresh_families SET version = version + $3, last_used = $4,
                   rotated_at = CASE WHEN $3 = 1 THEN $4 ELSE rotated_at END
                 WHERE hash = $1 AND version = $2 AND NOT revoked AND expires_at > $4 AND last_used + $5 > $4
                 RETURNING {COLUMNS}"
            ),
            revoke_sql: format!("UPDATE refresh_families SET revoked = true WHERE hash = $1 RETURNING {COLUMNS}"),
        }
    }

    async fn load(&self, key: &[u8; 32]) -> StoreResult<Option<Family>> {
        self.table.read(&self.load_sql, &[&key.as_slice()]).await?.map(|r| family(&r)).transpose()
    }

    /// Revoke the family; the row as revoked, if it exists.
    async fn revoke(&self, key: &[u8; 32]) -> StoreResult<Option<Family>> {
        self.table.write(&self.revoke_sql, &[&key.as_slice()]).await?.map(|r| family(&r)).transpose()
    }
}

#[async_trait]
impl RefreshTokenRotator for PgRefreshRotator {
    async fn create(&self, tenant: TenantId, family_id: &str, new: NewFamily) -> StoreResult<String> {
        let shard = family_shard(&new.user_id, &new.client_id, self.table.shard_count());
        let _timer = self.table.timer(shard);
        let f = new_family(tenant, family_id, new, now(), self.policy.ttl);
        let t = f.created_at as i64;
        self.table
            .write(
                "INSERT INTO refresh_families (hash, shard, data, version, last_used, rotated_at, revoked, expires_at)
                 VALUES ($1, $2, $3, 0, $4, $4, false, $5)",
                &[&key(tenant, family_id).as_slice(), &(shard as i32), &encode(&f), &t, &(f.expires_at as i64)],
            )
            .await?;
        Ok(self.codec.encode(shard, family_id, 0))
    }

    async fn peek(&self, tenant: TenantId, token: &str) -> StoreResult<Presented> {
        let Some((shard, key, version)) = self.codec.locate(tenant, token, self.table.shard_count()) else { return Ok(Presented::Unknown) };
        let _timer = self.table.timer(shard);
        Ok(match self.load(&key).await? {
            None => Presented::Unknown,
            Some(f) => presented(f, version, now(), &self.policy),
        })
    }

    async fn rotate_with(&self, tenant: TenantId, token: &str, grace: Option<u64>) -> StoreResult<Rotation> {
        let Some((shard, key, version)) = self.codec.locate(tenant, token, self.table.shard_count()) else { return Ok(Rotation::Unknown) };
        let _timer = self.table.timer(shard);
        let (t, p) = (now(), self.policy.with_grace(grace));
        let step: i64 = p.rotate.into();
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 5] =
            [&key.as_slice(), &(version as i64), &step, &(t as i64), &(p.idle_ttl.min(i64::MAX as u64 / 2) as i64)];
        if let Some(row) = self.table.write(&self.rotate_sql, &params).await? {
            let f = family(&row)?;
            let token = self.codec.encode(shard, &f.id, f.version);
            return Ok(Rotation::Rotated { family: f, token });
        }
        let Some(f) = self.load(&key).await? else { return Ok(Rotation::Unknown) };
        Ok(match judge(&f, version, t, &p) {
            Verdict::Revoked => Rotation::Revoked,
            Verdict::Expired => Rotation::Expired,
            Verdict::GraceRetry => {
                let token = self.codec.encode(shard, &f.id, f.version);
                Rotation::GraceRetry { family: f, token }
            }
            Verdict::Reuse => match self.revoke(&key).await? {
                Some(f) => Rotation::Reused { family: f },
                None => Rotation::Unknown,
            },
            // The conditional update would have matched: only a version from the future
            // (never minted) or a row that changed between the two statements lands here.
            Verdict::Rotate | Verdict::Unknown => Rotation::Unknown,
        })
    }

    /// One statement: set `jkt` in the row's JSON if it has none; either way the row's key is
    /// read back (the loser of two concurrent bindings sees the winner's).
    async fn bind_key(&self, tenant: TenantId, token: &str, jkt: &str) -> StoreResult<Option<String>> {
        let Some((shard, key, _)) = self.codec.locate(tenant, token, self.table.shard_count()) else { return Ok(None) };
        let _timer = self.table.timer(shard);
        let sql = "UPDATE refresh_families SET data = CASE WHEN (data::jsonb) ? 'jkt' THEN data
                     ELSE jsonb_set(data::jsonb, '{jkt}', to_jsonb($2::text))::text END
                   WHERE hash = $1 RETURNING (data::jsonb)->>'jkt'";
        match self.table.write(sql, &[&key.as_slice(), &jkt]).await? {
            Some(row) => Ok(col::<Option<String>>(&row, 0)?),
            None => Ok(None),
        }
    }

    async fn revoke_family(&self, tenant: TenantId, family_id: &str) -> StoreResult<bool> {
        let sql = "UPDATE refresh_families SET revoked = true WHERE hash = $1 AND NOT revoked RETURNING hash";
        Ok(self.table.write(sql, &[&key(tenant, family_id).as_slice()]).await?.is_some())
    }

    async fn revoke_of(&self, tenant: TenantId, user_id: &str, client_id: Option<&str>) -> StoreResult<Vec<String>> {
        // `$2` NULL: every client.
        let rows = self
            .table
            .read_all(
                &format!(
                    "UPDATE refresh_families SET revoked = true WHERE NOT revoked AND expires_at > $3 \
                     AND (data::jsonb)->>'user_id' = $1 AND ($2::text IS NULL OR (data::jsonb)->>'client_id' = $2) \
                     AND {} $4 RETURNING (data::jsonb)->>'id'",
                    super::sessions::TENANT_IS
                ),
                &[&user_id, &client_id, &(now() as i64), &(tenant.0 as i64)],
            )
            .await?;
        rows.iter().map(|r| col::<String>(r, 0)).collect()
    }

    async fn sweep_expired(&self) -> StoreResult<usize> {
        self.table.sweep(now()).await
    }

    fn shard_lens(&self) -> Vec<usize> {
        self.table.shard_lens()
    }
}
