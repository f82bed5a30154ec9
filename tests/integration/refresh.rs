//! grant_type=refresh_token: issuance, rotation, theft detection, concurrency, durability.

use crate::harness::*;
use serde_json::{json, Value};

const OFFLINE: &str = "openid email offline_access";

struct Rp {
    id: String,
    secret: String,
}

async fn new_rp(s: &TestServer, id: &str) -> Rp {
    let (id, secret) = s.client(id, json!({"grant_types": ["authorization_code", "refresh_token"]})).await;
    Rp { id, secret: secret.unwrap() }
}

/// A fresh login on a new "device" (browser); returns the token response.
async fn login(s: &TestServer, rp: &Rp, user: &str, scope: &str) -> Value {
    let b = s.browser();
    let code = s.code_for(&b, &rp.id, user, &[("scope", scope)]).await["code"].clone();
    let (st, tok, _) = s.token(Some((&rp.id, &rp.secret)), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200, "{tok}");
    tok
}

async fn refresh(s: &TestServer, rp: &Rp, rt: &str, scope: Option<&str>) -> (u16, Value) {
    let mut form = vec![("grant_type", "refresh_token"), ("refresh_token", rt)];
    if let Some(sc) = scope {
        form.push(("scope", sc));
    }
    let (st, v, _) = s.token(Some((&rp.id, &rp.secret)), &form).await;
    (st, v)
}

fn rt(tok: &Value) -> String {
    tok["refresh_token"].as_str().unwrap_or_else(|| panic!("no refresh token in {tok}")).to_string()
}

#[tokio::test]
async fn refresh_tokens_only_with_offline_access_and_the_grant() {
    let s = TestServer::start().await;
    let with = new_rp(&s, "rp").await;
    let (without, secret) = s.client("no-refresh", json!({})).await;
    s.user("alice", json!({})).await;
    assert!(login(&s, &with, "alice", "openid email").await.get("refresh_token").is_none(), "no offline_access");
    assert!(login(&s, &with, "alice", OFFLINE).await.get("refresh_token").is_some());
    let no = Rp { id: without, secret: secret.unwrap() };
    assert!(login(&s, &no, "alice", OFFLINE).await.get("refresh_token").is_none(), "client may not refresh");
    let (st, body) = refresh(&s, &no, "0.AAAAAAAAAAAAAAAAAAAAAA.0.x", None).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("unauthorized_client")));
}

#[tokio::test]
async fn a_chain_of_1000_rotations_and_every_superseded_version_is_reuse() {
    let s = TestServer::start().await;
    let rp = new_rp(&s, "rp").await;
    s.user("alice", json!({})).await;
    let mut current = rt(&login(&s, &rp, "alice", "offline_access").await);
    let mut chain = vec![current.clone()];
    for i in 0..1000 {
        let (st, tok) = refresh(&s, &rp, &current, None).await;
        assert_eq!(st, 200, "rotation {i}: {tok}");
        current = rt(&tok);
        assert!(!chain.contains(&current), "rotation {i} returned an old token");
        chain.push(current.clone());
    }
    let rotator = &s.server.app.stores.refresh;
    for (v, old) in chain[..1000].iter().enumerate() {
        assert!(matches!(rotator.peek(authrim::tenant::TenantId::DEFAULT, old).await.unwrap(), authrim::stores::Presented::Superseded(_)), "version {v}");
    }
    // Presenting one of them is theft: the family dies, current token included.
    let (st, body) = refresh(&s, &rp, &chain[500], None).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_grant")));
    let (st, _) = refresh(&s, &rp, &current, None).await;
    assert_eq!(st, 400);
}

#[tokio::test]
async fn reuse_revokes_the_family_and_its_access_tokens_and_is_audited() {
    let s = TestServer::start().await;
    let rp = new_rp(&s, "rp").await;
    s.user("alice", json!({})).await;
    let first = login(&s, &rp, "alice", OFFLINE).await;
    let (_, second) = refresh(&s, &rp, &rt(&first), None).await;
    let at1 = first["access_token"].as_str().unwrap();
    let at2 = second["access_token"].as_str().unwrap();
    assert_eq!(s.userinfo(at2).await.0, 200);
    let (st, _) = refresh(&s, &rp, &rt(&first), None).await; // the thief (or the victim) replays
    assert_eq!(st, 400);
    assert_eq!(s.userinfo(at1).await.0, 401, "the login's access token is revoked");
    assert_eq!(s.userinfo(at2).await.0, 401, "the refreshed access token is revoked");
    assert_eq!(refresh(&s, &rp, &rt(&second), None).await.0, 400);
    let (_, audit) = s.admin(reqwest::Method::GET, "/admin/audit?event=refresh_reuse", None).await;
    assert_eq!(audit["events"].as_array().unwrap().len(), 1, "{audit}");
    let (_, audit) = s.admin(reqwest::Method::GET, "/admin/audit?event=family_revoked", None).await;
    assert_eq!(audit["events"][0]["detail"]["reason"], "refresh_reuse");
}

