//! DPoP (RFC 9449): proof-of-possession JWTs that bind tokens to a client's key.
//!
//! A proof is checked as RFC 9449 §4.3 lists: one `DPoP` header; a JWS of `typ: dpop+jwt`
//! with an asymmetric `alg` and a public `jwk` header that verifies it; `htm` and `htu`
//! naming this request; `iat` within `dpop_proof_max_age`; a `jti` not seen before (§11.1);
//! `ath` (the access token's hash) at a resource; and, when `dpop_nonce` is on, a nonce of
//! ours that is current (§8).
//!
//! Replay: seen `jti`s are kept in memory on this node until their proof's window ends,
//! bounded by `dpop_replay_max_entries`. Several nodes each keep their own, so a replay to
//! another node inside the window goes unnoticed unless server nonces are on; a replayed
//! proof still only works with the token and key it was made for (see docs/security.md).
//!
//! Nonces are stateless: the time window and a MAC of it, good for the current and the
//! previous window, so every node accepts every node's nonces without sharing anything.

use crate::app::App;
use crate::client_auth::signed::alg_name;
use crate::error::{Challenge, OAuthError};
use crate::util::{b64, b64_decode, ct_eq, now, sha256};
use axum::http::HeaderMap;
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use jsonwebtoken::{DecodingKey, Validation};
use parking_lot::Mutex;
use serde::Deserialize;
use std::collections::HashMap;

/// Clock skew tolerated on a proof's `iat`, in seconds.
const LEEWAY: u64 = 30;
const REPLAY_SHARDS: usize = 16;

/// The key a request proved possession of: its RFC 7638 thumbprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProvenKey {
    pub jkt: String,
}


#[derive(Deserialize)]
struct ProofClaims {
    jti: String,
    htm: String,
    htu: String,
    iat: u64,
    #[serde(default)]
    ath: Option<String>,
    #[serde(default)]
    nonce: Option<String>,
}

/// Where a proof is checked, and with what it must agree.
pub struct Expected<'a> {
    pub method: &'a str,
    /// The URL of the endpoint called, as clients reach it (`App::endpoint`).
    pub url: &'a str,
    /// At a resource: the access token the proof must be bound to (`ath`).
    pub access_token: Option<&'a str>,
}

/// A checked proof: the key it proved, and its `jti` held as used while the request it came
/// with is answered. `keep` it once that request has succeeded; dropped without, the `jti` is
/// let go again, so requests that fail for another reason (a bogus code, a revoked token)
/// leave nothing behind and cannot fill the replay memory (issue 30).
pub struct Proof<'a> {
    pub key: ProvenKey,
    held: Option<(&'a DpopState, [u8; 32])>,
}

impl Proof<'_> {
    /// The request succeeded: the `jti` stays used until its proof's window ends.
    pub fn keep(mut self) {
        self.held = None;
    }
}

impl Drop for Proof<'_> {
    fn drop(&mut self) {
        if let Some((state, slot)) = self.held.take() {
            state.release(&slot);
        }
    }
}

impl std::ops::Deref for Proof<'_> {
    type Target = ProvenKey;
    fn deref(&self) -> &ProvenKey {
        &self.key
    }
}

/// The proof in `headers`, if any, checked against `expected`.
pub fn check<'a>(app: &'a App, headers: &HeaderMap, expected: &Expected<'_>) -> Result<Option<Proof<'a>>, OAuthError> {
    let mut values = headers.get_all("dpop").iter();
    let Some(value) = values.next() else { return Ok(None) };
    if values.next().is_some() {
        return Err(invalid("more than one DPoP header"));
    }
    let jwt = value.to_str().map_err(|_| invalid("the DPoP header is not a JWT"))?;
    verify(app, jwt, expected).map(Some)
}

fn invalid(why: impl Into<std::borrow::Cow<'static, str>>) -> OAuthError {
    OAuthError::invalid_request(why).code_as("invalid_dpop_proof")
}

