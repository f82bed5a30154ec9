//! Request objects passed by reference (OpenID Connect Core §6.2, RFC 9101 §5.2): a
//! `request_uri` that is not one of our PAR URNs names a URL where the client publishes its
//! signed request object.
//!
//! Only URLs the client registered are fetched (`request_uris`; a fragment is the client's
//! cache marker and is ignored when comparing), through the fetcher: public addresses only,
//! bounded in size and time, no redirects. What comes back is the `request` parameter and is
//! verified exactly as one passed by value (`request_object`). A fetched object is kept
//! `request_uri_cache_ttl` seconds per client and URL, fragment included (a new fragment is a
//! new object), less if the response says so; so a burst of sign-ins naming one URL costs one
//! fetch. One client has at most `request_uri_max_fetches_per_client` fetches in flight, so
//! that it cannot take every fetch slot from the others.

use crate::app::App;
use crate::bounded::BoundedMap;
use crate::error::OAuthError;
use crate::registry::Client;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The media type RFC 9101 §5.2 gives request objects; JWTs served as plain text are taken too.
const ACCEPT: &str = "application/oauth-authz-req+jwt, application/jwt;q=0.9, text/plain;q=0.5";

pub struct RequestObjects {
    /// (client, URL) → (the object, until when it may be used again).
    cached: Mutex<BoundedMap<(String, Instant)>>,
    in_flight: Mutex<HashMap<String, usize>>,
}

/// Why a `request_uri` gave no request object; said to the client as `invalid_request_uri`.
#[derive(Debug)]
pub struct Unusable(pub String);

impl Unusable {
    pub fn error(&self) -> OAuthError {
        OAuthError::invalid_request(self.0.clone()).code_as("invalid_request_uri")
    }
}

/// One fetch slot of a client, given back when dropped.
struct Slot<'a> {
    owner: &'a RequestObjects,
    client: String,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut m = self.owner.in_flight.lock();
        if let Some(n) = m.get_mut(&self.client) {
            *n -= 1;
            if *n == 0 {
                m.remove(&self.client);
            }
        }
    }
}

impl RequestObjects {
    pub fn new(max_entries: usize) -> Self {
        Self { cached: Mutex::new(BoundedMap::new(max_entries)), in_flight: Mutex::new(HashMap::new()) }
    }

    /// The request object `client` published at `uri`, if `uri` is one of its `request_uris`.
    pub async fn fetch(&self, app: &App, client: &Client, uri: &str) -> Result<String, Unusable> {
        if uri.len() > crate::registry::clients::MAX_REQUEST_URI_LEN {
            return Err(Unusable(format!("request_uri is longer than {} characters", crate::registry::clients::MAX_REQUEST_URI_LEN)));
        }
        if !crate::registry::clients::registered_request_uri(&client.meta, uri) {
            return Err(Unusable("request_uri is not one of this client's registered request_uris".into()));
        }
        let key = format!("{}\u{1f}{uri}", client.id());
        if let Some((jwt, until)) = self.cached.lock().get(&key) {
            if Instant::now() < *until {
                return Ok(jwt.clone());
            }
        }
        let _slot = self.slot(app, client.id())?;
        let (body, max_age) = app.fetcher.get_bytes(uri, ACCEPT).await.map_err(|e| Unusable(format!("request_uri: {e}")))?;
        let jwt = std::str::from_utf8(&body).map(str::trim).unwrap_or_default();
        // A compact JWS or JWE: dot-separated base64url, nothing else.
        if jwt.is_empty() || !jwt.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_')) {
            return Err(Unusable("request_uri: the document is not a request object (a JWT)".into()));
        }
        let ttl = max_age.unwrap_or(u64::MAX).min(app.config.request_uri_cache_ttl);
        if ttl > 0 {
            self.cached.lock().insert(key, (jwt.to_string(), Instant::now() + Duration::from_secs(ttl)));
        }
        Ok(jwt.to_string())
    }

    fn slot(&self, app: &App, client_id: &str) -> Result<Slot<'_>, Unusable> {
        let mut m = self.in_flight.lock();
        let n = m.entry(client_id.to_string()).or_default();
        if *n >= app.config.request_uri_max_fetches_per_client {
            return Err(Unusable("request_uri: too many request objects of this client are being fetched; try again".into()));
        }
        *n += 1;
        Ok(Slot { owner: self, client: client_id.to_string() })
    }
}
