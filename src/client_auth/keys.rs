//! A client's public keys: its inline `jwks` (parsed once, with the client) or its `jwks_uri`
//! (fetched, cached for `client_jwks_cache_ttl`, fetched again early when a JWT names a `kid`
//! the cached set lacks, at most once per `client_jwks_min_refetch` so that a stream of
//! made-up kids cannot turn us into a request generator). The same sets hold the client's
//! encryption keys (`use: enc` or no `use`), which ID tokens and userinfo answers are
//! encrypted to (`tokens::encryption`).

use crate::app::App;
use crate::keys::jwe::RecipientKey;
use crate::registry::Client;
use jsonwebtoken::jwk::{Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use parking_lot::Mutex;
use serde_json::Value;
use crate::bounded::BoundedMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a client may sign its JWTs with (client authentication, request objects).
pub const ASYMMETRIC_ALGS: &[&str] = &["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"];
/// What a `client_secret_jwt` client may MAC its JWTs with.
pub const HMAC_ALGS: &[&str] = &["HS256", "HS384", "HS512"];
/// At most this many keys in one set: a client needs a few (rotation), not hundreds.
const MAX_KEYS: usize = 32;

/// One usable public key of a client.
#[derive(Clone)]
pub struct ClientKey {
    pub kid: Option<String>,
    /// The JWK's `alg`, when it names one: the key is then good for that algorithm only.
    pub alg: Option<Algorithm>,
    pub key: DecodingKey,
    /// The public key in the form `x509::jwk_public_key` gives, to find a certificate's key
    /// (`self_signed_tls_client_auth`).
    pub public: Option<Arc<str>>,
}

impl std::fmt::Debug for ClientKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientKey").field("kid", &self.kid).field("alg", &self.alg).finish()
    }
}

impl ClientKey {
    /// Whether this key may check a JWT with `alg` and (if the JWT names one) `kid`.
    pub fn fits(&self, alg: Algorithm, kid: Option<&str>) -> bool {
        self.alg.is_none_or(|a| a == alg) && kid.is_none_or(|k| self.kid.as_deref() == Some(k))
    }
}

/// `{"keys": []}` (or `{}`): how an update clears the inline set.
pub fn is_empty_set(jwks: &Value) -> bool {
    jwks.as_object().is_some_and(|o| o.get("keys").is_none_or(|k| k.as_array().is_some_and(Vec::is_empty)))
}

/// Parse a JWK Set (RFC 7517 §5) into the signature keys we can use. Encryption keys are
/// skipped; a private or symmetric key is an error (a client must never hand us those, and
/// a set that holds one was not meant to be published).
pub fn parse_jwks(jwks: &Value) -> Result<Vec<ClientKey>, String> {
    let keys = jwks.get("keys").and_then(Value::as_array).ok_or("not a JWK Set (no \"keys\" array)")?;
    if keys.len() > MAX_KEYS {
        return Err(format!("more than {MAX_KEYS} keys"));
    }
    let mut out = Vec::new();
    for k in keys {
        let obj = k.as_object().ok_or("a key is not a JSON object")?;
        if ["d", "p", "q", "dp", "dq", "qi", "k"].iter().any(|m| obj.contains_key(*m)) {
            return Err("the set holds a private or symmetric key; publish public keys only".into());
        }
        // A key type we do not know is skipped (RFC 7517 §5).
        if !matches!(obj.get("kty").and_then(Value::as_str), Some("RSA" | "EC" | "OKP")) {
            continue;
        }
        let jwk: Jwk = serde_json::from_value(k.clone()).map_err(|e| format!("unreadable key: {e}"))?;
        if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
            continue;
        }
        let alg = match obj.get("alg").and_then(Value::as_str) {
            None => None,
            Some(a) if ASYMMETRIC_ALGS.contains(&a) => Some(a.parse::<Algorithm>().map_err(|e| e.to_string())?),
            Some(_) => continue, // an encryption algorithm, or one we do not verify
        };
        let key = DecodingKey::from_jwk(&jwk).map_err(|e| format!("unusable key: {e}"))?;
        let public = super::x509::jwk_public_key(obj).map(Arc::from);
        out.push(ClientKey { kid: jwk.common.key_id.clone(), alg, key, public });
    }
    Ok(out)
}

