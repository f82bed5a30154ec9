//! End-users: a login name, an Argon2id password hash, and the standard claims of OpenID
//! Connect Core §5.1.

use crate::util::{now, random_token};
use argon2::password_hash::{phc::PasswordHash, PasswordHasher, PasswordVerifier};
use argon2::Argon2;
use crate::db::{Row, Sql, StoreError, StoreResult};
use crate::tenant::TenantId;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
pub use super::claims::Claims;

/// OpenID Connect Core §5.4: the claims each scope asks for.
pub const SCOPE_CLAIMS: &[(&str, &[&str])] = &[
    (
        "profile",
        &[
            "name", "family_name", "given_name", "middle_name", "nickname", "preferred_username", "profile",
            "picture", "website", "gender", "birthdate", "zoneinfo", "locale", "updated_at",
        ],
    ),
    ("email", &["email", "email_verified"]),
    ("address", &["address"]),
    ("phone", &["phone_number", "phone_number_verified"]),
];

const BOOL_CLAIMS: &[&str] = &["email_verified", "phone_number_verified"];
const ADDRESS_FIELDS: &[&str] = &["formatted", "street_address", "locality", "region", "postal_code", "country"];

pub fn supported_claims() -> Vec<&'static str> {
    let mut v = vec!["sub"];
    for (_, claims) in SCOPE_CLAIMS {
        v.extend_from_slice(claims);
    }
    v
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct User {
    /// The tenant it belongs to (set when loaded or saved through a tenant's registry).
    #[serde(skip)]
    pub tenant: crate::tenant::TenantId,
    /// The `sub` claim: stable, never reassigned.
    pub id: String,
    pub username: String,
    #[serde(skip_serializing)]
    pub password_hash: String,
    /// Standard claims other than `sub`, `preferred_username` and `updated_at`.
    pub claims: Claims,
    pub disabled: bool,
    pub updated_at: u64,
    /// Console roles (`ROLES`); none for an ordinary user.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<String>,
    /// The user's tokens issued at or before this second are refused: access tokens by their
    /// `iat`, refresh-token families by their creation (`accepts_tokens_from`). Set with every
    /// new password and when all sessions are ended, so that whoever had the old password, or a
    /// session, keeps nothing. 0: never set.
    #[serde(default, skip_serializing)]
    pub tokens_cutoff: u64,
    /// When the user was made (seconds); 0 for a user not yet saved or loaded.
    #[serde(default)]
    pub created_at: u64,
    /// Where the user comes from.
    #[serde(default)]
    pub source: Source,
    /// SCIM's `externalId` (RFC 7643 §3.1): the provisioning system's own identifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
    /// The SCIM attributes that are no OpenID claim (RFC 7643 §4.1's `title`, `userType`,
    /// further addresses…, the enterprise extension under its URN), as a SCIM client sent
    /// them. Kept apart from `claims`, which a `claims` request could read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scim: Option<Box<Map<String, Value>>>,
}

/// Where a user comes from: made here (the admin API, the CLI, sign-up, an upstream provider:
/// `local`), provisioned by a SCIM client (`scim`), or imported from a directory
/// (`ldap:<id>`, as its linked identity's provider), whose password is the directory's.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Source {
    #[default]
    Local,
    Scim,
    Directory(String),
}

impl Source {
    pub fn as_str(&self) -> &str {
        match self {
            Source::Local => "local",
            Source::Scim => "scim",
            Source::Directory(p) => p,
        }
    }

    pub fn parse(s: &str) -> Source {
        match s {
            "scim" => Source::Scim,
            s if s.starts_with("ldap:") => Source::Directory(s.to_string()),
            _ => Source::Local,
        }
    }

    /// A directory's user: its password is checked, and changed, only there.
    pub fn is_directory(&self) -> bool {
        matches!(self, Source::Directory(_))
    }
}

impl Serialize for Source {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Source {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Source::parse(&String::deserialize(d)?))
    }
}

