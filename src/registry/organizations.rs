//! Organizations inside a tenant (issue 31, B2B): a customer company of the application, with
//! its members (users of the tenant, each with organization roles) and its e-mail domains.
//! Rows here; the in-memory index (`Orgs`) is what requests read, kept in step like clients
//! and users (`record_change` kinds `organization` and `member`).

use crate::db::{Sql, StoreResult};
use crate::tenant::TenantId;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// Bounds on what an administrator may set: an organization is read on every sign-in for it.
pub const MAX_DOMAINS: usize = 50;
pub const MAX_ROLES: usize = 50;
const MAX_NAME: usize = 200;

/// The organization role reserved for its administrators: a member who has it may sign in
/// to the console (with its second factor and recent sign-in rules) and manage that
/// organization's members and their roles, and nothing else of the tenant. Any other role
/// name means only what the applications make of it (`org_roles` in tokens).
pub const ORG_ADMIN_ROLE: &str = "admin";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Organization {
    #[serde(skip)]
    pub tenant: TenantId,
    #[serde(skip)]
    pub id: String,
    /// The stable, URL-safe name: what `organization=` and the `org_name` claim carry.
    #[serde(skip)]
    pub slug: String,
    /// What pages show.
    pub display_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logo_uri: Option<String>,
    /// The upstream identity provider (`identity_providers`' id) its members sign in with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<String>,
    /// E-mail domains that are the organization's (lower case, without `@`).
    #[serde(skip)]
    pub domains: Vec<String>,
    #[serde(skip)]
    pub created_at: u64,
}

/// What the admin API and the CLI may set; absent fields keep their value on a change.
#[derive(Debug, Default, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OrganizationInput {
    /// 1-63 characters: lower-case letters, digits and `-`, starting with a letter or digit.
    pub slug: Option<String>,
    pub display_name: Option<String>,
    /// An https URL (or empty to remove it).
    pub logo_uri: Option<String>,
    /// An upstream identity provider's id (or empty to remove it).
    pub upstream: Option<String>,
    /// The organization's e-mail domains (the whole list; at most 50).
    pub domains: Option<Vec<String>>,
}

/// A user's membership of an organization.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Member {
    /// Organization roles: names of 1-64 characters of `[A-Za-z0-9_.:-]`.
    pub roles: Vec<String>,
    /// When the user (last) joined: a token for the organization issued before it is not
    /// theirs (one from a membership that was removed and later given again).
    pub joined_at: u64,
}

pub type Roles = Arc<Member>;

pub fn validate_slug(slug: &str) -> Result<(), String> {
    let ok = (1..=63).contains(&slug.len())
        && slug.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !slug.starts_with('-')
        && !slug.ends_with('-');
    ok.then_some(()).ok_or_else(|| format!("slug {slug:?} must be 1-63 lower-case letters, digits and inner dashes"))
}

/// A domain as stored: lower case, a dotted DNS name of letters, digits and dashes.
pub fn normalize_domain(domain: &str) -> Result<String, String> {
    let d = domain.trim().trim_end_matches('.').to_ascii_lowercase();
    let labels_ok = d.split('.').all(|l| {
        (1..=63).contains(&l.len()) && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') && !l.starts_with('-') && !l.ends_with('-')
    });
    (d.contains('.') && d.len() <= 253 && labels_ok).then_some(d).ok_or_else(|| format!("{domain:?} is not a domain name"))
}

pub fn validate_roles(roles: &[String]) -> Result<(), String> {
    if roles.len() > MAX_ROLES {
        return Err(format!("at most {MAX_ROLES} roles"));
    }
    for r in roles {
        if !(1..=64).contains(&r.len()) || !r.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.:-".contains(&b)) {
            return Err(format!("role {r:?} must be 1-64 characters of letters, digits, '_', '.', ':' and '-'"));
        }
    }
    Ok(())
}

impl Organization {
    /// A new organization of `tenant` from `input` (which must name a slug).
    pub fn new(tenant: TenantId, input: OrganizationInput) -> Result<Self, String> {
        let mut org = Organization {
            tenant,
            id: format!("org_{}", &crate::util::random_token()[..16]),
            slug: String::new(),
            display_name: String::new(),
            logo_uri: None,
            upstream: None,
            domains: Vec::new(),
            created_at: crate::util::now(),
        };
        if input.slug.is_none() {
            return Err("slug is required".into());
        }
        org.apply(input)?;
        Ok(org)
    }

