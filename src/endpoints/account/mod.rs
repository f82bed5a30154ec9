//! The account page (`/account`): a signed-in user sees and manages their own sign-in
//! methods (passkeys, authenticator apps, recovery codes), password, profile (and the
//! verification of its e-mail address) and linked identities, and answers the sign-in
//! requests applications sent for them (CIBA: `requests`).
//!
//! The page signs its users in as a client of this server (`first_party::ACCOUNT`). Changes
//! need a recent sign-in (`account_reauth_max_age`): otherwise the user is asked to sign in
//! again (`prompt=login`) first; what only takes access away (ending a session, withdrawing
//! a consent: `access`) does not. Every form carries a token sealed to the session cookie
//! (CSRF), and every change is audited.

mod access;
mod email;
mod factors;
mod profile;
mod requests;

use crate::app::{App, AppState};
use crate::http::account_pages as pages;
use crate::http::params::{FormParams, Params};
use crate::tenant::Issuer;
use axum::extract::RawQuery;
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;

pub(crate) use crate::endpoints::first_party::{form, see_other, signed_in, SignedIn};
use crate::endpoints::first_party::ACCOUNT;

/// The account page's client id (reserved: no registered client can take it).
pub const CLIENT_ID: &str = ACCOUNT.client_id;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/account", get(overview))
        .route("/account/login", get(login))
        .route(ACCOUNT.callback, get(callback))
        .route("/account/passkeys/new", post(factors::passkey_start))
        .route("/account/passkeys", post(factors::passkey_finish))
        .route("/account/totp/new", post(factors::totp_start))
        .route("/account/totp", post(factors::totp_finish))
        .route("/account/recovery-codes", post(factors::recovery_codes))
        .route("/account/recovery-codes/download", post(factors::download_recovery_codes))
        .route("/account/sessions/end", post(access::end))
        .route("/account/applications/withdraw", post(access::withdraw))
        .route("/account/requests/approve", post(requests::approve))
        .route("/account/requests/deny", post(requests::deny))
        .route("/account/user-code", post(requests::set_user_code))
        .route("/account/user-code/remove", post(requests::remove_user_code))
        .route("/account/factors/remove", post(factors::remove))
        .route("/account/password", get(factors::password_page).post(factors::change_password))
        .route("/account/profile", get(profile::page).post(profile::change))
        .route(email::VERIFY, get(email::page).post(email::confirm))
        .route(email::SEND, post(email::send))
        .route("/account/links/new", post(link))
        .route("/account/links/remove", post(unlink))
}

impl SignedIn {
    /// The CSRF token every form of the account page carries, sealed to the session cookie.
    pub fn csrf(&self, app: &Issuer) -> String {
        ACCOUNT.csrf(app, self)
    }

    /// Whether the sign-in is recent enough to change sign-in methods.
    pub fn recent(&self, app: &App) -> bool {
        self.age() <= app.config.account_reauth_max_age
    }
}

/// A change needs a recent sign-in: the page that asks for one, else the user.
pub(crate) async fn change_user(app: &Issuer, headers: &HeaderMap, params: &Params) -> Result<SignedIn, Response> {
    let me = ACCOUNT.form_user(app, headers, params).await?;
    if !me.recent(app) {
        return Err(pages::reauthenticate(app.config.account_reauth_max_age));
    }
    Ok(me)
}

/// The extractor of every account-page change: the form, and its user, signed in recently
/// and carrying the form's CSRF token; otherwise the page that says what to do.
pub(crate) struct Change {
    pub me: SignedIn,
    pub params: Params,
}

impl axum::extract::FromRequest<AppState> for Change {
    type Rejection = Response;

    async fn from_request(req: axum::extract::Request, shared: &AppState) -> Result<Self, Response> {
        let app = &Issuer::from_extensions(req.extensions(), shared)?;
        let headers = req.headers().clone();
        let params = form(FormParams::from_request(req, shared).await)?;
        let me = change_user(app, &headers, &params).await?;
        Ok(Change { me, params })
    }
}

/// The extractor of what needs the form's CSRF token but not a recent sign-in (`access`,
/// the download of the recovery codes just shown): the form and its signed-in user.
pub(crate) struct Own {
    pub me: SignedIn,
    pub params: Params,
}

impl axum::extract::FromRequest<AppState> for Own {
    type Rejection = Response;

    async fn from_request(req: axum::extract::Request, shared: &AppState) -> Result<Self, Response> {
        let app = &Issuer::from_extensions(req.extensions(), shared)?;
        let headers = req.headers().clone();
        let params = form(FormParams::from_request(req, shared).await)?;
        let me = ACCOUNT.form_user(app, &headers, &params).await?;
        Ok(Own { me, params })
    }
}

