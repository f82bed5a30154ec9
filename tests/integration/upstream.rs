//! Upstream identity providers: a second Authrim instance as the upstream OpenID provider
//! (on 127.0.0.2, so that the browser keeps two cookie jars' worth of cookies apart), our
//! client `rp` at the downstream one. The whole chain: the login page's button and
//! `idp_hint`, the upstream's login and consent, the callback, just-in-time provisioning,
//! linking by verified e-mail (and refusing without it), explicit linking from the account
//! page, the same user next time; and a forged upstream (served here) whose ID tokens are
//! wrong in each way that matters: refused. A wrong `iss` in the response: refused.

use crate::client_jwt::Signer;
use crate::harness::*;
use authrim::config::upstreams::IdentityProvider;
use axum::extract::{Query, State};
use axum::routing::{get, post};
use reqwest::Method;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// GET `url` and follow redirects among our two servers (any 127.0.0.x), as a browser does;
/// stops at the client's redirect URI.
pub(crate) async fn follow(browser: &Browser, url: &str) -> Page {
    let mut url = url.to_string();
    for _ in 0..12 {
        let page = Page::from(browser.client.get(&url).send().await.unwrap()).await;
        match page.location.clone() {
            Some(loc) if (300..400).contains(&page.status) && !loc.starts_with(REDIRECT) => {
                url = if loc.starts_with('/') { format!("{}{loc}", origin(&url)) } else { loc };
            }
            _ => return page,
        }
    }
    panic!("too many redirects");
}

fn origin(url: &str) -> String {
    let u = url::Url::parse(url).unwrap();
    format!("{}://{}", u.scheme(), u.host_str().unwrap()) + &u.port().map(|p| format!(":{p}")).unwrap_or_default()
}

/// POST a form at `base` and follow.
pub(crate) async fn submit(browser: &Browser, base: &str, path: &str, form: &[(&str, &str)]) -> Page {
    let page = Page::from(browser.client.post(format!("{base}{path}")).form(form).send().await.unwrap()).await;
    match page.location.clone() {
        Some(loc) if page.status == 303 && !loc.starts_with(REDIRECT) => follow(browser, &if loc.starts_with('/') { format!("{base}{loc}") } else { loc }).await,
        _ => page,
    }
}

fn field(page: &Page, name: &str) -> String {
    crate::passkeys::field(page, name)
}

/// The upstream: an Authrim on 127.0.0.2, with a client for the downstream whose callback
/// is `callback`, and a user `ulla`.
pub(crate) async fn upstream(callback: &str) -> (TestServer, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    let port = config.listen.port();
    config.listen = format!("127.0.0.2:{port}").parse().unwrap();
    config.issuer = format!("http://127.0.0.2:{port}");
    let s = TestServer::start_in(dir, config).await;
    let back = callback.replace("/login/upstream/callback", "/logout/upstream");
    let (_, secret) = s.client("downstream", json!({"redirect_uris": [callback], "post_logout_redirect_uris": [back]})).await;
    s.user("ulla", json!({"email": "ulla@example.com", "email_verified": true, "name": "Ulla Upstream"})).await;
    (s, secret.unwrap())
}

fn provider(issuer: &str, secret: &str, extra: &str) -> IdentityProvider {
    toml::from_str(&format!("id = \"up\"\nname = \"Upstream Co\"\nissuer = \"{issuer}\"\nclient_id = \"downstream\"\nclient_secret = \"{secret}\"\n{extra}")).unwrap()
}

/// The downstream (ours), configured with the upstream, and its client `rp`.
async fn downstream(make: impl FnOnce(&str) -> Vec<IdentityProvider>) -> TestServer {
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    config.identity_providers = make(&format!("{}/login/upstream/callback", config.issuer));
    let s = TestServer::start_in(dir, config).await;
    s.client("rp", json!({})).await;
    s
}

fn authorize_url(s: &TestServer, extra: &str) -> String {
    s.url(&format!("/authorize?response_type=code&client_id=rp&redirect_uri={}&scope=openid%20email%20profile&state=st&nonce=n{extra}", url::form_urlencoded::byte_serialize(REDIRECT.as_bytes()).collect::<String>()))
}

