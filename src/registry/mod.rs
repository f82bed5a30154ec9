//! Clients, users and consents: kept in memory so that no request reads the database for them,
//! written through the journal, and kept in step with edits made by other processes (the CLI,
//! other nodes) by polling the `registry_changes` log.

pub mod clients;
pub mod users;

pub use clients::{Client, ClientInput, ClientMetadata};
pub use users::{User, UserInput};

use crate::db::{Journal, StoreResult};
use parking_lot::RwLock;
use rusqlite::{Connection, OptionalExtension};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

pub fn record_change(conn: &Connection, kind: &str, id: &str) -> rusqlite::Result<()> {
    conn.execute("INSERT INTO registry_changes (kind, id) VALUES (?1, ?2)", (kind, id)).map(|_| ())
}

pub fn save_consent(conn: &Connection, user_id: &str, client_id: &str, scope: &str) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO consents (user_id, client_id, scope, updated_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT(user_id, client_id) DO UPDATE SET scope = excluded.scope, updated_at = excluded.updated_at",
        (user_id, client_id, scope, crate::util::now() as i64),
    )?;
    record_change(conn, "consent", &consent_key(user_id, client_id))
}

fn consent_key(user_id: &str, client_id: &str) -> String {
    format!("{user_id}\u{1f}{client_id}")
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
        self.by_username.insert(user.username.to_lowercase(), user.id.clone());
        if let Some(e) = user.email() {
            self.by_email.insert(e.to_lowercase(), user.id.clone());
        }
        self.by_id.insert(user.id.clone(), Arc::new(user));
    }

    fn remove(&mut self, id: &str) {
        if let Some(old) = self.by_id.remove(id) {
            self.by_username.remove(&old.username.to_lowercase());
            if let Some(e) = old.email() {
                self.by_email.remove(&e.to_lowercase());
            }
        }
    }
}

pub struct Registry {
    clients: RwLock<HashMap<String, Arc<Client>>>,
    users: RwLock<Users>,
    consents: RwLock<HashMap<String, String>>,
    last_seq: AtomicI64,
    journal: Journal,
}

