//! `grant_type=urn:openid:params:grant-type:ciba` (CIBA Core §10.1, §11): the client redeems
//! the `auth_req_id` of a backchannel authentication request (`endpoints::ciba`) once the user
//! has answered on their authentication device (the account page). A poll-mode client asks
//! until then, paced like a device (`authorization_pending`, `slow_down`); a ping-mode client
//! is told when to come (`ciba::ping`) and may poll as well; a push-mode client is sent the
//! tokens (`ciba::push`) and is refused here.
//!
//! Tokens are issued as for an authorization code (`grants::issue_for_approval`): an ID token
//! with `auth_time` and `acr` of the sign-in that approved and no `nonce` (CIBA has none), a
//! refresh token on the same terms, the requested resources as the audience.

use super::device_code::poll_error;
use super::{GrantHandler, TokenResponse};
use crate::error::{OAuthError, OAuthResult};
use crate::http::params::Params;
use crate::registry::Client;
use crate::stores::ciba::{Mode, Poll};
use crate::tenant::Issuer;
use async_trait::async_trait;

pub const GRANT_TYPE: &str = "urn:openid:params:grant-type:ciba";

pub struct CibaGrant;

#[async_trait]
impl GrantHandler for CibaGrant {
    fn grant_type(&self) -> &'static str {
        GRANT_TYPE
    }

    async fn exchange(&self, app: &Issuer, client: &Client, params: &Params, holder: super::Holder<'_>) -> OAuthResult<TokenResponse> {
        let auth_req_id = params.require("auth_req_id")?;
        // CIBA Core §11: these travel with 400, as RFC 6749 §5.2's codes do.
        // CIBA Core §10.3: a push-mode client is sent its tokens; it never redeems an id.
        if client.meta.backchannel_token_delivery_mode.as_deref() == Some("push") {
            return Err(push_refused());
        }
        let (request, approval) = match app.stores.ciba.poll(app.tenant.id, auth_req_id, client.id()).await? {
            // A request made in push mode by a client since registered for another mode.
            Poll::Approved(request, _) if request.mode == Mode::Push => return Err(push_refused()),
            Poll::Approved(request, approval) => (request, approval),
            Poll::Pending => return Err(poll_error("authorization_pending", "the user has not answered yet")),
            Poll::SlowDown => return Err(poll_error("slow_down", "polling too often: the interval is now 5 seconds longer")),
            Poll::Expired => return Err(poll_error("expired_token", "the auth_req_id has expired: start again")),
            Poll::Denied => return Err(poll_error("access_denied", "the user denied the request")),
            Poll::Unknown => return Err(OAuthError::invalid_grant("the auth_req_id is invalid, spent, or another client's")),
        };
        super::issue_for_approval(app, client, params, &request.scope, &request.resources, &approval, holder, None).await
    }
}

fn push_refused() -> OAuthError {
    OAuthError::invalid_grant("this auth_req_id was made in push mode: its tokens are delivered to the client's notification endpoint")
}
