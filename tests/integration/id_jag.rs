//! Identity Assertion JWT Authorization Grants between two Authrim servers: one the
//! enterprise identity provider issuing ID-JAGs by token exchange, the other the
//! authorization server accepting them at the jwt-bearer grant; and every assertion the
//! second must refuse.

use crate::harness::*;
use authrim::config::agents::{ResourceServer, SubjectMapping, TrustedIssuer};
use serde_json::{json, Value};

const EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
const REFRESH: &str = "urn:ietf:params:oauth:token-type:refresh_token";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
const MCP: &str = "https://mcp.example/mcp";

struct Pair {
    idp: TestServer,
    asv: TestServer,
    agent: (String, String),
    at_as: (String, String),
    id_token: String,
    refresh_token: String,
}

async fn idp() -> TestServer {
    TestServer::start().await
}

async fn pair(idp: TestServer, audiences: Value) -> Pair {
    pair_on(false, idp, audiences).await
}

/// The IdP with an agent client and alice signed in through it; the AS trusting the IdP.
async fn pair_on(postgres: bool, idp: TestServer, audiences: Value) -> Pair {
    let (id, secret) = idp
        .client(
            "agent",
            json!({"grant_types": ["authorization_code", "refresh_token", EXCHANGE],
                   "scope": "openid email offline_access",
                   "token_exchange": {"id_jag_audiences": audiences}}),
        )
        .await;
    let secret = secret.unwrap();
    idp.user("alice", json!({"email": "alice@example.com", "email_verified": true})).await;
    let browser = idp.browser();
    let code = idp.code_for(&browser, "agent", "alice", &[("scope", "openid email offline_access")]).await["code"].clone();
    let (st, tokens, _) = idp.token(Some((&id, &secret)), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200, "{tokens}");

    let trusted = vec![TrustedIssuer { issuer: idp.issuer(), jwks_uri: None, subject: SubjectMapping::Email, ..Default::default() }];
    let asv = TestServer::start_on(postgres, move |c| {
        c.trusted_issuers = trusted;
        c.resource_servers = vec![ResourceServer {
            uri: MCP.into(),
            name: "MCP".into(),
            scopes: [("mcp:tools".to_string(), "use the tools".to_string())].into(),
            client_id: None,
            refresh_tokens: None,
        }];
    })
    .await;
    let (b_id, b_secret) = asv.client("agent-at-as", json!({"grant_types": [BEARER], "redirect_uris": [], "scope": "reports"})).await;
    asv.user("alice-at-as", json!({"email": "alice@example.com", "email_verified": true})).await;
    Pair {
        idp,
        asv,
        agent: (id, secret),
        at_as: (b_id, b_secret.unwrap()),
        id_token: tokens["id_token"].as_str().unwrap().to_string(),
        refresh_token: tokens["refresh_token"].as_str().unwrap().to_string(),
    }
}

impl Pair {
    async fn jag(&self, audience: &str, subject: (&str, &str), extra: &[(&str, &str)]) -> (u16, Value) {
        let mut form = vec![
            ("grant_type", EXCHANGE),
            ("requested_token_type", ID_JAG),
            ("audience", audience),
            ("subject_token", subject.0),
            ("subject_token_type", subject.1),
        ];
        form.extend_from_slice(extra);
        let (st, body, _) = self.idp.token(Some((&self.agent.0, &self.agent.1)), &form).await;
        (st, body)
    }

    async fn redeem(&self, who: (&str, &str), assertion: &str) -> (u16, Value) {
        let (st, body, _) = self.asv.token(Some(who), &[("grant_type", BEARER), ("assertion", assertion)]).await;
        (st, body)
    }
}

#[tokio::test]
async fn an_id_jag_from_one_authrim_is_a_grant_at_another() {
    id_jag_between_two_servers(false).await;
}

#[tokio::test]
async fn an_id_jag_from_one_authrim_is_a_grant_at_another_on_postgres() {
    id_jag_between_two_servers(true).await;
}

