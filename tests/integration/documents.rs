//! Client ID Metadata Documents: a URL as `client_id`, the document fetched within bounds and
//! only from where the policy allows, cached as its response says, and every way a document
//! must be refused.

use crate::client_jwt::{jwks, Signer, ASSERTION_TYPE};
use crate::harness::*;
use authrim::util::{b64, sha256};
use axum::http::header;
use axum::routing::get;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;

const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CALLBACK: &str = "http://127.0.0.1:9/callback";

/// The documents' server: each path a document (or a misbehaviour), and how often each was
/// fetched.
struct Docs {
    base: String,
    fetches: Arc<parking_lot::Mutex<HashMap<String, usize>>>,
}

impl Docs {
    async fn start(signer_jwks: Value) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let fetches: Arc<parking_lot::Mutex<HashMap<String, usize>>> = Default::default();
        let (b, f) = (base.clone(), fetches.clone());
        let app = axum::Router::new()
            .route(
                "/{name}",
                get(move |axum::extract::Path(name): axum::extract::Path<String>| {
                    let (base, fetches, keys) = (b.clone(), f.clone(), signer_jwks.clone());
                    async move {
                        *fetches.lock().entry(name.clone()).or_default() += 1;
                        document(&base, &name, keys).await
                    }
                }),
            );
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self { base, fetches }
    }

    fn url(&self, name: &str) -> String {
        format!("{}/{name}", self.base)
    }

    fn fetched(&self, name: &str) -> usize {
        self.fetches.lock().get(name).copied().unwrap_or(0)
    }
}

async fn document(base: &str, name: &str, keys: Value) -> axum::response::Response {
    use axum::response::IntoResponse;
    let id = format!("{base}/{name}");
    let good = json!({"client_id": id, "client_name": "Agent Smith", "redirect_uris": [CALLBACK],
                      "grant_types": ["authorization_code", "refresh_token"], "scope": "openid profile offline_access"});
    let with = |k: &str, v: Value| {
        let mut d = good.clone();
        d[k] = v;
        d
    };
    let cached = |cc: &'static str, body: Value| ([(header::CACHE_CONTROL, cc)], axum::Json(body)).into_response();
    match name {
        "good" | "good2" => cached("max-age=60", good),
        "nostore" => cached("no-store", good),
        "mismatch" => axum::Json(with("client_id", json!(format!("{base}/other")))).into_response(),
        "secret" => axum::Json(with("client_secret", json!("s3cret"))).into_response(),
        "basic" => axum::Json(with("token_endpoint_auth_method", json!("client_secret_basic"))).into_response(),
        "noredirect" => axum::Json(with("redirect_uris", json!([]))).into_response(),
        "machine" => axum::Json(with("grant_types", json!(["client_credentials"]))).into_response(),
        "big" => axum::Json(with("client_name", json!("x".repeat(100_000)))).into_response(),
        "slow" => {
            tokio::time::sleep(std::time::Duration::from_secs(4)).await;
            axum::Json(good).into_response()
        }
        "moved" => axum::response::Redirect::temporary("/good").into_response(),
        "keyed" | "keyed2" => {
            let mut d = with("token_endpoint_auth_method", json!("private_key_jwt"));
            d["jwks_uri"] = json!(format!("{base}/{name}-keys.json"));
            axum::Json(d).into_response()
        }
        "keyed-keys.json" | "keyed2-keys.json" => axum::Json(keys).into_response(),
        _ => axum::http::StatusCode::NOT_FOUND.into_response(),
    }
}

fn challenge() -> String {
    b64(&sha256(VERIFIER.as_bytes()))
}

fn authorize_query<'a>(client_id: &'a str, challenge: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", CALLBACK),
        ("scope", "openid profile offline_access"),
        ("state", "s1"),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
    ]
}

async fn server(policy: &str, hosts: &str) -> TestServer {
    server_on(false, policy, hosts).await
}

async fn server_on(postgres: bool, policy: &str, hosts: &str) -> TestServer {
    let (policy, hosts) = (policy.to_string(), hosts.to_string());
    TestServer::start_on(postgres, move |c| {
        c.client_id_metadata_documents = policy;
        c.client_id_metadata_document_hosts = hosts;
        c.fetch_timeout = 2;
        c.fetch_max_bytes = 16 * 1024;
    })
    .await
}

#[tokio::test]
async fn a_client_known_only_by_its_document_signs_a_user_in_and_refreshes() {
    document_client_flow(false).await;
}

#[tokio::test]
async fn a_client_known_only_by_its_document_signs_a_user_in_and_refreshes_on_postgres() {
    document_client_flow(true).await;
}

