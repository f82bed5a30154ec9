//! The FAPI 2.0 Security Profile switch (`security_profile = fapi2`, `src/profile.rs`): what
//! the OpenID Foundation's FAPI 2.0 plan failed on a standard deployment (PKCE not required of
//! a confidential client; client assertions whose `aud` was an array or an endpoint URL
//! accepted) is refused, and the rest of the profile holds: PAR only, `private_key_jwt` only,
//! DPoP-bound tokens only, PS256/ES256/EdDSA only, no refresh-token rotation.

use crate::client_jwt::{jwks, Signer, ASSERTION_TYPE};
use crate::dpop::DpopKey;
use crate::harness::*;
use authrim::util::{b64, sha256};
use serde_json::{json, Value};

pub const VERIFIER: &str = "fapi-verifier-0123456789-0123456789-0123456789";

pub async fn fapi_server() -> TestServer {
    TestServer::start_with(|c| {
        c.security_profile = "fapi2".into();
        c.signing_algorithms = "RS256 ES256".into();
        c.token_signing_alg = "ES256".into();
    })
    .await
}

/// POST `/par` as `bank` with an assertion whose `aud` is `aud`.
pub async fn push(s: &TestServer, signer: &Signer, aud: Value, extra: &[(&str, &str)]) -> (u16, Value) {
    let assertion = signer.assertion("bank", "", json!({"aud": aud}));
    let mut form = vec![
        ("response_type", "code"),
        ("redirect_uri", REDIRECT),
        ("scope", "openid offline_access"),
        ("state", "fapi-state"),
        ("nonce", "fapi-nonce"),
        ("client_assertion_type", ASSERTION_TYPE),
        ("client_assertion", assertion.as_str()),
    ];
    form.extend_from_slice(extra);
    let res = s.http.post(s.url("/par")).form(&form).send().await.unwrap();
    (res.status().as_u16(), res.json().await.unwrap_or(Value::Null))
}

