//! Resource indicators (RFC 8707) in every grant: the authorization request, the code
//! redemption, refresh (narrowing only) and client credentials; registered resource servers
//! with their scopes on the consent page; introspection by a resource server.

use crate::harness::*;
use authrim::config::agents::ResourceServer;
use serde_json::{json, Value};

const MCP: &str = "https://mcp.example/mcp";
const CALENDAR: &str = "https://calendar.example/";

fn resource_servers() -> Vec<ResourceServer> {
    vec![
        ResourceServer {
            uri: MCP.into(),
            name: "Example MCP server".into(),
            scopes: [("mcp:tools".to_string(), "call the example tools".to_string())].into(),
            client_id: Some("mcp-rs".into()),
            refresh_tokens: None,
        },
        ResourceServer { uri: CALENDAR.into(), name: "Calendar".into(), scopes: [("calendar:read".to_string(), "read your calendar".to_string())].into(), client_id: None, refresh_tokens: Some(false) },
    ]
}

async fn server() -> TestServer {
    TestServer::start_with(|c| c.resource_servers = resource_servers()).await
}

async fn server_on(postgres: bool) -> TestServer {
    TestServer::start_on(postgres, |c| c.resource_servers = resource_servers()).await
}

async fn introspect(s: &TestServer, who: (&str, &str), token: &str) -> Value {
    let res = s.http.post(s.url("/introspect")).basic_auth(who.0, Some(who.1)).form(&[("token", token)]).send().await.unwrap();
    assert_eq!(res.status(), 200);
    res.json().await.unwrap()
}

#[tokio::test]
async fn a_code_for_two_resources_is_redeemed_for_one_and_refreshes_only_narrow() {
    two_resources_narrowed(false).await;
}

#[tokio::test]
async fn a_code_for_two_resources_is_redeemed_for_one_and_refreshes_only_narrow_on_postgres() {
    two_resources_narrowed(true).await;
}

async fn two_resources_narrowed(postgres: bool) {
    let s = server_on(postgres).await;
    let (id, secret) = s.client("app", json!({"grant_types": ["authorization_code", "refresh_token"]})).await;
    let secret = secret.unwrap();
    s.user("alice", json!({})).await;
    let q = [
        ("response_type", "code"),
        ("client_id", "app"),
        ("redirect_uri", REDIRECT),
        ("scope", "openid offline_access mcp:tools calendar:read"),
        ("state", "s"),
        ("resource", MCP),
        ("resource", CALENDAR),
    ];
    let browser = s.browser();
    let page = Page::from(browser.authorize(&q).await).await;
    let consent = browser.post("/login", &[("challenge", &page.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    assert!(consent.is_consent());
    for shown in ["call the example tools", "read your calendar", "Example MCP server", MCP, "Calendar"] {
        assert!(consent.html.contains(shown), "consent shows {shown:?}: {}", consent.html);
    }
    let first = browser.post("/consent", &[("challenge", &consent.challenge()), ("decision", "allow")]).await.redirect_params()["code"].clone();
    let code = browser.finish_login(browser.authorize(&q).await, "alice", PASSWORD).await["code"].clone();

    // Redeemed for a resource it was not authorized for: refused (RFC 8707 §2.2).
    let redeem = |code: &str, resource: &'static str| {
        [("grant_type", "authorization_code".to_string()), ("code", code.to_string()), ("redirect_uri", REDIRECT.into()), ("resource", resource.into())]
    };
    let form = redeem(&first, "https://other.example/");
    let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (status, body, _) = s.token(Some((&id, &secret)), &form).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("invalid_target")), "{body}");
    let form = redeem(&code, MCP);
    let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (status, tokens, _) = s.token(Some((&id, &secret)), &form).await;
    assert_eq!(status, 200, "{tokens}");
    let (_, at) = jwt_parts(tokens["access_token"].as_str().unwrap());
    assert_eq!(at["aud"], json!([MCP]), "the token is for the one resource asked for");
    let (status, _, _) = s.userinfo(tokens["access_token"].as_str().unwrap()).await;
    assert_eq!(status, 401, "a token for the MCP server is not for userinfo");

    let rt = tokens["refresh_token"].as_str().unwrap().to_string();
    let refresh = |rt: &str, resource: Option<&'static str>| {
        let mut f = vec![("grant_type", "refresh_token".to_string()), ("refresh_token", rt.to_string())];
        if let Some(r) = resource {
            f.push(("resource", r.into()));
        }
        f
    };
    let post = |f: Vec<(&'static str, String)>| {
        let (http, url, id, secret) = (s.http.clone(), s.url("/token"), id.clone(), secret.clone());
        async move {
            let res = http.post(url).basic_auth(id, Some(secret)).form(&f).send().await.unwrap();
            (res.status().as_u16(), res.json::<Value>().await.unwrap())
        }
    };
    let (status, body) = post(refresh(&rt, Some("https://other.example/"))).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("invalid_target")), "a refresh cannot widen: {body}");
    let (status, body) = post(refresh(&rt, Some(CALENDAR))).await;
    assert_eq!(status, 200, "the refused refresh did not spend the token: {body}");
    assert_eq!(jwt_parts(body["access_token"].as_str().unwrap()).1["aud"], json!([CALENDAR]));
    let (status, body) = post(refresh(body["refresh_token"].as_str().unwrap(), None)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(jwt_parts(body["access_token"].as_str().unwrap()).1["aud"], json!([MCP, CALENDAR]), "no resource: every granted one");
}

