//! DPoP (RFC 9449): proofs at the token endpoint, tokens bound to the key, the binding
//! honoured by userinfo, introspection, refresh and token exchange, server nonces.

use crate::client_jwt::Signer;
use crate::harness::*;
use authrim::util::{b64, now, random_token, sha256};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{json, Value};

const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";

/// A client's DPoP key pair.
pub(crate) struct DpopKey(Signer);

impl DpopKey {
    pub(crate) fn new() -> Self {
        Self(Signer::es256(""))
    }

    pub(crate) fn jkt(&self) -> String {
        let jwk: jsonwebtoken::jwk::Jwk = serde_json::from_value(self.public()).unwrap();
        authrim::dpop::thumbprint(&jwk).unwrap()
    }

    fn public(&self) -> Value {
        let mut j = self.0.jwk.clone();
        j.as_object_mut().unwrap().remove("kid");
        j
    }

    /// A proof for `method url`, bound to `token` if given, with `changes` to its claims.
    pub(crate) fn proof(&self, method: &str, url: &str, token: Option<&str>, changes: Value) -> String {
        let mut claims = json!({"jti": random_token(), "htm": method, "htu": url, "iat": now()});
        if let Some(t) = token {
            claims["ath"] = json!(b64(&sha256(t.as_bytes())));
        }
        for (k, v) in changes.as_object().cloned().unwrap_or_default() {
            if v.is_null() {
                claims.as_object_mut().unwrap().remove(&k);
            } else {
                claims[k] = v;
            }
        }
        let mut h = Header::new(Algorithm::ES256);
        h.typ = Some("dpop+jwt".into());
        h.jwk = Some(serde_json::from_value(self.public()).unwrap());
        self.0.sign_with_header(h, &claims)
    }
}

async fn token_with(s: &TestServer, proofs: &[&str], auth: Option<(&str, &str)>, form: &[(&str, &str)]) -> (u16, Value, reqwest::header::HeaderMap) {
    let mut req = s.http.post(s.url("/token")).form(form);
    for p in proofs {
        req = req.header("DPoP", *p);
    }
    if let Some((id, secret)) = auth {
        req = req.basic_auth(id, Some(secret));
    }
    let res = req.send().await.unwrap();
    let (status, headers) = (res.status().as_u16(), res.headers().clone());
    (status, res.json().await.unwrap_or(Value::Null), headers)
}

async fn userinfo_with(s: &TestServer, scheme: &str, token: &str, proof: Option<&str>) -> (u16, Value, String) {
    let mut req = s.http.get(s.url("/userinfo")).header("authorization", format!("{scheme} {token}"));
    if let Some(p) = proof {
        req = req.header("DPoP", p);
    }
    let res = req.send().await.unwrap();
    let status = res.status().as_u16();
    let challenge = res.headers().get("www-authenticate").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    (status, res.json().await.unwrap_or(Value::Null), challenge)
}

fn pkce() -> String {
    b64(&sha256(VERIFIER.as_bytes()))
}

/// A code for the public client `spa` (scope with offline_access), with `extra` parameters.
async fn spa_code(s: &TestServer, b: &Browser, extra: &[(&str, &str)]) -> String {
    let ch = pkce();
    let mut q = vec![("code_challenge", ch.as_str()), ("code_challenge_method", "S256"), ("scope", "openid profile offline_access")];
    q.extend_from_slice(extra);
    s.code_for(b, "spa", "alice", &q).await["code"].clone()
}

fn redeem(code: &str) -> Vec<(&'static str, &str)> {
    vec![("grant_type", "authorization_code"), ("code", code), ("redirect_uri", REDIRECT), ("client_id", "spa"), ("code_verifier", VERIFIER)]
}

async fn setup() -> (TestServer, Browser) {
    let s = TestServer::start().await;
    s.client("spa", json!({"token_endpoint_auth_method": "none", "grant_types": ["authorization_code", "refresh_token"]})).await;
    s.user("alice", json!({"email": "alice@example.com"})).await;
    let b = s.browser();
    (s, b)
}