/// The upstream and the downstream (started in `dir` with `config`, the upstream as its
/// provider `up`), with the downstream's client `rp`'s secret.
async fn chained(dir: tempfile::TempDir, mut config: authrim::config::Config) -> (TestServer, TestServer, String) {
    // The downstream's callback is known once its port is: chosen first.
    let callback = format!("{}/login/upstream/callback", config.issuer);
    let (up, secret) = upstream(&callback).await;
    config.identity_providers = vec![provider(&up.issuer(), &secret, "")];
    let down = TestServer::start_in(dir, config).await;
    let (_, rp_secret) = down.client("rp", json!({})).await;
    (up, down, rp_secret.unwrap())
}

/// Through the downstream's login page to the upstream, signed in there as `ulla`, back to
/// the downstream: the page that follows (consent for `rp`, or a refusal).
async fn via_upstream(browser: &Browser, down: &TestServer, up: &TestServer) -> Page {
    let login = follow(browser, &authorize_url(down, "")).await;
    assert!(login.html.contains("Sign in with Upstream Co"), "{}", login.html);
    let at_upstream = submit(browser, &down.url(""), "/login/upstream", &[("challenge", &login.challenge()), ("idp", "up")]).await;
    upstream_login(browser, up, at_upstream).await
}

/// At the upstream's login page: sign in as `ulla`, consent; then wherever it leads.
pub(crate) async fn upstream_login(browser: &Browser, up: &TestServer, page: Page) -> Page {
    assert!(page.is_login(), "the upstream's login page: {}", page.html);
    let mut page = submit(browser, &up.url(""), "/login", &[("challenge", &page.challenge()), ("username", "ulla"), ("password", PASSWORD)]).await;
    if page.is_consent() && page.html.contains("downstream") {
        page = submit(browser, &up.url(""), "/consent", &[("challenge", &page.challenge()), ("decision", "allow")]).await;
    }
    page
}

/// From the downstream's consent page (or a redirect): the ID token `rp` gets.
async fn id_token(browser: &Browser, down: &TestServer, rp_secret: &str, mut page: Page) -> Value {
    if page.is_consent() {
        page = submit(browser, &down.url(""), "/consent", &[("challenge", &page.challenge()), ("decision", "allow")]).await;
    }
    let code = page.redirect_params()["code"].clone();
    let (st, tokens, _) = down.token(Some(("rp", rp_secret)), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200, "{tokens}");
    jwt_parts(tokens["id_token"].as_str().unwrap()).1
}

#[tokio::test]
async fn a_first_sign_in_makes_a_user_and_the_next_finds_them() {
    first_sign_in(false).await;
}

#[tokio::test]
async fn a_first_sign_in_makes_a_user_and_the_next_finds_them_on_postgres() {
    first_sign_in(true).await;
}

