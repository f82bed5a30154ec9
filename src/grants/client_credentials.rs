//! `grant_type=client_credentials` (RFC 6749 §4.4): a confidential client acting for itself.
//! The access token's `sub` is the client (RFC 9068 §2.2); no refresh or ID token.

use super::{allowed_targets, GrantHandler, TokenResponse};
use crate::error::{OAuthError, OAuthResult};
use crate::http::params::Params;
use crate::registry::clients::USER_SCOPES;
use crate::registry::Client;
use crate::tenant::Issuer;
use crate::tokens::{self, AccessTokenSpec};
use crate::util::split_list;
use async_trait::async_trait;

pub struct ClientCredentialsGrant;

#[async_trait]
impl GrantHandler for ClientCredentialsGrant {
    fn grant_type(&self) -> &'static str {
        "client_credentials"
    }

    async fn exchange(&self, app: &Issuer, client: &Client, params: &Params, holder: super::Holder<'_>) -> OAuthResult<TokenResponse> {
        if client.is_public() {
            return Err(OAuthError::unauthorized_client("client credentials need a confidential client"));
        }
        let audience = allowed_targets(app, client, params)?;
        let scope = machine_scope(app, client, &audience, params.get("scope"))?;
        let (jti, exp) = tokens::new_token_id(app);
        let spec = AccessTokenSpec {
            sub: client.id(),
            client_id: client.id(),
            scope: &scope,
            auth_time: None,
            acr: None,
            sid: None,
            userinfo_claims: Vec::new(),
            grant_id: None,
            audience,
            act: None,
            may_act: None,
            cnf: holder.cnf(),
            org: None,
            directory: None,
        };
        let access_token = tokens::mint_access_token(app, spec, jti, exp).map_err(|e| OAuthError::internal("signing", e))?;
        Ok(TokenResponse::access_only(app, access_token, scope, holder))
    }
}

/// The requested scopes, all of which the client must be allowed and none of which may speak
/// for a user. No scope requested: every non-user scope the client has.
fn machine_scope(app: &crate::tenant::Issuer, client: &Client, resources: &[String], requested: Option<&str>) -> OAuthResult<String> {
    let mut out: Vec<&str> = Vec::new();
    match requested {
        Some(r) => {
            for s in split_list(r) {
                if USER_SCOPES.contains(&s) {
                    return Err(OAuthError::invalid_scope(format!("scope {s:?} needs a user; not available with client credentials")));
                }
                if !crate::resources::allows_scope(app, client, s, resources) {
                    return Err(OAuthError::invalid_scope(format!("scope {s:?} is not allowed for this client")));
                }
                if !out.contains(&s) {
                    out.push(s);
                }
            }
        }
        None => out.extend(split_list(&client.meta.scope).filter(|s| !USER_SCOPES.contains(s))),
    }
    Ok(out.join(" "))
}
