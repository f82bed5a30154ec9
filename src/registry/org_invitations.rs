//! Invitations to an organization by e-mail (issue 31). An administrator invites an address
//! with roles; the mail with the link is written in the transaction of the invitation (both,
//! or neither). The link's token is 256 random bits, kept as its SHA-256 only and found by it
//! within the tenant, so that a token of one tenant names nothing at another. Accepting marks
//! the invitation used and makes the member in one transaction: a token answers once.

use super::organizations::{self, Roles};
use super::TenantRegistry;
use crate::db::{Dialect, Sql, StoreResult};
use crate::tenant::TenantId;
use serde_json::{json, Value};

/// The longest e-mail address an invitation takes (RFC 5321's path limit).
pub const MAX_EMAIL: usize = 254;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invitation {
    pub id: String,
    pub org_id: String,
    pub email: String,
    pub roles: Vec<String>,
    /// The admin credential (or the operator) that invited.
    pub created_by: Option<String>,
    pub created_at: u64,
    pub expires_at: u64,
    pub accepted_at: Option<u64>,
    pub accepted_by: Option<String>,
    pub revoked_at: Option<u64>,
}

/// Where an invitation stands at `now`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Pending,
    Accepted,
    Revoked,
    Expired,
}

impl Invitation {
    pub fn state(&self, now: u64) -> State {
        match (self.accepted_at, self.revoked_at) {
            (Some(_), _) => State::Accepted,
            (_, Some(_)) => State::Revoked,
            _ if self.expires_at <= now => State::Expired,
            _ => State::Pending,
        }
    }

    /// The invitation as the admin API shows it: never its token (which is not kept).
    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id, "org_id": self.org_id, "email": self.email, "roles": self.roles,
            "created_by": self.created_by, "created_at": self.created_at, "expires_at": self.expires_at,
        })
    }

    /// Whether `email` is the invited address (compared without regard to case, as mail
    /// systems in practice treat addresses).
    pub fn is_for(&self, email: &str) -> bool {
        self.email.trim().eq_ignore_ascii_case(email.trim())
    }
}

/// A new invitation's row, with its token's hash and the sealed mail that goes with it.
pub struct NewInvitation {
    pub invitation: Invitation,
    pub token_hash: Vec<u8>,
    pub subject: String,
    pub sealed_body: Vec<u8>,
}

/// Why an invitation was not made.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// The organization has `organization_max_pending_invitations` pending already.
    TooMany,
    /// A pending invitation of the organization is for this address already.
    Pending,
    /// The organization is gone (deleted meanwhile).
    NoOrganization,
}

/// Write the invitation and its mail (one transaction, the caller's), unless refused.
pub fn create(sql: &mut dyn Sql, tenant: TenantId, new: NewInvitation, max_pending: u32, now: u64) -> StoreResult<Result<(), Refused>> {
    let inv = &new.invitation;
    // On PostgreSQL the organization's row is locked: two invitations at once count each other
    // against the cap, and an organization deleted meanwhile takes none.
    let lock = if sql.dialect() == Dialect::Postgres { " FOR UPDATE" } else { "" };
    if sql.query_opt(&format!("SELECT 1 FROM organizations WHERE tenant_id = ?1 AND id = ?2{lock}"), crate::params![tenant, &inv.org_id])?.is_none() {
        return Ok(Err(Refused::NoOrganization));
    }
    let pending = sql.query(
        "SELECT email FROM organization_invitations WHERE tenant_id = ?1 AND org_id = ?2 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ?3",
        crate::params![tenant, &inv.org_id, now as i64],
    )?;
    if pending.len() >= max_pending as usize {
        return Ok(Err(Refused::TooMany));
    }
    for r in &pending {
        if inv.is_for(&r.text(0)?) {
            return Ok(Err(Refused::Pending));
        }
    }
    sql.execute(
        "INSERT INTO organization_invitations (tenant_id, id, org_id, email, roles, token_hash, created_by, created_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        crate::params![tenant, &inv.id, &inv.org_id, &inv.email, &inv.roles.join(" "), new.token_hash, inv.created_by.as_deref(), inv.created_at as i64, inv.expires_at as i64],
    )?;
    crate::mail::enqueue(sql, tenant, &inv.email, &new.subject, new.sealed_body)?;
    Ok(Ok(()))
}

const SELECT: &str = "SELECT id, org_id, email, roles, created_by, created_at, expires_at, accepted_at, accepted_by, revoked_at FROM organization_invitations";

