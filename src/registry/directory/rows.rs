//! The directory's rows: every write is one transaction with its change record (kinds
//! `group`, `group_member`, `app_role`, `role_assignment`), so that every node's memory
//! follows (`Registry::apply`), and a deletion takes what hangs on it in the same transaction.

use super::{Group, Principal};
use crate::db::{Sql, StoreResult};
use crate::registry::record_change;
use crate::tenant::TenantId;

/// Why a save was refused by the database (the memory check ran first; this is the race).
#[derive(Debug, PartialEq, Eq)]
pub enum Conflict {
    NameTaken,
}

/// Insert or update `group` (its `version` is raised by one; the saved version is returned).
pub fn save_group(sql: &mut dyn Sql, group: &Group) -> StoreResult<Result<u64, Conflict>> {
    let t = group.tenant;
    let key = group.name_key();
    let taken = sql.query_opt("SELECT id FROM user_groups WHERE tenant_id = ?1 AND name_key = ?2 AND id <> ?3", crate::params![t, &key, &group.id])?;
    if taken.is_some() {
        return Ok(Err(Conflict::NameTaken));
    }
    let version = group.version + 1;
    sql.execute(
        "INSERT INTO user_groups (tenant_id, id, display_name, name_key, external_id, created_at, version) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT(tenant_id, id) DO UPDATE SET display_name = excluded.display_name, name_key = excluded.name_key,
         external_id = excluded.external_id, version = excluded.version",
        crate::params![t, &group.id, &group.display_name, &key, group.external_id.as_deref(), group.created_at as i64, version as i64],
    )?;
    record_change(sql, t, "group", &group.id)?;
    Ok(Ok(version))
}

/// Save `group` and make `adds` members and `removes` not, in the caller's transaction (one
/// change); the group's version as saved.
pub fn save_group_members(sql: &mut dyn Sql, group: &Group, adds: &[Principal], removes: &[Principal]) -> StoreResult<Result<u64, Conflict>> {
    if let Err(c) = save_group(sql, group)? {
        return Ok(Err(c));
    }
    for p in adds {
        set_member(sql, group.tenant, &group.id, p, true)?;
    }
    for p in removes {
        set_member(sql, group.tenant, &group.id, p, false)?;
    }
    let v = sql.query_opt("SELECT version FROM user_groups WHERE tenant_id = ?1 AND id = ?2", crate::params![group.tenant, &group.id])?;
    Ok(Ok(v.map(|r| r.i64(0)).transpose()?.unwrap_or(0).max(0) as u64))
}

/// Delete a group with its memberships (as container and as member) and role assignments.
pub fn delete_group(sql: &mut dyn Sql, tenant: TenantId, id: &str) -> StoreResult<bool> {
    let n = sql.execute("DELETE FROM user_groups WHERE tenant_id = ?1 AND id = ?2", crate::params![tenant, id])?;
    sql.execute("DELETE FROM group_members WHERE tenant_id = ?1 AND group_id = ?2", crate::params![tenant, id])?;
    forget_principal(sql, tenant, &Principal::Group(id.to_string()))?;
    record_change(sql, tenant, "group", id)?;
    Ok(n > 0)
}

/// `p`'s memberships and assignments go (a deleted user or group); the caller records the
/// change of `p` itself, which every node reads as "gone, with all it was in".
pub fn forget_principal(sql: &mut dyn Sql, tenant: TenantId, p: &Principal) -> StoreResult<()> {
    sql.execute("DELETE FROM group_members WHERE tenant_id = ?1 AND member_kind = ?2 AND member_id = ?3", crate::params![tenant, p.kind(), p.id()])?;
    sql.execute("DELETE FROM role_assignments WHERE tenant_id = ?1 AND principal_kind = ?2 AND principal_id = ?3", crate::params![tenant, p.kind(), p.id()])?;
    Ok(())
}

