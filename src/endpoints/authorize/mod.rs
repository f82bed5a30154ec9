//! `/authorize` (RFC 6749 §4.1.1, OpenID Connect Core §3.1.2): validate the request, then
//! decide what the browser sees next: the login page, the consent page, or a redirect back to
//! the client with a code or an error.
//!
//! Until the client and redirect URI are known to be genuine, errors are shown as a page and
//! never redirected (RFC 6749 §4.1.2.1); after that they go back to the client.

use crate::error::OAuthError;
use crate::factors::Level;
use crate::ui::Msg;
use crate::http::cookies;
use crate::http::pages::{self, LoginPage};
use crate::http::params::Params;
use crate::registry::Client;
use crate::stores::{CodeGrant, Session};
use crate::tenant::Issuer;
use crate::util::{now, random_token, split_list};
use axum::body::Bytes;
use axum::extract::RawQuery;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

mod front_channel;
mod jarm;
pub(crate) mod organization;
pub mod pushed;
pub mod request;
mod request_object;
pub mod request_uri;
pub mod response;
pub mod response_type;

pub use organization::{choose as choose_organization, logo_origin};
pub use request::AuthorizationRequest;
pub use request_object::{algorithms as request_object_algorithms, as_params as request_object_params};
use request::{Rejection, Via};
use response::ReplyTo;

pub async fn get(app: Issuer, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    let query = query.unwrap_or_default();
    if let Some(refused) = too_large(&app, query.as_bytes()) {
        return refused;
    }
    authorize(&app, &headers, Params::parse(query.as_bytes())).await
}

pub async fn post(
    app: Issuer,
    headers: HeaderMap,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    let body = match pages::form_body(&headers, body, "authorization request") {
        Ok(b) => b,
        Err(refused) => return refused,
    };
    if let Some(refused) = too_large(&app, &body) {
        return refused;
    }
    authorize(&app, &headers, Params::parse(&body)).await
}

/// The request is refused unread past `max_authorization_request_bytes`: not redirected, since
/// nothing in it, the redirect URI included, has been looked at. A pushed request's
/// `request_uri` carries the (sealed) request itself, so it may be that much longer.
fn too_large(app: &Issuer, request: &[u8]) -> Option<Response> {
    let mut max = app.config.max_authorization_request_bytes;
    if request.len() > max && names_request_uri(request) {
        max += pushed::max_request_uri_len(app);
    }
    (request.len() > max).then(|| {
        let e = OAuthError::invalid_request(format!("the authorization request is larger than {max} bytes"));
        pages::error_page(StatusCode::BAD_REQUEST, Msg::new("err-request-too-large").detail(format!("{}: {}", e.code, e.description)))
    })
}

/// Whether the raw request names a `request_uri` (looked for before anything is parsed).
fn names_request_uri(request: &[u8]) -> bool {
    request.windows(b"request_uri=".len()).any(|w| w == b"request_uri=")
}

async fn authorize(app: &Issuer, headers: &HeaderMap, params: Result<Params, OAuthError>) -> Response {
    let params = match params {
        Ok(p) => p,
        Err(e) => return pages::error_page(StatusCode::BAD_REQUEST, Msg::new("err-bad-request").detail(e.description.to_string())),
    };
    let read = match params.get("request_uri") {
        Some(uri) if uri.starts_with(pushed::REQUEST_URI_PREFIX) => match from_pushed(app, &params, uri).await {
            Ok(r) => Ok(r),
            Err(res) => return res,
        },
        Some(uri) => match by_reference(app, &params, uri).await {
            Ok(with_object) => request::read(app, &with_object, Via::FrontChannel).await,
            Err(rejection) => Err(rejection),
        },
        None => request::read(app, &params, Via::FrontChannel).await,
    };
    let req = match read {
        Ok(r) => r,
        Err(Rejection::Page(msg)) => return pages::error_page(StatusCode::BAD_REQUEST, Msg::new("err-bad-request").detail(msg)),
        Err(Rejection::Unredirectable(e)) => {
            return pages::error_page(StatusCode::BAD_REQUEST, Msg::new("err-bad-request").detail(format!("{}: {}", e.code, e.description)))
        }
        Err(Rejection::Redirect { client_id, redirect_uri, state, mode, error }) => {
            let to = ReplyTo { client_id: &client_id, redirect_uri: &redirect_uri, state: state.as_deref(), mode, saml: None };
            return response::error(app, &to, &error, StatusCode::FOUND).await;
        }
    };
    let session = current_session(app, headers).await;
    continue_authorization(app, headers, req, session, false, StatusCode::FOUND).await
}