async fn id_jag_between_two_servers(postgres: bool) {
    let idp = TestServer::start_on(postgres, |_| {}).await;
    // The AS's issuer is not known until it starts; the policy names it afterwards.
    let p = pair_on(postgres, idp, json!({})).await;
    let policy = json!({"token_exchange": {"id_jag_audiences": {p.asv.issuer(): "agent-at-as", "https://other-as.example": "agent"}}});
    assert_eq!(p.idp.admin(reqwest::Method::PATCH, "/admin/clients/agent", Some(policy)).await.0, 200);

    let (st, body) = p.jag(&p.asv.issuer(), (&p.id_token, ID_TOKEN), &[("resource", MCP), ("scope", "mcp:tools")]).await;
    assert_eq!(st, 200, "{body}");
    assert_eq!(body["issued_token_type"], ID_JAG);
    assert_eq!(body["token_type"], "N_A");
    let jag = body["access_token"].as_str().unwrap().to_string();
    let (h, c) = jwt_parts(&jag);
    assert_eq!(h["typ"], "oauth-id-jag+jwt");
    assert_eq!((c["iss"].as_str(), c["aud"].as_str()), (Some(p.idp.issuer().as_str()), Some(p.asv.issuer().as_str())));
    assert_eq!(c["client_id"], "agent-at-as");
    assert_eq!(c["resource"], MCP);
    assert_eq!(c["email"], "alice@example.com");

    let (st, tokens) = p.redeem((&p.at_as.0, &p.at_as.1), &jag).await;
    assert_eq!(st, 200, "{tokens}");
    assert!(tokens.get("refresh_token").is_none());
    let (_, at) = jwt_parts(tokens["access_token"].as_str().unwrap());
    let alice_at_as = p.asv.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).user_by_login("alice-at-as").unwrap().id.clone();
    assert_eq!(at["sub"], alice_at_as.as_str(), "mapped by the verified e-mail address");
    assert_eq!(at["aud"], json!([MCP]));
    assert_eq!(at["scope"], "mcp:tools");
    assert_eq!(at["iss"], p.asv.issuer().as_str());

    // Replayed: refused, on the first use's jti.
    let (st, body) = p.redeem((&p.at_as.0, &p.at_as.1), &jag).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_grant")));
    assert!(body["error_description"].as_str().unwrap().contains("already used"), "{body}");

    // Another client of the AS presenting it.
    let (other, other_secret) = p.asv.client("someone-else", json!({"grant_types": [BEARER], "redirect_uris": []})).await;
    let (_, fresh) = p.jag(&p.asv.issuer(), (&p.refresh_token, REFRESH), &[("scope", "mcp:tools"), ("resource", MCP)]).await;
    let fresh = fresh["access_token"].as_str().unwrap().to_string();
    let (st, body) = p.redeem((&other, other_secret.as_deref().unwrap()), &fresh).await;
    assert_eq!(st, 400, "{body}");
    assert!(body["error_description"].as_str().unwrap().contains("another client"), "{body}");

    // Tampered: the scope widened, the signature no longer matches.
    let parts: Vec<&str> = fresh.split('.').collect();
    let (_, mut claims) = jwt_parts(&fresh);
    claims["scope"] = json!("mcp:tools reports");
    let forged = format!("{}.{}.{}", parts[0], authrim::util::b64(claims.to_string().as_bytes()), parts[2]);
    let (st, body) = p.redeem((&p.at_as.0, &p.at_as.1), &forged).await;
    assert_eq!(st, 400);
    assert!(body["error_description"].as_str().unwrap().contains("signature"), "{body}");

    // For another authorization server.
    let (st, body) = p.jag("https://other-as.example", (&p.id_token, ID_TOKEN), &[("scope", "mcp:tools")]).await;
    assert_eq!(st, 200, "{body}");
    let (st, body) = p.redeem((&p.at_as.0, &p.at_as.1), body["access_token"].as_str().unwrap()).await;
    assert_eq!(st, 400);
    assert!(body["error_description"].as_str().unwrap().contains("not for this server"), "{body}");

    // An ID token is not an ID-JAG, even from the trusted issuer.
    let (st, body) = p.redeem((&p.at_as.0, &p.at_as.1), &p.id_token).await;
    assert_eq!(st, 400);
    assert!(body["error_description"].as_str().unwrap().contains("typ"), "{body}");

    // The fresh assertion itself is still good (the refusals spent nothing).
    let (st, body) = p.redeem((&p.at_as.0, &p.at_as.1), &fresh).await;
    assert_eq!(st, 200, "{body}");
}