#[tokio::test]
async fn a_public_clients_tokens_are_bound_to_its_key_everywhere_they_are_used() {
    let (s, b) = setup().await;
    let key = DpopKey::new();
    let token_url = s.url("/token");
    let code = spa_code(&s, &b, &[]).await;
    let (st, tok, _) = token_with(&s, &[&key.proof("POST", &token_url, None, json!({}))], None, &redeem(&code)).await;
    assert_eq!(st, 200, "{tok}");
    assert_eq!(tok["token_type"], "DPoP");
    let at = tok["access_token"].as_str().unwrap().to_string();
    assert_eq!(jwt_parts(&at).1["cnf"]["jkt"], key.jkt());

    // Userinfo: the DPoP scheme with a proof of the key, bound to this token.
    let ui = s.url("/userinfo");
    let (st, body, _) = userinfo_with(&s, "DPoP", &at, Some(&key.proof("GET", &ui, Some(&at), json!({})))).await;
    assert_eq!(st, 200, "{body}");
    assert_eq!(body["sub"], jwt_parts(&at).1["sub"]);
    let other = DpopKey::new();
    let replayed = key.proof("GET", &ui, Some(&at), json!({}));
    assert_eq!(userinfo_with(&s, "DPoP", &at, Some(&replayed)).await.0, 200);
    for (what, scheme, proof) in [
        ("as a Bearer token", "Bearer", None),
        ("without a proof", "DPoP", None),
        ("a proof of another key", "DPoP", Some(other.proof("GET", &ui, Some(&at), json!({})))),
        ("a proof for another token", "DPoP", Some(key.proof("GET", &ui, Some("another-token"), json!({})))),
        ("a proof without ath", "DPoP", Some(key.proof("GET", &ui, None, json!({})))),
        ("a proof for POST", "DPoP", Some(key.proof("POST", &ui, Some(&at), json!({})))),
        ("a proof for the token endpoint", "DPoP", Some(key.proof("GET", &token_url, Some(&at), json!({})))),
        ("a replayed proof", "DPoP", Some(replayed.clone())),
    ] {
        let (st, body, challenge) = userinfo_with(&s, scheme, &at, proof.as_deref()).await;
        assert_eq!(st, 401, "{what}: {body}");
        assert!(challenge.starts_with("DPoP ") && challenge.contains("algs="), "{what}: {challenge}");
    }

    // Introspection tells a resource server the token is bound, and to which key.
    s.client("rs", json!({"grant_types": ["client_credentials"], "redirect_uris": []})).await;
    let (_, rs_secret) = s.client("rs2", json!({"grant_types": ["client_credentials"], "redirect_uris": []})).await;
    let res = s.http.post(s.url("/introspect")).basic_auth("rs2", rs_secret.as_deref()).form(&[("token", at.as_str())]).send().await.unwrap();
    let v: Value = res.json().await.unwrap();
    assert_eq!((v["active"].as_bool(), v["token_type"].as_str(), v["cnf"]["jkt"].as_str()), (Some(true), Some("DPoP"), Some(key.jkt().as_str())));

    // The refresh token is bound too (a public client's): only a proof of the key refreshes it.
    let rt = tok["refresh_token"].as_str().unwrap().to_string();
    let refresh = [("grant_type", "refresh_token"), ("refresh_token", rt.as_str()), ("client_id", "spa")];
    for (what, proofs) in [("no proof", vec![]), ("another key", vec![other.proof("POST", &token_url, None, json!({}))])] {
        let refs: Vec<&str> = proofs.iter().map(String::as_str).collect();
        let (st, body, _) = token_with(&s, &refs, None, &refresh).await;
        assert_eq!((st, body["error"].as_str()), (400, Some("invalid_grant")), "{what}: {body}");
    }
    let (st, body, _) = token_with(&s, &[&key.proof("POST", &token_url, None, json!({}))], None, &refresh).await;
    assert_eq!((st, body["token_type"].as_str()), (200, Some("DPoP")), "the refused refreshes did not burn the token: {body}");
}

