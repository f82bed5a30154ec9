//! `authrim [--tenant SLUG] group …` and `… role …`: a tenant's groups, their members, the
//! roles a client defines and their assignments (issue 32), changed in the database as the
//! admin API changes them. Each change is checked against the tenant's directory as read in
//! its own transaction (cycles, the `directory_*` bounds) and audited, `by`: `cli`; running
//! servers follow through the change log.

use super::{print_json, At};
use crate::db::{Sql, StoreResult};
use crate::registry::directory::{memory::Directory, rows, Group, GroupInput, Limits, Principal, Refusal};
use crate::tenant::TenantId;
use clap::{Args, Subcommand};
use serde_json::json;

#[derive(Subcommand)]
pub enum GroupCommand {
    /// The tenant's groups.
    List,
    /// Create a group.
    Create {
        name: String,
        #[arg(long)]
        external_id: Option<String>,
    },
    /// A group (by id or name) with its direct members.
    Show { group: String },
    /// Rename a group.
    Rename { group: String, name: String },
    /// Delete a group with its memberships and role assignments.
    Delete { group: String },
    /// Add a user or a group (nesting) to a group.
    Add {
        /// Its own arg id: `Who` has a `--group` too (clap refuses two args with one id).
        #[arg(id = "target_group", value_name = "GROUP")]
        group: String,
        #[command(flatten)]
        who: Who,
    },
    /// Take a user or a group out of a group.
    Remove {
        #[arg(id = "target_group", value_name = "GROUP")]
        group: String,
        #[command(flatten)]
        who: Who,
    },
}

#[derive(Subcommand)]
pub enum RoleCommand {
    /// The roles a client defines, with who holds each directly.
    List { client_id: String },
    /// Define a role on a client (or change its description).
    Define {
        client_id: String,
        role: String,
        #[arg(long, default_value = "")]
        description: String,
    },
    /// Remove a role with its assignments.
    Remove { client_id: String, role: String },
    /// Assign a role to a user or a group.
    Assign {
        client_id: String,
        role: String,
        #[command(flatten)]
        who: Who,
    },
    /// Take a role away from a user or a group.
    Unassign {
        client_id: String,
        role: String,
        #[command(flatten)]
        who: Who,
    },
}

/// A user (id, username or e-mail) or a group (id or name); exactly one.
#[derive(Args)]
#[group(required = true, multiple = false)]
pub struct Who {
    #[arg(long)]
    user: Option<String>,
    #[arg(long)]
    group: Option<String>,
}

/// The tenant's directory as the database holds it now.
fn directory(sql: &mut dyn Sql, tenant: TenantId) -> StoreResult<Directory> {
    Ok(Directory::build(rows::load_tenant(sql, tenant)?).remove(&tenant).unwrap_or_default())
}

fn group_id(d: &Directory, group: &str) -> Result<String, Refusal> {
    d.group(group).or_else(|| d.group_by_name(group)).map(|g| g.id.clone()).ok_or(Refusal::NoSuchGroup)
}

/// `who` as a principal of the tenant (a user must exist; a group is checked by the caller).
fn principal(sql: &mut dyn Sql, d: &Directory, tenant: TenantId, who: &Who) -> StoreResult<Result<Principal, String>> {
    Ok(match (&who.user, &who.group) {
        (Some(u), _) => match crate::registry::users::find(sql, tenant, u)? {
            Some(user) => Ok(Principal::User(user.id)),
            None => Err(format!("no user {u:?}")),
        },
        (None, Some(g)) => group_id(d, g).map(Principal::Group).map_err(|e| e.to_string()),
        (None, None) => Err("--user or --group".into()),
    })
}

