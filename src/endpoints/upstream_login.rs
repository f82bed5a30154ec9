//! Sign-in with an upstream identity provider (`identity::upstream`): the login page's
//! "Sign in with …" buttons (or `idp_hint` on the authorization request) send the browser
//! there; its answer comes back to `/login/upstream/callback`, where the identity is linked
//! to one of our users (or one is made) and the sign-in goes on as after a password: a
//! second factor if the user has one, the policy, consent.
//!
//! What travels through the provider is `state`: the pending request (or, from the account
//! page, the user linking an identity), the nonce and the PKCE verifier, sealed and bound to
//! this browser's cookie, so nothing is stored before the user is known and a response
//! cannot be replayed into another browser.

use super::authorize::{unavailable, AuthorizationRequest};
use super::interaction::{after_first_factor, client_address, take_state};
use crate::audit::AuditEvent;
use crate::config::upstreams::IdentityProvider;
use crate::error::OAuthError;
use crate::http::cookies;
use crate::http::pages::error_page;
use crate::http::params::{FormParams, Params};
use crate::identity::links::{self, Linking};
use crate::identity::upstream::{Answer, Identity, UpstreamError};
use crate::registry::{users, User, UserInput};
use crate::tenant::Issuer;
use crate::ui::Msg;
use crate::util::{b64, random_token, sha256};
use axum::extract::{ConnectInfo, RawQuery};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::Arc;

const KIND: &str = "upstream";
pub const CALLBACK: &str = "/login/upstream/callback";

/// What the callback needs, sealed into `state`.
#[derive(Serialize, Deserialize)]
struct Pending {
    idp: String,
    /// A sign-in: the authorization request it is for.
    req: Option<AuthorizationRequest>,
    /// A link from the account page: the user (and their session) it is for.
    link: Option<(String, String)>,
    nonce: String,
    verifier: String,
}

/// `GET /login/upstream/{id}/jwks`: the public key our `private_key_jwt` assertions to that
/// provider are signed with (RFC 7517 JWK Set), for its client registration.
pub async fn assertion_jwks(app: Issuer, id: Result<axum::extract::Path<String>, axum::extract::rejection::PathRejection>) -> Result<Response, OAuthError> {
    let set = id.ok().and_then(|axum::extract::Path(id)| app.tenant.upstreams.assertion_jwks(&id)).ok_or_else(|| OAuthError::not_found("no such identity provider uses private_key_jwt"))?;
    let mut res = axum::Json(set).into_response();
    res.headers_mut().insert(axum::http::header::CACHE_CONTROL, axum::http::HeaderValue::from_static("public, max-age=300"));
    Ok(res)
}

/// `POST /login/upstream`: a button of the login page (its sealed request and `idp`).
pub async fn from_login(app: Issuer, headers: HeaderMap, form: Result<FormParams, OAuthError>) -> Response {
    let (params, _, req) = match take_state(&app, &headers, form, "login", cookies::BROWSER).await {
        Ok(taken) => taken,
        Err(res) => return *res,
    };
    let Some(p) = params.get("idp").and_then(|id| app.tenant.upstreams.get(id)) else {
        return error_page(StatusCode::BAD_REQUEST, "err-upstream-unknown");
    };
    start(&app, &headers, p, Some(req), None).await
}

