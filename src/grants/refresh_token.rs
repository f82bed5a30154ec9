//! `grant_type=refresh_token` (RFC 6749 §6, OpenID Connect Core §12) with rotation and
//! theft detection by the RefreshTokenRotator.
//!
//! Every check that can fail without it being theft (client binding, scope, user still
//! active) runs on a non-mutating `peek` before the rotation, so a refused request never
//! burns the client's valid token.

use super::{issue_tokens, GrantHandler, Issuance, TokenResponse};
use crate::app::App;
use crate::audit::AuditEvent;
use crate::error::{OAuthError, OAuthResult};
use crate::http::params::Params;
use crate::registry::Client;
use crate::stores::{Family, Presented, Rotation};
use crate::tenant::Issuer;
use crate::tokens;
use crate::util::{now, split_list};
use async_trait::async_trait;
use serde_json::json;

pub struct RefreshTokenGrant;

fn invalid() -> OAuthError {
    OAuthError::invalid_grant("the refresh token is invalid, expired or revoked")
}

#[async_trait]
impl GrantHandler for RefreshTokenGrant {
    fn grant_type(&self) -> &'static str {
        "refresh_token"
    }

    async fn exchange(&self, app: &Issuer, client: &Client, params: &Params, holder: super::Holder<'_>) -> OAuthResult<TokenResponse> {
        let dpop = holder.dpop;
        let presented = params.require("refresh_token")?;
        let family = match app.stores.refresh.peek(app.tenant.id, presented).await? {
            Presented::Current(f) | Presented::Superseded(f) => f,
            Presented::Revoked | Presented::Expired | Presented::Unknown => return Err(invalid()),
        };
        // RFC 6749 §10.4: a refresh token is bound to its client.
        if family.client_id != client.id() {
            return Err(invalid());
        }
        if app.stores.revocations.is_revoked(app.tenant.id, &tokens::grant_revocation_key(&family.id)).await? {
            return Err(invalid());
        }
        // A family without offline_access (an OAuth request's, see authorization_code) ends
        // with the login session it was made in, as its access tokens do. Families with
        // offline_access, all others, skip this read.
        if !tokens::outlives_session(&family.scope) && tokens::session_ended(app, app.tenant.id, &family.sid).await? {
            return Err(invalid());
        }
        // A disabled user's family, or one from before the user's token cutoff (a new password,
        // the end of all sessions): revoked on sight, on every node.
        let user = match app.registry().user(&family.user_id) {
            Some(u) => Some(u),
            // Not in this node's memory: deleted, or made on another node (or by the CLI) so
            // recently that its change has not arrived here yet. The database decides, so that
            // a family is never revoked for a user this node has only not heard of yet (the
            // multi-node test caught a fresh user's families revoked on the second node).
            None => {
                let (tenant, id) = (app.tenant.id, family.user_id.clone());
                app.db.read(move |sql| crate::registry::users::load_one(sql, tenant, &id)).await?.map(std::sync::Arc::new)
            }
        };
        let Some(user) = user.filter(|u| u.accepts_tokens_from(family.created_at)) else {
            revoke_family(app, &family, "user_inactive").await?;
            return Err(invalid());
        };
        // A family for an organization ends with the membership (removed, or the organization
        // deleted), and is not brought back by a later one.
        if family.org.as_deref().is_some_and(|org| !tokens::org_member_at(app, org, &family.user_id, family.created_at)) {
            revoke_family(app, &family, "organization_membership_ended").await?;
            return Err(invalid());
        }
        let scope = narrowed_scope(&family.scope, params.get("scope"))?;
        // RFC 8707 §2.2: a refresh may ask for fewer of the granted resources, never others.
        let audience = crate::resources::narrow(&family.resources, params.get_all("resource"))?;
        // RFC 9449 §5: a family bound to a DPoP key refreshes only with a proof of that key; a
        // public client's unbound family is bound by its first proof (from then on, always).
        let bound = match (&family.jkt, dpop) {
            (None, Some(k)) if client.is_public() => app.stores.refresh.bind_key(app.tenant.id, presented, &k.jkt).await?,
            (jkt, _) => jkt.clone(),
        };
        if let Some(jkt) = &bound {
            if dpop.is_none_or(|k| &k.jkt != jkt) {
                return Err(OAuthError::invalid_grant("this refresh token is bound to a DPoP key: send a proof of it"));
            }
        }
        // RFC 8705 §4: a public client's family made with a certificate refreshes only with it.
        if family.x5t.as_ref().is_some_and(|x5t| holder.x5t != Some(x5t.as_str())) {
            return Err(OAuthError::invalid_grant("this refresh token is bound to a client certificate: present it"));
        }

        let (family, refresh_token) = match app.stores.refresh.rotate_with(app.tenant.id, presented, client.meta.refresh_reuse_grace).await? {
            Rotation::Rotated { family, token } | Rotation::GraceRetry { family, token } => (family, token),
            Rotation::Reused { family } => {
                revoke_family(app, &family, "refresh_reuse").await?;
                return Err(invalid());
            }
            Rotation::Revoked | Rotation::Expired | Rotation::Unknown => return Err(invalid()),
        };
        let (jti, exp) = tokens::new_token_id(app);
        issue_tokens(
            app,
            Issuance {
                user: &user,
                client,
                scope: &scope,
                auth_time: family.auth_time,
                sid: &family.sid,
                acr: family.acr.as_deref(),
                nonce: None,
                userinfo_claims: family.userinfo_claims.clone(),
                id_token_claims: Vec::new(),
                grant_id: Some(&family.id),
                jti,
                exp,
                refresh_token: Some(refresh_token),
                holder,
                audience,
                amr: &family.amr,
                org: family.org.as_deref(),
                ciba_push: None,
            },
        )
        .await
    }
}

