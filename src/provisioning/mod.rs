//! Outbound provisioning (issue 32, slice 3): Authrim as a SCIM *client*, keeping an
//! application's own user store in step with the users assigned to it.
//!
//! A client may have a **target** (`scim_targets`): its SCIM service's base URL, a bearer
//! credential sealed by the vault, and which users it gets (`assigned`: those holding one of
//! its roles, directly or through a group; `all`: every user of the tenant).
//!
//! Every change that can alter what a target should hold writes, **in its own transaction**,
//! an outbox row (the back-channel outbox's table, its leases, retries with backoff, address
//! policy and audit) naming the target and a user (`scim_user`) or a group (`scim_group`): a
//! user saved or deleted (`registry::users::save`, `delete`), a group, membership or role
//! assignment that reaches them (`registry::directory::view`), a resync. The row says *who*,
//! not *what*: its deliverer (`deliver`) reads the user or group as they are at delivery and
//! makes the target agree (`users`, `groups`). So rows can be repeated, coalesced and retried
//! freely: at least once is exactly once in effect. An answer lost after the target acted
//! (a crash, a timeout) is found again by `externalId` (the id here) before anything is
//! created, so nothing is made twice.
//!
//! - A user in scope is created or replaced (a disabled one with `active: false`); one out of
//!   scope (no longer assigned) is deactivated there; one deleted here is deleted there.
//! - A group is sent when it holds one of the client's roles itself (`assigned`) or always
//!   (`all`), with its members (through nesting) that the target has; a group out of scope or
//!   deleted here is deleted there (groups have no `active`).

pub mod deliver;
mod groups;
mod remote;
mod users;

use crate::db::{Sql, StoreResult};
use crate::tenant::TenantId;
use crate::util::now;
use serde::Serialize;

/// The outbox rows of this kind each say "make this target agree about this user".
pub const KIND: &str = "scim_user";
/// … about this group.
pub const GROUP_KIND: &str = "scim_group";

/// Which users a target gets.
pub const SCOPES: &[&str] = &["assigned", "all"];

/// A client's SCIM service, as stored.
#[derive(Debug, Clone, Serialize)]
pub struct Target {
    pub client_id: String,
    /// The SCIM service's base URL (`…/scim/v2`); `/Users` is under it.
    pub endpoint: String,
    #[serde(skip)]
    pub sealed_token: Vec<u8>,
    /// One of `SCOPES`.
    pub users: String,
    pub enabled: bool,
    pub created_at: u64,
    pub updated_at: u64,
    pub last_delivered_at: Option<u64>,
    pub last_error: Option<String>,
    pub last_error_at: Option<u64>,
}

/// Whether the target should hold the user: `all`, or one of its client's roles held,
/// directly or through a group. Memory only (the directory's effective roles).
pub fn user_in_scope(app: &crate::tenant::Issuer, target: &Target, user_id: &str) -> bool {
    target.users == "all" || app.registry().effective(user_id).is_some_and(|e| e.roles.contains_key(&target.client_id))
}

/// Whether the target should hold the group: `all`, or the group holds one of its client's
/// roles itself.
pub fn group_in_scope(app: &crate::tenant::Issuer, target: &Target, group_id: &str) -> bool {
    let group = crate::registry::directory::Principal::Group(group_id.to_string());
    target.users == "all" || app.registry().with_directory(|d| d.holds_role_of(&group, &target.client_id))
}

/// The vault label a target's credential is sealed under: bound to its tenant and client, so
/// that a sealed credential copied to another row does not open.
pub fn seal_label(tenant: TenantId, client_id: &str) -> String {
    format!("scim-target:{}:{client_id}", tenant.0)
}

const SELECT: &str = "SELECT client_id, endpoint, token, users, enabled, created_at, updated_at, last_delivered_at, last_error, last_error_at FROM scim_targets";

pub fn load(sql: &mut dyn Sql, tenant: TenantId, client_id: &str) -> StoreResult<Option<Target>> {
    let row = sql.query_opt(&format!("{SELECT} WHERE tenant_id = ?1 AND client_id = ?2"), crate::params![tenant, client_id])?;
    row.map(|r| {
        Ok(Target {
            client_id: r.text(0)?,
            endpoint: r.text(1)?,
            sealed_token: r.blob(2)?,
            users: r.text(3)?,
            enabled: r.i64(4)? != 0,
            created_at: r.i64(5)?.max(0) as u64,
            updated_at: r.i64(6)?.max(0) as u64,
            last_delivered_at: r.opt_i64(7)?.map(|t| t.max(0) as u64),
            last_error: r.opt_text(8)?,
            last_error_at: r.opt_i64(9)?.map(|t| t.max(0) as u64),
        })
    })
    .transpose()
}

/// Create or change a target; `sealed_token: None` keeps the credential it has.
pub fn save(sql: &mut dyn Sql, tenant: TenantId, client_id: &str, endpoint: &str, sealed_token: Option<&[u8]>, users: &str, enabled: bool) -> StoreResult<()> {
    let t = now() as i64;
    let existing = load(sql, tenant, client_id)?;
    let token = match (sealed_token, &existing) {
        (Some(s), _) => s.to_vec(),
        (None, Some(e)) => e.sealed_token.clone(),
        (None, None) => return Err(crate::db::StoreError::Conflict("a new target needs a credential".into())),
    };
    sql.execute(
        "INSERT INTO scim_targets (tenant_id, client_id, endpoint, token, users, enabled, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)
         ON CONFLICT (tenant_id, client_id) DO UPDATE SET endpoint = excluded.endpoint, token = excluded.token, users = excluded.users,
           enabled = excluded.enabled, updated_at = excluded.updated_at",
        crate::params![tenant, client_id, endpoint, token, users, enabled, t],
    )?;
    Ok(())
}

