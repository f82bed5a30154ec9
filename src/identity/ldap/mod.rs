//! LDAP and Active Directory as a source of users (issue 32, slice 4): a password typed on
//! the sign-in form is checked by binding to the directory as the user, and the user is then
//! imported here just in time (`endpoints::password_login`) and linked as `ldap:<id>`.
//!
//! Behind `PasswordSource`, the seam of DESIGN §7 for a source that checks a username and
//! password itself: another (a RADIUS server, a second kind of directory) is a new
//! implementation, not a branch in the login handler.
//!
//! The connections go to directories the operator configured (`[[ldap_directories]]`, or a
//! tenant's settings, which only an operator changes), most often on private addresses, and
//! speak LDAP, not HTTP: so they do not pass through `http::fetch`, whose public-address
//! policy is for URLs that clients and strangers hand us. They have their own limits instead:
//! a connect timeout, an operation timeout and a cap on connections per directory.
//!
//! A directory's password is checked by the directory: nothing of it is stored here (the
//! imported user has no local password), and the search account's password is never logged.

mod client;
pub mod groups;
mod listing;
#[cfg(test)]
mod tests;

use crate::config::ldap::LdapDirectory;
use async_trait::async_trait;
use std::sync::Arc;

pub use client::LdapSource;
pub use listing::Listed;

/// A user as a source knows them, after their password was accepted there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceUser {
    /// The linked identities' provider: `ldap:<directory id>`.
    pub provider: String,
    /// Stable at the source (`entryUUID`, `objectGUID`): the link's subject.
    pub subject: String,
    pub username: String,
    pub email: Option<String>,
    pub email_verified: bool,
    pub name: Option<String>,
    pub given_name: Option<String>,
    pub family_name: Option<String>,
    /// The user's groups there, as the names of Authrim's groups they map onto (prefixed);
    /// `None` when the directory maps no groups.
    pub groups: Option<Vec<String>>,
}

/// What a source answered about a username and password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Authenticated(SourceUser),
    /// No such user there: the next source is asked.
    Unknown,
    /// The user is there and the password is not theirs (or is empty: never bound with).
    WrongPassword,
    /// The user is there and may not sign in (disabled, locked): refused as a wrong password
    /// is, the reason audited but not shown (a guesser learns nothing of the account).
    Refused(String),
    /// The source could not answer (down, too slow, busy, misconfigured): said so on the page.
    Unreachable(String),
}

/// A source that checks a username and password itself.
#[async_trait]
pub trait PasswordSource: Send + Sync {
    /// Its id in configuration, audit events and the provider of its links' name.
    fn id(&self) -> &str;
    async fn authenticate(&self, username: &str, password: &str) -> Outcome;
}

const MAX_USERNAME: usize = 256;
const MAX_PASSWORD: usize = 1024;

/// A tenant's password sources, asked in their configured order.
#[derive(Clone, Default)]
pub struct Sources {
    list: Vec<Arc<dyn PasswordSource>>,
    /// The LDAP ones among them, which a sync round reads whole (`mode = "sync"`).
    ldap: Vec<Arc<LdapSource>>,
}

/// What the sources together answered, and which one did.
#[derive(Debug)]
pub struct Answer {
    pub source: Option<String>,
    pub outcome: Outcome,
}

impl Sources {
    /// The directories of `config` (`ldap_directories`); a CA file that cannot be read stops
    /// the start (an operator who named one meant it).
    pub fn new(directories: &[LdapDirectory]) -> anyhow::Result<Self> {
        let ldap = directories.iter().map(|d| LdapSource::new(d.clone())).collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Self::from_ldap(ldap))
    }

    pub fn from_ldap(ldap: Vec<LdapSource>) -> Self {
        let ldap: Vec<Arc<LdapSource>> = ldap.into_iter().map(Arc::new).collect();
        Self { list: ldap.iter().map(|s| s.clone() as Arc<dyn PasswordSource>).collect(), ldap }
    }

    pub fn from_sources(list: Vec<Arc<dyn PasswordSource>>) -> Self {
        Self { list, ldap: Vec::new() }
    }

    /// The directories a sync round reads (`mode = "sync"`).
    pub fn syncing(&self) -> impl Iterator<Item = &Arc<LdapSource>> {
        self.ldap.iter().filter(|s| s.directory().mode == "sync")
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Each source in order until one knows the user: its answer (accepted, wrong password,
    /// refused). A source that cannot be reached is passed over, and is the answer if no later
    /// one knows the user either: that user may be in it, so "no such user" would mislead.
    /// An empty password is refused here, before any source sees it (a simple bind with an
    /// empty password is an unauthenticated bind, RFC 4513 §5.1.2, which many directories
    /// answer with success).
    pub async fn authenticate(&self, username: &str, password: &str) -> Answer {
        if password.is_empty() || username.trim().is_empty() {
            return Answer { source: None, outcome: Outcome::WrongPassword };
        }
        // Longer than any name or password here may be (`validate_username`, `hash_password`):
        // no directory is troubled with it.
        if username.len() > MAX_USERNAME || password.len() > MAX_PASSWORD {
            return Answer { source: None, outcome: Outcome::Unknown };
        }
        let mut unreachable = None;
        for s in &self.list {
            match s.authenticate(username, password).await {
                Outcome::Unknown => {}
                Outcome::Unreachable(why) => {
                    tracing::warn!(directory = s.id(), error = %why, "a directory is not reachable");
                    unreachable.get_or_insert((s.id().to_string(), why));
                }
                outcome => return Answer { source: Some(s.id().to_string()), outcome },
            }
        }
        match unreachable {
            Some((id, why)) => Answer { source: Some(id), outcome: Outcome::Unreachable(why) },
            None => Answer { source: None, outcome: Outcome::Unknown },
        }
    }
}

/// `value` escaped for an LDAP filter's assertion value (RFC 4515 §3): `*`, `(`, `)`, `\` and
/// NUL as `\XX`, so that what a person types is matched as it is and cannot add to the filter.
pub fn escape_filter_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '*' => out.push_str("\\2a"),
            '(' => out.push_str("\\28"),
            ')' => out.push_str("\\29"),
            '\\' => out.push_str("\\5c"),
            '\0' => out.push_str("\\00"),
            c => out.push(c),
        }
    }
    out
}

