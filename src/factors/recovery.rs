//! Recovery codes: ten random one-time codes, shown once when made, stored as SHA-256 (they
//! carry 50 random bits each, so a fast hash is enough and a slow one would add nothing), each
//! spent by one conditional update. Making a new set replaces the old one.

use crate::tenant::TenantId;
use crate::db::{Database, StoreResult};
use crate::util::{random_bytes, secret_hash};

const COUNT: usize = 10;
/// Crockford-style base32 without look-alikes, in two groups of five for reading aloud.
const ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTVWXYZ23456789";

fn normalise(code: &str) -> String {
    code.chars().filter(|c| c.is_ascii_alphanumeric()).map(|c| c.to_ascii_uppercase()).collect()
}

fn new_code() -> String {
    let bytes = random_bytes::<10>();
    let chars: String = bytes.iter().map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char).collect();
    format!("{}-{}", &chars[..5], &chars[5..])
}

/// Replace the user's recovery codes with a new set; returns the codes (shown once).
pub async fn regenerate(db: &Database, tenant: TenantId, user_id: &str) -> StoreResult<Vec<String>> {
    let codes: Vec<String> = (0..COUNT).map(|_| new_code()).collect();
    let hashes: Vec<[u8; 32]> = codes.iter().map(|c| secret_hash(&normalise(c))).collect();
    let user = user_id.to_string();
    db.write(move |sql| {
        sql.execute("DELETE FROM recovery_codes WHERE tenant_id = ?1 AND user_id = ?2", crate::params![tenant, user.as_str()])?;
        for h in hashes {
            sql.execute(
                "INSERT INTO recovery_codes (tenant_id, user_id, code_hash, used_at) VALUES (?1, ?2, ?3, NULL)",
                crate::params![tenant, user.as_str(), h.to_vec()],
            )?;
        }
        Ok(())
    })
    .await?;
    Ok(codes)
}

/// Spend `code` if it is one of the user's unused recovery codes.
pub async fn spend(db: &Database, tenant: TenantId, user_id: &str, code: &str, t: u64) -> StoreResult<bool> {
    let code = normalise(code);
    if code.len() != 10 {
        return Ok(false);
    }
    let (user, hash) = (user_id.to_string(), secret_hash(&code).to_vec());
    let n = db
        .write(move |sql| {
            sql.execute(
                "UPDATE recovery_codes SET used_at = ?1 WHERE tenant_id = ?4 AND user_id = ?2 AND code_hash = ?3 AND used_at IS NULL",
                crate::params![t as i64, user.as_str(), hash, tenant],
            )
        })
        .await?;
    Ok(n == 1)
}

/// Unused recovery codes left.
pub async fn remaining(db: &Database, tenant: TenantId, user_id: &str) -> StoreResult<usize> {
    let user = user_id.to_string();
    db.read(move |sql| {
        let rows = sql.query(
            "SELECT COUNT(*) FROM recovery_codes WHERE tenant_id = ?1 AND user_id = ?2 AND used_at IS NULL",
            crate::params![tenant, user.as_str()],
        )?;
        Ok(rows.first().map(|r| r.i64(0)).transpose()?.unwrap_or(0) as usize)
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_two_groups_of_five_and_normalise() {
        let c = new_code();
        assert_eq!(c.len(), 11);
        assert_eq!(normalise(&c.to_lowercase()).len(), 10);
        assert_eq!(normalise(" abcde-fghjk "), "ABCDEFGHJK");
    }
}
