//! The `fapi-ciba` security profile (`src/profile.rs`), end to end: on a tenant held to it,
//! what registration refuses, CIBA requests signed, with a binding message and never pushed, a
//! client assertion whose `aud` is the token endpoint (refused under `fapi2`), and tokens bound
//! to the certificate; a client registered with one FAPI profile on a tenant held to the other
//! is held to both.

use crate::ciba::{account, handles, GRANT};
use crate::ciba_signed::request;
use crate::client_jwt::{jwks, Signer, ASSERTION_TYPE};
use crate::harness::*;
use crate::mtls::{post, tls_server, ClientCert};
use crate::passkeys::field;
use serde_json::{json, Value};

/// A tenant held to `profile` (mTLS on: `tls_server`), signing with ES256.
async fn held_to(postgres: bool, profile: &'static str) -> TestServer {
    tls_server(postgres, move |c| {
        c.security_profile = profile.into();
        c.signing_algorithms = "RS256 ES256".into();
        c.token_signing_alg = "ES256".into();
        c.ciba_poll_interval = 2;
    })
    .await
}

/// A poll-mode CIBA client authenticating with `key` (private_key_jwt), its tokens bound to
/// its certificate, with `changes` applied (`null` removes).
fn bank(id: &str, key: &Signer, changes: Value) -> Value {
    let mut m = json!({
        "client_id": id, "grant_types": [GRANT], "redirect_uris": [], "scope": "openid profile",
        "token_endpoint_auth_method": "private_key_jwt", "jwks": jwks(&[key]),
        "backchannel_token_delivery_mode": "poll", "tls_client_certificate_bound_access_tokens": true,
    });
    crate::client_jwt::apply(&mut m, changes);
    m
}

/// POST `form` to `path` through `http`, authenticated by an assertion of `key` to `aud`.
async fn with_assertion(s: &TestServer, http: &reqwest::Client, path: &str, key: &Signer, client: &str, aud: &str, form: &[(&str, &str)]) -> (u16, Value) {
    let assertion = key.assertion(client, aud, json!({}));
    let mut all = vec![("client_assertion_type", ASSERTION_TYPE), ("client_assertion", assertion.as_str())];
    all.extend_from_slice(form);
    post(http, s.url(path), &all).await
}

async fn register(s: &TestServer, meta: Value) -> (u16, Value) {
    s.admin(reqwest::Method::POST, "/admin/clients", Some(meta)).await
}