async fn first_sign_in(postgres: bool) {
    {
        let dir = tempfile::tempdir().unwrap();
        let mut config = test_config(dir.path());
        if postgres {
            config.database_url = crate::pg_cluster::fresh_database().await;
            config.key_encryption_key = Some("dGVzdHMtc2hhcmUtb25lLWtleS1lbmNyeXB0aW9uLWs".into());
        }
        let (up, down, rp_secret) = chained(dir, config).await;

        let browser = down.browser();
        let page = via_upstream(&browser, &down, &up).await;
        let claims = id_token(&browser, &down, &rp_secret, page).await;
        assert_eq!(claims["amr"], json!(["fed"]), "{claims}");
        let user = down.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).user(claims["sub"].as_str().unwrap()).expect("provisioned");
        assert_eq!((user.username.as_str(), user.email()), ("ulla", Some("ulla@example.com")));
        assert_eq!(user.claims["name"], "Ulla Upstream");
        let (_, audit) = down.admin(Method::GET, "/admin/audit?event=user_created", None).await;
        assert_eq!(audit["events"][0]["detail"], json!({"by": "upstream", "provider": "up"}), "{audit}");

        // Next time, in another browser, through idp_hint (no login page here): the same user.
        let other = down.browser();
        let at_upstream = follow(&other, &authorize_url(&down, "&idp_hint=up")).await;
        let page = upstream_login(&other, &up, at_upstream).await;
        let again = id_token(&other, &down, &rp_secret, page).await;
        assert_eq!(again["sub"], claims["sub"]);
        assert_eq!(down.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).list_users().len(), 1);

        // The account page lists the link.
        let account = follow(&other, &down.url("/account")).await;
        assert!(account.html.contains("Linked accounts") && account.html.contains("ulla@example.com"), "{}", account.html);

        // A tampered state, and a wrong iss, are refused.
        let login = follow(&browser, &authorize_url(&down, "&prompt=login")).await;
        let to_upstream = Page::from(browser.client.post(down.url("/login/upstream")).form(&[("challenge", login.challenge()), ("idp", "up".into())]).send().await.unwrap()).await;
        // prompt=login was passed on: the upstream asks for the password although signed in;
        // its answer is the redirect to our callback (consent there was given before).
        let up_login = follow(&browser, to_upstream.location.as_deref().unwrap()).await;
        assert!(up_login.is_login(), "{}", up_login.html);
        let form = [("challenge", up_login.challenge()), ("username", "ulla".into()), ("password", PASSWORD.into())];
        let back = Page::from(browser.client.post(up.url("/login")).form(&form).send().await.unwrap()).await;
        let callback_url = back.location.clone().unwrap_or_else(|| panic!("{} {}", back.status, back.html));
        let cb = url::Url::parse(&callback_url).unwrap();
        assert!(cb.path() == "/login/upstream/callback", "{callback_url}");
        let params: HashMap<String, String> = cb.query_pairs().into_owned().collect();
        assert_eq!(params.get("iss").map(String::as_str), Some(up.issuer().as_str()), "the upstream says who it is (RFC 9207)");
        let with = |k: &str, v: &str| {
            let mut p = params.clone();
            p.insert(k.into(), v.into());
            format!("{}?{}", down.url("/login/upstream/callback"), url::form_urlencoded::Serializer::new(String::new()).extend_pairs(&p).finish())
        };
        let wrong_iss = follow(&browser, &with("iss", "http://evil.example")).await;
        assert_eq!(wrong_iss.status, 401, "{}", wrong_iss.html);
        assert!(wrong_iss.html.contains("could not be trusted") && wrong_iss.html.contains("RFC 9207"), "{}", wrong_iss.html);
        let mut no_iss = params.clone();
        no_iss.remove("iss");
        let no_iss = follow(&browser, &format!("{}?{}", down.url("/login/upstream/callback"), url::form_urlencoded::Serializer::new(String::new()).extend_pairs(&no_iss).finish())).await;
        assert_eq!(no_iss.status, 401, "the upstream advertises iss, so one without is refused: {}", no_iss.html);
        let state = params["state"].clone();
        let forged = follow(&browser, &with("state", &format!("{}x", &state[..state.len() - 1]))).await;
        assert_eq!(forged.status, 400, "{}", forged.html);
        // In another browser (its cookie is not the one the state is bound to): refused.
        let elsewhere = follow(&down.browser(), &callback_url).await;
        assert_eq!(elsewhere.status, 400, "{}", elsewhere.html);
        // Cancelled at the upstream: the application is told (access_denied), nobody signed in.
        let mut cancelled = params.clone();
        cancelled.remove("code");
        cancelled.insert("error".into(), "access_denied".into());
        let told = follow(&browser, &format!("{}?{}", down.url("/login/upstream/callback"), url::form_urlencoded::Serializer::new(String::new()).extend_pairs(&cancelled).finish())).await;
        assert_eq!(told.redirect_params()["error"], "access_denied", "{:?}", told.location);

        // prompt=login reaches the upstream: signed in there, it still asks for the password.
        let again = follow(&browser, &authorize_url(&down, "&idp_hint=up&prompt=login")).await;
        assert!(again.is_login() && again.html.contains("Client downstream"), "the upstream asks again: {} {}", again.status, again.html);
        let page = upstream_login(&browser, &up, again).await;
        id_token(&browser, &down, &rp_secret, page).await;

        // Our logout ends the upstream session too (RP-Initiated Logout there), then comes back.
        let ulla = up.admin(Method::GET, "/admin/users", None).await.1["users"][0]["id"].as_str().unwrap().to_string();
        let path = format!("/admin/users/{ulla}/sessions");
        let before = up.admin(Method::GET, &path, None).await.1["sessions"].as_array().unwrap().len();
        let confirm = follow(&browser, &down.url("/logout")).await;
        let signed_out = submit(&browser, &down.url(""), "/logout/confirm", &[("challenge", &confirm.challenge())]).await;
        assert_eq!(signed_out.status, 200, "{}", signed_out.html);
        assert!(signed_out.html.contains("signed out"), "back here, signed out: {}", signed_out.html);
        assert_eq!(up.admin(Method::GET, &path, None).await.1["sessions"].as_array().unwrap().len(), before - 1, "this browser's upstream session ended (the other browser's stays)");
        let up_again = follow(&browser, &authorize_url(&down, "&idp_hint=up")).await;
        assert!(up_again.is_login() && up_again.html.contains("Client downstream"), "signed out upstream too: {}", up_again.html);
    }
}