fn verify<'a>(app: &'a App, jwt: &str, expected: &Expected<'_>) -> Result<Proof<'a>, OAuthError> {
    let (claims, jwk) = read_proof(jwt, &app.dpop.algs)?;
    check_claims(app, &claims, expected)?;
    let jkt = thumbprint(&jwk).ok_or_else(|| invalid("the DPoP proof's jwk has no thumbprint"))?;
    // Last, after everything else passed: spending the jti of a proof refused for another
    // reason would let a bad proof burn a good one's id.
    let expires = claims.iat + app.config.dpop_proof_max_age + LEEWAY;
    let Some(slot) = app.dpop.first_use(&jkt, &claims.jti, expires) else {
        return Err(invalid("this DPoP proof was already used (jti)"));
    };
    Ok(Proof { key: ProvenKey { jkt }, held: Some((&app.dpop, slot)) })
}

/// The proof's form and signature (RFC 9449 §4.3 steps 2-6): its claims and key, whatever
/// the time and the request.
fn read_proof(jwt: &str, algs: &[&str]) -> Result<(ProofClaims, Jwk), OAuthError> {
    let header = jsonwebtoken::decode_header(jwt).map_err(|_| invalid("the DPoP proof is not a JWS with an accepted alg"))?;
    if header.typ.as_deref() != Some("dpop+jwt") {
        return Err(invalid("the DPoP proof's typ must be dpop+jwt"));
    }
    if !algs.contains(&alg_name(header.alg)) {
        return Err(invalid("the DPoP proof's alg is not accepted"));
    }
    let jwk = header.jwk.as_ref().ok_or_else(|| invalid("the DPoP proof has no jwk header"))?;
    if !is_public(jwt) {
        return Err(invalid("the DPoP proof's jwk must be a public key"));
    }
    let key = DecodingKey::from_jwk(jwk).map_err(|_| invalid("the DPoP proof's jwk is not a usable key"))?;
    let mut v = Validation::new(header.alg);
    v.validate_exp = false;
    v.validate_aud = false;
    v.required_spec_claims.clear();
    let claims = jsonwebtoken::decode::<ProofClaims>(jwt, &key, &v)
        .map_err(|e| invalid(proof_error(e.kind())))?
        .claims;
    Ok((claims, jwk.clone()))
}

/// Why a proof's signature or claims did not verify, in our words: the library's own text
/// (`InvalidSignature`, serde's "missing field `htm` at line 1 column 145") is not for clients.
fn proof_error(kind: &jsonwebtoken::errors::ErrorKind) -> &'static str {
    use jsonwebtoken::errors::ErrorKind;
    match kind {
        ErrorKind::InvalidSignature => "the DPoP proof's signature does not verify with its jwk",
        ErrorKind::Json(_) => "the DPoP proof's claims are missing or malformed (htm, htu, iat and jti are required)",
        ErrorKind::Base64(_) | ErrorKind::Utf8(_) | ErrorKind::InvalidToken => "the DPoP proof is not a well-formed JWS",
        _ => "the DPoP proof does not verify",
    }
}

/// The proof's claims against this request (RFC 9449 §4.3 steps 8-12, replay aside).
fn check_claims(app: &App, claims: &ProofClaims, expected: &Expected<'_>) -> Result<(), OAuthError> {
    if claims.htm != expected.method {
        return Err(invalid("the DPoP proof's htm is not this request's method"));
    }
    if !same_target(&claims.htu, expected.url) {
        return Err(invalid("the DPoP proof's htu is not this endpoint's URL"));
    }
    let t = now();
    if claims.iat > t + LEEWAY || claims.iat + app.config.dpop_proof_max_age < t {
        return Err(invalid("the DPoP proof's iat is outside the accepted window"));
    }
    if claims.jti.is_empty() || claims.jti.len() > 256 {
        return Err(invalid("the DPoP proof's jti must be 1-256 characters"));
    }
    match (expected.access_token, &claims.ath) {
        (Some(token), Some(ath)) if ct_eq(ath.as_bytes(), b64(&sha256(token.as_bytes())).as_bytes()) => {}
        (Some(_), _) => return Err(invalid("the DPoP proof's ath does not match the access token")),
        (None, _) => {}
    }
    if app.config.dpop_nonce && !claims.nonce.as_deref().is_some_and(|n| app.dpop.nonce_is_current(n)) {
        return Err(OAuthError::invalid_request("a current DPoP-Nonce is required").code_as("use_dpop_nonce"));
    }
    Ok(())
}