#[tokio::test]
async fn a_fapi_ciba_tenant_takes_signed_requests_and_binds_tokens_to_the_certificate() {
    for postgres in [false, true] {
        let s = held_to(postgres, "fapi-ciba").await;
        s.user("alice", json!({"name": "Alice"})).await;
        let key = Signer::es256("k1");
        let cert = ClientCert::self_signed("bank");

        // Registration refuses a shared secret, push, tokens not bound to a certificate and an
        // algorithm outside FAPI 1.0's (EdDSA is FAPI 2.0's only).
        for (change, word) in [
            (json!({"token_endpoint_auth_method": "client_secret_basic", "jwks": null}), "client_secret_basic"),
            (json!({"backchannel_token_delivery_mode": "push", "backchannel_client_notification_endpoint": "https://rp.example/cb"}), "push"),
            (json!({"tls_client_certificate_bound_access_tokens": false}), "certificate-bound"),
            (json!({"backchannel_authentication_request_signing_alg": "EdDSA"}), "EdDSA"),
        ] {
            let (st, v) = register(&s, bank("refused", &key, change)).await;
            assert_eq!((st, v["error"].as_str()), (400, Some("invalid_client_metadata")), "{word}: {v}");
            assert!(v["error_description"].as_str().unwrap().contains(word), "{word}: {v}");
        }
        // Mutual TLS authentication is one of the two methods.
        let (st, v) = register(&s, bank("by-cert", &key, json!({"token_endpoint_auth_method": "self_signed_tls_client_auth", "jwks": cert.jwks()}))).await;
        assert_eq!(st, 201, "{v}");
        let (st, v) = register(&s, bank("bank", &key, json!({}))).await;
        assert_eq!(st, 201, "{v}");

        // An unsigned request is refused; a signed one, its assertion naming the token
        // endpoint (FAPI 1.0's rule, not FAPI 2.0's), is taken.
        let token_endpoint = s.url("/token");
        let form = [("scope", "openid"), ("login_hint", "alice")];
        let (st, body) = with_assertion(&s, &s.http, "/backchannel", &key, "bank", &token_endpoint, &form).await;
        assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "{body}");
        assert!(body["error_description"].as_str().unwrap().contains("signed"), "{body}");
        // FAPI-CIBA §5.2.2 item 2: a binding message, as nothing else makes the request unique.
        let jwt = request(&s, &key, "bank", json!({"binding_message": null}));
        let (st, body) = with_assertion(&s, &s.http, "/backchannel", &key, "bank", &token_endpoint, &[("request", jwt.as_str())]).await;
        assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "{body}");
        assert!(body["error_description"].as_str().unwrap().contains("binding_message"), "{body}");
        let jwt = request(&s, &key, "bank", json!({}));
        let (st, body) = with_assertion(&s, &s.http, "/backchannel", &key, "bank", &token_endpoint, &[("request", jwt.as_str())]).await;
        assert_eq!(st, 200, "postgres={postgres}: {body}");
        let id = body["auth_req_id"].as_str().unwrap().to_string();

        let phone = s.browser();
        let page = account(&phone, "alice").await;
        let handle = handles(&page)[0].clone();
        crate::passkeys::post(&phone, "/account/requests/approve", &[("csrf", &field(&page, "csrf")), ("handle", &handle)]).await;

        // Without its certificate the client gets no tokens; with it, tokens bound to it.
        let redeem = [("grant_type", GRANT), ("auth_req_id", id.as_str())];
        let (st, body) = with_assertion(&s, &s.http, "/token", &key, "bank", &token_endpoint, &redeem).await;
        assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "{body}");
        let (st, tok) = with_assertion(&s, &cert.http(), "/token", &key, "bank", &token_endpoint, &redeem).await;
        assert_eq!(st, 200, "postgres={postgres}: {tok}");
        assert_eq!(jwt_parts(tok["access_token"].as_str().unwrap()).1["cnf"], json!({"x5t#S256": cert.thumbprint()}));
        assert_eq!(jwt_parts(tok["id_token"].as_str().unwrap()).0["alg"], "ES256", "no RS256 by default under FAPI");

        // Discovery says what the profile allows.
        let d: Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
        assert_eq!(d["token_endpoint_auth_methods_supported"], json!(["private_key_jwt", "tls_client_auth", "self_signed_tls_client_auth"]));
        assert_eq!(d["backchannel_token_delivery_modes_supported"], json!(["poll", "ping"]));
        assert_eq!(d["backchannel_authentication_request_signing_alg_values_supported"], json!(["PS256", "ES256"]));
        assert_eq!(d["token_endpoint_auth_signing_alg_values_supported"], json!(["PS256", "ES256"]));
        assert_eq!((d["response_types_supported"].clone(), d["require_pushed_authorization_requests"].clone()), (json!(["code"]), json!(true)));
        assert_eq!(d["tls_client_certificate_bound_access_tokens"], true);
        s.server.stop().await.unwrap();
    }
}

/// FAPI 2.0 SP §5.3.2.1 item 8 lets an assertion name the issuer only; FAPI-CIBA, on FAPI 1.0,
/// takes the token endpoint too (what the OpenID Foundation's FAPI-CIBA plan sends).
#[tokio::test]
async fn the_token_endpoint_as_aud_is_taken_under_fapi_ciba_and_refused_under_fapi2() {
    let key = Signer::es256("k1");
    for (profile, taken) in [("fapi-ciba", true), ("fapi2", false)] {
        let s = held_to(false, profile).await;
        s.user("alice", json!({})).await;
        let (st, v) = register(&s, bank("bank", &key, json!({}))).await;
        assert_eq!(st, 201, "{profile}: {v}");
        let ask = |aud: String| {
            let (s, key) = (&s, &key);
            async move {
                let jwt = request(s, key, "bank", json!({}));
                with_assertion(s, &s.http, "/backchannel", key, "bank", &aud, &[("request", jwt.as_str())]).await
            }
        };
        let (st, body) = ask(s.url("/token")).await;
        match taken {
            true => assert_eq!(st, 200, "{profile}: {body}"),
            false => assert_eq!((st, body["error"].as_str()), (401, Some("invalid_client")), "{profile}: {body}"),
        }
        let (st, body) = ask(s.issuer()).await;
        assert_eq!(st, 200, "{profile}: the issuer always: {body}");
        let (st, body) = ask(s.url("/backchannel")).await;
        assert_eq!(st == 200, taken, "{profile}: the endpoint called: {body}");
        s.server.stop().await.unwrap();
    }
}

