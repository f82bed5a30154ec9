//! Demo mode (`authrim serve --demo`): a demo client and user, a banner that says how to sign
//! in, and the demo client itself, running inside the server: `/demo` (start), `/demo/start`
//! (to `/authorize` with state, nonce and PKCE, as a real client), `/demo/callback` (the code
//! redeemed at the token endpoint, the ID token checked, userinfo asked, everything shown),
//! and a sign-out back to `/demo` (RP-initiated logout with `id_token_hint`).
//!
//! The demo client is confidential (`client_secret_basic`). Its secret is derived from the
//! key-encryption key, not drawn at random: stored only as a hash like every client secret,
//! yet the same on every start (the banner prints it, and `curl` commands keep working) and
//! known to the callback, which authenticates at the token endpoint with it like any client.

use crate::app::App;
use crate::audit::AuditEvent;
use crate::http::cookies;
use crate::http::params::{FormParams, Params};
use crate::registry::{clients, users, ClientInput, UserInput};
use crate::tenant::Issuer;
use crate::ui::{Msg, Page};
use crate::util::{b64, ct_eq, random_token, sha256};
use axum::extract::RawQuery;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

pub const DEMO_CLIENT: &str = "demo-client";
pub const DEMO_USER: &str = "demo";
pub const DEMO_PASSWORD: &str = "demo-password";
/// The pages of the demo client.
pub const PAGE: &str = "/demo";
pub const START: &str = "/demo/start";
pub const CALLBACK: &str = "/demo/callback";
/// The cookie that holds a pending sign-in's state, nonce and PKCE verifier, sealed.
const COOKIE: &str = "authrim_demo";
/// The sealer's purpose for that cookie.
const SEAL_KIND: &str = "demo client request";
const SCOPE: &str = "openid profile email";
/// `state` of the logout request, so that `/demo` can say the user signed out.
const SIGNED_OUT: &str = "signed-out";

/// The demo client's secret: the same on every start with the same key-encryption key.
pub fn client_secret(app: &App) -> String {
    b64(&app.vault().derive("authrim demo client secret v1"))
}

/// What `prepare` found, for the banner (and the tests).
#[derive(Debug)]
pub struct Prepared {
    pub secret: String,
    /// The demo user still has the password `DEMO_PASSWORD` (and is not disabled).
    pub default_password: bool,
}

/// Create (or bring up to date) the demo client and user, and print how to sign in.
pub async fn prepare(app: &Issuer) -> anyhow::Result<Prepared> {
    let secret = client_secret(app);
    let input = ClientInput {
        client_id: Some(DEMO_CLIENT.into()),
        client_name: Some("Authrim demo client".into()),
        redirect_uris: Some(vec![app.endpoint(CALLBACK)]),
        post_logout_redirect_uris: Some(vec![app.endpoint(PAGE)]),
        ..Default::default()
    };
    let event = |name: &str| AuditEvent::new(name).client(DEMO_CLIENT).detail(json!({"by": "demo"}));
    let client = match app.registry().client(DEMO_CLIENT) {
        Some(existing) => {
            let (updated, _) = clients::update_client(&existing, input, app.vault()).map_err(anyhow::Error::msg)?;
            if updated.meta != existing.meta {
                app.audit(event("client_updated")).await;
            }
            updated
        }
        None => {
            let (created, _) = clients::new_client(input, app.vault()).map_err(anyhow::Error::msg)?;
            app.audit(event("client_created")).await;
            created
        }
    };
    // A secret rotated since (or drawn at random by an earlier version) becomes the derived one.
    let client = match client.check_secret(&secret) {
        true => client,
        false => {
            app.audit(event("client_secret_rotated")).await;
            clients::with_secret(&client, &secret).map_err(anyhow::Error::msg)?
        }
    };
    app.registry().save_client(client).await?;
    let default_password = match app.registry().user_by_login(DEMO_USER) {
        Some(user) => {
            // Argon2: off the async threads.
            tokio::task::spawn_blocking(move || users::verify_password(Some(&*user), DEMO_PASSWORD)).await?
        }
        None => {
            let mut claims = serde_json::Map::new();
            claims.insert("name".into(), "Demo User".into());
            claims.insert("email".into(), "demo@example.com".into());
            claims.insert("email_verified".into(), true.into());
            let user = users::new_user(UserInput {
                username: Some(DEMO_USER.into()),
                password: Some(DEMO_PASSWORD.into()),
                claims,
                disabled: None,
                roles: None,
            })
            .map_err(anyhow::Error::msg)?;
            let id = user.id.clone();
            app.registry().save_user(user).await?;
            app.audit(AuditEvent::new("user_created").user(&id).detail(json!({"by": "demo"}))).await;
            true
        }
    };
    eprintln!("{}", banner(app, &secret, default_password));
    Ok(Prepared { secret, default_password })
}

