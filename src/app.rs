//! `App`: everything a request needs, built once at start and passed explicitly as axum state.

use crate::audit::AuditLog;
use crate::config::Config;
use crate::db::Database;
use crate::grants::GrantRegistry;
use crate::keys::Vault;
use crate::node_sync::NodeSync;
use crate::ratelimit::{HashSlots, LoginLimiter};
use crate::registry::Registry;
use crate::stores::Stores;
use std::sync::Arc;

/// What every tenant shares. Per-tenant parts (keys, pages, upstreams, password policy,
/// passkeys, first-party clients) are in `tenant::Tenant`; a request sees both as an
/// `Issuer`.
pub struct App {
    pub config: Config,
    /// The tenants served, and the default one (`tenant`).
    pub tenants: crate::tenant::Tenants,
    /// The key-encryption key: seals signing keys, factor secrets, client secrets and mail at
    /// rest, and derives the deployment's purpose keys.
    pub vault: Arc<Vault>,
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
    /// User codes that matched nothing on the device page, per account and per address
    /// (`device_user_code_max_failures`).
    pub device_limiter: LoginLimiter,
    /// Mail per recipient address on unauthenticated requests (`mail_max_per_recipient`).
    pub mail_limiter: crate::ratelimit::recipients::RecipientLimiter,
    /// Registrations without an initial access token per address
    /// (`registration_max_per_address`).
    pub registration_limiter: LoginLimiter,
    /// Mail, when `smtp_url` is set (`mail`).
    pub mailer: Option<crate::mail::Mailer>,
    /// At most a few password hashes at once (`password_hash_concurrency`).
    pub hash_slots: HashSlots,
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
    /// Clients named by a metadata document URL (`registry::documents`).
    pub documents: crate::registry::documents::ClientDocuments,
    /// The CAs `tls_client_auth` certificates chain to (`mtls_trust_anchors`).
    pub mtls_anchors: Option<Arc<dyn rustls::server::danger::ClientCertVerifier>>,
}

pub type AppState = Arc<App>;

impl App {
    /// Open the database (creating schema and first key on a first start) and load the
    /// in-memory state. Shut down with `close` to flush the audit queue and pending writes.
    pub async fn open(config: Config) -> anyhow::Result<Self> {
        let db = Database::open(&config).await?;
        let vault = Arc::new(Vault::open(config.key_encryption_key.as_deref(), &config.data_dir)?);
        let keys = crate::tenant::key_manager(&config, &db, &vault, crate::tenant::TenantId::DEFAULT).await?;
        let registry = Registry::load(db.clone()).await?;
        let refresh_mac_key = vault.derive("authrim refresh-token mac v1");
        let (stores, sync) = match &db {
            Database::Sqlite(sqlite) => {
                let stores = sqlite.with_reader(|reader| Stores::embedded(&config, &db, &sqlite.journal, reader, refresh_mac_key))?;
                (stores, None)
            }
            Database::Postgres(pg) => {
                let (sync, freshness) = NodeSync::new(pg, std::time::Duration::from_millis(config.revocation_max_staleness_ms));
                let (stores, revocations) = Stores::postgres(&config, &db, pg, freshness, refresh_mac_key);
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
        let device_limiter = LoginLimiter::new(config.device_user_code_max_failures, config.device_user_code_max_failures, config.login_window, config.login_throttle_max_keys);
        let hash_slots = HashSlots::new(config.password_hash_slots(), config.password_hash_max_waiting);
        let backchannel = crate::logout::backchannel::Outbox::new();
        let fetcher = crate::http::fetch::Fetcher::new(
            std::time::Duration::from_secs(config.fetch_timeout),
            config.fetch_max_bytes,
            config.fetch_allow_private_addresses,
            config.max_concurrent_fetches,
        )?;
        let dpop = crate::dpop::DpopState::new(
            vault.derive("authrim dpop nonce v1"),
            config.dpop_replay_max_entries,
            config.dpop_nonce_lifetime,
            config.dpop_algs()?,
        );
        let tenants = crate::tenant::Tenants::new(crate::tenant::Tenant::default_from(&config, keys, &vault)?);
        tenants.load(crate::tenant::Shared { config: &config, db: &db, vault: &vault }).await?;
        Ok(Self {
            tenants,
            vault,
            dpop,
            fetcher,
            client_keys: crate::client_auth::keys::KeyCache::new(config.client_jwks_cache_max_entries),
            request_objects: crate::endpoints::authorize::request_uri::RequestObjects::new(config.request_uri_cache_max_entries),
            documents: crate::registry::documents::ClientDocuments::new(config.client_id_metadata_document_max_entries),
            mtls_anchors: crate::client_auth::tls::trust_anchors(&config)?,
            backchannel,
            config,
            registry,
            stores,
            db,
            grants: GrantRegistry::standard(),
            login_limiter,
            factor_limiter,
            reset_limiter,
            signup_limiter,
            mail_limiter,
            device_limiter,
            registration_limiter,
            mailer,
            hash_slots,
            audit,
            sync,
        })
    }

    pub async fn close(&self) {
        self.audit.flush().await;
        self.db.close().await;
    }

    /// The key-encryption key (`vault`).
    pub fn vault(&self) -> &Vault {
        &self.vault
    }

    /// What building a tenant takes from the deployment.
    pub fn tenant_parts(&self) -> crate::tenant::Shared<'_> {
        crate::tenant::Shared { config: &self.config, db: &self.db, vault: &self.vault }
    }

    /// Build again the tenants changed since the last look (here, by the CLI or on another
    /// node: the registry's change log or notifications name them).
    pub async fn apply_tenant_changes(&self) {
        for id in self.registry.take_tenant_changes() {
            if let Err(e) = self.tenants.reload(self.tenant_parts(), id).await {
                tracing::warn!(tenant = id.0, error = %e, "cannot build a changed tenant");
            }
            if self.tenants.get(id).is_none() {
                self.registry.forget_tenant(id);
            }
        }
    }

    /// Whether this node can serve everything: always on SQLite; on PostgreSQL while it is
    /// in step with the other nodes (see `NodeSync`).
    pub fn is_ready(&self) -> bool {
        self.sync.as_ref().is_none_or(NodeSync::is_fresh)
    }
}
