//! The pages' language (ui_locales, then Accept-Language, then the default), the theme
//! directory's overrides, the start page, and the CSP every page carries.

use crate::harness::*;
use serde_json::json;

fn authorize_query(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
    let mut q = vec![("response_type", "code"), ("client_id", "rp"), ("redirect_uri", REDIRECT), ("scope", "openid"), ("state", "s")];
    q.extend_from_slice(extra);
    q
}

async fn get(s: &TestServer, path: &str, accept_language: Option<&str>, query: &[(&str, &str)]) -> (u16, reqwest::header::HeaderMap, String) {
    let mut req = s.browser().client.get(s.url(path)).query(query);
    if let Some(l) = accept_language {
        req = req.header("accept-language", l);
    }
    let res = req.send().await.unwrap();
    let (status, headers) = (res.status().as_u16(), res.headers().clone());
    (status, headers, res.text().await.unwrap())
}

#[tokio::test]
async fn pages_speak_the_language_asked_for() {
    let s = TestServer::start().await;
    s.client("rp", json!({})).await;
    let d: serde_json::Value = reqwest::get(s.url("/.well-known/openid-configuration")).await.unwrap().json().await.unwrap();
    assert_eq!(d["ui_locales_supported"], json!(["en", "ja", "fr"]));

    let (st, h, html) = get(&s, "/authorize", Some("ja-JP,ja;q=0.9,en;q=0.8"), &authorize_query(&[])).await;
    assert_eq!(st, 200);
    assert_eq!(h["content-language"], "ja");
    assert!(html.contains("<html lang=\"ja\">") && html.contains("<h1>サインイン</h1>"), "{html}");
    // ui_locales wins over Accept-Language; the next form (the login error) keeps it.
    let (_, h, html) = get(&s, "/authorize", Some("ja"), &authorize_query(&[("ui_locales", "fr-CA en")])).await;
    assert_eq!(h["content-language"], "fr");
    assert!(html.contains("<h1>Connexion</h1>"), "{html}");
    // Nothing we have: the default.
    let (_, h, html) = get(&s, "/authorize", Some("de, *;q=0.1"), &authorize_query(&[])).await;
    assert_eq!(h["content-language"], "en");
    assert!(html.contains("<h1>Sign in</h1>"), "{html}");
    // An error page explains in the reader's language and links back to the start.
    let (st, h, html) = get(&s, "/authorize", Some("ja"), &[("client_id", "nobody")]).await;
    assert_eq!((st, &h["content-language"]), (400, &reqwest::header::HeaderValue::from_static("ja")));
    assert!(html.contains("このリクエストを完了できません") && html.contains("href=\"/\""), "{html}");
    // Every page: our own style sheet and scripts only.
    let csp = h["content-security-policy"].to_str().unwrap();
    assert!(csp.starts_with("default-src 'none'; script-src 'self'; style-src 'self'"), "{csp}");

    // The start page.
    let (st, h, html) = get(&s, "/", None, &[]).await;
    assert_eq!(st, 200);
    assert_eq!(h["content-type"], "text/html; charset=utf-8");
    assert!(html.contains("href=\"/account\"") && html.contains("/.well-known/openid-configuration"), "{html}");
    let (st, h, css) = get(&s, "/assets/style.css", None, &[]).await;
    assert_eq!((st, h["content-type"].to_str().unwrap()), (200, "text/css; charset=utf-8"));
    assert!(css.contains("prefers-color-scheme: dark"));
    assert_eq!(get(&s, "/assets/nothing.js", None, &[]).await.0, 404);
}