    /// Apply a change; nothing changes unless all of it is valid.
    pub fn apply(&mut self, input: OrganizationInput) -> Result<(), String> {
        let mut next = self.clone();
        if let Some(slug) = input.slug {
            validate_slug(&slug)?;
            next.slug = slug;
        }
        if let Some(name) = input.display_name {
            let name = name.trim().to_string();
            if name.chars().count() > MAX_NAME || name.chars().any(char::is_control) {
                return Err(format!("display_name: at most {MAX_NAME} characters, no control characters"));
            }
            next.display_name = name;
        }
        if let Some(logo) = input.logo_uri {
            next.logo_uri = match logo.is_empty() {
                true => None,
                false if logo.len() <= 2000 && url::Url::parse(&logo).is_ok_and(|u| u.scheme() == "https") => Some(logo),
                false => return Err("logo_uri must be an https URL".into()),
            };
        }
        if let Some(up) = input.upstream {
            next.upstream = (!up.is_empty()).then_some(up);
        }
        if let Some(domains) = input.domains {
            if domains.len() > MAX_DOMAINS {
                return Err(format!("at most {MAX_DOMAINS} domains"));
            }
            let mut ds = domains.iter().map(|d| normalize_domain(d)).collect::<Result<Vec<_>, _>>()?;
            ds.sort();
            ds.dedup();
            next.domains = ds;
        }
        if next.display_name.is_empty() {
            next.display_name = next.slug.clone();
        }
        *self = next;
        Ok(())
    }

    /// The organization as the admin API shows it.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "id": self.id, "slug": self.slug, "display_name": self.display_name,
            "logo_uri": self.logo_uri, "upstream": self.upstream, "domains": self.domains,
            "created_at": self.created_at,
        })
    }
}

/// Why a save was refused by the database.
#[derive(Debug, PartialEq, Eq)]
pub enum Conflict {
    Slug,
    /// The domain is another organization's in this tenant.
    Domain(String),
}

/// Insert or update `org` and replace its domains: one transaction with the change record.
pub fn save(sql: &mut dyn Sql, org: &Organization) -> StoreResult<Result<(), Conflict>> {
    let t = org.tenant;
    let taken = sql.query_opt("SELECT id FROM organizations WHERE tenant_id = ?1 AND slug = ?2 AND id <> ?3", crate::params![t, &org.slug, &org.id])?;
    if taken.is_some() {
        return Ok(Err(Conflict::Slug));
    }
    for d in &org.domains {
        let owner = sql.query_opt("SELECT org_id FROM organization_domains WHERE tenant_id = ?1 AND domain = ?2 AND org_id <> ?3", crate::params![t, d, &org.id])?;
        if owner.is_some() {
            return Ok(Err(Conflict::Domain(d.clone())));
        }
    }
    let data = serde_json::to_string(org).expect("an organization serialises");
    let now = crate::util::now() as i64;
    sql.execute(
        "INSERT INTO organizations (tenant_id, id, slug, data, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT(tenant_id, id) DO UPDATE SET slug = excluded.slug, data = excluded.data, updated_at = excluded.updated_at",
        crate::params![t, &org.id, &org.slug, &data, org.created_at as i64, now],
    )?;
    sql.execute("DELETE FROM organization_domains WHERE tenant_id = ?1 AND org_id = ?2", crate::params![t, &org.id])?;
    for d in &org.domains {
        sql.execute("INSERT INTO organization_domains (tenant_id, domain, org_id) VALUES (?1, ?2, ?3)", crate::params![t, d, &org.id])?;
    }
    super::record_change(sql, t, "organization", &org.id)?;
    Ok(Ok(()))
}

/// Delete an organization with its domains, memberships and invitations (its links stop
/// working).
pub fn delete(sql: &mut dyn Sql, tenant: TenantId, id: &str) -> StoreResult<bool> {
    let n = sql.execute("DELETE FROM organizations WHERE tenant_id = ?1 AND id = ?2", crate::params![tenant, id])?;
    sql.execute("DELETE FROM organization_domains WHERE tenant_id = ?1 AND org_id = ?2", crate::params![tenant, id])?;
    sql.execute("DELETE FROM organization_members WHERE tenant_id = ?1 AND org_id = ?2", crate::params![tenant, id])?;
    sql.execute("DELETE FROM organization_invitations WHERE tenant_id = ?1 AND org_id = ?2", crate::params![tenant, id])?;
    super::record_change(sql, tenant, "organization", id)?;
    Ok(n > 0)
}

