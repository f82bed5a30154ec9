//! Token exchange (RFC 8693): the reference's token mix and variations as a table-driven
//! matrix, RFC 8693 Appendix A adapted, and every policy and error rule.

use crate::harness::*;
use reqwest::Method;
use serde_json::{json, Value};

const GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const AT: &str = "urn:ietf:params:oauth:token-type:access_token";
const JWT: &str = "urn:ietf:params:oauth:token-type:jwt";
const ID: &str = "urn:ietf:params:oauth:token-type:id_token";
const RT: &str = "urn:ietf:params:oauth:token-type:refresh_token";

const SCOPES: [&str; 4] = ["openid profile email address phone", "openid profile email", "openid profile", "openid"];
const SERVICES: [&str; 5] = ["service-gateway", "service-bff", "service-worker", "service-scheduler", "service-notifier"];

fn audiences() -> Vec<String> {
    ["gateway", "users", "payments", "orders", "inventory", "shipping", "billing", "search", "catalog", "reviews",
     "notifications", "analytics", "auth", "profile", "settings", "reports", "media", "messages", "admin", "audit"]
        .iter()
        .map(|a| format!("https://api.example.com/{a}"))
        .collect()
}

fn resources() -> Vec<String> {
    ["https://resource.example.com/api/v1", "https://data.example.com/graphql", "https://files.example.com/storage",
     "https://stream.example.com/events", "https://ml.example.com/predict", "https://cache.example.com/kv",
     "https://queue.example.com/jobs", "https://mail.example.com/send", "https://pay.example.com/charge",
     "https://geo.example.com/lookup"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

struct World {
    s: TestServer,
    exchanger: (String, String),
    alice: String,
}

async fn world(policy: Value) -> World {
    let s = TestServer::start_with(|c| c.enable_test_endpoints = true).await;
    let (id, secret) = s
        .client(
            "exchanger",
            json!({
                "grant_types": [GRANT, "client_credentials"],
                "redirect_uris": [],
                "scope": SCOPES[0],
                "allowed_audiences": audiences(),
                "allowed_resources": resources(),
                "token_exchange": policy,
            }),
        )
        .await;
    s.client("webapp", json!({"grant_types": ["authorization_code", "refresh_token"], "scope": "openid profile email address phone offline_access"})).await;
    for svc in SERVICES {
        s.client(svc, json!({"grant_types": ["client_credentials"], "redirect_uris": [], "scope": "svc"})).await;
    }
    let alice = s.user("alice", json!({})).await;
    World { s, exchanger: (id, secret.unwrap()), alice }
}

impl World {
    async fn mint(&self, client: &str, user: Option<&str>, kind: &str, scope: &str, extra: Value) -> String {
        let mut body = json!({"client_id": client, "kind": kind, "scope": scope});
        if let Some(u) = user {
            body["user_ids"] = json!([u]);
        }
        for (k, v) in extra.as_object().cloned().unwrap_or_default() {
            body[k] = v;
        }
        let (st, v) = self.s.admin(Method::POST, "/test/bulk/tokens", Some(body)).await;
        assert_eq!(st, 200, "{v}");
        v["tokens"][0].as_str().unwrap().to_string()
    }

    async fn subject(&self, kind: &str) -> String {
        self.mint("webapp", Some(&self.alice), kind, SCOPES[0], json!({})).await
    }

    async fn actor(&self, service: &str, kind: &str) -> String {
        self.mint(service, None, kind, "svc", json!({})).await
    }

    async fn exchange(&self, form: &[(&str, &str)]) -> (u16, Value) {
        let mut f = vec![("grant_type", GRANT)];
        f.extend_from_slice(form);
        let (st, v, _) = self.s.token(Some((&self.exchanger.0, &self.exchanger.1)), &f).await;
        (st, v)
    }
}

/// A token like `valid` but with one thing wrong.
fn tampered(w: &World, valid: &str, how: &str) -> String {
    let (header, claims) = jwt_parts(valid);
    match how {
        "bad_signature" => {
            let (stranger, _) = authrim::keys::SigningKey::generate().unwrap();
            let forged = stranger.sign_jwt(header["typ"].as_str().unwrap(), &claims).unwrap();
            // Keep our kid so the failure is the signature itself, not an unknown key.
            let mut parts: Vec<&str> = forged.split('.').collect();
            let ours: Vec<&str> = valid.split('.').collect();
            parts[0] = ours[0];
            parts.join(".")
        }
        "foreign_issuer" => {
            let mut c = claims.clone();
            c["iss"] = json!("https://evil.example.com");
            w.s.server.app.tenants.default_tenant().keys.sign("at+jwt", &c).unwrap()
        }
        "garbage" => "this-is-not-a-token".into(),
        other => panic!("{other}"),
    }
}

#[tokio::test]
async fn the_reference_mix_is_classified_correctly_across_its_variations() {
    let w = world(json!({})).await;
    let (audiences, resources) = (audiences(), resources());
    let mut checked = 0;
    for i in 0..20 {
        let (aud, res, scope, svc) = (&audiences[i], &resources[i % 10], SCOPES[i % 4], SERVICES[i % 5]);
        let valid = w.subject("valid").await;
        let subjects = [
            ("valid", valid.clone(), 200),
            ("expired", w.subject("expired").await, 400),
            ("revoked", w.subject("revoked").await, 400),
            ("bad_signature", tampered(&w, &valid, "bad_signature"), 400),
            ("garbage", tampered(&w, &valid, "garbage"), 400),
            ("foreign_issuer", tampered(&w, &valid, "foreign_issuer"), 400),
        ];
        let good_actor = w.actor(svc, "valid").await;
        let actors: [(&str, Option<String>, bool); 4] = [
            ("none", None, true),
            ("valid", Some(good_actor.clone()), true),
            ("expired", Some(w.actor(svc, "expired").await), false),
            ("revoked", Some(w.actor(svc, "revoked").await), false),
        ];
        for (skind, subject, sstatus) in &subjects {
            for (akind, actor, actor_ok) in &actors {
                let mut form = vec![("subject_token", subject.as_str()), ("subject_token_type", AT), ("audience", aud.as_str()), ("resource", res.as_str()), ("scope", scope)];
                if let Some(a) = actor {
                    form.extend([("actor_token", a.as_str()), ("actor_token_type", AT)]);
                }
                let expected = if *sstatus == 200 && *actor_ok { 200 } else { 400 };
                let (st, body) = w.exchange(&form).await;
                assert_eq!(st, expected, "subject {skind}, actor {akind}, variation {i}: {body}");
                checked += 1;
                if st != 200 {
                    assert_eq!(body["error"], "invalid_request", "subject {skind}, actor {akind}");
                    continue;
                }
                assert_eq!(body["issued_token_type"], AT);
                assert_eq!(body["token_type"], "Bearer");
                assert_eq!(body["scope"], scope);
                let (h, c) = jwt_parts(body["access_token"].as_str().unwrap());
                assert_eq!(h["typ"], "at+jwt");
                assert_eq!(c["sub"], w.alice.as_str());
                assert_eq!(c["client_id"], "exchanger");
                assert_eq!(c["aud"], json!([aud, res]));
                match actor {
                    Some(_) => assert_eq!(c["act"], json!({"sub": svc, "client_id": svc})),
                    None => assert!(c.get("act").is_none()),
                }
            }
        }
    }
    assert_eq!(checked, 20 * 6 * 4);
}

#[tokio::test]
async fn rfc8693_a1_impersonation_adapted() {
    // A.1: a resource server exchanges the access token it received for one to call a backend.
    let w = world(json!({})).await;
    let subject = w.subject("valid").await;
    let (st, body) = w.exchange(&[("resource", "https://resource.example.com/api/v1"), ("subject_token", &subject), ("subject_token_type", AT)]).await;
    assert_eq!(st, 200, "{body}");
    assert_eq!(body["issued_token_type"], AT);
    assert_eq!(body["token_type"], "Bearer");
    assert!(body["expires_in"].as_u64().unwrap() > 0);
    assert!(body.get("refresh_token").is_none());
    let (_, c) = jwt_parts(body["access_token"].as_str().unwrap());
    assert_eq!(c["aud"], json!(["https://resource.example.com/api/v1"]));
    assert!(c.get("act").is_none(), "impersonation carries no actor");
}

#[tokio::test]
async fn rfc8693_a2_delegation_adapted_with_jwt_types_and_nested_act() {
    // A.2: subject and actor presented as JWTs, a JWT requested, the actor recorded in `act`.
    let w = world(json!({"subject_token_types": [AT, JWT]})).await;
    let (st, _) = w.s.admin(Method::PATCH, "/admin/clients/exchanger", Some(json!({"allowed_audiences": ["urn:example:cooperation-context"]}))).await;
    assert_eq!(st, 200);
    let subject = w.subject("valid").await;
    let actor = w.actor("service-bff", "valid").await;
    let (st, body) = w
        .exchange(&[
            ("audience", "urn:example:cooperation-context"),
            ("subject_token", &subject),
            ("subject_token_type", JWT),
            ("actor_token", &actor),
            ("actor_token_type", JWT),
            ("requested_token_type", JWT),
            ("scope", "openid profile"),
        ])
        .await;
    assert_eq!(st, 200, "{body}");
    assert_eq!(body["issued_token_type"], JWT);
    assert_eq!(body["token_type"], "N_A");
    let (h, c) = jwt_parts(body["access_token"].as_str().unwrap());
    assert_eq!(h["typ"], "JWT");
    assert_eq!(c["aud"], json!(["urn:example:cooperation-context"]));
    assert_eq!(c["act"]["sub"], "service-bff");
    assert_eq!(c["scope"], "openid profile");

    // Exchange the delegated token again with a second actor: the first is nested (§4.1).
    w.s.admin(Method::PATCH, "/admin/clients/exchanger", Some(json!({"allowed_audiences": audiences()}))).await;
    let (st, first) = w.exchange(&[("subject_token", &subject), ("subject_token_type", AT), ("actor_token", &actor), ("actor_token_type", AT), ("audience", "https://api.example.com/users")]).await;
    assert_eq!(st, 200);
    let second_actor = w.actor("service-worker", "valid").await;
    let (st, second) = w
        .exchange(&[("subject_token", first["access_token"].as_str().unwrap()), ("subject_token_type", AT), ("actor_token", &second_actor), ("actor_token_type", AT), ("audience", "https://api.example.com/orders")])
        .await;
    assert_eq!(st, 200, "{second}");
    let (_, c) = jwt_parts(second["access_token"].as_str().unwrap());
    assert_eq!(c["act"], json!({"sub": "service-worker", "client_id": "service-worker", "act": {"sub": "service-bff", "client_id": "service-bff"}}));
}

#[tokio::test]
async fn may_act_is_enforced() {
    let w = world(json!({})).await;
    let subject = w.mint("webapp", Some(&w.alice), "valid", "openid", json!({"may_act": {"sub": "service-bff"}})).await;
    let ok = w.actor("service-bff", "valid").await;
    let wrong = w.actor("service-worker", "valid").await;
    let (st, _) = w.exchange(&[("subject_token", &subject), ("subject_token_type", AT), ("actor_token", &ok), ("actor_token_type", AT)]).await;
    assert_eq!(st, 200);
    let (st, body) = w.exchange(&[("subject_token", &subject), ("subject_token_type", AT), ("actor_token", &wrong), ("actor_token_type", AT)]).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")));
    let (st, _) = w.exchange(&[("subject_token", &subject), ("subject_token_type", AT)]).await;
    assert_eq!(st, 400, "impersonation by a client may_act does not name");
}

#[tokio::test]
async fn scope_only_narrows() {
    let w = world(json!({"subject_token_types": [AT, ID]})).await;
    let narrow = w.mint("webapp", Some(&w.alice), "valid", "openid profile", json!({})).await;
    let (_, b) = w.exchange(&[("subject_token", &narrow), ("subject_token_type", AT), ("scope", "openid email")]).await;
    assert_eq!(b["scope"], "openid", "intersection with the subject's scope");
    let (_, b) = w.exchange(&[("subject_token", &narrow), ("subject_token_type", AT)]).await;
    assert_eq!(b["scope"], "openid profile");
    let (st, b) = w.exchange(&[("subject_token", &narrow), ("subject_token_type", AT), ("scope", "email phone")]).await;
    assert_eq!((st, b["error"].as_str()), (400, Some("invalid_scope")));

    // A subject without scope (an ID token): nothing beyond what the user consented to the
    // exchanging client — not the requested scope passed through.
    let b = w.s.browser();
    let (st, _) = w.s.admin(Method::PATCH, "/admin/clients/exchanger", Some(json!({"grant_types": [GRANT, "authorization_code"], "redirect_uris": [REDIRECT]}))).await;
    assert_eq!(st, 200);
    let code = w.s.code_for(&b, "exchanger", "alice", &[("scope", "openid email")]).await["code"].clone();
    let (_, tok, _) = w.s.token(Some((&w.exchanger.0, &w.exchanger.1)), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    let id_token = tok["id_token"].as_str().unwrap();
    let (st, b) = w.exchange(&[("subject_token", id_token), ("subject_token_type", ID), ("scope", "openid email phone address")]).await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(b["scope"], "openid email", "only the consented scopes");
    // Another client's ID token is not this client's to exchange.
    let other_id_token = {
        let bb = w.s.browser();
        let (wid, wsecret) = w.s.client("webapp2", json!({})).await;
        let code = w.s.code_for(&bb, &wid, "alice", &[]).await["code"].clone();
        let (_, t, _) = w.s.token(Some((&wid, wsecret.as_deref().unwrap())), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
        t["id_token"].as_str().unwrap().to_string()
    };
    assert_eq!(w.exchange(&[("subject_token", &other_id_token), ("subject_token_type", ID)]).await.0, 400);
    assert_eq!(w.exchange(&[("subject_token", &other_id_token), ("subject_token_type", JWT)]).await.0, 400, "nor as a plain jwt");
}

#[tokio::test]
async fn lifetime_never_exceeds_the_subjects() {
    let w = world(json!({})).await;
    let subject = w.subject("valid").await;
    let remaining = jwt_parts(&subject).1["exp"].as_u64().unwrap() - authrim::util::now();
    let (_, b) = w.exchange(&[("subject_token", &subject), ("subject_token_type", AT)]).await;
    assert!(b["expires_in"].as_u64().unwrap() <= remaining);
    let sub = w.s.server.app.tenants.default_tenant().keys.sign("at+jwt", &{
        let mut c = jwt_parts(&subject).1;
        c["exp"] = json!(authrim::util::now() + 30);
        c["jti"] = json!("short-lived");
        c
    });
    let (st, b) = w.exchange(&[("subject_token", &sub.unwrap()), ("subject_token_type", AT)]).await;
    assert_eq!(st, 200);
    assert!(b["expires_in"].as_u64().unwrap() <= 30, "{b}");
}

#[tokio::test]
async fn errors_per_rfc8693() {
    let w = world(json!({})).await;
    let subject = w.subject("valid").await;
    let refresh = w.mint("webapp", Some(&w.alice), "valid", "offline_access", json!({"token_type": "refresh_token"})).await;
    type Case<'a> = (Vec<(&'a str, &'a str)>, u16, &'a str);
    let cases: Vec<Case> = vec![
        (vec![("subject_token_type", AT)], 400, "invalid_request"),
        (vec![("subject_token", &subject)], 400, "invalid_request"),
        (vec![("subject_token", &subject), ("subject_token_type", AT), ("requested_token_type", RT)], 400, "invalid_request"),
        (vec![("subject_token", &subject), ("subject_token_type", "urn:example:unknown")], 400, "invalid_request"),
        (vec![("subject_token", &refresh), ("subject_token_type", RT)], 400, "invalid_request"),
        (vec![("subject_token", &subject), ("subject_token_type", AT), ("actor_token", &subject)], 400, "invalid_request"),
        (vec![("subject_token", &subject), ("subject_token_type", AT), ("actor_token_type", AT)], 400, "invalid_request"),
        (vec![("subject_token", &subject), ("subject_token_type", AT), ("audience", "https://api.example.com/unknown")], 400, "invalid_target"),
        (vec![("subject_token", &subject), ("subject_token_type", AT), ("resource", "https://resource.example.com/api/v1#frag")], 400, "invalid_target"),
        (vec![("subject_token", &subject), ("subject_token_type", AT), ("resource", "relative/path")], 400, "invalid_target"),
    ];
    for (form, status, error) in cases {
        let (st, body) = w.exchange(&form).await;
        assert_eq!((st, body["error"].as_str()), (status, Some(error)), "{form:?}");
    }
    // Wrong secret: invalid_client, 401.
    let (st, body, _) = w.s.token(Some(("exchanger", "wrong")), &[("grant_type", GRANT), ("subject_token", &subject), ("subject_token_type", AT)]).await;
    assert_eq!((st, body["error"].as_str()), (401, Some("invalid_client")));
    // A client without the grant: unauthorized_client.
    let (webapp_secret, _) = (w.s.admin(Method::POST, "/admin/clients/webapp/secret", None).await.1["client_secret"].as_str().unwrap().to_string(), ());
    let (st, body, _) = w.s.token(Some(("webapp", &webapp_secret)), &[("grant_type", GRANT), ("subject_token", &subject), ("subject_token_type", AT)]).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("unauthorized_client")));
    // A public client cannot even register for it.
    let (st, _) = w.s.admin(Method::POST, "/admin/clients", Some(json!({"client_id": "spa", "token_endpoint_auth_method": "none", "grant_types": [GRANT], "redirect_uris": []}))).await;
    assert_eq!(st, 400);
}

#[tokio::test]
async fn delegation_and_impersonation_policies() {
    let no_delegation = world(json!({"delegation": false})).await;
    let subject = no_delegation.subject("valid").await;
    let actor = no_delegation.actor("service-bff", "valid").await;
    let (st, body) = no_delegation.exchange(&[("subject_token", &subject), ("subject_token_type", AT), ("actor_token", &actor), ("actor_token_type", AT)]).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("unauthorized_client")));
    assert_eq!(no_delegation.exchange(&[("subject_token", &subject), ("subject_token_type", AT)]).await.0, 200);

    let no_impersonation = world(json!({"impersonation": false})).await;
    let subject = no_impersonation.subject("valid").await;
    let (st, body) = no_impersonation.exchange(&[("subject_token", &subject), ("subject_token_type", AT)]).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("unauthorized_client")));
    // Default policy: id_token subjects are not accepted.
    let (st, _) = no_impersonation.exchange(&[("subject_token", &subject), ("subject_token_type", ID)]).await;
    assert_eq!(st, 400);
}

