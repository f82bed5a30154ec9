//! Second factors: what a user proves beyond the password. Each kind is a module (`totp`,
//! `recovery`, `passkey`); this module is what the login flow and the admin API ask of them
//! all. A passkey is also a first factor on its own (a passwordless sign-in).
//!
//! Factors live in the database, not in memory: they are read once per sign-in (beside an
//! Argon2 hash, a query is nothing) and never on the token path. A code is accepted by one
//! conditional write, so that two nodes given the same code at once accept it once.

pub mod passkey;
pub mod recovery;
pub mod totp;

use crate::tenant::TenantId;
use crate::db::{Database, StoreResult};
use serde::Serialize;

/// `acr` of a session signed in with a password and a second factor.
pub const ACR_MFA: &str = "urn:authrim:acr:mfa";
/// `acr` of a session signed in with a passkey (alone, or after the password): phishing-
/// resistant, and multi-factor since the authenticator verified the user.
pub const ACR_PASSKEY: &str = "urn:authrim:acr:passkey";
/// Every `acr` a session can have here (discovery's `acr_values_supported`).
pub const ACR_VALUES: &[&str] = &[crate::tokens::ACR_PASSWORD, ACR_MFA, ACR_PASSKEY];

/// How strongly a session was signed in; each `acr` is one level, and a level meets every
/// lower one (a passkey session meets a request for `mfa`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Password,
    Mfa,
    Passkey,
}

impl Level {
    /// The level of one of our `acr` values (`None` for anyone else's).
    pub fn of(acr: &str) -> Option<Level> {
        match acr {
            crate::tokens::ACR_PASSWORD => Some(Level::Password),
            ACR_MFA => Some(Level::Mfa),
            ACR_PASSKEY => Some(Level::Passkey),
            _ => None,
        }
    }

    pub fn acr(self) -> &'static str {
        match self {
            Level::Password => crate::tokens::ACR_PASSWORD,
            Level::Mfa => ACR_MFA,
            Level::Passkey => ACR_PASSKEY,
        }
    }
}

/// A factor as an operator or the user sees it (never its secret).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FactorInfo {
    pub id: String,
    pub kind: String,
    pub name: String,
    pub created_at: u64,
    pub last_used_at: u64,
}

/// How a factor was proven: the RFC 8176 `amr` values it adds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proof {
    /// A TOTP code.
    Otp,
    /// A recovery code (also a one-time password).
    Recovery,
    /// A passkey, with user verification (WebAuthn `uv`). `synced`: backup-eligible (a key a
    /// password manager copies between devices: `swk`), otherwise bound to one device (`hwk`).
    Passkey { synced: bool },
}

impl Proof {
    pub fn amr(self) -> &'static [&'static str] {
        match self {
            Proof::Otp | Proof::Recovery => &["otp", "mfa"],
            // The authenticator verified the user (PIN or biometric: which, it does not say).
            Proof::Passkey { synced: false } => &["hwk", "user", "mfa"],
            Proof::Passkey { synced: true } => &["swk", "user", "mfa"],
        }
    }

    /// The level a sign-in reaches with this factor.
    pub fn level(self) -> Level {
        match self {
            Proof::Otp | Proof::Recovery => Level::Mfa,
            Proof::Passkey { .. } => Level::Passkey,
        }
    }

    /// The audit log's name for the factor.
    pub fn kind(self) -> &'static str {
        match self {
            Proof::Otp => "totp",
            Proof::Recovery => "recovery_code",
            Proof::Passkey { .. } => "passkey",
        }
    }
}

pub async fn list(db: &Database, tenant: TenantId, user_id: &str) -> StoreResult<Vec<FactorInfo>> {
    let user = user_id.to_string();
    db.read(move |sql| {
        let rows = sql.query(
            "SELECT id, kind, name, created_at, last_used_at FROM user_factors WHERE tenant_id = ?1 AND user_id = ?2 ORDER BY created_at",
            crate::params![tenant, user.as_str()],
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
pub async fn has_any(db: &Database, tenant: TenantId, user_id: &str) -> StoreResult<bool> {
    Ok(!list(db, tenant, user_id).await?.is_empty())
}

/// The best level the user's factors can reach beyond the password.
pub async fn best_level(db: &Database, tenant: TenantId, user_id: &str) -> StoreResult<Level> {
    let factors = list(db, tenant, user_id).await?;
    Ok(match () {
        _ if factors.iter().any(|f| f.kind == passkey::KIND) => Level::Passkey,
        _ if !factors.is_empty() => Level::Mfa,
        _ => Level::Password,
    })
}

/// Remove one factor of the user; whether it existed.
pub async fn remove(db: &Database, tenant: TenantId, user_id: &str, factor_id: &str) -> StoreResult<bool> {
    let (user, id) = (user_id.to_string(), factor_id.to_string());
    db.write(move |sql| sql.execute("DELETE FROM user_factors WHERE tenant_id = ?1 AND user_id = ?2 AND id = ?3", crate::params![tenant, user.as_str(), id.as_str()]))
        .await
        .map(|n| n == 1)
}

/// Remove every factor and recovery code of a user (an operator's reset); how many factors.
pub async fn reset(db: &Database, tenant: TenantId, user_id: &str) -> StoreResult<u64> {
    let user = user_id.to_string();
    db.write(move |sql| {
        let n = sql.execute("DELETE FROM user_factors WHERE tenant_id = ?1 AND user_id = ?2", crate::params![tenant, user.as_str()])?;
        sql.execute("DELETE FROM recovery_codes WHERE tenant_id = ?1 AND user_id = ?2", crate::params![tenant, user.as_str()])?;
        Ok(n)
    })
    .await
}

/// Check `code` against the user's factors: a TOTP code, else a recovery code.
pub async fn verify(db: &Database, vault: &crate::keys::Vault, tenant: TenantId, user_id: &str, code: &str, now: u64) -> StoreResult<Option<Proof>> {
    let code: String = code.chars().filter(|c| !c.is_whitespace() && *c != '-').collect();
    if code.len() == totp::DIGITS && code.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(totp::verify(db, vault, tenant, user_id, &code, now).await?.then_some(Proof::Otp));
    }
    Ok(recovery::spend(db, tenant, user_id, &code, now).await?.then_some(Proof::Recovery))
}
