//! Second factors: what a user proves beyond the password. Each kind is a module (`totp`,
//! `recovery`); this module is what the login flow and the admin API ask of them all.
//!
//! Factors live in the database, not in memory: they are read once per sign-in (beside an
//! Argon2 hash, a query is nothing) and never on the token path. A code is accepted by one
//! conditional write, so that two nodes given the same code at once accept it once.

pub mod recovery;
pub mod totp;

use crate::db::{Database, StoreResult};
use serde::Serialize;

/// `acr` of a session signed in with a password and a second factor.
pub const ACR_MFA: &str = "urn:authrim:acr:mfa";
/// Every `acr` a session can have here (discovery's `acr_values_supported`).
pub const ACR_VALUES: &[&str] = &[crate::tokens::ACR_PASSWORD, ACR_MFA];

/// A factor as an operator or the user sees it (never its secret).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FactorInfo {
    pub id: String,
    pub kind: String,
    pub name: String,
    pub created_at: u64,
    pub last_used_at: u64,
}

/// How a second factor was proven: the RFC 8176 `amr` values it adds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proof {
    /// A TOTP code.
    Otp,
    /// A recovery code (also a one-time password).
    Recovery,
}

impl Proof {
    pub fn amr(self) -> &'static [&'static str] {
        match self {
            Proof::Otp | Proof::Recovery => &["otp", "mfa"],
        }
    }
}

pub async fn list(db: &Database, user_id: &str) -> StoreResult<Vec<FactorInfo>> {
    let user = user_id.to_string();
    db.read(move |sql| {
        let rows = sql.query(
            "SELECT id, kind, name, created_at, last_used_at FROM user_factors WHERE user_id = ?1 ORDER BY created_at",
            crate::params![user.as_str()],
        )?;
        rows.iter()
            .map(|r| {
                Ok(FactorInfo {
                    id: r.text(0)?,
                    kind: r.text(1)?,
                    name: r.text(2)?,
                    created_at: r.i64(3)? as u64,
                    last_used_at: r.i64(4)? as u64,
                })
            })
            .collect()
    })
    .await
}

/// Whether the user has a second factor to be asked for.
pub async fn has_any(db: &Database, user_id: &str) -> StoreResult<bool> {
    Ok(!list(db, user_id).await?.is_empty())
}

/// Remove every factor and recovery code of a user (an operator's reset); how many factors.
pub async fn reset(db: &Database, user_id: &str) -> StoreResult<u64> {
    let user = user_id.to_string();
    db.write(move |sql| {
        let n = sql.execute("DELETE FROM user_factors WHERE user_id = ?1", crate::params![user.as_str()])?;
        sql.execute("DELETE FROM recovery_codes WHERE user_id = ?1", crate::params![user.as_str()])?;
        Ok(n)
    })
    .await
}

/// Check `code` against the user's factors: a TOTP code, else a recovery code.
pub async fn verify(db: &Database, vault: &crate::keys::Vault, user_id: &str, code: &str, now: u64) -> StoreResult<Option<Proof>> {
    let code: String = code.chars().filter(|c| !c.is_whitespace() && *c != '-').collect();
    if code.len() == totp::DIGITS && code.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(totp::verify(db, vault, user_id, &code, now).await?.then_some(Proof::Otp));
    }
    Ok(recovery::spend(db, user_id, &code, now).await?.then_some(Proof::Recovery))
}
