//! One tenant's directory in memory: the groups, who is in each, the roles and their
//! assignments, and for every user the effective groups (direct and through nesting) and
//! roles (per client, direct and through groups).
//!
//! Every change names what it touches; the users it can affect (the user itself, or every
//! user under a group) are computed again at once, so that a token's issuance only looks the
//! user up. A change is a state, not a delta ("this membership exists / does not"), so that
//! applying a change-log entry twice, or after the local write already did, is harmless.

use super::{Group, Limits, Principal, Refusal};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

/// A user's groups and roles, as a token reads them.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Effective {
    /// Group ids, sorted.
    pub groups: Box<[String]>,
    /// Client id -> role names, sorted.
    pub roles: HashMap<String, Box<[String]>>,
}

#[derive(Default)]
pub struct Directory {
    pub(crate) groups: HashMap<String, Arc<Group>>,
    /// `name_key` -> group id.
    by_name: HashMap<String, String>,
    /// Group id -> its direct members.
    members: HashMap<String, BTreeSet<Principal>>,
    /// Principal -> the groups it is directly in.
    parents: HashMap<Principal, BTreeSet<String>>,
    /// Client id -> role -> description.
    roles: HashMap<String, BTreeMap<String, String>>,
    /// Client id -> role -> principals it is assigned to.
    assignments: HashMap<String, BTreeMap<String, BTreeSet<Principal>>>,
    /// Principal -> (client id, role) assigned to it directly.
    assigned: HashMap<Principal, BTreeSet<(String, String)>>,
    /// User id -> what they have; absent for a user with no group and no role.
    effective: HashMap<String, Arc<Effective>>,
}

impl Directory {
    /// The directories of every tenant in `all` (the registry's snapshot, or one tenant's
    /// rows for the CLI's checks).
    pub fn build(all: super::rows::All) -> HashMap<crate::tenant::TenantId, Directory> {
        let mut dirs: HashMap<crate::tenant::TenantId, Directory> = HashMap::new();
        for g in all.groups {
            dirs.entry(g.tenant).or_default().put_group(g);
        }
        for (tenant, client, role, description) in all.roles {
            dirs.entry(tenant).or_default().set_role(&client, &role, Some(description));
        }
        for (tenant, group, p) in all.members {
            dirs.entry(tenant).or_default().set_member(&group, p, true);
        }
        for (tenant, client, role, p) in all.assignments {
            dirs.entry(tenant).or_default().set_assignment(&client, &role, p, true);
        }
        dirs
    }

    pub fn group(&self, id: &str) -> Option<&Arc<Group>> {
        self.groups.get(id)
    }

    pub fn group_by_name(&self, name: &str) -> Option<&Arc<Group>> {
        self.by_name.get(&super::name_key(name)).and_then(|id| self.groups.get(id))
    }

    pub fn group_count(&self) -> usize {
        self.groups.len()
    }

    pub fn members(&self, group: &str) -> impl Iterator<Item = &Principal> {
        self.members.get(group).into_iter().flatten()
    }

    pub fn member_count(&self, group: &str) -> usize {
        self.members.get(group).map_or(0, BTreeSet::len)
    }

    pub fn is_member(&self, group: &str, p: &Principal) -> bool {
        self.members.get(group).is_some_and(|m| m.contains(p))
    }

    /// The groups `p` is directly in.
    pub fn direct_groups(&self, p: &Principal) -> impl Iterator<Item = &String> {
        self.parents.get(p).into_iter().flatten()
    }

    pub fn roles_of_client(&self, client: &str) -> Option<&BTreeMap<String, String>> {
        self.roles.get(client)
    }

    pub fn has_roles(&self, client: &str) -> bool {
        self.roles.get(client).is_some_and(|r| !r.is_empty())
    }

    pub fn assignees(&self, client: &str, role: &str) -> impl Iterator<Item = &Principal> {
        self.assignments.get(client).and_then(|r| r.get(role)).into_iter().flatten()
    }

