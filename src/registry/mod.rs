//! Clients, users and consents: kept in memory so that no request reads the database for them,
//! written through the database, and kept in step with edits made elsewhere: on SQLite (the
//! CLI in another process) by polling the `registry_changes` log; on PostgreSQL (other nodes,
//! the CLI) by the notifications `record_change` sends, with a full reload on reconnect.
//!
//! Everything is its tenant's: the maps are per tenant, and a request reaches them through
//! its tenant's view (`Registry::of`, `TenantRegistry`), so that a lookup cannot find another
//! tenant's client, user or consent.

pub mod admin_credentials;
mod claims;
pub mod clients;
pub mod directory;
pub mod documents;
pub mod initial_access;
mod maps;
pub mod org_invitations;
mod org_view;
pub mod organizations;
pub mod password_policy;
mod tenant_view;
pub mod users;

pub use clients::{Client, ClientInput, ClientMetadata};
pub use tenant_view::TenantRegistry;
pub use organizations::{Organization, OrganizationInput};
pub use users::{User, UserInput};

use crate::db::{Database, Dialect, Sql, StoreResult};
use crate::tenant::TenantId;
use maps::{Clients, Users};
use organizations::{Orgs, Roles};
use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

/// Tell every other holder of a registry that `kind`/`id` of `tenant` changed: SQLite appends
/// to the `registry_changes` log (polled); PostgreSQL notifies the other nodes at commit.
pub fn record_change(sql: &mut dyn Sql, tenant: TenantId, kind: &str, id: &str) -> StoreResult<()> {
    match sql.dialect() {
        Dialect::Sqlite => sql
            .execute("INSERT INTO registry_changes (tenant_id, kind, id) VALUES (?1, ?2, ?3)", crate::params![tenant, kind, id])
            .map(|_| ()),
        Dialect::Postgres => crate::db::notify(sql, crate::db::postgres::CHANNEL_REGISTRY, &notification(tenant, kind, id)),
    }
}

/// A change's notification payload: `kind:id` for the default tenant (what nodes sent before
/// tenants, so that nodes of both versions understand each other during an upgrade), and
/// `kind/tenant:id` for any other. A kind never holds `/` or `:`; an id may hold both.
fn notification(tenant: TenantId, kind: &str, id: &str) -> String {
    match tenant.is_default() {
        true => format!("{kind}:{id}"),
        false => format!("{kind}/{}:{id}", tenant.0),
    }
}

fn parse_notification(payload: &str) -> Option<(TenantId, &str, &str)> {
    let (head, id) = payload.split_once(':')?;
    match head.split_once('/') {
        None => Some((TenantId::DEFAULT, head, id)),
        Some((kind, tenant)) => Some((TenantId(tenant.parse().ok()?), kind, id)),
    }
}

pub fn save_consent(sql: &mut dyn Sql, tenant: TenantId, user_id: &str, client_id: &str, scope: &str) -> StoreResult<()> {
    sql.execute(
        "INSERT INTO consents (tenant_id, user_id, client_id, scope, updated_at) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT(tenant_id, user_id, client_id) DO UPDATE SET scope = excluded.scope, updated_at = excluded.updated_at",
        crate::params![tenant, user_id, client_id, scope, crate::util::now() as i64],
    )?;
    record_change(sql, tenant, "consent", &consent_key(user_id, client_id))
}

pub fn delete_consent(sql: &mut dyn Sql, tenant: TenantId, user_id: &str, client_id: &str) -> StoreResult<bool> {
    let n = sql.execute(
        "DELETE FROM consents WHERE tenant_id = ?1 AND user_id = ?2 AND client_id = ?3",
        crate::params![tenant, user_id, client_id],
    )?;
    record_change(sql, tenant, "consent", &consent_key(user_id, client_id))?;
    Ok(n > 0)
}

/// A consent as the account page lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentInfo {
    pub client_id: String,
    pub scope: String,
    pub updated_at: u64,
}

