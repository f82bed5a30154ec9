//! `grant_type=urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 §3.4, §3.5): the
//! device polls with its device code until the user has answered on the verification page
//! (`endpoints::device`). Tokens are issued as for an authorization code: the ID token when
//! `openid` was granted, a refresh token on the same terms, `acr`/`amr`/`auth_time` from the
//! sign-in that approved, the granted resources as the audience (narrowed by `resource`), and
//! bound to the DPoP key the token request proves.

use super::{GrantHandler, TokenResponse};
use crate::error::{OAuthError, OAuthResult};
use crate::http::params::Params;
use crate::registry::Client;
use crate::stores::device::Poll;
use crate::tenant::Issuer;
use axum::http::StatusCode;
use async_trait::async_trait;

pub const GRANT_TYPE: &str = "urn:ietf:params:oauth:grant-type:device_code";

pub struct DeviceCodeGrant;

/// RFC 8628 §3.5's codes travel with 400, as RFC 6749 §5.2's do.
pub(crate) fn poll_error(code: &'static str, description: &'static str) -> OAuthError {
    OAuthError::invalid_request(description).code_as(code).with_status(StatusCode::BAD_REQUEST)
}

#[async_trait]
impl GrantHandler for DeviceCodeGrant {
    fn grant_type(&self) -> &'static str {
        GRANT_TYPE
    }

    async fn exchange(&self, app: &Issuer, client: &Client, params: &Params, holder: super::Holder<'_>) -> OAuthResult<TokenResponse> {
        let device_code = params.require("device_code")?;
        let (request, approval) = match app.stores.device.poll(app.tenant.id, device_code, client.id()).await? {
            Poll::Approved(request, approval) => (request, approval),
            Poll::Pending => return Err(poll_error("authorization_pending", "the user has not answered yet")),
            Poll::SlowDown => return Err(poll_error("slow_down", "polling too often: the interval is now 5 seconds longer")),
            Poll::Expired => return Err(poll_error("expired_token", "the device code has expired: start again")),
            Poll::Denied => return Err(poll_error("access_denied", "the user denied the request")),
            Poll::Unknown => return Err(OAuthError::invalid_grant("the device code is invalid, spent, or another client's")),
        };
        super::issue_for_approval(app, client, params, &request.scope, &request.resources, &approval, holder, None).await
    }
}
