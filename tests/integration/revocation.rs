//! RFC 7009 revocation, RFC 7662 introspection, client credentials, and the test-only
//! bulk interface.

use crate::harness::*;
use reqwest::Method;
use serde_json::{json, Value};

struct Rp {
    id: String,
    secret: String,
}

async fn confidential(s: &TestServer, id: &str, extra: Value) -> Rp {
    let mut body = json!({"grant_types": ["authorization_code", "refresh_token", "client_credentials"], "scope": "openid email offline_access orders:read orders:write"});
    for (k, v) in extra.as_object().cloned().unwrap_or_default() {
        body[k] = v;
    }
    let (id, secret) = s.client(id, body).await;
    Rp { id, secret: secret.unwrap() }
}

async fn login_tokens(s: &TestServer, rp: &Rp) -> Value {
    let b = s.browser();
    let code = s.code_for(&b, &rp.id, "alice", &[("scope", "openid email offline_access")]).await["code"].clone();
    let (st, tok, _) = s.token(Some((&rp.id, &rp.secret)), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200);
    tok
}

async fn post(s: &TestServer, path: &str, rp: &Rp, form: &[(&str, &str)]) -> (u16, Value) {
    let res = s.http.post(s.url(path)).basic_auth(&rp.id, Some(&rp.secret)).form(form).send().await.unwrap();
    let st = res.status().as_u16();
    let text = res.text().await.unwrap();
    (st, serde_json::from_str(&text).unwrap_or(Value::Null))
}

async fn introspect(s: &TestServer, caller: &Rp, token: &str) -> Value {
    let (st, v) = post(s, "/introspect", caller, &[("token", token)]).await;
    assert_eq!(st, 200, "{v}");
    v
}