/// OpenID Connect Core §6.2: the request object at `request_uri` (one of the client's
/// `request_uris`, fetched: `request_uri`), in place of the reference, as if passed by value.
/// A reference that gives no object is refused as `invalid_request_uri`, as a bad request
/// object is (`request_object::refuse`: to the query's redirect URI if the client registered
/// it, else on a page).
async fn by_reference(app: &Issuer, params: &Params, uri: &str) -> Result<Params, Rejection> {
    let client_id = params.get("client_id").ok_or_else(|| Rejection::Page("The request names no client (client_id is missing).".into()))?;
    let client = match app.resolve_client(client_id).await {
        Ok(Some(c)) => c,
        _ => return Err(Rejection::Page("The application that sent you here is not registered.".into())),
    };
    if params.contains("request") {
        return Err(request_object::refuse(&client, params, OAuthError::invalid_request("request and request_uri cannot both be sent")));
    }
    let jwt = app.request_objects.fetch(app, &client, uri).await.map_err(|u| request_object::refuse(&client, params, u.error()))?;
    let mut with_object = params.clone();
    with_object.remove("request_uri");
    with_object.set("request", &jwt);
    Ok(with_object)
}

/// RFC 9126 §4: the request pushed as `request_uri`, for the `client_id` the browser names;
/// every other parameter of the browser's request is ignored (only the pushed ones count).
async fn from_pushed(app: &Issuer, params: &Params, request_uri: &str) -> Result<AuthorizationRequest, Response> {
    let Some(client_id) = params.get("client_id") else {
        return Err(pages::error_page(StatusCode::BAD_REQUEST, "err-no-client"));
    };
    match pushed::load(app, client_id, request_uri) {
        Some(req) if app.client(&req.client_id).is_some() => Ok(req),
        _ => Err(pages::error_page(StatusCode::BAD_REQUEST, Msg::new("err-request-uri-used").detail("invalid_request_uri"))),
    }
}

/// The signed-in user's session, if the cookie names a live one for an enabled user.
pub async fn current_session(app: &Issuer, headers: &HeaderMap) -> Option<(String, Session)> {
    let id = cookies::get(headers, cookies::SESSION)?;
    let session = app.stores.sessions.get(app.tenant.id, id).await.ok().flatten()?;
    let user = app.registry().user(&session.user_id)?;
    (!user.disabled).then(|| (id.to_string(), session))
}

