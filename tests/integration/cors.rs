//! CORS for browser-based clients on /token, /revoke and /userinfo: a page may call them from
//! an origin of the client the request is for, and from nowhere else.

use crate::harness::*;
use authrim::util::{b64, sha256};
use reqwest::header::HeaderMap;
use reqwest::Method;
use serde_json::{json, Value};

const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
/// The origin of `REDIRECT`, the SPA's redirect URI.
const SPA: &str = "https://rp.example";
const OTHER: &str = "https://other.example";
const EVIL: &str = "https://evil.example";

/// Two public clients: `spa` (redirect URI at `SPA`) and `other` (at `OTHER`), and a user.
async fn setup(s: &TestServer) {
    s.client("spa", json!({"token_endpoint_auth_method": "none"})).await;
    s.client("other", json!({"token_endpoint_auth_method": "none", "redirect_uris": ["https://other.example/cb"]})).await;
    s.user("alice", json!({})).await;
}

async fn preflight(s: &TestServer, path: &str, origin: &str, method: &str) -> (u16, HeaderMap) {
    let res = s
        .http
        .request(Method::OPTIONS, s.url(path))
        .header("origin", origin)
        .header("access-control-request-method", method)
        .header("access-control-request-headers", "authorization")
        .send()
        .await
        .unwrap();
    (res.status().as_u16(), res.headers().clone())
}

fn allowed_origin(h: &HeaderMap) -> Option<&str> {
    h.get("access-control-allow-origin").map(|v| v.to_str().unwrap())
}

fn assert_cors_for(h: &HeaderMap, origin: &str, what: &str) {
    assert_eq!(allowed_origin(h), Some(origin), "{what}");
    assert!(!h.contains_key("access-control-allow-credentials"), "{what}: never credentials");
    assert!(h.get_all("vary").iter().any(|v| v.to_str().unwrap().to_ascii_lowercase().contains("origin")), "{what}: Vary: Origin");
}

fn assert_no_cors(h: &HeaderMap, what: &str) {
    assert!(!h.keys().any(|k| k.as_str().starts_with("access-control-")), "{what}: {h:?}");
}

