//! Authrim's own pages as clients of itself: the account page and the admin console.
//!
//! Each signs its users in the way any application does: it is a client of this server
//! (built in memory, public, PKCE, no consent), so the login page, second factors, passkeys,
//! throttles and policies need no second path. `login` sends the browser to `/authorize`;
//! `callback` spends the code (checking the PKCE verifier sealed to this browser) and sends
//! the browser to the page's home. What identifies the user afterwards is the ordinary
//! session cookie; every form of these pages carries a token sealed to that cookie (CSRF).

use crate::http::cookies;
use crate::http::pages::error_page;
use crate::http::params::{FormParams, Params};
use crate::stores::{Redemption, Session};
use crate::tenant::Issuer;
use crate::util::{b64, now, random_token, sha256};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// One of Authrim's own pages as a client.
pub struct FirstParty {
    /// Its client id (reserved: no registered client can take it).
    pub client_id: &'static str,
    /// Its name on the sign-in page.
    pub name: &'static str,
    /// Its redirect URI's path.
    pub callback: &'static str,
    /// Where the browser goes once signed in.
    pub home: &'static str,
    /// Sealed-state kinds: the sign-in's PKCE verifier, the forms' CSRF token.
    signin_kind: &'static str,
    csrf_kind: &'static str,
    /// Exempt from `mfa_policy`: the account page is where a first factor is added (a user
    /// who has one is asked for it there as everywhere).
    pub policy_exempt: bool,
    /// The message of the page a form with a wrong or stale CSRF token gets.
    form_expired: &'static str,
}

pub const ACCOUNT: FirstParty = FirstParty {
    client_id: "authrim-account",
    name: "Your account",
    callback: "/account/callback",
    home: "/account",
    signin_kind: "account-signin",
    csrf_kind: "account",
    policy_exempt: true,
    form_expired: "err-account-form-expired",
};

pub const CONSOLE: FirstParty = FirstParty {
    client_id: "authrim-console",
    name: "Admin console",
    callback: "/console/callback",
    home: "/console",
    signin_kind: "console-signin",
    csrf_kind: "console",
    policy_exempt: false,
    form_expired: "err-console-form-expired",
};

/// The device verification page (RFC 8628, `endpoints::device`): it signs the user in as
/// itself, then asks them about the device's request. Held to `mfa_policy`: approving a
/// device is signing in to an application.
pub const DEVICE: FirstParty = FirstParty {
    client_id: "authrim-device",
    name: "Device sign-in",
    callback: "/device/callback",
    home: "/device",
    signin_kind: "device-signin",
    csrf_kind: "device",
    policy_exempt: false,
    form_expired: "err-device-form-expired",
};

/// The page an invitation to an organization links to (`endpoints::organization_invitations`):
/// the invited user signs in (or signs up) as on any application, then accepts. Held to
/// `mfa_policy`: joining an organization is signing in for it.
pub const INVITATION: FirstParty = FirstParty {
    client_id: "authrim-invitation",
    name: "Organization invitation",
    callback: "/organizations/invitation/callback",
    home: "/organizations/invitation",
    signin_kind: "invitation-signin",
    csrf_kind: "invitation",
    policy_exempt: false,
    form_expired: "err-invitation-form-expired",
};

/// Every first-party page. Their client ids start with `authrim-` (`App::client` relies on it).
pub const ALL: &[&FirstParty] = &[&ACCOUNT, &CONSOLE, &DEVICE, &INVITATION];

/// What a sign-in's `state` carries: the PKCE verifier, and for a page that must come back
/// to where it was (the device page, to the user code it was given), that path. A state with
/// nowhere to return to is sealed as the verifier alone, as before there were returns.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
enum SignInState {
    Verifier(String),
    Returning { verifier: String, then: String },
}

/// The first-party page whose client id this is.
pub fn by_client_id(client_id: &str) -> Option<&'static FirstParty> {
    ALL.iter().copied().find(|f| f.client_id == client_id)
}

