//! A tenant's directory through its registry view: lookups from memory; changes checked
//! against memory (bounds, cycles), written through the database, then applied to memory,
//! all under the registry's order lock so that a concurrent change cannot slip between the
//! check and the write.

use super::memory::{Directory, Effective};
use super::rows::{self, Conflict};
use super::{Group, Limits, Principal, Refusal};
use crate::db::StoreResult;
use crate::registry::TenantRegistry;
use std::collections::BTreeMap;
use std::sync::Arc;

impl TenantRegistry<'_> {
    /// Read this tenant's directory (an empty one if it has none).
    pub fn with_directory<R>(&self, f: impl FnOnce(&Directory) -> R) -> R {
        let all = self.registry.directories.read();
        match all.get(&self.tenant) {
            Some(d) => f(d),
            None => f(&Directory::default()),
        }
    }

    /// A group by its id, or else by its display name (without case).
    pub fn group(&self, id_or_name: &str) -> Option<Arc<Group>> {
        self.with_directory(|d| d.group(id_or_name).or_else(|| d.group_by_name(id_or_name)).cloned())
    }

    /// Every group, by display name.
    pub fn list_groups(&self) -> Vec<Arc<Group>> {
        let mut v: Vec<_> = self.with_directory(|d| d.groups.values().cloned().collect());
        v.sort_by(|a, b| a.name_key().cmp(&b.name_key()));
        v
    }

    pub fn group_members(&self, group: &str) -> Vec<Principal> {
        self.with_directory(|d| d.members(group).cloned().collect())
    }

    /// The groups `p` is directly in.
    pub fn direct_groups(&self, p: &Principal) -> Vec<Arc<Group>> {
        self.with_directory(|d| d.direct_groups(p).filter_map(|g| d.group(g).cloned()).collect())
    }

    /// The users the principals stand for (themselves, or every user under a group): those a
    /// change of their memberships or roles reaches, whom outbound provisioning must look at
    /// again (`provisioning`), in the change's transaction.
    fn users_under<'p>(&self, principals: impl Iterator<Item = &'p Principal>) -> Vec<String> {
        let mut users: Vec<String> = self.with_directory(|d| principals.flat_map(|p| d.users_under(p)).collect());
        users.sort_unstable();
        users.dedup();
        users
    }

    /// A group and every group above it: those whose members (through nesting) change when
    /// its own do.
    fn groups_reached(&self, group: &str) -> Vec<String> {
        let mut groups: Vec<String> = self.with_directory(|d| d.ancestors(&Principal::Group(group.to_string())).into_iter().collect());
        groups.push(group.to_string());
        groups
    }

    /// Whose the memberships of `group` are, by member key, for those that are not an
    /// operator's (a directory's mapping: `ldap:<id>`). Memory keeps memberships only, so this
    /// is read from the rows (the admin API's and the console's listings, not the token path).
    pub async fn group_member_sources(&self, group: &str) -> StoreResult<std::collections::HashMap<String, String>> {
        let (tenant, g) = (self.tenant, group.to_string());
        self.registry.db.read(move |sql| rows::member_sources(sql, tenant, &g)).await
    }

    /// A user's groups (direct and through nesting) and roles per client.
    pub fn effective(&self, user: &str) -> Option<Arc<Effective>> {
        self.with_directory(|d| d.effective(user).cloned())
    }

    /// The roles `client` defines, with their descriptions.
    pub fn client_roles(&self, client: &str) -> BTreeMap<String, String> {
        self.with_directory(|d| d.roles_of_client(client).cloned().unwrap_or_default())
    }

    pub fn role_assignees(&self, client: &str, role: &str) -> Vec<Principal> {
        self.with_directory(|d| d.assignees(client, role).cloned().collect())
    }

    /// Save a new or changed group; its saved form (with its new version).
    pub async fn save_group(&self, group: Group, limits: &Limits) -> StoreResult<Result<Group, Refusal>> {
        self.save_group_with_members(group, None, limits).await
    }

    /// Save a new or changed group and, when `members` is given, make them its direct members
    /// (and no other): checked as a whole, written in one transaction, so that a provisioning
    /// request is all or nothing. A user member must be one of the tenant's (the caller looks
    /// it up).
    pub async fn save_group_with_members(&self, mut group: Group, members: Option<Vec<Principal>>, limits: &Limits) -> StoreResult<Result<Group, Refusal>> {
        group.tenant = self.tenant;
        let _order = self.registry.order.lock().await;
        let checked = self.with_directory(|d| {
            if d.group_by_name(&group.display_name).is_some_and(|g| g.id != group.id) {
                return Err(Refusal::NameTaken);
            }
            if d.group(&group.id).is_none() && d.group_count() >= limits.max_groups {
                return Err(Refusal::Limit(format!("a tenant has at most {} groups (directory_max_groups)", limits.max_groups)));
            }
            let Some(members) = &members else { return Ok((Vec::new(), Vec::new())) };
            let current: Vec<Principal> = d.members(&group.id).cloned().collect();
            let adds: Vec<Principal> = members.iter().filter(|p| !current.contains(p)).cloned().collect::<std::collections::BTreeSet<_>>().into_iter().collect();
            let removes: Vec<Principal> = current.into_iter().filter(|p| !members.contains(p)).collect();
            d.check_members(&group.id, &adds, removes.len(), limits)?;
            Ok((adds, removes))
        });
        let (adds, removes) = match checked {
            Ok(change) => change,
            Err(r) => return Ok(Err(r)),
        };
        let (g, a, r) = (group.clone(), adds.clone(), removes.clone());
        let (tenant, reached, groups) = (self.tenant, self.users_under(adds.iter().chain(&removes)), self.groups_reached(&group.id));
        let saved = self
            .registry
            .db
            .write(move |sql| {
                let saved = rows::save_group_members(sql, &g, &a, &r)?;
                if saved.is_ok() {
                    crate::provisioning::enqueue_users(sql, tenant, &reached)?;
                    crate::provisioning::enqueue_groups(sql, tenant, &groups)?;
                }
                Ok(saved)
            })
            .await?;
        match saved {
            Err(Conflict::NameTaken) => Ok(Err(Refusal::NameTaken)),
            Ok(version) => {
                group.version = version;
                let mut all = self.registry.directories.write();
                let d = all.entry(self.tenant).or_default();
                d.put_group(group.clone());
                for p in adds {
                    d.set_member(&group.id, p, true);
                }
                for p in removes {
                    d.set_member(&group.id, p, false);
                }
                Ok(Ok(group))
            }
        }
    }

    pub async fn delete_group(&self, id: &str) -> StoreResult<bool> {
        let _order = self.registry.order.lock().await;
        let (tenant, owned) = (self.tenant, id.to_string());
        let (reached, groups) = (self.users_under([Principal::Group(id.to_string())].iter()), self.groups_reached(id));
        let existed = self
            .registry
            .db
            .write(move |sql| {
                let existed = rows::delete_group(sql, tenant, &owned)?;
                crate::provisioning::enqueue_users(sql, tenant, &reached)?;
                crate::provisioning::enqueue_groups(sql, tenant, &groups)?;
                Ok(existed)
            })
            .await?;
        if let Some(d) = self.registry.directories.write().get_mut(&self.tenant) {
            d.remove_group(id);
        }
        Ok(existed)
    }

    /// Make `p` a member of `group`, or not; whether anything changed. A user member must be
    /// one of the tenant's (the caller looks it up).
    pub async fn set_group_member(&self, group: &str, p: Principal, present: bool, limits: &Limits) -> StoreResult<Result<bool, Refusal>> {
        let _order = self.registry.order.lock().await;
        let checked = self.with_directory(|d| match present {
            true => d.check_member(group, &p, limits),
            false if d.group(group).is_none() => Err(Refusal::NoSuchGroup),
            false => Ok(()),
        });
        if let Err(r) = checked {
            return Ok(Err(r));
        }
        let (tenant, g, member) = (self.tenant, group.to_string(), p.clone());
        let (reached, groups) = (self.users_under([p.clone()].iter()), self.groups_reached(group));
        let changed = self
            .registry
            .db
            .write(move |sql| {
                let changed = rows::set_member(sql, tenant, &g, &member, present)?;
                if changed {
                    crate::provisioning::enqueue_users(sql, tenant, &reached)?;
                    crate::provisioning::enqueue_groups(sql, tenant, &groups)?;
                }
                Ok(changed)
            })
            .await?;
        if changed {
            set_member_in_memory(self.registry.directories.write().entry(self.tenant).or_default(), group, p, present);
        }
        Ok(Ok(changed))
    }

    /// Define a role on `client` (or change its description).
    pub async fn put_role(&self, client: &str, role: &str, description: &str, limits: &Limits) -> StoreResult<Result<(), Refusal>> {
        let _order = self.registry.order.lock().await;
        let full = self.with_directory(|d| {
            let roles = d.roles_of_client(client);
            !roles.is_some_and(|r| r.contains_key(role)) && roles.map_or(0, BTreeMap::len) >= limits.max_roles_per_client
        });
        if full {
            return Ok(Err(Refusal::Limit(format!("a client defines at most {} roles (directory_max_roles_per_client)", limits.max_roles_per_client))));
        }
        let (tenant, c, r, desc) = (self.tenant, client.to_string(), role.to_string(), description.to_string());
        self.registry.db.write(move |sql| rows::put_role(sql, tenant, &c, &r, &desc)).await?;
        self.registry.directories.write().entry(self.tenant).or_default().set_role(client, role, Some(description.to_string()));
        Ok(Ok(()))
    }

    pub async fn delete_role(&self, client: &str, role: &str) -> StoreResult<bool> {
        let _order = self.registry.order.lock().await;
        let (tenant, c, r) = (self.tenant, client.to_string(), role.to_string());
        let assignees = self.role_assignees(client, role);
        let (reached, groups) = (self.users_under(assignees.iter()), group_ids(&assignees));
        let existed = self
            .registry
            .db
            .write(move |sql| {
                let existed = rows::delete_role(sql, tenant, &c, &r)?;
                crate::provisioning::enqueue_users(sql, tenant, &reached)?;
                crate::provisioning::enqueue_groups(sql, tenant, &groups)?;
                Ok(existed)
            })
            .await?;
        if let Some(d) = self.registry.directories.write().get_mut(&self.tenant) {
            d.set_role(client, role, None);
        }
        Ok(existed)
    }

    /// Assign a role of `client` to `p`, or take it away; whether anything changed.
    pub async fn set_role_assignment(&self, client: &str, role: &str, p: Principal, present: bool) -> StoreResult<Result<bool, Refusal>> {
        let _order = self.registry.order.lock().await;
        let checked = self.with_directory(|d| {
            if !d.roles_of_client(client).is_some_and(|r| r.contains_key(role)) {
                return Err(Refusal::NoSuchRole);
            }
            match &p {
                Principal::Group(g) if present && d.group(g).is_none() => Err(Refusal::NoSuchGroup),
                _ => Ok(()),
            }
        });
        if let Err(r) = checked {
            return Ok(Err(r));
        }
        let (tenant, c, r, who) = (self.tenant, client.to_string(), role.to_string(), p.clone());
        let (reached, groups) = (self.users_under([p.clone()].iter()), group_ids(std::slice::from_ref(&p)));
        let changed = self
            .registry
            .db
            .write(move |sql| {
                let changed = rows::set_assignment(sql, tenant, &c, &r, &who, present)?;
                if changed {
                    crate::provisioning::enqueue_users(sql, tenant, &reached)?;
                    crate::provisioning::enqueue_groups(sql, tenant, &groups)?;
                }
                Ok(changed)
            })
            .await?;
        if changed {
            self.registry.directories.write().entry(self.tenant).or_default().set_assignment(client, role, p, present);
        }
        Ok(Ok(changed))
    }
}

/// The groups among `principals`.
fn group_ids(principals: &[Principal]) -> Vec<String> {
    principals.iter().filter_map(|p| matches!(p, Principal::Group(_)).then(|| p.id().to_string())).collect()
}

/// A membership written (`rows::set_member`, `rows::set_mapped_member`) applied to memory,
/// with the group's version raised as the row's was.
pub(super) fn set_member_in_memory(d: &mut Directory, group: &str, p: Principal, present: bool) {
    if let Some(old) = d.group(group) {
        let mut bumped = (**old).clone();
        bumped.version += 1;
        d.put_group(bumped);
    }
    d.set_member(group, p, present);
}