/// RFC 7638 thumbprint (SHA-256, base64url) of a public JWK.
pub fn thumbprint(jwk: &Jwk) -> Option<String> {
    jwk.thumbprint(ThumbprintHash::SHA256).ok()
}

/// No private or symmetric members in the proof's `jwk` (RFC 9449 §4.3 step 7).
fn is_public(jwt: &str) -> bool {
    let Some(header) = jwt.split('.').next().and_then(b64_decode) else { return false };
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(&header) else { return false };
    let Some(jwk) = v.get("jwk").and_then(|j| j.as_object()) else { return false };
    !["d", "p", "q", "dp", "dq", "qi", "k"].iter().any(|m| jwk.contains_key(*m))
}

/// RFC 9449 §4.3: `htu` is compared without query and fragment, after normalisation
/// (RFC 3986 §6: scheme and host case, default ports, dot segments).
fn same_target(htu: &str, url: &str) -> bool {
    let strip = |s: &str| {
        url::Url::parse(s).ok().map(|mut u| {
            u.set_query(None);
            u.set_fragment(None);
            u.to_string()
        })
    };
    matches!((strip(htu), strip(url)), (Some(a), Some(b)) if a == b)
}

/// RFC 9449 §8: when nonces are on, every answer of an endpoint that takes proofs (`/token`,
/// `/par`, `/userinfo`) carries the nonce to use next, success or `use_dpop_nonce` alike.
pub fn offer_nonce(app: &App, res: &mut axum::response::Response) {
    if app.config.dpop_nonce {
        if let Ok(v) = axum::http::HeaderValue::from_str(&app.dpop.nonce()) {
            res.headers_mut().insert("dpop-nonce", v);
        }
    }
}

/// A `DPoP` challenge (RFC 9449 §7.1) for a resource's refusal, naming the algorithms.
pub fn challenge(app: &App) -> Challenge {
    Challenge::Dpop(app.dpop.algs_joined.clone())
}

/// This node's memory of used proof ids, the key that makes nonces, and the algorithms
/// proofs may use (`dpop_signing_alg_values_supported`).
pub struct DpopState {
    pub algs: Vec<&'static str>,
    /// The same, space-separated, for the `algs` of a challenge.
    algs_joined: std::sync::Arc<str>,
    seen: Vec<Mutex<HashMap<[u8; 32], u64>>>,
    max_per_shard: usize,
    nonce_key: [u8; 32],
    nonce_window: u64,
}

