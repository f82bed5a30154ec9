//! Configuration: built-in defaults, overridden by an optional TOML file (`AUTHRIM_CONFIG` or
//! `--config`), overridden by `AUTHRIM_*` environment variables. Every knob is listed once, in
//! `env_overrides`, so the documented table (docs/configuration.md) and the code cannot drift apart silently.

pub mod agents;
pub mod upstreams;

use serde::Deserialize;
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Public base URL; `iss` of every token. https required except for loopback hosts.
    /// Unset: `http://localhost:` and the port of `listen` (`from_sources`).
    pub issuer: String,
    pub listen: SocketAddr,
    pub data_dir: PathBuf,
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    /// Mutual TLS for OAuth (RFC 8705, docs/mtls.md): ask TLS clients for a certificate (never
    /// require one), offer `tls_client_auth` and `self_signed_tls_client_auth`, and bind the
    /// tokens of clients that registered `tls_client_certificate_bound_access_tokens`.
    pub mtls: bool,
    /// PEM file of the CAs that `tls_client_auth` certificates must chain to. Unset: no CA is
    /// trusted, so only `self_signed_tls_client_auth` can authenticate.
    pub mtls_trust_anchors: Option<PathBuf>,
    /// Behind a TLS-terminating proxy: the request header that carries the client's
    /// certificate (URL-encoded PEM, as nginx's `$ssl_client_escaped_cert`). Read only on
    /// requests from `mtls_trusted_proxies`.
    pub mtls_client_cert_header: Option<String>,
    /// Addresses or CIDR blocks (space-separated) of the proxies whose
    /// `mtls_client_cert_header` is believed. `trust_proxy` is a yes/no for a rate-limit key;
    /// a certificate authenticates a client, so it needs the proxies named.
    pub mtls_trusted_proxies: String,
    /// Bearer token for the admin API; the admin API is off when unset.
    pub admin_token: Option<String>,
    /// Bearer token required by `/metrics`; open when unset (keep it off the public internet).
    pub metrics_token: Option<String>,
    /// Create a demo client and user on start and print how to log in.
    pub demo: bool,
    pub log_format: LogFormat,

    pub code_expiry: u64,
    pub access_token_ttl: u64,
    pub id_token_ttl: u64,
    pub session_ttl: u64,
    pub challenge_ttl: u64,

    /// Back-channel logout: seconds a client's endpoint has to answer one delivery.
    pub backchannel_logout_timeout: u64,
    /// Deliveries of one logout token before it is given up (each failure doubles the wait).
    pub backchannel_logout_max_attempts: u64,
    /// Seconds before the first retry of a failed delivery.
    pub backchannel_logout_retry_initial: u64,
    /// Deliveries in flight at once, per node.
    pub backchannel_logout_concurrency: usize,

    /// A client assertion (`private_key_jwt`, `client_secret_jwt`) may expire at most this
    /// many seconds ahead; its `jti` is remembered that long.
    pub client_assertion_max_lifetime: u64,
    /// Seconds a client's fetched `jwks_uri` set is trusted.
    pub client_jwks_cache_ttl: u64,
    /// A JWT naming a key the cached set lacks fetches the set again, at most once per this
    /// many seconds per client.
    pub client_jwks_min_refetch: u64,
    /// Fetched key sets kept at most (clients' and trusted issuers'); the oldest go first.
    pub client_jwks_cache_max_entries: usize,
    /// Seconds a fetch of a client's document (`jwks_uri`) may take.
    pub fetch_timeout: u64,
    /// The largest document fetched from a client, in bytes.
    pub fetch_max_bytes: usize,
    /// Seconds a pushed authorization request (`/par`) stays usable.
    pub pushed_request_ttl: u64,
    /// Every client must push its authorization requests (RFC 9126 §5).
    pub require_pushed_authorization_requests: bool,
    /// Seconds a JARM response JWT is valid (its `exp`): the browser carries it to the client
    /// at once, and JARM §2.1 recommends at most ten minutes.
    pub jarm_response_ttl: u64,
    /// `standard`, or `fapi2`: the FAPI 2.0 Security Profile's rules for every client other
    /// than Authrim's own pages (PAR, PKCE, `private_key_jwt` with the issuer as `aud`,
    /// DPoP, no refresh-token rotation, codes of at most 60 s, PS256/ES256/EdDSA); see
    /// `profile`.
    pub security_profile: String,
    /// No longer used: a pushed request is held by its client, sealed in its `request_uri`
    /// (`endpoints::authorize::pushed`), so there is nothing to bound. Still accepted so that
    /// configuration files that set it keep loading.
    pub max_pushed_requests: usize,

    /// The algorithms Authrim keeps a signing key for (space-separated; RS256 always, as
    /// OpenID Connect requires): RS256, PS256, ES256, EdDSA. Each rotates on its own.
    pub signing_algorithms: String,
    /// What access tokens (and ID tokens of clients that ask for nothing else) are signed
    /// with; one of `signing_algorithms`. Clients may choose their own.
    pub token_signing_alg: String,

    /// DPoP (RFC 9449): seconds a proof stays acceptable after its `iat`.
    pub dpop_proof_max_age: u64,
    /// Require a server nonce in DPoP proofs (RFC 9449 §8); nonces change every
    /// `dpop_nonce_lifetime` seconds (the previous one stays good for one more period).
    pub dpop_nonce: bool,
    pub dpop_nonce_lifetime: u64,
    /// Proof ids remembered per node to refuse replays; only requests that succeed keep
    /// theirs, and beyond it the entry nearest its end is forgotten (never a 503).
    pub dpop_replay_max_entries: usize,
    /// The algorithms a DPoP proof may be signed with (space-separated), advertised as
    /// `dpop_signing_alg_values_supported`. FAPI 2.0 §5.4 allows PS256, ES256 and EdDSA only;
    /// RS256 is in the default for compatibility.
    pub dpop_signing_alg_values_supported: String,

    /// Dynamic registration (RFC 7591) without an initial access token. Off: only holders
    /// of a token from `authrim registration-token` (or the admin API) may register.
    pub open_registration: bool,
    /// Dynamically registered clients kept at most; registration answers 503 beyond it.
    pub registration_max_clients: usize,
    /// Registrations without an initial access token per client address within
    /// `login_window` (429 beyond): one address cannot fill `registration_max_clients`.
    pub registration_max_per_address: u32,
    /// Seconds a dynamically registered client may go unused (no tokens issued to it at
    /// `/token`) before it is deleted; 0 keeps them.
    pub registration_unused_client_ttl: u64,
    /// What a self-registered client may ask for (space-separated lists).
    pub registration_grant_types: String,
    pub registration_scopes: String,
    pub registration_auth_methods: String,

    /// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document): an https
    /// URL as `client_id` is fetched as the client's metadata. `off`, `any` host, or the
    /// `listed` ones in `client_id_metadata_document_hosts` (space-separated).
    pub client_id_metadata_documents: String,
    pub client_id_metadata_document_hosts: String,
    /// Seconds a document is trusted when its response gives no `Cache-Control` lifetime,
    /// and the longest it is trusted whatever the response says.
    pub client_id_metadata_document_ttl: u64,
    pub client_id_metadata_document_max_ttl: u64,
    /// Documents kept in memory at most (the least recently fetched go first).
    pub client_id_metadata_document_max_entries: usize,
    /// Fetches of client documents in flight at once, per node; more are refused (503).
    pub max_concurrent_fetches: usize,
    /// Seconds a request object fetched from a client's `request_uri` is used again without
    /// fetching (less if its response says so; 0: fetched every time).
    pub request_uri_cache_ttl: u64,
    /// Request objects kept at once (bounded: unauthenticated requests fill it).
    pub request_uri_cache_max_entries: usize,
    /// Fetches of one client's request objects in flight at once.
    pub request_uri_max_fetches_per_client: usize,
    /// Let fetches reach loopback, private and link-local addresses (and, for client ID
    /// metadata documents, plain http on a loopback host): tests and private deployments only.
    pub fetch_allow_private_addresses: bool,
    /// Resource servers (RFC 8707 resource indicators) with their scopes; TOML only
    /// (`[[resource_servers]]`, see `config::agents`).
    pub resource_servers: Vec<agents::ResourceServer>,
    /// Issuers whose assertions (ID-JAGs, and where they allow it generic RFC 7523 ones) are
    /// accepted at the `jwt-bearer` grant; TOML only (`[[trusted_issuers]]`).
    pub trusted_issuers: Vec<agents::TrustedIssuer>,
    /// Upstream identity providers users may sign in with; TOML only
    /// (`[[identity_providers]]`, see `config::upstreams`).
    pub identity_providers: Vec<upstreams::IdentityProvider>,
    /// Upstream identity providers one tenant's settings may list (`tenant::overrides`).
    pub tenant_max_identity_providers: usize,
    /// Resource servers one tenant's settings may list.
    pub tenant_max_resource_servers: usize,
    /// The largest style sheet and the largest logo a tenant's `theme` may hold, in bytes.
    pub tenant_theme_max_bytes: usize,
    /// Seconds an ID-JAG issued here is valid.
    pub id_jag_lifetime: u64,
    /// Nested `act` claims a delegated token may carry at most (RFC 8693 §4.1); a client's
    /// token-exchange policy may lower it.
    pub max_delegation_depth: usize,
    /// Refresh tokens for OAuth requests (a code-flow request without `openid`) without
    /// `offline_access`: OpenID Connect Core §11's rule is for OpenID requests; for the others
    /// refresh tokens are the server's policy (OAuth 2.1 §4.3). On by default, so an MCP client
    /// whose server's scopes are `mcp:tools` keeps working past `access_token_ttl`. A resource
    /// server's `refresh_tokens` overrides it for tokens meant for it.
    pub oauth_refresh_tokens: bool,

    pub code_shards: usize,
    pub session_shards: usize,
    pub challenge_shards: usize,
    pub revocation_shards: usize,
    pub refresh_shards: usize,

    /// Rotate refresh tokens on every use (theft detection needs this on).
    pub refresh_token_rotation: bool,
    /// Seconds during which a retry with the just-superseded refresh token gets the same
    /// successor instead of counting as theft (two browser tabs refreshing at once, a response
    /// lost on the way). 0 = strict; at most `MAX_REFRESH_REUSE_GRACE`. A client's own
    /// `refresh_reuse_grace` overrides it.
    pub refresh_reuse_grace: u64,
    /// Absolute lifetime of a refresh-token family, from the login.
    pub refresh_token_ttl: u64,
    /// A family unused for this long expires.
    pub refresh_token_idle_ttl: u64,

    /// Key-encryption key for signing keys at rest (base64url, 32 bytes). Default: a key file
    /// `master.key` created in the data directory with mode 0600.
    pub key_encryption_key: Option<String>,
    /// How long a node trusts its cached key set before re-reading it.
    pub key_cache_ttl: u64,
    /// How long a rotated-in key is published (state `next`) before it signs: longer than
    /// every node's key cache and every relying party's JWKS cache (`/jwks` says max-age=300).
    pub key_publish_delay: u64,
    /// `postgres://user:password@host:port/db`: run on PostgreSQL (several nodes may share it).
    /// Unset: the embedded SQLite database in `data_dir` (one process).
    pub database_url: Option<String>,
    /// PostgreSQL connections per node.
    pub database_pool_size: usize,
    /// Waiting for a PostgreSQL connection or a connect gives up after this (then 503);
    /// a statement after ten times this.
    pub database_timeout_ms: u64,
    /// At start, how long to wait for PostgreSQL to come up before failing.
    pub database_startup_wait: u64,
    /// PostgreSQL: a node answers revocation checks only while it has heard every revocation
    /// committed more than this many milliseconds ago (otherwise 503). The bound on how long a
    /// revoked token can still be accepted by another node.
    pub revocation_max_staleness_ms: u64,
    /// SQLite `synchronous`: FULL (default; survives power loss) or NORMAL (survives process crash).
    pub sqlite_synchronous: String,
    pub max_body_bytes: usize,
    // Slow clients and overload (src/http/connections). Durations in seconds.
    /// A request's headers must arrive within this, counted from the connection (after the TLS
    /// handshake) or, on a kept-alive connection, from the first byte of the next request.
    pub header_read_timeout: u64,
    /// A request's whole body must arrive within this after its headers (then 408 and close).
    pub body_read_timeout: u64,
    /// A connection with no request in flight is closed after this: the keep-alive wait for
    /// the next request, and the time a client has to take a finished response.
    pub idle_timeout: u64,
    /// The TLS handshake must complete within this.
    pub tls_handshake_timeout: u64,
    /// Open connections, all clients together; more are refused at once (503). Unset: derived
    /// from the open-file limit, leaving descriptors for the process (at most 10,000).
    pub max_connections: Option<usize>,
    /// Open connections per client address (IPv6: per /64); more are refused at once. Behind a
    /// reverse proxy every connection comes from the proxy: raise this to `max_connections`.
    pub max_connections_per_address: usize,
    /// Take the client address from `X-Forwarded-For` (only behind a trusted proxy).
    pub trust_proxy: bool,
    /// Failed logins allowed per account, and per client address, within `login_window`.
    pub login_max_failures_per_account: u32,
    pub login_max_failures_per_address: u32,
    pub login_window: u64,
    /// Wrong second-factor codes (TOTP, recovery) allowed per account within `login_window`,
    /// counted apart from the password's failures (a right password does not clear them),
    /// from every address together.
    pub second_factor_max_failures: u32,
    /// Account and address buckets the login throttle tracks at most; past this the buckets
    /// whose last failure is oldest are dropped first.
    pub login_throttle_max_keys: usize,
    /// Second factors: `optional` (asked of users who have one, and by clients through
    /// `acr_values`), `required` (nobody signs in without one) or `passkey` (nobody signs in
    /// without a passkey, alone or after the password).
    pub mfa_policy: String,
    /// Passkeys (WebAuthn): offered on the sign-in pages and the account page.
    pub passkeys: bool,
    /// The WebAuthn relying-party id passkeys are bound to: unset = the issuer's host. A
    /// registrable suffix of it (`example.com` for `id.example.com`) lets passkeys survive a
    /// move of the issuer within that domain. Changing it orphans every passkey.
    pub webauthn_rp_id: Option<String>,
    /// The name authenticators show beside the passkey.
    pub webauthn_rp_name: String,
    /// Origins (scheme://host[:port]) the WebAuthn ceremonies may come from, space-separated:
    /// unset = the issuer's origin.
    pub webauthn_origins: Option<String>,
    /// The account page changes factors only if the user signed in at most this many seconds
    /// ago; otherwise it asks them to sign in again first.
    pub account_reauth_max_age: u64,
    /// The admin console (`/console`), for users with the `admin` or `auditor` role.
    pub console: bool,
    /// Second factors in the console: `required` (a console user without one is sent to the
    /// account page to add one) or `if_enrolled` (asked of those who have one, as anywhere).
    pub console_mfa: String,
    /// The console serves a user only within this many seconds of their sign-in; after that
    /// it asks them to sign in again.
    pub console_max_age: u64,
    /// At start, when no user has the `admin` role: this login name becomes an admin (created
    /// with `bootstrap_admin_password` if there is no such user). Nothing once an admin exists.
    pub bootstrap_admin: Option<String>,
    /// The bootstrap admin's first password (only used to create them).
    pub bootstrap_admin_password: Option<String>,
    /// Where mail is sent through: `smtp://user:pass@host:587?tls=required` (STARTTLS),
    /// `smtps://…:465` (TLS), or `smtp://host:port` (plain, for a local relay). Unset: no
    /// mail, and the features that need it (password reset) are off.
    pub smtp_url: Option<String>,
    /// The sender of Authrim's mail; unset: `noreply@` the issuer's host.
    pub mail_from: Option<String>,
    /// Tries to deliver one message before it is given up (audited).
    pub mail_max_attempts: u32,
    /// Seconds before a failed delivery is tried again; each further wait doubles (at most
    /// `mail_retry_max_delay`).
    pub mail_retry_delay: u64,
    /// The longest wait between two tries of one message (the doubling stops there).
    pub mail_retry_max_delay: u64,
    /// Seconds a delivered (or given-up) message's row is kept in the outbox (its body is
    /// blanked once sent); expired reset and verification links are removed as they expire.
    pub mail_retention: u64,
    /// Seconds a password-reset link works.
    pub password_reset_ttl: u64,
    /// Password-reset requests per address, and per account, within `login_window`.
    pub password_reset_max_requests: u32,
    /// Self-registration at `/signup` (off by default).
    pub signup: bool,
    /// What a sign-up must give besides a username and password, space-separated, from
    /// `email name given_name family_name`.
    pub signup_required: String,
    /// A new account signs in only once its e-mail is verified (a link by mail; needs
    /// `smtp_url`).
    pub signup_verify_email: bool,
    /// Sign-ups per client address within `login_window`.
    pub signup_max_per_address: u32,
    /// Seconds an invitation to an organization (its mailed link) can be accepted.
    pub organization_invitation_ttl: u64,
    /// Pending invitations, at most, per organization (the admin API refuses more: each
    /// one is a mail sent).
    pub organization_max_pending_invitations: u32,

    /// Device authorization grant (RFC 8628, `endpoints::device`): seconds a device code and
    /// its user code stay usable.
    pub device_code_ttl: u64,
    /// The polling interval a device is told to keep (RFC 8628 §3.2 `interval`); each
    /// `slow_down` adds 5 seconds for that request (§3.5).
    pub device_poll_interval: u64,
    /// Device authorization requests waiting for their user, at most, per client: the endpoint
    /// is open to public clients, so what it stores before anyone signs in is bounded.
    pub device_max_pending_per_client: u32,
    /// Device authorization requests waiting for their user, at most, in all.
    pub device_max_pending: u32,
    /// User codes that match nothing, per signed-in account and per client address within
    /// `login_window`; past it the verification page refuses further codes (guessing).
    pub device_user_code_max_failures: u32,
    /// CIBA (`endpoints::ciba`): seconds a backchannel authentication request lives when the
    /// client asks for no `requested_expiry`.
    pub ciba_request_ttl: u64,
    /// The longest `requested_expiry` honoured (a longer one is cut to it).
    pub ciba_max_request_ttl: u64,
    /// The polling interval a CIBA client is told to keep (`interval`); each `slow_down` adds
    /// 5 seconds for that request.
    pub ciba_poll_interval: u64,
    /// CIBA requests waiting for their user, at most, per client and in all.
    pub ciba_max_pending_per_client: u32,
    pub ciba_max_pending: u32,
    /// The longest `binding_message`, in characters (it is shown on a small screen).
    pub ciba_binding_message_max_length: u32,
    /// Whether a user with an e-mail address is sent a link to approve a CIBA request
    /// (through the mail outbox; needs `smtp_url`).
    pub ciba_notify_mail: bool,
    /// Where a JSON notice of each CIBA request is POSTed for a push service (`ciba::hook`),
    /// through the back-channel outbox; unset: none.
    pub ciba_notify_hook_url: Option<String>,
    /// Sign-ups waiting for their e-mail to be verified, at most; past it the oldest waiting
    /// one is dropped (its link stops working), so a flood cannot hold the form shut.
    pub signup_max_pending: u32,
    /// Mails sent on unauthenticated requests (sign-up links and notices, reset links) to one
    /// recipient address, at most, within `mail_recipient_window`; more are not sent (the
    /// page does not change).
    pub mail_max_per_recipient: u32,
    /// Seconds over which `mail_max_per_recipient` counts.
    pub mail_recipient_window: u64,
    /// Seconds an e-mail verification link works.
    pub email_verification_ttl: u64,
    /// The shortest password a sign-up may choose (at least 8).
    pub password_min_length: usize,
    /// A file of passwords known from breaches, one per line: a sign-up choosing one is
    /// refused (read at start).
    pub breached_passwords_file: Option<PathBuf>,
    /// A directory whose `templates/`, `assets/` and `locales/` replace or add to the built-in
    /// pages' (read at start).
    pub theme_dir: Option<PathBuf>,
    /// What a theme's `assets/style.css` does: `add` (served as `/assets/theme.css` after
    /// the built-in style sheet, overriding what it names: its CSS variables, say) or
    /// `replace` (served instead of the built-in one, which the pages then lack).
    pub theme_css: String,
    /// The pages' language when neither `ui_locales` nor `Accept-Language` names one we have.
    pub default_locale: String,
    /// The name the pages show (title, header, "Sign out of …?").
    pub product_name: String,
    /// Password hashes (Argon2id) computed at once; 0 = half the cores, at least one. Keeps
    /// a flood of sign-in attempts from taking every core from token issuance.
    pub password_hash_concurrency: usize,
    /// Sign-in attempts that may wait for a hashing slot; more are refused at once (503).
    pub password_hash_max_waiting: usize,
    /// The largest authorization request accepted: bytes of the encoded query string (GET)
    /// or form body (POST). A larger one is refused before it is parsed.
    pub max_authorization_request_bytes: usize,
    /// The test-only bulk interface (`/test/...`), for load-test seeding. Never in production.
    pub enable_test_endpoints: bool,
    /// Allow the test endpoints with a non-localhost issuer (a deliberate, loud override).
    pub force_test_endpoints: bool,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Json,
    Pretty,
}