/// The encryption keys of a JWK Set (RFC 7517 §5) that we can encrypt to; a key we cannot
/// use is skipped (signature keys, other types). Errors are for registration, which refuses
/// an inline set holding a broken encryption key; a fetched set is read leniently
/// (`lenient`), since one bad key must not hide the good ones.
pub fn parse_encryption_jwks(jwks: &Value, lenient: bool) -> Result<Vec<RecipientKey>, String> {
    let keys = jwks.get("keys").and_then(Value::as_array).ok_or("not a JWK Set (no \"keys\" array)")?;
    let mut out = Vec::new();
    for k in keys.iter().take(MAX_KEYS) {
        match RecipientKey::from_jwk(k) {
            Ok(Some(key)) => out.push(key),
            Ok(None) => {}
            Err(e) if lenient => tracing::debug!(error = %e, "unusable encryption key skipped"),
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

struct Cached {
    keys: Arc<[ClientKey]>,
    /// The set's encryption keys.
    enc: Arc<[RecipientKey]>,
    fetched_at: Instant,
}

/// The fetched key sets, by `jwks_uri`: registered clients', document clients' and trusted
/// issuers'. Document clients can be made up by anyone, so the number of sets is bounded
/// (`client_jwks_cache_max_entries`; the oldest fetch goes first).
pub struct KeyCache {
    sets: Mutex<BoundedMap<Cached>>,
    /// When each owner (client or trusted issuer) at a URI last made us fetch it, keyed
    /// `owner\u{1f}uri`. The refetch interval is counted per owner: several clients may share
    /// one `jwks_uri` (a platform's, the conformance suite's), and a set fetched for one of
    /// them, or before a client existed, says nothing of the keys another has just published
    /// there (OpenID Connect Core §10.1.1: an unfamiliar kid sends the verifier back to the
    /// URI). Bounded like the sets.
    refetched: Mutex<BoundedMap<Instant>>,
}

impl KeyCache {
    pub fn new(max_entries: usize) -> Self {
        Self { sets: Mutex::new(BoundedMap::new(max_entries)), refetched: Mutex::new(BoundedMap::new(max_entries)) }
    }

    /// The keys of `client` for a JWT with `alg` and `kid`: inline ones, or its `jwks_uri`'s
    /// (cached; fetched again when none fits and the cached set is older than the refetch
    /// interval). An error is a set that cannot be had (the client cannot authenticate).
    pub async fn keys_for(&self, app: &App, client: &Client, alg: Algorithm, kid: Option<&str>) -> Result<Vec<ClientKey>, String> {
        let Some(uri) = client.meta.jwks_uri.as_deref() else {
            return Ok(fitting(client.inline_keys(), alg, kid));
        };
        self.keys_at(app, uri, client.id(), alg, kid).await
    }

    /// The keys at `uri` (a client's `jwks_uri`, or a trusted issuer's, named `owner` in the
    /// log) for a JWT with `alg` and `kid`, under the same caching rules.
    pub async fn keys_at(&self, app: &App, uri: &str, owner: &str, alg: Algorithm, kid: Option<&str>) -> Result<Vec<ClientKey>, String> {
        let (keys, _) = self.sets_at(app, uri, owner, |keys, _| keys.iter().any(|k| k.fits(alg, kid))).await?;
        Ok(fitting(&keys, alg, kid))
    }

    /// Whether `public` (`x509::Parsed::public_key`) is one of `client`'s signature keys:
    /// inline, or its `jwks_uri`'s under the same caching rules (fetched again when it is not
    /// there: the client may just have published it).
    pub async fn has_public_key(&self, app: &App, client: &Client, public: &str) -> Result<bool, String> {
        let holds = |keys: &[ClientKey]| keys.iter().any(|k| k.public.as_deref() == Some(public));
        let Some(uri) = client.meta.jwks_uri.as_deref() else {
            return Ok(holds(client.inline_keys()));
        };
        let (keys, _) = self.sets_at(app, uri, client.id(), |keys, _| holds(keys)).await?;
        Ok(holds(&keys))
    }

    /// The encryption keys of `client` that can receive a JWE of `alg`: inline ones, or its
    /// `jwks_uri`'s under the same caching rules (fetched again when none fits: the client
    /// may just have published one).
    pub async fn encryption_keys_for(&self, app: &App, client: &Client, alg: &str) -> Result<Vec<RecipientKey>, String> {
        let fits = |keys: &[RecipientKey]| keys.iter().filter(|k| k.fits(alg)).cloned().collect::<Vec<_>>();
        let Some(uri) = client.meta.jwks_uri.as_deref() else {
            return Ok(fits(client.encryption_keys()));
        };
        let (_, enc) = self.sets_at(app, uri, client.id(), |_, enc| enc.iter().any(|k| k.fits(alg))).await?;
        Ok(fits(&enc))
    }

    /// The set at `uri` (its signature and encryption keys), cached; fetched again when it is
    /// older than the TTL, or when it lacks what the caller needs (`found` says no) and this
    /// owner has not made us fetch it within the refetch interval.
    async fn sets_at(
        &self,
        app: &App,
        uri: &str,
        owner: &str,
        found: impl Fn(&[ClientKey], &[RecipientKey]) -> bool,
    ) -> Result<(Arc<[ClientKey]>, Arc<[RecipientKey]>), String> {
        let ttl = Duration::from_secs(app.config.client_jwks_cache_ttl);
        let min_refetch = Duration::from_secs(app.config.client_jwks_min_refetch);
        let cached = self.sets.lock().get(uri).map(|c| (c.keys.clone(), c.enc.clone(), c.fetched_at.elapsed()));
        let owner_key = format!("{owner}\u{1f}{uri}");
        if let Some((keys, enc, age)) = &cached {
            // Nothing fits: fetch again, unless this owner made us fetch within the interval
            // (so made-up kids cannot turn us into a request generator).
            let owner_fetched_lately = || self.refetched.lock().get(&owner_key).is_some_and(|at| at.elapsed() < min_refetch);
            if *age < ttl && (found(keys, enc) || (*age < min_refetch && owner_fetched_lately())) {
                return Ok((keys.clone(), enc.clone()));
            }
        }
        self.refetched.lock().insert(owner_key, Instant::now());
        match self.fetch(app, uri).await {
            Ok(sets) => Ok(sets),
            // The old set serves while the new one cannot be had: a brief outage of the
            // client's key host should not lock it out.
            Err(e) => match cached {
                Some((keys, enc, _)) => {
                    tracing::warn!(owner, error = %e, "jwks_uri fetch failed; using the cached set");
                    Ok((keys, enc))
                }
                None => Err(e),
            },
        }
    }

    async fn fetch(&self, app: &App, uri: &str) -> Result<(Arc<[ClientKey]>, Arc<[RecipientKey]>), String> {
        let doc = app.fetcher.get_json(uri).await.map_err(|e| format!("jwks_uri: {e}"))?;
        let keys: Arc<[ClientKey]> = parse_jwks(&doc).map_err(|e| format!("jwks_uri: {e}"))?.into();
        let enc: Arc<[RecipientKey]> = parse_encryption_jwks(&doc, true).map_err(|e| format!("jwks_uri: {e}"))?.into();
        self.sets.lock().insert(uri.to_string(), Cached { keys: keys.clone(), enc: enc.clone(), fetched_at: Instant::now() });
        Ok((keys, enc))
    }

    pub fn len(&self) -> usize {
        self.sets.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forget a client's fetched set (its registration changed).
    pub fn forget(&self, uri: &str) {
        self.sets.lock().remove(uri);
    }
}

fn fitting(keys: &[ClientKey], alg: Algorithm, kid: Option<&str>) -> Vec<ClientKey> {
    keys.iter().filter(|k| k.fits(alg, kid)).cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // RFC 7517 Appendix A.1: the example public keys (one EC P-256, one RSA).
    fn rfc7517_a1() -> Value {
        json!({"keys": [
            {"kty":"EC","crv":"P-256","x":"MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4","y":"4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM","use":"enc","kid":"1"},
            {"kty":"RSA","n":"0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw","e":"AQAB","alg":"RS256","kid":"2011-04-29"}
        ]})
    }

    #[test]
    fn rfc7517_example_set_yields_its_signature_key() {
        let keys = parse_jwks(&rfc7517_a1()).unwrap();
        // The EC key is for encryption ("use":"enc") and is skipped.
        assert_eq!(keys.len(), 1);
        assert_eq!(keys[0].kid.as_deref(), Some("2011-04-29"));
        assert!(keys[0].fits(Algorithm::RS256, Some("2011-04-29")));
        assert!(keys[0].fits(Algorithm::RS256, None));
        assert!(!keys[0].fits(Algorithm::PS256, None), "a key with alg RS256 serves RS256 only");
        assert!(!keys[0].fits(Algorithm::RS256, Some("other")));
    }

    #[test]
    fn private_symmetric_and_malformed_sets_are_refused() {
        for bad in [
            json!({"keys": [{"kty":"oct","k":"AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow"}]}),
            json!({"keys": [{"kty":"EC","crv":"P-256","x":"MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4","y":"4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM","d":"870MB6gfuTJ4HtUnUvYMyJpr5eUZNP4Bk43bVdj3eAE"}]}),
            json!({"keys": [{"kty":"RSA","n":"!!","e":"AQAB"}]}),
            json!({"keys": "nope"}),
            json!([1, 2]),
        ] {
            assert!(parse_jwks(&bad).is_err(), "{bad}");
        }
        let many = json!({"keys": vec![rfc7517_a1()["keys"][1].clone(); MAX_KEYS + 1]});
        assert!(parse_jwks(&many).is_err());
        // A key type we do not know is ignored, as RFC 7517 §5 says.
        assert!(parse_jwks(&json!({"keys": [{"kty":"future","x":"y"}]})).unwrap().is_empty());
    }

    /// The keys parse_jwks makes verify the RFCs' own signatures (jsonwebtoken's raw
    /// verification, the one `signed::verify` goes through).
    #[test]
    fn rfc_signature_vectors_verify_with_the_parsed_keys() {
        let vectors = [
            // RFC 7515 Appendix A.3 (ES256).
            (
                json!({"kty": "EC", "crv": "P-256", "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}),
                Algorithm::ES256,
                "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ",
                "DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q",
            ),
            // RFC 8037 Appendix A.4 (Ed25519).
            (
                json!({"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}),
                Algorithm::EdDSA,
                "eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc",
                "hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg",
            ),
        ];
        for (jwk, alg, input, sig) in vectors {
            let keys = parse_jwks(&json!({"keys": [jwk]})).unwrap();
            assert_eq!(keys.len(), 1);
            assert!(jsonwebtoken::crypto::verify(sig, input.as_bytes(), &keys[0].key, alg).unwrap(), "{alg:?}");
            let mut tampered = input.to_string();
            tampered.push('x');
            assert!(!jsonwebtoken::crypto::verify(sig, tampered.as_bytes(), &keys[0].key, alg).unwrap_or(false), "{alg:?}");
        }
    }

    #[test]
    fn empty_sets_clear() {
        assert!(is_empty_set(&json!({"keys": []})));
        assert!(is_empty_set(&json!({})));
        assert!(!is_empty_set(&rfc7517_a1()));
    }
}
