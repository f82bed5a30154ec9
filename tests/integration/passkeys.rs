//! Passkeys (WebAuthn) end to end through the pages, with a software authenticator written
//! here from the WebAuthn Level 2 data formats (CBOR attestation object with `fmt: none`,
//! authenticator data, ES256 signatures over `authData ‖ SHA-256(clientDataJSON)`), so that
//! what the server verifies is what a browser would send. Covered: registration on the
//! account page (sign-in, CSRF, re-authentication), a passwordless sign-in (acr passkey, amr
//! hwk/swk user mfa), a passkey as the second factor, the checks that must refuse (another
//! origin, another RP id, a replayed assertion, no user verification, a credential of another
//! user as second factor, a removed passkey), the policy `mfa_policy = passkey`, and the
//! account page's TOTP enrolment confirmed by a first code.

use crate::harness::*;
use authrim::factors::{ACR_MFA, ACR_PASSKEY};
use authrim::util::{b64, b64_decode, now, sha256};
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_ASN1_SIGNING};
use serde_json::{json, Value};

pub const ORIGIN: &str = "http://localhost:4000";
pub const RP_ID: &str = "localhost";

pub fn passkey_config(c: &mut authrim::config::Config) {
    c.webauthn_rp_id = Some(RP_ID.into());
    c.webauthn_origins = Some(ORIGIN.into());
}

// --- A software authenticator -------------------------------------------------------------

/// Minimal CBOR (RFC 8949) for what an authenticator sends: maps, ints, bytes, text.
enum Cbor {
    Int(i64),
    Bytes(Vec<u8>),
    Text(&'static str),
    Map(Vec<(Cbor, Cbor)>),
}

fn head(major: u8, n: u64, out: &mut Vec<u8>) {
    let m = major << 5;
    match n {
        0..=23 => out.push(m | n as u8),
        24..=0xff => out.extend([m | 24, n as u8]),
        0x100..=0xffff => {
            out.push(m | 25);
            out.extend((n as u16).to_be_bytes());
        }
        _ => {
            out.push(m | 26);
            out.extend((n as u32).to_be_bytes());
        }
    }
}

impl Cbor {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Cbor::Int(i) if *i >= 0 => head(0, *i as u64, out),
            Cbor::Int(i) => head(1, (-1 - *i) as u64, out),
            Cbor::Bytes(b) => {
                head(2, b.len() as u64, out);
                out.extend(b);
            }
            Cbor::Text(t) => {
                head(3, t.len() as u64, out);
                out.extend(t.as_bytes());
            }
            Cbor::Map(entries) => {
                head(5, entries.len() as u64, out);
                for (k, v) in entries {
                    k.encode(out);
                    v.encode(out);
                }
            }
        }
    }
    fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }
}

pub struct Authenticator {
    key: EcdsaKeyPair,
    cred_id: Vec<u8>,
    user_handle: Vec<u8>,
    counter: u32,
    /// Backup-eligible (a synced passkey).
    synced: bool,
}

const UP: u8 = 0x01;
const UV: u8 = 0x04;
const BE: u8 = 0x08;
const AT: u8 = 0x40;