/// Take the request as far as it can go: login, consent, or a code.
/// `fresh_login` is true right after the user signed in for this request.
pub async fn continue_authorization(
    app: &Issuer,
    headers: &HeaderMap,
    mut req: AuthorizationRequest,
    session: Option<(String, Session)>,
    fresh_login: bool,
    redirect_status: StatusCode,
) -> Response {
    let t = now();
    let needs_login = match &session {
        None => true,
        Some(_) if fresh_login => false,
        Some((_, s)) => {
            // OpenID Connect Core §3.1.2.1: max_age=0 is prompt=login, however recent the
            // sign-in (a comparison of whole seconds would let one in the same second pass).
            req.prompts("login")
                || req.max_age.is_some_and(|max| max == 0 || t.saturating_sub(s.auth_time) > max)
                || req.id_token_hint_sub.as_ref().is_some_and(|sub| *sub != crate::tokens::subject::subject_for(app, &req.client_id, &s.user_id))
                || needs_step_up(app, &req, s).await
        }
    };
    if needs_login {
        if req.prompts("none") {
            let e = OAuthError::access_denied("the user is not signed in").code_as("login_required");
            return response::error(app, &req.reply_to(), &e, redirect_status).await;
        }
        return render_login(app, headers, &req, None, StatusCode::OK).await;
    }
    let (cookie, session) = session.expect("checked above");
    // OpenID Connect Core §3.1.2.1 prompt=select_account: the browser has one session, so
    // the choice is its user or another (a new sign-in). Asked once: the answer's request
    // goes on without the prompt.
    if req.prompts("select_account") && !fresh_login {
        let challenge = seal_request(app, "select", &cookie, &req);
        let username = app.registry().user(&session.user_id).map(|u| u.username.clone()).unwrap_or_default();
        return pages::select_account(&challenge, &client_display_name(app, &req.client_id), &username, req.ui_locales.as_deref());
    }
    // An essential acr the session does not meet, and signing in again would not either
    // (no step-up was due): OpenID Connect Core §5.5.1.1 makes that an error.
    if req.unmet_by(&session.acr) {
        let e = OAuthError::access_denied("the authentication asked for as essential cannot be given").code_as("unmet_authentication_requirements");
        return response::error(app, &req.reply_to(), &e, redirect_status).await;
    }
    // A client for organizations only, and a request that names none: which one.
    if req.organization.is_none() && organization::required(app, &req.client_id) {
        let Some(user) = app.registry().user(&session.user_id) else {
            return response::error(app, &req.reply_to(), &OAuthError::access_denied("the signed-in user no longer exists"), redirect_status).await;
        };
        match organization::pick(app, &req, &cookie, &user) {
            organization::Pick::One(id) => req.organization = Some(id),
            organization::Pick::Choose(page) => return page,
            organization::Pick::Refused(e) => return response::error(app, &req.reply_to(), &e, redirect_status).await,
        }
    }
    // Signing in for an organization is for its members (or those its domains admit).
    if req.organization.is_some() {
        let admitted = match app.registry().user(&session.user_id) {
            Some(user) => organization::admit(app, &req, &user).await,
            None => Err(OAuthError::access_denied("the signed-in user no longer exists")),
        };
        if let Err(e) = admitted {
            return response::error(app, &req.reply_to(), &e, redirect_status).await;
        }
    }
    let consented = app.registry().consented_scope(&session.user_id, &req.client_id).unwrap_or_default();
    let covered = split_list(&req.scope).all(|s| split_list(&consented).any(|c| c == s));
    let first_party = app.client(&req.client_id).is_some_and(|c| c.meta.first_party);
    if (!covered || req.prompts("consent")) && !first_party {
        if req.prompts("none") {
            let e = OAuthError::access_denied("the user has not consented").code_as("consent_required");
            return response::error(app, &req.reply_to(), &e, redirect_status).await;
        }
        if fresh_login {
            // Right after the login POST: send the browser to a GET of the consent page, so
            // that Back from the application lands on a page, not on a form to resubmit.
            return consent_redirect(app, &cookie, &req);
        }
        return render_consent(app, &cookie, &session, &req, None).await;
    }
    issue_code(app, &req, &cookie, &session, redirect_status).await
}

/// Step-up: a second factor is asked for (by the request or the policy) and the session was
/// signed in without one, though the user has one to give: sign in again, both steps.
async fn needs_step_up(app: &Issuer, req: &AuthorizationRequest, s: &Session) -> bool {
    step_up_due(app, required_level(app, req), req.wanted_level(), s).await
}