/// Add `user` to `org` with `roles`, or change their roles (a member keeps the time they
/// joined); the membership as saved.
pub fn put_member(sql: &mut dyn Sql, tenant: TenantId, org: &str, user: &str, roles: &[String]) -> StoreResult<Roles> {
    sql.execute(
        "INSERT INTO organization_members (tenant_id, org_id, user_id, roles, joined_at) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT(tenant_id, org_id, user_id) DO UPDATE SET roles = excluded.roles",
        crate::params![tenant, org, user, &roles.join(" "), crate::util::now() as i64],
    )?;
    super::record_change(sql, tenant, "member", &member_key(org, user))?;
    load_member(sql, tenant, org, user)?.ok_or_else(|| crate::db::StoreError::Database("a membership just written is not there".into()))
}

pub fn remove_member(sql: &mut dyn Sql, tenant: TenantId, org: &str, user: &str) -> StoreResult<bool> {
    let n = sql.execute("DELETE FROM organization_members WHERE tenant_id = ?1 AND org_id = ?2 AND user_id = ?3", crate::params![tenant, org, user])?;
    super::record_change(sql, tenant, "member", &member_key(org, user))?;
    Ok(n > 0)
}

/// A deleted user's memberships go with them (called in `users::delete`'s transaction).
pub fn remove_user(sql: &mut dyn Sql, tenant: TenantId, user: &str) -> StoreResult<()> {
    sql.execute("DELETE FROM organization_members WHERE tenant_id = ?1 AND user_id = ?2", crate::params![tenant, user]).map(|_| ())
}

pub(super) fn member_key(org: &str, user: &str) -> String {
    format!("{org}\u{1f}{user}")
}

const SELECT: &str = "SELECT tenant_id, id, slug, data, created_at FROM organizations";

fn row_to_org(r: &crate::db::sql::Row) -> StoreResult<Organization> {
    let mut org: Organization = serde_json::from_str(&r.text(3)?).unwrap_or_else(|_| Organization {
        tenant: TenantId::DEFAULT,
        id: String::new(),
        slug: String::new(),
        display_name: String::new(),
        logo_uri: None,
        upstream: None,
        domains: Vec::new(),
        created_at: 0,
    });
    org.tenant = r.tenant(0)?;
    org.id = r.text(1)?;
    org.slug = r.text(2)?;
    org.created_at = r.i64(4)?.max(0) as u64;
    Ok(org)
}

fn domains_of(sql: &mut dyn Sql, tenant: TenantId, id: &str) -> StoreResult<Vec<String>> {
    sql.query("SELECT domain FROM organization_domains WHERE tenant_id = ?1 AND org_id = ?2 ORDER BY domain", crate::params![tenant, id])?
        .iter()
        .map(|r| r.text(0))
        .collect()
}

pub fn load_one(sql: &mut dyn Sql, tenant: TenantId, id: &str) -> StoreResult<Option<Organization>> {
    let Some(row) = sql.query_opt(&format!("{SELECT} WHERE tenant_id = ?1 AND id = ?2"), crate::params![tenant, id])? else { return Ok(None) };
    let mut org = row_to_org(&row)?;
    org.domains = domains_of(sql, tenant, id)?;
    Ok(Some(org))
}

pub fn load_member(sql: &mut dyn Sql, tenant: TenantId, org: &str, user: &str) -> StoreResult<Option<Roles>> {
    let row = sql.query_opt("SELECT roles, joined_at FROM organization_members WHERE tenant_id = ?1 AND org_id = ?2 AND user_id = ?3", crate::params![tenant, org, user])?;
    row.map(|r| member(&r.text(0)?, r.i64(1)?)).transpose()
}

fn member(roles: &str, joined_at: i64) -> StoreResult<Roles> {
    Ok(Arc::new(Member { roles: roles.split_whitespace().map(str::to_string).collect(), joined_at: joined_at.max(0) as u64 }))
}

