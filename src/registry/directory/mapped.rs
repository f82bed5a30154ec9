//! A directory's groups onto the tenant's (LDAP group mapping, docs/ldap.md): at each sign-in
//! and sync round, the user's groups in the directory become their memberships of the groups
//! of those names here, made when missing. Each membership the mapping makes is marked as the
//! directory's (`group_members.source = 'ldap:<id>'`), so that when the user leaves a group
//! there, the mapping removes its own membership and never one an operator made (`local`): an
//! operator who also adds the user takes the membership over (`rows::set_member`).
//!
//! Memory holds memberships only (tokens need nothing more); whose they are is read from the
//! rows, under the order lock, as every directory change is checked and written.

use super::memory::Directory;
use super::rows::{self, Conflict};
use super::{Group, GroupInput, Limits, Principal};
use crate::db::StoreResult;
use crate::registry::TenantRegistry;
use std::collections::BTreeSet;

/// What a mapping changed, by group name; `refused`: groups not joined, with why (a bound of
/// `Limits`, a name no group may have).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Mapped {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub refused: Vec<(String, String)>,
}

impl Mapped {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.refused.is_empty()
    }
}

/// What is to be written: groups to make, memberships to add and to remove (group ids).
#[derive(Default)]
struct Plan {
    create: Vec<Group>,
    add: Vec<String>,
    remove: Vec<String>,
    refused: Vec<(String, String)>,
}

impl TenantRegistry<'_> {
    /// Make `names` (the directory's groups, named as here) the groups `user` is in by
    /// `source`'s mapping: the memberships it made before and no longer names removed, the
    /// new ones added, within `limits` (a group past them is refused, the others kept).
    pub async fn map_groups(&self, user: &str, source: &str, names: &[String], limits: &Limits) -> StoreResult<Mapped> {
        let _order = self.registry.order.lock().await;
        let (tenant, u, src) = (self.tenant, user.to_string(), source.to_string());
        let mine: BTreeSet<String> = self.registry.db.read(move |sql| rows::mapped_groups(sql, tenant, &u, &src)).await?.into_iter().collect();
        let plan = self.with_directory(|d| plan(d, self.tenant, user, &mine, names, limits));
        if plan.create.is_empty() && plan.add.is_empty() && plan.remove.is_empty() {
            return Ok(Mapped { refused: plan.refused, ..Mapped::default() });
        }
        let (u, src) = (user.to_string(), source.to_string());
        let Plan { create, add, remove, refused } = plan;
        // The groups whose members (through nesting) change, for outbound provisioning.
        let reached: Vec<String> = self.with_directory(|d| {
            let mut all: BTreeSet<String> = add.iter().chain(&remove).cloned().collect();
            for g in add.iter().chain(&remove) {
                all.extend(d.ancestors(&Principal::Group(g.clone())));
            }
            all.into_iter().collect()
        });
        let (created, added, removed) = self
            .registry
            .db
            .write(move |sql| {
                let mut created = Vec::new();
                let mut lost = BTreeSet::new();
                for mut g in create {
                    match rows::save_group(sql, &g)? {
                        Ok(version) => {
                            g.version = version;
                            created.push(g);
                        }
                        // Made by another node a moment ago: joined at the next sign-in.
                        Err(Conflict::NameTaken) => drop(lost.insert(g.id)),
                    }
                }
                let mut added = Vec::new();
                for g in add.into_iter().filter(|g| !lost.contains(g)) {
                    if rows::set_mapped_member(sql, tenant, &g, &u, &src, true)? {
                        added.push(g);
                    }
                }
                let mut removed = Vec::new();
                for g in remove {
                    if rows::set_mapped_member(sql, tenant, &g, &u, &src, false)? {
                        removed.push(g);
                    }
                }
                // The user's groups changed: outbound provisioning looks at them again, as
                // after an operator's change (`view::set_group_member`).
                if !added.is_empty() || !removed.is_empty() {
                    crate::provisioning::enqueue_users(sql, tenant, std::slice::from_ref(&u))?;
                    crate::provisioning::enqueue_groups(sql, tenant, &reached)?;
                }
                Ok((created, added, removed))
            })
            .await?;
        let mut all = self.registry.directories.write();
        let d = all.entry(self.tenant).or_default();
        for g in created {
            d.put_group(g);
        }
        let me = Principal::User(user.to_string());
        let name = |d: &Directory, id: &str| d.group(id).map_or_else(|| id.to_string(), |g| g.display_name.clone());
        let mut mapped = Mapped { refused, ..Mapped::default() };
        for (ids, present) in [(added, true), (removed, false)] {
            for id in ids {
                let n = name(d, &id);
                super::view::set_member_in_memory(d, &id, me.clone(), present);
                match present {
                    true => mapped.added.push(n),
                    false => mapped.removed.push(n),
                }
            }
        }
        Ok(mapped)
    }
}

/// The change that makes `names` `user`'s mapped groups, given the ones the mapping made
/// (`mine`), checked against memory as the admin API's changes are.
fn plan(d: &Directory, tenant: crate::tenant::TenantId, user: &str, mine: &BTreeSet<String>, names: &[String], limits: &Limits) -> Plan {
    let me = Principal::User(user.to_string());
    let wanted: BTreeSet<String> = names.iter().filter_map(|n| d.group_by_name(n)).map(|g| g.id.clone()).collect();
    let mut plan = Plan { remove: mine.difference(&wanted).cloned().collect(), ..Plan::default() };
    // Room left, counted as the plan grows (`check_member` sees one change at a time).
    let mut room_groups = limits.max_groups.saturating_sub(d.group_count());
    let have = d.effective(user).map_or(0, |e| e.groups.len());
    let mut room_user = limits.max_groups_per_user.saturating_sub(have.saturating_sub(plan.remove.len()));
    let per_user = || format!("a user is in at most {} groups (directory_max_groups_per_user)", limits.max_groups_per_user);
    for name in names {
        let id = match d.group_by_name(name) {
            Some(g) if d.is_member(&g.id, &me) => continue,
            Some(g) => match d.check_member(&g.id, &me, limits) {
                Ok(()) => g.id.clone(),
                Err(r) => {
                    plan.refused.push((name.clone(), r.to_string()));
                    continue;
                }
            },
            None if room_groups == 0 => {
                plan.refused.push((name.clone(), format!("a tenant has at most {} groups (directory_max_groups)", limits.max_groups)));
                continue;
            }
            None => match Group::new(tenant, GroupInput { display_name: Some(name.clone()), external_id: None }) {
                Ok(g) if room_user > 0 => {
                    room_groups -= 1;
                    let id = g.id.clone();
                    plan.create.push(g);
                    id
                }
                Ok(_) => {
                    plan.refused.push((name.clone(), per_user()));
                    continue;
                }
                Err(why) => {
                    plan.refused.push((name.clone(), why));
                    continue;
                }
            },
        };
        if room_user == 0 {
            plan.refused.push((name.clone(), per_user()));
            continue;
        }
        room_user -= 1;
        plan.add.push(id);
    }
    plan
}