fn consent_key(user_id: &str, client_id: &str) -> String {
    format!("{user_id}\u{1f}{client_id}")
}

/// Everything in the registry tables, of every tenant, read in one transaction.
struct Snapshot {
    last_seq: i64,
    clients: Vec<Client>,
    users: Vec<User>,
    consents: Vec<(TenantId, String, String)>,
    orgs: Vec<Organization>,
    members: Vec<(TenantId, String, String, Roles)>,
    directory: directory::rows::All,
}

fn read_snapshot(sql: &mut dyn Sql) -> StoreResult<Snapshot> {
    // Read the log position first: a change racing with the load is then re-applied, not missed.
    let last_seq = match sql.dialect() {
        Dialect::Sqlite => sql.query("SELECT COALESCE(MAX(seq), 0) FROM registry_changes", &[])?[0].i64(0)?,
        Dialect::Postgres => 0,
    };
    let clients = clients::load_all(sql)?;
    let users = users::load_all(sql)?;
    let consents = sql
        .query("SELECT tenant_id, user_id, client_id, scope FROM consents", &[])?
        .iter()
        .map(|r| Ok((r.tenant(0)?, consent_key(&r.text(1)?, &r.text(2)?), r.text(3)?)))
        .collect::<StoreResult<_>>()?;
    let (orgs, members) = organizations::load_all(sql)?;
    let directory = directory::rows::load_all(sql)?;
    Ok(Snapshot { last_seq, clients, users, consents, orgs, members, directory })
}

/// The current state of one changed entity of one tenant.
enum Change {
    /// Boxed: a client is several times the size of the other variants.
    Client(TenantId, String, Option<Box<Client>>),
    User(TenantId, String, Option<User>),
    Consent(TenantId, String, Option<String>),
    Organization(TenantId, String, Option<Organization>),
    /// An organization's id, a user's, and the member's roles (none: not a member).
    Member(TenantId, String, String, Option<Roles>),
    /// A group, membership, role or assignment (`directory::rows::read_change`).
    Directory(TenantId, directory::rows::Change),
    /// A tenant was created, changed or deleted: built again by `App::apply_tenant_changes`.
    Tenant(TenantId),
    Unknown,
}

fn read_change(sql: &mut dyn Sql, tenant: TenantId, kind: &str, id: &str) -> StoreResult<Change> {
    Ok(match kind {
        "client" => Change::Client(tenant, id.to_string(), clients::load_one(sql, tenant, id)?.map(Box::new)),
        "user" => Change::User(tenant, id.to_string(), users::load_one(sql, tenant, id)?),
        "consent" => {
            let Some((u, c)) = id.split_once('\u{1f}') else { return Ok(Change::Unknown) };
            let row = sql.query_opt(
                "SELECT scope FROM consents WHERE tenant_id = ?1 AND user_id = ?2 AND client_id = ?3",
                crate::params![tenant, u, c],
            )?;
            Change::Consent(tenant, id.to_string(), row.map(|r| r.text(0)).transpose()?)
        }
        "organization" => Change::Organization(tenant, id.to_string(), organizations::load_one(sql, tenant, id)?),
        "member" => {
            let Some((o, u)) = id.split_once('\u{1f}') else { return Ok(Change::Unknown) };
            Change::Member(tenant, o.to_string(), u.to_string(), organizations::load_member(sql, tenant, o, u)?)
        }
        "tenant" => Change::Tenant(tenant),
        "group" | "group_member" | "app_role" | "role_assignment" => match directory::rows::read_change(sql, tenant, kind, id)? {
            Some(c) => Change::Directory(tenant, c),
            None => Change::Unknown,
        },
        _ => Change::Unknown,
    })
}

/// What became of a dynamic registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registered {
    Saved,
    /// The initial access token is unknown, expired or used up.
    BadToken,
    /// `registration_max_clients` are registered already.
    Full,
}

