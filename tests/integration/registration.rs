//! Dynamic client registration (RFC 7591) and management (RFC 7592).

use crate::client_jwt::{jwks, Signer};
use crate::harness::*;
use reqwest::Method;
use serde_json::{json, Value};

async fn register(s: &TestServer, token: Option<&str>, body: Value) -> (u16, Value, reqwest::header::HeaderMap) {
    let mut req = s.http.post(s.url("/register")).json(&body);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let res = req.send().await.unwrap();
    let (status, headers) = (res.status().as_u16(), res.headers().clone());
    (status, res.json().await.unwrap_or(Value::Null), headers)
}

async fn initial_token(s: &TestServer, max_uses: u32) -> String {
    let (st, v) = s.admin(Method::POST, "/admin/registration-tokens", Some(json!({"max_uses": max_uses}))).await;
    assert_eq!(st, 201, "{v}");
    v["initial_access_token"].as_str().unwrap().to_string()
}

async fn manage(s: &TestServer, method: Method, uri: &str, token: &str, body: Option<Value>) -> (u16, Value) {
    let mut req = s.http.request(method, uri).bearer_auth(token);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let res = req.send().await.unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn registration_needs_an_initial_access_token_spent_once_and_the_client_works() {
    let s = TestServer::start().await;
    let (st, body, h) = register(&s, None, json!({"redirect_uris": [REDIRECT]})).await;
    assert_eq!((st, body["error"].as_str()), (401, Some("invalid_token")), "{body}");
    assert!(h["www-authenticate"].to_str().unwrap().starts_with("Bearer"));
    let d: Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    assert_eq!(d["registration_endpoint"], s.url("/register"));

    let token = initial_token(&s, 1).await;
    // A refused registration spends nothing.
    let (st, body, _) = register(&s, Some(&token), json!({"redirect_uris": ["http://rp.example/cb"]})).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_redirect_uri")), "{body}");
    let (st, c, h) = register(&s, Some(&token), json!({"redirect_uris": [REDIRECT], "client_name": "Self-made", "some_future_field": 1})).await;
    assert_eq!(st, 201, "{c}");
    assert_eq!(h["cache-control"], "no-store");
    for k in ["client_id", "client_secret", "registration_access_token", "registration_client_uri"] {
        assert!(c[k].is_string(), "{k}: {c}");
    }
    assert_eq!(c["client_secret_expires_at"], 0);
    assert!(c["client_id_issued_at"].as_u64().unwrap() > 0);
    assert_eq!((c["token_endpoint_auth_method"].as_str(), c["grant_types"].clone(), c["response_types"].clone()), (Some("client_secret_basic"), json!(["authorization_code"]), json!(["code"])));
    assert!(c.get("some_future_field").is_none(), "unknown metadata is ignored");
    assert_eq!(c["registration_client_uri"], s.url(&format!("/register/{}", c["client_id"].as_str().unwrap())));
    // Used up.
    let (st, _, _) = register(&s, Some(&token), json!({"redirect_uris": [REDIRECT]})).await;
    assert_eq!(st, 401);
    let (st, _, _) = register(&s, Some("made-up"), json!({"redirect_uris": [REDIRECT]})).await;
    assert_eq!(st, 401);

    // The registered client signs a user in.
    s.user("alice", json!({})).await;
    let id = c["client_id"].as_str().unwrap();
    let p = s.code_for(&s.browser(), id, "alice", &[]).await;
    let (st, tok, _) = s
        .token(Some((id, c["client_secret"].as_str().unwrap())), &[("grant_type", "authorization_code"), ("code", &p["code"]), ("redirect_uri", REDIRECT)])
        .await;
    assert_eq!(st, 200, "{tok}");
}

#[tokio::test]
async fn metadata_is_validated_with_rfc_7591_errors_and_the_operators_policy() {
    let s = TestServer::start_with(|c| c.open_registration = true).await;
    let key = Signer::es256("k");
    for (what, body, code) in [
        ("a fragment", json!({"redirect_uris": ["https://rp.example/cb#x"]}), "invalid_redirect_uri"),
        ("no redirect URI", json!({}), "invalid_redirect_uri"),
        ("a javascript: URI", json!({"redirect_uris": ["javascript:alert(1)"]}), "invalid_redirect_uri"),
        ("a grant the policy withholds", json!({"redirect_uris": [REDIRECT], "grant_types": ["authorization_code", "client_credentials"]}), "invalid_client_metadata"),
        ("an implicit response type", json!({"redirect_uris": [REDIRECT], "response_types": ["token"]}), "invalid_client_metadata"),
        ("grant and response types that disagree", json!({"redirect_uris": [REDIRECT], "grant_types": ["refresh_token"]}), "invalid_client_metadata"),
        ("a string for a list", json!({"redirect_uris": REDIRECT}), "invalid_client_metadata"),
        ("a software statement", json!({"redirect_uris": [REDIRECT], "software_statement": "eyJ.x.y"}), "unapproved_software_statement"),
        ("an ID token alg we do not sign with", json!({"redirect_uris": [REDIRECT], "id_token_signed_response_alg": "none"}), "invalid_client_metadata"),
        ("encrypted ID tokens without keys to encrypt to", json!({"redirect_uris": [REDIRECT], "id_token_encrypted_response_alg": "RSA-OAEP"}), "invalid_client_metadata"),
        ("a javascript: logo", json!({"redirect_uris": [REDIRECT], "logo_uri": "javascript:alert(1)"}), "invalid_client_metadata"),
        ("both jwks and jwks_uri", json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt", "jwks": jwks(&[&key]), "jwks_uri": "https://rp.example/jwks"}), "invalid_client_metadata"),
        ("an unknown auth method", json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "tls_client_auth"}), "invalid_client_metadata"),
        ("not an object", json!([1]), "invalid_client_metadata"),
    ] {
        let (st, v, _) = register(&s, None, body).await;
        assert_eq!((st, v["error"].as_str()), (400, Some(code)), "{what}: {v}");
    }
    // Scopes are narrowed to the policy; Authrim's own extensions are not the client's to set.
    let (st, c, _) = register(&s, None, json!({"redirect_uris": [REDIRECT], "scope": "openid admin email", "allowed_audiences": ["https://api"], "token_exchange": {}})).await;
    assert_eq!(st, 201, "{c}");
    assert_eq!(c["scope"], "openid email");
    assert!(c.get("allowed_audiences").is_none() && c.get("token_exchange").is_none());
    // Nothing requested is open: dropped, not refused; the client gets the policy's scopes, as
    // if it had named none, and the answer says so (RFC 7591 §3.2.1).
    let (st, c, _) = register(&s, None, json!({"redirect_uris": [REDIRECT], "scope": "admin root"})).await;
    assert_eq!(st, 201, "{c}");
    assert_eq!(c["scope"], authrim::config::Config::default().registration_scopes.as_str(), "{c}");
    // Keys instead of a secret; a public native client.
    let (st, c, _) = register(&s, None, json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt", "jwks": jwks(&[&key]), "application_type": "web"})).await;
    assert_eq!(st, 201, "{c}");
    assert!(c.get("client_secret").is_none());
    let (st, c, _) = register(&s, None, json!({"redirect_uris": ["com.example.app:/cb", "http://127.0.0.1:8000/cb"], "token_endpoint_auth_method": "none", "application_type": "native"})).await;
    assert_eq!(st, 201, "{c}");
    assert!(c.get("client_secret").is_none());
}

#[tokio::test]
async fn the_registration_access_token_reads_replaces_and_deletes_its_client_only() {
    let s = TestServer::start_with(|c| c.open_registration = true).await;
    let (_, c, _) = register(&s, None, json!({"redirect_uris": [REDIRECT], "client_name": "One", "contacts": ["ops@rp.example"]})).await;
    let (_, other, _) = register(&s, None, json!({"redirect_uris": [REDIRECT]})).await;
    let (uri, rat, id, secret) = (
        c["registration_client_uri"].as_str().unwrap().to_string(),
        c["registration_access_token"].as_str().unwrap().to_string(),
        c["client_id"].as_str().unwrap().to_string(),
        c["client_secret"].as_str().unwrap().to_string(),
    );
    let (st, v) = manage(&s, Method::GET, &uri, &rat, None).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!((v["client_name"].as_str(), v["client_id"].as_str()), (Some("One"), Some(id.as_str())));
    assert!(v.get("client_secret").is_none(), "the secret is never shown again");
    assert_eq!(v["registration_access_token"], rat.as_str());
    for (token, what) in [("wrong", "a wrong token"), (other["registration_access_token"].as_str().unwrap(), "another client's token")] {
        assert_eq!(manage(&s, Method::GET, &uri, token, None).await.0, 401, "{what}");
        assert_eq!(manage(&s, Method::DELETE, &uri, token, None).await.0, 401, "{what}");
    }
    let (st, v) = s.http.get(&uri).send().await.map(|r| (r.status().as_u16(), ())).unwrap();
    assert_eq!(st, 401, "{v:?}");
    assert_eq!(manage(&s, Method::GET, &s.url("/register/nobody"), &rat, None).await.0, 401);

    // PUT replaces: what it leaves out is reset.
    let new_uri = "https://rp.example/other";
    let (st, v) = manage(&s, Method::PUT, &uri, &rat, Some(json!({"client_id": id, "redirect_uris": [new_uri]}))).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["redirect_uris"], json!([new_uri]));
    assert!(v.get("client_name").is_none() && v.get("contacts").is_none(), "{v}");
    for (what, body) in [
        ("no client_id", json!({"redirect_uris": [REDIRECT]})),
        ("another client_id", json!({"client_id": "x", "redirect_uris": [REDIRECT]})),
        ("a wrong secret", json!({"client_id": id, "client_secret": "nope", "redirect_uris": [REDIRECT]})),
    ] {
        let (st, v) = manage(&s, Method::PUT, &uri, &rat, Some(body)).await;
        assert_eq!((st, v["error"].as_str()), (400, Some("invalid_request")), "{what}: {v}");
    }
    let (st, v) = manage(&s, Method::PUT, &uri, &rat, Some(json!({"client_id": id, "client_secret": secret, "redirect_uris": ["http://evil.example/cb"]}))).await;
    assert_eq!((st, v["error"].as_str()), (400, Some("invalid_redirect_uri")), "{v}");
    // The secret still authenticates after the updates (the grant is the one refused).
    assert_eq!(s.token(Some((&id, &secret)), &[("grant_type", "refresh_token"), ("refresh_token", "x")]).await.1["error"], "unauthorized_client");

    s.user("alice", json!({})).await;
    let (st, v) = manage(&s, Method::PUT, &uri, &rat, Some(json!({"client_id": id, "redirect_uris": [REDIRECT]}))).await;
    assert_eq!(st, 200, "{v}");
    let p = s.code_for(&s.browser(), &id, "alice", &[]).await;
    let (_, tok, _) = s.token(Some((&id, &secret)), &[("grant_type", "authorization_code"), ("code", &p["code"]), ("redirect_uri", REDIRECT)]).await;
    let at = tok["access_token"].as_str().expect("a token before the deletion").to_string();
    assert_eq!(s.userinfo(&at).await.0, 200);
    let res = s.http.delete(&uri).bearer_auth(&rat).send().await.unwrap();
    assert_eq!(res.status(), 204);
    assert_eq!(manage(&s, Method::GET, &uri, &rat, None).await.0, 401);
    let (st, v, _) = s.token(Some((&id, &secret)), &[("grant_type", "refresh_token"), ("refresh_token", "x")]).await;
    assert_eq!((st, v["error"].as_str()), (401, Some("invalid_client")));
    // Its access tokens die with it (RFC 7592 §2.3).
    let (st, _, _) = s.userinfo(&at).await;
    assert_eq!(st, 401, "a deleted client's access token still works");
    // An operator-made client has no registration token: not manageable here.
    s.client("admin-made", json!({})).await;
    assert_eq!(manage(&s, Method::GET, &s.url("/register/admin-made"), &rat, None).await.0, 401);
}

