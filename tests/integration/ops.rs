//! Discovery, JWKS, health, request ids, and what survives a restart.

use crate::harness::*;
use serde_json::json;

#[tokio::test]
async fn discovery_is_complete_and_truthful() {
    let s = TestServer::start().await;
    let d: serde_json::Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    assert_eq!(d["issuer"], s.issuer());
    for (k, path) in [("authorization_endpoint", "/authorize"), ("token_endpoint", "/token"), ("userinfo_endpoint", "/userinfo"), ("jwks_uri", "/jwks")] {
        assert_eq!(d[k], format!("{}{path}", s.issuer()));
    }
    assert_eq!(
        d["grant_types_supported"],
        json!(["authorization_code", "client_credentials", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code", "urn:ietf:params:oauth:grant-type:jwt-bearer", "urn:ietf:params:oauth:grant-type:token-exchange", "urn:openid:params:grant-type:ciba", "implicit"])
    );
    assert_eq!(d["revocation_endpoint"], format!("{}/revoke", s.issuer()));
    assert_eq!(d["introspection_endpoint"], format!("{}/introspect", s.issuer()));
    assert_eq!(d["device_authorization_endpoint"], format!("{}/device_authorization", s.issuer()));
    assert_eq!(d["response_types_supported"], json!(["code", "code id_token", "code token", "code id_token token", "id_token", "id_token token"]));
    assert_eq!(d["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(d["request_parameter_supported"], true);
    assert_eq!(d["request_uri_parameter_supported"], true);
    assert_eq!(d["require_request_uri_registration"], true);
    assert_eq!(d["id_token_signing_alg_values_supported"], json!(["RS256"]));
    assert_eq!(d["end_session_endpoint"], format!("{}/logout", s.issuer()));
    assert_eq!(d["registration_endpoint"], format!("{}/register", s.issuer()));
    assert_eq!(d["pushed_authorization_request_endpoint"], format!("{}/par", s.issuer()));
    assert!(d["dpop_signing_alg_values_supported"].as_array().is_some_and(|a| a.contains(&json!("ES256"))));
    for what in ["id_token", "userinfo", "introspection", "authorization", "request_object"] {
        let implemented = format!("{what}_encryption_alg_values_supported");
        assert_eq!(d[&implemented], json!(authrim::keys::jwe::KEY_ALGS), "{implemented}");
    }
    for unimplemented in ["mtls_endpoint_aliases"] {
        assert!(d.get(unimplemented).is_none(), "{unimplemented}: nothing unimplemented is advertised");
    }
    let jwks: serde_json::Value = s.http.get(s.url("/jwks")).send().await.unwrap().json().await.unwrap();
    let key = &jwks["keys"][0];
    assert_eq!((key["kty"].as_str(), key["alg"].as_str(), key["use"].as_str()), (Some("RSA"), Some("RS256"), Some("sig")));
    assert_eq!(key["kid"], authrim::keys::rsa_thumbprint(key["n"].as_str().unwrap(), key["e"].as_str().unwrap()).unwrap());
    assert!(key.get("d").is_none() && key.get("p").is_none());
}

#[tokio::test]
async fn health_request_ids_and_json_404() {
    let s = TestServer::start().await;
    let res = s.http.get(s.url("/healthz")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert!(res.headers().get("x-request-id").is_some());
    let res = s.http.get(s.url("/nope")).header("x-request-id", "abc123").send().await.unwrap();
    assert_eq!(res.status(), 404);
    assert_eq!(res.headers()["x-request-id"], "abc123");
    assert_eq!(res.json::<serde_json::Value>().await.unwrap()["error"], "not_found");
}

#[tokio::test]
async fn keys_sessions_and_codes_survive_a_graceful_restart() {
    let s = TestServer::start().await;
    let (id, secret) = s.client("rp", json!({})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let code = s.code_for(&b, &id, "alice", &[]).await["code"].clone();
    let kid = s.server.app.tenants.default_tenant().keys.active_kid();
    let TestServer { server, dir, .. } = s;
    server.stop().await.unwrap();

    let mut config = test_config(dir.path());
    config.admin_token = Some(ADMIN.into());
    let s = TestServer::start_in(dir, config).await;
    assert_eq!(s.server.app.tenants.default_tenant().keys.active_kid(), kid, "the signing key is kept");
    // The code issued before the restart still redeems (once).
    let (st, tok, _) = s.token(Some((&id, secret.as_deref().unwrap())), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200, "{tok}");
    // The consent given before the restart is remembered.
    assert!(s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).consented_scope(jwt_parts(tok["access_token"].as_str().unwrap()).1["sub"].as_str().unwrap(), "rp").is_some());
}

#[tokio::test]
async fn rfc7515_a2_vector_verifies_with_our_verification_path() {
    // The same jsonwebtoken decode path KeyManager::verify uses, on the RFC's own token.
    let v: serde_json::Value = serde_json::from_str(include_str!("../vectors/rfc7515_a2.json")).unwrap();
    let jwk: jsonwebtoken::jwk::Jwk = serde_json::from_value(v["jwk"].clone()).unwrap();
    let key = jsonwebtoken::DecodingKey::from_jwk(&jwk).unwrap();
    let mut val = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
    val.validate_exp = false;
    val.validate_aud = false;
    val.required_spec_claims.clear();
    let jws = v["jws"].as_str().unwrap();
    let data = jsonwebtoken::decode::<serde_json::Value>(jws, &key, &val).unwrap();
    assert_eq!(data.claims, v["payload_json"]);
    let mut tampered = jws.to_string();
    tampered.replace_range(jws.len() - 5..jws.len() - 4, if jws.ends_with('A') { "B" } else { "A" });
    assert!(jsonwebtoken::decode::<serde_json::Value>(&tampered, &key, &val).is_err());
}

#[tokio::test]
async fn serves_https_with_secure_cookies_when_given_a_certificate() {
    let s = TestServer::start_tls().await;
    let https = &s.http;
    let base = s.url("");
    assert!(base.starts_with("https://"));
    let d: serde_json::Value = https.get(format!("{base}/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    assert!(d["token_endpoint"].as_str().unwrap().starts_with("https://"));
    // Plain HTTP on the TLS port is not served.
    assert!(reqwest::get(format!("http://{}/healthz", s.server.addr)).await.map(|r| !r.status().is_success()).unwrap_or(true));
    // Cookies are Secure under an https issuer.
    let admin = |m: reqwest::Method, p: &str| https.request(m, format!("{base}{p}")).bearer_auth(ADMIN);
    admin(reqwest::Method::POST, "/admin/clients").json(&json!({"client_id": "rp", "redirect_uris": [REDIRECT]})).send().await.unwrap();
    let res = https
        .get(format!("{base}/authorize"))
        .query(&[("response_type", "code"), ("client_id", "rp"), ("redirect_uri", REDIRECT), ("scope", "openid")])
        .send()
        .await
        .unwrap();
    let cookie = res.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(cookie.contains("; Secure"), "{cookie}");
    s.server.stop().await.unwrap();
}

/// Value of a Prometheus sample line `name{labels} value`.
fn sample(text: &str, name_and_labels: &str) -> Option<f64> {
    text.lines().find(|l| l.starts_with(name_and_labels)).and_then(|l| l.rsplit(' ').next()).and_then(|v| v.parse().ok())
}

#[tokio::test]
async fn metrics_show_no_hot_revocation_shard() {
    let s = TestServer::start_with(|c| c.revocation_shards = 16).await;
    let revocations = &s.server.app.stores.revocations;
    for _ in 0..8_000 {
        revocations.revoke(authrim::tenant::TenantId::DEFAULT, &authrim::util::random_token(), authrim::util::now() + 600).await.unwrap();
    }
    let text = s.http.get(s.url("/metrics")).send().await.unwrap().text().await.unwrap();
    let per_shard: Vec<f64> = (0..16)
        .map(|i| sample(&text, &format!("authrim_store_entries{{store=\"TokenRevocationStore\",shard=\"{i}\"}}")).expect("gauge per shard"))
        .collect();
    assert_eq!(per_shard.iter().sum::<f64>(), 8_000.0);
    let (min, max) = per_shard.iter().fold((f64::MAX, 0f64), |(a, b), &x| (a.min(x), b.max(x)));
    assert!(min > 500.0 * 0.8 && max < 500.0 * 1.2, "uneven revocation shards: {per_shard:?}");
    assert!(sample(&text, "authrim_store_operation_seconds_count{store=\"TokenRevocationStore\",shard=\"15\"}").unwrap() > 0.0);
}

#[tokio::test]
async fn metrics_record_requests_by_endpoint_grant_and_error() {
    let s = TestServer::start().await;
    let (id, secret) = s.client("rp", json!({})).await;
    // Well-formed but unknown: the store is consulted (and timed) and says no.
    let unknown = format!("1_{}", "a".repeat(43));
    s.token(Some((&id, secret.as_deref().unwrap())), &[("grant_type", "authorization_code"), ("code", &unknown), ("redirect_uri", REDIRECT)]).await;
    let text = s.http.get(s.url("/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(sample(&text, "authrim_http_request_duration_seconds_count{endpoint=\"token\",grant_type=\"authorization_code\",status=\"400\"}").unwrap() >= 1.0, "{text}");
    assert!(sample(&text, "authrim_oauth_errors_total{endpoint=\"token\",error=\"invalid_grant\"}").unwrap() >= 1.0);
    assert!(text.contains("authrim_http_request_cpu_seconds_count{endpoint=\"token\",grant_type=\"authorization_code\"}"));
    assert!(sample(&text, "authrim_db_commits_total").unwrap() >= 1.0);
    assert!(text.contains("authrim_store_operation_seconds_count{store=\"AuthorizationCodeStore\""));
}

#[tokio::test]
async fn metrics_can_require_a_token() {
    let s = TestServer::start_with(|c| c.metrics_token = Some("m-secret".into())).await;
    assert_eq!(s.http.get(s.url("/metrics")).send().await.unwrap().status(), 401);
    assert_eq!(s.http.get(s.url("/metrics")).bearer_auth("wrong").send().await.unwrap().status(), 401);
    let ok = s.http.get(s.url("/metrics")).bearer_auth("m-secret").send().await.unwrap();
    assert_eq!(ok.status(), 200);
    assert!(ok.text().await.unwrap().contains("authrim_db_commits_total"));
}

/// RFC 8414: the authorization server metadata is the discovery document, at the issuer's
/// well-known location (the issuer's path inserted after it when there is one).
#[tokio::test]
async fn rfc8414_metadata_is_the_discovery_document() {
    let s = TestServer::start().await;
    let get = |path: &str| {
        let (http, url) = (s.http.clone(), s.url(path));
        async move {
            let res = http.get(url).send().await.unwrap();
            (res.status().as_u16(), res.json::<serde_json::Value>().await.unwrap())
        }
    };
    let (st, oauth) = get("/.well-known/oauth-authorization-server").await;
    assert_eq!(st, 200);
    assert_eq!(oauth, get("/.well-known/openid-configuration").await.1);
    assert_eq!(oauth["issuer"], s.issuer());
    let (st, e) = get("/.well-known/oauth-authorization-server/elsewhere").await;
    assert_eq!((st, e["error"].as_str()), (404, Some("not_found")));

    let tenant = TestServer::start_with(|c| c.issuer = format!("{}/tenant", c.issuer)).await;
    let res = tenant.http.get(tenant.url("/.well-known/oauth-authorization-server/tenant")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.json::<serde_json::Value>().await.unwrap()["issuer"], tenant.issuer());
    let root = tenant.http.get(tenant.url("/.well-known/oauth-authorization-server")).send().await.unwrap();
    assert_eq!(root.status(), 404, "the root form names the issuer without a path");
}