/// A deleted client's roles and their assignments go with it, as does its provisioning
/// target (the users it made there stay there: the application is no longer ours to tell).
pub fn forget_client(sql: &mut dyn Sql, tenant: TenantId, client: &str) -> StoreResult<()> {
    sql.execute("DELETE FROM app_roles WHERE tenant_id = ?1 AND client_id = ?2", crate::params![tenant, client])?;
    sql.execute("DELETE FROM role_assignments WHERE tenant_id = ?1 AND client_id = ?2", crate::params![tenant, client])?;
    crate::provisioning::delete(sql, tenant, client)?;
    Ok(())
}

/// Make `p` a member of `group` or not; the group's version is raised (its SCIM ETag
/// covers its members). Returns whether anything changed. A membership a directory's group
/// mapping made becomes the operator's (`local`): the mapping leaves it alone from then on.
pub fn set_member(sql: &mut dyn Sql, tenant: TenantId, group: &str, p: &Principal, present: bool) -> StoreResult<bool> {
    let n = match present {
        true => sql.execute(
            "INSERT INTO group_members (tenant_id, group_id, member_kind, member_id, source) VALUES (?1, ?2, ?3, ?4, 'local')
             ON CONFLICT (tenant_id, group_id, member_kind, member_id) DO UPDATE SET source = 'local' WHERE group_members.source <> 'local'",
            crate::params![tenant, group, p.kind(), p.id()],
        )?,
        false => sql.execute(
            "DELETE FROM group_members WHERE tenant_id = ?1 AND group_id = ?2 AND member_kind = ?3 AND member_id = ?4",
            crate::params![tenant, group, p.kind(), p.id()],
        )?,
    };
    member_changed(sql, tenant, group, p, n)
}

/// After `n` rows of `group`'s members changed: its version raised and the change recorded.
fn member_changed(sql: &mut dyn Sql, tenant: TenantId, group: &str, p: &Principal, n: u64) -> StoreResult<bool> {
    if n > 0 {
        sql.execute("UPDATE user_groups SET version = version + 1 WHERE tenant_id = ?1 AND id = ?2", crate::params![tenant, group])?;
        record_change(sql, tenant, "group", group)?;
        record_change(sql, tenant, "group_member", &member_key(group, p))?;
    }
    Ok(n > 0)
}

/// Whose each membership of `group` is that is not an operator's (`local`): `ldap:<id>` for
/// a directory's mapping, by the member's key (`Principal::key`).
pub fn member_sources(sql: &mut dyn Sql, tenant: TenantId, group: &str) -> StoreResult<std::collections::HashMap<String, String>> {
    sql.query(
        "SELECT member_kind, member_id, source FROM group_members WHERE tenant_id = ?1 AND group_id = ?2 AND source <> 'local'",
        crate::params![tenant, group],
    )?
    .iter()
    .map(|r| Ok((Principal::from_parts(&r.text(0)?, &r.text(1)?).map(|p| p.key()).unwrap_or_default(), r.text(2)?)))
    .collect()
}

/// The groups `user` is in by `source`'s mapping (`ldap:<directory>`).
pub fn mapped_groups(sql: &mut dyn Sql, tenant: TenantId, user: &str, source: &str) -> StoreResult<Vec<String>> {
    let rows = sql.query(
        "SELECT group_id FROM group_members WHERE tenant_id = ?1 AND member_kind = 'user' AND member_id = ?2 AND source = ?3",
        crate::params![tenant, user, source],
    )?;
    rows.iter().map(|r| r.text(0)).collect()
}

/// `source`'s mapping makes `user` a member of `group`, or not: a membership that is someone
/// else's (an operator's) is neither taken over nor removed. Whether anything changed.
pub fn set_mapped_member(sql: &mut dyn Sql, tenant: TenantId, group: &str, user: &str, source: &str, present: bool) -> StoreResult<bool> {
    let n = match present {
        true => sql.execute(
            "INSERT INTO group_members (tenant_id, group_id, member_kind, member_id, source) VALUES (?1, ?2, 'user', ?3, ?4) ON CONFLICT DO NOTHING",
            crate::params![tenant, group, user, source],
        )?,
        false => sql.execute(
            "DELETE FROM group_members WHERE tenant_id = ?1 AND group_id = ?2 AND member_kind = 'user' AND member_id = ?3 AND source = ?4",
            crate::params![tenant, group, user, source],
        )?,
    };
    member_changed(sql, tenant, group, &Principal::User(user.to_string()), n)
}