#[tokio::test]
async fn fifty_concurrent_uses_give_exactly_one_success() {
    let s = TestServer::start().await;
    let rp = new_rp(&s, "rp").await;
    s.user("alice", json!({})).await;
    let token = rt(&login(&s, &rp, "alice", "offline_access").await);
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..50 {
        let (http, url, id, secret, token) = (s.http.clone(), s.url("/token"), rp.id.clone(), rp.secret.clone(), token.clone());
        set.spawn(async move {
            let res = http.post(url).basic_auth(id, Some(secret)).form(&[("grant_type", "refresh_token"), ("refresh_token", token.as_str())]).send().await.unwrap();
            (res.status().as_u16(), res.json::<Value>().await.unwrap())
        });
    }
    let results = set.join_all().await;
    assert_eq!(results.iter().filter(|(st, _)| *st == 200).count(), 1);
    assert!(results.iter().filter(|(st, _)| *st != 200).all(|(_, b)| b["error"] == "invalid_grant"));
}

#[tokio::test]
async fn grace_period_answers_a_retry_with_the_same_successor() {
    let s = TestServer::start_with(|c| c.refresh_reuse_grace = 30).await;
    let rp = new_rp(&s, "rp").await;
    s.user("alice", json!({})).await;
    let t0 = rt(&login(&s, &rp, "alice", "offline_access").await);
    let (_, a) = refresh(&s, &rp, &t0, None).await;
    let (st, b) = refresh(&s, &rp, &t0, None).await; // the response to the first was "lost"
    assert_eq!(st, 200, "{b}");
    assert_eq!(rt(&a), rt(&b));
    assert_eq!(refresh(&s, &rp, &rt(&b), None).await.0, 200);
}

/// The deployment's default is a grace (browsers' tabs refresh at once); a client's own
/// `refresh_reuse_grace` overrides it either way, and only the token just replaced is
/// forgiven: an older one is still theft.
#[tokio::test]
async fn the_default_grace_and_a_clients_own_override_it() {
    assert_eq!(authrim::config::Config::default().refresh_reuse_grace, 30, "the documented default");
    let s = TestServer::start_with(|c| c.refresh_reuse_grace = authrim::config::Config::default().refresh_reuse_grace).await;
    s.user("alice", json!({})).await;
    // The deployment's grace: two tabs present the same token, both get the same successor.
    let tabs = new_rp(&s, "tabs").await;
    let t0 = rt(&login(&s, &tabs, "alice", "offline_access").await);
    let (_, a) = refresh(&s, &tabs, &t0, None).await;
    let (st, b) = refresh(&s, &tabs, &t0, None).await;
    assert_eq!((st, rt(&a)), (200, rt(&b)));
    // Past the token just replaced, reuse is theft even within the window.
    let (_, c) = refresh(&s, &tabs, &rt(&b), None).await;
    assert_eq!(refresh(&s, &tabs, &t0, None).await.0, 400, "two versions back");
    assert_eq!(refresh(&s, &tabs, &rt(&c), None).await.0, 400, "and the family is revoked");

    // A client that wants strict rotation.
    let (id, secret) = s.client("strict", json!({"grant_types": ["authorization_code", "refresh_token"], "refresh_reuse_grace": 0})).await;
    let strict = Rp { id, secret: secret.unwrap() };
    let t0 = rt(&login(&s, &strict, "alice", "offline_access").await);
    let (_, a) = refresh(&s, &strict, &t0, None).await;
    assert_eq!(refresh(&s, &strict, &t0, None).await.0, 400, "no grace for this client");
    assert_eq!(refresh(&s, &strict, &rt(&a), None).await.0, 400, "the family is revoked");

    // Bounded, and a negative number returns a client to the deployment's grace.
    let (st, body) = s.admin(reqwest::Method::PATCH, "/admin/clients/strict", Some(json!({"refresh_reuse_grace": 301}))).await;
    assert_eq!(st, 400, "{body}");
    assert!(body["error_description"].as_str().unwrap_or_default().contains("refresh_reuse_grace"), "{body}");
    let (st, body) = s.admin(reqwest::Method::PATCH, "/admin/clients/strict", Some(json!({"refresh_reuse_grace": -1}))).await;
    assert_eq!(st, 200, "{body}");
    assert!(body.get("refresh_reuse_grace").is_none(), "cleared: {body}");
    let t0 = rt(&login(&s, &strict, "alice", "offline_access").await);
    let (_, a) = refresh(&s, &strict, &t0, None).await;
    let (st, b) = refresh(&s, &strict, &t0, None).await;
    assert_eq!((st, rt(&a)), (200, rt(&b)), "the deployment's grace again");
}