#[tokio::test]
async fn open_registration_is_bounded_and_tokens_come_from_the_cli_too() {
    let s = TestServer::start_with(|c| {
        c.open_registration = true;
        c.registration_max_clients = 2;
    })
    .await;
    // Sixteen at once: the count and the insert are one step, so exactly two get in.
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..16 {
        let (http, url) = (s.http.clone(), s.url("/register"));
        set.spawn(async move { http.post(url).json(&json!({"redirect_uris": [REDIRECT]})).send().await.unwrap().status().as_u16() });
    }
    let statuses: Vec<u16> = set.join_all().await;
    assert_eq!(statuses.iter().filter(|&&x| x == 201).count(), 2, "{statuses:?}");
    assert!(statuses.iter().all(|&x| x == 201 || x == 503), "{statuses:?}");
    assert_eq!(s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).list_clients().iter().filter(|c| c.is_dynamic()).count(), 2);
    let (st, v, _) = register(&s, None, json!({"redirect_uris": [REDIRECT]})).await;
    assert_eq!((st, v["error"].as_str()), (503, Some("temporarily_unavailable")), "{v}");

    let s = TestServer::start().await;
    let out = crate::admin::cli(s.dir.path(), &["registration-token", "--max-uses", "2"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let token = v["initial_access_token"].as_str().unwrap();
    for expected in [201, 201, 401] {
        assert_eq!(register(&s, Some(token), json!({"redirect_uris": [REDIRECT]})).await.0, expected);
    }
    // A used-up token is refused before the metadata is looked at.
    let (st, v, _) = register(&s, Some(token), json!({"redirect_uris": ["https://rp.example/cb#x"], "grant_types": ["client_credentials"]})).await;
    assert_eq!((st, v["error"].as_str()), (401, Some("invalid_token")), "{v}");
    // Only stored hashed.
    let db = std::fs::read(authrim::db::db_path(s.dir.path())).unwrap();
    assert!(!db.windows(token.len()).any(|w| w == token.as_bytes()));
}

/// Issue 30, defect 3: with `fetch_allow_private_addresses` off, registration and the admin
/// API refuse every URI the server would request (or a logout page would load) that names a
/// loopback, private, link-local, unique-local, shared, multicast or unspecified address, or
/// a local name, with RFC 7591's `invalid_client_metadata`; a public name is accepted.
#[tokio::test]
async fn uris_that_reach_private_addresses_are_refused_unless_allowed() {
    let s = TestServer::start_with(|c| {
        c.open_registration = true;
        c.fetch_allow_private_addresses = false;
    })
    .await;
    let private = [
        "http://127.0.0.1:8080/internal-admin/logout", "https://10.0.0.1/", "https://169.254.169.254/latest/meta-data",
        "https://[fd00::1]/", "https://192.168.0.1/", "https://100.64.0.1/", "https://[fe80::1]/", "https://224.0.0.1/",
        "https://0.0.0.0/", "https://[::1]/", "https://[::ffff:127.0.0.1]/", "https://2130706433/", "https://localhost/x",
        "https://db.internal/",
    ];
    for uri in private {
        for field in ["backchannel_logout_uri", "frontchannel_logout_uri", "jwks_uri"] {
            let mut body = json!({"redirect_uris": [REDIRECT]});
            body[field] = json!(uri);
            if field == "jwks_uri" {
                body["token_endpoint_auth_method"] = json!("private_key_jwt");
            }
            let (st, v, _) = register(&s, None, body.clone()).await;
            assert_eq!((st, v["error"].as_str()), (400, Some("invalid_client_metadata")), "/register {field} {uri}: {v}");
            body["client_id"] = json!("c1");
            let (st, v) = s.admin(Method::POST, "/admin/clients", Some(body)).await;
            assert_eq!((st, v["error"].as_str()), (400, Some("invalid_client_metadata")), "admin API {field} {uri}: {v}");
        }
        let body = json!({"redirect_uris": [REDIRECT], "subject_type": "pairwise", "sector_identifier_uri": uri});
        let (st, v, _) = register(&s, None, body).await;
        assert_eq!((st, v["error"].as_str()), (400, Some("invalid_client_metadata")), "sector_identifier_uri {uri}: {v}");
    }
    // An update through the registration access token and through the admin API likewise.
    let (st, c, _) = register(&s, None, json!({"redirect_uris": [REDIRECT], "backchannel_logout_uri": "https://rp.example/bc"})).await;
    assert_eq!(st, 201, "{c}");
    let (id, token) = (c["client_id"].as_str().unwrap(), c["registration_access_token"].as_str().unwrap());
    let uri = c["registration_client_uri"].as_str().unwrap();
    let (st, v) = manage(&s, Method::PUT, uri, token, Some(json!({"client_id": id, "redirect_uris": [REDIRECT], "backchannel_logout_uri": "https://10.0.0.1/bc"}))).await;
    assert_eq!((st, v["error"].as_str()), (400, Some("invalid_client_metadata")), "{v}");
    let (st, v) = s.admin(Method::PATCH, &format!("/admin/clients/{id}"), Some(json!({"backchannel_logout_uri": "https://192.168.0.1/bc"}))).await;
    assert_eq!((st, v["error"].as_str()), (400, Some("invalid_client_metadata")), "{v}");
    assert_eq!(s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).client(id).unwrap().meta.backchannel_logout_uri.as_deref(), Some("https://rp.example/bc"));
    // Native apps' loopback redirect URIs are the browser's business, not the server's.
    let (st, v, _) = register(&s, None, json!({"redirect_uris": ["http://127.0.0.1:8000/cb"], "token_endpoint_auth_method": "none"})).await;
    assert_eq!(st, 201, "{v}");
}