pub(super) async fn run_group(db: &crate::db::Database, limits: Limits, cmd: GroupCommand, at: &At) -> anyhow::Result<()> {
    let tenant = at.tenant;
    let outcome: Result<serde_json::Value, String> = db
        .write(move |sql| {
            let d = directory(sql, tenant)?;
            let audit = |sql: &mut dyn Sql, event: &str, detail: serde_json::Value| {
                crate::audit::insert(sql, &[crate::audit::AuditEvent::new(event).tenant(tenant).detail(detail)])
            };
            Ok(match cmd {
                GroupCommand::List => Ok(json!(d.groups.values().map(|g| g.to_json()).collect::<Vec<_>>())),
                GroupCommand::Show { group } => match group_id(&d, &group) {
                    Ok(id) => {
                        let mut v = d.group(&id).map(|g| g.to_json()).unwrap_or_default();
                        v["members"] = d.members(&id).map(|p| json!({"type": p.kind(), "id": p.id()})).collect::<Vec<_>>().into();
                        Ok(v)
                    }
                    Err(e) => Err(e.to_string()),
                },
                GroupCommand::Create { name, external_id } => match Group::new(tenant, GroupInput { display_name: Some(name), external_id }) {
                    Err(e) => Err(e),
                    Ok(_) if d.group_count() >= limits.max_groups => Err(format!("a tenant has at most {} groups (directory_max_groups)", limits.max_groups)),
                    Ok(g) => save(sql, &d, g, &audit, "group_created")?,
                },
                GroupCommand::Rename { group, name } => match group_id(&d, &group) {
                    Err(e) => Err(e.to_string()),
                    Ok(id) => {
                        let mut g = (**d.group(&id).expect("found by id")).clone();
                        match g.apply(GroupInput { display_name: Some(name), external_id: None }) {
                            Err(e) => Err(e),
                            Ok(()) => save(sql, &d, g, &audit, "group_changed")?,
                        }
                    }
                },
                GroupCommand::Delete { group } => match group_id(&d, &group) {
                    Err(e) => Err(e.to_string()),
                    Ok(id) => {
                        rows::delete_group(sql, tenant, &id)?;
                        audit(sql, "group_deleted", json!({"by": "cli", "group_id": id}))?;
                        Ok(json!({"deleted": id}))
                    }
                },
                GroupCommand::Add { group, who } => member(sql, &d, tenant, &limits, &group, &who, true, &audit)?,
                GroupCommand::Remove { group, who } => member(sql, &d, tenant, &limits, &group, &who, false, &audit)?,
            })
        })
        .await?;
    print_json(outcome.map_err(anyhow::Error::msg)?);
    Ok(())
}

type Audit<'a> = dyn Fn(&mut dyn Sql, &str, serde_json::Value) -> StoreResult<()> + 'a;