/// The issuer when none is configured: `localhost` on the port Authrim listens on.
pub fn default_issuer(listen: &SocketAddr) -> String {
    format!("http://localhost:{}", listen.port())
}

impl Default for Config {
    fn default() -> Self {
        Self {
            // localhost, not 127.0.0.1: a browser treats both as a secure context, but only a
            // domain name can be a WebAuthn relying-party id, so passkeys work out of the box.
            issuer: "http://localhost:8080".into(),
            listen: "127.0.0.1:8080".parse().expect("static address"),
            data_dir: PathBuf::from("authrim-data"),
            tls_cert: None,
            tls_key: None,
            mtls: false,
            mtls_trust_anchors: None,
            mtls_client_cert_header: None,
            mtls_trusted_proxies: String::new(),
            admin_token: None,
            metrics_token: None,
            demo: false,
            log_format: LogFormat::Pretty,
            code_expiry: 60,
            access_token_ttl: 3600,
            id_token_ttl: 3600,
            session_ttl: 86_400,
            challenge_ttl: 900,
            backchannel_logout_timeout: 5,
            backchannel_logout_max_attempts: 12,
            backchannel_logout_retry_initial: 2,
            backchannel_logout_concurrency: 16,
            client_assertion_max_lifetime: 3600,
            client_jwks_cache_ttl: 300,
            client_jwks_min_refetch: 10,
            client_jwks_cache_max_entries: 20_000,
            fetch_timeout: 5,
            fetch_max_bytes: 64 * 1024,
            pushed_request_ttl: 90,
            require_pushed_authorization_requests: false,
            jarm_response_ttl: 600,
            security_profile: "standard".into(),
            max_pushed_requests: 100_000,
            signing_algorithms: "RS256".into(),
            token_signing_alg: "RS256".into(),
            dpop_proof_max_age: 60,
            dpop_nonce: false,
            dpop_nonce_lifetime: 300,
            dpop_replay_max_entries: 500_000,
            dpop_signing_alg_values_supported: "PS256 ES256 EdDSA RS256".into(),
            open_registration: false,
            registration_max_clients: 10_000,
            registration_max_per_address: 10,
            registration_unused_client_ttl: 86_400,
            registration_grant_types: "authorization_code refresh_token".into(),
            registration_scopes: "openid profile email address phone offline_access".into(),
            registration_auth_methods: "client_secret_basic client_secret_post client_secret_jwt private_key_jwt none".into(),
            client_id_metadata_documents: "off".into(),
            client_id_metadata_document_hosts: String::new(),
            client_id_metadata_document_ttl: 300,
            client_id_metadata_document_max_ttl: 86_400,
            client_id_metadata_document_max_entries: 10_000,
            max_concurrent_fetches: 32,
            request_uri_cache_ttl: 60,
            request_uri_cache_max_entries: 10_000,
            request_uri_max_fetches_per_client: 4,
            fetch_allow_private_addresses: false,
            resource_servers: Vec::new(),
            trusted_issuers: Vec::new(),
            identity_providers: Vec::new(),
            tenant_max_identity_providers: 20,
            tenant_max_resource_servers: 100,
            tenant_theme_max_bytes: 131072,
            id_jag_lifetime: 300,
            max_delegation_depth: 4,
            oauth_refresh_tokens: true,
            code_shards: 64,
            session_shards: 32,
            challenge_shards: 16,
            revocation_shards: 16,
            refresh_shards: 32,
            refresh_token_rotation: true,
            refresh_reuse_grace: 30,
            refresh_token_ttl: 30 * 86_400,
            refresh_token_idle_ttl: 14 * 86_400,
            key_encryption_key: None,
            key_cache_ttl: 300,
            key_publish_delay: 600,
            database_url: None,
            database_pool_size: 16,
            database_timeout_ms: 2000,
            database_startup_wait: 30,
            revocation_max_staleness_ms: 1000,
            sqlite_synchronous: "FULL".into(),
            max_body_bytes: 64 * 1024,
            header_read_timeout: 10,
            body_read_timeout: 10,
            idle_timeout: 60,
            tls_handshake_timeout: 10,
            max_connections: None,
            max_connections_per_address: 256,
            trust_proxy: false,
            login_max_failures_per_account: 5,
            login_max_failures_per_address: 20,
            login_window: 900,
            second_factor_max_failures: 5,
            login_throttle_max_keys: 100_000,
            mfa_policy: "optional".into(),
            passkeys: true,
            webauthn_rp_id: None,
            webauthn_rp_name: "Authrim".into(),
            webauthn_origins: None,
            account_reauth_max_age: 300,
            console: true,
            console_mfa: "required".into(),
            console_max_age: 1800,
            bootstrap_admin: None,
            bootstrap_admin_password: None,
            smtp_url: None,
            mail_from: None,
            mail_max_attempts: 10,
            mail_retry_delay: 30,
            mail_retry_max_delay: 3600,
            mail_retention: 604_800,
            password_reset_ttl: 1800,
            password_reset_max_requests: 5,
            signup: false,
            signup_required: "email".into(),
            signup_verify_email: true,
            signup_max_per_address: 5,
            organization_invitation_ttl: 604_800,
            organization_max_pending_invitations: 1000,
            device_code_ttl: 600,
            device_poll_interval: 5,
            device_max_pending_per_client: 1000,
            device_max_pending: 10_000,
            device_user_code_max_failures: 10,
            ciba_request_ttl: 300,
            ciba_max_request_ttl: 1800,
            ciba_poll_interval: 5,
            ciba_max_pending_per_client: 1000,
            ciba_max_pending: 10_000,
            ciba_binding_message_max_length: 64,
            ciba_notify_mail: true,
            ciba_notify_hook_url: None,
            signup_max_pending: 10_000,
            mail_max_per_recipient: 5,
            mail_recipient_window: 3_600,
            email_verification_ttl: 86_400,
            password_min_length: 8,
            breached_passwords_file: None,
            theme_dir: None,
            theme_css: "add".into(),
            default_locale: "en".into(),
            product_name: "Authrim".into(),
            password_hash_concurrency: 0,
            password_hash_max_waiting: 64,
            max_authorization_request_bytes: 8 * 1024,
            enable_test_endpoints: false,
            force_test_endpoints: false,
        }
    }
}

