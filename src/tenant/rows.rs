//! The `tenants` table: the tenants a deployment serves besides the default (which is the
//! deployment's settings, never a row), their hosts, state and setting overrides.
//!
//! Ids and slugs are never given twice: a deleted tenant keeps its row in state `deleted`, so
//! that a stale token, cookie or bookmark of a deleted tenant can never name a newer one (its
//! data is keyed by the id, its issuer URL is made of the slug).

use super::TenantId;
use crate::db::{Sql, StoreError, StoreResult};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Where a tenant is in its life. Only `Active` tenants are served; `Disabled` ones answer 404
/// and keep everything; `Deleting` ones are having their rows removed (`purge_batch`), which
/// ends in `Deleted`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Active,
    Disabled,
    Deleting,
    Deleted,
}

impl State {
    fn as_str(self) -> &'static str {
        match self {
            State::Active => "active",
            State::Disabled => "disabled",
            State::Deleting => "deleting",
            State::Deleted => "deleted",
        }
    }

    fn parse(s: &str) -> StoreResult<Self> {
        match s {
            "active" => Ok(State::Active),
            "disabled" => Ok(State::Disabled),
            "deleting" => Ok(State::Deleting),
            "deleted" => Ok(State::Deleted),
            other => Err(StoreError::Database(format!("unknown tenant state {other:?}"))),
        }
    }
}

pub use super::overrides::Overrides;

/// One tenant as stored.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct TenantRow {
    #[schema(value_type = u32)]
    pub id: TenantId,
    pub slug: String,
    /// Host names it is served at (its issuer is then `https://{first host}`); empty for a
    /// tenant served under the deployment's issuer at `/t/{slug}`.
    pub hosts: Vec<String>,
    pub state: State,
    pub settings: Overrides,
    pub created_at: u64,
    pub updated_at: u64,
}

/// The longest slug (a DNS label's length, so a slug can also name a host).
const MAX_SLUG: usize = 63;

/// `[a-z0-9][a-z0-9-]{0,62}`, and not `default` (the default tenant's name).
pub fn validate_slug(slug: &str) -> Result<(), String> {
    let ok = !slug.is_empty()
        && slug.len() <= MAX_SLUG
        && slug.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !slug.starts_with('-');
    match ok {
        false => Err("a tenant's slug is 1 to 63 lower-case letters, digits and dashes, not starting with a dash".into()),
        true if slug == "default" => Err("\"default\" is the default tenant's slug".into()),
        true => Ok(()),
    }
}

/// A host as a `Host` header names it: a lower-case DNS name, optionally with a port.
pub fn validate_host(host: &str) -> Result<(), String> {
    let (name, port) = match host.rsplit_once(':') {
        Some((n, p)) => (n, Some(p)),
        None => (host, None),
    };
    let name_ok = !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|l| !l.is_empty() && l.len() <= 63 && !l.starts_with('-') && l.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'));
    let port_ok = port.is_none_or(|p| p.parse::<u16>().is_ok_and(|n| n > 0));
    match name_ok && port_ok {
        true => Ok(()),
        false => Err(format!("{host:?} is not a lower-case host name (with an optional port)")),
    }
}

fn read(sql: &mut dyn Sql, filter: &str, params: &[crate::db::Value]) -> StoreResult<Vec<TenantRow>> {
    let rows = sql.query(&format!("SELECT tenant_id, slug, state, settings, created_at, updated_at FROM tenants {filter} ORDER BY tenant_id"), params)?;
    // Every host of those tenants in one query, not one query per tenant (1,000 at the start
    // of a node with 1,000 tenants).
    let mut hosts: HashMap<TenantId, Vec<String>> = HashMap::new();
    for h in sql.query(&format!("SELECT tenant_id, host FROM tenant_hosts WHERE tenant_id IN (SELECT tenant_id FROM tenants {filter}) ORDER BY host"), params)? {
        hosts.entry(h.tenant(0)?).or_default().push(h.text(1)?);
    }
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let id = r.tenant(0)?;
        out.push(TenantRow {
            id,
            slug: r.text(1)?,
            hosts: hosts.remove(&id).unwrap_or_default(),
            state: State::parse(&r.text(2)?)?,
            settings: serde_json::from_str(&r.text(3)?).map_err(|e| StoreError::Database(format!("tenant settings: {e}")))?,
            created_at: r.i64(4)? as u64,
            updated_at: r.i64(5)? as u64,
        });
    }
    Ok(out)
}

/// Every tenant not deleted.
pub fn load_all(sql: &mut dyn Sql) -> StoreResult<Vec<TenantRow>> {
    read(sql, "WHERE state <> 'deleted'", &[])
}

pub fn load_one(sql: &mut dyn Sql, id: TenantId) -> StoreResult<Option<TenantRow>> {
    Ok(read(sql, "WHERE tenant_id = ?1", crate::params![id])?.pop())
}

