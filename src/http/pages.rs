//! Server-rendered pages: login, consent, errors. Plain HTML forms, no JavaScript, every
//! interpolated value escaped. Sent with headers that forbid framing and caching.

use crate::util::html_escape as e;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:26rem;margin:4rem auto;padding:0 1rem;color:#222}\
h1{font-size:1.4rem}label{display:block;margin:.8rem 0 .2rem}input[type=text],input[type=password]{width:100%;padding:.5rem;box-sizing:border-box}\
button{margin-top:1rem;padding:.5rem 1.2rem}.error{color:#a00;background:#fee;padding:.5rem;border-radius:4px}\
ul{padding-left:1.2rem}.muted{color:#666;font-size:.9rem}";

/// The policy of every page but the front-channel logout page.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'";
/// Pages that offer passkeys load one script, `/assets/passkey.js`, and nothing else.
const CSP_PASSKEY: &str = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'";
/// The passkey script (`GET /assets/passkey.js`).
pub const PASSKEY_JS: &str = include_str!("assets/passkey.js");

pub fn html(status: StatusCode, title: &str, body: &str) -> Response {
    html_with_csp(status, title, body, CSP)
}

/// A page whose body may use the passkey script (loaded at its end).
pub fn html_with_passkeys(status: StatusCode, title: &str, body: &str) -> Response {
    html_with_csp(status, title, &format!("{body}<script src=\"/assets/passkey.js\" defer></script>"), CSP_PASSKEY)
}

/// A passkey ceremony a page offers: the options for the browser (JSON) and the sealed state
/// the form posts back.
pub struct PasskeyForm<'a> {
    pub options: &'a str,
    pub state: &'a str,
}

/// The form that runs a passkey ceremony (`mode`: get or create) and posts its answer to
/// `action` with `fields`; hidden until the script shows it.
/// `extra`: more of the form (HTML) before its button.
pub fn passkey_form(action: &str, mode: &str, conditional: bool, form: &PasskeyForm<'_>, fields: &[(&str, &str)], extra: &str, label: &str) -> String {
    let hidden: String = fields.iter().map(|(k, v)| format!("<input type=\"hidden\" name=\"{}\" value=\"{}\">", e(k), e(v))).collect();
    format!(
        "<form method=\"post\" action=\"{action}\" class=\"passkey\" data-passkey=\"{mode}\"{cond} data-options=\"{options}\" hidden>{hidden}\
         <input type=\"hidden\" name=\"passkey_state\" value=\"{state}\"><input type=\"hidden\" name=\"credential\" value=\"\">\
         <p class=\"error passkey-error\" role=\"alert\" tabindex=\"-1\" hidden>The passkey was not used. Try again, or use another way.</p>\
         {extra}<button type=\"button\">{label}</button></form>",
        action = e(action),
        mode = e(mode),
        cond = if conditional { " data-conditional" } else { "" },
        options = e(form.options),
        state = e(form.state),
        label = e(label),
    )
}

fn html_with_csp(status: StatusCode, title: &str, body: &str, csp: &str) -> Response {
    let page = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{} · Authrim</title><style>{STYLE}</style></head><body>{body}</body></html>",
        e(title)
    );
    let mut res = (status, page).into_response();
    let h = res.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert("x-frame-options", HeaderValue::from_static("DENY"));
    if let Ok(v) = HeaderValue::from_str(csp) {
        h.insert("content-security-policy", v);
    }
    h.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    res
}

/// The body of a browser page's form post (`what`: "authorization request", …): a body that
/// is not a form, over the limit (413) or unreadable is refused with a page like every other
/// refusal there, not with axum's plain-text rejection.
pub fn form_body(
    headers: &axum::http::HeaderMap,
    body: Result<axum::body::Bytes, axum::extract::rejection::BytesRejection>,
    what: &str,
) -> Result<axum::body::Bytes, Response> {
    if !crate::http::params::is_form(headers) {
        return Err(error_page(StatusCode::BAD_REQUEST, &format!("The {what} must be a form post.")));
    }
    body.map_err(|e| error_page(e.status(), &format!("The {what} is too large or could not be read.")))
}

pub fn error_page(status: StatusCode, message: &str) -> Response {
    html(
        status,
        "Error",
        &format!(
            "<h1>This request cannot be completed</h1><p class=\"error\">{}</p>\
             <p class=\"muted\">Return to the application you came from and try again.</p>",
            e(message)
        ),
    )
}

pub struct LoginPage<'a> {
    pub challenge: &'a str,
    pub client_name: &'a str,
    pub login_hint: Option<&'a str>,
    pub error: Option<&'a str>,
    /// A passwordless sign-in to offer beside the password.
    pub passkey: Option<PasskeyForm<'a>>,
}