/// A plausible e-mail address (what a person types on a form): something@something.something,
/// no spaces, at most 254 octets.
pub fn looks_like_email(e: &str) -> bool {
    let Some((local, domain)) = e.rsplit_once('@') else { return false };
    !local.is_empty() && domain.contains('.') && !domain.starts_with('.') && !domain.ends_with('.') && !e.chars().any(char::is_whitespace) && e.len() <= 254
}

/// The admin console's roles: `admin` may change anything there; `auditor` sees everything
/// (clients, users, keys, the audit log) and changes nothing.
pub const ROLES: &[&str] = &["admin", "auditor"];

/// What an admin may set when creating or updating a user; absent fields keep their value.
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UserInput {
    pub username: Option<String>,
    pub password: Option<String>,
    pub disabled: Option<bool>,
    /// Console roles (`admin`, `auditor`); `[]` removes them all.
    pub roles: Option<Vec<String>>,
    /// Standard claims to set; a `null` value removes a claim.
    #[serde(default)]
    pub claims: Map<String, Value>,
}

impl User {
    pub fn has_role(&self, role: &str) -> bool {
        self.roles.iter().any(|r| r == role)
    }

    /// Whether a token of this user issued at `issued_at` (seconds) may still be honoured: the
    /// user is enabled and the token is younger than `tokens_cutoff`. Every consumer of the
    /// user's tokens asks this beside the revocation list (a memory read: the registry's).
    pub fn accepts_tokens_from(&self, issued_at: u64) -> bool {
        !self.disabled && issued_at > self.tokens_cutoff
    }

    pub fn email(&self) -> Option<&str> {
        self.claims.get("email").and_then(Value::as_str)
    }

    /// Value of a standard claim for this user, if set.
    pub fn claim(&self, name: &str) -> Option<Value> {
        match name {
            "sub" => Some(Value::String(self.id.clone())),
            "preferred_username" => Some(
                self.claims.get(name).cloned().unwrap_or_else(|| Value::String(self.username.clone())),
            ),
            "updated_at" => Some(Value::from(self.updated_at)),
            _ => self.claims.get(name).cloned(),
        }
    }
}

/// The form of a login name that sign-in, uniqueness and the login throttle compare: NFKC
/// (so that full-width and half-width forms are one name), lower case, no outer spaces.
/// `ALICE`, `alice` and `ａｌｉｃｅ` are one name.
pub fn login_key(name: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    name.trim().nfkc().collect::<String>().to_lowercase()
}

/// The names `user` signs in with, normalized: the username and, if set, the e-mail.
pub fn login_names(user: &User) -> Vec<String> {
    let mut names = vec![login_key(&user.username)];
    if let Some(e) = user.email().map(login_key).filter(|e| !names.contains(e)) {
        names.push(e);
    }
    names
}

pub fn hash_password(password: &str) -> Result<String, String> {
    if password.chars().count() < 8 {
        return Err("password must be at least 8 characters".into());
    }
    if password.len() > 1024 {
        return Err("password too long".into());
    }
    argon2_hash(password).map_err(|e| format!("cannot hash password: {e}"))
}

/// Argon2id of a secret a person chose (a password, a CIBA user code), in PHC form.
pub fn argon2_hash(secret: &str) -> Result<String, String> {
    Argon2::default().hash_password(secret.as_bytes()).map(|h| h.to_string()).map_err(|e| e.to_string())
}

/// Whether `secret` matches the PHC-form Argon2 `hash` (the comparison is the library's,
/// constant-time); a malformed hash matches nothing.
pub fn argon2_matches(hash: &str, secret: &str) -> bool {
    PasswordHash::new(hash).map(|h| Argon2::default().verify_password(secret.as_bytes(), &h).is_ok()).unwrap_or(false)
}