#[tokio::test]
async fn an_existing_user_is_linked_by_verified_email_only_when_allowed() {
    for link_by_email in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let mut config = test_config(dir.path());
        let (up, secret) = upstream(&format!("{}/login/upstream/callback", config.issuer)).await;
        config.identity_providers = vec![provider(&up.issuer(), &secret, &format!("link_by_email = {link_by_email}"))];
        let down = TestServer::start_in(dir, config).await;
        let (_, rp_secret) = down.client("rp", json!({})).await;
        let local = down.user("ulla.local", json!({"email": "ULLA@example.com", "email_verified": true})).await;

        let browser = down.browser();
        let page = via_upstream(&browser, &down, &up).await;
        if link_by_email {
            let claims = id_token(&browser, &down, &rp_secret.unwrap(), page).await;
            assert_eq!(claims["sub"], local.as_str(), "linked to the user with that e-mail");
        } else {
            assert_eq!(page.status, 409, "no second account with her e-mail, no silent link: {}", page.html);
            assert!(page.html.contains("link your Upstream Co account from your account page"), "{}", page.html);
            assert_eq!(down.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).list_users().len(), 1);
        }
    }
}

#[tokio::test]
async fn a_signed_in_user_links_an_identity_from_the_account_page() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    let (up, secret) = upstream(&format!("{}/login/upstream/callback", config.issuer)).await;
    config.identity_providers = vec![provider(&up.issuer(), &secret, "provision = false")];
    let down = TestServer::start_in(dir, config).await;
    let (_, rp_secret) = down.client("rp", json!({})).await;
    let dora = down.user("dora", json!({})).await;

    // Without a link, and with provisioning off: told to link first.
    let refused = via_upstream(&down.browser(), &down, &up).await;
    assert_eq!(refused.status, 403, "{}", refused.html);

    let browser = down.browser();
    let login = follow(&browser, &down.url("/account")).await;
    let account = submit(&browser, &down.url(""), "/login", &[("challenge", &login.challenge()), ("username", "dora"), ("password", PASSWORD)]).await;
    assert!(account.html.contains("Link your Upstream Co account"), "{}", account.html);
    let forged = submit(&browser, &down.url(""), "/account/links/new", &[("csrf", "forged"), ("idp", "up")]).await;
    assert_eq!(forged.status, 400, "{}", forged.html);
    let at_upstream = submit(&browser, &down.url(""), "/account/links/new", &[("csrf", &field(&account, "csrf")), ("idp", "up")]).await;
    let linked = upstream_login(&browser, &up, at_upstream).await;
    assert!(linked.html.contains("The account was linked"), "{}", linked.html);

    // Now the upstream signs in as dora.
    let other = down.browser();
    let page = via_upstream(&other, &down, &up).await;
    let claims = id_token(&other, &down, &rp_secret.unwrap(), page).await;
    assert_eq!(claims["sub"], dora.as_str());

    // Removed: back to "no account".
    let account = follow(&browser, &down.url("/account")).await;
    let removed = submit(&browser, &down.url(""), "/account/links/remove", &[("csrf", &field(&account, "csrf")), ("idp", "up")]).await;
    assert!(removed.html.contains("The link was removed"), "{}", removed.html);
    assert_eq!(via_upstream(&down.browser(), &down, &up).await.status, 403);
}

// --- a forged upstream ---------------------------------------------------------------------

/// What the forged provider's token endpoint does to the ID token it returns.
#[derive(Clone, Copy, Debug)]
enum Forgery {
    Honest,
    OtherKey,
    WrongAudience,
    WrongIssuer,
    WrongNonce,
    Expired,
    Unsigned,
}

#[derive(Clone)]
struct Forger {
    issuer: String,
    key: Arc<Signer>,
    other: Arc<Signer>,
    mode: Arc<Mutex<Forgery>>,
    /// code -> nonce of the authorization request it answered.
    nonces: Arc<Mutex<HashMap<String, String>>>,
}