pub fn login(p: LoginPage<'_>) -> Response {
    let error = p.error.map(|m| format!("<p class=\"error\" role=\"alert\">{}</p>", e(m))).unwrap_or_default();
    let status = if p.error.is_some() { StatusCode::UNAUTHORIZED } else { StatusCode::OK };
    let passkey = p
        .passkey
        .as_ref()
        .map(|f| passkey_form("/login/passkey", "get", true, f, &[("challenge", p.challenge)], "", "Sign in with a passkey"))
        .unwrap_or_default();
    let body = format!(
        "<h1>Sign in</h1><p class=\"muted\">to continue to {client}</p>{error}\
         <form method=\"post\" action=\"/login\">\
         <input type=\"hidden\" name=\"challenge\" value=\"{challenge}\">\
         <label for=\"username\">Username or e-mail</label>\
         <input type=\"text\" id=\"username\" name=\"username\" value=\"{hint}\" autocomplete=\"username{webauthn}\" required autofocus>\
         <label for=\"password\">Password</label>\
         <input type=\"password\" id=\"password\" name=\"password\" autocomplete=\"current-password\" required>\
         <button type=\"submit\">Sign in</button></form>{passkey}",
        client = e(p.client_name),
        challenge = e(p.challenge),
        hint = e(p.login_hint.unwrap_or("")),
        webauthn = if p.passkey.is_some() { " webauthn" } else { "" },
    );
    match p.passkey {
        Some(_) => html_with_passkeys(status, "Sign in", &body),
        None => html(status, "Sign in", &body),
    }
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
}

pub fn consent(p: ConsentPage<'_>) -> Response {
    let items: String =
        p.scopes.iter().map(|(s, described)| format!("<li>{}</li>", e(described.unwrap_or_else(|| scope_description(s))))).collect();
    let host = p
        .client_host
        .map(|h| format!("<p class=\"muted\">This application is not registered here; it is identified by its address on <strong>{}</strong>.</p>", e(h)))
        .unwrap_or_default();
    let resources = match p.resources.is_empty() {
        true => String::new(),
        false => format!(
            "<p>With access to:</p><ul>{}</ul>",
            p.resources.iter().map(|(name, uri)| format!("<li>{} <span class=\"muted\">({})</span></li>", e(name), e(uri))).collect::<String>()
        ),
    };
    let (challenge, username, client_name) = (p.challenge, p.username, p.client_name);
    html(
        StatusCode::OK,
        "Allow access",
        &format!(
            "<h1>Allow {client} access?</h1><p class=\"muted\">Signed in as {user}</p>{host}\
             <p>{client} asks to:</p><ul>{items}</ul>{resources}\
             <form method=\"post\" action=\"/consent\">\
             <input type=\"hidden\" name=\"challenge\" value=\"{challenge}\">\
             <button type=\"submit\" name=\"decision\" value=\"allow\">Allow</button> \
             <button type=\"submit\" name=\"decision\" value=\"deny\">Deny</button></form>",
            client = e(client_name),
            user = e(username),
            challenge = e(challenge),
        ),
    )
}

/// "Sign out of Authrim?" (RP-Initiated Logout 1.0 §2: asked when the request does not prove
/// that it comes from the signed-in user's application).
pub fn logout_confirm(challenge: &str, username: &str) -> Response {
    html(
        StatusCode::OK,
        "Sign out",
        &format!(
            "<h1>Sign out of Authrim?</h1><p class=\"muted\">Signed in as {user}</p>\
             <form method=\"post\" action=\"/logout/confirm\">\
             <input type=\"hidden\" name=\"challenge\" value=\"{challenge}\">\
             <button type=\"submit\">Sign out</button></form>\
             <p class=\"muted\">If you did not ask to sign out, close this page: you stay signed in.</p>",
            user = e(username),
            challenge = e(challenge),
        ),
    )
}

/// The second step of a sign-in: a passkey, a code from the user's authenticator app, or a
/// recovery code (`codes`: whether codes are offered at all).
pub fn second_factor(challenge: &str, client_name: &str, passkey: Option<PasskeyForm<'_>>, codes: bool, error: Option<&str>, status: StatusCode) -> Response {
    let error = error.map(|m| format!("<p class=\"error\" role=\"alert\">{}</p>", e(m))).unwrap_or_default();
    let passkey_html = passkey
        .as_ref()
        .map(|f| passkey_form("/login/second-factor", "get", false, f, &[("challenge", challenge)], "", "Use a passkey"))
        .unwrap_or_default();
    let code_form = match codes {
        true => format!(
            "<form method=\"post\" action=\"/login/second-factor\">\
             <input type=\"hidden\" name=\"challenge\" value=\"{challenge}\">\
             <label for=\"code\">Code from your authenticator app, or a recovery code</label>\
             <input type=\"text\" id=\"code\" name=\"code\" autocomplete=\"one-time-code\" inputmode=\"text\" required autofocus>\
             <button type=\"submit\">Verify</button></form>",
            challenge = e(challenge)
        ),
        false => String::new(),
    };
    let body = format!("<h1>Verify it is you</h1><p class=\"muted\">to continue to {client}</p>{error}{passkey_html}{code_form}", client = e(client_name));
    match passkey {
        Some(_) => html_with_passkeys(status, "Verify it is you", &body),
        None => html(status, "Verify it is you", &body),
    }
}

