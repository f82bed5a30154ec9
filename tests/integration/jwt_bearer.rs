//! Generic JWT bearer assertions (RFC 7523 §2.1) at the `jwt-bearer` grant, from a trusted
//! issuer that allows them: one accepted, and each the server must refuse. The issuer is
//! another Authrim whose published keys (`/jwks`) the authorization server fetches; the test
//! signs what it likes with that server's signing key, as any other issuer could.

use crate::harness::*;
use authrim::config::agents::{AssertionKind, SubjectMapping, TrustedIssuer};
use authrim::util::now;
use reqwest::Method;
use serde_json::{json, Value};

const BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

struct Setup {
    /// Trusted for generic assertions, subjects by `sub`, for the client `agent` alone.
    idp: TestServer,
    /// Trusted for ID-JAGs only (the default).
    jag_only: TestServer,
    asv: TestServer,
    agent: (String, String),
    alice: String,
}

async fn setup(postgres: bool) -> Setup {
    let idp = TestServer::start().await;
    let jag_only = TestServer::start().await;
    let trusted = vec![
        TrustedIssuer {
            issuer: idp.issuer(),
            jwks_uri: Some(idp.url("/jwks")),
            subject: SubjectMapping::Sub,
            accept: vec![AssertionKind::IdJag, AssertionKind::JwtBearer],
            clients: Some(vec!["agent".into(), "acme-agent".into()]),
            scopes: Some(vec!["reports".into(), "openid".into()]),
        },
        TrustedIssuer { issuer: jag_only.issuer(), jwks_uri: Some(jag_only.url("/jwks")), subject: SubjectMapping::Sub, ..Default::default() },
    ];
    let asv = TestServer::start_on(postgres, move |c| c.trusted_issuers = trusted).await;
    let (id, secret) = asv.client("agent", json!({"grant_types": [BEARER], "redirect_uris": [], "scope": "openid reports admin"})).await;
    let alice = asv.user("alice", json!({})).await;
    Setup { idp, jag_only, asv, agent: (id, secret.unwrap()), alice }
}

/// A JWT signed with `by`'s signing key, typed `typ`.
fn sign(by: &TestServer, typ: &str, claims: &Value) -> String {
    by.server.app.tenants.default_tenant().keys.sign(typ, claims).unwrap()
}

impl Setup {
    /// Claims for alice at the AS, from the trusted issuer; `extra` replaces or (null) removes.
    fn claims(&self, extra: Value) -> Value {
        let t = now();
        let mut c = json!({"iss": self.idp.issuer(), "sub": "alice", "aud": self.asv.issuer(), "exp": t + 120, "iat": t,
                           "jti": authrim::util::random_token()});
        for (k, v) in extra.as_object().unwrap() {
            match v {
                Value::Null => c.as_object_mut().unwrap().remove(k),
                v => c.as_object_mut().unwrap().insert(k.clone(), v.clone()),
            };
        }
        c
    }

    fn assertion(&self, extra: Value) -> String {
        sign(&self.idp, "JWT", &self.claims(extra))
    }

    async fn redeem(&self, assertion: &str, extra: &[(&str, &str)]) -> (u16, Value) {
        self.redeem_as((&self.agent.0, &self.agent.1), assertion, extra).await
    }

    async fn redeem_as(&self, who: (&str, &str), assertion: &str, extra: &[(&str, &str)]) -> (u16, Value) {
        let mut form = vec![("grant_type", BEARER), ("assertion", assertion)];
        form.extend_from_slice(extra);
        let (st, body, _) = self.asv.token(Some(who), &form).await;
        (st, body)
    }

    async fn refused(&self, assertion: &str, why: &str) {
        let (st, body) = self.redeem(assertion, &[("scope", "reports")]).await;
        assert_eq!((st, body["error"].as_str()), (400, Some("invalid_grant")), "{why}: {body}");
        let description = body["error_description"].as_str().unwrap();
        assert!(description.contains(why), "{why:?} not in {description:?}");
    }
}

#[tokio::test]
async fn a_generic_assertion_from_a_trusted_issuer_is_a_grant() {
    accepted(false).await;
}

#[tokio::test]
async fn a_generic_assertion_from_a_trusted_issuer_is_a_grant_on_postgres() {
    accepted(true).await;
}

async fn accepted(postgres: bool) {
    let s = setup(postgres).await;
    let assertion = s.assertion(json!({}));
    let (st, body) = s.redeem(&assertion, &[("scope", "reports")]).await;
    assert_eq!(st, 200, "{body}");
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["scope"], "reports");
    assert!(body.get("refresh_token").is_none() && body.get("id_token").is_none(), "{body}");
    let (_, at) = jwt_parts(body["access_token"].as_str().unwrap());
    assert_eq!((at["sub"].as_str(), at["client_id"].as_str()), (Some(s.alice.as_str()), Some("agent")));
    assert_eq!(at["iss"], s.asv.issuer().as_str());

    // Replayed: refused, on the first use's jti, on this node and every other sharing the store.
    s.refused(&assertion, "already used").await;

    // aud = the token endpoint (RFC 7523 §3 item 3), no iat (optional there), no scope
    // requested: the client's scope within the issuer's ceiling ("admin" is beyond it).
    let by_endpoint = s.assertion(json!({"aud": s.asv.url("/token"), "iat": null}));
    let (st, body) = s.redeem(&by_endpoint, &[]).await;
    assert_eq!(st, 200, "{body}");
    assert_eq!(body["scope"], "openid reports");

    // The audit log names the issuer, subject and jti.
    let (_, audit) = s.asv.admin(Method::GET, "/admin/audit?event=jwt_bearer_accepted", None).await;
    let text = audit.to_string();
    assert!(text.contains("jwt_bearer_accepted") && text.contains(&s.idp.issuer()), "{audit}");
}

