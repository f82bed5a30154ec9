//! A directory read whole, for a sync round (`endpoints::directory_sync`): every entry the
//! user filter matches (with `{username}` as `*`, a presence match), page by page (RFC 2696's
//! paged results, so that a directory's size limit does not cut the list short), each mapped
//! as a sign-in maps it, with its groups and whether the directory disabled it.

use super::client::{bind_search_account, connect, short, user_attrs};
use super::{Entry, LdapSource, SourceUser};
use ldap3::adapters::{Adapter, EntriesOnly, PagedResults};
use ldap3::{Scope, SearchEntry};
use std::time::Duration;

const PAGE: i32 = 500;

/// One user as the directory lists them.
#[derive(Debug, Clone)]
pub struct Listed {
    pub user: SourceUser,
    /// Disabled there (`Entry::disabled_in_directory`).
    pub disabled: bool,
}

impl LdapSource {
    /// Held by a sync round from the listing to the last user disabled, so that two rounds of
    /// this directory never overlap on one node.
    pub async fn sync_guard(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.syncing.lock().await
    }

    /// Every user of the directory; `Err` when it cannot be read whole (down, too slow, a
    /// search refused): the round is then skipped, for a partial list would look like
    /// deletions. Entries without a subject or a username are left out, as a sign-in
    /// refuses them.
    pub async fn list_users(&self) -> Result<Vec<Listed>, String> {
        let slot = self.slot().await?;
        let (dir, tls) = (self.dir.clone(), self.tls.clone());
        // In a task of its own, as a sign-in's exchange is: a panic in ldap3 is a failed round.
        let task = tokio::spawn(async move {
            let _slot = slot;
            let op = Duration::from_secs(dir.operation_timeout);
            let (mut ldap, driver) = connect(&dir, tls).await?;
            let listed = async {
                bind_search_account(&dir, &mut ldap, op).await?;
                let filter = dir.user_filter.replace("{username}", "*");
                let adapters: Vec<Box<dyn Adapter<_, _>>> = vec![Box::new(EntriesOnly::new()), Box::new(PagedResults::new(PAGE))];
                let mut stream = ldap
                    .with_timeout(op)
                    .streaming_search_with(adapters, &dir.base_dn, Scope::Subtree, &filter, user_attrs(&dir))
                    .await
                    .map_err(|e| format!("the search failed: {}", short(&e)))?;
                let mut entries = Vec::new();
                while let Some(entry) = stream.next().await.map_err(|e| format!("the search failed: {}", short(&e)))? {
                    entries.push(SearchEntry::construct(entry));
                }
                let done = stream.finish().await;
                if done.rc != 0 {
                    return Err(format!("the search was refused (result code {}: {})", done.rc, done.text));
                }
                let mut listed = Vec::with_capacity(entries.len());
                for entry in &entries {
                    let view = Entry { text: &entry.attrs, binary: &entry.bin_attrs };
                    let Some(mut user) = view.user(&dir) else { continue };
                    user.groups = super::groups::of_user(&mut ldap, &dir, op, &entry.dn, &view).await?;
                    listed.push(Listed { user, disabled: view.disabled_in_directory() });
                }
                Ok(listed)
            }
            .await;
            let _ = tokio::time::timeout(op, ldap.unbind()).await;
            driver.abort();
            listed
        });
        task.await.unwrap_or_else(|_| Err("the directory's answer could not be read".into()))
    }
}