/// Argon2id check. With `user == None` a dummy hash is checked anyway, so that a login for a
/// name that does not exist takes as long as one for a name that does.
pub fn verify_password(user: Option<&User>, password: &str) -> bool {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let dummy = DUMMY.get_or_init(|| hash_password("not-a-real-password").expect("dummy hash"));
    let hash = user.map(|u| u.password_hash.as_str()).unwrap_or(dummy);
    argon2_matches(hash, password) && user.is_some_and(|u| !u.disabled)
}

pub fn new_user(input: UserInput) -> Result<User, String> {
    let username = input.username.clone().ok_or("username is required")?;
    let password = input.password.clone().ok_or("password is required")?;
    let mut user = User {
        tenant: Default::default(),
        id: random_token()[..22].to_string(),
        username,
        password_hash: hash_password(&password)?,
        claims: Claims::default(),
        disabled: input.disabled.unwrap_or(false),
        updated_at: now(),
        roles: validate_roles(input.roles.unwrap_or_default())?,
        tokens_cutoff: 0,
        created_at: now(),
        source: Source::Local,
        external_id: None,
        scim: None,
    };
    apply_claims(&mut user.claims, input.claims)?;
    validate_username(&user.username)?;
    Ok(user)
}

pub fn update_user(existing: &User, input: UserInput) -> Result<User, String> {
    let mut user = existing.clone();
    if let Some(u) = input.username {
        validate_username(&u)?;
        user.username = u;
    }
    if let Some(p) = input.password {
        user.password_hash = hash_password(&p)?;
        // Whoever knew the old password keeps none of the tokens it got them: saved with the
        // new password, whoever changes it (a reset, the user, an operator, the CLI).
        user.tokens_cutoff = now();
    }
    if let Some(d) = input.disabled {
        user.disabled = d;
    }
    if let Some(r) = input.roles {
        user.roles = validate_roles(r)?;
    }
    apply_claims(&mut user.claims, input.claims)?;
    user.updated_at = now();
    Ok(user)
}

fn validate_roles(mut roles: Vec<String>) -> Result<Vec<String>, String> {
    if let Some(r) = roles.iter().find(|r| !ROLES.contains(&r.as_str())) {
        return Err(format!("unknown role {r:?}; roles: {}", ROLES.join(", ")));
    }
    roles.sort();
    roles.dedup();
    Ok(roles)
}

pub fn validate_username(u: &str) -> Result<(), String> {
    if u.is_empty() || u.len() > 256 || u.chars().any(char::is_control) || u.trim() != u {
        return Err("username must be 1-256 characters without control characters or outer spaces".into());
    }
    Ok(())
}

fn apply_claims(claims: &mut Claims, input: Map<String, Value>) -> Result<(), String> {
    for (name, value) in input {
        if name == "sub" || name == "updated_at" || !supported_claims().contains(&name.as_str()) {
            return Err(format!("{name:?} is not a settable standard claim"));
        }
        if value.is_null() {
            claims.remove(&name);
            continue;
        }
        let ok = if BOOL_CLAIMS.contains(&name.as_str()) {
            value.is_boolean()
        } else if name == "address" {
            value.as_object().is_some_and(|o| o.iter().all(|(k, v)| ADDRESS_FIELDS.contains(&k.as_str()) && v.is_string()))
        } else {
            value.is_string()
        };
        if !ok {
            return Err(format!("claim {name:?} has the wrong type (OpenID Connect Core section 5.1)"));
        }
        claims.insert(&name, value);
    }
    Ok(())
}

// --- persistence ---