/// Issue 30, defect 8: redirect URIs with control characters, whitespace or userinfo are
/// refused at registration (and by the admin API), not stored as sent.
#[tokio::test]
async fn redirect_uris_with_control_characters_or_spaces_are_refused() {
    let s = TestServer::start_with(|c| c.open_registration = true).await;
    for bad in [
        "https://rp.example/cb\r\nSet-Cookie: x=1", "https://rp.example/c\nb", "https://rp.example/\tcb", " https://rp.example/cb",
        "https://rp.example/cb ", "https://rp.example/c b", "https://rp.example/cb\u{0}", "https://rp.example/cb\u{7f}",
        "https://rp.example/cb\u{85}", "https://rp.example/cb\u{a0}", "https://user:pass@rp.example/cb",
    ] {
        let (st, v, _) = register(&s, None, json!({"redirect_uris": [bad]})).await;
        assert_eq!((st, v["error"].as_str()), (400, Some("invalid_redirect_uri")), "{bad:?}: {v}");
        let (st, v) = s.admin(Method::POST, "/admin/clients", Some(json!({"client_id": "c1", "redirect_uris": [bad]}))).await;
        assert_eq!((st, v["error"].as_str()), (400, Some("invalid_client_metadata")), "admin API {bad:?}: {v}");
    }
    assert!(s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).list_clients().iter().all(|c| c.meta.redirect_uris.iter().all(|u| u.trim() == u)));
}

