//! Pushed authorization requests (RFC 9126), as `/authorize` sees them: a validated request
//! kept in the ChallengeStore (so any node can take it) under a `request_uri` that is used
//! once and lives `pushed_request_ttl` seconds.

use super::request::AuthorizationRequest;
use crate::app::App;
use crate::db::StoreResult;
use crate::stores::ChallengeRecord;
use crate::util::sha256;

/// RFC 9126 §2.2: the URN prefix of the `request_uri` values we mint.
pub const REQUEST_URI_PREFIX: &str = "urn:ietf:params:oauth:request_uri:";
const KIND: &str = "par";

/// Keep `req` and return its `request_uri`.
pub async fn push(app: &App, req: &AuthorizationRequest) -> StoreResult<String> {
    let record = ChallengeRecord {
        kind: KIND.into(),
        binding: sha256(req.client_id.as_bytes()),
        payload: serde_json::to_value(req).expect("requests serialise"),
    };
    let id = app.stores.challenges.issue(record, app.config.pushed_request_ttl).await?;
    Ok(format!("{REQUEST_URI_PREFIX}{id}"))
}

/// Why a `request_uri` cannot be used; shown to the user, never redirected (the request
/// it stands for, redirect URI included, is not known).
pub enum Unusable {
    /// Not one of ours, already used, expired, or pushed by another client.
    Invalid,
    Store(crate::db::StoreError),
}

/// Take the request pushed as `request_uri` by `client_id` (once).
pub async fn take(app: &App, client_id: &str, request_uri: &str) -> Result<AuthorizationRequest, Unusable> {
    let id = request_uri.strip_prefix(REQUEST_URI_PREFIX).ok_or(Unusable::Invalid)?;
    let record = app.stores.challenges.consume(id, KIND).await.map_err(Unusable::Store)?.ok_or(Unusable::Invalid)?;
    // Consumed even when the client does not match: a request_uri shown to the wrong party
    // is spent, not left for another try.
    if record.binding != sha256(client_id.as_bytes()) {
        return Err(Unusable::Invalid);
    }
    serde_json::from_value(record.payload).map_err(|_| Unusable::Invalid)
}
