//! What the filter's evaluation needs to know of an attribute beyond its JSON value: whether
//! strings compare case-sensitively (`caseExact`) and whether they are dateTimes (compared
//! chronologically). The SCIM endpoints will answer from the tenant's schemas; `CoreSchema`
//! answers for the core User and Group schemas and the enterprise extension as RFC 7643
//! defines them.

/// The characteristics of attributes that change how a filter compares them. `urn` is the
/// schema URN in lower case, or `None` for the core schemas (whose attributes sit at the
/// top level of a resource); `path` is `name` or `name.sub`, in lower case.
pub trait AttributeTypes {
    /// RFC 7643 §2.3.1 `caseExact`: string comparisons respect case.
    fn case_exact(&self, urn: Option<&str>, path: &str) -> bool;
    /// RFC 7643 §2.3.5: an `xsd:dateTime`, compared chronologically.
    fn date_time(&self, urn: Option<&str>, path: &str) -> bool;
    /// Whether `urn` (in lower case) is a schema extension's, whose attributes sit under it.
    fn is_extension(&self, urn: &str) -> bool {
        let _ = urn;
        false
    }
}

/// The core User and Group schemas (RFC 7643 §3.1, §4, §8.7.1) and the enterprise User
/// extension (§4.3).
#[derive(Debug, Clone, Copy, Default)]
pub struct CoreSchema;

/// `caseExact: true` in the core schemas: the identifiers (§3.1 `id`, `externalId`), the
/// `meta` attributes that are identifiers or URIs (§3.1 `resourceType`, `location`,
/// `version`), and references (`$ref`, §2.3.7, compared as URIs).
const CASE_EXACT: [&str; 5] = ["id", "externalid", "meta.resourcetype", "meta.location", "meta.version"];

/// The core schemas' dateTimes (§3.1 `meta`). The enterprise extension has none.
const DATE_TIMES: [&str; 2] = ["meta.created", "meta.lastmodified"];

impl AttributeTypes for CoreSchema {
    fn case_exact(&self, urn: Option<&str>, path: &str) -> bool {
        path.ends_with(".$ref") || (urn.is_none() && CASE_EXACT.contains(&path))
    }

    fn date_time(&self, urn: Option<&str>, path: &str) -> bool {
        urn.is_none() && DATE_TIMES.contains(&path)
    }

    fn is_extension(&self, urn: &str) -> bool {
        urn == "urn:ietf:params:scim:schemas:extension:enterprise:2.0:user"
    }
}