/// `needs_step_up` for a request that is not an authorization request (the device page's):
/// what must be reached, what the client prefers, and the session.
pub(crate) async fn step_up_due(app: &Issuer, required: Level, wanted: Option<Level>, s: &Session) -> bool {
    let wanted = wanted.unwrap_or(Level::Password).max(required);
    let have = Level::of(&s.acr).unwrap_or(Level::Password);
    if have >= wanted {
        return false;
    }
    // Asked for by the client only: worth a sign-in only if the user can do better. A store
    // error asks for the sign-in, which will report it.
    wanted <= required || crate::factors::best_level(&app.db, app.tenant.id, &s.user_id).await.map_or(true, |best| best > have)
}

/// The least a sign-in for this request must reach: the server's policy or the client's.
/// The account page is exempt: it is where factors are added, and a user who has one is
/// asked for it there as everywhere.
pub fn required_level(app: &Issuer, req: &AuthorizationRequest) -> Level {
    required_level_of(app, &req.client_id)
}

/// `required_level` for a sign-in to `client_id`, whatever the request.
pub fn required_level_of(app: &Issuer, client_id: &str) -> Level {
    if crate::endpoints::first_party::by_client_id(client_id).is_some_and(|f| f.policy_exempt) {
        return Level::Password;
    }
    let client = app.client(client_id);
    let of_client = match client.as_deref().map(|c| (c.meta.require_passkey, c.meta.require_mfa)) {
        Some((true, _)) => Level::Passkey,
        Some((false, true)) => Level::Mfa,
        _ => Level::Password,
    };
    app.tenant.policies.required_level.max(of_client)
}

pub async fn render_login(
    app: &Issuer,
    headers: &HeaderMap,
    req: &AuthorizationRequest,
    error: Option<&'static str>,
    status: StatusCode,
) -> Response {
    // `idp_hint` naming one of our upstream providers: straight there (only on the way in;
    // a login page with an error is shown as it is).
    // So is an organization's own provider (the one named, or the one a `login_hint`'s
    // domain is at).
    let direct = req.idp_hint.as_deref().and_then(|h| app.tenant.upstreams.get(h)).or_else(|| organization::upstream_for(app, req));
    if let Some(p) = direct.filter(|_| error.is_none()) {
        return crate::endpoints::upstream_login::start(app, headers, p, Some(req.clone()), None).await;
    }
    let existing = cookies::get(headers, cookies::BROWSER).map(str::to_string);
    let browser = existing.clone().unwrap_or_else(random_token);
    let challenge = seal_request(app, "login", &browser, req);
    let client_name = client_display_name(app, &req.client_id);
    // A passwordless ceremony offered beside the password: its state sealed like the form's.
    let ceremony = app.tenant.passkeys.as_ref().and_then(|p| p.start_discoverable()).map(|(options, state)| {
        let sealed = app.tenant.sealer.seal(super::second_factor::PASSKEY_KIND, &browser, app.config.challenge_ttl, &state);
        (serde_json::to_string(&options).expect("options serialise"), sealed)
    });
    let passkey = ceremony.as_ref().map(|(options, state)| pages::PasskeyForm { options, state });
    let passkeys_off = app.passkeys_off().filter(|o| *o != crate::factors::passkey::Off::Disabled).map(|o| o.page_value());
    let upstreams: Vec<(&str, &str)> = app.tenant.upstreams.list().iter().map(|p| (p.id.as_str(), p.name.as_str())).collect();
    let org = req.organization.as_deref().and_then(|o| app.registry().organization(o));
    let organization = org.as_deref().map(|o| (o.display_name.as_str(), o.logo_uri.as_deref()));
    let mut res = pages::login(LoginPage { challenge: &challenge, client_name: &client_name, organization, login_hint: req.login_hint.as_deref(), error, passkey, ui_locales: req.ui_locales.as_deref(), upstreams, forgot: app.mailer.is_some(), signup: app.tenant.policies.signup, domain_routing: app.registry().routes_domains(), passkeys_off });
    if error.is_some() {
        *res.status_mut() = status;
    }
    if existing.is_none() {
        cookies::set(&mut res, app.base(), cookies::BROWSER, &browser, None, app.config.secure_cookies());
    }
    res
}

