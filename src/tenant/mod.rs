//! Tenants: the issuers one deployment serves (issue 31; docs/design/tenants.md).
//!
//! `App` is what every tenant shares (database, stores, limiters, fetcher, outboxes, the
//! key-encryption key); a `Tenant` is what differs per issuer (its URL, signing keys, pages,
//! upstream providers, password policy, passkey relying party, Authrim's own first-party
//! clients). A request reaches a handler as an `Issuer`: the shared `App` and the tenant the
//! request addressed, resolved once by the edge layer (`http::edge`) and never read from a
//! global, so that code which needs a per-tenant value cannot reach it without the tenant.
//!
//! Every deployment has the default tenant (id 0, slug `default`, issuer = the `issuer`
//! setting); the others are rows of the `tenants` table (`rows`), served at
//! `{issuer}/t/{slug}` or at hosts of their own (`set::Tenants::resolve`). Every key of data
//! carries the tenant: the stores' keys (`stores::shard::key`), every table's `tenant_id`, the
//! registry's per-tenant maps.

use crate::app::{App, AppState};
use crate::config::Config;
use crate::keys::KeyManager;
use crate::registry::Client;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use std::collections::HashMap;
use std::sync::Arc;

pub mod overrides;
pub mod rows;
pub mod sealed;
mod set;
pub use set::Tenants;

/// A tenant's number: what keys, shards and rows carry. Never reused, so that a stale
/// artefact can never name a newer tenant.
/// Stored as a bare number, and left out of a record when it is the default tenant (so rows
/// written before tenants read back as the default tenant's, and its rows do not grow).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct TenantId(pub u32);

impl TenantId {
    /// The tenant every deployment has, into which single-tenant data migrates.
    pub const DEFAULT: TenantId = TenantId(0);

    /// For `#[serde(skip_serializing_if = "TenantId::is_default")]`.
    pub fn is_default(&self) -> bool {
        *self == Self::DEFAULT
    }
}

/// What differs per issuer, resolved once when the tenant is loaded.
pub struct Tenant {
    pub id: TenantId,
    /// The tenant's name in URLs (`/t/{slug}`); `default` for the default tenant.
    pub slug: String,
    /// The hosts it is served at (its issuer is the first's); empty for a path tenant and the
    /// default.
    pub hosts: Vec<String>,
    /// When its row last changed (0 for the default tenant), to see which tenants a node
    /// that missed notifications must build again.
    pub updated_at: u64,
    /// The issuer identifier, without a trailing slash.
    pub issuer: String,
    /// The issuer's path (`/tenant1` for `https://host/tenant1`, empty at the root): the
    /// prefix of every URL a page, form, redirect, asset or cookie path of this tenant names.
    pub base: String,
    pub keys: KeyManager,
    /// The security profile its clients are held to (`profile`).
    pub profile: crate::profile::Profile,
    /// Templates, messages and assets of the pages (`ui`).
    /// Shared with the default tenant unless the tenant's overrides change it.
    pub ui: Arc<crate::ui::Ui>,
    /// WebAuthn (`factors::passkey`); `None` when passkeys are off.
    pub passkeys: Option<crate::factors::passkey::Passkeys>,
    /// What a new password must be (`registry::password_policy`).
    pub password_policy: Arc<crate::registry::password_policy::PasswordPolicy>,
    /// Upstream identity providers users may sign in with (`identity`).
    pub upstreams: crate::identity::upstream::Upstreams,
    /// LDAP and Active Directory directories the password form checks names against
    /// (`identity::ldap`): the deployment's for the default tenant, a tenant's own from its
    /// settings.
    pub directories: crate::identity::ldap::Sources,
    /// Resource servers (RFC 8707) tokens may be asked for (`resources`): the deployment's
    /// for the default tenant, a tenant's own when its settings list them. Copied once
    /// when the tenant is built, so the token path reads a slice and allocates nothing.
    pub resource_servers: Vec<crate::config::agents::ResourceServer>,
    /// Sign-up, second-factor and mail settings the tenant may set (`overrides`).
    pub policies: Policies,
    /// Seals interaction state into forms and URLs (`http::sealed`), under the tenant's own
    /// key: a form, pushed request or logout confirmation of one tenant opens at no other.
    pub sealer: crate::http::sealed::Sealer,
    /// Keys pairwise subject identifiers (`tokens::subject`).
    pub pairwise_key: [u8; 32],
    /// The HMAC key of `session_state` and the session-state cookie (`check_session`).
    pub session_state_key: aws_lc_rs::hmac::Key,
    /// Authrim's own pages as clients of this issuer (`endpoints::first_party`), by id: their
    /// redirect URIs are under this issuer.
    pub first_party: HashMap<&'static str, Arc<Client>>,
}

