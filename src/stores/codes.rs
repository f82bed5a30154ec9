//! AuthorizationCodeStore: one-time authorization codes (RFC 6749 §4.1.2, §10.5).

use super::shard::{mint_prefixed, parse_prefixed};
use super::table::{ShardedTable, Turn};
use crate::db::{Journal, StoreResult};
use crate::tenant::TenantId;
use crate::util::now;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};

/// Everything the token endpoint needs to know about an authorization.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CodeGrant {
    pub client_id: String,
    pub redirect_uri: String,
    pub user_id: String,
    pub scope: String,
    pub nonce: Option<String>,
    pub code_challenge: Option<String>,
    pub auth_time: u64,
    pub sid: String,
    pub acr: Option<String>,
    /// The `claims` request parameter (OpenID Connect Core §5.5), if any.
    pub claims: Option<serde_json::Value>,
    /// RFC 9449 §10: the key thumbprint the code must be redeemed with (`dpop_jkt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_jkt: Option<String>,
    /// RFC 8707: the resources the authorization was for; the tokens' audience.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    /// RFC 8176: how the user authenticated (the session's `amr`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub amr: Vec<String>,
    /// The organization (its id) the user signed in for (issue 31).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub org: Option<String>,
}

/// A token issued from a code, remembered so that a reuse of the code can revoke it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct IssuedToken {
    pub jti: String,
    pub expires_at: u64,
}

#[derive(Debug, PartialEq)]
pub enum Redemption {
    /// First redemption: the grant, now spent.
    Fresh(CodeGrant),
    /// The code was redeemed before; these tokens came from that redemption.
    AlreadyUsed { client_id: String, issued: Vec<IssuedToken> },
    Expired,
    NotFound,
}

#[async_trait]
pub trait AuthorizationCodeStore: Send + Sync {
    /// Store `grant` for `lifetime` seconds, returning the code `{shard}_{random}` that redeems it.
    async fn issue(&self, tenant: TenantId, grant: CodeGrant, lifetime: u64) -> StoreResult<String>;

    /// Redeem `code` at most once. `issued` names the tokens about to be issued from it; they
    /// are recorded in the same atomic step, so a concurrent reuse always sees them.
    /// A code of another tenant is `NotFound`: the tenant is part of the key.
    async fn consume(&self, tenant: TenantId, code: &str, issued: Vec<IssuedToken>) -> StoreResult<Redemption>;

    async fn sweep_expired(&self) -> StoreResult<usize>;
    fn shard_lens(&self) -> Vec<usize>;
}

#[derive(Serialize, Deserialize)]
struct CodeRecord {
    grant: CodeGrant,
    /// Set on redemption; `None` while the code is unused.
    redeemed: Option<Vec<IssuedToken>>,
    code_expires_at: u64,
}

pub struct EmbeddedCodeStore {
    table: ShardedTable<CodeRecord>,
    /// How long a redeemed code is remembered: long enough to revoke what it issued.
    reuse_window: u64,
}

impl EmbeddedCodeStore {
    pub fn new(shards: usize, journal: Journal, reuse_window: u64) -> Self {
        Self { table: ShardedTable::new("auth_codes", shards, journal), reuse_window }
    }

    pub fn load(&self, conn: &rusqlite::Connection) -> rusqlite::Result<usize> {
        self.table.load(conn, now())
    }
}

#[async_trait]
impl AuthorizationCodeStore for EmbeddedCodeStore {
    async fn issue(&self, tenant: TenantId, grant: CodeGrant, lifetime: u64) -> StoreResult<String> {
        let (shard, code) = mint_prefixed(self.table.shard_count());
        let (_, key) = parse_prefixed(tenant, &code, self.table.shard_count()).expect("minted code parses");
        let mut timer = self.table.timer(shard);
        let code_expires_at = now() + lifetime;
        let mut record = Some(CodeRecord { grant, redeemed: None, code_expires_at });
        let ((), at) = self
            .table
            .update(shard, key, |_| Turn::put((), record.take().expect("a fresh key is never busy"), code_expires_at))
            .await?;
        timer.answered_at(at);
        Ok(code)
    }

    async fn consume(&self, tenant: TenantId, code: &str, issued: Vec<IssuedToken>) -> StoreResult<Redemption> {
        let Some((shard, key)) = parse_prefixed(tenant, code, self.table.shard_count()) else {
            return Ok(Redemption::NotFound);
        };
        let mut timer = self.table.timer(shard);
        let t = now();
        let retained_until = t + self.reuse_window;
        // The winner answers only once its redemption is durable; a concurrent redemption
        // waits for that write and then finds the code spent, with the tokens to revoke.
        let (outcome, at) = self
            .table
            .update(shard, key, |entry| {
                let Some(entry) = entry else { return Turn::read(Redemption::NotFound) };
                let record = &entry.value;
                if let Some(previous) = &record.redeemed {
                    return Turn::read(Redemption::AlreadyUsed { client_id: record.grant.client_id.clone(), issued: previous.clone() });
                }
                if record.code_expires_at <= t {
                    return Turn::read(Redemption::Expired);
                }
                let spent = CodeRecord { grant: record.grant.clone(), redeemed: Some(issued.clone()), code_expires_at: record.code_expires_at };
                Turn::put(Redemption::Fresh(record.grant.clone()), spent, entry.expires_at.max(retained_until))
            })
            .await?;
        timer.answered_at(at);
        Ok(outcome)
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
    // The behaviour every backend owes is tested once for both in tests/contract; here, what
    // is particular to the embedded one.
    use super::*;

    #[tokio::test]
    async fn only_a_hash_of_the_code_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::start(crate::db::open(dir.path(), "NORMAL").unwrap());
        let s = EmbeddedCodeStore::new(4, journal.clone(), 600);
        let grant = CodeGrant {
            client_id: "c1".into(),
            redirect_uri: "https://rp.example/cb".into(),
            user_id: "u1".into(),
            scope: "openid".into(),
            nonce: None,
            code_challenge: None,
            auth_time: 1,
            sid: "s".into(),
            acr: None,
            claims: None,
            dpop_jkt: None,
            resources: vec![],
            amr: vec![],
            org: None,
        };
        let code = s.issue(TenantId::DEFAULT, grant, 60).await.unwrap();
        journal.shutdown().await;
        let raw = std::fs::read(crate::db::db_path(dir.path())).unwrap();
        let wal = std::fs::read(dir.path().join("authrim.db-wal")).unwrap_or_default();
        let needle = code.split_once('_').unwrap().1.as_bytes();
        assert!(!raw.windows(needle.len()).any(|w| w == needle));
        assert!(!wal.windows(needle.len()).any(|w| w == needle));
    }
}
