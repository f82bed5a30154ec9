//! Several `authrim` processes on one PostgreSQL (issue 6): a login, a redemption, a refresh
//! and a revocation each on a different node; a refresh race spread over the nodes; a node
//! killed mid-load; a database outage with its recovery; and a logout on one node honoured by
//! all, its back-channel token delivered once.

use crate::harness::*;
use crate::pg_cluster::{cluster_script, fresh_database};
use serde_json::{json, Value};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Node {
    child: Child,
    base: String,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

const KEK: &str = "bm9kZXMtc2hhcmUtb25lLWtleS1lbmNyeXB0aW9uLWs";

fn spawn_node(url: &str, log_dir: &std::path::Path, n: usize, extra: &[(&str, &str)]) -> Node {
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let log = std::fs::File::create(log_dir.join(format!("node{n}.log"))).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_authrim"));
    cmd.arg("serve")
        .env("AUTHRIM_DATABASE_URL", url)
        .env("AUTHRIM_KEY_ENCRYPTION_KEY", KEK)
        .env("AUTHRIM_DATA_DIR", log_dir.join(format!("data{n}")))
        .env("AUTHRIM_LISTEN", format!("127.0.0.1:{port}"))
        .env("AUTHRIM_ISSUER", "http://localhost:9999") // one issuer for the whole fleet
        .env("AUTHRIM_ADMIN_TOKEN", ADMIN)
        .env("AUTHRIM_DATABASE_POOL_SIZE", "8")
        // Strict rotation (exactly one winner among concurrent uses); an `extra` may set a grace.
        .env("AUTHRIM_REFRESH_REUSE_GRACE", "0")
        .env_remove("AUTHRIM_CONFIG")
        .stdout(Stdio::null())
        .stderr(log);
    for (k, v) in extra {
        cmd.env(k, v);
    }
    Node { child: cmd.spawn().expect("start authrim"), base }
}

/// Three nodes on `url`, started at once, each healthy.
async fn three_nodes(url: &str, logs: &std::path::Path) -> Vec<Node> {
    // The suite's back-channel receivers listen on loopback, as with `test_config`.
    let nodes: Vec<Node> = (1..=3).map(|n| spawn_node(url, logs, n, &[("AUTHRIM_FETCH_ALLOW_PRIVATE_ADDRESSES", "true")])).collect();
    for n in &nodes {
        wait_healthy(&n.base).await;
    }
    nodes
}

/// Two nodes on the database at `url`, answering.
async fn two_nodes(url: &str, logs: &std::path::Path) -> Vec<Node> {
    let nodes: Vec<Node> = (1..=2).map(|n| spawn_node(url, logs, n, &[])).collect();
    for n in &nodes {
        wait_healthy(&n.base).await;
    }
    nodes
}

fn http() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

async fn refresh(http: &reqwest::Client, base: &str, secret: &str, token: &str) -> (u16, Value) {
    let res = http
        .post(format!("{base}/token"))
        .basic_auth("rp", Some(secret))
        .form(&[("grant_type", "refresh_token"), ("refresh_token", token)])
        .send()
        .await
        .unwrap();
    (res.status().as_u16(), res.json().await.unwrap_or(Value::Null))
}

/// Register the client and user on `admin_node` and wait until every node knows them.
async fn client_and_user(http: &reqwest::Client, admin_node: &Node, nodes: &[&Node]) -> String {
    let secret = register_rp_and_alice(http, &admin_node.base).await;
    for n in nodes {
        let start = Instant::now();
        while http.get(format!("{}/admin/clients/rp", n.base)).bearer_auth(ADMIN).send().await.unwrap().status() != 200 {
            assert!(start.elapsed() < Duration::from_secs(5), "client never reached {}", n.base);
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    secret
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_nodes_share_one_database() {
    let Some(url) = fresh_database().await else { return };
    let logs = tempfile::tempdir().unwrap();
    let nodes = three_nodes(&url, logs.path()).await;
    let (n1, n2, n3) = (&nodes[0], &nodes[1], &nodes[2]);
    let http = http();
    // Three nodes started at once on an empty database: one schema, one signing key (and one
    // encryption key of each kind).
    let mut jwks = Vec::new();
    for n in &nodes {
        jwks.push(http.get(format!("{}/jwks", n.base)).send().await.unwrap().json::<Value>().await.unwrap());
    }
    let uses: Vec<&str> = jwks[0]["keys"].as_array().unwrap().iter().map(|k| k["use"].as_str().unwrap()).collect();
    assert_eq!(uses, ["sig", "enc", "enc"], "{jwks:?}");
    assert!(jwks.iter().all(|j| j == &jwks[0]), "every node publishes the same key set");
    let migrate = Command::new(env!("CARGO_BIN_EXE_authrim"))
        .arg("migrate")
        .env("AUTHRIM_DATABASE_URL", &url)
        .env("AUTHRIM_KEY_ENCRYPTION_KEY", KEK)
        .env_remove("AUTHRIM_CONFIG")
        .output()
        .unwrap();
    assert!(migrate.status.success());
    assert_eq!(String::from_utf8_lossy(&migrate.stdout).trim(), format!("schema at version {}", authrim::db::postgres::latest_version()), "already there: nothing to do");
    let secret = client_and_user(&http, n1, &[n2, n3]).await;

    // Log in on node 1, redeem on node 2, refresh on node 3.
    let code = login_at(&n1.base).await;
    let res = http
        .post(format!("{}/token", n2.base))
        .basic_auth("rp", Some(&secret))
        .form(&[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200, "code redeemed on another node");
    let first: Value = res.json().await.unwrap();
    let (st, second) = refresh(&http, &n3.base, &secret, first["refresh_token"].as_str().unwrap()).await;
    assert_eq!(st, 200, "refresh on a third node: {second}");
    let access = second["access_token"].as_str().unwrap().to_string();
    let userinfo = |base: String, token: String| {
        let http = http.clone();
        async move { http.get(format!("{base}/userinfo")).bearer_auth(token).send().await.unwrap().status().as_u16() }
    };
    assert_eq!(userinfo(n2.base.clone(), access.clone()).await, 200);

    // Revoke on node 1; node 2 refuses it within the stated bound (1 s by default).
    let res = http.post(format!("{}/revoke", n1.base)).basic_auth("rp", Some(&secret)).form(&[("token", access.as_str())]).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let revoked_at = Instant::now();
    loop {
        match userinfo(n2.base.clone(), access.clone()).await {
            401 => break,
            200 | 503 => assert!(revoked_at.elapsed() < Duration::from_secs(1), "node 2 still accepts a revoked token"),
            other => panic!("unexpected status {other}"),
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }

    // The same refresh token presented at once on every node: exactly one rotation.
    let current = second["refresh_token"].as_str().unwrap().to_string();
    let mut set = tokio::task::JoinSet::new();
    for i in 0..30 {
        let (http, base, secret, token) = (http.clone(), nodes[i % 3].base.clone(), secret.clone(), current.clone());
        set.spawn(async move { refresh(&http, &base, &secret, &token).await });
    }
    let outcomes = set.join_all().await;
    let winners: Vec<&Value> = outcomes.iter().filter(|(st, _)| *st == 200).map(|(_, b)| b).collect();
    assert_eq!(winners.len(), 1, "exactly one winner: {outcomes:?}");
    assert!(outcomes.iter().all(|(st, b)| *st == 200 || (*st == 400 && b["error"] == "invalid_grant")), "{outcomes:?}");
    // The losers presented a superseded token: the family is revoked everywhere.
    let (st, _) = refresh(&http, &n2.base, &secret, winners[0]["refresh_token"].as_str().unwrap()).await;
    assert_eq!(st, 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_a_node_mid_load_loses_no_acknowledged_rotation() {
    let Some(url) = fresh_database().await else { return };
    let logs = tempfile::tempdir().unwrap();
    // A grace period lets a chain whose last request died with the node continue: a rotation
    // committed but never answered is re-sent, not taken for theft.
    let extra = [("AUTHRIM_REFRESH_REUSE_GRACE", "60"), ("AUTHRIM_ENABLE_TEST_ENDPOINTS", "true")];
    let survivor = spawn_node(&url, logs.path(), 1, &extra);
    let mut victim = spawn_node(&url, logs.path(), 2, &extra);
    wait_healthy(&survivor.base).await;
    wait_healthy(&victim.base).await;
    let http = http();
    let secret = client_and_user(&http, &survivor, &[&victim]).await;
    let users: Value = http.get(format!("{}/admin/users", survivor.base)).bearer_auth(ADMIN).send().await.unwrap().json().await.unwrap();
    let user_id = users["users"][0]["id"].as_str().unwrap().to_string();
    let seeded = admin_post(&http, &survivor.base, "/test/bulk/tokens", json!({"client_id": "rp", "user_ids": [user_id], "per_user": 16,
        "kind": "valid", "token_type": "refresh_token", "scope": "openid offline_access"}))
    .await;
    let chains: Vec<String> = seeded["tokens"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()).collect();

    // Each chain rotates against the victim until it dies; the last token it was answered with
    // is what the client holds.
    let mut set = tokio::task::JoinSet::new();
    let answered = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for token in chains {
        let (http, base, secret, answered) = (http.clone(), victim.base.clone(), secret.clone(), answered.clone());
        set.spawn(async move {
            let (mut held, mut acknowledged) = (token, 0);
            loop {
                let res = http
                    .post(format!("{base}/token"))
                    .basic_auth("rp", Some(&secret))
                    .form(&[("grant_type", "refresh_token"), ("refresh_token", held.as_str())])
                    .send()
                    .await;
                let Ok(res) = res else { return (held, acknowledged) };
                if res.status() != 200 {
                    return (held, acknowledged);
                }
                let Ok(body) = res.json::<Value>().await else { return (held, acknowledged) };
                held = body["refresh_token"].as_str().unwrap().to_string();
                acknowledged += 1;
                answered.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        });
    }
    // Killed once the load is well under way (counted, not timed: a busy machine is slow).
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while answered.load(std::sync::atomic::Ordering::Relaxed) < 64 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    victim.child.kill().unwrap(); // SIGKILL, mid-load
    victim.child.wait().unwrap();
    let outcomes = set.join_all().await;
    let total: usize = outcomes.iter().map(|(_, n)| n).sum();
    assert!(total > 16, "the load did run before the kill ({total} rotations)");
    // Every chain continues on the surviving node from the last token it was answered with.
    for (held, acknowledged) in outcomes {
        let (st, body) = refresh(&http, &survivor.base, &secret, &held).await;
        assert_eq!(st, 200, "chain with {acknowledged} acknowledged rotations lost its last one: {body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_outage_gives_503_and_recovers() {
    if fresh_database().await.is_none() {
        return;
    }
    // A cluster of our own, to take down.
    let cluster = tempfile::tempdir().unwrap();
    let dir = cluster.path().join("pg");
    let port = free_port().to_string();
    let pg = |args: &[&str]| {
        let out = Command::new(cluster_script()).args(args).output().expect("run scripts/pg.sh");
        assert!(out.status.success(), "pg.sh {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let url = pg(&["start", dir.to_str().unwrap(), &port]);
    let server = TestServer::start_with(|c| {
        c.database_url = Some(url.clone());
        c.key_encryption_key = Some(KEK.into());
        c.database_timeout_ms = 500;
        c.revocation_max_staleness_ms = 500;
    })
    .await;
    let (id, secret) = server.client("rp", json!({"grant_types": ["authorization_code", "refresh_token"]})).await;
    let secret = secret.unwrap();
    server.user("alice", json!({})).await;
    let code = server.code_for(&server.browser(), &id, "alice", &[("scope", "openid offline_access")]).await["code"].clone();
    let (st, tokens, _) = server.token(Some((&id, &secret)), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200);
    let (access, mut refresh_token) = (tokens["access_token"].as_str().unwrap().to_string(), tokens["refresh_token"].as_str().unwrap().to_string());

    pg(&["kill", dir.to_str().unwrap()]);
    let (st, body, _) = server.token(Some((&id, &secret)), &[("grant_type", "refresh_token"), ("refresh_token", &refresh_token)]).await;
    assert_eq!((st, body["error"].as_str()), (503, Some("temporarily_unavailable")), "refresh during the outage");
    // Revocation checks stop once the node can no longer vouch for its list.
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(server.userinfo(&access).await.0, 503, "userinfo during the outage");
    assert_eq!(reqwest::get(server.url("/healthz")).await.unwrap().status(), 503);

    pg(&["start", dir.to_str().unwrap(), &port]);
    let back = Instant::now();
    loop {
        let (st, body, _) = server.token(Some((&id, &secret)), &[("grant_type", "refresh_token"), ("refresh_token", &refresh_token)]).await;
        if st == 200 {
            refresh_token = body["refresh_token"].as_str().unwrap().to_string();
            break;
        }
        assert_eq!(st, 503, "only 503 while recovering: {body}");
        assert!(back.elapsed() < Duration::from_secs(15), "no recovery after the database came back");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    while server.userinfo(&access).await.0 != 200 {
        assert!(back.elapsed() < Duration::from_secs(15), "userinfo did not recover");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(reqwest::get(server.url("/healthz")).await.unwrap().status(), 200);
    let (st, _, _) = server.token(Some((&id, &secret)), &[("grant_type", "refresh_token"), ("refresh_token", &refresh_token)]).await;
    assert_eq!(st, 200, "the chain goes on after the outage");
    pg(&["stop", dir.to_str().unwrap()]);
}

/// The value of cookie `name` in a response's `Set-Cookie` headers.
fn set_cookie(page: &Page, name: &str) -> Option<String> {
    page.set_cookie.iter().find_map(|c| c.split(';').next()?.strip_prefix(&format!("{name}=")).map(str::to_string))
}

/// Logout on PostgreSQL, end to end with real processes: signed in on node 1, tokens redeemed
/// on node 2, signed out on node 3. The session is gone everywhere, its access token is
/// refused on another node within the revocation bound, and the back-channel logout token is
/// delivered once, by one of the three nodes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_logout_on_one_node_ends_the_session_on_all() {
    let Some(url) = fresh_database().await else { return };
    let logs = tempfile::tempdir().unwrap();
    let nodes = three_nodes(&url, logs.path()).await;
    let (n1, n2, n3) = (&nodes[0], &nodes[1], &nodes[2]);
    let http = http();

    let tokens: std::sync::Arc<std::sync::Mutex<Vec<String>>> = Default::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let receiver = format!("http://{}/bc", listener.local_addr().unwrap());
    let seen = tokens.clone();
    let app = axum::Router::new().route(
        "/bc",
        axum::routing::post(move |body: String| {
            let seen = seen.clone();
            async move {
                seen.lock().unwrap().push(body.strip_prefix("logout_token=").unwrap_or(&body).to_string());
                axum::http::StatusCode::OK
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let secret = client_and_user(&http, n1, &[n2, n3]).await;
    let back = "https://rp.example/logged-out";
    let patch = json!({"post_logout_redirect_uris": [back], "backchannel_logout_uri": receiver});
    let res = http.patch(format!("{}/admin/clients/rp", n1.base)).bearer_auth(ADMIN).json(&patch).send().await.unwrap();
    assert_eq!(res.status(), 200);
    for n in [n2, n3] {
        let start = Instant::now();
        loop {
            let c: Value = http.get(format!("{}/admin/clients/rp", n.base)).bearer_auth(ADMIN).send().await.unwrap().json().await.unwrap();
            if c["backchannel_logout_uri"] == receiver.as_str() {
                break;
            }
            assert!(start.elapsed() < Duration::from_secs(5), "the client's update never reached {}", n.base);
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    // Sign in on node 1 (scope openid: no offline access, so the grant ends with the session).
    let q = [("response_type", "code"), ("client_id", "rp"), ("redirect_uri", REDIRECT), ("scope", "openid"), ("state", "s")];
    let page = Page::from(http.get(format!("{}/authorize", n1.base)).query(&q).send().await.unwrap()).await;
    let browser = set_cookie(&page, "authrim_browser").unwrap();
    let form = [("challenge", page.challenge()), ("username", "alice".into()), ("password", PASSWORD.into())];
    let login = Page::from(http.post(format!("{}/login", n1.base)).header("cookie", format!("authrim_browser={browser}")).form(&form).send().await.unwrap()).await;
    let session = format!("authrim_session={}", set_cookie(&login, "authrim_session").expect("signed in"));
    let consent = Page::from(http.get(format!("{}{}", n1.base, login.location.unwrap())).header("cookie", &session).send().await.unwrap()).await;
    let form = [("challenge", consent.challenge()), ("decision", "allow".into())];
    let done = Page::from(http.post(format!("{}/consent", n1.base)).header("cookie", &session).form(&form).send().await.unwrap()).await;
    let code = done.redirect_params()["code"].clone();
    let res = http
        .post(format!("{}/token", n2.base))
        .basic_auth("rp", Some(&secret))
        .form(&[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)])
        .send()
        .await
        .unwrap();
    let tok: Value = res.json().await.unwrap();
    let (id_token, access) = (tok["id_token"].as_str().unwrap().to_string(), tok["access_token"].as_str().unwrap().to_string());
    let userinfo = |base: String| {
        let (http, access) = (http.clone(), access.clone());
        async move { http.get(format!("{base}/userinfo")).bearer_auth(access).send().await.unwrap().status().as_u16() }
    };
    assert_eq!(userinfo(n2.base.clone()).await, 200);

    // Sign out on node 3, with the session cookie the browser holds.
    let res = http
        .get(format!("{}/logout", n3.base))
        .header("cookie", &session)
        .query(&[("id_token_hint", id_token.as_str()), ("post_logout_redirect_uri", back), ("state", "bye")])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 302);
    assert_eq!(res.headers()["location"], format!("{back}?state=bye").as_str());
    let logged_out = Instant::now();

    // Node 2 refuses the session's access token within the revocation bound (1 s).
    loop {
        match userinfo(n2.base.clone()).await {
            401 => break,
            200 | 503 => assert!(logged_out.elapsed() < Duration::from_secs(1), "node 2 still accepts the ended session's token"),
            other => panic!("unexpected status {other}"),
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // Node 1, where the user signed in, has no session for the cookie any more.
    let silent = [("response_type", "code"), ("client_id", "rp"), ("redirect_uri", REDIRECT), ("scope", "openid"), ("prompt", "none")];
    let page = Page::from(http.get(format!("{}/authorize", n1.base)).header("cookie", &session).query(&silent).send().await.unwrap()).await;
    assert_eq!(page.redirect_params()["error"], "login_required");

    // One logout token, delivered once by one of the nodes.
    let start = Instant::now();
    while tokens.lock().unwrap().is_empty() {
        assert!(start.elapsed() < Duration::from_secs(10), "no logout token delivered");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(2500)).await; // every node polls at least twice more
    let got = tokens.lock().unwrap().clone();
    assert_eq!(got.len(), 1, "delivered once: {got:?}");
    assert_eq!(jwt_parts(&got[0]).1["sid"], jwt_parts(&id_token).1["sid"]);
}

/// Issue 30, defect 5, across nodes: an operator's new password on node 1 leaves the intruder's
/// `offline_access` tokens dead on node 2 within the revocation bound (each family revoked
/// with its grant's revocation entry, which every node honours), and the user's token cutoff
/// reaches node 2 with the user change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_password_on_one_node_cuts_off_tokens_on_all() {
    let Some(url) = fresh_database().await else { return };
    let logs = tempfile::tempdir().unwrap();
    let nodes = two_nodes(&url, logs.path()).await;
    let (n1, n2) = (&nodes[0], &nodes[1]);
    let http = http();
    let secret = client_and_user(&http, n1, &[n2]).await;
    let code = login_at(&n1.base).await;
    let res = http
        .post(format!("{}/token", n1.base))
        .basic_auth("rp", Some(&secret))
        .form(&[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let tokens: Value = res.json().await.unwrap();
    let (access, refresh_token) = (tokens["access_token"].as_str().unwrap().to_string(), tokens["refresh_token"].as_str().unwrap().to_string());
    let userinfo = |token: String| {
        let (http, base) = (http.clone(), n2.base.clone());
        async move { http.get(format!("{base}/userinfo")).bearer_auth(token).send().await.unwrap().status().as_u16() }
    };
    assert_eq!(userinfo(access.clone()).await, 200);

    let users: Value = http.get(format!("{}/admin/users", n1.base)).bearer_auth(ADMIN).send().await.unwrap().json().await.unwrap();
    let alice = users["users"][0]["id"].as_str().unwrap().to_string();
    let res = http.patch(format!("{}/admin/users/{alice}", n1.base)).bearer_auth(ADMIN).json(&json!({"password": "a new passphrase on node 1"})).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let changed_at = Instant::now();
    loop {
        match userinfo(access.clone()).await {
            401 => break,
            200 | 503 => assert!(changed_at.elapsed() < Duration::from_secs(1), "node 2 still accepts a token issued before the new password"),
            other => panic!("unexpected status {other}"),
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (st, body) = refresh(&http, &n2.base, &secret, &refresh_token).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_grant")), "{body}");
}

/// Issue 32: a directory change on one node (a group, a membership, a role, an assignment)
/// reaches the other's memory through the notifications, and so its next token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn groups_and_roles_changed_on_one_node_are_seen_by_the_other() {
    let Some(url) = fresh_database().await else { return };
    let logs = tempfile::tempdir().unwrap();
    let nodes = two_nodes(&url, logs.path()).await;
    let (n1, n2) = (&nodes[0], &nodes[1]);
    let http = http();
    client_and_user(&http, n1, &[n2]).await;
    let admin = |base: &str, method: reqwest::Method, path: &str| {
        let (http, url) = (http.clone(), format!("{base}{path}"));
        async move { http.request(method, url).bearer_auth(ADMIN).send().await.unwrap().status().as_u16() }
    };
    let res = http.post(format!("{}/admin/groups", n1.base)).bearer_auth(ADMIN).json(&json!({"display_name": "Ops"})).send().await.unwrap();
    assert_eq!(res.status(), 201);
    assert_eq!(admin(&n1.base, reqwest::Method::PUT, "/admin/groups/Ops/members/users/alice").await, 204);
    assert_eq!(admin(&n1.base, reqwest::Method::PUT, "/admin/clients/rp/roles/deploy").await, 204);
    assert_eq!(admin(&n1.base, reqwest::Method::PUT, "/admin/clients/rp/roles/deploy/assignments/groups/Ops").await, 204);
    let seen_by = |base: String| {
        let http = http.clone();
        async move {
            let v: Value = http.get(format!("{base}/admin/users/alice/groups")).bearer_auth(ADMIN).send().await.unwrap().json().await.unwrap();
            (v["effective_groups"].as_array().map_or(0, Vec::len), v["roles"]["rp"].clone())
        }
    };
    let start = Instant::now();
    while seen_by(n2.base.clone()).await != (1, json!(["deploy"])) {
        assert!(start.elapsed() < Duration::from_secs(5), "node 2 never saw the group and the role");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // And back: node 2 takes alice out; node 1 follows.
    assert_eq!(admin(&n2.base, reqwest::Method::DELETE, "/admin/groups/Ops/members/users/alice").await, 204);
    let start = Instant::now();
    while seen_by(n1.base.clone()).await != (0, Value::Null) {
        assert!(start.elapsed() < Duration::from_secs(5), "node 1 never saw the membership end");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(admin(&n2.base, reqwest::Method::DELETE, "/admin/groups/Ops").await, 204);
    let start = Instant::now();
    while admin(&n1.base, reqwest::Method::GET, "/admin/groups/Ops").await != 404 {
        assert!(start.elapsed() < Duration::from_secs(5), "node 1 never saw the group go");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