async fn forged_upstream() -> Forger {
    let listener = tokio::net::TcpListener::bind("127.0.0.3:0").await.unwrap();
    let issuer = format!("http://127.0.0.3:{}", listener.local_addr().unwrap().port());
    let f = Forger {
        issuer: issuer.clone(),
        key: Arc::new(Signer::es256("good")),
        other: Arc::new(Signer::es256("good")),
        mode: Arc::new(Mutex::new(Forgery::Honest)),
        nonces: Arc::default(),
    };
    let app = axum::Router::new()
        .route("/.well-known/openid-configuration", get(|State(f): State<Forger>| async move {
            axum::Json(json!({"issuer": f.issuer, "authorization_endpoint": format!("{}/authorize", f.issuer), "token_endpoint": format!("{}/token", f.issuer), "jwks_uri": format!("{}/jwks", f.issuer)}))
        }))
        .route("/userinfo", get(|headers: axum::http::HeaderMap| async move {
            // A GitHub-like user: a numeric id, a login, no OpenID claims.
            match headers.get("authorization").and_then(|v| v.to_str().ok()) {
                Some("Bearer at") => Ok(axum::Json(json!({"id": 4242, "login": "octo", "email": "octo@example.com", "name": "Octo Cat"}))),
                _ => Err(axum::http::StatusCode::UNAUTHORIZED),
            }
        }))
        .route("/jwks", get(|State(f): State<Forger>| async move { axum::Json(json!({"keys": [f.key.jwk]})) }))
        .route("/authorize", get(|State(f): State<Forger>, Query(q): Query<HashMap<String, String>>| async move {
            let code = authrim::util::random_token();
            f.nonces.lock().unwrap().insert(code.clone(), q.get("nonce").cloned().unwrap_or_default());
            let to = format!("{}?code={code}&state={}", q["redirect_uri"], url::form_urlencoded::byte_serialize(q["state"].as_bytes()).collect::<String>());
            axum::response::Redirect::to(&to)
        }))
        .route("/token", post(|State(f): State<Forger>, body: String| async move {
            let form: HashMap<String, String> = url::form_urlencoded::parse(body.as_bytes()).into_owned().collect();
            let nonce = f.nonces.lock().unwrap().get(&form["code"]).cloned().unwrap_or_default();
            let now = authrim::util::now();
            let mut claims = json!({"iss": f.issuer, "aud": "downstream", "sub": "forged-1", "nonce": nonce, "iat": now, "exp": now + 300, "email": "f@example.com", "email_verified": true});
            let mode = *f.mode.lock().unwrap();
            match mode {
                Forgery::WrongAudience => claims["aud"] = "someone-else".into(),
                Forgery::WrongIssuer => claims["iss"] = "http://evil.example".into(),
                Forgery::WrongNonce => claims["nonce"] = "not-yours".into(),
                Forgery::Expired => claims["exp"] = (now - 3600).into(),
                _ => {}
            }
            let id_token = match mode {
                Forgery::OtherKey => f.other.sign(&claims),
                Forgery::Unsigned => {
                    let b = |v: &Value| authrim::util::b64(v.to_string().as_bytes());
                    format!("{}.{}.", b(&json!({"alg": "none"})), b(&claims))
                }
                _ => f.key.sign(&claims),
            };
            axum::Json(json!({"access_token": "at", "token_type": "Bearer", "id_token": id_token}))
        }))
        .with_state(f.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    f
}

#[tokio::test]
async fn id_tokens_that_are_wrong_in_any_way_sign_nobody_in() {
    let forger = forged_upstream().await;
    let down = downstream(|_| vec![provider(&forger.issuer, "s", "")]).await;
    let (_, rp_secret) = s_client_secret(&down).await;
    for mode in [Forgery::OtherKey, Forgery::WrongAudience, Forgery::WrongIssuer, Forgery::WrongNonce, Forgery::Expired, Forgery::Unsigned, Forgery::Honest] {
        *forger.mode.lock().unwrap() = mode;
        let browser = down.browser();
        let page = follow(&browser, &authorize_url(&down, "&idp_hint=up")).await;
        match mode {
            Forgery::Honest => {
                let claims = id_token(&browser, &down, &rp_secret, page).await;
                assert_eq!(down.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).user(claims["sub"].as_str().unwrap()).unwrap().username, "f@example.com");
            }
            _ => {
                assert_eq!(page.status, 401, "{mode:?}: {}", page.html);
                assert!(page.html.contains("could not be trusted"), "{mode:?}: {}", page.html);
                assert!(down.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).list_users().is_empty(), "{mode:?}: nobody was made");
            }
        }
    }
    let (_, audit) = down.admin(Method::GET, "/admin/audit?event=login_failure", None).await;
    assert_eq!(audit["events"].as_array().unwrap().len(), 6, "{audit}");
}

