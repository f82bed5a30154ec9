//! Clients, users and consents: kept in memory so that no request reads the database for them,
//! written through the database, and kept in step with edits made elsewhere: on SQLite (the
//! CLI in another process) by polling the `registry_changes` log; on PostgreSQL (other nodes,
//! the CLI) by the notifications `record_change` sends, with a full reload on reconnect.

pub mod clients;
pub mod documents;
pub mod initial_access;
pub mod password_policy;
pub mod users;

pub use clients::{Client, ClientInput, ClientMetadata};
pub use users::{User, UserInput};

use crate::db::{Database, Dialect, Sql, StoreResult};
use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

/// Tell every other holder of a registry that `kind`/`id` changed: SQLite appends to the
/// `registry_changes` log (polled); PostgreSQL notifies the other nodes at commit.
pub fn record_change(sql: &mut dyn Sql, kind: &str, id: &str) -> StoreResult<()> {
    match sql.dialect() {
        Dialect::Sqlite => {
            sql.execute("INSERT INTO registry_changes (kind, id) VALUES (?1, ?2)", crate::params![kind, id]).map(|_| ())
        }
        Dialect::Postgres => crate::db::notify(sql, crate::db::postgres::CHANNEL_REGISTRY, &format!("{kind}:{id}")),
    }
}

pub fn save_consent(sql: &mut dyn Sql, user_id: &str, client_id: &str, scope: &str) -> StoreResult<()> {
    sql.execute(
        "INSERT INTO consents (user_id, client_id, scope, updated_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT(user_id, client_id) DO UPDATE SET scope = excluded.scope, updated_at = excluded.updated_at",
        crate::params![user_id, client_id, scope, crate::util::now() as i64],
    )?;
    record_change(sql, "consent", &consent_key(user_id, client_id))
}