/// The directory's filter with the username in it, escaped.
pub fn user_filter(template: &str, username: &str) -> String {
    template.replace("{username}", &escape_filter_value(username))
}

/// An entry's attributes, as the directory sent them: text values and binary ones (those
/// that are not UTF-8, such as Active Directory's `objectGUID`).
pub struct Entry<'a> {
    pub text: &'a std::collections::HashMap<String, Vec<String>>,
    pub binary: &'a std::collections::HashMap<String, Vec<Vec<u8>>>,
}

impl Entry<'_> {
    /// The first text value of `attr` (attribute names are case-insensitive, RFC 4512 §2.5).
    fn first(&self, attr: &str) -> Option<&str> {
        self.text.iter().find(|(k, _)| k.eq_ignore_ascii_case(attr)).and_then(|(_, v)| v.first()).map(String::as_str).filter(|v| !v.is_empty())
    }

    /// Every text value of `attr`.
    fn all<'b>(&'b self, attr: &'b str) -> impl Iterator<Item = &'b str> {
        self.text.iter().filter(|(k, _)| k.eq_ignore_ascii_case(attr)).flat_map(|(_, v)| v.iter().map(String::as_str))
    }

    fn first_bytes(&self, attr: &str) -> Option<&[u8]> {
        self.binary.iter().find(|(k, _)| k.eq_ignore_ascii_case(attr)).and_then(|(_, v)| v.first()).map(Vec::as_slice)
    }

    /// Active Directory's `userAccountControl` with ACCOUNTDISABLE (0x2) set.
    pub fn disabled_in_active_directory(&self) -> bool {
        self.first("userAccountControl").and_then(|v| v.trim().parse::<i64>().ok()).is_some_and(|uac| uac & 2 != 0)
    }

    /// Disabled there for good: Active Directory's ACCOUNTDISABLE, or OpenLDAP ppolicy's
    /// administrative lock (`pwdAccountLockedTime` of `000001010000Z`; another value is a
    /// lockout after failed binds, which ends by itself and disables nobody here).
    pub fn disabled_in_directory(&self) -> bool {
        self.disabled_in_active_directory() || self.first("pwdAccountLockedTime") == Some("000001010000Z")
    }

    /// The user as `d` maps the entry; `None` without a subject or a username.
    pub fn user(&self, d: &LdapDirectory) -> Option<SourceUser> {
        let subject = self.subject(&d.subject_attribute)?;
        let username = self.first(&d.username_attribute)?.to_string();
        let email = self.first(&d.email_attribute).map(str::to_string).filter(|e| crate::registry::users::looks_like_email(e));
        Some(SourceUser {
            provider: d.provider(),
            subject,
            username,
            email_verified: d.email_verified && email.is_some(),
            email,
            name: self.first(&d.name_attribute).map(str::to_string),
            given_name: self.first(&d.given_name_attribute).map(str::to_string),
            family_name: self.first(&d.family_name_attribute).map(str::to_string),
            groups: None,
        })
    }

    /// `objectGUID` in its usual text form (its first three fields are little-endian);
    /// another binary subject in hex; a text one as it is.
    fn subject(&self, attr: &str) -> Option<String> {
        let guid = attr.eq_ignore_ascii_case("objectGUID");
        let bytes = self.first_bytes(attr).or_else(|| guid.then(|| self.first(attr).map(str::as_bytes)).flatten());
        match bytes {
            Some(b) if guid && b.len() == 16 => Some(format!(
                "{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{}-{}",
                b[3], b[2], b[1], b[0], b[5], b[4], b[7], b[6],
                crate::util::hex(&b[8..10]),
                crate::util::hex(&b[10..16])
            )),
            Some(b) => Some(crate::util::hex(b)),
            None => self.first(attr).map(str::to_string),
        }
    }
}
