//! The login and consent form posts. Each opens the sealed state its page was rendered with
//! (`http::sealed`), checks the cookie that state is bound to, then hands the authorization
//! request back to `authorize::continue_authorization`.

use super::authorize::{continue_authorization, issue_code, render_login, response, unavailable, AuthorizationRequest};
use crate::app::App;
use crate::audit::AuditEvent;
use crate::error::OAuthError;
use crate::http::cookies;
use crate::http::pages::error_page;
use crate::http::params::{FormParams, Params};
use crate::stores::{Session, SessionRef};
use crate::factors::Level;
use crate::http::sealed::Unsealed;
use crate::tenant::Issuer;
use crate::util::{now, random_token, split_list};
use axum::extract::{ConnectInfo, RawQuery};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use std::net::SocketAddr;

/// The most of a `User-Agent` a session keeps (for the operator's list of sessions).
const MAX_USER_AGENT: usize = 256;
const EXPIRED: &str = "err-form-expired";
/// A sign-in page open past its challenge's life, submitted: shown again, saying so.
const LOGIN_EXPIRED: &str = "login-expired";
/// How long after its expiry a login or consent form still starts its request over (and a
/// first-party page's sign-in state still takes the code that comes back).
pub(crate) const RESTART_GRACE: u64 = 86_400;
pub(super) const TOO_MANY: &str = "err-too-many";
pub(super) const BUSY: &str = "err-busy";
const NO_COOKIE: &str = "err-no-cookie";

pub async fn login(
    app: Issuer,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    form: Result<FormParams, OAuthError>,
) -> Response {
    let (params, _, req) = match take_state(&app, &headers, form, "login", cookies::BROWSER).await {
        Ok(taken) => taken,
        Err(res) => return *res,
    };
    // A document client may have left the cache since /authorize: fetched again if so.
    if !matches!(app.resolve_client(&req.client_id).await, Ok(Some(_))) {
        return error_page(StatusCode::BAD_REQUEST, "err-client-gone");
    }

    let username = params.get("username").unwrap_or("").to_string();
    let password = params.get("password").unwrap_or("").to_string();
    // Home-realm discovery on the form: an address at a domain of an organization with its own
    // identity provider signs in there, whatever was typed as a password (never checked, so
    // whether a local account of that name exists is not told either).
    if let Some(p) = super::authorize::organization::upstream_of_address(&app, &username) {
        let req = AuthorizationRequest { login_hint: Some(username.trim().to_string()), ..req };
        return crate::endpoints::upstream_login::start(&app, &headers, p, Some(req), None).await;
    }
    if password.is_empty() {
        // The password field is optional on a tenant that routes by address, so an empty one
        // is a form to fill in, not a failed attempt.
        let retry = AuthorizationRequest { login_hint: Some(username.clone()), ..req };
        return render_login(&app, &headers, &retry, Some("err-password-missing"), StatusCode::BAD_REQUEST).await;
    }
    let address = client_address(&app, &headers, peer);
    let user = app.registry().user_by_login(&username);
    // The attempt is reserved before the password is looked at, so that parallel guesses
    // count while they are in flight, and a locked account refuses even the right password.
    let account = crate::ratelimit::account_key(user.as_ref().map(|u| u.id.as_str()), &username);
    let Some(attempt) = app.login_limiter.begin(&account, &address, now()) else {
        let retry = AuthorizationRequest { login_hint: Some(username.clone()), ..req };
        return render_login(&app, &headers, &retry, Some(TOO_MANY), StatusCode::TOO_MANY_REQUESTS).await;
    };
    // A name that is not a local user with a password: the tenant's directories, if any.
    if super::directory_login::applies(&app, user.as_deref()) {
        return super::directory_login::sign_in(&app, &headers, req, &username, &password, user, attempt, &address).await;
    }
    // Argon2 takes tens of milliseconds of CPU: off the async workers, and only a few at once.
    let candidate = user.clone();
    let Some(ok) = app.hash_slots.run(move || crate::registry::users::verify_password(candidate.as_deref(), &password)).await
    else {
        // Not the user's fault: the attempt does not count against the account.
        attempt.unchecked();
        return error_page(StatusCode::SERVICE_UNAVAILABLE, BUSY);
    };
    let Some(user) = user.clone().filter(|_| ok) else {
        attempt.failed(now());
        let mut event = AuditEvent::new("login_failure").address(&address).client(&req.client_id);
        if let Some(u) = &user {
            event = event.user(&u.id);
        }
        app.audit(event).await;
        // Keep what was typed as the username, so only the password has to be entered again.
        let retry = AuthorizationRequest { login_hint: Some(username.clone()), ..req };
        return render_login(&app, &headers, &retry, Some("err-incorrect"), StatusCode::UNAUTHORIZED).await;
    };
    attempt.succeeded();

    after_first_factor(&app, &headers, req, &user, &address, vec!["pwd".into()], None).await
}