/// The signed-in user of a first-party page: their session, its cookie, and the user.
pub(crate) struct SignedIn {
    pub cookie: String,
    pub session: Session,
    pub user: std::sync::Arc<crate::registry::User>,
}

impl SignedIn {
    /// Seconds since the user last signed in (entered their password or passkey).
    pub fn age(&self) -> u64 {
        now().saturating_sub(self.session.auth_time)
    }
}

/// The browser's signed-in user, if any.
pub(crate) async fn signed_in(app: &Issuer, headers: &HeaderMap) -> Option<SignedIn> {
    let (cookie, session) = crate::endpoints::authorize::current_session(app, headers).await?;
    let user = app.registry().user(&session.user_id)?;
    Some(SignedIn { cookie, session, user })
}

impl FirstParty {
    /// The client this page signs in as.
    pub fn client(&self, base_url: &str) -> crate::registry::Client {
        crate::registry::clients::internal_client(self.client_id, self.name, format!("{base_url}{}", self.callback))
    }

    /// The CSRF token every form of the page carries, sealed to the session cookie.
    pub(crate) fn csrf(&self, app: &Issuer, me: &SignedIn) -> String {
        app.tenant.sealer.seal(self.csrf_kind, &me.cookie, app.config.challenge_ttl, &me.session.sid)
    }

    /// Whether a form's CSRF token is this page's, for this session.
    pub(crate) fn csrf_ok(&self, app: &Issuer, me: &SignedIn, params: &Params) -> bool {
        let sid = params.get("csrf").and_then(|t| app.tenant.sealer.open::<String>(self.csrf_kind, Some(&me.cookie), t).ok());
        sid.as_deref() == Some(me.session.sid.as_str())
    }

    /// A form post of the page: the signed-in user, if the form's CSRF token is theirs.
    /// Otherwise the response to send (the sign-in, or a page saying the form expired).
    pub(crate) async fn form_user(&self, app: &Issuer, headers: &HeaderMap, params: &Params) -> Result<SignedIn, Response> {
        let Some(me) = signed_in(app, headers).await else { return Err(see_other(app.base(), &self.login_path(false))) };
        if !self.csrf_ok(app, &me, params) {
            return Err(error_page(StatusCode::BAD_REQUEST, self.form_expired));
        }
        Ok(me)
    }

    pub fn login_path(&self, reauth: bool) -> String {
        let base = self.callback.trim_end_matches("/callback");
        match reauth {
            true => format!("{base}/login?reauth=1"),
            false => format!("{base}/login"),
        }
    }

    /// `GET …/login[?reauth=1]`: to `/authorize` as this client, with PKCE; the verifier
    /// travels in `state`, sealed to this browser. `acr_values`: a level asked for (not
    /// essential: a user who cannot give it still signs in, and the page decides).
    pub fn login(&self, app: &Issuer, headers: &HeaderMap, query: Option<&str>, acr_values: Option<&str>) -> Response {
        let reauth = Params::parse(query.unwrap_or_default().as_bytes()).ok().is_some_and(|p| p.get("reauth").is_some());
        self.login_then(app, headers, reauth, acr_values, None)
    }

    /// `login`, returning afterwards to `then` (a path under this page's home) rather than
    /// to the home itself.
    pub fn login_then(&self, app: &Issuer, headers: &HeaderMap, reauth: bool, acr_values: Option<&str>, then: Option<String>) -> Response {
        let existing = cookies::get(headers, cookies::BROWSER).map(str::to_string);
        let browser = existing.clone().unwrap_or_else(random_token);
        let verifier = random_token();
        let carried = match then {
            Some(then) => SignInState::Returning { verifier: verifier.clone(), then },
            None => SignInState::Verifier(verifier.clone()),
        };
        let state = app.tenant.sealer.seal(self.signin_kind, &browser, app.config.challenge_ttl, &carried);
        let q = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        let mut location = format!(
            "/authorize?response_type=code&client_id={}&redirect_uri={}&scope=openid&code_challenge={}&code_challenge_method=S256&state={}",
            self.client_id,
            q(&app.endpoint(self.callback)),
            b64(&sha256(verifier.as_bytes())),
            q(&state)
        );
        if let Some(acr) = acr_values {
            location.push_str(&format!("&acr_values={}", q(acr)));
        }
        if reauth {
            location.push_str("&prompt=login");
        }
        let mut res = see_other(app.base(), &location);
        if existing.is_none() {
            cookies::set(&mut res, app.base(), cookies::BROWSER, &browser, None, app.config.secure_cookies());
        }
        res
    }

