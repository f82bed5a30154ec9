//! Every error a client can cause at an API endpoint is an OAuth error in JSON with the right
//! status: oversized and malformed bodies, paths and query strings that do not parse, unknown
//! routes and methods. (The browser pages answer with HTML by design; see authorize.rs.)

use crate::harness::*;
use reqwest::{Method, Response};
use serde_json::{json, Value};

const LIMIT: usize = 1024;

async fn server() -> TestServer {
    TestServer::start_with(|c| {
        c.max_body_bytes = LIMIT;
        c.metrics_token = Some("metrics-token".into());
    })
    .await
}

/// Asserts the status, `content-type: application/json` and an `error` string; returns the
/// error code and the `WWW-Authenticate` header.
async fn json_error(res: Response, status: u16, what: &str) -> (String, Option<String>) {
    assert_eq!(res.status(), status, "{what}");
    let ct = res.headers().get("content-type").map(|v| v.to_str().unwrap().to_string());
    assert_eq!(ct.as_deref(), Some("application/json"), "{what}");
    let challenge = res.headers().get("www-authenticate").map(|v| v.to_str().unwrap().to_string());
    let text = res.text().await.unwrap();
    let body: Value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("{what}: not JSON: {text:?}"));
    let code = body["error"].as_str().unwrap_or_else(|| panic!("{what}: no error field: {body}")).to_string();
    (code, challenge)
}

fn oversized_form() -> String {
    format!("token={}", "a".repeat(4 * LIMIT))
}

#[tokio::test]
async fn oversized_bodies_are_413_json_everywhere() {
    let s = server().await;
    let (id, secret) = s.client("rp", json!({})).await;
    let secret = secret.unwrap();
    for path in ["/token", "/revoke", "/introspect"] {
        let res = s.http.post(s.url(path)).basic_auth(&id, Some(&secret)).header("content-type", "application/x-www-form-urlencoded").body(oversized_form()).send().await.unwrap();
        assert_eq!(json_error(res, 413, path).await.0, "invalid_request");
    }

    // /userinfo is an RFC 6750 resource: its errors carry a Bearer challenge, this one too.
    for method in [Method::POST, Method::GET] {
        let res = s.http.request(method.clone(), s.url("/userinfo")).header("content-type", "application/x-www-form-urlencoded").body(oversized_form()).send().await.unwrap();
        let (code, challenge) = json_error(res, 413, &format!("{method} /userinfo")).await;
        assert_eq!(code, "invalid_request");
        let challenge = challenge.expect("a WWW-Authenticate challenge");
        assert!(challenge.starts_with("Bearer ") && challenge.contains("error=\"invalid_request\""), "{challenge}");
    }

    let sub = s.user("alice", json!({})).await;
    let big = json!({"client_name": "x".repeat(4 * LIMIT)}).to_string();
    for (method, path) in [
        (Method::POST, "/admin/clients".to_string()),
        (Method::PATCH, format!("/admin/clients/{id}")),
        (Method::PUT, format!("/admin/clients/{id}")),
        (Method::POST, "/admin/users".to_string()),
        (Method::PATCH, format!("/admin/users/{sub}")),
    ] {
        let res = s.http.request(method.clone(), s.url(&path)).bearer_auth(ADMIN).header("content-type", "application/json").body(big.clone()).send().await.unwrap();
        assert_eq!(json_error(res, 413, &format!("{method} {path}")).await.0, "invalid_request");
    }
}

