//! Linked identities: a user at an upstream provider (its id, their subject there) is one of
//! our users. A subject links to one user; a user may link one identity per provider. Each
//! tenant's links are its own (its users, its providers).

use crate::db::{Database, StoreResult};
use crate::tenant::TenantId;
use crate::util::now;
use serde::Serialize;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Linked {
    pub provider: String,
    pub subject: String,
    pub email: Option<String>,
    pub created_at: u64,
    pub last_used_at: u64,
}

/// The user `subject` at `provider` is linked to, noting the use.
pub async fn find(db: &Database, tenant: TenantId, provider: &str, subject: &str) -> StoreResult<Option<String>> {
    let found = lookup(db, tenant, provider, subject).await?;
    if found.is_some() {
        let (p, s) = (provider.to_string(), subject.to_string());
        db.write(move |sql| {
            sql.execute(
                "UPDATE linked_identities SET last_used_at = ?1 WHERE tenant_id = ?2 AND provider = ?3 AND subject = ?4",
                crate::params![now() as i64, tenant, p.as_str(), s.as_str()],
            )
        })
        .await?;
    }
    Ok(found)
}

/// The user `subject` at `provider` is linked to, the use not noted (a directory's sync
/// round reads every link: none of them is a sign-in).
pub async fn lookup(db: &Database, tenant: TenantId, provider: &str, subject: &str) -> StoreResult<Option<String>> {
    let (p, s) = (provider.to_string(), subject.to_string());
    db
        .read(move |sql| {
            sql.query_opt(
                "SELECT user_id FROM linked_identities WHERE tenant_id = ?1 AND provider = ?2 AND subject = ?3",
                crate::params![tenant, p.as_str(), s.as_str()],
            )
        })
        .await?
        .map(|r| r.text(0))
        .transpose()
}

/// Every link of `provider`: (user id, subject).
pub async fn of_provider(db: &Database, tenant: TenantId, provider: &str) -> StoreResult<Vec<(String, String)>> {
    let p = provider.to_string();
    let rows = db.read(move |sql| sql.query("SELECT user_id, subject FROM linked_identities WHERE tenant_id = ?1 AND provider = ?2", crate::params![tenant, p.as_str()])).await?;
    rows.iter().map(|r| Ok((r.text(0)?, r.text(1)?))).collect()
}

/// What linking answered.
#[derive(Debug, PartialEq, Eq)]
pub enum Linking {
    Linked,
    /// This identity is another user's.
    TakenByAnother,
    /// The user already has an identity at this provider.
    AlreadyHasOne,
}

/// Link `subject` at `provider` to `user_id`, in one transaction (the primary key keeps a
/// subject to one user even when two sign-ins race).
pub async fn link(db: &Database, tenant: TenantId, provider: &str, subject: &str, user_id: &str, email: Option<&str>) -> StoreResult<Linking> {
    let (p, s, u, e) = (provider.to_string(), subject.to_string(), user_id.to_string(), email.map(str::to_string));
    db.write(move |sql| {
        let owner = sql.query_opt(
            "SELECT user_id FROM linked_identities WHERE tenant_id = ?1 AND provider = ?2 AND subject = ?3",
            crate::params![tenant, p.as_str(), s.as_str()],
        )?;
        if let Some(row) = owner {
            return Ok(if row.text(0)? == u { Linking::Linked } else { Linking::TakenByAnother });
        }
        let has_one = sql.query_opt(
            "SELECT 1 FROM linked_identities WHERE tenant_id = ?1 AND provider = ?2 AND user_id = ?3",
            crate::params![tenant, p.as_str(), u.as_str()],
        )?;
        if has_one.is_some() {
            return Ok(Linking::AlreadyHasOne);
        }
        let t = now() as i64;
        sql.execute(
            "INSERT INTO linked_identities (tenant_id, provider, subject, user_id, email, created_at, last_used_at) VALUES (?6, ?1, ?2, ?3, ?4, ?5, ?5)",
            crate::params![p.as_str(), s.as_str(), u.as_str(), e, t, tenant],
        )?;
        Ok(Linking::Linked)
    })
    .await
}

/// Remove the user's identity at `provider`; whether there was one.
pub async fn unlink(db: &Database, tenant: TenantId, user_id: &str, provider: &str) -> StoreResult<bool> {
    let (u, p) = (user_id.to_string(), provider.to_string());
    db.write(move |sql| {
        sql.execute("DELETE FROM linked_identities WHERE tenant_id = ?1 AND user_id = ?2 AND provider = ?3", crate::params![tenant, u.as_str(), p.as_str()])
    })
    .await
    .map(|n| n > 0)
}

pub async fn of_user(db: &Database, tenant: TenantId, user_id: &str) -> StoreResult<Vec<Linked>> {
    let u = user_id.to_string();
    let rows = db
        .read(move |sql| {
            sql.query(
                "SELECT provider, subject, email, created_at, last_used_at FROM linked_identities WHERE tenant_id = ?1 AND user_id = ?2 ORDER BY provider",
                crate::params![tenant, u.as_str()],
            )
        })
        .await?;
    rows.iter()
        .map(|r| Ok(Linked { provider: r.text(0)?, subject: r.text(1)?, email: r.opt_text(2)?, created_at: r.i64(3)? as u64, last_used_at: r.i64(4)? as u64 }))
        .collect()
}
