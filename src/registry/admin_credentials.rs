//! Admin API credentials scoped to one tenant (issue 31): what a tenant's administrators hold
//! instead of the deployment's `AUTHRIM_ADMIN_TOKEN`. Each is a row of `admin_credentials`
//! keyed by (tenant, id); the token is `atk_{id}_{secret}`, so that the server finds the row
//! by its id and compares the secret's SHA-256 in constant time, never scanning. The secret
//! (256 random bits) is shown once and never stored.
//!
//! `scopes` holds what the credential may do: `admin` (the whole of its tenant's admin API)
//! and `scim` (the tenant's SCIM 2.0 service only, for a provisioning system: issue 32).
//! Finer scopes (read only, per resource) are meant to be added to this column.

use crate::db::{Sql, StoreResult, Value};
use crate::tenant::TenantId;
use crate::util::{ct_eq, now, secret_hash};
use serde::Serialize;

/// What a token starts with: tells it from the deployment token and from access tokens.
pub const PREFIX: &str = "atk_";

/// The whole admin API of the credential's tenant.
pub const ADMIN_SCOPE: &str = "admin";
/// The tenant's SCIM 2.0 service (`/scim/v2`) and nothing else: what a provisioning system
/// (an HR system, Entra ID, Okta) is given.
pub const SCIM_SCOPE: &str = "scim";
/// Every scope a credential may hold.
pub const SCOPES: [&str; 2] = [ADMIN_SCOPE, SCIM_SCOPE];

/// The scopes of a new credential: each one of `SCOPES`, at least one, each once, in
/// `SCOPES`' order; none given means `admin`.
pub fn validate_scopes(scopes: Option<&[String]>) -> Result<Vec<String>, String> {
    let Some(scopes) = scopes else { return Ok(vec![ADMIN_SCOPE.into()]) };
    if let Some(bad) = scopes.iter().find(|s| !SCOPES.contains(&s.as_str())) {
        return Err(format!("scope {bad:?} is not one of {}", SCOPES.join(", ")));
    }
    let kept: Vec<String> = SCOPES.iter().filter(|s| scopes.iter().any(|g| g == *s)).map(|s| s.to_string()).collect();
    match kept.is_empty() {
        true => Err(format!("at least one scope of {}", SCOPES.join(", "))),
        false => Ok(kept),
    }
}

/// The longest name, in characters (a label for people, shown in lists and the audit log).
pub const MAX_NAME_CHARS: usize = 100;

/// A credential as listed: never its secret or hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Credential {
    pub id: String,
    pub name: String,
    /// What it may do: `admin` (its tenant's whole admin API), `scim` (its SCIM service).
    pub scopes: Vec<String>,
    pub created_at: u64,
    /// When it stops working (seconds since the epoch); none: until revoked.
    pub expires_at: Option<u64>,
    /// When it was revoked; a revoked credential stays listed, for the audit log's sake.
    pub revoked_at: Option<u64>,
}

impl Credential {
    /// Whether it may be used now.
    pub fn usable(&self, at: u64) -> bool {
        self.revoked_at.is_none() && self.expires_at.is_none_or(|e| e > at)
    }

    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }
}

/// `atk_{id}_{secret}` split: the id is hex (no `_`), the secret is what follows (base64url,
/// which may hold `_`). `None` for anything else.
pub fn parse(token: &str) -> Option<(&str, &str)> {
    let (id, secret) = token.strip_prefix(PREFIX)?.split_once('_')?;
    let hex = |s: &str| !s.is_empty() && s.len() <= 32 && s.bytes().all(|b| b.is_ascii_hexdigit());
    (hex(id) && !secret.is_empty()).then_some((id, secret))
}

pub fn validate_name(name: &str) -> Result<(), String> {
    let n = name.chars().count();
    match n == 0 || n > MAX_NAME_CHARS || name.trim().is_empty() || name.chars().any(char::is_control) {
        true => Err(format!("name must be 1 to {MAX_NAME_CHARS} printable characters")),
        false => Ok(()),
    }
}

const COLUMNS: &str = "id, name, scopes, created_at, expires_at, revoked_at";

fn from_row(r: &crate::db::Row) -> StoreResult<Credential> {
    let opt = |i: usize| -> StoreResult<Option<u64>> {
        match r.0.get(i) {
            Some(Value::Null) => Ok(None),
            _ => Ok(Some(r.i64(i)?.max(0) as u64)),
        }
    };
    Ok(Credential {
        id: r.text(0)?,
        name: r.text(1)?,
        scopes: r.text(2)?.split_whitespace().map(str::to_string).collect(),
        created_at: r.i64(3)?.max(0) as u64,
        expires_at: opt(4)?,
        revoked_at: opt(5)?,
    })
}

/// A new credential of `tenant`: the record and its token, to be shown once.
pub fn create(sql: &mut dyn Sql, tenant: TenantId, name: &str, scopes: &[String], expires_at: Option<u64>) -> StoreResult<(Credential, String)> {
    let id = crate::util::hex(&crate::util::random_bytes::<8>());
    let secret = crate::util::random_token();
    let created_at = now();
    let expires = expires_at.map_or(Value::Null, |e| Value::Int(e.min(i64::MAX as u64) as i64));
    sql.execute(
        "INSERT INTO admin_credentials (tenant_id, id, name, token_hash, scopes, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        &[tenant.into(), (&id).into(), name.into(), secret_hash(&secret).to_vec().into(), scopes.join(" ").into(), (created_at as i64).into(), expires],
    )?;
    let token = format!("{PREFIX}{id}_{secret}");
    Ok((Credential { id, name: name.to_string(), scopes: scopes.to_vec(), created_at, expires_at, revoked_at: None }, token))
}

