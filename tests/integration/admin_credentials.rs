//! Admin API credentials scoped to a tenant (issue 31, slice 5): a tenant's credential works
//! on its own tenant's admin API only, never on another's nor on the tenants; revoked or
//! expired, refused at once; the deployment token still works everywhere; deleting a tenant
//! deletes its credentials; the secret is stored hashed. On SQLite and PostgreSQL.

use crate::harness::*;
use reqwest::Method;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// A request to the admin API with `token` as the bearer; the status, the
/// `WWW-Authenticate` header and the body.
async fn call(s: &TestServer, token: &str, method: Method, path: &str, body: Option<Value>) -> (u16, Option<String>, Value) {
    let mut req = s.http.request(method, s.url(path)).bearer_auth(token);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let res = req.send().await.unwrap();
    let status = res.status().as_u16();
    let challenge = res.headers().get("www-authenticate").map(|v| v.to_str().unwrap().to_string());
    (status, challenge, res.json().await.unwrap_or(Value::Null))
}

/// A credential of the tenant at `prefix`, made with the deployment token: (id, token).
async fn credential(s: &TestServer, prefix: &str, body: Value) -> (String, String) {
    let (status, v) = s.admin(Method::POST, &format!("{prefix}/admin/credentials"), Some(body)).await;
    assert_eq!(status, 201, "{v}");
    (v["id"].as_str().unwrap().to_string(), v["token"].as_str().unwrap().to_string())
}

/// One request of each admin route family, with the statuses its owner gets (never 401).
/// The user `alice` and the client `rp` exist in each tenant.
fn families(user: &str) -> Vec<(Method, String, Option<Value>)> {
    vec![
        (Method::GET, "/admin/clients".into(), None),
        (Method::GET, "/admin/clients/rp".into(), None),
        (Method::PATCH, "/admin/clients/rp".into(), Some(json!({"client_name": "RP"}))),
        (Method::POST, "/admin/clients/rp/secret".into(), None),
        (Method::GET, "/admin/users".into(), None),
        (Method::GET, format!("/admin/users/{user}"), None),
        (Method::GET, format!("/admin/users/{user}/sessions"), None),
        (Method::GET, format!("/admin/users/{user}/factors"), None),
        (Method::POST, format!("/admin/users/{user}/recovery-codes"), None),
        (Method::GET, "/admin/audit".into(), None),
        (Method::POST, "/admin/registration-tokens".into(), None),
        (Method::GET, "/admin/credentials".into(), None),
    ]
}

/// A client `rp` and a user `alice` in the tenant at `prefix`; alice's id.
async fn rp_and_alice(s: &TestServer, prefix: &str) -> String {
    let (status, v) = s.admin(Method::POST, &format!("{prefix}/admin/clients"), Some(json!({"client_id": "rp", "redirect_uris": [REDIRECT]}))).await;
    assert_eq!(status, 201, "{v}");
    let (status, v) = s.admin(Method::POST, &format!("{prefix}/admin/users"), Some(json!({"username": "alice", "password": PASSWORD}))).await;
    assert_eq!(status, 201, "{v}");
    v["id"].as_str().unwrap().to_string()
}

