//! Pushed authorization requests (RFC 9126), as `/authorize` sees them: a validated request
//! kept in the ChallengeStore (so any node can read it) under a `request_uri` that lives
//! `pushed_request_ttl` seconds and is used once.
//!
//! "Used" means a code was issued for it, not that a page was shown: the browser may load
//! `/authorize` again before the user has finished signing in (a reload, Back), and must
//! not be turned away for it (the OpenID Foundation's PAR tests check exactly this). So
//! `/authorize` reads the request, and `spend` marks the `request_uri` used when the code is
//! issued; a second code for it is refused.

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

/// The request pushed as `request_uri` by `client_id`, remembering where it came from.
pub async fn load(app: &App, client_id: &str, request_uri: &str) -> Result<AuthorizationRequest, Unusable> {
    let id = request_uri.strip_prefix(REQUEST_URI_PREFIX).ok_or(Unusable::Invalid)?;
    let record = app.stores.challenges.peek(id, KIND).await.map_err(Unusable::Store)?.ok_or(Unusable::Invalid)?;
    if record.binding != sha256(client_id.as_bytes()) {
        // Shown to the wrong party: spent, not left for another try.
        app.stores.challenges.consume(id, KIND).await.map_err(Unusable::Store)?;
        return Err(Unusable::Invalid);
    }
    let mut req: AuthorizationRequest = serde_json::from_value(record.payload).map_err(|_| Unusable::Invalid)?;
    req.pushed = Some(request_uri.to_string());
    Ok(req)
}

/// Mark `request_uri` used, as its code is issued: `false` if a code was issued for it
/// already. Remembered as long as the request itself can live.
pub async fn spend(app: &App, request_uri: &str) -> StoreResult<bool> {
    let key = format!("par-used\u{1f}{request_uri}");
    app.stores.challenges.first_use(&key, crate::util::now() + app.config.pushed_request_ttl).await
}
