//! LDAP and Active Directory directories users sign in against (`identity::ldap`). A table,
//! so TOML only (and a tenant's settings, `tenant::overrides`):
//!
//! ```toml
//! [[ldap_directories]]
//! id = "corp"                                   # links are `ldap:corp`
//! url = "ldaps://ldap.corp.example"             # or ldap:// with starttls = true
//! bind_dn = "cn=authrim,ou=services,dc=corp,dc=example"
//! bind_password = "…"                           # the search account's; never logged
//! base_dn = "ou=people,dc=corp,dc=example"
//! user_filter = "(&(objectClass=inetOrgPerson)(uid={username}))"
//! subject_attribute = "entryUUID"               # objectGUID on Active Directory
//! email_verified = true                         # the directory's addresses are checked
//! ca_file = "/etc/authrim/corp-ca.pem"          # a private CA (else the system's roots)
//! ```

use serde::{Deserialize, Serialize};

/// Members left out take `Default`'s values; the required ones (`id`, `url`, `base_dn`) are
/// empty then, which `validate` refuses by name.
#[derive(Clone, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct LdapDirectory {
    /// Letters, digits, `-` and `_`: linked identities name the directory `ldap:<id>`.
    pub id: String,
    /// `ldaps://host[:port]`, or `ldap://host[:port]` with `starttls` (or `allow_insecure`).
    pub url: String,
    /// `ldap://` upgraded by StartTLS (RFC 4511 §4.14) before anything is sent.
    pub starttls: bool,
    /// Plain `ldap://` without StartTLS: passwords cross the network in clear. Tests and a
    /// directory on the same host only.
    pub allow_insecure: bool,
    /// The account that searches for users; both absent: an anonymous search.
    pub bind_dn: Option<String>,
    pub bind_password: Option<String>,
    /// Where users are searched (the whole subtree).
    pub base_dn: String,
    /// The search filter; `{username}` is replaced by what was typed, escaped (RFC 4515).
    pub user_filter: String,
    /// The attribute that identifies a user for good (never reassigned, unlike a name):
    /// `entryUUID` (OpenLDAP, RFC 4530) or `objectGUID` (Active Directory).
    pub subject_attribute: String,
    /// The user's login name here (`uid`; `sAMAccountName` or `userPrincipalName` on AD).
    pub username_attribute: String,
    pub email_attribute: String,
    /// Whether the directory's e-mail addresses count as verified (`email_verified`).
    pub email_verified: bool,
    pub given_name_attribute: String,
    pub family_name_attribute: String,
    pub name_attribute: String,
    /// `jit`: a user is created (or updated) here when they sign in. `sync`: that, and every
    /// `sync_interval` seconds the whole directory is read (`endpoints::directory_sync`): users
    /// created and updated, and those gone from it or disabled there disabled here.
    pub mode: String,
    /// Seconds between two sync rounds (`mode = "sync"`); the first is one interval after
    /// the start.
    pub sync_interval: u64,
    /// How a user's directory groups are found: `none`; `search`, the groups under
    /// `group_base_dn` that `group_filter` matches; `member_of`, the group DNs in the user's
    /// `member_of_attribute`. Each becomes a membership of the Authrim group of its name.
    pub group_mapping: String,
    /// Where groups are searched (`search`; the whole subtree).
    pub group_base_dn: Option<String>,
    /// The groups of a user (`search`); `{dn}` is the user's DN, escaped (RFC 4515).
    pub group_filter: String,
    /// The attribute that names a group (`search`); with `member_of`, the first RDN's value.
    pub group_name_attribute: String,
    /// The user's attribute listing their groups' DNs (`member_of`).
    pub member_of_attribute: String,
    /// Put before every mapped group's name here, so that a directory's groups cannot take an
    /// operator's group by its name (`corp-` makes the directory's `admins` `corp-admins`).
    pub group_prefix: String,
    /// Seconds to connect (TCP and TLS).
    pub connect_timeout: u64,
    /// Seconds for each operation (a bind, a search).
    pub operation_timeout: u64,
    /// Connections to this directory open at once; sign-ins past it wait up to
    /// `operation_timeout`, then are told the directory is not reachable.
    pub max_connections: usize,
    /// PEM file of the CA(s) the directory's certificate chains to, instead of the system's.
    pub ca_file: Option<std::path::PathBuf>,
}

pub const DEFAULT_FILTER: &str = "(&(objectClass=inetOrgPerson)(uid={username}))";
/// A user's groups of either standard kind (RFC 4519 `groupOfNames`, `groupOfUniqueNames`).
pub const DEFAULT_GROUP_FILTER: &str = "(|(&(objectClass=groupOfNames)(member={dn}))(&(objectClass=groupOfUniqueNames)(uniqueMember={dn})))";

impl Default for LdapDirectory {
    fn default() -> Self {
        Self {
            id: String::new(),
            url: String::new(),
            starttls: false,
            allow_insecure: false,
            bind_dn: None,
            bind_password: None,
            base_dn: String::new(),
            user_filter: DEFAULT_FILTER.into(),
            subject_attribute: "entryUUID".into(),
            username_attribute: "uid".into(),
            email_attribute: "mail".into(),
            email_verified: false,
            given_name_attribute: "givenName".into(),
            family_name_attribute: "sn".into(),
            name_attribute: "cn".into(),
            mode: "jit".into(),
            sync_interval: 900,
            group_mapping: "none".into(),
            group_base_dn: None,
            group_filter: DEFAULT_GROUP_FILTER.into(),
            group_name_attribute: "cn".into(),
            member_of_attribute: "memberOf".into(),
            group_prefix: String::new(),
            connect_timeout: 5,
            operation_timeout: 5,
            max_connections: 10,
            ca_file: None,
        }
    }
}