impl Tenant {
    /// The default tenant, from the deployment's settings.
    pub fn default_from(config: &Config, keys: KeyManager, vault: &crate::keys::Vault) -> anyhow::Result<Self> {
        let id = TenantId::DEFAULT;
        Ok(Self {
            id,
            // A sealed form carries a request of at most max_authorization_request_bytes (as
            // the validated, re-encoded request), so anything much larger is not ours.
            sealer: crate::http::sealed::Sealer::new(
                vault.derive_for(id, "authrim interaction state v1"),
                4 * config.max_authorization_request_bytes + 1024,
            ),
            pairwise_key: vault.derive_for(id, "authrim pairwise subject v1"),
            session_state_key: aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, &vault.derive_for(id, "authrim session state v1")),
            slug: "default".into(),
            hosts: Vec::new(),
            updated_at: 0,
            issuer: config.base_url().to_string(),
            base: config.base_path().to_string(),
            profile: config.profile(),
            first_party: crate::endpoints::first_party::ALL.iter().map(|f| (f.client_id, Arc::new(f.client(config.base_url())))).collect(),
            passkeys: crate::factors::passkey::Passkeys::from_config(config, vault, id)?,
            password_policy: Arc::new(crate::registry::password_policy::PasswordPolicy::from_config(config)?),
            upstreams: crate::identity::upstream::Upstreams::new(config)?,
            directories: crate::identity::ldap::Sources::new(&config.ldap_directories)?,
            resource_servers: config.resource_servers.clone(),
            policies: Policies::of(config, false),
            ui: Arc::new(load_ui(config, &config.product_name)?),
            keys,
        })
    }

    /// A tenant of the `tenants` table, from the deployment's settings and its row's
    /// overrides; `default` lends what the tenant does not change (pages, password policy).
    /// Creates the tenant's first signing keys when it has none.
    pub async fn build(shared: Shared<'_>, row: &rows::TenantRow, default: &Tenant) -> anyhow::Result<Self> {
        let Shared { config, db, vault } = shared;
        let id = row.id;
        let (issuer, base) = issuer_and_base(config, row);
        let settings = &row.settings;
        // The deployment's settings with the tenant's on top, checked when they were stored.
        let effective = settings.effective(config);
        let ui = match settings.product_name.is_some() || settings.default_locale.is_some() || settings.theme.is_some() {
            // Checked when stored; a theme changed since may lack the tenant's language: the
            // tenant is then served with the deployment's pages rather than not at all (and
            // no other tenant fails to start with it).
            true => default.ui.for_tenant(&effective.product_name, &effective.default_locale, settings.look()).map(Arc::new).unwrap_or_else(|e| {
                tracing::error!(tenant = row.slug, error = %e, "a tenant's pages fall back to the deployment's");
                default.ui.clone()
            }),
            false => default.ui.clone(),
        };
        let password_policy = match settings.password_min_length {
            Some(n) => Arc::new(default.password_policy.with_min_length(n)),
            None => default.password_policy.clone(),
        };
        let upstreams = default.upstreams.for_tenant(config, own_upstreams(settings, vault, &row.slug))?;
        let passkeys = match row.hosts.is_empty() {
            true => crate::factors::passkey::Passkeys::for_path_tenant(default.passkeys.as_ref(), vault, id),
            false => crate::factors::passkey::Passkeys::for_tenant(config, vault, id, Some(&issuer))?,
        };
        Ok(Self {
            id,
            sealer: crate::http::sealed::Sealer::new(vault.derive_for(id, "authrim interaction state v1"), 4 * config.max_authorization_request_bytes + 1024),
            pairwise_key: vault.derive_for(id, "authrim pairwise subject v1"),
            session_state_key: aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, &vault.derive_for(id, "authrim session state v1")),
            slug: row.slug.clone(),
            hosts: row.hosts.clone(),
            updated_at: row.updated_at,
            first_party: crate::endpoints::first_party::ALL.iter().map(|f| (f.client_id, Arc::new(f.client(&issuer)))).collect(),
            issuer,
            base,
            profile: config.profile(),
            passkeys,
            password_policy,
            // Upstream providers are registered with an issuer's redirect URI: a tenant's own
            // come with its overrides, never the default tenant's.
            upstreams,
            directories: own_directories(settings, vault, &row.slug),
            resource_servers: effective.resource_servers.clone(),
            policies: Policies::of(&effective, settings.mail_from.is_some()),
            ui,
            keys: key_manager(config, db, vault, id).await?,
        })
    }

    /// The resource server registered for `uri`, if any.
    pub fn resource_server(&self, uri: &str) -> Option<&crate::config::agents::ResourceServer> {
        self.resource_servers.iter().find(|r| r.uri == uri)
    }

    /// One of Authrim's own pages as a client (`endpoints::first_party`). Their ids share a
    /// prefix, so the token endpoint's lookups of other clients pay one comparison.
    fn first_party_client(&self, client_id: &str) -> Option<Arc<Client>> {
        match client_id.starts_with("authrim-") {
            true => self.first_party.get(client_id).cloned(),
            false => None,
        }
    }
}

