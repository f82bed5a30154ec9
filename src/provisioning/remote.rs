//! The target's side: its SCIM `/Users` and `/Groups` (RFC 7644 §3.3, §3.4.2, §3.5.1, §3.6)
//! through the server's one fetcher (its address policy: a target on a private address needs
//! `fetch_allow_private_addresses`), and the id each user and group has there.

use crate::db::Sql;
use crate::http::fetch::{transport_message, FetchError, Fetcher};
use crate::tenant::TenantId;
use reqwest::Method;
use serde_json::Value;
use std::time::Duration;

/// The most of an answer read (a user, or a one-result search).
const MAX_ANSWER: usize = 256 * 1024;

pub struct Remote<'a> {
    pub fetcher: &'a Fetcher,
    /// The base URL, without a trailing `/`.
    pub base: String,
    pub token: String,
    pub timeout: Duration,
}

/// A resource type of the target.
#[derive(Clone, Copy)]
pub enum Kind {
    User,
    Group,
}

impl Kind {
    fn path(self) -> &'static str {
        match self {
            Kind::User => "/Users",
            Kind::Group => "/Groups",
        }
    }

    /// Its `scim_remote.kind`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::User => "user",
            Kind::Group => "group",
        }
    }
}

/// An answer: its status and JSON body (`Null` when there is none or it is not JSON).
pub struct Answer {
    pub status: u16,
    pub body: Value,
}

impl Remote<'_> {
    async fn call(&self, method: Method, path: &str, body: Option<&Value>) -> Result<Answer, FetchError> {
        let url = format!("{}{path}", self.base);
        let mut req = self.fetcher.request(method, &url)?.bearer_auth(&self.token).timeout(self.timeout).header(reqwest::header::ACCEPT, "application/scim+json, application/json");
        if let Some(b) = body {
            req = req.header(reqwest::header::CONTENT_TYPE, "application/scim+json").body(b.to_string());
        }
        let mut res = req.send().await.map_err(|e| FetchError::Transport(transport_message(&e)))?;
        let status = res.status().as_u16();
        let mut bytes = Vec::new();
        while let Some(chunk) = res.chunk().await.map_err(|e| FetchError::Transport(transport_message(&e)))? {
            if bytes.len() + chunk.len() > MAX_ANSWER {
                return Err(FetchError::TooLarge(MAX_ANSWER));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(Answer { status, body: serde_json::from_slice(&bytes).unwrap_or(Value::Null) })
    }

    /// The id of the target's resource (under `/Users` or `/Groups`) whose `attr` is `value`
    /// (`externalId`, then `userName` or `displayName`).
    pub async fn find(&self, kind: Kind, attr: &str, value: &str) -> Result<Option<String>, FetchError> {
        let filter = format!("{attr} eq {}", Value::String(value.to_string()));
        let q = url::form_urlencoded::Serializer::new(String::new()).append_pair("filter", &filter).append_pair("count", "1").finish();
        let a = self.call(Method::GET, &format!("{}?{q}", kind.path()), None).await?;
        if !(200..300).contains(&a.status) {
            return Err(FetchError::Status(a.status));
        }
        Ok(a.body["Resources"].get(0).and_then(|u| u["id"].as_str()).map(str::to_string))
    }

    /// Create the resource; its id there. A 409 (`uniqueness`): one of that name is there
    /// already, not linked: `Ok(None)`.
    pub async fn create(&self, kind: Kind, resource: &Value) -> Result<Option<String>, FetchError> {
        let a = self.call(Method::POST, kind.path(), Some(resource)).await?;
        match a.status {
            200..=299 => a.body["id"].as_str().map(|id| Some(id.to_string())).ok_or_else(|| FetchError::NotJson("the created user has no id".into())),
            409 => Ok(None),
            s => Err(FetchError::Status(s)),
        }
    }

    /// Replace the resource `id` there; `false` if it is gone.
    pub async fn replace(&self, kind: Kind, id: &str, resource: &Value) -> Result<bool, FetchError> {
        let a = self.call(Method::PUT, &format!("{}/{}", kind.path(), segment(id)), Some(resource)).await?;
        match a.status {
            200..=299 => Ok(true),
            404 => Ok(false),
            s => Err(FetchError::Status(s)),
        }
    }

    /// Delete the resource `id` there (gone already is done too).
    pub async fn delete(&self, kind: Kind, id: &str) -> Result<(), FetchError> {
        let a = self.call(Method::DELETE, &format!("{}/{}", kind.path(), segment(id)), None).await?;
        match a.status {
            200..=299 | 404 => Ok(()),
            s => Err(FetchError::Status(s)),
        }
    }
}

/// An id as one path segment.
fn segment(id: &str) -> String {
    url::form_urlencoded::byte_serialize(id.as_bytes()).collect::<String>().replace('+', "%20")
}

/// What is known of a user or group (`kind`) at a target: its id there, and the digest of
/// what was last sent (`None` after a resync, which sends again).
pub fn known(sql: &mut dyn Sql, tenant: TenantId, client_id: &str, kind: &str, local_id: &str) -> crate::db::StoreResult<Option<(String, Option<Vec<u8>>)>> {
    sql.query_opt(
        "SELECT remote_id, sent_hash FROM scim_remote WHERE tenant_id = ?1 AND client_id = ?2 AND kind = ?3 AND local_id = ?4",
        crate::params![tenant, client_id, kind, local_id],
    )?
    .map(|r| Ok((r.text(0)?, r.opt_blob(1)?)))
    .transpose()
}

/// Remember a user's or group's id at a target and what was sent, or (`None`) forget it.
pub fn remember(sql: &mut dyn Sql, tenant: TenantId, client_id: &str, kind: &str, local_id: &str, at: Option<(&str, &[u8])>) -> crate::db::StoreResult<()> {
    match at {
        Some((remote, sent)) => sql.execute(
            "INSERT INTO scim_remote (tenant_id, client_id, kind, local_id, remote_id, sent_hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (tenant_id, client_id, kind, local_id) DO UPDATE SET remote_id = excluded.remote_id, sent_hash = excluded.sent_hash",
            crate::params![tenant, client_id, kind, local_id, remote, sent.to_vec()],
        )?,
        None => sql.execute(
            "DELETE FROM scim_remote WHERE tenant_id = ?1 AND client_id = ?2 AND kind = ?3 AND local_id = ?4",
            crate::params![tenant, client_id, kind, local_id],
        )?,
    };
    Ok(())
}

/// Every user of the target by their id here, with their id there (a group's members).
pub fn user_ids(sql: &mut dyn Sql, tenant: TenantId, client_id: &str) -> crate::db::StoreResult<std::collections::HashMap<String, String>> {
    sql.query("SELECT local_id, remote_id FROM scim_remote WHERE tenant_id = ?1 AND client_id = ?2 AND kind = 'user' AND remote_id <> ''", crate::params![tenant, client_id])?
        .iter()
        .map(|r| Ok((r.text(0)?, r.text(1)?)))
        .collect()
}
