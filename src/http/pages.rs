//! The pages Authrim serves, described as `ui::Page`s (template, values, messages by id) and
//! rendered at the edge in the reader's language (`ui`). Every value is escaped by the
//! templates; messages are ours. Sent with headers that forbid framing and caching, and a CSP
//! that allows only our own style sheet, images and scripts.

use crate::tenant::Issuer;
use crate::ui::{Csp, Msg, Page};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// The body of a browser page's form post (`what`: "authorization request", …): a body that
/// is not a form, over the limit (413) or unreadable is refused with a page like every other
/// refusal there, not with axum's plain-text rejection.
pub fn form_body(
    headers: &axum::http::HeaderMap,
    body: Result<axum::body::Bytes, axum::extract::rejection::BytesRejection>,
    what: &str,
) -> Result<axum::body::Bytes, Response> {
    if !crate::http::params::is_form(headers) {
        return Err(error_page(StatusCode::BAD_REQUEST, Msg::new("err-form-not-post").detail(what)));
    }
    body.map_err(|e| error_page(e.status(), Msg::new("err-form-unreadable").detail(what)))
}

/// "This request cannot be completed", the message, a way back.
pub fn error_page(status: StatusCode, message: impl Into<Msg>) -> Response {
    Page::new(status, "error.html", "error-title").msg("message", message).into_response()
}

/// The page for a form's address opened directly: sign-in starts at an application (or at the
/// account page), never here. 405, since the address takes only the form's POST.
pub fn form_only_page() -> Response {
    Page::new(StatusCode::METHOD_NOT_ALLOWED, "error.html", "error-title").msg("message", "err-form-only").with("account", true).into_response()
}

/// A passkey ceremony a page offers: the options for the browser (JSON) and the sealed state
/// the form posts back.
pub struct PasskeyForm<'a> {
    pub options: &'a str,
    pub state: &'a str,
}

/// The values of `_passkey_form.html`: a form that runs the ceremony (`mode`: get or create)
/// and posts its answer to `action` with `fields`; `label`: the button's message id.
pub fn passkey_form(action: &str, mode: &str, conditional: bool, form: &PasskeyForm<'_>, fields: &[(&str, &str)], label: &str) -> serde_json::Value {
    json!({
        "action": action, "mode": mode, "conditional": conditional, "options": form.options, "state": form.state,
        "fields": fields.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>(), "label": label,
    })
}

pub struct LoginPage<'a> {
    pub challenge: &'a str,
    pub client_name: &'a str,
    /// The organization signed in for: its name and (https) logo.
    pub organization: Option<(&'a str, Option<&'a str>)>,
    pub login_hint: Option<&'a str>,
    /// A message id.
    pub error: Option<&'static str>,
    /// A passwordless sign-in to offer beside the password.
    pub passkey: Option<PasskeyForm<'a>>,
    pub ui_locales: Option<&'a str>,
    /// Upstream identity providers offered as buttons: (id, name).
    pub upstreams: Vec<(&'a str, &'a str)>,
    /// Mail is configured: a "forgot your password?" link.
    pub forgot: bool,
    /// Self-registration is on: a "create an account" link.
    pub signup: bool,
    /// Some organization signs its domains' addresses in with its own provider: the password
    /// may be left empty (the address alone routes the sign-in).
    pub domain_routing: bool,
    /// Why no passkey is offered, when that is a mistake to point out (an IP-address issuer;
    /// not `passkeys = false`, which is the operator's choice): `Off::page_value`.
    pub passkeys_off: Option<serde_json::Value>,
}

pub fn login(p: LoginPage<'_>) -> Response {
    let status = if p.error.is_some() { StatusCode::UNAUTHORIZED } else { StatusCode::OK };
    let mut page = Page::new(status, "login.html", "login-title")
        .with("client", p.client_name)
        .with("organization", p.organization.map(|(name, logo)| serde_json::json!({"name": name, "logo": logo})))
        .with("challenge", p.challenge)
        .with("login_hint", p.login_hint.unwrap_or(""))
        .with("forgot", p.forgot)
        .with("signup", p.signup)
        .with("domain_routing", p.domain_routing)
        .with("passkeys_off", p.passkeys_off)
        .with("upstreams", p.upstreams.iter().map(|(id, name)| serde_json::json!({"id": id, "name": name})).collect::<Vec<_>>())
        .locales(p.ui_locales);
    if let Some(f) = &p.passkey {
        page = page.with("pk", passkey_form("/login/passkey", "get", true, f, &[("challenge", p.challenge)], "login-passkey"));
    }
    if let Some(e) = p.error {
        page = page.msg("error", e);
    }
    page.into_response()
}

