//! Sealed interaction state. Before anyone has signed in, Authrim stores nothing for a
//! pending authorization request: the validated request travels inside the login (and
//! consent) form, encrypted and authenticated under a key derived from the key-encryption
//! key, bound to a cookie of the browser it was rendered for, and with an expiry. A flood of
//! `/authorize` requests therefore costs memory only while each request is being answered,
//! and nothing on disk.
//!
//! AES-256-GCM-SIV with a random 96-bit nonce: the key is long-lived and seals one value per
//! page view, so a nonce collision must not be fatal, which SIV guarantees (a collision only
//! reveals that two plaintexts were equal). The purpose (`kind`) is the associated data, so a
//! login form's state never opens as a consent form's.
//!
//! What sealing does not give is one-time use: a form can be posted twice within its expiry.
//! Both forms it guards are safe to repeat (a login needs the password again; a consent post
//! needs the same session and grants the same scopes), and the binding to the browser's
//! cookie keeps another browser from posting it (login CSRF).

use crate::util::{b64, b64_decode, ct_eq, now, random_bytes, sha256};
use aws_lc_rs::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM_SIV, NONCE_LEN};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// Why a sealed value was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Unsealed {
    /// Not ours, altered, of another kind, too large, or expired.
    Invalid,
    /// Genuine, but rendered for another browser (or the cookie is gone).
    WrongBinding,
}

pub struct Sealer {
    key: LessSafeKey,
    /// The longest sealed value `open` will look at; anything longer is refused unread.
    max_len: usize,
}

#[derive(Serialize, Deserialize)]
struct Envelope<T> {
    /// SHA-256 of the cookie value the form must come back with.
    b: String,
    /// Expiry, seconds since the epoch.
    e: u64,
    p: T,
}

impl Sealer {
    pub fn new(key: [u8; 32], max_len: usize) -> Self {
        let key = LessSafeKey::new(UnboundKey::new(&AES_256_GCM_SIV, &key).expect("a 32-byte key"));
        Self { key, max_len }
    }

    /// The longest sealed value `open` accepts.
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// Seal `payload` for `kind`, bound to `cookie`, valid for `ttl` seconds.
    pub fn seal<T: Serialize>(&self, kind: &str, cookie: &str, ttl: u64, payload: &T) -> String {
        let envelope = Envelope { b: b64(&sha256(cookie.as_bytes())), e: now() + ttl, p: payload };
        let mut data = serde_json::to_vec(&envelope).expect("serializable state");
        let nonce = random_bytes::<NONCE_LEN>();
        self.key
            .seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::from(kind.as_bytes()), &mut data)
            .expect("AES-GCM-SIV seal");
        let mut out = nonce.to_vec();
        out.extend_from_slice(&data);
        b64(&out)
    }

    /// Open a value sealed for `kind`, checking its expiry and that `cookie` is the one it was
    /// bound to.
    pub fn open<T: DeserializeOwned>(&self, kind: &str, cookie: Option<&str>, sealed: &str) -> Result<T, Unsealed> {
        self.open_within(kind, cookie, sealed, 0)
    }

    /// As `open`, also taking a value expired at most `grace` seconds ago: genuine and bound
    /// to this browser, so what it carries (a validated request) can start over, rather than
    /// leaving the user at a dead end.
    pub fn open_expired<T: DeserializeOwned>(&self, kind: &str, cookie: Option<&str>, sealed: &str, grace: u64) -> Result<T, Unsealed> {
        self.open_within(kind, cookie, sealed, grace)
    }

    fn open_within<T: DeserializeOwned>(&self, kind: &str, cookie: Option<&str>, sealed: &str, grace: u64) -> Result<T, Unsealed> {
        if sealed.len() > self.max_len {
            return Err(Unsealed::Invalid);
        }
        let raw = b64_decode(sealed).ok_or(Unsealed::Invalid)?;
        if raw.len() < NONCE_LEN + 16 {
            return Err(Unsealed::Invalid);
        }
        let (nonce, body) = raw.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| Unsealed::Invalid)?;
        let mut data = body.to_vec();
        let plain = self.key.open_in_place(nonce, Aad::from(kind.as_bytes()), &mut data).map_err(|_| Unsealed::Invalid)?;
        let envelope: Envelope<T> = serde_json::from_slice(plain).map_err(|_| Unsealed::Invalid)?;
        if envelope.e.saturating_add(grace) <= now() {
            return Err(Unsealed::Invalid);
        }
        let bound = cookie.is_some_and(|c| ct_eq(b64(&sha256(c.as_bytes())).as_bytes(), envelope.b.as_bytes()));
        if !bound {
            return Err(Unsealed::WrongBinding);
        }
        Ok(envelope.p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealer() -> Sealer {
        Sealer::new([7u8; 32], 100_000)
    }

    #[test]
    fn round_trip_bound_to_kind_cookie_and_time() {
        let s = sealer();
        let v = s.seal("login", "cookie-a", 60, &vec!["x".to_string()]);
        assert_eq!(s.open::<Vec<String>>("login", Some("cookie-a"), &v).unwrap(), vec!["x".to_string()]);
        assert_eq!(s.open::<Vec<String>>("consent", Some("cookie-a"), &v), Err(Unsealed::Invalid));
        assert_eq!(s.open::<Vec<String>>("login", Some("cookie-b"), &v), Err(Unsealed::WrongBinding));
        assert_eq!(s.open::<Vec<String>>("login", None, &v), Err(Unsealed::WrongBinding));
        let expired = s.seal("login", "cookie-a", 0, &1u8);
        assert_eq!(s.open::<u8>("login", Some("cookie-a"), &expired), Err(Unsealed::Invalid));
        // Within a grace period, an expired value opens for a fresh start, still bound.
        assert_eq!(s.open_expired::<u8>("login", Some("cookie-a"), &expired, 60), Ok(1));
        assert_eq!(s.open_expired::<u8>("login", Some("cookie-b"), &expired, 60), Err(Unsealed::WrongBinding));
    }

    #[test]
    fn another_key_or_any_altered_byte_is_refused() {
        let s = sealer();
        let v = s.seal("login", "c", 60, &"payload");
        let other = Sealer::new([8u8; 32], 100_000);
        assert_eq!(other.open::<String>("login", Some("c"), &v), Err(Unsealed::Invalid));
        let mut raw = b64_decode(&v).unwrap();
        for i in [0, NONCE_LEN, raw.len() - 1] {
            raw[i] ^= 1;
            assert_eq!(s.open::<String>("login", Some("c"), &b64(&raw)), Err(Unsealed::Invalid), "byte {i}");
            raw[i] ^= 1;
        }
        assert_eq!(s.open::<String>("login", Some("c"), "not base64 !"), Err(Unsealed::Invalid));
        assert_eq!(s.open::<String>("login", Some("c"), ""), Err(Unsealed::Invalid));
        let small = Sealer::new([7u8; 32], 10);
        assert_eq!(small.open::<String>("login", Some("c"), &v), Err(Unsealed::Invalid));
    }

    #[test]
    fn two_seals_of_one_value_differ() {
        let s = sealer();
        assert_ne!(s.seal("login", "c", 60, &1u8), s.seal("login", "c", 60, &1u8));
    }
}
