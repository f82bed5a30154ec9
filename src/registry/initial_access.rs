//! Initial access tokens (RFC 7591 §3): what the operator hands out so that a client may
//! register itself while open registration is off. Stored as SHA-256, with the number of
//! registrations each may still make and an expiry. A token is its tenant's: it registers
//! clients there only.

use crate::db::{Sql, StoreResult};
use crate::tenant::TenantId;
use crate::util::{now, random_token, secret_hash};

/// A new token good for `uses` registrations until `expires_at`; returned once.
pub fn create(sql: &mut dyn Sql, tenant: TenantId, uses: u32, expires_at: u64) -> StoreResult<String> {
    let token = random_token();
    sql.execute(
        "INSERT INTO initial_access_tokens (tenant_id, hash, uses_left, expires_at, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        crate::params![tenant, secret_hash(&token).to_vec(), uses as i64, expires_at as i64, now() as i64],
    )?;
    Ok(token)
}

/// Spend one use of `token`: `true` if it was valid, unexpired and had a use left. Call in the
/// transaction that saves the registered client, so that a failed save spends nothing.
pub fn spend(sql: &mut dyn Sql, tenant: TenantId, token: &str) -> StoreResult<bool> {
    let n = sql.execute(
        "UPDATE initial_access_tokens SET uses_left = uses_left - 1 WHERE tenant_id = ?1 AND hash = ?2 AND uses_left > 0 AND expires_at > ?3",
        crate::params![tenant, secret_hash(token).to_vec(), now() as i64],
    )?;
    Ok(n == 1)
}

/// Whether `token` could be spent now (read only: checked before the request is looked at,
/// so that one without a good token learns nothing about the registration rules).
pub fn usable(sql: &mut dyn Sql, tenant: TenantId, token: &str) -> StoreResult<bool> {
    let row = sql.query_opt(
        "SELECT 1 FROM initial_access_tokens WHERE tenant_id = ?1 AND hash = ?2 AND uses_left > 0 AND expires_at > ?3",
        crate::params![tenant, secret_hash(token).to_vec(), now() as i64],
    )?;
    Ok(row.is_some())
}

/// Drop tokens (of every tenant) that are used up or expired.
pub fn sweep(sql: &mut dyn Sql) -> StoreResult<usize> {
    Ok(sql.execute("DELETE FROM initial_access_tokens WHERE uses_left <= 0 OR expires_at <= ?1", crate::params![now() as i64])? as usize)
}