/// Send the browser to `p`: for a sign-in (`req`) or to link an identity to a signed-in
/// user (`link`: their id and session id).
pub(crate) async fn start(app: &Issuer, headers: &HeaderMap, p: &IdentityProvider, req: Option<AuthorizationRequest>, link: Option<(String, String)>) -> Response {
    if p.kind == crate::config::upstreams::UpstreamKind::Saml {
        return crate::endpoints::saml::acs::start(app, headers, p, req, link).await;
    }
    let existing = cookies::get(headers, cookies::BROWSER).map(str::to_string);
    let browser = existing.clone().unwrap_or_else(random_token);
    let pending = Pending { idp: p.id.clone(), req, link, nonce: random_token(), verifier: random_token() };
    let state = app.tenant.sealer.seal(KIND, &browser, app.config.challenge_ttl, &pending);
    let challenge = b64(&sha256(pending.verifier.as_bytes()));
    let max_age = pending.req.as_ref().and_then(reauthentication);
    // The address is passed on only to the provider its domain routes to (home-realm
    // discovery): a hint meant for us, such as a local name, is not told to a third party.
    let hint = pending.req.as_ref().and_then(|r| r.login_hint.as_deref()).filter(|h| crate::endpoints::authorize::organization::upstream_of_address(app, h).is_some_and(|q| q.id == p.id));
    let mut res = match app.tenant.upstreams.authorization_url(p, &app.endpoint(CALLBACK), &state, &pending.nonce, &challenge, max_age, hint).await {
        Ok(started) => crate::endpoints::first_party::see_other_url(&started.url),
        Err(e) => return unreachable_page(p, &e),
    };
    if existing.is_none() {
        cookies::set(&mut res, app.base(), cookies::BROWSER, &browser, None, app.config.secure_cookies());
    }
    res
}

/// How recent the sign-in must be: `prompt=login` (0) or `max_age`; the provider does the
/// signing in, so it is asked.
fn reauthentication(req: &AuthorizationRequest) -> Option<u64> {
    if req.prompts("login") { Some(0) } else { req.max_age }
}

fn unreachable_page(p: &IdentityProvider, e: &UpstreamError) -> Response {
    tracing::warn!(provider = %p.id, error = %e, "upstream identity provider");
    error_page(StatusCode::BAD_GATEWAY, Msg::new("err-upstream-unavailable").arg("name", p.name.clone()).detail(e.to_string()))
}

/// `GET /login/upstream/callback`: the provider's answer.
pub async fn callback(app: Issuer, ConnectInfo(peer): ConnectInfo<SocketAddr>, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    let params = Params::parse(query.unwrap_or_default().as_bytes()).unwrap_or_default();
    let opened = params.get("state").and_then(|s| app.tenant.sealer.open::<Pending>(KIND, cookies::get(&headers, cookies::BROWSER), s).ok());
    let Some(pending) = opened else { return error_page(StatusCode::BAD_REQUEST, "err-upstream-state") };
    let Some(p) = app.tenant.upstreams.get(&pending.idp) else { return error_page(StatusCode::BAD_REQUEST, "err-upstream-unknown") };
    let address = client_address(&app, &headers, peer);
    if params.get("error").is_some() || params.get("code").is_none() {
        // Cancelled or refused there. A sign-in: the application is told (OpenID Connect Core
        // §3.1.2.6, access_denied); a link from the account page: a page says so.
        let detail = params.get("error").unwrap_or("no code").to_string();
        if let Some(req) = &pending.req {
            let e = OAuthError::access_denied(format!("the sign-in with {} did not complete", p.name));
            return super::authorize::response::error(&app, &req.reply_to(), &e, StatusCode::SEE_OTHER).await;
        }
        return error_page(StatusCode::UNAUTHORIZED, Msg::new("err-upstream-cancelled").arg("name", p.name.clone()).detail(detail));
    }
    let code = params.get("code").unwrap_or_default();
    let max_age = pending.req.as_ref().and_then(reauthentication);
    let redirect_uri = app.endpoint(CALLBACK);
    let answer = Answer { code, iss: params.get("iss"), verifier: &pending.verifier, redirect_uri: &redirect_uri, nonce: &pending.nonce, max_age };
    let identity = match app.tenant.upstreams.finish(p, answer).await {
        Ok(identity) => identity,
        Err(e @ UpstreamError::Unavailable(_)) => return unreachable_page(p, &e),
        Err(UpstreamError::Refused(why)) => {
            app.audit(AuditEvent::new("login_failure").address(&address).detail(json!({"kind": "upstream", "provider": p.id, "reason": why}))).await;
            return error_page(StatusCode::UNAUTHORIZED, Msg::new("err-upstream-refused").arg("name", p.name.clone()).detail(why));
        }
    };
    let upstream = crate::stores::sessions::UpstreamLogin { provider: p.id.clone(), id_token: identity.id_token.clone() };
    signed_in_upstream(&app, &headers, &address, p, &identity, pending.req, pending.link, Some(upstream)).await
}