/// A tenant's own upstream providers, their secrets opened. One whose secret does not open
/// (the key-encryption key was changed) is left out and logged: the tenant and every other
/// stay served.
fn own_upstreams(settings: &rows::Overrides, vault: &crate::keys::Vault, slug: &str) -> Vec<crate::config::upstreams::IdentityProvider> {
    let mut out = Vec::new();
    for u in settings.identity_providers.iter().flatten() {
        match u.opened(vault, slug) {
            Ok(p) => out.push(p),
            Err(e) => tracing::error!(tenant = slug, error = %e, "a tenant's identity provider is left out"),
        }
    }
    out
}

/// A tenant's own directories, their bind passwords opened; as `own_upstreams`, one that
/// cannot be opened or built is left out and logged.
fn own_directories(settings: &rows::Overrides, vault: &crate::keys::Vault, slug: &str) -> crate::identity::ldap::Sources {
    let mut out = Vec::new();
    for d in settings.ldap_directories.iter().flatten() {
        match d.opened(vault, slug).and_then(crate::identity::ldap::LdapSource::new) {
            Ok(s) => out.push(s),
            Err(e) => tracing::error!(tenant = slug, error = %e, "a tenant's ldap directory is left out"),
        }
    }
    crate::identity::ldap::Sources::from_ldap(out)
}

/// Settings a tenant may set that are read as they are (`overrides`): sign-up, the second
/// factor every sign-in needs, the sender of its mail.
pub struct Policies {
    /// `signup`.
    pub signup: bool,
    /// `signup_required`'s fields.
    pub signup_required: Vec<String>,
    /// `signup_verify_email`.
    pub signup_verify_email: bool,
    /// `mfa_policy`, as the least level every sign-in must reach.
    pub required_level: crate::factors::Level,
    /// `mail_from` when the tenant sets its own (`None`: the deployment's sender).
    pub mail_from: Option<lettre::message::Mailbox>,
}

impl Policies {
    /// From (effective) settings; `own_sender` when `mail_from` is the tenant's.
    fn of(config: &Config, own_sender: bool) -> Self {
        // Checked when stored (`Overrides::validate`): a sender that does not parse is the
        // deployment's, never a tenant that cannot be built.
        let mail_from = match (own_sender, &config.mail_from) {
            (true, Some(f)) => f.parse().inspect_err(|e| tracing::error!(mail_from = f, error = %e, "a tenant's sender is the deployment's")).ok(),
            _ => None,
        };
        Self {
            signup: config.signup,
            signup_required: config.signup_required.split_whitespace().map(str::to_string).collect(),
            signup_verify_email: config.signup_verify_email,
            required_level: config.required_level(),
            mail_from,
        }
    }
}

