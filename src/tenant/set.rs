//! The tenants a deployment serves, and which one a request addresses.
//!
//! One structure for all of them (maps by id, slug and host behind one lock), swapped whole
//! when a tenant is created, changed or deleted, so that a request takes one read lock and one
//! hash probe. A deployment with no tenant besides the default pays one atomic load: the
//! resolver then answers the default tenant without looking at the request.

use super::{Tenant, TenantId};
use axum::extract::Request;
use parking_lot::RwLock;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The metadata URLs served with the issuer's path after them (`endpoints::discovery`):
/// RFC 8414 §3's, and OpenID's name in the same form (which MCP clients try).
const PATH_INSERTED_METADATA: [&str; 2] = [crate::endpoints::discovery::AS_METADATA, crate::endpoints::discovery::OPENID_CONFIGURATION];

#[derive(Default)]
struct Set {
    /// Every built tenant but the default, active or disabled (a disabled tenant is not
    /// served, but its outbox work still finds its keys).
    by_id: HashMap<TenantId, Arc<Tenant>>,
    /// Active tenants served under the deployment's issuer at `/t/{slug}`.
    by_slug: HashMap<String, Arc<Tenant>>,
    /// Active tenants served at their own hosts.
    by_host: HashMap<String, Arc<Tenant>>,
}

/// The tenants this deployment serves: the default (from the settings) and those of the
/// `tenants` table (`rows`), built by `Tenant::build`.
pub struct Tenants {
    default: Arc<Tenant>,
    set: RwLock<Arc<Set>>,
    /// Whether any tenant besides the default is served: when not, `resolve` reads nothing.
    others: AtomicBool,
    /// Held from reading a tenant's row to putting what was built from it: a rebuild told of
    /// an earlier change (another node's notification, the change log) that read the row
    /// before a later change committed cannot put its stale tenant over the later one's.
    rebuilding: tokio::sync::Mutex<()>,
}

impl Tenants {
    pub fn new(default: Tenant) -> Self {
        Self { default: Arc::new(default), set: RwLock::new(Arc::default()), others: AtomicBool::new(false), rebuilding: tokio::sync::Mutex::new(()) }
    }

    pub fn default_tenant(&self) -> &Arc<Tenant> {
        &self.default
    }

    /// The tenant numbered `id`, if it exists (work that names its tenant: outbox rows).
    pub fn get(&self, id: TenantId) -> Option<Arc<Tenant>> {
        match id.is_default() {
            true => Some(self.default.clone()),
            false => self.set.read().by_id.get(&id).cloned(),
        }
    }

    /// Every tenant (for work done outside a request: key refreshes, outboxes).
    pub fn all(&self) -> Vec<Arc<Tenant>> {
        let set = self.set.read().clone();
        std::iter::once(self.default.clone()).chain(set.by_id.values().cloned()).collect()
    }

    /// Put `tenants` in (each replacing the one of its id), each served when its flag says
    /// it is active.
    pub fn put(&self, tenants: Vec<(Arc<Tenant>, bool)>) {
        let ids: Vec<TenantId> = tenants.iter().map(|(t, _)| t.id).collect();
        self.edit(&ids, |set| {
            for (tenant, active) in tenants {
                set.by_id.insert(tenant.id, tenant.clone());
                if active {
                    match tenant.hosts.is_empty() {
                        true => drop(set.by_slug.insert(tenant.slug.clone(), tenant)),
                        false => tenant.hosts.iter().for_each(|h| drop(set.by_host.insert(h.clone(), tenant.clone()))),
                    }
                }
            }
        });
    }

    /// Take tenant `id` out (deleted).
    pub fn remove(&self, id: TenantId) {
        self.edit(&[id], |_| {});
    }

