//! One directory, spoken to with `ldap3`: a connection per sign-in (sign-ins are rare next
//! to tokens, and a pool would hold a bound connection whose state a failed user bind
//! changes), under a cap per directory, each step under a timeout.

use super::{escape_filter_value, Entry, Outcome, PasswordSource};
use crate::config::ldap::LdapDirectory;
use async_trait::async_trait;
use ldap3::{Ldap, LdapConnAsync, LdapConnSettings, Scope, SearchEntry, SearchOptions};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// RFC 4511 §A.1 result codes a bind answers with.
const INVALID_CREDENTIALS: u32 = 49;
const SIZE_LIMIT_EXCEEDED: u32 = 4;

pub struct LdapSource {
    pub(super) dir: LdapDirectory,
    pub(super) tls: Option<Arc<rustls::ClientConfig>>,
    pub(super) slots: Arc<Semaphore>,
    /// Held through a sync round (`sync_guard`), so that two never overlap on one node.
    pub(super) syncing: tokio::sync::Mutex<()>,
}

impl LdapSource {
    pub fn new(dir: LdapDirectory) -> anyhow::Result<Self> {
        let tls = match url::Url::parse(&dir.url).map(|u| u.scheme() == "ldaps").unwrap_or(false) || dir.starttls {
            true => Some(tls_config(&dir)?),
            false => None,
        };
        Ok(Self { slots: Arc::new(Semaphore::new(dir.max_connections)), dir, tls, syncing: tokio::sync::Mutex::new(()) })
    }

    pub fn directory(&self) -> &LdapDirectory {
        &self.dir
    }

    /// One of this directory's connections, or `Err` (said as "not reachable") when all
    /// `max_connections` stay in use for as long as an operation may take.
    pub(super) async fn slot(&self) -> Result<tokio::sync::OwnedSemaphorePermit, String> {
        let op = Duration::from_secs(self.dir.operation_timeout);
        match tokio::time::timeout(op, self.slots.clone().acquire_owned()).await {
            Ok(Ok(slot)) => Ok(slot),
            _ => Err(format!("all {} connections to the directory are in use", self.dir.max_connections)),
        }
    }
}

