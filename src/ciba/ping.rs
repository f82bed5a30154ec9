//! Ping mode (CIBA Core §10.2): once the user has answered, the client is sent
//! `{"auth_req_id": …}` with `Authorization: Bearer {client_notification_token}` at its
//! `backchannel_client_notification_endpoint`, then redeems the id at the token endpoint.
//!
//! The notification rides the back-channel outbox (`logout::backchannel`, rows of kind
//! `ciba_ping`), written in the transaction that records the answer (`CibaStore::decide`):
//! the same claims with a lease, retries with doubling waits, address policy, concurrency and
//! timeout as a logout token, so no second deliverer exists. Its two secrets (the
//! `auth_req_id` and the client's token) are sealed under the key-encryption key, in the
//! request's row from the start and in the outbox row until it is delivered and deleted.

use crate::db::{Sql, StoreResult};
use crate::keys::Vault;
use crate::logout::backchannel::{Deliverer, Due, Sending};
use crate::tenant::Issuer;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The outbox rows of this kind are pings.
pub const KIND: &str = "ciba_ping";
/// The vault label of a sealed ping.
const LABEL: &str = "ciba-ping";

#[derive(Serialize, Deserialize)]
struct Ping {
    auth_req_id: String,
    token: String,
}

/// A ping for the request `auth_req_id`, sealed: what the request's row keeps.
pub fn seal(vault: &Vault, auth_req_id: &str, client_notification_token: &str) -> Vec<u8> {
    let ping = Ping { auth_req_id: auth_req_id.to_string(), token: client_notification_token.to_string() };
    vault.seal(LABEL, serde_json::to_string(&ping).unwrap_or_default().as_bytes())
}

/// Queue the sealed ping for `client_id` in the caller's transaction (the answer's).
pub fn enqueue(sql: &mut dyn Sql, tenant: crate::tenant::TenantId, client_id: &str, user_id: &str, sealed: Vec<u8>, t: u64) -> StoreResult<()> {
    crate::logout::backchannel::enqueue_other(sql, tenant, KIND, client_id, user_id, sealed, t)
}

/// The `auth_req_id` and `client_notification_token` a sealed ping holds (push mode seals
/// its requests' the same way: `ciba::push`).
pub fn open(vault: &Vault, sealed: Option<&[u8]>) -> Option<(String, String)> {
    let ping: Ping = sealed.and_then(|s| vault.open_sealed(LABEL, s).ok()).and_then(|p| serde_json::from_slice(&p).ok())?;
    Some((ping.auth_req_id, ping.token))
}

/// The outbox's deliverer of pings: to the client's notification endpoint. A row that cannot
/// be opened never will be; a client that refuses a ping (401, 403, 404, …) refuses it again
/// (CIBA Core §10.2 leaves 4xx to the OP, and a retry would only reach the client later with a
/// stale token: the OpenID Foundation's FAPI-CIBA plan fails a second call after a 401).
pub struct Pings;

impl Deliverer for Pings {
    fn kinds(&self) -> &'static [&'static str] {
        &[KIND]
    }

    fn endpoint(&self, app: &Issuer, row: &Due) -> Option<String> {
        app.client(&row.client_id).and_then(|c| c.meta.backchannel_client_notification_endpoint.clone())
    }

    fn send<'a>(&'a self, app: &'a Issuer, uri: &'a str, row: &'a Due, timeout: Duration) -> Sending<'a> {
        Box::pin(async move {
            let (auth_req_id, token) = open(&app.vault, row.payload.as_deref()).ok_or("the ping in the outbox cannot be opened")?;
            Ok(app.fetcher.post_json(uri, &serde_json::json!({"auth_req_id": auth_req_id}), Some(&token), timeout).await)
        })
    }

    fn our_error_is_final(&self) -> bool {
        true
    }

    fn refusal_is_final(&self) -> bool {
        true
    }

    fn events(&self) -> (&'static str, &'static str) {
        ("ciba_ping_delivered", "ciba_ping_abandoned")
    }
}