#[tokio::test]
async fn resources_are_checked_at_the_authorization_request() {
    let s = server().await;
    s.client("app", json!({"allowed_resources": ["https://own.example/api"]})).await;
    let browser = s.browser();
    let base = [("response_type", "code"), ("client_id", "app"), ("redirect_uri", REDIRECT), ("scope", "openid"), ("state", "s")];
    for (resource, ok) in [("https://unknown.example/", false), ("not a uri", false), ("https://mcp.example/mcp#x", false), ("https://own.example/api", true), (MCP, true)] {
        let mut q = base.to_vec();
        q.push(("resource", resource));
        let page = Page::from(browser.authorize(&q).await).await;
        if ok {
            assert!(page.is_login(), "{resource}: {}", page.html);
        } else {
            let p = page.redirect_params();
            assert_eq!(p["error"], "invalid_target", "{resource}");
        }
    }
    // A resource server's scope is available only with that resource.
    let mut q = base.to_vec();
    q.retain(|(k, _)| *k != "scope");
    q.push(("scope", "mcp:tools"));
    assert_eq!(Page::from(browser.authorize(&q).await).await.redirect_params()["error"], "invalid_scope");
}

#[tokio::test]
async fn client_credentials_tokens_for_a_resource_and_what_its_server_is_told() {
    let s = server().await;
    let (id, secret) = s.client("svc", json!({"grant_types": ["client_credentials"], "scope": "reports"})).await;
    let secret = secret.unwrap();
    let (rs, rs_secret) = s.client("mcp-rs", json!({"grant_types": ["client_credentials"], "redirect_uris": []})).await;
    let rs_secret = rs_secret.unwrap();
    let (status, body, _) = s.token(Some((&id, &secret)), &[("grant_type", "client_credentials"), ("resource", MCP), ("scope", "mcp:tools")]).await;
    assert_eq!(status, 200, "{body}");
    let for_mcp = body["access_token"].as_str().unwrap().to_string();
    assert_eq!(jwt_parts(&for_mcp).1["aud"], json!([MCP]));
    let (status, body, _) = s.token(Some((&id, &secret)), &[("grant_type", "client_credentials")]).await;
    assert_eq!(status, 200, "{body}");
    let for_issuer = body["access_token"].as_str().unwrap().to_string();
    let (status, body, _) = s.token(Some((&id, &secret)), &[("grant_type", "client_credentials"), ("scope", "mcp:tools")]).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("invalid_scope")), "a resource's scope needs the resource");

    // The MCP server (introspecting as mcp-rs) learns only of tokens meant for it.
    let seen = introspect(&s, (&rs, &rs_secret), &for_mcp).await;
    assert_eq!(seen["active"], true, "{seen}");
    assert_eq!(seen["aud"], MCP);
    assert_eq!(introspect(&s, (&rs, &rs_secret), &for_issuer).await, json!({"active": false}));
    // Another confidential client is told of both.
    assert_eq!(introspect(&s, (&id, &secret), &for_issuer).await["active"], true);
}