#[tokio::test]
async fn a_public_clients_unbound_refresh_token_is_bound_by_its_first_proof() {
    let (s, b) = setup().await;
    let (a, other) = (DpopKey::new(), DpopKey::new());
    let url = s.url("/token");
    let code = spa_code(&s, &b, &[]).await;
    let (_, tok, _) = token_with(&s, &[], None, &redeem(&code)).await;
    assert_eq!(tok["token_type"], "Bearer");
    let refresh = |rt: String| vec![("grant_type", "refresh_token".to_string()), ("refresh_token", rt), ("client_id", "spa".to_string())];
    let form = refresh(tok["refresh_token"].as_str().unwrap().to_string());
    let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (st, tok, _) = token_with(&s, &[&a.proof("POST", &url, None, json!({}))], None, &form).await;
    assert_eq!((st, tok["token_type"].as_str()), (200, Some("DPoP")), "{tok}");
    let form = refresh(tok["refresh_token"].as_str().unwrap().to_string());
    let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    for (what, proofs) in [("no proof", vec![]), ("another key", vec![other.proof("POST", &url, None, json!({}))])] {
        let refs: Vec<&str> = proofs.iter().map(String::as_str).collect();
        let (st, body, _) = token_with(&s, &refs, None, &form).await;
        assert_eq!((st, body["error"].as_str()), (400, Some("invalid_grant")), "{what}: {body}");
    }
    assert_eq!(token_with(&s, &[&a.proof("POST", &url, None, json!({}))], None, &form).await.0, 200);
}

#[tokio::test]
async fn bad_proofs_are_refused_before_the_code_is_spent() {
    let (s, b) = setup().await;
    let key = DpopKey::new();
    let url = s.url("/token");
    let code = spa_code(&s, &b, &[]).await;
    let t = now();
    let mut private = key.public();
    private["d"] = json!("870MB6gfuTJ4HtUnUvYMyJpr5eUZNP4Bk43bVdj3eAE");
    let with_header = |typ: Option<&str>, jwk: Value| {
        let mut h = Header::new(Algorithm::ES256);
        h.typ = typ.map(str::to_string);
        h.jwk = serde_json::from_value(jwk).ok();
        key.0.sign_with_header(h, &json!({"jti": random_token(), "htm": "POST", "htu": url, "iat": t}))
    };
    let hs = {
        let mut h = Header::new(Algorithm::HS256);
        h.typ = Some("dpop+jwt".into());
        jsonwebtoken::encode(&h, &json!({"jti": "x", "htm": "POST", "htu": url, "iat": t}), &EncodingKey::from_secret(b"k")).unwrap()
    };
    let cases: Vec<(&str, Vec<String>)> = vec![
        ("typ JWT", vec![with_header(Some("JWT"), key.public())]),
        ("no typ", vec![with_header(None, key.public())]),
        ("no jwk", vec![with_header(Some("dpop+jwt"), Value::Null)]),
        ("a private jwk", vec![key.0.sign_raw(&json!({"alg": "ES256", "typ": "dpop+jwt", "jwk": private}), &json!({"jti": random_token(), "htm": "POST", "htu": url, "iat": t}))]),
        ("HS256", vec![hs]),
        ("signed by another key than its jwk", vec![{
            let other = DpopKey::new();
            let mut h = Header::new(Algorithm::ES256);
            h.typ = Some("dpop+jwt".into());
            h.jwk = Some(serde_json::from_value(key.public()).unwrap());
            other.0.sign_with_header(h, &json!({"jti": random_token(), "htm": "POST", "htu": url, "iat": t}))
        }]),
        ("too old", vec![key.proof("POST", &url, None, json!({"iat": t - 600}))]),
        ("from the future", vec![key.proof("POST", &url, None, json!({"iat": t + 600}))]),
        ("for GET", vec![key.proof("GET", &url, None, json!({}))]),
        ("for another URL", vec![key.proof("POST", &s.url("/userinfo"), None, json!({}))]),
        ("without jti", vec![key.proof("POST", &url, None, json!({"jti": null}))]),
        ("two proofs", vec![key.proof("POST", &url, None, json!({})), key.proof("POST", &url, None, json!({}))]),
        ("not a JWT", vec!["nope".into()]),
    ];
    for (what, proofs) in cases {
        let refs: Vec<&str> = proofs.iter().map(String::as_str).collect();
        let (st, body, _) = token_with(&s, &refs, None, &redeem(&code)).await;
        assert_eq!((st, body["error"].as_str()), (400, Some("invalid_dpop_proof")), "{what}: {body}");
    }
    // A replay of a proof the server accepted once.
    let proof = key.proof("POST", &url, None, json!({}));
    let (st, body, _) = token_with(&s, &[&proof], None, &redeem(&code)).await;
    assert_eq!(st, 200, "the code survived every refusal: {body}");
    let code2 = spa_code(&s, &b, &[]).await;
    let (st, body, _) = token_with(&s, &[&proof], None, &redeem(&code2)).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_dpop_proof")), "replay: {body}");
}

