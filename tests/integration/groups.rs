//! Groups and roles (issue 32, slice 1): managed through a tenant's admin API, carried into
//! ID tokens, access tokens, userinfo and introspection as each client takes them (names or
//! ids, filtered, bounded, renamed), read again at every issuance and refresh; another tenant
//! sees none of it. On SQLite and PostgreSQL.

use crate::harness::*;
use crate::tenants::{authorize_as, browser, rp_and_alice};
use reqwest::Method;
use serde_json::{json, Value};

async fn sign_in(s: &TestServer, secret: &str, user: &str) -> Value {
    let r = authorize_as(s, &browser(), "", user, &[]).await;
    let form = [("grant_type", "authorization_code"), ("code", r["code"].as_str()), ("redirect_uri", REDIRECT)];
    let res = s.http.post(s.url("/token")).basic_auth("rp", Some(secret)).form(&form).send().await.unwrap();
    assert_eq!(res.status(), 200);
    res.json().await.unwrap()
}

fn claims(jwt: &Value) -> Value {
    jwt_parts(jwt.as_str().unwrap()).1
}

async fn introspection(s: &TestServer, secret: &str, token: &Value) -> Value {
    let res = s.http.post(s.url("/introspect")).basic_auth("rp", Some(secret)).form(&[("token", token.as_str().unwrap())]).send().await.unwrap();
    res.json().await.unwrap()
}

async fn userinfo(s: &TestServer, token: &Value) -> Value {
    let res = s.http.get(s.url("/userinfo")).bearer_auth(token.as_str().unwrap()).send().await.unwrap();
    assert_eq!(res.status(), 200);
    res.json().await.unwrap()
}

async fn ok(s: &TestServer, method: Method, path: &str, body: Option<Value>, want: u16) -> Value {
    let (status, v) = s.admin(method, path, body).await;
    assert_eq!(status, want, "{path}: {v}");
    v
}

