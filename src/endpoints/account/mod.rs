//! The account page (`/account`): a signed-in user sees and manages their own sign-in
//! methods (passkeys, authenticator apps, recovery codes).
//!
//! The page signs its users in the way any application does: it is a client of this server
//! (`CLIENT_ID`, built in memory, public, PKCE, no consent), so the login page, second
//! factors, passkeys, throttles and policies need no second path. `/account/login` sends the
//! browser to `/authorize`; `/account/callback` spends the code (checking the PKCE verifier
//! sealed to this browser) and shows the page. What identifies the user afterwards is the
//! ordinary session cookie.
//!
//! Changes need a recent sign-in (`account_reauth_max_age`): otherwise the user is asked to
//! sign in again (`prompt=login`) first. Every form carries a token sealed to the session
//! cookie (CSRF), and every change is audited.

mod factors;

use crate::app::{App, AppState};
use crate::http::account_pages as pages;
use crate::http::cookies;
use crate::http::pages::error_page;
use crate::http::params::{FormParams, Params};
use crate::stores::{Redemption, Session};
use crate::util::{b64, now, random_token, sha256};
use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;

/// The account page's client id (reserved: no registered client can take it).
pub const CLIENT_ID: &str = "authrim-account";
/// Its redirect URI's path.
pub const CALLBACK: &str = "/account/callback";
/// Sealed-state kinds of the account page's forms.
const SIGNIN_KIND: &str = "account-signin";
const CSRF_KIND: &str = "account";

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/account", get(overview))
        .route("/account/login", get(login))
        .route(CALLBACK, get(callback))
        .route("/account/passkeys/new", post(factors::passkey_start))
        .route("/account/passkeys", post(factors::passkey_finish))
        .route("/account/totp/new", post(factors::totp_start))
        .route("/account/totp", post(factors::totp_finish))
        .route("/account/recovery-codes", post(factors::recovery_codes))
        .route("/account/factors/remove", post(factors::remove))
        .route("/account/password", get(factors::password_page).post(factors::change_password))
}

/// The signed-in user of the account page: their session, its cookie, and the user.
pub(crate) struct SignedIn {
    pub cookie: String,
    pub session: Session,
    pub user: std::sync::Arc<crate::registry::User>,
}

impl SignedIn {
    /// The CSRF token every form of the page carries, sealed to the session cookie.
    pub fn csrf(&self, app: &App) -> String {
        app.sealer.seal(CSRF_KIND, &self.cookie, app.config.challenge_ttl, &self.session.sid)
    }

    /// Whether the sign-in is recent enough to change sign-in methods.
    pub fn recent(&self, app: &App) -> bool {
        now().saturating_sub(self.session.auth_time) <= app.config.account_reauth_max_age
    }
}

pub(crate) async fn signed_in(app: &App, headers: &HeaderMap) -> Option<SignedIn> {
    let (cookie, session) = crate::endpoints::authorize::current_session(app, headers).await?;
    let user = app.registry.user(&session.user_id)?;
    Some(SignedIn { cookie, session, user })
}

/// A form post of the account page: the signed-in user, if the form's CSRF token is theirs.
/// Otherwise the response to send (to the overview, which signs in if need be).
pub(crate) async fn form_user(app: &App, headers: &HeaderMap, params: &Params) -> Result<SignedIn, Response> {
    let Some(me) = signed_in(app, headers).await else { return Err(see_other("/account/login")) };
    let sid = params.get("csrf").and_then(|t| app.sealer.open::<String>(CSRF_KIND, Some(&me.cookie), t).ok());
    if sid.as_deref() != Some(me.session.sid.as_str()) {
        return Err(error_page(StatusCode::BAD_REQUEST, "err-account-form-expired"));
    }
    Ok(me)
}

/// A change needs a recent sign-in: the page that asks for one, else the user.
pub(crate) async fn change_user(app: &App, headers: &HeaderMap, params: &Params) -> Result<SignedIn, Response> {
    let me = form_user(app, headers, params).await?;
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

    async fn from_request(req: axum::extract::Request, app: &AppState) -> Result<Self, Response> {
        let headers = req.headers().clone();
        let params = form(FormParams::from_request(req, app).await)?;
        let me = change_user(app, &headers, &params).await?;
        Ok(Change { me, params })
    }
}