    /// Whether `p` holds one of `client`'s roles directly.
    pub fn holds_role_of(&self, p: &Principal, client: &str) -> bool {
        self.assigned.get(p).is_some_and(|a| a.iter().any(|(c, role)| c == client && self.roles.get(c).is_some_and(|r| r.contains_key(role))))
    }

    pub fn effective(&self, user: &str) -> Option<&Arc<Effective>> {
        self.effective.get(user)
    }

    // ----- changes -----

    /// Add or change a group (its name, external id, version): nobody's effective set changes.
    pub fn put_group(&mut self, group: Group) {
        if let Some(old) = self.groups.get(&group.id) {
            let key = old.name_key();
            if self.by_name.get(&key) == Some(&group.id) {
                self.by_name.remove(&key);
            }
        }
        self.by_name.insert(group.name_key(), group.id.clone());
        self.groups.insert(group.id.clone(), Arc::new(group));
    }

    /// Drop a group with its memberships (as a member and as a container) and assignments.
    pub fn remove_group(&mut self, id: &str) {
        let affected = self.users_under(&Principal::Group(id.to_string()));
        if let Some(old) = self.groups.remove(id) {
            let key = old.name_key();
            if self.by_name.get(&key).is_some_and(|g| g == id) {
                self.by_name.remove(&key);
            }
        }
        for m in self.members.remove(id).unwrap_or_default() {
            unlink(&mut self.parents, &m, id);
        }
        let me = Principal::Group(id.to_string());
        for parent in self.parents.remove(&me).unwrap_or_default() {
            if let Some(m) = self.members.get_mut(&parent) {
                m.remove(&me);
            }
        }
        self.drop_assignments_of(&me);
        self.recompute(affected);
    }

    /// Make `p` a member of `group` or not.
    pub fn set_member(&mut self, group: &str, p: Principal, present: bool) {
        let affected = self.users_under(&p);
        match present {
            true => {
                self.members.entry(group.to_string()).or_default().insert(p.clone());
                self.parents.entry(p).or_default().insert(group.to_string());
            }
            false => {
                if let Some(m) = self.members.get_mut(group) {
                    m.remove(&p);
                    if m.is_empty() {
                        self.members.remove(group);
                    }
                }
                unlink(&mut self.parents, &p, group);
            }
        }
        self.recompute(affected);
    }

    /// Define `role` on `client` (with its description), or remove it with its assignments.
    pub fn set_role(&mut self, client: &str, role: &str, description: Option<String>) {
        match description {
            Some(d) => {
                self.roles.entry(client.to_string()).or_default().insert(role.to_string(), d);
                // Assignments applied before the role itself (another node's changes arrive
                // in commit order, but a role may be defined again after a removal) count now.
                let affected: Vec<String> = self.assignees(client, role).flat_map(|p| self.users_under(p)).collect();
                self.recompute(affected);
            }
            None => {
                if let Some(r) = self.roles.get_mut(client) {
                    r.remove(role);
                    if r.is_empty() {
                        self.roles.remove(client);
                    }
                }
                let holders: Vec<Principal> = self.assignees(client, role).cloned().collect();
                for p in holders {
                    self.set_assignment(client, role, p, false);
                }
            }
        }
    }

    /// Assign `role` of `client` to `p`, or take it away.
    pub fn set_assignment(&mut self, client: &str, role: &str, p: Principal, present: bool) {
        let key = (client.to_string(), role.to_string());
        match present {
            true => {
                self.assignments.entry(client.to_string()).or_default().entry(role.to_string()).or_default().insert(p.clone());
                self.assigned.entry(p.clone()).or_default().insert(key);
            }
            false => {
                if let Some(by_role) = self.assignments.get_mut(client) {
                    if let Some(ps) = by_role.get_mut(role) {
                        ps.remove(&p);
                        if ps.is_empty() {
                            by_role.remove(role);
                        }
                    }
                    if by_role.is_empty() {
                        self.assignments.remove(client);
                    }
                }
                if let Some(a) = self.assigned.get_mut(&p) {
                    a.remove(&key);
                    if a.is_empty() {
                        self.assigned.remove(&p);
                    }
                }
            }
        }
        let affected = self.users_under(&p);
        self.recompute(affected);
    }