#[tokio::test]
async fn a_revoked_grant_revokes_what_was_exchanged_from_it() {
    let w = world(json!({})).await;
    let (st, _) = w.s.admin(Method::PATCH, "/admin/clients/webapp", Some(json!({"redirect_uris": [REDIRECT]}))).await;
    assert_eq!(st, 200);
    let secret = w.s.admin(Method::POST, "/admin/clients/webapp/secret", None).await.1["client_secret"].as_str().unwrap().to_string();
    let b = w.s.browser();
    let code = w.s.code_for(&b, "webapp", "alice", &[("scope", "openid offline_access")]).await["code"].clone();
    let (_, tok, _) = w.s.token(Some(("webapp", &secret)), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    let (st, exchanged) = w.exchange(&[("subject_token", tok["access_token"].as_str().unwrap()), ("subject_token_type", AT)]).await;
    assert_eq!(st, 200, "{exchanged}");
    // The user's refresh token is revoked: the exchanged token goes with its grant.
    let res = w.s.http.post(w.s.url("/revoke")).basic_auth("webapp", Some(&secret)).form(&[("token", tok["refresh_token"].as_str().unwrap())]).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let (st, _) = w.exchange(&[("subject_token", exchanged["access_token"].as_str().unwrap()), ("subject_token_type", AT)]).await;
    assert_eq!(st, 400);
}

/// Every token of a grant dies with it, the ID token included: after theft detection revoked
/// the family, its ID token no longer exchanges (and the same after a code reuse, for a grant
/// without a refresh token).
#[tokio::test]
async fn an_id_token_dies_with_its_grant() {
    let w = world(json!({"subject_token_types": [AT, ID]})).await;
    let (st, _) = w.s.admin(Method::PATCH, "/admin/clients/exchanger", Some(json!({"grant_types": [GRANT, "authorization_code", "refresh_token"], "redirect_uris": [REDIRECT], "scope": "openid email offline_access"}))).await;
    assert_eq!(st, 200);
    let b = w.s.browser();
    let ex = (w.exchanger.0.as_str(), w.exchanger.1.as_str());
    let code = w.s.code_for(&b, "exchanger", "alice", &[("scope", "openid email offline_access")]).await["code"].clone();
    let (_, tok, _) = w.s.token(Some(ex), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    let id_token = tok["id_token"].as_str().unwrap().to_string();
    let (_, idt) = jwt_parts(&id_token);
    // Only registered claims (issue 30): the grant travels in the jti, not in a claim of ours.
    assert!(idt.get("grant_id").is_none(), "no grant_id claim in an ID token: {idt}");
    assert!(idt["jti"].as_str().is_some_and(|j| j.contains('.')), "the ID token's jti names its grant: {idt}");
    let (st, b0) = w.exchange(&[("subject_token", &id_token), ("subject_token_type", ID)]).await;
    assert_eq!(st, 200, "{b0}");
    // Theft detection: the first refresh token used again after it was rotated.
    let first = tok["refresh_token"].as_str().unwrap();
    let (st, _, _) = w.s.token(Some(ex), &[("grant_type", "refresh_token"), ("refresh_token", first)]).await;
    assert_eq!(st, 200);
    let (st, _, _) = w.s.token(Some(ex), &[("grant_type", "refresh_token"), ("refresh_token", first)]).await;
    assert_eq!(st, 400);
    let (st, b1) = w.exchange(&[("subject_token", &id_token), ("subject_token_type", ID)]).await;
    assert_eq!((st, b1["error"].as_str()), (400, Some("invalid_request")), "the ID token outlived its revoked family");
    let (st, _) = w.exchange(&[("subject_token", b0["access_token"].as_str().unwrap()), ("subject_token_type", AT)]).await;
    assert_eq!(st, 400, "what was exchanged from it went too");

    // No refresh token: a reused code revokes the grant, and its ID token with it.
    let code = w.s.code_for(&b, "exchanger", "alice", &[("scope", "openid email")]).await["code"].clone();
    let form = [("grant_type", "authorization_code"), ("code", code.as_str()), ("redirect_uri", REDIRECT)];
    let (_, tok, _) = w.s.token(Some(ex), &form).await;
    let id_token = tok["id_token"].as_str().unwrap().to_string();
    assert_eq!(w.exchange(&[("subject_token", &id_token), ("subject_token_type", ID)]).await.0, 200);
    assert_eq!(w.s.token(Some(ex), &form).await.0, 400);
    assert_eq!(w.exchange(&[("subject_token", &id_token), ("subject_token_type", ID)]).await.0, 400, "code reuse left the ID token standing");
}

#[tokio::test]
async fn delegation_chains_are_bounded_and_actors_and_subjects_chosen_by_policy() {
    let w = world(json!({"max_delegation_depth": 1, "allowed_actors": ["service-bff", "service-worker"]})).await;
    let subject = w.subject("valid").await;
    let bff = w.actor("service-bff", "valid").await;
    let w = &w;
    let delegate = |subject: String, actor: String| async move {
        w.exchange(&[("subject_token", &subject), ("subject_token_type", AT), ("actor_token", &actor), ("actor_token_type", AT)]).await
    };
    let (st, first) = delegate(subject.clone(), bff.clone()).await;
    assert_eq!(st, 200, "one actor: within the depth of 1: {first}");
    let worker = w.actor("service-worker", "valid").await;
    let (st, body) = delegate(first["access_token"].as_str().unwrap().to_string(), worker).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "{body}");
    assert!(body["error_description"].as_str().unwrap().contains("2 deep"), "{body}");

    let scheduler = w.actor("service-scheduler", "valid").await;
    let (st, body) = delegate(subject.clone(), scheduler).await;
    assert_eq!(st, 400);
    assert!(body["error_description"].as_str().unwrap().contains("may not act"), "{body}");

    // Every delegated issuance is audited with its chain.
    let audit = w.s.admin(Method::GET, "/admin/audit?event=token_exchanged", None).await.1;
    assert_eq!(audit["events"][0]["detail"]["act"]["sub"], "service-bff", "{audit}");
    assert_eq!(audit["events"][0]["user_id"], w.alice.as_str(), "{audit}");

    // Whose tokens the client may exchange.
    let (st, _) = w.s.admin(Method::PATCH, "/admin/clients/exchanger", Some(json!({"token_exchange": {"allowed_subject_clients": ["other-app"]}}))).await;
    assert_eq!(st, 200);
    let (st, body) = delegate(subject, bff).await;
    assert_eq!(st, 400);
    assert!(body["error_description"].as_str().unwrap().contains("subject token's client"), "{body}");
}

#[tokio::test]
async fn the_server_wide_depth_caps_every_client() {
    let s_policy = json!({"max_delegation_depth": 10});
    let w = world(s_policy).await;
    // The default server-wide bound is 4: a fifth nested actor is refused even though the
    // client's own policy would allow 10.
    let mut token = w.subject("valid").await;
    for (i, svc) in SERVICES.iter().enumerate() {
        let actor = w.actor(svc, "valid").await;
        let (st, body) = w.exchange(&[("subject_token", &token), ("subject_token_type", AT), ("actor_token", &actor), ("actor_token_type", AT)]).await;
        if i < 4 {
            assert_eq!(st, 200, "depth {}: {body}", i + 1);
            token = body["access_token"].as_str().unwrap().to_string();
        } else {
            assert_eq!(st, 400, "depth 5 is beyond the server's 4: {body}");
        }
    }
}

/// An exchanged token carries the user's groups and roles for the exchanging client, as the
/// client's other access tokens do (issue 32); one for a client's own token carries none.
#[tokio::test]
async fn an_exchanged_token_carries_the_users_groups_and_roles_for_its_client() {
    let w = world(json!({})).await;
    let s = &w.s;
    assert_eq!(s.admin(Method::PATCH, "/admin/clients/exchanger", Some(json!({"groups_claim": "names"}))).await.0, 200);
    assert_eq!(s.admin(Method::PUT, "/admin/clients/exchanger/roles/reader", Some(json!({}))).await.0, 204);
    assert_eq!(s.admin(Method::POST, "/admin/groups", Some(json!({"display_name": "Staff"}))).await.0, 201);
    assert_eq!(s.admin(Method::PUT, "/admin/groups/Staff/members/users/alice", None).await.0, 204);
    assert_eq!(s.admin(Method::PUT, "/admin/clients/exchanger/roles/reader/assignments/groups/Staff", None).await.0, 204);
    let subject = w.subject("valid").await;
    let (st, body) = w.exchange(&[("subject_token", &subject), ("subject_token_type", AT)]).await;
    assert_eq!(st, 200, "{body}");
    let (_, c) = jwt_parts(body["access_token"].as_str().unwrap());
    assert_eq!((c["groups"].clone(), c["roles"].clone()), (json!(["Staff"]), json!(["reader"])), "{c}");
    let own = w.mint("exchanger", None, "valid", "openid profile", json!({})).await;
    let (st, body) = w.exchange(&[("subject_token", &own), ("subject_token_type", AT)]).await;
    assert_eq!(st, 200, "{body}");
    let (_, c) = jwt_parts(body["access_token"].as_str().unwrap());
    assert!(c.get("groups").is_none() && c.get("roles").is_none(), "{c}");
}
