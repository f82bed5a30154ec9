//! Tenants (issue 31, slice 4): created, changed, disabled and deleted at run time through the
//! admin API and the CLI; each served as its own issuer (`{issuer}/t/{slug}`, or a host of its
//! own); and nothing of one accepted by another: codes, access and refresh tokens, client
//! credentials, ID token hints, sessions. On SQLite and PostgreSQL.

use crate::harness::*;
use reqwest::Method;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The admin API at a tenant's issuer (`prefix` "" for the default).
pub(crate) async fn admin_at(s: &TestServer, prefix: &str, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
    s.admin(method, &format!("{prefix}{path}"), body).await
}

/// A confidential client `rp` (with refresh tokens) and a user `alice` in the tenant at
/// `prefix`; returns the client's secret.
pub(crate) async fn rp_and_alice(s: &TestServer, prefix: &str) -> String {
    let body = json!({"client_id": "rp", "redirect_uris": [REDIRECT], "grant_types": ["authorization_code", "refresh_token", "client_credentials"], "post_logout_redirect_uris": ["https://rp.example/bye"]});
    let (status, client) = admin_at(s, prefix, Method::POST, "/admin/clients", Some(body)).await;
    assert_eq!(status, 201, "{client}");
    let (status, user) = admin_at(s, prefix, Method::POST, "/admin/users", Some(json!({"username": "alice", "password": PASSWORD}))).await;
    assert_eq!(status, 201, "{user}");
    client["client_secret"].as_str().unwrap().to_string()
}

/// A browser that keeps cookies (and honours their paths).
pub(crate) fn browser() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).cookie_store(true).build().unwrap()
}

/// Sign `alice` in at the tenant at `prefix` (consenting if asked) and return the redirect's
/// parameters: a code, or the error a silent request (`prompt=none`) gets.
async fn authorize(s: &TestServer, b: &reqwest::Client, prefix: &str, extra: &[(&str, &str)]) -> HashMap<String, String> {
    authorize_as(s, b, prefix, "alice", extra).await
}

/// `authorize` for another user of the tenant.
pub(crate) async fn authorize_as(s: &TestServer, b: &reqwest::Client, prefix: &str, username: &str, extra: &[(&str, &str)]) -> HashMap<String, String> {
    let mut q = vec![("response_type", "code"), ("client_id", "rp"), ("redirect_uri", REDIRECT), ("scope", "openid offline_access"), ("state", "st"), ("nonce", "n")];
    q.extend_from_slice(extra);
    let mut res = b.get(s.url(&format!("{prefix}/authorize"))).query(&q).send().await.unwrap();
    for _ in 0..6 {
        let page = Page::from(res).await;
        if let Some(loc) = &page.location {
            if loc.starts_with(REDIRECT) {
                return url::Url::parse(loc).unwrap().query_pairs().into_owned().collect();
            }
            assert!(loc.starts_with(&format!("{prefix}/")), "a redirect within the tenant: {loc}");
            res = b.get(s.url(loc)).send().await.unwrap();
            continue;
        }
        let (login, consent) = (format!("action=\"{prefix}/login\""), format!("action=\"{prefix}/consent\""));
        res = if page.html.contains(&login) {
            let form = [("challenge", page.challenge()), ("username", username.into()), ("password", PASSWORD.into())];
            b.post(s.url(&format!("{prefix}/login"))).form(&form).send().await.unwrap()
        } else if page.html.contains(&consent) {
            b.post(s.url(&format!("{prefix}/consent"))).form(&[("challenge", page.challenge()), ("decision", "allow".into())]).send().await.unwrap()
        } else {
            panic!("an unexpected page ({}): {}", page.status, page.html);
        };
    }
    panic!("too many steps");
}

async fn token(s: &TestServer, prefix: &str, secret: &str, form: &[(&str, &str)]) -> (u16, Value) {
    let res = s.http.post(s.url(&format!("{prefix}/token"))).basic_auth("rp", Some(secret)).form(form).send().await.unwrap();
    (res.status().as_u16(), res.json().await.unwrap_or(Value::Null))
}