/// The `rp` client's secret (registered by `downstream`): a new one.
async fn s_client_secret(s: &TestServer) -> (u16, String) {
    let (st, v) = s.admin(Method::POST, "/admin/clients/rp/secret", None).await;
    (st, v["client_secret"].as_str().unwrap().to_string())
}

/// A plain OAuth 2.0 provider (GitHub-style: no ID token, a user-info URL and a numeric id):
/// configured by its endpoints and a claim mapping, nothing else.
#[tokio::test]
async fn a_plain_oauth2_provider_signs_in_through_its_user_info() {
    let forger = forged_upstream().await;
    let i = &forger.issuer;
    let down = downstream(|_| {
        vec![toml::from_str(&format!(
            "id = \"gh\"\nname = \"GitHub\"\nkind = \"oauth2\"\nclient_id = \"downstream\"\nclient_secret = \"s\"\nscopes = \"read:user\"\n\
             authorization_endpoint = \"{i}/authorize\"\ntoken_endpoint = \"{i}/token\"\nuserinfo_endpoint = \"{i}/userinfo\"\n\
             subject_claim = \"id\"\n[claims]\npreferred_username = \"login\"\n"
        ))
        .unwrap()]
    })
    .await;
    let (_, rp_secret) = s_client_secret(&down).await;
    let browser = down.browser();
    let page = follow(&browser, &authorize_url(&down, "&idp_hint=gh")).await;
    let claims = id_token(&browser, &down, &rp_secret, page).await;
    let user = down.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).user(claims["sub"].as_str().unwrap()).unwrap();
    assert_eq!((user.username.as_str(), user.claims["name"].as_str()), ("octo", Some("Octo Cat")));
    // The e-mail came without a verification: not marked verified.
    assert_ne!(user.claims.get("email_verified"), Some(&json!(true)));
    let linked = authrim::identity::links::of_user(&down.server.app.db, user.tenant, &user.id).await.unwrap();
    assert_eq!((linked[0].provider.as_str(), linked[0].subject.as_str()), ("gh", "4242"));
}

