//! The password form's second road: a name that is not a local user with a password is
//! checked by the tenant's password sources (`identity::ldap::Sources`: LDAP and Active
//! Directory directories, in their configured order), and the user they vouch for is imported
//! just in time: created here without a local password and linked as `ldap:<directory>`, or,
//! linked already, updated with what the directory now says. Then the sign-in goes on as
//! every other does (`interaction::after_first_factor`: second factors, the session).
//!
//! A wrong password, an unknown name, and an account the directory or Authrim has disabled
//! all get the local form's one message and count against the same throttle; a directory
//! that cannot answer is said so (and audited), and only its users are affected.

use super::authorize::{render_login, unavailable, AuthorizationRequest};
use super::interaction::after_first_factor;
use crate::audit::AuditEvent;
use crate::db::StoreError;
use crate::http::pages::error_page;
use crate::identity::ldap::{Outcome, SourceUser};
use crate::identity::links::{self, Linking};
use crate::ratelimit::Attempt;
use crate::registry::users::{validate_username, Claims};
use crate::registry::User;
use crate::tenant::Issuer;
use crate::util::{now, random_token};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{json, Value};
use std::sync::Arc;

const UNREACHABLE: &str = "err-directory-unreachable";
const NAME_TAKEN: &str = "err-directory-name-taken";

/// Whether the form's name goes to the password sources: the tenant has some, and the name
/// is no user of this tenant, or one imported from a directory (whose password is the
/// directory's).
pub(super) fn applies(app: &Issuer, user: Option<&User>) -> bool {
    !app.tenant.directories.is_empty() && user.is_none_or(|u| u.source.is_directory())
}

/// What the form named, checked by the sources. `user`: the local user of that name, one
/// without a password (imported earlier): the directory is asked for them by their username
/// there, so that their e-mail address signs them in too.
#[allow(clippy::too_many_arguments)]
pub(super) async fn sign_in(
    app: &Issuer,
    headers: &HeaderMap,
    req: AuthorizationRequest,
    typed: &str,
    password: &str,
    user: Option<Arc<User>>,
    attempt: Attempt<'_>,
    address: &str,
) -> Response {
    let name = user.as_ref().map_or(typed, |u| u.username.as_str());
    let answer = app.tenant.directories.authenticate(name, password).await;
    let directory = answer.source.clone();
    let fail = |reason: String, user_id: Option<String>| {
        let mut event = AuditEvent::new("login_failure").address(address).client(&req.client_id).detail(json!({"kind": "ldap", "directory": directory, "reason": reason}));
        if let Some(u) = &user_id {
            event = event.user(u);
        }
        event
    };
    let retry = AuthorizationRequest { login_hint: Some(typed.to_string()), ..req.clone() };
    let incorrect = || render_login(app, headers, &retry, Some("err-incorrect"), StatusCode::UNAUTHORIZED);
    let found = match answer.outcome {
        Outcome::Authenticated(found) => found,
        Outcome::Unreachable(why) => {
            // Not the user's fault: the attempt does not count against the account.
            attempt.unchecked();
            app.audit(AuditEvent::new("directory_unreachable").address(address).client(&req.client_id).detail(json!({"directory": directory, "error": why}))).await;
            return render_login(app, headers, &retry, Some(UNREACHABLE), StatusCode::SERVICE_UNAVAILABLE).await;
        }
        outcome => {
            attempt.failed(now());
            let reason = match outcome {
                Outcome::Unknown => "unknown".to_string(),
                Outcome::Refused(why) => why,
                _ => "password".to_string(),
            };
            app.audit(fail(reason, user.map(|u| u.id.clone()))).await;
            return incorrect().await;
        }
    };
    let user = match import(app, &found, true).await {
        Ok(user) => user,
        Err(Refusal::NameTaken) => {
            attempt.unchecked();
            app.audit(fail("name_taken".into(), None)).await;
            return render_login(app, headers, &retry, Some(NAME_TAKEN), StatusCode::CONFLICT).await;
        }
        Err(Refusal::Store(e)) => {
            attempt.unchecked();
            return unavailable(e);
        }
    };
    // Disabled here: refused as a wrong password is, whatever the directory says.
    if user.disabled {
        attempt.failed(now());
        app.audit(fail("disabled".into(), Some(user.id.clone()))).await;
        return incorrect().await;
    }
    attempt.succeeded();
    if let Err(e) = map_groups(app, &user, &found).await {
        return unavailable(e);
    }
    app.audit(AuditEvent::new("directory_sign_in").user(&user.id).address(address).client(&req.client_id).detail(json!({"directory": directory, "subject": found.subject}))).await;
    after_first_factor(app, headers, req, &user, address, vec!["pwd".into()], None).await
}

pub(super) enum Refusal {
    /// A first sign-in whose name (or address) is another local user's.
    NameTaken,
    Store(StoreError),
}

impl From<StoreError> for Refusal {
    fn from(e: StoreError) -> Self {
        Refusal::Store(e)
    }
}

