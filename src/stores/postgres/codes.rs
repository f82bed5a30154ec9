//! AuthorizationCodeStore on PostgreSQL: redemption is one conditional UPDATE, so a code is
//! consumed once across every node.

use super::{col, decode, encode, PgTable};
use crate::db::postgres::PgDb;
use crate::db::StoreResult;
use crate::stores::codes::{AuthorizationCodeStore, CodeGrant, IssuedToken, Redemption};
use crate::stores::shard::{mint_prefixed, parse_prefixed};
use crate::tenant::TenantId;
use crate::util::now;
use async_trait::async_trait;

pub struct PgCodeStore {
    table: PgTable,
    reuse_window: u64,
}

impl PgCodeStore {
    pub fn new(db: PgDb, shards: usize, reuse_window: u64) -> Self {
        Self { table: PgTable::new(db, "auth_codes", "AuthorizationCodeStore", shards), reuse_window }
    }
}

#[async_trait]
impl AuthorizationCodeStore for PgCodeStore {
    async fn issue(&self, tenant: TenantId, grant: CodeGrant, lifetime: u64) -> StoreResult<String> {
        let (shard, code) = mint_prefixed(self.table.shard_count());
        let (_, key) = parse_prefixed(tenant, &code, self.table.shard_count()).expect("minted code parses");
        let _timer = self.table.timer(shard);
        let expires_at = (now() + lifetime) as i64;
        self.table
            .write(
                "INSERT INTO auth_codes (hash, shard, data, redeemed, code_expires_at, expires_at) VALUES ($1, $2, $3, NULL, $4, $4)",
                &[&key.as_slice(), &(shard as i32), &encode(&grant), &expires_at],
            )
            .await?;
        Ok(code)
    }

    async fn consume(&self, tenant: TenantId, code: &str, issued: Vec<IssuedToken>) -> StoreResult<Redemption> {
        let Some((shard, key)) = parse_prefixed(tenant, code, self.table.shard_count()) else {
            return Ok(Redemption::NotFound);
        };
        let _timer = self.table.timer(shard);
        let t = now() as i64;
        let retained_until = t + self.reuse_window as i64;
        let won = self
            .table
            .write(
                "UPDATE auth_codes SET redeemed = $2, expires_at = GREATEST(expires_at, $3)
                 WHERE hash = $1 AND redeemed IS NULL AND code_expires_at > $4 RETURNING data",
                &[&key.as_slice(), &encode(&issued), &retained_until, &t],
            )
            .await?;
        if let Some(row) = won {
            return Ok(Redemption::Fresh(decode("auth_codes", &col::<String>(&row, 0)?)?));
        }
        // Lost: the row as the winner (or time) left it.
        let row = self
            .table
            .read("SELECT data, redeemed FROM auth_codes WHERE hash = $1", &[&key.as_slice()])
            .await?;
        let Some(row) = row else { return Ok(Redemption::NotFound) };
        match col::<Option<String>>(&row, 1)? {
            Some(previous) => {
                let grant: CodeGrant = decode("auth_codes", &col::<String>(&row, 0)?)?;
                Ok(Redemption::AlreadyUsed { client_id: grant.client_id, issued: decode("auth_codes", &previous)? })
            }
            None => Ok(Redemption::Expired),
        }
    }

    async fn sweep_expired(&self) -> StoreResult<usize> {
        self.table.sweep(now()).await
    }

    fn shard_lens(&self) -> Vec<usize> {
        self.table.shard_lens()
    }
}