/// (environment variable, config key) for every knob.
/// The longest refresh-token reuse grace a deployment or a client may set: a superseded token
/// stays good this long, so it is kept short.
pub const MAX_REFRESH_REUSE_GRACE: u64 = 300;

pub const ENV_VARS: &[(&str, &str)] = &[
    ("AUTHRIM_ISSUER", "issuer"),
    ("AUTHRIM_LISTEN", "listen"),
    ("AUTHRIM_DATA_DIR", "data_dir"),
    ("AUTHRIM_TLS_CERT", "tls_cert"),
    ("AUTHRIM_TLS_KEY", "tls_key"),
    ("AUTHRIM_MTLS", "mtls"),
    ("AUTHRIM_MTLS_TRUST_ANCHORS", "mtls_trust_anchors"),
    ("AUTHRIM_MTLS_CLIENT_CERT_HEADER", "mtls_client_cert_header"),
    ("AUTHRIM_MTLS_TRUSTED_PROXIES", "mtls_trusted_proxies"),
    ("AUTHRIM_ADMIN_TOKEN", "admin_token"),
    ("AUTHRIM_METRICS_TOKEN", "metrics_token"),
    ("AUTHRIM_DEMO", "demo"),
    ("AUTHRIM_LOG_FORMAT", "log_format"),
    ("AUTHRIM_CODE_EXPIRY", "code_expiry"),
    ("AUTHRIM_ACCESS_TOKEN_TTL", "access_token_ttl"),
    ("AUTHRIM_ID_TOKEN_TTL", "id_token_ttl"),
    ("AUTHRIM_SESSION_TTL", "session_ttl"),
    ("AUTHRIM_CHALLENGE_TTL", "challenge_ttl"),
    ("AUTHRIM_BACKCHANNEL_LOGOUT_TIMEOUT", "backchannel_logout_timeout"),
    ("AUTHRIM_BACKCHANNEL_LOGOUT_MAX_ATTEMPTS", "backchannel_logout_max_attempts"),
    ("AUTHRIM_BACKCHANNEL_LOGOUT_RETRY_INITIAL", "backchannel_logout_retry_initial"),
    ("AUTHRIM_BACKCHANNEL_LOGOUT_CONCURRENCY", "backchannel_logout_concurrency"),
    ("AUTHRIM_CLIENT_ASSERTION_MAX_LIFETIME", "client_assertion_max_lifetime"),
    ("AUTHRIM_CLIENT_JWKS_CACHE_TTL", "client_jwks_cache_ttl"),
    ("AUTHRIM_CLIENT_JWKS_MIN_REFETCH", "client_jwks_min_refetch"),
    ("AUTHRIM_CLIENT_JWKS_CACHE_MAX_ENTRIES", "client_jwks_cache_max_entries"),
    ("AUTHRIM_FETCH_TIMEOUT", "fetch_timeout"),
    ("AUTHRIM_FETCH_MAX_BYTES", "fetch_max_bytes"),
    ("AUTHRIM_PUSHED_REQUEST_TTL", "pushed_request_ttl"),
    ("AUTHRIM_REQUIRE_PUSHED_AUTHORIZATION_REQUESTS", "require_pushed_authorization_requests"),
    ("AUTHRIM_JARM_RESPONSE_TTL", "jarm_response_ttl"),
    ("AUTHRIM_SECURITY_PROFILE", "security_profile"),
    ("AUTHRIM_MAX_PUSHED_REQUESTS", "max_pushed_requests"),
    ("AUTHRIM_SIGNING_ALGORITHMS", "signing_algorithms"),
    ("AUTHRIM_TOKEN_SIGNING_ALG", "token_signing_alg"),
    ("AUTHRIM_DPOP_PROOF_MAX_AGE", "dpop_proof_max_age"),
    ("AUTHRIM_DPOP_NONCE", "dpop_nonce"),
    ("AUTHRIM_DPOP_NONCE_LIFETIME", "dpop_nonce_lifetime"),
    ("AUTHRIM_DPOP_REPLAY_MAX_ENTRIES", "dpop_replay_max_entries"),
    ("AUTHRIM_DPOP_SIGNING_ALG_VALUES_SUPPORTED", "dpop_signing_alg_values_supported"),
    ("AUTHRIM_OPEN_REGISTRATION", "open_registration"),
    ("AUTHRIM_REGISTRATION_MAX_CLIENTS", "registration_max_clients"),
    ("AUTHRIM_REGISTRATION_MAX_PER_ADDRESS", "registration_max_per_address"),
    ("AUTHRIM_REGISTRATION_UNUSED_CLIENT_TTL", "registration_unused_client_ttl"),
    ("AUTHRIM_REGISTRATION_GRANT_TYPES", "registration_grant_types"),
    ("AUTHRIM_REGISTRATION_SCOPES", "registration_scopes"),
    ("AUTHRIM_REGISTRATION_AUTH_METHODS", "registration_auth_methods"),
    ("AUTHRIM_CLIENT_ID_METADATA_DOCUMENTS", "client_id_metadata_documents"),
    ("AUTHRIM_CLIENT_ID_METADATA_DOCUMENT_HOSTS", "client_id_metadata_document_hosts"),
    ("AUTHRIM_CLIENT_ID_METADATA_DOCUMENT_TTL", "client_id_metadata_document_ttl"),
    ("AUTHRIM_CLIENT_ID_METADATA_DOCUMENT_MAX_TTL", "client_id_metadata_document_max_ttl"),
    ("AUTHRIM_CLIENT_ID_METADATA_DOCUMENT_MAX_ENTRIES", "client_id_metadata_document_max_entries"),
    ("AUTHRIM_MAX_CONCURRENT_FETCHES", "max_concurrent_fetches"),
    ("AUTHRIM_REQUEST_URI_CACHE_TTL", "request_uri_cache_ttl"),
    ("AUTHRIM_REQUEST_URI_CACHE_MAX_ENTRIES", "request_uri_cache_max_entries"),
    ("AUTHRIM_REQUEST_URI_MAX_FETCHES_PER_CLIENT", "request_uri_max_fetches_per_client"),
    ("AUTHRIM_FETCH_ALLOW_PRIVATE_ADDRESSES", "fetch_allow_private_addresses"),
    ("AUTHRIM_ID_JAG_LIFETIME", "id_jag_lifetime"),
    ("AUTHRIM_MAX_DELEGATION_DEPTH", "max_delegation_depth"),
    ("AUTHRIM_TENANT_MAX_IDENTITY_PROVIDERS", "tenant_max_identity_providers"),
    ("AUTHRIM_TENANT_MAX_RESOURCE_SERVERS", "tenant_max_resource_servers"),
    ("AUTHRIM_TENANT_THEME_MAX_BYTES", "tenant_theme_max_bytes"),
    ("AUTHRIM_OAUTH_REFRESH_TOKENS", "oauth_refresh_tokens"),
    ("AUTHRIM_CODE_SHARDS", "code_shards"),
    ("AUTHRIM_SESSION_SHARDS", "session_shards"),
    ("AUTHRIM_CHALLENGE_SHARDS", "challenge_shards"),
    ("AUTHRIM_REVOCATION_SHARDS", "revocation_shards"),
    ("AUTHRIM_REFRESH_SHARDS", "refresh_shards"),
    ("AUTHRIM_REFRESH_TOKEN_ROTATION", "refresh_token_rotation"),
    ("AUTHRIM_REFRESH_REUSE_GRACE", "refresh_reuse_grace"),
    ("AUTHRIM_REFRESH_TOKEN_TTL", "refresh_token_ttl"),
    ("AUTHRIM_REFRESH_TOKEN_IDLE_TTL", "refresh_token_idle_ttl"),
    ("AUTHRIM_KEY_ENCRYPTION_KEY", "key_encryption_key"),
    ("AUTHRIM_KEY_CACHE_TTL", "key_cache_ttl"),
    ("AUTHRIM_KEY_PUBLISH_DELAY", "key_publish_delay"),
    ("AUTHRIM_DATABASE_URL", "database_url"),
    ("AUTHRIM_DATABASE_POOL_SIZE", "database_pool_size"),
    ("AUTHRIM_DATABASE_TIMEOUT_MS", "database_timeout_ms"),
    ("AUTHRIM_DATABASE_STARTUP_WAIT", "database_startup_wait"),
    ("AUTHRIM_REVOCATION_MAX_STALENESS_MS", "revocation_max_staleness_ms"),
    ("AUTHRIM_SQLITE_SYNCHRONOUS", "sqlite_synchronous"),
    ("AUTHRIM_MAX_BODY_BYTES", "max_body_bytes"),
    ("AUTHRIM_HEADER_READ_TIMEOUT", "header_read_timeout"),
    ("AUTHRIM_BODY_READ_TIMEOUT", "body_read_timeout"),
    ("AUTHRIM_IDLE_TIMEOUT", "idle_timeout"),
    ("AUTHRIM_TLS_HANDSHAKE_TIMEOUT", "tls_handshake_timeout"),
    ("AUTHRIM_MAX_CONNECTIONS", "max_connections"),
    ("AUTHRIM_MAX_CONNECTIONS_PER_ADDRESS", "max_connections_per_address"),
    ("AUTHRIM_TRUST_PROXY", "trust_proxy"),
    ("AUTHRIM_LOGIN_MAX_FAILURES_PER_ACCOUNT", "login_max_failures_per_account"),
    ("AUTHRIM_LOGIN_MAX_FAILURES_PER_ADDRESS", "login_max_failures_per_address"),
    ("AUTHRIM_LOGIN_WINDOW", "login_window"),
    ("AUTHRIM_SECOND_FACTOR_MAX_FAILURES", "second_factor_max_failures"),
    ("AUTHRIM_LOGIN_THROTTLE_MAX_KEYS", "login_throttle_max_keys"),
    ("AUTHRIM_MFA_POLICY", "mfa_policy"),
    ("AUTHRIM_PASSKEYS", "passkeys"),
    ("AUTHRIM_WEBAUTHN_RP_ID", "webauthn_rp_id"),
    ("AUTHRIM_WEBAUTHN_RP_NAME", "webauthn_rp_name"),
    ("AUTHRIM_WEBAUTHN_ORIGINS", "webauthn_origins"),
    ("AUTHRIM_ACCOUNT_REAUTH_MAX_AGE", "account_reauth_max_age"),
    ("AUTHRIM_CONSOLE", "console"),
    ("AUTHRIM_CONSOLE_MFA", "console_mfa"),
    ("AUTHRIM_CONSOLE_MAX_AGE", "console_max_age"),
    ("AUTHRIM_BOOTSTRAP_ADMIN", "bootstrap_admin"),
    ("AUTHRIM_BOOTSTRAP_ADMIN_PASSWORD", "bootstrap_admin_password"),
    ("AUTHRIM_SMTP_URL", "smtp_url"),
    ("AUTHRIM_MAIL_FROM", "mail_from"),
    ("AUTHRIM_MAIL_MAX_ATTEMPTS", "mail_max_attempts"),
    ("AUTHRIM_MAIL_RETENTION", "mail_retention"),
    ("AUTHRIM_MAIL_RETRY_DELAY", "mail_retry_delay"),
    ("AUTHRIM_MAIL_RETRY_MAX_DELAY", "mail_retry_max_delay"),
    ("AUTHRIM_PASSWORD_RESET_TTL", "password_reset_ttl"),
    ("AUTHRIM_PASSWORD_RESET_MAX_REQUESTS", "password_reset_max_requests"),
    ("AUTHRIM_SIGNUP", "signup"),
    ("AUTHRIM_SIGNUP_REQUIRED", "signup_required"),
    ("AUTHRIM_SIGNUP_VERIFY_EMAIL", "signup_verify_email"),
    ("AUTHRIM_SIGNUP_MAX_PER_ADDRESS", "signup_max_per_address"),
    ("AUTHRIM_ORGANIZATION_INVITATION_TTL", "organization_invitation_ttl"),
    ("AUTHRIM_ORGANIZATION_MAX_PENDING_INVITATIONS", "organization_max_pending_invitations"),
    ("AUTHRIM_DEVICE_CODE_TTL", "device_code_ttl"),
    ("AUTHRIM_DEVICE_POLL_INTERVAL", "device_poll_interval"),
    ("AUTHRIM_DEVICE_MAX_PENDING_PER_CLIENT", "device_max_pending_per_client"),
    ("AUTHRIM_DEVICE_MAX_PENDING", "device_max_pending"),
    ("AUTHRIM_DEVICE_USER_CODE_MAX_FAILURES", "device_user_code_max_failures"),
    ("AUTHRIM_CIBA_REQUEST_TTL", "ciba_request_ttl"),
    ("AUTHRIM_CIBA_MAX_REQUEST_TTL", "ciba_max_request_ttl"),
    ("AUTHRIM_CIBA_POLL_INTERVAL", "ciba_poll_interval"),
    ("AUTHRIM_CIBA_MAX_PENDING_PER_CLIENT", "ciba_max_pending_per_client"),
    ("AUTHRIM_CIBA_MAX_PENDING", "ciba_max_pending"),
    ("AUTHRIM_CIBA_BINDING_MESSAGE_MAX_LENGTH", "ciba_binding_message_max_length"),
    ("AUTHRIM_CIBA_NOTIFY_MAIL", "ciba_notify_mail"),
    ("AUTHRIM_CIBA_NOTIFY_HOOK_URL", "ciba_notify_hook_url"),
    ("AUTHRIM_SIGNUP_MAX_PENDING", "signup_max_pending"),
    ("AUTHRIM_MAIL_MAX_PER_RECIPIENT", "mail_max_per_recipient"),
    ("AUTHRIM_MAIL_RECIPIENT_WINDOW", "mail_recipient_window"),
    ("AUTHRIM_EMAIL_VERIFICATION_TTL", "email_verification_ttl"),
    ("AUTHRIM_PASSWORD_MIN_LENGTH", "password_min_length"),
    ("AUTHRIM_BREACHED_PASSWORDS_FILE", "breached_passwords_file"),
    ("AUTHRIM_THEME_DIR", "theme_dir"),
    ("AUTHRIM_THEME_CSS", "theme_css"),
    ("AUTHRIM_DEFAULT_LOCALE", "default_locale"),
    ("AUTHRIM_PRODUCT_NAME", "product_name"),
    ("AUTHRIM_PASSWORD_HASH_CONCURRENCY", "password_hash_concurrency"),
    ("AUTHRIM_PASSWORD_HASH_MAX_WAITING", "password_hash_max_waiting"),
    ("AUTHRIM_MAX_AUTHORIZATION_REQUEST_BYTES", "max_authorization_request_bytes"),
    ("AUTHRIM_ENABLE_TEST_ENDPOINTS", "enable_test_endpoints"),
    ("AUTHRIM_FORCE_TEST_ENDPOINTS", "force_test_endpoints"),
];