/// What the consent page asks about.
pub struct ConsentPage<'a> {
    pub challenge: &'a str,
    pub client_name: &'a str,
    /// A client known only by its metadata document's URL: the host that document is on,
    /// so the user sees who is asking, whatever name the document claims.
    pub client_host: Option<&'a str>,
    pub username: &'a str,
    /// (scope, the words a resource server gave for it, if any).
    pub scopes: Vec<(&'a str, Option<&'a str>)>,
    /// (name, URI) of each resource the access is for.
    pub resources: Vec<(&'a str, &'a str)>,
    pub ui_locales: Option<&'a str>,
    /// What the client registered to be shown (OpenID Connect Dynamic Client Registration
    /// §2: `logo_uri`, `client_uri`, `policy_uri`, `tos_uri`), https URLs only.
    pub logo: Option<&'a str>,
    /// Registered by itself (RFC 7591), not by an operator: its name, logo and links are its
    /// own claims, and the page says so (RFC 7591 §5: they can be used to impersonate).
    pub self_registered: bool,
    pub home: Option<&'a str>,
    pub policy: Option<&'a str>,
    pub terms: Option<&'a str>,
}

pub fn consent<'a>(p: ConsentPage<'a>) -> Response {
    let https = |u: Option<&'a str>| -> Option<&'a str> { u.filter(|u| url::Url::parse(u).is_ok_and(|x| x.scheme() == "https")) };
    let logo = https(p.logo);
    let mut page = Page::new(StatusCode::OK, "consent.html", "consent-title");
    if let Some(origin) = logo.and_then(|l| url::Url::parse(l).ok()).map(|u| u.origin().ascii_serialization()) {
        page.csp.images.push(origin);
    }
    page.with("client", p.client_name)
        .with("logo", logo)
        .with("home", https(p.home))
        .with("policy", https(p.policy))
        .with("terms", https(p.terms))
        .with("client_host", p.client_host)
        .with("self_registered", p.self_registered)
        .with("username", p.username)
        .with("challenge", p.challenge)
        .with("scopes", p.scopes.iter().map(|(s, d)| json!({"name": s, "described": d})).collect::<Vec<_>>())
        .with("resources", p.resources.iter().map(|(n, u)| json!({"name": n, "uri": u})).collect::<Vec<_>>())
        .locales(p.ui_locales)
        .into_response()
}

/// `prompt=select_account` with a session: continue as its user, or sign in as another.
pub fn select_account(challenge: &str, client_name: &str, username: &str, ui_locales: Option<&str>) -> Response {
    Page::new(StatusCode::OK, "select_account.html", "select-title")
        .with("challenge", challenge)
        .with("client", client_name)
        .with("username", username)
        .locales(ui_locales)
        .into_response()
}

/// "Sign out of Authrim?" (RP-Initiated Logout 1.0 §2: asked when the request does not prove
/// that it comes from the signed-in user's application).
pub fn logout_confirm(challenge: &str, username: &str, ui_locales: Option<&str>) -> Response {
    Page::new(StatusCode::OK, "logout_confirm.html", "logout-title")
        .with("challenge", challenge)
        .with("username", username)
        .locales(ui_locales)
        .into_response()
}

/// The second step of a sign-in: a passkey, a code from the user's authenticator app, or a
/// recovery code (`codes`: whether codes are offered at all). `error`: a message id.
pub fn second_factor(
    challenge: &str,
    client_name: &str,
    passkey: Option<PasskeyForm<'_>>,
    codes: bool,
    error: Option<&'static str>,
    status: StatusCode,
    ui_locales: Option<&str>,
) -> Response {
    let mut page = Page::new(status, "second_factor.html", "second-factor-title")
        .with("client", client_name)
        .with("challenge", challenge)
        .with("codes", codes)
        .locales(ui_locales);
    if let Some(f) = &passkey {
        page = page.with("pk", passkey_form("/login/second-factor", "get", false, f, &[("challenge", challenge)], "second-factor-use-passkey"));
    }
    if let Some(e) = error {
        page = page.msg("error", e);
    }
    page.into_response()
}

pub fn signed_out(ui_locales: Option<&str>) -> Response {
    Page::new(StatusCode::OK, "signed_out.html", "signed-out-title").locales(ui_locales).into_response()
}

/// The signed-out page as the answer to what arrives in the logout page's own iframe (a SAML
/// SP's LogoutResponse): that page may frame it, no other.
pub fn signed_out_in_our_frame() -> Response {
    let mut page = Page::new(StatusCode::OK, "signed_out.html", "signed-out-title");
    page.csp.framed_by_self = true;
    page.into_response()
}

