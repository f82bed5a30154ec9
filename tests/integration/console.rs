//! The admin console: who may enter (a console role, a second factor under the default
//! policy, a recent sign-in), what an admin changes there (clients with their secret shown
//! once, users, factors, sessions, keys) and what it leaves in the audit log, that an auditor
//! may look and not change, and that every change needs the form's CSRF token. The admin API
//! answers afterwards as the console said.

use crate::harness::*;
use crate::passkeys::{field, get, post};
use authrim::factors::totp::code_at;
use authrim::util::now;
use reqwest::Method;
use serde_json::{json, Value};

/// A user with console roles; returns their id.
pub(crate) async fn operator(s: &TestServer, name: &str, roles: &[&str]) -> String {
    let (st, v) = s.admin(Method::POST, "/admin/users", Some(json!({"username": name, "password": PASSWORD, "roles": roles}))).await;
    assert_eq!(st, 201, "{v}");
    assert_eq!(v["roles"], json!(roles), "{v}");
    v["id"].as_str().unwrap().to_string()
}

/// A TOTP factor for the user, through the admin API; returns its secret.
pub(crate) async fn totp(s: &TestServer, user: &str) -> String {
    let (st, v) = s.admin(Method::POST, &format!("/admin/users/{user}/factors/totp"), None).await;
    assert_eq!(st, 201, "{v}");
    v["secret"].as_str().unwrap().to_string()
}

/// Into the console: the sign-in it sends the browser to, the password, the code if asked.
pub(crate) async fn enter(browser: &Browser, username: &str, totp: Option<&str>) -> Page {
    let login = get(browser, "/console").await;
    assert!(login.is_login(), "the console signs in through /authorize: {}", login.html);
    let mut page = post(browser, "/login", &[("challenge", &login.challenge()), ("username", username), ("password", PASSWORD)]).await;
    if let Some(secret) = totp {
        assert!(page.html.contains("action=\"/login/second-factor\""), "{}", page.html);
        page = post(browser, "/login/second-factor", &[("challenge", &page.challenge()), ("code", &code_at(secret, now()).unwrap())]).await;
    }
    page
}

pub(crate) fn csrf(page: &Page) -> String {
    field(page, "csrf")
}

#[tokio::test]
async fn only_a_console_role_with_a_second_factor_enters() {
    let s = TestServer::start().await;
    s.user("alice", json!({})).await;
    let root = operator(&s, "root", &["admin"]).await;

    // No role: refused, whatever else.
    let page = enter(&s.browser(), "alice", None).await;
    assert_eq!(page.status, 403, "{}", page.html);
    assert!(page.html.contains("has no console role"), "{}", page.html);

    // A role, no second factor, under the default policy: sent to add one.
    let browser = s.browser();
    let page = enter(&browser, "root", None).await;
    assert_eq!(page.status, 403, "{}", page.html);
    assert!(page.html.contains("Add a second factor first") && page.html.contains("href=\"/account\""), "{}", page.html);
    // No page of the console opens meanwhile.
    for path in ["/console/clients", "/console/users", "/console/keys", "/console/audit"] {
        assert_eq!(get(&browser, path).await.status, 403, "{path}");
    }

    // With a factor: the sign-in asks for it, and the console opens.
    let secret = totp(&s, &root).await;
    let browser = s.browser();
    let home = enter(&browser, "root", Some(&secret)).await;
    assert_eq!(home.status, 200, "{}", home.html);
    assert!(home.html.contains("<h1>Admin console</h1>") && home.html.contains("administrator"), "{}", home.html);
    // Its sign-in was recorded as anyone's: the code went to the console's client.
    let (_, audit) = s.admin(Method::GET, "/admin/audit?event=login_success", None).await;
    assert!(audit["events"].as_array().unwrap().iter().any(|e| e["client_id"] == "authrim-console" && e["user_id"] == root.as_str()), "{audit}");
    // The console's client id is reserved.
    let (st, v) = s.admin(Method::POST, "/admin/clients", Some(json!({"client_id": "authrim-console", "redirect_uris": [REDIRECT]}))).await;
    assert_eq!(st, 400, "{v}");
}

#[tokio::test]
async fn an_expired_console_sign_in_signs_in_again() {
    let s = TestServer::start_with(|c| {
        c.console_mfa = "if_enrolled".into();
        c.console_max_age = 0;
    })
    .await;
    operator(&s, "root", &["admin"]).await;
    let browser = s.browser();
    let home = enter(&browser, "root", None).await;
    assert_eq!(home.status, 200, "if_enrolled: the password alone, for a user without a factor: {}", home.html);
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let res = browser.client.get(format!("{}/console/users", browser.base)).send().await.unwrap();
    assert_eq!(res.status(), 303);
    assert_eq!(res.headers()["location"], "/console/login?reauth=1");
    let again = get(&browser, "/console/login?reauth=1").await;
    assert!(again.is_login() && again.html.contains("Admin console"), "prompt=login, for the console: {}", again.html);
}

#[tokio::test]
async fn an_admin_manages_clients_users_sessions_and_keys() {
    manage(false).await;
}

#[tokio::test]
async fn an_admin_manages_clients_users_sessions_and_keys_on_postgres() {
    manage(true).await;
}