/// Every credential of `tenant`, revoked ones too, oldest first.
pub fn list(sql: &mut dyn Sql, tenant: TenantId) -> StoreResult<Vec<Credential>> {
    sql.query(&format!("SELECT {COLUMNS} FROM admin_credentials WHERE tenant_id = ?1 ORDER BY created_at, id"), crate::params![tenant])?
        .iter()
        .map(from_row)
        .collect()
}

/// Revoke one: `None` if `tenant` has no such credential, else it as it now is (revoking a
/// revoked one changes nothing: its first revocation's time stays).
pub fn revoke(sql: &mut dyn Sql, tenant: TenantId, id: &str) -> StoreResult<Option<Credential>> {
    sql.execute(
        "UPDATE admin_credentials SET revoked_at = ?3 WHERE tenant_id = ?1 AND id = ?2 AND revoked_at IS NULL",
        crate::params![tenant, id, now() as i64],
    )?;
    let row = sql.query_opt(&format!("SELECT {COLUMNS} FROM admin_credentials WHERE tenant_id = ?1 AND id = ?2"), crate::params![tenant, id])?;
    row.as_ref().map(from_row).transpose()
}

/// The credential `token` is, if it is one of `tenant`'s and usable now. Read from the
/// database at each call, so that a revocation or an expiry holds at once on every node.
pub fn authenticate(sql: &mut dyn Sql, tenant: TenantId, token: &str) -> StoreResult<Option<Credential>> {
    let Some((id, secret)) = parse(token) else { return Ok(None) };
    let row = sql.query_opt(
        &format!("SELECT {COLUMNS}, token_hash FROM admin_credentials WHERE tenant_id = ?1 AND id = ?2"),
        crate::params![tenant, id],
    )?;
    let Some(row) = row else { return Ok(None) };
    let credential = from_row(&row)?;
    let matches = ct_eq(&row.blob(6)?, &secret_hash(secret));
    Ok((matches && credential.usable(now())).then_some(credential))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_parsed_only_in_their_format() {
        assert_eq!(parse("atk_0a1b_se_cr-et"), Some(("0a1b", "se_cr-et")));
        for bad in ["", "atk_", "atk__secret", "atk_0a1b_", "atk_0a1b", "atk_xyz_secret", "btk_0a1b_secret", "test-admin-token"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn names_are_checked() {
        assert!(validate_name("ci deploy").is_ok());
        assert!(validate_name(&"é".repeat(MAX_NAME_CHARS)).is_ok());
        for bad in ["", "  ", "a\nb", &"a".repeat(MAX_NAME_CHARS + 1)] {
            assert!(validate_name(bad).is_err(), "{bad:?}");
        }
    }

    /// The store on SQLite: a credential authenticates at its tenant only, with its whole
    /// secret only, until it is revoked or expires; the secret is not what is stored.
    #[test]
    fn a_credential_is_its_tenants_until_revoked_or_expired() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        crate::db::schema::migrate(&conn).unwrap();
        let mut sql = crate::db::SqliteSql(&conn);
        let (a, b) = (TenantId(1), TenantId(2));
        let (cred, token) = create(&mut sql, a, "ci", &[ADMIN_SCOPE.into()], None).unwrap();
        assert_eq!(authenticate(&mut sql, a, &token).unwrap().map(|c| c.id), Some(cred.id.clone()));
        assert_eq!(authenticate(&mut sql, b, &token).unwrap(), None, "another tenant's");
        let (_, secret) = parse(&token).unwrap();
        let stored = sql.query("SELECT token_hash FROM admin_credentials", &[]).unwrap()[0].blob(0).unwrap();
        assert_ne!(stored, secret.as_bytes());
        let wrong = format!("{PREFIX}{}_{}x", cred.id, secret);
        assert_eq!(authenticate(&mut sql, a, &wrong).unwrap(), None, "a longer secret");
        assert_eq!(authenticate(&mut sql, a, &token[..token.len() - 1]).unwrap(), None, "a shorter secret");
        let (expired, expired_token) = create(&mut sql, a, "old", &[SCIM_SCOPE.into()], Some(now() - 1)).unwrap();
        assert_eq!(authenticate(&mut sql, a, &expired_token).unwrap(), None, "expired");
        let revoked = revoke(&mut sql, a, &cred.id).unwrap().unwrap();
        assert!(revoked.revoked_at.is_some());
        assert_eq!(authenticate(&mut sql, a, &token).unwrap(), None, "revoked");
        assert_eq!(revoke(&mut sql, b, &expired.id).unwrap(), None, "another tenant's, not revoked from there");
        assert_eq!(list(&mut sql, a).unwrap().len(), 2);
        assert!(list(&mut sql, b).unwrap().is_empty());
        let listed = list(&mut sql, a).unwrap();
        assert_eq!(listed.iter().find(|c| c.id == expired.id).unwrap().scopes, ["scim"], "scopes as stored");
    }

    #[test]
    fn scopes_are_checked_and_kept_in_one_order() {
        assert_eq!(validate_scopes(None).unwrap(), ["admin"]);
        assert_eq!(validate_scopes(Some(&["scim".into(), "admin".into(), "scim".into()])).unwrap(), ["admin", "scim"]);
        assert!(validate_scopes(Some(&[])).is_err());
        assert!(validate_scopes(Some(&["root".into()])).is_err());
    }
}