    /// A deleted user leaves every group and assignment.
    pub fn remove_user(&mut self, user: &str) {
        let me = Principal::User(user.to_string());
        for g in self.parents.remove(&me).unwrap_or_default() {
            if let Some(m) = self.members.get_mut(&g) {
                m.remove(&me);
            }
        }
        self.drop_assignments_of(&me);
        self.effective.remove(user);
    }

    /// A deleted client's roles and assignments go with it.
    pub fn remove_client(&mut self, client: &str) {
        let roles: Vec<String> = self.roles.get(client).map(|r| r.keys().cloned().collect()).unwrap_or_default();
        let assigned: Vec<String> = self.assignments.get(client).map(|r| r.keys().cloned().collect()).unwrap_or_default();
        for role in roles.into_iter().chain(assigned) {
            self.set_role(client, &role, None);
        }
    }

    fn drop_assignments_of(&mut self, p: &Principal) {
        for (client, role) in self.assigned.remove(p).unwrap_or_default() {
            if let Some(by_role) = self.assignments.get_mut(&client) {
                if let Some(ps) = by_role.get_mut(&role) {
                    ps.remove(p);
                    if ps.is_empty() {
                        by_role.remove(&role);
                    }
                }
                if by_role.is_empty() {
                    self.assignments.remove(&client);
                }
            }
        }
    }

    // ----- what a change may do, asked before it is written -----

    /// Whether making `p` a member of `group` is allowed: no cycle, nesting within
    /// `max_depth`, members within `max_members`, and no user in more than
    /// `max_groups_per_user` groups (effective) after it.
    pub fn check_member(&self, group: &str, p: &Principal, limits: &Limits) -> Result<(), Refusal> {
        if !self.groups.contains_key(group) {
            return Err(Refusal::NoSuchGroup);
        }
        self.check_members(group, std::slice::from_ref(p), 0, limits)
    }

    /// Whether `group` (which may be one not saved yet: no member, in no group) may gain the
    /// members `adds` while losing `removed` others: each as `check_member` asks, and the
    /// group's members within `max_members` after all of it.
    pub fn check_members(&self, group: &str, adds: &[Principal], removed: usize, limits: &Limits) -> Result<(), Refusal> {
        let adds: Vec<&Principal> = adds.iter().filter(|p| !self.is_member(group, p)).collect();
        if (self.member_count(group) + adds.len()).saturating_sub(removed) > limits.max_members {
            return Err(Refusal::Limit(format!("a group has at most {} members (directory_max_members)", limits.max_members)));
        }
        let above = self.ancestors(&Principal::Group(group.to_string()));
        // The users they bring in gain `group` and everything above it.
        let mut gained: BTreeSet<&str> = above.iter().map(String::as_str).collect();
        gained.insert(group);
        for p in adds {
            if let Principal::Group(child) = p {
                if !self.groups.contains_key(child) {
                    return Err(Refusal::NoSuchGroup);
                }
                if child == group || above.contains(child) {
                    return Err(Refusal::Cycle);
                }
                if self.height_up(group) + 1 + self.height_down(child) > limits.max_depth {
                    return Err(Refusal::Limit(format!("groups nest at most {} deep (directory_max_depth)", limits.max_depth)));
                }
            }
            for user in self.users_under(p) {
                let have = self.effective.get(&user).map(|e| e.groups.iter().map(String::as_str).collect::<BTreeSet<_>>()).unwrap_or_default();
                if have.union(&gained).count() > limits.max_groups_per_user {
                    return Err(Refusal::Limit(format!("a user is in at most {} groups (directory_max_groups_per_user)", limits.max_groups_per_user)));
                }
            }
        }
        Ok(())
    }