#[tokio::test]
async fn malformed_bodies_are_400_json_everywhere() {
    let s = server().await;
    let (id, secret) = s.client("rp", json!({})).await;
    let secret = secret.unwrap();
    let form = "application/x-www-form-urlencoded";
    for path in ["/token", "/revoke", "/introspect"] {
        for (ctype, body) in [("application/json", r#"{"token":"x"}"#), (form, "token=a&token=b&grant_type=x")] {
            let res = s.http.post(s.url(path)).basic_auth(&id, Some(&secret)).header("content-type", ctype).body(body).send().await.unwrap();
            assert_eq!(json_error(res, 400, &format!("{path} {body}")).await.0, "invalid_request");
        }
    }
    // A repeated token, and a token sent two ways at once.
    for (header, body) in [(None, "access_token=a&access_token=b"), (Some("Bearer a"), "access_token=a")] {
        let mut req = s.http.post(s.url("/userinfo")).header("content-type", form).body(body);
        if let Some(h) = header {
            req = req.header("authorization", h);
        }
        let (code, challenge) = json_error(req.send().await.unwrap(), 400, body).await;
        assert_eq!(code, "invalid_request", "{body}");
        assert!(challenge.is_some_and(|c| c.starts_with("Bearer")), "{body}");
    }

    let sub = s.user("alice", json!({})).await;
    for (method, path, body) in [
        (Method::POST, "/admin/clients".to_string(), "{"),
        (Method::POST, "/admin/clients".to_string(), r#"{"redirect_uris": "not a list"}"#),
        (Method::POST, "/admin/clients".to_string(), r#"{"no_such_field": 1}"#),
        (Method::PATCH, format!("/admin/clients/{id}"), "\u{0}"),
        (Method::POST, "/admin/users".to_string(), r#""a string""#),
        (Method::PUT, format!("/admin/users/{sub}"), "not json"),
    ] {
        let res = s.http.request(method.clone(), s.url(&path)).bearer_auth(ADMIN).header("content-type", "application/json").body(body).send().await.unwrap();
        assert_eq!(json_error(res, 400, &format!("{method} {path} {body:?}")).await.0, "invalid_request");
    }
}

#[tokio::test]
async fn admin_paths_and_query_strings_that_do_not_parse_are_400_json() {
    let s = server().await;
    for path in ["/admin/clients/%FF", "/admin/users/%C3%28", "/admin/audit?limit=abc", "/admin/audit?limit=-1", "/admin/audit?limit=1&limit=2"] {
        let res = s.http.get(s.url(path)).bearer_auth(ADMIN).send().await.unwrap();
        assert_eq!(json_error(res, 400, path).await.0, "invalid_request");
    }
    // The same requests without the admin token are refused before any parsing.
    let res = s.http.get(s.url("/admin/clients/%FF")).send().await.unwrap();
    assert_eq!(json_error(res, 401, "no admin token").await.0, "invalid_token");
}

#[tokio::test]
async fn unknown_routes_and_methods_are_json() {
    let s = server().await;
    for path in ["/nope", "/token/x", "/admin", "/.well-known/nope"] {
        let res = s.http.get(s.url(path)).send().await.unwrap();
        assert_eq!(json_error(res, 404, path).await.0, "not_found");
    }
    for (method, path) in [
        (Method::GET, "/token"),
        (Method::PUT, "/revoke"),
        (Method::GET, "/introspect"),
        (Method::DELETE, "/userinfo"),
        (Method::POST, "/jwks"),
        (Method::POST, "/.well-known/openid-configuration"),
        (Method::POST, "/metrics"),
        (Method::POST, "/healthz"),
        (Method::OPTIONS, "/token"),
        (Method::DELETE, "/admin/audit"),
        (Method::PUT, "/admin/clients"),
        (Method::GET, "/admin/clients/x/secret"),
    ] {
        let res = s.http.request(method.clone(), s.url(path)).bearer_auth(ADMIN).send().await.unwrap();
        let what = format!("{method} {path}");
        assert!(res.headers().contains_key("allow"), "{what}: a 405 names the allowed methods");
        assert_eq!(json_error(res, 405, &what).await.0, "invalid_request");
    }
}

#[tokio::test]
async fn metrics_refusals_are_json_and_its_answer_is_prometheus_text() {
    let s = server().await;
    let res = s.http.get(s.url("/metrics")).send().await.unwrap();
    let (code, challenge) = json_error(res, 401, "/metrics without its token").await;
    assert_eq!(code, "invalid_token");
    assert!(challenge.is_some_and(|c| c.starts_with("Bearer")));
    let res = s.http.get(s.url("/metrics")).bearer_auth("metrics-token").send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert!(res.headers()["content-type"].to_str().unwrap().starts_with("application/openmetrics-text"));
    assert!(res.text().await.unwrap().contains("# EOF"));
}