#[tokio::test]
async fn dpop_jkt_binds_the_code_and_clients_can_require_proofs() {
    let (s, b) = setup().await;
    let (k1, k2) = (DpopKey::new(), DpopKey::new());
    let url = s.url("/token");
    let jkt = k1.jkt();
    for (what, proof, ok) in [("no proof", None, false), ("another key", Some(&k2), false), ("the named key", Some(&k1), true)] {
        let code = spa_code(&s, &b, &[("dpop_jkt", &jkt)]).await;
        let proofs: Vec<String> = proof.map(|k| k.proof("POST", &url, None, json!({}))).into_iter().collect();
        let refs: Vec<&str> = proofs.iter().map(String::as_str).collect();
        let (st, body, _) = token_with(&s, &refs, None, &redeem(&code)).await;
        assert_eq!(st == 200, ok, "{what}: {body}");
        if !ok {
            assert_eq!(body["error"], "invalid_grant", "{what}");
        }
    }
    // Through PAR, a proof sent with the push binds the code the same way.
    let ch = pkce();
    let push_form = [("client_id", "spa"), ("response_type", "code"), ("redirect_uri", REDIRECT), ("scope", "openid"), ("code_challenge", ch.as_str()), ("code_challenge_method", "S256")];
    let res = s.http.post(s.url("/par")).header("DPoP", k1.proof("POST", &s.url("/par"), None, json!({}))).form(&push_form).send().await.unwrap();
    assert_eq!(res.status(), 201);
    let uri = res.json::<Value>().await.unwrap()["request_uri"].as_str().unwrap().to_string();
    let p = b.finish_login(b.authorize(&[("client_id", "spa"), ("request_uri", &uri)]).await, "alice", PASSWORD).await;
    assert_eq!(token_with(&s, &[&k2.proof("POST", &url, None, json!({}))], None, &redeem(&p["code"])).await.1["error"], "invalid_grant");

    // The same with a signed request object pushed (its parameters replace the form's; the
    // proof's key still binds the code).
    let signer = Signer::es256("ro");
    s.client("spa-ro", json!({"token_endpoint_auth_method": "none", "jwks": crate::client_jwt::jwks(&[&signer])})).await;
    let object = signer.sign(&json!({
        "iss": "spa-ro", "aud": s.issuer(), "exp": now() + 300, "client_id": "spa-ro", "response_type": "code",
        "redirect_uri": REDIRECT, "scope": "openid", "code_challenge": ch, "code_challenge_method": "S256", "state": "ro",
    }));
    let res = s.http.post(s.url("/par")).header("DPoP", k1.proof("POST", &s.url("/par"), None, json!({}))).form(&[("client_id", "spa-ro"), ("request", object.as_str())]).send().await.unwrap();
    assert_eq!(res.status(), 201);
    let uri = res.json::<Value>().await.unwrap()["request_uri"].as_str().unwrap().to_string();
    let p = b.finish_login(b.authorize(&[("client_id", "spa-ro"), ("request_uri", &uri)]).await, "alice", PASSWORD).await;
    let mut form = redeem(&p["code"]);
    form[3] = ("client_id", "spa-ro");
    assert_eq!(token_with(&s, &[&k2.proof("POST", &url, None, json!({}))], None, &form).await.1["error"], "invalid_grant");

    // A client that requires DPoP gets no token without a proof; a confidential client's
    // refresh token is not bound (its authentication binds it), its access tokens are.
    let (_, secret) = s.client("strict", json!({"dpop_bound_access_tokens": true, "grant_types": ["client_credentials"], "redirect_uris": [], "scope": "api"})).await;
    let secret = secret.unwrap();
    let (st, body, _) = token_with(&s, &[], Some(("strict", &secret)), &[("grant_type", "client_credentials")]).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "a missing proof is not an invalid one: {body}");
    let (st, body, _) = token_with(&s, &[&k1.proof("POST", &url, None, json!({}))], Some(("strict", &secret)), &[("grant_type", "client_credentials")]).await;
    assert_eq!((st, body["token_type"].as_str()), (200, Some("DPoP")), "{body}");
    let d: Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    assert!(d["dpop_signing_alg_values_supported"].as_array().unwrap().contains(&json!("ES256")));
}