const NUMERIC_KEYS: &[&str] = &[
    "code_expiry", "access_token_ttl", "id_token_ttl", "session_ttl", "challenge_ttl",
    "backchannel_logout_timeout", "backchannel_logout_max_attempts", "backchannel_logout_retry_initial",
    "backchannel_logout_concurrency", "client_assertion_max_lifetime", "client_jwks_cache_ttl", "client_jwks_min_refetch", "client_jwks_cache_max_entries",
    "fetch_timeout", "fetch_max_bytes", "pushed_request_ttl", "jarm_response_ttl", "max_pushed_requests", "registration_max_clients",
    "registration_max_per_address", "registration_unused_client_ttl",
    "dpop_proof_max_age", "dpop_nonce_lifetime", "dpop_replay_max_entries",
    "client_id_metadata_document_ttl", "client_id_metadata_document_max_ttl", "client_id_metadata_document_max_entries",
    "request_uri_cache_ttl", "request_uri_cache_max_entries", "request_uri_max_fetches_per_client", "max_concurrent_fetches", "id_jag_lifetime", "max_delegation_depth",
    "tenant_max_identity_providers", "tenant_max_resource_servers", "tenant_theme_max_bytes",
    "code_shards", "session_shards", "challenge_shards", "revocation_shards", "refresh_shards", "key_cache_ttl", "key_publish_delay",
    "refresh_reuse_grace", "refresh_token_ttl", "refresh_token_idle_ttl",
    "max_body_bytes", "login_max_failures_per_account", "login_max_failures_per_address",
    "login_window", "second_factor_max_failures", "login_throttle_max_keys", "password_hash_concurrency", "password_hash_max_waiting",
    "max_authorization_request_bytes", "database_pool_size", "database_timeout_ms", "database_startup_wait", "revocation_max_staleness_ms",
    "header_read_timeout", "body_read_timeout", "idle_timeout", "tls_handshake_timeout", "max_connections",
    "max_connections_per_address", "account_reauth_max_age", "console_max_age", "mail_max_attempts", "mail_retention", "mail_retry_delay", "mail_retry_max_delay", "password_reset_ttl",
    "password_reset_max_requests", "signup_max_per_address", "signup_max_pending", "email_verification_ttl", "password_min_length",
    "mail_max_per_recipient", "mail_recipient_window",
    "organization_invitation_ttl", "organization_max_pending_invitations",
    "device_code_ttl", "device_poll_interval", "device_max_pending_per_client", "device_max_pending", "device_user_code_max_failures",
    "ciba_request_ttl", "ciba_max_request_ttl", "ciba_poll_interval", "ciba_max_pending_per_client", "ciba_max_pending", "ciba_binding_message_max_length",
];
const BOOL_KEYS: &[&str] =
    &["demo", "trust_proxy", "mtls", "refresh_token_rotation", "enable_test_endpoints", "force_test_endpoints", "require_pushed_authorization_requests", "open_registration", "dpop_nonce", "fetch_allow_private_addresses", "passkeys", "console", "signup", "signup_verify_email", "oauth_refresh_tokens", "ciba_notify_mail"];