#[tokio::test]
async fn assertions_from_untrusted_issuers_or_unmapped_users_are_refused() {
    let idp = idp().await;
    let p = pair(idp, json!({})).await;
    // A third Authrim the AS does not trust, with the same user and a policy for the AS.
    let stranger = TestServer::start().await;
    let (id, secret) = stranger
        .client("agent", json!({"grant_types": ["authorization_code", EXCHANGE], "scope": "openid email",
                                "token_exchange": {"id_jag_audiences": {p.asv.issuer(): "agent-at-as"}}}))
        .await;
    stranger.user("alice", json!({"email": "alice@example.com", "email_verified": true})).await;
    let code = stranger.code_for(&stranger.browser(), "agent", "alice", &[("scope", "openid email")]).await["code"].clone();
    let (_, tokens, _) = stranger.token(Some((&id, secret.as_deref().unwrap())), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    let form = [
        ("grant_type", EXCHANGE),
        ("requested_token_type", ID_JAG),
        ("audience", &p.asv.issuer()),
        ("subject_token", tokens["id_token"].as_str().unwrap()),
        ("subject_token_type", ID_TOKEN),
        ("scope", "reports"),
    ];
    let (st, body, _) = stranger.token(Some((&id, secret.as_deref().unwrap())), &form).await;
    assert_eq!(st, 200, "{body}");
    let (st, body) = p.redeem((&p.at_as.0, &p.at_as.1), body["access_token"].as_str().unwrap()).await;
    assert_eq!(st, 400);
    assert!(body["error_description"].as_str().unwrap().contains("not trusted"), "{body}");

    // From the trusted IdP, for a user whose e-mail is not verified at the AS.
    let policy = json!({"token_exchange": {"id_jag_audiences": {p.asv.issuer(): "agent-at-as"}}});
    p.idp.admin(reqwest::Method::PATCH, "/admin/clients/agent", Some(policy)).await;
    let alice_at_as = p.asv.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).user_by_login("alice-at-as").unwrap().id.clone();
    let (st, _) = p.asv.admin(reqwest::Method::PATCH, &format!("/admin/users/{alice_at_as}"), Some(json!({"claims": {"email": "alice@example.com", "email_verified": false}}))).await;
    assert_eq!(st, 200);
    let (_, body) = p.jag(&p.asv.issuer(), (&p.id_token, ID_TOKEN), &[("scope", "reports")]).await;
    let (st, body) = p.redeem((&p.at_as.0, &p.at_as.1), body["access_token"].as_str().unwrap()).await;
    assert_eq!(st, 400);
    assert!(body["error_description"].as_str().unwrap().contains("no user here"), "{body}");
}

