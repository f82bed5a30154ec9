//! Signing in for an organization (issue 31, `organization=` on the request): who may, and
//! where the sign-in goes when the organization has an identity provider of its own; for a
//! client that needs one (`organization_required`) and a request that names none, which one
//! (the user's only one, or their choice on the chooser page).

use super::AuthorizationRequest;
use crate::audit::AuditEvent;
use crate::config::upstreams::IdentityProvider;
use crate::error::OAuthError;
use crate::http::cookies;
use crate::http::pages::error_page;
use crate::http::params::FormParams;
use crate::registry::User;
use crate::tenant::Issuer;
use crate::ui::Page;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
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

/// Whether every authorization of `client_id` must be for an organization
/// (`organization_required`).
pub fn required(app: &Issuer, client_id: &str) -> bool {
    app.client(client_id).is_some_and(|c| c.meta.organization_required)
}

/// What a request that must be for an organization, and names none, goes on with.
pub enum Pick {
    /// The organization (its id): the user's only one, or the one their verified e-mail
    /// address's domain is at (they join it on the way, as `admit` does).
    One(String),
    /// The chooser page, for a member of several.
    Choose(Response),
    /// To the client: a user of no organization, or a choice that cannot be asked for.
    Refused(OAuthError),
}

/// The organization a request of an `organization_required` client is for, when it names none.
pub fn pick(app: &Issuer, req: &AuthorizationRequest, cookie: &str, user: &User) -> Pick {
    let registry = app.registry();
    let mine = registry.memberships(&user.id);
    match mine.len() {
        1 => Pick::One(mine[0].0.id.clone()),
        0 => {
            let verified = user.claim("email_verified").is_some_and(|v| v == true);
            let by_domain = user.email().and_then(|e| e.rsplit_once('@')).and_then(|(_, d)| registry.organization_of_domain(d)).filter(|_| verified);
            match by_domain {
                Some(org) => Pick::One(org.id.clone()),
                None => Pick::Refused(OAuthError::access_denied("the application is for members of an organization, and the user is a member of none")),
            }
        }
        _ if req.prompts("none") => Pick::Refused(OAuthError::access_denied("the user must choose an organization").code_as("interaction_required")),
        _ => {
            let challenge = super::seal_request(app, CHOOSE_KIND, cookie, req);
            let orgs: Vec<_> = mine.iter().map(|(o, _)| json!({"id": o.id, "name": o.display_name, "logo": o.logo_uri})).collect();
            let mut page = Page::new(StatusCode::OK, "org_choose.html", "org-choose-heading");
            page.csp.images = mine.iter().filter_map(|(o, _)| logo_origin(o.logo_uri.as_deref())).collect();
            let page = page
                .with("challenge", challenge)
                .with("client", super::client_display_name(app, &req.client_id))
                .with("username", &user.username)
                .with("organizations", orgs)
                .locales(req.ui_locales.as_deref());
            Pick::Choose(page.into_response())
        }
    }
}

/// The origin a page showing `logo` (an https URL, as saved) lets its image come from.
pub fn logo_origin(logo: Option<&str>) -> Option<String> {
    url::Url::parse(logo?).ok().filter(|u| u.scheme() == "https").map(|u| u.origin().ascii_serialization())
}

/// The chooser form's sealed state: the request, bound to the session cookie (which also
/// makes it the form's CSRF defence).
const CHOOSE_KIND: &str = "organization";

/// `POST /login/organization` (`challenge`, `organization`): the chooser's answer. Only one
/// of the user's organizations is taken; the request goes on for it.
pub async fn choose(app: Issuer, headers: HeaderMap, form: Result<FormParams, OAuthError>) -> Response {
    let (params, cookie, mut req) = match crate::endpoints::interaction::take_state(&app, &headers, form, CHOOSE_KIND, cookies::SESSION).await {
        Ok(taken) => taken,
        Err(res) => return *res,
    };
    let Some((cookie, session)) = super::current_session(&app, &headers).await.filter(|(c, _)| *c == cookie) else {
        return error_page(StatusCode::BAD_REQUEST, "err-session-ended");
    };
    let chosen = params.get("organization").filter(|o| app.registry().membership(o, &session.user_id).is_some());
    let Some(org) = chosen else { return error_page(StatusCode::BAD_REQUEST, "err-org-choose") };
    req.organization = Some(org.to_string());
    // The session was checked for this request when the chooser was shown: it goes on as
    // right after a sign-in (not asked again, which would ask again for the choice).
    super::continue_authorization(&app, &headers, req, Some((cookie, session)), true, StatusCode::SEE_OTHER).await
}
