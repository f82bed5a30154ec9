//! Signed CIBA authentication requests (CIBA Core §7.1.1): the parameters as a JWT the client
//! signs, which alone is the request; each of its claims checked, its `jti` spent; required
//! of a client that registered `backchannel_authentication_request_signing_alg`.

use crate::ciba::{account, ask, handles, redeem, server, GRANT};
use crate::client_jwt::{apply, jwks, Signer};
use crate::harness::*;
use crate::passkeys::{field, post};
use authrim::util::{now, random_token};
use serde_json::{json, Value};

/// A good signed request from `client` for alice, with `changes` applied (`null` removes).
pub(crate) fn request(s: &TestServer, key: &Signer, client: &str, changes: Value) -> String {
    let t = now();
    let mut c = json!({
        "iss": client, "aud": s.issuer(), "exp": t + 300, "iat": t, "nbf": t, "jti": random_token(),
        "scope": "openid profile", "login_hint": "alice", "binding_message": "SIGNED-1",
    });
    apply(&mut c, changes);
    key.sign(&c)
}

#[tokio::test]
async fn a_signed_request_is_the_request_and_its_claims_are_checked() {
    for postgres in [false, true] {
        let s = server(postgres, |_| {}).await;
        s.user("alice", json!({"name": "Alice"})).await;
        s.user("bob", json!({})).await;
        let key = Signer::es256("k1");
        let other_key = Signer::ed25519("k2");
        let meta = json!({
            "grant_types": [GRANT], "redirect_uris": [], "backchannel_token_delivery_mode": "poll",
            "jwks": jwks(&[&key, &other_key]), "backchannel_authentication_request_signing_alg": "ES256",
        });
        let (_, secret) = s.client("signer", meta).await;
        let secret = secret.unwrap();

        // Registered to sign: an unsigned request is refused.
        let (st, body) = ask(&s, "signer", Some(&secret), &[("scope", "openid"), ("login_hint", "alice")]).await;
        assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "{body}");

        // The JWT is the request: the form's own scope, hint and message are ignored; a JSON
        // number for requested_expiry is read.
        let jwt = request(&s, &key, "signer", json!({"requested_expiry": 120}));
        let form = [("request", jwt.as_str()), ("scope", "openid email"), ("login_hint", "bob"), ("binding_message", "FORM")];
        let (st, r) = ask(&s, "signer", Some(&secret), &form).await;
        assert_eq!(st, 200, "{r}");
        assert_eq!(r["expires_in"], 120, "{r}");
        let id = r["auth_req_id"].as_str().unwrap().to_string();
        // The same JWT again: its jti is spent.
        let (st, body) = ask(&s, "signer", Some(&secret), &form).await;
        assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "replayed: {body}");
        assert!(body["error_description"].as_str().unwrap().contains("jti"), "{body}");

        let phone = s.browser();
        let page = account(&phone, "alice").await;
        assert!(page.html.contains("Message: SIGNED-1") && !page.html.contains("FORM"), "the JWT's message, not the form's: {}", page.html);
        let handle = handles(&page)[0].clone();
        post(&phone, "/account/requests/approve", &[("csrf", &field(&page, "csrf")), ("handle", &handle)]).await;
        let (st, tokens) = redeem(&s, "signer", &secret, &id).await;
        assert_eq!(st, 200, "{tokens}");
        assert_eq!(tokens["scope"], "openid profile", "the JWT's scope");

        let t = now();
        let unsigned = format!("{}.{}.", authrim::util::b64(br#"{"alg":"none"}"#), authrim::util::b64(json!({"iss": "signer"}).to_string().as_bytes()));
        let cases: Vec<(&str, String)> = vec![
            ("unsigned", unsigned),
            ("not a JWT", "abc".into()),
            ("a key the client did not register", Signer::es256("k1").sign(&json!({"iss": "signer"}))),
            ("an algorithm other than the registered one", request(&s, &other_key, "signer", json!({}))),
            ("an HMAC", Signer::hmac(&secret).sign(&json!({"iss": "signer"}))),
            ("another issuer", request(&s, &key, "signer", json!({"iss": "call"}))),
            ("no iss", request(&s, &key, "signer", json!({"iss": null}))),
            ("another audience", request(&s, &key, "signer", json!({"aud": "https://other.example"}))),
            ("no aud", request(&s, &key, "signer", json!({"aud": null}))),
            ("no exp", request(&s, &key, "signer", json!({"exp": null}))),
            ("expired", request(&s, &key, "signer", json!({"exp": t - 600, "nbf": t - 900}))),
            ("no nbf", request(&s, &key, "signer", json!({"nbf": null}))),
            ("not yet valid", request(&s, &key, "signer", json!({"nbf": t + 600, "exp": t + 900}))),
            ("living more than an hour", request(&s, &key, "signer", json!({"exp": t + 3700}))),
            ("no iat", request(&s, &key, "signer", json!({"iat": null}))),
            ("issued in the future", request(&s, &key, "signer", json!({"iat": t + 600}))),
            ("no jti", request(&s, &key, "signer", json!({"jti": null}))),
            ("another client_id inside", request(&s, &key, "signer", json!({"client_id": "call"}))),
            ("a request inside", request(&s, &key, "signer", json!({"request": "x.y.z"}))),
            ("a scope that is an array", request(&s, &key, "signer", json!({"scope": ["openid"]}))),
        ];
        for (what, jwt) in cases {
            let (st, body) = ask(&s, "signer", Some(&secret), &[("request", jwt.as_str())]).await;
            assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "{what}: {body}");
        }
        // The signed request's content is checked as an unsigned one's.
        for (changes, error) in [
            (json!({"login_hint": "nobody"}), "unknown_user_id"),
            (json!({"scope": "profile"}), "invalid_scope"),
            (json!({"binding_message": "two\nlines"}), "invalid_binding_message"),
            (json!({"login_hint": null}), "invalid_request"),
        ] {
            let (st, body) = ask(&s, "signer", Some(&secret), &[("request", &request(&s, &key, "signer", changes.clone()))]).await;
            assert_eq!((st, body["error"].as_str()), (400, Some(error)), "{changes}: {body}");
        }

        // A client that registered no algorithm may sign or not, with any asymmetric one.
        let (_, free) = s.client("free", json!({"grant_types": [GRANT], "redirect_uris": [], "backchannel_token_delivery_mode": "poll", "jwks": jwks(&[&other_key])})).await;
        let free = free.unwrap();
        let (st, r) = ask(&s, "free", Some(&free), &[("request", &request(&s, &other_key, "free", json!({})))]).await;
        assert_eq!(st, 200, "{r}");
        let (st, r) = ask(&s, "free", Some(&free), &[("scope", "openid"), ("login_hint", "alice")]).await;
        assert_eq!(st, 200, "{r}");

        // Registration: an asymmetric algorithm only.
        for alg in ["HS256", "none", "XX"] {
            let body = json!({"client_id": format!("bad-{alg}"), "grant_types": [GRANT], "redirect_uris": [], "backchannel_token_delivery_mode": "poll", "backchannel_authentication_request_signing_alg": alg});
            let (st, v) = s.admin(reqwest::Method::POST, "/admin/clients", Some(body)).await;
            assert_eq!(st, 400, "{alg}: {v}");
        }
        let (st, v) = s.admin(reqwest::Method::GET, "/admin/clients/signer", None).await;
        assert_eq!((st, v["backchannel_authentication_request_signing_alg"].as_str()), (200, Some("ES256")), "{v}");
    }
}