/// The SPA's code flow with PKCE, its token request sent from `origin`.
async fn spa_tokens(s: &TestServer, origin: &str) -> (Value, HeaderMap) {
    let challenge = b64(&sha256(VERIFIER.as_bytes()));
    let pkce = [("code_challenge", challenge.as_str()), ("code_challenge_method", "S256")];
    let code = s.code_for(&s.browser(), "spa", "alice", &pkce).await["code"].clone();
    let form = [("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT), ("client_id", "spa"), ("code_verifier", VERIFIER)];
    let res = s.http.post(s.url("/token")).header("origin", origin).form(&form).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let headers = res.headers().clone();
    (res.json().await.unwrap(), headers)
}

#[tokio::test]
async fn preflight_is_answered_for_registered_origins_only() {
    let s = TestServer::start().await;
    setup(&s).await;
    for (path, method, methods) in [("/token", "POST", "POST"), ("/revoke", "POST", "POST"), ("/userinfo", "GET", "GET, POST")] {
        for origin in [SPA, OTHER] {
            let (st, h) = preflight(&s, path, origin, method).await;
            let what = format!("preflight {path} from {origin}");
            assert_eq!(st, 204, "{what}");
            assert_cors_for(&h, origin, &what);
            assert_eq!(h["access-control-allow-methods"], methods, "{what}");
            assert!(h["access-control-allow-headers"].to_str().unwrap().contains("authorization"), "{what}");
            assert!(h.contains_key("access-control-max-age"), "{what}");
        }
        // A foreign origin, a near miss of a registered one, and the opaque origin: nothing.
        for origin in [EVIL, "https://rp.example:8443", "http://rp.example", "https://rp.example.evil.example", "null"] {
            let (st, h) = preflight(&s, path, origin, method).await;
            assert_ne!(st, 204, "preflight {path} from {origin}");
            assert_no_cors(&h, &format!("preflight {path} from {origin}"));
        }
        // A method the endpoint does not take.
        let (_, h) = preflight(&s, path, SPA, "DELETE").await;
        assert_no_cors(&h, &format!("preflight {path} for DELETE"));
    }
    // Endpoints without CORS stay without it.
    for path in ["/introspect", "/authorize", "/admin/clients"] {
        let (_, h) = preflight(&s, path, SPA, "POST").await;
        assert_no_cors(&h, &format!("preflight {path}"));
    }
}

#[tokio::test]
async fn the_real_requests_honour_only_the_clients_own_origin() {
    let s = TestServer::start().await;
    setup(&s).await;

    // /token: the SPA from its origin gets the headers; from another client's origin, none.
    let (tokens, h) = spa_tokens(&s, SPA).await;
    assert_cors_for(&h, SPA, "/token from the SPA");
    let (_, h) = spa_tokens(&s, OTHER).await;
    assert_no_cors(&h, "/token for spa from other's origin");
    let (_, h) = spa_tokens(&s, EVIL).await;
    assert_no_cors(&h, "/token from a foreign origin");

    // A refusal after the client is known is readable by the client's page, and only by it.
    let bad = [("grant_type", "authorization_code"), ("code", "1_x"), ("redirect_uri", "https://other.example/cb"), ("client_id", "other")];
    for (origin, honoured) in [(OTHER, true), (SPA, false)] {
        let res = s.http.post(s.url("/token")).header("origin", origin).form(&bad).send().await.unwrap();
        assert_eq!(res.status(), 400);
        let what = format!("invalid_grant for other, from {origin}");
        if honoured { assert_cors_for(res.headers(), origin, &what) } else { assert_no_cors(res.headers(), &what) }
    }

    // /userinfo: the token's client decides.
    let at = tokens["access_token"].as_str().unwrap();
    for (origin, honoured) in [(SPA, true), (OTHER, false), (EVIL, false)] {
        let res = s.http.get(s.url("/userinfo")).bearer_auth(at).header("origin", origin).send().await.unwrap();
        assert_eq!(res.status(), 200);
        let what = format!("/userinfo from {origin}");
        if honoured {
            assert_cors_for(res.headers(), origin, &what);
            assert_eq!(res.headers()["access-control-expose-headers"], "www-authenticate", "{what}");
        } else {
            assert_no_cors(res.headers(), &what);
        }
    }
    // A token that names no client leaves nothing to honour.
    let res = s.http.get(s.url("/userinfo")).bearer_auth("garbage").header("origin", SPA).send().await.unwrap();
    assert_eq!(res.status(), 401);
    assert_no_cors(res.headers(), "/userinfo with an invalid token");

    // /revoke: the authenticated client decides.
    let rt = at;
    let res = s.http.post(s.url("/revoke")).header("origin", OTHER).form(&[("token", rt), ("client_id", "spa")]).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_no_cors(res.headers(), "/revoke for spa from other's origin");
    let res = s.http.post(s.url("/revoke")).header("origin", SPA).form(&[("token", rt), ("client_id", "spa")]).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_cors_for(res.headers(), SPA, "/revoke from the SPA");

    // Without an Origin (not a browser), nothing changes but Vary.
    let res = s.http.get(s.url("/userinfo")).bearer_auth(at).send().await.unwrap();
    assert!(!res.headers().contains_key("access-control-allow-origin"));
}

#[tokio::test]
async fn an_explicit_origin_list_replaces_the_redirect_origins_and_is_validated() {
    let s = TestServer::start().await;
    setup(&s).await;
    let app = "https://app.example";
    let (st, v) = s.admin(Method::PATCH, "/admin/clients/spa", Some(json!({"allowed_cors_origins": [app]}))).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["allowed_cors_origins"], json!([app]));

    assert_eq!(preflight(&s, "/token", app, "POST").await.0, 204);
    let (_, h) = preflight(&s, "/token", SPA, "POST").await;
    assert_no_cors(&h, "the redirect origin once a list is set");
    let (_, h) = spa_tokens(&s, app).await;
    assert_cors_for(&h, app, "/token from the listed origin");
    let (_, h) = spa_tokens(&s, SPA).await;
    assert_no_cors(&h, "/token from the redirect origin once a list is set");

    for bad in ["https://app.example/", "https://app.example/path", "https://APP.example", "http://app.example", "*", "null"] {
        let (st, v) = s.admin(Method::PATCH, "/admin/clients/spa", Some(json!({"allowed_cors_origins": [bad]}))).await;
        assert_eq!((st, v["error"].as_str()), (400, Some("invalid_client_metadata")), "{bad}");
    }

    // Deleting the client withdraws its origins from preflights.
    assert_eq!(s.admin(Method::DELETE, "/admin/clients/spa", None).await.0, 204);
    let (_, h) = preflight(&s, "/token", app, "POST").await;
    assert_no_cors(&h, "preflight for a deleted client's origin");
}

#[tokio::test]
async fn origins_set_with_the_cli_reach_a_running_server() {
    let s = TestServer::start().await;
    setup(&s).await;
    let cli_origin = "https://cli.example";
    let out = crate::admin::cli(s.dir.path(), &["client", "update", "other", "--cors-origin", cli_origin]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(shown["allowed_cors_origins"], json!([cli_origin]));
    let mut answered = false;
    for _ in 0..50 {
        if preflight(&s, "/token", cli_origin, "POST").await.0 == 204 {
            answered = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(answered, "the server did not pick up the CLI's origin");
    let (_, h) = preflight(&s, "/token", OTHER, "POST").await;
    assert_no_cors(&h, "other's redirect origin after the CLI set a list");
    let out = crate::admin::cli(s.dir.path(), &["client", "update", "other", "--cors-origin", "https://cli.example/"]);
    assert!(!out.status.success(), "a path is not an origin");
}

#[tokio::test]
async fn discovery_and_jwks_are_open_to_every_origin() {
    let s = TestServer::start().await;
    for path in ["/.well-known/openid-configuration", "/jwks"] {
        let res = s.http.get(s.url(path)).header("origin", EVIL).send().await.unwrap();
        assert_eq!(res.status(), 200);
        assert_eq!(allowed_origin(res.headers()), Some("*"), "{path}");
        assert!(!res.headers().contains_key("access-control-allow-credentials"));
    }
}