/// A strict deployment still lets one client keep a grace (an application open in tabs).
#[tokio::test]
async fn a_client_may_have_a_grace_on_a_strict_deployment() {
    let s = TestServer::start().await;
    assert_eq!(s.server.app.config.refresh_reuse_grace, 0);
    s.user("alice", json!({})).await;
    let (id, secret) = s.client("spa", json!({"grant_types": ["authorization_code", "refresh_token"], "refresh_reuse_grace": 10})).await;
    let rp = Rp { id, secret: secret.unwrap() };
    let t0 = rt(&login(&s, &rp, "alice", "offline_access").await);
    let (_, a) = refresh(&s, &rp, &t0, None).await;
    let (st, b) = refresh(&s, &rp, &t0, None).await;
    assert_eq!((st, rt(&a)), (200, rt(&b)));
    let other = new_rp(&s, "other").await;
    let t0 = rt(&login(&s, &other, "alice", "offline_access").await);
    refresh(&s, &other, &t0, None).await;
    assert_eq!(refresh(&s, &other, &t0, None).await.0, 400, "the deployment stays strict for the others");
}

#[tokio::test]
async fn two_devices_of_one_user_are_independent() {
    let s = TestServer::start().await;
    let rp = new_rp(&s, "rp").await;
    s.user("alice", json!({})).await;
    let phone = rt(&login(&s, &rp, "alice", OFFLINE).await);
    let laptop = rt(&login(&s, &rp, "alice", OFFLINE).await);
    let (st, p1) = refresh(&s, &rp, &phone, None).await;
    assert_eq!(st, 200);
    let (st, l1) = refresh(&s, &rp, &laptop, None).await;
    assert_eq!(st, 200, "the second login did not clobber the first: {l1}");
    // Theft on the phone's family leaves the laptop's alone.
    assert_eq!(refresh(&s, &rp, &phone, None).await.0, 400);
    assert_eq!(refresh(&s, &rp, &rt(&l1), None).await.0, 200);
    assert_eq!(refresh(&s, &rp, &rt(&p1), None).await.0, 400);
}

#[tokio::test]
async fn rules_client_binding_scope_narrowing_new_id_token() {
    let s = TestServer::start().await;
    let rp1 = new_rp(&s, "rp").await;
    let other = new_rp(&s, "other").await;
    s.user("alice", json!({"email": "a@example.com"})).await;
    let first = login(&s, &rp1, "alice", OFFLINE).await;
    let token = rt(&first);
    // Another client presenting it: refused, and the owner's token is not burnt.
    let (st, body) = refresh(&s, &other, &token, None).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_grant")));
    // Widening is refused, again without burning the token.
    let (st, body) = refresh(&s, &rp1, &token, Some("openid phone")).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_scope")));
    let (st, narrowed) = refresh(&s, &rp1, &token, Some("openid")).await;
    assert_eq!(st, 200, "{narrowed}");
    assert_eq!(narrowed["scope"], "openid");
    let (_, idt) = jwt_parts(narrowed["id_token"].as_str().unwrap());
    let (_, first_idt) = jwt_parts(first["id_token"].as_str().unwrap());
    assert_eq!(idt["sub"], first_idt["sub"]);
    assert_eq!(idt["auth_time"], first_idt["auth_time"], "auth_time is the login's");
    assert!(idt.get("nonce").is_none());
    let (_, at) = jwt_parts(narrowed["access_token"].as_str().unwrap());
    assert_eq!(at["scope"], "openid");
    // The refresh token keeps the original grant: the full scope is still available.
    let (st, full) = refresh(&s, &rp1, &rt(&narrowed), None).await;
    assert_eq!((st, full["scope"].as_str()), (200, Some(OFFLINE)));
    for bad in ["", "garbage", "1.2.3", &token] {
        let (st, body) = refresh(&s, &rp1, bad, None).await;
        assert_eq!(st, 400, "{bad}: {body}");
    }
}

