//! Pairwise subject identifiers (OpenID Connect Core §8): a different, stable `sub` per sector,
//! everywhere the client sees one, while Authrim still finds the user behind its tokens.

use crate::harness::*;
use axum::routing::get;
use serde_json::{json, Value};

async fn tokens_for(s: &TestServer, b: &Browser, client: &str, secret: &str, redirect: &str) -> Value {
    let p = s.code_for(b, client, "alice", &[("redirect_uri", redirect)]).await;
    let (st, tok, _) = s.token(Some((client, secret)), &[("grant_type", "authorization_code"), ("code", &p["code"]), ("redirect_uri", redirect)]).await;
    assert_eq!(st, 200, "{tok}");
    tok
}

/// A sector's document of redirect URIs, served by the test.
async fn sector_host(uris: Value) -> String {
    let app = axum::Router::new().route("/sector.json", get(move || { let uris = uris.clone(); async move { axum::Json(uris) } }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("{base}/sector.json")
}

#[tokio::test]
async fn each_sector_sees_its_own_stable_sub_and_authrim_still_finds_the_user() {
    let s = TestServer::start().await;
    let alice = s.user("alice", json!({"email": "alice@example.com"})).await;
    let (_, pw1) = s.client("pw1", json!({"subject_type": "pairwise"})).await;
    let (_, pw2) = s.client("pw2", json!({"subject_type": "pairwise", "redirect_uris": ["https://other.example/cb"]})).await;
    let (_, public) = s.client("pub", json!({})).await;
    let b = s.browser();
    let t1 = tokens_for(&s, &b, "pw1", pw1.as_deref().unwrap(), REDIRECT).await;
    let t2 = tokens_for(&s, &b, "pw2", pw2.as_deref().unwrap(), "https://other.example/cb").await;
    let tp = tokens_for(&s, &b, "pub", public.as_deref().unwrap(), REDIRECT).await;
    let sub = |t: &Value, k: &str| jwt_parts(t[k].as_str().unwrap()).1["sub"].as_str().unwrap().to_string();
    let (s1, s2) = (sub(&t1, "id_token"), sub(&t2, "id_token"));
    assert_eq!(sub(&tp, "id_token"), alice, "a public client sees the user id");
    assert!(s1 != alice && s2 != alice && s1 != s2, "pairwise subs differ from the id and from each other");
    assert_eq!(s1.len(), 43);
    // Stable: a second sign-in gives the same sub.
    assert_eq!(sub(&tokens_for(&s, &s.browser(), "pw1", pw1.as_deref().unwrap(), REDIRECT).await, "id_token"), s1);

    // The access token names the user the same way, with the user id sealed beside it.
    let at = t1["access_token"].as_str().unwrap();
    let claims = jwt_parts(at).1;
    assert_eq!(claims["sub"], s1.as_str());
    let uid = claims["uid"].as_str().expect("a sealed uid");
    assert!(!uid.contains(&alice), "the uid is not readable");
    let at_again = tokens_for(&s, &b, "pw1", pw1.as_deref().unwrap(), REDIRECT).await;
    assert_ne!(jwt_parts(at_again["access_token"].as_str().unwrap()).1["uid"].as_str(), Some(uid), "a fresh nonce per token");
    let (st, info, _) = s.userinfo(at).await;
    assert_eq!((st, info["sub"].as_str(), info["email"].as_str()), (200, Some(s1.as_str()), Some("alice@example.com")));
    let res = s.http.post(s.url("/introspect")).basic_auth("pw1", pw1.as_deref()).form(&[("token", at)]).send().await.unwrap();
    let v: Value = res.json().await.unwrap();
    assert_eq!((v["active"].as_bool(), v["sub"].as_str()), (Some(true), Some(s1.as_str())));
    // A uid that is not ours (signed by us, so only a bug could make one) finds nobody.
    let mut forged: authrim::tokens::AccessTokenClaims = serde_json::from_value(claims.clone()).unwrap();
    forged.uid = Some("AAAA".into());
    assert_eq!(forged.subject_id(&authrim::tenant::Issuer::default_of(&s.server.app)), None);

    // id_token_hint with the pairwise sub: recognised as the signed-in user.
    let hint = t1["id_token"].as_str().unwrap();
    let q = [("response_type", "code"), ("client_id", "pw1"), ("redirect_uri", REDIRECT), ("scope", "openid"), ("prompt", "none"), ("id_token_hint", hint)];
    let p = Page::from(b.authorize(&q).await).await.redirect_params();
    assert!(p.contains_key("code"), "{p:?}");
    // RP-initiated logout with that hint needs no confirmation.
    let res = b.client.get(format!("{}/logout", b.base)).query(&[("id_token_hint", hint)]).send().await.unwrap();
    let page = Page::from(res).await;
    assert!(!page.html.contains("logout/confirm"), "asked to confirm: {}", page.html);

    let d: Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    assert_eq!(d["subject_types_supported"], json!(["public", "pairwise"]));
}

#[tokio::test]
async fn a_sector_identifier_uri_groups_hosts_and_must_list_every_redirect_uri() {
    let s = TestServer::start().await;
    s.user("alice", json!({})).await;
    let sector = sector_host(json!([REDIRECT, "https://app2.example/cb"])).await;
    let (_, a) = s.client("a", json!({"subject_type": "pairwise", "sector_identifier_uri": sector})).await;
    let (_, b2) = s.client("b", json!({"subject_type": "pairwise", "sector_identifier_uri": sector, "redirect_uris": ["https://app2.example/cb"]})).await;
    let b = s.browser();
    let ta = tokens_for(&s, &b, "a", a.as_deref().unwrap(), REDIRECT).await;
    let tb = tokens_for(&s, &b, "b", b2.as_deref().unwrap(), "https://app2.example/cb").await;
    let sub = |t: &Value| jwt_parts(t["id_token"].as_str().unwrap()).1["sub"].clone();
    assert_eq!(sub(&ta), sub(&tb), "one sector, one sub");

    for (what, meta) in [
        ("a redirect URI the sector does not list", json!({"subject_type": "pairwise", "sector_identifier_uri": sector, "redirect_uris": ["https://app3.example/cb"]})),
        ("redirect URIs on two hosts without a sector", json!({"subject_type": "pairwise", "redirect_uris": [REDIRECT, "https://app2.example/cb"]})),
        ("an unknown subject type", json!({"subject_type": "random"})),
        ("a sector for a public client", json!({"sector_identifier_uri": sector})),
        ("a sector document that is not there", json!({"subject_type": "pairwise", "sector_identifier_uri": sector.replace("sector.json", "missing")})),
    ] {
        let mut body = json!({"client_id": "bad", "redirect_uris": [REDIRECT]});
        for (k, v) in meta.as_object().unwrap() {
            body[k] = v.clone();
        }
        let (st, v) = s.admin(reqwest::Method::POST, "/admin/clients", Some(body)).await;
        assert_eq!((st, v["error"].as_str()), (400, Some("invalid_client_metadata")), "{what}: {v}");
    }
    // Through dynamic registration too.
    let (_, tok) = s.admin(reqwest::Method::POST, "/admin/registration-tokens", Some(json!({"max_uses": 2}))).await;
    let token = tok["initial_access_token"].as_str().unwrap();
    let register = |body: Value| s.http.post(s.url("/register")).bearer_auth(token).json(&body).send();
    let res = register(json!({"redirect_uris": ["https://app3.example/cb"], "subject_type": "pairwise", "sector_identifier_uri": sector})).await.unwrap();
    assert_eq!(res.status(), 400);
    let res = register(json!({"redirect_uris": [REDIRECT], "subject_type": "pairwise", "sector_identifier_uri": sector})).await.unwrap();
    assert_eq!(res.status(), 201);
}