pub fn delete_consent(sql: &mut dyn Sql, user_id: &str, client_id: &str) -> StoreResult<bool> {
    let n = sql.execute("DELETE FROM consents WHERE user_id = ?1 AND client_id = ?2", crate::params![user_id, client_id])?;
    record_change(sql, "consent", &consent_key(user_id, client_id))?;
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

#[derive(Default)]
struct Clients {
    by_id: HashMap<String, Arc<Client>>,
    /// How many clients allow each CORS origin. A preflight names no client, so it is
    /// answered from this set; counts keep an update O(origins of one client), not O(clients).
    cors_origins: HashMap<String, usize>,
}

impl Clients {
    fn put(&mut self, client: Client) {
        self.remove(client.id());
        for o in client.cors_origins() {
            *self.cors_origins.entry(o.clone()).or_default() += 1;
        }
        self.by_id.insert(client.id().to_string(), Arc::new(client));
    }

    fn remove(&mut self, id: &str) -> bool {
        let Some(old) = self.by_id.remove(id) else { return false };
        for o in old.cors_origins() {
            if let Some(n) = self.cors_origins.get_mut(o) {
                *n -= 1;
                if *n == 0 {
                    self.cors_origins.remove(o);
                }
            }
        }
        true
    }
}

#[derive(Default)]
struct Users {
    by_id: HashMap<String, Arc<User>>,
    by_username: HashMap<String, String>,
    by_email: HashMap<String, String>,
}

impl Users {
    fn put(&mut self, user: User) {
        self.remove(&user.id);
        self.by_username.insert(users::login_key(&user.username), user.id.clone());
        if let Some(e) = user.email() {
            self.by_email.insert(users::login_key(e), user.id.clone());
        }
        self.by_id.insert(user.id.clone(), Arc::new(user));
    }

    fn remove(&mut self, id: &str) {
        if let Some(old) = self.by_id.remove(id) {
            self.by_username.remove(&users::login_key(&old.username));
            if let Some(e) = old.email() {
                self.by_email.remove(&users::login_key(e));
            }
        }
    }
}

/// Everything in the registry tables, read in one transaction.
struct Snapshot {
    last_seq: i64,
    clients: Vec<Client>,
    users: Vec<User>,
    consents: Vec<(String, String)>,
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
        .query("SELECT user_id, client_id, scope FROM consents", &[])?
        .iter()
        .map(|r| Ok((consent_key(&r.text(0)?, &r.text(1)?), r.text(2)?)))
        .collect::<StoreResult<_>>()?;
    Ok(Snapshot { last_seq, clients, users, consents })
}

/// The current state of one changed entity.
enum Change {
    /// Boxed: a client is several times the size of the other variants.
    Client(String, Option<Box<Client>>),
    User(String, Option<User>),
    Consent(String, Option<String>),
    Unknown,
}

fn read_change(sql: &mut dyn Sql, kind: &str, id: &str) -> StoreResult<Change> {
    Ok(match kind {
        "client" => Change::Client(id.to_string(), clients::load_one(sql, id)?.map(Box::new)),
        "user" => Change::User(id.to_string(), users::load_one(sql, id)?),
        "consent" => {
            let Some((u, c)) = id.split_once('\u{1f}') else { return Ok(Change::Unknown) };
            let row = sql.query_opt("SELECT scope FROM consents WHERE user_id = ?1 AND client_id = ?2", crate::params![u, c])?;
            Change::Consent(id.to_string(), row.map(|r| r.text(0)).transpose()?)
        }
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
    clients: RwLock<Clients>,
    users: RwLock<Users>,
    consents: RwLock<HashMap<String, String>>,
    last_seq: AtomicI64,
    db: Database,
    /// Dynamically registered clients this node has recorded as used: each is written once
    /// (`note_client_used`). At most the dynamically registered clients (`registration_max_clients`).
    noted_used: parking_lot::Mutex<std::collections::HashSet<String>>,
}

impl Registry {
    pub async fn load(db: Database) -> anyhow::Result<Self> {
        let registry = Self {
            clients: RwLock::default(),
            order: tokio::sync::Mutex::new(()),
            users: RwLock::default(),
            consents: RwLock::default(),
            last_seq: AtomicI64::new(0),
            db,
            noted_used: parking_lot::Mutex::default(),
        };
        registry.resync().await?;
        Ok(registry)
    }

    /// Replace everything with the database's current state (start, and a PostgreSQL node
    /// that may have missed notifications while disconnected).
    pub async fn resync(&self) -> StoreResult<()> {
        let _order = self.order.lock().await;
        let snap = self.db.read(read_snapshot).await?;
        let mut users = Users::default();
        for u in snap.users {
            users.put(u);
        }
        let mut clients = Clients::default();
        for c in snap.clients {
            clients.put(c);
        }
        *self.clients.write() = clients;
        *self.users.write() = users;
        *self.consents.write() = snap.consents.into_iter().collect();
        self.last_seq.store(snap.last_seq, Ordering::Release);
        Ok(())
    }

    pub fn client(&self, client_id: &str) -> Option<Arc<Client>> {
        self.clients.read().by_id.get(client_id).cloned()
    }

    /// Whether some client allows `origin` for CORS (what a preflight is checked against; the
    /// request itself is then checked against its own client).
    pub fn is_cors_origin(&self, origin: &str) -> bool {
        self.clients.read().cors_origins.contains_key(origin)
    }

    pub fn user(&self, id: &str) -> Option<Arc<User>> {
        self.users.read().by_id.get(id).cloned()
    }

    /// A user named as people name one in a filter: by id, else by username or e-mail.
    pub fn find_user(&self, typed: &str) -> Option<Arc<User>> {
        self.user(typed).or_else(|| self.user_by_login(typed))
    }

    /// The user a login form names, by username or e-mail (case-insensitive).
    pub fn user_by_login(&self, login: &str) -> Option<Arc<User>> {
        let key = users::login_key(login);
        let users = self.users.read();
        let id = users.by_username.get(&key).or_else(|| users.by_email.get(&key))?;
        users.by_id.get(id).cloned()
    }

    pub fn consented_scope(&self, user_id: &str, client_id: &str) -> Option<String> {
        self.consents.read().get(&consent_key(user_id, client_id)).cloned()
    }

    pub fn list_clients(&self) -> Vec<Arc<Client>> {
        let mut v: Vec<_> = self.clients.read().by_id.values().cloned().collect();
        v.sort_by(|a, b| a.id().cmp(b.id()));
        v
    }

    pub fn list_users(&self) -> Vec<Arc<User>> {
        let mut v: Vec<_> = self.users.read().by_id.values().cloned().collect();
        v.sort_by(|a, b| a.username.cmp(&b.username));
        v
    }

    pub async fn save_client(&self, client: Client) -> StoreResult<()> {
        let _order = self.order.lock().await;
        let c = client.clone();
        self.db.write(move |sql| clients::save(sql, &c)).await?;
        self.clients.write().put(client);
        Ok(())
    }

    /// Save a dynamically registered client, spending one use of `initial_token` (if given),
    /// if fewer than `max` registered clients exist: the count, the spending and the insert
    /// are one transaction, serialised across nodes, so that concurrent registrations cannot
    /// overshoot the bound. Nothing is saved unless `Registered::Saved` is answered.
    pub async fn register_client(&self, client: Client, initial_token: Option<String>, max: usize) -> StoreResult<Registered> {
        let _order = self.order.lock().await;
        let c = client.clone();
        let outcome = self
            .db
            .write(move |sql| {
                sql.lock_exclusive(crate::db::sql::AppLock::Registration)?;
                let held = sql.query("SELECT COUNT(*) FROM clients WHERE registration_token_hash IS NOT NULL", &[])?[0].i64(0)?;
                if held as usize >= max {
                    return Ok(Registered::Full);
                }
                if let Some(t) = initial_token {
                    if !initial_access::spend(sql, &t)? {
                        return Ok(Registered::BadToken);
                    }
                }
                clients::save(sql, &c).map(|()| Registered::Saved)
            })
            .await?;
        if outcome == Registered::Saved {
            self.clients.write().put(client);
        }
        Ok(outcome)
    }

    /// A dynamically registered client was issued tokens (`/token`): record it the first
    /// time, so that `expire_unused_clients` keeps it. One write per client in its life (per
    /// node), none for the operator's clients or one loaded as used; a failed write is only
    /// logged (the request goes on, and the next use tries again). Takes the client the
    /// request already holds: no second lookup on the token path.
    pub async fn note_client_used(&self, client: &Client) {
        let client_id = client.id();
        if !client.is_dynamic() || client.used || !self.noted_used.lock().insert(client_id.to_string()) {
            return;
        }
        let (id, t) = (client_id.to_string(), crate::util::now());
        if let Err(e) = self.db.write(move |sql| clients::mark_used(sql, &id, t)).await {
            tracing::warn!(error = %e, client = client_id, "cannot record a client's first use");
            self.noted_used.lock().remove(client_id);
        }
    }

    /// Delete the dynamically registered clients registered at least `ttl` seconds ago and
    /// never used since (`registration_unused_client_ttl`); returns their ids.
    pub async fn expire_unused_clients(&self, ttl: u64) -> StoreResult<Vec<String>> {
        let _order = self.order.lock().await;
        let registered_by = crate::util::now().saturating_sub(ttl);
        let ids = self.db.write(move |sql| clients::delete_unused(sql, registered_by)).await?;
        for id in &ids {
            self.consents.write().retain(|k, _| !k.ends_with(&format!("\u{1f}{id}")));
            self.clients.write().remove(id);
            self.noted_used.lock().remove(id);
        }
        Ok(ids)
    }

    pub async fn delete_client(&self, client_id: &str) -> StoreResult<bool> {
        let _order = self.order.lock().await;
        let id = client_id.to_string();
        self.db.write(move |sql| clients::delete(sql, &id)).await?;
        self.consents.write().retain(|k, _| !k.ends_with(&format!("\u{1f}{client_id}")));
        Ok(self.clients.write().remove(client_id))
    }

    pub async fn save_user(&self, user: User) -> StoreResult<()> {
        let _order = self.order.lock().await;
        let u = user.clone();
        self.db.write(move |sql| users::save(sql, &u)).await?;
        self.users.write().put(user);
        Ok(())
    }

    /// Save `user` only if `first` (in the same transaction) says so: a one-time token spent
    /// and the change it allows commit together, or neither does (an error, a token already
    /// spent). `Ok(false)`: `first` said no; nothing was written.
    pub async fn save_user_if(&self, user: User, first: impl FnOnce(&mut dyn crate::db::Sql) -> StoreResult<bool> + Send + 'static) -> StoreResult<bool> {
        let _order = self.order.lock().await;
        let u = user.clone();
        let saved = self.db.write(move |sql| if first(sql)? { users::save(sql, &u).map(|()| true) } else { Ok(false) }).await?;
        if saved {
            self.users.write().put(user);
        }
        Ok(saved)
    }

    pub async fn delete_user(&self, id: &str) -> StoreResult<bool> {
        let _order = self.order.lock().await;
        let owned = id.to_string();
        self.db.write(move |sql| users::delete(sql, &owned)).await?;
        self.consents.write().retain(|k, _| !k.starts_with(&format!("{id}\u{1f}")));
        let existed = self.users.read().by_id.contains_key(id);
        self.users.write().remove(id);
        Ok(existed)
    }

    pub async fn remember_consent(&self, user_id: &str, client_id: &str, scope: &str) -> StoreResult<()> {
        let _order = self.order.lock().await;
        let (u, c, s) = (user_id.to_string(), client_id.to_string(), scope.to_string());
        self.db.write(move |sql| save_consent(sql, &u, &c, &s)).await?;
        self.consents.write().insert(consent_key(user_id, client_id), scope.to_string());
        Ok(())
    }

    /// Every consent of `user_id`, with when it was last given, newest first: the account
    /// page's list (read from the database, which alone keeps the time; the primary key's
    /// leading `user_id` finds them).
    pub async fn consents_of(&self, user_id: &str) -> StoreResult<Vec<ConsentInfo>> {
        let u = user_id.to_string();
        self.db
            .read(move |sql| {
                sql.query("SELECT client_id, scope, updated_at FROM consents WHERE user_id = ?1 ORDER BY updated_at DESC, client_id", crate::params![u])?
                    .iter()
                    .map(|r| Ok(ConsentInfo { client_id: r.text(0)?, scope: r.text(1)?, updated_at: r.i64(2)?.max(0) as u64 }))
                    .collect()
            })
            .await
    }

    /// Forget what `user_id` consented to for `client_id`; whether there was anything.
    pub async fn forget_consent(&self, user_id: &str, client_id: &str) -> StoreResult<bool> {
        let _order = self.order.lock().await;
        let (u, c) = (user_id.to_string(), client_id.to_string());
        let existed = self.db.write(move |sql| delete_consent(sql, &u, &c)).await?;
        self.consents.write().remove(&consent_key(user_id, client_id));
        Ok(existed)
    }

    /// SQLite: re-read every entity changed since the last call (by anyone, the CLI included).
    pub async fn poll_changes(&self) -> StoreResult<usize> {
        let _order = self.order.lock().await;
        let from = self.last_seq.load(Ordering::Acquire);
        let changes = self
            .db
            .read(move |sql| {
                let log = sql.query("SELECT seq, kind, id FROM registry_changes WHERE seq > ?1 ORDER BY seq", crate::params![from])?;
                log.iter().map(|r| Ok((r.i64(0)?, read_change(sql, &r.text(1)?, &r.text(2)?)?))).collect::<StoreResult<Vec<_>>>()
            })
            .await?;
        let n = changes.len();
        if let Some((seq, _)) = changes.last() {
            self.last_seq.store(*seq, Ordering::Release);
        }
        changes.into_iter().for_each(|(_, change)| self.apply(change));
        Ok(n)
    }

    /// PostgreSQL: one `kind:id` notification from another node (or the CLI).
    pub async fn apply_notification(&self, payload: &str) -> StoreResult<()> {
        let _order = self.order.lock().await;
        let Some((kind, id)) = payload.split_once(':') else { return Ok(()) };
        let (kind, id) = (kind.to_string(), id.to_string());
        let change = self.db.read(move |sql| read_change(sql, &kind, &id)).await?;
        self.apply(change);
        Ok(())
    }

    fn apply(&self, change: Change) {
        match change {
            Change::Client(_, Some(c)) => self.clients.write().put(*c),
            Change::Client(id, None) => {
                self.clients.write().remove(&id);
            }
            Change::User(_, Some(u)) => self.users.write().put(u),
            Change::User(id, None) => self.users.write().remove(&id),
            Change::Consent(key, Some(scope)) => drop(self.consents.write().insert(key, scope)),
            Change::Consent(key, None) => drop(self.consents.write().remove(&key)),
            Change::Unknown => {}
        }
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
        assert!(registry.client(client.id()).is_none());
        assert_eq!(registry.poll_changes().await.unwrap(), 1);
        assert!(registry.client(client.id()).is_some());
        clients::delete(cli, client.id()).unwrap();
        registry.poll_changes().await.unwrap();
        assert!(registry.client(client.id()).is_none());
    }

    fn spa(id: &str, redirect: &str) -> Client {
        let input = ClientInput { client_id: Some(id.into()), redirect_uris: Some(vec![redirect.into()]), ..Default::default() };
        clients::new_client(input, &crate::keys::Vault::from_key([7; 32])).unwrap().0
    }

    #[test]
    fn the_cors_origin_set_follows_every_client_change() {
        let mut c = Clients::default();
        c.put(spa("a", "https://shared.example/a"));
        c.put(spa("b", "https://shared.example/b"));
        c.put(spa("c", "https://c.example/cb"));
        let has = |c: &Clients, o: &str| c.cors_origins.contains_key(o);
        assert!(has(&c, "https://shared.example") && has(&c, "https://c.example"));
        // Replacing a client drops the origins it no longer has.
        c.put(spa("c", "https://c2.example/cb"));
        assert!(!has(&c, "https://c.example") && has(&c, "https://c2.example"));
        // A shared origin stays while any client still has it.
        assert!(c.remove("a"));
        assert!(has(&c, "https://shared.example"));
        assert!(c.remove("b") && !c.remove("b"));
        assert!(!has(&c, "https://shared.example"));
        assert_eq!(c.cors_origins.len(), 1);
    }
}
