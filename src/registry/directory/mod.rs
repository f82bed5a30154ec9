//! The directory of a tenant (issue 32): groups of users (nestable), the roles each client
//! defines, and the assignment of those roles to users or groups. Rows in `rows`; in memory
//! (`memory::Directory`, one per tenant beside the organizations) each user's effective
//! groups and roles are computed when a change arrives, so that issuing a token reads them
//! with a map lookup and never the database (docs/design/directory.md).

pub mod mapped;
pub mod memory;
pub mod rows;
mod view;

use crate::tenant::TenantId;
use serde::Deserialize;

/// What a group's or a role assignment's member is: a user, or (nesting) a group.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Principal {
    User(String),
    Group(String),
}

impl Principal {
    /// The kind as stored (`member_kind`, `principal_kind`) and as the admin API's paths say it.
    pub fn kind(&self) -> &'static str {
        match self {
            Principal::User(_) => "user",
            Principal::Group(_) => "group",
        }
    }

    pub fn id(&self) -> &str {
        match self {
            Principal::User(id) | Principal::Group(id) => id,
        }
    }

    pub fn from_parts(kind: &str, id: &str) -> Option<Self> {
        match kind {
            "user" | "users" => Some(Principal::User(id.to_string())),
            "group" | "groups" => Some(Principal::Group(id.to_string())),
            _ => None,
        }
    }

    /// One string for the change log's keys (`kind:id`).
    pub fn key(&self) -> String {
        format!("{}:{}", self.kind(), self.id())
    }

    pub fn from_key(key: &str) -> Option<Self> {
        let (kind, id) = key.split_once(':')?;
        Self::from_parts(kind, id)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub tenant: TenantId,
    pub id: String,
    /// What tokens carry (`groups_claim = "names"`) and people see; unique in the tenant,
    /// compared without case.
    pub display_name: String,
    /// The identifier a provisioning system knows the group by (SCIM `externalId`).
    pub external_id: Option<String>,
    pub created_at: u64,
    /// Raised by every change to the group or its members: SCIM's ETag.
    pub version: u64,
}

/// What the admin API may set of a group; absent fields keep their value on a change.
#[derive(Debug, Default, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GroupInput {
    /// 1-256 characters, no control characters; unique in the tenant (case-insensitively).
    pub display_name: Option<String>,
    /// Up to 256 characters (or empty to remove it).
    pub external_id: Option<String>,
}

const MAX_NAME: usize = 256;

impl Group {
    pub fn new(tenant: TenantId, input: GroupInput) -> Result<Self, String> {
        let mut g = Group {
            tenant,
            id: format!("grp_{}", &crate::util::random_token()[..16]),
            display_name: String::new(),
            external_id: None,
            created_at: crate::util::now(),
            version: 0,
        };
        if input.display_name.is_none() {
            return Err("display_name is required".into());
        }
        g.apply(input)?;
        Ok(g)
    }

    /// Apply a change; nothing changes unless all of it is valid.
    pub fn apply(&mut self, input: GroupInput) -> Result<(), String> {
        let mut next = self.clone();
        if let Some(name) = input.display_name {
            let name = name.trim().to_string();
            if name.is_empty() || name.chars().count() > MAX_NAME || name.chars().any(char::is_control) {
                return Err(format!("display_name: 1-{MAX_NAME} characters, no control characters"));
            }
            next.display_name = name;
        }
        if let Some(ext) = input.external_id {
            if ext.chars().count() > MAX_NAME || ext.chars().any(char::is_control) {
                return Err(format!("external_id: at most {MAX_NAME} characters, no control characters"));
            }
            next.external_id = (!ext.is_empty()).then_some(ext);
        }
        *self = next;
        Ok(())
    }

    /// The key that makes names unique without case.
    pub fn name_key(&self) -> String {
        name_key(&self.display_name)
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "id": self.id, "display_name": self.display_name, "external_id": self.external_id,
            "created_at": self.created_at, "version": self.version,
        })
    }
}

pub fn name_key(name: &str) -> String {
    name.to_lowercase()
}

/// A role name: 1-64 characters of `[A-Za-z0-9_.:-]` (what organization roles allow).
pub fn validate_role(role: &str) -> Result<(), String> {
    super::organizations::validate_roles(std::slice::from_ref(&role.to_string()))
}

/// A role's description: at most 500 characters, no control characters but newlines.
pub fn validate_description(d: &str) -> Result<(), String> {
    match d.chars().count() <= 500 && !d.chars().any(|c| c.is_control() && c != '\n') {
        true => Ok(()),
        false => Err("description: at most 500 characters".into()),
    }
}

/// The bounds of one tenant's directory (settings `directory_*`, docs/configuration.md): a
/// provisioning client can grow a directory, so each dimension has a ceiling.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_groups: usize,
    pub max_members: usize,
    pub max_depth: usize,
    pub max_groups_per_user: usize,
    pub max_roles_per_client: usize,
}

impl Default for Limits {
    fn default() -> Self {
        crate::config::Config::default().directory_limits()
    }
}

/// Why a directory change was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    NoSuchGroup,
    NoSuchRole,
    /// The display name is another group's.
    NameTaken,
    /// A group would contain itself.
    Cycle,
    /// A bound of `Limits` (the message names it).
    Limit(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NoSuchGroup => f.write_str("no such group"),
            Refusal::NoSuchRole => f.write_str("no such role"),
            Refusal::NameTaken => f.write_str("the display name is another group's"),
            Refusal::Cycle => f.write_str("a group cannot contain itself, directly or through other groups"),
            Refusal::Limit(what) => f.write_str(what),
        }
    }
}