impl Authenticator {
    pub fn new(synced: bool) -> Self {
        let key = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_ASN1_SIGNING).unwrap();
        Self { key, cred_id: authrim::util::random_bytes::<16>().to_vec(), user_handle: Vec::new(), counter: 0, synced }
    }

    fn flags(&self, uv: bool) -> u8 {
        UP | if uv { UV } else { 0 } | if self.synced { BE } else { 0 }
    }

    fn client_data(kind: &str, challenge: &str, origin: &str) -> Vec<u8> {
        serde_json::to_vec(&json!({"type": kind, "challenge": challenge, "origin": origin, "crossOrigin": false})).unwrap()
    }

    /// `navigator.credentials.create` for `options` (the page's data-options).
    pub fn create(&mut self, options: &Value, origin: &str, rp_id: &str) -> String {
        let pk = &options["publicKey"];
        assert_eq!(pk["authenticatorSelection"]["residentKey"], "required", "passkeys are discoverable: {pk}");
        self.user_handle = b64_decode(pk["user"]["id"].as_str().unwrap()).unwrap();
        let public = self.key.public_key().as_ref();
        let (x, y) = (public[1..33].to_vec(), public[33..65].to_vec());
        let cose = Cbor::Map(vec![
            (Cbor::Int(1), Cbor::Int(2)),
            (Cbor::Int(3), Cbor::Int(-7)),
            (Cbor::Int(-1), Cbor::Int(1)),
            (Cbor::Int(-2), Cbor::Bytes(x)),
            (Cbor::Int(-3), Cbor::Bytes(y)),
        ]);
        let mut auth_data = sha256(rp_id.as_bytes()).to_vec();
        auth_data.push(self.flags(true) | AT);
        auth_data.extend(self.counter.to_be_bytes());
        auth_data.extend([0u8; 16]);
        auth_data.extend((self.cred_id.len() as u16).to_be_bytes());
        auth_data.extend(&self.cred_id);
        auth_data.extend(cose.bytes());
        let attestation = Cbor::Map(vec![
            (Cbor::Text("fmt"), Cbor::Text("none")),
            (Cbor::Text("attStmt"), Cbor::Map(vec![])),
            (Cbor::Text("authData"), Cbor::Bytes(auth_data)),
        ]);
        let client_data = Self::client_data("webauthn.create", pk["challenge"].as_str().unwrap(), origin);
        json!({
            "id": b64(&self.cred_id), "rawId": b64(&self.cred_id), "type": "public-key", "extensions": {},
            "response": {"attestationObject": b64(&attestation.bytes()), "clientDataJSON": b64(&client_data)}
        })
        .to_string()
    }

    /// `navigator.credentials.get` for `options`.
    pub fn get(&mut self, options: &Value, origin: &str, rp_id: &str, uv: bool) -> String {
        let pk = &options["publicKey"];
        self.counter += 1;
        let mut auth_data = sha256(rp_id.as_bytes()).to_vec();
        auth_data.push(self.flags(uv));
        auth_data.extend(self.counter.to_be_bytes());
        let client_data = Self::client_data("webauthn.get", pk["challenge"].as_str().unwrap(), origin);
        let mut signed = auth_data.clone();
        signed.extend(sha256(&client_data));
        let signature = self.key.sign(&SystemRandom::new(), &signed).unwrap();
        json!({
            "id": b64(&self.cred_id), "rawId": b64(&self.cred_id), "type": "public-key", "extensions": {},
            "response": {
                "authenticatorData": b64(&auth_data), "clientDataJSON": b64(&client_data),
                "signature": b64(signature.as_ref()), "userHandle": b64(&self.user_handle)
            }
        })
        .to_string()
    }
}

// --- Pages ----------------------------------------------------------------------------------

fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"").replace("&#x27;", "'").replace("&#39;", "'").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
}

/// The value of the first `marker"…"` in the page.
fn attr(html: &str, marker: &str) -> Option<String> {
    let start = html.find(marker)? + marker.len();
    Some(unescape(html[start..].split('"').next()?))
}

pub fn field(page: &Page, name: &str) -> String {
    attr(&page.html, &format!("name=\"{name}\" value=\"")).unwrap_or_else(|| panic!("no {name} in page: {}", page.html))
}

pub fn options(page: &Page) -> Value {
    serde_json::from_str(&attr(&page.html, "data-options=\"").unwrap_or_else(|| panic!("no passkey form: {}", page.html))).unwrap()
}

/// GET `path` and follow redirects within the server (absolute or relative), as a browser.
pub async fn get(browser: &Browser, path: &str) -> Page {
    let mut url = format!("{}{path}", browser.base);
    for _ in 0..10 {
        let page = Page::from(browser.client.get(&url).send().await.unwrap()).await;
        match page.location.clone() {
            Some(loc) if (300..400).contains(&page.status) && (loc.starts_with('/') || loc.starts_with(&browser.base)) => {
                url = if loc.starts_with('/') { format!("{}{loc}", browser.base) } else { loc };
            }
            _ => return page,
        }
    }
    panic!("too many redirects from {path}");
}

/// POST a form and follow redirects within the server.
pub async fn post(browser: &Browser, path: &str, form: &[(&str, &str)]) -> Page {
    let page = browser.post_no_follow(path, form).await;
    match page.location.clone() {
        Some(loc) if page.status == 303 && (loc.starts_with('/') || loc.starts_with(&browser.base)) => get(browser, loc.trim_start_matches(&browser.base)).await,
        _ => page,
    }
}

