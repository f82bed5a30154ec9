//! The reference's state stores, each behind a small trait so that a backend can be swapped
//! without touching protocol code. The embedded backend keeps every shard's state in memory
//! (one lock per shard: the single writer) and makes changes durable through the SQLite
//! group-commit journal before answering.

pub mod challenges;
pub mod codes;
pub mod refresh;
pub mod revocations;
pub mod sessions;
pub mod shard;
pub mod table;

pub use challenges::{ChallengeRecord, ChallengeStore};
pub use codes::{AuthorizationCodeStore, CodeGrant, IssuedToken, Redemption};
pub use refresh::{Family, NewFamily, Presented, RefreshTokenRotator, Rotation};
pub use revocations::TokenRevocationStore;
pub use sessions::{Session, SessionStore};

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
}

impl Stores {
    /// The embedded backend, loaded from `reader` (unexpired rows only).
    /// `refresh_mac_key` authenticates refresh tokens (see `refresh`); it comes from the KEK.
    pub fn embedded(config: &Config, journal: &Journal, reader: &rusqlite::Connection, refresh_mac_key: [u8; 32]) -> anyhow::Result<Self> {
        // A redeemed code is remembered as long as the tokens it issued live, so that a reuse
        // at any point in their life can still revoke them (RFC 6749 §4.1.2).
        let reuse_window = config.access_token_ttl.max(config.code_expiry);
        let codes = codes::EmbeddedCodeStore::new(config.code_shards, journal.clone(), reuse_window);
        let sessions = sessions::EmbeddedSessionStore::new(config.session_shards, journal.clone());
        let challenges = challenges::EmbeddedChallengeStore::new(config.challenge_shards, journal.clone());
        let revocations = revocations::EmbeddedRevocationStore::new(config.revocation_shards, journal.clone());
        let policy = refresh::RotationPolicy {
            rotate: config.refresh_token_rotation,
            grace: config.refresh_reuse_grace,
            ttl: config.refresh_token_ttl,
            idle_ttl: config.refresh_token_idle_ttl,
        };
        let refresh = refresh::EmbeddedRefreshRotator::new(config.refresh_shards, journal.clone(), refresh_mac_key, policy);
        let families = refresh.load(reader)?;
        let loaded = (
            codes.load(reader)?,
            sessions.load(reader)?,
            challenges.load(reader)?,
            revocations.load(reader)?,
        );
        tracing::info!(codes = loaded.0, sessions = loaded.1, challenges = loaded.2, revocations = loaded.3, families, "stores loaded");
        Ok(Self {
            codes: Arc::new(codes),
            sessions: Arc::new(sessions),
            challenges: Arc::new(challenges),
            revocations: Arc::new(revocations),
            refresh: Arc::new(refresh),
        })
    }

    /// Entries per shard of every store, by the seed names (for the `/metrics` gauges).
    pub fn shard_lens(&self) -> [(&'static str, Vec<usize>); 5] {
        [
            ("AuthorizationCodeStore", self.codes.shard_lens()),
            ("SessionStore", self.sessions.shard_lens()),
            ("ChallengeStore", self.challenges.shard_lens()),
            ("TokenRevocationStore", self.revocations.shard_lens()),
            ("RefreshTokenRotator", self.refresh.shard_lens()),
        ]
    }

    pub async fn sweep_expired(&self) -> crate::db::StoreResult<usize> {
        Ok(self.codes.sweep_expired().await?
            + self.sessions.sweep_expired().await?
            + self.challenges.sweep_expired().await?
            + self.revocations.sweep_expired().await?
            + self.refresh.sweep_expired().await?)
    }
}