#[tokio::test]
async fn revoking_an_access_token_is_seen_by_userinfo_and_introspection_at_once() {
    let s = TestServer::start().await;
    let rp = confidential(&s, "rp", json!({})).await;
    let rs = confidential(&s, "resource-server", json!({})).await;
    s.user("alice", json!({"email": "alice@example.com"})).await;
    let tok = login_tokens(&s, &rp).await;
    let at = tok["access_token"].as_str().unwrap();
    let active = introspect(&s, &rs, at).await;
    assert_eq!(active["active"], true);
    for k in ["scope", "client_id", "sub", "aud", "exp", "iat", "iss", "token_type"] {
        assert!(active.get(k).is_some(), "introspection lacks {k}: {active}");
    }
    assert_eq!(active["client_id"], "rp");
    assert_eq!(active["token_type"], "Bearer");

    let (st, _) = post(&s, "/revoke", &rp, &[("token", at), ("token_type_hint", "access_token")]).await;
    assert_eq!(st, 200);
    assert_eq!(s.userinfo(at).await.0, 401);
    assert_eq!(introspect(&s, &rs, at).await, json!({"active": false}));
    // Revoking again, or revoking garbage, is still 200 (RFC 7009 §2.2).
    assert_eq!(post(&s, "/revoke", &rp, &[("token", at)]).await.0, 200);
    assert_eq!(post(&s, "/revoke", &rp, &[("token", "not-a-token")]).await.0, 200);
    let (_, audit) = s.admin(Method::GET, "/admin/audit?event=token_revocation", None).await;
    assert_eq!(audit["events"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn revoking_a_refresh_token_revokes_its_family_and_access_tokens() {
    let s = TestServer::start().await;
    let rp = confidential(&s, "rp", json!({})).await;
    s.user("alice", json!({})).await;
    let tok = login_tokens(&s, &rp).await;
    let rt = tok["refresh_token"].as_str().unwrap();
    let at = tok["access_token"].as_str().unwrap();
    // A wrong hint is only a hint.
    let (st, _) = post(&s, "/revoke", &rp, &[("token", rt), ("token_type_hint", "access_token")]).await;
    assert_eq!(st, 200);
    let (st, body) = post(&s, "/token", &rp, &[("grant_type", "refresh_token"), ("refresh_token", rt)]).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_grant")));
    assert_eq!(s.userinfo(at).await.0, 401, "access tokens of the revoked family die with it");
}

#[tokio::test]
async fn a_client_cannot_revoke_another_clients_tokens() {
    let s = TestServer::start().await;
    let owner = confidential(&s, "owner", json!({})).await;
    let other = confidential(&s, "other", json!({})).await;
    s.user("alice", json!({})).await;
    let tok = login_tokens(&s, &owner).await;
    for t in [tok["access_token"].as_str().unwrap(), tok["refresh_token"].as_str().unwrap()] {
        let (st, body) = post(&s, "/revoke", &other, &[("token", t)]).await;
        assert_eq!((st, body["error"].as_str()), (400, Some("unauthorized_client")));
    }
    assert_eq!(s.userinfo(tok["access_token"].as_str().unwrap()).await.0, 200, "nothing was revoked");
    let (st, _) = post(&s, "/token", &owner, &[("grant_type", "refresh_token"), ("refresh_token", tok["refresh_token"].as_str().unwrap())]).await;
    assert_eq!(st, 200);
}

#[tokio::test]
async fn revocation_and_introspection_require_client_authentication() {
    let s = TestServer::start().await;
    let rp = confidential(&s, "rp", json!({})).await;
    let (public, _) = s.client("spa", json!({"token_endpoint_auth_method": "none"})).await;
    for path in ["/revoke", "/introspect"] {
        let res = s.http.post(s.url(path)).form(&[("token", "x")]).send().await.unwrap();
        assert_eq!(res.status(), 401, "{path}");
        let res = s.http.post(s.url(path)).basic_auth(&rp.id, Some("wrong")).form(&[("token", "x")]).send().await.unwrap();
        assert_eq!(res.status(), 401, "{path}");
        let (st, body) = post(&s, path, &rp, &[]).await;
        assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "{path} without token");
    }
    let res = s.http.post(s.url("/introspect")).form(&[("token", "x"), ("client_id", public.as_str())]).send().await.unwrap();
    assert_eq!(res.status(), 401, "public clients may not introspect");
    let res = s.http.post(s.url("/revoke")).form(&[("token", "x"), ("client_id", public.as_str())]).send().await.unwrap();
    assert_eq!(res.status(), 200, "public clients may revoke their own tokens");
}

#[tokio::test]
async fn introspection_says_only_inactive_for_every_bad_token() {
    let s = TestServer::start_with(|c| c.access_token_ttl = 1).await;
    let rp = confidential(&s, "rp", json!({})).await;
    let other = confidential(&s, "other", json!({})).await;
    s.user("alice", json!({})).await;
    let tok = login_tokens(&s, &rp).await;
    let rt = tok["refresh_token"].as_str().unwrap();
    let active_rt = introspect(&s, &rp, rt).await;
    assert_eq!((active_rt["active"].as_bool(), active_rt["token_type"].as_str()), (Some(true), Some("refresh_token")));
    assert_eq!(introspect(&s, &other, rt).await, json!({"active": false}), "another client's refresh token");
    let (stranger, _) = authrim::keys::SigningKey::generate().unwrap();
    let foreign = stranger.sign_jwt("at+jwt", &jwt_parts(tok["access_token"].as_str().unwrap()).1).unwrap();
    for bad in ["garbage", "a.b.c", foreign.as_str(), tok["id_token"].as_str().unwrap()] {
        assert_eq!(introspect(&s, &rp, bad).await, json!({"active": false}), "{bad}");
    }
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    assert_eq!(introspect(&s, &rp, tok["access_token"].as_str().unwrap()).await, json!({"active": false}), "expired");
}

#[tokio::test]
async fn client_credentials_with_allowed_and_disallowed_scopes_and_audiences() {
    let s = TestServer::start().await;
    let svc = confidential(&s, "svc", json!({"allowed_audiences": ["https://api.example.com/orders"], "allowed_resources": ["https://data.example.com/graphql"]})).await;
    let rs = confidential(&s, "rs", json!({})).await;
    let cc = |form: Vec<(&'static str, &'static str)>| {
        let mut f = vec![("grant_type", "client_credentials")];
        f.extend(form);
        f
    };
    let (st, tok) = post(&s, "/token", &svc, &cc(vec![("scope", "orders:read"), ("audience", "https://api.example.com/orders")])).await;
    assert_eq!(st, 200, "{tok}");
    assert!(tok.get("refresh_token").is_none() && tok.get("id_token").is_none());
    let (_, claims) = jwt_parts(tok["access_token"].as_str().unwrap());
    assert_eq!(claims["sub"], "svc");
    assert_eq!(claims["client_id"], "svc");
    assert_eq!(claims["aud"], json!(["https://api.example.com/orders"]));
    assert_eq!(claims["scope"], "orders:read");
    let info = introspect(&s, &rs, tok["access_token"].as_str().unwrap()).await;
    assert_eq!((info["active"].as_bool(), info["sub"].as_str()), (Some(true), Some("svc")));
    // No scope asked: every non-user scope the client has.
    let (_, all) = post(&s, "/token", &svc, &cc(vec![])).await;
    assert_eq!(all["scope"], "orders:read orders:write");
    // Refusals.
    for (form, err) in [
        (vec![("scope", "orders:delete")], "invalid_scope"),
        (vec![("scope", "openid")], "invalid_scope"),
        (vec![("audience", "https://api.example.com/payments")], "invalid_target"),
        (vec![("resource", "https://data.example.com/other")], "invalid_target"),
        (vec![("resource", "not-absolute")], "invalid_target"),
    ] {
        let (st, body) = post(&s, "/token", &svc, &cc(form.clone())).await;
        assert_eq!((st, body["error"].as_str()), (400, Some(err)), "{form:?}");
    }
    let (st, both) = post(&s, "/token", &svc, &cc(vec![("resource", "https://data.example.com/graphql"), ("audience", "https://api.example.com/orders")])).await;
    assert_eq!(st, 200);
    assert_eq!(jwt_parts(both["access_token"].as_str().unwrap()).1["aud"].as_array().unwrap().len(), 2);
    // A client without the grant.
    let (plain, plain_secret) = s.client("plain", json!({})).await;
    let res = s.http.post(s.url("/token")).basic_auth(&plain, plain_secret.as_deref()).form(&[("grant_type", "client_credentials")]).send().await.unwrap();
    assert_eq!(res.json::<Value>().await.unwrap()["error"], "unauthorized_client");
}

#[tokio::test]
async fn expired_revocation_entries_are_swept() {
    let s = TestServer::start().await;
    let revocations = &s.server.app.stores.revocations;
    revocations.revoke(authrim::tenant::TenantId::DEFAULT, "short-lived", authrim::util::now() + 1).await.unwrap();
    revocations.revoke(authrim::tenant::TenantId::DEFAULT, "long-lived", authrim::util::now() + 3600).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    // Swept by this call, or by the server's own sweep if it ran meanwhile (its first round
    // runs when the housekeeping task is first scheduled, which a loaded machine can delay
    // past the expiry): `is_revoked` reads the table as it is, expired entries included, so
    // an entry not there any more was swept.
    s.server.app.stores.sweep_expired().await.unwrap();
    assert!(!revocations.is_revoked(authrim::tenant::TenantId::DEFAULT, "short-lived").await.unwrap());
    assert!(revocations.is_revoked(authrim::tenant::TenantId::DEFAULT, "long-lived").await.unwrap());
}

#[tokio::test]
async fn test_endpoints_are_off_unless_enabled() {
    let s = TestServer::start().await;
    let (st, _) = s.admin(Method::POST, "/test/bulk/users", Some(json!({"count": 1, "password": PASSWORD}))).await;
    assert_eq!(st, 404);
}

#[tokio::test]
async fn test_endpoints_seed_clients_users_sessions_codes_and_tokens() {
    let s = TestServer::start_with(|c| c.enable_test_endpoints = true).await;
    let res = s.http.post(s.url("/test/bulk/users")).json(&json!({"count": 1, "password": PASSWORD})).send().await.unwrap();
    assert_eq!(res.status(), 401, "admin token required");
    let (st, clients) = s
        .admin(Method::POST, "/test/bulk/clients", Some(json!({"count": 3, "prefix": "svc", "client": {"redirect_uris": [REDIRECT], "grant_types": ["authorization_code", "refresh_token"]}})))
        .await;
    assert_eq!(st, 200, "{clients}");
    let c0 = &clients["clients"][0];
    let (cid, secret) = (c0["client_id"].as_str().unwrap().to_string(), c0["client_secret"].as_str().unwrap().to_string());
    assert_eq!(cid, "svc-0");
    let (_, users) = s.admin(Method::POST, "/test/bulk/users", Some(json!({"count": 5, "password": PASSWORD}))).await;
    let ids: Vec<String> = users["users"].as_array().unwrap().iter().map(|u| u["id"].as_str().unwrap().to_string()).collect();
    assert_eq!(ids.len(), 5);

    // Codes redeem through the normal token endpoint.
    let (_, codes) = s.admin(Method::POST, "/test/bulk/codes", Some(json!({"client_id": cid, "redirect_uri": REDIRECT, "user_ids": ids, "expires_in": 3600}))).await;
    let code = codes["codes"][0].as_str().unwrap();
    let (st, tok, _) = s.token(Some((&cid, &secret)), &[("grant_type", "authorization_code"), ("code", code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200, "{tok}");

    // Sessions work for silent authentication.
    let (_, sessions) = s.admin(Method::POST, "/test/bulk/sessions", Some(json!({"user_ids": [ids[0]], "consent_client_id": cid, "scope": "openid"}))).await;
    let cookie = sessions["sessions"][0]["cookie"].as_str().unwrap();
    let res = s
        .http
        .get(s.url("/authorize"))
        .header("cookie", format!("authrim_session={cookie}"))
        .query(&[("response_type", "code"), ("client_id", cid.as_str()), ("redirect_uri", REDIRECT), ("scope", "openid"), ("prompt", "none")])
        .send()
        .await
        .unwrap();
    assert!(res.headers()["location"].to_str().unwrap().contains("code="), "silent auth with a seeded session");

    // Tokens of each kind are classified as such by the consumers.
    for (kind, expected) in [("valid", 200), ("expired", 401), ("revoked", 401)] {
        let (st, toks) = s.admin(Method::POST, "/test/bulk/tokens", Some(json!({"client_id": cid, "user_ids": [ids[1]], "kind": kind, "scope": "openid"}))).await;
        assert_eq!(st, 200, "{toks}");
        assert_eq!(s.userinfo(toks["tokens"][0].as_str().unwrap()).await.0, expected, "{kind}");
    }
    let (_, rts) = s.admin(Method::POST, "/test/bulk/tokens", Some(json!({"client_id": cid, "user_ids": ids, "kind": "valid", "token_type": "refresh_token", "scope": "offline_access"}))).await;
    let rt = rts["tokens"][4].as_str().unwrap();
    let (st, _, _) = s.token(Some((&cid, &secret)), &[("grant_type", "refresh_token"), ("refresh_token", rt)]).await;
    assert_eq!(st, 200);
    let (st, _) = s.admin(Method::POST, "/test/bulk/users", Some(json!({"count": 0, "password": PASSWORD}))).await;
    assert_eq!(st, 400);
}