/// Who the provider says signed in (any kind of provider: OpenID, OAuth 2.0, SAML), from here
/// on the same: the domain allowed, then a link from the account page (`link`), or the
/// sign-in (`req`) as the linked, or e-mail-linked, or new user, on to a second factor.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn signed_in_upstream(
    app: &Issuer,
    headers: &HeaderMap,
    address: &str,
    p: &IdentityProvider,
    identity: &Identity,
    req: Option<AuthorizationRequest>,
    link: Option<(String, String)>,
    upstream: Option<crate::stores::sessions::UpstreamLogin>,
) -> Response {
    if !domain_allowed(p, identity) {
        app.audit(AuditEvent::new("login_failure").address(address).detail(json!({"kind": "upstream", "provider": p.id, "reason": "domain"}))).await;
        return error_page(StatusCode::FORBIDDEN, Msg::new("err-upstream-domain").arg("name", p.name.clone()));
    }
    match (req, link) {
        (_, Some((user_id, sid))) => link_to_signed_in(app, headers, p, identity, &user_id, &sid).await,
        (Some(req), None) => {
            let user = match user_for(app, p, identity).await {
                Ok(user) => user,
                Err(res) => return res,
            };
            after_first_factor(app, headers, req, &user, address, vec!["fed".into()], upstream).await
        }
        (None, None) => error_page(StatusCode::BAD_REQUEST, "err-upstream-state"),
    }
}

/// `allowed_domains`: the e-mail, verified there, in one of them.
fn domain_allowed(p: &IdentityProvider, id: &Identity) -> bool {
    if p.allowed_domains.is_empty() {
        return true;
    }
    let domain = id.email().and_then(|e| e.rsplit_once('@')).map(|(_, d)| d.to_ascii_lowercase());
    id.email_verified() && domain.is_some_and(|d| p.allowed_domains.iter().any(|a| a.eq_ignore_ascii_case(&d)))
}

/// The user this identity signs in as: linked before; else (if allowed) the user with the
/// same verified e-mail; else (if allowed) a new user.
async fn user_for(app: &Issuer, p: &IdentityProvider, id: &Identity) -> Result<Arc<User>, Response> {
    let live = |u: Arc<User>| if u.disabled { Err(error_page(StatusCode::FORBIDDEN, "err-upstream-disabled")) } else { Ok(u) };
    match links::find(&app.db, app.tenant.id, &p.id, &id.subject).await {
        Err(e) => return Err(unavailable(e)),
        Ok(Some(uid)) => return app.registry().user(&uid).ok_or_else(|| error_page(StatusCode::FORBIDDEN, "err-upstream-disabled")).and_then(live),
        Ok(None) => {}
    }
    let same_email = id.email().and_then(|e| app.registry().user_by_login(e)).filter(|u| u.email().zip(id.email()).is_some_and(|(a, b)| a.eq_ignore_ascii_case(b)));
    if let Some(existing) = same_email {
        let verified_here = existing.claims.get("email_verified") == Some(&Value::Bool(true));
        if !(p.link_by_email && id.email_verified() && verified_here) {
            // Not linked by e-mail (off, or unverified on a side): that person signs in as
            // themselves and links from the account page; no second account with their e-mail.
            return Err(error_page(StatusCode::CONFLICT, Msg::new("err-upstream-email-taken").arg("name", p.name.clone())));
        }
        return match links::link(&app.db, app.tenant.id, &p.id, &id.subject, &existing.id, id.email()).await {
            Ok(Linking::Linked) => {
                app.audit(AuditEvent::new("identity_linked").user(&existing.id).detail(json!({"provider": p.id, "by": "email"}))).await;
                live(existing)
            }
            Ok(_) => Err(error_page(StatusCode::CONFLICT, Msg::new("err-upstream-email-taken").arg("name", p.name.clone()))),
            Err(e) => Err(unavailable(e)),
        };
    }
    if !p.provision {
        return Err(error_page(StatusCode::FORBIDDEN, Msg::new("err-upstream-no-account").arg("name", p.name.clone())));
    }
    provision(app, p, id).await
}