/// Printed without the bind password, wherever a directory is printed.
impl std::fmt::Debug for LdapDirectory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        if self.bind_password.is_some() {
            v["bind_password"] = "<redacted>".into();
        }
        write!(f, "LdapDirectory {v}")
    }
}

impl LdapDirectory {
    pub fn validate(&self, i: usize) -> anyhow::Result<()> {
        let at = format!("ldap_directories[{i}] ({})", self.id);
        if !super::upstreams::is_setting_id(&self.id) {
            anyhow::bail!("{at}: id must be 1-64 letters, digits, '-' or '_'");
        }
        if self.url.is_empty() {
            anyhow::bail!("{at}: url is required");
        }
        let url = url::Url::parse(&self.url).map_err(|e| anyhow::anyhow!("{at}: url {}: {e}", self.url))?;
        // ldap3 wants a host (it panics on a URL without one); ldapi:// (a local socket) is
        // not offered.
        if url.host_str().is_none_or(str::is_empty) {
            anyhow::bail!("{at}: url {} names no host", self.url);
        }
        match (url.scheme(), self.starttls, self.allow_insecure) {
            ("ldaps", false, _) | ("ldap", true, _) | ("ldap", false, true) => {}
            ("ldaps", true, _) => anyhow::bail!("{at}: starttls is for ldap:// URLs (ldaps:// is TLS from the start)"),
            ("ldap", false, false) => anyhow::bail!("{at}: ldap:// sends passwords in clear: use ldaps://, or starttls = true (allow_insecure = true for tests only)"),
            (s, _, _) => anyhow::bail!("{at}: url scheme {s:?} is not ldaps or ldap"),
        }
        if self.bind_dn.is_some() != self.bind_password.as_deref().is_some_and(|p| !p.is_empty()) {
            anyhow::bail!("{at}: bind_dn and bind_password go together (neither: an anonymous search)");
        }
        if self.base_dn.trim().is_empty() {
            anyhow::bail!("{at}: base_dn is required");
        }
        let f = self.user_filter.trim();
        if !f.contains("{username}") || !f.starts_with('(') || !f.ends_with(')') {
            anyhow::bail!("{at}: user_filter must be a parenthesised filter with {{username}} in it, like {DEFAULT_FILTER}");
        }
        for (name, a) in [
            ("subject_attribute", &self.subject_attribute),
            ("username_attribute", &self.username_attribute),
            ("email_attribute", &self.email_attribute),
            ("given_name_attribute", &self.given_name_attribute),
            ("family_name_attribute", &self.family_name_attribute),
            ("name_attribute", &self.name_attribute),
            ("group_name_attribute", &self.group_name_attribute),
            ("member_of_attribute", &self.member_of_attribute),
        ] {
            // RFC 4512 §2.5 descr: a letter, then letters, digits and hyphens.
            if !a.starts_with(|c: char| c.is_ascii_alphabetic()) || !a.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
                anyhow::bail!("{at}: {name} {a:?} is not an attribute name");
            }
        }
        if self.mode != "jit" && self.mode != "sync" {
            anyhow::bail!("{at}: mode must be \"jit\" (just-in-time import at sign-in) or \"sync\" (that, and a periodic sync)");
        }
        if !(60..=86_400).contains(&self.sync_interval) {
            anyhow::bail!("{at}: sync_interval must be 60-86400 seconds");
        }
        match self.group_mapping.as_str() {
            "none" | "member_of" => {}
            "search" if self.group_base_dn.as_deref().is_none_or(|b| b.trim().is_empty()) => anyhow::bail!("{at}: group_mapping = \"search\" needs group_base_dn"),
            "search" => {
                let f = self.group_filter.trim();
                if !f.contains("{dn}") || !f.starts_with('(') || !f.ends_with(')') {
                    anyhow::bail!("{at}: group_filter must be a parenthesised filter with {{dn}} in it, like {DEFAULT_GROUP_FILTER}");
                }
            }
            other => anyhow::bail!("{at}: group_mapping {other:?} is not none, search or member_of"),
        }
        if self.group_prefix.chars().count() > 64 || self.group_prefix.chars().any(char::is_control) {
            anyhow::bail!("{at}: group_prefix: at most 64 characters, no control characters");
        }
        for (name, secs) in [("connect_timeout", self.connect_timeout), ("operation_timeout", self.operation_timeout)] {
            if !(1..=120).contains(&secs) {
                anyhow::bail!("{at}: {name} must be 1-120 seconds");
            }
        }
        if !(1..=1000).contains(&self.max_connections) {
            anyhow::bail!("{at}: max_connections must be 1-1000");
        }
        Ok(())
    }

    /// The provider name of its linked identities.
    pub fn provider(&self) -> String {
        format!("ldap:{}", self.id)
    }
}
