//! `App`: everything a request needs, built once at start and passed explicitly as axum state.

use crate::audit::AuditLog;
use crate::config::Config;
use crate::db::Database;
use crate::grants::GrantRegistry;
use crate::keys::{KeyManager, Vault};
use crate::node_sync::NodeSync;
use crate::http::sealed::Sealer;
use crate::ratelimit::{HashSlots, LoginLimiter};
use crate::registry::Registry;
use crate::stores::Stores;
use std::sync::Arc;

pub struct App {
    pub config: Config,
    pub keys: KeyManager,
    pub registry: Registry,
    pub stores: Stores,
    pub db: Database,
    pub grants: GrantRegistry,
    pub login_limiter: LoginLimiter,
    /// Wrong second-factor codes: per account (`second_factor_max_failures`, apart from the
    /// password's count, which a right password clears) and per address.
    pub factor_limiter: LoginLimiter,
    /// Password-reset requests per account and per address (`password_reset_max_requests`).
    pub reset_limiter: LoginLimiter,
    /// Sign-ups per address (`signup_max_per_address`).
    pub signup_limiter: LoginLimiter,
    /// Mail per recipient address on unauthenticated requests (`mail_max_per_recipient`).
    pub mail_limiter: crate::ratelimit::recipients::RecipientLimiter,
    /// Registrations without an initial access token per address
    /// (`registration_max_per_address`).
    pub registration_limiter: LoginLimiter,
    /// What a new password must be (`registry::password_policy`).
    pub password_policy: crate::registry::password_policy::PasswordPolicy,
    /// Mail, when `smtp_url` is set (`mail`).
    pub mailer: Option<crate::mail::Mailer>,
    /// At most a few password hashes at once (`password_hash_concurrency`).
    pub hash_slots: HashSlots,
    /// Seals the pending authorization request into the login and consent forms.
    pub sealer: Sealer,
    pub audit: AuditLog,
    /// This node's side of the back-channel logout outbox (`logout::backchannel`).
    pub backchannel: crate::logout::backchannel::Outbox,
    /// PostgreSQL only: how this node keeps its caches in step with the other nodes.
    pub sync: Option<NodeSync>,
    /// Bounded GETs of documents clients name (`jwks_uri`).
    pub fetcher: crate::http::fetch::Fetcher,
    /// Clients' fetched key sets.
    pub client_keys: crate::client_auth::keys::KeyCache,
    /// Request objects fetched from clients' `request_uri`s (`endpoints::authorize::request_uri`).
    pub request_objects: crate::endpoints::authorize::request_uri::RequestObjects,
    /// DPoP proof ids seen by this node, and the nonce key.
    pub dpop: crate::dpop::DpopState,
    /// Keys pairwise subject identifiers (`tokens::subject`).
    pub pairwise_key: [u8; 32],
    /// Clients named by a metadata document URL (`registry::documents`).
    pub documents: crate::registry::documents::ClientDocuments,
    /// WebAuthn (`factors::passkey`); `None` when passkeys are off.
    pub passkeys: Option<crate::factors::passkey::Passkeys>,
    /// Upstream identity providers users may sign in with (`identity`).
    pub upstreams: crate::identity::upstream::Upstreams,
    /// Authrim's own pages as clients of this server (`endpoints::first_party`), by id.
    pub first_party: std::collections::HashMap<&'static str, Arc<crate::registry::Client>>,
    /// Templates, messages and assets of the pages (`ui`).
    pub ui: crate::ui::Ui,
}

pub type AppState = Arc<App>;