/// Define `role` on `client` (or change its description).
pub fn put_role(sql: &mut dyn Sql, tenant: TenantId, client: &str, role: &str, description: &str) -> StoreResult<()> {
    sql.execute(
        "INSERT INTO app_roles (tenant_id, client_id, role, description) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT(tenant_id, client_id, role) DO UPDATE SET description = excluded.description",
        crate::params![tenant, client, role, description],
    )?;
    record_change(sql, tenant, "app_role", &role_key(client, role))
}

/// Remove `role` of `client` with its assignments.
pub fn delete_role(sql: &mut dyn Sql, tenant: TenantId, client: &str, role: &str) -> StoreResult<bool> {
    let n = sql.execute("DELETE FROM app_roles WHERE tenant_id = ?1 AND client_id = ?2 AND role = ?3", crate::params![tenant, client, role])?;
    sql.execute("DELETE FROM role_assignments WHERE tenant_id = ?1 AND client_id = ?2 AND role = ?3", crate::params![tenant, client, role])?;
    record_change(sql, tenant, "app_role", &role_key(client, role))?;
    Ok(n > 0)
}

/// Assign `role` of `client` to `p`, or take it away. Returns whether anything changed.
pub fn set_assignment(sql: &mut dyn Sql, tenant: TenantId, client: &str, role: &str, p: &Principal, present: bool) -> StoreResult<bool> {
    let n = match present {
        true => sql.execute(
            "INSERT INTO role_assignments (tenant_id, client_id, role, principal_kind, principal_id) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING",
            crate::params![tenant, client, role, p.kind(), p.id()],
        )?,
        false => sql.execute(
            "DELETE FROM role_assignments WHERE tenant_id = ?1 AND client_id = ?2 AND role = ?3 AND principal_kind = ?4 AND principal_id = ?5",
            crate::params![tenant, client, role, p.kind(), p.id()],
        )?,
    };
    if n > 0 {
        record_change(sql, tenant, "role_assignment", &assignment_key(client, role, p))?;
    }
    Ok(n > 0)
}

// Change-log keys: the parts joined by U+001F, which no id, role or client id holds.

pub fn member_key(group: &str, p: &Principal) -> String {
    format!("{group}\u{1f}{}", p.key())
}

pub fn role_key(client: &str, role: &str) -> String {
    format!("{client}\u{1f}{role}")
}

pub fn assignment_key(client: &str, role: &str, p: &Principal) -> String {
    format!("{client}\u{1f}{role}\u{1f}{}", p.key())
}

/// The current state of a changed directory entry, read for the change log.
pub enum Change {
    Group(String, Option<Group>),
    Member(String, Principal, bool),
    Role(String, String, Option<String>),
    Assignment(String, String, Principal, bool),
}