fn row(r: &crate::db::sql::Row) -> StoreResult<Invitation> {
    let opt = |i: usize| -> StoreResult<Option<u64>> {
        match r.0.get(i) {
            Some(crate::db::Value::Null) => Ok(None),
            _ => Ok(Some(r.i64(i)?.max(0) as u64)),
        }
    };
    Ok(Invitation {
        id: r.text(0)?,
        org_id: r.text(1)?,
        email: r.text(2)?,
        roles: r.text(3)?.split_whitespace().map(str::to_string).collect(),
        created_by: r.opt_text(4)?,
        created_at: r.i64(5)?.max(0) as u64,
        expires_at: r.i64(6)?.max(0) as u64,
        accepted_at: opt(7)?,
        accepted_by: r.opt_text(8)?,
        revoked_at: opt(9)?,
    })
}

/// The organization's pending invitations, oldest first.
pub fn pending(sql: &mut dyn Sql, tenant: TenantId, org_id: &str, now: u64) -> StoreResult<Vec<Invitation>> {
    sql.query(
        &format!("{SELECT} WHERE tenant_id = ?1 AND org_id = ?2 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ?3 ORDER BY created_at, id"),
        crate::params![tenant, org_id, now as i64],
    )?
    .iter()
    .map(row)
    .collect()
}

/// The invitation whose link's token hashes to `hash`, in this tenant, whatever its state.
pub fn by_token_hash(sql: &mut dyn Sql, tenant: TenantId, hash: &[u8]) -> StoreResult<Option<Invitation>> {
    sql.query_opt(&format!("{SELECT} WHERE tenant_id = ?1 AND token_hash = ?2"), crate::params![tenant, hash.to_vec()])?.as_ref().map(row).transpose()
}

/// Revoke a pending invitation of `org_id`; false if there is none by that id (or it was
/// answered, revoked or expired already).
pub fn revoke(sql: &mut dyn Sql, tenant: TenantId, org_id: &str, id: &str, now: u64) -> StoreResult<bool> {
    let n = sql.execute(
        "UPDATE organization_invitations SET revoked_at = ?1 WHERE tenant_id = ?2 AND org_id = ?3 AND id = ?4 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ?1",
        crate::params![now as i64, tenant, org_id, id],
    )?;
    Ok(n > 0)
}

/// Spend a pending invitation for `user` and make them a member with its roles (added to any
/// they have). `None` if it is no longer pending (answered in another tab, revoked, expired):
/// then nothing changed.
fn accept(sql: &mut dyn Sql, tenant: TenantId, inv: &Invitation, user: &str, now: u64) -> StoreResult<Option<Roles>> {
    // The organization first: deleted meanwhile, the invitation is left as it is (its row
    // goes with the organization).
    if organizations::load_one(sql, tenant, &inv.org_id)?.is_none() {
        return Ok(None);
    }
    let n = sql.execute(
        "UPDATE organization_invitations SET accepted_at = ?1, accepted_by = ?2 WHERE tenant_id = ?3 AND id = ?4 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ?1",
        crate::params![now as i64, user, tenant, &inv.id],
    )?;
    if n == 0 {
        return Ok(None);
    }
    let mut roles = organizations::load_member(sql, tenant, &inv.org_id, user)?.map(|m| m.roles.clone()).unwrap_or_default();
    roles.extend(inv.roles.iter().filter(|r| !roles.contains(r)).cloned().collect::<Vec<_>>());
    organizations::put_member(sql, tenant, &inv.org_id, user, &roles).map(Some)
}

impl TenantRegistry<'_> {
    /// Accept `inv` as `user_id`: one transaction spends it and makes the membership, then
    /// memory follows. `None`: it was no longer pending, and nothing changed.
    pub async fn accept_invitation(&self, inv: &Invitation, user_id: &str) -> StoreResult<Option<Roles>> {
        let _order = self.registry.order.lock().await;
        let (tenant, i, u) = (self.tenant, inv.clone(), user_id.to_string());
        let member = self.registry.db.write(move |sql| accept(sql, tenant, &i, &u, crate::util::now())).await?;
        if let Some(m) = &member {
            self.registry.orgs.write().entry(self.tenant).or_default().set_member(&inv.org_id, user_id, Some(m.clone()));
        }
        Ok(member)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invitation(expires_at: u64) -> Invitation {
        Invitation {
            id: "inv_1".into(),
            org_id: "org_1".into(),
            email: "Bob@Acme.example".into(),
            roles: vec!["admin".into()],
            created_by: None,
            created_at: 1,
            expires_at,
            accepted_at: None,
            accepted_by: None,
            revoked_at: None,
        }
    }

    #[test]
    fn state_and_address() {
        let mut inv = invitation(100);
        assert_eq!(inv.state(99), State::Pending);
        assert_eq!(inv.state(100), State::Expired);
        assert!(inv.is_for("bob@acme.EXAMPLE"));
        assert!(!inv.is_for("bob@acme.example.org"));
        inv.revoked_at = Some(5);
        assert_eq!(inv.state(99), State::Revoked);
        inv.accepted_at = Some(5);
        assert_eq!(inv.state(200), State::Accepted);
        assert!(inv.to_json().get("token").is_none() && inv.to_json().get("token_hash").is_none());
    }
}
