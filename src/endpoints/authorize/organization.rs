//! Signing in for an organization (issue 31, `organization=` on the request): who may, and
//! where the sign-in goes when the organization has an identity provider of its own.

use super::AuthorizationRequest;
use crate::audit::AuditEvent;
use crate::error::OAuthError;
use crate::config::upstreams::IdentityProvider;
use crate::registry::User;
use crate::tenant::Issuer;
use serde_json::json;

/// Let `user` in to the organization the request names: a member, or a user whose verified
/// e-mail address is at one of the organization's domains, who joins now (just in time,
/// with no roles). Anyone else is refused.
pub async fn admit(app: &Issuer, req: &AuthorizationRequest, user: &User) -> Result<(), OAuthError> {
    let Some(org_id) = req.organization.as_deref() else { return Ok(()) };
    let registry = app.registry();
    if registry.membership(org_id, &user.id).is_some() {
        return Ok(());
    }
    let org = registry.organization(org_id).ok_or_else(|| OAuthError::access_denied("the organization no longer exists"))?;
    let verified = user.claim("email_verified").is_some_and(|v| v == true);
    let domain = user.email().and_then(|e| e.rsplit_once('@')).map(|(_, d)| d.to_ascii_lowercase());
    if !verified || !domain.is_some_and(|d| org.domains.contains(&d)) {
        return Err(OAuthError::access_denied("the user is not a member of the organization"));
    }
    registry.put_member(org_id, &user.id, Vec::new()).await?;
    let detail = json!({"by": "domain", "org_id": org_id, "user_id": user.id, "roles": []});
    app.audit(AuditEvent::new("organization_member_added").user(&user.id).detail(detail)).await;
    Ok(())
}

/// The identity provider a sign-in for this request goes to at once: the named
/// organization's own; else, for a `login_hint` e-mail address at a domain of an organization
/// with one, that organization's (home-realm discovery).
pub fn upstream_for<'a>(app: &'a Issuer, req: &AuthorizationRequest) -> Option<&'a IdentityProvider> {
    let registry = app.registry();
    let org = match &req.organization {
        Some(id) => registry.organization(id)?,
        None => return upstream_of_address(app, req.login_hint.as_deref()?),
    };
    app.tenant.upstreams.get(org.upstream.as_deref()?)
}

/// The identity provider of the organization an e-mail address's domain belongs to, if it has
/// one: where a sign-in typed (or hinted) as that address goes.
pub fn upstream_of_address<'a>(app: &'a Issuer, address: &str) -> Option<&'a IdentityProvider> {
    let domain = address.trim().rsplit_once('@')?.1;
    let org = app.registry().organization_of_domain(domain)?;
    app.tenant.upstreams.get(org.upstream.as_deref()?)
}
