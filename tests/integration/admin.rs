//! The admin API and the CLI.

use crate::harness::*;
use reqwest::Method;
use serde_json::json;

#[tokio::test]
async fn admin_api_requires_the_admin_token() {
    let s = TestServer::start().await;
    let res = s.http.get(s.url("/admin/clients")).send().await.unwrap();
    assert_eq!(res.status(), 401);
    let res = s.http.get(s.url("/admin/clients")).bearer_auth("wrong").send().await.unwrap();
    assert_eq!(res.status(), 401);
    assert_eq!(res.json::<serde_json::Value>().await.unwrap()["error"], "invalid_token");

    let off = TestServer::start_with(|c| c.admin_token = None).await;
    let res = off.http.get(off.url("/admin/clients")).bearer_auth("").send().await.unwrap();
    assert_eq!(res.status(), 404);
}

#[tokio::test]
async fn client_lifecycle_and_secret_shown_once() {
    let s = TestServer::start().await;
    let (st, created) = s
        .admin(Method::POST, "/admin/clients", Some(json!({"redirect_uris": [REDIRECT], "grant_types": ["authorization_code"], "scope": "openid email"})))
        .await;
    assert_eq!(st, 201);
    let id = created["client_id"].as_str().unwrap().to_string();
    let secret = created["client_secret"].as_str().unwrap().to_string();
    assert_eq!(created["token_endpoint_auth_method"], "client_secret_basic");
    let (_, shown) = s.admin(Method::GET, &format!("/admin/clients/{id}"), None).await;
    assert!(shown.get("client_secret").is_none());
    let (_, listed) = s.admin(Method::GET, "/admin/clients", None).await;
    assert!(!listed.to_string().contains(&secret), "the secret is never listed");
    // Stored hashed: the plain secret is nowhere in the database files.
    let raw = std::fs::read(s.dir.path().join("authrim.db")).unwrap();
    let wal = std::fs::read(s.dir.path().join("authrim.db-wal")).unwrap_or_default();
    assert!(!raw.windows(secret.len()).chain(wal.windows(secret.len())).any(|w| w == secret.as_bytes()));

    let (st, updated) = s.admin(Method::PATCH, &format!("/admin/clients/{id}"), Some(json!({"redirect_uris": ["https://new.example/cb"]}))).await;
    assert_eq!(st, 200);
    assert_eq!(updated["redirect_uris"], json!(["https://new.example/cb"]));
    let (st, rotated) = s.admin(Method::POST, &format!("/admin/clients/{id}/secret"), None).await;
    assert_eq!(st, 200);
    assert_ne!(rotated["client_secret"].as_str().unwrap(), secret);
    assert_eq!(s.admin(Method::DELETE, &format!("/admin/clients/{id}"), None).await.0, 204);
    assert_eq!(s.admin(Method::GET, &format!("/admin/clients/{id}"), None).await.0, 404);
    assert_eq!(s.admin(Method::DELETE, &format!("/admin/clients/{id}"), None).await.0, 404);
}

#[tokio::test]
async fn invalid_client_metadata_is_refused() {
    let s = TestServer::start().await;
    for body in [
        json!({"redirect_uris": ["http://evil.example/cb"]}),
        json!({"redirect_uris": [REDIRECT], "grant_types": ["password"]}),
        json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt"}),
        json!({"redirect_uris": [REDIRECT], "scope": "openid bad\\scope"}),
        json!({"redirect_uris": [REDIRECT], "allowed_resources": ["not a uri"]}),
        json!({"token_endpoint_auth_method": "none", "grant_types": ["client_credentials"]}),
        json!({"redirect_uris": [REDIRECT], "unknown_field": 1}),
        json!({}),
    ] {
        let (st, v) = s.admin(Method::POST, "/admin/clients", Some(body.clone())).await;
        assert_eq!(st, 400, "{body}");
        assert!(v["error"] == "invalid_client_metadata" || v["error"] == "invalid_request", "{v}");
    }
    let res = s.http.post(s.url("/admin/clients")).bearer_auth(ADMIN).header("content-type", "application/json").body("{nope").send().await.unwrap();
    assert_eq!(res.status(), 400);
    s.client("dup", json!({})).await;
    let (st, _) = s.admin(Method::POST, "/admin/clients", Some(json!({"client_id": "dup", "redirect_uris": [REDIRECT]}))).await;
    assert_eq!(st, 400);
}