#[tokio::test]
async fn expired_and_disabled_user_families_are_refused() {
    let s = TestServer::start_with(|c| c.refresh_token_idle_ttl = 1).await;
    let rp = new_rp(&s, "rp").await;
    let sub = s.user("alice", json!({})).await;
    let idle = rt(&login(&s, &rp, "alice", "offline_access").await);
    let active = rt(&login(&s, &rp, "alice", "offline_access").await);
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    assert_eq!(refresh(&s, &rp, &idle, None).await.0, 400, "idle too long");
    let s2 = TestServer::start().await;
    let rp2 = new_rp(&s2, "rp").await;
    let sub2 = s2.user("bob", json!({})).await;
    let t = rt(&login(&s2, &rp2, "bob", "offline_access").await);
    s2.admin(reqwest::Method::PATCH, &format!("/admin/users/{sub2}"), Some(json!({"disabled": true}))).await;
    assert_eq!(refresh(&s2, &rp2, &t, None).await.0, 400);
    s2.admin(reqwest::Method::PATCH, &format!("/admin/users/{sub2}"), Some(json!({"disabled": false}))).await;
    assert_eq!(refresh(&s2, &rp2, &t, None).await.0, 400, "disabling the user revoked the family for good");
    let _ = (sub, active);
}

#[tokio::test]
async fn code_reuse_also_revokes_the_refresh_family() {
    let s = TestServer::start().await;
    let rp = new_rp(&s, "rp").await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let code = s.code_for(&b, &rp.id, "alice", &[("scope", OFFLINE)]).await["code"].clone();
    let form = [("grant_type", "authorization_code"), ("code", code.as_str()), ("redirect_uri", REDIRECT)];
    let (_, tok, _) = s.token(Some((&rp.id, &rp.secret)), &form).await;
    assert_eq!(s.token(Some((&rp.id, &rp.secret)), &form).await.0, 400);
    assert_eq!(refresh(&s, &rp, &rt(&tok), None).await.0, 400);
}

#[tokio::test]
async fn families_spread_over_shards() {
    let s = TestServer::start_with(|c| c.refresh_shards = 8).await;
    let rp = new_rp(&s, "rp").await;
    for u in 0..24 {
        s.user(&format!("user{u}"), json!({})).await;
        login(&s, &rp, &format!("user{u}"), "offline_access").await;
    }
    let lens = s.server.app.stores.refresh.shard_lens();
    assert_eq!(lens.iter().sum::<usize>(), 24);
    assert!(lens.iter().filter(|&&n| n > 0).count() >= 5, "24 families on 8 shards landed on too few: {lens:?}");
}

/// Sign in in `b` (its session reused) and redeem the code.
async fn login_in(s: &TestServer, b: &Browser, rp: &Rp, user: &str, extra: &[(&str, &str)]) -> Value {
    let code = s.code_for(b, &rp.id, user, extra).await["code"].clone();
    let (st, tok, _) = s.token(Some((&rp.id, &rp.secret)), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200, "{tok}");
    tok
}

/// Issue 36 (MCP item 2): OpenID Connect Core §11's `offline_access` rule is for OpenID
/// requests. A code-flow request without `openid` is OAuth (2.1 §4.3): by default
/// (`oauth_refresh_tokens`) a client with the refresh_token grant gets a refresh token, rotated
/// as any other; the family ends with the login session (as its access tokens do), while an
/// `offline_access` family of the same session lives on. OpenID requests are unchanged.
#[tokio::test]
async fn oauth_requests_get_refresh_tokens_without_offline_access() {
    let s = TestServer::start().await;
    let rp = new_rp(&s, "rp").await;
    let (plain, secret) = s.client("no-refresh", json!({})).await;
    let plain = Rp { id: plain, secret: secret.unwrap() };
    let alice = s.user("alice", json!({})).await;
    let b = s.browser();
    // OpenID: none without offline_access, as before.
    let tok = login_in(&s, &b, &rp, "alice", &[("scope", "openid email")]).await;
    assert!(tok.get("refresh_token").is_none(), "{tok}");
    // OAuth: one, rotated; the superseded one is reuse.
    let tok = login_in(&s, &b, &rp, "alice", &[("scope", "email")]).await;
    assert!(tok.get("id_token").is_none(), "{tok}");
    let first = rt(&tok);
    let (st, tok) = refresh(&s, &rp, &first, None).await;
    assert_eq!(st, 200, "{tok}");
    let oauth = rt(&tok);
    assert_ne!(oauth, first);
    let (_, at) = jwt_parts(tok["access_token"].as_str().unwrap());
    assert_eq!(at["scope"], "email", "{at}");
    // Not for a client without the refresh_token grant.
    assert!(login_in(&s, &b, &plain, "alice", &[("scope", "email")]).await.get("refresh_token").is_none());
    // In the same session, an offline_access family.
    let offline = rt(&login_in(&s, &b, &rp, "alice", &[("scope", OFFLINE)]).await);
    // The session ends: the OAuth family with it, the offline one not.
    let sid = jwt_parts(tok["access_token"].as_str().unwrap()).1["sid"].as_str().unwrap().to_string();
    let (st, _) = s.admin(reqwest::Method::DELETE, &format!("/admin/users/{alice}/sessions/{sid}"), None).await;
    assert_eq!(st, 204);
    let (st, body) = refresh(&s, &rp, &oauth, None).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_grant")), "{body}");
    let (st, body) = refresh(&s, &rp, &offline, None).await;
    assert_eq!(st, 200, "offline_access outlives the session: {body}");
    // Reuse of a superseded OAuth refresh token is theft, as for any family.
    let b2 = s.browser();
    let first = rt(&login_in(&s, &b2, &rp, "alice", &[("scope", "email")]).await);
    assert_eq!(refresh(&s, &rp, &first, None).await.0, 200);
    assert_eq!(refresh(&s, &rp, &first, None).await.0, 400);
}