    /// Every group above `p` (its groups, theirs, ...), without `p` itself.
    pub fn ancestors(&self, p: &Principal) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&String> = self.direct_groups(p).collect();
        while let Some(g) = todo.pop() {
            if seen.insert(g.clone()) {
                todo.extend(self.direct_groups(&Principal::Group(g.clone())));
            }
        }
        seen
    }

    /// The users `p` stands for: itself, or every user under the group (through nesting).
    pub fn users_under(&self, p: &Principal) -> Vec<String> {
        match p {
            Principal::User(u) => vec![u.clone()],
            Principal::Group(g) => {
                let (mut users, mut seen) = (BTreeSet::new(), HashSet::new());
                let mut todo = vec![g.clone()];
                while let Some(g) = todo.pop() {
                    if !seen.insert(g.clone()) {
                        continue;
                    }
                    for m in self.members(&g) {
                        match m {
                            Principal::User(u) => drop(users.insert(u.clone())),
                            Principal::Group(c) => todo.push(c.clone()),
                        }
                    }
                }
                users.into_iter().collect()
            }
        }
    }

    /// The longest chain of groups above `group` (0: it is in no group).
    fn height_up(&self, group: &str) -> usize {
        let me = Principal::Group(group.to_string());
        self.direct_groups(&me).map(|g| 1 + self.height_up(g)).max().unwrap_or(0)
    }

    /// The longest chain of groups below `group` (0: no group in it).
    fn height_down(&self, group: &str) -> usize {
        self.members(group)
            .filter_map(|m| match m {
                Principal::Group(c) => Some(1 + self.height_down(c)),
                Principal::User(_) => None,
            })
            .max()
            .unwrap_or(0)
    }

    fn recompute(&mut self, users: Vec<String>) {
        for u in users {
            let e = self.compute(&u);
            match e.groups.is_empty() && e.roles.is_empty() {
                true => drop(self.effective.remove(&u)),
                false => drop(self.effective.insert(u, Arc::new(e))),
            }
        }
    }

    /// `user`'s groups and roles from the memberships and assignments (no cache).
    pub fn compute(&self, user: &str) -> Effective {
        let me = Principal::User(user.to_string());
        let groups = self.ancestors(&me);
        let mut roles: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        let holders = std::iter::once(me.clone()).chain(groups.iter().map(|g| Principal::Group(g.clone())));
        for p in holders {
            for (client, role) in self.assigned.get(&p).into_iter().flatten() {
                if self.roles.get(client).is_some_and(|r| r.contains_key(role)) {
                    roles.entry(client).or_default().insert(role);
                }
            }
        }
        Effective {
            groups: groups.into_iter().collect(),
            roles: roles.into_iter().map(|(c, r)| (c.to_string(), r.into_iter().map(str::to_string).collect())).collect(),
        }
    }
}

