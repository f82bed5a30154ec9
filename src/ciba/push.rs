//! Push mode (CIBA Core §10.3): once the user has answered, the client is sent the outcome at
//! its `backchannel_client_notification_endpoint` with `Authorization: Bearer
//! {client_notification_token}`: the token response and `auth_req_id` when the user approved
//! (the ID token naming the request and hashing both tokens, §10.3.1), else
//! `{"auth_req_id", "error": "access_denied" | "expired_token"}` (§12). The client never
//! redeems the id at the token endpoint, which refuses it.
//!
//! Like a ping, the delivery rides the back-channel outbox (rows of kind `ciba_push`), written
//! in the transaction that records the answer (`CibaStore::decide`), so an approval is never
//! recorded without its delivery, nor delivered without being recorded; it is retried as a
//! logout token is and sent by the one fetcher (its public-address policy). The tokens are
//! minted just before that transaction, and sealed under the key-encryption key in the outbox
//! row until it is delivered and deleted. A request that lapses unanswered is told by the
//! expiry sweep (`ciba_push_expired` rows, holding the request's sealed ping: no tokens).

use crate::db::{Sql, StoreResult};
use crate::error::OAuthError;
use crate::http::fetch::FetchError;
use crate::http::params::Params;
use crate::logout::backchannel::{Deliverer, Due, Sending};
use crate::registry::Client;
use crate::stores::ciba::CibaRequest;
use crate::stores::device::Decision;
use crate::tenant::{Issuer, TenantId};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::time::Duration;

/// The outbox rows of this kind are pushed answers.
pub const KIND: &str = "ciba_push";
/// The outbox rows of this kind tell a push client that its request lapsed.
pub const EXPIRED_KIND: &str = "ciba_push_expired";
/// The vault label of a sealed answer.
const LABEL: &str = "ciba-push";

#[derive(Serialize, Deserialize)]
struct Push {
    token: String,
    body: Value,
}

/// The answer to push for `request`, sealed for the outbox: the tokens of `decision` if it
/// approves, else `access_denied`. `sealed_ping` is the request's sealed `auth_req_id` and
/// `client_notification_token` (`ciba::ping::seal`).
pub async fn answer(app: &Issuer, client: &Client, request: &CibaRequest, sealed_ping: Option<&[u8]>, decision: &Decision) -> Result<Vec<u8>, OAuthError> {
    let (auth_req_id, token) = super::ping::open(app.vault(), sealed_ping).ok_or_else(|| OAuthError::internal("ciba push", "the request's sealed notification cannot be opened"))?;
    let body = match decision {
        Decision::Approved(approval) => {
            // Nothing binds the tokens to a key here (no DPoP proof, no TLS connection of the
            // client's): registration refuses push mode to clients that need bound tokens.
            let holder = crate::grants::Holder::default();
            let tokens = crate::grants::issue_for_approval(app, client, &Params::default(), &request.scope, &request.resources, approval, holder, Some(&auth_req_id)).await?;
            let mut body = serde_json::to_value(&tokens).map_err(|e| OAuthError::internal("ciba push", e))?;
            body["auth_req_id"] = auth_req_id.into();
            body
        }
        Decision::Denied => json!({"auth_req_id": auth_req_id, "error": "access_denied", "error_description": "the user denied the request"}),
    };
    let push = Push { token, body };
    Ok(app.vault().seal(LABEL, serde_json::to_string(&push).unwrap_or_default().as_bytes()))
}

/// Queue a sealed answer (`answer`) for `client_id` in the caller's transaction (the answer's).
pub fn enqueue(sql: &mut dyn Sql, tenant: TenantId, client_id: &str, user_id: &str, sealed: Vec<u8>, t: u64) -> StoreResult<()> {
    crate::logout::backchannel::enqueue_other(sql, tenant, KIND, client_id, user_id, sealed, t)
}

/// Queue the news that a push request lapsed, in the caller's transaction (the expiry
/// sweep's); `sealed_ping` is the request's own.
pub fn enqueue_expired(sql: &mut dyn Sql, tenant: TenantId, client_id: &str, user_id: &str, sealed_ping: Vec<u8>, t: u64) -> StoreResult<()> {
    crate::logout::backchannel::enqueue_other(sql, tenant, EXPIRED_KIND, client_id, user_id, sealed_ping, t)
}

/// The outbox's deliverer of pushed answers and expiry notices: to the client's notification
/// endpoint. Final as a ping is: a row that cannot be opened, and a refusal (CIBA Core §10.3
/// leaves 4xx to the OP; a retry would reach a client that refused it with stale tokens).
pub struct Pushes;

impl Deliverer for Pushes {
    fn kinds(&self) -> &'static [&'static str] {
        &[KIND, EXPIRED_KIND]
    }

    fn endpoint(&self, app: &Issuer, row: &Due) -> Option<String> {
        app.client(&row.client_id).and_then(|c| c.meta.backchannel_client_notification_endpoint.clone())
    }

    fn send<'a>(&'a self, app: &'a Issuer, uri: &'a str, row: &'a Due, timeout: Duration) -> Sending<'a> {
        Box::pin(send(app, uri, &row.kind, row.payload.as_deref(), timeout))
    }

    fn our_error_is_final(&self) -> bool {
        true
    }

    fn refusal_is_final(&self) -> bool {
        true
    }

    fn events(&self) -> (&'static str, &'static str) {
        ("ciba_push_delivered", "ciba_push_abandoned")
    }
}

/// Send one row of either kind.
async fn send(app: &crate::app::App, uri: &str, kind: &str, sealed: Option<&[u8]>, timeout: Duration) -> Result<Result<(), FetchError>, String> {
    let (token, body) = match kind {
        EXPIRED_KIND => {
            let (auth_req_id, token) = super::ping::open(&app.vault, sealed).ok_or("the expiry notice in the outbox cannot be opened")?;
            (token, json!({"auth_req_id": auth_req_id, "error": "expired_token", "error_description": "the user did not answer in time"}))
        }
        _ => {
            let push: Push = sealed
                .and_then(|s| app.vault.open_sealed(LABEL, s).ok())
                .and_then(|p| serde_json::from_slice(&p).ok())
                .ok_or("the pushed answer in the outbox cannot be opened")?;
            (push.token, push.body)
        }
    };
    Ok(app.fetcher.post_json(uri, &body, Some(&token), timeout).await)
}