async fn document_client_flow(postgres: bool) {
    let docs = Docs::start(json!({"keys": []})).await;
    let s = server_on(postgres, "any", "").await;
    s.user("alice", json!({})).await;
    let id = docs.url("good");
    let disco: Value = s.http.get(s.url("/.well-known/oauth-authorization-server")).send().await.unwrap().json().await.unwrap();
    assert_eq!(disco["client_id_metadata_document_supported"], true);

    let browser = s.browser();
    let ch = challenge();
    let page = Page::from(browser.authorize(&authorize_query(&id, &ch)).await).await;
    assert!(page.is_login(), "{}", page.html);
    assert!(page.html.contains("Agent Smith (127.0.0.1)"), "the login page names the document's client and its host: {}", page.html);
    let consent = browser.post("/login", &[("challenge", &page.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    assert!(consent.is_consent(), "{}", consent.html);
    assert!(consent.html.contains("identified by its address on <strong>127.0.0.1</strong>"), "the consent page shows the host: {}", consent.html);
    let back = browser.post("/consent", &[("challenge", &consent.challenge()), ("decision", "allow")]).await;
    let code = back.redirect_params_at(CALLBACK)["code"].clone();

    // A public client: no authentication, the PKCE verifier.
    let (status, tokens, _) = s
        .token(None, &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", CALLBACK), ("client_id", &id), ("code_verifier", VERIFIER)])
        .await;
    assert_eq!(status, 200, "{tokens}");
    let (_, claims) = jwt_parts(tokens["access_token"].as_str().unwrap());
    assert_eq!(claims["client_id"], id.as_str());
    let (_, idt) = jwt_parts(tokens["id_token"].as_str().unwrap());
    assert_eq!(idt["aud"], id.as_str());
    let (status, info, _) = s.userinfo(tokens["access_token"].as_str().unwrap()).await;
    assert_eq!(status, 200, "{info}");

    let (status, refreshed, _) =
        s.token(None, &[("grant_type", "refresh_token"), ("refresh_token", tokens["refresh_token"].as_str().unwrap()), ("client_id", &id)]).await;
    assert_eq!(status, 200, "{refreshed}");
    assert_eq!(docs.fetched("good"), 1, "max-age=60: fetched once for the whole flow");
}

#[tokio::test]
async fn documents_are_cached_as_their_responses_say() {
    let docs = Docs::start(json!({"keys": []})).await;
    let s = server("any", "").await;
    let ch = challenge();
    for name in ["good", "nostore"] {
        let id = docs.url(name);
        for _ in 0..3 {
            let page = Page::from(s.browser().authorize(&authorize_query(&id, &ch)).await).await;
            assert!(page.is_login(), "{name}: {}", page.html);
        }
    }
    assert_eq!(docs.fetched("good"), 1);
    assert_eq!(docs.fetched("nostore"), 3, "no-store: fetched every time");
}

#[tokio::test]
async fn bad_documents_and_bad_urls_are_refused_with_a_page() {
    let docs = Docs::start(json!({"keys": []})).await;
    let s = server("any", "").await;
    let ch = challenge();
    let cases: Vec<(String, &str)> = vec![
        (docs.url("mismatch"), "not the URL it was fetched from"),
        (docs.url("secret"), "client_secret"),
        (docs.url("basic"), "no shared secrets"),
        (docs.url("noredirect"), "redirect_uris"),
        (docs.url("machine"), "not open to document clients"),
        (docs.url("big"), "larger than"),
        (docs.url("slow"), "could not be fetched"),
        (docs.url("moved"), "answered 307"),
        (docs.url("missing"), "answered 404"),
        (format!("{}/good#frag", docs.base), "fragment"),
        (docs.base.clone() + "/", "path"),
        (format!("{}/a/../good", docs.base), "normalised"),
    ];
    for (id, why) in cases {
        let res = s.browser().authorize(&authorize_query(&id, &ch)).await;
        let page = Page::from(res).await;
        assert_eq!(page.status, 400, "{id}");
        assert!(page.location.is_none(), "{id}: never redirected to an unverified client");
        assert!(page.html.contains(why), "{id}: expected {why:?} in {}", page.html);
    }
}

#[tokio::test]
async fn the_policy_decides_whose_documents_are_fetched() {
    let docs = Docs::start(json!({"keys": []})).await;
    let ch = challenge();
    let id = docs.url("good");

    let off = server("off", "").await;
    let page = Page::from(off.browser().authorize(&authorize_query(&id, &ch)).await).await;
    assert!(page.html.contains("not accepted here"), "{}", page.html);
    let disco: Value = off.http.get(off.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    assert_eq!(disco["client_id_metadata_document_supported"], false);

    let listed_elsewhere = server("listed", "agents.example").await;
    let page = Page::from(listed_elsewhere.browser().authorize(&authorize_query(&id, &ch)).await).await;
    assert!(page.html.contains("from 127.0.0.1 are not accepted"), "{}", page.html);

    let listed = server("listed", "agents.example 127.0.0.1").await;
    assert!(Page::from(listed.browser().authorize(&authorize_query(&id, &ch)).await).await.is_login());
    assert_eq!(docs.fetched("good"), 1, "only the allowed server fetched");
}

#[tokio::test]
async fn private_addresses_are_not_fetched_unless_allowed() {
    let docs = Docs::start(json!({"keys": []})).await;
    let s = TestServer::start_with(|c| {
        c.client_id_metadata_documents = "any".into();
        c.fetch_allow_private_addresses = false;
    })
    .await;
    let ch = challenge();
    let port = docs.base.rsplit(':').next().unwrap().to_string();
    for (id, why) in [
        // Plain http is for loopback tests only, and only when private addresses are allowed.
        (docs.url("good"), "https"),
        // A local name, and loopback and metadata-service literals.
        (format!("https://localhost:{port}/good"), "not a public name"),
        (format!("https://127.0.0.1:{port}/good"), "not a public address"),
        ("https://169.254.169.254/latest/meta-data".to_string(), "not a public address"),
        (format!("https://[::1]:{port}/good"), "not a public address"),
    ] {
        let page = Page::from(s.browser().authorize(&authorize_query(&id, &ch)).await).await;
        assert_eq!(page.status, 400, "{id}");
        assert!(page.html.contains(why), "{id}: expected {why:?} in {}", page.html);
    }
    assert_eq!(docs.fetched("good"), 0, "nothing reached the private address");
}

#[tokio::test]
async fn a_document_client_authenticates_with_keys_from_its_jwks_uri() {
    let signer = Signer::es256("agent-key");
    let docs = Docs::start(jwks(&[&signer])).await;
    let s = server("any", "").await;
    s.user("alice", json!({})).await;
    let id = docs.url("keyed");
    let browser = s.browser();
    let ch = challenge();
    let code = browser.finish_login_at(browser.authorize(&authorize_query(&id, &ch)).await, "alice", PASSWORD, CALLBACK).await["code"].clone();
    let redeem = |assertion: Option<String>| {
        let mut form = vec![
            ("grant_type", "authorization_code".to_string()),
            ("code", code.clone()),
            ("redirect_uri", CALLBACK.into()),
            ("client_id", id.clone()),
            ("code_verifier", VERIFIER.into()),
        ];
        if let Some(a) = assertion {
            form.push(("client_assertion_type", ASSERTION_TYPE.into()));
            form.push(("client_assertion", a));
        }
        form
    };
    let post = |form: Vec<(&'static str, String)>| {
        let http = s.http.clone();
        let url = s.url("/token");
        async move {
            let res = http.post(url).form(&form).send().await.unwrap();
            (res.status().as_u16(), res.json::<Value>().await.unwrap())
        }
    };
    let (status, body) = post(redeem(None)).await;
    assert_eq!((status, body["error"].as_str()), (401, Some("invalid_client")), "{body}");
    let forged = Signer::es256("agent-key").assertion(&id, &s.url("/token"), json!({}));
    let (status, _) = post(redeem(Some(forged))).await;
    assert_eq!(status, 401, "a key that is not the document's");
    let good = signer.assertion(&id, &s.url("/token"), json!({}));
    let (status, body) = post(redeem(Some(good))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(docs.fetched("keyed-keys.json"), 1);
}

#[tokio::test]
async fn key_sets_of_made_up_clients_stay_within_their_bound() {
    let signer = Signer::es256("agent-key");
    let docs = Docs::start(jwks(&[&signer])).await;
    let s = TestServer::start_with(|c| {
        c.client_id_metadata_documents = "any".into();
        c.client_jwks_cache_max_entries = 1;
    })
    .await;
    // Client credentials are not open to document clients, but authentication comes first:
    // each attempt makes the server fetch the document's key set.
    for name in ["keyed", "keyed2", "keyed"] {
        let id = docs.url(name);
        let assertion = signer.assertion(&id, &s.url("/token"), json!({}));
        let form = [("grant_type", "client_credentials"), ("client_assertion_type", ASSERTION_TYPE), ("client_assertion", assertion.as_str()), ("client_id", id.as_str())];
        let res = s.http.post(s.url("/token")).form(&form).send().await.unwrap();
        let status = res.status().as_u16();
        let body: Value = res.json().await.unwrap();
        assert_eq!((status, body["error"].as_str()), (400, Some("unauthorized_client")), "authenticated, then refused the grant: {body}");
    }
    assert_eq!(s.server.app.client_keys.len(), 1);
    assert_eq!(docs.fetched("keyed-keys.json"), 2, "evicted by keyed2's set, so fetched again");
}

#[tokio::test]
async fn a_flood_of_new_documents_stays_within_the_cache_bound() {
    let docs = Docs::start(json!({"keys": []})).await;
    let s = TestServer::start_with(|c| {
        c.client_id_metadata_documents = "any".into();
        c.client_id_metadata_document_max_entries = 1;
    })
    .await;
    let ch = challenge();
    for name in ["good", "good2", "good"] {
        assert!(Page::from(s.browser().authorize(&authorize_query(&docs.url(name), &ch)).await).await.is_login());
    }
    assert_eq!(s.server.app.documents.len(), 1);
    assert_eq!(docs.fetched("good"), 2, "evicted by good2, so fetched again");
}