/// What the terminal shows on a `--demo` start. The password only while it is the password.
fn banner(app: &Issuer, secret: &str, default_password: bool) -> String {
    let user = match default_password {
        true => format!("{DEMO_USER} / {DEMO_PASSWORD}"),
        false => format!("{DEMO_USER} (its password was changed from {DEMO_PASSWORD}, or the account is disabled)"),
    };
    let passkeys = match app.passkeys_off() {
        None => String::new(),
        Some(crate::factors::passkey::Off::Disabled) => "\n  passkeys:      off (passkeys = false)".into(),
        Some(crate::factors::passkey::Off::IpAddress { suggest, .. }) => {
            format!("\n  passkeys:      off: the issuer is an IP address; start with AUTHRIM_ISSUER={suggest} to have them")
        }
    };
    format!(
        "\n  Authrim demo mode\n  ─────────────────\n  start page:    {}\n  demo client:   {}\n  client_id:     {DEMO_CLIENT}\n  client_secret: {secret}\n  user:          {user}{passkeys}\n",
        app.endpoint("/"),
        app.endpoint(PAGE),
    )
}

/// A pending sign-in of the demo client, sealed into its cookie.
#[derive(Serialize, Deserialize)]
struct Pending {
    state: String,
    nonce: String,
    verifier: String,
}

/// `GET /demo`: what the demo is, and a button to sign in.
pub async fn page(app: Issuer, RawQuery(query): RawQuery) -> Response {
    let signed_out = Params::parse(query.unwrap_or_default().as_bytes()).ok().is_some_and(|q| q.get("state") == Some(SIGNED_OUT));
    Page::new(StatusCode::OK, "demo.html", "demo-title")
        .with("client_id", DEMO_CLIENT)
        .with("callback", app.endpoint(CALLBACK))
        .with("signed_out", signed_out)
        .into_response()
}

/// `GET /demo/start`: to the authorization endpoint, as a client would send the browser:
/// a fresh state, nonce and PKCE verifier (S256), kept in a sealed cookie for the callback.
pub async fn start(app: Issuer) -> Response {
    let pending = Pending { state: random_token(), nonce: random_token(), verifier: random_token() };
    let challenge = b64(&sha256(pending.verifier.as_bytes()));
    let query: String = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("response_type", "code")
        .append_pair("client_id", DEMO_CLIENT)
        .append_pair("redirect_uri", &app.endpoint(CALLBACK))
        .append_pair("scope", SCOPE)
        .append_pair("state", &pending.state)
        .append_pair("nonce", &pending.nonce)
        .append_pair("code_challenge", &challenge)
        .append_pair("code_challenge_method", "S256")
        .finish();
    let sealed = app.tenant.sealer.seal(SEAL_KIND, "", app.config.challenge_ttl, &pending);
    let mut res = crate::endpoints::first_party::see_other(app.base(), &format!("/authorize?{query}"));
    cookies::set(&mut res, app.base(), COOKIE, &sealed, Some(app.config.challenge_ttl), app.config.secure_cookies());
    res
}

