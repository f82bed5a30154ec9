//! What an operator may change, shared by the admin API (bearer token, JSON) and the admin
//! console (a signed-in admin, forms): each operation checks its input, saves, and records
//! an audit event naming who did it. The two front ends only translate their input and
//! their answers.

use crate::app::App;
use crate::audit::AuditEvent;
use crate::error::OAuthError;
use crate::logout::{end_session, EndedBy};
use crate::registry::{clients, users, Client, ClientInput, User, UserInput};
use crate::stores::SessionRef;
use crate::tenant::Issuer;
use serde_json::{json, Value};
use std::sync::Arc;

/// Who asked for a change: the audit event's `detail.by` (`operator` for the admin API, as
/// the CLI's events, with `detail.credential` naming a tenant's admin credential; `console`
/// with the admin's user id in `detail.admin`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    /// The deployment's admin token, `AUTHRIM_ADMIN_TOKEN` (or a process holding it): every
    /// tenant, and the tenants themselves.
    ApiToken,
    /// One of the request's tenant's admin credentials (`registry::admin_credentials`), by id:
    /// that tenant's admin API only.
    Credential(String),
    /// A user of the admin console.
    Console(String),
    /// A directory's sync round (`directory_sync`), by the directory's provider name
    /// (`ldap:<id>`): it disables the users gone from the directory.
    Directory(String),
}

impl Actor {
    fn by(&self) -> serde_json::Value {
        match self {
            Actor::ApiToken => json!({"by": "operator"}),
            Actor::Credential(id) => json!({"by": "operator", "credential": id}),
            Actor::Console(id) => json!({"by": "console", "admin": id}),
            Actor::Directory(provider) => json!({"by": "ldap", "directory": provider}),
        }
    }

    /// How a session this actor ends is recorded.
    fn ended_by(&self) -> EndedBy {
        match self {
            Actor::ApiToken | Actor::Credential(_) => EndedBy::Operator,
            Actor::Console(admin) => EndedBy::Console(admin.clone()),
            Actor::Directory(provider) => EndedBy::Directory(provider.clone()),
        }
    }

    /// An audit event of this actor's change, with `extra` merged into its detail.
    pub(crate) fn event(&self, name: &str, extra: serde_json::Value) -> AuditEvent {
        let mut detail = self.by();
        if let (Some(d), Some(e)) = (detail.as_object_mut(), extra.as_object()) {
            d.extend(e.clone());
        }
        AuditEvent::new(name).detail(detail)
    }
}

pub fn invalid_metadata(msg: String) -> OAuthError {
    OAuthError::invalid_request(msg).code_as("invalid_client_metadata")
}

/// A client may ask only for algorithms this server keeps keys for (`signing_algorithms`),
/// and only for what the tenant's security profile allows (`profile`).
pub fn check_algs(app: &Issuer, client: &Client) -> Result<(), OAuthError> {
    if let Some(why) = app.profile().refusal(&client.meta) {
        return Err(invalid_metadata(why));
    }
    match client.unavailable_algs(app.keys().algorithms()).first() {
        Some(alg) => Err(invalid_metadata(format!("this server does not sign with {alg}; signing_algorithms: {}", app.keys().algorithms().join(" ")))),
        None => Ok(()),
    }
}

/// What a client's URIs make the server (or a page's iframes) reach: each under the address
/// policy (`clients::check_targets`, refused here rather than failing when used), and OIDC
/// Core §8.1 / Dynamic Registration §5: the document at a pairwise client's
/// `sector_identifier_uri` is a JSON array that must hold every one of its redirect URIs.
pub async fn check_remote_uris(app: &App, client: &Client) -> Result<(), OAuthError> {
    clients::check_targets(&client.meta, app.config.fetch_allow_private_addresses).map_err(invalid_metadata)?;
    let Some(uri) = client.meta.sector_identifier_uri.as_deref() else { return Ok(()) };
    let doc = app.fetcher.get_json(uri).await.map_err(|e| invalid_metadata(format!("sector_identifier_uri: {e}")))?;
    let listed: Vec<&str> = doc.as_array().map(|a| a.iter().filter_map(|v| v.as_str()).collect()).unwrap_or_default();
    match client.meta.redirect_uris.iter().find(|r| !listed.contains(&r.as_str())) {
        Some(missing) => Err(invalid_metadata(format!("sector_identifier_uri does not list the redirect URI {missing}"))),
        None => Ok(()),
    }
}