/// What building a tenant takes from the deployment.
#[derive(Clone, Copy)]
pub struct Shared<'a> {
    pub config: &'a Config,
    pub db: &'a crate::db::Database,
    pub vault: &'a Arc<crate::keys::Vault>,
}

/// A tenant's issuer and the path prefix of its URLs: `https://{host}` and no prefix for a
/// tenant at a host of its own (the deployment's scheme), else the deployment's issuer with
/// `/t/{slug}` after it.
pub fn issuer_and_base(config: &Config, row: &rows::TenantRow) -> (String, String) {
    match row.hosts.first() {
        Some(host) => {
            let scheme = if config.secure_cookies() { "https" } else { "http" };
            (format!("{scheme}://{host}"), String::new())
        }
        None => (format!("{}/t/{}", config.base_url(), row.slug), format!("{}/t/{}", config.base_path(), row.slug)),
    }
}

/// The pages of a tenant whose name is `product`.
pub fn load_ui(config: &Config, product: &str) -> anyhow::Result<crate::ui::Ui> {
    crate::ui::Ui::load_theme(config.theme_dir.as_deref(), crate::ui::ThemeCss::from_setting(&config.theme_css), product, &config.default_locale)
}

/// Tenant `id`'s signing keys, made on its first start (one per algorithm the deployment signs
/// with).
pub async fn key_manager(config: &Config, db: &crate::db::Database, vault: &Arc<crate::keys::Vault>, id: TenantId) -> anyhow::Result<KeyManager> {
    let retired_visibility = config.access_token_ttl.max(config.id_token_ttl);
    let algs = config.signing_algs()?;
    let default_alg = crate::keys::signing_alg(&config.token_signing_alg).ok_or_else(|| anyhow::anyhow!("unknown token_signing_alg"))?;
    KeyManager::init_with(db.clone(), vault.clone(), id, retired_visibility, config.key_publish_delay, &algs, default_alg).await
}

/// A request's view of the deployment: everything shared (through `Deref` to `App`) and the
/// tenant it addressed. Handlers take it as an extractor; helpers that need a per-tenant
/// value take `&Issuer`, and those that need only shared parts keep taking `&App`.
#[derive(Clone)]
pub struct Issuer {
    shared: AppState,
    pub tenant: Arc<Tenant>,
}

impl std::ops::Deref for Issuer {
    type Target = App;

    fn deref(&self) -> &App {
        &self.shared
    }
}

impl Issuer {
    pub fn new(shared: AppState, tenant: Arc<Tenant>) -> Self {
        Self { shared, tenant }
    }

    /// The default tenant's issuer (work outside a request, tests).
    pub fn default_of(shared: &AppState) -> Self {
        let tenant = shared.tenants.default_tenant().clone();
        Self { shared: shared.clone(), tenant }
    }

    /// Tenant `id`'s issuer (work outside a request that names its tenant), if it exists.
    pub fn of(shared: &AppState, id: TenantId) -> Option<Self> {
        let tenant = shared.tenants.get(id)?;
        Some(Self { shared: shared.clone(), tenant })
    }

    /// The shared part, for what outlives the request (spawned tasks) or takes it whole.
    pub fn shared(&self) -> &AppState {
        &self.shared
    }

    pub fn issuer(&self) -> &str {
        &self.tenant.issuer
    }

    /// The prefix of every URL a page or redirect names for this tenant (`Tenant::base`).
    pub fn base(&self) -> &str {
        &self.tenant.base
    }

    pub fn endpoint(&self, path: &str) -> String {
        format!("{}{}", self.tenant.issuer, path)
    }

    /// Record a security event as this tenant's (the audit log is listed per tenant).
    pub async fn audit(&self, event: crate::audit::AuditEvent) {
        self.shared.audit.record(event.tenant(self.tenant.id)).await
    }