async fn groups_and_roles_reach_tokens_as_each_client_takes_them(postgres: bool) {
    let s = TestServer::start_on(postgres, |c| {
        c.token_max_groups = 2;
        c.directory_max_roles_per_client = 3;
    })
    .await;
    let secret = rp_and_alice(&s, "").await;
    s.user("bob", json!({})).await;

    // Groups, checked as they are saved: names unique without case, nesting without cycles.
    let eng = ok(&s, Method::POST, "/admin/groups", Some(json!({"display_name": "Engineering", "external_id": "E-1"})), 201).await;
    ok(&s, Method::POST, "/admin/groups", Some(json!({"display_name": "Backend"})), 201).await;
    ok(&s, Method::POST, "/admin/groups", Some(json!({"display_name": "Oncall"})), 201).await;
    for (bad, want) in [(json!({"display_name": "engineering"}), 409), (json!({"display_name": " "}), 400), (json!({}), 400), (json!({"display_name": "x", "surprise": 1}), 400)] {
        assert_eq!(s.admin(Method::POST, "/admin/groups", Some(bad.clone())).await.0, want, "{bad}");
    }
    ok(&s, Method::PUT, "/admin/groups/Engineering/members/groups/Backend", None, 204).await;
    assert_eq!(s.admin(Method::PUT, "/admin/groups/backend/members/groups/engineering", None).await.0, 409, "a cycle");
    assert_eq!(s.admin(Method::PUT, "/admin/groups/Backend/members/groups/Backend", None).await.0, 409);
    ok(&s, Method::PUT, "/admin/groups/Backend/members/users/alice", None, 204).await;
    ok(&s, Method::PUT, "/admin/groups/Backend/members/users/alice", None, 204).await;
    assert_eq!(s.admin(Method::PUT, "/admin/groups/Backend/members/users/nobody", None).await.0, 404);
    assert_eq!(s.admin(Method::PUT, "/admin/groups/Nope/members/users/alice", None).await.0, 404);
    assert_eq!(s.admin(Method::PUT, "/admin/groups/Backend/members/robots/alice", None).await.0, 404);
    let members = ok(&s, Method::GET, "/admin/groups/Engineering/members", None, 200).await;
    assert_eq!(members["members"], json!([{"type": "group", "id": members["members"][0]["id"], "display_name": "Backend", "source": "local"}]));

    // Roles a client defines, assigned to a group: its members hold them through nesting.
    ok(&s, Method::PUT, "/admin/clients/rp/roles/deploy", Some(json!({"description": "may deploy"})), 204).await;
    ok(&s, Method::PUT, "/admin/clients/rp/roles/read", None, 204).await;
    assert_eq!(s.admin(Method::PUT, "/admin/clients/rp/roles/has%20space", None).await.0, 400);
    assert_eq!(s.admin(Method::PUT, "/admin/clients/nobody/roles/deploy", None).await.0, 404);
    ok(&s, Method::PUT, "/admin/clients/rp/roles/third", None, 204).await;
    assert_eq!(s.admin(Method::PUT, "/admin/clients/rp/roles/fourth", None).await.0, 400, "directory_max_roles_per_client");
    ok(&s, Method::DELETE, "/admin/clients/rp/roles/third", None, 204).await;
    ok(&s, Method::PUT, "/admin/clients/rp/roles/deploy/assignments/groups/Engineering", None, 204).await;
    assert_eq!(s.admin(Method::PUT, "/admin/clients/rp/roles/nope/assignments/users/alice", None).await.0, 404);
    let mine = ok(&s, Method::GET, "/admin/users/alice/groups", None, 200).await;
    assert_eq!(mine["groups"].as_array().unwrap().len(), 1, "{mine}");
    assert_eq!(mine["effective_groups"].as_array().unwrap().len(), 2, "{mine}");
    assert_eq!(mine["roles"]["rp"], json!(["deploy"]));

    // A client that asks for no groups still gets its own roles; nothing else.
    let t = sign_in(&s, &secret, "alice").await;
    let id = claims(&t["id_token"]);
    assert_eq!(id["roles"], json!(["deploy"]));
    assert!(id.get("groups").is_none(), "{id}");

    // Names, everywhere: ID token, access token, introspection, userinfo.
    for (bad, field) in [(json!({"groups_claim": "all"}), "groups_claim"), (json!({"groups_claim_name": "sub"}), "groups_claim_name"), (json!({"roles_claim_name": "groups"}), "roles_claim_name")] {
        let (status, v) = s.admin(Method::PATCH, "/admin/clients/rp", Some(bad)).await;
        assert_eq!(status, 400, "{field}: {v}");
    }
    ok(&s, Method::PATCH, "/admin/clients/rp", Some(json!({"groups_claim": "names"})), 200).await;
    let t = sign_in(&s, &secret, "alice").await;
    let want = json!(["Backend", "Engineering"]);
    assert_eq!(claims(&t["id_token"])["groups"], want);
    let at = claims(&t["access_token"]);
    assert_eq!((&at["groups"], &at["roles"]), (&want, &json!(["deploy"])));
    let i = introspection(&s, &secret, &t["access_token"]).await;
    assert_eq!((&i["groups"], &i["roles"]), (&want, &json!(["deploy"])));
    let u = userinfo(&s, &t["access_token"]).await;
    assert_eq!((&u["groups"], &u["roles"]), (&want, &json!(["deploy"])));

    // Ids; renamed claims (ID token and userinfo; access tokens keep RFC 9068's names).
    ok(&s, Method::PATCH, "/admin/clients/rp", Some(json!({"groups_claim": "ids", "groups_claim_name": "team", "roles_claim_name": "app_roles"})), 200).await;
    let t = sign_in(&s, &secret, "alice").await;
    let id = claims(&t["id_token"]);
    assert!(id["team"].as_array().unwrap().iter().any(|g| g == &eng["id"]), "{id}");
    assert_eq!(id["app_roles"], json!(["deploy"]));
    assert!(id.get("groups").is_none() && id.get("roles").is_none());
    assert_eq!(userinfo(&s, &t["access_token"]).await["app_roles"], json!(["deploy"]));
    assert_eq!(claims(&t["access_token"])["roles"], json!(["deploy"]));

    // Filters: only groups holding one of the client's roles; only by prefix (without case).
    ok(&s, Method::PATCH, "/admin/clients/rp", Some(json!({"groups_claim": "names", "groups_claim_name": "", "roles_claim_name": "", "groups_assigned_only": true})), 200).await;
    assert_eq!(claims(&sign_in(&s, &secret, "alice").await["id_token"])["groups"], json!(["Engineering"]));
    ok(&s, Method::PATCH, "/admin/clients/rp", Some(json!({"groups_assigned_only": false, "groups_prefixes": ["back"]})), 200).await;
    assert_eq!(claims(&sign_in(&s, &secret, "alice").await["id_token"])["groups"], json!(["Backend"]));

    // More groups than `token_max_groups`: none listed, the overage said.
    ok(&s, Method::PATCH, "/admin/clients/rp", Some(json!({"groups_prefixes": []})), 200).await;
    ok(&s, Method::PUT, "/admin/groups/Oncall/members/users/alice", None, 204).await;
    let t = sign_in(&s, &secret, "alice").await;
    let id = claims(&t["id_token"]);
    assert!(id.get("groups").is_none(), "{id}");
    assert_eq!(id["groups_overage"], true);
    assert_eq!(claims(&t["access_token"])["groups_overage"], true);
    assert_eq!(id["roles"], json!(["deploy"]), "roles are not cut by the groups' bound");
    ok(&s, Method::DELETE, "/admin/groups/Oncall/members/users/alice", None, 204).await;
    assert_eq!(s.admin(Method::DELETE, "/admin/groups/Oncall/members/users/alice", None).await.0, 404);

    // A user in no group and with no role: no such claims.
    let b = claims(&sign_in(&s, &secret, "bob").await["id_token"]);
    assert!(b.get("groups").is_none() && b.get("roles").is_none() && b.get("groups_overage").is_none(), "{b}");

    // A refresh reads the directory as it is now.
    ok(&s, Method::DELETE, "/admin/groups/Engineering/members/groups/Backend", None, 204).await;
    let form = [("grant_type", "refresh_token"), ("refresh_token", t["refresh_token"].as_str().unwrap())];
    let res = s.http.post(s.url("/token")).basic_auth("rp", Some(&secret)).form(&form).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let refreshed: Value = res.json().await.unwrap();
    let at = claims(&refreshed["access_token"]);
    assert_eq!(at["groups"], json!(["Backend"]), "{at}");
    assert!(at.get("roles").is_none(), "the role came through Engineering: {at}");

    // Another tenant sees none of it and cannot name it.
    ok(&s, Method::POST, "/admin/tenants", Some(json!({"slug": "other"})), 201).await;
    rp_and_alice(&s, "/t/other").await;
    assert_eq!(ok(&s, Method::GET, "/t/other/admin/groups", None, 200).await["groups"], json!([]));
    assert_eq!(s.admin(Method::GET, "/t/other/admin/groups/Engineering", None).await.0, 404);
    assert_eq!(s.admin(Method::GET, &format!("/t/other/admin/groups/{}", eng["id"].as_str().unwrap()), None).await.0, 404);
    assert_eq!(ok(&s, Method::GET, "/t/other/admin/clients/rp/roles", None, 200).await["roles"], json!([]));
    assert_eq!(s.admin(Method::PUT, "/t/other/admin/clients/rp/roles/deploy/assignments/users/alice", None).await.0, 404);

    // Deleting a group, a user or a client takes what hung on it; each change is audited.
    ok(&s, Method::PUT, "/admin/clients/rp/roles/read/assignments/users/alice", None, 204).await;
    let assigned = ok(&s, Method::GET, "/admin/clients/rp/roles/read/assignments", None, 200).await;
    assert_eq!(assigned["assignments"][0]["username"], "alice");
    ok(&s, Method::DELETE, "/admin/groups/Backend", None, 204).await;
    assert_eq!(s.admin(Method::GET, "/admin/groups/Backend", None).await.0, 404);
    assert_eq!(ok(&s, Method::GET, "/admin/users/alice/groups", None, 200).await["effective_groups"], json!([]));
    ok(&s, Method::DELETE, "/admin/clients/rp/roles/read", None, 204).await;
    assert_eq!(s.admin(Method::GET, "/admin/clients/rp/roles/read/assignments", None).await.0, 404);
    let audit = ok(&s, Method::GET, "/admin/audit", None, 200).await.to_string();
    for event in ["group_created", "group_member_added", "group_member_removed", "group_deleted", "client_role_defined", "client_role_removed", "role_assigned"] {
        assert!(audit.contains(event), "{event} audited");
    }
}