fn no_client() -> OAuthError {
    OAuthError::not_found("no such client")
}

fn no_user() -> OAuthError {
    OAuthError::not_found("no such user")
}

/// A SAML service provider's entity id is another's of the tenant: refused (an AuthnRequest
/// names its sender by it alone).
fn check_entity_id(app: &Issuer, client: &Client) -> Result<(), OAuthError> {
    let Some(sp) = &client.meta.saml else { return Ok(()) };
    match app.registry().saml_provider(&sp.entity_id) {
        Some(other) if other.id() != client.id() => Err(invalid_metadata(format!("saml.entity_id is client {}'s already", other.id()))),
        _ => Ok(()),
    }
}

/// Register a client; its secret (if its method has one) is returned, to be shown once.
pub async fn create_client(app: &Issuer, actor: &Actor, input: ClientInput) -> Result<(Client, Option<String>), OAuthError> {
    if input.client_id.as_deref().is_some_and(|id| app.registry().client(id).is_some()) {
        return Err(invalid_metadata("a client with this client_id already exists".into()));
    }
    let (client, secret) = clients::new_client(input, app.vault()).map_err(invalid_metadata)?;
    check_entity_id(app, &client)?;
    check_algs(app, &client)?;
    check_remote_uris(app, &client).await?;
    app.registry().save_client(client.clone()).await?;
    app.audit(actor.event("client_created", json!({})).client(&client.meta.client_id)).await;
    Ok((client, secret))
}

/// Change a client: absent fields keep their value. A new secret when the change gives the
/// client a method that has one.
pub async fn update_client(app: &Issuer, actor: &Actor, id: &str, input: ClientInput) -> Result<(Client, Option<String>), OAuthError> {
    let existing = app.registry().client(id).ok_or_else(no_client)?;
    let (client, secret) = clients::update_client(&existing, input, app.vault()).map_err(invalid_metadata)?;
    check_entity_id(app, &client)?;
    check_algs(app, &client)?;
    check_remote_uris(app, &client).await?;
    app.registry().save_client(client.clone()).await?;
    app.audit(actor.event("client_updated", json!({})).client(id)).await;
    Ok((client, secret))
}

/// A new secret for a confidential client; the old one stops working.
pub async fn rotate_secret(app: &Issuer, actor: &Actor, id: &str) -> Result<(Client, String), OAuthError> {
    let existing = app.registry().client(id).ok_or_else(no_client)?;
    let (client, secret) = clients::rotate_secret(&existing, app.vault()).map_err(invalid_metadata)?;
    app.registry().save_client(client.clone()).await?;
    app.audit(actor.event("client_secret_rotated", json!({})).client(id)).await;
    Ok((client, secret))
}

pub async fn delete_client(app: &Issuer, actor: &Actor, id: &str) -> Result<(), OAuthError> {
    if !app.registry().delete_client(id).await? {
        return Err(no_client());
    }
    app.audit(actor.event("client_deleted", json!({})).client(id)).await;
    Ok(())
}

pub async fn create_user(app: &Issuer, actor: &Actor, input: UserInput) -> Result<User, OAuthError> {
    let username = input.username.clone().unwrap_or_default();
    // Checked again, atomically, when the user is saved; this spares a password hash.
    if app.registry().user_by_login(&username).is_some() {
        return Err(crate::db::StoreError::Conflict("a user with this login name already exists".into()).into());
    }
    let user = tokio::task::spawn_blocking(move || users::new_user(input))
        .await
        .map_err(|e| OAuthError::internal("hashing", e))?
        .map_err(OAuthError::invalid_request)?;
    app.registry().save_user(user.clone()).await?;
    app.audit(actor.event("user_created", json!({"roles": user.roles})).user(&user.id)).await;
    Ok(user)
}

/// Change a user: absent fields keep their value, a `null` claim removes it. A new password
/// (saved with its `tokens_cutoff`, spending every outstanding reset link) ends the user's
/// sessions and revokes their tokens, as a disabled user's are.
pub async fn update_user(app: &Issuer, actor: &Actor, id: &str, input: UserInput) -> Result<User, OAuthError> {
    let existing: Arc<User> = app.registry().user(id).ok_or_else(no_user)?;
    let before = existing.as_ref().clone();
    let user = tokio::task::spawn_blocking(move || users::update_user(&existing, input))
        .await
        .map_err(|e| OAuthError::internal("hashing", e))?
        .map_err(OAuthError::invalid_request)?;
    save_user_change(app, actor, &before, user, json!({})).await
}

