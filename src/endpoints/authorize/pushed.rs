//! Pushed authorization requests (RFC 9126), as `/authorize` sees them.
//!
//! A push stores nothing. The validated request is sealed (`http::sealed`: AES-256-GCM-SIV
//! under a key derived from the KEK, with an expiry of `pushed_request_ttl`) and bound to the
//! client that pushed it; the sealed value *is* the `request_uri`. RFC 9126 §2.2 leaves the
//! form of a `request_uri` to the server, and §7.1 / RFC 9101 §10.2 ask only that it cannot be
//! guessed, which an authenticated ciphertext with a random nonce cannot. So a flood of pushes
//! by a public client (no authentication needed) costs memory only while each push is being
//! answered, and nothing on disk; no client's pushes can crowd out another's.
//!
//! "Used" means a code was issued for it, not that a page was shown: the browser may load
//! `/authorize` again before the user has finished signing in (a reload, Back), and must
//! not be turned away for it (the OpenID Foundation's PAR tests check exactly this). So
//! `/authorize` reads the request, and `spend` marks the `request_uri` used when the code is
//! issued, by its digest (the only thing ever stored, and only for a request that reached a
//! code); a second code for it is refused.

use super::request::AuthorizationRequest;
use crate::tenant::Issuer;
use crate::db::StoreResult;
use crate::util::{b64, sha256};

/// RFC 9126 §2.2: the URN prefix of the `request_uri` values we mint.
pub const REQUEST_URI_PREFIX: &str = "urn:ietf:params:oauth:request_uri:";
/// The sealing purpose: a pushed request never opens as a login form's state, or the reverse.
const KIND: &str = "authrim pushed request v1";

/// The `request_uri` for `req`, or `None` if it would be longer than `/authorize` accepts.
pub fn push(app: &Issuer, req: &AuthorizationRequest) -> Option<String> {
    let sealed = app.tenant.sealer.seal(KIND, &req.client_id, app.config.pushed_request_ttl, req);
    let uri = format!("{REQUEST_URI_PREFIX}{sealed}");
    (sealed.len() <= app.tenant.sealer.max_len() && uri.len() <= crate::http::params::MAX_REQUEST_URI_LEN).then_some(uri)
}

/// The longest `request_uri` we mint, as `/authorize` may receive it (percent-encoded
/// prefix included), for its size limit.
pub fn max_request_uri_len(app: &Issuer) -> usize {
    app.tenant.sealer.max_len() + 3 * REQUEST_URI_PREFIX.len()
}

/// The request pushed as `request_uri` by `client_id`: `None` if it is not one of ours, was
/// altered, has expired or was pushed by another client. What it carries as `pushed` is the
/// digest `spend` marks, not the (long) `request_uri` itself, since the request travels on
/// through the login and consent forms.
pub fn load(app: &Issuer, client_id: &str, request_uri: &str) -> Option<AuthorizationRequest> {
    let sealed = request_uri.strip_prefix(REQUEST_URI_PREFIX)?;
    let mut req: AuthorizationRequest = app.tenant.sealer.open(KIND, Some(client_id), sealed).ok()?;
    if req.client_id != client_id {
        return None;
    }
    req.pushed = Some(b64(&sha256(request_uri.as_bytes())));
    Some(req)
}

/// Mark the pushed request `digest` (`AuthorizationRequest::pushed`) used, as its code is
/// issued: `false` if a code was issued for it already. Remembered as long as the request
/// itself can live.
pub async fn spend(app: &Issuer, digest: &str) -> StoreResult<bool> {
    let key = format!("par-used\u{1f}{digest}");
    app.stores.challenges.first_use(app.tenant.id, &key, crate::util::now() + app.config.pushed_request_ttl).await
}
