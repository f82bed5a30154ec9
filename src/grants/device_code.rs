//! `grant_type=urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 §3.4, §3.5): the
//! device polls with its device code until the user has answered on the verification page
//! (`endpoints::device`). Tokens are issued as for an authorization code: the ID token when
//! `openid` was granted, a refresh token on the same terms, `acr`/`amr`/`auth_time` from the
//! sign-in that approved, the granted resources as the audience (narrowed by `resource`), and
//! bound to the DPoP key the token request proves.

use super::authorization_code::refresh_granted;
use super::{issue_tokens, GrantHandler, Issuance, TokenResponse};
use crate::error::{OAuthError, OAuthResult};
use crate::http::params::Params;
use crate::registry::Client;
use crate::stores::device::Poll;
use crate::stores::refresh::new_family_id;
use crate::stores::NewFamily;
use crate::tenant::Issuer;
use crate::tokens;
use axum::http::StatusCode;
use async_trait::async_trait;

pub const GRANT_TYPE: &str = "urn:ietf:params:oauth:grant-type:device_code";

pub struct DeviceCodeGrant;

/// RFC 8628 §3.5's codes travel with 400, as RFC 6749 §5.2's do.
fn poll_error(code: &'static str, description: &'static str) -> OAuthError {
    OAuthError::invalid_request(description).code_as(code).with_status(StatusCode::BAD_REQUEST)
}

#[async_trait]
impl GrantHandler for DeviceCodeGrant {
    fn grant_type(&self) -> &'static str {
        GRANT_TYPE
    }

    async fn exchange(&self, app: &Issuer, client: &Client, params: &Params, dpop: Option<&super::ProvenKey>) -> OAuthResult<TokenResponse> {
        let device_code = params.require("device_code")?;
        let (request, approval) = match app.stores.device.poll(app.tenant.id, device_code, client.id()).await? {
            Poll::Approved(request, approval) => (request, approval),
            Poll::Pending => return Err(poll_error("authorization_pending", "the user has not answered yet")),
            Poll::SlowDown => return Err(poll_error("slow_down", "polling too often: the interval is now 5 seconds longer")),
            Poll::Expired => return Err(poll_error("expired_token", "the device code has expired: start again")),
            Poll::Denied => return Err(poll_error("access_denied", "the user denied the request")),
            Poll::Unknown => return Err(OAuthError::invalid_grant("the device code is invalid, spent, or another client's")),
        };
        // Signed out where the request was approved, before the device came back: the
        // session's grants end with it (as a code's do).
        if tokens::session_ended(app, app.tenant.id, &approval.sid).await? {
            return Err(OAuthError::invalid_grant("the login session that approved this request has ended"));
        }
        let user = app
            .registry()
            .user(&approval.user_id)
            .filter(|u| !u.disabled)
            .ok_or_else(|| OAuthError::invalid_grant("the user of this authorization no longer exists or is disabled"))?;
        // RFC 8707 §2.2: the token request may pick among the authorized resources.
        let audience = crate::resources::narrow(&request.resources, params.get_all("resource"))?;
        let (jti, exp) = tokens::new_token_id(app);
        let grant_id = new_family_id();
        let refresh_token = match client.allows_grant("refresh_token") && refresh_granted(app, &request.scope, &request.resources) {
            true => {
                let new = NewFamily {
                    user_id: user.id.clone(),
                    client_id: client.id().to_string(),
                    scope: request.scope.clone(),
                    auth_time: approval.auth_time,
                    sid: approval.sid.clone(),
                    acr: approval.acr.clone(),
                    userinfo_claims: Vec::new(),
                    // RFC 9449 §5: a public client's refresh tokens are bound to its DPoP key.
                    jkt: dpop.filter(|_| client.is_public()).map(|k| k.jkt.clone()),
                    resources: request.resources.clone(),
                    amr: approval.amr.clone(),
                };
                Some(app.stores.refresh.create(app.tenant.id, &grant_id, new).await?)
            }
            false => None,
        };
        issue_tokens(
            app,
            Issuance {
                user: &user,
                client,
                scope: &request.scope,
                auth_time: approval.auth_time,
                sid: &approval.sid,
                acr: approval.acr.as_deref(),
                nonce: None,
                userinfo_claims: Vec::new(),
                id_token_claims: Vec::new(),
                grant_id: Some(&grant_id),
                jti,
                exp,
                refresh_token,
                dpop,
                audience,
                amr: &approval.amr,
            },
        )
    }
}