#[tokio::test]
async fn groups_and_roles_reach_tokens_as_each_client_takes_them_on_sqlite() {
    groups_and_roles_reach_tokens_as_each_client_takes_them(false).await;
}

#[tokio::test]
async fn groups_and_roles_reach_tokens_as_each_client_takes_them_on_postgres() {
    groups_and_roles_reach_tokens_as_each_client_takes_them(true).await;
}

/// The CLI changes the directory in the database, checked as the admin API checks it, and a
/// running server follows (SQLite's change log); every change is audited `by: cli`.
#[tokio::test]
async fn the_cli_manages_groups_and_roles_and_the_server_follows() {
    let s = TestServer::start().await;
    let secret = rp_and_alice(&s, "").await;
    let cli = |args: &[&str]| crate::admin::cli(s.dir.path(), args);
    let run = |args: &[&str]| {
        let out = cli(args);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    run(&["group", "create", "Platform"]);
    run(&["group", "create", "SRE", "--external-id", "x-1"]);
    assert!(!cli(&["group", "create", "platform"]).status.success(), "names are unique without case");
    run(&["group", "add", "Platform", "--group", "SRE"]);
    assert!(!cli(&["group", "add", "SRE", "--group", "Platform"]).status.success(), "a cycle");
    assert!(!cli(&["group", "add", "SRE", "--user", "nobody"]).status.success());
    assert!(!cli(&["group", "add", "SRE"]).status.success(), "--user or --group");
    run(&["group", "add", "SRE", "--user", "alice"]);
    run(&["role", "define", "rp", "admin", "--description", "all of it"]);
    assert!(!cli(&["role", "define", "nobody", "admin"]).status.success());
    assert!(!cli(&["role", "assign", "rp", "missing", "--user", "alice"]).status.success());
    run(&["role", "assign", "rp", "admin", "--group", "Platform"]);
    let updated = run(&["client", "update", "rp", "--groups-claim", "names", "--groups-prefix", "sr"]);
    assert_eq!((&updated["groups_claim"], &updated["groups_prefixes"]), (&json!("names"), &json!(["sr"])), "{updated}");
    assert!(!cli(&["client", "update", "rp", "--groups-claim", "everything"]).status.success());
    let roles = run(&["role", "list", "rp"]);
    assert_eq!(roles[0]["assignments"][0]["type"], "group", "{roles}");
    let shown = run(&["group", "show", "SRE"]);
    assert_eq!(shown["members"][0]["type"], "user", "{shown}");

    let start = std::time::Instant::now();
    loop {
        let (_, v) = s.admin(Method::GET, "/admin/users/alice/groups", None).await;
        let (_, rp) = s.admin(Method::GET, "/admin/clients/rp", None).await;
        if v["roles"]["rp"] == json!(["admin"]) && v["effective_groups"].as_array().unwrap().len() == 2 && rp["groups_claim"] == "names" {
            break;
        }
        assert!(start.elapsed() < std::time::Duration::from_secs(5), "the server never followed the CLI: {v}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let at = claims(&sign_in(&s, &secret, "alice").await["access_token"]);
    assert_eq!((&at["roles"], &at["groups"]), (&json!(["admin"]), &json!(["SRE"])), "{at}");

    run(&["group", "remove", "Platform", "--group", "SRE"]);
    assert!(!cli(&["group", "remove", "Platform", "--group", "SRE"]).status.success(), "not a member any more");
    run(&["group", "rename", "SRE", "Site Reliability"]);
    run(&["role", "unassign", "rp", "admin", "--group", "Platform"]);
    run(&["role", "remove", "rp", "admin"]);
    run(&["group", "delete", "Platform"]);
    let start = std::time::Instant::now();
    loop {
        let (_, v) = s.admin(Method::GET, "/admin/groups", None).await;
        if v["groups"] == json!([{"id": v["groups"][0]["id"], "display_name": "Site Reliability", "external_id": "x-1", "created_at": v["groups"][0]["created_at"], "version": v["groups"][0]["version"]}]) {
            break;
        }
        assert!(start.elapsed() < std::time::Duration::from_secs(5), "the server never followed the CLI: {v}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(claims(&sign_in(&s, &secret, "alice").await["access_token"]).get("roles").is_none());
    let log = run(&["audit", "--event", "group_member_added"]);
    assert_eq!(log[0]["detail"]["by"], "cli", "{log}");
}