pub fn signed_out() -> Response {
    html(StatusCode::OK, "Signed out", "<h1>You are signed out</h1><p class=\"muted\">You can close this page.</p>")
}

/// Front-Channel Logout 1.0 §2: each client's logout page in an invisible iframe; once all have
/// loaded (or after five seconds) the page goes on to `next`. The script is the only one
/// Authrim serves: inline, allowed by a per-response nonce, and the page works without it
/// (a link to continue).
pub fn frontchannel_logout(iframes: &[String], next: Option<&str>) -> Response {
    let nonce = crate::util::random_token();
    let frames: String = iframes.iter().map(|u| format!("<iframe src=\"{}\" hidden title=\"sign-out\"></iframe>", e(u))).collect();
    let (link, script) = match next {
        Some(next) => (
            format!("<p><a id=\"next\" href=\"{}\">Continue</a></p>", e(next)),
            format!(
                "<script nonce=\"{nonce}\">(function(){{var f=document.querySelectorAll('iframe'),n=f.length,done=false;\
                 function go(){{if(!done){{done=true;location.replace(document.getElementById('next').href);}}}}\
                 f.forEach(function(x){{x.addEventListener('load',function(){{if(--n<=0)go();}});}});setTimeout(go,5000);}})();</script>"
            ),
        ),
        None => (String::new(), String::new()),
    };
    // The iframes' origins, and nothing else, may be framed here.
    let mut origins: Vec<String> =
        iframes.iter().filter_map(|u| url::Url::parse(u).ok()).map(|u| u.origin().ascii_serialization()).collect();
    origins.sort();
    origins.dedup();
    let csp = format!(
        "default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-{nonce}'; frame-src {}; frame-ancestors 'none'; base-uri 'none'",
        origins.join(" ")
    );
    html_with_csp(
        StatusCode::OK,
        "Signing out",
        &format!("<h1>You are signed out</h1><p class=\"muted\">Signing you out of your applications…</p>{frames}{link}{script}"),
        &csp,
    )
}

/// OAuth 2.0 Form Post Response Mode §2: a page whose form posts `fields` to `action` (the
/// client's redirect URI), submitted by a script allowed by this response's nonce; without
/// scripts, the user presses Continue.
pub fn form_post(action: &str, fields: &[(&str, &str)]) -> Response {
    let nonce = crate::util::random_token();
    let inputs: String =
        fields.iter().map(|(k, v)| format!("<input type=\"hidden\" name=\"{}\" value=\"{}\">", e(k), e(v))).collect();
    let body = format!(
        "<h1>Returning to the application</h1><form method=\"post\" action=\"{}\">{inputs}\
         <noscript><button type=\"submit\">Continue</button></noscript></form>\
         <script nonce=\"{nonce}\">document.forms[0].submit();</script>",
        e(action)
    );
    // No form-action: the form's target is the client's registered redirect URI, and the
    // client may redirect after the POST to wherever it likes.
    let csp = format!("default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-{nonce}'; frame-ancestors 'none'; base-uri 'none'");
    html_with_csp(StatusCode::OK, "Returning to the application", &body, &csp)
}

fn scope_description(scope: &str) -> &str {
    match scope {
        "openid" => "know who you are",
        "profile" => "see your name and profile",
        "email" => "see your e-mail address",
        "address" => "see your postal address",
        "phone" => "see your phone number",
        "offline_access" => "keep access while you are away",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body(res: Response) -> String {
        let b = axum::body::to_bytes(res.into_body(), 1 << 20).await.unwrap();
        String::from_utf8(b.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn login_page_escapes_what_it_echoes() {
        let res = login(LoginPage {
            passkey: None,
            challenge: "c\"><script>",
            client_name: "<b>evil</b>",
            login_hint: Some("\"onfocus=alert(1)"),
            error: None,
        });
        assert_eq!(res.headers()["x-frame-options"], "DENY");
        let html = body(res).await;
        assert!(!html.contains("<script>") && !html.contains("<b>evil") && !html.contains("\"onfocus"));
    }
}