/// Insert or update `user` in its tenant. Refused with `StoreError::Conflict`, before anything
/// is written, when one of its login names belongs to another user of the tenant (in any case
/// or width).
pub fn save(sql: &mut dyn Sql, user: &User) -> StoreResult<()> {
    let tenant = user.tenant.0 as i64;
    let names = login_names(user);
    for name in &names {
        if let Some(row) = sql.query_opt("SELECT user_id FROM login_names WHERE tenant_id = ?1 AND name = ?2", crate::params![tenant, name])? {
            if row.text(0)? != user.id {
                return Err(StoreError::Conflict(format!("the login name {name:?} belongs to another user")));
            }
        }
    }
    let t = now() as i64;
    sql.execute(
        "INSERT INTO users (tenant_id, id, username, email, password_hash, profile, disabled, created_at, updated_at, roles, tokens_cutoff,
                            external_id, scim, source)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?14, ?9, ?10, ?11, ?12, ?13)
         ON CONFLICT(tenant_id, id) DO UPDATE SET username = excluded.username, email = excluded.email,
           password_hash = excluded.password_hash, profile = excluded.profile, disabled = excluded.disabled,
           updated_at = excluded.updated_at, roles = excluded.roles, tokens_cutoff = excluded.tokens_cutoff,
           external_id = excluded.external_id, scim = excluded.scim, source = excluded.source",
        crate::params![
            tenant,
            &user.id,
            &user.username,
            user.email().map(str::to_ascii_lowercase),
            &user.password_hash,
            user.claims.to_json(),
            user.disabled,
            if user.created_at > 0 { user.created_at as i64 } else { t },
            user.roles.join(" "),
            user.tokens_cutoff as i64,
            user.external_id.as_deref(),
            user.scim.as_ref().map(|m| Value::Object((**m).clone()).to_string()),
            user.source.as_str(),
            // What memory holds, so that a node reading the row back (a notification, a
            // restart) has the same user (SCIM's ETag is of the whole user).
            if user.updated_at > 0 { user.updated_at as i64 } else { t },
        ],
    )?;
    sql.execute("DELETE FROM login_names WHERE tenant_id = ?1 AND user_id = ?2", crate::params![tenant, &user.id])?;
    for name in &names {
        sql.execute("INSERT INTO login_names (tenant_id, name, user_id) VALUES (?1, ?2, ?3)", crate::params![tenant, name, &user.id])?;
    }
    // The applications provisioned by SCIM hear of it, after this commit (the outbox).
    crate::provisioning::enqueue_users(sql, user.tenant, std::slice::from_ref(&user.id))?;
    super::record_change(sql, user.tenant, "user", &user.id)
}

/// Fill `login_names` for users saved before it existed. A name two old users share stays
/// with the first; the other is reported and signs in by its other name until renamed.
pub fn backfill_login_names(sql: &mut dyn Sql) -> StoreResult<usize> {
    let missing = sql.query(
        "SELECT COUNT(*) FROM users u WHERE NOT EXISTS (SELECT 1 FROM login_names n WHERE n.tenant_id = u.tenant_id AND n.user_id = u.id)",
        &[],
    )?[0]
        .i64(0)?;
    if missing == 0 {
        return Ok(0);
    }
    let mut conflicts = 0;
    for user in load_all(sql)? {
        let tenant = user.tenant.0 as i64;
        for name in login_names(&user) {
            let n = sql.execute(
                "INSERT INTO login_names (tenant_id, name, user_id) VALUES (?1, ?2, ?3) ON CONFLICT (tenant_id, name) DO NOTHING",
                crate::params![tenant, &name, &user.id],
            )?;
            let owner = sql.query("SELECT user_id FROM login_names WHERE tenant_id = ?1 AND name = ?2", crate::params![tenant, &name])?[0].text(0)?;
            if n == 0 && owner != user.id {
                conflicts += 1;
                tracing::warn!(user = %user.id, name = %name, "login name already taken by another user: rename one of them");
            }
        }
    }
    Ok(conflicts)
}

pub fn delete(sql: &mut dyn Sql, tenant: TenantId, id: &str) -> StoreResult<bool> {
    let t = tenant.0 as i64;
    let n = sql.execute("DELETE FROM users WHERE tenant_id = ?1 AND id = ?2", crate::params![t, id])?;
    // A user's names, consents and second factors go with the user (a new user under the
    // same id is not them).
    for table in ["login_names", "consents", "user_factors", "recovery_codes", "ciba_user_codes", "linked_identities", "password_resets", "email_verifications"] {
        sql.execute(&format!("DELETE FROM {table} WHERE tenant_id = ?1 AND user_id = ?2"), crate::params![t, id])?;
    }
    super::organizations::remove_user(sql, tenant, id)?;
    super::directory::rows::forget_principal(sql, tenant, &super::directory::Principal::User(id.to_string()))?;
    crate::provisioning::enqueue_users(sql, tenant, &[id.to_string()])?;
    super::record_change(sql, tenant, "user", id)?;
    Ok(n > 0)
}

