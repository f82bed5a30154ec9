//! A tenant's organizations through its registry view: lookups from memory, changes written
//! through the database first (as for clients and users).

use super::organizations::{self, Conflict, Organization, Roles};
use super::*;

impl TenantRegistry<'_> {
    /// An organization by its id or its slug.
    pub fn organization(&self, id_or_slug: &str) -> Option<Arc<Organization>> {
        self.registry.orgs.read().get(&self.tenant)?.find(id_or_slug).cloned()
    }

    /// The organization an e-mail domain is registered to.
    pub fn organization_of_domain(&self, domain: &str) -> Option<Arc<Organization>> {
        let all = self.registry.orgs.read();
        let orgs = all.get(&self.tenant)?;
        orgs.by_domain.get(&domain.to_ascii_lowercase()).and_then(|id| orgs.by_id.get(id)).cloned()
    }

    /// Whether some organization sends its domains' addresses to its own identity provider.
    pub fn routes_domains(&self) -> bool {
        self.registry.orgs.read().get(&self.tenant).is_some_and(|o| o.routed > 0)
    }

    pub fn list_organizations(&self) -> Vec<Arc<Organization>> {
        let mut v: Vec<_> = self.registry.orgs.read().get(&self.tenant).map(|o| o.by_id.values().cloned().collect()).unwrap_or_default();
        v.sort_by(|a, b| a.slug.cmp(&b.slug));
        v
    }

    /// `user_id`'s roles in organization `org_id`, if a member.
    pub fn membership(&self, org_id: &str, user_id: &str) -> Option<Roles> {
        self.registry.orgs.read().get(&self.tenant)?.members.get(user_id)?.get(org_id).cloned()
    }

    /// The organizations `user_id` belongs to, by slug, with the roles in each.
    pub fn memberships(&self, user_id: &str) -> Vec<(Arc<Organization>, Roles)> {
        let all = self.registry.orgs.read();
        let Some(orgs) = all.get(&self.tenant) else { return Vec::new() };
        let mut v: Vec<_> = orgs
            .members
            .get(user_id)
            .into_iter()
            .flatten()
            .filter_map(|(org, roles)| Some((orgs.by_id.get(org)?.clone(), roles.clone())))
            .collect();
        v.sort_by(|a, b| a.0.slug.cmp(&b.0.slug));
        v
    }

    /// The members of `org_id`, by user id, with their roles.
    pub fn members(&self, org_id: &str) -> Vec<(String, Roles)> {
        let all = self.registry.orgs.read();
        let Some(orgs) = all.get(&self.tenant) else { return Vec::new() };
        let mut v: Vec<_> = orgs.members.iter().filter_map(|(u, of)| Some((u.clone(), of.get(org_id)?.clone()))).collect();
        v.sort();
        v
    }

    /// Save `org` (made by `Organization::new` or changed by `apply`) into this tenant.
    pub async fn save_organization(&self, mut org: Organization) -> StoreResult<Result<(), Conflict>> {
        org.tenant = self.tenant;
        let _order = self.registry.order.lock().await;
        let o = org.clone();
        let saved = self.registry.db.write(move |sql| organizations::save(sql, &o)).await?;
        if saved.is_ok() {
            self.registry.orgs.write().entry(self.tenant).or_default().put(org);
        }
        Ok(saved)
    }

    pub async fn delete_organization(&self, id: &str) -> StoreResult<bool> {
        let _order = self.registry.order.lock().await;
        let (tenant, owned) = (self.tenant, id.to_string());
        let existed = self.registry.db.write(move |sql| organizations::delete(sql, tenant, &owned)).await?;
        if let Some(o) = self.registry.orgs.write().get_mut(&self.tenant) {
            o.remove(id);
        }
        Ok(existed)
    }

    /// Make `user_id` a member of `org_id` with `roles` (or change their roles).
    pub async fn put_member(&self, org_id: &str, user_id: &str, roles: Vec<String>) -> StoreResult<()> {
        let _order = self.registry.order.lock().await;
        let (tenant, o, u) = (self.tenant, org_id.to_string(), user_id.to_string());
        let member = self.registry.db.write(move |sql| organizations::put_member(sql, tenant, &o, &u, &roles)).await?;
        self.registry.orgs.write().entry(self.tenant).or_default().set_member(org_id, user_id, Some(member));
        Ok(())
    }

    pub async fn remove_member(&self, org_id: &str, user_id: &str) -> StoreResult<bool> {
        let _order = self.registry.order.lock().await;
        let (tenant, o, u) = (self.tenant, org_id.to_string(), user_id.to_string());
        let existed = self.registry.db.write(move |sql| organizations::remove_member(sql, tenant, &o, &u)).await?;
        if let Some(o) = self.registry.orgs.write().get_mut(&self.tenant) {
            o.set_member(org_id, user_id, None);
        }
        Ok(existed)
    }
}
