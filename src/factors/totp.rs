//! TOTP (RFC 6238): 6 digits, 30-second steps, HMAC-SHA1 (what every authenticator app
//! implements), one step of clock skew either way. The secret (160 random bits, RFC 4226 §4)
//! is sealed under the key-encryption key; the last accepted time step is stored with it, and a
//! code is accepted only for a later step (one conditional update), so a code seen over a
//! shoulder or replayed within its window does not sign anyone in again.

use crate::tenant::TenantId;
use crate::db::{Database, StoreResult};
use crate::keys::Vault;
use crate::util::{ct_eq, now, random_bytes, random_token};
use totp_rs::{Algorithm, Secret, TOTP};

pub const DIGITS: usize = 6;
const STEP: u64 = 30;
/// Steps accepted either side of the current one.
const SKEW: u64 = 1;

fn seal_label(factor_id: &str) -> String {
    format!("totp:{factor_id}")
}

fn totp(secret: Vec<u8>) -> Option<TOTP> {
    TOTP::new(Algorithm::SHA1, DIGITS, 0, STEP, secret).ok()
}

/// A new TOTP factor for the user, stored; returns its id, the secret in base32 and the
/// `otpauth://` URI an authenticator app reads (Key Uri Format), shown once.
pub async fn enrol(db: &Database, vault: &Vault, issuer: &str, tenant: TenantId, user_id: &str, account: &str, name: &str) -> StoreResult<(String, String, String)> {
    let (secret, encoded, uri) = new_secret(issuer, account);
    let id = store(db, vault, tenant, user_id, name, secret, 0).await?;
    Ok((id, encoded, uri))
}

/// A fresh secret: raw, in base32, and as the `otpauth://` URI (Key Uri Format).
pub fn new_secret(issuer: &str, account: &str) -> (Vec<u8>, String, String) {
    let secret = random_bytes::<20>().to_vec();
    let encoded = match Secret::Raw(secret.clone()).to_encoded() {
        Secret::Encoded(s) => s,
        Secret::Raw(_) => unreachable!("to_encoded encodes"),
    };
    let label = url::form_urlencoded::byte_serialize(format!("{issuer}:{account}").as_bytes()).collect::<String>().replace('+', "%20");
    let issuer_q = url::form_urlencoded::byte_serialize(issuer.as_bytes()).collect::<String>();
    let uri = format!("otpauth://totp/{label}?secret={encoded}&issuer={issuer_q}&algorithm=SHA1&digits={DIGITS}&period={STEP}");
    (secret, encoded, uri)
}

/// The time step `code` is the code of for `secret` at time `t` (within the skew), if any.
pub fn step_of(secret: &[u8], code: &str, t: u64) -> Option<u64> {
    let generator = totp(secret.to_vec())?;
    let current = t / STEP;
    // Every candidate step is compared (in constant time), whichever matches.
    (current.saturating_sub(SKEW)..=current + SKEW).filter(|s| ct_eq(generator.generate(s * STEP).as_bytes(), code.as_bytes())).last()
}

/// Store a TOTP factor with `secret` sealed; `last_step`: the step a confirming code used
/// (so that code does not sign in again). Returns the factor's id.
pub async fn store(db: &Database, vault: &Vault, tenant: TenantId, user_id: &str, name: &str, secret: Vec<u8>, last_step: u64) -> StoreResult<String> {
    let id = format!("totp_{}", &random_token()[..16]);
    let sealed = vault.seal(&seal_label(&id), &secret);
    let (fid, user, name, t) = (id.clone(), user_id.to_string(), name.to_string(), now() as i64);
    db.write(move |sql| {
        sql.execute(
            "INSERT INTO user_factors (tenant_id, id, user_id, kind, name, secret_sealed, last_step, created_at, last_used_at) VALUES (?7, ?1, ?2, 'totp', ?3, ?4, ?5, ?6, 0)",
            crate::params![fid.as_str(), user.as_str(), name.as_str(), sealed, last_step as i64, t, tenant],
        )
        .map(|_| ())
    })
    .await?;
    Ok(id)
}

/// Whether `code` is a current code of one of the user's TOTP factors, not used before; the
/// step it matched is recorded in the same statement that accepts it.
pub async fn verify(db: &Database, vault: &Vault, tenant: TenantId, user_id: &str, code: &str, t: u64) -> StoreResult<bool> {
    let user = user_id.to_string();
    let factors = db
        .read(move |sql| {
            let rows = sql.query(
                "SELECT id, secret_sealed FROM user_factors WHERE tenant_id = ?1 AND user_id = ?2 AND kind = 'totp'",
                crate::params![tenant, user.as_str()],
            )?;
            rows.iter().map(|r| Ok((r.text(0)?, r.blob(1)?))).collect::<StoreResult<Vec<_>>>()
        })
        .await?;
    for (id, sealed) in factors {
        let Ok(secret) = vault.open_sealed(&seal_label(&id), &sealed) else {
            tracing::error!(factor = %id, "a TOTP secret cannot be opened (wrong key-encryption key?)");
            continue;
        };
        if let Some(step) = step_of(&secret, code, t) {
            let fid = id.clone();
            let accepted = db
                .write(move |sql| {
                    sql.execute(
                        "UPDATE user_factors SET last_step = ?1, last_used_at = ?2 WHERE tenant_id = ?4 AND id = ?3 AND last_step < ?1",
                        crate::params![step as i64, t as i64, fid.as_str(), tenant],
                    )
                })
                .await?;
            return Ok(accepted == 1);
        }
    }
    Ok(false)
}

/// The code of `secret_base32` at time `t` (tests, and the CLI's self-check).
pub fn code_at(secret_base32: &str, t: u64) -> Option<String> {
    let secret = Secret::Encoded(secret_base32.to_string()).to_bytes().ok()?;
    Some(totp(secret)?.generate(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc6238_appendix_b_sha1_vectors() {
        // RFC 6238 Appendix B: the SHA-1 seed "12345678901234567890", 8 digits there; the last
        // six digits are our 6-digit codes (dynamic truncation is the same, modulo 10^6).
        let seed = b"12345678901234567890".to_vec();
        let g = TOTP::new(Algorithm::SHA1, 8, 0, 30, seed).unwrap();
        for (t, want) in [(59, "94287082"), (1111111109, "07081804"), (1111111111, "14050471"), (1234567890, "89005924"), (2000000000, "69279037")] {
            assert_eq!(g.generate(t), want, "t = {t}");
        }
        let b32 = match Secret::Raw(b"12345678901234567890".to_vec()).to_encoded() {
            Secret::Encoded(s) => s,
            _ => unreachable!(),
        };
        assert_eq!(code_at(&b32, 59).unwrap(), "287082");
    }
}