#[tokio::test]
async fn user_lifecycle_never_shows_password_hash() {
    let s = TestServer::start().await;
    let sub = s.user("alice", json!({"email": "alice@example.com"})).await;
    let (_, listed) = s.admin(Method::GET, "/admin/users", None).await;
    assert!(!listed.to_string().contains("argon2"), "{listed}");
    let (st, _) = s.admin(Method::POST, "/admin/users", Some(json!({"username": "alice", "password": PASSWORD}))).await;
    assert_eq!(st, 409, "duplicate username");
    let (st, _) = s.admin(Method::POST, "/admin/users", Some(json!({"username": "bob", "password": "short"}))).await;
    assert_eq!(st, 400);
    let (st, _) = s.admin(Method::POST, "/admin/users", Some(json!({"username": "bob", "password": PASSWORD, "claims": {"email_verified": "yes"}}))).await;
    assert_eq!(st, 400);
    let (st, u) = s.admin(Method::PATCH, &format!("/admin/users/{sub}"), Some(json!({"claims": {"name": "Alice"}}))).await;
    assert_eq!((st, u["claims"]["name"].as_str()), (200, Some("Alice")));
    assert_eq!(s.admin(Method::DELETE, &format!("/admin/users/{sub}"), None).await.0, 204);
    assert_eq!(s.admin(Method::GET, &format!("/admin/users/{sub}"), None).await.0, 404);
}

pub fn cli(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_authrim"))
        .args(args)
        .env("AUTHRIM_DATA_DIR", dir)
        .env("AUTHRIM_SQLITE_SYNCHRONOUS", "NORMAL")
        .env_remove("AUTHRIM_CONFIG")
        .output()
        .expect("run the authrim binary")
}

