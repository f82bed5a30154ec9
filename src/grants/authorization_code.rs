//! `grant_type=authorization_code` (RFC 6749 §4.1.3, RFC 7636 §4.6, OpenID Connect Core §3.1.3).

use super::{issue_for_user, GrantHandler, TokenResponse, UserGrant};
use crate::audit::AuditEvent;
use crate::error::{OAuthError, OAuthResult};
use crate::http::params::Params;
use crate::registry::Client;
use crate::stores::refresh::new_family_id;
use crate::stores::{IssuedToken, Redemption};
use crate::tenant::Issuer;
use crate::tokens::{self, claims_request};
use crate::util::{b64, ct_eq, now, sha256, split_list};
use async_trait::async_trait;
use serde_json::json;

pub struct AuthorizationCodeGrant;

#[async_trait]
impl GrantHandler for AuthorizationCodeGrant {
    fn grant_type(&self) -> &'static str {
        "authorization_code"
    }

    async fn exchange(&self, app: &Issuer, client: &Client, params: &Params, holder: super::Holder<'_>) -> OAuthResult<TokenResponse> {
        let dpop = holder.dpop;
        let code = params.require("code")?;
        let redirect_uri = params.require("redirect_uri")?;
        let verifier = params.get("code_verifier");
        if let Some(v) = verifier {
            check_verifier_syntax(v)?;
        }

        // The ids of what this code will issue (the access token, and the grant every token of
        // this redemption carries, which is also the refresh-token family's id if there is one)
        // are fixed before redemption, so the store records them in the same atomic step: a
        // concurrent reuse of the code always finds them to revoke.
        let (jti, exp) = tokens::new_token_id(app);
        let wants_refresh = client.allows_grant("refresh_token");
        let grant_id = new_family_id();
        let grant_lives = if wants_refresh { app.config.refresh_token_ttl } else { 0 };
        let issued = vec![
            IssuedToken { jti: jti.clone(), expires_at: exp },
            IssuedToken {
                jti: tokens::grant_revocation_key(&grant_id),
                expires_at: now() + grant_lives + tokens::grant_revocation_ttl(app),
            },
        ];
        let grant = match app.stores.codes.consume(app.tenant.id, code, issued).await? {
            Redemption::Fresh(grant) => grant,
            Redemption::NotFound | Redemption::Expired => {
                return Err(OAuthError::invalid_grant("the authorization code is invalid or expired"))
            }
            Redemption::AlreadyUsed { client_id, issued } => {
                if client_id == client.id() {
                    revoke_all(app, &issued).await?;
                    app.audit(AuditEvent::new("code_reuse").client(&client_id).detail(json!({"revoked": issued.len()})))
                        .await;
                }
                return Err(OAuthError::invalid_grant("the authorization code was already used"));
            }
        };

        if grant.client_id != client.id() {
            return Err(OAuthError::invalid_grant("the authorization code was issued to another client"));
        }
        // Signed out between the code and its redemption: the session's grants end with it.
        if tokens::session_ended(app, app.tenant.id, &grant.sid).await? {
            return Err(OAuthError::invalid_grant("the login session this code was issued in has ended"));
        }
        if grant.redirect_uri != redirect_uri {
            return Err(OAuthError::invalid_grant("redirect_uri does not match the authorization request"));
        }
        // RFC 9449 §10: a code requested with dpop_jkt is redeemed with a proof of that key.
        if let Some(jkt) = &grant.dpop_jkt {
            if dpop.is_none_or(|k| &k.jkt != jkt) {
                return Err(OAuthError::invalid_grant("the code must be redeemed with a DPoP proof of the key named by dpop_jkt"));
            }
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
            .registry()
            .user(&grant.user_id)
            .filter(|u| !u.disabled)
            .ok_or_else(|| OAuthError::invalid_grant("the user of this authorization no longer exists or is disabled"))?;

        // RFC 8707 §2.2: the token request may pick among the authorized resources.
        let audience = crate::resources::narrow(&grant.resources, params.get_all("resource"))?;
        let userinfo_claims = claims_request::requested(grant.claims.as_ref(), "userinfo");
        let grant = UserGrant {
            user: &user,
            scope: &grant.scope,
            resources: &grant.resources,
            audience,
            auth_time: grant.auth_time,
            sid: &grant.sid,
            acr: grant.acr.as_deref(),
            amr: &grant.amr,
            nonce: grant.nonce.as_deref(),
            userinfo_claims,
            id_token_claims: claims_request::requested(grant.claims.as_ref(), "id_token"),
            org: grant.org.as_deref(),
            ciba_push: None,
        };
        issue_for_user(app, client, grant, &grant_id, jti, exp, holder).await
    }
}

/// Whether a grant of `scope` (for `resources`) to a client with the refresh_token grant gets a
/// refresh token. OpenID Connect Core §11: an OpenID request, only when `offline_access` was
/// granted. A request without `openid` is OAuth 2.0/2.1, where it is the server's policy
/// (OAuth 2.1 §4.3): `oauth_refresh_tokens`, or the named resource servers' `refresh_tokens`.
/// Such a family, like every grant without `offline_access`, ends with the login session.
pub(crate) fn refresh_granted(app: &crate::tenant::Issuer, scope: &str, resources: &[String]) -> bool {
    let mut openid = false;
    for s in split_list(scope) {
        match s {
            "offline_access" => return true,
            "openid" => openid = true,
            _ => {}
        }
    }
    if openid {
        return false;
    }
    let default = app.config.oauth_refresh_tokens;
    if resources.is_empty() {
        return default;
    }
    resources.iter().all(|r| app.tenant.resource_server(r).and_then(|rs| rs.refresh_tokens).unwrap_or(default))
}

/// RFC 7636 §4.1: 43–128 characters of [A-Z a-z 0-9 - . _ ~].
fn check_verifier_syntax(v: &str) -> OAuthResult<()> {
    let ok = (43..=128).contains(&v.len())
        && v.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'));
    if ok { Ok(()) } else { Err(OAuthError::invalid_grant("code_verifier is malformed (RFC 7636 section 4.1)")) }
}

/// Revoke what a reused code issued: its access token, its grant (every token carrying it),
/// and its refresh-token family if it has one.
async fn revoke_all(app: &Issuer, issued: &[IssuedToken]) -> OAuthResult<()> {
    for t in issued {
        app.stores.revocations.revoke(app.tenant.id, &t.jti, t.expires_at).await?;
        if let Some(family) = tokens::grant_of_revocation_key(&t.jti) {
            app.stores.refresh.revoke_family(app.tenant.id, family).await?;
        }
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