/// The first step passed (the password, or an upstream provider: `first` is its amr): on to
/// the second step if the user has a factor, else signed in with the first alone if the
/// policy and the request allow that.
pub(super) async fn after_first_factor(
    app: &Issuer,
    headers: &HeaderMap,
    req: AuthorizationRequest,
    user: &crate::registry::User,
    address: &str,
    first: Vec<String>,
    upstream: Option<crate::stores::sessions::UpstreamLogin>,
) -> Response {
    let best = match crate::factors::best_level(&app.db, app.tenant.id, &user.id).await {
        Ok(best) => best,
        Err(e) => return unavailable(e),
    };
    let required = super::authorize::required_level(app, &req);
    if best < required {
        app.audit(AuditEvent::new("login_refused").user(&user.id).client(&req.client_id).detail(serde_json::json!({"reason": "no_second_factor"}))).await;
        let message = match required {
            Level::Passkey => "err-needs-passkey-none",
            _ => "err-needs-factor-none",
        };
        return error_page(StatusCode::FORBIDDEN, message);
    }
    if best > Level::Password {
        let pending = super::second_factor::Pending { req, user_id: user.id.clone(), first, upstream };
        return super::second_factor::ask(app, headers, &pending, None, StatusCode::OK).await;
    }
    start_session(app, headers, req, user, address, first, Level::Password, upstream).await
}