impl App {
    /// Open the database (creating schema and first key on a first start) and load the
    /// in-memory state. Shut down with `close` to flush the audit queue and pending writes.
    pub async fn open(config: Config) -> anyhow::Result<Self> {
        let db = Database::open(&config).await?;
        let vault = Vault::open(config.key_encryption_key.as_deref(), &config.data_dir)?;
        let retired_visibility = config.access_token_ttl.max(config.id_token_ttl);
        let algs = config.signing_algs()?;
        let default_alg = crate::keys::signing_alg(&config.token_signing_alg).ok_or_else(|| anyhow::anyhow!("unknown token_signing_alg"))?;
        let keys = KeyManager::init_with(db.clone(), vault, retired_visibility, config.key_publish_delay, &algs, default_alg).await?;
        let registry = Registry::load(db.clone()).await?;
        let refresh_mac_key = keys.derived_key("authrim refresh-token mac v1");
        let (stores, sync) = match &db {
            Database::Sqlite(sqlite) => {
                let stores = sqlite.with_reader(|reader| Stores::embedded(&config, &sqlite.journal, reader, refresh_mac_key))?;
                (stores, None)
            }
            Database::Postgres(pg) => {
                let (sync, freshness) = NodeSync::new(pg, std::time::Duration::from_millis(config.revocation_max_staleness_ms));
                let (stores, revocations) = Stores::postgres(&config, pg, freshness, refresh_mac_key);
                (stores, Some(sync.with_revocations(revocations)))
            }
        };
        let audit = AuditLog::start(db.clone());
        let login_limiter = LoginLimiter::new(
            config.login_max_failures_per_account,
            config.login_max_failures_per_address,
            config.login_window,
            config.login_throttle_max_keys,
        );
        let factor_limiter = LoginLimiter::new(
            config.second_factor_max_failures,
            config.login_max_failures_per_address,
            config.login_window,
            config.login_throttle_max_keys,
        );
        let reset_limiter = LoginLimiter::new(config.password_reset_max_requests, config.password_reset_max_requests, config.login_window, config.login_throttle_max_keys);
        let mailer = crate::mail::Mailer::from_config(&config)?;
        let signup_limiter = LoginLimiter::new(config.signup_max_per_address, config.signup_max_per_address, config.login_window, config.login_throttle_max_keys);
        let mail_limiter = crate::ratelimit::recipients::RecipientLimiter::new(config.mail_max_per_recipient, config.mail_recipient_window, config.login_throttle_max_keys);
        let registration_limiter = LoginLimiter::new(config.registration_max_per_address, config.registration_max_per_address, config.login_window, config.login_throttle_max_keys);
        let password_policy = crate::registry::password_policy::PasswordPolicy::from_config(&config)?;
        let hash_slots = HashSlots::new(config.password_hash_slots(), config.password_hash_max_waiting);
        // A sealed form carries a request of at most max_authorization_request_bytes (as the
        // validated, re-encoded request), so anything much larger is not ours.
        let sealer = Sealer::new(keys.derived_key("authrim interaction state v1"), 4 * config.max_authorization_request_bytes + 1024);
        let backchannel = crate::logout::backchannel::Outbox::new();
        let fetcher = crate::http::fetch::Fetcher::new(
            std::time::Duration::from_secs(config.fetch_timeout),
            config.fetch_max_bytes,
            config.fetch_allow_private_addresses,
            config.max_concurrent_fetches,
        )?;
        let dpop = crate::dpop::DpopState::new(
            keys.derived_key("authrim dpop nonce v1"),
            config.dpop_replay_max_entries,
            config.dpop_nonce_lifetime,
            config.dpop_algs()?,
        );
        let pairwise_key = keys.derived_key("authrim pairwise subject v1");
        let passkeys = crate::factors::passkey::Passkeys::from_config(&config, keys.vault())?;
        let first_party = crate::endpoints::first_party::ALL.iter().map(|f| (f.client_id, Arc::new(f.client(config.base_url())))).collect();
        let upstreams = crate::identity::upstream::Upstreams::new(&config)?;
        let ui = crate::ui::Ui::load_theme(config.theme_dir.as_deref(), crate::ui::ThemeCss::from_setting(&config.theme_css), &config.product_name, &config.default_locale)?;
        Ok(Self {
            ui,
            passkeys,
            first_party,
            upstreams,
            pairwise_key,
            dpop,
            fetcher,
            client_keys: crate::client_auth::keys::KeyCache::new(config.client_jwks_cache_max_entries),
            request_objects: crate::endpoints::authorize::request_uri::RequestObjects::new(config.request_uri_cache_max_entries),
            documents: crate::registry::documents::ClientDocuments::new(config.client_id_metadata_document_max_entries),
            backchannel,
            config,
            keys,
            registry,
            stores,
            db,
            grants: GrantRegistry::standard(),
            login_limiter,
            factor_limiter,
            reset_limiter,
            signup_limiter,
            mail_limiter,
            registration_limiter,
            password_policy,
            mailer,
            hash_slots,
            sealer,
            audit,
            sync,
        })
    }