#[tokio::test]
async fn a_theme_directory_replaces_templates_assets_and_messages() {
    let theme = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(theme.path().join("templates")).unwrap();
    std::fs::create_dir_all(theme.path().join("assets")).unwrap();
    std::fs::create_dir_all(theme.path().join("locales")).unwrap();
    std::fs::write(
        theme.path().join("templates/landing.html"),
        "{% extends \"base.html\" %}{% block content %}<h1>Acme ID</h1><p>{{ t(\"landing-intro\") }}</p>{% endblock %}",
    )
    .unwrap();
    std::fs::write(theme.path().join("assets/style.css"), "body { color: rebeccapurple }").unwrap();
    std::fs::write(theme.path().join("assets/acme.svg"), "<svg xmlns=\"http://www.w3.org/2000/svg\"/>").unwrap();
    std::fs::write(theme.path().join("locales/en.ftl"), "landing-intro = Welcome to Acme.").unwrap();
    std::fs::write(theme.path().join("locales/de.ftl"), "login-heading = Anmelden").unwrap();
    let dir = theme.path().to_path_buf();
    let s = TestServer::start_with(move |c| {
        c.theme_dir = Some(dir);
        c.product_name = "Acme ID".into();
    })
    .await;
    s.client("rp", json!({})).await;
    let (_, _, html) = get(&s, "/", None, &[]).await;
    assert!(html.contains("<h1>Acme ID</h1><p>Welcome to Acme.</p>") && html.contains("<title>Welcome · Acme ID</title>"), "{html}");
    // The theme's style sheet is added after the built-in one (`theme_css = "add"`).
    let (_, _, css) = get(&s, "/assets/theme.css", None, &[]).await;
    assert_eq!(css, "body { color: rebeccapurple }");
    let (_, _, built_in) = get(&s, "/assets/style.css", None, &[]).await;
    assert!(built_in.contains("--accent"), "the built-in style sheet stays");
    assert!(html.find("/assets/style.css").unwrap() < html.find("/assets/theme.css").unwrap(), "{html}");
    let (st, h, _) = get(&s, "/assets/acme.svg", None, &[]).await;
    assert_eq!((st, h["content-type"].to_str().unwrap()), (200, "image/svg+xml"));
    // A language added by the theme, with English for what it does not translate.
    let (_, h, html) = get(&s, "/authorize", Some("de-DE"), &authorize_query(&[])).await;
    assert_eq!(h["content-language"], "de");
    assert!(html.contains("<h1>Anmelden</h1>") && html.contains(">Sign in</button>"), "{html}");
    let d: serde_json::Value = reqwest::get(s.url("/.well-known/openid-configuration")).await.unwrap().json().await.unwrap();
    assert_eq!(d["ui_locales_supported"], json!(["en", "ja", "fr", "de"]));
}

#[tokio::test]
async fn a_broken_theme_stops_the_server_at_start() {
    let theme = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(theme.path().join("templates")).unwrap();
    std::fs::write(theme.path().join("templates/login.html"), "{% if %}").unwrap();
    let mut config = test_config(theme.path());
    config.theme_dir = Some(theme.path().to_path_buf());
    let err = authrim::app::App::open(config).await.err().expect("a broken template is refused");
    assert!(err.to_string().contains("login.html"), "{err}");
}