/// `private_key_jwt` towards the provider: no shared secret, an assertion signed with our key
/// (a PEM file), which the provider checks against the key set we publish for it. A provider
/// that has another key for us refuses, and nobody signs in.
#[tokio::test]
async fn private_key_jwt_signs_in_with_an_assertion_instead_of_a_secret() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    let callback = format!("{}/login/upstream/callback", config.issuer);
    let pem = |pkcs8: &[u8]| {
        use base64::Engine;
        let b64 = base64::engine::general_purpose::STANDARD.encode(pkcs8);
        let lines: Vec<&str> = b64.as_bytes().chunks(64).map(|c| std::str::from_utf8(c).unwrap()).collect();
        format!("-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n", lines.join("\n"))
    };
    let (_, ours) = authrim::keys::SigningKey::generate_for("ES256").unwrap();
    let key_file = dir.path().join("upstream.pem");
    std::fs::write(&key_file, pem(&ours)).unwrap();
    let (other, _) = authrim::keys::SigningKey::generate_for("ES256").unwrap();

    // The upstream: `downstream` registered with our key set's URL, `stale` with another key.
    let up_dir = tempfile::tempdir().unwrap();
    let mut up_config = test_config(up_dir.path());
    let port = up_config.listen.port();
    up_config.listen = format!("127.0.0.2:{port}").parse().unwrap();
    up_config.issuer = format!("http://127.0.0.2:{port}");
    up_config.fetch_allow_private_addresses = true;
    let up = TestServer::start_in(up_dir, up_config).await;
    let jwks_uri = format!("{}/login/upstream/up/jwks", config.issuer);
    up.client("downstream", json!({"redirect_uris": [callback], "token_endpoint_auth_method": "private_key_jwt", "jwks_uri": jwks_uri})).await;
    up.client("stale", json!({"redirect_uris": [callback], "token_endpoint_auth_method": "private_key_jwt", "jwks": {"keys": [other.public_jwk]}})).await;
    up.user("ulla", json!({"email": "ulla@example.com", "email_verified": true})).await;

    let configured = |id: &str, name: &str, client: &str| -> IdentityProvider {
        toml::from_str(&format!(
            "id = \"{id}\"\nname = \"{name}\"\nissuer = \"{}\"\nclient_id = \"{client}\"\ntoken_endpoint_auth_method = \"private_key_jwt\"\nprivate_key_file = \"{}\"",
            up.issuer(),
            key_file.display()
        ))
        .unwrap()
    };
    config.identity_providers = vec![configured("up", "Upstream Co", "downstream"), configured("up2", "Upstream Two", "stale")];
    let down = TestServer::start_in(dir, config).await;
    let (_, rp_secret) = down.client("rp", json!({})).await;

    // The published key set: our key's public half, nothing private.
    let set: Value = reqwest::get(&jwks_uri).await.unwrap().json().await.unwrap();
    let ours = authrim::keys::SigningKey::from_pkcs8_any(None, &ours).unwrap();
    assert_eq!(set, json!({"keys": [ours.public_jwk]}), "{set}");
    assert!(set["keys"][0].get("d").is_none());
    let none = reqwest::get(down.url("/login/upstream/up3/jwks")).await.unwrap();
    assert_eq!(none.status(), 404);
    assert_eq!(none.json::<Value>().await.unwrap()["error"], "not_found");

    // Signed in through the assertion.
    let browser = down.browser();
    let page = via_upstream(&browser, &down, &up).await;
    let claims = id_token(&browser, &down, &rp_secret.unwrap(), page).await;
    assert_eq!(claims["amr"], json!(["fed"]), "{claims}");

    // A provider holding another key for us: its token endpoint refuses; nobody signs in.
    let other_browser = down.browser();
    let at_upstream = follow(&other_browser, &authorize_url(&down, "&idp_hint=up2")).await;
    let mut refused = upstream_login(&other_browser, &up, at_upstream).await;
    if refused.is_consent() {
        refused = submit(&other_browser, &up.url(""), "/consent", &[("challenge", &refused.challenge()), ("decision", "allow")]).await;
    }
    assert_eq!(refused.status, 401, "{}", refused.html);
    assert!(refused.html.contains("invalid_client"), "{}", refused.html);
    assert_eq!(down.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).list_users().len(), 1);
}

/// `allowed_domains`: only users whose e-mail, verified at the provider, is in one of the
/// domains (compared without case) get in; the others are refused before anyone is made.
#[tokio::test]
async fn only_allowed_domains_get_in_and_only_with_a_verified_email() {
    for (domains, verified, admitted) in [("[\"corp.example\"]", true, false), ("[\"corp.example\", \"EXAMPLE.com\"]", true, true), ("[\"example.com\"]", false, false)] {
        let dir = tempfile::tempdir().unwrap();
        let mut config = test_config(dir.path());
        let (up, secret) = upstream(&format!("{}/login/upstream/callback", config.issuer)).await;
        if !verified {
            let ulla = up.admin(Method::GET, "/admin/users", None).await.1["users"][0]["id"].as_str().unwrap().to_string();
            let (st, _) = up.admin(Method::PATCH, &format!("/admin/users/{ulla}"), Some(json!({"claims": {"email_verified": false}}))).await;
            assert_eq!(st, 200);
        }
        config.identity_providers = vec![provider(&up.issuer(), &secret, &format!("allowed_domains = {domains}"))];
        let down = TestServer::start_in(dir, config).await;
        let (_, rp_secret) = down.client("rp", json!({})).await;
        let browser = down.browser();
        let page = via_upstream(&browser, &down, &up).await;
        if admitted {
            let claims = id_token(&browser, &down, &rp_secret.unwrap(), page).await;
            assert_eq!(claims["amr"], json!(["fed"]), "{claims}");
        } else {
            assert_eq!(page.status, 403, "{domains} verified={verified}: {}", page.html);
            assert!(page.html.contains("not one this service lets in"), "{}", page.html);
            assert!(down.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).list_users().is_empty(), "nobody made");
            let (_, audit) = down.admin(Method::GET, "/admin/audit?event=login_failure", None).await;
            assert_eq!(audit["events"][0]["detail"]["reason"], "domain", "{audit}");
        }
    }
}