const SELECT: &str =
    "SELECT id, username, password_hash, profile, disabled, updated_at, roles, tokens_cutoff, tenant_id, created_at, source, external_id, scim FROM users";

pub fn load_one(sql: &mut dyn Sql, tenant: TenantId, id: &str) -> StoreResult<Option<User>> {
    sql.query_opt(&format!("{SELECT} WHERE tenant_id = ?1 AND id = ?2"), crate::params![tenant.0 as i64, id])?.map(|r| row_to_user(&r)).transpose()
}

/// Find by id, username or e-mail (for the CLI).
pub fn find(sql: &mut dyn Sql, tenant: TenantId, key: &str) -> StoreResult<Option<User>> {
    let name = login_key(key);
    sql.query_opt(
        &format!("{SELECT} WHERE tenant_id = ?1 AND (id = ?2 OR id = (SELECT user_id FROM login_names WHERE tenant_id = ?1 AND name = ?3)) LIMIT 1"),
        crate::params![tenant.0 as i64, key, &name],
    )?
        .map(|r| row_to_user(&r))
        .transpose()
}

/// Every user of every tenant (each knows its tenant).
pub fn load_all(sql: &mut dyn Sql) -> StoreResult<Vec<User>> {
    sql.query(&format!("{SELECT} ORDER BY tenant_id, username"), &[])?.iter().map(row_to_user).collect()
}

