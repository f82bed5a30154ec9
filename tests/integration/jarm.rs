//! JARM (JWT Secured Authorization Response Mode): every mode's single `response` parameter,
//! verified with the published keys, its `iss`, `aud` and `exp`; errors as JARM; the refusal
//! of `query.jwt` for tokens; PAR and request objects; the client's algorithm and its
//! registration.

use crate::algorithms::verify;
use crate::client_jwt::{jwks, Signer};
use crate::harness::*;
use crate::hybrid::sign_in;
use crate::request_object::object;
use serde_json::{json, Value};
use std::collections::HashMap;

/// The only parameter a JARM response may carry (the suite's `RejectNonJarmResponsesInUrlQuery`).
fn only_response(params: HashMap<String, String>) -> String {
    assert_eq!(params.keys().collect::<Vec<_>>(), vec!["response"], "{params:?}");
    params["response"].clone()
}

/// The response JWT's claims, after checking its signature against `/jwks` and the claims
/// JARM §2.1 requires: ours as `iss`, the client as `aud`, an `exp` no further than `ttl`.
async fn claims(s: &TestServer, jwt: &str, client_id: &str, ttl: u64) -> (String, Value) {
    let (alg, c) = verify(s, jwt).await;
    assert_eq!(c["iss"], s.issuer(), "{c}");
    assert_eq!(c["aud"], client_id, "{c}");
    let (now, exp) = (authrim::util::now(), c["exp"].as_u64().expect("exp"));
    assert!(exp > now && exp <= now + ttl, "exp {exp} within {ttl} s of {now}");
    (alg, c)
}

async fn discovery(s: &TestServer) -> Value {
    s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap()
}

