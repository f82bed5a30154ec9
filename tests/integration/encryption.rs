//! Encrypted responses (OpenID Connect Core §10.2, Dynamic Registration §2): ID tokens and
//! userinfo answers encrypted to the client's registered key, with every `alg` and `enc`
//! offered, decrypted here with the client's private key and the inner JWT verified with the
//! server's JWKS; and the refusals (registration, and a client whose keys cannot be used).

use crate::harness::*;
use authrim::keys::jwe::{self, DecryptionKey};
use serde_json::{json, Value};

const OFFLINE: &str = "openid email offline_access";

/// A client key of `kind` (RSA, P-256, P-384, P-521, X25519): the private key, and a JWK Set
/// holding its public key (`use: enc`) beside a signature key, as a real client's would.
fn client_key(kind: &str, kid: &str) -> (DecryptionKey, Value) {
    let (private, mut public) = DecryptionKey::generate(kind).unwrap();
    public["kid"] = kid.into();
    public["use"] = "enc".into();
    let signature = json!({"kty": "EC", "crv": "P-256", "use": "sig", "kid": "sig-1",
        "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"});
    (private, json!({"keys": [signature, public]}))
}

/// The signed JWT inside `jwe`, its signature checked with the server's published keys.
async fn open_nested(s: &TestServer, key: &DecryptionKey, jwe: &str, alg: &str, enc: &str, kid: &str) -> Value {
    let out = jwe::decrypt(key, jwe).unwrap_or_else(|e| panic!("{alg} {enc}: {e}"));
    assert_eq!(out.header["alg"], alg);
    assert_eq!(out.header["enc"], enc);
    assert_eq!(out.header["kid"], kid, "the key it was encrypted to is named");
    assert_eq!(out.header["cty"], "JWT", "a nested JWT says so (RFC 7519 section 5.2)");
    verified(s, std::str::from_utf8(&out.plaintext).unwrap()).await
}

async fn verified(s: &TestServer, jws: &str) -> Value {
    let jwks: Value = s.http.get(s.url("/jwks")).send().await.unwrap().json().await.unwrap();
    let header = jsonwebtoken::decode_header(jws).unwrap();
    let jwk = jwks["keys"].as_array().unwrap().iter().find(|k| k["kid"].as_str() == header.kid.as_deref()).expect("signed by a published key");
    let key = jsonwebtoken::DecodingKey::from_jwk(&serde_json::from_value(jwk.clone()).unwrap()).unwrap();
    let mut v = jsonwebtoken::Validation::new(header.alg);
    v.validate_aud = false;
    v.required_spec_claims.clear();
    jsonwebtoken::decode::<Value>(jws, &key, &v).expect("the inner JWT verifies").claims
}

async fn patch(s: &TestServer, id: &str, body: Value) -> (u16, Value) {
    s.admin(reqwest::Method::PATCH, &format!("/admin/clients/{id}"), Some(body)).await
}