/// `GET /demo/callback`: the demo client's redirect URI. Checks `state` against its cookie,
/// redeems the code at the token endpoint (the endpoint's own handler, called in-process with
/// the client's Basic credentials and the PKCE verifier), checks the ID token (signature,
/// issuer, audience, nonce), asks userinfo with the access token, and shows all three.
pub async fn callback(app: Issuer, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    let bad = |msg: Msg| with_cookie_cleared(&app, super::pages::error_page(StatusCode::BAD_REQUEST, msg));
    let Ok(q) = Params::parse(query.unwrap_or_default().as_bytes()) else {
        return bad(Msg::new("err-demo-query"));
    };
    let pending = cookies::get(&headers, COOKIE).and_then(|c| app.tenant.sealer.open::<Pending>(SEAL_KIND, Some(""), c).ok());
    let Some(pending) = pending else {
        return bad(Msg::new("err-demo-no-request"));
    };
    if !q.get("state").is_some_and(|s| ct_eq(s.as_bytes(), pending.state.as_bytes())) {
        return bad(Msg::new("err-demo-state"));
    }
    if let Some(err) = q.get("error") {
        let detail = match q.get("error_description") {
            Some(d) => format!("{err}: {d}"),
            None => err.to_string(),
        };
        return bad(Msg::new("err-demo-failed").detail(detail));
    }
    let Some(code) = q.get("code") else {
        return bad(Msg::new("err-demo-no-code"));
    };
    let tokens = match redeem(&app, code, &pending.verifier).await {
        Ok(t) => t,
        Err(detail) => return bad(Msg::new("err-demo-token").detail(detail)),
    };
    let Some(id_token) = tokens.get("id_token").and_then(Value::as_str) else {
        return bad(Msg::new("err-demo-token").detail("the answer has no id_token"));
    };
    let id_claims = match check_id_token(&app, id_token, &pending.nonce) {
        Ok(c) => c,
        Err(detail) => return bad(Msg::new("err-demo-token").detail(detail)),
    };
    let access_token = tokens.get("access_token").and_then(Value::as_str).unwrap_or_default();
    // The access token is the resource server's to read; shown here to see what it carries.
    let access_claims = crate::tokens::verify_our_jwt(&app, access_token).unwrap_or_default();
    let userinfo = match ask_userinfo(&app, access_token).await {
        Ok(v) => v,
        Err(detail) => return bad(Msg::new("err-demo-userinfo").detail(detail)),
    };
    let summary: Vec<(String, String)> = ["token_type", "expires_in", "scope"]
        .iter()
        .filter_map(|k| tokens.get(*k).map(|v| (k.to_string(), plain(v))))
        .collect();
    let page = Page::new(StatusCode::OK, "demo_callback.html", "demo-signed-in-title")
        .with("summary", summary)
        .with("id_claims", rows(&id_claims))
        .with("access_claims", rows(&access_claims))
        .with("userinfo", serde_json::to_string_pretty(&userinfo).unwrap_or_default())
        .with("id_token_hint", id_token)
        .with("post_logout_redirect_uri", app.endpoint(PAGE))
        .with("logout_state", SIGNED_OUT)
        .with("client_id", DEMO_CLIENT);
    with_cookie_cleared(&app, page.into_response())
}

/// The sign-in's cookie is good for one callback.
fn with_cookie_cleared(app: &Issuer, mut res: Response) -> Response {
    cookies::set(&mut res, app.base(), COOKIE, "", Some(0), app.config.secure_cookies());
    res
}

/// The token endpoint's answer to this client's `authorization_code` request.
async fn redeem(app: &Issuer, code: &str, verifier: &str) -> Result<Map<String, Value>, String> {
    let body: String = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("grant_type", "authorization_code")
        .append_pair("code", code)
        .append_pair("redirect_uri", &app.endpoint(CALLBACK))
        .append_pair("code_verifier", verifier)
        .finish();
    let params = Params::parse(body.as_bytes()).map_err(|e| e.description.to_string())?;
    let mut headers = HeaderMap::new();
    // RFC 6749 §2.3.1: each part form-urlencoded, then Basic.
    let basic = b64_std(format!("{DEMO_CLIENT}:{}", form_encode(&client_secret(app))).as_bytes());
    headers.insert(header::AUTHORIZATION, HeaderValue::from_str(&format!("Basic {basic}")).map_err(|e| e.to_string())?);
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/x-www-form-urlencoded"));
    let res = crate::endpoints::token::token(app.clone(), crate::http::client_cert::PresentedCertificate(None), headers, Ok(FormParams(params))).await;
    json_answer(res).await
}