#[tokio::test]
async fn a_bound_token_is_exchanged_only_with_a_proof_of_its_key() {
    let (s, b) = setup().await;
    let key = DpopKey::new();
    let url = s.url("/token");
    let code = spa_code(&s, &b, &[]).await;
    let at = token_with(&s, &[&key.proof("POST", &url, None, json!({}))], None, &redeem(&code)).await.1["access_token"].as_str().unwrap().to_string();
    let (_, secret) = s
        .client("gw", json!({"grant_types": ["urn:ietf:params:oauth:grant-type:token-exchange"], "redirect_uris": [], "token_exchange": {"delegation": false, "impersonation": true}}))
        .await;
    let form = [
        ("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"),
        ("subject_token", at.as_str()),
        ("subject_token_type", "urn:ietf:params:oauth:token-type:access_token"),
    ];
    let gw = ("gw", secret.as_deref().unwrap());
    let (st, body, _) = token_with(&s, &[], Some(gw), &form).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "{body}");
    let (st, body, _) = token_with(&s, &[&DpopKey::new().proof("POST", &url, None, json!({}))], Some(gw), &form).await;
    assert_eq!(st, 400, "{body}");
    let (st, body, _) = token_with(&s, &[&key.proof("POST", &url, None, json!({}))], Some(gw), &form).await;
    assert_eq!((st, body["token_type"].as_str()), (200, Some("DPoP")), "{body}");
}

#[tokio::test]
async fn server_nonces_are_required_when_on_and_handed_out_on_every_answer() {
    let s = TestServer::start_with(|c| c.dpop_nonce = true).await;
    s.client("spa", json!({"token_endpoint_auth_method": "none"})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let key = DpopKey::new();
    let url = s.url("/token");
    let code = spa_code(&s, &b, &[]).await;
    let (st, body, h) = token_with(&s, &[&key.proof("POST", &url, None, json!({}))], None, &redeem(&code)).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("use_dpop_nonce")), "{body}");
    let nonce = h["dpop-nonce"].to_str().unwrap().to_string();
    let (st, _, _) = token_with(&s, &[&key.proof("POST", &url, None, json!({"nonce": "made-up"}))], None, &redeem(&code)).await;
    assert_eq!(st, 400);
    let (st, tok, h) = token_with(&s, &[&key.proof("POST", &url, None, json!({"nonce": nonce}))], None, &redeem(&code)).await;
    assert_eq!(st, 200, "{tok}");
    assert!(h.contains_key("dpop-nonce"));
    let at = tok["access_token"].as_str().unwrap();
    let ui = s.url("/userinfo");
    let (st, body, challenge) = userinfo_with(&s, "DPoP", at, Some(&key.proof("GET", &ui, Some(at), json!({})))).await;
    assert_eq!((st, body["error"].as_str()), (401, Some("use_dpop_nonce")), "{body}");
    assert!(challenge.contains("use_dpop_nonce"), "{challenge}");
    let (st, body, _) = userinfo_with(&s, "DPoP", at, Some(&key.proof("GET", &ui, Some(at), json!({"nonce": nonce})))).await;
    assert_eq!(st, 200, "{body}");
    // /par hands out nonces too (a client's first DPoP request may be its push).
    let ch = pkce();
    let form = [("client_id", "spa"), ("response_type", "code"), ("redirect_uri", REDIRECT), ("scope", "openid"), ("code_challenge", ch.as_str()), ("code_challenge_method", "S256")];
    let par = s.url("/par");
    let res = s.http.post(&par).header("DPoP", key.proof("POST", &par, None, json!({}))).form(&form).send().await.unwrap();
    assert_eq!(res.status(), 400);
    let nonce = res.headers()["dpop-nonce"].to_str().unwrap().to_string();
    let res = s.http.post(&par).header("DPoP", key.proof("POST", &par, None, json!({"nonce": nonce}))).form(&form).send().await.unwrap();
    assert_eq!(res.status(), 201);
    assert!(res.headers().contains_key("dpop-nonce"));
}