/// TLS to the directory: rustls on aws-lc-rs, trusting `ca_file`'s CAs when set, else the
/// system's.
fn tls_config(dir: &LdapDirectory) -> anyhow::Result<Arc<rustls::ClientConfig>> {
    use rustls_pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    let at = format!("ldap_directories ({})", dir.id);
    match &dir.ca_file {
        Some(path) => {
            let certs = rustls_pki_types::CertificateDer::pem_file_iter(path)
                .and_then(|c| c.collect::<Result<Vec<_>, _>>())
                .map_err(|e| anyhow::anyhow!("{at}: ca_file {}: {e}", path.display()))?;
            if roots.add_parsable_certificates(certs).0 == 0 {
                anyhow::bail!("{at}: ca_file {}: no CA certificate in it", path.display());
            }
        }
        None => {
            roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
        }
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| anyhow::anyhow!("{at}: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

#[async_trait]
impl PasswordSource for LdapSource {
    fn id(&self) -> &str {
        &self.dir.id
    }

    async fn authenticate(&self, username: &str, password: &str) -> Outcome {
        if password.is_empty() {
            return Outcome::WrongPassword;
        }
        let op = Duration::from_secs(self.dir.operation_timeout);
        // Past the cap, a sign-in waits as long as one operation may take, then is told the
        // directory is busy rather than queue without end.
        let slot = match self.slot().await {
            Ok(slot) => slot,
            Err(why) => return Outcome::Unreachable(why),
        };
        let (dir, tls, username, password) = (self.dir.clone(), self.tls.clone(), username.to_string(), password.to_string());
        // In a task of its own: ldap3 panics on an answer it cannot decode, which is then this
        // sign-in's "not reachable", not a worker's panic. The whole exchange under one
        // deadline too (a connect, two binds and two searches).
        let whole = Duration::from_secs(dir.connect_timeout) + 5 * op;
        let task = tokio::spawn(async move {
            let _slot = slot;
            tokio::time::timeout(whole, exchange(&dir, tls, &username, &password)).await.unwrap_or_else(|_| Err("the directory did not answer in time".into()))
        });
        match task.await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(why)) => Outcome::Unreachable(why),
            Err(_) => Outcome::Unreachable("the directory's answer could not be read".into()),
        }
    }
}

/// Connect, bind as the search account, find the user, bind as them. `Err`: the directory
/// could not answer (said as such on the page).
async fn exchange(dir: &LdapDirectory, tls: Option<Arc<rustls::ClientConfig>>, username: &str, password: &str) -> Result<Outcome, String> {
    let op = Duration::from_secs(dir.operation_timeout);
    let (mut ldap, driver) = connect(dir, tls).await?;
    let outcome = steps(dir, &mut ldap, op, username, password).await;
    let _ = tokio::time::timeout(op, ldap.unbind()).await;
    driver.abort();
    outcome
}

/// A connection to the directory (TLS as it is configured), and the task driving it, to be
/// aborted when done.
pub(super) async fn connect(dir: &LdapDirectory, tls: Option<Arc<rustls::ClientConfig>>) -> Result<(Ldap, tokio::task::JoinHandle<()>), String> {
    let mut settings = LdapConnSettings::new().set_conn_timeout(Duration::from_secs(dir.connect_timeout)).set_starttls(dir.starttls);
    if let Some(config) = tls {
        settings = settings.set_config(config);
    }
    let (conn, ldap) = LdapConnAsync::with_settings(settings, &dir.url).await.map_err(|e| format!("cannot connect: {e}"))?;
    let driver = tokio::spawn(async move {
        if let Err(e) = conn.drive().await {
            tracing::debug!(error = %e, "ldap connection ended");
        }
    });
    Ok((ldap, driver))
}

/// Bind as the search account (none configured: the connection stays anonymous).
pub(super) async fn bind_search_account(dir: &LdapDirectory, ldap: &mut Ldap, op: Duration) -> Result<(), String> {
    if let (Some(dn), Some(pw)) = (&dir.bind_dn, &dir.bind_password) {
        // The search account's password goes nowhere but this bind: not into an error.
        let r = ldap.with_timeout(op).simple_bind(dn, pw).await.map_err(|e| format!("the search account's bind failed: {}", short(&e)))?;
        if r.rc != 0 {
            return Err(format!("the search account's bind was refused (result code {})", r.rc));
        }
    }
    Ok(())
}

/// The attributes of a user's entry that are read: the mapped ones, the states that disable
/// an account there, and the group mapping's.
pub(super) fn user_attrs(dir: &LdapDirectory) -> Vec<&str> {
    let mut attrs = vec![
        dir.subject_attribute.as_str(),
        &dir.username_attribute,
        &dir.email_attribute,
        &dir.name_attribute,
        &dir.given_name_attribute,
        &dir.family_name_attribute,
        "userAccountControl",
        "pwdAccountLockedTime",
    ];
    attrs.extend(super::groups::user_attrs(dir));
    attrs
}

async fn steps(dir: &LdapDirectory, ldap: &mut Ldap, op: Duration, username: &str, password: &str) -> Result<Outcome, String> {
    bind_search_account(dir, ldap, op).await?;
    let filter = super::user_filter(&dir.user_filter, username);
    let found = ldap
        .with_timeout(op)
        .with_search_options(SearchOptions::new().sizelimit(2))
        .search(&dir.base_dn, Scope::Subtree, &filter, user_attrs(dir))
        .await
        .map_err(|e| format!("the search failed: {}", short(&e)))?;
    let (entries, result) = (found.0, found.1);
    if result.rc != 0 && result.rc != SIZE_LIMIT_EXCEEDED {
        return Err(format!("the search was refused (result code {}: {})", result.rc, result.text));
    }
    let mut entries = entries.into_iter().map(SearchEntry::construct);
    let Some(entry) = entries.next() else { return Ok(Outcome::Unknown) };
    if entries.next().is_some() {
        // Two people for one name: neither is signed in, and the operator is told why.
        tracing::warn!(directory = dir.id, username = escape_filter_value(username), "the user filter matches more than one entry");
        return Ok(Outcome::Refused("the user filter matches more than one entry".into()));
    }
    let view = Entry { text: &entry.attrs, binary: &entry.bin_attrs };
    let Some(mut user) = view.user(dir) else {
        return Ok(Outcome::Refused(format!("the entry has no {} or no {}", dir.subject_attribute, dir.username_attribute)));
    };
    // Disabled on Active Directory: not bound with (a bind would count against its lockout).
    if view.disabled_in_active_directory() {
        return Ok(Outcome::Refused("disabled in the directory (userAccountControl)".into()));
    }
    // Read while the connection is still the search account's (the user's own bind may not
    // see the groups).
    user.groups = super::groups::of_user(ldap, dir, op, &entry.dn, &view).await?;
    let r = ldap.with_timeout(op).simple_bind(&entry.dn, password).await.map_err(|e| format!("the user's bind failed: {}", short(&e)))?;
    Ok(match r.rc {
        0 => Outcome::Authenticated(user),
        INVALID_CREDENTIALS => Outcome::WrongPassword,
        // Locked (ppolicy), unwilling to perform, and the like: the directory said no.
        rc => Outcome::Refused(format!("the directory refused the bind (result code {rc}: {})", r.text)),
    })
}

/// An ldap3 error, shortened for a log line and an audit event.
pub(super) fn short(e: &ldap3::LdapError) -> String {
    let mut s = e.to_string();
    s.truncate(200);
    s
}
