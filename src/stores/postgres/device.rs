//! DeviceCodeStore on PostgreSQL. The request is a row keyed as the embedded store keys it;
//! the poll is judged by the same function (`device::judge`) on the row as read, and its
//! change is one conditional statement: a poll's pacing is written only over the poll it was
//! judged against, and a redemption is a `DELETE … RETURNING` that one node wins.
//!
//! The bounds are counted by the INSERT itself. Under READ COMMITTED two nodes inserting at
//! the same instant may both see room for one: the bound can be passed by the requests in
//! flight at once, never more.

use super::{col, decode, encode, PgTable};
use crate::db::postgres::PgDb;
use crate::db::StoreResult;
use crate::stores::device::{
    client_key, judge, mint_device_code, mint_user_code, split, user_code_key, Decision, DeviceCodeStore, DeviceRequest, Issued, Limits, Poll,
    PollChange, PollView,
};
use crate::stores::shard::key_shard;
use crate::tenant::TenantId;
use crate::util::now;
use async_trait::async_trait;

pub struct PgDeviceStore {
    table: PgTable,
}

impl PgDeviceStore {
    pub fn new(db: PgDb, shards: usize) -> Self {
        Self { table: PgTable::new(db, "device_requests", "DeviceCodeStore", shards) }
    }
}

#[async_trait]
impl DeviceCodeStore for PgDeviceStore {
    async fn issue(&self, tenant: TenantId, request: DeviceRequest, interval: u64, limits: Limits) -> StoreResult<Issued> {
        let t = now() as i64;
        let client = client_key(tenant, &request.client_id);
        let pending_until = request.expires_at as i64;
        let row_expires = pending_until + (pending_until - t).max(crate::stores::device::LATE_POLL_GRACE as i64);
        for _ in 0..8 {
            let user_code = mint_user_code();
            let (device_code, hash) = mint_device_code(&user_code);
            let k = user_code_key(tenant, &user_code);
            let shard = key_shard(&k, self.table.shard_count());
            let _timer = self.table.timer(shard);
            // An expired row under the same user code is taken over; a live one is a collision.
            let stored = self
                .table
                .write(
                    "INSERT INTO device_requests (hash, shard, client_key, device_hash, data, decision, poll_interval, last_poll, pending_until, expires_at)
                     SELECT $1, $2, $3, $4, $5, NULL, $6, 0, $7, $8
                     WHERE (SELECT COUNT(*) FROM device_requests WHERE pending_until > $9) < $10
                       AND (SELECT COUNT(*) FROM device_requests WHERE client_key = $3 AND pending_until > $9) < $11
                     ON CONFLICT (hash) DO UPDATE SET shard = excluded.shard, client_key = excluded.client_key,
                       device_hash = excluded.device_hash, data = excluded.data, decision = NULL,
                       poll_interval = excluded.poll_interval, last_poll = 0, pending_until = excluded.pending_until,
                       expires_at = excluded.expires_at
                     WHERE device_requests.expires_at <= $9
                     RETURNING 1",
                    &[
                        &k.as_slice(),
                        &(shard as i32),
                        &client.as_slice(),
                        &hash.as_slice(),
                        &encode(&request),
                        &(interval as i64),
                        &pending_until,
                        &row_expires,
                        &t,
                        &i64::from(limits.total),
                        &i64::from(limits.per_client),
                    ],
                )
                .await?;
            if stored.is_some() {
                return Ok(Issued::Codes { device_code, user_code });
            }
            // Not stored: a live row under this user code (draw again), or a bound reached.
            let live = self.table.read("SELECT 1 FROM device_requests WHERE hash = $1 AND expires_at > $2", &[&k.as_slice(), &t]).await?;
            if live.is_none() {
                return Ok(Issued::Full);
            }
        }
        Err(crate::db::StoreError::Database("no free user code after several draws".into()))
    }

    async fn find(&self, tenant: TenantId, user_code: &str) -> StoreResult<Option<DeviceRequest>> {
        let k = user_code_key(tenant, user_code);
        let _timer = self.table.timer(key_shard(&k, self.table.shard_count()));
        let row = self
            .table
            .read("SELECT data FROM device_requests WHERE hash = $1 AND pending_until > $2", &[&k.as_slice(), &(now() as i64)])
            .await?;
        row.map(|r| decode("device_requests", &col::<String>(&r, 0)?)).transpose()
    }

    async fn decide(&self, tenant: TenantId, user_code: &str, decision: Decision) -> StoreResult<bool> {
        let k = user_code_key(tenant, user_code);
        let _timer = self.table.timer(key_shard(&k, self.table.shard_count()));
        let row = self
            .table
            .write(
                "UPDATE device_requests SET decision = $2, pending_until = 0 WHERE hash = $1 AND decision IS NULL AND pending_until > $3 RETURNING 1",
                &[&k.as_slice(), &encode(&decision), &(now() as i64)],
            )
            .await?;
        Ok(row.is_some())
    }

    async fn poll(&self, tenant: TenantId, device_code: &str, client_id: &str) -> StoreResult<Poll> {
        let Some(user_code) = split(device_code) else { return Ok(Poll::Unknown) };
        let k = user_code_key(tenant, &user_code);
        let _timer = self.table.timer(key_shard(&k, self.table.shard_count()));
        let t = now();
        let row = self
            .table
            .read(
                "SELECT data, device_hash, client_key, decision, poll_interval, last_poll FROM device_requests WHERE hash = $1 AND expires_at > $2",
                &[&k.as_slice(), &(t as i64)],
            )
            .await?;
        let Some(row) = row else { return Ok(Poll::Unknown) };
        let request: DeviceRequest = decode("device_requests", &col::<String>(&row, 0)?)?;
        let (device_hash, client): (Vec<u8>, Vec<u8>) = (col(&row, 1)?, col(&row, 2)?);
        let decision: Option<Decision> = col::<Option<String>>(&row, 3)?.map(|d| decode("device_requests", &d)).transpose()?;
        let last_poll = col::<i64>(&row, 5)?;
        let view = PollView {
            request: &request,
            device_hash: &device_hash,
            client_key: &client,
            decision: decision.as_ref(),
            interval: col::<i64>(&row, 4)? as u64,
            last_poll: last_poll as u64,
        };
        let (answer, change) = judge(&view, device_code, &client_key(tenant, client_id), t);
        match change {
            PollChange::None => Ok(answer),
            PollChange::Consume => {
                let won = self.table.write("DELETE FROM device_requests WHERE hash = $1 AND decision IS NOT NULL RETURNING 1", &[&k.as_slice()]).await?;
                Ok(if won.is_some() { answer } else { Poll::Unknown })
            }
            PollChange::Polled { last_poll: now_polled, interval } => {
                let written = self
                    .table
                    .write(
                        "UPDATE device_requests SET last_poll = $2, poll_interval = $3 WHERE hash = $1 AND last_poll = $4 AND decision IS NULL RETURNING 1",
                        &[&k.as_slice(), &(now_polled as i64), &(interval as i64), &last_poll],
                    )
                    .await?;
                // Another poll of the same request landed in between (or the user answered):
                // this one was too soon in any case.
                Ok(if written.is_some() { answer } else { Poll::SlowDown })
            }
        }
    }

    async fn sweep_expired(&self) -> StoreResult<usize> {
        self.table.sweep(now()).await
    }

    fn shard_lens(&self) -> Vec<usize> {
        self.table.shard_lens()
    }
}
