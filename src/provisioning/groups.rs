//! A group at a target: sent while it holds one of the client's roles itself (`assigned`) or
//! always (`all`), with its members, through nesting, that the target has; deleted there once
//! out of scope or deleted here (a group has no `active`).

use super::deliver::{digest, put, resolve, Held, Ledger};
use super::remote::{self, Kind, Remote};
use super::Target;
use crate::http::fetch::FetchError;
use crate::registry::directory::Principal;
use crate::tenant::Issuer;
use serde_json::json;

const SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:Group";

pub(super) async fn reconcile(app: &Issuer, target: &Target, remote: &Remote<'_>, ledger: &Ledger<'_>, known: Option<(&str, Option<&[u8]>)>) -> Result<Held, FetchError> {
    let group_id = ledger.local_id;
    let group = app.registry().with_directory(|d| d.group(group_id).cloned());
    let Some(group) = group.filter(|g| super::group_in_scope(app, target, &g.id)) else {
        return match resolve(remote, Kind::Group, known, group_id).await? {
            Some(id) => remote.delete(Kind::Group, &id).await.map(|()| Held::Gone),
            None if known.is_some() => Ok(Held::Gone),
            None => Ok(Held::Unchanged),
        };
    };
    // Its members that the target has (a user it does not have yet is added when it does:
    // `deliver::remember` queues their groups again).
    let (tenant, client) = (app.tenant.id, target.client_id.clone());
    let there = app.db.read(move |sql| remote::user_ids(sql, tenant, &client)).await.map_err(|e| FetchError::Transport(e.to_string()))?;
    let under = app.registry().with_directory(|d| d.users_under(&Principal::Group(group.id.clone())));
    let mut members: Vec<&String> = under.iter().filter_map(|u| there.get(u)).collect();
    members.sort();
    let body = json!({
        "schemas": [SCHEMA], "displayName": group.display_name, "externalId": group.id,
        "members": members.iter().map(|id| json!({"value": id, "type": "User"})).collect::<Vec<_>>(),
    });
    let sent = digest(&body);
    if known.is_some_and(|(_, s)| s == Some(sent.as_slice())) {
        return Ok(Held::Unchanged);
    }
    let id = put(remote, ledger, known.map(|(id, _)| id), "displayName", &group.display_name, &body).await?;
    Ok(Held::Now(id, sent))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_group_row_and_a_user_row_are_told_apart() {
        assert_ne!(super::super::KIND, super::super::GROUP_KIND);
    }
}