/// RFC 6749 §6: the requested scope may only narrow what the grant has.
fn narrowed_scope(granted: &str, requested: Option<&str>) -> OAuthResult<String> {
    let Some(requested) = requested else { return Ok(granted.to_string()) };
    let mut kept = Vec::new();
    for s in split_list(requested) {
        if !split_list(granted).any(|g| g == s) {
            return Err(OAuthError::invalid_scope(format!("scope {s:?} was not granted")));
        }
        if !kept.contains(&s) {
            kept.push(s);
        }
    }
    if kept.is_empty() {
        return Err(OAuthError::invalid_scope("empty scope"));
    }
    Ok(kept.join(" "))
}

/// Revoke a family and every access token issued from it (through the grant's revocation
/// key, which every consumer checks), and record why.
pub async fn revoke_family(app: &App, family: &Family, reason: &str) -> OAuthResult<()> {
    app.stores.refresh.revoke_family(family.tenant, &family.id).await?;
    let until = now() + tokens::grant_revocation_ttl(app);
    app.stores.revocations.revoke(family.tenant, &tokens::grant_revocation_key(&family.id), until).await?;
    if reason == "refresh_reuse" {
        app.audit.record(AuditEvent::new("refresh_reuse").tenant(family.tenant).client(&family.client_id).user(&family.user_id)).await;
    }
    app.audit
        .record(
            AuditEvent::new("family_revoked")
                .tenant(family.tenant)
                .client(&family.client_id)
                .user(&family.user_id)
                .detail(json!({"family": family.id, "reason": reason})),
        )
        .await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::narrowed_scope;

    #[test]
    fn scope_only_narrows() {
        assert_eq!(narrowed_scope("openid email offline_access", None).unwrap(), "openid email offline_access");
        assert_eq!(narrowed_scope("openid email offline_access", Some("email openid")).unwrap(), "email openid");
        assert_eq!(narrowed_scope("openid email", Some("openid phone")).unwrap_err().code, "invalid_scope");
    }
}