async fn overview(State(app): State<AppState>, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    let Some(me) = signed_in(&app, &headers).await else { return see_other("/account/login") };
    let list = match crate::factors::list(&app.db, &me.user.id).await {
        Ok(l) => l,
        Err(e) => return crate::endpoints::authorize::unavailable(e),
    };
    let left = crate::factors::recovery::remaining(&app.db, &me.user.id).await.unwrap_or(0);
    let notice = Params::parse(query.unwrap_or_default().as_bytes()).ok().and_then(|p| p.get("done").map(str::to_string));
    pages::overview(pages::Overview {
        username: &me.user.username,
        factors: &list,
        recovery_codes_left: left,
        passkeys: app.passkeys.is_some(),
        csrf: &me.csrf(&app),
        notice: notice.as_deref().and_then(pages::notice),
        recent: me.recent(&app),
    })
}

/// `GET /account/login[?reauth=1]`: to `/authorize` as the account client, with PKCE; the
/// verifier travels in `state`, sealed to this browser.
async fn login(State(app): State<AppState>, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    let reauth = Params::parse(query.unwrap_or_default().as_bytes()).ok().is_some_and(|p| p.get("reauth").is_some());
    let existing = cookies::get(&headers, cookies::BROWSER).map(str::to_string);
    let browser = existing.clone().unwrap_or_else(random_token);
    let verifier = random_token();
    let state = app.sealer.seal(SIGNIN_KIND, &browser, app.config.challenge_ttl, &verifier);
    let q = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let mut location = format!(
        "/authorize?response_type=code&client_id={CLIENT_ID}&redirect_uri={}&scope=openid&code_challenge={}&code_challenge_method=S256&state={}",
        q(&app.endpoint(CALLBACK)),
        b64(&sha256(verifier.as_bytes())),
        q(&state)
    );
    if reauth {
        location.push_str("&prompt=login");
    }
    let mut res = see_other(&location);
    if existing.is_none() {
        cookies::set(&mut res, cookies::BROWSER, &browser, None, app.config.secure_cookies());
    }
    res
}

/// `GET /account/callback`: the code is spent here (nothing else could redeem it: the
/// verifier never left this server), and must be this browser's signed-in user's.
async fn callback(State(app): State<AppState>, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    let params = Params::parse(query.unwrap_or_default().as_bytes()).unwrap_or_default();
    let not_done = || pages::not_signed_in();
    let Some(verifier) = params.get("state").and_then(|s| app.sealer.open::<String>(SIGNIN_KIND, cookies::get(&headers, cookies::BROWSER), s).ok()) else {
        return not_done();
    };
    let (Some(code), Some(me)) = (params.get("code"), signed_in(&app, &headers).await) else { return not_done() };
    let grant = match app.stores.codes.consume(code, Vec::new()).await {
        Ok(Redemption::Fresh(g)) => g,
        Ok(_) => return not_done(),
        Err(e) => return crate::endpoints::authorize::unavailable(e),
    };
    let pkce = grant.code_challenge.as_deref().is_some_and(|c| crate::util::ct_eq(c.as_bytes(), b64(&sha256(verifier.as_bytes())).as_bytes()));
    if grant.client_id != CLIENT_ID || !pkce || grant.user_id != me.user.id {
        return not_done();
    }
    see_other("/account")
}

pub(crate) fn see_other(location: &str) -> Response {
    let mut res = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(location) {
        res.headers_mut().insert(header::LOCATION, v);
    }
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

/// The form body of an account page post, or the page that refuses it.
pub(crate) fn form(form: Result<FormParams, crate::error::OAuthError>) -> Result<Params, Response> {
    form.map(|FormParams(p)| p).map_err(|_| error_page(StatusCode::BAD_REQUEST, "err-account-form-unreadable"))
}
