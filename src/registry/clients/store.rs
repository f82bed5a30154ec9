//! Clients in the database: the same functions serve the server and the CLI, on either
//! backend. A client is its tenant's: every statement names `tenant_id`.

use super::*;
use crate::tenant::TenantId;

/// Insert or update `client` in its tenant (`Client::tenant`).
pub fn save(sql: &mut dyn Sql, client: &Client) -> StoreResult<()> {
    let t = now() as i64;
    sql.execute(
        "INSERT INTO clients (tenant_id, client_id, secret_hash, metadata, created_at, updated_at, secret_sealed, registration_token_hash)
         VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7)
         ON CONFLICT(tenant_id, client_id) DO UPDATE SET secret_hash = excluded.secret_hash, metadata = excluded.metadata,
         updated_at = excluded.updated_at, secret_sealed = excluded.secret_sealed,
         registration_token_hash = excluded.registration_token_hash",
        crate::params![
            client.tenant.0 as i64,
            client.id(),
            client.secret_hash.map(|h| h.to_vec()),
            serde_json::to_string(&client.meta).expect("metadata serialises"),
            t,
            client.secret_sealed.clone(),
            client.registration_token_hash.map(|h| h.to_vec()),
        ],
    )?;
    crate::registry::record_change(sql, client.tenant, "client", client.id())
}

/// Record a dynamically registered client's first use (`Registry::note_client_used`): written
/// once, never by `save`, so that an update leaves it.
pub fn mark_used(sql: &mut dyn Sql, tenant: TenantId, client_id: &str, t: u64) -> StoreResult<()> {
    sql.execute(
        "UPDATE clients SET used_at = ?1 WHERE tenant_id = ?2 AND client_id = ?3 AND used_at IS NULL",
        crate::params![t as i64, tenant.0 as i64, client_id],
    )?;
    Ok(())
}

/// Delete the dynamically registered clients (of every tenant) never used and registered at
/// or before `registered_by` (`registration_unused_client_ttl`), as `delete` does; returns
/// them. One statement picks and deletes them, so that a client marked used meanwhile stays.
pub fn delete_unused(sql: &mut dyn Sql, registered_by: u64) -> StoreResult<Vec<(TenantId, String)>> {
    let rows = sql.query(
        "DELETE FROM clients WHERE registration_token_hash IS NOT NULL AND used_at IS NULL AND created_at <= ?1 RETURNING tenant_id, client_id",
        crate::params![registered_by as i64],
    )?;
    let gone = rows.iter().map(|r| Ok((r.tenant(0)?, r.text(1)?))).collect::<StoreResult<Vec<_>>>()?;
    for (tenant, id) in &gone {
        sql.execute("DELETE FROM consents WHERE tenant_id = ?1 AND client_id = ?2", crate::params![tenant.0 as i64, id.as_str()])?;
        crate::registry::directory::rows::forget_client(sql, *tenant, id)?;
        crate::registry::record_change(sql, *tenant, "client", id)?;
    }
    Ok(gone)
}

pub fn delete(sql: &mut dyn Sql, tenant: TenantId, client_id: &str) -> StoreResult<bool> {
    let t = tenant.0 as i64;
    let n = sql.execute("DELETE FROM clients WHERE tenant_id = ?1 AND client_id = ?2", crate::params![t, client_id])?;
    sql.execute("DELETE FROM consents WHERE tenant_id = ?1 AND client_id = ?2", crate::params![t, client_id])?;
    crate::registry::directory::rows::forget_client(sql, tenant, client_id)?;
    crate::registry::record_change(sql, tenant, "client", client_id)?;
    Ok(n > 0)
}

const SELECT: &str = "SELECT secret_hash, metadata, secret_sealed, registration_token_hash, used_at, tenant_id FROM clients";

pub fn load_one(sql: &mut dyn Sql, tenant: TenantId, client_id: &str) -> StoreResult<Option<Client>> {
    let row = sql.query_opt(&format!("{SELECT} WHERE tenant_id = ?1 AND client_id = ?2"), crate::params![tenant.0 as i64, client_id])?;
    Ok(row.map(|r| row_to_client(&r)).transpose()?.flatten())
}

/// Every client of every tenant (each knows its tenant).
pub fn load_all(sql: &mut dyn Sql) -> StoreResult<Vec<Client>> {
    let rows = sql.query(&format!("{SELECT} ORDER BY tenant_id, client_id"), &[])?;
    Ok(rows.iter().filter_map(|r| row_to_client(r).ok().flatten()).collect())
}

pub(super) fn row_to_client(r: &Row) -> StoreResult<Option<Client>> {
    let Ok(meta) = serde_json::from_str::<ClientMetadata>(&r.text(1)?) else { return Ok(None) };
    let secret_hash = r.opt_blob(0)?.and_then(|h| <[u8; 32]>::try_from(h.as_slice()).ok());
    let mut client = Client::build(meta, secret_hash, r.opt_blob(2)?);
    client.registration_token_hash = r.opt_blob(3)?.and_then(|h| <[u8; 32]>::try_from(h.as_slice()).ok());
    client.used = r.0.get(4).is_some_and(|v| !matches!(v, crate::db::Value::Null));
    client.tenant = r.tenant(5)?;
    Ok(Some(client))
}