pub struct Registry {
    /// Held by every change to memory that follows a database read or write (a local save or
    /// delete, a notification or poll applied), so that they apply in the order their reads
    /// and writes happened. Without it, a notification's read of a row, overtaken by a local
    /// delete or save of it, put the stale row back into memory until the next notification:
    /// a deleted user answered for a moment, a new password's token cutoff could be undone.
    order: tokio::sync::Mutex<()>,
    /// Per tenant: one map probe by a number, then the tenant's own maps, so that a lookup
    /// by a borrowed id allocates nothing.
    clients: RwLock<HashMap<TenantId, Clients>>,
    users: RwLock<HashMap<TenantId, Users>>,
    /// `consent_key(user, client)` -> scope, per tenant.
    consents: RwLock<HashMap<TenantId, HashMap<String, String>>>,
    /// Organizations and their memberships, per tenant.
    orgs: RwLock<HashMap<TenantId, Orgs>>,
    /// Groups, roles and each user's effective sets, per tenant.
    directories: RwLock<HashMap<TenantId, directory::memory::Directory>>,
    last_seq: AtomicI64,
    db: Database,
    /// Dynamically registered clients this node has recorded as used: each is written once
    /// (`note_client_used`). At most the dynamically registered clients (`registration_max_clients`).
    noted_used: parking_lot::Mutex<std::collections::HashSet<(TenantId, String)>>,
    /// Tenants changed since `take_tenant_changes` last looked (at most every tenant).
    tenant_changes: parking_lot::Mutex<std::collections::BTreeSet<TenantId>>,
}

impl Registry {
    pub async fn load(db: Database) -> anyhow::Result<Self> {
        let registry = Self {
            clients: RwLock::default(),
            order: tokio::sync::Mutex::new(()),
            users: RwLock::default(),
            consents: RwLock::default(),
            orgs: RwLock::default(),
            directories: RwLock::default(),
            last_seq: AtomicI64::new(0),
            db,
            noted_used: parking_lot::Mutex::default(),
            tenant_changes: parking_lot::Mutex::default(),
        };
        registry.resync().await?;
        Ok(registry)
    }