/// A tenant by slug, deleted ones included (their slug stays taken).
pub fn find(sql: &mut dyn Sql, slug: &str) -> StoreResult<Option<TenantRow>> {
    Ok(read(sql, "WHERE slug = ?1", crate::params![slug])?.pop())
}

fn check_hosts_free(sql: &mut dyn Sql, id: TenantId, hosts: &[String]) -> StoreResult<()> {
    for h in hosts {
        if let Some(r) = sql.query_opt("SELECT tenant_id FROM tenant_hosts WHERE host = ?1", crate::params![h.as_str()])? {
            if r.tenant(0)? != id {
                return Err(StoreError::Conflict(format!("the host {h:?} is another tenant's")));
            }
        }
    }
    Ok(())
}

fn put_hosts(sql: &mut dyn Sql, id: TenantId, hosts: &[String]) -> StoreResult<()> {
    check_hosts_free(sql, id, hosts)?;
    sql.execute("DELETE FROM tenant_hosts WHERE tenant_id = ?1", crate::params![id])?;
    for h in hosts {
        sql.execute("INSERT INTO tenant_hosts (host, tenant_id) VALUES (?1, ?2)", crate::params![h.as_str(), id])?;
    }
    Ok(())
}

/// Create a tenant, active, with the next id never given. Refused with `Conflict` when the
/// slug was ever taken or a host is another tenant's. Announced like a registry change, so
/// that every node (and a server beside the CLI) builds it.
pub fn create(sql: &mut dyn Sql, slug: &str, hosts: &[String], settings: &Overrides) -> StoreResult<TenantRow> {
    if find(sql, slug)?.is_some() {
        return Err(StoreError::Conflict(format!("the slug {slug:?} is taken (slugs of deleted tenants stay taken)")));
    }
    let next = sql.query("SELECT COALESCE(MAX(tenant_id), 0) + 1 FROM tenants", &[])?[0].i64(0)?;
    let id = TenantId(u32::try_from(next).map_err(|_| StoreError::Database("tenant ids exhausted".into()))?);
    check_hosts_free(sql, id, hosts)?;
    let now = crate::util::now() as i64;
    let json = settings.stored_json();
    sql.execute(
        "INSERT INTO tenants (tenant_id, slug, state, settings, created_at, updated_at) VALUES (?1, ?2, 'active', ?3, ?4, ?4)",
        crate::params![id, slug, json.as_str(), now],
    )?;
    put_hosts(sql, id, hosts)?;
    crate::registry::record_change(sql, id, "tenant", slug)?;
    load_one(sql, id)?.ok_or_else(|| StoreError::Database("the new tenant vanished".into()))
}

/// What a change sets; `None` leaves it.
#[derive(Debug, Default)]
pub struct Change {
    pub state: Option<State>,
    pub hosts: Option<Vec<String>>,
    pub settings: Option<Overrides>,
    /// The settings `settings` was merged from (a PATCH reads, merges, then writes): the
    /// write is refused with `STALE` if they changed meanwhile, so that two administrators'
    /// simultaneous changes both land (the caller merges again) instead of one overwriting
    /// the other.
    pub based_on: Option<Overrides>,
}

/// The conflict `update` answers when `Change::based_on` is no longer the stored settings.
pub const STALE: &str = "the tenant's settings changed meanwhile";

/// Change a tenant (not one being deleted: deletion is not undone). `None` when there is no
/// such tenant.
pub fn update(sql: &mut dyn Sql, id: TenantId, change: Change) -> StoreResult<Option<TenantRow>> {
    // The row is locked before it is read (a write that changes nothing): on PostgreSQL a
    // second change of this tenant waits here until the first commits, then reads what it
    // wrote, so `based_on` is compared with the settings as they are (SQLite has one writer).
    sql.execute("UPDATE tenants SET updated_at = updated_at WHERE tenant_id = ?1", crate::params![id])?;
    let Some(row) = load_one(sql, id)? else { return Ok(None) };
    if matches!(row.state, State::Deleting | State::Deleted) {
        return Err(StoreError::Conflict(format!("the tenant {:?} is being deleted", row.slug)));
    }
    if change.based_on.as_ref().is_some_and(|b| *b != row.settings) {
        return Err(StoreError::Conflict(STALE.into()));
    }
    if let Some(hosts) = &change.hosts {
        put_hosts(sql, id, hosts)?;
    }
    let state = change.state.unwrap_or(row.state);
    let settings = change.settings.unwrap_or(row.settings);
    // Sealed secrets stored as they are: an upstream's secret is never in the row in clear.
    let json = settings.stored_json();
    sql.execute(
        "UPDATE tenants SET state = ?2, settings = ?3, updated_at = ?4 WHERE tenant_id = ?1",
        crate::params![id, state.as_str(), json.as_str(), crate::util::now() as i64],
    )?;
    crate::registry::record_change(sql, id, "tenant", &row.slug)?;
    load_one(sql, id)
}