    pub async fn close(&self) {
        self.audit.flush().await;
        self.db.close().await;
    }

    /// One of Authrim's own pages as a client (`endpoints::first_party`). Their ids share a
    /// prefix, so the token endpoint's lookups of other clients pay one comparison.
    fn first_party_client(&self, client_id: &str) -> Option<Arc<crate::registry::Client>> {
        match client_id.starts_with("authrim-") {
            true => self.first_party.get(client_id).cloned(),
            false => None,
        }
    }

    /// A client as known right now, without I/O: registered, or a document client seen
    /// before. Code that starts a flow uses `resolve_client`, which may fetch a document.
    pub fn client(&self, client_id: &str) -> Option<Arc<crate::registry::Client>> {
        if let Some(c) = self.first_party_client(client_id) {
            return Some(c);
        }
        match crate::registry::documents::is_document_id(client_id) {
            true => self.documents.cached(client_id),
            false => self.registry.client(client_id),
        }
    }

    /// The client `client_id` names: registered (`Ok(None)` if not), or a document client,
    /// fetched when not fresh in memory.
    pub async fn resolve_client(
        &self,
        client_id: &str,
    ) -> Result<Option<Arc<crate::registry::Client>>, crate::registry::documents::DocumentError> {
        if let Some(c) = self.first_party_client(client_id) {
            return Ok(Some(c));
        }
        match crate::registry::documents::is_document_id(client_id) {
            true => self.documents.resolve(self, client_id).await.map(Some),
            false => Ok(self.registry.client(client_id)),
        }
    }

    /// Whether tokens issued to `client_id` may still be honoured: a registered client that
    /// was not deleted, or a document client whose host the policy still accepts.
    pub fn client_is_live(&self, client_id: &str) -> bool {
        if self.first_party_client(client_id).is_some() {
            return true;
        }
        match crate::registry::documents::is_document_id(client_id) {
            true => crate::registry::documents::check_url(self, client_id).is_ok(),
            false => self.registry.client(client_id).is_some(),
        }
    }

    /// Why passkeys are off (`None` when they are on), for the pages that would offer them.
    pub fn passkeys_off(&self) -> Option<crate::factors::passkey::Off> {
        self.passkeys.is_none().then(|| crate::factors::passkey::Off::of(&self.config))
    }

    pub fn issuer(&self) -> &str {
        self.config.base_url()
    }

    /// The base path of the request's issuer (`Config::base_path`): the prefix of every
    /// URL a page or redirect names on this server. One issuer today; with tenants (issue 31)
    /// each request's tenant has its own, so pages and redirects take it as a value rather
    /// than reading a global.
    pub fn base(&self) -> &str {
        self.config.base_path()
    }

    pub fn endpoint(&self, path: &str) -> String {
        format!("{}{}", self.config.base_url(), path)
    }

    /// Whether this node can serve everything: always on SQLite; on PostgreSQL while it is
    /// in step with the other nodes (see `NodeSync`).
    pub fn is_ready(&self) -> bool {
        self.sync.as_ref().is_none_or(NodeSync::is_fresh)
    }
}