/// Every step of a sign-in passed, reaching `level` (the one exit of every way of signing in:
/// password, password and a factor, a passkey alone): a new session and on with the request,
/// unless the request needs more than that (the policy, or an essential `acr`).
pub(super) async fn start_session(
    app: &Issuer,
    headers: &HeaderMap,
    req: AuthorizationRequest,
    user: &crate::registry::User,
    address: &str,
    amr: Vec<String>,
    level: Level,
    upstream: Option<crate::stores::sessions::UpstreamLogin>,
) -> Response {
    if level < super::authorize::required_level(app, &req) {
        return error_page(StatusCode::FORBIDDEN, "err-needs-passkey");
    }
    if req.unmet_by(level.acr()) {
        // OpenID Connect Core §5.5.1.1: an essential acr that cannot be met is an error.
        let e = OAuthError::access_denied("the authentication asked for as essential was not given").code_as("unmet_authentication_requirements");
        return response::error(app, &req.reply_to(), &e, StatusCode::SEE_OTHER).await;
    }
    let acr = level.acr();
    // A new session id on every sign-in (no fixation); the old session is replaced, quietly:
    // its applications keep their tokens (this is a re-authentication, not a logout).
    if let Some(old) = cookies::get(headers, cookies::SESSION) {
        let _ = app.stores.sessions.end(app.tenant.id, SessionRef::Cookie(old.to_string()), Box::new(|_, _| Ok(()))).await;
    }
    let mut session = Session::new(&user.id, random_token(), now(), amr, acr);
    session.address = Some(address.to_string());
    session.upstream = upstream;
    session.user_agent = headers
        .get(axum::http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .map(|ua| ua.chars().take(MAX_USER_AGENT).collect());
    let sid = session.sid.clone();
    let cookie = match app.stores.sessions.create(app.tenant.id, session.clone(), app.config.session_ttl).await {
        Ok(c) => c,
        Err(e) => return unavailable(e),
    };
    app.audit(AuditEvent::new("login_success").user(&user.id).client(&req.client_id).address(address).detail(serde_json::json!({"amr": session.amr, "acr": session.acr})))
        .await;
    let mut res = continue_authorization(app, headers, req, Some((cookie.clone(), session)), true, StatusCode::SEE_OTHER).await;
    cookies::set(&mut res, app.base(), cookies::SESSION, &cookie, Some(app.config.session_ttl), app.config.secure_cookies());
    crate::endpoints::check_session::set_cookie(app, &mut res, Some(&sid));
    res
}

pub async fn consent(app: Issuer, headers: HeaderMap, form: Result<FormParams, OAuthError>) -> Response {
    // A consent form answers once: posted again (Back, then Allow), it says the request is
    // complete rather than issue a second code.
    let challenge = form.as_ref().ok().and_then(|FormParams(p)| p.get("challenge")).map(str::to_string);
    if let Some(done) = answered_already(&app, &headers, challenge.as_deref(), StatusCode::CONFLICT).await {
        return done;
    }
    let (params, cookie, req) = match take_state(&app, &headers, form, "consent", cookies::SESSION).await {
        Ok(taken) => taken,
        Err(res) => return *res,
    };
    let Some((_, session)) = super::authorize::current_session(&app, &headers).await.filter(|(c, _)| *c == cookie) else {
        return error_page(StatusCode::BAD_REQUEST, "err-session-ended");
    };
    if matches!(params.get("decision"), Some("allow" | "deny")) {
        let c = challenge.unwrap_or_default();
        // Marked before the answer goes: of two posts racing, one answers.
        match app.stores.challenges.first_use(app.tenant.id, &answered(&c), now() + app.config.challenge_ttl + RESTART_GRACE).await {
            Ok(true) => {}
            Ok(false) => return request_done(&app, &headers, &c, StatusCode::CONFLICT),
            Err(e) => return unavailable(e),
        }
    }
    match params.get("decision") {
        Some("allow") => {
            let scope = merged_scope(&app, &session.user_id, &req);
            if let Err(e) = app.registry().remember_consent(&session.user_id, &req.client_id, &scope).await {
                return unavailable(e);
            }
            issue_code(&app, &req, &cookie, &session, StatusCode::SEE_OTHER).await
        }
        Some("deny") => {
            // A refusal also takes back what was granted before: saying no to an application
            // must not leave it its earlier access (its refresh tokens too).
            if app.registry().consented_scope(&session.user_id, &req.client_id).is_some() {
                if let Err(e) = crate::consent::withdraw(&app, app.tenant.id, &session.user_id, &req.client_id, "denied").await {
                    return unavailable(e);
                }
            }
            let e = OAuthError::access_denied("the user denied the request");
            response::error(&app, &req.reply_to(), &e, StatusCode::SEE_OTHER).await
        }
        _ => error_page(StatusCode::BAD_REQUEST, "err-choose"),
    }
}

/// `POST /login/select`: the account chooser's answer (`prompt=select_account`).
pub async fn select_account(app: Issuer, headers: HeaderMap, form: Result<FormParams, OAuthError>) -> Response {
    let (params, cookie, mut req) = match take_state(&app, &headers, form, "select", cookies::SESSION).await {
        Ok(taken) => taken,
        Err(res) => return *res,
    };
    req.prompt.retain(|p| p != "select_account");
    let session = super::authorize::current_session(&app, &headers).await.filter(|(c, _)| *c == cookie);
    match (params.get("choice"), session) {
        (Some("current"), Some(session)) => continue_authorization(&app, &headers, req, Some(session), false, StatusCode::SEE_OTHER).await,
        // Another account: the login page; signing in replaces this browser's session.
        (Some("other"), _) => render_login(&app, &headers, &AuthorizationRequest { login_hint: None, ..req }, None, StatusCode::OK).await,
        (Some("current"), None) => error_page(StatusCode::BAD_REQUEST, "err-session-ended"),
        _ => error_page(StatusCode::BAD_REQUEST, "err-choose-account"),
    }
}

/// `GET /consent?challenge=…`: the consent page the login POST redirected to (see
/// `authorize::consent_redirect`). The sealed request is opened and checked as the form post
/// will be; the page is rendered afresh, its form carrying the same sealed request (one
/// request, answered once: Back to this URL after an answer finds it answered).
pub async fn consent_page(app: Issuer, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    let query = query.unwrap_or_default();
    let form = Params::parse(query.as_bytes()).map(FormParams);
    // Back to a consent page already answered: the request is complete, not asked again.
    if let Some(done) = answered_already(&app, &headers, form.as_ref().ok().and_then(|FormParams(p)| p.get("challenge")), StatusCode::OK).await {
        return done;
    }
    let (params, cookie, req) = match take_state(&app, &headers, form, "consent", cookies::SESSION).await {
        Ok(taken) => taken,
        Err(res) => return *res,
    };
    let Some((_, session)) = super::authorize::current_session(&app, &headers).await.filter(|(c, _)| *c == cookie) else {
        return error_page(StatusCode::BAD_REQUEST, "err-session-ended");
    };
    super::authorize::render_consent(&app, &cookie, &session, &req, params.get("challenge")).await
}

/// The authorization request a sign-up or a password reset came from (the login page's sealed
/// state, carried as `challenge`), if it is still good in this browser: once signed up, or
/// once the new password is set, the user goes on with it.
pub(crate) fn resumable(app: &Issuer, headers: &HeaderMap, challenge: Option<&str>) -> Option<AuthorizationRequest> {
    app.tenant.sealer.open::<AuthorizationRequest>("login", cookies::get(headers, cookies::BROWSER), challenge?).ok()
}

/// The mark of a consent form answered (`ChallengeStore::first_use`; stored hashed).
fn answered(challenge: &str) -> String {
    format!("consent-answered:{challenge}")
}

/// The request-complete page (with `status`) if the consent form `challenge` was answered
/// already; `None` if it was not (or there is none).
async fn answered_already(app: &Issuer, headers: &HeaderMap, challenge: Option<&str>, status: StatusCode) -> Option<Response> {
    let c = challenge?;
    match app.stores.challenges.used(app.tenant.id, &answered(c)).await {
        Ok(true) => Some(request_done(app, headers, c, status)),
        Ok(false) => None,
        Err(e) => Some(unavailable(e)),
    }
}

/// The page for a consent request already answered: it is complete, the answer went to the
/// application, and where to go now (the application's own address, if it has one; the
/// account page, where consents are withdrawn).
fn request_done(app: &Issuer, headers: &HeaderMap, challenge: &str, status: StatusCode) -> Response {
    use axum::response::IntoResponse;
    let req = app.tenant.sealer.open_expired::<AuthorizationRequest>("consent", cookies::get(headers, cookies::SESSION), challenge, RESTART_GRACE).ok();
    let client = req.as_ref().and_then(|r| app.registry().client(&r.client_id));
    let name = req.as_ref().map(|r| super::authorize::client_display_name(app, &r.client_id));
    let uri = client.and_then(|c| c.meta.client_uri.clone());
    let mut page = crate::ui::Page::new(status, "request_done.html", "request-done-title").with("client", name).with("client_uri", uri);
    if let Some(r) = &req {
        page = page.locales(r.ui_locales.as_deref());
    }
    page.into_response()
}

/// Open the form's sealed state of `kind` and check that the browser sent back the cookie it
/// is bound to. Returns the form, that cookie's value and the pending authorization request.
/// A form that expired (within a day) starts its authorization over: a fresh login or consent
/// page rather than a dead end.
pub(super) async fn take_state(
    app: &Issuer,
    headers: &HeaderMap,
    form: Result<FormParams, OAuthError>,
    kind: &str,
    cookie_name: &str,
) -> Result<(Params, String, AuthorizationRequest), Box<Response>> {
    let expired = || Box::new(error_page(StatusCode::BAD_REQUEST, EXPIRED));
    let FormParams(params) = form.map_err(|_| expired())?;
    let sealed = params.get("challenge").ok_or_else(expired)?;
    let cookie = cookies::get(headers, cookie_name);
    let req = match app.tenant.sealer.open::<AuthorizationRequest>(kind, cookie, sealed) {
        Ok(req) => req,
        Err(Unsealed::WrongBinding) => return Err(Box::new(error_page(StatusCode::BAD_REQUEST, NO_COOKIE))),
        Err(Unsealed::Invalid) => match app.tenant.sealer.open_expired::<AuthorizationRequest>(kind, cookie, sealed, RESTART_GRACE) {
            // Still the client's, to a redirect URI it still has: the request starts over.
            Ok(req) if matches!(app.resolve_client(&req.client_id).await, Ok(Some(c)) if c.has_redirect_uri(&req.redirect_uri)) => {
                let session = super::authorize::current_session(app, headers).await;
                if session.is_none() && kind == "login" {
                    // The sign-in page again, saying why, with the username kept: one step on.
                    let typed = params.get("username").filter(|u| !u.is_empty()).map(str::to_string);
                    let req = AuthorizationRequest { login_hint: typed.or(req.login_hint), ..req };
                    return Err(Box::new(render_login(app, headers, &req, Some(LOGIN_EXPIRED), StatusCode::OK).await));
                }
                return Err(Box::new(continue_authorization(app, headers, req, session, false, StatusCode::SEE_OTHER).await));
            }
            _ => return Err(expired()),
        },
    };
    let cookie = cookie.expect("a bound state came with its cookie").to_string();
    Ok((params, cookie, req))
}

/// Scopes consented before plus the ones just granted.
fn merged_scope(app: &Issuer, user_id: &str, req: &AuthorizationRequest) -> String {
    let before = app.registry().consented_scope(user_id, &req.client_id).unwrap_or_default();
    let mut all: Vec<&str> = split_list(&before).collect();
    for s in split_list(&req.scope) {
        if !all.contains(&s) {
            all.push(s);
        }
    }
    all.join(" ")
}

/// The client's address for rate limiting: the peer, or the first `X-Forwarded-For` hop when
/// configured to trust a proxy.
pub(super) fn client_address(app: &App, headers: &HeaderMap, peer: SocketAddr) -> String {
    if app.config.trust_proxy {
        if let Some(first) = headers
            .get("x-forwarded-for")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(',').next())
            .map(str::trim)
            .filter(|v| !v.is_empty())
        {
            return first.to_string();
        }
    }
    peer.ip().to_string()
}