/// Front-Channel Logout 1.0 §2: each client's logout page in an invisible iframe; once all have
/// loaded (or after five seconds) the page goes on to `next`. Its inline script is allowed by
/// a per-response nonce, and the page works without it (a link to continue).
pub fn frontchannel_logout(iframes: &[String], also: &[String], next: Option<&str>, ui_locales: Option<&str>) -> Response {
    // The iframes' origins, and the origins `also` they go on to, and nothing else, may be
    // framed here (a frame's every navigation is checked against this page's frame-src).
    let mut origins: Vec<String> =
        iframes.iter().filter_map(|u| url::Url::parse(u).ok()).map(|u| u.origin().ascii_serialization()).chain(also.iter().cloned()).collect();
    origins.sort();
    origins.dedup();
    let mut page = Page::new(StatusCode::OK, "signed_out.html", "signed-out-title")
        .with("frames", iframes)
        .with("next", next)
        .locales(ui_locales);
    page.csp = Csp { nonce: Some(crate::util::random_token()), frames: origins, ..Csp::default() };
    page.into_response()
}

/// OAuth 2.0 Form Post Response Mode §2: a page whose form posts `fields` to `action` (the
/// client's redirect URI), submitted by a script allowed by this response's nonce; without
/// scripts, the user presses Continue. No form-action in its CSP: the form's target is the
/// client's registered redirect URI, and the client may redirect after the POST.
pub fn form_post(action: &str, fields: &[(&str, &str)]) -> Response {
    form_post_page(action, fields).into_response()
}

/// `form_post`, in a page our own pages may frame (and no one else's): SAML Single Logout's
/// HTTP-POST messages, posted from the logout page's iframes.
pub fn form_post_framed_by_self(action: &str, fields: &[(&str, &str)]) -> Response {
    let mut page = form_post_page(action, fields);
    page.csp.framed_by_self = true;
    page.into_response()
}

fn form_post_page(action: &str, fields: &[(&str, &str)]) -> Page {
    let mut page = Page::new(StatusCode::OK, "form_post.html", "form-post-title")
        .with("action", action)
        .with("fields", fields.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>());
    page.csp.nonce = Some(crate::util::random_token());
    page
}

/// The most applications the start page lists.
const MAX_LANDING_APPLICATIONS: usize = 50;

/// `GET /`: what this server is, and where to go: the demo (in demo mode), the operator's
/// applications that can be signed into from here (OpenID Connect Core §4: their
/// `initiate_login_uri`, with `iss`), the account page, the console (when on), the discovery
/// document; and why passkeys are off, when they are. Self-registered clients are not listed:
/// the page would be anyone's to put a link on.
pub fn landing(app: &Issuer) -> Response {
    let mut applications: Vec<(String, String)> = app
        .registry()
        .list_clients()
        .iter()
        .filter(|c| !c.is_dynamic() && !c.meta.first_party)
        .filter_map(|c| {
            let link = crate::registry::clients::login_initiation(&c.meta, app.issuer(), None)?;
            Some((c.meta.client_name.clone().unwrap_or_else(|| c.id().to_string()), link))
        })
        .collect();
    applications.sort();
    applications.truncate(MAX_LANDING_APPLICATIONS);
    let applications: Vec<serde_json::Value> = applications.into_iter().map(|(name, link)| serde_json::json!({"name": name, "link": link})).collect();
    Page::new(StatusCode::OK, "landing.html", "landing-title")
        .with("applications", applications)
        .with("issuer", app.issuer())
        .with("demo", app.config.demo)
        .with("console", app.config.console)
        .with("passkeys_off", app.passkeys_off().map(|o| o.page_value()))
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body(mut res: Response) -> String {
        let page = res.extensions_mut().remove::<Page>().expect("a page");
        let ui = crate::ui::Ui::load(None, "Authrim", "en").unwrap();
        let res = ui.render(res, page, None, "");
        assert_eq!(res.headers()["x-frame-options"], "DENY");
        let b = axum::body::to_bytes(res.into_body(), 1 << 20).await.unwrap();
        String::from_utf8(b.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn login_page_escapes_what_it_echoes() {
        let res = login(LoginPage {
            organization: None,
            upstreams: vec![("corp", "<Corp>")],
            forgot: true,
            signup: true,
            ui_locales: None,
            passkey: None,
            challenge: "c\"><script>",
            client_name: "<b>evil</b>",
            login_hint: Some("\"onfocus=alert(1)"),
            error: None,
            domain_routing: false,
            passkeys_off: None,
        });
        let html = body(res).await;
        assert!(!html.contains("<script>") && !html.contains("<b>evil") && !html.contains("\"onfocus"));
    }
}