fn redeem(code: &str) -> [(&str, &str); 3] {
    [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", REDIRECT)]
}

#[tokio::test]
async fn each_mode_sends_one_signed_response_that_verifies_with_the_published_keys() {
    let s = TestServer::start().await;
    let secret = s.client("rp", json!({})).await.1.unwrap();
    s.user("alice", json!({})).await;
    let b = s.browser();
    for mode in ["jwt", "query.jwt", "fragment.jwt", "form_post.jwt"] {
        let page = sign_in(&b, &request_query("code", "rp", &[("response_mode", mode)])).await;
        let jwt = match mode {
            // `jwt` is `query.jwt` for `code` (JARM §2.3.4).
            "jwt" | "query.jwt" => only_response(page.redirect_params()),
            "fragment.jwt" => only_response(page.fragment_params()),
            _ => {
                assert_eq!(page.status, 200, "{}", page.html);
                let (action, fields) = page.form_post();
                assert_eq!(action, REDIRECT);
                only_response(fields)
            }
        };
        let (alg, c) = claims(&s, &jwt, "rp", 600).await;
        assert_eq!(alg, "RS256", "the default (JARM §3)");
        assert_eq!(jwt_parts(&jwt).0["typ"], "JWT");
        assert_eq!(c["state"], "st-1", "{mode}");
        assert!(c.get("session_state").is_some(), "{mode}: every response parameter: {c}");
        let (st, tok, _) = s.token(Some(("rp", &secret)), &redeem(c["code"].as_str().unwrap())).await;
        assert_eq!(st, 200, "{mode}: the code in the JWT redeems: {tok}");
    }
    let d = discovery(&s).await;
    for mode in ["jwt", "query.jwt", "fragment.jwt", "form_post.jwt"] {
        assert!(d["response_modes_supported"].as_array().unwrap().contains(&json!(mode)), "{d}");
    }
    assert_eq!(d["authorization_signing_alg_values_supported"], json!(["RS256"]));
}

#[tokio::test]
async fn errors_after_the_redirect_uri_is_trusted_are_jarm_responses_and_before_it_pages() {
    let s = TestServer::start().await;
    s.client("rp", json!({})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    // Refused while reading the request.
    let page = Page::from(b.authorize(&request_query("code", "rp", &[("response_mode", "jwt"), ("scope", "admin")])).await).await;
    let (_, c) = claims(&s, &only_response(page.redirect_params()), "rp", 600).await;
    assert_eq!((c["error"].as_str(), c["state"].as_str()), (Some("invalid_scope"), Some("st-1")), "{c}");
    assert!(c["error_description"].is_string() && c.get("code").is_none(), "{c}");
    // Refused later: prompt=none without a session.
    let page = Page::from(b.authorize(&request_query("code", "rp", &[("response_mode", "form_post.jwt"), ("prompt", "none")])).await).await;
    let (_, c) = claims(&s, &only_response(page.form_post().1), "rp", 600).await;
    assert_eq!(c["error"], "login_required");
    // The user says no.
    let consent = sign_in_to_consent(&b, &request_query("code", "rp", &[("response_mode", "fragment.jwt")])).await;
    let denied = b.post_no_follow("/consent", &[("challenge", &consent.challenge()), ("decision", "deny")]).await;
    let (_, c) = claims(&s, &only_response(denied.fragment_params()), "rp", 600).await;
    assert_eq!(c["error"], "access_denied");
    // Not before: an unregistered redirect URI or client gets our page, no response JWT.
    for q in [request_query("code", "rp", &[("response_mode", "jwt"), ("redirect_uri", "https://evil.example/cb")]), request_query("code", "nobody", &[("response_mode", "jwt")])] {
        let page = Page::from(b.authorize(&q).await).await;
        assert_eq!((page.status, page.location.as_deref()), (400, None), "{}", page.html);
    }
}

async fn sign_in_to_consent(b: &Browser, q: &[(&str, &str)]) -> Page {
    let page = Page::from(b.authorize(q).await).await;
    let page = b.post("/login", &[("challenge", &page.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    assert!(page.is_consent(), "{}", page.html);
    page
}

#[tokio::test]
async fn token_responses_go_in_the_fragment_and_never_in_the_query() {
    let s = TestServer::start().await;
    let types = ["code", "code id_token", "code token", "code id_token token", "id_token", "id_token token"];
    s.client("rp", json!({"grant_types": ["authorization_code", "implicit"], "response_types": types})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    // `jwt` is `fragment.jwt` for a type that returns a token (JARM §2.3.4), with each of its
    // parameters in the JWT.
    let page = sign_in(&b, &request_query("code id_token token", "rp", &[("response_mode", "jwt")])).await;
    let (_, c) = claims(&s, &only_response(page.fragment_params()), "rp", 600).await;
    for k in ["code", "id_token", "access_token", "token_type", "expires_in", "state"] {
        assert!(c[k].is_string(), "{k}: {c}");
    }
    let (_, id) = jwt_parts(c["id_token"].as_str().unwrap());
    assert_eq!(id["nonce"], "n-1");
    // JARM §2.3.1: `query.jwt` not with tokens (its JWT is not encrypted); the error is a
    // JARM response in the fragment.
    for rt in &types[1..] {
        let page = Page::from(b.authorize(&request_query(rt, "rp", &[("response_mode", "query.jwt")])).await).await;
        let (_, c) = claims(&s, &only_response(page.fragment_params()), "rp", 600).await;
        assert_eq!(c["error"], "invalid_request", "{rt}: {c}");
        assert!(c["error_description"].as_str().unwrap().contains("query.jwt"), "{c}");
    }
}

#[tokio::test]
async fn the_clients_algorithm_and_the_configured_lifetime_are_used() {
    let s = TestServer::start_with(|c| {
        c.signing_algorithms = "RS256 ES256 EdDSA".into();
        c.jarm_response_ttl = 30;
    })
    .await;
    s.client("rp", json!({"authorization_signed_response_alg": "ES256"})).await;
    s.client("ed", json!({"authorization_signed_response_alg": "EdDSA"})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    for (client, alg) in [("rp", "ES256"), ("ed", "EdDSA")] {
        let page = sign_in(&b, &request_query("code", client, &[("response_mode", "query.jwt")])).await;
        let (signed_with, c) = claims(&s, &only_response(page.redirect_params()), client, 30).await;
        assert_eq!(signed_with, alg);
        assert!(c["exp"].as_u64().unwrap() + 5 > authrim::util::now() + 30, "about jarm_response_ttl ahead: {c}");
    }
    let d = discovery(&s).await;
    assert_eq!(d["authorization_signing_alg_values_supported"], json!(["RS256", "ES256", "EdDSA"]));
}

#[tokio::test]
async fn pushed_requests_and_request_objects_ask_for_jarm_too() {
    let s = TestServer::start().await;
    let key = Signer::es256("k1");
    let secret = s.client("rp", json!({"jwks": jwks(&[&key])})).await.1.unwrap();
    s.user("alice", json!({})).await;
    let b = s.browser();
    // Pushed (RFC 9126).
    let form = request_query("code", "rp", &[("response_mode", "jwt"), ("state", "pushed")]);
    let res = s.http.post(s.url("/par")).basic_auth("rp", Some(&secret)).form(&form).send().await.unwrap();
    let pushed: Value = res.json().await.unwrap();
    let uri = pushed["request_uri"].as_str().expect("pushed").to_string();
    let page = sign_in(&b, &[("client_id", "rp"), ("request_uri", &uri)]).await;
    let (_, c) = claims(&s, &only_response(page.redirect_params()), "rp", 600).await;
    assert_eq!(c["state"], "pushed");
    // A request object (RFC 9101) naming the mode; the query's mode does not count.
    let jwt = key.sign(&object(&s, "rp", json!({"response_mode": "form_post.jwt"})));
    let page = sign_in(&b, &[("client_id", "rp"), ("response_mode", "query"), ("request", &jwt)]).await;
    let (_, c) = claims(&s, &only_response(page.form_post().1), "rp", 600).await;
    assert_eq!(c["state"], "signed-state");
    // A bad request object is refused as JARM if the query asked for it.
    let bad = key.sign(&object(&s, "rp", json!({"aud": "https://elsewhere.example"})));
    let q = [("client_id", "rp"), ("redirect_uri", REDIRECT), ("state", "q"), ("response_mode", "jwt"), ("request", bad.as_str())];
    let page = Page::from(b.authorize(&q).await).await;
    let (_, c) = claims(&s, &only_response(page.redirect_params()), "rp", 600).await;
    assert_eq!((c["error"].as_str(), c["state"].as_str()), (Some("invalid_request_object"), Some("q")), "{c}");
}

#[tokio::test]
async fn registration_accepts_only_algorithms_the_server_signs_with() {
    let s = TestServer::start_with(|c| {
        c.open_registration = true;
        c.signing_algorithms = "RS256 PS256".into();
    })
    .await;
    let register = |body: Value| {
        let req = s.http.post(s.url("/register")).json(&body);
        async move {
            let res = req.send().await.unwrap();
            (res.status().as_u16(), res.json::<Value>().await.unwrap())
        }
    };
    let base = json!({"redirect_uris": [REDIRECT]});
    let with = |k: &str, v: &str| {
        let mut b = base.clone();
        b[k] = json!(v);
        b
    };
    let (st, body) = register(with("authorization_signed_response_alg", "PS256")).await;
    assert_eq!(st, 201, "{body}");
    assert_eq!(body["authorization_signed_response_alg"], "PS256");
    // `none` is not allowed (JARM §3); ES256 has no key here; HS256 is never ours to sign with.
    for alg in ["none", "ES256", "HS256"] {
        let (st, body) = register(with("authorization_signed_response_alg", alg)).await;
        assert_eq!((st, body["error"].as_str()), (400, Some("invalid_client_metadata")), "{alg}: {body}");
    }
    // Encryption without a key to encrypt to is refused, not ignored; with one, accepted.
    let (st, body) = register(with("authorization_encrypted_response_alg", "RSA-OAEP-256")).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_client_metadata")), "{body}");
    let (_, public) = authrim::keys::jwe::DecryptionKey::generate("P-256").unwrap();
    let mut keyed = with("authorization_encrypted_response_alg", "ECDH-ES");
    keyed["jwks"] = json!({"keys": [public]});
    let (st, body) = register(keyed.clone()).await;
    assert_eq!((st, body["authorization_encrypted_response_enc"].as_str()), (201, Some("A128CBC-HS256")), "{body}");
    keyed["authorization_encrypted_response_alg"] = "RSA-OAEP".into();
    let (st, body) = register(keyed).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_client_metadata")), "an EC key for RSA: {body}");

    // The admin API: the same rules, and clearing with "".
    let (st, body) = s.admin(reqwest::Method::POST, "/admin/clients", Some(json!({"client_id": "a", "redirect_uris": [REDIRECT], "authorization_signed_response_alg": "ES256"}))).await;
    assert_eq!(st, 400, "{body}");
    let (st, body) = s.admin(reqwest::Method::POST, "/admin/clients", Some(json!({"client_id": "a", "redirect_uris": [REDIRECT], "authorization_signed_response_alg": "none"}))).await;
    assert_eq!(st, 400, "{body}");
    let (st, body) = s.admin(reqwest::Method::POST, "/admin/clients", Some(json!({"client_id": "a", "redirect_uris": [REDIRECT], "authorization_signed_response_alg": "PS256"}))).await;
    assert_eq!(st, 201, "{body}");
    let (st, body) = s.admin(reqwest::Method::PATCH, "/admin/clients/a", Some(json!({"authorization_signed_response_alg": ""}))).await;
    assert_eq!(st, 200, "{body}");
    assert!(body.get("authorization_signed_response_alg").is_none(), "{body}");
}

#[tokio::test]
async fn under_fapi2_rs256_is_refused_and_the_default_is_the_servers_algorithm() {
    // token_signing_alg ES256, RS256 and ES256 keys.
    let s = crate::fapi::fapi_server().await;
    let key = Signer::es256("bank-key");
    let bank = |alg: Option<&str>| {
        let mut c = json!({"token_endpoint_auth_method": "private_key_jwt", "jwks": jwks(&[&key])});
        if let Some(alg) = alg {
            c["authorization_signed_response_alg"] = json!(alg);
        }
        c
    };
    let mut rs = bank(Some("RS256"));
    (rs["client_id"], rs["redirect_uris"]) = (json!("rs"), json!([REDIRECT]));
    let (st, body) = s.admin(reqwest::Method::POST, "/admin/clients", Some(rs)).await;
    assert_eq!(st, 400, "FAPI 2.0 §5.4: {body}");
    assert!(body["error_description"].as_str().unwrap().contains("authorization_signed_response_alg"), "{body}");
    s.client("bank", bank(None)).await;
    s.user("alice", json!({})).await;
    let challenge = authrim::util::b64(&authrim::util::sha256(crate::fapi::VERIFIER.as_bytes()));
    let extra = [("code_challenge", challenge.as_str()), ("code_challenge_method", "S256"), ("response_mode", "jwt")];
    let (st, body) = crate::fapi::push(&s, &key, json!(s.issuer()), &extra).await;
    assert_eq!(st, 201, "{body}");
    let page = sign_in(&s.browser(), &[("client_id", "bank"), ("request_uri", body["request_uri"].as_str().unwrap())]).await;
    let (alg, c) = claims(&s, &only_response(page.redirect_params()), "bank", 600).await;
    assert_eq!(alg, "ES256", "token_signing_alg, not RS256");
    assert_eq!(c["state"], "fapi-state");
    let d = discovery(&s).await;
    assert_eq!(d["authorization_signing_alg_values_supported"], json!(["ES256"]));
}

#[tokio::test]
async fn encrypted_responses_are_signed_then_encrypted_to_the_clients_key() {
    encrypted_responses(false).await;
}

#[tokio::test]
async fn encrypted_responses_are_signed_then_encrypted_to_the_clients_key_on_postgres() {
    encrypted_responses(true).await;
}

async fn encrypted_responses(postgres: bool) {
    use authrim::keys::jwe::{self, DecryptionKey};
    let s = TestServer::start_on(postgres, |_| {}).await;
    let (rsa, mut rsa_public) = DecryptionKey::generate("RSA").unwrap();
    rsa_public["kid"] = "enc-rsa".into();
    let (ec, mut ec_public) = DecryptionKey::generate("P-256").unwrap();
    ec_public["kid"] = "enc-ec".into();
    let body = json!({"jwks": {"keys": [rsa_public, ec_public]}, "authorization_encrypted_response_alg": "RSA-OAEP-256", "authorization_encrypted_response_enc": "A256GCM"});
    let secret = s.client("rp", body).await.1.unwrap();
    s.user("alice", json!({})).await;
    let b = s.browser();
    let d = discovery(&s).await;
    assert!(d["authorization_encryption_alg_values_supported"].as_array().unwrap().contains(&json!("ECDH-ES+A128KW")), "{d}");
    assert!(d["authorization_encryption_enc_values_supported"].as_array().unwrap().contains(&json!("A256GCM")), "{d}");

    let open = |key: &DecryptionKey, response: &str, alg: &str, enc: &str, kid: &str| {
        let out = jwe::decrypt(key, response).unwrap_or_else(|e| panic!("{alg}: {e}"));
        assert_eq!((out.header["alg"].as_str(), out.header["enc"].as_str(), out.header["kid"].as_str()), (Some(alg), Some(enc), Some(kid)));
        assert_eq!(out.header["cty"], "JWT", "a nested JWT (JARM section 2.2)");
        String::from_utf8(out.plaintext).unwrap()
    };
    let page = sign_in(&b, &request_query("code", "rp", &[("response_mode", "jwt")])).await;
    let response = only_response(page.redirect_params());
    assert_eq!(response.split('.').count(), 5, "a JWE");
    let inner = open(&rsa, &response, "RSA-OAEP-256", "A256GCM", "enc-rsa");
    let (_, c) = claims(&s, &inner, "rp", 600).await;
    assert_eq!(c["state"], "st-1");
    let (st, tok, _) = s.token(Some(("rp", &secret)), &redeem(c["code"].as_str().unwrap())).await;
    assert_eq!(st, 200, "{tok}");
    assert!(jwe::decrypt(&ec, &response).is_err(), "only the key it names reads it");

    // Errors after the redirect URI is trusted are encrypted too; the enc defaults to A128CBC-HS256.
    let (st, body) = s.admin(reqwest::Method::PATCH, "/admin/clients/rp", Some(json!({"authorization_encrypted_response_alg": "ECDH-ES+A128KW", "authorization_encrypted_response_enc": ""}))).await;
    assert_eq!(st, 200, "{body}");
    let page = Page::from(s.browser().authorize(&request_query("code", "rp", &[("response_mode", "form_post.jwt"), ("prompt", "none")])).await).await;
    let inner = open(&ec, &only_response(page.form_post().1), "ECDH-ES+A128KW", "A128CBC-HS256", "enc-ec");
    let (_, c) = claims(&s, &inner, "rp", 600).await;
    assert_eq!(c["error"], "login_required", "{c}");

    // Encryption cleared: signed only again.
    let (st, body) = s.admin(reqwest::Method::PATCH, "/admin/clients/rp", Some(json!({"authorization_encrypted_response_alg": "", "authorization_encrypted_response_enc": ""}))).await;
    assert_eq!(st, 200, "{body}");
    let page = sign_in(&b, &request_query("code", "rp", &[("response_mode", "jwt")])).await;
    assert_eq!(only_response(page.redirect_params()).split('.').count(), 3, "cleared: signed only");
}