#[tokio::test]
async fn cli_edits_reach_a_running_server() {
    let s = TestServer::start().await;
    let out = cli(s.dir.path(), &["client", "create", "--client-id", "from-cli", "--redirect-uri", REDIRECT]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let created: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let secret = created["client_secret"].as_str().unwrap().to_string();
    let out = cli(s.dir.path(), &["user", "create", "--username", "carol", "--password", PASSWORD, "--email", "carol@example.com"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = cli(s.dir.path(), &["client", "create", "--redirect-uri", "http://evil.example/cb"]);
    assert!(!out.status.success(), "invalid metadata must fail");

    // Within a few seconds the server knows both, without a restart.
    let mut known = false;
    for _ in 0..50 {
        if s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).client("from-cli").is_some() && s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).user_by_login("carol").is_some() {
            known = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(known, "the server did not pick up CLI changes");
    let b = s.browser();
    let code = s.code_for(&b, "from-cli", "carol", &[]).await["code"].clone();
    let (st, _, _) = s.token(Some(("from-cli", &secret)), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200);

    let out = cli(s.dir.path(), &["client", "delete", "from-cli"]);
    assert!(out.status.success());
    let out = cli(s.dir.path(), &["client", "show", "from-cli"]);
    assert!(!out.status.success());
}

#[tokio::test]
async fn key_rotation_from_the_cli_reaches_a_running_server_without_breaking_old_tokens() {
    let s = TestServer::start_with(|c| {
        c.key_cache_ttl = 1;
        c.key_publish_delay = 2;
    })
    .await;
    let (id, secret) = s.client("rp", json!({})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let code = s.code_for(&b, &id, "alice", &[]).await["code"].clone();
    let (_, before, _) = s.token(Some((&id, secret.as_deref().unwrap())), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    let old_kid = jwt_parts(before["access_token"].as_str().unwrap()).0["kid"].as_str().unwrap().to_string();

    let out = cli(s.dir.path(), &["keys", "rotate"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let new_kid = serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["kid"].as_str().unwrap().to_string();

    // Within a few cache refreshes the new key signs; it was in the JWKS before that.
    let mut signed_with_new = false;
    for _ in 0..80 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        if s.server.app.tenants.default_tenant().keys.active_kid() == new_kid {
            signed_with_new = true;
            break;
        }
    }
    assert!(signed_with_new, "the rotated key never started signing");
    let jwks: serde_json::Value = s.http.get(s.url("/jwks")).send().await.unwrap().json().await.unwrap();
    let kids: Vec<&str> = jwks["keys"].as_array().unwrap().iter().map(|k| k["kid"].as_str().unwrap()).collect();
    assert!(kids.contains(&old_kid.as_str()) && kids.contains(&new_kid.as_str()), "{kids:?}");
    assert_eq!(s.userinfo(before["access_token"].as_str().unwrap()).await.0, 200, "old tokens keep working");
    let code = s.code_for(&b, &id, "alice", &[]).await["code"].clone();
    let (_, after, _) = s.token(Some((&id, secret.as_deref().unwrap())), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(jwt_parts(after["id_token"].as_str().unwrap()).0["kid"], new_kid.as_str());
}

#[tokio::test]
async fn login_names_are_unique_whatever_the_case() {
    let s = TestServer::start().await;
    s.client("rp", json!({})).await;
    let alice = s.user("alice", json!({"email": "alice@example.com"})).await;
    let bob = s.user("bob", json!({})).await;
    for body in [
        json!({"username": "ALICE", "password": PASSWORD}),
        json!({"username": "ａｌｉｃｅ", "password": PASSWORD}),
        json!({"username": "Alice@Example.com", "password": PASSWORD}),
        json!({"username": "carol", "password": PASSWORD, "claims": {"email": "ALICE@example.com"}}),
    ] {
        let (st, v) = s.admin(Method::POST, "/admin/users", Some(body.clone())).await;
        assert_eq!((st, v["error"].as_str()), (409, Some("invalid_request")), "{body}: {v}");
    }
    // Renaming bob to one of alice's names, exactly or in another case: 409, and bob is unchanged.
    for name in ["alice", "Alice", "alice@example.com"] {
        let (st, v) = s.admin(Method::PATCH, &format!("/admin/users/{bob}"), Some(json!({"username": name}))).await;
        assert_eq!(st, 409, "{name}: {v}");
    }
    let (_, b) = s.admin(Method::GET, &format!("/admin/users/{bob}"), None).await;
    assert_eq!(b["username"], "bob");
    // Alice may change the case of her own name.
    let (st, _) = s.admin(Method::PATCH, &format!("/admin/users/{alice}"), Some(json!({"username": "Alice"}))).await;
    assert_eq!(st, 200);
    // The CLI is held to the same rule (it writes to the database itself).
    let out = cli(s.dir.path(), &["user", "create", "--username", "ALICE", "--password", PASSWORD]);
    assert!(!out.status.success(), "the CLI created a second ALICE");
    assert!(String::from_utf8_lossy(&out.stderr).contains("belongs to another user"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = cli(s.dir.path(), &["user", "create", "--username", "dave", "--password", PASSWORD]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// An administration command run where no database is refuses to make an empty one (and says
/// where it looked) unless told `--init`; every command says which database it uses.
#[test]
fn the_cli_does_not_create_an_empty_database_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("nowhere");
    let out = cli(&data, &["client", "list"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("no Authrim database at") && err.contains("authrim.db") && err.contains("--init"), "{err}");
    assert!(!data.join("authrim.db").exists(), "nothing was created");

    let out = cli(&data, &["--init", "client", "list"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("SQLite database") && err.contains("authrim.db"), "{err}");
    assert!(data.join("authrim.db").exists());
    // Now there is one: no flag needed. `--password-stdin` reads a piped password.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_authrim"))
        .args(["user", "create", "--username", "erin", "--password-stdin"])
        .env("AUTHRIM_DATA_DIR", &data)
        .env_remove("AUTHRIM_CONFIG")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(b"a long enough password\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let user: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(user["username"], "erin");
    // At a terminal (a pty from util-linux's `script`), it prompts and does not echo.
    let command = format!("{} user create --username tty --password-stdin", env!("CARGO_BIN_EXE_authrim"));
    match std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env("AUTHRIM_DATA_DIR", &data)
        .env_remove("AUTHRIM_CONFIG")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
    {
        Ok(mut child) => {
            let mut stdin = child.stdin.take().unwrap();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(500));
                let _ = stdin.write_all(b"typed-at-the-terminal\n");
            });
            let out = child.wait_with_output().unwrap();
            let shown = String::from_utf8_lossy(&out.stdout);
            assert!(shown.contains("password:"), "a prompt: {shown}");
            assert!(!shown.contains("typed-at-the-terminal"), "no echo: {shown}");
            assert!(shown.contains("\"username\": \"tty\""), "{shown}");
        }
        Err(e) => eprintln!("no `script` here ({e}): the terminal prompt is not checked"),
    }
    // `migrate` creates the database by itself (that is what it is for).
    let fresh = dir.path().join("fresh");
    let out = cli(&fresh, &["migrate"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// The admin API's OpenAPI document lists every operation the admin router answers, each
/// behind the admin token, with the input schemas.
#[tokio::test]
async fn the_openapi_document_describes_every_admin_operation() {
    let s = TestServer::start().await;
    let res = reqwest::get(s.url("/admin/openapi.json")).await.unwrap();
    assert_eq!(res.status(), 200);
    let doc: serde_json::Value = res.json().await.unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    let expected = [
        ("/admin/clients", &["get", "post"][..]),
        ("/admin/clients/{id}", &["get", "patch", "delete"]),
        ("/admin/clients/{id}/secret", &["post"]),
        ("/admin/users", &["get", "post"]),
        ("/admin/users/{id}", &["get", "patch", "delete"]),
        ("/admin/users/{id}/sessions", &["get", "delete"]),
        ("/admin/users/{id}/sessions/{sid}", &["delete"]),
        ("/admin/users/{id}/consents/{client_id}", &["delete"]),
        ("/admin/users/{id}/factors", &["get", "delete"]),
        ("/admin/users/{id}/factors/totp", &["post"]),
        ("/admin/users/{id}/factors/{factor_id}", &["delete"]),
        ("/admin/users/{id}/recovery-codes", &["post"]),
        ("/admin/audit", &["get"]),
        ("/admin/registration-tokens", &["post"]),
        ("/admin/tenants", &["get", "post"]),
        ("/admin/tenants/{slug}", &["get", "patch", "delete"]),
        ("/admin/credentials", &["get", "post"]),
        ("/admin/credentials/{id}", &["delete"]),
        ("/admin/organizations", &["get", "post"]),
        ("/admin/organizations/{org}", &["get", "patch", "delete"]),
        ("/admin/organizations/{org}/members", &["get"]),
        ("/admin/organizations/{org}/members/{user}", &["put", "delete"]),
        ("/admin/organizations/{org}/invitations", &["get", "post"]),
        ("/admin/organizations/{org}/invitations/{id}", &["delete"]),
        ("/admin/groups", &["get", "post"]),
        ("/admin/groups/{group}", &["get", "patch", "delete"]),
        ("/admin/groups/{group}/members", &["get"]),
        ("/admin/groups/{group}/members/{kind}/{member}", &["put", "delete"]),
        ("/admin/clients/{client}/roles", &["get"]),
        ("/admin/clients/{client}/roles/{role}", &["put", "delete"]),
        ("/admin/clients/{client}/roles/{role}/assignments", &["get"]),
        ("/admin/clients/{client}/roles/{role}/assignments/{kind}/{principal}", &["put", "delete"]),
        ("/admin/users/{id}/groups", &["get"]),
        ("/admin/clients/{client}/provisioning", &["get", "put", "delete"]),
        ("/admin/clients/{client}/provisioning/resync", &["post"]),
        ("/admin/saml/service-providers", &["post"]),
    ];
    let paths = doc["paths"].as_object().unwrap();
    assert_eq!(paths.len(), expected.len(), "{:?}", paths.keys().collect::<Vec<_>>());
    // OpenAPI 3.1 §4.8.10.1: operation ids are unique (utoipa takes the handler's name).
    let mut ids: Vec<&str> = paths.values().flat_map(|item| item.as_object().unwrap().values().filter_map(|op| op["operationId"].as_str())).collect();
    let count = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), count, "operation ids repeat: {ids:?}");
    for (path, methods) in expected {
        for m in methods {
            let op = &doc["paths"][path][m];
            assert!(op.is_object(), "{m} {path} is not documented");
            assert_eq!(op["security"], json!([{"admin_token": []}]), "{m} {path}");
            // What the document says is there, is: without the token, 401 (not 404/405).
            let concrete = path.replace("{id}", "x").replace("{sid}", "x").replace("{client_id}", "x").replace("{factor_id}", "x").replace("{slug}", "x").replace("{org}", "x").replace("{user}", "x").replace("{group}", "x").replace("{kind}", "users").replace("{member}", "x").replace("{client}", "x").replace("{role}", "x").replace("{principal}", "x");
            let st = s.http.request(m.to_uppercase().parse().unwrap(), s.url(&concrete)).send().await.unwrap().status();
            assert_eq!(st, 401, "{m} {concrete}");
        }
    }
    for schema in ["ClientInput", "UserInput", "TokenExchangePolicy", "RegistrationTokenRequest", "Enrol", "NewTenant", "TenantChange", "SettingsPatch", "Overrides", "NewCredential", "Credential", "OrganizationInput", "MemberInput", "InvitationInput", "GroupInput", "RoleInput"] {
        assert!(doc["components"]["schemas"][schema].is_object(), "{schema}");
    }
    // What a tenant may set: in the change (SettingsPatch) and as shown (Overrides).
    for key in ["product_name", "default_locale", "password_min_length", "signup", "signup_required", "signup_verify_email", "mfa_policy", "mail_from", "identity_providers", "resource_servers"] {
        for schema in ["SettingsPatch", "Overrides"] {
            assert!(doc["components"]["schemas"][schema]["properties"][key].is_object(), "{schema}.{key}");
        }
    }
    assert_eq!(doc["components"]["securitySchemes"]["admin_token"]["scheme"], "bearer");
}
