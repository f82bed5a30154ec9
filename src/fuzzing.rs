//! Fuzz-target bodies: one function per parser of client input. The `cargo fuzz` targets in
//! `fuzz/` call these, and so do the unit tests below (a deterministic mutator over the seed
//! corpus in `fuzz/corpus/`), so that CI exercises the same code without nightly.
//!
//! Every body takes arbitrary bytes, never panics on any of them, and asserts properties the
//! parser must have (an assertion failure is a finding, like a panic). Where a body needs
//! several fields it reads them from lines: the first byte chooses a mode, then fields are
//! separated by `\n` (the last field takes the rest, newlines included).
//!
//! Not part of the server's API: hidden from the documentation, kept stable only for the fuzz
//! targets.

use crate::app::App;
use crate::config::Config;
use crate::error::{Challenge, OAuthError};
use crate::http::params::Params;
use crate::registry::clients::{self, ClientInput, ClientMetadata, AUTH_BASIC, AUTH_METHODS, AUTH_NONE, AUTH_POST};
use crate::registry::users::{self, supported_claims, User, UserInput};
use crate::stores::refresh::Codec;
use crate::tenant::Issuer;
use crate::tokens::{self, claims_request};
use crate::util::{now, sha256};
use axum::http::{header, HeaderMap, HeaderValue};
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::OnceLock;

mod admin;
mod encodings;
mod saml;
pub use admin::{admin_client_json, admin_user_json};
pub use encodings::{refresh_token, scim_filter, scim_patch, shard_prefix};
pub use saml::saml_message;

// What `Params::parse` promises (RFC 6749 §3.1, §3.2; RFC 8693 §2.1; RFC 8707 §2).
const MAX_VALUE_LEN: usize = 8 * 1024;
const MULTI_VALUED: &[&str] = &["audience", "resource"];
const MAX_VALUES: usize = 32;

/// Up to `n` fields of `data` separated by `\n`; the last one keeps the rest.
fn fields(data: &[u8], n: usize) -> Vec<&[u8]> {
    let mut out = Vec::with_capacity(n);
    let mut rest = data;
    while out.len() + 1 < n {
        match rest.iter().position(|&b| b == b'\n') {
            Some(i) => {
                out.push(&rest[..i]);
                rest = &rest[i + 1..];
            }
            None => break,
        }
    }
    out.push(rest);
    while out.len() < n {
        out.push(&[]);
    }
    out
}

/// (mode, rest): the first byte picks how a body reads its input.
fn mode(data: &[u8], modes: u8) -> (u8, &[u8]) {
    match data.split_first() {
        Some((m, rest)) => (m % modes, rest),
        None => (0, data),
    }
}

fn text(b: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(b)
}

/// Replace every `from` in `data` by `to`.
fn substitute(data: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    let mut i = 0;
    while i < data.len() {
        if data[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(data[i]);
            i += 1;
        }
    }
    out
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || hay.windows(needle.len()).any(|w| w == needle)
}

// ---------------------------------------------------------------------------------------------
// form and query parameters