    /// The tenant's clients, users and consents.
    pub fn registry(&self) -> crate::registry::TenantRegistry<'_> {
        self.shared.registry.of(self.tenant.id)
    }

    pub fn keys(&self) -> &KeyManager {
        &self.tenant.keys
    }

    pub fn profile(&self) -> crate::profile::Profile {
        self.tenant.profile
    }

    /// A client as known right now, without I/O: registered, or a document client seen
    /// before. Code that starts a flow uses `resolve_client`, which may fetch a document.
    pub fn client(&self, client_id: &str) -> Option<Arc<Client>> {
        if let Some(c) = self.tenant.first_party_client(client_id) {
            return Some(c);
        }
        match crate::registry::documents::is_document_id(client_id) {
            true => self.documents.cached(self.tenant.id, client_id),
            false => self.registry().client(client_id),
        }
    }

    /// The client `client_id` names: registered (`Ok(None)` if not), or a document client,
    /// fetched when not fresh in memory.
    pub async fn resolve_client(&self, client_id: &str) -> Result<Option<Arc<Client>>, crate::registry::documents::DocumentError> {
        if let Some(c) = self.tenant.first_party_client(client_id) {
            return Ok(Some(c));
        }
        match crate::registry::documents::is_document_id(client_id) {
            true => self.documents.resolve(self, client_id).await.map(Some),
            false => Ok(self.registry().client(client_id)),
        }
    }

    /// Whether tokens issued to `client_id` may still be honoured: a registered client that
    /// was not deleted, or a document client whose host the policy still accepts.
    pub fn client_is_live(&self, client_id: &str) -> bool {
        if self.tenant.first_party_client(client_id).is_some() {
            return true;
        }
        match crate::registry::documents::is_document_id(client_id) {
            true => crate::registry::documents::check_url(self, client_id).is_ok(),
            false => self.registry().client(client_id).is_some(),
        }
    }

    /// Why passkeys are off (`None` when they are on), for the pages that would offer them.
    pub fn passkeys_off(&self) -> Option<crate::factors::passkey::Off> {
        self.tenant.passkeys.is_none().then(|| crate::factors::passkey::Off::of(&self.config))
    }

    /// The request's issuer from its parts, as the edge layer resolved it.
    pub fn from_parts(parts: &Parts, shared: &AppState) -> Result<Self, axum::response::Response> {
        Self::from_extensions(&parts.extensions, shared)
    }

    /// The same for extractors that take the whole request (forms).
    pub fn from_extensions(extensions: &axum::http::Extensions, shared: &AppState) -> Result<Self, axum::response::Response> {
        match extensions.get::<Arc<Tenant>>() {
            Some(t) => Ok(Self { shared: shared.clone(), tenant: t.clone() }),
            // A route outside the edge layer: a bug of ours, never the default tenant by chance.
            None => Err(axum::response::IntoResponse::into_response(crate::error::OAuthError::server_error("the request's tenant was not resolved"))),
        }
    }
}

impl FromRequestParts<AppState> for Issuer {
    type Rejection = axum::response::Response;

    async fn from_request_parts(parts: &mut Parts, shared: &AppState) -> Result<Self, Self::Rejection> {
        Self::from_parts(parts, shared)
    }
}

/// Rows removed per table per transaction when a tenant is deleted (`rows::purge_batch`).
const PURGE_BATCH: i64 = 500;

/// Remove deleted tenants' rows, a batch at a time (called every second by the
/// housekeeping, so a deletion a restart interrupted goes on). A tenant whose rows are all gone
/// is `deleted`: its id and slug stay taken.
pub async fn purge_deleted(app: &App) {
    let ids = match app.db.read(rows::deleting).await {
        Ok(ids) => ids,
        Err(e) => return tracing::warn!(error = %e, "tenant deletion: cannot read the tenants"),
    };
    for id in ids {
        app.tenants.remove(id);
        app.registry.forget_tenant(id);
        match app.db.write(move |sql| rows::purge_batch(sql, id, PURGE_BATCH)).await {
            Ok(0) => {
                tracing::info!(tenant = id.0, "tenant deleted");
                app.audit.record(crate::audit::AuditEvent::new("tenant_deleted").tenant(TenantId::DEFAULT).detail(serde_json::json!({ "tenant_id": id.0 }))).await;
            }
            Ok(n) => tracing::debug!(tenant = id.0, rows = n, "tenant deletion: removed a batch"),
            Err(e) => tracing::warn!(tenant = id.0, error = %e, "tenant deletion: a batch failed (retried)"),
        }
    }
}