/// POST `/token` as `bank` (assertion to the issuer), with a DPoP proof if `key` is given.
async fn token(s: &TestServer, signer: &Signer, key: Option<&DpopKey>, form: &[(&str, &str)]) -> (u16, Value) {
    let assertion = signer.assertion("bank", &s.issuer(), json!({}));
    let mut form = form.to_vec();
    form.extend([("client_assertion_type", ASSERTION_TYPE), ("client_assertion", assertion.as_str())]);
    let mut req = s.http.post(s.url("/token")).form(&form);
    if let Some(k) = key {
        req = req.header("DPoP", k.proof("POST", &s.url("/token"), None, json!({})));
    }
    let res = req.send().await.unwrap();
    (res.status().as_u16(), res.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_fapi2_client_signs_in_only_through_par_with_pkce_its_key_as_issuer_audience_and_dpop() {
    let s = fapi_server().await;
    let signer = Signer::es256("bank-key");
    s.client(
        "bank",
        json!({"token_endpoint_auth_method": "private_key_jwt", "jwks": jwks(&[&signer]), "grant_types": ["authorization_code", "refresh_token"], "scope": "openid offline_access"}),
    )
    .await;
    s.user("alice", json!({})).await;
    let challenge = b64(&sha256(VERIFIER.as_bytes()));
    let pkce = [("code_challenge", challenge.as_str()), ("code_challenge_method", "S256")];
    let issuer = s.issuer();

    // Not through the front channel, even with PKCE (§5.3.2.2).
    let b = s.browser();
    let mut q = vec![("response_type", "code"), ("client_id", "bank"), ("redirect_uri", REDIRECT), ("scope", "openid"), ("state", "front")];
    q.extend_from_slice(&pkce);
    let p = Page::from(b.authorize(&q).await).await.redirect_params();
    assert_eq!((p["error"].as_str(), p["state"].as_str()), ("invalid_request", "front"), "{p:?}");

    // PKCE from a confidential client too (§5.3.2.2; the plan's par-ensure-pkce-required).
    let (st, body) = push(&s, &signer, json!(issuer), &[]).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "{body}");
    assert!(body["error_description"].as_str().unwrap().contains("PKCE"), "{body}");

    // The issuer as aud, as a string, and nothing else (§5.3.2.1 item 8; the plan's three
    // audience modules). Each refusal leaves the next request free to use a new assertion.
    for aud in [json!([issuer]), json!(s.url("/par")), json!(s.url("/token")), json!([issuer, s.url("/token")])] {
        let (st, body) = push(&s, &signer, aud.clone(), &pkce).await;
        assert_eq!((st, body["error"].as_str()), (401, Some("invalid_client")), "aud {aud}: {body}");
    }
    let (st, body) = push(&s, &signer, json!(issuer), &pkce).await;
    assert_eq!(st, 201, "{body}");
    let request_uri = body["request_uri"].as_str().unwrap().to_string();
    let res = b.authorize(&[("client_id", "bank"), ("request_uri", &request_uri)]).await;
    let code = b.finish_login(res, "alice", PASSWORD).await["code"].clone();

    // Sender-constrained tokens only (§5.3.2.1): the code is not spent by a request without a proof.
    let redeem = [("grant_type", "authorization_code"), ("code", code.as_str()), ("redirect_uri", REDIRECT), ("code_verifier", VERIFIER)];
    let (st, body) = token(&s, &signer, None, &redeem).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "{body}");
    let key = DpopKey::new();
    let (st, body) = token(&s, &signer, Some(&key), &redeem).await;
    assert_eq!(st, 200, "{body}");
    assert_eq!(body["token_type"], "DPoP");
    // No algorithm registered: the ID token is signed with token_signing_alg, not RS256 (§5.4).
    let (header, _) = jwt_parts(body["id_token"].as_str().unwrap());
    assert_eq!(header["alg"], "ES256");

    // No rotation (§5.3.2.1): the same refresh token refreshes twice.
    let refresh = body["refresh_token"].as_str().unwrap().to_string();
    for round in 0..2 {
        let (st, body) = token(&s, &signer, Some(&key), &[("grant_type", "refresh_token"), ("refresh_token", refresh.as_str())]).await;
        assert_eq!(st, 200, "refresh {round}: {body}");
        assert!(body["refresh_token"].is_null() || body["refresh_token"] == refresh.as_str(), "refresh {round}: rotated: {body}");
    }

    let d: Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    assert_eq!(d["require_pushed_authorization_requests"], true);
    assert_eq!(d["token_endpoint_auth_methods_supported"], json!(["private_key_jwt"]));
    assert_eq!(d["dpop_signing_alg_values_supported"], json!(["PS256", "ES256", "EdDSA"]), "the default's RS256 drops out");
    for list in ["token_endpoint_auth_signing_alg_values_supported", "request_object_signing_alg_values_supported", "userinfo_signing_alg_values_supported"] {
        let algs = d[list].as_array().unwrap();
        assert!(!algs.is_empty() && algs.iter().all(|a| ["PS256", "ES256", "EdDSA"].contains(&a.as_str().unwrap())), "{list}: {algs:?}");
    }
    assert!(d["id_token_signing_alg_values_supported"].as_array().unwrap().contains(&json!("RS256")), "OpenID Connect Discovery §3 requires RS256 listed");
}