impl DpopState {
    pub fn new(nonce_key: [u8; 32], max_entries: usize, nonce_window: u64, algs: Vec<&'static str>) -> Self {
        Self {
            algs_joined: algs.join(" ").into(),
            algs,
            seen: (0..REPLAY_SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            max_per_shard: max_entries.div_ceil(REPLAY_SHARDS).max(1),
            nonce_key,
            nonce_window: nonce_window.max(1),
        }
    }

    /// Remember (`jkt`, `jti`) until `expires`: its slot, or `None` if it is already
    /// remembered. A full shard is swept of expired entries first; if it is still full, the
    /// entry nearest its end goes, so that the memory's bound can never be used to refuse
    /// service. Only a request that succeeds keeps its entry (`Proof::keep`), so filling the
    /// memory takes as many successful requests: under such a flood the oldest proofs lose
    /// their replay protection first, and they are the nearest to leaving their window anyway.
    fn first_use(&self, jkt: &str, jti: &str, expires: u64) -> Option<[u8; 32]> {
        let key = sha256(format!("{jkt}\u{1f}{jti}").as_bytes());
        let shard = &self.seen[key[0] as usize % REPLAY_SHARDS];
        let mut seen = shard.lock();
        let t = now();
        if seen.get(&key).is_some_and(|&e| e > t) {
            return None;
        }
        if seen.len() >= self.max_per_shard {
            seen.retain(|_, e| *e > t);
            if seen.len() >= self.max_per_shard {
                let oldest = seen.iter().min_by_key(|(_, e)| **e).map(|(k, _)| *k);
                if let Some(oldest) = oldest {
                    seen.remove(&oldest);
                }
            }
        }
        seen.insert(key, expires);
        Some(key)
    }

    /// Forget a slot `first_use` gave: its request failed.
    fn release(&self, slot: &[u8; 32]) {
        self.seen[slot[0] as usize % REPLAY_SHARDS].lock().remove(slot);
    }

    /// Proof ids remembered now, on this node.
    pub fn remembered(&self) -> usize {
        self.seen.iter().map(|s| s.lock().len()).sum()
    }

    /// Drop expired proof ids (housekeeping).
    pub fn prune(&self) {
        let t = now();
        for shard in &self.seen {
            shard.lock().retain(|_, e| *e > t);
        }
    }

    /// A nonce for the current window (sent as `DPoP-Nonce`).
    pub fn nonce(&self) -> String {
        self.nonce_for(now() / self.nonce_window)
    }

    fn nonce_for(&self, window: u64) -> String {
        let mut data = window.to_be_bytes().to_vec();
        data.extend_from_slice(&self.mac(window)[..16]);
        b64(&data)
    }

    fn mac(&self, window: u64) -> [u8; 32] {
        let key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, &self.nonce_key);
        let tag = aws_lc_rs::hmac::sign(&key, &window.to_be_bytes());
        tag.as_ref().try_into().expect("32-byte HMAC-SHA256")
    }