/// Issue 30, defect 8: `/authorize` compares redirect URIs as exact strings (RFC 9700
/// §4.1.3); a native app's loopback URI keeps only its freedom of port (RFC 8252 §7.3).
/// Each variant the issue found matching is refused with an error page, not a redirect.
#[tokio::test]
async fn redirect_uris_are_compared_as_exact_strings_at_authorize() {
    let s = TestServer::start().await;
    let (st, v) = s
        .admin(Method::POST, "/admin/clients", Some(json!({"client_id": "native", "redirect_uris": ["http://127.0.0.1:9999/cb", "https://rp.example/cb"], "token_endpoint_auth_method": "none"})))
        .await;
    assert_eq!(st, 201, "{v}");
    let b = s.browser();
    let authorize = |redirect_uri: String| {
        let b = &b;
        async move {
            let q = [("response_type", "code"), ("client_id", "native"), ("redirect_uri", redirect_uri.as_str()), ("scope", "openid"), ("state", "s"), ("code_challenge", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGF2jXWvZM"), ("code_challenge_method", "S256")];
            b.authorize(&q).await
        }
    };
    for variant in [
        "HTTP://127.0.0.1:9999/cb", "http://127.0.0.1:09999/cb", "http://127.0.0.1:9999/./cb", "http://127.0.0.1:9999/x/../cb",
        " http://127.0.0.1:9999/cb", "http://127.0.0.1:9999/cb\u{0}", "http://127.0.0.1:9999/cb\t", "http://127.0.0.1:9999/CB",
        "http://127.0.0.1:9999/cb/", "http://127.0.0.1.:9999/cb", "http://127.000.0.1:9999/cb", "http://2130706433:9999/cb",
        "http://127.0.0.1:99999/cb", "http://127.0.0.1:/cb", "http://[0:0:0:0:0:0:0:1]:9999/cb",
        "HTTPS://rp.example/cb", "https://RP.example/cb", "https://rp.example:443/cb", "https://rp.example/./cb", " https://rp.example/cb",
        "https://rp.example/cb\u{0}",
    ] {
        let res = authorize(variant.to_string()).await;
        let status = res.status().as_u16();
        assert!(res.headers().get("location").is_none(), "{variant:?}: redirected");
        assert_eq!(status, 400, "{variant:?}: an error page");
    }
    // The registered strings, and a loopback URI on another port, are accepted.
    for ok in ["http://127.0.0.1:9999/cb", "http://127.0.0.1:5555/cb", "http://127.0.0.1/cb", "https://rp.example/cb"] {
        let page = Page::from(authorize(ok.to_string()).await).await;
        assert!(page.is_login(), "{ok}: {}", page.status);
    }
}

/// Issue 30, defect 8: open registration is limited per client address
/// (`registration_max_per_address` within `login_window`): one address past it gets 429,
/// another still registers, so that one address cannot fill `registration_max_clients`.
#[tokio::test]
async fn one_address_past_the_registration_limit_gets_429_while_another_still_registers() {
    let s = TestServer::start_with(|c| {
        c.open_registration = true;
        c.registration_max_per_address = 3;
    })
    .await;
    let from = |ip: &str| reqwest::Client::builder().local_address(ip.parse::<std::net::IpAddr>().unwrap()).build().unwrap();
    let (one, other) = (from("127.0.0.1"), from("127.0.0.2"));
    let post = |http: &reqwest::Client| http.post(s.url("/register")).json(&json!({"redirect_uris": [REDIRECT]})).send();
    for _ in 0..3 {
        assert_eq!(post(&one).await.unwrap().status(), 201);
    }
    for _ in 0..5 {
        let res = post(&one).await.unwrap();
        assert_eq!(res.status(), 429);
        let v: Value = res.json().await.unwrap();
        assert_eq!(v["error"], "temporarily_unavailable", "{v}");
    }
    assert_eq!(post(&other).await.unwrap().status(), 201, "another address still registers");
    assert_eq!(s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).list_clients().iter().filter(|c| c.is_dynamic()).count(), 4);
    // An initial access token is the operator's say-so: not counted against the address.
    let token = initial_token(&s, 1).await;
    let res = one.post(s.url("/register")).bearer_auth(&token).json(&json!({"redirect_uris": [REDIRECT]})).send().await.unwrap();
    assert_eq!(res.status(), 201);
}

/// Issue 30, defect 8: a dynamically registered client that is never used (no tokens at
/// `/token`) is deleted once `registration_unused_client_ttl` has passed, by the periodic
/// task, and audited; one that was used stays, as does the operator's client.
#[tokio::test]
async fn an_unused_registered_client_expires_and_a_used_one_stays() {
    unused_clients_expire(false).await;
}

#[tokio::test]
async fn an_unused_registered_client_expires_and_a_used_one_stays_on_postgres() {
    unused_clients_expire(true).await;
}

async fn unused_clients_expire(postgres: bool) {
    let s = TestServer::start_on(postgres, |c| {
        c.open_registration = true;
        c.registration_unused_client_ttl = 6;
    })
    .await;
    s.user("alice", json!({})).await;
    let (st, used, _) = register(&s, None, json!({"redirect_uris": [REDIRECT]})).await;
    assert_eq!(st, 201, "{used}");
    let used_id = used["client_id"].as_str().unwrap().to_string();
    let b = s.browser();
    let code = s.code_for(&b, &used_id, "alice", &[]).await["code"].clone();
    let (st, tok, _) = s.token(Some((&used_id, used["client_secret"].as_str().unwrap())), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200, "{tok}");
    s.client("operators", json!({})).await;
    let (st, unused, _) = register(&s, None, json!({"redirect_uris": [REDIRECT]})).await;
    assert_eq!(st, 201, "{unused}");
    let unused_id = unused["client_id"].as_str().unwrap().to_string();

    for _ in 0..300 {
        if s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).client(&unused_id).is_none() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).client(&unused_id).is_none(), "the unused client is gone");
    let (st, _) = manage(&s, Method::GET, unused["registration_client_uri"].as_str().unwrap(), unused["registration_access_token"].as_str().unwrap(), None).await;
    assert_eq!(st, 401, "its registration is gone too");
    let audit = s.admin(Method::GET, "/admin/audit?event=client_expired", None).await.1;
    let events = audit["events"].as_array().unwrap();
    assert_eq!(events.len(), 1, "{audit}");
    assert_eq!(events[0]["client_id"], unused_id.as_str(), "{audit}");
    // The used one stays, past its own TTL, and keeps working; so does the operator's.
    assert!(s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).client(&used_id).is_some());
    assert!(s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).client("operators").is_some());
    let (st, _) = manage(&s, Method::GET, used["registration_client_uri"].as_str().unwrap(), used["registration_access_token"].as_str().unwrap(), None).await;
    assert_eq!(st, 200);
}