/// `/backchannel` as `client` authenticated by a `private_key_jwt` assertion from `key`
/// (FAPI's client authentication), with `form`.
async fn ask_with_assertion(s: &TestServer, key: &Signer, client: &str, form: &[(&str, &str)]) -> (u16, Value) {
    let assertion = key.assertion(client, &s.issuer(), json!({}));
    let mut all = vec![("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"), ("client_assertion", assertion.as_str())];
    all.extend_from_slice(form);
    ask(s, client, None, &all).await
}

/// Held to FAPI (`security_profile = fapi2`), CIBA follows FAPI-CIBA §5.2.2: signed requests
/// only, and no push mode: refused at registration, and at the request of a push client
/// registered before the deployment was held to the profile.
#[tokio::test]
async fn under_fapi_ciba_requests_are_signed_and_never_pushed() {
    let es256 = |c: &mut authrim::config::Config| {
        c.signing_algorithms = "RS256 ES256".into();
        c.token_signing_alg = "ES256".into();
    };
    let key = Signer::es256("k1");
    let meta = |extra: Value| {
        let mut m = json!({"grant_types": [GRANT], "redirect_uris": [], "token_endpoint_auth_method": "private_key_jwt", "jwks": jwks(&[&key])});
        apply(&mut m, extra);
        m
    };
    let push = json!({"backchannel_token_delivery_mode": "push", "backchannel_client_notification_endpoint": "https://rp.example/cb/ciba"});

    // A push client of a standard deployment, which then restarts held to FAPI.
    let s = server(false, es256).await;
    s.client("early-push", meta(push.clone())).await;
    let TestServer { server: running, dir, .. } = s;
    let mut config = running.app.config.clone();
    running.stop().await.unwrap();
    config.security_profile = "fapi2".into();
    let s = TestServer::start_in(dir, config).await;
    s.user("alice", json!({})).await;

    // Its requests are refused, signed or not; and no push client can be registered now.
    let jwt = request(&s, &key, "early-push", json!({}));
    let (st, body) = ask_with_assertion(&s, &key, "early-push", &[("request", jwt.as_str()), ("client_notification_token", "n-0123456789abcdef")]).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("unauthorized_client")), "{body}");
    assert!(body["error_description"].as_str().unwrap().contains("push"), "{body}");
    let mut late = meta(push.clone());
    late["client_id"] = "late-push".into();
    let (st, v) = s.admin(reqwest::Method::POST, "/admin/clients", Some(late)).await;
    assert_eq!((st, v["error"].as_str()), (400, Some("invalid_client_metadata")), "{v}");
    assert!(v["error_description"].as_str().unwrap().contains("push"), "{v}");
    let (st, v) = s.admin(reqwest::Method::PUT, "/admin/clients/early-push", Some(json!({"backchannel_token_delivery_mode": "push"}))).await;
    assert_eq!(st, 400, "an existing push client is not saved as one either: {v}");

    // A poll client: an unsigned request is refused, a signed one taken.
    s.client("bank", meta(json!({"backchannel_token_delivery_mode": "poll"}))).await;
    let (st, body) = ask_with_assertion(&s, &key, "bank", &[("scope", "openid"), ("login_hint", "alice")]).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "{body}");
    assert!(body["error_description"].as_str().unwrap().contains("signed"), "{body}");
    let jwt = request(&s, &key, "bank", json!({}));
    let (st, body) = ask_with_assertion(&s, &key, "bank", &[("request", jwt.as_str())]).await;
    assert_eq!(st, 200, "{body}");
    assert!(body["auth_req_id"].is_string() && body["interval"].is_number(), "{body}");

    // On a standard deployment, a client registered with the profile is held to the same.
    let s = server(false, es256).await;
    s.user("alice", json!({})).await;
    let mut held = meta(push);
    held["client_id"] = "held".into();
    held["security_profile"] = "fapi2".into();
    let (st, v) = s.admin(reqwest::Method::POST, "/admin/clients", Some(held)).await;
    assert_eq!((st, v["error"].as_str()), (400, Some("invalid_client_metadata")), "{v}");
    s.client("held", meta(json!({"backchannel_token_delivery_mode": "poll", "security_profile": "fapi2"}))).await;
    let (st, body) = ask_with_assertion(&s, &key, "held", &[("scope", "openid"), ("login_hint", "alice")]).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "{body}");
    s.client("neighbour", meta(json!({"backchannel_token_delivery_mode": "poll"}))).await;
    let (st, body) = ask_with_assertion(&s, &key, "neighbour", &[("scope", "openid"), ("login_hint", "alice")]).await;
    assert_eq!(st, 200, "its neighbour is not: {body}");
}
