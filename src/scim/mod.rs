//! SCIM 2.0 (RFC 7643/7644), the pure parts: the filter grammar of RFC 7644 §3.4.2.2
//! (`filter`, evaluated in `eval`), the PATCH path grammar of §3.5.2 (`path`) and PATCH
//! itself (`patch`), over SCIM resources held as `serde_json::Value`; and a user's SCIM
//! attributes (`user`). The `/scim/v2` endpoints and outbound provisioning call these; no
//! HTTP and no database here.
//!
//! Written by hand, because no Rust crate does the job well enough. We looked at:
//! - `scim-filter` (0.2.3): no release since January 2024, undocumented, evaluates over any
//!   `Serialize` collection with no notion of an attribute's `caseExact` or `dateTime`
//!   characteristics (so string comparisons cannot follow RFC 7644), and has no PATCH path
//!   parser;
//! - `scim_proto` (kanidm's): released with kanidm and shaped by its server; its attribute
//!   path has no schema URN (the field is commented out), so URN-qualified names are lost,
//!   and its filters are not evaluated against arbitrary JSON resources;
//! - `scim_v2` and `scim-server`: resource models and server scaffolding; we found no
//!   evaluator in them that takes attribute characteristics, and `scim-server` is reported
//!   (by the author of another SCIM crate) to match filters as strings, not by the grammar.
//!
//! The grammar is small (one screen of ABNF) and is the product: we own its errors (which
//! `scimType`, where the filter is wrong) and its bounds.

use std::fmt;

mod eval;
pub mod filter;
pub mod patch;
pub mod path;
mod schema;
#[cfg(test)]
mod tests;
pub mod user;

pub use schema::{AttributeTypes, CoreSchema};

/// The longest filter (or PATCH path) accepted, in bytes. A filter is client input, parsed
/// before any authorisation of what it asks; this bounds the work and (with the length of
/// the shortest `and` term) the depth of an `and`/`or` chain. The SCIM endpoints will make
/// it a setting.
pub const MAX_FILTER_LENGTH: usize = 4096;

/// The deepest nesting of parentheses, `not` and value-path brackets accepted. The parser
/// recurses once per level, so this is what keeps hostile input from overflowing the stack;
/// real filters from Entra ID and Okta nest two or three deep. The SCIM endpoints will make
/// it a setting.
pub const MAX_FILTER_DEPTH: usize = 16;

/// The `scimType` of a SCIM error response (RFC 7644 §3.12) that a filter or path error
/// becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScimType {
    /// The filter syntax was invalid, or the operator/value pair is not supported for the
    /// attribute (e.g. `gt` on a boolean).
    InvalidFilter,
    /// The PATCH `path` attribute was invalid or malformed.
    InvalidPath,
}

impl ScimType {
    pub fn as_str(self) -> &'static str {
        match self {
            ScimType::InvalidFilter => "invalidFilter",
            ScimType::InvalidPath => "invalidPath",
        }
    }
}

/// Why a filter or path was refused: what a SCIM error response (status 400) carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError {
    pub scim_type: ScimType,
    /// For the `detail` member: says where (a byte offset) and what was expected.
    pub detail: String,
}

impl FilterError {
    pub(crate) fn filter(detail: impl Into<String>) -> FilterError {
        FilterError { scim_type: ScimType::InvalidFilter, detail: detail.into() }
    }
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.scim_type.as_str(), self.detail)
    }
}

impl std::error::Error for FilterError {}

/// An attribute path (RFC 7644 §3.10): an optional schema URN, an attribute name and an
/// optional sub-attribute. Names keep the client's spelling; they are compared without
/// regard to case (RFC 7643 §2.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttrPath {
    /// The schema URN, e.g. `urn:ietf:params:scim:schemas:extension:enterprise:2.0:User`.
    pub urn: Option<String>,
    pub name: String,
    pub sub: Option<String>,
}

impl AttrPath {
    /// Whether the URN names a core schema (User, Group), whose attributes sit at the top
    /// level of a resource, rather than an extension, whose attributes sit under its URN.
    pub fn in_core_schema(&self) -> bool {
        self.urn.as_deref().is_none_or(|u| u.to_ascii_lowercase().starts_with(CORE_URN_PREFIX))
    }
}

/// The prefix of the core schemas' URNs (RFC 7643 §8.7.1).
pub(crate) const CORE_URN_PREFIX: &str = "urn:ietf:params:scim:schemas:core:2.0:";

impl fmt::Display for AttrPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(urn) = &self.urn {
            write!(f, "{urn}:")?;
        }
        f.write_str(&self.name)?;
        if let Some(sub) = &self.sub {
            write!(f, ".{sub}")?;
        }
        Ok(())
    }
}
