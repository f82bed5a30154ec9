//! OAuth Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document): a client
//! with no registration here names itself by an https URL, and the JSON document at that URL
//! is its metadata. The document is fetched on first use (SSRF-safe, `http::fetch`), checked,
//! and kept in memory for the lifetime its response allows (`Cache-Control`), within
//! `client_id_metadata_document_ttl` / `_max_ttl` and at most `_max_entries` documents.
//!
//! Such clients are public (`none`) or prove a key from the document (`private_key_jwt` with
//! `jwks` or `jwks_uri`): nobody issued them a secret. They may use the code flow and refresh
//! tokens, and only the scopes open to self-registered clients (`registration_scopes`) plus
//! those of the registered resource servers.

use super::clients::{self, Client, ClientInput, AUTH_NONE, AUTH_PRIVATE_KEY_JWT};
use crate::app::App;
use crate::http::fetch::FetchError;
use parking_lot::Mutex;
use serde::Deserialize;
use serde_json::Value;
use crate::bounded::BoundedMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    #[error("client ID metadata documents are not accepted here")]
    Disabled,
    #[error("client ID metadata documents from {0} are not accepted here")]
    HostNotAllowed(String),
    #[error("the client_id is not a usable document URL: {0}")]
    BadUrl(&'static str),
    #[error("the client's metadata document could not be fetched: {0}")]
    Fetch(#[from] FetchError),
    #[error("the client's metadata document is invalid: {0}")]
    Invalid(String),
}

impl DocumentError {
    /// Worth trying again later (the document's server or ours was busy), rather than the
    /// client's fault.
    pub fn is_transient(&self) -> bool {
        matches!(self, DocumentError::Fetch(FetchError::Busy))
    }
}

/// Whether `client_id` is a URL, i.e. names a metadata document rather than a registration.
/// Registered client ids never contain ':' (`clients::validate`), so the two cannot collide.
pub fn is_document_id(client_id: &str) -> bool {
    client_id.starts_with("https://") || client_id.starts_with("http://")
}

struct Entry {
    client: Arc<Client>,
    fetched: Instant,
    fresh_for: Duration,
}

/// A document client is made for one tenant (its scopes include the tenant's resource
/// servers'), so another tenant's lookup must not find it: the default tenant's key is the URL
/// (no allocation), another's has the tenant's number before it (a URL has no `\x1f`).
fn cache_key(tenant: crate::tenant::TenantId, url: &str) -> std::borrow::Cow<'_, str> {
    match tenant.is_default() {
        true => std::borrow::Cow::Borrowed(url),
        false => std::borrow::Cow::Owned(format!("{}\x1f{url}", tenant.0)),
    }
}

pub struct ClientDocuments {
    entries: Mutex<BoundedMap<Entry>>,
}

impl ClientDocuments {
    pub fn new(max_entries: usize) -> Self {
        Self { entries: Mutex::new(BoundedMap::new(max_entries)) }
    }

    /// The document client named by `url`: from memory while fresh, else fetched and checked.
    pub async fn resolve(&self, app: &crate::tenant::Issuer, url: &str) -> Result<Arc<Client>, DocumentError> {
        let parsed = check_url(app, url)?;
        let key = cache_key(app.tenant.id, url);
        if let Some(e) = self.entries.lock().get(&key).filter(|e| e.fetched.elapsed() < e.fresh_for) {
            return Ok(e.client.clone());
        }
        let fetched = app.fetcher.get(parsed.as_str()).await?;
        let client = Arc::new(client_from_document(app, url, fetched.json)?);
        let ttl = fetched.max_age.unwrap_or(app.config.client_id_metadata_document_ttl).min(app.config.client_id_metadata_document_max_ttl);
        // Beyond the bound the oldest fetch goes: a flood of new URLs cannot grow memory.
        self.entries.lock().insert(key.into_owned(), Entry { client: client.clone(), fetched: Instant::now(), fresh_for: Duration::from_secs(ttl) });
        Ok(client)
    }

    /// The last document seen for `url`, however old: for code paths after the flow started
    /// (token checks, signing choices) that must not fetch.
    pub fn cached(&self, tenant: crate::tenant::TenantId, url: &str) -> Option<Arc<Client>> {
        self.entries.lock().get(&cache_key(tenant, url)).map(|e| e.client.clone())
    }