async fn userinfo(s: &TestServer, prefix: &str, at: &str) -> u16 {
    s.http.get(s.url(&format!("{prefix}/userinfo"))).bearer_auth(at).send().await.unwrap().status().as_u16()
}

pub(crate) async fn introspect(s: &TestServer, prefix: &str, secret: &str, t: &str) -> bool {
    let res = s.http.post(s.url(&format!("{prefix}/introspect"))).basic_auth("rp", Some(secret)).form(&[("token", t)]).send().await.unwrap();
    assert_eq!(res.status(), 200);
    res.json::<Value>().await.unwrap()["active"] == true
}

async fn discovery(s: &TestServer, path: &str) -> (u16, Value) {
    let res = s.http.get(s.url(path)).send().await.unwrap();
    (res.status().as_u16(), res.json().await.unwrap_or(Value::Null))
}

async fn every_credential_of_one_tenant_is_refused_by_the_other(postgres: bool) {
    let s = TestServer::start_on(postgres, |_| {}).await;
    let (status, acme) = s.admin(Method::POST, "/admin/tenants", Some(json!({"slug": "acme"}))).await;
    assert_eq!(status, 201, "{acme}");
    let acme_issuer = format!("{}/t/acme", s.issuer());
    assert_eq!(acme["issuer"], acme_issuer.as_str());
    assert_eq!(acme["state"], "active");

    // Its own issuer, discovery (both forms) and keys.
    let (status, meta) = discovery(&s, "/t/acme/.well-known/openid-configuration").await;
    assert_eq!(status, 200);
    assert_eq!(meta["issuer"], acme_issuer.as_str());
    assert_eq!(meta["token_endpoint"], format!("{acme_issuer}/token"));
    let (status, rfc8414) = discovery(&s, "/.well-known/oauth-authorization-server/t/acme").await;
    assert_eq!((status, &rfc8414["issuer"]), (200, &meta["issuer"]));
    let kids = |v: Value| v["keys"].as_array().unwrap().iter().map(|k| k["kid"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    let (acme_kids, default_kids) = (kids(discovery(&s, "/t/acme/jwks").await.1), kids(discovery(&s, "/jwks").await.1));
    assert!(!acme_kids.is_empty() && acme_kids.iter().all(|k| !default_kids.contains(k)), "keys of its own: {acme_kids:?} {default_kids:?}");
    for unknown in ["/t/nope/.well-known/openid-configuration", "/t/nope", "/.well-known/oauth-authorization-server/t/nope"] {
        let (status, err) = discovery(&s, unknown).await;
        assert_eq!((status, err["error"].as_str()), (404, Some("not_found")), "{unknown}: {err}");
    }

    // The same client id and username in both, each with its own secret and password hash.
    let acme_secret = rp_and_alice(&s, "/t/acme").await;
    let default_secret = rp_and_alice(&s, "").await;
    assert_ne!(acme_secret, default_secret);

    let b = browser();
    let code = authorize(&s, &b, "/t/acme", &[]).await["code"].clone();
    // The code at the default tenant (its own `rp`): unknown there, and still good at acme.
    let (status, err) = token(&s, "", &default_secret, &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!((status, err["error"].as_str()), (400, Some("invalid_grant")), "{err}");
    let (status, tokens) = token(&s, "/t/acme", &acme_secret, &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(status, 200, "{tokens}");
    let (at, rt, id_token) = (tokens["access_token"].as_str().unwrap(), tokens["refresh_token"].as_str().unwrap(), tokens["id_token"].as_str().unwrap());
    assert_eq!(jwt_parts(id_token).1["iss"], acme_issuer.as_str());
    assert_eq!(jwt_parts(at).1["iss"], acme_issuer.as_str());

    // Acme's access token: good at acme, refused by the default tenant's userinfo and
    // introspection.
    assert_eq!(userinfo(&s, "/t/acme", at).await, 200);
    assert_eq!(userinfo(&s, "", at).await, 401);
    assert!(introspect(&s, "/t/acme", &acme_secret, at).await);
    assert!(!introspect(&s, "", &default_secret, at).await);
    // Its refresh token, at the default tenant: unknown (and so still good at acme).
    let (status, err) = token(&s, "", &default_secret, &[("grant_type", "refresh_token"), ("refresh_token", rt)]).await;
    assert_eq!((status, err["error"].as_str()), (400, Some("invalid_grant")), "{err}");
    let (status, refreshed) = token(&s, "/t/acme", &acme_secret, &[("grant_type", "refresh_token"), ("refresh_token", rt)]).await;
    assert_eq!(status, 200, "{refreshed}");
    // Acme's client credentials are not the default tenant's `rp`, and the reverse.
    assert_eq!(token(&s, "", &acme_secret, &[("grant_type", "client_credentials")]).await.0, 401);
    assert_eq!(token(&s, "/t/acme", &default_secret, &[("grant_type", "client_credentials")]).await.0, 401);
    let (status, cc) = token(&s, "", &default_secret, &[("grant_type", "client_credentials")]).await;
    assert_eq!(status, 200);
    assert_eq!(userinfo(&s, "/t/acme", cc["access_token"].as_str().unwrap()).await, 401, "the default tenant's token at acme");
    assert!(!introspect(&s, "/t/acme", &acme_secret, cc["access_token"].as_str().unwrap()).await);

    // The browser signed in at acme has no session at the default tenant (cookies are scoped
    // to /t/acme, and sessions are the tenant's), but still has one at acme.
    let silent = authorize(&s, &b, "", &[("prompt", "none")]).await;
    assert_eq!(silent.get("error").map(String::as_str), Some("login_required"), "{silent:?}");
    assert!(authorize(&s, &b, "/t/acme", &[("prompt", "none")]).await.contains_key("code"));
    // Acme's ID token as a hint at the default tenant's logout: refused, and acme's session lives.
    let res = b.get(s.url("/logout")).query(&[("id_token_hint", id_token), ("post_logout_redirect_uri", "https://rp.example/bye")]).send().await.unwrap();
    assert_eq!(res.status(), 400);
    assert!(authorize(&s, &b, "/t/acme", &[("prompt", "none")]).await.contains_key("code"));

    // A tenant's admin API is its own; the list of tenants is the deployment's only.
    let (status, clients) = admin_at(&s, "/t/acme", Method::GET, "/admin/clients", None).await;
    assert_eq!((status, clients["clients"].as_array().unwrap().len()), (200, 1));
    assert_eq!(admin_at(&s, "/t/acme", Method::GET, "/admin/tenants", None).await.0, 404);

    // Disabled: not served (404), nothing lost; enabled again, the same token works.
    let (status, v) = s.admin(Method::PATCH, "/admin/tenants/acme", Some(json!({"state": "disabled"}))).await;
    assert_eq!((status, v["state"].as_str()), (200, Some("disabled")), "{v}");
    assert_eq!(discovery(&s, "/t/acme/.well-known/openid-configuration").await.0, 404);
    assert_eq!(userinfo(&s, "/t/acme", at).await, 404);
    assert_eq!(s.admin(Method::PATCH, "/admin/tenants/acme", Some(json!({"state": "active"}))).await.0, 200);
    assert_eq!(userinfo(&s, "/t/acme", refreshed["access_token"].as_str().unwrap()).await, 200);

    // Deleting: the slug typed again, and only once disabled.
    assert_eq!(s.admin(Method::DELETE, "/admin/tenants/acme", None).await.0, 400);
    assert_eq!(s.admin(Method::DELETE, "/admin/tenants/acme?confirm=acme", None).await.0, 409);
    assert_eq!(s.admin(Method::PATCH, "/admin/tenants/acme", Some(json!({"state": "disabled"}))).await.0, 200);
    let (status, v) = s.admin(Method::DELETE, "/admin/tenants/acme?confirm=acme", None).await;
    assert_eq!((status, v["state"].as_str()), (202, Some("deleting")), "{v}");
    assert_eq!(discovery(&s, "/t/acme/.well-known/openid-configuration").await.0, 404);
    let id = authrim::tenant::TenantId(acme["id"].as_u64().unwrap() as u32);
    let start = Instant::now();
    loop {
        let left = s
            .server
            .app
            .db
            .read(move |sql| {
                let mut n = 0;
                for t in authrim::tenant::rows::tenant_tables(sql.dialect()) {
                    // The change log keeps the announcements that the tenant is gone.
                    let keep = if t == "registry_changes" { " AND kind <> 'tenant'" } else { "" };
                    n += sql.query(&format!("SELECT COUNT(*) FROM {t} WHERE tenant_id = ?1{keep}"), authrim::params![id])?[0].i64(0)?;
                }
                Ok(n)
            })
            .await
            .unwrap();
        // Done when no row is left and the tenant is `deleted` (no longer listed).
        if left == 0 && s.admin(Method::GET, "/admin/tenants/acme", None).await.0 == 404 {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "{left} rows of the deleted tenant left");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The default tenant lost nothing; the slug is never given again.
    assert!(introspect(&s, "", &default_secret, cc["access_token"].as_str().unwrap()).await);
    assert_eq!(s.admin(Method::POST, "/admin/tenants", Some(json!({"slug": "acme"}))).await.0, 409);
}

#[tokio::test]
async fn every_credential_of_one_tenant_is_refused_by_the_other_on_sqlite() {
    every_credential_of_one_tenant_is_refused_by_the_other(false).await;
}

#[tokio::test]
async fn every_credential_of_one_tenant_is_refused_by_the_other_on_postgres() {
    every_credential_of_one_tenant_is_refused_by_the_other(true).await;
}

/// A tenant at a host of its own: its issuer is that host's, requests naming the host reach it
/// (any case), and the deployment's host still reaches the default tenant.
#[tokio::test]
async fn a_tenant_at_its_own_host_is_that_hosts_issuer() {
    let s = TestServer::start().await;
    let (status, v) = s.admin(Method::POST, "/admin/tenants", Some(json!({"slug": "globex", "hosts": ["auth.globex.test"]}))).await;
    assert_eq!(status, 201, "{v}");
    assert_eq!(v["issuer"], "http://auth.globex.test");
    for host in ["auth.globex.test", "Auth.Globex.TEST"] {
        let res = s.http.get(s.url("/.well-known/openid-configuration")).header("host", host).send().await.unwrap();
        let meta: Value = res.json().await.unwrap();
        assert_eq!(meta["issuer"], "http://auth.globex.test", "{host}");
    }
    assert_eq!(discovery(&s, "/.well-known/openid-configuration").await.1["issuer"], s.issuer().as_str());
    // Not also at /t/globex: a tenant has one issuer.
    assert_eq!(discovery(&s, "/t/globex/.well-known/openid-configuration").await.0, 404);
    // A host is one tenant's.
    let (status, err) = s.admin(Method::POST, "/admin/tenants", Some(json!({"slug": "other", "hosts": ["auth.globex.test"]}))).await;
    assert_eq!(status, 409, "{err}");
    for bad in [json!({"slug": "Bad"}), json!({"slug": "default"}), json!({"slug": "x", "hosts": ["no spaces.test"]}), json!({"slug": "x", "settings": {"unknown": 1}}), json!({})] {
        assert_eq!(s.admin(Method::POST, "/admin/tenants", Some(bad.clone())).await.0, 400, "{bad}");
    }
}

/// A request naming a tenant's host with a port reaches that tenant (a host stored without a
/// port matches it at any port; one stored with a port, at that port only, and before the
/// other); an IPv6 literal with a port, or another name with a port, reaches the default.
#[tokio::test]
async fn a_host_with_a_port_reaches_the_tenant_at_that_host() {
    let s = TestServer::start().await;
    for (slug, host) in [("acme", "auth.acme.test"), ("acme-alt", "auth.acme.test:9443")] {
        let (status, v) = s.admin(Method::POST, "/admin/tenants", Some(json!({"slug": slug, "hosts": [host]}))).await;
        assert_eq!(status, 201, "{v}");
    }
    let default = s.issuer();
    for (host, issuer) in [
        ("auth.acme.test:8443", "http://auth.acme.test"),
        ("Auth.Acme.TEST:443", "http://auth.acme.test"),
        ("auth.acme.test", "http://auth.acme.test"),
        ("auth.acme.test:9443", "http://auth.acme.test:9443"),
        ("[::1]:8443", default.as_str()),
        ("[::1]", default.as_str()),
        ("other.acme.test:8443", default.as_str()),
    ] {
        let res = s.http.get(s.url("/.well-known/openid-configuration")).header("host", host).send().await.unwrap();
        assert_eq!(res.status(), 200, "{host}");
        let meta: Value = res.json().await.unwrap();
        assert_eq!(meta["issuer"], issuer, "{host}");
    }
}

/// The CLI creates a tenant in the database; the running server serves it within a second or
/// so (the change log), and `--tenant` makes the CLI's commands act in it.
#[tokio::test]
async fn the_cli_manages_tenants_a_running_server_follows() {
    let s = TestServer::start().await;
    let out = crate::admin::cli(s.dir.path(), &["tenant", "create", "initech", "--product-name", "Initech"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = crate::admin::cli(s.dir.path(), &["--tenant", "initech", "client", "create", "--client-id", "rp", "--redirect-uri", REDIRECT]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let start = Instant::now();
    while discovery(&s, "/t/initech/.well-known/openid-configuration").await.0 != 200 {
        assert!(start.elapsed() < Duration::from_secs(5), "the server never served the CLI's tenant");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The client is the tenant's, not the default's.
    let start = Instant::now();
    while admin_at(&s, "/t/initech", Method::GET, "/admin/clients/rp", None).await.0 != 200 {
        assert!(start.elapsed() < Duration::from_secs(5), "the tenant's client never arrived");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(s.admin(Method::GET, "/admin/clients/rp", None).await.0, 404);
    // Its pages carry its name.
    let res = s.http.get(s.url("/t/initech/authorize")).query(&request_query("code", "rp", &[])).send().await.unwrap();
    let html = res.text().await.unwrap();
    assert!(html.contains("Initech"), "{html}");
    assert!(html.contains("action=\"/t/initech/login\""), "{html}");
    // An unknown tenant is an error, not the default tenant.
    let out = crate::admin::cli(s.dir.path(), &["--tenant", "nope", "client", "list"]);
    assert!(!out.status.success());
    // Disable, then delete: gone from the server, its rows removed by the CLI.
    assert!(crate::admin::cli(s.dir.path(), &["tenant", "disable", "initech"]).status.success());
    let out = crate::admin::cli(s.dir.path(), &["tenant", "delete", "initech", "--confirm", "initech"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let start = Instant::now();
    while discovery(&s, "/t/initech/.well-known/openid-configuration").await.0 != 404 {
        assert!(start.elapsed() < Duration::from_secs(5), "the deleted tenant is still served");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let out = crate::admin::cli(s.dir.path(), &["tenant", "list"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[]");
}

/// Two nodes on one PostgreSQL database: a tenant created on one is served by the other (the
/// change is announced at commit), with its keys and clients, and a token one node issued for
/// it is good at the other; disabled on one, the other stops serving it.
#[tokio::test]
async fn a_tenant_created_on_one_node_is_served_by_the_others() {
    let Some(url) = crate::pg_cluster::fresh_database().await else { return };
    let fleet = |c: &mut authrim::config::Config| {
        c.database_url = Some(url.clone());
        c.key_encryption_key = Some("dGVzdHMtc2hhcmUtb25lLWtleS1lbmNyeXB0aW9uLWs".into());
        c.issuer = "http://localhost:9999".into(); // one issuer for the fleet
    };
    let (a, b) = (TestServer::start_with(fleet).await, TestServer::start_with(fleet).await);
    assert_eq!(a.admin(Method::POST, "/admin/tenants", Some(json!({"slug": "acme"}))).await.0, 201);
    let start = Instant::now();
    while discovery(&b, "/t/acme/.well-known/openid-configuration").await.0 != 200 {
        assert!(start.elapsed() < Duration::from_secs(5), "the other node never served the new tenant");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    eprintln!("the other node served the new tenant after {:?}", start.elapsed());
    assert_eq!(discovery(&a, "/t/acme/jwks").await.1, discovery(&b, "/t/acme/jwks").await.1, "one key set");
    let secret = rp_and_alice(&a, "/t/acme").await;
    let start = Instant::now();
    while admin_at(&b, "/t/acme", Method::GET, "/admin/clients/rp", None).await.0 != 200 {
        assert!(start.elapsed() < Duration::from_secs(5), "the tenant's client never reached the other node");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (status, cc) = token(&a, "/t/acme", &secret, &[("grant_type", "client_credentials")]).await;
    assert_eq!(status, 200, "{cc}");
    assert!(introspect(&b, "/t/acme", &secret, cc["access_token"].as_str().unwrap()).await);
    assert_eq!(a.admin(Method::PATCH, "/admin/tenants/acme", Some(json!({"state": "disabled"}))).await.0, 200);
    let start = Instant::now();
    while discovery(&b, "/t/acme/.well-known/openid-configuration").await.0 != 404 {
        assert!(start.elapsed() < Duration::from_secs(5), "the other node still serves the disabled tenant");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The three URLs the MCP authorization specification has a client try for an issuer with a
/// path, for a tenant under a deployment that has a path itself (`http://host/tenant1`, behind
/// a prefix-stripping proxy, so `…/tenant1/t/acme`) and for the deployment: RFC 8414's
/// path-inserted metadata, OpenID's name path-inserted, OpenID's appended. The second was
/// 404 (no route), so a client that tries it before or instead of RFC 8414's found no
/// authorization server. Another issuer's path after either name stays 404.
#[tokio::test]
async fn a_path_tenants_metadata_is_found_at_each_url_mcp_clients_try() {
    let s = TestServer::start_with(|c| c.issuer = format!("{}/tenant1", c.issuer)).await;
    let (status, acme) = s.admin(Method::POST, "/admin/tenants", Some(json!({"slug": "acme"}))).await;
    assert_eq!(status, 201, "{acme}");
    let (acme_issuer, deployment) = (format!("{}/t/acme", s.issuer()), s.issuer());
    assert_eq!(acme["issuer"], acme_issuer.as_str());
    for (issuer, appended, inserted) in [
        (&acme_issuer, "/t/acme/.well-known/openid-configuration", "/tenant1/t/acme"),
        (&deployment, "/.well-known/openid-configuration", "/tenant1"),
    ] {
        for path in [format!("/.well-known/oauth-authorization-server{inserted}"), format!("/.well-known/openid-configuration{inserted}"), appended.to_string()] {
            let (status, meta) = discovery(&s, &path).await;
            assert_eq!(status, 200, "{path}: {meta}");
            assert_eq!(meta["issuer"], issuer.as_str(), "{path}");
            assert_eq!(meta["token_endpoint"], format!("{issuer}/token"), "{path}");
        }
    }
    for name in ["/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"] {
        for other in ["/t/acme", "/other/t/acme", "/tenant1/t/nope", "/tenant1/t/acme/x", "/tenant1/x", "/tenant1/"] {
            let (status, err) = discovery(&s, &format!("{name}{other}")).await;
            assert_eq!((status, err["error"].as_str()), (404, Some("not_found")), "{name}{other}: {err}");
        }
    }
}
