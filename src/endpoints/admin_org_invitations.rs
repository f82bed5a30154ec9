//! The admin API's invitations to an organization (issue 31): an address is invited with
//! roles, and the mail with the link (`endpoints::organization_invitations`) is written in the
//! invitation's own transaction. The token is in the mail only: the API never shows it, and
//! the database keeps its SHA-256.

use super::operations::Actor;
use crate::error::OAuthError;
use crate::http::params::Body;
use crate::registry::org_invitations::{self, Invitation, NewInvitation, Refused, MAX_EMAIL};
use crate::registry::organizations::validate_roles;
use crate::tenant::Issuer;
use crate::util::{now, random_token, sha256};
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get};
use axum::{Json, Router};
use serde_json::{json, Value};

pub fn routes() -> Router<crate::app::AppState> {
    Router::new()
        .route("/admin/organizations/{org}/invitations", get(list_invitations).post(create_invitation))
        .route("/admin/organizations/{org}/invitations/{id}", delete(revoke_invitation))
}

type AdminResult = Result<Response, OAuthError>;

/// Whom to invite, and the roles they will have.
#[derive(serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct InvitationInput {
    /// The address the link is mailed to; only a user whose verified e-mail address is this
    /// one can accept it.
    email: String,
    #[serde(default)]
    roles: Vec<String>,
}

fn find(app: &Issuer, org: &str) -> Result<std::sync::Arc<crate::registry::Organization>, OAuthError> {
    app.registry().organization(org).ok_or_else(|| OAuthError::not_found("no such organization"))
}

/// Who invited, as the invitation keeps it.
fn created_by(actor: &Actor) -> String {
    match actor {
        Actor::ApiToken => "operator".into(),
        Actor::Credential(id) => format!("credential:{id}"),
        Actor::Console(id) => format!("console:{id}"),
        Actor::Directory(provider) => provider.clone(),
    }
}

/// An address as an invitation takes it: one `@`, something on each side, no spaces or
/// control characters (the mail system decides the rest).
fn valid_email(email: &str) -> bool {
    let ok_chars = !email.chars().any(|c| c.is_whitespace() || c.is_control() || matches!(c, '<' | '>' | ',' | ';' | '"'));
    let parts = email.split_once('@').filter(|(l, d)| !l.is_empty() && d.contains('.') && !d.contains('@') && !d.starts_with('.') && !d.ends_with('.'));
    ok_chars && email.len() <= MAX_EMAIL && parts.is_some() && email.parse::<lettre::Address>().is_ok()
}

/// Invite an address to the organization with roles: the invitation (never its token), and
/// a mail with its link in the outbox.
#[utoipa::path(post, path = "/admin/organizations/{org}/invitations", tag = "organizations", params(("org" = String, Path, description = "the organization's id or slug")), request_body = InvitationInput, responses((status = 201, description = "the invitation: `id`, `email`, `roles`, `expires_at` (its token is in the mail only)", body = Object), (status = 400, description = "a bad address or role, or no mail is configured (`smtp_url`)"), (status = 404, description = "no such organization"), (status = 409, description = "a pending invitation for the address exists, or the organization has `organization_max_pending_invitations`"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn create_invitation(app: Issuer, actor: Actor, Path(org): Path<String>, Body(body): Body) -> AdminResult {
    let input: InvitationInput = super::admin::parse(&body)?;
    let org = find(&app, &org)?;
    let email = input.email.trim().to_string();
    if !valid_email(&email) {
        return Err(OAuthError::invalid_request("email is not an e-mail address"));
    }
    validate_roles(&input.roles).map_err(OAuthError::invalid_request)?;
    if app.mailer.is_none() {
        return Err(OAuthError::invalid_request("invitations are mailed, and no mail is configured here (smtp_url)"));
    }
    let (token, t) = (random_token(), now());
    let invitation = Invitation {
        id: format!("inv_{}", &random_token()[..16]),
        org_id: org.id.clone(),
        email: email.clone(),
        roles: input.roles,
        created_by: Some(created_by(&actor)),
        created_at: t,
        expires_at: t + app.config.organization_invitation_ttl,
        accepted_at: None,
        accepted_by: None,
        revoked_at: None,
    };
    let link = format!("{}?token={token}", app.endpoint(super::organization_invitations::PAGE));
    let days = app.config.organization_invitation_ttl.div_ceil(86_400).to_string();
    // No account need exist for the address yet: the mail is in the tenant's language.
    let lang = app.registry().find_user(&email).map_or_else(|| app.config.default_locale.clone(), |u| crate::mail::language_of(&app, &u));
    let values = json!({"link": link, "organization": org.display_name, "days": days});
    let (subject, sealed_body) = crate::mail::compose(&app, &lang, "mail-org-invitation-subject", "mail_org_invitation.txt", values);
    let new = NewInvitation { invitation: invitation.clone(), token_hash: sha256(token.as_bytes()).to_vec(), subject, sealed_body };
    let (tenant, max) = (app.tenant.id, app.config.organization_max_pending_invitations);
    let made = app.db.write(move |sql| org_invitations::create(sql, tenant, new, max, t)).await.map_err(|e| OAuthError::internal("database", e))?;
    match made {
        Ok(()) => {}
        Err(Refused::TooMany) => return Err(conflict(&format!("the organization has {max} pending invitations (organization_max_pending_invitations)"))),
        Err(Refused::Pending) => return Err(conflict("a pending invitation for this address exists: revoke it to send another")),
        Err(Refused::NoOrganization) => return Err(OAuthError::not_found("no such organization")),
    }
    if let Some(m) = &app.mailer {
        m.wake.notify_one();
    }
    let detail = json!({"org_id": org.id, "invitation_id": invitation.id, "email": invitation.email, "roles": invitation.roles});
    app.audit(actor.event("organization_invitation_created", detail)).await;
    Ok((StatusCode::CREATED, Json(invitation.to_json())).into_response())
}