async fn overview(app: Issuer, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    let Some(me) = signed_in(&app, &headers).await else { return see_other(app.base(), "/account/login") };
    let list = match crate::factors::list(&app.db, app.tenant.id, &me.user.id).await {
        Ok(l) => l,
        Err(e) => return crate::endpoints::authorize::unavailable(e),
    };
    let left = crate::factors::recovery::remaining(&app.db, app.tenant.id, &me.user.id).await.unwrap_or(0);
    let links = match crate::identity::links::of_user(&app.db, app.tenant.id, &me.user.id).await {
        Ok(l) => l,
        Err(e) => return crate::endpoints::authorize::unavailable(e),
    };
    let providers = app
        .tenant.upstreams
        .list()
        .iter()
        .map(|p| (p.id.clone(), p.name.clone(), links.iter().find(|l| l.provider == p.id).map(|l| l.email.clone().unwrap_or_else(|| l.subject.clone()))))
        .collect();
    // The page's own visit counts as the session being used (at most one write a minute),
    // when the page signed in through it (`join` would otherwise list the page among the
    // clients that received a code in the session).
    if me.session.clients.iter().any(|c| c == CLIENT_ID) {
        if let Err(e) = app.stores.sessions.join(app.tenant.id, &me.cookie, CLIENT_ID).await {
            tracing::warn!(error = %e, "the session's last use was not recorded");
        }
    }
    let sessions = match app.stores.sessions.of_user(app.tenant.id, &me.user.id).await {
        Ok(list) => access::sessions(&list, &me.session.sid),
        Err(e) => return crate::endpoints::authorize::unavailable(e),
    };
    let applications = match access::applications(&app, &me.user.id).await {
        Ok(list) => list,
        Err(e) => return crate::endpoints::authorize::unavailable(e),
    };
    let requests = match app.stores.ciba.waiting_for(app.tenant.id, &me.user.id).await {
        Ok(list) => requests::listed(&app, &list),
        Err(e) => return crate::endpoints::authorize::unavailable(e),
    };
    let user_code_set = match crate::ciba::user_code::hash_of(&app.db, app.tenant.id, &me.user.id).await {
        Ok(h) => h.is_some(),
        Err(e) => return crate::endpoints::authorize::unavailable(e),
    };
    let notice = Params::parse(query.unwrap_or_default().as_bytes()).ok().and_then(|p| p.get("done").map(str::to_string));
    pages::overview(pages::Overview {
        username: &me.user.username,
        factors: &list,
        recovery_codes_left: left,
        passkeys: app.tenant.passkeys.is_some(),
        passkeys_off: app.passkeys_off().map(|o| o.page_value()),
        csrf: &me.csrf(&app),
        notice: notice.as_deref().and_then(pages::notice),
        recent: me.recent(&app),
        providers,
        email: me.user.email().map(|e| (e, me.user.claims.get("email_verified") == Some(&serde_json::Value::Bool(true)))),
        can_verify: email::can_verify(&app, &me.user),
        sessions,
        applications,
        requests,
        user_code_set,
    })
}

/// `POST /account/links/new` (`idp`): to the provider, to link the identity there to this
/// user (`endpoints::upstream_login`).
async fn link(app: Issuer, headers: HeaderMap, Change { me, params }: Change) -> Response {
    let Some(p) = params.get("idp").and_then(|id| app.tenant.upstreams.get(id)) else { return see_other(app.base(), "/account") };
    crate::endpoints::upstream_login::start(&app, &headers, p, None, Some((me.user.id.clone(), me.session.sid.clone()))).await
}

/// `POST /account/links/remove` (`idp`).
async fn unlink(app: Issuer, Change { me, params }: Change) -> Response {
    let provider = params.get("idp").unwrap_or_default().to_string();
    if provider.starts_with("ldap:") {
        // The account is the directory's: without its link, its next sign-in would find no
        // user of its own (and the name taken by this one).
        return crate::http::pages::error_page(axum::http::StatusCode::CONFLICT, "err-directory-link-kept");
    }
    match crate::identity::links::unlink(&app.db, app.tenant.id, &me.user.id, &provider).await {
        Ok(true) => {
            app.audit(crate::audit::AuditEvent::new("identity_unlinked").user(&me.user.id).detail(serde_json::json!({"provider": provider, "by": "user"}))).await;
            see_other(app.base(), "/account?done=unlinked")
        }
        Ok(false) => see_other(app.base(), "/account"),
        Err(e) => crate::endpoints::authorize::unavailable(e),
    }
}

/// `GET /account/login[?reauth=1]`: to `/authorize` as the account client.
async fn login(app: Issuer, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    ACCOUNT.login(&app, &headers, query.as_deref(), None)
}

/// `GET /account/callback`: the code spent, on to the overview.
async fn callback(app: Issuer, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    ACCOUNT.callback(&app, &headers, query.as_deref(), pages::not_signed_in).await
}