/// Signed in to the account page with the password (no second factor yet).
pub async fn account(browser: &Browser) -> Page {
    let login = get(browser, "/account").await;
    assert!(login.is_login(), "{}", login.html);
    let page = post(browser, "/login", &[("challenge", &login.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    assert!(page.html.contains("<h1>Your account</h1>"), "{} {}", page.status, page.html);
    page
}

/// Add a passkey from the account page; returns the page after.
pub async fn add_passkey(browser: &Browser, acct: &Page, auth: &mut Authenticator, origin: &str) -> Page {
    let setup = post(browser, "/account/passkeys/new", &[("csrf", &field(acct, "csrf"))]).await;
    assert_eq!(setup.status, 200, "{}", setup.html);
    let answer = auth.create(&options(&setup), origin, RP_ID);
    post(
        browser,
        "/account/passkeys",
        &[("csrf", &field(&setup, "csrf")), ("passkey_state", &field(&setup, "passkey_state")), ("credential", &answer), ("name", "Laptop")],
    )
    .await
}

pub fn query(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
    let mut q = vec![("response_type", "code"), ("client_id", "rp"), ("redirect_uri", REDIRECT), ("scope", "openid"), ("state", "s"), ("nonce", "n")];
    q.extend_from_slice(extra);
    q
}

pub async fn finish(browser: &Browser, mut page: Page) -> String {
    if page.is_consent() {
        page = browser.post("/consent", &[("challenge", &page.challenge()), ("decision", "allow")]).await;
    }
    page.redirect_params().get("code").unwrap_or_else(|| panic!("no code: {} {:?} {}", page.status, page.location, page.html)).clone()
}

pub async fn id_token(s: &TestServer, secret: &str, code: &str) -> Value {
    let (st, tokens, _) = s.token(Some(("rp", secret)), &[("grant_type", "authorization_code"), ("code", code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200, "{tokens}");
    jwt_parts(tokens["id_token"].as_str().unwrap()).1
}

/// A passwordless sign-in attempt from the login page with `answer` made for its options.
pub async fn passkey_login(browser: &Browser, q: &[(&str, &str)], make: impl FnOnce(&Value) -> String) -> Page {
    let login = Page::from(browser.authorize(q).await).await;
    assert!(login.is_login(), "{}", login.html);
    let answer = make(&options(&login));
    browser.post("/login/passkey", &[("challenge", &login.challenge()), ("passkey_state", &field(&login, "passkey_state")), ("credential", &answer)]).await
}

// --- Tests ----------------------------------------------------------------------------------

#[tokio::test]
async fn a_passkey_registered_on_the_account_page_signs_in_alone() {
    passkey_alone(false).await;
}

#[tokio::test]
async fn a_passkey_registered_on_the_account_page_signs_in_alone_on_postgres() {
    passkey_alone(true).await;
}

async fn passkey_alone(postgres: bool) {
    let s = TestServer::start_on(postgres, passkey_config).await;
    let (_, secret) = s.client("rp", json!({})).await;
    let secret = secret.unwrap();
    let alice = s.user("alice", json!({})).await;
    let browser = s.browser();
    let acct = account(&browser).await;
    assert!(acct.html.contains("password only"), "{}", acct.html);

    // An answer made for another origin, or another RP id, is refused; nothing is stored.
    let mut auth = Authenticator::new(false);
    let wrong = add_passkey(&browser, &acct, &mut auth, "http://evil.localhost:4000").await;
    assert_eq!(wrong.status, 400, "{}", wrong.html);
    let mut other_rp = Authenticator::new(false);
    let setup = post(&browser, "/account/passkeys/new", &[("csrf", &field(&acct, "csrf"))]).await;
    let answer = other_rp.create(&options(&setup), ORIGIN, "example.com");
    let refused = post(&browser, "/account/passkeys", &[("csrf", &field(&setup, "csrf")), ("passkey_state", &field(&setup, "passkey_state")), ("credential", &answer)]).await;
    assert_eq!(refused.status, 400, "{}", refused.html);
    // Without the CSRF token of this session: refused.
    let forged = post(&browser, "/account/passkeys", &[("csrf", "forged"), ("passkey_state", &field(&setup, "passkey_state")), ("credential", &answer)]).await;
    assert_eq!(forged.status, 400, "{}", forged.html);
    let (_, listed) = s.admin(reqwest::Method::GET, &format!("/admin/users/{alice}/factors"), None).await;
    assert_eq!(listed["factors"], json!([]), "{listed}");

    let done = add_passkey(&browser, &acct, &mut auth, ORIGIN).await;
    assert!(done.html.contains("Your passkey was added"), "{}", done.html);
    assert!(done.html.contains("Laptop"), "{}", done.html);
    // The same registration state again: spent.
    let (_, listed) = s.admin(reqwest::Method::GET, &format!("/admin/users/{alice}/factors"), None).await;
    assert_eq!(listed["factors"][0]["kind"], "passkey", "{listed}");

    // Passwordless, in another browser: the authenticator names the user.
    let other = s.browser();
    let mut captured = String::new();
    let page = passkey_login(&other, &query(&[]), |o| {
        captured = auth.get(o, ORIGIN, RP_ID, true);
        captured.clone()
    })
    .await;
    let claims = id_token(&s, &secret, &finish(&other, page).await).await;
    assert_eq!(claims["acr"], ACR_PASSKEY);
    assert_eq!(claims["amr"], json!(["hwk", "user", "mfa"]));
    assert_eq!(claims["sub"], alice);

    let (_, listed) = s.admin(reqwest::Method::GET, &format!("/admin/users/{alice}/factors"), None).await;
    assert!(listed["factors"][0]["last_used_at"].as_u64().unwrap() >= now() - 60, "{listed}");

    // Without user verification, from another origin, for another RP id: refused (401).
    for (origin, rp, uv) in [(ORIGIN, RP_ID, false), ("http://localhost:4001", RP_ID, true), (ORIGIN, "example.com", true)] {
        let b = s.browser();
        let page = passkey_login(&b, &query(&[]), |o| auth.get(o, origin, rp, uv)).await;
        assert_eq!(page.status, 401, "origin {origin} rp {rp} uv {uv}: {}", page.html);
        assert!(page.is_login(), "the login page again: {}", page.html);
    }

    // An asked-for mfa is met by a passkey, and reported as the value asked for (OpenID
    // Connect Core §5.5.1.1).
    let b = s.browser();
    let page = passkey_login(&b, &query(&[("acr_values", ACR_MFA)]), |o| auth.get(o, ORIGIN, RP_ID, true)).await;
    let claims = id_token(&s, &secret, &finish(&b, page).await).await;
    assert_eq!(claims["acr"], ACR_MFA);
    assert_eq!(claims["amr"], json!(["hwk", "user", "mfa"]));
    let _ = captured;
}

#[tokio::test]
async fn a_replayed_assertion_is_refused() {
    let s = TestServer::start_with(passkey_config).await;
    s.client("rp", json!({})).await;
    s.user("alice", json!({})).await;
    let browser = s.browser();
    let acct = account(&browser).await;
    let mut auth = Authenticator::new(true);
    add_passkey(&browser, &acct, &mut auth, ORIGIN).await;

    let b = s.browser();
    let login = Page::from(b.authorize(&query(&[])).await).await;
    let answer = auth.get(&options(&login), ORIGIN, RP_ID, true);
    let form = [("challenge", login.challenge()), ("passkey_state", field(&login, "passkey_state")), ("credential", answer)];
    let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let first = b.post_no_follow("/login/passkey", &form).await;
    assert_eq!(first.status, 303, "{}", first.html);
    let again = b.post_no_follow("/login/passkey", &form).await;
    assert_eq!(again.status, 401, "a replay is refused: {}", again.html);
}

#[tokio::test]
async fn a_passkey_is_a_second_factor_and_the_policy_can_require_one() {
    let s = TestServer::start_with(|c| {
        passkey_config(c);
        c.mfa_policy = "passkey".into();
    })
    .await;
    let (_, secret) = s.client("rp", json!({})).await;
    let secret = secret.unwrap();
    s.user("alice", json!({})).await;

    // No passkey yet: the policy refuses the sign-in to the client.
    let b = s.browser();
    let login = Page::from(b.authorize(&query(&[])).await).await;
    let refused = b.post("/login", &[("challenge", &login.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    assert_eq!(refused.status, 403, "{}", refused.html);
    assert!(refused.html.contains("passkey"), "{}", refused.html);

    // The account page, where one is added, takes the password of a user with no factor.
    let browser = s.browser();
    let acct = account(&browser).await;
    let mut auth = Authenticator::new(true);
    add_passkey(&browser, &acct, &mut auth, ORIGIN).await;
    let b = s.browser();
    let page = passkey_login(&b, &query(&[]), |o| auth.get(o, ORIGIN, RP_ID, true)).await;
    let claims = id_token(&s, &secret, &finish(&b, page).await).await;
    assert_eq!(claims["acr"], ACR_PASSKEY);
    assert_eq!(claims["amr"], json!(["swk", "user", "mfa"]), "a backup-eligible passkey is a software key");

    // Now that Alice has a passkey, the account page asks for it too (a password alone no
    // longer reaches her factors).
    let other = s.browser();
    let login = get(&other, "/account").await;
    let step = post(&other, "/login", &[("challenge", &login.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    assert!(step.html.contains("action=\"/login/second-factor\""), "{}", step.html);
}

#[tokio::test]
async fn password_then_passkey_gives_acr_passkey_and_a_code_does_not_pass_a_passkey_policy() {
    let s = TestServer::start_with(passkey_config).await;
    let (_, secret) = s.client("rp", json!({})).await;
    let (_, _) = s.client("strict", json!({"require_passkey": true, "redirect_uris": [REDIRECT]})).await;
    let secret = secret.unwrap();
    s.user("alice", json!({})).await;
    s.user("bob", json!({})).await;
    let browser = s.browser();
    let acct = account(&browser).await;
    let mut auth = Authenticator::new(false);
    add_passkey(&browser, &acct, &mut auth, ORIGIN).await;
    // Bob has a passkey too.
    let bob_browser = s.browser();
    let login = get(&bob_browser, "/account").await;
    let bob_acct = post(&bob_browser, "/login", &[("challenge", &login.challenge()), ("username", "bob"), ("password", PASSWORD)]).await;
    let mut bobs = Authenticator::new(false);
    add_passkey(&bob_browser, &bob_acct, &mut bobs, ORIGIN).await;

    // Alice: password, then the second-factor page offers her passkeys only.
    let b = s.browser();
    let login = Page::from(b.authorize(&query(&[("prompt", "login")])).await).await;
    let step = b.post("/login", &[("challenge", &login.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    assert!(step.html.contains("action=\"/login/second-factor\""), "{}", step.html);
    let opts = options(&step);
    let allowed: Vec<&str> = opts["publicKey"]["allowCredentials"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(allowed, vec![b64(&auth.cred_id)], "only Alice's passkeys are offered");
    // Bob's passkey, offered for Alice's second step: refused and counted.
    let bad = bobs.get(&opts, ORIGIN, RP_ID, true);
    let refused = b.post("/login/second-factor", &[("challenge", &step.challenge()), ("passkey_state", &field(&step, "passkey_state")), ("credential", &bad)]).await;
    assert_eq!(refused.status, 401, "{}", refused.html);
    let answer = auth.get(&options(&refused), ORIGIN, RP_ID, true);
    let done = b.post("/login/second-factor", &[("challenge", &refused.challenge()), ("passkey_state", &field(&refused, "passkey_state")), ("credential", &answer)]).await;
    let claims = id_token(&s, &secret, &finish(&b, done).await).await;
    assert_eq!(claims["acr"], ACR_PASSKEY);
    assert_eq!(claims["amr"], json!(["pwd", "hwk", "user", "mfa"]));

    // A client that requires a passkey: Alice's TOTP code would not do; the page offers
    // no code form, and a code posted anyway is refused.
    let acct = get(&browser, "/account").await;
    let totp_page = post(&browser, "/account/totp/new", &[("csrf", &field(&acct, "csrf"))]).await;
    let key = attr(&totp_page.html, "<code>").map(|_| ()).and(totp_page.html.split("<code>").nth(1).map(|s| s.split('<').next().unwrap().replace(' ', ""))).unwrap();
    let code = authrim::factors::totp::code_at(&key, now()).unwrap();
    let added = post(&browser, "/account/totp", &[("csrf", &field(&totp_page, "csrf")), ("totp_state", &field(&totp_page, "totp_state")), ("code", &code), ("name", "Phone")]).await;
    assert!(added.html.contains("Your authenticator app was added"), "{}", added.html);
    let strict_q = [("response_type", "code"), ("client_id", "strict"), ("redirect_uri", REDIRECT), ("scope", "openid"), ("state", "s")];
    let b = s.browser();
    let login = Page::from(b.authorize(&strict_q).await).await;
    let step = b.post("/login", &[("challenge", &login.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    assert!(!step.html.contains("name=\"code\""), "no code form when only a passkey will do: {}", step.html);
    let next = authrim::factors::totp::code_at(&key, now() + 30).unwrap();
    let refused = b.post("/login/second-factor", &[("challenge", &step.challenge()), ("code", &next)]).await;
    assert_eq!(refused.status, 401, "{}", refused.html);
}

#[tokio::test]
async fn the_account_page_needs_a_recent_sign_in_and_totp_is_kept_only_once_confirmed() {
    let s = TestServer::start_with(|c| {
        passkey_config(c);
        c.account_reauth_max_age = 1;
    })
    .await;
    let alice = s.user("alice", json!({})).await;
    let browser = s.browser();
    let acct = account(&browser).await;
    let setup = post(&browser, "/account/totp/new", &[("csrf", &field(&acct, "csrf"))]).await;
    assert_eq!(setup.status, 200, "{}", setup.html);
    assert!(setup.html.contains("role=\"img\"") && setup.html.contains("<svg"), "a QR code: {}", setup.html);
    let key = setup.html.split("<code>").nth(1).unwrap().split('<').next().unwrap().replace(' ', "");
    // A wrong code keeps nothing and asks again.
    let wrong = post(&browser, "/account/totp", &[("csrf", &field(&setup, "csrf")), ("totp_state", &field(&setup, "totp_state")), ("code", "000000")]).await;
    assert_eq!(wrong.status, 422, "{}", wrong.html);
    let (_, listed) = s.admin(reqwest::Method::GET, &format!("/admin/users/{alice}/factors"), None).await;
    assert_eq!(listed["factors"], json!([]));

    // Two seconds later the sign-in is too old for a change: sign in again first.
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    let code = authrim::factors::totp::code_at(&key, now()).unwrap();
    let stale = post(&browser, "/account/totp", &[("csrf", &field(&wrong, "csrf")), ("totp_state", &field(&wrong, "totp_state")), ("code", &code)]).await;
    assert_eq!(stale.status, 403, "{}", stale.html);
    assert!(stale.html.contains("/account/login?reauth=1"), "{}", stale.html);
    let login = get(&browser, "/account/login?reauth=1").await;
    assert!(login.is_login(), "prompt=login asks for the password again: {}", login.html);
    let acct = post(&browser, "/login", &[("challenge", &login.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    assert!(acct.html.contains("<h1>Your account</h1>"), "{}", acct.html);
    // The pending enrolment was sealed to the old session: it does not carry over.
    let carried = post(&browser, "/account/totp", &[("csrf", &field(&acct, "csrf")), ("totp_state", &field(&wrong, "totp_state")), ("code", &code)]).await;
    assert_eq!(carried.status, 400, "{}", carried.html);
    let setup = post(&browser, "/account/totp/new", &[("csrf", &field(&acct, "csrf"))]).await;
    let key = setup.html.split("<code>").nth(1).unwrap().split('<').next().unwrap().replace(' ', "");
    let code = authrim::factors::totp::code_at(&key, now()).unwrap();
    let added = post(&browser, "/account/totp", &[("csrf", &field(&setup, "csrf")), ("totp_state", &field(&setup, "totp_state")), ("code", &code), ("name", "Phone")]).await;
    assert!(added.html.contains("Your authenticator app was added") && added.html.contains("Phone"), "{}", added.html);
    let (_, listed) = s.admin(reqwest::Method::GET, &format!("/admin/users/{alice}/factors"), None).await;
    assert_eq!(listed["factors"][0]["kind"], "totp", "{listed}");
}

/// The account page changes the password: the current one is checked (a wrong one counts in
/// the throttle), the two new ones must agree and be long enough; afterwards the new password
/// signs in, the old one does not, and the user's other sessions have ended.
#[tokio::test]
async fn the_account_page_changes_the_password_and_ends_other_sessions() {
    let s = TestServer::start().await;
    s.client("rp", json!({})).await;
    s.user("alice", json!({})).await;
    // Another browser signed in first: its session must end.
    let other = s.browser();
    s.code_for(&other, "rp", "alice", &[]).await;
    let browser = s.browser();
    let acct = account(&browser).await;
    assert!(acct.html.contains("href=\"/account/password\""), "{}", acct.html);
    let form = get(&browser, "/account/password").await;
    assert_eq!(form.status, 200);
    let csrf = field(&form, "csrf");
    let new = "a brand new passphrase";
    let cases = [(("wrong password", new, new), 401, "not right"), ((PASSWORD, new, "something else"), 422, "not the same"), ((PASSWORD, "short", "short"), 422, "8 to 1024")];
    for ((current, n, c), status, says) in cases {
        let page = post(&browser, "/account/password", &[("csrf", &csrf), ("current_password", current), ("new_password", n), ("confirm_password", c)]).await;
        assert_eq!(page.status, status, "{}", page.html);
        assert!(page.html.contains(says), "{says}: {}", page.html);
    }
    let forged = post(&browser, "/account/password", &[("csrf", "forged"), ("current_password", PASSWORD), ("new_password", new), ("confirm_password", new)]).await;
    assert_eq!(forged.status, 400, "{}", forged.html);
    let done = post(&browser, "/account/password", &[("csrf", &csrf), ("current_password", PASSWORD), ("new_password", new), ("confirm_password", new)]).await;
    assert!(done.html.contains("Your password was changed"), "{}", done.html);

    // The other browser's session is gone: prompt=none there is login_required.
    let res = other.authorize(&query(&[("prompt", "none")])).await;
    let page = Page::from(res).await;
    assert_eq!(page.redirect_params()["error"], "login_required");
    // The old password no longer signs in; the new one does.
    let b = s.browser();
    let login = Page::from(b.authorize(&query(&[])).await).await;
    let refused = b.post("/login", &[("challenge", &login.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    assert_eq!(refused.status, 401);
    let ok = b.post("/login", &[("challenge", &refused.challenge()), ("username", "alice"), ("password", new)]).await;
    assert!(ok.is_consent() || ok.location.is_some(), "{}", ok.html);
    let audit = s.admin(reqwest::Method::GET, "/admin/audit?event=password_changed", None).await.1;
    assert_eq!(audit["events"].as_array().unwrap().len(), 1, "{audit}");
}

/// The account page changes the user's profile: a new e-mail is no longer verified and must
/// not be another user's sign-in name; an emptied field removes the claim; a forged form
/// changes nothing; userinfo then says what the user wrote.
#[tokio::test]
async fn the_account_page_changes_the_profile() {
    let s = TestServer::start().await;
    s.user("alice", json!({"email": "alice@example.com", "email_verified": true, "name": "Alice", "locale": "en-GB"})).await;
    s.user("bob", json!({"email": "bob@example.com"})).await;
    let browser = s.browser();
    account(&browser).await;
    let form = get(&browser, "/account/profile").await;
    assert!(form.html.contains("value=\"alice@example.com\"") && form.html.contains("value=\"Alice\""), "{}", form.html);
    let forged = post(&browser, "/account/profile", &[("csrf", "forged"), ("name", "Mallory")]).await;
    assert_eq!(forged.status, 400);
    let taken = post(&browser, "/account/profile", &[("csrf", &field(&form, "csrf")), ("name", "Alice"), ("email", "BOB@example.com")]).await;
    assert_eq!(taken.status, 409, "{}", taken.html);
    assert!(taken.html.contains("Another account signs in with this e-mail") && taken.html.contains("value=\"BOB@example.com\""), "{}", taken.html);
    let saved = post(&browser, "/account/profile", &[("csrf", &field(&form, "csrf")), ("name", "Alice Liddell"), ("given_name", "Alice"), ("email", "alice@wonderland.example"), ("locale", "")]).await;
    assert!(saved.html.contains("Your profile was saved."), "{}", saved.html);
    let user = s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).user_by_login("alice@wonderland.example").expect("signs in with the new e-mail");
    assert_eq!(user.claims.get("name"), Some(&json!("Alice Liddell")));
    assert_eq!(user.claims.get("email_verified"), Some(&json!(false)), "a new address is not verified");
    assert!(user.claims.get("locale").is_none(), "emptied, removed");
    assert!(s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).user_by_login("alice@example.com").is_none(), "the old address no longer signs in");
    let (_, audit) = s.admin(reqwest::Method::GET, "/admin/audit?event=profile_changed", None).await;
    assert_eq!(audit["events"][0]["detail"]["changed"], json!(["name", "given_name", "email", "locale"]), "{audit}");
}
