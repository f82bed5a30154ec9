//! Configuration: built-in defaults, overridden by an optional TOML file (`AUTHRIM_CONFIG` or
//! `--config`), overridden by `AUTHRIM_*` environment variables (`sources`; every knob is
//! listed once in `ENV_VARS`, and a test checks docs/configuration.md's example against it),
//! then checked (`validate`). This file holds the settings and their defaults.

pub mod agents;
pub mod ldap;
mod sources;
pub mod upstreams;
mod validate;

pub use sources::ENV_VARS;

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
    /// `standard`, `fapi2` or `fapi-ciba`: the FAPI 2.0 Security Profile's rules for every
    /// client other than Authrim's own pages (PAR, PKCE, `private_key_jwt` with the issuer as
    /// `aud`, DPoP, no refresh-token rotation, codes of at most 60 s, PS256/ES256/EdDSA), or
    /// FAPI-CIBA's (signed CIBA requests, no push, `private_key_jwt` or mTLS, certificate-bound
    /// tokens, PS256/ES256; the code flow as under `fapi2`); see `profile`.
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
    /// LDAP or Active Directory directories users sign in against with their directory
    /// password; TOML only (`[[ldap_directories]]`, see `config::ldap`).
    pub ldap_directories: Vec<ldap::LdapDirectory>,
    /// LDAP directories one tenant's settings may list.
    pub tenant_max_ldap_directories: usize,
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
    /// The bounds of one tenant's directory (`registry::directory::Limits`): groups, members
    /// of a group, nesting depth, groups a user is in (through nesting too), roles a client
    /// defines.
    pub directory_max_groups: usize,
    pub directory_max_members: usize,
    pub directory_max_depth: usize,
    pub directory_max_groups_per_user: usize,
    pub directory_max_roles_per_client: usize,
    /// Groups a token carries at most; a user in more gets `groups_overage: true` instead.
    pub token_max_groups: usize,
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
    /// The largest SAML message accepted (issue 33): bytes of XML, once decoded (and
    /// inflated, for the HTTP-Redirect binding), and of its encoded form. Larger is refused
    /// before it is parsed.
    pub saml_max_message_bytes: usize,
    /// Seconds an assertion we issue may be used in (its `NotOnOrAfter`).
    pub saml_assertion_lifetime: u64,
    /// Seconds of clock difference allowed with a SAML identity provider when its assertions'
    /// time windows (`NotBefore`, `NotOnOrAfter`) are checked.
    pub saml_clock_skew: u64,
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

impl Config {
    /// The directory's bounds, as `registry::directory` takes them.
    pub fn directory_limits(&self) -> crate::registry::directory::Limits {
        crate::registry::directory::Limits {
            max_groups: self.directory_max_groups,
            max_members: self.directory_max_members,
            max_depth: self.directory_max_depth,
            max_groups_per_user: self.directory_max_groups_per_user,
            max_roles_per_client: self.directory_max_roles_per_client,
        }
    }
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
            ldap_directories: Vec::new(),
            tenant_max_ldap_directories: 5,
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
            directory_max_groups: 10_000,
            directory_max_members: 100_000,
            directory_max_depth: 8,
            directory_max_groups_per_user: 1_000,
            directory_max_roles_per_client: 200,
            token_max_groups: 100,
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
            saml_max_message_bytes: 64 * 1024,
            saml_assertion_lifetime: 300,
            saml_clock_skew: 120,
            enable_test_endpoints: false,
            force_test_endpoints: false,
        }
    }
}

/// The longest refresh-token reuse grace a deployment or a client may set: a superseded token
/// stays good this long, so it is kept short.
pub const MAX_REFRESH_REUSE_GRACE: u64 = 300;

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
            // Under FAPI the default's RS256 (kept for compatibility) drops out (FAPI 2.0 §5.4,
            // FAPI 1.0 Part 2 §8.6: EdDSA too under fapi-ciba).
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

    /// The largest body of a change to a tenant's settings (the admin API's `/admin/tenants`
    /// routes, the console's tenant pages): `max_body_bytes`, plus room for a style sheet and a
    /// logo of `tenant_theme_max_bytes` each as they travel (base64 in JSON is 4/3 of the
    /// file, a form's percent-encoding up to 3 times it). Without it a logo the settings
    /// allow could not be sent (`max_body_bytes` is 64 KiB by default).
    pub fn tenant_settings_body_limit(&self) -> usize {
        self.max_body_bytes.saturating_add(self.tenant_theme_max_bytes.saturating_mul(4))
    }

    pub fn secure_cookies(&self) -> bool {
        self.issuer.starts_with("https://")
    }
}

#[cfg(test)]
mod tests;