impl Config {
    /// `signing_algorithms` as the static names the key manager uses; unknown names refused.
    pub fn signing_algs(&self) -> anyhow::Result<Vec<&'static str>> {
        let mut out = Vec::new();
        for a in crate::util::split_list(&self.signing_algorithms) {
            let alg = crate::keys::signing_alg(a)
                .ok_or_else(|| anyhow::anyhow!("signing_algorithms: {a:?} is not one of {}", crate::keys::SIGNING_ALGS.join(", ")))?;
            if !out.contains(&alg) {
                out.push(alg);
            }
        }
        Ok(out)
    }

    /// `dpop_signing_alg_values_supported` as static names; each must be an asymmetric JWS
    /// algorithm we verify.
    pub fn dpop_algs(&self) -> anyhow::Result<Vec<&'static str>> {
        let asymmetric = crate::client_auth::keys::ASYMMETRIC_ALGS;
        let mut out = Vec::new();
        for a in crate::util::split_list(&self.dpop_signing_alg_values_supported) {
            let alg = asymmetric.iter().copied().find(|x| *x == a).ok_or_else(|| {
                anyhow::anyhow!("dpop_signing_alg_values_supported: {a:?} is not one of {}", asymmetric.join(", "))
            })?;
            // Under FAPI 2.0 the default's RS256 (kept for compatibility) drops out (§5.4).
            if !out.contains(&alg) && self.profile().allows_alg(alg) {
                out.push(alg);
            }
        }
        if out.is_empty() {
            anyhow::bail!("dpop_signing_alg_values_supported names no algorithm (that security_profile allows)");
        }
        Ok(out)
    }

    /// The security profile (`security_profile`; `validate` refuses an unknown one).
    pub fn profile(&self) -> crate::profile::Profile {
        crate::profile::Profile::parse(&self.security_profile).unwrap_or_default()
    }

    /// Whether refresh tokens rotate: `refresh_token_rotation`, never under FAPI 2.0.
    pub fn refresh_rotation(&self) -> bool {
        self.refresh_token_rotation && !self.profile().is_fapi2()
    }

    /// Load from an optional file and the process environment.
    pub fn load(file: Option<&std::path::Path>) -> anyhow::Result<Self> {
        let env: Vec<(String, String)> = std::env::vars().collect();
        Self::from_sources(file, &env)
    }

    pub fn from_sources(file: Option<&std::path::Path>, env: &[(String, String)]) -> anyhow::Result<Self> {
        let file = file
            .map(PathBuf::from)
            .or_else(|| env.iter().find(|(k, _)| k == "AUTHRIM_CONFIG").map(|(_, v)| PathBuf::from(v)));
        let mut table = match file {
            Some(path) => {
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| anyhow::anyhow!("cannot read config file {}: {e}", path.display()))?;
                text.parse::<toml::Table>()
                    .map_err(|e| anyhow::anyhow!("config file {}: {e}", path.display()))?
            }
            None => toml::Table::new(),
        };
        for (var, key) in ENV_VARS {
            if let Some((_, raw)) = env.iter().find(|(k, _)| k == var) {
                table.insert((*key).into(), env_value(var, key, raw)?);
            }
        }
        let issuer_set = table.contains_key("issuer");
        let mut config: Config = toml::Value::Table(table)
            .try_into()
            .map_err(|e| anyhow::anyhow!("configuration: {e}"))?;
        if !issuer_set {
            // Whoever only moves the port (`AUTHRIM_LISTEN=127.0.0.1:9000`) gets an issuer
            // that names it, rather than one pointing at a port nothing listens on.
            config.issuer = default_issuer(&config.listen);
        }
        config.validate()?;
        Ok(config)
    }

    pub fn validate(&self) -> anyhow::Result<()> {
        let url = url::Url::parse(&self.issuer).map_err(|e| anyhow::anyhow!("issuer {:?}: {e}", self.issuer))?;
        let loopback = matches!(url.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"));
        if url.scheme() != "https" && !(url.scheme() == "http" && loopback) {
            anyhow::bail!("issuer must use https (http is allowed only for localhost): {}", self.issuer);
        }
        if url.query().is_some() || url.fragment().is_some() {
            anyhow::bail!("issuer must not have a query or fragment (OpenID Connect Discovery §3)");
        }
        for (name, n) in [
            ("code_shards", self.code_shards),
            ("session_shards", self.session_shards),
            ("challenge_shards", self.challenge_shards),
            ("revocation_shards", self.revocation_shards),
            ("refresh_shards", self.refresh_shards),
        ] {
            if !(1..=4096).contains(&n) {
                anyhow::bail!("{name} must be between 1 and 4096, got {n}");
            }
        }
        if self.code_expiry == 0 || self.access_token_ttl == 0 || self.id_token_ttl == 0 {
            anyhow::bail!("token and code lifetimes must be positive");
        }
        if self.enable_test_endpoints {
            if self.admin_token.as_deref().is_none_or(str::is_empty) {
                anyhow::bail!("AUTHRIM_ENABLE_TEST_ENDPOINTS needs AUTHRIM_ADMIN_TOKEN");
            }
            if !loopback && !self.force_test_endpoints {
                anyhow::bail!(
                    "refusing to enable the test-only endpoints with the non-localhost issuer {}: they mint tokens \
                     without a login. Set AUTHRIM_FORCE_TEST_ENDPOINTS=true only for a dedicated load-test deployment",
                    self.issuer
                );
            }
        }
        if self.refresh_reuse_grace > MAX_REFRESH_REUSE_GRACE {
            anyhow::bail!("refresh_reuse_grace is at most {MAX_REFRESH_REUSE_GRACE} seconds, got {}", self.refresh_reuse_grace);
        }
        if !matches!(self.theme_css.as_str(), "add" | "replace") {
            anyhow::bail!("theme_css must be add or replace, got {:?}", self.theme_css);
        }
        if self.mail_max_per_recipient == 0 || self.mail_recipient_window == 0 {
            anyhow::bail!("mail_max_per_recipient and mail_recipient_window must be positive");
        }
        if self.second_factor_max_failures == 0 {
            anyhow::bail!("second_factor_max_failures must be positive");
        }
        if self.login_throttle_max_keys < 1_000 || self.max_authorization_request_bytes < 1_024 {
            anyhow::bail!("login_throttle_max_keys must be at least 1000 and max_authorization_request_bytes at least 1024");
        }
        if self.backchannel_logout_timeout == 0
            || self.backchannel_logout_max_attempts == 0
            || self.backchannel_logout_retry_initial == 0
            || self.backchannel_logout_concurrency == 0
        {
            anyhow::bail!("the backchannel_logout_* settings must be positive");
        }
        for g in crate::util::split_list(&self.registration_grant_types) {
            if !crate::registry::clients::supported_grant_types().contains(&g) {
                anyhow::bail!("registration_grant_types: {g:?} is not a grant type Authrim supports");
            }
        }
        for m in crate::util::split_list(&self.registration_auth_methods) {
            if !crate::registry::clients::AUTH_METHODS.contains(&m) {
                anyhow::bail!("registration_auth_methods: {m:?} is not a client authentication method Authrim supports");
            }
        }
        let algs = self.signing_algs()?;
        if !algs.contains(&"RS256") {
            anyhow::bail!("signing_algorithms must include RS256 (OpenID Connect Discovery §3 requires it)");
        }
        if !algs.contains(&self.token_signing_alg.as_str()) {
            anyhow::bail!("token_signing_alg {} is not among signing_algorithms ({})", self.token_signing_alg, self.signing_algorithms);
        }
        let profile = crate::profile::Profile::parse(&self.security_profile)
            .ok_or_else(|| anyhow::anyhow!("security_profile must be standard or fapi2, got {:?}", self.security_profile))?;
        if !profile.allows_alg(&self.token_signing_alg) {
            anyhow::bail!(
                "security_profile = fapi2 signs with {} only (FAPI 2.0 §5.4): set token_signing_alg to one of them (and add it to signing_algorithms)",
                crate::profile::FAPI_ALGS.join(", ")
            );
        }
        // JARM §2.1 recommends ten minutes at most; under ten seconds a slow browser or a
        // client's clock a little behind would see it expired.
        if !(10..=600).contains(&self.jarm_response_ttl) {
            anyhow::bail!("jarm_response_ttl must be between 10 and 600 seconds, got {}", self.jarm_response_ttl);
        }
        if profile.is_fapi2() && self.pushed_request_ttl >= 600 {
            anyhow::bail!("security_profile = fapi2 needs pushed_request_ttl under 600 seconds (FAPI 2.0 §5.3.2.2), got {}", self.pushed_request_ttl);
        }
        self.dpop_algs()?;
        if self.dpop_proof_max_age == 0 || self.dpop_nonce_lifetime == 0 || self.dpop_replay_max_entries < 1_000 {
            anyhow::bail!("dpop_proof_max_age and dpop_nonce_lifetime must be positive, dpop_replay_max_entries at least 1000");
        }
        if self.client_assertion_max_lifetime == 0 || self.fetch_timeout == 0 || self.fetch_max_bytes < 1024 || self.pushed_request_ttl == 0 {
            anyhow::bail!("client_assertion_max_lifetime, fetch_timeout and pushed_request_ttl must be positive, fetch_max_bytes at least 1024");
        }
        if self.device_code_ttl == 0 || self.device_poll_interval == 0 || self.device_user_code_max_failures == 0 {
            anyhow::bail!("device_code_ttl, device_poll_interval and device_user_code_max_failures must be positive");
        }
        if self.ciba_request_ttl == 0 || self.ciba_max_request_ttl < self.ciba_request_ttl || self.ciba_poll_interval == 0 || self.ciba_binding_message_max_length == 0 {
            anyhow::bail!("ciba_request_ttl, ciba_poll_interval and ciba_binding_message_max_length must be positive, ciba_max_request_ttl at least ciba_request_ttl");
        }
        if let Some(hook) = self.ciba_notify_hook_url.as_deref().filter(|u| !u.is_empty()) {
            if !url::Url::parse(hook).is_ok_and(|u| matches!(u.scheme(), "https" | "http") && u.host_str().is_some()) {
                anyhow::bail!("ciba_notify_hook_url {hook:?} must be an http(s) URL");
            }
        }
        if self.registration_max_per_address == 0 {
            anyhow::bail!("registration_max_per_address must be at least 1 (registration is closed by open_registration = false)");
        }
        self.validate_agents()?;
        self.validate_overridable()?;
        if !matches!(self.console_mfa.as_str(), "required" | "if_enrolled") {
            anyhow::bail!("console_mfa must be required or if_enrolled");
        }
        if self.tls_cert.is_some() != self.tls_key.is_some() {
            anyhow::bail!("tls_cert and tls_key must be given together");
        }
        if let Some(bad) = crate::util::split_list(&self.mtls_trusted_proxies).find(|p| crate::http::client_cert::ProxyNet::parse(p).is_none()) {
            anyhow::bail!("mtls_trusted_proxies: {bad:?} is not an IP address or CIDR block");
        }
        if self.mtls_client_cert_header.as_deref().is_some_and(|h| axum::http::HeaderName::from_bytes(h.as_bytes()).is_err()) {
            anyhow::bail!("mtls_client_cert_header is not a header name");
        }
        if let Some(url) = &self.database_url {
            if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
                anyhow::bail!("AUTHRIM_DATABASE_URL must be a postgres:// URL (leave it unset for the embedded SQLite database)");
            }
            if self.key_encryption_key.is_none() {
                anyhow::bail!(
                    "with PostgreSQL every node must hold the same key-encryption key: set AUTHRIM_KEY_ENCRYPTION_KEY \
                     (32 random bytes, base64url); it must not live in the database it protects"
                );
            }
            if self.database_pool_size == 0 || self.database_timeout_ms == 0 || self.revocation_max_staleness_ms < 100 {
                anyhow::bail!("database_pool_size and database_timeout_ms must be positive, revocation_max_staleness_ms at least 100");
            }
        }
        if self.key_publish_delay <= self.key_cache_ttl {
            anyhow::bail!(
                "key_publish_delay ({}) must exceed key_cache_ttl ({}): a new key must be published by every node before it signs",
                self.key_publish_delay, self.key_cache_ttl
            );
        }
        if !matches!(self.sqlite_synchronous.to_ascii_uppercase().as_str(), "FULL" | "NORMAL" | "EXTRA") {
            anyhow::bail!("sqlite_synchronous must be FULL, NORMAL or EXTRA");
        }
        self.validate_connection_limits()
    }

    /// The checks of the settings a tenant may set (`tenant::overrides`), run on the
    /// deployment's settings and on each tenant's (the deployment's with the tenant's on top).
    pub fn validate_overridable(&self) -> anyhow::Result<()> {
        self.validate_resource_servers()?;
        for (i, p) in self.identity_providers.iter().enumerate() {
            p.validate(i)?;
            if self.identity_providers[..i].iter().any(|q| q.id == p.id) {
                anyhow::bail!("identity_providers: the id {} is used twice", p.id);
            }
        }
        if !matches!(self.mfa_policy.as_str(), "optional" | "required" | "passkey") {
            anyhow::bail!("mfa_policy must be optional, required or passkey");
        }
        if let Some(f) = self.signup_required.split_whitespace().find(|f| !matches!(*f, "email" | "name" | "given_name" | "family_name")) {
            anyhow::bail!("signup_required: {f:?} is not one of email, name, given_name, family_name");
        }
        if self.signup && self.signup_verify_email && self.smtp_url.as_deref().is_none_or(str::is_empty) {
            anyhow::bail!("signup_verify_email needs smtp_url (or signup_verify_email = false)");
        }
        if self.password_min_length < 8 || self.password_min_length > 1024 {
            anyhow::bail!("password_min_length must be 8-1024");
        }
        if self.mfa_policy == "passkey" && !self.passkeys {
            anyhow::bail!("mfa_policy = passkey needs passkeys = true");
        }
        Ok(())
    }

    fn validate_connection_limits(&self) -> anyhow::Result<()> {
        for (name, secs) in [
            ("header_read_timeout", self.header_read_timeout),
            ("body_read_timeout", self.body_read_timeout),
            ("idle_timeout", self.idle_timeout),
            ("tls_handshake_timeout", self.tls_handshake_timeout),
        ] {
            // Zero would close every connection at once; the upper bound keeps deadlines
            // (now + timeout) far from overflow and still allows "practically off".
            if !(1..=86_400).contains(&secs) {
                anyhow::bail!("{name} must be between 1 and 86400 seconds, got {secs}");
            }
        }
        if self.max_connections == Some(0) || self.max_connections_per_address == 0 {
            anyhow::bail!("max_connections and max_connections_per_address must be positive");
        }
        // A per-address cap above the global one is allowed: it simply never binds.
        Ok(())
    }

    /// The issuer without a trailing slash, the prefix of every endpoint URL.
    /// The least every sign-in must reach (`mfa_policy`).
    pub fn required_level(&self) -> crate::factors::Level {
        match self.mfa_policy.as_str() {
            "required" => crate::factors::Level::Mfa,
            "passkey" => crate::factors::Level::Passkey,
            _ => crate::factors::Level::Password,
        }
    }

    pub fn base_url(&self) -> &str {
        self.issuer.trim_end_matches('/')
    }

    /// The issuer's path without its trailing slash (`/tenant1` for
    /// `https://host/tenant1`, empty for an issuer at the root): what every page, form,
    /// redirect, asset URL and cookie path of ours starts with, so that Authrim works behind a
    /// proxy that forwards a path prefix. A slice of the issuer: nothing allocated.
    pub fn base_path(&self) -> &str {
        let url = self.base_url();
        let host = url.find("://").map_or(0, |i| i + 3);
        url[host..].find('/').map_or("", |i| &url[host + i..])
    }

    /// Password hashes computed at once (`password_hash_concurrency`, 0 = half the cores).
    pub fn password_hash_slots(&self) -> usize {
        match self.password_hash_concurrency {
            0 => (std::thread::available_parallelism().map_or(1, |n| n.get()) / 2).max(1),
            n => n,
        }
    }

    pub fn secure_cookies(&self) -> bool {
        self.issuer.starts_with("https://")
    }
}

fn env_value(var: &str, key: &str, raw: &str) -> anyhow::Result<toml::Value> {
    if NUMERIC_KEYS.contains(&key) {
        let n: i64 = raw.trim().parse().map_err(|_| anyhow::anyhow!("{var} must be a number, got {raw:?}"))?;
        return Ok(toml::Value::Integer(n));
    }
    if BOOL_KEYS.contains(&key) {
        return match raw.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Ok(toml::Value::Boolean(true)),
            "0" | "false" | "no" | "off" | "" => Ok(toml::Value::Boolean(false)),
            _ => anyhow::bail!("{var} must be true or false, got {raw:?}"),
        };
    }
    Ok(toml::Value::String(raw.to_string()))
}

#[cfg(test)]
mod tests;
