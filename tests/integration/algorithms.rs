//! Signing algorithms beyond RS256: ES256, EdDSA and PS256 keys beside RS256, chosen server-wide
//! for access tokens and per client for ID tokens, signed userinfo and access tokens.

use crate::harness::*;
use jsonwebtoken::{jwk::JwkSet, DecodingKey, Validation};
use serde_json::{json, Value};

async fn jwks(s: &TestServer) -> JwkSet {
    s.http.get(s.url("/jwks")).send().await.unwrap().json().await.unwrap()
}

/// Verify `jwt` with the published key its header names; its header `alg`.
pub async fn verify(s: &TestServer, jwt: &str) -> (String, Value) {
    let header = jsonwebtoken::decode_header(jwt).unwrap();
    let set = jwks(s).await;
    let jwk = set.find(header.kid.as_deref().unwrap()).expect("the kid is published");
    let mut v = Validation::new(header.alg);
    v.validate_aud = false;
    v.required_spec_claims.clear(); // a signed userinfo answer has no exp
    let data = jsonwebtoken::decode::<Value>(jwt, &DecodingKey::from_jwk(jwk).unwrap(), &v).unwrap_or_else(|e| panic!("{:?}: {e}", header.alg));
    (format!("{:?}", header.alg), data.claims)
}

async fn all_algorithms() -> TestServer {
    TestServer::start_with(|c| {
        c.signing_algorithms = "RS256 ES256 EdDSA PS256".into();
        c.token_signing_alg = "ES256".into();
    })
    .await
}

#[tokio::test]
async fn every_configured_algorithm_has_a_published_key_and_signs_what_is_asked() {
    let s = all_algorithms().await;
    let set = jwks(&s).await;
    // One signing key per algorithm; the encryption keys (`use: enc`) are beside them.
    let signing = |k: &&jsonwebtoken::jwk::Jwk| !matches!(k.common.public_key_use, Some(jsonwebtoken::jwk::PublicKeyUse::Encryption));
    let mut algs: Vec<String> = set.keys.iter().filter(signing).map(|k| format!("{:?}", k.common.key_algorithm.unwrap())).collect();
    algs.sort();
    assert_eq!(algs, ["ES256", "EdDSA", "PS256", "RS256"]);
    assert_eq!(set.keys.len(), 6, "and the two encryption keys");
    let d: Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    assert_eq!(d["id_token_signing_alg_values_supported"], json!(["RS256", "ES256", "EdDSA", "PS256"]));
    assert_eq!(d["userinfo_signing_alg_values_supported"], d["id_token_signing_alg_values_supported"]);

    s.user("alice", json!({"email": "alice@example.com"})).await;
    // Defaults: access tokens in token_signing_alg, ID tokens in RS256 (OIDC's default).
    let (_, plain) = s.client("plain", json!({})).await;
    let p = s.code_for(&s.browser(), "plain", "alice", &[]).await;
    let (_, tok, _) = s.token(Some(("plain", plain.as_deref().unwrap())), &[("grant_type", "authorization_code"), ("code", &p["code"]), ("redirect_uri", REDIRECT)]).await;
    let at = tok["access_token"].as_str().unwrap();
    assert_eq!(verify(&s, at).await.0, "ES256");
    assert_eq!(verify(&s, tok["id_token"].as_str().unwrap()).await.0, "RS256");
    // An ES256 access token works at userinfo and introspection.
    assert_eq!(s.userinfo(at).await.0, 200);
    let res = s.http.post(s.url("/introspect")).basic_auth("plain", plain.as_deref()).form(&[("token", at)]).send().await.unwrap();
    assert_eq!(res.json::<Value>().await.unwrap()["active"], true);

    // A client that asks: EdDSA ID tokens (at_hash over SHA-512), PS256 access tokens, signed
    // userinfo in ES256.
    let (_, secret) = s
        .client("picky", json!({"id_token_signed_response_alg": "EdDSA", "access_token_signing_alg": "PS256", "userinfo_signed_response_alg": "ES256"}))
        .await;
    let p = s.code_for(&s.browser(), "picky", "alice", &[]).await;
    let (_, tok, _) = s.token(Some(("picky", secret.as_deref().unwrap())), &[("grant_type", "authorization_code"), ("code", &p["code"]), ("redirect_uri", REDIRECT)]).await;
    let at = tok["access_token"].as_str().unwrap();
    assert_eq!(verify(&s, at).await.0, "PS256");
    let (alg, id) = verify(&s, tok["id_token"].as_str().unwrap()).await;
    assert_eq!(alg, "EdDSA");
    let sha512 = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA512, at.as_bytes());
    assert_eq!(id["at_hash"], authrim::util::b64(&sha512.as_ref()[..32]));
    let res = s.http.get(s.url("/userinfo")).bearer_auth(at).send().await.unwrap();
    assert_eq!(res.headers()["content-type"], "application/jwt");
    let (alg, claims) = verify(&s, &res.text().await.unwrap()).await;
    assert_eq!(alg, "ES256");
    assert_eq!((claims["iss"].as_str(), claims["aud"].as_str(), claims["email"].as_str()), (Some(s.issuer().as_str()), Some("picky"), Some("alice@example.com")));
}

