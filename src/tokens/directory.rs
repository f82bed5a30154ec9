//! Groups and roles in tokens (issue 32): what a client's ID tokens, access tokens, userinfo
//! and introspection answers say of the user's groups and of the user's roles on that client.
//!
//! Read from memory (`registry::directory`: the user's effective sets, computed when the
//! directory changes), never from the database. A client that neither asks for groups
//! (`groups_claim`) nor defines roles costs one map lookup, and a user in no group and with no
//! role one more. Groups are filtered per client so that a token does not carry every group:
//! only those holding one of the client's roles (`groups_assigned_only`), only those whose
//! name begins with a prefix (`groups_prefixes`), and at most `token_max_groups`; beyond it
//! the claim is left out and `groups_overage: true` says so (as Entra ID's overage does), so
//! that a token never grows without bound.

use crate::registry::directory::Principal;
use crate::registry::Client;
use crate::tenant::Issuer;
use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq)]
pub struct DirectoryClaims {
    /// The user's groups as the client takes them (names or ids); empty when the client
    /// takes none, the user has none that pass the filters, or there are too many.
    pub groups: Vec<String>,
    /// More groups passed the filters than `token_max_groups`.
    pub overage: bool,
    /// The user's roles on this client.
    pub roles: Vec<String>,
    groups_name: String,
    roles_name: String,
}

impl DirectoryClaims {
    /// What `client`'s tokens say of `user_id`; `None` when there is nothing to say.
    pub fn of(app: &Issuer, client: &Client, user_id: &str) -> Option<Self> {
        let want = &client.meta.directory;
        let max = app.config.token_max_groups;
        let found = app.registry().with_directory(|d| {
            let e = d.effective(user_id)?;
            let roles = e.roles.get(client.id()).map(|r| r.to_vec()).unwrap_or_default();
            let (mut groups, mut overage) = (Vec::new(), false);
            if let Some(how) = want.groups_claim.as_deref() {
                let prefixes: Vec<String> = want.groups_prefixes.iter().map(|p| crate::registry::directory::name_key(p)).collect();
                for g in e.groups.iter().filter_map(|id| d.group(id)) {
                    if want.groups_assigned_only && !d.holds_role_of(&Principal::Group(g.id.clone()), client.id()) {
                        continue;
                    }
                    if !prefixes.is_empty() && !prefixes.iter().any(|p| g.name_key().starts_with(p.as_str())) {
                        continue;
                    }
                    if groups.len() == max {
                        overage = true;
                        groups.clear();
                        break;
                    }
                    groups.push(if how == "ids" { g.id.clone() } else { g.display_name.clone() });
                }
            }
            // In a stable order (the effective set is by id, which says nothing to a reader).
            groups.sort_unstable();
            Some((groups, overage, roles))
        })?;
        let (groups, overage, roles) = found;
        if groups.is_empty() && !overage && roles.is_empty() {
            return None;
        }
        Some(DirectoryClaims { groups, overage, roles, groups_name: want.groups_name().to_string(), roles_name: want.roles_name().to_string() })
    }

    /// Into an ID token or a userinfo answer, under the client's names for them.
    pub fn insert_into(&self, c: &mut Map<String, Value>) {
        if !self.groups.is_empty() {
            c.insert(self.groups_name.clone(), self.groups.clone().into());
        }
        if self.overage {
            c.insert("groups_overage".into(), true.into());
        }
        if !self.roles.is_empty() {
            c.insert(self.roles_name.clone(), self.roles.clone().into());
        }
    }
}