/// The local user for `found`: the linked one, updated with the directory's attributes;
/// else a new one (no local password), linked. `sign_in`: the link's use is noted (a sync
/// round is none).
pub(super) async fn import(app: &Issuer, found: &SourceUser, sign_in: bool) -> Result<Arc<User>, Refusal> {
    let registry = app.registry();
    let linked = match sign_in {
        true => links::find(&app.db, app.tenant.id, &found.provider, &found.subject).await?,
        false => links::lookup(&app.db, app.tenant.id, &found.provider, &found.subject).await?,
    };
    if let Some(id) = linked {
        // A link outlives its user only between a deletion and the row's removal.
        let existing = registry.user(&id).ok_or_else(|| StoreError::Conflict("the linked user is gone".into()))?;
        // Made a local user since (an operator set a password): no longer the directory's.
        if existing.source.as_str() != found.provider {
            return Ok(existing);
        }
        let mut updated = (*existing).clone();
        apply(&mut updated, found);
        if validate_username(&updated.username).is_err() {
            updated.username = existing.username.clone();
        }
        if updated == *existing {
            return Ok(existing);
        }
        updated.updated_at = now();
        if let Err(StoreError::Conflict(_)) = registry.save_user(updated.clone()).await {
            // The directory's new name or address is another user's here: signed in with
            // what they had, the operator left to sort it out.
            tracing::warn!(user = existing.id, directory = found.provider, "the directory's username or e-mail belongs to another user here; not updated");
            return Ok(existing);
        }
        return Ok(registry.user(&id).unwrap_or(existing));
    }
    if validate_username(&found.username).is_err() || registry.user_by_login(&found.username).is_some() {
        return Err(Refusal::NameTaken);
    }
    let mut user = User {
        tenant: app.tenant.id,
        id: random_token()[..22].to_string(),
        username: found.username.clone(),
        // None of its own: the directory checks the password (`applies`).
        password_hash: String::new(),
        claims: Claims::default(),
        disabled: false,
        updated_at: now(),
        roles: Vec::new(),
        tokens_cutoff: 0,
        created_at: now(),
        source: crate::registry::users::Source::Directory(found.provider.clone()),
        external_id: None,
        scim: None,
    };
    apply(&mut user, found);
    if let Err(StoreError::Conflict(_)) = registry.save_user(user.clone()).await {
        // The address is another user's login name: imported without it.
        user.claims.remove("email");
        user.claims.remove("email_verified");
        match registry.save_user(user.clone()).await {
            Err(StoreError::Conflict(_)) => return Err(Refusal::NameTaken),
            r => r?,
        }
    }
    match links::link(&app.db, app.tenant.id, &found.provider, &found.subject, &user.id, found.email.as_deref()).await? {
        Linking::Linked => {}
        // Two first sign-ins raced: the other's user stands.
        _ => {
            let _ = registry.delete_user(&user.id).await;
            return Box::pin(import(app, found, sign_in)).await;
        }
    }
    app.audit(AuditEvent::new("user_created").user(&user.id).detail(json!({"by": "ldap", "provider": found.provider}))).await;
    Ok(registry.user(&user.id).unwrap_or_else(|| Arc::new(user)))
}

/// The directory's groups of `found` onto `user`'s memberships here (nothing when the
/// directory maps none, or `user` is no longer the directory's), audited when anything
/// changed or a group was refused.
pub(super) async fn map_groups(app: &Issuer, user: &User, found: &SourceUser) -> Result<(), StoreError> {
    let Some(names) = &found.groups else { return Ok(()) };
    if user.source.as_str() != found.provider {
        return Ok(());
    }
    let mapped = app.registry().map_groups(&user.id, &found.provider, names, &app.config.directory_limits()).await?;
    if !mapped.is_empty() {
        let refused: Vec<Value> = mapped.refused.iter().map(|(g, why)| json!({"group": g, "reason": why})).collect();
        let detail = json!({"by": "ldap", "directory": found.provider, "added": mapped.added, "removed": mapped.removed, "refused": refused});
        app.audit(AuditEvent::new("directory_groups_mapped").user(&user.id).detail(detail)).await;
    }
    Ok(())
}

/// The directory's attributes onto `user`: its username there, e-mail (verified as the
/// directory is trusted to say) and names; an attribute the entry lacks is removed.
fn apply(user: &mut User, found: &SourceUser) {
    user.username = found.username.clone();
    let set = |claims: &mut Claims, name: &str, v: Option<Value>| match v {
        Some(v) => claims.insert(name, v),
        None => {
            claims.remove(name);
        }
    };
    set(&mut user.claims, "email", found.email.clone().map(Value::String));
    set(&mut user.claims, "email_verified", found.email.as_ref().map(|_| Value::Bool(found.email_verified)));
    set(&mut user.claims, "name", found.name.clone().map(Value::String));
    set(&mut user.claims, "given_name", found.given_name.clone().map(Value::String));
    set(&mut user.claims, "family_name", found.family_name.clone().map(Value::String));
}

/// A password change for a user whose password is the directory's: refused, the directories
/// being read-only in this slice; writing it back is for a later one.
pub fn read_only(user: &User) -> Option<Response> {
    user.source.is_directory().then(|| error_page(StatusCode::CONFLICT, "err-directory-password-read-only"))
}