/// One sign-in, then a refresh per pair: each refresh issues an ID token (and an access
/// token for userinfo) under the metadata just set, so every `alg` with every `enc` is met.
#[tokio::test]
async fn id_tokens_and_userinfo_are_encrypted_with_every_alg_and_enc() {
    let s = TestServer::start().await;
    s.user("alice", json!({"email": "alice@example.com", "email_verified": true})).await;
    let (rsa, rsa_set) = client_key("RSA", "rsa-1");
    let (id, secret) = s
        .client("enc", json!({"grant_types": ["authorization_code", "refresh_token"], "jwks": rsa_set,
            "id_token_encrypted_response_alg": "RSA-OAEP-256", "userinfo_encrypted_response_alg": "RSA-OAEP-256"}))
        .await;
    let secret = secret.unwrap();
    let b = s.browser();
    let code = s.code_for(&b, &id, "alice", &[("scope", OFFLINE)]).await["code"].clone();
    let (st, tok, _) = s.token(Some((&id, &secret)), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200, "{tok}");
    // The default enc of an alg registered alone (Dynamic Registration §2).
    let claims = open_nested(&s, &rsa, tok["id_token"].as_str().unwrap(), "RSA-OAEP-256", "A128CBC-HS256", "rsa-1").await;
    assert_eq!((claims["aud"].as_str(), claims["nonce"].as_str(), claims["iss"].as_str()), (Some("enc"), Some("n-1"), Some(s.issuer().as_str())));
    let mut refresh_token = tok["refresh_token"].as_str().unwrap().to_string();

    let algs: &[(&str, &str)] = &[("RSA", "RSA-OAEP"), ("RSA", "RSA-OAEP-256"), ("P-256", "ECDH-ES"), ("P-384", "ECDH-ES+A128KW"), ("X25519", "ECDH-ES+A256KW")];
    for (kind, alg) in algs {
        let kid = format!("{kind}-{alg}");
        let (key, set) = client_key(kind, &kid);
        for enc in jwe::CONTENT_ENCS {
            let (st, v) = patch(&s, &id, json!({"jwks": set, "id_token_encrypted_response_alg": alg, "id_token_encrypted_response_enc": enc,
                "userinfo_encrypted_response_alg": alg, "userinfo_encrypted_response_enc": enc})).await;
            assert_eq!(st, 200, "{v}");
            let (st, tok, _) = s.token(Some((&id, &secret)), &[("grant_type", "refresh_token"), ("refresh_token", &refresh_token)]).await;
            assert_eq!(st, 200, "{alg} {enc}: {tok}");
            refresh_token = tok["refresh_token"].as_str().unwrap().to_string();
            let claims = open_nested(&s, &key, tok["id_token"].as_str().unwrap(), alg, enc, &kid).await;
            assert_eq!(claims["aud"], "enc");

            // Userinfo without a signing alg: the claims' JSON, encrypted (Core §5.3.2).
            let res = s.http.get(s.url("/userinfo")).bearer_auth(tok["access_token"].as_str().unwrap()).send().await.unwrap();
            assert_eq!(res.status(), 200);
            assert_eq!(res.headers()["content-type"], "application/jwt");
            let out = jwe::decrypt(&key, &res.text().await.unwrap()).unwrap_or_else(|e| panic!("userinfo {alg} {enc}: {e}"));
            assert_eq!((out.header["alg"].as_str(), out.header["enc"].as_str()), (Some(*alg), Some(*enc)));
            assert!(out.header.get("cty").is_none(), "not a nested JWT");
            let info: Value = serde_json::from_slice(&out.plaintext).unwrap();
            assert_eq!(info["email"], "alice@example.com");
        }
    }

    // Signed and encrypted userinfo: a nested JWT naming us and the client.
    let (key, set) = client_key("P-256", "p256");
    let (st, v) = patch(&s, &id, json!({"jwks": set, "userinfo_signed_response_alg": "RS256", "userinfo_encrypted_response_alg": "ECDH-ES", "userinfo_encrypted_response_enc": "A256GCM"})).await;
    assert_eq!(st, 200, "{v}");
    let (_, tok, _) = s.token(Some((&id, &secret)), &[("grant_type", "refresh_token"), ("refresh_token", &refresh_token)]).await;
    let res = s.http.get(s.url("/userinfo")).bearer_auth(tok["access_token"].as_str().unwrap()).send().await.unwrap();
    assert_eq!(res.headers()["content-type"], "application/jwt");
    let info = open_nested(&s, &key, &res.text().await.unwrap(), "ECDH-ES", "A256GCM", "p256").await;
    assert_eq!((info["aud"].as_str(), info["email"].as_str(), info["iss"].as_str()), (Some("enc"), Some("alice@example.com"), Some(s.issuer().as_str())));

    // A client that registered nothing still gets a plain JWS and JSON.
    let (plain, plain_secret) = s.client("plain", json!({})).await;
    let code = s.code_for(&b, &plain, "alice", &[]).await["code"].clone();
    let (_, tok, _) = s.token(Some((&plain, &plain_secret.unwrap())), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(tok["id_token"].as_str().unwrap().split('.').count(), 3);
    assert_eq!(s.userinfo(tok["access_token"].as_str().unwrap()).await.0, 200);
}

/// The hybrid flow's ID token, made at the authorization endpoint, is encrypted the same way.
#[tokio::test]
async fn the_authorization_endpoints_id_token_is_encrypted_too() {
    let s = TestServer::start().await;
    s.user("alice", json!({})).await;
    let (key, set) = client_key("P-256", "front");
    s.client("rp", json!({"grant_types": ["authorization_code", "implicit"], "response_types": ["code id_token"], "jwks": set,
        "id_token_encrypted_response_alg": "ECDH-ES+A128KW", "id_token_encrypted_response_enc": "A128GCM"}))
        .await;
    let b = s.browser();
    let q = request_query("code id_token", "rp", &[]);
    let mut page = Page::from(b.authorize(&q).await).await;
    if page.is_login() {
        page = b.post("/login", &[("challenge", &page.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    }
    if page.is_consent() {
        page = b.post_no_follow("/consent", &[("challenge", &page.challenge()), ("decision", "allow")]).await;
    }
    let p = page.fragment_params();
    let claims = open_nested(&s, &key, &p["id_token"], "ECDH-ES+A128KW", "A128GCM", "front").await;
    assert_eq!((claims["nonce"].as_str(), claims["c_hash"].is_string()), (Some("n-1"), true));
}

#[tokio::test]
async fn registration_refuses_what_cannot_be_encrypted() {
    let s = TestServer::start_with(|c| c.open_registration = true).await;
    let (_, rsa_set) = client_key("RSA", "r");
    let (_, ec_set) = client_key("P-256", "e");
    let base = json!({"redirect_uris": [REDIRECT]});
    let with = |extra: Value| {
        let mut b = base.clone();
        b.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        b
    };
    for (why, body) in [
        ("no keys", with(json!({"id_token_encrypted_response_alg": "RSA-OAEP-256"}))),
        ("enc without alg", with(json!({"jwks": rsa_set, "userinfo_encrypted_response_enc": "A128GCM"}))),
        ("RSA1_5", with(json!({"jwks": rsa_set, "id_token_encrypted_response_alg": "RSA1_5"}))),
        ("an unknown enc", with(json!({"jwks": rsa_set, "id_token_encrypted_response_alg": "RSA-OAEP", "id_token_encrypted_response_enc": "A192GCM"}))),
        ("an EC set for RSA", with(json!({"jwks": ec_set, "id_token_encrypted_response_alg": "RSA-OAEP-256"}))),
        ("an RSA set for ECDH", with(json!({"jwks": rsa_set, "userinfo_encrypted_response_alg": "ECDH-ES"}))),
    ] {
        let res = s.http.post(s.url("/register")).json(&body).send().await.unwrap();
        let status = res.status().as_u16();
        let v: Value = res.json().await.unwrap();
        assert_eq!((status, v["error"].as_str()), (400, Some("invalid_client_metadata")), "{why}: {v}");
    }
    // Accepted: the answer says the enc it defaulted to.
    let res = s.http.post(s.url("/register")).json(&with(json!({"jwks": ec_set, "id_token_encrypted_response_alg": "ECDH-ES"}))).send().await.unwrap();
    let v: Value = res.json().await.unwrap();
    assert_eq!((v["id_token_encrypted_response_alg"].as_str(), v["id_token_encrypted_response_enc"].as_str()), (Some("ECDH-ES"), Some("A128CBC-HS256")), "{v}");

    let meta: Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    for name in ["id_token", "userinfo"] {
        assert_eq!(meta[format!("{name}_encryption_alg_values_supported")], json!(jwe::KEY_ALGS));
        assert_eq!(meta[format!("{name}_encryption_enc_values_supported")], json!(jwe::CONTENT_ENCS));
    }
}

/// A `jwks_uri` client whose set holds no key for its alg (or cannot be fetched): a clear
/// `invalid_client_metadata`, never a 500; once it publishes one, the same request works.
#[tokio::test]
async fn a_client_without_a_usable_key_gets_a_clear_error() {
    let s = TestServer::start_with(|c| c.client_jwks_min_refetch = 0).await;
    s.user("alice", json!({})).await;
    let keys = std::sync::Arc::new(parking_lot::Mutex::new(json!({"keys": []})));
    let served = keys.clone();
    let app = axum::Router::new().route("/jwks", axum::routing::get(move || {
        let served = served.clone();
        async move { axum::Json(served.lock().clone()) }
    }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let uri = format!("http://127.0.0.1:{}/jwks", listener.local_addr().unwrap().port());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let (id, secret) = s.client("remote", json!({"jwks_uri": uri, "id_token_encrypted_response_alg": "ECDH-ES"})).await;
    let secret = secret.unwrap();
    let b = s.browser();
    let redeem = |code: String| {
        let (id, secret) = (id.clone(), secret.clone());
        let s = &s;
        async move { s.token(Some((&id, &secret)), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await }
    };
    // An RSA key only: nothing ECDH-ES can use.
    let (_, rsa_set) = client_key("RSA", "r");
    *keys.lock() = rsa_set;
    let (st, v, _) = redeem(s.code_for(&b, &id, "alice", &[]).await["code"].clone()).await;
    assert_eq!((st, v["error"].as_str()), (400, Some("invalid_client_metadata")), "{v}");
    assert!(v["error_description"].as_str().unwrap().contains("ECDH-ES"), "{v}");
    // The client publishes an EC key: fetched again, and the ID token is encrypted to it.
    let (key, ec_set) = client_key("X25519", "x");
    *keys.lock() = ec_set;
    let (st, v, _) = redeem(s.code_for(&b, &id, "alice", &[]).await["code"].clone()).await;
    assert_eq!(st, 200, "{v}");
    open_nested(&s, &key, v["id_token"].as_str().unwrap(), "ECDH-ES", "A128CBC-HS256", "x").await;
}

/// RFC 9701: `Accept: application/token-introspection+jwt` gets the answer as a signed JWT
/// (`token_introspection` claim, the caller as `aud`), encrypted to a caller that registered
/// `introspection_encrypted_response_alg`; without the header, JSON as ever.
#[tokio::test]
async fn introspection_answers_as_a_signed_and_encrypted_jwt_when_asked() {
    let s = TestServer::start_with(|c| c.signing_algorithms = "RS256 ES256".into()).await;
    let (key, set) = client_key("P-256", "rs-enc");
    let machine = |extra: Value| {
        let mut body = json!({"grant_types": ["client_credentials"], "scope": "api"});
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        body
    };
    let (rs, rs_secret) = s.client("rs", machine(json!({"jwks": set, "introspection_signed_response_alg": "ES256",
        "introspection_encrypted_response_alg": "ECDH-ES+A256KW", "introspection_encrypted_response_enc": "A256GCM"}))).await;
    let rs_secret = rs_secret.unwrap();
    let (plain, plain_secret) = s.client("plain-rs", machine(json!({}))).await;
    let plain_secret = plain_secret.unwrap();
    let (st, tok, _) = s.token(Some((&rs, &rs_secret)), &[("grant_type", "client_credentials")]).await;
    assert_eq!(st, 200, "{tok}");
    let at = tok["access_token"].as_str().unwrap();
    let introspect = |id: &str, secret: &str, token: &str, jwt: bool| {
        let mut req = s.http.post(s.url("/introspect")).basic_auth(id, Some(secret)).form(&[("token", token)]);
        if jwt {
            req = req.header("accept", "application/token-introspection+jwt");
        }
        req.send()
    };

    let res = introspect(&rs, &rs_secret, at, true).await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "application/token-introspection+jwt");
    let out = jwe::decrypt(&key, &res.text().await.unwrap()).unwrap();
    assert_eq!((out.header["alg"].as_str(), out.header["enc"].as_str(), out.header["cty"].as_str()), (Some("ECDH-ES+A256KW"), Some("A256GCM"), Some("JWT")));
    let inner = std::str::from_utf8(&out.plaintext).unwrap();
    let header = jsonwebtoken::decode_header(inner).unwrap();
    assert_eq!((header.alg, header.typ.as_deref()), (jsonwebtoken::Algorithm::ES256, Some("token-introspection+jwt")));
    let claims = verified(&s, inner).await;
    assert_eq!((claims["aud"].as_str(), claims["iss"].as_str()), (Some("rs"), Some(s.issuer().as_str())));
    assert_eq!((claims["token_introspection"]["active"].as_bool(), claims["token_introspection"]["client_id"].as_str()), (Some(true), Some("rs")));

    // Another caller that registered nothing: signed (RS256), not encrypted; an unknown token
    // is inactive inside the JWT too.
    let res = introspect(&plain, &plain_secret, "not-a-token", true).await.unwrap();
    assert_eq!(res.headers()["content-type"], "application/token-introspection+jwt");
    let jws = res.text().await.unwrap();
    assert_eq!(jsonwebtoken::decode_header(&jws).unwrap().alg, jsonwebtoken::Algorithm::RS256);
    let claims = verified(&s, &jws).await;
    assert_eq!((claims["aud"].as_str(), &claims["token_introspection"]), (Some("plain-rs"), &json!({"active": false})));

    // Without the header: JSON.
    let res = introspect(&rs, &rs_secret, at, false).await.unwrap();
    assert!(res.headers()["content-type"].to_str().unwrap().starts_with("application/json"));
    assert_eq!(res.json::<Value>().await.unwrap()["active"], true);
    let meta: Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    assert!(meta["introspection_signing_alg_values_supported"].as_array().unwrap().contains(&json!("RS256")), "{meta}");
    assert_eq!(meta["introspection_encryption_alg_values_supported"], json!(jwe::KEY_ALGS));
}

/// The encryption metadata from the command line: each `alg` and `enc` set by `client create`,
/// changed and cleared by `client update`, refused when it cannot be honoured; and the
/// server's own encryption keys listed and rotated by `keys`.
#[tokio::test]
async fn the_cli_sets_every_encryption_alg_and_rotates_the_servers_encryption_keys() {
    let s = TestServer::start().await;
    let (_, jwks) = client_key("P-256", "enc-1");
    let file = s.dir.path().join("jwks.json");
    std::fs::write(&file, jwks.to_string()).unwrap();
    let run = |args: &[&str]| {
        let out = crate::admin::cli(s.dir.path(), args);
        (out.status.success(), serde_json::from_slice::<Value>(&out.stdout).unwrap_or(Value::Null), String::from_utf8_lossy(&out.stderr).to_string())
    };
    let kinds = ["id-token-encrypted-response", "userinfo-encrypted-response", "introspection-encrypted-response", "authorization-encrypted-response", "request-object-encryption"];
    let mut args: Vec<String> = ["client", "create", "--client-id", "enc-cli", "--redirect-uri", REDIRECT, "--jwks-file", file.to_str().unwrap()].map(String::from).to_vec();
    for k in kinds {
        args.extend([format!("--{k}-alg"), "ECDH-ES+A128KW".into(), format!("--{k}-enc"), "A256GCM".into()]);
    }
    let (ok, created, err) = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(ok, "{err}");
    for k in kinds {
        let field = k.replace('-', "_");
        assert_eq!((created[format!("{field}_alg")].as_str(), created[format!("{field}_enc")].as_str()), (Some("ECDH-ES+A128KW"), Some("A256GCM")), "{k}: {created}");
    }
    let (ok, updated, err) = run(&["client", "update", "enc-cli", "--request-object-encryption-alg", "RSA-OAEP-256", "--request-object-encryption-enc", "", "--id-token-encrypted-response-alg", "", "--id-token-encrypted-response-enc", ""]);
    assert!(ok, "{err}");
    assert_eq!(updated["request_object_encryption_alg"], "RSA-OAEP-256");
    assert_eq!(updated["request_object_encryption_enc"], "A128CBC-HS256", "the default enc");
    assert!(updated.get("id_token_encrypted_response_alg").is_none(), "cleared: {updated}");
    // An RSA alg for a client whose only key is EC: refused.
    let (ok, _, _) = run(&["client", "update", "enc-cli", "--userinfo-encrypted-response-alg", "RSA-OAEP"]);
    assert!(!ok);

    // The server's encryption keys: listed with the signing keys, rotated like them.
    let (ok, keys, err) = run(&["keys", "list"]);
    assert!(ok, "{err}");
    let algs: Vec<&str> = keys.as_array().unwrap().iter().map(|k| k["alg"].as_str().unwrap()).collect();
    assert!(algs.contains(&"RSA-OAEP-256") && algs.contains(&"ECDH-ES"), "{keys}");
    let (ok, rotated, err) = run(&["keys", "rotate", "--alg", "ECDH-ES"]);
    assert!(ok, "{err}");
    s.server.app.tenants.refresh_keys().await.unwrap();
    let jwks: Value = s.http.get(s.url("/jwks")).send().await.unwrap().json().await.unwrap();
    let enc: Vec<&Value> = jwks["keys"].as_array().unwrap().iter().filter(|k| k["use"] == "enc").collect();
    assert_eq!(enc.len(), 3, "the new ECDH-ES key is published at once: {jwks}");
    assert!(enc.iter().any(|k| k["kid"] == rotated["kid"] && k["alg"] == "ECDH-ES" && k.get("d").is_none()));
    assert!(enc.iter().all(|k| ["RSA-OAEP-256", "ECDH-ES"].contains(&k["alg"].as_str().unwrap())));
    let (ok, _, _) = run(&["keys", "rotate", "--alg", "A128KW"]);
    assert!(!ok, "not a key we hold");
}