/// 303 to `GET /consent` carrying the sealed request (bound to the session cookie, so the URL
/// is of no use in another browser).
fn consent_redirect(app: &Issuer, cookie: &str, req: &AuthorizationRequest) -> Response {
    let challenge = seal_request(app, "consent", cookie, req);
    let mut res = StatusCode::SEE_OTHER.into_response();
    let location = format!("{}/consent?challenge={}", app.base(), url::form_urlencoded::byte_serialize(challenge.as_bytes()).collect::<String>());
    if let Ok(v) = HeaderValue::from_str(&location) {
        res.headers_mut().insert(header::LOCATION, v);
    }
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

/// The consent page for `req`. `sealed`: the request as the page's URL carries it (`GET
/// /consent?challenge=…`), used again as the form's, so that the page and its form are one
/// request, answered once (`interaction::consent`); else sealed afresh.
pub async fn render_consent(app: &Issuer, cookie: &str, session: &Session, req: &AuthorizationRequest, sealed: Option<&str>) -> Response {
    let challenge = sealed.map_or_else(|| seal_request(app, "consent", cookie, req), str::to_string);
    let username = app.registry().user(&session.user_id).map(|u| u.username.clone()).unwrap_or_default();
    let scopes = split_list(&req.scope).map(|s| (s, crate::resources::scope_description(app, &req.resource, s))).collect();
    let resources = req
        .resource
        .iter()
        .map(|r| (crate::resources::servers(app, std::slice::from_ref(r)).first().map_or(r.as_str(), |rs| rs.name.as_str()), r.as_str()))
        .collect();
    let client_host = document_host(&req.client_id);
    let client = app.client(&req.client_id);
    let meta = client.as_deref().map(|c| &c.meta);
    pages::consent(pages::ConsentPage {
        logo: meta.and_then(|m| m.logo_uri.as_deref()),
        self_registered: client.as_deref().is_some_and(|c| c.is_dynamic()),
        home: meta.and_then(|m| m.client_uri.as_deref()),
        policy: meta.and_then(|m| m.policy_uri.as_deref()),
        terms: meta.and_then(|m| m.tos_uri.as_deref()),
        challenge: &challenge,
        client_name: &client_display_name(app, &req.client_id),
        client_host: client_host.as_deref(),
        username: &username,
        scopes,
        resources,
        ui_locales: req.ui_locales.as_deref(),
    })
}

/// The form's sealed state of `kind` carrying `req`, bound to the value of the cookie the form
/// post must send back (see `interaction::take_state`). Nothing is stored (`http::sealed`).
fn seal_request(app: &Issuer, kind: &str, cookie_value: &str, req: &AuthorizationRequest) -> String {
    app.tenant.sealer.seal(kind, cookie_value, app.config.challenge_ttl, req)
}

/// The response for `req` (a code, tokens, or both), after recording the client in the
/// session (`cookie`): a client that got something is one to tell when the session ends
/// (back- and front-channel logout).
pub async fn issue_code(app: &Issuer, req: &AuthorizationRequest, cookie: &str, session: &Session, status: StatusCode) -> Response {
    if let Some(uri) = &req.pushed {
        match pushed::spend(app, uri).await {
            Ok(true) => {}
            Ok(false) => {
                // RFC 9126 §2.2, RFC 9101 §7: the error for a request_uri that cannot be used.
                let e = OAuthError::invalid_request("this request_uri was already used").code_as("invalid_request_uri");
                return response::error(app, &req.reply_to(), &e, status).await;
            }
            Err(e) => return response::error(app, &req.reply_to(), &OAuthError::internal("challenge store", e), status).await,
        }
    }
    if let Err(e) = app.stores.sessions.join(app.tenant.id, cookie, &req.client_id).await {
        let err = OAuthError::internal("session store", e);
        return response::error(app, &req.reply_to(), &err, status).await;
    }
    // A SAML sign-in ends in a Response rather than a code (the session joined all the same:
    // the SP is one of the session's applications, for logout).
    if let Some(reply) = &req.saml {
        return crate::endpoints::saml::sso::respond(app, req, reply, session).await;
    }
    let code = match req.response_type.has_code() {
        true => match new_code(app, req, session).await {
            Ok(code) => Some(code),
            Err(e) => return response::error(app, &req.reply_to(), &e, status).await,
        },
        false => None,
    };
    let mut pairs: Vec<(&str, String)> = code.iter().map(|c| ("code", c.clone())).collect();
    if req.response_type.returns_tokens() {
        match front_channel::tokens(app, req, session, code.as_deref()).await {
            Ok(tokens) => pairs.extend(tokens),
            Err(e) => return response::error(app, &req.reply_to(), &e, status).await,
        }
    }
    // OpenID Connect Session Management 1.0 §2: for the RP's check-session iframe.
    if let Some(s) = crate::endpoints::check_session::session_state(app, &req.client_id, &req.redirect_uri, &session.sid) {
        pairs.push(("session_state", s));
    }
    let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    response::to_client(app, &req.reply_to(), &pairs, status).await
}

/// A code for `req`, redeemed at the token endpoint.
async fn new_code(app: &Issuer, req: &AuthorizationRequest, session: &Session) -> Result<String, OAuthError> {
    let code_lifetime = match app.client(&req.client_id) {
        Some(client) => app.profile().code_lifetime(&client, app.config.code_expiry),
        None => app.config.code_expiry,
    };
    let grant = CodeGrant {
        client_id: req.client_id.clone(),
        redirect_uri: req.redirect_uri.clone(),
        user_id: session.user_id.clone(),
        scope: req.scope.clone(),
        nonce: req.nonce.clone(),
        code_challenge: req.code_challenge.clone(),
        auth_time: session.auth_time,
        sid: session.sid.clone(),
        acr: Some(req.reported_acr(&session.acr)),
        claims: req.claims.clone(),
        dpop_jkt: req.dpop_jkt.clone(),
        resources: req.resource.clone(),
        amr: session.amr.clone(),
        org: req.organization.clone(),
    };
    app.stores.codes.issue(app.tenant.id, grant, code_lifetime).await.map_err(|e| OAuthError::internal("code store", e))
}

/// The name pages show for a client. A document client's name is its own claim, so the host
/// its document is on goes with it: "Acme (agents.example)" cannot pass for Acme's own.
pub fn client_display_name(app: &Issuer, client_id: &str) -> String {
    let name = app.client(client_id).and_then(|c: Arc<Client>| c.meta.client_name.clone());
    match (name, document_host(client_id)) {
        (Some(n), Some(host)) => format!("{n} ({host})"),
        (None, Some(host)) => host,
        (Some(n), None) => n,
        (None, None) => client_id.to_string(),
    }
}

/// The host of a document client's URL.
fn document_host(client_id: &str) -> Option<String> {
    if !crate::registry::documents::is_document_id(client_id) {
        return None;
    }
    url::Url::parse(client_id).ok()?.host_str().map(str::to_string)
}

pub fn unavailable(e: impl std::fmt::Display) -> Response {
    tracing::error!(error = %e, "store unavailable");
    pages::error_page(StatusCode::SERVICE_UNAVAILABLE, "err-unavailable")
}

impl OAuthError {
    /// The same error under another registered code (for authorization-endpoint-only codes
    /// such as `login_required` that carry no HTTP status of their own).
    pub fn code_as(mut self, code: &'static str) -> Self {
        self.code = code;
        self
    }
}