/// Where the tenant is held to one FAPI profile and the client registered with the other, the
/// client is held to both: FAPI 2.0's aud, FAPI-CIBA's certificate and algorithms.
#[tokio::test]
async fn a_client_of_one_fapi_profile_on_a_tenant_of_the_other_is_held_to_both() {
    let key = Signer::es256("k1");
    for (tenant, client) in [("fapi2", "fapi-ciba"), ("fapi-ciba", "fapi2")] {
        let s = held_to(false, tenant).await;
        s.user("alice", json!({})).await;
        let held = |id: &str, change: Value| {
            let mut m = bank(id, &key, change);
            m["security_profile"] = client.into();
            m
        };
        // FAPI-CIBA's: DPoP would do for FAPI 2.0, not here; no EdDSA.
        let (st, v) = register(&s, held("dpop", json!({"tls_client_certificate_bound_access_tokens": false, "dpop_bound_access_tokens": true}))).await;
        assert_eq!(st, 400, "{tenant}/{client}: {v}");
        assert!(v["error_description"].as_str().unwrap().contains("FAPI 2.0 and FAPI-CIBA"), "{v}");
        let (st, v) = register(&s, held("ed", json!({"id_token_signed_response_alg": "EdDSA"}))).await;
        assert_eq!(st, 400, "{tenant}/{client}: {v}");
        let (st, v) = register(&s, held("bank", json!({}))).await;
        assert_eq!(st, 201, "{tenant}/{client}: {v}");
        // FAPI 2.0's: the issuer, and only it, as the assertion's aud.
        let jwt = request(&s, &key, "bank", json!({}));
        let (st, body) = with_assertion(&s, &s.http, "/backchannel", &key, "bank", &s.url("/token"), &[("request", jwt.as_str())]).await;
        assert_eq!((st, body["error"].as_str()), (401, Some("invalid_client")), "{tenant}/{client}: {body}");
        let jwt = request(&s, &key, "bank", json!({}));
        let (st, body) = with_assertion(&s, &s.http, "/backchannel", &key, "bank", &s.issuer(), &[("request", jwt.as_str())]).await;
        assert_eq!(st, 200, "{tenant}/{client}: {body}");
        s.server.stop().await.unwrap();
    }
    // On a standard tenant, a client registered with fapi-ciba alone: no shared secret, and
    // the token endpoint as aud; its neighbour keeps the standard rules.
    let s = held_to(false, "standard").await;
    let (st, v) = register(&s, json!({"client_id": "held", "grant_types": [GRANT], "redirect_uris": [], "backchannel_token_delivery_mode": "poll", "security_profile": "fapi-ciba"})).await;
    assert_eq!((st, v["error"].as_str()), (400, Some("invalid_client_metadata")), "{v}");
    let (st, v) = register(&s, json!({"client_id": "plain", "grant_types": [GRANT], "redirect_uris": [], "backchannel_token_delivery_mode": "poll"})).await;
    assert_eq!(st, 201, "{v}");
    let (st, v) = register(&s, json!({"client_id": "odd", "grant_types": [GRANT], "redirect_uris": [], "backchannel_token_delivery_mode": "poll", "security_profile": "fapi1"})).await;
    assert_eq!(st, 400, "no such profile: {v}");
}

/// A client registered before its tenant was held to `fapi-ciba`, without certificate-bound
/// tokens: the token endpoint refuses it rather than issue a token bound to nothing.
#[tokio::test]
async fn a_client_from_before_the_profile_gets_no_unbound_token() {
    let key = Signer::es256("k1");
    let machine = json!({"client_id": "machine", "grant_types": ["client_credentials"], "redirect_uris": [], "token_endpoint_auth_method": "private_key_jwt", "jwks": jwks(&[&key])});
    let s = held_to(false, "standard").await;
    let (st, v) = register(&s, machine).await;
    assert_eq!(st, 201, "{v}");
    let TestServer { server: running, dir, .. } = s;
    let mut config = running.app.config.clone();
    running.stop().await.unwrap();
    config.security_profile = "fapi-ciba".into();
    let s = TestServer::start_in(dir, config).await;
    let cert = ClientCert::self_signed("machine");
    let (st, body) = with_assertion(&s, &cert.http(), "/token", &key, "machine", &s.url("/token"), &[("grant_type", "client_credentials")]).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("unauthorized_client")), "{body}");
    assert!(body["error_description"].as_str().unwrap().contains("certificate-bound"), "{body}");
}

#[tokio::test]
async fn fapi_ciba_refuses_to_start_with_settings_the_profile_forbids() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = test_config(dir.path());
    c.security_profile = "fapi-ciba".into();
    c.signing_algorithms = "RS256 ES256".into();
    c.token_signing_alg = "ES256".into();
    c.mtls = true;
    c.validate().unwrap();
    c.mtls = false;
    assert!(c.validate().unwrap_err().to_string().contains("mtls"));
    c.mtls = true;
    c.pushed_request_ttl = 600;
    assert!(c.validate().unwrap_err().to_string().contains("pushed_request_ttl"));
    c.pushed_request_ttl = 90;
    // EdDSA, which fapi2 signs with, is not FAPI 1.0's.
    c.signing_algorithms = "RS256 EdDSA".into();
    c.token_signing_alg = "EdDSA".into();
    let e = c.validate().unwrap_err().to_string();
    assert!(e.contains("token_signing_alg") && e.contains("PS256, ES256"), "{e}");
    c.security_profile = "fapi2".into();
    c.validate().unwrap();
}
