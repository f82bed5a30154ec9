//! `grant_type=authorization_code` (RFC 6749 §4.1.3, RFC 7636 §4.6, OpenID Connect Core §3.1.3).

use super::{GrantHandler, TokenResponse};
use crate::app::App;
use crate::error::{OAuthError, OAuthResult};
use crate::http::params::Params;
use crate::registry::Client;
use crate::stores::{IssuedToken, Redemption};
use crate::tokens::{self, claims_request, AccessTokenSpec, IdTokenSpec};
use crate::util::{b64, ct_eq, sha256, split_list};
use async_trait::async_trait;

pub struct AuthorizationCodeGrant;

#[async_trait]
impl GrantHandler for AuthorizationCodeGrant {
    fn grant_type(&self) -> &'static str {
        "authorization_code"
    }

    async fn exchange(&self, app: &App, client: &Client, params: &Params) -> OAuthResult<TokenResponse> {
        let code = params.require("code")?;
        let redirect_uri = params.require("redirect_uri")?;
        let verifier = params.get("code_verifier");
        if let Some(v) = verifier {
            check_verifier_syntax(v)?;
        }

        // The id of the access token is fixed before redemption, so the store records it in
        // the same atomic step: a concurrent reuse of the code always finds it to revoke.
        let (jti, exp) = tokens::new_token_id(app);
        let issued = vec![IssuedToken { jti: jti.clone(), expires_at: exp }];
        let grant = match app.stores.codes.consume(code, issued).await? {
            Redemption::Fresh(grant) => grant,
            Redemption::NotFound | Redemption::Expired => {
                return Err(OAuthError::invalid_grant("the authorization code is invalid or expired"))
            }
            Redemption::AlreadyUsed { client_id, issued } => {
                if client_id == client.id() {
                    revoke_all(app, &issued).await?;
                    tracing::warn!(event = "code_reuse", client = %client_id, revoked = issued.len(), "authorization code reused");
                }
                return Err(OAuthError::invalid_grant("the authorization code was already used"));
            }
        };

        if grant.client_id != client.id() {
            return Err(OAuthError::invalid_grant("the authorization code was issued to another client"));
        }
        if grant.redirect_uri != redirect_uri {
            return Err(OAuthError::invalid_grant("redirect_uri does not match the authorization request"));
        }
        match (&grant.code_challenge, verifier) {
            (Some(challenge), Some(v)) => {
                if !ct_eq(b64(&sha256(v.as_bytes())).as_bytes(), challenge.as_bytes()) {
                    return Err(OAuthError::invalid_grant("code_verifier does not match the code_challenge"));
                }
            }
            (Some(_), None) => return Err(OAuthError::invalid_grant("code_verifier is required")),
            // RFC 9700 §2.1.1: a verifier for a code issued without a challenge is a downgrade attempt.
            (None, Some(_)) => return Err(OAuthError::invalid_grant("code_verifier given but no code_challenge was sent")),
            (None, None) => {}
        }
        let user = app
            .registry
            .user(&grant.user_id)
            .filter(|u| !u.disabled)
            .ok_or_else(|| OAuthError::invalid_grant("the user of this authorization no longer exists or is disabled"))?;

        let access_token = tokens::mint_access_token(
            app,
            AccessTokenSpec {
                sub: &user.id,
                client_id: client.id(),
                scope: &grant.scope,
                auth_time: Some(grant.auth_time),
                acr: grant.acr.as_deref(),
                sid: Some(&grant.sid),
                userinfo_claims: claims_request::requested(grant.claims.as_ref(), "userinfo"),
            },
            jti,
            exp,
        )
        .map_err(|e| OAuthError::internal("signing", e))?;
        let id_token = if split_list(&grant.scope).any(|s| s == "openid") {
            let requested = claims_request::requested(grant.claims.as_ref(), "id_token");
            Some(
                tokens::mint_id_token(
                    app,
                    IdTokenSpec {
                        user: &user,
                        client_id: client.id(),
                        nonce: grant.nonce.as_deref(),
                        auth_time: grant.auth_time,
                        sid: &grant.sid,
                        acr: grant.acr.as_deref(),
                        access_token: Some(&access_token),
                        requested: &requested,
                    },
                )
                .map_err(|e| OAuthError::internal("signing", e))?,
            )
        } else {
            None
        };
        Ok(TokenResponse {
            access_token,
            token_type: "Bearer",
            expires_in: app.config.access_token_ttl,
            scope: grant.scope,
            id_token,
            refresh_token: None,
        })
    }
}

/// RFC 7636 §4.1: 43–128 characters of [A-Z a-z 0-9 - . _ ~].
fn check_verifier_syntax(v: &str) -> OAuthResult<()> {
    let ok = (43..=128).contains(&v.len())
        && v.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'));
    if ok { Ok(()) } else { Err(OAuthError::invalid_grant("code_verifier is malformed (RFC 7636 §4.1)")) }
}

async fn revoke_all(app: &App, issued: &[IssuedToken]) -> OAuthResult<()> {
    for t in issued {
        app.stores.revocations.revoke(&t.jti, t.expires_at).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b_verifier_matches_its_challenge() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        check_verifier_syntax(verifier).unwrap();
        assert_eq!(b64(&sha256(verifier.as_bytes())), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    }

    #[test]
    fn verifier_syntax_is_enforced() {
        assert!(check_verifier_syntax("short").is_err());
        assert!(check_verifier_syntax(&"a".repeat(129)).is_err());
        assert!(check_verifier_syntax(&format!("{}!", "a".repeat(43))).is_err());
    }
}