/// `Params::parse` (every form body and query string): the data is the raw body.
pub fn params(data: &[u8]) {
    let parsed = Params::parse(data);
    // What the raw pairs say, counted independently of the parser.
    let mut seen: Vec<(String, Vec<String>)> = Vec::new();
    let mut too_long = false;
    for (k, v) in url::form_urlencoded::parse(data) {
        let slot = match seen.iter().position(|(key, _)| *key == k) {
            Some(i) => i,
            None => {
                seen.push((k.to_string(), Vec::new()));
                seen.len() - 1
            }
        };
        if !v.is_empty() {
            too_long |= v.len() > MAX_VALUE_LEN;
            seen[slot].1.push(v.into_owned());
        }
    }
    let repeated = seen.iter().any(|(k, v)| v.len() > 1 && !MULTI_VALUED.contains(&k.as_str()));
    let too_many = seen.iter().any(|(_, v)| v.len() > MAX_VALUES);
    match parsed {
        Ok(p) => {
            assert!(!too_long, "a value over {MAX_VALUE_LEN} bytes was accepted");
            assert!(!repeated, "a repeated single-valued parameter was accepted");
            assert!(!too_many, "more than {MAX_VALUES} values of one parameter were accepted");
            for (k, values) in &seen {
                if values.is_empty() {
                    // RFC 6749 §3.1: a parameter without a value is treated as omitted.
                    assert!(!p.contains(k) && p.get(k).is_none() && p.require(k).is_err(), "empty {k:?} kept");
                    continue;
                }
                assert_eq!(p.get(k), Some(values[0].as_str()), "value of {k:?}");
                assert_eq!(p.require(k).ok(), Some(values[0].as_str()));
                if MULTI_VALUED.contains(&k.as_str()) {
                    assert_eq!(p.get_all(k), values.as_slice(), "values of {k:?}");
                }
            }
        }
        Err(e) => {
            assert_eq!((e.code, e.status.as_u16()), ("invalid_request", 400), "{e}");
            assert!(too_long || repeated || too_many, "refused a well-formed request: {e}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// headers: cookies, content type, operator bearer tokens

const OPERATOR_TOKEN: &str = "fuzz-operator-token";

/// Header parsers: `cookies::get`, `params::is_form`, `http::bearer_matches`.
/// Fields: cookie name, two `Cookie` header values, `Content-Type`, `Authorization`.
pub fn headers(data: &[u8]) {
    let f = fields(data, 5);
    let name = text(f[0]);
    let mut h = HeaderMap::new();
    let mut cookie_values = Vec::new();
    for raw in [f[1], f[2]] {
        if let Ok(v) = HeaderValue::from_bytes(raw) {
            cookie_values.push(v.to_str().map(str::to_string).ok());
            h.append(header::COOKIE, v);
        }
    }
    let content_type = HeaderValue::from_bytes(f[3]).ok();
    if let Some(v) = content_type.clone() {
        h.insert(header::CONTENT_TYPE, v);
    }
    let authorization = HeaderValue::from_bytes(f[4]).ok();
    if let Some(v) = authorization.clone() {
        h.insert(header::AUTHORIZATION, v);
    }

    if let Some(v) = crate::http::cookies::get(&h, &name) {
        assert!(!v.is_empty() && !v.contains(';'), "cookie value {v:?}");
        let pair = format!("{name}={v}");
        assert!(
            cookie_values.iter().flatten().any(|c| c.split(';').any(|p| p.trim() == pair)),
            "cookie {pair:?} is not in the headers"
        );
    }
    if crate::http::params::is_form(&h) {
        let ct = content_type.as_ref().and_then(|v| v.to_str().ok()).unwrap_or("");
        let essence = ct.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
        assert_eq!(essence, "application/x-www-form-urlencoded", "is_form accepted {ct:?}");
    }
    let expected = format!("Bearer {OPERATOR_TOKEN}");
    let presented = authorization.as_ref().map(HeaderValue::as_bytes);
    assert_eq!(
        crate::http::bearer_matches(&h, OPERATOR_TOKEN),
        presented == Some(expected.as_bytes()),
        "bearer_matches with {presented:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// an App for the bodies that need one (client authentication, JWT verification)

struct Fixture {
    _runtime: tokio::runtime::Runtime,
    app: Issuer,
    /// (client id, secret): `client_secret_basic`, `client_secret_post`; `fz-public` has none.
    basic: (String, String),
    post: (String, String),
    /// An access token this App signed, valid for an hour.
    access_token: String,
}

const PUBLIC_CLIENT: &str = "fz-public";

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(Fixture::new)
}

impl Fixture {
    fn new() -> Self {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("authrim-fuzz-{}-{nanos}", std::process::id()));
        let config = Config {
            data_dir: dir.clone(),
            sqlite_synchronous: "NORMAL".into(),
            code_shards: 2,
            session_shards: 2,
            challenge_shards: 2,
            revocation_shards: 2,
            refresh_shards: 2,
            ..Config::default()
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("fuzz fixture: tokio runtime");
        let app = Issuer::default_of(&std::sync::Arc::new(runtime.block_on(App::open(config)).expect("fuzz fixture: App::open")));
        let mut secrets = Vec::new();
        for (id, method) in [("fz-basic", AUTH_BASIC), ("fz-post", AUTH_POST), (PUBLIC_CLIENT, AUTH_NONE)] {
            let (client, secret) = clients::new_client(ClientInput {
                client_id: Some(id.into()),
                redirect_uris: Some(vec!["https://rp.example/cb".into()]),
                token_endpoint_auth_method: Some(method.into()),
                ..Default::default()
            }, app.vault())
            .expect("fuzz fixture: client");
            runtime.block_on(app.registry().save_client(client)).expect("fuzz fixture: save client");
            secrets.push((id.to_string(), secret.unwrap_or_default()));
        }
        let access_token = sign_access_token(&app, now() + 3600);
        // Nothing is written after this; the open files stay usable without their names.
        let _ = std::fs::remove_dir_all(&dir);
        let post = secrets.remove(1);
        let basic = secrets.remove(0);
        Self { _runtime: runtime, app, basic, post, access_token }
    }
}

fn sign_access_token(app: &Issuer, exp: u64) -> String {
    let spec = tokens::AccessTokenSpec {
        sub: "fz-user",
        client_id: "fz-basic",
        scope: "openid profile",
        auth_time: Some(now()),
        acr: None,
        sid: Some("fz-sid"),
        userinfo_claims: vec![],
        grant_id: Some("fz-grant"),
        audience: vec![],
        act: None,
        may_act: None,
        cnf: None,
        org: None,
        directory: None,
    };
    tokens::mint_access_token(app, spec, "fz-jti".into(), exp).expect("fuzz fixture: sign")
}

// ---------------------------------------------------------------------------------------------
// client authentication

/// `client_auth::authenticate` (and so its Basic decoding). Modes: 0, no `Authorization`
/// header; 1, the first field is the raw header; 2, it is `Basic ` + base64 of the field. Then
/// the form body.
/// `$B` and `$P` stand for the secrets of `fz-basic` and `fz-post` (the fuzzer cannot guess
/// them), in the field and in the body.
pub fn client_auth(data: &[u8]) {
    let fx = fixture();
    let (m, rest) = mode(data, 3);
    let f = fields(rest, 2);
    let sub = |b: &[u8]| substitute(&substitute(b, b"$B", fx.basic.1.as_bytes()), b"$P", fx.post.1.as_bytes());
    let credentials = sub(f[0]);
    let header_value = match m {
        0 => None,
        1 => Some(f[0].to_vec()),
        _ => Some(format!("Basic {}", STANDARD.encode(&credentials)).into_bytes()),
    };
    let mut headers = HeaderMap::new();
    let has_header = match header_value.as_deref().map(HeaderValue::from_bytes) {
        Some(Ok(v)) => {
            headers.insert(header::AUTHORIZATION, v);
            true
        }
        _ => false,
    };
    let Ok(params) = Params::parse(&sub(f[1])) else { return };

    let outcome = fx._runtime.block_on(crate::client_auth::authenticate(&fx.app, &headers, &params, "/token", None));
    match outcome {
        Ok(client) => match client.auth_method() {
            AUTH_NONE => {
                assert!(!has_header && params.get("client_secret").is_none(), "public client authenticated with credentials");
                assert_eq!(params.get("client_id"), Some(client.id()));
            }
            AUTH_BASIC => {
                assert_eq!(client.id(), fx.basic.0);
                assert!(m == 2 && has_header && contains(&credentials, fx.basic.1.as_bytes()), "Basic client in without its secret");
                assert!(params.get("client_secret").is_none(), "two authentication methods accepted");
                assert!(params.get("client_id").is_none_or(|id| id == client.id()), "mismatched client_id accepted");
            }
            AUTH_POST => {
                assert_eq!(client.id(), fx.post.0);
                assert!(!has_header, "client_secret_post client in with an Authorization header");
                assert_eq!(params.get("client_secret"), Some(fx.post.1.as_str()), "post client in without its secret");
            }
            other => panic!("authenticated a client with method {other:?}"),
        },
        Err(e) => {
            let status = e.status.as_u16();
            assert!(matches!((e.code, status), ("invalid_request", 400) | ("invalid_client", 401)), "{e} ({status})");
            if e.code == "invalid_client" {
                // RFC 6749 §5.2: a client that tried the Authorization header gets a Basic challenge.
                let expected = has_header.then_some(Challenge::Basic);
                assert_eq!(e.challenge, expected, "challenge for {e}");
            }
            check_error_body(&e);
        }
    }
}

/// The JSON an `OAuthError` becomes: an `error` member, `application/json`.
fn check_error_body(e: &OAuthError) {
    use axum::response::IntoResponse;
    let res = e.clone().into_response();
    assert_eq!(res.headers().get(header::CONTENT_TYPE).map(HeaderValue::as_bytes), Some(&b"application/json"[..]));
    if let Some(v) = res.headers().get(header::WWW_AUTHENTICATE) {
        assert!(v.to_str().is_ok(), "non-ASCII challenge");
    }
}

// ---------------------------------------------------------------------------------------------
// JWTs presented to us

/// The three verifications of presented JWTs (`verify_access_token`, `verify_our_jwt`,
/// `verify_id_token_hint`). Modes:
/// 0. the data is a token: nothing unsigned by us verifies;
/// 1. fields `typ`, claims (JSON): signed with the App's key, so claim validation is what is
///    fuzzed (`$ISS` is the issuer, `$EXP` a time an hour ahead, `$OLD` one an hour ago);
/// 2. edits of a genuine access token (position, byte pairs; position 0xff truncates there):
///    any change makes it invalid;
/// 3. a genuine token with one segment (first byte mod 3) replaced by base64url of the rest.
pub fn jwt(data: &[u8]) {
    let fx = fixture();
    let app = &fx.app;
    let t0 = now();
    let (m, rest) = mode(data, 4);
    let verify = |token: &str| {
        (
            tokens::verify_access_token(app, token).ok(),
            tokens::verify_our_jwt(app, token).ok(),
            tokens::verify_id_token_hint(app, token).ok(),
        )
    };
    match m {
        0 => {
            let token = text(rest);
            assert_eq!(verify(&token), (None, None, None), "an unsigned token verified: {token:?}");
        }
        1 => {
            let f = fields(rest, 2);
            let typ = text(f[0]).into_owned();
            let claims = substitute(f[1], b"$ISS", app.issuer().as_bytes());
            let claims = substitute(&claims, b"$EXP", (t0 + 3600).to_string().as_bytes());
            let claims = substitute(&claims, b"$OLD", (t0 - 3600).to_string().as_bytes());
            // What we sign is always our own serialisation of a JSON value.
            let Ok(v) = serde_json::from_slice::<Value>(&claims) else { return };
            let token = app.keys().sign(&typ, &v).expect("signing");
            let (at, ours, hint) = verify(&token);
            // jsonwebtoken also takes an array `iss` naming us among others (RFC 7519 §4.1.1 says
            // a string); harmless here, since only what we signed gets this far.
            let iss_ok = |m: &Map<String, Value>| match m.get("iss") {
                Some(Value::String(s)) => s == app.issuer(),
                Some(Value::Array(a)) => a.iter().any(|i| i.as_str() == Some(app.issuer())),
                _ => false,
            };
            // A fractional `exp` is rounded.
            let exp_ok = |m: &Map<String, Value>| m.get("exp").and_then(Value::as_f64).is_some_and(|e| e + 1.0 >= t0 as f64);
            if let Some(c) = &at {
                let t = typ.trim_start_matches("application/");
                assert!(t.eq_ignore_ascii_case(tokens::ACCESS_TOKEN_TYP), "access token accepted with typ {typ:?}");
                assert_eq!(c.iss, app.issuer());
                assert!(c.exp >= t0, "expired access token accepted");
                assert!(ours.is_some(), "an access token that is not one of our JWTs");
            }
            if let Some(m) = &ours {
                assert!(iss_ok(m) && exp_ok(m) && m.contains_key("sub"), "verify_our_jwt accepted {}", v);
                assert!(hint.is_some(), "one of our JWTs is not a valid id_token_hint");
            }
            if let Some(m) = &hint {
                assert!(iss_ok(m) && m.contains_key("sub"), "verify_id_token_hint accepted {}", v);
            }
            // The converse: well-formed claims of ours verify.
            if let Some(obj) = v.as_object() {
                let sub_ok = obj.get("sub").is_some_and(Value::is_string);
                let exp_int = obj.get("exp").and_then(Value::as_u64).is_some_and(|e| e > t0 + 5);
                let iss = obj.get("iss").and_then(Value::as_str) == Some(app.issuer());
                if iss && sub_ok && exp_int && registered_claims_typed(obj) {
                    assert!(ours.is_some(), "a valid JWT of ours was refused: {}", v);
                    assert!(hint.is_some(), "a valid ID token of ours was refused as a hint: {}", v);
                }
            }
        }
        2 => {
            let mut token = fx.access_token.clone().into_bytes();
            for edit in rest.chunks(2) {
                let pos = edit[0] as usize * token.len().max(1) / 255;
                match edit.get(1) {
                    _ if edit[0] == 0xff => token.truncate(token.len().saturating_sub(1 + edit.get(1).copied().unwrap_or(0) as usize)),
                    Some(&b) if b & 1 == 1 && pos < token.len() => token[pos] = b >> 1,
                    Some(&b) => token.insert(pos.min(token.len()), b >> 1),
                    None if pos < token.len() => drop(token.remove(pos)),
                    None => {}
                }
            }
            let token = text(&token).into_owned();
            let result = verify(&token);
            if token == fx.access_token {
                assert!(result.0.is_some() && result.1.is_some() && result.2.is_some(), "the genuine token was refused");
            } else {
                assert_eq!(result, (None, None, None), "an edited token verified: {token:?}");
            }
        }
        _ => {
            let Some((&which, payload)) = rest.split_first() else { return };
            let mut parts: Vec<String> = fx.access_token.split('.').map(str::to_string).collect();
            let which = which as usize % 3;
            let replacement = URL_SAFE_NO_PAD.encode(payload);
            if parts[which] == replacement {
                return;
            }
            parts[which] = replacement;
            let token = parts.join(".");
            assert_eq!(verify(&token), (None, None, None), "a token with segment {which} replaced verified: {token:?}");
        }
    }
}

/// Whether the registered claims jsonwebtoken reads have the types it accepts (RFC 7519 §4.1):
/// `iss` a string, `aud` a string or strings, time claims numbers.
fn registered_claims_typed(obj: &Map<String, Value>) -> bool {
    let aud_ok = match obj.get("aud") {
        None | Some(Value::String(_)) => true,
        Some(Value::Array(a)) => a.iter().all(Value::is_string),
        _ => false,
    };
    let times_ok = ["nbf", "iat"].iter().all(|c| obj.get(*c).is_none_or(|v| v.as_u64().is_some()));
    aud_ok && times_ok
}

// ---------------------------------------------------------------------------------------------
// the claims request parameter

/// `claims_request::parse` (OpenID Connect Core §5.5): the data is the parameter's value.
pub fn claims_request(data: &[u8]) {
    let raw = text(data);
    match claims_request::parse(&raw) {
        Ok(v) => {
            let obj = v.as_object().expect("claims accepted that is not an object");
            for member in ["userinfo", "id_token"] {
                let names = claims_request::requested(Some(&v), member);
                match obj.get(member) {
                    None => assert!(names.is_empty()),
                    Some(m) => {
                        let m = m.as_object().unwrap_or_else(|| panic!("claims.{member} accepted that is not an object"));
                        assert!(m.values().all(|r| r.is_null() || r.is_object()), "claims.{member}: bad request accepted");
                        assert_eq!(names.len(), m.len());
                        assert!(names.iter().all(|n| m.contains_key(n)));
                    }
                }
            }
            // What is accepted once is accepted again (it travels through the challenge and the code).
            assert!(claims_request::parse(&v.to_string()).is_ok(), "claims do not survive a round trip");
        }
        Err(e) => {
            assert_eq!((e.code, e.status.as_u16()), ("invalid_request", 400));
            check_error_body(&e);
        }
    }
}

/// Every body, by the name of its `cargo fuzz` target.
pub const TARGETS: &[(&str, fn(&[u8]))] = &[
    ("params", params),
    ("headers", headers),
    ("client_auth", client_auth),
    ("jwt", jwt),
    ("claims_request", claims_request),
    ("admin_client_json", admin_client_json),
    ("admin_user_json", admin_user_json),
    ("refresh_token", refresh_token),
    ("shard_prefix", shard_prefix),
    ("scim_filter", scim_filter),
    ("scim_patch", scim_patch),
    ("saml_message", saml_message),
];

/// SplitMix64: the deterministic generator of every seeded test (the fuzz bodies' mutations,
/// the endpoint fuzz, the stores' crash trials): small, fast, the same on every machine.
pub struct SplitMix(pub u64);

impl SplitMix {
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

#[cfg(test)]
mod tests;
