//! Durability across a real crash: `kill -9` of the server process.

use crate::harness::*;
use serde_json::Value;

async fn post_token(http: &reqwest::Client, base: &str, secret: &str, form: &[(&str, &str)]) -> (u16, Value) {
    let res = http.post(format!("{base}/token")).basic_auth("rp", Some(secret)).form(form).send().await.unwrap();
    (res.status().as_u16(), res.json::<Value>().await.unwrap())
}

#[tokio::test]
async fn an_acknowledged_rotation_survives_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut p = spawn_server(dir.path(), port, &[]);
    wait_healthy(&p.base).await;
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let secret = register_rp_and_alice(&http, &p.base).await;
    let code = login_at(&p.base).await;
    let (st, first) = post_token(&http, &p.base, &secret, &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200);
    let old = first["refresh_token"].as_str().unwrap().to_string();
    let (st, rotated) = post_token(&http, &p.base, &secret, &[("grant_type", "refresh_token"), ("refresh_token", &old)]).await;
    assert_eq!(st, 200);
    let new = rotated["refresh_token"].as_str().unwrap().to_string();

    // The rotation was acknowledged: crash now, with no chance to flush anything.
    p.child.kill().unwrap(); // SIGKILL
    p.child.wait().unwrap();

    let mut p = spawn_server(dir.path(), port, &[]);
    wait_healthy(&p.base).await;
    let (st, after) = post_token(&http, &p.base, &secret, &[("grant_type", "refresh_token"), ("refresh_token", &new)]).await;
    assert_eq!(st, 200, "the acknowledged successor works after the crash: {after}");
    let (st, body) = post_token(&http, &p.base, &secret, &[("grant_type", "refresh_token"), ("refresh_token", &old)]).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_grant")), "the old token counts as reuse");
    let latest = after["refresh_token"].as_str().unwrap();
    let (st, _) = post_token(&http, &p.base, &secret, &[("grant_type", "refresh_token"), ("refresh_token", latest)]).await;
    assert_eq!(st, 400, "and the reuse revoked the family");
    p.child.kill().unwrap();
    p.child.wait().unwrap();
}
