//! One tenant's registry: every lookup and change a request makes goes through this view
//! (`Registry::of`, or `Issuer::registry` in a handler), so that it reads and writes its own
//! tenant's clients, users and consents only. What it saves is saved into its tenant, whatever
//! the value said: a client or user cannot be moved between tenants through a view.

use super::*;

#[derive(Clone, Copy)]
pub struct TenantRegistry<'a> {
    pub(super) registry: &'a Registry,
    pub(super) tenant: TenantId,
}

impl<'a> TenantRegistry<'a> {
    pub(super) fn new(registry: &'a Registry, tenant: TenantId) -> Self {
        Self { registry, tenant }
    }

    pub fn tenant(&self) -> TenantId {
        self.tenant
    }

    pub fn client(&self, client_id: &str) -> Option<Arc<Client>> {
        self.registry.clients.read().get(&self.tenant)?.by_id.get(client_id).cloned()
    }

    /// The SAML service provider whose entity id is `entity_id`.
    pub fn saml_provider(&self, entity_id: &str) -> Option<Arc<Client>> {
        self.registry.clients.read().get(&self.tenant)?.by_entity_id.get(entity_id).cloned()
    }

    /// Whether some client of the tenant allows `origin` for CORS (what a preflight is checked
    /// against; the request itself is then checked against its own client).
    pub fn is_cors_origin(&self, origin: &str) -> bool {
        self.registry.clients.read().get(&self.tenant).is_some_and(|c| c.cors_origins.contains_key(origin))
    }

    pub fn user(&self, id: &str) -> Option<Arc<User>> {
        self.registry.users.read().get(&self.tenant)?.by_id.get(id).cloned()
    }

    /// A user named as people name one in a filter: by id, else by username or e-mail.
    pub fn find_user(&self, typed: &str) -> Option<Arc<User>> {
        self.user(typed).or_else(|| self.user_by_login(typed))
    }

    /// The user a login form names, by username or e-mail (case-insensitive).
    pub fn user_by_login(&self, login: &str) -> Option<Arc<User>> {
        let key = users::login_key(login);
        let all = self.registry.users.read();
        let users = all.get(&self.tenant)?;
        users.by_username.get(&key).or_else(|| users.by_email.get(&key)).cloned()
    }

    pub fn consented_scope(&self, user_id: &str, client_id: &str) -> Option<String> {
        self.registry.consents.read().get(&self.tenant)?.get(&consent_key(user_id, client_id)).cloned()
    }

    pub fn list_clients(&self) -> Vec<Arc<Client>> {
        let mut v: Vec<_> = self.registry.clients.read().get(&self.tenant).map(|c| c.by_id.values().cloned().collect()).unwrap_or_default();
        v.sort_by(|a, b| a.id().cmp(b.id()));
        v
    }

    pub fn list_users(&self) -> Vec<Arc<User>> {
        let mut v: Vec<_> = self.registry.users.read().get(&self.tenant).map(|u| u.by_id.values().cloned().collect()).unwrap_or_default();
        v.sort_by(|a, b| a.username.cmp(&b.username));
        v
    }

    pub async fn save_client(&self, mut client: Client) -> StoreResult<()> {
        client.tenant = self.tenant;
        let _order = self.registry.order.lock().await;
        let c = client.clone();
        self.registry.db.write(move |sql| clients::save(sql, &c)).await?;
        self.registry.clients.write().entry(self.tenant).or_default().put(client);
        Ok(())
    }

    /// Save a dynamically registered client, spending one use of `initial_token` (if given),
    /// if fewer than `max` registered clients exist in the tenant: the count, the spending and
    /// the insert are one transaction, serialised across nodes, so that concurrent
    /// registrations cannot overshoot the bound. Nothing is saved unless `Registered::Saved`
    /// is answered.
    pub async fn register_client(&self, mut client: Client, initial_token: Option<String>, max: usize) -> StoreResult<Registered> {
        client.tenant = self.tenant;
        let tenant = self.tenant;
        let _order = self.registry.order.lock().await;
        let c = client.clone();
        let outcome = self
            .registry
            .db
            .write(move |sql| {
                sql.lock_exclusive(crate::db::sql::AppLock::Registration)?;
                let held = sql.query(
                    "SELECT COUNT(*) FROM clients WHERE tenant_id = ?1 AND registration_token_hash IS NOT NULL",
                    crate::params![tenant],
                )?[0]
                    .i64(0)?;
                if held as usize >= max {
                    return Ok(Registered::Full);
                }
                if let Some(t) = initial_token {
                    if !initial_access::spend(sql, tenant, &t)? {
                        return Ok(Registered::BadToken);
                    }
                }
                clients::save(sql, &c).map(|()| Registered::Saved)
            })
            .await?;
        if outcome == Registered::Saved {
            self.registry.clients.write().entry(self.tenant).or_default().put(client);
        }
        Ok(outcome)
    }