/// Every organization and membership of every tenant (the registry's snapshot).
pub(super) fn load_all(sql: &mut dyn Sql) -> StoreResult<(Vec<Organization>, Vec<(TenantId, String, String, Roles)>)> {
    let mut orgs: Vec<Organization> = sql.query(SELECT, &[])?.iter().map(row_to_org).collect::<StoreResult<_>>()?;
    let mut domains: HashMap<(TenantId, String), Vec<String>> = HashMap::new();
    for r in sql.query("SELECT tenant_id, org_id, domain FROM organization_domains ORDER BY domain", &[])?.iter() {
        domains.entry((r.tenant(0)?, r.text(1)?)).or_default().push(r.text(2)?);
    }
    for o in &mut orgs {
        o.domains = domains.remove(&(o.tenant, o.id.clone())).unwrap_or_default();
    }
    let members = sql
        .query("SELECT tenant_id, org_id, user_id, roles, joined_at FROM organization_members", &[])?
        .iter()
        .map(|r| Ok((r.tenant(0)?, r.text(1)?, r.text(2)?, member(&r.text(3)?, r.i64(4)?)?)))
        .collect::<StoreResult<_>>()?;
    Ok((orgs, members))
}

/// One tenant's organizations in memory, with the indexes sign-in needs.
#[derive(Default)]
pub(super) struct Orgs {
    pub(super) by_id: HashMap<String, Arc<Organization>>,
    pub(super) by_slug: HashMap<String, String>,
    pub(super) by_domain: HashMap<String, String>,
    /// user id -> (organization id -> roles): what a token for a user reads.
    pub(super) members: HashMap<String, BTreeMap<String, Roles>>,
    /// How many have both a domain and an identity provider of their own: while none has,
    /// the login form needs no password-less submit for routing by address.
    pub(super) routed: usize,
}

fn routes(org: &Organization) -> bool {
    org.upstream.is_some() && !org.domains.is_empty()
}

impl Orgs {
    pub(super) fn put(&mut self, org: Organization) {
        self.unindex(&org.id);
        self.by_slug.insert(org.slug.clone(), org.id.clone());
        for d in &org.domains {
            self.by_domain.insert(d.clone(), org.id.clone());
        }
        self.routed += routes(&org) as usize;
        self.by_id.insert(org.id.clone(), Arc::new(org));
    }

    fn unindex(&mut self, id: &str) -> bool {
        let Some(old) = self.by_id.remove(id) else { return false };
        self.routed -= routes(&old) as usize;
        if self.by_slug.get(&old.slug).is_some_and(|i| i == id) {
            self.by_slug.remove(&old.slug);
        }
        for d in &old.domains {
            if self.by_domain.get(d).is_some_and(|i| i == id) {
                self.by_domain.remove(d);
            }
        }
        true
    }

    /// Drop an organization and its memberships.
    pub(super) fn remove(&mut self, id: &str) -> bool {
        let existed = self.unindex(id);
        self.members.retain(|_, of| {
            of.remove(id);
            !of.is_empty()
        });
        existed
    }

    pub(super) fn set_member(&mut self, org: &str, user: &str, roles: Option<Roles>) {
        match roles {
            Some(r) => drop(self.members.entry(user.to_string()).or_default().insert(org.to_string(), r)),
            None => {
                if let Some(of) = self.members.get_mut(user) {
                    of.remove(org);
                    if of.is_empty() {
                        self.members.remove(user);
                    }
                }
            }
        }
    }