#[tokio::test]
async fn the_identity_provider_issues_only_what_its_policy_allows() {
    let idp = idp().await;
    let p = pair(idp, json!({"https://as.example": "agent-there"})).await;
    let (st, body) = p.jag("https://elsewhere.example", (&p.id_token, ID_TOKEN), &[]).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_target")), "{body}");
    let (st, body) = p.jag("https://as.example", ("not-a-token", ID_TOKEN), &[]).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "{body}");
    let (st, body) = p.jag("https://as.example", (&p.id_token, "urn:ietf:params:oauth:token-type:access_token"), &[]).await;
    assert_eq!(st, 400, "{body}");
    // Another client's ID token is not this client's to trade.
    let (other, other_secret) = p.idp.client("other", json!({"grant_types": [EXCHANGE], "redirect_uris": [], "token_exchange": {"id_jag_audiences": {"https://as.example": "x"}}})).await;
    let form = [("grant_type", EXCHANGE), ("requested_token_type", ID_JAG), ("audience", "https://as.example"), ("subject_token", p.id_token.as_str()), ("subject_token_type", ID_TOKEN)];
    let (st, body, _) = p.idp.token(Some((&other, other_secret.as_deref().unwrap())), &form).await;
    assert_eq!(st, 400, "{body}");
    let (st, body) = p.jag("https://as.example", (&p.refresh_token, REFRESH), &[]).await;
    assert_eq!(st, 200, "the refresh token works as a subject: {body}");
}

#[tokio::test]
async fn a_subject_mapping_by_sub_matches_the_username_not_the_email() {
    let idp = idp().await;
    let (id, secret) = idp
        .client("agent", json!({"grant_types": ["authorization_code", EXCHANGE], "scope": "openid email"}))
        .await;
    let alice_at_idp = idp.user("alice", json!({"email": "alice@example.com", "email_verified": true})).await;
    let trusted = vec![TrustedIssuer { issuer: idp.issuer(), jwks_uri: Some(idp.url("/jwks")), subject: SubjectMapping::Sub, ..Default::default() }];
    let asv = TestServer::start_with(move |c| c.trusted_issuers = trusted).await;
    let (b_id, b_secret) = asv.client("agent-at-as", json!({"grant_types": [BEARER], "redirect_uris": [], "scope": "reports"})).await;
    let b_secret = b_secret.unwrap();
    // Someone at the AS whose e-mail address is the IdP user's id must not be chosen.
    let decoy = asv.user("decoy", json!({"email": alice_at_idp.clone(), "email_verified": true})).await;
    let policy = json!({"token_exchange": {"id_jag_audiences": {asv.issuer(): "agent-at-as"}}});
    idp.admin(reqwest::Method::PATCH, "/admin/clients/agent", Some(policy)).await;
    let code = idp.code_for(&idp.browser(), "agent", "alice", &[("scope", "openid email")]).await["code"].clone();
    let (_, tokens, _) = idp.token(Some((&id, secret.as_deref().unwrap())), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    let jag = |issuer: String| {
        let id_token = tokens["id_token"].as_str().unwrap().to_string();
        let (id, secret, idp) = (id.clone(), secret.clone().unwrap(), &idp);
        async move {
            let form = [("grant_type", EXCHANGE), ("requested_token_type", ID_JAG), ("audience", issuer.as_str()), ("subject_token", id_token.as_str()), ("subject_token_type", ID_TOKEN), ("scope", "reports")];
            idp.token(Some((&id, &secret)), &form).await.1["access_token"].as_str().unwrap().to_string()
        }
    };
    let (st, body, _) = asv.token(Some((&b_id, &b_secret)), &[("grant_type", BEARER), ("assertion", &jag(asv.issuer()).await)]).await;
    assert_eq!(st, 400, "no user is named {alice_at_idp}: {body}");
    // Login names are one namespace: the decoy goes before a user can take the name.
    assert_eq!(asv.admin(reqwest::Method::DELETE, &format!("/admin/users/{decoy}"), None).await.0, 204);
    let mapped = asv.user(&alice_at_idp, json!({})).await;
    let (st, body, _) = asv.token(Some((&b_id, &b_secret)), &[("grant_type", BEARER), ("assertion", &jag(asv.issuer()).await)]).await;
    assert_eq!(st, 200, "{body}");
    assert_eq!(jwt_parts(body["access_token"].as_str().unwrap()).1["sub"], mapped.as_str());
}