    pub fn len(&self) -> usize {
        self.entries.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The URL rules (draft §3): https, a path, no fragment, no user info, no dot segments; the
/// host allowed by the operator's policy. Plain http only for a loopback host when
/// `fetch_allow_private_addresses` is on (tests, development).
pub fn check_url(app: &App, url: &str) -> Result<url::Url, DocumentError> {
    let policy = app.config.document_policy();
    if policy == crate::config::agents::DocumentPolicy::Off {
        return Err(DocumentError::Disabled);
    }
    let u = url::Url::parse(url).map_err(|_| DocumentError::BadUrl("not a URL"))?;
    // The parser normalises; a client_id that is not already in normal form is not the
    // document's exact identifier.
    if u.as_str() != url {
        return Err(DocumentError::BadUrl("not in normalised form"));
    }
    let loopback = matches!(u.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"));
    if u.scheme() != "https" && !(u.scheme() == "http" && loopback && app.fetcher.allows_private()) {
        return Err(DocumentError::BadUrl("the scheme must be https"));
    }
    if u.fragment().is_some() || !u.username().is_empty() || u.password().is_some() {
        return Err(DocumentError::BadUrl("no fragment or user information allowed"));
    }
    if u.path() == "/" || url.split('/').skip(3).any(|seg| seg == "." || seg == "..") {
        return Err(DocumentError::BadUrl("a path (without dot segments) is required"));
    }
    let host = u.host_str().unwrap_or_default();
    if !policy.allows_host(host) {
        return Err(DocumentError::HostNotAllowed(host.to_string()));
    }
    Ok(u)
}

/// The document's fields we use; others are ignored (RFC 7591 §2).
#[derive(Deserialize)]
struct Document {
    client_id: String,
    #[serde(default)]
    client_secret: Option<Value>,
    #[serde(default)]
    redirect_uris: Vec<String>,
    #[serde(default)]
    client_name: Option<String>,
    #[serde(default)]
    client_uri: Option<String>,
    #[serde(default)]
    logo_uri: Option<String>,
    #[serde(default)]
    tos_uri: Option<String>,
    #[serde(default)]
    policy_uri: Option<String>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    grant_types: Option<Vec<String>>,
    #[serde(default)]
    response_types: Option<Vec<String>>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
    #[serde(default)]
    token_endpoint_auth_signing_alg: Option<String>,
    #[serde(default)]
    jwks: Option<Value>,
    #[serde(default)]
    jwks_uri: Option<String>,
    #[serde(default)]
    post_logout_redirect_uris: Option<Vec<String>>,
    #[serde(default)]
    application_type: Option<String>,
    #[serde(default)]
    dpop_bound_access_tokens: Option<bool>,
}

fn client_from_document(app: &crate::tenant::Issuer, url: &str, json: Value) -> Result<Client, DocumentError> {
    let invalid = |m: String| DocumentError::Invalid(m);
    let doc: Document = serde_json::from_value(json).map_err(|e| invalid(e.to_string()))?;
    // Draft §4.1: the document names itself, exactly.
    if doc.client_id != url {
        return Err(invalid(format!("its client_id {:?} is not the URL it was fetched from", doc.client_id)));
    }
    // Draft §4.1: nobody can have issued a document client a shared secret.
    if doc.client_secret.is_some() {
        return Err(invalid("it contains a client_secret".into()));
    }
    let method = doc.token_endpoint_auth_method.unwrap_or_else(|| AUTH_NONE.into());
    if method != AUTH_NONE && method != AUTH_PRIVATE_KEY_JWT {
        return Err(invalid(format!("token_endpoint_auth_method {method:?}: only none and private_key_jwt (no shared secrets)")));
    }
    if doc.redirect_uris.is_empty() {
        return Err(invalid("redirect_uris is required".into()));
    }
    let grant_types = doc.grant_types.unwrap_or_else(|| vec!["authorization_code".into()]);
    if let Some(g) = grant_types.iter().find(|g| !matches!(g.as_str(), "authorization_code" | "refresh_token")) {
        return Err(invalid(format!("grant type {g:?} is not open to document clients")));
    }
    // What the client may ask for: the scopes open to self-registered clients and those of
    // the registered resource servers; the document may narrow it.
    let open = crate::resources::open_to_self_registered(app);
    let scope = match &doc.scope {
        Some(s) => crate::util::split_list(s).filter(|x| open.iter().any(|o| o == x)).collect::<Vec<_>>().join(" "),
        None => open.join(" "),
    };
    let input = ClientInput {
        client_name: doc.client_name,
        redirect_uris: Some(doc.redirect_uris),
        grant_types: Some(grant_types),
        response_types: Some(doc.response_types.unwrap_or_else(|| vec!["code".into()])),
        token_endpoint_auth_method: Some(method),
        scope: Some(scope),
        jwks: doc.jwks,
        jwks_uri: doc.jwks_uri,
        token_endpoint_auth_signing_alg: doc.token_endpoint_auth_signing_alg,
        post_logout_redirect_uris: doc.post_logout_redirect_uris,
        application_type: doc.application_type,
        dpop_bound_access_tokens: doc.dpop_bound_access_tokens,
        client_uri: doc.client_uri,
        logo_uri: doc.logo_uri,
        tos_uri: doc.tos_uri,
        policy_uri: doc.policy_uri,
        ..Default::default()
    };
    let client = clients::document_client(input, url).map_err(invalid)?;
    // Its jwks_uri is fetched later: refused now if the address policy would refuse it then.
    clients::check_targets(&client.meta, app.config.fetch_allow_private_addresses).map_err(invalid)?;
    Ok(client)
}

#[cfg(test)]
mod tests {
    use super::is_document_id;

    #[test]
    fn document_ids_are_urls() {
        assert!(is_document_id("https://app.example/client.json"));
        assert!(!is_document_id("my-client"));
        assert!(!is_document_id("urn:x"));
    }
}
