//! A directory's periodic sync (`mode = "sync"`, docs/ldap.md): every `sync_interval` the
//! directory is read whole (`LdapSource::list_users`, paged); each user is imported or updated
//! as a sign-in would (`directory_login::import`) and their groups mapped; and the users of
//! this directory (source `ldap:<id>`, and no other) that it no longer lists, or lists as
//! disabled, are disabled here as the admin API disables a user (`operations::save_user_change`:
//! sessions ended, every token refused).
//!
//! A directory that cannot be read whole skips the round (a warning, `directory_sync_skipped`)
//! and disables nobody: a partial answer would look like deletions. So does an empty answer
//! while the directory has users here (a wrong base or a search account that lost its rights
//! looks the same). A user the round disabled stays disabled when they come back to the
//! directory: an operator enables them again, as with every disabled user.
//!
//! Every node runs the rounds of the directories it serves; what a round writes is a state
//! ("disabled", "a member"), so two nodes' rounds agree.

use super::directory_login::{import, map_groups, Refusal};
use super::operations::{save_user_change, Actor};
use crate::app::AppState;
use crate::audit::AuditEvent;
use crate::identity::ldap::LdapSource;
use crate::identity::links;
use crate::registry::User;
use crate::tenant::{Issuer, TenantId};
use serde_json::json;
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// What a round did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Round {
    /// Users the directory listed (enabled or not).
    pub listed: usize,
    /// User ids disabled here by this round.
    pub disabled: Vec<String>,
    /// Why the round was skipped (and nobody disabled).
    pub skipped: Option<String>,
}

/// Each syncing directory of every tenant, a round every `sync_interval` from when this node
/// first saw it (so the first is one interval after the start, not in the start's rush).
pub async fn run(app: AppState) {
    let mut last: HashMap<(TenantId, String), Instant> = HashMap::new();
    // The smallest interval is a minute.
    let mut tick = tokio::time::interval(Duration::from_secs(60));
    loop {
        tick.tick().await;
        for tenant in app.tenants.all() {
            let issuer = Issuer::new(app.clone(), tenant.clone());
            for source in tenant.directories.syncing() {
                let dir = source.directory();
                let seen = last.entry((tenant.id, dir.id.clone())).or_insert_with(Instant::now);
                if seen.elapsed() >= Duration::from_secs(dir.sync_interval) {
                    *seen = Instant::now();
                    round(&issuer, source).await;
                }
            }
        }
    }
}

/// One round of `source` for `app`'s tenant (the tests call it rather than wait).
pub async fn round(app: &Issuer, source: &LdapSource) -> Round {
    let provider = source.directory().provider();
    // Through the whole round: a timer's round and one called directly never interleave.
    let _round = source.sync_guard().await;
    let round = match source.list_users().await {
        Ok(listed) => apply(app, &provider, listed).await,
        Err(why) => Err(why),
    };
    match round {
        Ok(round) => {
            let detail = json!({"directory": provider, "listed": round.listed, "disabled": round.disabled.len()});
            app.audit(AuditEvent::new("directory_sync").detail(detail)).await;
            round
        }
        Err(why) => {
            tracing::warn!(directory = provider, error = %why, "directory sync skipped: nobody disabled");
            app.audit(AuditEvent::new("directory_sync_skipped").detail(json!({"directory": provider, "error": why}))).await;
            Round { skipped: Some(why), ..Round::default() }
        }
    }
}

async fn apply(app: &Issuer, provider: &str, listed: Vec<crate::identity::ldap::Listed>) -> Result<Round, String> {
    let ours: Vec<std::sync::Arc<User>> = app.registry().list_users().into_iter().filter(|u| u.source.as_str() == provider).collect();
    if listed.is_empty() && !ours.is_empty() {
        return Err(format!("the directory lists no user, and {} of its users are here", ours.len()));
    }
    let mut round = Round { listed: listed.len(), ..Round::default() };
    let all: HashSet<&str> = listed.iter().map(|l| l.user.subject.as_str()).collect();
    let mut present = HashSet::new();
    for entry in listed.iter().filter(|l| !l.disabled) {
        present.insert(entry.user.subject.as_str());
        let user = match import(app, &entry.user, false).await {
            Ok(user) => user,
            Err(Refusal::NameTaken) => {
                tracing::warn!(directory = provider, username = entry.user.username, "a directory user's name is another local user's; not imported");
                continue;
            }
            Err(Refusal::Store(e)) => return Err(e.to_string()),
        };
        if !user.disabled {
            map_groups(app, &user, &entry.user).await.map_err(|e| e.to_string())?;
        }
    }
    let subjects: HashMap<String, String> = links::of_provider(&app.db, app.tenant.id, provider).await.map_err(|e| e.to_string())?.into_iter().collect();
    let actor = Actor::Directory(provider.to_string());
    for user in ours.iter().filter(|u| !u.disabled) {
        // A user of this directory with no link to it is not one the round can match: left.
        let Some(subject) = subjects.get(&user.id) else { continue };
        if present.contains(subject.as_str()) {
            continue;
        }
        let reason = match all.contains(subject.as_str()) {
            true => "disabled in the directory",
            false => "gone from the directory",
        };
        let Some(current) = app.registry().user(&user.id).filter(|u| !u.disabled) else { continue };
        let off = User { disabled: true, updated_at: crate::util::now(), ..(*current).clone() };
        save_user_change(app, &actor, &current, off, json!({"reason": reason})).await.map_err(|e| format!("{e:?}"))?;
        round.disabled.push(user.id.clone());
    }
    Ok(round)
}
