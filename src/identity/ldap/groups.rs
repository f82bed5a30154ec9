//! A user's groups in the directory, named as Authrim's groups they map onto
//! (`registry::directory::mapped`): found by a search (`groupOfNames`, `groupOfUniqueNames`,
//! Active Directory's groups, nested ones with its `LDAP_MATCHING_RULE_IN_CHAIN` in the filter)
//! or read from the user's `memberOf`, each name with the directory's `group_prefix`.

use super::{escape_filter_value, Entry};
use crate::config::ldap::LdapDirectory;
use ldap3::{Ldap, Scope, SearchEntry, SearchOptions};
use std::time::Duration;

/// More groups than any user may be in here (`directory_max_groups_per_user` bounds what is
/// kept); a directory that answers with more stops there rather than flood the mapping.
const MAX_GROUPS: i32 = 1000;
const SIZE_LIMIT_EXCEEDED: u32 = 4;

/// The attributes of the user's entry the mapping reads (`member_of`).
pub(super) fn user_attrs(dir: &LdapDirectory) -> Option<&str> {
    (dir.group_mapping == "member_of").then_some(dir.member_of_attribute.as_str())
}

/// The user's groups, prefixed; `None` when the directory maps none (`group_mapping = "none"`:
/// the user's memberships here are then left as they are). `ldap` is bound as the search
/// account: a user's own bind may not read the groups.
pub(super) async fn of_user(ldap: &mut Ldap, dir: &LdapDirectory, op: Duration, dn: &str, entry: &Entry<'_>) -> Result<Option<Vec<String>>, String> {
    let names = match dir.group_mapping.as_str() {
        "search" => {
            let base = dir.group_base_dn.as_deref().unwrap_or(&dir.base_dn);
            let filter = dir.group_filter.replace("{dn}", &escape_filter_value(dn));
            let (entries, result) = ldap
                .with_timeout(op)
                .with_search_options(SearchOptions::new().sizelimit(MAX_GROUPS))
                .search(base, Scope::Subtree, &filter, vec![dir.group_name_attribute.as_str()])
                .await
                .map(|found| (found.0, found.1))
                .map_err(|e| format!("the group search failed: {}", super::client::short(&e)))?;
            if result.rc != 0 && result.rc != SIZE_LIMIT_EXCEEDED {
                return Err(format!("the group search was refused (result code {}: {})", result.rc, result.text));
            }
            if result.rc == SIZE_LIMIT_EXCEEDED {
                tracing::warn!(directory = dir.id, "a user's groups exceed the size limit; the first {MAX_GROUPS} are mapped");
            }
            entries
                .into_iter()
                .map(SearchEntry::construct)
                .filter_map(|g| {
                    let e = Entry { text: &g.attrs, binary: &g.bin_attrs };
                    e.first(&dir.group_name_attribute).map(str::to_string).or_else(|| first_rdn_value(&g.dn))
                })
                .collect::<Vec<_>>()
        }
        "member_of" => entry.all(&dir.member_of_attribute).filter_map(first_rdn_value).collect(),
        _ => return Ok(None),
    };
    let mut names: Vec<String> = names.into_iter().map(|n| format!("{}{n}", dir.group_prefix)).collect();
    names.sort_by_key(|n| n.to_lowercase());
    names.dedup_by_key(|n| n.to_lowercase());
    Ok(Some(names))
}

/// The value of a DN's first RDN (`CN=Domain Admins,OU=Groups,…` → `Domain Admins`), with
/// RFC 4514's escapes undone; a multi-valued RDN's first value.
pub fn first_rdn_value(dn: &str) -> Option<String> {
    let (_, rest) = dn.split_once('=')?;
    let mut out: Vec<u8> = Vec::new();
    let mut chars = rest.chars().peekable();
    let push = |out: &mut Vec<u8>, c: char| out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(a) = chars.next() else { break };
                match (a.to_digit(16), chars.peek().and_then(|b| b.to_digit(16))) {
                    (Some(high), Some(low)) => {
                        chars.next();
                        out.push((high * 16 + low) as u8);
                    }
                    _ => push(&mut out, a),
                }
            }
            ',' | '+' => break,
            c => push(&mut out, c),
        }
    }
    let value = String::from_utf8_lossy(&out).trim().to_string();
    (!value.is_empty()).then_some(value)
}