#[tokio::test]
async fn bad_generic_assertions_are_refused_with_the_reason() {
    let s = setup(false).await;
    let t = now();
    // Signed by another key than the issuer's.
    s.refused(&sign(&s.jag_only, "JWT", &s.claims(json!({}))), "signature").await;
    // The signature no longer matches once a claim is changed.
    let good = s.assertion(json!({}));
    let parts: Vec<&str> = good.split('.').collect();
    let mut c = jwt_parts(&good).1;
    c["sub"] = json!("bob");
    s.refused(&format!("{}.{}.{}", parts[0], authrim::util::b64(c.to_string().as_bytes()), parts[2]), "signature").await;
    s.refused(&s.assertion(json!({"aud": "https://other-as.example"})), "not for this server").await;
    s.refused(&s.assertion(json!({"exp": t - 120})), "expired").await;
    s.refused(&s.assertion(json!({"exp": t + 7200})), "must expire within").await;
    s.refused(&s.assertion(json!({"exp": null})), "no exp").await;
    s.refused(&s.assertion(json!({"jti": null})), "no jti").await;
    s.refused(&s.assertion(json!({"nbf": t + 600})), "not yet valid").await;
    s.refused(&s.assertion(json!({"iat": t + 600})), "future").await;
    s.refused(&s.assertion(json!({"iss": "https://unknown.example"})), "not trusted").await;
    s.refused(&sign(&s.idp, "at+jwt", &s.claims(json!({}))), "typ").await;
    s.refused(&s.assertion(json!({"sub": "nobody"})), "no user here").await;
    s.refused("not-a-jwt", "not a JWS").await;
    // From an issuer trusted for ID-JAGs only.
    let jag_only = sign(&s.jag_only, "JWT", &s.claims(json!({"iss": s.jag_only.issuer()})));
    s.refused(&jag_only, "only identity assertions").await;

    // A disabled user is no subject; enabled again, the same kind of assertion works.
    let (st, _) = s.asv.admin(Method::PATCH, &format!("/admin/users/{}", s.alice), Some(json!({"disabled": true}))).await;
    assert_eq!(st, 200);
    s.refused(&s.assertion(json!({})), "disabled").await;
    let (st, _) = s.asv.admin(Method::PATCH, &format!("/admin/users/{}", s.alice), Some(json!({"disabled": false}))).await;
    assert_eq!(st, 200);

    // Scope beyond the issuer's ceiling, though the client has it.
    let (st, body) = s.redeem(&s.assertion(json!({})), &[("scope", "reports admin")]).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_scope")), "{body}");

    // A client the issuer does not list, with the grant: unauthorized_client.
    let (other, secret) = s.asv.client("other", json!({"grant_types": [BEARER], "redirect_uris": [], "scope": "reports"})).await;
    let (st, body) = s.redeem_as((&other, secret.as_deref().unwrap()), &s.assertion(json!({})), &[("scope", "reports")]).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("unauthorized_client")), "{body}");

    // None of the refusals spent the good assertion's jti.
    let (st, body) = s.redeem(&good, &[("scope", "reports")]).await;
    assert_eq!(st, 200, "{body}");
}

#[tokio::test]
async fn an_assertion_for_one_tenant_is_refused_at_another() {
    let s = setup(false).await;
    let (st, body) = s.asv.admin(Method::POST, "/admin/tenants", Some(json!({"slug": "acme"}))).await;
    assert_eq!(st, 201, "{body}");
    let acme = format!("{}/t/acme", s.asv.issuer());
    let client = json!({"client_id": "acme-agent", "redirect_uris": [], "grant_types": [BEARER], "scope": "reports"});
    let (st, body) = s.asv.admin(Method::POST, "/t/acme/admin/clients", Some(client)).await;
    assert_eq!(st, 201, "{body}");
    let secret = body["client_secret"].as_str().unwrap().to_string();
    let (st, body) = s.asv.admin(Method::POST, "/t/acme/admin/users", Some(json!({"username": "alice", "password": PASSWORD}))).await;
    assert_eq!(st, 201, "{body}");
    let acme_alice = body["id"].as_str().unwrap().to_string();

    let at_acme = |assertion: String| {
        let (http, url, secret) = (reqwest::Client::new(), s.asv.url("/t/acme/token"), secret.clone());
        async move {
            let form = [("grant_type", BEARER), ("assertion", assertion.as_str()), ("scope", "reports")];
            let res = http.post(url).basic_auth("acme-agent", Some(secret)).form(&form).send().await.unwrap();
            (res.status().as_u16(), res.json::<Value>().await.unwrap())
        }
    };
    // Made for the default tenant (its issuer, then its token endpoint): not for acme.
    for aud in [s.asv.issuer(), s.asv.url("/token")] {
        let (st, body) = at_acme(s.assertion(json!({"aud": aud}))).await;
        assert_eq!((st, body["error"].as_str()), (400, Some("invalid_grant")), "{body}");
        assert!(body["error_description"].as_str().unwrap().contains("not for this server"), "{body}");
    }
    // Made for acme: acme's alice, not the default tenant's.
    let (st, body) = at_acme(s.assertion(json!({"aud": acme}))).await;
    assert_eq!(st, 200, "{body}");
    assert_eq!(jwt_parts(body["access_token"].as_str().unwrap()).1["sub"], acme_alice.as_str());
    // And the other way: acme's assertion at the default tenant.
    s.refused(&s.assertion(json!({"aud": format!("{acme}/token")})), "not for this server").await;
}