async fn admin_credentials_are_scoped_to_their_tenant(postgres: bool) {
    let s = TestServer::start_on(postgres, |_| {}).await;
    let mut ids = Vec::new();
    for slug in ["acme", "globex"] {
        let (status, v) = s.admin(Method::POST, "/admin/tenants", Some(json!({"slug": slug}))).await;
        assert_eq!(status, 201, "{v}");
        ids.push(authrim::tenant::TenantId(v["id"].as_u64().unwrap() as u32));
    }
    let mut users = std::collections::HashMap::new();
    for prefix in ["", "/t/acme", "/t/globex"] {
        users.insert(prefix, rp_and_alice(&s, prefix).await);
    }
    let (acme_id, acme) = credential(&s, "/t/acme", json!({"name": "acme ci"})).await;
    let (_, default) = credential(&s, "", json!({"name": "default ops"})).await;
    assert!(acme.starts_with("atk_") && default.starts_with("atk_"));

    // Each credential works on its own tenant's every route family, and on no other tenant's.
    for (owner, token) in [("/t/acme", &acme), ("", &default)] {
        for prefix in ["", "/t/acme", "/t/globex"] {
            for (method, path, body) in families(&users[prefix]) {
                let (status, challenge, v) = call(&s, token, method.clone(), &format!("{prefix}{path}"), body).await;
                if prefix == owner {
                    assert!((200..300).contains(&status), "{owner}'s credential at {method} {prefix}{path}: {status} {v}");
                } else {
                    assert_eq!((status, v["error"].as_str()), (401, Some("invalid_token")), "{owner}'s credential at {method} {prefix}{path}: {v}");
                    assert!(challenge.is_some_and(|c| c.starts_with("Bearer")), "{method} {prefix}{path}: a Bearer challenge");
                }
            }
        }
        // The tenants are the deployment administrator's only, at any issuer.
        for prefix in ["", "/t/acme"] {
            for (method, path) in [(Method::GET, "/admin/tenants"), (Method::GET, "/admin/tenants/acme"), (Method::POST, "/admin/tenants"), (Method::PATCH, "/admin/tenants/globex"), (Method::DELETE, "/admin/tenants/globex?confirm=globex")] {
                let (status, challenge, v) = call(&s, token, method.clone(), &format!("{prefix}{path}"), Some(json!({"slug": "evil", "state": "disabled"}))).await;
                assert_eq!((status, v["error"].as_str()), (401, Some("invalid_token")), "{owner}'s credential at {method} {prefix}{path}: {v}");
                assert!(challenge.is_some(), "{method} {prefix}{path}");
            }
        }
    }
    // The deployment token: everywhere, the tenants included.
    for prefix in ["", "/t/acme", "/t/globex"] {
        for (method, path, body) in families(&users[prefix]) {
            let (status, _, v) = call(&s, ADMIN, method.clone(), &format!("{prefix}{path}"), body).await;
            assert!((200..300).contains(&status), "the deployment token at {method} {prefix}{path}: {status} {v}");
        }
    }
    assert_eq!(s.admin(Method::GET, "/admin/tenants", None).await.0, 200);
    assert_eq!(s.admin(Method::GET, "/admin/tenants/globex", None).await.0, 200);
    // Nothing of globex changed by the refused requests.
    assert_eq!(s.admin(Method::GET, "/admin/tenants/globex", None).await.1["state"], "active");
    assert_eq!(s.admin(Method::GET, "/admin/tenants/evil", None).await.0, 404);

    // Listed without secrets; acme's list holds acme's only.
    let (status, _, listed) = call(&s, &acme, Method::GET, "/t/acme/admin/credentials", None).await;
    assert_eq!(status, 200);
    let list = listed["credentials"].as_array().unwrap();
    assert_eq!(list.len(), 1, "{listed}");
    assert_eq!((list[0]["id"].as_str(), list[0]["name"].as_str(), &list[0]["scopes"]), (Some(acme_id.as_str()), Some("acme ci"), &json!(["admin"])));
    assert!(!listed.to_string().contains(acme.splitn(3, '_').nth(2).unwrap()) && list[0].get("token").is_none());

    // What it does is recorded as its doing, in its tenant's log; its making too.
    let alice = &users["/t/acme"];
    let (status, _, _) = call(&s, &acme, Method::DELETE, &format!("/t/acme/admin/users/{alice}"), None).await;
    assert_eq!(status, 204);
    let (_, _, log) = call(&s, &acme, Method::GET, "/t/acme/admin/audit?event=user_deleted", None).await;
    assert_eq!(log["events"][0]["detail"]["credential"], acme_id.as_str(), "{log}");
    let (_, _, log) = call(&s, &acme, Method::GET, "/t/acme/admin/audit?event=admin_credential_created", None).await;
    assert_eq!(log["events"][0]["detail"]["id"], acme_id.as_str(), "{log}");
    let (_, _, log) = call(&s, &default, Method::GET, "/admin/audit?event=admin_credential_created", None).await;
    assert_eq!(log["events"].as_array().unwrap().len(), 1, "the default tenant's log holds its own only: {log}");

    // A credential makes and revokes its tenant's credentials; another tenant's cannot.
    let (status, _, second) = call(&s, &acme, Method::POST, "/t/acme/admin/credentials", Some(json!({"name": "second", "expires_in": 3600}))).await;
    assert_eq!(status, 201, "{second}");
    let (second_id, second_token) = (second["id"].as_str().unwrap().to_string(), second["token"].as_str().unwrap().to_string());
    assert!(second["expires_at"].as_u64().is_some());
    assert_eq!(call(&s, &default, Method::DELETE, &format!("/t/acme/admin/credentials/{second_id}"), None).await.0, 401);
    assert_eq!(call(&s, &default, Method::DELETE, &format!("/admin/credentials/{second_id}"), None).await.0, 404, "not the default tenant's");
    for bad in [json!({"name": ""}), json!({"name": "x", "expires_in": 0}), json!({"name": "x", "scopes": ["everything"]}), json!({"name": "x", "surprise": 1}), json!({})] {
        assert_eq!(call(&s, &acme, Method::POST, "/t/acme/admin/credentials", Some(bad.clone())).await.0, 400, "{bad}");
    }

    // Revoked: refused at once, and listed as revoked.
    let (status, _, revoked) = call(&s, &acme, Method::DELETE, &format!("/t/acme/admin/credentials/{second_id}"), None).await;
    assert_eq!(status, 200, "{revoked}");
    assert!(revoked["revoked_at"].as_u64().is_some());
    let (status, challenge, v) = call(&s, &second_token, Method::GET, "/t/acme/admin/clients", None).await;
    assert_eq!((status, v["error"].as_str()), (401, Some("invalid_token")));
    assert!(challenge.is_some());
    assert_eq!(call(&s, &acme, Method::DELETE, "/t/acme/admin/credentials/0000", None).await.0, 404);

    // Expired: refused from its expiry on.
    // (3 s: it works for 2 s at least, time enough for the first request even on a slow run.)
    let (_, short) = credential(&s, "/t/acme", json!({"name": "short", "expires_in": 3})).await;
    assert_eq!(call(&s, &short, Method::GET, "/t/acme/admin/clients", None).await.0, 200);
    let start = Instant::now();
    while call(&s, &short, Method::GET, "/t/acme/admin/clients", None).await.0 != 401 {
        assert!(start.elapsed() < Duration::from_secs(5), "an expired credential still works");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A secret that is not the credential's, and a token in no format of ours.
    let flipped = format!("{}{}", &acme[..acme.len() - 1], if acme.ends_with('A') { 'B' } else { 'A' });
    for wrong in [flipped, format!("{acme}x"), "atk_".into(), "atk_zz_x".into(), "nonsense".into()] {
        assert_eq!(call(&s, &wrong, Method::GET, "/t/acme/admin/clients", None).await.0, 401, "{wrong}");
    }

    // A disabled tenant's credentials stop working (the tenant is not served); deleting the
    // tenant deletes them.
    assert_eq!(s.admin(Method::PATCH, "/admin/tenants/acme", Some(json!({"state": "disabled"}))).await.0, 200);
    assert_eq!(call(&s, &acme, Method::GET, "/t/acme/admin/clients", None).await.0, 404);
    let acme_tenant = ids[0];
    let count = |tenant: authrim::tenant::TenantId| {
        let db = s.server.app.db.clone();
        async move { db.read(move |sql| sql.query("SELECT COUNT(*) FROM admin_credentials WHERE tenant_id = ?1", authrim::params![tenant])?[0].i64(0)).await.unwrap() }
    };
    assert_eq!(count(acme_tenant).await, 3);
    assert_eq!(s.admin(Method::DELETE, "/admin/tenants/acme?confirm=acme", None).await.0, 202);
    let start = Instant::now();
    while count(acme_tenant).await != 0 {
        assert!(start.elapsed() < Duration::from_secs(10), "the deleted tenant's credentials are still stored");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The default tenant's is untouched.
    assert_eq!(call(&s, &default, Method::GET, "/admin/clients", None).await.0, 200);

    // Stored hashed: no secret is in the database file.
    if !postgres {
        let raw = std::fs::read(s.dir.path().join("authrim.db")).unwrap();
        let wal = std::fs::read(s.dir.path().join("authrim.db-wal")).unwrap_or_default();
        for token in [&default, &second_token] {
            let secret = token.splitn(3, '_').nth(2).unwrap().as_bytes();
            assert!(!raw.windows(secret.len()).chain(wal.windows(secret.len())).any(|w| w == secret), "a secret in the database");
        }
    }
}

#[tokio::test]
async fn admin_credentials_are_scoped_to_their_tenant_on_sqlite() {
    admin_credentials_are_scoped_to_their_tenant(false).await;
}

#[tokio::test]
async fn admin_credentials_are_scoped_to_their_tenant_on_postgres() {
    if crate::pg_cluster::fresh_database().await.is_none() {
        return;
    }
    admin_credentials_are_scoped_to_their_tenant(true).await;
}

/// Two nodes on one PostgreSQL: a credential made on one works on the other, and once revoked
/// on one is refused by the other at its next request (each request reads the database).
#[tokio::test]
async fn a_credential_revoked_on_one_node_is_refused_by_the_other_at_once() {
    let Some(url) = crate::pg_cluster::fresh_database().await else { return };
    let fleet = |c: &mut authrim::config::Config| {
        c.database_url = Some(url.clone());
        c.key_encryption_key = Some("dGVzdHMtc2hhcmUtb25lLWtleS1lbmNyeXB0aW9uLWs".into());
        c.issuer = "http://localhost:9999".into();
    };
    let (a, b) = (TestServer::start_with(fleet).await, TestServer::start_with(fleet).await);
    let (id, token) = credential(&a, "", json!({"name": "fleet"})).await;
    assert_eq!(call(&b, &token, Method::GET, "/admin/clients", None).await.0, 200);
    assert_eq!(call(&a, &token, Method::DELETE, &format!("/admin/credentials/{id}"), None).await.0, 200);
    assert_eq!(call(&b, &token, Method::GET, "/admin/clients", None).await.0, 401);
}

/// Without `AUTHRIM_ADMIN_TOKEN` the admin API stays off (404) to everyone but the holder of a
/// tenant credential (made with the CLI); a bad credential is told 401. The CLI lists and
/// revokes, and records both in the tenant's audit log.
#[tokio::test]
async fn the_cli_makes_credentials_that_work_without_the_deployment_token() {
    let s = TestServer::start_with(|c| c.admin_token = None).await;
    assert_eq!(call(&s, "anything", Method::GET, "/admin/clients", None).await.0, 404);
    let out = crate::admin::cli(s.dir.path(), &["tenant", "create", "initech"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = crate::admin::cli(s.dir.path(), &["--tenant", "initech", "admin-credential", "create", "--name", "ops", "--expires-in", "3600"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let made: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (id, token) = (made["id"].as_str().unwrap().to_string(), made["token"].as_str().unwrap().to_string());
    assert_eq!(made["scopes"], json!(["admin"]));
    let start = Instant::now();
    while call(&s, &token, Method::GET, "/t/initech/admin/clients", None).await.0 != 200 {
        assert!(start.elapsed() < Duration::from_secs(5), "the server never served the CLI's tenant to its credential");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(call(&s, &token, Method::GET, "/admin/clients", None).await.0, 401, "not the default tenant's");
    assert_eq!(call(&s, &token, Method::GET, "/admin/tenants", None).await.0, 401);
    let out = crate::admin::cli(s.dir.path(), &["--tenant", "initech", "admin-credential", "list"]);
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed[0]["id"], id.as_str());
    assert!(!String::from_utf8_lossy(&out.stdout).contains(&token));
    let out = crate::admin::cli(s.dir.path(), &["admin-credential", "list"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[]", "the default tenant has none");
    assert!(!crate::admin::cli(s.dir.path(), &["admin-credential", "revoke", &id]).status.success(), "not the default tenant's");
    assert!(!crate::admin::cli(s.dir.path(), &["admin-credential", "create", "--name", ""]).status.success());
    let out = crate::admin::cli(s.dir.path(), &["--tenant", "initech", "admin-credential", "revoke", &id]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(call(&s, &token, Method::GET, "/t/initech/admin/clients", None).await.0, 401, "revoked, at once");
    let out = crate::admin::cli(s.dir.path(), &["--tenant", "initech", "audit", "--event", "admin_credential_revoked"]);
    let log: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((log[0]["detail"]["id"].as_str(), log[0]["detail"]["by"].as_str()), (Some(id.as_str()), Some("cli")), "{log}");
}