/// Save `user`, a changed `before`, with what follows from the change: a new password spends
/// every outstanding reset link (in the same transaction) and revokes the user's tokens; a
/// user newly disabled has their sessions ended and every token refused. Audited as
/// `user_updated` with `extra`'s members (where the change came from).
pub async fn save_user_change(app: &Issuer, actor: &Actor, before: &User, user: User, extra: Value) -> Result<User, OAuthError> {
    let id = before.id.clone();
    let new_password = before.password_hash != user.password_hash;
    // A login name another user has is refused atomically by the save: 409.
    let owned = id.clone();
    let tenant = app.tenant.id;
    app.registry()
        .save_user_if(user.clone(), move |sql| {
            if new_password {
                crate::endpoints::password_reset::spend_links(sql, tenant, &owned)?;
            }
            Ok(true)
        })
        .await?;
    let mut changed = Vec::new();
    for (field, differs) in [
        ("username", before.username != user.username),
        ("password", new_password),
        ("claims", before.claims != user.claims),
        ("disabled", before.disabled != user.disabled),
        ("roles", before.roles != user.roles),
        ("external_id", before.external_id != user.external_id),
        ("scim", before.scim != user.scim),
    ] {
        if differs {
            changed.push(field);
        }
    }
    let mut details = json!({"changed": changed, "roles": user.roles, "disabled": user.disabled});
    if let (Some(d), Value::Object(extra)) = (details.as_object_mut(), extra) {
        d.extend(extra);
    }
    app.audit(actor.event("user_updated", details).user(&id)).await;
    if user.disabled && !before.disabled {
        end_sessions(app, actor, &id, None).await?;
    } else if new_password {
        let done = crate::logout::cut_off(app, app.tenant.id, &id, user.tokens_cutoff, None, actor.ended_by()).await?;
        app.audit(actor.event("tokens_revoked", json!({"reason": "password", "sessions_ended": done.sessions, "families_revoked": done.families})).user(&id)).await;
    }
    Ok(app.registry().user(&id).map(|u| u.as_ref().clone()).unwrap_or(user))
}

pub async fn delete_user(app: &Issuer, actor: &Actor, id: &str) -> Result<(), OAuthError> {
    if !app.registry().delete_user(id).await? {
        return Err(no_user());
    }
    app.audit(actor.event("user_deleted", json!({})).user(id)).await;
    Ok(())
}

/// End a user's sessions (all, or the one `sid` names), with the same notifications as a
/// logout. How many ended; `Err(not_found)` if `sid` is not one of the user's. Ending all of
/// them also revokes every token the user had (`tokens_cutoff`, then `logout::cut_off`): the
/// operator's answer to a session or a device in the wrong hands, `offline_access` included.
pub async fn end_sessions(app: &Issuer, actor: &Actor, user_id: &str, sid: Option<&str>) -> Result<usize, OAuthError> {
    let user = app.registry().user(user_id).ok_or_else(no_user)?;
    let Some(sid) = sid else {
        let cutoff = crate::util::now();
        app.registry().save_user(User { tokens_cutoff: cutoff, ..user.as_ref().clone() }).await?;
        let done = crate::logout::cut_off(app, app.tenant.id, user_id, cutoff, None, actor.ended_by()).await?;
        app.audit(actor.event("sessions_ended", json!({"ended": done.sessions, "families_revoked": done.families, "tokens_revoked": true})).user(user_id)).await;
        return Ok(done.sessions);
    };
    let ended = match app.stores.sessions.of_user(app.tenant.id, user_id).await?.into_iter().find(|s| s.sid == sid) {
        Some(s) => end_session(app, app.tenant.id, SessionRef::Sid(s.sid), actor.ended_by()).await?.is_some(),
        None => false,
    };
    if !ended {
        return Err(OAuthError::not_found("no such session for this user"));
    }
    app.audit(actor.event("sessions_ended", json!({"ended": 1})).user(user_id)).await;
    Ok(1)
}

