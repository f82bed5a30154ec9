//! A tenant's own settings (issue 31; `tenant::overrides`): upstream identity providers,
//! resource servers, sign-up, password and second-factor policy, mail sender and default
//! language, each set through `PATCH /admin/tenants/{slug}` (or the CLI), served at once,
//! changing the tenant it is set on and no other (the default tenant and a second tenant keep
//! the deployment's); an invalid one refused with 400 and nothing changed; an upstream's secret
//! never shown nor stored in clear. On SQLite and PostgreSQL.

use crate::harness::*;
use crate::tenants::rp_and_alice;
use crate::upstream::{follow, submit, upstream, upstream_login};
use reqwest::Method;
use serde_json::{json, Value};

const MCP: &str = "https://mcp.acme.example/mcp";

async fn patch(s: &TestServer, slug: &str, settings: Value) -> (u16, Value) {
    s.admin(Method::PATCH, &format!("/admin/tenants/{slug}"), Some(json!({ "settings": settings }))).await
}

async fn settings_of(s: &TestServer, slug: &str) -> Value {
    let (status, t) = s.admin(Method::GET, &format!("/admin/tenants/{slug}"), None).await;
    assert_eq!(status, 200, "{t}");
    t["settings"].clone()
}

async fn scopes_supported(s: &TestServer, prefix: &str) -> Vec<String> {
    let doc: Value = s.http.get(s.url(&format!("{prefix}/.well-known/openid-configuration"))).send().await.unwrap().json().await.unwrap();
    doc["scopes_supported"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect()
}

/// A client-credentials token for `rp` at `prefix`, for the resource `MCP`.
async fn machine_token(s: &TestServer, prefix: &str, secret: &str) -> (u16, Value) {
    let res = s.http.post(s.url(&format!("{prefix}/token"))).basic_auth("rp", Some(secret)).form(&[("grant_type", "client_credentials"), ("resource", MCP), ("scope", "acme:tools")]).send().await.unwrap();
    (res.status().as_u16(), res.json().await.unwrap_or(Value::Null))
}

async fn status_of(s: &TestServer, path: &str) -> u16 {
    s.http.get(s.url(path)).send().await.unwrap().status().as_u16()
}

/// The login page an application's request at `prefix` shows.
async fn login_page(s: &TestServer, prefix: &str) -> String {
    let res = s.http.get(s.url(&format!("{prefix}/authorize"))).query(&request_query("code", "rp", &[])).send().await.unwrap();
    res.text().await.unwrap()
}

/// The status of alice's password sign-in at `prefix` (403: the policy wants a factor she has
/// not got).
async fn password_sign_in(s: &TestServer, prefix: &str) -> u16 {
    let b = crate::tenants::browser();
    let login = Page::from(b.get(s.url(&format!("{prefix}/authorize"))).query(&request_query("code", "rp", &[])).send().await.unwrap()).await;
    let form = [("challenge", login.challenge()), ("username", "alice".into()), ("password", PASSWORD.into())];
    b.post(s.url(&format!("{prefix}/login"))).form(&form).send().await.unwrap().status().as_u16()
}

/// Sign up at `prefix` with `password`: whether the account was made, and the page.
async fn signs_up(s: &TestServer, prefix: &str, username: &str, password: &str) -> (bool, String) {
    let b = s.browser();
    let form = crate::passkeys::get(&b, &format!("{prefix}/signup")).await;
    assert_eq!(form.status, 200, "{}", form.html);
    let token = crate::passkeys::field(&form, "form");
    let done = crate::passkeys::post(&b, &format!("{prefix}/signup"), &[("form", &token), ("username", username), ("password", password), ("confirm_password", password)]).await;
    // Asked of the tenant's admin API: its pages may be in another language.
    let (_, users) = s.admin(Method::GET, &format!("{prefix}/admin/users"), None).await;
    (users.to_string().contains(&format!("\"{username}\"")), done.html)
}

#[tokio::test]
async fn tenant_overrides_change_their_tenant_only_on_sqlite() {
    overrides_change_their_tenant_only(false).await;
}

#[tokio::test]
async fn tenant_overrides_change_their_tenant_only_on_postgres() {
    overrides_change_their_tenant_only(true).await;
}

async fn overrides_change_their_tenant_only(postgres: bool) {
    let s = TestServer::start_on(postgres, |_| {}).await;
    for slug in ["acme", "globex"] {
        assert_eq!(s.admin(Method::POST, "/admin/tenants", Some(json!({"slug": slug}))).await.0, 201);
    }
    let acme_secret = rp_and_alice(&s, "/t/acme").await;
    let globex_secret = rp_and_alice(&s, "/t/globex").await;
    let default_secret = rp_and_alice(&s, "").await;

    // Refused with 400, nothing changed: the settings' own checks (sign-up waits for an
    // e-mail, and this deployment sends none), a limit, an unknown key.
    for bad in [
        json!({"signup": true}),
        json!({"password_min_length": 4}),
        json!({"mfa_policy": "sometimes"}),
        json!({"default_locale": "xx"}),
        json!({"mail_from": "not an address"}),
        json!({"resource_servers": [{"uri": "relative/uri", "name": "x"}]}),
        json!({"resource_servers": (0..=100).map(|i| json!({"uri": format!("https://r{i}.example/"), "name": "r"})).collect::<Vec<_>>()}),
        json!({"identity_providers": [{"id": "up", "name": "Up", "issuer": "https://up.example", "client_id": "c"}]}),
        json!({"surprise": 1}),
    ] {
        let (status, body) = patch(&s, "acme", bad.clone()).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert_eq!(body["error"], "invalid_request", "{bad}: {body}");
    }
    assert_eq!(settings_of(&s, "acme").await, json!({}), "a refused change stored nothing");

    // Set, and served at once (no restart): the answer comes after this node rebuilt it.
    let (status, body) = patch(
        &s,
        "acme",
        json!({
            "signup": true, "signup_verify_email": false, "signup_required": "",
            "password_min_length": 12,
            "default_locale": "fr",
            "resource_servers": [{"uri": MCP, "name": "Acme MCP", "scopes": {"acme:tools": "Use Acme's tools"}}],
        }),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["settings"]["password_min_length"], 12);
    assert_eq!(patch(&s, "globex", json!({"signup": true, "signup_verify_email": false, "signup_required": ""})).await.0, 200);

    // Resource servers: acme's discovery and token endpoint know its own; globex and the
    // default tenant do not.
    assert!(scopes_supported(&s, "/t/acme").await.contains(&"acme:tools".to_string()));
    assert!(!scopes_supported(&s, "/t/globex").await.contains(&"acme:tools".to_string()));
    assert!(!scopes_supported(&s, "").await.contains(&"acme:tools".to_string()));
    let (status, token) = machine_token(&s, "/t/acme", &acme_secret).await;
    assert_eq!(status, 200, "{token}");
    assert_eq!(jwt_parts(token["access_token"].as_str().unwrap()).1["aud"], json!([MCP]));
    for (prefix, secret) in [("/t/globex", &globex_secret), ("", &default_secret)] {
        let (status, body) = machine_token(&s, prefix, secret).await;
        assert_eq!((status, body["error"].as_str()), (400, Some("invalid_target")), "{prefix}: {body}");
    }

    // Sign-up: on at acme and globex (set on each), off at the default tenant; acme's passwords
    // are at least 12 characters, globex's the deployment's 8.
    assert_eq!(status_of(&s, "/signup").await, 404);
    let (made, page) = signs_up(&s, "/t/acme", "carol", "eleven-char").await;
    assert!(!made && page.contains("12"), "acme wants 12 characters (its pages are in French): {page}");
    let (made, page) = signs_up(&s, "/t/acme", "carol", "twelve-chars").await;
    assert!(made, "{page}");
    let (made, page) = signs_up(&s, "/t/globex", "carol", "eleven-char").await;
    assert!(made, "globex keeps the deployment's policy: {page}");

    // The default language of acme's pages; the others keep the deployment's.
    assert!(login_page(&s, "/t/acme").await.contains("<html lang=\"fr\">"));
    assert!(login_page(&s, "/t/globex").await.contains("<html lang=\"en\">"));
    assert!(login_page(&s, "").await.contains("<html lang=\"en\">"));

    // A second factor at every sign-in of acme's (alice has none: refused), not globex's.
    assert_eq!(patch(&s, "acme", json!({"mfa_policy": "required"})).await.0, 200);
    assert_eq!(password_sign_in(&s, "/t/acme").await, 403);
    assert_eq!(password_sign_in(&s, "/t/globex").await, 303);
    assert_eq!(password_sign_in(&s, "").await, 303);

    // A PATCH merges: keys not named keep their value; null clears one (back to the
    // deployment's), served at once.
    let (status, body) = patch(&s, "acme", json!({"signup": null, "default_locale": null})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["settings"]["password_min_length"], 12, "{body}");
    assert_eq!(body["settings"].get("signup"), None, "{body}");
    assert_eq!(status_of(&s, "/t/acme/signup").await, 404);
    assert_eq!(status_of(&s, "/t/globex/signup").await, 200);
    assert!(login_page(&s, "/t/acme").await.contains("<html lang=\"en\">"));
    assert_eq!(patch(&s, "acme", json!({"resource_servers": null, "mfa_policy": null})).await.0, 200);
    assert_eq!(machine_token(&s, "/t/acme", &acme_secret).await.0, 400);
    assert_eq!(password_sign_in(&s, "/t/acme").await, 303);
}

/// `authrim tenant set SLUG --settings-file`: checked as the API checks, the secret sealed and
/// never printed, and a running server follows.
#[tokio::test]
async fn tenant_settings_set_by_the_cli_are_followed_by_a_running_server() {
    let s = TestServer::start().await;
    assert_eq!(s.admin(Method::POST, "/admin/tenants", Some(json!({"slug": "acme"}))).await.0, 201);
    let secret = "cli-upstream-secret-9d2e";
    let file = s.dir.path().join("acme.json");
    let bad = s.dir.path().join("bad.json");
    std::fs::write(&bad, json!({"password_min_length": 3}).to_string()).unwrap();
    let out = crate::admin::cli(s.dir.path(), &["tenant", "set", "acme", "--settings-file", bad.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("password_min_length"), "{}", String::from_utf8_lossy(&out.stderr));
    let settings = json!({
        "resource_servers": [{"uri": MCP, "name": "Acme MCP", "scopes": {"acme:tools": "Use Acme's tools"}}],
        "identity_providers": [{"id": "corp", "name": "Corp", "issuer": "https://corp.example", "client_id": "c", "client_secret": secret}],
    });
    std::fs::write(&file, settings.to_string()).unwrap();
    let out = crate::admin::cli(s.dir.path(), &["tenant", "set", "acme", "--settings-file", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(printed.contains("\"client_secret_set\": true") && !printed.contains(secret), "{printed}");
    let raw = s.server.app.db.read(|sql| sql.query("SELECT settings FROM tenants WHERE slug = 'acme'", &[])).await.unwrap()[0].text(0).unwrap();
    assert!(!raw.contains(secret) && raw.contains("client_secret_sealed"), "the row holds the secret sealed: {raw}");
    let start = std::time::Instant::now();
    while !scopes_supported(&s, "/t/acme").await.contains(&"acme:tools".to_string()) {
        assert!(start.elapsed() < std::time::Duration::from_secs(5), "the server never followed the CLI's change");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let (_, shown) = s.admin(Method::GET, "/admin/tenants/acme", None).await;
    assert_eq!(shown["settings"]["identity_providers"][0]["client_secret_set"], true, "{shown}");
    assert!(!scopes_supported(&s, "").await.contains(&"acme:tools".to_string()));
}

/// A tenant's own upstream provider (a second Authrim on 127.0.0.2) signs a user into that
/// tenant; the default tenant and another tenant do not offer it; its secret is never shown;
/// an organization of the tenant may name it, one of another tenant may not.
#[tokio::test]
async fn a_tenants_own_upstream_signs_its_users_in_and_no_other_tenant_offers_it() {
    let down = TestServer::start().await;
    let (up, up_secret) = upstream(&format!("{}/t/acme/login/upstream/callback", down.issuer())).await;
    for slug in ["acme", "globex"] {
        assert_eq!(down.admin(Method::POST, "/admin/tenants", Some(json!({"slug": slug}))).await.0, 201);
    }
    let provider = json!({"id": "up", "name": "Upstream Co", "issuer": up.issuer(), "client_id": "downstream", "client_secret": up_secret});
    let (status, body) = patch(&down, "acme", json!({"identity_providers": [provider]})).await;
    assert_eq!(status, 200, "{body}");
    // Never the secret: not in the answer, the tenant as shown, the list, the audit log.
    let shown = settings_of(&down, "acme").await;
    assert_eq!(shown["identity_providers"][0]["client_secret_set"], true, "{shown}");
    for path in ["/admin/tenants/acme", "/admin/tenants", "/admin/audit"] {
        let (_, v) = down.admin(Method::GET, path, None).await;
        assert!(!v.to_string().contains(&up_secret), "{path}: {v}");
    }
    assert!(!body.to_string().contains(&up_secret));

    let mut rp_secret = String::new();
    for prefix in ["", "/t/acme", "/t/globex"] {
        let secret = rp_and_alice(&down, prefix).await;
        if prefix == "/t/acme" {
            rp_secret = secret;
        }
    }
    // Offered at acme only.
    assert!(!login_page(&down, "").await.contains("Upstream Co"));
    assert!(!login_page(&down, "/t/globex").await.contains("Upstream Co"));
    let b = down.browser();
    let authorize = |prefix: &str| down.url(&format!("{prefix}/authorize?response_type=code&client_id=rp&redirect_uri={}&scope=openid%20email&state=st&nonce=n", url::form_urlencoded::byte_serialize(REDIRECT.as_bytes()).collect::<String>()));
    let at_globex = follow(&b, &authorize("/t/globex")).await;
    let refused = submit(&b, &down.url("/t/globex"), "/login/upstream", &[("challenge", &at_globex.challenge()), ("idp", "up")]).await;
    assert_eq!(refused.status, 400, "{}", refused.html);

    // The whole chain at acme: its login page, the upstream, back to acme's callback.
    let login = follow(&b, &authorize("/t/acme")).await;
    assert!(login.html.contains("Sign in with Upstream Co"), "{}", login.html);
    let at_upstream = submit(&b, &down.url("/t/acme"), "/login/upstream", &[("challenge", &login.challenge()), ("idp", "up")]).await;
    let mut page = upstream_login(&b, &up, at_upstream).await;
    // Acme's consent page (its forms post under its issuer).
    if page.html.contains("action=\"/t/acme/consent\"") {
        page = submit(&b, &down.url("/t/acme"), "/consent", &[("challenge", &page.challenge()), ("decision", "allow")]).await;
    }
    let code = page.redirect_params()["code"].clone();
    let res = down.http.post(down.url("/t/acme/token")).basic_auth("rp", Some(&rp_secret)).form(&[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).send().await.unwrap();
    let tokens: Value = res.json().await.unwrap();
    let claims = jwt_parts(tokens["id_token"].as_str().unwrap_or_else(|| panic!("{tokens}"))).1;
    assert_eq!(claims["iss"], json!(format!("{}/t/acme", down.issuer())));
    // Made a user of acme's (provisioned on the first sign-in), not of another tenant's.
    assert!(down.admin(Method::GET, "/t/acme/admin/users", None).await.1.to_string().contains("ulla@example.com"));
    assert!(!down.admin(Method::GET, "/admin/users", None).await.1.to_string().contains("ulla@example.com"));

    // Organizations name an upstream of their own tenant.
    let org = json!({"slug": "ulla-corp", "upstream": "up"});
    let (status, body) = down.admin(Method::POST, "/t/acme/admin/organizations", Some(org.clone())).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(down.admin(Method::POST, "/t/globex/admin/organizations", Some(org.clone())).await.0, 400);
    assert_eq!(down.admin(Method::POST, "/admin/organizations", Some(org)).await.0, 400);

    // Cleared: acme offers it no more.
    assert_eq!(patch(&down, "acme", json!({"identity_providers": null})).await.0, 200);
    assert!(!login_page(&down, "/t/acme").await.contains("Upstream Co"));
}

/// A tenant's `mail_from` and name are its mail's sender and subject; another tenant's mail
/// keeps the deployment's.
#[tokio::test]
async fn a_tenants_mail_comes_from_its_own_sender() {
    let (smtp_url, mail) = crate::mail::mail_server().await;
    let s = TestServer::start_with(|c| c.smtp_url = Some(smtp_url)).await;
    for slug in ["acme", "globex"] {
        assert_eq!(s.admin(Method::POST, "/admin/tenants", Some(json!({"slug": slug}))).await.0, 201);
    }
    let (status, body) = patch(&s, "acme", json!({"mail_from": "Acme Support <support@acme.example>", "product_name": "Acme Sign-in"})).await;
    assert_eq!(status, 200, "{body}");
    for (prefix, email) in [("/t/acme", "alice@acme.example"), ("/t/globex", "alice@globex.example")] {
        let (status, user) = s.admin(Method::POST, &format!("{prefix}/admin/users"), Some(json!({"username": "alice", "password": PASSWORD, "claims": {"email": email}}))).await;
        assert_eq!(status, 201, "{user}");
        let b = s.browser();
        let form = crate::passkeys::get(&b, &format!("{prefix}/login/forgot")).await;
        crate::passkeys::post(&b, &format!("{prefix}/login/forgot"), &[("form", &crate::passkeys::field(&form, "form")), ("login", "alice")]).await;
    }
    let messages = crate::mail::wait_for(&mail, 2).await;
    let header = |to: &str, name: &str| {
        let m = messages.iter().find(|m| m.contains(to)).unwrap_or_else(|| panic!("no mail to {to}: {messages:?}"));
        m.lines().find(|l| l.starts_with(name)).unwrap_or_default().to_string()
    };
    let (acme_from, globex_from) = (header("alice@acme.example", "From:"), header("alice@globex.example", "From:"));
    assert!(acme_from.contains("support@acme.example"), "{acme_from}");
    assert!(!globex_from.contains("acme.example") && globex_from.contains("noreply@"), "{globex_from}");
    assert!(header("alice@acme.example", "Subject:").contains("Acme Sign-in"), "{messages:?}");
    assert!(!header("alice@globex.example", "Subject:").contains("Acme"), "{messages:?}");
}

/// Administrators changing different settings of one tenant at the same moment: every change
/// lands (the merge is made again on what another wrote meanwhile), on both databases.
#[tokio::test]
async fn simultaneous_setting_changes_all_land_on_sqlite() {
    simultaneous_setting_changes_all_land(false).await;
}

#[tokio::test]
async fn simultaneous_setting_changes_all_land_on_postgres() {
    simultaneous_setting_changes_all_land(true).await;
}

async fn simultaneous_setting_changes_all_land(postgres: bool) {
    let s = TestServer::start_on(postgres, |_| {}).await;
    assert_eq!(s.admin(Method::POST, "/admin/tenants", Some(json!({"slug": "acme"}))).await.0, 201);
    let patches = [
        json!({"product_name": "Acme sign-in"}),
        json!({"password_min_length": 14}),
        json!({"mail_from": "Acme <no-reply@acme.example>"}),
        json!({"mfa_policy": "required"}),
        json!({"default_locale": "fr"}),
    ];
    for round in 0..3 {
        let (a, b, c, d, e) = tokio::join!(
            s.admin(Method::PATCH, "/admin/tenants/acme", Some(json!({"settings": patches[0]}))),
            s.admin(Method::PATCH, "/admin/tenants/acme", Some(json!({"settings": patches[1]}))),
            s.admin(Method::PATCH, "/admin/tenants/acme", Some(json!({"settings": patches[2]}))),
            s.admin(Method::PATCH, "/admin/tenants/acme", Some(json!({"settings": patches[3]}))),
            s.admin(Method::PATCH, "/admin/tenants/acme", Some(json!({"settings": patches[4]}))),
        );
        for (status, body) in [a, b, c, d, e] {
            assert_eq!(status, 200, "round {round}: {body}");
        }
        let (_, row) = s.admin(Method::GET, "/admin/tenants/acme", None).await;
        for p in &patches {
            let (k, v) = p.as_object().unwrap().iter().next().unwrap();
            assert_eq!(&row["settings"][k], v, "round {round}: {k} was lost: {row}");
        }
        // Cleared together for the next round (one PATCH: nothing to race).
        let cleared: serde_json::Map<String, serde_json::Value> = patches.iter().map(|p| (p.as_object().unwrap().keys().next().unwrap().clone(), serde_json::Value::Null)).collect();
        assert_eq!(s.admin(Method::PATCH, "/admin/tenants/acme", Some(json!({"settings": cleared}))).await.0, 200);
    }
}