impl Registry {
    pub fn load(conn: &Connection, journal: Journal) -> anyhow::Result<Self> {
        // Read the log position first: a change racing with the load is then re-applied, not missed.
        let last_seq: i64 = conn.query_row("SELECT COALESCE(MAX(seq), 0) FROM registry_changes", [], |r| r.get(0))?;
        let clients = clients::load_all(conn)?.into_iter().map(|c| (c.id().to_string(), Arc::new(c))).collect();
        let mut users = Users::default();
        for u in users::load_all(conn)? {
            users.put(u);
        }
        let mut consents = HashMap::new();
        let mut stmt = conn.prepare("SELECT user_id, client_id, scope FROM consents")?;
        for row in stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?)))? {
            let (u, c, s) = row?;
            consents.insert(consent_key(&u, &c), s);
        }
        Ok(Self {
            clients: RwLock::new(clients),
            users: RwLock::new(users),
            consents: RwLock::new(consents),
            last_seq: AtomicI64::new(last_seq),
            journal,
        })
    }

    pub fn client(&self, client_id: &str) -> Option<Arc<Client>> {
        self.clients.read().get(client_id).cloned()
    }

    pub fn user(&self, id: &str) -> Option<Arc<User>> {
        self.users.read().by_id.get(id).cloned()
    }

    /// The user a login form names, by username or e-mail (case-insensitive).
    pub fn user_by_login(&self, login: &str) -> Option<Arc<User>> {
        let key = login.trim().to_lowercase();
        let users = self.users.read();
        let id = users.by_username.get(&key).or_else(|| users.by_email.get(&key))?;
        users.by_id.get(id).cloned()
    }

    pub fn consented_scope(&self, user_id: &str, client_id: &str) -> Option<String> {
        self.consents.read().get(&consent_key(user_id, client_id)).cloned()
    }

    pub fn list_clients(&self) -> Vec<Arc<Client>> {
        let mut v: Vec<_> = self.clients.read().values().cloned().collect();
        v.sort_by(|a, b| a.id().cmp(b.id()));
        v
    }

    pub fn list_users(&self) -> Vec<Arc<User>> {
        let mut v: Vec<_> = self.users.read().by_id.values().cloned().collect();
        v.sort_by(|a, b| a.username.cmp(&b.username));
        v
    }

    pub async fn save_client(&self, client: Client) -> StoreResult<()> {
        let c = client.clone();
        self.journal.write(move |conn| clients::save(conn, &c)).await?;
        self.clients.write().insert(client.id().to_string(), Arc::new(client));
        Ok(())
    }

    pub async fn delete_client(&self, client_id: &str) -> StoreResult<bool> {
        let id = client_id.to_string();
        self.journal.write(move |conn| clients::delete(conn, &id).map(|_| ())).await?;
        self.consents.write().retain(|k, _| !k.ends_with(&format!("\u{1f}{client_id}")));
        Ok(self.clients.write().remove(client_id).is_some())
    }

    pub async fn save_user(&self, user: User) -> StoreResult<()> {
        let u = user.clone();
        self.journal.write(move |conn| users::save(conn, &u)).await?;
        self.users.write().put(user);
        Ok(())
    }

    pub async fn delete_user(&self, id: &str) -> StoreResult<bool> {
        let owned = id.to_string();
        self.journal.write(move |conn| users::delete(conn, &owned).map(|_| ())).await?;
        self.consents.write().retain(|k, _| !k.starts_with(&format!("{id}\u{1f}")));
        let existed = self.users.read().by_id.contains_key(id);
        self.users.write().remove(id);
        Ok(existed)
    }

    pub async fn remember_consent(&self, user_id: &str, client_id: &str, scope: &str) -> StoreResult<()> {
        let (u, c, s) = (user_id.to_string(), client_id.to_string(), scope.to_string());
        self.journal.write(move |conn| save_consent(conn, &u, &c, &s)).await?;
        self.consents.write().insert(consent_key(user_id, client_id), scope.to_string());
        Ok(())
    }

    /// Re-read every entity changed since the last call (by anyone). Off the request path.
    pub fn apply_changes(&self, conn: &Connection) -> rusqlite::Result<usize> {
        let from = self.last_seq.load(Ordering::Acquire);
        crate::metrics::METRICS.db_reads.inc();
        let mut stmt = conn.prepare("SELECT seq, kind, id FROM registry_changes WHERE seq > ?1 ORDER BY seq")?;
        let changes: Vec<(i64, String, String)> =
            stmt.query_map([from], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect::<Result<_, _>>()?;
        for (_, kind, id) in &changes {
            match kind.as_str() {
                "client" => match clients::load_one(conn, id)? {
                    Some(c) => drop(self.clients.write().insert(id.clone(), Arc::new(c))),
                    None => drop(self.clients.write().remove(id)),
                },
                "user" => match users::load_one(conn, id)? {
                    Some(u) => self.users.write().put(u),
                    None => self.users.write().remove(id),
                },
                "consent" => {
                    let Some((u, c)) = id.split_once('\u{1f}') else { continue };
                    let scope: Option<String> = conn
                        .query_row("SELECT scope FROM consents WHERE user_id = ?1 AND client_id = ?2", (u, c), |r| r.get(0))
                        .optional()?;
                    match scope {
                        Some(s) => drop(self.consents.write().insert(id.clone(), s)),
                        None => drop(self.consents.write().remove(id)),
                    }
                }
                _ => {}
            }
        }
        if let Some((seq, _, _)) = changes.last() {
            self.last_seq.store(*seq, Ordering::Release);
        }
        Ok(changes.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn edits_by_another_connection_are_picked_up() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::db::open(dir.path(), "NORMAL").unwrap();
        let reader = crate::db::open_reader(dir.path()).unwrap();
        let registry = Registry::load(&reader, Journal::start(conn)).unwrap();
        // Another process (the CLI) creates a client directly in the database.
        let cli = crate::db::open(dir.path(), "NORMAL").unwrap();
        let (client, _) = clients::new_client(ClientInput {
            redirect_uris: Some(vec!["https://rp.example/cb".into()]),
            ..Default::default()
        })
        .unwrap();
        clients::save(&cli, &client).unwrap();
        assert!(registry.client(client.id()).is_none());
        assert_eq!(registry.apply_changes(&reader).unwrap(), 1);
        assert!(registry.client(client.id()).is_some());
        clients::delete(&cli, client.id()).unwrap();
        registry.apply_changes(&reader).unwrap();
        assert!(registry.client(client.id()).is_none());
    }
}