fn save(sql: &mut dyn Sql, d: &Directory, g: Group, audit: &Audit<'_>, event: &str) -> StoreResult<Result<serde_json::Value, String>> {
    if d.group_by_name(&g.display_name).is_some_and(|other| other.id != g.id) {
        return Ok(Err(Refusal::NameTaken.to_string()));
    }
    match rows::save_group(sql, &g)? {
        Err(_) => Ok(Err(Refusal::NameTaken.to_string())),
        Ok(version) => {
            audit(sql, event, json!({"by": "cli", "group_id": g.id, "display_name": g.display_name}))?;
            Ok(Ok(Group { version, ..g }.to_json()))
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn member(sql: &mut dyn Sql, d: &Directory, tenant: TenantId, limits: &Limits, group: &str, who: &Who, present: bool, audit: &Audit<'_>) -> StoreResult<Result<serde_json::Value, String>> {
    let id = match group_id(d, group) {
        Ok(id) => id,
        Err(e) => return Ok(Err(e.to_string())),
    };
    let p = match principal(sql, d, tenant, who)? {
        Ok(p) => p,
        Err(e) => return Ok(Err(e)),
    };
    if present {
        if let Err(e) = d.check_member(&id, &p, limits) {
            return Ok(Err(e.to_string()));
        }
    }
    // Adding twice is no error (as the admin API's PUT); removing what is not there is.
    if !rows::set_member(sql, tenant, &id, &p, present)? && !present {
        return Ok(Err("not a member".into()));
    }
    let event = if present { "group_member_added" } else { "group_member_removed" };
    audit(sql, event, json!({"by": "cli", "group_id": id, "member_type": p.kind(), "member_id": p.id()}))?;
    Ok(Ok(json!({"group_id": id, "member_type": p.kind(), "member_id": p.id(), "member": present})))
}

pub(super) async fn run_role(db: &crate::db::Database, limits: Limits, cmd: RoleCommand, at: &At) -> anyhow::Result<()> {
    let tenant = at.tenant;
    let outcome: Result<serde_json::Value, String> = db
        .write(move |sql| {
            let d = directory(sql, tenant)?;
            let client_id = match &cmd {
                RoleCommand::List { client_id } | RoleCommand::Define { client_id, .. } | RoleCommand::Remove { client_id, .. } => client_id,
                RoleCommand::Assign { client_id, .. } | RoleCommand::Unassign { client_id, .. } => client_id,
            };
            if crate::registry::clients::load_one(sql, tenant, client_id)?.is_none() {
                return Ok(Err(format!("no client {client_id:?}")));
            }
            let audit = |sql: &mut dyn Sql, event: &str, detail: serde_json::Value| {
                crate::audit::insert(sql, &[crate::audit::AuditEvent::new(event).tenant(tenant).detail(detail)])
            };
            let roles = |c: &str| d.roles_of_client(c).cloned().unwrap_or_default();
            Ok(match cmd {
                RoleCommand::List { client_id } => Ok(json!(roles(&client_id)
                    .into_iter()
                    .map(|(role, description)| {
                        let holders: Vec<_> = d.assignees(&client_id, &role).map(|p| json!({"type": p.kind(), "id": p.id()})).collect();
                        json!({"role": role, "description": description, "assignments": holders})
                    })
                    .collect::<Vec<_>>())),
                RoleCommand::Define { client_id, role, description } => {
                    let checked = crate::registry::directory::validate_role(&role).and_then(|_| crate::registry::directory::validate_description(&description));
                    let have = roles(&client_id);
                    match checked {
                        Err(e) => Err(e),
                        Ok(()) if !have.contains_key(&role) && have.len() >= limits.max_roles_per_client => {
                            Err(format!("a client defines at most {} roles (directory_max_roles_per_client)", limits.max_roles_per_client))
                        }
                        Ok(()) => {
                            rows::put_role(sql, tenant, &client_id, &role, &description)?;
                            audit(sql, "client_role_defined", json!({"by": "cli", "client_id": client_id, "role": role, "description": description}))?;
                            Ok(json!({"client_id": client_id, "role": role, "description": description}))
                        }
                    }
                }
                RoleCommand::Remove { client_id, role } => match rows::delete_role(sql, tenant, &client_id, &role)? {
                    false => Err(format!("no role {role:?} on {client_id:?}")),
                    true => {
                        audit(sql, "client_role_removed", json!({"by": "cli", "client_id": client_id, "role": role}))?;
                        Ok(json!({"removed": role}))
                    }
                },
                RoleCommand::Assign { client_id, role, who } | RoleCommand::Unassign { client_id, role, who } if !roles(&client_id).contains_key(&role) => {
                    drop(who);
                    Err(format!("no role {role:?} on {client_id:?}"))
                }
                RoleCommand::Assign { client_id, role, who } => assignment(sql, &d, tenant, &client_id, &role, &who, true, &audit)?,
                RoleCommand::Unassign { client_id, role, who } => assignment(sql, &d, tenant, &client_id, &role, &who, false, &audit)?,
            })
        })
        .await?;
    print_json(outcome.map_err(anyhow::Error::msg)?);
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn assignment(sql: &mut dyn Sql, d: &Directory, tenant: TenantId, client: &str, role: &str, who: &Who, present: bool, audit: &Audit<'_>) -> StoreResult<Result<serde_json::Value, String>> {
    let p = match principal(sql, d, tenant, who)? {
        Ok(p) => p,
        Err(e) => return Ok(Err(e)),
    };
    if !rows::set_assignment(sql, tenant, client, role, &p, present)? && !present {
        return Ok(Err("not assigned".into()));
    }
    let event = if present { "role_assigned" } else { "role_unassigned" };
    audit(sql, event, json!({"by": "cli", "client_id": client, "role": role, "principal_type": p.kind(), "principal_id": p.id()}))?;
    Ok(Ok(json!({"client_id": client, "role": role, "principal_type": p.kind(), "principal_id": p.id(), "assigned": present})))
}
