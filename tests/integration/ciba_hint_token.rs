//! CIBA's `login_hint_token` (CIBA Core §7.1): a JWT from an issuer trusted for it
//! (`accept = ["login-hint-token"]`), checked as a jwt-bearer assertion is, naming the user by
//! `sub` or an RFC 9493 `sub_id` (`iss_sub`, `email`); `expired_login_hint_token`,
//! `unknown_user_id`, and `invalid_request` for every other fault. The issuer is another
//! Authrim whose published keys the server fetches; the test signs with that server's key.

use crate::ciba::{account, ask, call_and_users, handles, server, GRANT};
use crate::harness::*;
use authrim::config::agents::{AssertionKind, SubjectMapping, TrustedIssuer};
use authrim::util::now;
use serde_json::{json, Value};

/// A JWT signed with `by`'s signing key.
fn sign(by: &TestServer, claims: &Value) -> String {
    by.server.app.tenants.default_tenant().keys.sign("JWT", claims).unwrap()
}

#[tokio::test]
async fn a_login_hint_token_from_a_trusted_issuer_names_the_user() {
    for postgres in [false, true] {
        let idp = TestServer::start().await;
        let bearer_only = TestServer::start().await;
        let stranger = TestServer::start().await;
        let trusted = vec![
            TrustedIssuer {
                issuer: idp.issuer(),
                jwks_uri: Some(idp.url("/jwks")),
                subject: SubjectMapping::Sub,
                accept: vec![AssertionKind::LoginHintToken],
                clients: Some(vec!["call".into()]),
                scopes: None,
            },
            TrustedIssuer {
                issuer: bearer_only.issuer(),
                jwks_uri: Some(bearer_only.url("/jwks")),
                subject: SubjectMapping::Sub,
                accept: vec![AssertionKind::JwtBearer],
                ..Default::default()
            },
        ];
        let s = server(postgres, move |c| c.trusted_issuers = trusted).await;
        let secret = call_and_users(&s).await;
        let alice = s.user("alice2", json!({})).await; // by id below
        s.user("carol", json!({"email": "carol@example.com", "email_verified": true})).await;
        let t = now();
        let claims = |changes: Value| {
            let mut c = json!({"iss": idp.issuer(), "aud": s.issuer(), "exp": t + 120, "iat": t, "sub": "alice"});
            crate::client_jwt::apply(&mut c, changes);
            c
        };
        let hint = |changes: Value| sign(&idp, &claims(changes));

        // Accepted: by username, by id, by sub_id iss_sub and email.
        for (what, token) in [
            ("sub, a username", hint(json!({}))),
            ("sub, a user id", hint(json!({"sub": alice}))),
            ("sub_id iss_sub", hint(json!({"sub": null, "sub_id": {"format": "iss_sub", "iss": idp.issuer(), "sub": "alice"}}))),
            ("sub_id email", hint(json!({"sub": null, "sub_id": {"format": "email", "email": "carol@example.com"}}))),
        ] {
            let (st, r) = ask(&s, "call", Some(&secret), &[("scope", "openid"), ("login_hint_token", &token)]).await;
            assert_eq!(st, 200, "{what}: {r}");
        }
        assert_eq!(handles(&account(&s.browser(), "alice").await).len(), 2, "by username and by iss_sub: two requests wait for alice");
        assert_eq!(handles(&account(&s.browser(), "carol").await).len(), 1, "by sub_id email");

        let (_, other) = s.client("other", json!({"grant_types": [GRANT], "redirect_uris": [], "backchannel_token_delivery_mode": "poll"})).await;
        let cases: Vec<(&str, String, &str)> = vec![
            ("expired", hint(json!({"exp": t - 600, "iat": t - 700})), "expired_login_hint_token"),
            ("no such user", hint(json!({"sub": "nobody"})), "unknown_user_id"),
            ("an address not verified here", hint(json!({"sub": null, "sub_id": {"format": "email", "email": "alice@example.com"}})), "unknown_user_id"),
            ("another audience", hint(json!({"aud": "https://other.example"})), "invalid_request"),
            ("no exp", hint(json!({"exp": null})), "invalid_request"),
            ("living too long", hint(json!({"exp": t + 86_400})), "invalid_request"),
            ("no subject", hint(json!({"sub": null})), "invalid_request"),
            ("sub_id of another issuer", hint(json!({"sub": null, "sub_id": {"format": "iss_sub", "iss": "https://else.example", "sub": "alice"}})), "invalid_request"),
            ("sub_id of an unknown format", hint(json!({"sub": null, "sub_id": {"format": "phone_number", "phone_number": "+1"}})), "invalid_request"),
            ("an untrusted issuer", sign(&stranger, &claims(json!({"iss": stranger.issuer()}))), "invalid_request"),
            ("an issuer not trusted for hints", sign(&bearer_only, &claims(json!({"iss": bearer_only.issuer()}))), "invalid_request"),
            ("another issuer's key", sign(&stranger, &claims(json!({}))), "invalid_request"),
            ("not a JWT", "not.a.jwt".into(), "invalid_request"),
        ];
        for (what, token, error) in cases {
            let (st, body) = ask(&s, "call", Some(&secret), &[("scope", "openid"), ("login_hint_token", &token)]).await;
            assert_eq!((st, body["error"].as_str()), (400, Some(error)), "{what}: {body}");
        }
        // One hint only; and only the clients the issuer lists.
        let token = hint(json!({}));
        let (st, body) = ask(&s, "call", Some(&secret), &[("scope", "openid"), ("login_hint_token", &token), ("login_hint", "alice")]).await;
        assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "{body}");
        let (st, body) = ask(&s, "other", other.as_deref(), &[("scope", "openid"), ("login_hint_token", &token)]).await;
        assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "{body}");
    }
}
