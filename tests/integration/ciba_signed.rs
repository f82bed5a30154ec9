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
fn request(s: &TestServer, key: &Signer, client: &str, changes: Value) -> String {
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