/// Remove a client's target and what it knew (its rows still queued are dropped by their
/// deliverer: no target, nobody to tell).
pub fn delete(sql: &mut dyn Sql, tenant: TenantId, client_id: &str) -> StoreResult<bool> {
    let n = sql.execute("DELETE FROM scim_targets WHERE tenant_id = ?1 AND client_id = ?2", crate::params![tenant, client_id])?;
    sql.execute("DELETE FROM scim_remote WHERE tenant_id = ?1 AND client_id = ?2", crate::params![tenant, client_id])?;
    Ok(n > 0)
}

/// Record how the last delivery to a target went (what the console and the admin API show).
pub fn record_outcome(sql: &mut dyn Sql, tenant: TenantId, client_id: &str, error: Option<&str>) -> StoreResult<()> {
    let t = now() as i64;
    match error {
        None => sql.execute("UPDATE scim_targets SET last_delivered_at = ?3 WHERE tenant_id = ?1 AND client_id = ?2", crate::params![tenant, client_id, t])?,
        Some(e) => sql.execute(
            "UPDATE scim_targets SET last_error = ?3, last_error_at = ?4 WHERE tenant_id = ?1 AND client_id = ?2",
            crate::params![tenant, client_id, e, t],
        )?,
    };
    Ok(())
}

/// Queue, in the caller's transaction, a row for each enabled target of the tenant and each
/// of `users`. A row already waiting (not being delivered) for the same target and user is
/// enough: the deliverer reads the user when it runs.
pub fn enqueue_users(sql: &mut dyn Sql, tenant: TenantId, users: &[String]) -> StoreResult<()> {
    enqueue(sql, tenant, KIND, users)
}

/// As `enqueue_users`, for groups (a group's name or members changed, a role given to it).
pub fn enqueue_groups(sql: &mut dyn Sql, tenant: TenantId, groups: &[String]) -> StoreResult<()> {
    enqueue(sql, tenant, GROUP_KIND, groups)
}

fn enqueue(sql: &mut dyn Sql, tenant: TenantId, kind: &str, ids: &[String]) -> StoreResult<()> {
    if ids.is_empty() {
        return Ok(());
    }
    let targets: Vec<String> =
        sql.query("SELECT client_id FROM scim_targets WHERE tenant_id = ?1 AND enabled = 1", crate::params![tenant])?.iter().map(|r| r.text(0)).collect::<StoreResult<_>>()?;
    enqueue_for(sql, tenant, &targets, kind, ids)
}

/// Queue rows of `kind` for `ids` on the given targets (a resync: one target, all it holds).
pub fn enqueue_for(sql: &mut dyn Sql, tenant: TenantId, targets: &[String], kind: &str, ids: &[String]) -> StoreResult<()> {
    let t = now();
    for client in targets {
        for id in ids {
            let waiting = sql.query_opt(
                "SELECT 1 FROM logout_outbox WHERE tenant_id = ?1 AND kind = ?2 AND client_id = ?3 AND sub = ?4 AND lease_until = 0",
                crate::params![tenant, kind, client.as_str(), id.as_str()],
            )?;
            if waiting.is_none() {
                crate::logout::backchannel::enqueue_other(sql, tenant, kind, client, id, Vec::new(), t)?;
            }
        }
    }
    Ok(())
}

/// The ids of `kind` (`user` or `group`) a target holds: a resync looks at them too (to
/// deactivate or delete the ones no longer in scope).
pub fn known_remotely(sql: &mut dyn Sql, tenant: TenantId, client_id: &str, kind: &str) -> StoreResult<Vec<String>> {
    sql.query("SELECT local_id FROM scim_remote WHERE tenant_id = ?1 AND client_id = ?2 AND kind = ?3", crate::params![tenant, client_id, kind])?
        .iter()
        .map(|r| r.text(0))
        .collect()
}

/// How many rows wait for a target, and how many users and groups it holds.
pub fn counts(sql: &mut dyn Sql, tenant: TenantId, client_id: &str) -> StoreResult<(i64, i64, i64)> {
    let pending = sql.query(
        "SELECT COUNT(*) FROM logout_outbox WHERE tenant_id = ?1 AND kind IN (?2, ?3) AND client_id = ?4",
        crate::params![tenant, KIND, GROUP_KIND, client_id],
    )?[0]
        .i64(0)?;
    let held = |kind: &str, sql: &mut dyn Sql| -> StoreResult<i64> {
        sql.query("SELECT COUNT(*) FROM scim_remote WHERE tenant_id = ?1 AND client_id = ?2 AND kind = ?3 AND remote_id <> ''", crate::params![tenant, client_id, kind])?[0]
            .i64(0)
    };
    Ok((pending, held("user", sql)?, held("group", sql)?))
}