async fn manage(postgres: bool) {
    let s = TestServer::start_on(postgres, |_| {}).await;
    let root = operator(&s, "root", &["admin"]).await;
    let secret = totp(&s, &root).await;
    let admin = s.browser();
    let home = enter(&admin, "root", Some(&secret)).await;
    assert_eq!(home.status, 200, "{}", home.html);

    // A client from the form: its secret shown once, and it works.
    // The form of an application type (`/console/clients/new` alone asks which type first).
    let form = get(&admin, "/console/clients/new?type=web").await;
    let created = post(
        &admin,
        "/console/clients",
        &[
            ("csrf", &csrf(&form)),
            ("client_id", "billing"),
            ("client_name", "Billing <service>"),
            ("redirect_uris", "https://billing.example/cb\r\n\r\nhttps://billing.example/cb2\r\n"),
            ("grant:client_credentials", "on"),
            ("grant:authorization_code", "on"),
            ("method", "client_secret_basic"),
            ("scope", "openid billing"),
        ],
    )
    .await;
    assert_eq!(created.status, 200, "{}", created.html);
    assert_eq!(created.html.matches("Copy the secret now").count(), 1, "{}", created.html);
    let first_secret = created.html.split("<code id=\"secret\">").nth(1).unwrap().split('<').next().unwrap().to_string();
    let cc = |secret: String| {
        let s = &s;
        async move { s.token(Some(("billing", &secret)), &[("grant_type", "client_credentials"), ("scope", "billing")]).await.0 }
    };
    assert_eq!(cc(first_secret.clone()).await, 200);
    let (_, c) = s.admin(Method::GET, "/admin/clients/billing", None).await;
    assert_eq!(c["redirect_uris"], json!(["https://billing.example/cb", "https://billing.example/cb2"]), "{c}");
    assert_eq!(c["client_name"], "Billing <service>");
    let list = get(&admin, "/console/clients").await;
    assert!(list.html.contains("Billing &lt;service&gt;") && !list.html.contains(&first_secret), "escaped, and no secret: {}", list.html);

    // A wrong value: the form again, with the reason and what was typed; nothing saved.
    let page = get(&admin, "/console/clients/billing").await;
    let bad = post(&admin, "/console/clients/billing", &[("csrf", &csrf(&page)), ("client_name", "Renamed"), ("redirect_uris", "not a uri"), ("grant:authorization_code", "on"), ("method", "client_secret_basic")]).await;
    assert_eq!(bad.status, 400, "{}", bad.html);
    assert!(bad.html.contains("role=\"alert\"") && bad.html.contains("not a uri") && bad.html.contains("value=\"Renamed\""), "{}", bad.html);
    assert_eq!(s.admin(Method::GET, "/admin/clients/billing", None).await.1["client_name"], "Billing <service>");

    // An edit; a forged token changes nothing.
    let forged = post(&admin, "/console/clients/billing", &[("csrf", "forged"), ("client_name", "Forged"), ("method", "client_secret_basic")]).await;
    assert_eq!(forged.status, 400, "{}", forged.html);
    assert!(forged.html.contains("Reload the console page"), "{}", forged.html);
    let saved = post(&admin, "/console/clients/billing", &[("csrf", &csrf(&page)), ("client_name", "Billing"), ("redirect_uris", "https://billing.example/cb"), ("grant:client_credentials", "on"), ("method", "client_secret_basic"), ("scope", "billing"), ("require_mfa", "on")]).await;
    assert!(saved.html.contains("Saved.") && saved.html.contains("value=\"Billing\""), "{}", saved.html);
    let (_, c) = s.admin(Method::GET, "/admin/clients/billing", None).await;
    assert_eq!((c["client_name"].as_str(), c["require_mfa"].as_bool(), c["grant_types"].clone()), (Some("Billing"), Some(true), json!(["client_credentials"])), "{c}");
    // Organizations only (issue 31): the box sets `organization_required`; left unticked, it is unset.
    assert!(saved.html.contains("name=\"organization_required\"") && c.get("organization_required").is_none(), "{c}");
    let base = [("client_name", "Billing"), ("redirect_uris", "https://billing.example/cb"), ("grant:client_credentials", "on"), ("method", "client_secret_basic"), ("scope", "billing"), ("require_mfa", "on")];
    for (ticked, want) in [(true, json!(true)), (false, Value::Null)] {
        let page = get(&admin, "/console/clients/billing").await;
        let mut form = vec![("csrf", csrf(&page))];
        form.extend(base.iter().map(|(k, v)| (*k, v.to_string())));
        if ticked {
            form.push(("organization_required", "on".into()));
        }
        let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert!(post(&admin, "/console/clients/billing", &form).await.html.contains("Saved."));
        assert_eq!(s.admin(Method::GET, "/admin/clients/billing", None).await.1["organization_required"], want);
    }

    // A new secret: shown once; the old one stops working.
    let rotated = post(&admin, "/console/clients/billing/secret", &[("csrf", &csrf(&saved))]).await;
    let second_secret = rotated.html.split("<code id=\"secret\">").nth(1).unwrap().split('<').next().unwrap().to_string();
    assert_ne!(first_secret, second_secret);
    assert_eq!(cc(first_secret).await, 401);
    assert_eq!(cc(second_secret).await, 200);

    // A user from the form, with a role; then disabled, which ends their sessions.
    let form = get(&admin, "/console/users/new").await;
    let user = post(&admin, "/console/users", &[("csrf", &csrf(&form)), ("username", "carol"), ("email", "carol@example.com"), ("email_verified", "on"), ("name", "Carol"), ("password", PASSWORD), ("role:auditor", "on")]).await;
    assert!(user.html.contains("Created.") && user.html.contains("User carol"), "{}", user.html);
    let carol = s.admin(Method::GET, "/admin/users", None).await.1["users"].as_array().unwrap().iter().find(|u| u["username"] == "carol").unwrap().clone();
    assert_eq!((carol["roles"].clone(), carol["claims"]["email_verified"].clone()), (json!(["auditor"]), json!(true)), "{carol}");
    let carol_id = carol["id"].as_str().unwrap().to_string();
    let carol_totp = totp(&s, &carol_id).await;
    let carols = s.browser();
    assert_eq!(enter(&carols, "carol", Some(&carol_totp)).await.status, 200);
    let page = get(&admin, &format!("/console/users/{carol_id}")).await;
    assert!(page.html.contains("Authenticator app") && page.html.contains("authrim-console"), "her factor and her session: {}", page.html);

    // An auditor looks and does not change: the server says no, whatever the page showed.
    let clients = get(&carols, "/console/clients").await;
    assert!(clients.html.contains("billing") && !clients.html.contains("/console/clients/new"), "{}", clients.html);
    // Her view of a client is the form, disabled; its token is hers.
    let view = get(&carols, "/console/clients/billing").await;
    assert!(view.html.contains("<fieldset disabled>") && !view.html.contains("New secret"), "{}", view.html);
    let refused = post(&carols, "/console/clients", &[("csrf", &csrf(&view)), ("client_id", "sneaky"), ("method", "none"), ("redirect_uris", REDIRECT), ("grant:authorization_code", "on")]).await;
    assert_eq!(refused.status, 403, "{}", refused.html);
    assert_eq!(s.admin(Method::GET, "/admin/clients/sneaky", None).await.0, 404);
    // Nor with the admin's token: CSRF tokens are sealed to their session.
    let theirs = post(&carols, "/console/keys/rotate", &[("csrf", &csrf(&page)), ("alg", "RS256")]).await;
    assert_eq!(theirs.status, 400, "{}", theirs.html);

    // End her sessions; remove her factors.
    let ended = post(&admin, &format!("/console/users/{carol_id}/sessions/end"), &[("csrf", &csrf(&page))]).await;
    assert!(ended.html.contains("Sessions ended.") && ended.html.contains("No live session."), "{}", ended.html);
    assert_eq!(s.admin(Method::GET, &format!("/admin/users/{carol_id}/sessions"), None).await.1["sessions"], json!([]));
    assert!(get(&carols, "/console").await.is_login(), "her browser is signed out");
    let (_, logouts) = s.admin(Method::GET, "/admin/audit?event=logout", None).await;
    assert_eq!((logouts["events"][0]["detail"]["by"].as_str(), logouts["events"][0]["detail"]["admin"].as_str()), (Some("console"), Some(root.as_str())), "{logouts}");
    let reset = post(&admin, &format!("/console/users/{carol_id}/factors/remove"), &[("csrf", &csrf(&ended))]).await;
    assert!(reset.html.contains("Removed.") && reset.html.contains("None."), "{}", reset.html);
    assert_eq!(s.admin(Method::GET, &format!("/admin/users/{carol_id}/factors"), None).await.1["factors"], json!([]));

    // Disable her: she cannot sign in.
    let disabled = post(&admin, &format!("/console/users/{carol_id}"), &[("csrf", &csrf(&reset)), ("username", "carol"), ("email", "carol@example.com"), ("name", "Carol"), ("role:auditor", "on"), ("disabled", "on")]).await;
    assert!(disabled.html.contains("Saved."), "{}", disabled.html);
    assert_eq!(s.admin(Method::GET, &format!("/admin/users/{carol_id}"), None).await.1["disabled"], true);
    let again = enter(&s.browser(), "carol", None).await;
    assert!(again.is_login() && again.status == 401, "{}", again.html);
    // An admin does not take their own role away by a slip.
    let own = post(&admin, &format!("/console/users/{root}"), &[("csrf", &csrf(&disabled)), ("username", "root")]).await;
    assert_eq!(own.status, 400, "{}", own.html);
    assert_eq!(s.admin(Method::GET, &format!("/admin/users/{root}"), None).await.1["roles"], json!(["admin"]));

    // A key rotation: the new key is published at once.
    let before = s.http.get(s.url("/jwks")).send().await.unwrap().json::<Value>().await.unwrap()["keys"].as_array().unwrap().len();
    let keys = get(&admin, "/console/keys").await;
    let rotated = post(&admin, "/console/keys/rotate", &[("csrf", &csrf(&keys)), ("alg", "RS256")]).await;
    assert!(rotated.html.contains("Rotation started") && rotated.html.contains("published, not yet signing"), "{}", rotated.html);
    let after = s.http.get(s.url("/jwks")).send().await.unwrap().json::<Value>().await.unwrap()["keys"].as_array().unwrap().len();
    assert_eq!(after, before + 1);
    // The server's encryption keys are offered and rotate the same way.
    assert!(keys.html.contains(r#"<option value="RSA-OAEP-256">"#) && keys.html.contains(r#"<option value="ECDH-ES">"#), "{}", keys.html);
    let rotated = post(&admin, "/console/keys/rotate", &[("csrf", &csrf(&keys)), ("alg", "ECDH-ES")]).await;
    assert!(rotated.html.contains("Rotation started"), "{}", rotated.html);
    let jwks = s.http.get(s.url("/jwks")).send().await.unwrap().json::<Value>().await.unwrap();
    assert_eq!(jwks["keys"].as_array().unwrap().iter().filter(|k| k["alg"] == "ECDH-ES" && k["use"] == "enc").count(), 2, "{jwks}");
    let unknown = post(&admin, "/console/keys/rotate", &[("csrf", &csrf(&keys)), ("alg", "HS256")]).await;
    assert_eq!(unknown.status, 400, "{}", unknown.html);

    // The audit log says who did what, and filters.
    let log = get(&admin, "/console/audit?event=client_secret_rotated").await;
    // The rows (the event filter's list names every kind, so the page as a whole does).
    let rows = log.html.split("<tbody").nth(1).unwrap_or_default();
    assert!(rows.contains("client_secret_rotated") && rows.contains(&root) && !rows.contains("client_created"), "{}", log.html);
    let of_carol = get(&admin, &format!("/console/audit?user={carol_id}")).await;
    for event in ["user_created", "sessions_ended", "factors_reset", "user_updated"] {
        assert!(of_carol.html.contains(event), "{event}: {}", of_carol.html);
    }
    let (_, events) = s.admin(Method::GET, "/admin/audit?event=signing_key_rotated", None).await;
    assert_eq!(events["events"][0]["detail"]["by"], "console", "{events}");
    assert_eq!(events["events"][0]["detail"]["admin"], root.as_str(), "{events}");

    // Deleting: the client's tokens stop; the user is gone.
    let page = get(&admin, "/console/clients/billing").await;
    let gone = post(&admin, "/console/clients/billing/delete", &[("csrf", &csrf(&page))]).await;
    assert!(gone.html.contains("Deleted.") && !gone.html.contains("/console/clients/billing\""), "{}", gone.html);
    let gone = post(&admin, &format!("/console/users/{carol_id}/delete"), &[("csrf", &csrf(&page))]).await;
    assert!(gone.html.contains("Deleted."), "{}", gone.html);
    assert_eq!(s.admin(Method::GET, &format!("/admin/users/{carol_id}"), None).await.0, 404);
}

#[tokio::test]
async fn roles_are_named_ones_and_the_admin_api_records_its_changes() {
    let s = TestServer::start().await;
    let (st, v) = s.admin(Method::POST, "/admin/users", Some(json!({"username": "x", "password": PASSWORD, "roles": ["superuser"]}))).await;
    assert_eq!(st, 400, "{v}");
    let id = operator(&s, "y", &["admin", "auditor"]).await;
    let (_, v) = s.admin(Method::PATCH, &format!("/admin/users/{id}"), Some(json!({"roles": []}))).await;
    assert!(v.get("roles").is_none(), "no roles: {v}");
    let (_, audit) = s.admin(Method::GET, &format!("/admin/audit?event=user_updated"), None).await;
    assert_eq!(audit["events"][0]["detail"]["by"], "operator", "{audit}");
    assert_eq!(audit["events"][0]["detail"]["changed"], json!(["roles"]), "{audit}");
}

/// The CLI gives and takes console roles; a running server knows at once.
#[tokio::test]
async fn the_cli_gives_and_takes_console_roles() {
    let s = TestServer::start_with(|c| c.console_mfa = "if_enrolled".into()).await;
    let out = crate::admin::cli(s.dir.path(), &["user", "create", "--username", "dana", "--password", PASSWORD, "--role", "auditor"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(printed["roles"], json!(["auditor"]));
    let out = crate::admin::cli(s.dir.path(), &["user", "update", "dana", "--role", "nobody"]);
    assert!(!out.status.success(), "an unknown role is refused");
    let mut known = false;
    for _ in 0..50 {
        known = s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).user_by_login("dana").is_some_and(|u| u.has_role("auditor"));
        if known {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(known, "the server did not pick up the role");
    let browser = s.browser();
    let page = enter(&browser, "dana", None).await;
    assert!(page.status == 200 && page.html.contains("auditor (read only)"), "{}", page.html);
    let out = crate::admin::cli(s.dir.path(), &["user", "update", "dana", "--role", ""]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for _ in 0..50 {
        if s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).user_by_login("dana").is_some_and(|u| u.roles.is_empty()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(get(&browser, "/console").await.status, 403, "no role, no console, even with a live session");
}

/// The user list finds by name or e-mail in any case, and by id exactly.
#[tokio::test]
async fn the_user_list_searches() {
    let s = TestServer::start_with(|c| c.console_mfa = "if_enrolled".into()).await;
    operator(&s, "root", &["auditor"]).await;
    let erin = s.user("Erin", json!({"email": "Erin.Smith@Example.com"})).await;
    s.user("frank", json!({})).await;
    let browser = s.browser();
    assert_eq!(enter(&browser, "root", None).await.status, 200);
    for (q, erin_found, frank_found) in [("erin", true, false), ("EXAMPLE.COM", true, false), (erin.as_str(), true, false), ("", true, true), ("nobody", false, false)] {
        let page = get(&browser, &format!("/console/users?q={}", url::form_urlencoded::byte_serialize(q.as_bytes()).collect::<String>())).await;
        assert_eq!(page.html.contains(">Erin</a>"), erin_found, "{q}: {}", page.html);
        assert_eq!(page.html.contains(">frank</a>"), frank_found, "{q}: {}", page.html);
    }
    let page = get(&browser, &format!("/console/users?q={}", erin.to_uppercase())).await;
    assert!(!page.html.contains(">Erin</a>") || erin.to_uppercase() == erin, "an id matches exactly: {}", page.html);
}

/// `bootstrap_admin`: a new installation's first admin, without the CLI; an existing user of
/// that name is given the role; nothing happens once an admin exists.
#[tokio::test]
async fn the_first_admin_comes_from_the_settings() {
    let boot = |name: &'static str| {
        move |c: &mut authrim::config::Config| {
            c.bootstrap_admin = Some(name.into());
            c.bootstrap_admin_password = Some(PASSWORD.into());
            c.console_mfa = "if_enrolled".into();
        }
    };
    let s = TestServer::start_with(boot("root")).await;
    let root = s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).user_by_login("root").expect("created");
    assert_eq!(root.roles, vec!["admin".to_string()]);
    let home = enter(&s.browser(), "root", None).await;
    assert!(home.status == 200 && home.html.contains("administrator"), "{}", home.html);
    let (_, audit) = s.admin(Method::GET, "/admin/audit?event=user_created", None).await;
    assert_eq!(audit["events"][0]["detail"]["by"], "bootstrap", "{audit}");

    // Restarted with another name: an admin exists, so nothing.
    let TestServer { server, dir, .. } = s;
    let config = server.app.config.clone();
    server.stop().await.unwrap();
    let mut again = config.clone();
    boot("mallory")(&mut again);
    let s = TestServer::start_in(dir, again).await;
    assert!(s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).user_by_login("mallory").is_none());

    // A new installation where the name is an existing user: given the role, password kept.
    let dir = tempfile::tempdir().unwrap();
    let out = crate::admin::cli(dir.path(), &["--init", "user", "create", "--username", "olga", "--password", PASSWORD]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut config = test_config(dir.path());
    boot("olga")(&mut config);
    config.bootstrap_admin_password = None;
    let s = TestServer::start_in(dir, config).await;
    assert!(s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).user_by_login("olga").unwrap().has_role("admin"));
    assert_eq!(enter(&s.browser(), "olga", None).await.status, 200);

    // A name that is no user and no password: the server does not start, and says why.
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    boot("nobody")(&mut config);
    config.bootstrap_admin_password = None;
    let err = authrim::http::server::RunningServer::start(config).await.err().expect("refused");
    assert!(err.to_string().contains("AUTHRIM_BOOTSTRAP_ADMIN_PASSWORD"), "{err}");
}

/// A page's text as written (minijinja escapes `/` and quotes too).
fn unescape(html: &str) -> String {
    html.replace("&#x2f;", "/").replace("&quot;", "\"").replace("&#x27;", "'").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
}

/// Whether `html` shows every time as ISO 8601 UTC in a `<time data-local>` (which ui.js turns
/// into the browser's zone), and has at least one.
fn iso_times(html: &str) -> usize {
    let mut n = 0;
    for part in html.split("<time datetime=\"").skip(1) {
        let (at, rest) = part.split_once('"').unwrap();
        assert!(at.len() == 20 && at.as_bytes()[10] == b'T' && at.ends_with('Z'), "not ISO 8601 UTC: {at}");
        assert!(rest.starts_with(&format!(" data-local>{at}</time>")), "{part}");
        n += 1;
    }
    n
}

/// The audit log finds a user by what the table shows (username, e-mail) as well as by id;
/// an unknown one gives an empty list and says so; the event filter is a list of every kind
/// the code records; each event names who did it; times are ISO 8601 (console, admin API, CLI).
#[tokio::test]
async fn the_audit_log_is_searched_by_name_and_says_who() {
    let s = TestServer::start_with(|c| c.console_mfa = "if_enrolled".into()).await;
    let root = operator(&s, "root", &["admin"]).await;
    let erin = s.user("erin", json!({"email": "Erin.Smith@Example.com"})).await;
    s.user("frank", json!({})).await;
    // Erin changed by the admin API's token, then by root in the console.
    let (st, _) = s.admin(Method::PATCH, &format!("/admin/users/{erin}"), Some(json!({"claims": {"name": "Erin"}}))).await;
    assert_eq!(st, 200);
    let admin = s.browser();
    let home = enter(&admin, "root", None).await;
    assert_eq!(home.status, 200, "{}", home.html);
    let page = get(&admin, &format!("/console/users/{erin}")).await;
    let ended = post(&admin, &format!("/console/users/{erin}/sessions/end"), &[("csrf", &csrf(&page))]).await;
    assert!(ended.html.contains("Sessions ended."), "{}", ended.html);

    let rows = |html: &str| html.split("<tbody>").nth(1).map_or(0, |b| b.matches("<tr>").count());
    let mut counts = Vec::new();
    for typed in ["erin", "ERIN", "erin.smith@example.com", erin.as_str()] {
        let q: String = url::form_urlencoded::byte_serialize(typed.as_bytes()).collect();
        let log = get(&admin, &format!("/console/audit?user={q}")).await;
        assert_eq!(log.status, 200, "{typed}: {}", log.html);
        assert!(log.html.contains("<code>user_updated</code>") && log.html.contains("<code>sessions_ended</code>"), "{typed}: {}", log.html);
        assert!(!log.html.contains(">frank<"), "{typed}: only erin's events: {}", log.html);
        // Who: the console's admin by name, linked to their page; the token by what it is.
        assert!(log.html.contains(&format!("<td class=\"actor\"><a href=\"/console/users/{root}\">root</a></td>")), "{typed}: {}", log.html);
        assert!(log.html.contains("<td class=\"actor\">admin API token</td>"), "{typed}: {}", log.html);
        assert!(iso_times(&log.html) >= 2, "{}", log.html);
        counts.push(rows(&log.html));
    }
    assert!(counts.iter().all(|n| *n == counts[0] && *n >= 3), "the same events whichever name: {counts:?}");

    // Nobody of that name: an empty list, and why (not an error).
    let none = get(&admin, "/console/audit?user=nobody").await;
    assert_eq!(none.status, 200, "{}", none.html);
    let none = Page { html: unescape(&none.html), ..none };
    assert!(none.html.contains("No user is named “nobody”") && none.html.contains("No events."), "{}", none.html);
    assert!(!none.html.contains("role=\"alert\""), "{}", none.html);

    // The event filter: a list of every kind recorded, the chosen one selected.
    let log = get(&admin, "/console/audit?event=sessions_ended").await;
    for (kind, _) in authrim::audit::EVENTS {
        assert!(log.html.contains(&format!("<option value=\"{kind}\"")), "{kind}: {}", log.html);
    }
    assert!(log.html.contains("<option value=\"sessions_ended\" selected>"), "{}", log.html);
    assert!(log.html.contains("<code>sessions_ended</code>") && !log.html.contains("<code>user_updated</code>"), "{}", log.html);
    // A sign-in's actor is its user.
    let log = get(&admin, "/console/audit?event=login_success&user=root").await;
    assert!(log.html.contains(&format!("<td class=\"actor\"><a href=\"/console/users/{root}\">root</a></td>")), "{}", log.html);

    // The admin API: the same names, and `time` beside `at`.
    let (_, v) = s.admin(Method::GET, "/admin/audit?user=Erin.Smith%40example.com", None).await;
    let events = v["events"].as_array().unwrap();
    assert!(!events.is_empty() && events.iter().all(|e| e["user_id"] == erin.as_str()), "{v}");
    for e in events {
        assert_eq!(e["time"].as_str().unwrap(), authrim::util::iso8601(e["at"].as_u64().unwrap()), "{e}");
    }
    let (_, v) = s.admin(Method::GET, "/admin/audit?user=nobody", None).await;
    assert_eq!(v["events"], json!([]), "{v}");

    // The CLI: by name too, with ISO times.
    let out = crate::admin::cli(s.dir.path(), &["audit", "--user", "erin", "--event", "user_updated"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let listed = printed.as_array().unwrap();
    assert!(!listed.is_empty() && listed.iter().all(|e| e["user_id"] == erin.as_str() && e["event"] == "user_updated"), "{printed}");
    let time = listed[0]["time"].as_str().unwrap();
    assert!(time.len() == 20 && time.ends_with('Z') && time == authrim::util::iso8601(listed[0]["at"].as_u64().unwrap()), "{time}");
    let out = crate::admin::cli(s.dir.path(), &["audit", "--user", "nobody"]);
    assert!(out.status.success() && String::from_utf8_lossy(&out.stderr).contains("no user \"nobody\""), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(serde_json::from_slice::<Value>(&out.stdout).unwrap(), json!([]));
}

/// The new-client form starts from the kind of application, which fills in its metadata;
/// mistakes are said in the console's words (never a URL parser's); once created, the page
/// gives what the application needs.
#[tokio::test]
async fn new_clients_start_from_an_application_type() {
    let s = TestServer::start_with(|c| c.console_mfa = "if_enrolled".into()).await;
    operator(&s, "root", &["admin"]).await;
    let admin = s.browser();
    assert_eq!(enter(&admin, "root", None).await.status, 200);

    let before = s.admin(Method::GET, "/admin/clients", None).await.1["clients"].as_array().unwrap().len();
    let chooser = get(&admin, "/console/clients/new").await;
    for kind in ["web", "spa", "native", "m2m", "mcp", "device"] {
        assert!(chooser.html.contains(&format!("name=\"type\" value=\"{kind}\"")), "{kind}: {}", chooser.html);
    }

    // Each type's form: the metadata it needs, filled in; the rest behind "Advanced settings".
    let checked = |html: &str, grant: &str| html.contains(&format!("name=\"grant:{grant}\" checked"));
    let selected = |html: &str, method: &str| html.contains(&format!("<option value=\"{method}\" selected>"));
    let spa = get(&admin, "/console/clients/new?type=spa").await;
    assert!(spa.html.contains("<input type=\"hidden\" name=\"type\" value=\"spa\">") && spa.html.contains("<details class=\"advanced\">"), "{}", spa.html);
    assert!(checked(&spa.html, "authorization_code") && checked(&spa.html, "refresh_token") && !checked(&spa.html, "client_credentials"), "{}", spa.html);
    assert!(selected(&spa.html, "none") && spa.html.contains("value=\"openid profile email offline_access\""), "{}", spa.html);
    let m2m = get(&admin, "/console/clients/new?type=m2m").await;
    assert!(checked(&m2m.html, "client_credentials") && !checked(&m2m.html, "authorization_code") && selected(&m2m.html, "client_secret_basic"), "{}", m2m.html);
    assert!(!m2m.html.contains("id=\"redirect_uris\""), "no redirect URIs for a machine: {}", m2m.html);
    let web = get(&admin, "/console/clients/new?type=web").await;
    assert!(selected(&web.html, "client_secret_basic") && checked(&web.html, "authorization_code"), "{}", web.html);

    let form = |kind: &'static str, redirect: &'static str| {
        let mut f = vec![("type", kind), ("client_name", "App"), ("redirect_uris", redirect), ("scope", "openid profile")];
        match kind {
            "m2m" => f.extend([("grant:client_credentials", "on"), ("method", "client_secret_basic")]),
            "web" => f.extend([("grant:authorization_code", "on"), ("grant:refresh_token", "on"), ("method", "client_secret_basic")]),
            _ => f.extend([("grant:authorization_code", "on"), ("grant:refresh_token", "on"), ("method", "none")]),
        }
        f
    };
    let send = |fields: Vec<(&'static str, &'static str)>| {
        let (admin, spa) = (&admin, &spa);
        async move {
            let token = csrf(spa);
            let mut all = vec![("csrf", token.as_str())];
            all.extend(fields);
            post(admin, "/console/clients", &all).await
        }
    };
    // Mistakes, in the console's words, the field marked; nothing made.
    for (kind, redirect, words) in [
        ("spa", "/callback", "“/callback” is not a complete address"),
        ("web", "com.example.app:/cb", "“com.example.app:/cb” is not a web address"),
        ("spa", "http://spa.example/cb", "uses http, which only addresses on this computer"),
        ("native", "", "needs at least one redirect URI"),
    ] {
        let bad = send(form(kind, redirect)).await;
        assert_eq!(bad.status, 400, "{redirect}: {}", bad.html);
        let bad = Page { html: unescape(&bad.html), ..bad };
        assert!(bad.html.contains("This was not done:") && bad.html.contains(words), "{redirect}: {}", bad.html);
        assert!(bad.html.contains("aria-invalid=\"true\""), "{redirect}: {}", bad.html);
        // No parser's words, nor the server's English reason marked as such (`<span lang="en">`).
        assert!(!bad.html.contains("relative URL") && !bad.html.contains("<span lang=\"en\">"), "no parser's words: {}", bad.html);
        assert!(bad.html.contains(&format!("name=\"type\" value=\"{kind}\"")), "the type kept: {}", bad.html);
    }
    let mut m2m_bad = form("m2m", "");
    m2m_bad.retain(|(k, _)| *k != "method");
    m2m_bad.push(("method", "none"));
    let bad = send(m2m_bad).await;
    assert!(bad.status == 400 && bad.html.contains("cannot call APIs as itself") && bad.html.contains("<details class=\"advanced\" open>"), "{}", bad.html);
    assert_eq!(s.admin(Method::GET, "/admin/clients", None).await.1["clients"].as_array().unwrap().len(), before, "nothing made");

    // Created: the issuer, its discovery document, the client id, the secret once, settings.
    let issuer = s.issuer();
    let made = send(form("m2m", "")).await;
    assert_eq!(made.status, 200, "{}", made.html);
    let made = Page { html: unescape(&made.html), ..made };
    assert!(made.html.contains(&format!("<code id=\"created-issuer\">{issuer}</code>")), "{}", made.html);
    assert!(made.html.contains(&format!("<code id=\"created-discovery\">{issuer}/.well-known/openid-configuration</code>")), "{}", made.html);
    let id = made.html.split("<code id=\"created-client-id\">").nth(1).unwrap().split('<').next().unwrap().to_string();
    let secret = made.html.split("<code id=\"secret\">").nth(1).unwrap().split('<').next().unwrap().to_string();
    let snippet = made.html.split("<code id=\"snippet\">").nth(1).unwrap().split("</code>").next().unwrap().to_string();
    assert!(snippet.contains(&format!("OIDC_ISSUER={issuer}\n")) && snippet.contains(&format!("OIDC_CLIENT_ID={id}\n")) && snippet.contains(&format!("OIDC_CLIENT_SECRET={secret}")), "{snippet}");
    let (st, _, _) = s.token(Some((&id, &secret)), &[("grant_type", "client_credentials")]).await;
    assert_eq!(st, 200);
    let (_, c) = s.admin(Method::GET, &format!("/admin/clients/{id}"), None).await;
    assert_eq!((c["grant_types"].clone(), c["redirect_uris"].clone(), c.get("application_type")), (json!(["client_credentials"]), json!([]), None), "{c}");

    // A public one: no secret (and the page says why); its type's metadata.
    for (kind, redirect, app_type) in [("spa", "https://spa.example/cb", "web"), ("native", "com.example.app:/cb", "native"), ("mcp", "http://127.0.0.1/callback", "native")] {
        let made = send(form(kind, redirect)).await;
        assert_eq!(made.status, 200, "{kind}: {}", made.html);
        let made = Page { html: unescape(&made.html), ..made };
        assert!(!made.html.contains("id=\"secret\"") && made.html.contains("no secret: it proves itself with PKCE"), "{kind}: {}", made.html);
        assert!(made.html.contains(&format!("OIDC_REDIRECT_URI={redirect}")), "{kind}: {}", made.html);
        let id = made.html.split("<code id=\"created-client-id\">").nth(1).unwrap().split('<').next().unwrap().to_string();
        let (_, c) = s.admin(Method::GET, &format!("/admin/clients/{id}"), None).await;
        assert_eq!((c["token_endpoint_auth_method"].as_str(), c["application_type"].as_str()), (Some("none"), Some(app_type)), "{kind}: {c}");
        assert_eq!((c["grant_types"].clone(), c["response_types"].clone()), (json!(["authorization_code", "refresh_token"]), json!(["code"])), "{kind}: {c}");
    }

    // A device without a browser: public, no redirect URI, the device code grant.
    let device = get(&admin, "/console/clients/new?type=device").await;
    let grant = "urn:ietf:params:oauth:grant-type:device_code";
    assert!(checked(&device.html, grant) && checked(&device.html, "refresh_token") && !checked(&device.html, "authorization_code"), "{}", device.html);
    assert!(selected(&device.html, "none") && !device.html.contains("id=\"redirect_uris\""), "{}", device.html);
    let fields = vec![("type", "device"), ("client_name", "TV"), ("scope", "openid profile offline_access"), (Box::leak(format!("grant:{grant}").into_boxed_str()) as &str, "on"), ("grant:refresh_token", "on"), ("method", "none")];
    let made = send(fields).await;
    assert_eq!(made.status, 200, "{}", made.html);
    let made = Page { html: unescape(&made.html), ..made };
    assert!(!made.html.contains("id=\"secret\"") && made.html.contains("sign in on another screen"), "{}", made.html);
    assert!(made.html.contains(&format!("OIDC_DEVICE_AUTHORIZATION_URL={issuer}/device_authorization")), "{}", made.html);
    let id = made.html.split("<code id=\"created-client-id\">").nth(1).unwrap().split('<').next().unwrap().to_string();
    let (_, c) = s.admin(Method::GET, &format!("/admin/clients/{id}"), None).await;
    assert_eq!((c["token_endpoint_auth_method"].as_str(), c["redirect_uris"].clone()), (Some("none"), json!([])), "{c}");
    let res = s.http.post(s.url("/device_authorization")).form(&[("client_id", id.as_str())]).send().await.unwrap();
    assert_eq!(res.status(), 200, "the device type's client starts a device flow");
}

#[tokio::test]
async fn hybrid_and_implicit_response_types_are_ticked_on_the_form_and_kept_on_edit() {
    let s = TestServer::start().await;
    let root = operator(&s, "root", &["admin"]).await;
    let secret = totp(&s, &root).await;
    let admin = s.browser();
    enter(&admin, "root", Some(&secret)).await;
    let form = get(&admin, "/console/clients/new?type=web").await;
    assert!(form.html.contains("name=\"response_type:code id_token\""), "{}", form.html);
    assert!(!form.html.contains("name=\"response_type:code\""), "code is the sign-in grant's: {}", form.html);
    let fields = |csrf: String| {
        vec![
            ("csrf".to_string(), csrf),
            ("client_name".into(), "Legacy".into()),
            ("redirect_uris".into(), REDIRECT.into()),
            ("grant:authorization_code".into(), "on".into()),
            ("response_type:code id_token".into(), "on".into()),
            ("response_type:id_token".into(), "on".into()),
            ("method".into(), "client_secret_basic".into()),
            ("scope".into(), "openid".into()),
        ]
    };
    let mut create = fields(csrf(&form));
    create.push(("client_id".into(), "legacy".into()));
    let create: Vec<(&str, &str)> = create.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let created = post(&admin, "/console/clients", &create).await;
    assert_eq!(created.status, 200, "{}", created.html);
    let (_, c) = s.admin(Method::GET, "/admin/clients/legacy", None).await;
    assert_eq!(c["response_types"], json!(["code", "code id_token", "id_token"]), "{c}");
    assert_eq!(c["grant_types"], json!(["authorization_code", "implicit"]), "the implicit grant comes with them: {c}");

    // The edit form shows them ticked; saving it unchanged keeps them, unticking drops them.
    let page = get(&admin, "/console/clients/legacy").await;
    assert!(page.html.contains("name=\"response_type:id_token\" checked"), "{}", page.html);
    let edit = fields(csrf(&page));
    let edit: Vec<(&str, &str)> = edit.iter().map(|(k, v)| (k.as_str(), v.as_str())).filter(|(k, _)| *k != "response_type:id_token").collect();
    post(&admin, "/console/clients/legacy", &edit).await;
    let (_, c) = s.admin(Method::GET, "/admin/clients/legacy", None).await;
    assert_eq!(c["response_types"], json!(["code", "code id_token"]), "{c}");
}

/// Issue 31: the deployment's console lists, creates, disables and deletes tenants (the slug
/// typed again), each change audited with the console user; a tenant's console has no tenants
/// page, and neither page is offered to an auditor's hand.
#[tokio::test]
async fn the_deployments_console_manages_tenants() {
    let s = TestServer::start().await;
    let root = operator(&s, "root", &["admin"]).await;
    let secret = totp(&s, &root).await;
    let admin = s.browser();
    assert_eq!(enter(&admin, "root", Some(&secret)).await.status, 200);
    let page = get(&admin, "/console/tenants").await;
    assert_eq!(page.status, 200, "{}", page.html);
    assert!(page.html.contains("href=\"/console/tenants\" aria-current=\"page\""), "{}", page.html);
    let created = post(&admin, "/console/tenants", &[("csrf", &csrf(&page)), ("slug", "acme"), ("product_name", "Acme sign-in")]).await;
    assert_eq!(created.status, 200, "{}", created.html);
    assert!(created.html.contains(&format!("{}/t/acme", s.issuer())), "{}", created.html);
    let meta: Value = s.http.get(s.url("/t/acme/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    assert_eq!(meta["issuer"], format!("{}/t/acme", s.issuer()));
    // A bad slug is refused with a page, and nothing is created.
    let bad = post(&admin, "/console/tenants", &[("csrf", &csrf(&created)), ("slug", "Not A Slug")]).await;
    assert_eq!(bad.status, 400, "{}", bad.html);
    // Without the CSRF token: refused.
    let forged = post(&admin, "/console/tenants/acme", &[("action", "disable")]).await;
    assert_ne!(forged.status, 200, "{}", forged.html);
    assert_eq!(s.http.get(s.url("/t/acme/.well-known/openid-configuration")).send().await.unwrap().status(), 200);
    // Disable; delete with the wrong slug (refused), then the right one.
    let disabled = post(&admin, "/console/tenants/acme", &[("csrf", &csrf(&created)), ("action", "disable")]).await;
    assert_eq!(disabled.status, 200, "{}", disabled.html);
    assert_eq!(s.http.get(s.url("/t/acme/.well-known/openid-configuration")).send().await.unwrap().status(), 404);
    let wrong = post(&admin, "/console/tenants/acme", &[("csrf", &csrf(&disabled)), ("action", "delete"), ("confirm", "acm")]).await;
    assert_eq!(wrong.status, 400, "{}", wrong.html);
    let deleted = post(&admin, "/console/tenants/acme", &[("csrf", &csrf(&disabled)), ("action", "delete"), ("confirm", "acme")]).await;
    assert_eq!(deleted.status, 200, "{}", deleted.html);
    let (_, events) = s.admin(Method::GET, "/admin/audit?limit=20", None).await;
    let by_console: Vec<&str> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["detail"]["by"] == "console" && e["event"].as_str().unwrap().starts_with("tenant_"))
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    for e in ["tenant_created", "tenant_changed", "tenant_deletion_started"] {
        assert!(by_console.contains(&e), "{e} by the console: {events}");
    }
    // A tenant's own console: no tenants page (and no link to one).
    assert_eq!(s.admin(Method::POST, "/admin/tenants", Some(json!({"slug": "globex"}))).await.0, 201);
    let (st, v) = s.admin(Method::POST, "/t/globex/admin/users", Some(json!({"username": "gadmin", "password": PASSWORD, "roles": ["admin"]}))).await;
    assert_eq!(st, 201, "{v}");
    let (st, t) = s.admin(Method::POST, &format!("/t/globex/admin/users/{}/factors/totp", v["id"].as_str().unwrap()), None).await;
    assert_eq!(st, 201, "{t}");
    let tb = s.browser();
    let login = get(&tb, "/t/globex/console").await;
    assert!(login.html.contains("action=\"/t/globex/login\""), "{}", login.html);
    let mut home = post(&tb, "/t/globex/login", &[("challenge", &login.challenge()), ("username", "gadmin"), ("password", PASSWORD)]).await;
    home = post(&tb, "/t/globex/login/second-factor", &[("challenge", &home.challenge()), ("code", &code_at(t["secret"].as_str().unwrap(), now()).unwrap())]).await;
    assert_eq!(home.status, 200, "{}", home.html);
    assert!(home.html.contains("href=\"/t/globex/console/users\""), "the tenant's own console: {}", home.html);
    assert!(!home.html.contains("/console/tenants"), "{}", home.html);
    assert_eq!(get(&tb, "/t/globex/console/tenants").await.status, 404);
}