#[tokio::test]
async fn a_fapi2_deployment_registers_only_clients_the_profile_allows() {
    let s = fapi_server().await;
    let signer = Signer::es256("k");
    let refused = [
        json!({"client_id": "secretive", "redirect_uris": [REDIRECT]}),
        json!({"client_id": "public", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}),
        json!({"client_id": "rs", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt", "jwks": jwks(&[&signer]), "id_token_signed_response_alg": "RS256"}),
    ];
    for body in refused {
        let (st, v) = s.admin(reqwest::Method::POST, "/admin/clients", Some(body.clone())).await;
        assert_eq!((st, v["error"].as_str()), (400, Some("invalid_client_metadata")), "{body}: {v}");
    }
    let (st, v) = s
        .admin(reqwest::Method::POST, "/admin/clients", Some(json!({"client_id": "ok", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt", "jwks": jwks(&[&signer])})))
        .await;
    assert_eq!(st, 201, "{v}");
    // Nor may a client become one the profile forbids.
    let (st, v) = s.admin(reqwest::Method::PUT, "/admin/clients/ok", Some(json!({"token_endpoint_auth_method": "client_secret_basic"}))).await;
    assert_eq!((st, v["error"].as_str()), (400, Some("invalid_client_metadata")), "{v}");

    // The CLI holds to the profile too.
    let cli = |method: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_authrim"))
            .args(["client", "create", "--client-id", "from-cli", "--redirect-uri", REDIRECT, "--auth-method", method])
            .env("AUTHRIM_DATA_DIR", s.dir.path())
            .env("AUTHRIM_SECURITY_PROFILE", "fapi2")
            .env("AUTHRIM_SIGNING_ALGORITHMS", "RS256 ES256")
            .env("AUTHRIM_TOKEN_SIGNING_ALG", "ES256")
            .env_remove("AUTHRIM_CONFIG")
            .output()
            .unwrap()
    };
    let out = cli("client_secret_basic");
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("private_key_jwt"), "{out:?}");

    // Authrim's own pages still sign users in: public, through the front channel, their code
    // spent in process.
    s.user("alice", json!({})).await;
    let b = s.browser();
    let start = Page::from(b.client.get(s.url("/account/login")).send().await.unwrap()).await;
    let res = b.client.get(s.url(start.location.as_deref().unwrap())).send().await.unwrap();
    let callback = s.url("/account/callback");
    let params = b.finish_login_at(res, "alice", PASSWORD, &callback).await;
    let query: String = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(params.iter()).finish();
    let back = Page::from(b.client.get(format!("{callback}?{query}")).send().await.unwrap()).await;
    assert_eq!((back.status, back.location.as_deref()), (303, Some("/account")), "{}", back.html);
    let account = Page::from(b.client.get(s.url("/account")).send().await.unwrap()).await;
    assert_eq!(account.status, 200);
    assert!(account.html.contains("alice"), "{}", account.html);
}

#[tokio::test]
async fn fapi2_refuses_to_start_with_settings_the_profile_forbids() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = test_config(dir.path());
    c.security_profile = "fapi2".into();
    let e = c.validate().unwrap_err().to_string();
    assert!(e.contains("token_signing_alg"), "{e}");
    c.token_signing_alg = "ES256".into();
    c.signing_algorithms = "RS256 ES256".into();
    c.pushed_request_ttl = 600;
    assert!(c.validate().unwrap_err().to_string().contains("pushed_request_ttl"));
    c.pushed_request_ttl = 90;
    c.validate().unwrap();
    c.security_profile = "fapi".into();
    c.token_signing_alg = "RS256".into();
    assert!(c.validate().unwrap_err().to_string().contains("security_profile"));
}

/// Issue 35 item 7 asks for the switch per client as well: on a standard deployment, a client
/// registered with `security_profile: fapi2` is held to the profile, and its neighbours are not.
#[tokio::test]
async fn a_client_can_be_held_to_fapi2_on_a_standard_deployment() {
    let s = TestServer::start().await;
    let signer = Signer::es256("bank-key");
    let bank = json!({"token_endpoint_auth_method": "private_key_jwt", "jwks": jwks(&[&signer]), "grant_types": ["authorization_code"], "scope": "openid", "security_profile": "fapi2"});
    s.client("bank", bank).await;
    s.client("shop", json!({})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    for (client, held) in [("bank", true), ("shop", false)] {
        let q = [("response_type", "code"), ("client_id", client), ("redirect_uri", REDIRECT), ("scope", "openid"), ("state", "s")];
        let page = Page::from(b.authorize(&q).await).await;
        match held {
            true => assert_eq!(page.redirect_params()["error"], "invalid_request", "{client}: PAR only"),
            false => assert!(page.is_login(), "{client}: the front channel as before"),
        }
    }
    let (st, body) = push(&s, &signer, json!(s.issuer()), &[]).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "PKCE: {body}");
    let challenge = b64(&sha256(VERIFIER.as_bytes()));
    let pkce = [("code_challenge", challenge.as_str()), ("code_challenge_method", "S256")];
    let (st, body) = push(&s, &signer, json!([s.issuer()]), &pkce).await;
    assert_eq!((st, body["error"].as_str()), (401, Some("invalid_client")), "aud as an array: {body}");
    let (st, body) = push(&s, &signer, json!(s.issuer()), &pkce).await;
    assert_eq!(st, 201, "{body}");
    // A client cannot ask for another profile, nor drop private_key_jwt while it holds fapi2.
    let (st, v) = s.admin(reqwest::Method::PUT, "/admin/clients/bank", Some(json!({"security_profile": "fapi1"}))).await;
    assert_eq!((st, v["error"].as_str()), (400, Some("invalid_client_metadata")), "{v}");
    let (st, v) = s.admin(reqwest::Method::PUT, "/admin/clients/bank", Some(json!({"token_endpoint_auth_method": "client_secret_basic"}))).await;
    assert_eq!((st, v["error"].as_str()), (400, Some("invalid_client_metadata")), "{v}");
    // Cleared, it is a standard client again.
    let (st, v) = s.admin(reqwest::Method::PUT, "/admin/clients/bank", Some(json!({"security_profile": ""}))).await;
    assert_eq!(st, 200, "{v}");
    let (st, body) = push(&s, &signer, json!([s.issuer()]), &[]).await;
    assert_eq!(st, 201, "{body}");
}

/// FAPI 2.0 Message Signing §5.3.1 (the message-signing plan's `ensure-request-object-without-exp-fails`,
/// `…-without-nbf-fails`, `…-with-exp-over-60-fails` and `…-with-nbf-over-60-fails`): a FAPI 2.0
/// client's request object must carry `nbf` no longer than 60 minutes in the past and `exp` no
/// longer than 60 minutes after it; `/par` refuses the others with `invalid_request_object`.
#[tokio::test]
async fn a_fapi2_request_object_lives_at_most_an_hour_from_its_nbf() {
    let s = fapi_server().await;
    let signer = Signer::es256("bank-key");
    s.client("bank", json!({"token_endpoint_auth_method": "private_key_jwt", "jwks": jwks(&[&signer]), "scope": "openid"})).await;
    let challenge = b64(&sha256(VERIFIER.as_bytes()));
    let now = authrim::util::now();
    let object = |changes: Value| {
        let mut o = crate::request_object::object(&s, "bank", json!({"nbf": now, "exp": now + 300, "code_challenge": challenge, "code_challenge_method": "S256"}));
        for (k, v) in changes.as_object().cloned().unwrap_or_default() {
            match v.is_null() {
                true => o.as_object_mut().unwrap().remove(&k),
                false => o.as_object_mut().unwrap().insert(k, v),
            };
        }
        signer.sign(&o)
    };
    let issuer = s.issuer();
    let push = |jwt: String| {
        let issuer = issuer.clone();
        let s = &s;
        let signer = &signer;
        async move { push(s, signer, json!(issuer), &[("request", jwt.as_str())]).await }
    };
    let (st, body) = push(object(json!({}))).await;
    assert_eq!(st, 201, "nbf now, exp in five minutes: {body}");
    for (what, changes) in [
        ("no exp", json!({"exp": null})),
        ("no nbf", json!({"nbf": null})),
        ("nbf 70 minutes ago", json!({"nbf": now - 70 * 60})),
        ("exp 70 minutes after nbf", json!({"exp": now + 70 * 60})),
    ] {
        let (st, body) = push(object(changes)).await;
        assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request_object")), "{what}: {body}");
        assert!(body["error_description"].as_str().unwrap().contains("FAPI 2.0"), "{what}: {body}");
    }
    // On a standard deployment neither claim is required (RFC 9101, OIDC Core section 6.1).
    let plain = TestServer::start().await;
    plain.client("rp", json!({"jwks": jwks(&[&signer])})).await;
    let o = crate::request_object::object(&plain, "rp", json!({}));
    assert!(o.get("nbf").is_none());
    let res = plain.browser().authorize(&[("client_id", "rp"), ("request", &signer.sign(&o))]).await;
    assert!(Page::from(res).await.is_login(), "a standard deployment uses a request object without nbf");
}