/// A new user for a first sign-in: a free login name from what the provider says, no usable
/// password (a random one nobody knows), its claims, the identity linked.
async fn provision(app: &Issuer, p: &IdentityProvider, id: &Identity) -> Result<Arc<User>, Response> {
    let fallback = format!("{}-{}", p.id, id.subject);
    let wanted = [id.claims.get("preferred_username").and_then(Value::as_str), id.email(), Some(fallback.as_str())];
    let Some(username) = wanted.into_iter().flatten().map(|n| n.trim().to_string()).find(|n| !n.is_empty() && n.len() <= 256 && app.registry().user_by_login(n).is_none()) else {
        return Err(error_page(StatusCode::CONFLICT, Msg::new("err-upstream-email-taken").arg("name", p.name.clone())));
    };
    let mut claims = id.claims.clone();
    claims.remove("preferred_username");
    let input = UserInput { username: Some(username), password: Some(random_token()), claims, ..Default::default() };
    let user = match tokio::task::spawn_blocking(move || users::new_user(input)).await {
        Ok(Ok(u)) => u,
        _ => return Err(error_page(StatusCode::BAD_GATEWAY, Msg::new("err-upstream-refused").arg("name", p.name.clone()).detail("the provider's claims do not make a user"))),
    };
    match app.registry().save_user(user.clone()).await {
        Ok(()) => {}
        Err(crate::db::StoreError::Conflict(_)) => return Err(error_page(StatusCode::CONFLICT, Msg::new("err-upstream-email-taken").arg("name", p.name.clone()))),
        Err(e) => return Err(unavailable(e)),
    }
    match links::link(&app.db, app.tenant.id, &p.id, &id.subject, &user.id, id.email()).await {
        Ok(Linking::Linked) => {}
        // The same person's other sign-in linked first: that user stands, this one goes.
        Ok(_) => {
            let _ = app.registry().delete_user(&user.id).await;
            return Box::pin(user_for(app, p, id)).await;
        }
        Err(e) => return Err(unavailable(e)),
    }
    app.audit(AuditEvent::new("user_created").user(&user.id).detail(json!({"by": "upstream", "provider": p.id}))).await;
    app.registry().user(&user.id).ok_or_else(|| error_page(StatusCode::SERVICE_UNAVAILABLE, "err-busy"))
}

/// From the account page: the signed-in user (the one who started, in the same session)
/// links this identity.
async fn link_to_signed_in(app: &Issuer, headers: &HeaderMap, p: &IdentityProvider, id: &Identity, user_id: &str, sid: &str) -> Response {
    let me = crate::endpoints::first_party::signed_in(app, headers).await;
    if !me.as_ref().is_some_and(|m| m.user.id == user_id && m.session.sid == sid) {
        return error_page(StatusCode::BAD_REQUEST, "err-upstream-state");
    }
    match links::link(&app.db, app.tenant.id, &p.id, &id.subject, user_id, id.email()).await {
        Ok(Linking::Linked) => {
            app.audit(AuditEvent::new("identity_linked").user(user_id).detail(json!({"provider": p.id, "by": "user"}))).await;
            crate::endpoints::first_party::see_other(app.base(), "/account?done=linked")
        }
        Ok(Linking::TakenByAnother) => error_page(StatusCode::CONFLICT, Msg::new("err-upstream-linked-elsewhere").arg("name", p.name.clone())),
        Ok(Linking::AlreadyHasOne) => error_page(StatusCode::CONFLICT, Msg::new("err-upstream-already-linked").arg("name", p.name.clone())),
        Err(e) => unavailable(e),
    }
}