    /// A dynamically registered client was issued tokens (`/token`): record it the first
    /// time, so that `expire_unused_clients` keeps it. One write per client in its life (per
    /// node), none for the operator's clients or one loaded as used; a failed write is only
    /// logged (the request goes on, and the next use tries again). Takes the client the
    /// request already holds: no second lookup on the token path.
    pub async fn note_client_used(&self, client: &Client) {
        if !client.is_dynamic() || client.used {
            return;
        }
        // Only a dynamic client not yet known as used gets this far: the key is made for it
        // alone, not on every token request.
        let client_id = client.id();
        let key = (self.tenant, client_id.to_string());
        if !self.registry.noted_used.lock().insert(key.clone()) {
            return;
        }
        let (tenant, id, t) = (self.tenant, client_id.to_string(), crate::util::now());
        if let Err(e) = self.registry.db.write(move |sql| clients::mark_used(sql, tenant, &id, t)).await {
            tracing::warn!(error = %e, client = client_id, "cannot record a client's first use");
            self.registry.noted_used.lock().remove(&key);
        }
    }

    pub async fn delete_client(&self, client_id: &str) -> StoreResult<bool> {
        let _order = self.registry.order.lock().await;
        let (tenant, id) = (self.tenant, client_id.to_string());
        self.registry.db.write(move |sql| clients::delete(sql, tenant, &id)).await?;
        Ok(self.registry.forget_client(self.tenant, client_id))
    }

    pub async fn save_user(&self, mut user: User) -> StoreResult<()> {
        user.tenant = self.tenant;
        let _order = self.registry.order.lock().await;
        let u = user.clone();
        self.registry.db.write(move |sql| users::save(sql, &u)).await?;
        self.registry.users.write().entry(self.tenant).or_default().put(user);
        Ok(())
    }

    /// Save `user` only if `first` (in the same transaction) says so: a one-time token spent
    /// and the change it allows commit together, or neither does (an error, a token already
    /// spent). `Ok(false)`: `first` said no; nothing was written.
    pub async fn save_user_if(&self, mut user: User, first: impl FnOnce(&mut dyn crate::db::Sql) -> StoreResult<bool> + Send + 'static) -> StoreResult<bool> {
        user.tenant = self.tenant;
        let _order = self.registry.order.lock().await;
        let u = user.clone();
        let saved = self.registry.db.write(move |sql| if first(sql)? { users::save(sql, &u).map(|()| true) } else { Ok(false) }).await?;
        if saved {
            self.registry.users.write().entry(self.tenant).or_default().put(user);
        }
        Ok(saved)
    }

    pub async fn delete_user(&self, id: &str) -> StoreResult<bool> {
        let _order = self.registry.order.lock().await;
        let (tenant, owned) = (self.tenant, id.to_string());
        // The groups whose members (through nesting) lose the user: provisioned groups are
        // sent again (`provisioning`), in the deletion's transaction.
        let groups = self.effective(id).map(|e| e.groups.to_vec()).unwrap_or_default();
        self.registry
            .db
            .write(move |sql| {
                users::delete(sql, tenant, &owned)?;
                crate::provisioning::enqueue_groups(sql, tenant, &groups)
            })
            .await?;
        let prefix = format!("{id}\u{1f}");
        if let Some(c) = self.registry.consents.write().get_mut(&self.tenant) {
            c.retain(|k, _| !k.starts_with(&prefix));
        }
        if let Some(o) = self.registry.orgs.write().get_mut(&self.tenant) {
            o.members.remove(id);
        }
        if let Some(d) = self.registry.directories.write().get_mut(&self.tenant) {
            d.remove_user(id);
        }
        let mut users = self.registry.users.write();
        let Some(users) = users.get_mut(&self.tenant) else { return Ok(false) };
        let existed = users.by_id.contains_key(id);
        users.remove(id);
        Ok(existed)
    }

    pub async fn remember_consent(&self, user_id: &str, client_id: &str, scope: &str) -> StoreResult<()> {
        let _order = self.registry.order.lock().await;
        let (tenant, u, c, s) = (self.tenant, user_id.to_string(), client_id.to_string(), scope.to_string());
        self.registry.db.write(move |sql| save_consent(sql, tenant, &u, &c, &s)).await?;
        self.registry.consents.write().entry(self.tenant).or_default().insert(consent_key(user_id, client_id), scope.to_string());
        Ok(())
    }

    /// Every consent of `user_id`, with when it was last given, newest first: the account
    /// page's list (read from the database, which alone keeps the time; the primary key's
    /// leading `(tenant_id, user_id)` finds them).
    pub async fn consents_of(&self, user_id: &str) -> StoreResult<Vec<ConsentInfo>> {
        let (tenant, u) = (self.tenant, user_id.to_string());
        self.registry
            .db
            .read(move |sql| {
                sql.query(
                    "SELECT client_id, scope, updated_at FROM consents WHERE tenant_id = ?1 AND user_id = ?2 ORDER BY updated_at DESC, client_id",
                    crate::params![tenant, u],
                )?
                .iter()
                .map(|r| Ok(ConsentInfo { client_id: r.text(0)?, scope: r.text(1)?, updated_at: r.i64(2)?.max(0) as u64 }))
                .collect()
            })
            .await
    }

    /// Forget what `user_id` consented to for `client_id`; whether there was anything.
    pub async fn forget_consent(&self, user_id: &str, client_id: &str) -> StoreResult<bool> {
        let _order = self.registry.order.lock().await;
        let (tenant, u, c) = (self.tenant, user_id.to_string(), client_id.to_string());
        let existed = self.registry.db.write(move |sql| delete_consent(sql, tenant, &u, &c)).await?;
        if let Some(c) = self.registry.consents.write().get_mut(&self.tenant) {
            c.remove(&consent_key(user_id, client_id));
        }
        Ok(existed)
    }
}