    /// Ours, and of this window or the one before (a nonce handed out just before a window
    /// ends stays good for one more).
    pub fn nonce_is_current(&self, nonce: &str) -> bool {
        let Some(raw) = b64_decode(nonce).filter(|r| r.len() == 24) else { return false };
        let window = u64::from_be_bytes(raw[..8].try_into().expect("8 bytes"));
        let current = now() / self.nonce_window;
        (window == current || window + 1 == current) && ct_eq(&raw[8..], &self.mac(window)[..16])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7638_thumbprint_example() {
        // RFC 7638 §3.1.
        let jwk: Jwk = serde_json::from_value(serde_json::json!({
            "kty": "RSA",
            "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
            "e": "AQAB", "alg": "RS256", "kid": "2011-04-29"
        }))
        .unwrap();
        assert_eq!(thumbprint(&jwk).unwrap(), "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs");
    }

    /// RFC 9449 §4.1's example proof: its form and signature pass, its claims read back, its
    /// key's thumbprint is the one RFC 9449 §6.1 binds; and §7.1's example `ath`.
    #[test]
    fn rfc9449_example_proof() {
        let proof = concat!(
            "eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVTMjU2IiwiandrIjp7Imt0eSI6IkVDIiwieCI6Imw4dEZyaHgtMz",
            "R0VjNoUklDUkRZOXpDa0RscEJoRjQyVVFVZldWQVdCRnMiLCJ5IjoiOVZFNGpmX09rX282NHpiVFRsY3VOSmFq",
            "SG10NnY5VERWclUwQ2R2R1JEQSIsImNydiI6IlAtMjU2In19.eyJqdGkiOiItQndDM0VTYzZhY2MybFRjIiwia",
            "HRtIjoiUE9TVCIsImh0dSI6Imh0dHBzOi8vc2VydmVyLmV4YW1wbGUuY29tL3Rva2VuIiwiaWF0IjoxNTYyMjY",
            "yNjE2fQ.2-GxA6T8lP4vfrg8v-FdWP0A0zdrj8igiMLvqRMUvwnQg4PtFLbdLXiOSsX0x7NVY-FNyJK70nfbV37",
            "xRZT3Lg",
        );
        let (claims, jwk) = read_proof(proof, &["ES256"]).unwrap();
        assert!(read_proof(proof, &["PS256", "EdDSA"]).is_err(), "an alg not accepted");
        assert_eq!((claims.jti.as_str(), claims.htm.as_str(), claims.htu.as_str(), claims.iat), ("-BwC3ESc6acc2lTc", "POST", "https://server.example.com/token", 1562262616));
        assert_eq!(thumbprint(&jwk).unwrap(), "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I");
        assert_eq!(b64(&sha256(b"Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU")), "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo");
        // One byte of the signature changed: refused.
        let mut forged = proof.to_string();
        let last = forged.pop().unwrap();
        forged.push(if last == 'g' { 'h' } else { 'g' });
        assert!(read_proof(&forged, &["ES256"]).is_err());
    }

    #[test]
    fn htu_is_compared_without_query_and_after_normalisation() {
        assert!(same_target("https://AS.example:443/token?x=1#f", "https://as.example/token"));
        assert!(same_target("https://as.example/a/../token", "https://as.example/token"));
        assert!(!same_target("https://as.example/token/", "https://as.example/token"));
        assert!(!same_target("http://as.example/token", "https://as.example/token"));
        assert!(!same_target("not a url", "https://as.example/token"));
    }

    #[test]
    fn nonces_are_ours_and_current() {
        let s = DpopState::new([9; 32], 100, 300, vec!["ES256"]);
        let n = s.nonce();
        assert!(s.nonce_is_current(&n));
        let w = now() / 300;
        assert!(s.nonce_is_current(&s.nonce_for(w - 1)), "the previous window is still good");
        assert!(!s.nonce_is_current(&s.nonce_for(w - 2)));
        assert!(!s.nonce_is_current(&s.nonce_for(w + 1)));
        assert!(!DpopState::new([8; 32], 100, 300, vec!["ES256"]).nonce_is_current(&n), "another key's nonce");
        assert!(!s.nonce_is_current("garbage") && !s.nonce_is_current(""));
    }

    #[test]
    fn proof_ids_are_used_once_and_the_memory_is_bounded() {
        let s = DpopState::new([9; 32], 16, 300, vec!["ES256"]);
        let later = now() + 60;
        assert!(s.first_use("k", "a", later).is_some());
        assert!(s.first_use("k", "a", later).is_none());
        assert!(s.first_use("other-key", "a", later).is_some(), "per key");
        // One entry per shard at most (16 over 16 shards): a new id that lands in a full
        // shard is still taken (the memory never refuses service), the oldest going first.
        for i in 0..200 {
            assert!(s.first_use("k", &format!("j{i}"), later + i).is_some());
        }
        assert!(s.remembered() <= 16, "bounded: {}", s.remembered());
        assert!(s.first_use("k", "j199", later).is_none(), "the newest is still remembered");
        // Expired entries make room again.
        let s = DpopState::new([9; 32], 16, 300, vec!["ES256"]);
        for i in 0..200 {
            let _ = s.first_use("k", &format!("old{i}"), now() - 1);
        }
        assert!(s.first_use("k", "fresh", later).is_some());
    }

    #[test]
    fn a_released_slot_is_forgotten() {
        let s = DpopState::new([9; 32], 1000, 300, vec!["ES256"]);
        let later = now() + 60;
        let slot = s.first_use("k", "a", later).unwrap();
        assert_eq!(s.remembered(), 1);
        s.release(&slot);
        assert_eq!(s.remembered(), 0);
        assert!(s.first_use("k", "a", later).is_some(), "usable again after a failed request");
    }
}