    /// `GET …/callback`: the code is spent here (nothing else could redeem it: the verifier
    /// never left this server), and must be this browser's signed-in user's. `not_done`: the
    /// page that says the sign-in did not complete.
    pub async fn callback(&self, app: &Issuer, headers: &HeaderMap, query: Option<&str>, not_done: fn() -> Response) -> Response {
        let params = Params::parse(query.unwrap_or_default().as_bytes()).unwrap_or_default();
        // The state lives as long as a sign-in form restarted after its expiry (a page left
        // open, then signed in): its verifier still binds the code to this browser.
        let grace = crate::endpoints::interaction::RESTART_GRACE;
        let Some(state) = params.get("state").and_then(|s| app.tenant.sealer.open_expired::<SignInState>(self.signin_kind, cookies::get(headers, cookies::BROWSER), s, grace).ok()) else {
            return not_done();
        };
        let (verifier, then) = match state {
            SignInState::Verifier(v) => (v, None),
            // Sealed by us, but checked all the same: only ever a path of this page.
            SignInState::Returning { verifier, then } => (verifier, Some(then).filter(|t| t.starts_with(self.home) && !t.starts_with("//"))),
        };
        let (Some(code), Some(me)) = (params.get("code"), signed_in(app, headers).await) else { return not_done() };
        let grant = match app.stores.codes.consume(app.tenant.id, code, Vec::new()).await {
            Ok(Redemption::Fresh(g)) => g,
            Ok(_) => return not_done(),
            Err(e) => return crate::endpoints::authorize::unavailable(e),
        };
        let pkce = grant.code_challenge.as_deref().is_some_and(|c| crate::util::ct_eq(c.as_bytes(), b64(&sha256(verifier.as_bytes())).as_bytes()));
        if grant.client_id != self.client_id || !pkce || grant.user_id != me.user.id {
            return not_done();
        }
        see_other(app.base(), then.as_deref().unwrap_or(self.home))
    }
}

/// 303 to `path` (root-relative, e.g. `/account?done=x`) on this server, under `base` (the
/// request's issuer path, `Issuer::base`): every redirect to one of our own pages goes through
/// here, so that Authrim works under a path prefix (the guard test in tests/integration/
/// base_path.rs refuses a root-absolute Location built elsewhere).
pub(crate) fn see_other(base: &str, path: &str) -> Response {
    debug_assert!(path.starts_with('/') && !path.starts_with("//"), "{path}");
    see_other_url(&format!("{base}{path}"))
}

/// 303 to an absolute URL elsewhere (a client's, an upstream provider's).
pub(crate) fn see_other_url(location: &str) -> Response {
    let mut res = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(location) {
        res.headers_mut().insert(header::LOCATION, v);
    }
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

/// The form body of a first-party page's post, or the page that refuses it.
pub(crate) fn form(form: Result<FormParams, crate::error::OAuthError>) -> Result<Params, Response> {
    form.map(|FormParams(p)| p).map_err(|_| error_page(StatusCode::BAD_REQUEST, "err-account-form-unreadable"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn first_party_ids_share_the_prefix_app_client_looks_for() {
        for f in super::ALL {
            assert!(f.client_id.starts_with("authrim-"), "{}", f.client_id);
            assert!(f.callback.ends_with("/callback") && f.login_path(false).ends_with("/login"), "{}", f.callback);
        }
    }
}