/// An expired login or consent form starts its authorization over (a fresh page for the same
/// request) instead of a dead end; a form from another browser is still refused.
#[tokio::test]
async fn an_expired_form_starts_over() {
    let s = TestServer::start_with(|c| c.challenge_ttl = 1).await;
    s.client("rp", json!({})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let login = Page::from(b.authorize(&authorize_query(&[("login_hint", "alice")])).await).await;
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    let again = b.post("/login", &[("challenge", &login.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    assert_eq!(again.status, 200, "{}", again.html);
    assert!(again.is_login() && again.html.contains("value=\"alice\""), "the same request's login page, afresh: {}", again.html);
    assert!(again.html.contains("open too long"), "saying why: {}", again.html);
    assert_ne!(again.challenge(), login.challenge());
    // The fresh form signs in; its consent form, expired, starts over as a consent page.
    let consent = b.post("/login", &[("challenge", &again.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    assert!(consent.is_consent(), "{}", consent.html);
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    let fresh = b.post("/consent", &[("challenge", &consent.challenge()), ("decision", "allow")]).await;
    assert!(fresh.is_consent(), "{}", fresh.html);
    let done = b.post("/consent", &[("challenge", &fresh.challenge()), ("decision", "allow")]).await;
    assert!(done.redirect_params().contains_key("code"));
    // Another browser posting the expired form: refused as before.
    let other = s.browser();
    let refused = other.post("/login", &[("challenge", &login.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    assert_eq!(refused.status, 400, "{}", refused.html);
}

/// prompt=select_account with a session: an account chooser (continue as its user, or sign
/// in as another), asked once.
#[tokio::test]
async fn select_account_offers_the_session_user_or_another() {
    let s = TestServer::start().await;
    let (_, secret) = s.client("rp", json!({})).await;
    let secret = secret.unwrap();
    let alice = s.user("alice", json!({})).await;
    let bob = s.user("bob", json!({})).await;
    let b = s.browser();
    s.code_for(&b, "rp", "alice", &[]).await;

    let chooser = Page::from(b.authorize(&authorize_query(&[("prompt", "select_account")])).await).await;
    assert_eq!(chooser.status, 200);
    assert!(chooser.html.contains("action=\"/login/select\"") && chooser.html.contains("Continue as alice"), "{}", chooser.html);
    let done = b.post("/login/select", &[("challenge", &chooser.challenge()), ("choice", "current")]).await;
    let code = done.redirect_params()["code"].clone();
    let (st, tokens, _) = s.token(Some(("rp", &secret)), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200);
    assert_eq!(jwt_parts(tokens["id_token"].as_str().unwrap()).1["sub"], alice);

    let chooser = Page::from(b.authorize(&authorize_query(&[("prompt", "select_account")])).await).await;
    let login = b.post("/login/select", &[("challenge", &chooser.challenge()), ("choice", "other")]).await;
    assert!(login.is_login() && !login.html.contains("value=\"alice\""), "{}", login.html);
    let page = b.post("/login", &[("challenge", &login.challenge()), ("username", "bob"), ("password", PASSWORD)]).await;
    let page = if page.is_consent() { b.post("/consent", &[("challenge", &page.challenge()), ("decision", "allow")]).await } else { page };
    let code = page.redirect_params()["code"].clone();
    let (_, tokens, _) = s.token(Some(("rp", &secret)), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(jwt_parts(tokens["id_token"].as_str().unwrap()).1["sub"], bob);

    // Without a session there is nobody to choose: the login page.
    let fresh = s.browser();
    let page = Page::from(fresh.authorize(&authorize_query(&[("prompt", "select_account")])).await).await;
    assert!(page.is_login(), "{}", page.html);
}

/// Issue 30 and 36: a browser route answers a page whatever went wrong: an odd method (PATCH
/// at the sign-in routes, GET of a form's target typed in the address bar), an odd path
/// under the account page or the console; a trailing slash leads to the page without it;
/// API routes keep their JSON errors.
#[tokio::test]
async fn browser_routes_answer_pages_for_odd_methods_and_paths() {
    let s = TestServer::start().await;
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let page = |res: reqwest::Response| async move {
        let (status, ct) = (res.status().as_u16(), res.headers()["content-type"].to_str().unwrap().to_string());
        (status, ct, res.text().await.unwrap())
    };
    for (method, path, status) in [
        ("PATCH", "/login", 405),
        ("GET", "/login", 405),
        ("PATCH", "/consent", 405),
        ("DELETE", "/signup", 405),
        ("PUT", "/", 405),
        ("GET", "/account/%FF", 404),
        ("GET", "/console/nothing-here", 404),
        ("POST", "/account/nothing-here", 404),
    ] {
        let res = http.request(method.parse().unwrap(), s.url(path)).send().await.unwrap();
        let (st, ct, body) = page(res).await;
        assert_eq!(st, status, "{method} {path}");
        assert!(ct.starts_with("text/html") && body.starts_with("<!doctype html>"), "{method} {path}: {ct} {body}");
    }
    let (_, _, body) = page(http.get(s.url("/account/%FF")).header("accept-language", "ja").send().await.unwrap()).await;
    assert!(body.contains("このアドレスにページはありません"), "in the language asked for: {body}");
    for (from, to) in [("/console/", "/console"), ("/account/?x=1", "/account?x=1"), ("/console/users/", "/console/users")] {
        let res = http.get(s.url(from)).send().await.unwrap();
        assert_eq!(res.status(), 308, "{from}");
        assert_eq!(res.headers()["location"], to, "{from}");
    }
    // API routes: JSON errors as before, to programs and browsers alike.
    let navigate = |req: reqwest::RequestBuilder| req.header("sec-fetch-mode", "navigate").header("accept", "text/html,application/xhtml+xml,*/*;q=0.8");
    for (method, path, status, browser) in [
        ("PATCH", "/token", 405, false),
        ("GET", "/nowhere", 404, false),
        ("GET", "/admin", 404, false),
        ("GET", "/token", 405, true),
        ("GET", "/admin/users", 401, true),
        ("GET", "/register/nobody", 401, true),
        ("GET", "/assets/nothing.css", 404, true),
    ] {
        let req = http.request(method.parse().unwrap(), s.url(path));
        let res = if browser { navigate(req) } else { req }.send().await.unwrap();
        assert_eq!(res.status().as_u16(), status, "{method} {path}");
        assert_eq!(res.headers()["content-type"], "application/json", "{method} {path}");
    }
    // A browser's navigation anywhere else gets a page: a mistyped path (older browsers, which
    // send no Fetch Metadata, by their Accept header), and `/admin` leads to the console.
    for req in [navigate(http.get(s.url("/nowhere"))), http.get(s.url("/nowhere/at/all")).header("accept", "text/html")] {
        let (st, ct, body) = page(req.send().await.unwrap()).await;
        assert_eq!(st, 404);
        assert!(ct.starts_with("text/html") && body.contains("There is no page at this address") && body.contains("href=\"/\""), "{ct} {body}");
    }
    for path in ["/admin", "/admin/"] {
        let res = navigate(http.get(s.url(path))).send().await.unwrap();
        assert_eq!(res.status(), 303, "{path}");
        assert_eq!(res.headers()["location"], "/console", "{path}");
    }
    // A form's address opened directly (Enter after a wrong password, a bookmark): where to go.
    for path in ["/login", "/login/second-factor", "/login/passkey", "/login/select"] {
        let (st, ct, body) = page(http.get(s.url(path)).header("accept-language", "fr").send().await.unwrap()).await;
        assert_eq!(st, 405, "{path}");
        assert!(ct.starts_with("text/html") && body.contains("recommencez depuis l'application") && body.contains("href=\"/account\""), "{path}: {body}");
    }
}