/// Issue 30: requests that fail for another reason (a bogus code, a token refused at
/// userinfo) recorded their proof's jti, so 2,300 of them filled a replay memory of 2,000 and
/// a genuine redemption was answered 503. Now only a request that succeeds keeps its jti, and
/// a full memory forgets its oldest entry rather than refusing anyone.
#[tokio::test]
async fn failing_requests_cannot_fill_the_replay_memory() {
    let s = TestServer::start_with(|c| c.dpop_replay_max_entries = 1_000).await;
    s.client("spa", json!({"token_endpoint_auth_method": "none", "grant_types": ["authorization_code", "refresh_token"]})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let key = DpopKey::new();
    let (token_url, ui) = (s.url("/token"), s.url("/userinfo"));
    let remembered = || s.server.app.dpop.remembered();
    // 1,300 redemptions of codes that do not exist, each with a fresh, valid proof.
    for i in 0..1_300 {
        let bogus = format!("bogus-code-{i}");
        let (st, body, _) = token_with(&s, &[&key.proof("POST", &token_url, None, json!({}))], None, &redeem(&bogus)).await;
        assert_eq!((st, body["error"].as_str()), (400, Some("invalid_grant")), "{body}");
    }
    assert_eq!(remembered(), 0, "refused requests left their proof ids behind");
    // A proof whose request failed is not spent: the same proof redeems a genuine code, and
    // only then is it remembered (a replay is refused).
    let code = spa_code(&s, &b, &[]).await;
    let proof = key.proof("POST", &token_url, None, json!({}));
    let (st, _, _) = token_with(&s, &[&proof], None, &redeem("bogus")).await;
    assert_eq!(st, 400);
    let (st, tok, _) = token_with(&s, &[&proof], None, &redeem(&code)).await;
    assert_eq!(st, 200, "{tok}");
    assert_eq!(remembered(), 1);
    let code2 = spa_code(&s, &b, &[]).await;
    let (st, body, _) = token_with(&s, &[&proof], None, &redeem(&code2)).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_dpop_proof")), "replay: {body}");
    let at = tok["access_token"].as_str().unwrap();
    // Userinfo's refusals after the proof was checked (a revoked token) leave nothing either.
    let code3 = spa_code(&s, &b, &[]).await;
    let (st, tok3, _) = token_with(&s, &[&key.proof("POST", &token_url, None, json!({}))], None, &redeem(&code3)).await;
    assert_eq!(st, 200, "{tok3}");
    let revoked = tok3["access_token"].as_str().unwrap();
    let res = s.http.post(s.url("/revoke")).form(&[("token", revoked), ("client_id", "spa")]).send().await.unwrap();
    assert_eq!(res.status(), 200);
    for _ in 0..20 {
        let (st, _, _) = userinfo_with(&s, "DPoP", revoked, Some(&key.proof("GET", &ui, Some(revoked), json!({})))).await;
        assert_eq!(st, 401);
    }
    assert_eq!(remembered(), 2, "refused userinfo requests were remembered");
    // Successes past the bound: the memory stays within it and nobody is refused.
    for _ in 0..1_100 {
        let (st, body, _) = userinfo_with(&s, "DPoP", at, Some(&key.proof("GET", &ui, Some(at), json!({})))).await;
        assert_eq!(st, 200, "{body}");
    }
    assert!(remembered() <= 1_008, "bounded: {}", remembered());
}

/// `dpop_signing_alg_values_supported` (issue 34): what discovery and a challenge name, and
/// the only algorithms a proof may use; a FAPI 2.0 deployment leaves RS256 out.
#[tokio::test]
async fn proof_algorithms_are_a_setting() {
    let s = TestServer::start_with(|c| c.dpop_signing_alg_values_supported = "PS256 EdDSA".into()).await;
    let (_, secret) = s.client("svc", json!({"grant_types": ["client_credentials"], "redirect_uris": [], "scope": "api"})).await;
    let secret = secret.unwrap();
    let d: Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    assert_eq!(d["dpop_signing_alg_values_supported"], json!(["PS256", "EdDSA"]));
    let url = s.url("/token");
    let es256 = DpopKey::new();
    let (st, body, _) = token_with(&s, &[&es256.proof("POST", &url, None, json!({}))], Some(("svc", &secret)), &[("grant_type", "client_credentials")]).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_dpop_proof")), "ES256 is not accepted here: {body}");
    // A refusal at a resource names the algorithms in its challenge.
    let (st, _, challenge) = userinfo_with(&s, "DPoP", "not-a-token", Some(&es256.proof("GET", &s.url("/userinfo"), None, json!({})))).await;
    assert_eq!(st, 401);
    assert!(challenge.contains("algs=\"PS256 EdDSA\""), "{challenge}");
    // And an unknown or symmetric algorithm is refused at start.
    for bad in ["ES256 HS256", "none", ""] {
        let mut c = authrim::config::Config::default();
        c.dpop_signing_alg_values_supported = bad.into();
        assert!(c.validate().is_err(), "{bad:?} accepted");
    }
}

/// Issue 34: a refresh request refused for any reason (no proof, no or a made-up nonce, a
/// proof for another endpoint or used before, wrong client authentication, another client, a
/// scope not granted) must leave the refresh token as it was. A seeded run of refused requests
/// interleaved with good ones, against the model "the current token is the one the last
/// success returned": every good request with it succeeds, none with an older one does.
/// `AUTHRIM_REFRESH_SEED` replays a run.
#[tokio::test]
async fn refused_refresh_requests_never_change_the_family() {
    let seed = std::env::var("AUTHRIM_REFRESH_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or_else(|| now() ^ 0x5eed);
    eprintln!("refresh model seed {seed}");
    // With rotation (the default) and without (FAPI 2.0 §5.3.2.1, as the FAPI plan runs).
    for rotation in [true, false] {
        refresh_model(seed, rotation).await;
    }
}

async fn refresh_model(seed: u64, rotation: bool) {
    let mut rng = authrim::fuzzing::SplitMix(seed);
    let s = TestServer::start_with(|c| {
        c.dpop_nonce = true;
        c.refresh_token_rotation = rotation;
    })
    .await;
    let cfg = json!({"grant_types": ["authorization_code", "refresh_token"], "dpop_bound_access_tokens": true, "scope": "openid profile offline_access"});
    let (_, secret) = s.client("conf", cfg.clone()).await;
    let (_, other_secret) = s.client("other", cfg).await;
    let (secret, other_secret) = (secret.unwrap(), other_secret.unwrap());
    s.user("alice", json!({})).await;
    let b = s.browser();
    let key = DpopKey::new();
    let url = s.url("/token");
    let code = s.code_for(&b, "conf", "alice", &[("scope", "openid profile offline_access")]).await["code"].clone();
    let redeem = [("grant_type", "authorization_code"), ("code", code.as_str()), ("redirect_uri", REDIRECT)];
    let (_, _, h) = token_with(&s, &[&key.proof("POST", &url, None, json!({}))], Some(("conf", &secret)), &redeem).await;
    let mut nonce = h["dpop-nonce"].to_str().unwrap().to_string();
    let mut used = key.proof("POST", &url, None, json!({"nonce": nonce}));
    let (st, tok, _) = token_with(&s, &[&used], Some(("conf", &secret)), &redeem).await;
    assert_eq!(st, 200, "{tok}");
    let mut current = tok["refresh_token"].as_str().unwrap().to_string();
    let (mut good, mut refused) = (0, 0);
    for step in 0..60 {
        let form: Vec<(&str, String)> = vec![("grant_type", "refresh_token".into()), ("refresh_token", current.clone())];
        let fresh = key.proof("POST", &url, None, json!({"nonce": nonce}));
        let kind = rng.below(9);
        let (proofs, auth, form): (Vec<String>, (&str, &str), Vec<(&str, String)>) = match kind {
            0 | 1 | 2 => (vec![fresh], ("conf", secret.as_str()), form),
            3 => (vec![], ("conf", secret.as_str()), form),
            4 => (vec![key.proof("POST", &url, None, json!({}))], ("conf", secret.as_str()), form),
            5 => (vec![key.proof("POST", &url, None, json!({"nonce": "made-up"}))], ("conf", secret.as_str()), form),
            6 => (vec![key.proof("POST", &s.url("/par"), None, json!({"nonce": nonce}))], ("conf", secret.as_str()), form),
            7 => (vec![fresh], ("conf", "wrong-secret"), form),
            _ => match rng.below(3) {
                0 => (vec![used.clone()], ("conf", secret.as_str()), form),
                1 => (vec![fresh], ("other", other_secret.as_str()), form),
                _ => (vec![fresh], ("conf", secret.as_str()), [form, vec![("scope", "openid email".into())]].concat()),
            },
        };
        let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let refs: Vec<&str> = proofs.iter().map(String::as_str).collect();
        let (st, body, h) = token_with(&s, &refs, Some(auth), &form).await;
        if let Some(n) = h.get("dpop-nonce") {
            nonce = n.to_str().unwrap().to_string();
        }
        if kind <= 2 {
            assert_eq!(st, 200, "step {step} (seed {seed}, rotation {rotation}): a good refresh with the current token: {body}");
            if let Some(next) = body["refresh_token"].as_str() {
                current = next.to_string();
            }
            used = refs[0].to_string();
            good += 1;
        } else {
            assert!(st == 400 || st == 401, "step {step} (seed {seed}, rotation {rotation}), kind {kind}: {st} {body}");
            refused += 1;
        }
    }
    eprintln!("refresh model (rotation {rotation}): {good} good, {refused} refused");
    assert!(good > 5 && refused > 5);
}

/// Issue 34 (found by the FAPI 2.0 plan with `dpop_nonce` on): a `private_key_jwt` client's
/// request refused with `use_dpop_nonce` had already spent its client assertion's jti, so the
/// retry RFC 9449 §8 prescribes, the same request with the nonce in a new proof, was refused
/// as a replayed assertion. The proof is now checked before the client is authenticated, at
/// /token and at /par; a second use of the assertion after a success is still a replay.
#[tokio::test]
async fn a_retry_with_the_server_nonce_may_resend_its_client_assertion() {
    use crate::client_jwt::ASSERTION_TYPE;
    let s = TestServer::start_with(|c| c.dpop_nonce = true).await;
    let signer = Signer::es256("k");
    s.client("keyed", json!({"token_endpoint_auth_method": "private_key_jwt", "jwks": crate::client_jwt::jwks(&[&signer]), "grant_types": ["client_credentials", "authorization_code"], "scope": "openid api:read"})).await;
    let key = DpopKey::new();
    for endpoint in ["/token", "/par"] {
        let url = s.url(endpoint);
        let assertion = signer.assertion("keyed", &s.issuer(), json!({}));
        let ch = pkce();
        let mut form: Vec<(&str, &str)> = match endpoint {
            "/token" => vec![("grant_type", "client_credentials"), ("scope", "api:read")],
            _ => vec![("response_type", "code"), ("redirect_uri", REDIRECT), ("scope", "openid"), ("code_challenge", ch.as_str()), ("code_challenge_method", "S256")],
        };
        form.extend([("client_assertion_type", ASSERTION_TYPE), ("client_assertion", assertion.as_str())]);
        let send = |proof: String| s.http.post(&url).header("DPoP", proof).form(&form).send();
        let res = send(key.proof("POST", &url, None, json!({}))).await.unwrap();
        let nonce = res.headers()["dpop-nonce"].to_str().unwrap().to_string();
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["error"], "use_dpop_nonce", "{endpoint}: {body}");
        let res = send(key.proof("POST", &url, None, json!({"nonce": nonce}))).await.unwrap();
        let status = res.status().as_u16();
        let body: Value = res.json().await.unwrap();
        assert_eq!(status, if endpoint == "/token" { 200 } else { 201 }, "{endpoint}: the retry with the nonce: {body}");
        // Once the request succeeded, the assertion is spent.
        let res = send(key.proof("POST", &url, None, json!({"nonce": nonce}))).await.unwrap();
        let status = res.status().as_u16();
        let body: Value = res.json().await.unwrap();
        assert_eq!((status, body["error"].as_str()), (401, Some("invalid_client")), "{endpoint}: {body}");
    }
}

/// Issue 34: a proof that does not verify is refused in our words, not the JWT library's
/// ("InvalidSignature", "missing field `htm` at line 1 column 145").
#[tokio::test]
async fn proof_errors_are_in_the_products_words() {
    let s = TestServer::start().await;
    let (_, secret) = s.client("svc", json!({"grant_types": ["client_credentials"], "scope": "api:read"})).await;
    let key = DpopKey::new();
    let url = s.url("/token");
    let good = key.proof("POST", &url, None, json!({}));
    // This proof's header and claims under another proof's signature.
    let signed_part = good.rsplit_once('.').unwrap().0;
    let other = key.proof("POST", &url, None, json!({}));
    let forged = format!("{signed_part}.{}", other.rsplit_once('.').unwrap().1);
    let no_htm = key.proof("POST", &url, None, json!({"htm": null}));
    for (proof, words) in [(forged, "signature does not verify"), (no_htm, "claims are missing or malformed")] {
        let (st, body, _) = token_with(&s, &[&proof], Some(("svc", secret.as_deref().unwrap())), &[("grant_type", "client_credentials"), ("scope", "api:read")]).await;
        let d = body["error_description"].as_str().unwrap();
        assert_eq!((st, body["error"].as_str()), (400, Some("invalid_dpop_proof")), "{body}");
        assert!(d.contains(words) && !d.contains("InvalidSignature") && !d.contains("line 1"), "{d}");
    }
}