    pub(super) fn find(&self, id_or_slug: &str) -> Option<&Arc<Organization>> {
        self.by_id.get(id_or_slug).or_else(|| self.by_slug.get(id_or_slug).and_then(|id| self.by_id.get(id)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_checked_and_a_bad_change_changes_nothing() {
        let mut org = Organization::new(TenantId::DEFAULT, OrganizationInput { slug: Some("acme".into()), domains: Some(vec!["Acme.Example.".into(), "acme.example".into()]), ..Default::default() }).unwrap();
        assert_eq!(org.domains, vec!["acme.example"]);
        assert_eq!(org.display_name, "acme");
        assert!(Organization::new(TenantId::DEFAULT, OrganizationInput::default()).is_err());
        for bad in [
            OrganizationInput { slug: Some("Acme".into()), ..Default::default() },
            OrganizationInput { logo_uri: Some("http://acme.example/logo.png".into()), ..Default::default() },
            OrganizationInput { domains: Some(vec!["localhost".into()]), ..Default::default() },
            OrganizationInput { domains: Some(vec!["a@b.example".into()]), ..Default::default() },
            OrganizationInput { display_name: Some("a\nb".into()), ..Default::default() },
        ] {
            let before = org.clone();
            assert!(org.apply(bad).is_err());
            assert_eq!(org, before);
        }
        assert!(validate_roles(&["admin".into(), "billing:read".into()]).is_ok());
        assert!(validate_roles(&["has space".into()]).is_err());
        assert!(validate_roles(&vec!["r".to_string(); MAX_ROLES + 1]).is_err());
    }

    #[test]
    fn the_index_follows_changes_and_removals() {
        let mut orgs = Orgs::default();
        let mut a = Organization::new(TenantId::DEFAULT, OrganizationInput { slug: Some("acme".into()), domains: Some(vec!["acme.example".into()]), ..Default::default() }).unwrap();
        orgs.put(a.clone());
        orgs.set_member(&a.id, "u1", Some(Arc::new(Member { roles: vec!["admin".into()], joined_at: 1 })));
        assert_eq!(orgs.find("acme").unwrap().id, a.id);
        a.apply(OrganizationInput { slug: Some("acme2".into()), domains: Some(vec![]), ..Default::default() }).unwrap();
        orgs.put(a.clone());
        assert!(orgs.find("acme").is_none());
        assert!(orgs.by_domain.is_empty());
        assert!(orgs.members["u1"].contains_key(&a.id));
        assert!(orgs.remove(&a.id));
        assert!(orgs.members.is_empty(), "an organization's memberships go with it");
    }

    /// Another process (the CLI) or node changes organizations: the registry follows, as it
    /// does for clients and users, and one tenant's never shows in another's.
    #[tokio::test]
    async fn changes_made_elsewhere_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        let config = crate::config::Config { data_dir: dir.path().into(), ..Default::default() };
        let registry = super::super::Registry::load(crate::db::Database::open(&config).await.unwrap()).await.unwrap();
        let cli = crate::db::open(dir.path(), "NORMAL").unwrap();
        let cli = &mut crate::db::SqliteSql(&cli);
        let t = TenantId(5);
        let org = Organization::new(t, OrganizationInput { slug: Some("acme".into()), domains: Some(vec!["acme.example".into()]), ..Default::default() }).unwrap();
        save(cli, &org).unwrap().unwrap();
        put_member(cli, t, &org.id, "u1", &["admin".into()]).unwrap();
        registry.poll_changes().await.unwrap();
        let view = registry.of(t);
        assert_eq!(view.organization("acme").unwrap().id, org.id);
        assert_eq!(view.organization_of_domain("ACME.example").unwrap().id, org.id);
        assert_eq!(view.membership(&org.id, "u1").unwrap().roles, vec!["admin"]);
        assert!(registry.of(TenantId::DEFAULT).organization("acme").is_none());
        assert!(registry.of(TenantId::DEFAULT).membership(&org.id, "u1").is_none());
        // The same slug is free in another tenant; a domain is one organization's per tenant.
        let other = Organization::new(TenantId::DEFAULT, OrganizationInput { slug: Some("acme".into()), domains: Some(vec!["acme.example".into()]), ..Default::default() }).unwrap();
        assert_eq!(save(cli, &other).unwrap(), Ok(()));
        let rival = Organization::new(t, OrganizationInput { slug: Some("rival".into()), domains: Some(vec!["acme.example".into()]), ..Default::default() }).unwrap();
        assert_eq!(save(cli, &rival).unwrap(), Err(Conflict::Domain("acme.example".into())));
        remove_member(cli, t, &org.id, "u1").unwrap();
        registry.poll_changes().await.unwrap();
        assert!(registry.of(t).membership(&org.id, "u1").is_none());
        put_member(cli, t, &org.id, "u2", &[]).unwrap();
        delete(cli, t, &org.id).unwrap();
        registry.poll_changes().await.unwrap();
        assert!(registry.of(t).organization(&org.id).is_none());
        assert!(registry.of(t).memberships("u2").is_empty());
        assert_eq!(registry.of(TenantId::DEFAULT).list_organizations().len(), 1);
    }
}
