//! Hybrid and implicit responses (OpenID Connect Core §3.2, §3.3; OAuth 2.0 Multiple Response
//! Type Encoding Practices): each response type's fragment, the hashes recomputed here, the
//! nonce, and the refusals (a client that did not register the type, the query, FAPI 2.0).

use crate::harness::*;
use base64::Engine;
use serde_json::{json, Value};
use std::collections::HashMap;

const ALL_TYPES: &[&str] = &["code", "code id_token", "code token", "code id_token token", "id_token", "id_token token"];

/// A client registered for every response type (and the grants they need).
async fn hybrid_client(s: &TestServer, id: &str, extra: Value) -> String {
    let mut body = json!({"grant_types": ["authorization_code", "implicit"], "response_types": ALL_TYPES});
    for (k, v) in extra.as_object().cloned().unwrap_or_default() {
        body[k] = v;
    }
    s.client(id, body).await.1.unwrap()
}

fn query<'a>(response_type: &'a str, extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    request_query(response_type, "rp", extra)
}

fn fragment(page: &Page) -> HashMap<String, String> {
    page.fragment_params()
}

/// Sign in (as alice) and consent, then return the final answer (a redirect or a form_post page).
pub async fn sign_in(b: &Browser, q: &[(&str, &str)]) -> Page {
    let mut page = Page::from(b.authorize(q).await).await;
    if page.is_login() {
        page = b.post("/login", &[("challenge", &page.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    }
    if page.is_consent() {
        page = b.post_no_follow("/consent", &[("challenge", &page.challenge()), ("decision", "allow")]).await;
    }
    page
}

/// OpenID Connect Core §3.3.2.11: base64url of the left half of the hash of `value`, the
/// hash being SHA-256 for RS256 and SHA-512 for EdDSA (as the OpenID Foundation's suite checks).
fn half_hash(alg: &str, value: &str) -> String {
    let algorithm = match alg {
        "EdDSA" => &aws_lc_rs::digest::SHA512,
        "RS256" | "ES256" | "PS256" => &aws_lc_rs::digest::SHA256,
        other => panic!("unexpected alg {other}"),
    };
    let digest = aws_lc_rs::digest::digest(algorithm, value.as_bytes());
    let bytes = digest.as_ref();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&bytes[..bytes.len() / 2])
}

#[tokio::test]
async fn every_response_type_returns_its_parameters_in_the_fragment_with_hashes_that_match() {
    let s = TestServer::start().await;
    let secret = hybrid_client(&s, "rp", json!({})).await;
    s.user("alice", json!({"name": "Alice", "email": "alice@example.com"})).await;
    let b = s.browser();
    for rt in ALL_TYPES {
        let page = sign_in(&b, &query(rt, &[])).await;
        assert!(matches!(page.status, 302 | 303), "{rt}: {}", page.html);
        if *rt == "code" {
            // The code alone stays in the query.
            let p = page.redirect_params();
            assert!(p.contains_key("code") && !p.contains_key("id_token"), "{rt}: {p:?}");
            continue;
        }
        let p = fragment(&page);
        assert_eq!(p["state"], "st-1", "{rt}");
        assert_eq!(p["iss"], s.issuer(), "{rt}");
        assert!(p.contains_key("session_state"), "{rt}: Session Management as for code");
        let words: Vec<&str> = rt.split(' ').collect();
        assert_eq!(p.contains_key("code"), words.contains(&"code"), "{rt}: {p:?}");
        assert_eq!(p.contains_key("id_token"), words.contains(&"id_token"), "{rt}: {p:?}");
        assert_eq!(p.contains_key("access_token"), words.contains(&"token"), "{rt}: {p:?}");
        assert!(!p.contains_key("refresh_token"), "{rt}: never from the authorization endpoint");
        if let Some(at) = p.get("access_token") {
            assert_eq!(p["token_type"], "Bearer");
            assert_eq!(p["expires_in"], "3600", "{rt}: the token endpoint's lifetime");
            let (_, claims) = jwt_parts(at);
            assert_eq!(claims["client_id"], "rp");
            let (st, info, _) = s.userinfo(at).await;
            assert_eq!(st, 200, "{rt}: {info}");
            assert_eq!(info["email"], "alice@example.com");
        }
        if let Some(id_token) = p.get("id_token") {
            let (header, claims) = jwt_parts(id_token);
            let alg = header["alg"].as_str().unwrap();
            assert_eq!(claims["nonce"], "n-1", "{rt}");
            assert_eq!(claims["aud"], "rp");
            assert_eq!(claims.get("c_hash").and_then(Value::as_str), p.get("code").map(|c| half_hash(alg, c)).as_deref(), "{rt}: c_hash");
            assert_eq!(claims.get("at_hash").and_then(Value::as_str), p.get("access_token").map(|t| half_hash(alg, t)).as_deref(), "{rt}: at_hash");
            // Core §5.4: the scope's claims go in the ID token only when no access token is
            // issued to fetch them from userinfo with.
            assert_eq!(claims.get("email").is_some(), *rt == "id_token", "{rt}: {claims}");
            assert_eq!(claims.get("name").is_some(), *rt == "id_token", "{rt}: {claims}");
        }
        if let Some(code) = p.get("code") {
            // The hybrid code redeems as usual, with the nonce of the request.
            let (st, tok, _) = s.token(Some(("rp", &secret)), &[("grant_type", "authorization_code"), ("code", code), ("redirect_uri", REDIRECT)]).await;
            assert_eq!(st, 200, "{rt}: {tok}");
            let (_, claims) = jwt_parts(tok["id_token"].as_str().unwrap());
            assert_eq!(claims["nonce"], "n-1");
        }
    }
}

#[tokio::test]
async fn response_types_are_found_whatever_the_order_of_their_words() {
    let s = TestServer::start().await;
    hybrid_client(&s, "rp", json!({})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let p = fragment(&sign_in(&b, &query("token id_token code", &[])).await);
    assert!(p.contains_key("code") && p.contains_key("id_token") && p.contains_key("access_token"), "{p:?}");
}

#[tokio::test]
async fn eddsa_id_tokens_hash_with_sha512() {
    let s = TestServer::start_with(|c| c.signing_algorithms = "RS256 EdDSA".into()).await;
    hybrid_client(&s, "rp", json!({"id_token_signed_response_alg": "EdDSA"})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let p = fragment(&sign_in(&b, &query("code id_token token", &[])).await);
    let (header, claims) = jwt_parts(&p["id_token"]);
    assert_eq!(header["alg"], "EdDSA");
    assert_eq!(claims["c_hash"], half_hash("EdDSA", &p["code"]));
    assert_eq!(claims["at_hash"], half_hash("EdDSA", &p["access_token"]));
    assert_eq!(claims["c_hash"].as_str().unwrap().len(), 43, "half of 64 bytes");
}

#[tokio::test]
async fn a_nonce_is_required_wherever_an_id_token_comes_from_the_authorization_endpoint() {
    let s = TestServer::start().await;
    hybrid_client(&s, "rp", json!({})).await;
    let b = s.browser();
    for rt in ["code id_token", "code id_token token", "id_token", "id_token token"] {
        let q: Vec<_> = query(rt, &[]).into_iter().filter(|(k, _)| *k != "nonce").collect();
        let p = fragment(&Page::from(b.authorize(&q).await).await);
        assert_eq!(p["error"], "invalid_request", "{rt}: {p:?}");
        assert!(p["error_description"].contains("nonce"), "{rt}: {p:?}");
        assert_eq!(p["state"], "st-1");
        assert_eq!(p["iss"], s.issuer());
    }
    // `code token` returns its ID token from the token endpoint: no nonce needed (the
    // request goes on to the login page).
    let q: Vec<_> = query("code token", &[]).into_iter().filter(|(k, _)| *k != "nonce").collect();
    assert!(Page::from(b.authorize(&q).await).await.is_login());
}

#[tokio::test]
async fn a_client_that_did_not_register_the_type_is_refused_in_the_fragment() {
    let s = TestServer::start().await;
    // The default: code only.
    s.client("rp", json!({})).await;
    s.client("partial", json!({"grant_types": ["authorization_code", "implicit"], "response_types": ["code", "code id_token"]})).await;
    let b = s.browser();
    for rt in &ALL_TYPES[1..] {
        let p = fragment(&Page::from(b.authorize(&query(rt, &[])).await).await);
        assert_eq!(p["error"], "unauthorized_client", "{rt}: {p:?}");
        assert_eq!(p["state"], "st-1");
    }
    let p = fragment(&Page::from(b.authorize(&query("id_token", &[("client_id", "partial")])).await).await);
    assert_eq!(p["error"], "unauthorized_client", "{p:?}");
    assert!(Page::from(b.authorize(&query("code id_token", &[("client_id", "partial")])).await).await.is_login());
    // `token` alone (plain OAuth 2.0 implicit) is not offered to anyone.
    let p = fragment(&Page::from(b.authorize(&query("token", &[])).await).await);
    assert_eq!(p["error"], "unsupported_response_type", "{p:?}");
}

#[tokio::test]
async fn tokens_are_never_sent_in_the_query() {
    let s = TestServer::start().await;
    hybrid_client(&s, "rp", json!({})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    for rt in &ALL_TYPES[1..] {
        let page = Page::from(b.authorize(&query(rt, &[("response_mode", "query")])).await).await;
        let p = fragment(&page);
        assert_eq!(p["error"], "invalid_request", "{rt}: {p:?}");
        assert!(p["error_description"].contains("query"), "{p:?}");
    }
    // Signed in, `response_mode=fragment` also works for `code`.
    let page = sign_in(&b, &query("code", &[("response_mode", "fragment")])).await;
    assert!(fragment(&page).contains_key("code"));
}

#[tokio::test]
async fn form_post_carries_the_tokens_in_the_page() {
    let s = TestServer::start().await;
    hybrid_client(&s, "rp", json!({})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let page = sign_in(&b, &query("code id_token token", &[("response_mode", "form_post")])).await;
    assert_eq!(page.status, 200, "{}", page.html);
    assert!(page.location.is_none());
    let (action, fields) = page.form_post();
    assert_eq!(action, REDIRECT);
    for k in ["code", "id_token", "access_token", "token_type", "expires_in", "state", "iss", "session_state"] {
        assert!(fields.contains_key(k), "{k} missing: {fields:?}");
    }
    let (header, claims) = jwt_parts(&fields["id_token"]);
    let alg = header["alg"].as_str().unwrap();
    assert_eq!(claims["c_hash"], half_hash(alg, &fields["code"]));
    assert_eq!(claims["at_hash"], half_hash(alg, &fields["access_token"]));
    // An error is posted too (no nonce).
    let q: Vec<_> = query("id_token", &[("response_mode", "form_post")]).into_iter().filter(|(k, _)| *k != "nonce").collect();
    let page = Page::from(b.authorize(&q).await).await;
    let (_, fields) = page.form_post();
    assert_eq!(fields["error"], "invalid_request");
    assert_eq!(fields["state"], "st-1");
}

#[tokio::test]
async fn prompt_none_errors_go_in_the_fragment() {
    let s = TestServer::start().await;
    hybrid_client(&s, "rp", json!({})).await;
    let b = s.browser();
    let p = fragment(&Page::from(b.authorize(&query("id_token token", &[("prompt", "none")])).await).await);
    assert_eq!(p["error"], "login_required");
    assert_eq!(p["state"], "st-1");
}

#[tokio::test]
async fn registration_needs_the_implicit_grant_and_fapi2_refuses_the_types() {
    let s = TestServer::start().await;
    let (st, v) = s
        .admin(reqwest::Method::POST, "/admin/clients", Some(json!({"client_id": "x", "redirect_uris": [REDIRECT], "response_types": ["id_token"]})))
        .await;
    assert_eq!(st, 400, "{v}");
    let (st, v) = s
        .admin(reqwest::Method::POST, "/admin/clients", Some(json!({"client_id": "y", "redirect_uris": [REDIRECT], "grant_types": ["implicit"], "response_types": ["token"]})))
        .await;
    assert_eq!(st, 400, "{v}");
    let disco: Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    assert_eq!(disco["response_types_supported"], json!(ALL_TYPES));
    assert!(disco["response_modes_supported"].as_array().unwrap().contains(&json!("fragment")));
    assert!(disco["grant_types_supported"].as_array().unwrap().contains(&json!("implicit")));

    // Dynamic registration: the implicit grant only where the operator opened it.
    let s = TestServer::start_with(|c| c.open_registration = true).await;
    let body = json!({"redirect_uris": [REDIRECT], "grant_types": ["authorization_code", "implicit"], "response_types": ["code id_token"]});
    let res = s.http.post(s.url("/register")).json(&body).send().await.unwrap();
    assert_eq!(res.status().as_u16(), 400);
    let s = TestServer::start_with(|c| {
        c.open_registration = true;
        c.registration_grant_types = "authorization_code implicit".into();
    })
    .await;
    let res = s.http.post(s.url("/register")).json(&body).send().await.unwrap();
    assert_eq!(res.status().as_u16(), 201);
    let v: Value = res.json().await.unwrap();
    assert_eq!(v["response_types"], json!(["code id_token"]));

    let s = TestServer::start_with(|c| {
        c.security_profile = "fapi2".into();
        c.signing_algorithms = "RS256 ES256".into();
        c.token_signing_alg = "ES256".into();
    })
    .await;
    let disco: Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    assert_eq!(disco["response_types_supported"], json!(["code"]));
    assert!(!disco["grant_types_supported"].as_array().unwrap().contains(&json!("implicit")));
    let jwks = json!({"keys": [{"kty": "EC", "crv": "P-256", "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}]});
    let (st, v) = s
        .admin(
            reqwest::Method::POST,
            "/admin/clients",
            Some(json!({"client_id": "f", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt", "jwks": jwks,
                "grant_types": ["authorization_code", "implicit"], "response_types": ["code", "code id_token"]})),
        )
        .await;
    assert_eq!(st, 400, "{v}");
    assert!(v.to_string().contains("FAPI"), "{v}");
}