/// Userinfo's answer to the access token.
async fn ask_userinfo(app: &Issuer, access_token: &str) -> Result<Map<String, Value>, String> {
    let mut headers = HeaderMap::new();
    headers.insert(header::AUTHORIZATION, HeaderValue::from_str(&format!("Bearer {access_token}")).map_err(|e| e.to_string())?);
    let res = crate::endpoints::userinfo::userinfo(app.clone(), crate::http::client_cert::PresentedCertificate(None), Method::GET, headers, Ok(crate::http::params::Body(Default::default()))).await;
    json_answer(res).await
}

/// A JSON object answered with 200, or what went wrong (the OAuth error's words).
async fn json_answer(res: Response) -> Result<Map<String, Value>, String> {
    let status = res.status();
    let body = axum::body::to_bytes(res.into_body(), 1 << 20).await.map_err(|e| e.to_string())?;
    let value: Value = serde_json::from_slice(&body).map_err(|_| format!("HTTP {status}, not JSON"))?;
    match (status.is_success(), value) {
        (true, Value::Object(map)) => Ok(map),
        (_, v) => Err(format!("HTTP {}: {} {}", status.as_u16(), plain(&v["error"]), plain(&v["error_description"])).trim().to_string()),
    }
}

/// OpenID Connect Core §3.1.3.7, as a client checks it: signed by this issuer's keys, `iss`,
/// unexpired, for this client, with the nonce of this sign-in.
fn check_id_token(app: &Issuer, id_token: &str, nonce: &str) -> Result<Map<String, Value>, String> {
    let claims = crate::tokens::verify_our_jwt(app, id_token).map_err(|_| "ID token: not signed by this issuer, or expired".to_string())?;
    let for_us = match &claims["aud"] {
        Value::String(a) => a == DEMO_CLIENT,
        Value::Array(list) => list.iter().any(|a| a == DEMO_CLIENT),
        _ => false,
    };
    if !for_us {
        return Err("ID token: aud is not demo-client".into());
    }
    if !claims.get("nonce").and_then(Value::as_str).is_some_and(|n| ct_eq(n.as_bytes(), nonce.as_bytes())) {
        return Err("ID token: the nonce is not this sign-in's".into());
    }
    Ok(claims)
}

/// A claims table: name, value as text, and for the time claims the time it names (UTC).
fn rows(claims: &Map<String, Value>) -> Vec<Value> {
    claims
        .iter()
        .map(|(name, value)| {
            let time = match (name.as_str(), value.as_u64()) {
                ("iat" | "exp" | "nbf" | "auth_time" | "updated_at", Some(t)) => Some(iso_time(t)),
                _ => None,
            };
            json!({ "name": name, "value": plain(value), "time": time })
        })
        .collect()
}

/// A value as a reader wants it: a string without its quotes, anything else as JSON.
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Seconds since the epoch as `YYYY-MM-DDTHH:MM:SSZ`.
fn iso_time(t: u64) -> String {
    let day = super::account_pages::date(t.max(1));
    let s = t % 86_400;
    format!("{day}T{:02}:{:02}:{:02}Z", s / 3600, s % 3600 / 60, s % 60)
}

fn form_encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// Standard base64 with padding (HTTP Basic), unlike `util::b64` (base64url).
fn b64_std(data: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_utc() {
        assert_eq!(iso_time(86_400), "1970-01-02T00:00:00Z");
        assert_eq!(iso_time(1_700_000_000), "2023-11-14T22:13:20Z");
    }

    #[test]
    fn values_read_plainly() {
        assert_eq!(plain(&json!("alice")), "alice");
        assert_eq!(plain(&json!(["a", "b"])), r#"["a","b"]"#);
        assert_eq!(plain(&json!(true)), "true");
    }
}