/// Start deleting a disabled tenant: from here its rows go in batches (`purge_batch`), which a
/// restart resumes. Refused unless the tenant is disabled first (deletion is two steps).
pub fn start_deletion(sql: &mut dyn Sql, id: TenantId) -> StoreResult<Option<TenantRow>> {
    let Some(row) = load_one(sql, id)? else { return Ok(None) };
    match row.state {
        State::Disabled => {}
        State::Deleting | State::Deleted => return Ok(Some(row)),
        State::Active => return Err(StoreError::Conflict(format!("disable the tenant {:?} before deleting it", row.slug))),
    }
    sql.execute("UPDATE tenants SET state = 'deleting', updated_at = ?2 WHERE tenant_id = ?1", crate::params![id, crate::util::now() as i64])?;
    crate::registry::record_change(sql, id, "tenant", &row.slug)?;
    load_one(sql, id)
}

/// Every table that holds a tenant's rows by `tenant_id` (the sharded stores' rows are keyed by
/// a hash that frames the tenant: they cannot be found by tenant, are unreachable once the
/// tenant is gone, and expire). A test checks this against the schema.
pub const TENANT_TABLES: &[&str] = &[
    "clients",
    "users",
    "login_names",
    "consents",
    "signing_keys",
    "initial_access_tokens",
    "user_factors",
    "recovery_codes",
    "ciba_user_codes",
    "linked_identities",
    "password_resets",
    "pending_signups",
    "email_verifications",
    "registry_changes",
    "audit_events",
    "logout_outbox",
    "mail_outbox",
    "ciba_requests",
    "admin_credentials",
    "organizations",
    "organization_domains",
    "organization_members",
    "organization_invitations",
    "user_groups",
    "group_members",
    "app_roles",
    "role_assignments",
    "scim_targets",
    "scim_remote",
];

/// `TENANT_TABLES` as `dialect` has them: the registry's change log is SQLite's (PostgreSQL
/// nodes are told by notifications).
pub fn tenant_tables(dialect: crate::db::Dialect) -> impl Iterator<Item = &'static str> {
    TENANT_TABLES.iter().copied().filter(move |t| dialect == crate::db::Dialect::Sqlite || *t != "registry_changes")
}

/// Remove up to `batch` rows of each table of a tenant being deleted (each call one short
/// transaction, so that deleting a large tenant does not hold the writer). Returns how many
/// went; at zero the tenant is `deleted`, its hosts free, its id and slug kept.
pub fn purge_batch(sql: &mut dyn Sql, id: TenantId, batch: i64) -> StoreResult<usize> {
    let mut removed = 0;
    for table in tenant_tables(sql.dialect()) {
        // The registry's change log keeps the tenant's own announcements, which tell the
        // other processes that it is gone.
        let keep = if table == "registry_changes" { " AND kind <> 'tenant'" } else { "" };
        let ctid = match sql.dialect() {
            crate::db::Dialect::Sqlite => "rowid",
            crate::db::Dialect::Postgres => "ctid",
        };
        removed += sql.execute(
            &format!("DELETE FROM {table} WHERE {ctid} IN (SELECT {ctid} FROM {table} WHERE tenant_id = ?1{keep} LIMIT ?2)"),
            crate::params![id, batch],
        )?;
    }
    if removed == 0 {
        sql.execute("DELETE FROM tenant_hosts WHERE tenant_id = ?1", crate::params![id])?;
        sql.execute("UPDATE tenants SET state = 'deleted', updated_at = ?2 WHERE tenant_id = ?1", crate::params![id, crate::util::now() as i64])?;
        // Announced too: a process that missed the `deleting` one (the CLI deletes a small
        // tenant within a poll) still drops the tenant from memory.
        crate::registry::record_change(sql, id, "tenant", "")?;
    }
    Ok(removed as usize)
}

/// Tenants whose deletion is under way (resumed at start and by the housekeeping).
pub fn deleting(sql: &mut dyn Sql) -> StoreResult<Vec<TenantId>> {
    sql.query("SELECT tenant_id FROM tenants WHERE state = 'deleting'", &[])?.iter().map(|r| r.tenant(0)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_and_hosts_are_checked() {
        for ok in ["acme", "a", "acme-2", "0day", &"a".repeat(63)] {
            assert!(validate_slug(ok).is_ok(), "{ok}");
        }
        for bad in ["", "-acme", "Acme", "acme_x", "ac/me", "default", &"a".repeat(64), "é"] {
            assert!(validate_slug(bad).is_err(), "{bad}");
        }
        for ok in ["auth.acme.example", "localhost:8080", "a-b.example"] {
            assert!(validate_host(ok).is_ok(), "{ok}");
        }
        for bad in ["", "Auth.acme.example", "a..b", "-a.example", "a.example:0", "a.example:99999", "a b", "a.example/x"] {
            assert!(validate_host(bad).is_err(), "{bad}");
        }
    }
}