pub fn read_change(sql: &mut dyn Sql, tenant: TenantId, kind: &str, key: &str) -> StoreResult<Option<Change>> {
    let parts: Vec<&str> = key.split('\u{1f}').collect();
    Ok(match (kind, parts.as_slice()) {
        ("group", [id]) => Some(Change::Group(id.to_string(), load_group(sql, tenant, id)?)),
        ("group_member", [group, p]) => {
            let Some(p) = Principal::from_key(p) else { return Ok(None) };
            let row = sql.query_opt(
                "SELECT 1 FROM group_members WHERE tenant_id = ?1 AND group_id = ?2 AND member_kind = ?3 AND member_id = ?4",
                crate::params![tenant, *group, p.kind(), p.id()],
            )?;
            Some(Change::Member(group.to_string(), p, row.is_some()))
        }
        ("app_role", [client, role]) => {
            let row = sql.query_opt("SELECT description FROM app_roles WHERE tenant_id = ?1 AND client_id = ?2 AND role = ?3", crate::params![tenant, *client, *role])?;
            Some(Change::Role(client.to_string(), role.to_string(), row.map(|r| r.text(0)).transpose()?))
        }
        ("role_assignment", [client, role, p]) => {
            let Some(p) = Principal::from_key(p) else { return Ok(None) };
            let row = sql.query_opt(
                "SELECT 1 FROM role_assignments WHERE tenant_id = ?1 AND client_id = ?2 AND role = ?3 AND principal_kind = ?4 AND principal_id = ?5",
                crate::params![tenant, *client, *role, p.kind(), p.id()],
            )?;
            Some(Change::Assignment(client.to_string(), role.to_string(), p, row.is_some()))
        }
        _ => None,
    })
}

const SELECT: &str = "SELECT tenant_id, id, display_name, external_id, created_at, version FROM user_groups";

fn row_to_group(r: &crate::db::sql::Row) -> StoreResult<Group> {
    Ok(Group {
        tenant: r.tenant(0)?,
        id: r.text(1)?,
        display_name: r.text(2)?,
        external_id: r.opt_text(3)?,
        created_at: r.i64(4)?.max(0) as u64,
        version: r.i64(5)?.max(0) as u64,
    })
}

pub fn load_group(sql: &mut dyn Sql, tenant: TenantId, id: &str) -> StoreResult<Option<Group>> {
    sql.query_opt(&format!("{SELECT} WHERE tenant_id = ?1 AND id = ?2"), crate::params![tenant, id])?.map(|r| row_to_group(&r)).transpose()
}

/// Everything of every tenant's directories (the registry's snapshot).
#[derive(Default)]
pub struct All {
    pub groups: Vec<Group>,
    pub members: Vec<(TenantId, String, Principal)>,
    pub roles: Vec<(TenantId, String, String, String)>,
    pub assignments: Vec<(TenantId, String, String, Principal)>,
}

pub fn load_all(sql: &mut dyn Sql) -> StoreResult<All> {
    load(sql, None)
}

/// One tenant's directory (the CLI checks a change against it, in the change's transaction).
pub fn load_tenant(sql: &mut dyn Sql, tenant: TenantId) -> StoreResult<All> {
    load(sql, Some(tenant))
}

fn load(sql: &mut dyn Sql, tenant: Option<TenantId>) -> StoreResult<All> {
    let (cond, params) = match tenant {
        Some(t) => (" WHERE tenant_id = ?1", vec![crate::db::Value::from(t)]),
        None => ("", Vec::new()),
    };
    let groups = sql.query(&format!("{SELECT}{cond}"), &params)?.iter().map(row_to_group).collect::<StoreResult<_>>()?;
    let mut members = Vec::new();
    for r in sql.query(&format!("SELECT tenant_id, group_id, member_kind, member_id FROM group_members{cond}"), &params)?.iter() {
        if let Some(p) = Principal::from_parts(&r.text(2)?, &r.text(3)?) {
            members.push((r.tenant(0)?, r.text(1)?, p));
        }
    }
    let roles = sql
        .query(&format!("SELECT tenant_id, client_id, role, description FROM app_roles{cond}"), &params)?
        .iter()
        .map(|r| Ok((r.tenant(0)?, r.text(1)?, r.text(2)?, r.text(3)?)))
        .collect::<StoreResult<_>>()?;
    let mut assignments = Vec::new();
    for r in sql.query(&format!("SELECT tenant_id, client_id, role, principal_kind, principal_id FROM role_assignments{cond}"), &params)?.iter() {
        if let Some(p) = Principal::from_parts(&r.text(3)?, &r.text(4)?) {
            assignments.push((r.tenant(0)?, r.text(1)?, r.text(2)?, p));
        }
    }
    Ok(All { groups, members, roles, assignments })
}