#[tokio::test]
async fn discovery_lists_the_resource_servers_scopes() {
    let s = server().await;
    let d: Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    let scopes: Vec<&str> = d["scopes_supported"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    for want in ["openid", "mcp:tools", "calendar:read"] {
        assert!(scopes.contains(&want), "{scopes:?}");
    }
}

/// Issue 36 (MCP): a client that registers itself asks for the scope its MCP server's
/// challenge named. The registered resource servers' scopes are open to registration as they
/// are to metadata-document clients; scopes outside the policy are dropped.
#[tokio::test]
async fn self_registered_clients_may_have_resource_server_scopes() {
    let s = TestServer::start_with(|c| {
        c.resource_servers = resource_servers();
        c.open_registration = true;
    })
    .await;
    let register = |scope: &'static str| {
        let body = json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none", "scope": scope, "grant_types": ["authorization_code", "refresh_token"]});
        s.http.post(s.url("/register")).json(&body).send()
    };
    let res = register("mcp:tools").await.unwrap();
    assert_eq!(res.status(), 201);
    let c: Value = res.json().await.unwrap();
    assert_eq!(c["scope"], "mcp:tools", "{c}");
    let res = register("mcp:tools admin:everything openid").await.unwrap();
    assert_eq!(res.status(), 201);
    let c2: Value = res.json().await.unwrap();
    assert_eq!(c2["scope"], "mcp:tools openid", "the scope outside the policy dropped: {c2}");
    // Only scopes outside the policy: dropped too, not refused (the README's promise); the
    // client is registered with `registration_scopes`, as if it had named none.
    let res = register("admin:everything").await.unwrap();
    assert_eq!(res.status(), 201);
    let c3: Value = res.json().await.unwrap();
    assert_eq!(c3["scope"], authrim::config::Config::default().registration_scopes.as_str(), "{c3}");
    // And the registered client can ask for it, for its resource.
    let id = c["client_id"].as_str().unwrap();
    let challenge = authrim::util::b64(&authrim::util::sha256(b"verifier"));
    let q = [("response_type", "code"), ("client_id", id), ("redirect_uri", REDIRECT), ("scope", "mcp:tools"), ("resource", MCP), ("state", "s"), ("code_challenge", challenge.as_str()), ("code_challenge_method", "S256")];
    let page = Page::from(s.browser().authorize(&q).await).await;
    assert!(page.is_login(), "{}", page.status);
}

/// Issue 36 (MCP item 2): an OAuth request (no `openid`) for a resource server gets a refresh
/// token without `offline_access` by default; a resource server's `refresh_tokens = false`
/// (the calendar here) withholds it for tokens meant for it, also when named with another.
/// An OpenID request for the same resource keeps OpenID Connect Core §11's rule.
#[tokio::test]
async fn a_resource_server_decides_on_refresh_tokens_for_oauth_requests() {
    let s = server().await;
    let (id, secret) = s.client("app", json!({"grant_types": ["authorization_code", "refresh_token"]})).await;
    let secret = secret.unwrap();
    s.user("alice", json!({})).await;
    let browser = s.browser();
    let redeem = |scope: &'static str, resources: &'static [&'static str]| {
        let (b, id, secret) = (&browser, id.clone(), secret.clone());
        let s = &s;
        async move {
            let verifier = "v".repeat(43);
            let challenge = authrim::util::b64(&authrim::util::sha256(verifier.as_bytes()));
            let mut q = vec![("scope", scope), ("code_challenge", challenge.as_str()), ("code_challenge_method", "S256")];
            q.extend(resources.iter().map(|r| ("resource", *r)));
            let code = s.code_for(b, "app", "alice", &q).await["code"].clone();
            let (st, tok, _) = s.token(Some((&id, &secret)), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT), ("code_verifier", &verifier)]).await;
            assert_eq!(st, 200, "{tok}");
            tok
        }
    };
    let tok = redeem("mcp:tools", &[MCP]).await;
    assert!(tok.get("refresh_token").is_some(), "OAuth request for the MCP server: {tok}");
    let (st, body, _) = s.token(Some((&id, &secret)), &[("grant_type", "refresh_token"), ("refresh_token", tok["refresh_token"].as_str().unwrap())]).await;
    assert_eq!(st, 200, "{body}");
    assert_eq!(jwt_parts(body["access_token"].as_str().unwrap()).1["aud"], json!([MCP]));
    assert!(redeem("calendar:read", &[CALENDAR]).await.get("refresh_token").is_none(), "the calendar says no");
    assert!(redeem("mcp:tools calendar:read", &[MCP, CALENDAR]).await.get("refresh_token").is_none(), "one of them says no");
    assert!(redeem("openid mcp:tools", &[MCP]).await.get("refresh_token").is_none(), "an OpenID request without offline_access");
}
