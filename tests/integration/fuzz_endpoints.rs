//! Generated-request fuzz of every endpoint against a running server: valid requests of each
//! kind, mutated (parameters dropped, repeated, emptied, oversized, of the wrong type, random
//! bytes, bad percent-encoding, invalid UTF-8, odd content types and methods, garbage
//! `Authorization` headers, tampered JWTs and refresh tokens, huge and nested JSON), from one
//! deterministic seed (printed; `AUTHRIM_FUZZ_SEED` replays another).
//!
//! Asserted for every response: no 5xx; an error from an API endpoint is JSON with an `error`
//! member and `Content-Type: application/json`; the browser endpoints (`/authorize`, `/login`,
//! `/consent`) answer with an HTML page or a redirect with a valid `Location`. After each group
//! the server must still be healthy, and at the end still issue tokens. Every failure is
//! collected, then reported by kind with the request that triggered it.

use crate::harness::*;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use reqwest::Method;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

const DEFAULT_SEED: u64 = 0x6175_7468_7269_6d21;
const CONCURRENCY: usize = 6;
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const AT_TYPE: &str = "urn:ietf:params:oauth:token-type:access_token";
const JWT_TYPE: &str = "urn:ietf:params:oauth:token-type:jwt";
const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const ID_JAG_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// A registered resource server of the fuzzed server.
const MCP: &str = "https://mcp.example/mcp";
/// Client ID Metadata Document URLs: nothing answers at either (a refused connection, a name
/// that does not resolve), plus a malformed one.
const DOCUMENT_IDS: &[&str] = &["http://127.0.0.1:1/client.json", "https://agents.invalid/client.json", "https://agents.invalid/", "https://x/../y"];
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGEz6nPGsk";

use authrim::fuzzing::SplitMix as Rng;

type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

fn pairs(p: &[(&str, &str)]) -> Pairs {
    p.iter().map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec())).collect()
}

fn encode(p: &Pairs) -> Vec<u8> {
    let enc = |b: &[u8]| url::form_urlencoded::byte_serialize(b).collect::<String>();
    p.iter().map(|(k, v)| format!("{}={}", enc(k), enc(v))).collect::<Vec<_>>().join("&").into_bytes()
}

#[derive(Clone, Debug)]
enum Body {
    None,
    Form(Pairs),
    Json(Vec<u8>),
    Raw(Vec<u8>),
}

/// One request, before it is put on the wire.
#[derive(Clone, Debug)]
struct Req {
    group: &'static str,
    method: Method,
    path: String,
    query: Pairs,
    /// Appended to the encoded query as is (bad percent-encoding, stray separators).
    query_raw: String,
    body: Body,
    /// Appended to the encoded form body as is (bad percent-encoding, raw invalid UTF-8).
    body_raw: Vec<u8>,
    content_type: Option<Vec<u8>>,
    headers: Vec<(&'static str, Vec<u8>)>,
}

impl Req {
    fn new(group: &'static str, method: Method, path: &str) -> Self {
        Self {
            group,
            method,
            path: path.into(),
            query: Vec::new(),
            query_raw: String::new(),
            body: Body::None,
            body_raw: Vec::new(),
            content_type: None,
            headers: Vec::new(),
        }
    }
    fn query(mut self, p: &[(&str, &str)]) -> Self {
        self.query = pairs(p);
        self
    }
    fn form(mut self, p: &[(&str, &str)]) -> Self {
        self.body = Body::Form(pairs(p));
        self
    }
    fn json(mut self, v: Value) -> Self {
        self.body = Body::Json(v.to_string().into_bytes());
        self
    }
    fn header(mut self, name: &'static str, value: impl Into<Vec<u8>>) -> Self {
        self.headers.push((name, value.into()));
        self
    }
    fn basic(self, id: &str, secret: &str) -> Self {
        let v = format!("Basic {}", STANDARD.encode(format!("{id}:{secret}")));
        self.header("authorization", v)
    }
    fn bearer(self, token: &str) -> Self {
        self.header("authorization", format!("Bearer {token}"))
    }

    fn params_mut(&mut self) -> &mut Pairs {
        match &mut self.body {
            Body::Form(p) => p,
            _ => &mut self.query,
        }
    }

    fn url(&self, base: &str) -> String {
        let mut q = String::from_utf8(encode(&self.query)).expect("encoded");
        q.push_str(&self.query_raw);
        if q.is_empty() { format!("{base}{}", self.path) } else { format!("{base}{}?{q}", self.path) }
    }

    fn body_bytes(&self) -> Option<Vec<u8>> {
        let mut b = match &self.body {
            Body::None if self.body_raw.is_empty() => return None,
            Body::None => Vec::new(),
            Body::Form(p) => encode(p),
            Body::Json(j) | Body::Raw(j) => j.clone(),
        };
        b.extend_from_slice(&self.body_raw);
        Some(b)
    }

    fn content_type(&self) -> Option<Vec<u8>> {
        self.content_type.clone().or_else(|| match self.body {
            Body::Form(_) => Some(b"application/x-www-form-urlencoded".to_vec()),
            Body::Json(_) => Some(b"application/json".to_vec()),
            _ => None,
        })
    }