    /// Apply `f` to a copy of the maps without the tenants `ids`, then swap it in: a request
    /// sees the maps before or after, never half of a change.
    fn edit(&self, ids: &[TenantId], f: impl FnOnce(&mut Set)) {
        let ids: HashSet<TenantId> = ids.iter().copied().collect();
        let mut lock = self.set.write();
        let keep = |t: &Arc<Tenant>| !ids.contains(&t.id);
        let mut set = Set {
            by_id: lock.by_id.iter().filter(|(_, t)| keep(t)).map(|(k, t)| (*k, t.clone())).collect(),
            by_slug: lock.by_slug.iter().filter(|(_, t)| keep(t)).map(|(k, t)| (k.clone(), t.clone())).collect(),
            by_host: lock.by_host.iter().filter(|(_, t)| keep(t)).map(|(k, t)| (k.clone(), t.clone())).collect(),
        };
        f(&mut set);
        self.others.store(!set.by_id.is_empty(), Ordering::Release);
        *lock = Arc::new(set);
    }

    /// Re-read every tenant's key set (the cache refresh, and what promotes a rotated key).
    pub async fn refresh_keys(&self) -> anyhow::Result<()> {
        for t in self.all() {
            t.keys.refresh().await?;
        }
        Ok(())
    }

    /// The tenant a request addresses: by its host when that is a tenant's, else by a path
    /// `/t/{slug}[/…]` (rewritten without the prefix, so that the router and the endpoints
    /// know nothing of tenants), else the default. `None` for a slug no active tenant has:
    /// never the default by chance.
    pub fn resolve(&self, req: &mut Request) -> Option<Arc<Tenant>> {
        if !self.others.load(Ordering::Acquire) {
            return Some(self.default.clone());
        }
        let set = self.set.read().clone();
        if !set.by_host.is_empty() {
            if let Some(t) = host(req).and_then(|h| lookup(&set.by_host, h)) {
                return Some(t.clone());
            }
        }
        let path = req.uri().path();
        if let Some(rest) = path.strip_prefix("/t/") {
            let (slug, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            let tenant = set.by_slug.get(slug)?.clone();
            let tail = if tail.is_empty() { "/" } else { tail };
            let path_and_query = match req.uri().query() {
                Some(q) => format!("{tail}?{q}"),
                None => tail.to_string(),
            };
            let mut parts = req.uri().clone().into_parts();
            parts.path_and_query = Some(path_and_query.parse().ok()?);
            *req.uri_mut() = axum::http::Uri::from_parts(parts).ok()?;
            return Some(tenant);
        }
        // The path-inserted metadata of a path tenant: `/.well-known/oauth-authorization-server`
        // (or `/.well-known/openid-configuration`) then the issuer's path (`{base}/t/{slug}`).
        // The endpoint checks the rest against the issuer it is given.
        for name in PATH_INSERTED_METADATA {
            if let Some((_, slug)) = path.strip_prefix(name).and_then(|issuer_path| issuer_path.rsplit_once("/t/")) {
                return set.by_slug.get(slug).cloned();
            }
        }
        Some(self.default.clone())
    }
}

/// The host a request names (HTTP/2's `:authority`, else `Host`).
fn host(req: &Request) -> Option<&str> {
    req.uri().authority().map(|a| a.as_str()).or_else(|| req.headers().get(axum::http::header::HOST)?.to_str().ok())
}

/// The tenant served at `host`. Hosts are stored lower-case; a request may name one in any
/// case. A stored host with a port matches that port only; one without matches the name at
/// any port (`auth.acme.example:8443` reaches `auth.acme.example`: a server behind a proxy
/// on another port, or reached directly on its own), so the exact form is tried first.
fn lookup<'a>(map: &'a HashMap<String, Arc<Tenant>>, host: &str) -> Option<&'a Arc<Tenant>> {
    let lower;
    let host = match host.bytes().any(|b| b.is_ascii_uppercase()) {
        false => host,
        true => {
            lower = host.to_ascii_lowercase();
            &lower
        }
    };
    map.get(host).or_else(|| map.get(without_port(host)?))
}