/// The policy is a setting: `oauth_refresh_tokens = false` keeps §11's rule for every request.
#[tokio::test]
async fn oauth_refresh_tokens_can_be_turned_off() {
    let s = TestServer::start_with(|c| c.oauth_refresh_tokens = false).await;
    let rp = new_rp(&s, "rp").await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    assert!(login_in(&s, &b, &rp, "alice", &[("scope", "email")]).await.get("refresh_token").is_none());
    assert!(login_in(&s, &b, &rp, "alice", &[("scope", "email offline_access")]).await.get("refresh_token").is_some());
}

/// A family whose user this node has not heard of yet (made by the CLI, or on another node,
/// a moment ago) is not taken for a deleted user's: the database decides, the refresh works,
/// and the family stands. A user truly gone from the database still ends the family.
#[tokio::test]
async fn a_user_not_yet_in_this_nodes_memory_keeps_their_family() {
    let s = TestServer::start().await;
    let rp = new_rp(&s, "rp").await;
    // Written beside the server, as the CLI or another node does, but with its change record
    // taken back in the same transaction: the server will not hear of this user.
    let conn = authrim::db::open(s.dir.path(), "NORMAL").unwrap();
    let mut user = authrim::registry::users::new_user(authrim::registry::UserInput { username: Some("late".into()), password: Some(PASSWORD.into()), ..Default::default() }).unwrap();
    user.tenant = authrim::tenant::TenantId::DEFAULT;
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    authrim::registry::users::save(&mut authrim::db::SqliteSql(&conn), &user).unwrap();
    conn.execute("DELETE FROM registry_changes WHERE kind = 'user' AND id = ?1", [&user.id]).unwrap();
    conn.execute_batch("COMMIT").unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1_100)).await; // a poll has passed
    let (st, v) = s.admin(reqwest::Method::GET, &format!("/admin/users/{}", user.id), None).await;
    assert_eq!(st, 404, "the server has not heard of the user yet: {v}");
    let new = |user_id: &str| authrim::stores::refresh::NewFamily {
        user_id: user_id.into(), client_id: rp.id.clone(), scope: OFFLINE.into(), auth_time: 1, sid: "s".into(), acr: None,
        userinfo_claims: Vec::new(), jkt: None, x5t: None, resources: Vec::new(), amr: Vec::new(), org: None,
    };
    let stores = &s.server.app.stores;
    let token = stores.refresh.create(authrim::tenant::TenantId::DEFAULT, &authrim::stores::refresh::new_family_id(), new(&user.id)).await.unwrap();
    let (st, body) = refresh(&s, &rp, &token, None).await;
    assert_eq!(st, 200, "{body}");
    let (st, body) = refresh(&s, &rp, &rt(&body), None).await;
    assert_eq!(st, 200, "the family stands: {body}");
    // Gone from the database too: refused, and the family ends.
    authrim::registry::users::delete(&mut authrim::db::SqliteSql(&conn), authrim::tenant::TenantId::DEFAULT, &user.id).unwrap();
    let (st, _) = refresh(&s, &rp, &rt(&body), None).await;
    assert_eq!(st, 400);
}