    /// A readable account of the request, cut to a sane length.
    fn describe(&self, base: &str) -> String {
        let cut = |s: String, n: usize| {
            if s.len() > n { format!("{}… ({} bytes)", s.chars().take(n).collect::<String>(), s.len()) } else { s }
        };
        let show = |b: &[u8]| b.iter().flat_map(|&c| std::ascii::escape_default(c)).map(char::from).collect::<String>();
        let mut out = format!("({}) {} {}", self.group, self.method, cut(self.url("").replace(base, ""), 300));
        if let Some(ct) = self.content_type() {
            out.push_str(&format!("\n      content-type: {}", cut(show(&ct), 120)));
        }
        for (k, v) in &self.headers {
            out.push_str(&format!("\n      {k}: {}", cut(show(v), 200)));
        }
        if let Some(b) = self.body_bytes() {
            out.push_str(&format!("\n      body: {}", cut(show(&b), 300)));
        }
        out
    }
}

/// Browser endpoints answer with pages; everything else is an API endpoint.
fn is_browser(path: &str) -> bool {
    matches!(path, "/" | "/authorize" | "/login" | "/login/second-factor" | "/login/passkey" | "/login/select" | "/login/upstream" | "/login/upstream/callback" | "/login/forgot" | "/login/reset" | "/signup" | "/signup/verify" | "/consent" | "/logout" | "/logout/confirm" | "/logout/upstream" | "/demo" | "/demo/start" | "/demo/callback")
        || path.starts_with("/account")
        || path.starts_with("/console")
        || matches!(path, "/saml/sso" | "/saml/slo" | "/saml/slo/post" | "/saml/acs")
        || path.starts_with("/saml/start/")
}

fn endpoint_label(req: &Req) -> String {
    let p = req.path.as_str();
    let known = [
        "/authorize", "/login", "/consent", "/logout", "/logout/confirm", "/token", "/revoke", "/introspect", "/userinfo",
        "/jwks", "/.well-known/openid-configuration", "/.well-known/oauth-authorization-server", "/healthz", "/par", "/register",
    ];
    if p.starts_with("/register/") {
        return "/register/{client_id}".into();
    }
    let admin = p.strip_prefix("/admin/").and_then(|rest| rest.split('/').next()).filter(|c| matches!(*c, "clients" | "users" | "audit"));
    if p.starts_with("/admin/users/") && (p.contains("/sessions") || p.contains("/consents/")) {
        return "/admin/users/…/sessions|consents".into();
    }
    match admin {
        _ if known.contains(&p) => p.to_string(),
        Some(collection) => format!("/admin/{collection}"),
        None => "(other)".into(),
    }
}

// ---------------------------------------------------------------------------------------------
// mutations

const WRONG_TYPES: &[&str] = &["[]", "{\"a\":1}", "-1", "1e999", "true", "null", "0x10", "NaN", "\"quoted\"", "a b", " "];
const CONTENT_TYPES: &[&[u8]] = &[
    b"application/json",
    b"text/plain",
    b"multipart/form-data; boundary=x",
    b"application/x-www-form-urlencoded; charset=ISO-8859-1",
    b"APPLICATION/X-WWW-FORM-URLENCODED",
    b"application/x-www-form-urlencoded;",
    b"application/x-www-form-urlencodedx",
    b"",
    b";",
    b"application/\xff",
    b"text/html; charset=utf-8",
    b"application/jwt",
];
const TOKEN_PARAMS: &[&str] =
    &["code", "refresh_token", "subject_token", "actor_token", "token", "access_token", "id_token_hint", "challenge", "code_verifier"];
const METHODS: &[&str] = &["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "FOO", "CONNECTX", "TRACE"];

fn garbage_authorization(rng: &mut Rng, sample_token: &str) -> Vec<u8> {
    let b64 = |s: &[u8]| STANDARD.encode(s);
    match rng.below(16) {
        0 => b"Basic".to_vec(),
        1 => b"Basic ".to_vec(),
        2 => b"Basic !!!not-base64!!!".to_vec(),
        3 => format!("Basic {}", b64(b"no-colon")).into_bytes(),
        4 => format!("Basic {}", b64(b":empty-id")).into_bytes(),
        5 => format!("Basic {}", b64(&[0xff, 0xfe, b':', 0xc3])).into_bytes(),
        6 => format!("Basic {}", b64(b"rp%zz:%ff%")).into_bytes(),
        7 => format!("Basic {}", URL_SAFE_NO_PAD.encode(b"rp:secret")).into_bytes(),
        8 => b"Bearer".to_vec(),
        9 => b"Bearer   ".to_vec(),
        10 => format!("Bearer {sample_token} extra").into_bytes(),
        11 => format!("bearer {sample_token}").into_bytes(),
        12 => format!("Digest {}", "x".repeat(rng.below(9_000))).into_bytes(),
        13 => {
            let mut v = b"Basic ".to_vec();
            v.extend((0..rng.below(40)).map(|_| 0x80 + (rng.next() as u8 & 0x7f)));
            v
        }
        14 => format!("Bearer {}", "A".repeat(8 * 1024 + rng.below(4))).into_bytes(),
        _ => {
            let n = rng.below(60);
            rng.bytes(n).into_iter().filter(|&c| c == b'\t' || (0x20..0x7f).contains(&c) || c >= 0x80).collect()
        }
    }
}

fn tamper(rng: &mut Rng, token: &[u8]) -> Vec<u8> {
    let mut t = token.to_vec();
    if t.is_empty() {
        return b".".to_vec();
    }
    match rng.below(8) {
        0 => {
            let i = rng.below(t.len());
            t[i] = *rng.pick(b"AZaz09-_.+/=");
        }
        1 => t.truncate(rng.below(t.len())),
        2 => {
            // Swap two segments (header and payload, or anything dot-separated).
            let mut parts: Vec<Vec<u8>> = t.split(|&c| c == b'.').map(<[u8]>::to_vec).collect();
            if parts.len() > 1 {
                let (a, b) = (rng.below(parts.len()), rng.below(parts.len()));
                parts.swap(a, b);
            }
            t = parts.join(&b'.');
        }
        3 => {
            // alg=none, signature dropped.
            let payload = t.split(|&c| c == b'.').nth(1).unwrap_or(b"").to_vec();
            t = format!("{}.{}.", URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"at+jwt"}"#), String::from_utf8_lossy(&payload)).into_bytes();
        }
        4 => t.extend_from_slice(b"."),
        5 => {
            // Another payload under the same header and signature.
            let mut parts: Vec<Vec<u8>> = t.split(|&c| c == b'.').map(<[u8]>::to_vec).collect();
            if parts.len() > 1 {
                parts[1] = URL_SAFE_NO_PAD.encode(br#"{"iss":"x","sub":"admin","exp":99999999999,"scope":"openid"}"#).into_bytes();
            }
            t = parts.join(&b'.');
        }
        6 => t = t.iter().rev().copied().collect(),
        _ => t.extend(rng.bytes(3).iter().map(|b| b'A' + b % 26)),
    }
    t
}

fn nested_json(rng: &mut Rng) -> Vec<u8> {
    let depth = 100 + rng.below(30_000);
    let (open, close) = if rng.chance(50) { ("[", "]") } else { ("{\"a\":", "}") };
    format!("{}1{}", open.repeat(depth), close.repeat(depth)).into_bytes()
}

fn huge_json(rng: &mut Rng) -> Vec<u8> {
    match rng.below(3) {
        0 => format!("{{\"client_id\":\"{}\"}}", "x".repeat(60_000)).into_bytes(),
        1 => format!("[{}0]", "0,".repeat(30_000)).into_bytes(),
        _ => format!("{{\"redirect_uris\":[{}\"https://a.example/\"]}}", "\"https://a.example/\",".repeat(2_500 + rng.below(500))).into_bytes(),
    }
}

/// A JSON body with one member dropped, retyped, added or blown up.
fn mutate_json(rng: &mut Rng, body: &[u8]) -> Vec<u8> {
    let Ok(mut v) = serde_json::from_slice::<Value>(body) else { return body.to_vec() };
    if let Some(obj) = v.as_object_mut() {
        let keys: Vec<String> = obj.keys().cloned().collect();
        let key = if keys.is_empty() { "x".to_string() } else { rng.pick(&keys).clone() };
        match rng.below(6) {
            0 => drop(obj.remove(&key)),
            1 => drop(obj.insert(key, serde_json::from_str(*rng.pick(WRONG_TYPES)).unwrap_or(Value::Null))),
            2 => drop(obj.insert("unknown_member".into(), json!(1))),
            3 => drop(obj.insert(key, json!("x".repeat(rng.below(20_000))))),
            4 => drop(obj.insert(key, json!([[[[{"a": [null, true, 1.5, "é\u{0}"]}]]]]))),
            _ => drop(obj.insert(key, Value::String(String::from_utf8_lossy(&rng.bytes(30)).into_owned()))),
        }
    }
    v.to_string().into_bytes()
}

fn mutate(rng: &mut Rng, req: &mut Req, sample_token: &str) {
    for _ in 0..1 + rng.below(3) {
        let n = req.params_mut().len();
        match rng.below(22) {
            0 if n > 0 => drop(req.params_mut().remove(rng.below(n))),
            1 if n > 0 => {
                let p = req.params_mut()[rng.below(n)].clone();
                req.params_mut().push(p);
            }
            2 if n > 0 => {
                let i = rng.below(n);
                req.params_mut()[i].1.clear();
            }
            3 if n > 0 => {
                let i = rng.below(n);
                let len = *rng.pick(&[8 * 1024, 8 * 1024 + 1, 9_000, 20_000]);
                req.params_mut()[i].1 = vec![b'a'; len];
            }
            4 if n > 0 => {
                let i = rng.below(n);
                req.params_mut()[i].1 = rng.pick(WRONG_TYPES).as_bytes().to_vec();
            }
            5 if n > 0 => {
                let i = rng.below(n);
                let len = rng.below(64);
                req.params_mut()[i].1 = rng.bytes(len);
            }
            6 => {
                let junk = *rng.pick(&["&%", "&a=%zz", "&%ff=%fe", "&&&", "=&=", ";", "&scope=%C3%28", "&=%", "&client_id=%00", "&%E0%A4%A=x"]);
                match req.body {
                    Body::Form(_) => req.body_raw.extend_from_slice(junk.as_bytes()),
                    _ => req.query_raw.push_str(junk),
                }
            }
            7 if matches!(req.body, Body::Form(_)) => req.body_raw.extend_from_slice(b"&x=\xff\xfe\xc3("),
            8 => req.content_type = Some(rng.pick(CONTENT_TYPES).to_vec()),
            9 => {
                req.headers.retain(|(k, _)| *k != "authorization");
                let g = garbage_authorization(rng, sample_token);
                req.headers.push(("authorization", g));
            }
            10 | 11 => {
                let idx: Vec<usize> = (0..n).filter(|&i| TOKEN_PARAMS.iter().any(|t| t.as_bytes() == req.params_mut()[i].0)).collect();
                if let Some(&i) = idx.get(rng.below(idx.len().max(1))) {
                    let t = tamper(rng, &req.params_mut()[i].1.clone());
                    req.params_mut()[i].1 = t;
                } else if let Some(pos) = req.headers.iter().position(|(k, v)| *k == "authorization" && v.starts_with(b"Bearer ")) {
                    let t = tamper(rng, &req.headers[pos].1[7..]);
                    req.headers[pos].1 = [b"Bearer ".as_slice(), &t].concat();
                }
            }
            12 => {
                req.body = match rng.below(3) {
                    0 => Body::Json(nested_json(rng)),
                    1 => Body::Json(huge_json(rng)),
                    _ => {
                        let n = rng.below(2_000);
                        Body::Raw(rng.bytes(n))
                    }
                };
            }
            13 if matches!(req.body, Body::Json(_)) => {
                if let Body::Json(b) = &req.body {
                    let m = mutate_json(rng, b);
                    req.body = Body::Json(m);
                }
            }
            14 => req.method = Method::from_bytes(rng.pick(METHODS).as_bytes()).expect("method"),
            15 => {
                req.path = match rng.below(6) {
                    0 => format!("{}/", req.path),
                    1 => format!("/{}", req.path),
                    2 => req.path.to_uppercase(),
                    3 => req.path.replace('/', "%2F").replacen("%2F", "/", 1),
                    4 => format!("{}/%ff%00..", req.path),
                    _ => format!("{}{}", req.path, "/x".repeat(rng.below(500))),
                }
            }
            16 => {
                let k = *rng.pick(&["unknown", "request", "request_uri", "response_mode", "x"]);
                let v = rng.pick(WRONG_TYPES).to_string();
                req.params_mut().push((k.as_bytes().to_vec(), v.into_bytes()));
            }
            17 if n > 1 => {
                let (a, b) = (rng.below(n), rng.below(n));
                let va = req.params_mut()[a].1.clone();
                req.params_mut()[a].1 = req.params_mut()[b].1.clone();
                req.params_mut()[b].1 = va;
            }
            18 => {
                let c = *rng.pick(&[
                    "authrim_session=",
                    "authrim_session=1_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
                    "authrim_browser=x; authrim_browser=y",
                    ";;;=;",
                    "authrim_session=%ff",
                ]);
                req.headers.push(("cookie", c.as_bytes().to_vec()));
            }
            19 => {
                // Over the body limit.
                let len = *rng.pick(&[64 * 1024 + 1, 70_000, 200_000]);
                req.body = Body::Raw(vec![b'a'; len]);
                if rng.chance(50) {
                    req.content_type = Some(b"application/x-www-form-urlencoded".to_vec());
                }
            }
            20 => {
                let params = std::mem::take(req.params_mut());
                if matches!(req.body, Body::Form(_)) {
                    req.query = params;
                    req.body = Body::None;
                } else {
                    req.body = Body::Form(params);
                }
            }
            _ => {
                let b = rng.bytes(8).iter().map(|b| format!("%{b:02X}")).collect::<String>();
                req.query_raw.push_str(&format!("&{b}={b}"));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// the server, its clients and users, and the tokens the templates use

struct World {
    base: String,
    rp_secret: String,
    post_secret: String,
    /// Cookie values: a signed-in browser (alice) and a browser that is not signed in.
    session: String,
    browser: String,
    codes: Vec<String>,
    spa_codes: Vec<String>,
    login_challenges: Vec<String>,
    /// The passkey ceremony states of the same login pages.
    passkey_states: Vec<String>,
    consent_challenges: Vec<String>,
    access_token: String,
    id_token: String,
    refresh_tokens: Vec<String>,
    service_token: String,
    admin_user_ids: Vec<String>,
}

fn cookie_value(res: &reqwest::Response, name: &str) -> Option<String> {
    res.headers().get_all("set-cookie").iter().filter_map(|v| v.to_str().ok()).find_map(|v| {
        let (pair, _) = v.split_once(';').unwrap_or((v, ""));
        pair.strip_prefix(&format!("{name}=")).map(str::to_string)
    })
}

fn challenge_in(html: &str) -> String {
    let marker = "name=\"challenge\" value=\"";
    let start = html.find(marker).unwrap_or_else(|| panic!("no challenge in page: {html}")) + marker.len();
    html[start..].split('"').next().unwrap().to_string()
}

fn code_in(res: &reqwest::Response) -> String {
    let loc = res.headers().get("location").unwrap_or_else(|| panic!("no redirect: {}", res.status())).to_str().unwrap();
    let url = url::Url::parse(loc).unwrap();
    url.query_pairs().find(|(k, _)| k == "code").unwrap_or_else(|| panic!("no code in {loc}")).1.into_owned()
}

impl World {
    async fn build(s: &TestServer, http: &reqwest::Client) -> Self {
        let (_, rp_secret) = s
            .client(
                "rp",
                json!({
                    "grant_types": ["authorization_code", "refresh_token", "client_credentials", TOKEN_EXCHANGE, JWT_BEARER],
                    "scope": "openid profile email offline_access api:read",
                    "allowed_audiences": ["https://api.example"],
                    "allowed_resources": ["https://api.example/r"],
                    "token_exchange": {"delegation": true, "impersonation": true, "subject_token_types": [AT_TYPE, JWT_TYPE, ID_TOKEN_TYPE], "may_outlive_subject": false,
                                       "max_delegation_depth": 2, "id_jag_audiences": {"https://as.example": "rp-there"}}
                }),
            )
            .await;
        let (_, post_secret) = s.client("rp-post", json!({"token_endpoint_auth_method": "client_secret_post", "grant_types": ["authorization_code", "refresh_token"]})).await;
        s.client("spa", json!({"token_endpoint_auth_method": "none", "grant_types": ["authorization_code", "refresh_token"]})).await;
        let alice = s.user("alice", json!({"name": "Alice", "email": "alice@example.com"})).await;
        // An admin, so that the console's pages and handlers are reached, not only its door.
        assert_eq!(s.admin(Method::PATCH, &format!("/admin/users/{alice}"), Some(json!({"roles": ["admin"]}))).await.0, 200);
        let base = s.url("");
        let authorize = |client: &str, extra: &[(&str, &str)]| {
            let mut q = vec![("response_type", "code"), ("client_id", client), ("redirect_uri", REDIRECT), ("scope", "openid profile email offline_access"), ("state", "s")];
            q.extend_from_slice(extra);
            q.into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>()
        };

        // Sign in once: the browser cookie, the login page, the consent page, the session cookie.
        let res = http.get(s.url("/authorize")).query(&authorize("rp", &[])).send().await.unwrap();
        let browser = cookie_value(&res, "authrim_browser").expect("browser cookie");
        let challenge = challenge_in(&res.text().await.unwrap());
        let res = http
            .post(s.url("/login"))
            .header("cookie", format!("authrim_browser={browser}"))
            .form(&[("challenge", challenge.as_str()), ("username", "alice"), ("password", PASSWORD)])
            .send()
            .await
            .unwrap();
        let session = cookie_value(&res, "authrim_session").expect("session cookie");
        let session_cookie = format!("authrim_session={session}");
        // The login answers with a redirect to the consent page (a GET, so Back works).
        let to_consent = res.headers()["location"].to_str().unwrap().to_string();
        let res = http.get(format!("{base}{to_consent}")).header("cookie", &session_cookie).send().await.unwrap();
        let consent = challenge_in(&res.text().await.unwrap());
        let res = http.post(s.url("/consent")).header("cookie", &session_cookie).form(&[("challenge", consent.as_str()), ("decision", "allow")]).send().await.unwrap();
        let first_code = code_in(&res);

        let code = |client: &'static str, extra: Vec<(&'static str, &'static str)>| {
            let (http, q, cookie, base) = (http.clone(), authorize(client, &extra), session_cookie.clone(), base.clone());
            async move {
                let res = http.get(format!("{base}/authorize")).header("cookie", &cookie).query(&q).send().await.unwrap();
                if res.status() == 200 {
                    let c = challenge_in(&res.text().await.unwrap());
                    let res = http.post(format!("{base}/consent")).header("cookie", &cookie).form(&[("challenge", c.as_str()), ("decision", "allow")]).send().await.unwrap();
                    return code_in(&res);
                }
                code_in(&res)
            }
        };
        let mut codes = vec![first_code];
        for _ in 0..40 {
            codes.push(code("rp", vec![]).await);
        }
        let mut spa_codes = Vec::new();
        for _ in 0..15 {
            spa_codes.push(code("spa", vec![("code_challenge", CHALLENGE), ("code_challenge_method", "S256")]).await);
        }
        // Tokens: one code redeemed for the templates' access, ID and refresh tokens, more for refresh tokens.
        let redeem = |code: String| {
            let (http, base, secret) = (http.clone(), base.clone(), rp_secret.clone().unwrap());
            async move {
                let form = [("grant_type", "authorization_code"), ("code", code.as_str()), ("redirect_uri", REDIRECT)];
                let v: Value = http.post(format!("{base}/token")).basic_auth("rp", Some(&secret)).form(&form).send().await.unwrap().json().await.unwrap();
                assert!(v["access_token"].is_string(), "{v}");
                v
            }
        };
        let first = redeem(code("rp", vec![]).await).await;
        let mut refresh_tokens = Vec::new();
        for _ in 0..12 {
            let t = redeem(code("rp", vec![]).await).await;
            refresh_tokens.push(t["refresh_token"].as_str().unwrap().to_string());
        }
        let service: Value = http
            .post(s.url("/token"))
            .basic_auth("rp", rp_secret.as_deref())
            .form(&[("grant_type", "client_credentials"), ("scope", "api:read")])
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();

        // One-time form challenges for /login (bound to the browser cookie) and /consent (to the session).
        let mut login_challenges = Vec::new();
        let mut passkey_states = Vec::new();
        let mut consent_challenges = Vec::new();
        for _ in 0..40 {
            let res = http.get(s.url("/authorize")).header("cookie", format!("authrim_browser={browser}")).query(&authorize("rp", &[])).send().await.unwrap();
            let html = res.text().await.unwrap();
            let marker = "name=\"passkey_state\" value=\"";
            let state = html.find(marker).map(|i| html[i + marker.len()..].split('"').next().unwrap().to_string()).expect("passkeys are on");
            passkey_states.push(state);
            login_challenges.push(challenge_in(&html));
            let res = http.get(s.url("/authorize")).header("cookie", &session_cookie).query(&authorize("rp", &[("prompt", "consent")])).send().await.unwrap();
            consent_challenges.push(challenge_in(&res.text().await.unwrap()));
        }
        // Users for the admin API's paths (Argon2 per user: a few only).
        let mut admin_user_ids = Vec::new();
        for i in 0..3 {
            admin_user_ids.push(s.user(&format!("adm-user-{i}"), json!({})).await);
        }
        Self {
            base,
            rp_secret: rp_secret.unwrap(),
            post_secret: post_secret.unwrap(),
            session,
            browser,
            codes,
            spa_codes,
            login_challenges,
            passkey_states,
            consent_challenges,
            access_token: first["access_token"].as_str().unwrap().into(),
            id_token: first["id_token"].as_str().unwrap().into(),
            refresh_tokens,
            service_token: service["access_token"].as_str().expect("client credentials token").into(),
            admin_user_ids,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// templates: a valid request of each kind

fn authorize_params(w: &World, rng: &mut Rng) -> Vec<(&'static str, String)> {
    let mut p: Vec<(&'static str, String)> = vec![
        ("response_type", "code".into()),
        ("client_id", "rp".into()),
        ("redirect_uri", REDIRECT.into()),
        ("scope", "openid profile email".into()),
        ("state", "st".into()),
        ("nonce", "n".into()),
    ];
    if rng.chance(40) {
        p.push(("code_challenge", CHALLENGE.into()));
        p.push(("code_challenge_method", "S256".into()));
    }
    if rng.chance(30) {
        p.push(("prompt", rng.pick(&["none", "login", "consent", "select_account", "login consent"]).to_string()));
    }
    if rng.chance(20) {
        p.push(("max_age", rng.pick(&["0", "3600", "18446744073709551615"]).to_string()));
    }
    if rng.chance(25) {
        p.push(("claims", r#"{"userinfo":{"email":{"essential":true}},"id_token":{"name":null}}"#.into()));
    }
    if rng.chance(20) {
        p.push(("id_token_hint", w.id_token.clone()));
    }
    if rng.chance(15) {
        p.push(("login_hint", "alice".into()));
    }
    if rng.chance(10) {
        p[1] = ("client_id", "spa".into());
    }
    if rng.chance(6) {
        p[1] = ("client_id", rng.pick(DOCUMENT_IDS).to_string());
    }
    if rng.chance(15) {
        p.push(("resource", rng.pick(&[MCP, "https://api.example/r", "https://unknown.example/", "not a uri", "https://mcp.example/mcp#f"]).to_string()));
        if rng.chance(50) {
            p.push(("scope", "openid mcp:tools".into()));
        }
    }
    if rng.chance(15) {
        p.push(("response_mode", rng.pick(&["form_post", "query", "fragment", "jwt"]).to_string()));
    }
    if rng.chance(8) {
        // A request object we cannot verify (rp has no keys), or a request_uri not ours.
        let (k, v) = rng.pick(&[("request", "eyJhbGciOiJub25lIn0.eyJzY29wZSI6Im9wZW5pZCJ9."), ("request", "x.y.z"), ("request_uri", "urn:ietf:params:oauth:request_uri:1_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"), ("request_uri", "https://rp.example/r")]);
        p.push((k, v.to_string()));
    }
    p
}

fn as_pairs(p: &[(&'static str, String)]) -> Pairs {
    p.iter().map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec())).collect()
}

fn browser_cookies(w: &World, rng: &mut Rng, req: Req) -> Req {
    match rng.below(3) {
        0 => req.header("cookie", format!("authrim_session={}", w.session)),
        1 => req.header("cookie", format!("authrim_browser={}", w.browser)),
        _ => req,
    }
}

type Template = fn(&World, &mut Rng, usize) -> Req;

fn authorize_get(w: &World, rng: &mut Rng, _: usize) -> Req {
    let mut r = Req::new("authorize", Method::GET, "/authorize");
    r.query = as_pairs(&authorize_params(w, rng));
    browser_cookies(w, rng, r)
}

fn authorize_post(w: &World, rng: &mut Rng, _: usize) -> Req {
    let mut r = Req::new("authorize", Method::POST, "/authorize");
    r.body = Body::Form(as_pairs(&authorize_params(w, rng)));
    browser_cookies(w, rng, r)
}

fn login(w: &World, rng: &mut Rng, i: usize) -> Req {
    let challenge = w.login_challenges[i % w.login_challenges.len()].clone();
    let password = if rng.chance(50) { PASSWORD } else { "wrong password" };
    Req::new("login+consent", Method::POST, "/login")
        .form(&[("challenge", &challenge), ("username", "alice"), ("password", password)])
        .header("cookie", format!("authrim_browser={}", w.browser))
}

/// The second step of a sign-in, with a login form's challenge (the wrong kind of state) or
/// a made-up one, and codes of every shape.
fn second_factor(w: &World, rng: &mut Rng, i: usize) -> Req {
    let challenge = match rng.below(2) {
        0 => w.login_challenges[i % w.login_challenges.len()].clone(),
        _ => "bm90LWEtY2hhbGxlbmdl".to_string(),
    };
    let code = *rng.pick(&["123456", "ABCDE-FGHJK", "", "1234567890123", "\u{0}"]);
    Req::new("login+consent", Method::POST, "/login/second-factor")
        .form(&[("challenge", challenge.as_str()), ("code", code)])
        .header("cookie", format!("authrim_browser={}", w.browser))
}

/// A passwordless sign-in with the login page's ceremony state (or another kind's, or none)
/// and answers of every shape: not JSON, the wrong JSON, a credential that names nobody,
/// bytes that are not base64url, a huge id.
fn passkey_login(w: &World, rng: &mut Rng, i: usize) -> Req {
    let challenge = w.login_challenges[i % w.login_challenges.len()].clone();
    let state = match rng.below(3) {
        0 => w.passkey_states[i % w.passkey_states.len()].clone(),
        1 => challenge.clone(),
        _ => "bm90LWEtc3RhdGU".to_string(),
    };
    let huge = "A".repeat(5000);
    let assertion = json!({"id": "AAAA", "rawId": "AAAA", "type": "public-key", "extensions": {},
        "response": {"authenticatorData": "AAAA", "clientDataJSON": "e30", "signature": "AAAA", "userHandle": "AAAA"}})
    .to_string();
    let credential = match rng.below(6) {
        0 => String::new(),
        1 => "{}".into(),
        2 => "[1,2".into(),
        3 => assertion,
        4 => json!({"id": huge, "rawId": "!!", "type": "public-key", "response": {}}).to_string(),
        _ => "\u{0}".into(),
    };
    Req::new("passkeys+account", Method::POST, "/login/passkey")
        .form(&[("challenge", challenge.as_str()), ("passkey_state", state.as_str()), ("credential", credential.as_str())])
        .header("cookie", format!("authrim_browser={}", w.browser))
}

/// The account page's forms with the session cookie and no (or a forged) CSRF token, and
/// its callback with made-up codes and states.
fn account(w: &World, rng: &mut Rng, _: usize) -> Req {
    let path = *rng.pick(&["/account/passkeys/new", "/account/passkeys", "/account/totp/new", "/account/totp", "/account/recovery-codes", "/account/factors/remove"]);
    let csrf = *rng.pick(&["", "forged", "bm90LWEtc3RhdGU"]);
    match rng.below(3) {
        0 => Req::new("passkeys+account", Method::GET, "/account/callback")
            .query(&[("code", *rng.pick(&["", "0_abc", "x"])), ("state", *rng.pick(&["", "bm90", "%%"]))])
            .header("cookie", format!("authrim_browser={}; authrim_session={}", w.browser, w.session)),
        1 => Req::new("passkeys+account", Method::GET, "/account").header("cookie", format!("authrim_session={}", w.session)),
        _ => Req::new("passkeys+account", Method::POST, path)
            .form(&[("csrf", csrf), ("id", "totp_x"), ("code", "123456"), ("credential", "{}"), ("passkey_state", "x"), ("totp_state", "x")])
            .header("cookie", format!("authrim_session={}", w.session)),
    }
}

/// The admin console with alice's session (an admin; `console_mfa = if_enrolled`), a forged
/// one or none: its pages with odd ids and queries (organizations and admin credentials
/// too), its forms with no or a forged CSRF token (which must change nothing), its callback
/// with made-up codes.
fn console(w: &World, rng: &mut Rng, _: usize) -> Req {
    let g = "console";
    let id = *rng.pick(&["rp", "fz-missing", "%00", "a%2Fb", "..", "%E2%80%AEx", "%FF"]);
    let csrf = *rng.pick(&["", "forged", "bm90LWEtc3RhdGU"]);
    let form = [("csrf", csrf), ("client_id", "fz-console"), ("username", "fz-console"), ("password", "correct horse battery"), ("redirect_uris", "https://x.example/cb"), ("grant:authorization_code", "on"), ("method", "none"), ("alg", "RS256"), ("role:admin", "on"), ("sid", "x"), ("factor", "x"), ("slug", "fz-org"), ("user", "alice"), ("roles", "admin"), ("name", "fz"), ("confirm", "fz-org"), ("domains", "fz.example")];
    let odd = ["", "x", "0", "-1", "99999999999", "2026-02-30", "9999-12-31", "1970-01-01", "%00"];
    let (member, remove) = (format!("/members/{id}"), format!("/members/{id}/remove"));
    let mut r = match rng.below(10) {
        0 => Req::new(g, Method::GET, "/console"),
        1 => Req::new(g, Method::GET, "/console/audit").query(&[("event", *rng.pick(&["", "login_success", "'"])), ("since", *rng.pick(&odd)), ("limit", *rng.pick(&odd)), ("user", id), ("client", id)]),
        2 => Req::new(g, Method::GET, "/console/users").query(&[("q", *rng.pick(&["", "alice", "%", "\u{0}", "a b"]))]),
        3 => Req::new(g, Method::GET, &format!("/console/{}/{id}", rng.pick(&["clients", "users", "organizations"]))),
        4 => Req::new(g, Method::GET, "/console/callback").query(&[("code", *rng.pick(&["", "0_abc"])), ("state", *rng.pick(&["", "bm90", "%%"]))]),
        5 => Req::new(g, Method::GET, *rng.pick(&["/console/keys", "/console/clients/new", "/console/users/new", "/console/login", "/console/login?reauth=1", "/console/organizations", "/console/credentials"])),
        6 => Req::new(g, Method::POST, *rng.pick(&["/console/clients", "/console/users", "/console/keys/rotate", "/console/organizations", "/console/credentials"])).form(&form),
        7 => Req::new(g, Method::POST, &format!("/console/{}/{id}{}", rng.pick(&["organizations", "credentials"]), rng.pick(&["", "/delete", "/members", "/revoke", member.as_str(), remove.as_str()]))).form(&form),
        _ => Req::new(g, Method::POST, &format!("/console/{}/{id}{}", rng.pick(&["clients", "users"]), rng.pick(&["", "/secret", "/delete", "/sessions/end", "/factors/remove"]))).form(&form),
    };
    match rng.below(5) {
        0 => {}
        1 => r = r.header("cookie", "authrim_session=forged".to_string()),
        _ => r = r.header("cookie", format!("authrim_browser={}; authrim_session={}", w.browser, w.session)),
    }
    r
}

/// Sign-in with an upstream provider: the login page's button with real and forged
/// challenges and unknown providers; the callback with made-up states, codes, errors and
/// issuers (nothing may sign in, nothing may 500).
fn upstream(w: &World, rng: &mut Rng, i: usize) -> Req {
    let g = "passkeys+account";
    let challenge = match rng.below(3) {
        0 => w.login_challenges[i % w.login_challenges.len()].clone(),
        1 => "forged".to_string(),
        _ => String::new(),
    };
    let cookie = format!("authrim_browser={}", w.browser);
    match rng.below(2) {
        0 => Req::new(g, Method::POST, "/login/upstream").form(&[("challenge", challenge.as_str()), ("idp", *rng.pick(&["up", "", "../x", "%00"]))]).header("cookie", cookie),
        _ => Req::new(g, Method::GET, "/login/upstream/callback")
            .query(&[
                ("state", *rng.pick(&["", "bm90", challenge.as_str()])),
                ("code", *rng.pick(&["", "c", "%%"])),
                ("iss", *rng.pick(&["", "http://evil.example", "\u{0}"])),
                ("error", *rng.pick(&["", "access_denied"])),
            ])
            .header("cookie", cookie),
    }
}

/// The forgotten-password pages: requests naming anyone, forged form tokens, made-up and
/// oversized reset tokens, passwords that do not match or are too short (nothing may reset,
/// nothing may 500, and the request page never tells who exists).
fn reset(w: &World, rng: &mut Rng, _: usize) -> Req {
    let g = "passkeys+account";
    let cookie = format!("authrim_browser={}", w.browser);
    let token = *rng.pick(&["", "x", "bm90LWEtdG9rZW4", "%00", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"]);
    match rng.below(9) {
        4 => Req::new(g, Method::GET, *rng.pick(&["/signup", "/signup/verify", "/account/verify-email"])).query(&[("token", token)]).header("cookie", cookie),
        5 => Req::new(g, Method::POST, *rng.pick(&["/signup/verify", "/account/verify-email"])).form(&[("token", token)]).header("cookie", cookie),
        7 => Req::new(g, Method::POST, "/account/verify-email/send").form(&[("csrf", *rng.pick(&["", "forged"]))]).header("cookie", cookie),
        8 => Req::new(g, Method::GET, &format!("/login/upstream/{}/jwks", rng.pick(&["up", "x", "%ff", "..", "up%2f..%2fup"]))),
        6 => Req::new(g, Method::POST, "/signup")
            .form(&[
                ("form", *rng.pick(&["", "forged"])),
                ("username", *rng.pick(&["", "alice", "x@y", "\u{0}"])),
                ("email", *rng.pick(&["", "a@b.c", "@", "x"])),
                ("password", *rng.pick(&["", "long enough pass"])),
                ("confirm_password", "long enough pass"),
            ])
            .header("cookie", cookie),
        0 => Req::new(g, Method::GET, "/login/forgot").header("cookie", cookie),
        1 => Req::new(g, Method::POST, "/login/forgot").form(&[("form", *rng.pick(&["", "forged"])), ("login", *rng.pick(&["alice", "nobody", "", "%"]))]).header("cookie", cookie),
        2 => Req::new(g, Method::GET, "/login/reset").query(&[("token", token)]).header("cookie", cookie),
        _ => Req::new(g, Method::POST, "/login/reset")
            .form(&[("form", *rng.pick(&["", "forged"])), ("token", token), ("new_password", *rng.pick(&["", "short", "long enough pass"])), ("confirm_password", "long enough pass")])
            .header("cookie", cookie),
    }
}

/// The consent page a login redirects to (a GET carrying the sealed state).
fn consent_page(w: &World, _: &mut Rng, i: usize) -> Req {
    let challenge = w.consent_challenges[i % w.consent_challenges.len()].clone();
    Req::new("login+consent", Method::GET, "/consent")
        .query(&[("challenge", challenge.as_str())])
        .header("cookie", format!("authrim_session={}", w.session))
}

/// RP-initiated logout. Run last: a valid request ends the session the other groups use.
fn logout(w: &World, rng: &mut Rng, _: usize) -> Req {
    let mut p: Vec<(&str, String)> = Vec::new();
    if rng.chance(60) {
        p.push(("id_token_hint", w.id_token.clone()));
    }
    if rng.chance(40) {
        p.push(("client_id", rng.pick(&["rp", "spa", "nobody"]).to_string()));
    }
    if rng.chance(50) {
        p.push(("post_logout_redirect_uri", rng.pick(&[REDIRECT, "https://evil.example/", "javascript:alert(1)"]).to_string()));
    }
    if rng.chance(50) {
        p.push(("state", "st".into()));
    }
    if rng.chance(20) {
        p.push(("logout_hint", rng.pick(&["alice", "nobody"]).to_string()));
    }
    if rng.chance(10) {
        p.push(("ui_locales", "ja en".into()));
    }
    let pairs: Vec<(&str, &str)> = p.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let r = match rng.below(3) {
        0 => Req::new("logout", Method::POST, "/logout").form(&pairs),
        1 => Req::new("logout", Method::POST, "/logout/confirm").form(&[("challenge", "not-a-sealed-form")]),
        _ => Req::new("logout", Method::GET, "/logout").query(&pairs),
    };
    browser_cookies(w, rng, r)
}

fn consent(w: &World, rng: &mut Rng, i: usize) -> Req {
    let challenge = w.consent_challenges[i % w.consent_challenges.len()].clone();
    let decision = *rng.pick(&["allow", "deny"]);
    Req::new("login+consent", Method::POST, "/consent")
        .form(&[("challenge", &challenge), ("decision", decision)])
        .header("cookie", format!("authrim_session={}", w.session))
}

fn token_code(w: &World, rng: &mut Rng, i: usize) -> Req {
    let r = Req::new("token", Method::POST, "/token");
    if rng.chance(25) {
        let code = w.spa_codes[i % w.spa_codes.len()].clone();
        return r.form(&[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT), ("client_id", "spa"), ("code_verifier", VERIFIER)]);
    }
    let code = w.codes[i % w.codes.len()].clone();
    let mut form = vec![("grant_type", "authorization_code"), ("code", code.as_str()), ("redirect_uri", REDIRECT)];
    if rng.chance(15) {
        form.push(("resource", *rng.pick(&[MCP, "https://other.example/", "::"])));
    }
    r.form(&form).basic("rp", &w.rp_secret)
}

fn token_refresh(w: &World, rng: &mut Rng, i: usize) -> Req {
    let t = w.refresh_tokens[i % w.refresh_tokens.len()].clone();
    let r = Req::new("token", Method::POST, "/token");
    if rng.chance(20) {
        return r.form(&[("grant_type", "refresh_token"), ("refresh_token", &t), ("client_id", "rp-post"), ("client_secret", &w.post_secret)]);
    }
    let scope = *rng.pick(&["openid", "openid profile", "openid offline_access", "everything"]);
    let mut form = vec![("grant_type", "refresh_token"), ("refresh_token", t.as_str()), ("scope", scope)];
    if rng.chance(15) {
        form.push(("resource", *rng.pick(&[MCP, "https://other.example/"])));
    }
    r.form(&form).basic("rp", &w.rp_secret)
}

/// Identity assertions at the jwt-bearer grant (none of them from a trusted issuer's key),
/// and token exchange to an ID-JAG; a document client authenticating.
fn token_agents(w: &World, rng: &mut Rng, _: usize) -> Req {
    let r = Req::new("token", Method::POST, "/token");
    match rng.below(3) {
        0 => {
            let forged_typ = format!(
                "{}.{}.c2ln",
                URL_SAFE_NO_PAD.encode(br#"{"alg":"RS256","typ":"oauth-id-jag+jwt","kid":"k"}"#),
                URL_SAFE_NO_PAD.encode(br#"{"iss":"https://idp.invalid","sub":"alice","aud":"x","client_id":"rp","jti":"j","exp":99999999999,"iat":1}"#)
            );
            let assertion = match rng.below(4) {
                0 => forged_typ,
                1 => w.id_token.clone(),
                2 => w.access_token.clone(),
                _ => "a.b.c".into(),
            };
            r.form(&[("grant_type", JWT_BEARER), ("assertion", &assertion), ("scope", "api:read")]).basic("rp", &w.rp_secret)
        }
        1 => {
            let audience = *rng.pick(&["https://as.example", "https://elsewhere.example", ""]);
            r.form(&[
                ("grant_type", TOKEN_EXCHANGE),
                ("requested_token_type", ID_JAG_TYPE),
                ("audience", audience),
                ("subject_token", w.id_token.as_str()),
                ("subject_token_type", ID_TOKEN_TYPE),
                ("resource", MCP),
            ])
            .basic("rp", &w.rp_secret)
        }
        _ => {
            let id = *rng.pick(DOCUMENT_IDS);
            r.form(&[("grant_type", "authorization_code"), ("code", "x"), ("redirect_uri", REDIRECT), ("client_id", id), ("code_verifier", VERIFIER)])
        }
    }
}

fn token_client_credentials(w: &World, rng: &mut Rng, _: usize) -> Req {
    let mut form = vec![("grant_type", "client_credentials"), ("scope", "api:read")];
    if rng.chance(30) {
        form.push(("audience", "https://api.example"));
    }
    if rng.chance(30) {
        form.push(("resource", "https://api.example/r"));
    }
    Req::new("token", Method::POST, "/token").form(&form).basic("rp", &w.rp_secret)
}

/// A pushed authorization request: the authorization parameters, authenticated as rp, or
/// with a made-up client assertion.
fn par(w: &World, rng: &mut Rng, _: usize) -> Req {
    let pairs = authorize_params(w, rng);
    let mut form: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let assertion = "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJycCIsInN1YiI6InJwIn0.c2ln";
    if rng.chance(20) {
        form.extend([("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"), ("client_assertion", assertion)]);
        return Req::new("par+register", Method::POST, "/par").form(&form);
    }
    Req::new("par+register", Method::POST, "/par").form(&form).basic("rp", &w.rp_secret)
}

/// Dynamic registration (open in this world) and the configuration endpoint.
fn register(_: &World, rng: &mut Rng, i: usize) -> Req {
    match rng.below(4) {
        0 => Req::new("par+register", Method::GET, &format!("/register/client_{i}")).header("authorization", "Bearer not-a-token".to_string()),
        1 => Req::new("par+register", Method::DELETE, "/register/rp").header("authorization", "Bearer x".to_string()),
        2 => Req::new("par+register", Method::PUT, "/register/rp").json(json!({"client_id": "rp", "redirect_uris": [REDIRECT]})),
        _ => {
            let mut body = json!({"redirect_uris": [REDIRECT], "client_name": format!("fuzz {i}")});
            if rng.chance(30) {
                body["token_endpoint_auth_method"] = json!(rng.pick(&["none", "private_key_jwt", "client_secret_jwt", "bogus"]));
            }
            if rng.chance(30) {
                body["grant_types"] = json!(rng.pick(&[vec!["authorization_code", "refresh_token"], vec!["client_credentials"], vec![]]));
            }
            if rng.chance(20) {
                body["jwks"] = json!({"keys": [{"kty": "EC", "crv": "P-256", "x": "x", "y": "y"}]});
            }
            Req::new("par+register", Method::POST, "/register").json(body)
        }
    }
}

fn token_exchange(w: &World, rng: &mut Rng, _: usize) -> Req {
    let mut form = vec![
        ("grant_type", TOKEN_EXCHANGE),
        ("subject_token", w.access_token.as_str()),
        ("subject_token_type", AT_TYPE),
        ("scope", "openid"),
    ];
    if rng.chance(40) {
        form.extend([("actor_token", w.service_token.as_str()), ("actor_token_type", AT_TYPE)]);
    }
    if rng.chance(30) {
        form.push(("requested_token_type", JWT_TYPE));
    }
    if rng.chance(30) {
        form.push(("audience", "https://api.example"));
    }
    Req::new("token", Method::POST, "/token").form(&form).basic("rp", &w.rp_secret)
}

fn token_other(w: &World, rng: &mut Rng, _: usize) -> Req {
    let g = *rng.pick(&["password", "implicit", "urn:ietf:params:oauth:grant-type:device_code", "", "authorization_code "]);
    Req::new("token", Method::POST, "/token").form(&[("grant_type", g), ("username", "alice"), ("password", PASSWORD)]).basic("rp", &w.rp_secret)
}

fn any_token(w: &World, rng: &mut Rng, i: usize) -> String {
    match rng.below(5) {
        0 => w.refresh_tokens[i % w.refresh_tokens.len()].clone(),
        1 => w.service_token.clone(),
        2 => w.id_token.clone(),
        3 => "opaque-garbage".into(),
        _ => w.access_token.clone(),
    }
}

fn revoke(w: &World, rng: &mut Rng, i: usize) -> Req {
    let t = any_token(w, rng, i);
    let hint = *rng.pick(&["access_token", "refresh_token", "id_token", ""]);
    let r = Req::new("revoke+introspect", Method::POST, "/revoke").form(&[("token", &t), ("token_type_hint", hint)]);
    if rng.chance(20) { r.basic("rp-post", &w.post_secret) } else { r.basic("rp", &w.rp_secret) }
}

fn introspect(w: &World, rng: &mut Rng, i: usize) -> Req {
    let t = any_token(w, rng, i);
    let hint = *rng.pick(&["access_token", "refresh_token", ""]);
    let r = Req::new("revoke+introspect", Method::POST, "/introspect").form(&[("token", &t), ("token_type_hint", hint)]);
    if rng.chance(15) { r.form(&[("token", &t), ("client_id", "spa")]) } else { r.basic("rp", &w.rp_secret) }
}

fn userinfo(w: &World, rng: &mut Rng, _: usize) -> Req {
    let token = if rng.chance(80) { w.access_token.clone() } else { w.service_token.clone() };
    match rng.below(3) {
        0 => Req::new("userinfo", Method::GET, "/userinfo").bearer(&token),
        1 => Req::new("userinfo", Method::POST, "/userinfo").bearer(&token),
        _ => Req::new("userinfo", Method::POST, "/userinfo").form(&[("access_token", &token)]),
    }
}

fn discovery(_: &World, rng: &mut Rng, _: usize) -> Req {
    let path = *rng.pick(&["/.well-known/openid-configuration", "/.well-known/oauth-authorization-server", "/jwks", "/healthz"]);
    Req::new("discovery+other", Method::GET, path)
}

fn unknown(w: &World, rng: &mut Rng, _: usize) -> Req {
    let path = match rng.below(6) {
        0 => "/".to_string(),
        1 => "/.well-known/".to_string(),
        2 => format!("/{}", rng.pick(&["token2", "oauth/token", "admin", "test/bulk/clients", "demo/callback", "favicon.ico"])),
        3 => format!("/{}", "a/".repeat(rng.below(200))),
        4 => "/%ff%fe/%00".to_string(),
        _ => format!("/{}", rng.bytes(6).iter().map(|b| format!("%{b:02x}")).collect::<String>()),
    };
    let method = Method::from_bytes(rng.pick(METHODS).as_bytes()).unwrap();
    Req::new("discovery+other", method, &path).bearer(&w.access_token)
}

/// Routes added after the groups above were written (issue 30): the account page's profile,
/// password and linked-account forms, the upstream logout return, the admin API's factor,
/// recovery-code and registration-token routes, the OpenAPI document, path-inserted metadata,
/// assets; and any method, or an odd path, at a browser route (a page, never JSON).
fn newer_routes(w: &World, rng: &mut Rng, _: usize) -> Req {
    const G: &str = "newer routes";
    let user = w.admin_user_ids.first().map(String::as_str).unwrap_or("nobody");
    let csrf = *rng.pick(&["", "forged", "bm90LWEtc3RhdGU"]);
    let session = format!("authrim_session={}", w.session);
    match rng.below(9) {
        0 => {
            let path = *rng.pick(&["/account/profile", "/account/password", "/account/links/new", "/account/links/remove"]);
            let form = [("csrf", csrf), ("name", "Zoë"), ("email", *rng.pick(&["a@example.com", "not an address", ""])), ("current_password", PASSWORD), ("new_password", "x"), ("provider", *rng.pick(&["", "nope", "%00"])), ("locale", "ja")];
            Req::new(G, Method::POST, path).form(&form).header("cookie", session)
        }
        1 => Req::new(G, Method::GET, *rng.pick(&["/account/profile", "/account/password", "/logout/upstream"]))
            .query(&[("state", *rng.pick(&["", "bm90", "%%"]))])
            .header("cookie", session),
        2 => {
            let path = match rng.below(4) {
                0 => format!("/admin/users/{user}/factors"),
                1 => format!("/admin/users/{user}/factors/totp"),
                2 => format!("/admin/users/{user}/recovery-codes"),
                _ => format!("/admin/users/{user}/factors/{}", rng.pick(&["totp_x", "%00", "x"])),
            };
            let method = rng.pick(&[Method::GET, Method::POST, Method::DELETE]).clone();
            let r = Req::new(G, method, &path).json(json!({"secret": rng.pick(&["", "JBSWY3DPEHPK3PXP", "!"]), "label": "x"}));
            if rng.below(4) == 0 { r } else { r.bearer(ADMIN) }
        }
        3 => {
            let method = rng.pick(&[Method::GET, Method::POST, Method::DELETE]).clone();
            let r = Req::new(G, method, "/admin/registration-tokens").json(json!({"expires_in": rng.pick(&[json!(60), json!(-1), json!("x")])}));
            if rng.below(4) == 0 { r } else { r.bearer(ADMIN) }
        }
        6 => {
            // The SCIM service: with and without a credential, odd filters, paths and bodies.
            let path = match rng.below(7) {
                0 => format!("/scim/v2/Groups?{}", rng.pick(&["filter=displayName%20eq", "filter=members%5Bvalue%20eq%20%22x%22%5D", "sortOrder=x", "count=-5&startIndex=0", "attributes=%00", "filter=(((((("])),
                1 => format!("/scim/v2/Groups/{}", rng.pick(&["grp_x", "%00", "x/y"])),
                2 => rng.pick(&["/scim/v2/ServiceProviderConfig", "/scim/v2/Schemas/urn:x", "/scim/v2/ResourceTypes/User", "/scim/v2/Users", "/scim/v2/nothing", "/scim/v2/.search", "/scim/v2/Users/.search"]).to_string(),
                3 => format!("/scim/v2/Users?{}", rng.pick(&["filter=userName%20eq%20%22%00%22", "sortBy=urn:x:y", "attributes=urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:", "excludedAttributes=name.", "filter=emails%5Btype%20eq%5D"])),
                4 => format!("/scim/v2/Users/{}", rng.pick(&["nobody", "%00", "x/y"])),
                _ => "/scim/v2/Groups".into(),
            };
            let method = rng.pick(&[Method::GET, Method::POST, Method::PUT, Method::PATCH, Method::DELETE]).clone();
            let body = rng.pick(&[
                json!({"displayName": "F", "members": [{"value": "nobody"}]}),
                json!({"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": [{"op": "remove", "path": "members[value eq"}]}),
                json!({"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": [{"op": "x"}]}),
                json!({"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": [{"op": "add", "path": "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User", "value": 3}]}),
                json!({"userName": "\u{0}", "emails": [{"value": 1}], "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {"manager": [1]}}),
                json!({"userName": "f", "password": "x", "active": "maybe", "name": {"givenName": {}}}),
                json!({"schemas": ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"], "count": "x", "attributes": [1]}),
                json!("x"),
            ]).clone();
            let r = Req::new(G, method, &path).json(body);
            if rng.below(4) == 0 { r } else { r.bearer(ADMIN) }
        }
        4 => Req::new(G, Method::GET, *rng.pick(&["/admin/openapi.json", "/assets/style.css", "/assets/nope.css", "/assets/%2e%2e%2fsecret", "/.well-known/oauth-authorization-server/x/y", "/.well-known/openid-configuration/x/y"])),
        5 => {
            // Any method at a browser route.
            let path = *rng.pick(&["/", "/authorize", "/login", "/login/second-factor", "/login/passkey", "/login/select", "/login/upstream", "/login/forgot", "/login/reset", "/signup", "/signup/verify", "/consent", "/logout", "/logout/confirm", "/account", "/account/profile", "/console", "/console/users"]);
            let method = Method::from_bytes(rng.pick(METHODS).as_bytes()).unwrap();
            Req::new(G, method, path).header("cookie", session)
        }
        _ => {
            // Odd paths under the browser areas.
            let area = *rng.pick(&["/account", "/console", "/console/users", "/console/clients"]);
            let tail = rng.pick(&["%FF", "%00", "x/y/z", "..%2f..", "%C3%28", "a b"]).to_string();
            Req::new(G, Method::GET, &format!("{area}/{tail}")).header("cookie", session)
        }
    }
}

fn client_body(rng: &mut Rng, i: usize) -> Value {
    let mut b = json!({
        "client_id": format!("adm-{}", i % 7),
        "client_name": "Fuzzed",
        "redirect_uris": [REDIRECT, "com.example.app:/cb"],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": rng.pick(&["client_secret_basic", "client_secret_post", "none"]).to_string(),
        "scope": "openid profile",
    });
    if rng.chance(20) {
        b["post_logout_redirect_uris"] = json!([rng.pick(&["https://rp.example/bye", "http://not-loopback.example/", "x"])]);
        b["backchannel_logout_uri"] = json!(rng.pick(&["https://rp.example/bc", "", "https://rp.example/bc#f"]));
        b["frontchannel_logout_uri"] = json!(rng.pick(&["https://rp.example/fc?x=1", "ftp://rp.example/"]));
    }
    if rng.chance(30) {
        b["allowed_audiences"] = json!(["https://api.example"]);
        b["allowed_resources"] = json!(["https://api.example/r"]);
        b["token_exchange"] = json!({"delegation": true, "impersonation": false, "subject_token_types": [AT_TYPE], "may_outlive_subject": false});
        b["grant_types"] = json!(["client_credentials", TOKEN_EXCHANGE]);
        b["token_endpoint_auth_method"] = json!("client_secret_basic");
    }
    b
}

fn user_body(rng: &mut Rng, i: usize) -> Value {
    // Mostly a password too short to be hashed: Argon2 is slow on purpose.
    let password = if rng.chance(5) { "long enough password" } else { "short" };
    json!({
        "username": format!("fz-user-{}", i % 11),
        "password": password,
        "disabled": rng.chance(20),
        "claims": {"name": "Fuzzed", "email": format!("fz{}@example.com", i % 13), "email_verified": true, "address": {"country": "JP"}},
    })
}

fn admin(w: &World, rng: &mut Rng, i: usize) -> Req {
    let client_id = format!("adm-{}", rng.below(8));
    let user_id = w.admin_user_ids[rng.below(w.admin_user_ids.len())].clone();
    let g = "admin";
    let mut r = match rng.below(17) {
        0 => Req::new(g, Method::GET, "/admin/clients"),
        1 | 2 => Req::new(g, Method::POST, "/admin/clients").json(client_body(rng, i)),
        3 => Req::new(g, Method::GET, &format!("/admin/clients/{client_id}")),
        4 => Req::new(g, rng.pick(&[Method::PATCH, Method::PUT]).clone(), &format!("/admin/clients/{client_id}")).json(client_body(rng, i)),
        5 => Req::new(g, Method::DELETE, &format!("/admin/clients/{client_id}")),
        6 => Req::new(g, Method::POST, &format!("/admin/clients/{client_id}/secret")),
        7 => Req::new(g, Method::GET, "/admin/users"),
        8 | 9 => Req::new(g, Method::POST, "/admin/users").json(user_body(rng, i)),
        10 => Req::new(g, Method::GET, &format!("/admin/users/{user_id}")),
        11 => {
            let mut body = user_body(rng, i);
            body.as_object_mut().unwrap().remove("password");
            body.as_object_mut().unwrap().remove("username");
            Req::new(g, rng.pick(&[Method::PATCH, Method::PUT]).clone(), &format!("/admin/users/{user_id}")).json(body)
        }
        12 => Req::new(g, Method::DELETE, &format!("/admin/users/fz-missing-{}", rng.below(3))),
        13 => Req::new(g, Method::GET, &format!("/admin/users/{user_id}/sessions")),
        14 => Req::new(g, Method::DELETE, &format!("/admin/users/{user_id}/sessions/{}", rng.pick(&["x", "%00", "a/b"]))),
        15 => Req::new(g, Method::DELETE, &format!("/admin/users/{user_id}/consents/{client_id}")),
        _ => Req::new(g, Method::GET, "/admin/audit").query(&[("limit", "5"), ("event", "login_success")]),
    };
    match rng.below(10) {
        0 => {}
        1 => r = r.bearer("wrong-admin-token"),
        2 => r = r.bearer(&format!("{ADMIN} ")),
        _ => r = r.bearer(ADMIN),
    }
    r
}

/// SAML's endpoints (issue 33): messages that are base64 of nothing, of DEFLATE or not, of
/// XML that is no SAML, of an AuthnRequest from nobody, with a DTD, or too large; bindings
/// mixed up; RelayState and signatures of every kind. Answers are pages (or the metadata).
fn saml(w: &World, rng: &mut Rng, _: usize) -> Req {
    use base64::Engine as _;
    let b64 = |x: &[u8]| base64::engine::general_purpose::STANDARD.encode(x);
    let deflate = |x: &[u8]| {
        use std::io::Write as _;
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(x).unwrap();
        e.finish().unwrap()
    };
    let xml = match rng.below(6) {
        0 => r#"<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_f" Version="2.0" IssueInstant="2026-01-01T00:00:00Z"><saml:Issuer>https://nobody.example</saml:Issuer></samlp:AuthnRequest>"#.to_string(),
        1 => r#"<!DOCTYPE x [<!ENTITY a "aaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]><x>&b;</x>"#.to_string(),
        2 => format!("<a>{}</a>", "<b>".repeat(200)),
        3 => r#"<samlp:LogoutRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_l" Version="2.0" IssueInstant="2026-01-01T00:00:00Z"/>"#.to_string(),
        // Large, but within what a URL can carry (the client refuses to send one past 64 KB).
        4 => "x".repeat(rng.below(30_000)),
        _ => String::from_utf8_lossy(&[0xff, 0xfe, b'<', 0]).into_owned(),
    };
    let message = match rng.below(4) {
        0 => b64(&deflate(xml.as_bytes())),
        1 => b64(xml.as_bytes()),
        2 => "%%%not base64".into(),
        _ => b64(&deflate(&[0u8; 5000])),
    };
    let name = *rng.pick(&["SAMLRequest", "SAMLResponse", "samlrequest"]);
    let mut p: Vec<(&str, String)> = vec![(name, message)];
    if rng.chance(50) {
        p.push(("RelayState", rng.pick(&["rs", "", "https://evil.example/"]).to_string()));
    }
    if rng.chance(30) {
        p.push(("SigAlg", rng.pick(&["http://www.w3.org/2000/09/xmldsig#rsa-sha1", "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256", "x"]).to_string()));
        p.push(("Signature", rng.pick(&["AAAA", "", "%"]).to_string()));
    }
    if rng.chance(10) {
        p.push(("authrim_reposted", "1".into()));
    }
    let pairs: Vec<(&str, &str)> = p.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let path = *rng.pick(&["/saml/sso", "/saml/slo", "/saml/acs"]);
    let r = match rng.below(7) {
        0 | 1 => Req::new("saml", Method::GET, path).query(&pairs),
        2 | 3 => Req::new("saml", Method::POST, path).form(&pairs),
        4 => Req::new("saml", Method::GET, *rng.pick(&["/saml/start/rp", "/saml/start/%00", "/saml/start/"])),
        // Our page posting a sealed Single Logout message: nothing sealed here is ours.
        5 => Req::new("saml", rng.pick(&[Method::GET, Method::POST]).clone(), "/saml/slo/post")
            .query(&[("m", rng.pick(&["", "AAAA", "x.y.z", "%00", &"A".repeat(5000)]).to_string().as_str())]),
        _ => Req::new("saml", Method::PUT, path).form(&pairs),
    };
    browser_cookies(w, rng, r)
}

/// (group name, templates, requests).
fn groups() -> Vec<(&'static str, Vec<Template>, usize)> {
    vec![
        ("authorize", vec![authorize_get, authorize_post], 1_500),
        ("login+consent", vec![login, consent, consent_page, second_factor], 1_400),
        ("passkeys+account", vec![passkey_login, account, upstream, reset], 800),
        ("console", vec![console], 600),
        ("token", vec![token_code, token_refresh, token_client_credentials, token_exchange, token_other, token_agents], 2_700),
        ("userinfo", vec![userinfo], 1_000),
        ("revoke+introspect", vec![introspect, revoke], 1_500),
        ("discovery+other", vec![discovery, unknown], 1_000),
        ("admin", vec![admin], 1_500),
        ("par+register", vec![par, register], 800),
        ("logout", vec![logout], 600),
        ("newer routes", vec![newer_routes], 800),
        ("saml", vec![saml], 600),
    ]
}

// ---------------------------------------------------------------------------------------------
// running and judging

struct Outcome {
    status: u16,
    content_type: Option<String>,
    location: Option<String>,
    body: Vec<u8>,
}

async fn send(http: &reqwest::Client, base: &str, req: &Req) -> Result<Outcome, String> {
    let mut rb = http.request(req.method.clone(), req.url(base));
    if let Some(ct) = req.content_type() {
        rb = rb.header("content-type", reqwest::header::HeaderValue::from_bytes(&ct).map_err(|e| format!("content type: {e}"))?);
    }
    for (k, v) in &req.headers {
        rb = rb.header(*k, reqwest::header::HeaderValue::from_bytes(v).map_err(|e| format!("header {k}: {e}"))?);
    }
    if let Some(b) = req.body_bytes() {
        rb = rb.body(b);
    }
    let res = rb.send().await.map_err(|e| format!("no response: {e:?}"))?;
    let status = res.status().as_u16();
    let header = |n: &str| res.headers().get(n).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let (content_type, location) = (header("content-type"), header("location"));
    let body = res.bytes().await.map_err(|e| format!("body not read: {e:?}"))?.to_vec();
    Ok(Outcome { status, content_type, location, body })
}

/// A transport error on a pooled connection can be the client's: the server may close a kept-alive
/// connection (after refusing an oversized body) just as the client reuses it. So a request
/// without an answer is sent again on a fresh connection, and only a second silence counts.
/// The server may also close the connection while an oversized body is still being sent
/// (RFC 9110 §15.5.14): for those bodies a closed connection is an answer (status 0).
async fn send_twice(http: &reqwest::Client, fresh: &reqwest::Client, base: &str, req: &Req, max_body: usize) -> Result<Outcome, String> {
    match send(http, base, req).await {
        Err(e) if e.starts_with("no response") || e.starts_with("body not read") => match send(fresh, base, req).await {
            Err(_) if req.body_bytes().is_some_and(|b| b.len() > max_body) => {
                Ok(Outcome { status: 0, content_type: None, location: None, body: Vec::new() })
            }
            Err(again) => Err(format!("{e}; again on a fresh connection: {again}")),
            ok => ok,
        },
        other => other,
    }
}

/// What is wrong with this response to this request, if anything.
fn judge(req: &Req, o: &Outcome) -> Option<String> {
    if o.status == 0 {
        return None; // the connection closed on an oversized body (see `send_twice`)
    }
    // The one 5xx a client may cause on purpose: naming the configured upstream provider
    // that cannot be reached gets its "cannot be reached" page (502, RFC 9110 §15.6.3).
    let upstream_down = o.status == 502 && req.path == "/login/upstream" && o.body.starts_with(b"<!doctype html>");
    if o.status >= 500 && !upstream_down {
        return Some(format!("{} (a 5xx)", o.status));
    }
    let ct = o.content_type.as_deref().unwrap_or("");
    let essence = ct.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    let head = req.method == Method::HEAD;
    let json_error = || -> Option<String> {
        if essence != "application/json" {
            return Some(format!("{} error with content type {ct:?}, not application/json", o.status));
        }
        if head {
            return None;
        }
        // RFC 6749 §5.2: error_description in %x20-21 / %x23-5B / %x5D-7E (issue 34).
        let allowed = |c: char| matches!(c, '\x20'..='\x21' | '\x23'..='\x5b' | '\x5d'..='\x7e');
        match serde_json::from_slice::<Value>(&o.body) {
            Ok(v) if v["error_description"].as_str().is_some_and(|d| !d.chars().all(allowed)) => {
                Some(format!("{} error_description outside RFC 6749's character set: {v}", o.status))
            }
            Ok(v) if v["error"].is_string() => None,
            Ok(v) => Some(format!("{} error JSON without an \"error\" string: {v}", o.status)),
            Err(_) => Some(format!("{} error body is not JSON", o.status)),
        }
    };
    // The SCIM service's refusals are SCIM errors (RFC 7644 §3.12), not OAuth ones.
    if req.path.starts_with("/scim/") && o.status >= 400 && o.status != 304 {
        if essence != "application/scim+json" {
            return Some(format!("{} SCIM error with content type {ct:?}", o.status));
        }
        return match serde_json::from_slice::<Value>(&o.body) {
            _ if head => None,
            Ok(v) if v["schemas"][0] == "urn:ietf:params:scim:api:messages:2.0:Error" && v["status"] == o.status.to_string() => None,
            Ok(v) => Some(format!("{} not a SCIM error: {v}", o.status)),
            Err(_) => Some(format!("{} SCIM error body is not JSON", o.status)),
        };
    }
    if is_browser(&req.path) {
        if (300..400).contains(&o.status) {
            let loc = o.location.as_deref().unwrap_or("");
            // Our own pages: the consent page after a login, the account page and the console,
            // and their sign-in as first-party clients (relative references: RFC 9110 §10.2.2).
            // A trailing slash under the account page or the console leads to the page without it
            // (with the request's query, if it had one).
            let unslashed = o.status == 308 && loc.split_once('?').map_or(loc, |(p, _)| p) == req.path.trim_end_matches('/');
            if unslashed || loc.starts_with("/consent?challenge=") || loc == "/account" || loc == "/account/login" || loc.starts_with("/console") || loc.starts_with("/authorize?response_type=code&client_id=authrim-") {
                return None;
            }
            return match url::Url::parse(loc) {
                Ok(u) if u.as_str().starts_with(REDIRECT) || u.scheme() == "com.example.app" => None,
                Ok(u) => Some(format!("{} redirect to an unregistered URI {u}", o.status)),
                Err(e) => Some(format!("{} redirect without a valid Location ({loc:?}: {e})", o.status)),
            };
        }
        // A browser route answers a page whatever went wrong (issue 30: an odd method or path
        // there answered JSON).
        if essence != "text/html" {
            return Some(format!("{} page with content type {ct:?}, not text/html", o.status));
        }
        if !head && !o.body.starts_with(b"<!doctype html>") {
            return Some(format!("{} page that is not an HTML document", o.status));
        }
        return None;
    }
    if o.status >= 400 {
        return json_error();
    }
    // Successes of API endpoints: JSON, or nothing at all (revocation, deletion); the pages'
    // assets are what they are.
    if req.path.starts_with("/assets/") {
        return None;
    }
    let json_like = essence == "application/json" || essence == "application/jwk-set+json" || essence == "application/scim+json";
    if !o.body.is_empty() && !json_like && !head {
        return Some(format!("{} success with content type {ct:?}", o.status));
    }
    None
}

#[derive(Default)]
struct Report {
    /// Requests per path: GET, POST, any other method.
    per_endpoint: BTreeMap<String, [usize; 3]>,
    statuses: BTreeMap<&'static str, BTreeMap<u16, usize>>,
    /// (group, endpoint, problem) → (count, first request, its answer).
    failures: BTreeMap<(String, String, String), (usize, String, String)>,
}

impl Report {
    fn failure(&mut self, key: (String, String, String), request: String, answer: String) {
        let e = self.failures.entry(key).or_insert((0, request, answer));
        e.0 += 1;
    }
}

async fn healthy(http: &reqwest::Client, base: &str) -> bool {
    http.get(format!("{base}/healthz")).send().await.is_ok_and(|r| r.status() == 200)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_endpoint_survives_generated_requests() {
    // As in src/fuzzing/tests.rs: 0x… is hexadecimal, anything else decimal.
    let seed = std::env::var("AUTHRIM_FUZZ_SEED")
        .ok()
        .and_then(|v| match v.trim().strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => v.trim().parse().ok(),
        })
        .unwrap_or(DEFAULT_SEED);
    eprintln!("endpoint fuzz: seed {seed:#x} (AUTHRIM_FUZZ_SEED={seed:#x} replays it)");
    let started = Instant::now();
    let s = TestServer::start_with(|c| {
        c.webauthn_rp_id = Some("localhost".into());
        c.console_mfa = "if_enrolled".into();
        // Mail to nowhere (the discard port): the reset pages are reached; their mail waits.
        c.smtp_url = Some("smtp://127.0.0.1:9".into());
        c.signup = true;
        // An upstream provider that cannot be reached (the discard port): its button leads to
        // the "cannot be reached" page, not to a hang or a 500.
        c.identity_providers = vec![toml::from_str("id = \"up\"\nname = \"Up\"\nissuer = \"http://127.0.0.1:9\"\nclient_id = \"c\"\nclient_secret = \"s\"").unwrap()];
        c.webauthn_origins = Some("http://localhost:4000".into());
        c.open_registration = true;
        c.client_id_metadata_documents = "any".into();
        c.fetch_timeout = 1;
        c.resource_servers = vec![authrim::config::agents::ResourceServer {
            uri: MCP.into(),
            name: "MCP".into(),
            scopes: [("mcp:tools".to_string(), "tools".to_string())].into(),
            client_id: None,
            refresh_tokens: None,
        }];
        c.trusted_issuers = vec![authrim::config::agents::TrustedIssuer {
            issuer: "https://idp.invalid".into(),
            jwks_uri: None,
            ..Default::default()
        }];
    })
    .await;
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(20))
        .pool_max_idle_per_host(CONCURRENCY)
        .build()
        .unwrap();
    let fresh = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(20))
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let max_body = s.server.app.config.max_body_bytes;
    let world = Arc::new(World::build(&s, &http).await);
    eprintln!("endpoint fuzz: set up in {:.1}s", started.elapsed().as_secs_f64());
    let base = world.base.clone();
    let mut rng = Rng(seed);
    let mut report = Report::default();
    let mut total = 0;
    let mut unsendable = 0;

    for (group, templates, count) in groups() {
        let group_started = Instant::now();
        let mut requests = Vec::with_capacity(count);
        for i in 0..count {
            let template = templates[i % templates.len()];
            let mut req = template(&world, &mut rng, i / templates.len());
            // One in ten goes out as made: the valid paths must stay valid under fuzzing too.
            if !rng.chance(10) {
                mutate(&mut rng, &mut req, &world.access_token);
            }
            requests.push(req);
        }
        let requests = Arc::new(requests);
        let mut set = tokio::task::JoinSet::new();
        let mut next = 0;
        let mut results = Vec::with_capacity(count);
        while next < count || !set.is_empty() {
            while next < count && set.len() < CONCURRENCY {
                let (http, fresh, base, requests) = (http.clone(), fresh.clone(), base.clone(), requests.clone());
                let i = next;
                set.spawn(async move { (i, send_twice(&http, &fresh, &base, &requests[i], max_body).await) });
                next += 1;
            }
            if let Some(done) = set.join_next().await {
                results.push(done.expect("request task"));
            }
        }
        results.sort_by_key(|(i, _)| *i);
        for (i, result) in results {
            let req = &requests[i];
            let label = endpoint_label(req);
            let column = match req.method {
                Method::GET => 0,
                Method::POST => 1,
                _ => 2,
            };
            report.per_endpoint.entry(label.clone()).or_default()[column] += 1;
            let label = format!("{} {label}", req.method);
            let request = format!("#{i} {}", req.describe(&base));
            match result {
                Ok(o) => {
                    *report.statuses.entry(group).or_default().entry(o.status).or_default() += 1;
                    if let Some(problem) = judge(req, &o) {
                        let answer = format!(
                            "{} {}: {}",
                            o.status,
                            o.content_type.as_deref().unwrap_or("(no content type)"),
                            String::from_utf8_lossy(&o.body[..o.body.len().min(200)])
                        );
                        report.failure((group.into(), label, problem), request, answer);
                    }
                }
                Err(e) if e.starts_with("content type") || e.starts_with("header") => {
                    // Not sendable by this client (a byte HTTP forbids in a header): not a request.
                    unsendable += 1;
                }
                Err(e) => report.failure((group.into(), label, "no answer".into()), request, e),
            }
        }
        total += count;
        let up = healthy(&http, &base).await;
        eprintln!("endpoint fuzz: {group}: {count} requests in {:.1}s, statuses {:?}", group_started.elapsed().as_secs_f64(), report.statuses.get(group).cloned().unwrap_or_default());
        if !up {
            report.failure((group.into(), "GET /healthz".into(), "server unhealthy after the group".into()), String::new(), String::new());
        }
    }

    // Still serving: discovery, and a token for a valid client.
    let cc = http
        .post(format!("{base}/token"))
        .basic_auth("rp", Some(&world.rp_secret))
        .form(&[("grant_type", "client_credentials"), ("scope", "api:read")])
        .send()
        .await
        .map(|r| r.status().as_u16());
    let discovery = http.get(format!("{base}/.well-known/openid-configuration")).send().await.map(|r| r.status().as_u16());
    if cc.as_ref().ok() != Some(&200) || discovery.as_ref().ok() != Some(&200) {
        report.failure(("end".into(), "POST /token".into(), format!("server no longer serves: token {cc:?}, discovery {discovery:?}")), String::new(), String::new());
    }

    eprintln!(
        "endpoint fuzz: {} requests in {:.1}s (status 0: the connection closed on an oversized body); per path (GET, POST, other methods):",
        total - unsendable,
        started.elapsed().as_secs_f64()
    );
    for (path, [get, post, other]) in &report.per_endpoint {
        eprintln!("  {get:>5} {post:>5} {other:>5}  {path}");
    }
    if report.failures.is_empty() {
        eprintln!("endpoint fuzz: no failure");
        return;
    }
    let mut summary = format!("endpoint fuzz (seed {seed:#x}): {} kinds of failure\n", report.failures.len());
    for ((group, endpoint, problem), (n, request, answer)) in &report.failures {
        summary.push_str(&format!("\n- [{group}] {endpoint}: {problem} ({n}×)\n    request: {request}\n    answer:  {answer}\n"));
    }
    panic!("{summary}");
}

// ---------------------------------------------------------------------------------------------
// what the fuzz found, pinned down

#[tokio::test]
async fn an_oversized_authorization_post_gets_a_page() {
    let s = TestServer::start().await;
    let body = format!("client_id=rp&x={}", "a".repeat(70_000));
    let res = s.http.post(s.url("/authorize")).header("content-type", "application/x-www-form-urlencoded").body(body).send().await.unwrap();
    assert_eq!(res.status(), 413);
    assert_eq!(res.headers()["content-type"], "text/html; charset=utf-8");
    assert!(res.text().await.unwrap().starts_with("<!doctype html>"));
}

#[tokio::test]
async fn an_admin_update_to_a_taken_username_or_email_is_refused() {
    let s = TestServer::start().await;
    let (st, _) = s.admin(Method::POST, "/admin/users", Some(json!({"username": "ann", "password": PASSWORD, "claims": {"email": "ann@example.com"}}))).await;
    assert_eq!(st, 201);
    let bob = s.user("bob", json!({})).await;
    for body in [json!({"claims": {"email": "ANN@example.com"}}), json!({"username": "ann"}), json!({"username": "ann@example.com"})] {
        let (st, v) = s.admin(Method::PATCH, &format!("/admin/users/{bob}"), Some(body.clone())).await;
        assert_eq!((st, v["error"].as_str()), (409, Some("invalid_request")), "{body}: {v}");
    }
    // Bob keeps his own name and may take a free e-mail.
    let (st, v) = s.admin(Method::PATCH, &format!("/admin/users/{bob}"), Some(json!({"username": "bob", "claims": {"email": "bob@example.com"}}))).await;
    assert_eq!(st, 200, "{v}");
}