    /// `tenant`'s clients, users and consents: what every lookup and change goes through.
    pub fn of(&self, tenant: TenantId) -> TenantRegistry<'_> {
        TenantRegistry::new(self, tenant)
    }

    /// Replace everything with the database's current state (start, and a PostgreSQL node
    /// that may have missed notifications while disconnected).
    pub async fn resync(&self) -> StoreResult<()> {
        let _order = self.order.lock().await;
        let snap = self.db.read(read_snapshot).await?;
        let mut users: HashMap<TenantId, Users> = HashMap::new();
        for u in snap.users {
            users.entry(u.tenant).or_default().put(u);
        }
        let mut clients: HashMap<TenantId, Clients> = HashMap::new();
        for c in snap.clients {
            clients.entry(c.tenant).or_default().put(c);
        }
        let mut consents: HashMap<TenantId, HashMap<String, String>> = HashMap::new();
        for (tenant, key, scope) in snap.consents {
            consents.entry(tenant).or_default().insert(key, scope);
        }
        let mut orgs: HashMap<TenantId, Orgs> = HashMap::new();
        for o in snap.orgs {
            orgs.entry(o.tenant).or_default().put(o);
        }
        for (tenant, org, user, roles) in snap.members {
            orgs.entry(tenant).or_default().set_member(&org, &user, Some(roles));
        }
        let directories = directory::memory::Directory::build(snap.directory);
        *self.clients.write() = clients;
        *self.users.write() = users;
        *self.orgs.write() = orgs;
        *self.directories.write() = directories;
        *self.consents.write() = consents;
        self.last_seq.store(snap.last_seq, Ordering::Release);
        Ok(())
    }

    /// Delete the dynamically registered clients (of every tenant) registered at least `ttl`
    /// seconds ago and never used since (`registration_unused_client_ttl`); returns them.
    pub async fn expire_unused_clients(&self, ttl: u64) -> StoreResult<Vec<(TenantId, String)>> {
        let _order = self.order.lock().await;
        let registered_by = crate::util::now().saturating_sub(ttl);
        let gone = self.db.write(move |sql| clients::delete_unused(sql, registered_by)).await?;
        for (tenant, id) in &gone {
            self.forget_client(*tenant, id);
        }
        Ok(gone)
    }

    /// Drop a deleted client from memory, with its consents.
    fn forget_client(&self, tenant: TenantId, id: &str) -> bool {
        let suffix = format!("\u{1f}{id}");
        if let Some(c) = self.consents.write().get_mut(&tenant) {
            c.retain(|k, _| !k.ends_with(&suffix));
        }
        self.noted_used.lock().remove(&(tenant, id.to_string()));
        if let Some(d) = self.directories.write().get_mut(&tenant) {
            d.remove_client(id);
        }
        self.clients.write().get_mut(&tenant).is_some_and(|c| c.remove(id))
    }

    /// SQLite: re-read every entity changed since the last call (by anyone, the CLI included).
    pub async fn poll_changes(&self) -> StoreResult<usize> {
        let _order = self.order.lock().await;
        let from = self.last_seq.load(Ordering::Acquire);
        let changes = self
            .db
            .read(move |sql| {
                let log = sql.query("SELECT seq, tenant_id, kind, id FROM registry_changes WHERE seq > ?1 ORDER BY seq", crate::params![from])?;
                log.iter()
                    .map(|r| Ok((r.i64(0)?, read_change(sql, r.tenant(1)?, &r.text(2)?, &r.text(3)?)?)))
                    .collect::<StoreResult<Vec<_>>>()
            })
            .await?;
        let n = changes.len();
        if let Some((seq, _)) = changes.last() {
            self.last_seq.store(*seq, Ordering::Release);
        }
        changes.into_iter().for_each(|(_, change)| self.apply(change));
        Ok(n)
    }

    /// PostgreSQL: one change notification from another node (or the CLI).
    pub async fn apply_notification(&self, payload: &str) -> StoreResult<()> {
        let _order = self.order.lock().await;
        let Some((tenant, kind, id)) = parse_notification(payload) else { return Ok(()) };
        let (kind, id) = (kind.to_string(), id.to_string());
        let change = self.db.read(move |sql| read_change(sql, tenant, &kind, &id)).await?;
        self.apply(change);
        Ok(())
    }

    fn apply(&self, change: Change) {
        match change {
            Change::Client(tenant, _, Some(c)) => self.clients.write().entry(tenant).or_default().put(*c),
            Change::Client(tenant, id, None) => drop(self.forget_client(tenant, &id)),
            Change::User(tenant, _, Some(u)) => self.users.write().entry(tenant).or_default().put(u),
            Change::User(tenant, id, None) => {
                if let Some(u) = self.users.write().get_mut(&tenant) {
                    u.remove(&id);
                }
                if let Some(o) = self.orgs.write().get_mut(&tenant) {
                    o.members.remove(&id);
                }
                if let Some(d) = self.directories.write().get_mut(&tenant) {
                    d.remove_user(&id);
                }
            }
            Change::Organization(tenant, _, Some(o)) => self.orgs.write().entry(tenant).or_default().put(o),
            Change::Organization(tenant, id, None) => {
                if let Some(o) = self.orgs.write().get_mut(&tenant) {
                    o.remove(&id);
                }
            }
            Change::Member(tenant, org, user, roles) => self.orgs.write().entry(tenant).or_default().set_member(&org, &user, roles),
            Change::Consent(tenant, key, Some(scope)) => drop(self.consents.write().entry(tenant).or_default().insert(key, scope)),
            Change::Consent(tenant, key, None) => {
                if let Some(c) = self.consents.write().get_mut(&tenant) {
                    c.remove(&key);
                }
            }
            Change::Directory(tenant, c) => apply_directory(self.directories.write().entry(tenant).or_default(), c),
            Change::Tenant(tenant) => drop(self.tenant_changes.lock().insert(tenant)),
            Change::Unknown => {}
        }
    }

    /// The tenants changed since the last call (by this node, the CLI or another node).
    pub fn take_tenant_changes(&self) -> Vec<TenantId> {
        std::mem::take(&mut *self.tenant_changes.lock()).into_iter().collect()
    }

    /// Note that tenant `id` changed (this node's own change, built at once).
    pub fn tenant_changed(&self, id: TenantId) {
        self.tenant_changes.lock().insert(id);
    }

    /// Drop a deleted tenant's clients, users and consents from memory.
    pub fn forget_tenant(&self, id: TenantId) {
        self.clients.write().remove(&id);
        self.users.write().remove(&id);
        self.consents.write().remove(&id);
        self.orgs.write().remove(&id);
        self.directories.write().remove(&id);
        self.noted_used.lock().retain(|(t, _)| *t != id);
    }
}