/// An organization with its own identity provider (issue 31): `organization=` goes straight
/// to that provider; the user it signs in, at a verified address of one of the organization's
/// domains, joins the organization then (just in time) and the tokens name it; a
/// `login_hint` at that domain finds the provider too (home-realm discovery).
#[tokio::test]
async fn an_organizations_own_provider_signs_its_members_in_and_they_join_by_domain() {
    let dir = tempfile::tempdir().unwrap();
    let config = test_config(dir.path());
    let (up, down, rp_secret) = chained(dir, config).await;
    let body = json!({"slug": "acme", "display_name": "Acme", "upstream": "up", "domains": ["example.com"]});
    let (status, org) = down.admin(Method::POST, "/admin/organizations", Some(body)).await;
    assert_eq!(status, 201, "{org}");

    let browser = down.browser();
    let at_upstream = follow(&browser, &authorize_url(&down, "&organization=acme")).await;
    let page = upstream_login(&browser, &up, at_upstream).await;
    let claims = id_token(&browser, &down, &rp_secret, page).await;
    assert_eq!(claims["org_id"], org["id"], "{claims}");
    assert_eq!(claims["org_name"], "acme");
    let (_, members) = down.admin(Method::GET, "/admin/organizations/acme/members", None).await;
    assert_eq!(members["members"][0]["username"], "ulla", "{members}");
    let (_, audit) = down.admin(Method::GET, "/admin/audit?event=organization_member_added", None).await;
    assert_eq!(audit["events"][0]["detail"]["by"], "domain", "{audit}");

    // Home-realm discovery: an address at the organization's domain goes to its provider.
    let other = down.browser();
    let page = follow(&other, &authorize_url(&down, "&login_hint=someone%40Example.com")).await;
    // (The upstream's login page offers no upstream of its own; ours does.)
    assert!(page.is_login() && !page.html.contains("Sign in with Upstream Co"), "at the upstream's login page: {}", page.html);
    // Any other address gets our own login page.
    let page = follow(&down.browser(), &authorize_url(&down, "&login_hint=someone%40elsewhere.example")).await;
    assert!(page.html.contains("Sign in with Upstream Co"), "{}", page.html);

    // Typed on the login form: the password may be left empty (the page says so), and an
    // address at the domain goes to the provider, with or without one, whoever it names.
    assert!(page.html.contains("id=\"password-note\"") && !page.html.contains("current-password\" required"), "{}", page.html);
    for (typed, password) in [("ulla@EXAMPLE.com", ""), ("nobody@example.com", "anything")] {
        let browser = down.browser();
        let login = follow(&browser, &authorize_url(&down, "")).await;
        let at = submit(&browser, &down.url(""), "/login", &[("challenge", &login.challenge()), ("username", typed), ("password", password)]).await;
        assert!(at.is_login() && !at.html.contains("Sign in with Upstream Co"), "{typed}: at the upstream's login page: {}", at.html);
        assert!(at.html.contains(&format!("value=\"{typed}\"")), "{typed}: the address goes on as the login hint: {}", at.html);
    }
    // Any other name with no password: asked for one, not counted as a failure.
    let browser = down.browser();
    let login = follow(&browser, &authorize_url(&down, "")).await;
    let again = submit(&browser, &down.url(""), "/login", &[("challenge", &login.challenge()), ("username", "alice"), ("password", "")]).await;
    assert_eq!(again.status, 400, "{}", again.html);
    assert!(again.is_login() && again.html.contains("Please enter your password."), "{}", again.html);
    let (_, audit) = down.admin(Method::GET, "/admin/audit?event=login_failure", None).await;
    assert_eq!(audit["events"].as_array().map(Vec::len), Some(0), "{audit}");

    // With no organization routing by domain, the password is required again.
    let (status, _) = down.admin(Method::PATCH, "/admin/organizations/acme", Some(json!({"domains": []}))).await;
    assert_eq!(status, 200);
    let page = follow(&down.browser(), &authorize_url(&down, "")).await;
    assert!(page.html.contains("current-password\" required") && !page.html.contains("password-note"), "{}", page.html);
}