fn row_to_user(r: &Row) -> StoreResult<User> {
    Ok(User {
        tenant: r.tenant(8)?,
        id: r.text(0)?,
        username: r.text(1)?,
        password_hash: r.text(2)?,
        claims: serde_json::from_str(&r.text(3)?).unwrap_or_default(),
        disabled: r.i64(4)? != 0,
        updated_at: r.i64(5)? as u64,
        roles: r.text(6)?.split_whitespace().map(str::to_string).collect(),
        tokens_cutoff: r.i64(7)?.max(0) as u64,
        created_at: r.i64(9)?.max(0) as u64,
        source: Source::parse(&r.text(10)?),
        external_id: r.opt_text(11)?,
        scim: r.opt_text(12)?.and_then(|j| match serde_json::from_str(&j) {
            Ok(Value::Object(m)) => Some(Box::new(m)),
            _ => None,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alice() -> User {
        let mut claims = Map::new();
        claims.insert("email".into(), "alice@example.com".into());
        claims.insert("email_verified".into(), true.into());
        new_user(UserInput { username: Some("alice".into()), password: Some("correct horse".into()), claims, disabled: None, roles: None })
            .unwrap()
    }

    #[test]
    fn password_is_argon2id_and_verifies() {
        let u = alice();
        assert!(u.password_hash.starts_with("$argon2id$"));
        assert!(verify_password(Some(&u), "correct horse"));
        assert!(!verify_password(Some(&u), "wrong horse"));
        assert!(!verify_password(None, "correct horse"));
    }

    #[test]
    fn disabled_user_cannot_log_in() {
        let u = update_user(&alice(), UserInput { disabled: Some(true), ..Default::default() }).unwrap();
        assert!(!verify_password(Some(&u), "correct horse"));
    }

    #[test]
    fn claims_are_typed_and_named_as_in_oidc_core() {
        let mut bad = Map::new();
        bad.insert("email_verified".into(), "yes".into());
        assert!(update_user(&alice(), UserInput { claims: bad, ..Default::default() }).is_err());
        let mut bad = Map::new();
        bad.insert("is_admin".into(), true.into());
        assert!(update_user(&alice(), UserInput { claims: bad, ..Default::default() }).is_err());
        let mut addr = Map::new();
        addr.insert("address".into(), serde_json::json!({"country": "JP", "locality": "Tokyo"}));
        let u = update_user(&alice(), UserInput { claims: addr, ..Default::default() }).unwrap();
        assert_eq!(u.claim("address").unwrap()["country"], "JP");
        assert_eq!(u.claim("preferred_username").unwrap(), "alice");
    }

    #[test]
    fn short_passwords_refused() {
        assert!(new_user(UserInput { username: Some("bob".into()), password: Some("short".into()), ..Default::default() })
            .is_err());
    }

    #[test]
    fn login_names_are_one_whatever_the_case_or_width() {
        assert_eq!(login_key(" ALICE "), "alice");
        assert_eq!(login_key("ａｌｉｃｅ"), "alice");
        assert_eq!(login_key("Bob@Example.COM"), "bob@example.com");
    }

    #[test]
    fn a_login_name_has_one_owner() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::db::open(dir.path(), "NORMAL").unwrap();
        let conn = &mut crate::db::SqliteSql(&conn);
        let a = alice();
        save(conn, &a).unwrap();
        let other = |name: &str, email: Option<&str>| {
            let mut claims = Map::new();
            if let Some(e) = email {
                claims.insert("email".into(), e.into());
            }
            new_user(UserInput { username: Some(name.into()), password: Some("password-2".into()), claims, disabled: None, roles: None }).unwrap()
        };
        for (name, email) in [("ALICE", None), ("alice", None), ("carol", Some("Alice@Example.com")), ("alice@example.com", None)] {
            let err = save(conn, &other(name, email)).unwrap_err();
            assert!(matches!(err, StoreError::Conflict(_)), "{name} {email:?}: {err}");
        }
        let n: i64 = conn.query("SELECT COUNT(*) FROM users", &[]).unwrap()[0].i64(0).unwrap();
        assert_eq!(n, 1, "a refused save wrote nothing");
        // Renaming oneself to another case of one's own name is fine.
        let renamed = update_user(&a, UserInput { username: Some("Alice".into()), ..Default::default() }).unwrap();
        save(conn, &renamed).unwrap();
        assert_eq!(find(conn, TenantId::DEFAULT, "ALICE").unwrap().unwrap().username, "Alice");
    }

    #[test]
    fn a_saved_user_reads_back_as_it_was_saved() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::db::open(dir.path(), "NORMAL").unwrap();
        let conn = &mut crate::db::SqliteSql(&conn);
        let mut u = alice();
        u.created_at = 1_800_000_000;
        u.updated_at = 1_800_000_000;
        save(conn, &u).unwrap();
        assert_eq!(load_one(conn, TenantId::DEFAULT, &u.id).unwrap().unwrap(), u);
        // Changed later: the change's time is kept, the creation's too.
        let mut changed = update_user(&u, UserInput { roles: Some(vec!["admin".into()]), ..Default::default() }).unwrap();
        changed.updated_at = 1_800_000_077;
        save(conn, &changed).unwrap();
        let back = load_one(conn, TenantId::DEFAULT, &u.id).unwrap().unwrap();
        assert_eq!((back.created_at, back.updated_at), (1_800_000_000, 1_800_000_077));
        assert_eq!(back, changed);
    }

    #[test]
    fn find_by_username_or_email() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::db::open(dir.path(), "NORMAL").unwrap();
        let conn = &mut crate::db::SqliteSql(&conn);
        let u = alice();
        save(conn, &u).unwrap();
        assert_eq!(find(conn, TenantId::DEFAULT, "alice").unwrap().unwrap().id, u.id);
        assert_eq!(find(conn, TenantId::DEFAULT, "ALICE@example.com").unwrap().unwrap().id, u.id);
        assert_eq!(load_one(conn, TenantId::DEFAULT, &u.id).unwrap().unwrap().password_hash, u.password_hash);
    }
}