fn conflict(what: &str) -> OAuthError {
    OAuthError::invalid_request(what.to_string()).with_status(StatusCode::CONFLICT)
}

/// The organization's pending invitations (not yet accepted, revoked or expired).
#[utoipa::path(get, path = "/admin/organizations/{org}/invitations", tag = "organizations", params(("org" = String, Path, description = "the organization's id or slug")), responses((status = 200, description = "`{\"invitations\": [...]}`", body = Object), (status = 404, description = "no such organization"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn list_invitations(app: Issuer, Path(org): Path<String>) -> AdminResult {
    let org = find(&app, &org)?;
    let (tenant, id, t) = (app.tenant.id, org.id.clone(), now());
    let all = app.db.read(move |sql| org_invitations::pending(sql, tenant, &id, t)).await.map_err(|e| OAuthError::internal("database", e))?;
    let all: Vec<Value> = all.iter().map(Invitation::to_json).collect();
    Ok(Json(json!({ "invitations": all })).into_response())
}

/// Revoke a pending invitation: its link stops working.
#[utoipa::path(delete, path = "/admin/organizations/{org}/invitations/{id}", tag = "organizations", params(("org" = String, Path, description = "the organization's id or slug"), ("id" = String, Path, description = "the invitation's id")), responses((status = 204, description = "revoked"), (status = 404, description = "no such organization, or no pending invitation by that id"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn revoke_invitation(app: Issuer, actor: Actor, Path((org, id)): Path<(String, String)>) -> AdminResult {
    let org = find(&app, &org)?;
    let (tenant, o, i, t) = (app.tenant.id, org.id.clone(), id.clone(), now());
    let revoked = app.db.write(move |sql| org_invitations::revoke(sql, tenant, &o, &i, t)).await.map_err(|e| OAuthError::internal("database", e))?;
    if !revoked {
        return Err(OAuthError::not_found("no pending invitation by that id"));
    }
    app.audit(actor.event("organization_invitation_revoked", json!({"org_id": org.id, "invitation_id": id}))).await;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[cfg(test)]
mod tests {
    #[test]
    fn addresses() {
        for ok in ["bob@acme.example", "Bob.Smith+x@mail.acme.example"] {
            assert!(super::valid_email(ok), "{ok}");
        }
        for bad in ["", "bob", "@acme.example", "bob@", "bob@acme", "bob@@acme.example", "bob @acme.example", "a<b>@acme.example", "bob@acme.example\n"] {
            assert!(!super::valid_email(bad), "{bad:?}");
        }
    }
}