fn apply_directory(d: &mut directory::memory::Directory, change: directory::rows::Change) {
    use directory::rows::Change as C;
    match change {
        C::Group(_, Some(g)) => d.put_group(g),
        C::Group(id, None) => d.remove_group(&id),
        C::Member(group, p, present) => d.set_member(&group, p, present),
        C::Role(client, role, description) => d.set_role(&client, &role, description),
        C::Assignment(client, role, p, present) => d.set_assignment(&client, &role, p, present),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn edits_by_another_connection_are_picked_up() {
        let dir = tempfile::tempdir().unwrap();
        let config = crate::config::Config { data_dir: dir.path().into(), ..Default::default() };
        let registry = Registry::load(Database::open(&config).await.unwrap()).await.unwrap();
        // Another process (the CLI) creates a client directly in the database.
        let cli = crate::db::open(dir.path(), "NORMAL").unwrap();
        let cli = &mut crate::db::SqliteSql(&cli);
        let (client, _) = clients::new_client(ClientInput {
            redirect_uris: Some(vec!["https://rp.example/cb".into()]),
            ..Default::default()
        }, &crate::keys::Vault::from_key([7; 32]))
        .unwrap();
        clients::save(cli, &client).unwrap();
        let default = registry.of(TenantId::DEFAULT);
        assert!(default.client(client.id()).is_none());
        assert_eq!(registry.poll_changes().await.unwrap(), 1);
        assert!(default.client(client.id()).is_some());
        // The same id in another tenant is another client, and its changes are that tenant's.
        let mut other = client.clone();
        other.tenant = TenantId(3);
        clients::save(cli, &other).unwrap();
        registry.poll_changes().await.unwrap();
        assert_eq!(registry.of(TenantId(3)).client(client.id()).unwrap().tenant, TenantId(3));
        clients::delete(cli, TenantId::DEFAULT, client.id()).unwrap();
        registry.poll_changes().await.unwrap();
        assert!(default.client(client.id()).is_none());
        assert!(registry.of(TenantId(3)).client(client.id()).is_some(), "deleting one tenant's client leaves the other's");
        assert!(registry.of(TenantId(4)).client(client.id()).is_none());
    }

    #[test]
    fn change_notifications_name_the_tenant_and_read_as_before_for_the_default() {
        assert_eq!(notification(TenantId::DEFAULT, "client", "https://a.example/c"), "client:https://a.example/c");
        assert_eq!(parse_notification("client:https://a.example/c"), Some((TenantId::DEFAULT, "client", "https://a.example/c")));
        let n = notification(TenantId(12), "consent", "u:1\u{1f}c");
        assert_eq!(parse_notification(&n), Some((TenantId(12), "consent", "u:1\u{1f}c")));
        assert_eq!(parse_notification("client/x:id"), None);
        assert_eq!(parse_notification("client"), None);
    }
}