/// `host` without its port (`auth.example:8443` -> `auth.example`, `[::1]:8443` -> `[::1]`),
/// `None` when it names none. An IPv6 literal's colons are not a port's: only the colon after
/// its closing bracket is, and a bare `::1` (not a valid `Host`, but a client may send it)
/// has none.
fn without_port(host: &str) -> Option<&str> {
    let (name, port) = host.rsplit_once(':')?;
    let is_port = !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit());
    (is_port && (!name.contains(':') || name.ends_with(']'))).then_some(name)
}

impl Tenants {
    /// Build every tenant of the table (at start).
    pub async fn load(&self, shared: super::Shared<'_>) -> anyhow::Result<()> {
        let rows = shared.db.read(super::rows::load_all).await?;
        let mut built = Vec::with_capacity(rows.len());
        for row in rows {
            if let Some(active) = served(row.state) {
                built.push((Arc::new(Tenant::build(shared, &row, &self.default).await?), active));
            }
        }
        self.put(built);
        Ok(())
    }

    /// Build again every tenant whose row changed (a PostgreSQL node back from a lost
    /// connection, which may have missed notifications), and take out those gone.
    pub async fn reload_changed(&self, shared: super::Shared<'_>) -> anyhow::Result<()> {
        let rows = shared.db.read(super::rows::load_all).await?;
        let current = self.set.read().clone();
        // Sets of ids, so that the comparison stays linear in the tenants (it was a scan of
        // every served tenant per row: a million comparisons with 1,000 tenants).
        let in_table: HashSet<TenantId> = rows.iter().map(|r| r.id).collect();
        let served_ids: HashSet<TenantId> = current.by_slug.values().chain(current.by_host.values()).map(|t| t.id).collect();
        let mut stale: Vec<TenantId> = current.by_id.keys().filter(|id| !in_table.contains(id)).copied().collect();
        for row in &rows {
            let served_now = served_ids.contains(&row.id);
            let same = current.by_id.get(&row.id).is_some_and(|t| t.updated_at == row.updated_at && Some(served_now) == served(row.state));
            if !same {
                stale.push(row.id);
            }
        }
        for id in stale {
            self.reload(shared, id).await?;
        }
        Ok(())
    }

    /// Build tenant `id` again from its row, after a change made here or on another node (or
    /// take it out, deleted).
    pub async fn reload(&self, shared: super::Shared<'_>, id: TenantId) -> anyhow::Result<()> {
        if id.is_default() {
            return Ok(());
        }
        let _one_at_a_time = self.rebuilding.lock().await;
        let row = shared.db.read(move |sql| super::rows::load_one(sql, id)).await?;
        match row.as_ref().and_then(|r| Some((r, served(r.state)?))) {
            Some((row, active)) => self.put(vec![(Arc::new(Tenant::build(shared, row, &self.default).await?), active)]),
            None => self.remove(id),
        }
        Ok(())
    }
}

/// Whether a tenant in `state` is built (`Some`) and served (`true`). A disabled tenant is
/// built but not served: its outbox work still needs its keys.
fn served(state: super::rows::State) -> Option<bool> {
    match state {
        super::rows::State::Active => Some(true),
        super::rows::State::Disabled => Some(false),
        super::rows::State::Deleting | super::rows::State::Deleted => None,
    }
}

#[cfg(test)]
mod tests {
    use super::without_port;

    #[test]
    fn a_port_is_taken_off_names_and_bracketed_addresses_only() {
        for (host, name) in [("auth.example:8443", Some("auth.example")), ("auth.example", None), ("127.0.0.1:80", Some("127.0.0.1")), ("[::1]:8443", Some("[::1]")), ("[::1]", None), ("::1", None), ("[::1]:", None), ("auth.example:x1", None)] {
            assert_eq!(without_port(host), name, "{host}");
        }
    }
}