/// Remove one of a user's second factors (`factor_id`), or all with their recovery codes.
pub async fn remove_factors(app: &Issuer, actor: &Actor, user_id: &str, factor_id: Option<&str>) -> Result<u64, OAuthError> {
    app.registry().user(user_id).ok_or_else(no_user)?;
    let removed = match factor_id {
        Some(f) => match crate::factors::remove(&app.db, app.tenant.id, user_id, f).await? {
            true => 1,
            false => return Err(OAuthError::not_found("no such factor")),
        },
        None => crate::factors::reset(&app.db, app.tenant.id, user_id).await?,
    };
    let event = match factor_id {
        Some(f) => actor.event("factor_removed", json!({"id": f})),
        None => actor.event("factors_reset", json!({"factors": removed})),
    };
    app.audit(event.user(user_id)).await;
    Ok(removed)
}

/// Start a rotation of the `alg` signing key: published at once (here; other nodes are told
/// at commit), signing after `key_publish_delay`. Returns the new kid.
pub async fn rotate_key(app: &Issuer, actor: &Actor, alg: &str) -> Result<String, OAuthError> {
    // Authrim's own encryption keys (`use: enc`) rotate the same way as its signing keys.
    if !app.keys().algorithms().contains(&alg) && crate::keys::encryption_alg(alg).is_none() {
        let enc = crate::keys::ENCRYPTION_KEY_ALGS.join(" ");
        return Err(OAuthError::invalid_request(format!("this server signs with {}, and encrypts with {enc}", app.keys().algorithms().join(" "))));
    }
    let kid = crate::keys::KeyManager::rotate_alg(&app.db, app.vault(), app.tenant.id, alg).await.map_err(|e| OAuthError::internal("key rotation", e))?;
    app.keys().refresh().await.map_err(|e| OAuthError::internal("key refresh", e))?;
    app.audit(actor.event("signing_key_rotated", json!({"kid": kid, "alg": alg}))).await;
    Ok(kid)
}

/// `bootstrap_admin`: the first admin, so that a new installation's console can be used
/// without the CLI. Only while no user has the `admin` role: an existing user of that name is
/// given it, else one is created with `bootstrap_admin_password`. Audited (`by`: bootstrap).
pub async fn bootstrap_admin(app: &Issuer) -> anyhow::Result<()> {
    let Some(name) = app.config.bootstrap_admin.as_deref().filter(|n| !n.is_empty()) else { return Ok(()) };
    if app.registry().list_users().iter().any(|u| u.has_role("admin")) {
        tracing::info!("bootstrap_admin ignored: an admin exists");
        return Ok(());
    }
    let event = |name: &str| AuditEvent::new(name).detail(json!({"by": "bootstrap", "roles": ["admin"]}));
    if let Some(user) = app.registry().user_by_login(name) {
        let mut roles = user.roles.clone();
        roles.push("admin".into());
        let updated = users::update_user(&user, UserInput { roles: Some(roles), ..Default::default() }).map_err(anyhow::Error::msg)?;
        app.registry().save_user(updated).await?;
        app.audit(event("user_updated").user(&user.id)).await;
        tracing::warn!(user = %name, "bootstrap_admin: this existing user is now an admin");
        return Ok(());
    }
    let Some(password) = app.config.bootstrap_admin_password.clone().filter(|p| !p.is_empty()) else {
        anyhow::bail!("bootstrap_admin {name:?} does not exist: set AUTHRIM_BOOTSTRAP_ADMIN_PASSWORD to create it");
    };
    let input = UserInput { username: Some(name.to_string()), password: Some(password), roles: Some(vec!["admin".into()]), ..Default::default() };
    let user = tokio::task::spawn_blocking(move || users::new_user(input)).await?.map_err(|e| anyhow::anyhow!("bootstrap_admin: {e}"))?;
    match app.registry().save_user(user.clone()).await {
        Ok(()) => {}
        // Another node created it at the same moment: theirs stands.
        Err(crate::db::StoreError::Conflict(_)) => return Ok(()),
        Err(e) => return Err(e.into()),
    }
    app.audit(event("user_created").user(&user.id)).await;
    tracing::warn!(user = %name, "bootstrap_admin: created this admin; add a second factor at /account, then open /console");
    Ok(())
}