fn unlink(parents: &mut HashMap<Principal, BTreeSet<String>>, p: &Principal, group: &str) {
    if let Some(gs) = parents.get_mut(p) {
        gs.remove(group);
        if gs.is_empty() {
            parents.remove(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tenant::TenantId;

    fn group(id: &str, name: &str) -> Group {
        Group { tenant: TenantId::DEFAULT, id: id.into(), display_name: name.into(), external_id: None, created_at: 0, version: 0 }
    }

    fn u(id: &str) -> Principal {
        Principal::User(id.into())
    }

    fn g(id: &str) -> Principal {
        Principal::Group(id.into())
    }

    #[test]
    fn nesting_gives_groups_and_roles_transitively() {
        let mut d = Directory::default();
        for (id, name) in [("eng", "Engineering"), ("be", "Backend"), ("ops", "Ops")] {
            d.put_group(group(id, name));
        }
        d.set_member("be", u("alice"), true);
        d.set_member("eng", g("be"), true);
        d.set_role("app", "deploy", Some("may deploy".into()));
        d.set_assignment("app", "deploy", g("eng"), true);
        let e = d.effective("alice").unwrap();
        assert_eq!(&*e.groups, ["be".to_string(), "eng".to_string()]);
        assert_eq!(&*e.roles["app"], ["deploy".to_string()]);
        // Cycles and bounds are refused before anything is written.
        assert_eq!(d.check_member("be", &g("eng"), &Limits::default()), Err(Refusal::Cycle));
        assert_eq!(d.check_member("be", &g("be"), &Limits::default()), Err(Refusal::Cycle));
        let tight = Limits { max_depth: 1, ..Limits::default() };
        assert!(matches!(d.check_member("ops", &g("eng"), &tight), Err(Refusal::Limit(_))));
        let few = Limits { max_groups_per_user: 2, ..Limits::default() };
        assert!(matches!(d.check_member("ops", &u("alice"), &few), Err(Refusal::Limit(_))));
        assert!(d.check_member("ops", &u("bob"), &few).is_ok());
        // Removing the role removes what it gave; removing the inner group ends the nesting.
        d.set_role("app", "deploy", None);
        assert!(d.effective("alice").unwrap().roles.is_empty());
        d.remove_group("be");
        assert!(d.effective("alice").is_none());
        assert_eq!(d.group_by_name("ENGINEERING").unwrap().id, "eng");
        assert!(d.members("eng").next().is_none());
    }

    /// Randomized against the model: after any sequence of changes, every user's cached
    /// effective set is what computing it from scratch gives, and the indexes agree.
    #[test]
    fn the_cached_effective_sets_match_a_computation_from_scratch() {
        let users = ["u1", "u2", "u3", "u4"];
        let groups = ["g1", "g2", "g3", "g4", "g5"];
        let clients = ["c1", "c2"];
        let roles = ["r1", "r2", "r3"];
        for seed in 1..40u64 {
            let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let mut next = |n: usize| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                (rng % n as u64) as usize
            };
            let mut d = Directory::default();
            let limits = Limits { max_depth: 3, ..Limits::default() };
            for step in 0..300 {
                match next(9) {
                    0 => d.put_group(group(groups[next(5)], &format!("n{}", next(100)))),
                    1 => d.remove_group(groups[next(5)]),
                    2 | 3 => {
                        let (parent, p) = (groups[next(5)], if next(2) == 0 { u(users[next(4)]) } else { g(groups[next(5)]) });
                        if d.check_member(parent, &p, &limits).is_ok() {
                            d.set_member(parent, p, true);
                        }
                    }
                    4 => d.set_member(groups[next(5)], if next(2) == 0 { u(users[next(4)]) } else { g(groups[next(5)]) }, false),
                    5 => d.set_role(clients[next(2)], roles[next(3)], if next(3) == 0 { None } else { Some(String::new()) }),
                    6 | 7 => {
                        let p = if next(2) == 0 { u(users[next(4)]) } else { g(groups[next(5)]) };
                        let (c, r) = (clients[next(2)], roles[next(3)]);
                        let present = next(3) != 0 && d.roles.get(c).is_some_and(|rs| rs.contains_key(r)) && match &p {
                            Principal::Group(x) => d.groups.contains_key(x),
                            Principal::User(_) => true,
                        };
                        d.set_assignment(c, r, p, present);
                    }
                    _ => match next(2) {
                        0 => d.remove_user(users[next(4)]),
                        _ => d.remove_client(clients[next(2)]),
                    },
                }
                for user in users {
                    let fresh = d.compute(user);
                    let cached = d.effective(user).map(|e| (**e).clone_parts()).unwrap_or_default();
                    assert_eq!(cached, fresh.clone_parts(), "seed {seed} step {step} user {user}");
                }
                // No membership names a group that is gone; the reverse index agrees.
                for (gid, ms) in &d.members {
                    assert!(d.groups.contains_key(gid), "seed {seed} step {step}: members of a removed group");
                    for m in ms {
                        assert!(d.parents[m].contains(gid));
                    }
                }
                for (p, gs) in &d.parents {
                    for gid in gs {
                        assert!(d.members[gid].contains(p));
                    }
                }
            }
        }
    }

    impl Effective {
        fn clone_parts(&self) -> (Vec<String>, BTreeMap<String, Vec<String>>) {
            (self.groups.to_vec(), self.roles.iter().map(|(c, r)| (c.clone(), r.to_vec())).collect())
        }
    }
}
