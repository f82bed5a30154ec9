//! The reference's state stores, each behind a small trait so that a backend can be swapped
//! without touching protocol code. Two backends:
//! - embedded (one process): every shard's state in memory, one lock per shard (the single
//!   writer), made durable through the SQLite group-commit journal before answering;
//! - `postgres` (several nodes): the database decides, one conditional statement per decision.

pub mod challenges;
pub mod ciba;
pub mod codes;
pub mod device;
pub mod postgres;
pub mod refresh;
pub mod revocations;
pub mod sessions;
pub mod shard;
pub mod table;

#[cfg(test)]
mod durability_tests;

pub use challenges::{ChallengeRecord, ChallengeStore};
pub use ciba::CibaStore;
pub use codes::{AuthorizationCodeStore, CodeGrant, IssuedToken, Redemption};
pub use device::DeviceCodeStore;
pub use refresh::{Family, NewFamily, Presented, RefreshTokenRotator, Rotation};
pub use revocations::TokenRevocationStore;
pub use sessions::{EndHook, Session, SessionRef, SessionStore};

use crate::config::Config;
use crate::db::Journal;
use std::sync::Arc;

#[derive(Clone)]
pub struct Stores {
    pub codes: Arc<dyn AuthorizationCodeStore>,
    pub sessions: Arc<dyn SessionStore>,
    pub challenges: Arc<dyn ChallengeStore>,
    pub revocations: Arc<dyn TokenRevocationStore>,
    pub refresh: Arc<dyn RefreshTokenRotator>,
    /// Device authorization requests (RFC 8628); sharded as the challenges are.
    pub device: Arc<dyn DeviceCodeStore>,
    /// Backchannel authentication requests (CIBA); one implementation on the `Sql` seam for
    /// both backends (see `ciba`).
    pub ciba: Arc<dyn CibaStore>,
}

impl Stores {
    /// The embedded backend, loaded from `reader` (unexpired rows only).
    /// `refresh_mac_key` authenticates refresh tokens (see `refresh`); it comes from the KEK.
    pub fn embedded(config: &Config, db: &crate::db::Database, journal: &Journal, reader: &rusqlite::Connection, refresh_mac_key: [u8; 32]) -> anyhow::Result<Self> {
        // A redeemed code is remembered as long as the tokens it issued live, so that a reuse
        // at any point in their life can still revoke them (RFC 6749 §4.1.2).
        let reuse_window = config.access_token_ttl.max(config.code_expiry);
        let codes = codes::EmbeddedCodeStore::new(config.code_shards, journal.clone(), reuse_window);
        let sessions = sessions::EmbeddedSessionStore::new(config.session_shards, journal.clone());
        let challenges = challenges::EmbeddedChallengeStore::new(config.challenge_shards, journal.clone());
        let revocations = revocations::EmbeddedRevocationStore::new(config.revocation_shards, journal.clone());
        let refresh =
            refresh::EmbeddedRefreshRotator::new(config.refresh_shards, journal.clone(), refresh_mac_key, rotation_policy(config));
        let device = device::EmbeddedDeviceStore::new(config.challenge_shards, journal.clone());
        let families = refresh.load(reader)?;
        let device_requests = device.load(reader)?;
        let loaded = (
            codes.load(reader)?,
            sessions.load(reader)?,
            challenges.load(reader)?,
            revocations.load(reader)?,
        );
        tracing::info!(codes = loaded.0, sessions = loaded.1, challenges = loaded.2, revocations = loaded.3, families, device_requests, "stores loaded");
        Ok(Self {
            codes: Arc::new(codes),
            sessions: Arc::new(sessions),
            challenges: Arc::new(challenges),
            revocations: Arc::new(revocations),
            refresh: Arc::new(refresh),
            device: Arc::new(device),
            ciba: Arc::new(ciba::SqlCibaStore::new(db.clone())),
        })
    }

    /// The PostgreSQL backend. Also returns the revocation store itself: the node keeps its
    /// in-memory list in step with the notifications (`crate::node_sync`).
    pub fn postgres(
        config: &Config,
        database: &crate::db::Database,
        db: &crate::db::postgres::PgDb,
        freshness: Arc<crate::db::postgres::Freshness>,
        refresh_mac_key: [u8; 32],
    ) -> (Self, Arc<postgres::revocations::PgRevocationStore>) {
        let reuse_window = config.access_token_ttl.max(config.code_expiry);
        let revocations = Arc::new(postgres::revocations::PgRevocationStore::new(db.clone(), config.revocation_shards, freshness));
        let stores = Self {
            codes: Arc::new(postgres::codes::PgCodeStore::new(db.clone(), config.code_shards, reuse_window)),
            sessions: Arc::new(postgres::sessions::PgSessionStore::new(db.clone(), config.session_shards)),
            challenges: Arc::new(postgres::challenges::PgChallengeStore::new(db.clone(), config.challenge_shards)),
            revocations: revocations.clone(),
            refresh: Arc::new(postgres::refresh::PgRefreshRotator::new(
                db.clone(),
                config.refresh_shards,
                refresh_mac_key,
                rotation_policy(config),
            )),
            device: Arc::new(postgres::device::PgDeviceStore::new(db.clone(), config.challenge_shards)),
            ciba: Arc::new(ciba::SqlCibaStore::new(database.clone())),
        };
        (stores, revocations)
    }

    /// Entries per shard of every store, by the seed names (for the `/metrics` gauges).
    pub fn shard_lens(&self) -> [(&'static str, Vec<usize>); 6] {
        [
            ("AuthorizationCodeStore", self.codes.shard_lens()),
            ("SessionStore", self.sessions.shard_lens()),
            ("ChallengeStore", self.challenges.shard_lens()),
            ("TokenRevocationStore", self.revocations.shard_lens()),
            ("RefreshTokenRotator", self.refresh.shard_lens()),
            ("DeviceCodeStore", self.device.shard_lens()),
        ]
    }

    pub async fn sweep_expired(&self) -> crate::db::StoreResult<usize> {
        Ok(self.codes.sweep_expired().await?
            + self.sessions.sweep_expired().await?
            + self.challenges.sweep_expired().await?
            + self.revocations.sweep_expired().await?
            + self.refresh.sweep_expired().await?
            + self.device.sweep_expired().await?
            + self.ciba.sweep_expired().await?)
    }
}

fn rotation_policy(config: &Config) -> refresh::RotationPolicy {
    refresh::RotationPolicy {
        rotate: config.refresh_rotation(),
        grace: config.refresh_reuse_grace,
        ttl: config.refresh_token_ttl,
        idle_ttl: config.refresh_token_idle_ttl,
    }
}