#[tokio::test]
async fn a_token_whose_header_names_another_algorithm_than_its_key_is_refused() {
    let s = all_algorithms().await;
    let (_, secret) = s.client("svc", json!({"grant_types": ["client_credentials"], "redirect_uris": [], "scope": "api"})).await;
    let (_, tok, _) = s.token(Some(("svc", secret.as_deref().unwrap())), &[("grant_type", "client_credentials")]).await;
    let at = tok["access_token"].as_str().unwrap();
    let parts: Vec<&str> = at.split('.').collect();
    let (header, _) = jwt_parts(at);
    for alg in ["RS256", "EdDSA", "HS256", "none"] {
        let mut h = header.clone();
        h["alg"] = json!(alg);
        let forged = format!("{}.{}.{}", authrim::util::b64(h.to_string().as_bytes()), parts[1], parts[2]);
        let res = s.http.post(s.url("/introspect")).basic_auth("svc", secret.as_deref()).form(&[("token", forged.as_str())]).send().await.unwrap();
        assert_eq!(res.json::<Value>().await.unwrap()["active"], false, "{alg}");
    }
}

#[tokio::test]
async fn clients_may_only_ask_for_algorithms_the_server_signs_with() {
    let s = TestServer::start().await; // RS256 only
    for meta in [json!({"id_token_signed_response_alg": "ES256"}), json!({"userinfo_signed_response_alg": "EdDSA"}), json!({"access_token_signing_alg": "PS256"}), json!({"id_token_signed_response_alg": "HS256"})] {
        let mut body = json!({"client_id": "x", "redirect_uris": [REDIRECT]});
        for (k, v) in meta.as_object().unwrap() {
            body[k] = v.clone();
        }
        let (st, v) = s.admin(reqwest::Method::POST, "/admin/clients", Some(body)).await;
        assert_eq!((st, v["error"].as_str()), (400, Some("invalid_client_metadata")), "{meta}: {v}");
    }
    let (st, _) = s.admin(reqwest::Method::POST, "/admin/clients", Some(json!({"client_id": "ok", "redirect_uris": [REDIRECT], "id_token_signed_response_alg": "RS256"}))).await;
    assert_eq!(st, 201);
    // Configuration: RS256 is always kept, and the default must be one of the list.
    for (algs, default) in [("ES256", "ES256"), ("RS256", "ES256"), ("RS256 HS256", "RS256")] {
        let dir = tempfile::tempdir().unwrap();
        let mut c = test_config(dir.path());
        c.signing_algorithms = algs.into();
        c.token_signing_alg = default.into();
        assert!(c.validate().is_err(), "{algs} / {default}");
    }
}
