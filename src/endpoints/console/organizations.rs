//! Organizations in the console (issue 31): a tenant's customer companies. A tenant admin
//! lists, creates, edits (display name, logo, e-mail domains, upstream connection) and
//! deletes them (the slug typed again); an auditor looks; an organization administrator
//! (`Role::OrgAdmin`) sees only their own organizations, read only here: their members are
//! managed in `members`. The changes are the admin API's (`admin_organizations`), audited
//! with the console user as the actor.
//!
//! Why an organization administrator does not change domains or the connection: a domain
//! makes every user of the tenant with a verified address there a member on their next
//! sign-in (just-in-time membership), and the connection decides which identity provider
//! vouches for the organization's members. Either would let an organization's administrator
//! claim people or sign-ins that are not theirs to claim (another company's domain, a
//! provider they control); the tenant's administrator, who answers for the whole tenant,
//! decides both.

use super::clients::enc;
use super::{lines, message, not_found, notice, org_only, refused, text, Change, Id, OrgViewer, Role, Viewer};
use crate::endpoints::admin_organizations as ops;
use crate::endpoints::first_party::see_other;
use crate::http::params::Params;
use crate::registry::{Organization, OrganizationInput};
use crate::tenant::Issuer;
use crate::ui::Page;
use axum::extract::RawQuery;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use std::sync::Arc;

/// The tenant's identity providers, for the connection's choice.
fn upstreams(app: &Issuer) -> Vec<Value> {
    app.tenant.upstreams.list().iter().map(|p| json!({"id": p.id, "name": p.name})).collect()
}

fn row(app: &Issuer, org: &Organization) -> Value {
    let upstream = org.upstream.as_ref().map(|id| app.tenant.upstreams.get(id).map_or_else(|| id.clone(), |p| p.name.clone()));
    json!({
        "id": org.id, "slug": org.slug, "display_name": org.display_name, "logo_uri": org.logo_uri,
        "domains": org.domains, "upstream": org.upstream, "upstream_name": upstream,
        "members": app.registry().members(&org.id).len(),
    })
}

fn list_page(app: &Issuer, viewer: &Viewer) -> Page {
    let orgs: Vec<Value> = app.registry().list_organizations().iter().filter(|o| viewer.sees_org(&o.id)).map(|o| row(app, o)).collect();
    // `org`: the new organization's form, empty until a refused one is shown again.
    viewer.page("console_organizations.html", "console-organizations", "organizations").with("orgs", orgs).with("upstreams", upstreams(app)).with("org", json!({}))
}

pub async fn list(app: Issuer, OrgViewer(viewer): OrgViewer, RawQuery(query): RawQuery) -> Response {
    let mut page = list_page(&app, &viewer);
    if let Some(n) = notice(query.as_deref()) {
        page = page.msg("notice", n);
    }
    page.into_response()
}

/// The form's fields as the admin API's input. Domains: one a line (commas and spaces
/// separate too, as people paste lists); the connection: an identity provider's id, or
/// empty for none.
fn input(params: &Params, slug: bool) -> OrganizationInput {
    let domains = lines(params, "domains").iter().flat_map(|l| l.split([',', ' ', '\t']).filter(|d| !d.is_empty()).map(str::to_string).collect::<Vec<_>>()).collect();
    OrganizationInput {
        slug: if slug { Some(text(params, "slug").unwrap_or_default()) } else { None },
        display_name: Some(text(params, "display_name").unwrap_or_default()),
        logo_uri: Some(text(params, "logo_uri").unwrap_or_default()),
        upstream: Some(text(params, "upstream").unwrap_or_default()),
        domains: Some(domains),
    }
}

/// What was typed, to show the form again with it.
fn typed(params: &Params) -> Value {
    json!({
        "slug": text(params, "slug"), "display_name": text(params, "display_name"), "logo_uri": text(params, "logo_uri"),
        "upstream": text(params, "upstream"), "domains": lines(params, "domains"),
    })
}

pub async fn create(app: Issuer, Change { admin, params }: Change) -> Response {
    match ops::create(&app, &admin.actor(), input(&params, true)).await {
        Ok(org) => see_other(app.base(), &format!("/console/organizations/{}?done=created", enc(&org.id))),
        Err(e) => refused(list_page(&app, &admin).with("org", typed(&params)), &e),
    }
}

/// The organization `id_or_slug` if the viewer may see it. To an organization administrator,
/// one that is not theirs and one that does not exist are the same refusal: the console
/// does not tell them which other organizations there are.
pub(super) fn visible(app: &Issuer, viewer: &Viewer, id_or_slug: &str) -> Result<Arc<Organization>, Response> {
    match app.registry().organization(id_or_slug) {
        Some(org) if viewer.sees_org(&org.id) => Ok(org),
        None if viewer.tenant_wide() => Err(not_found()),
        _ => Err(org_only()),
    }
}

/// An organization's page: its settings (a form for a tenant admin), its members with their
/// roles (forms for whoever manages them).
pub(super) fn show_page(app: &Issuer, viewer: &Viewer, org: &Organization) -> Page {
    let registry = app.registry();
    let members: Vec<Value> = registry
        .members(&org.id)
        .into_iter()
        .map(|(user, m)| {
            let u = registry.user(&user);
            json!({"id": user, "username": u.as_ref().map(|u| u.username.clone()), "email": u.as_ref().and_then(|u| u.email().map(str::to_string)),
                   "roles": m.roles.join(" "), "joined": super::when(m.joined_at), "me": user == viewer.me.user.id})
        })
        .collect();
    viewer
        .page("console_organization.html", "console-organization", "organizations")
        .with("org", row(app, org))
        .with("members", members)
        .with("upstreams", upstreams(app))
        .with("can_edit", viewer.role == Role::Admin)
        .with("can_members", viewer.manages_members(&org.id))
}

pub async fn show(app: Issuer, OrgViewer(viewer): OrgViewer, Id(id): Id, RawQuery(query): RawQuery) -> Response {
    let org = match visible(&app, &viewer, &id) {
        Ok(o) => o,
        Err(res) => return res,
    };
    let mut page = show_page(&app, &viewer, &org);
    if let Some(n) = notice(query.as_deref()) {
        page = page.msg("notice", n);
    }
    page.into_response()
}

/// A tenant admin's change of an organization's settings (`Change` refuses anyone else).
pub async fn update(app: Issuer, Id(id): Id, Change { admin, params }: Change) -> Response {
    let org = match visible(&app, &admin, &id) {
        Ok(o) => o,
        Err(res) => return res,
    };
    match ops::change(&app, &admin.actor(), &org.id, input(&params, false)).await {
        Ok(org) => see_other(app.base(), &format!("/console/organizations/{}?done=saved", enc(&org.id))),
        Err(e) => {
            let mut page = show_page(&app, &admin, &org);
            let mut values = row(&app, &org);
            for (k, v) in typed(&params).as_object().into_iter().flatten() {
                if k != "slug" {
                    values[k] = v.clone();
                }
            }
            page = page.with("org", values);
            refused(page, &e)
        }
    }
}

/// Delete an organization, its slug typed again: its members' tokens for it end at once.
pub async fn delete(app: Issuer, Id(id): Id, Change { admin, params }: Change) -> Response {
    let org = match visible(&app, &admin, &id) {
        Ok(o) => o,
        Err(res) => return res,
    };
    if params.get("confirm").map(str::trim) != Some(org.slug.as_str()) {
        let back = format!("/console/organizations/{}", enc(&org.id));
        return message(StatusCode::BAD_REQUEST, "console-refused-heading", "console-org-confirm-wrong", (&back, "console-back-organization"));
    }
    match ops::delete(&app, &admin.actor(), &org.id).await {
        Ok(()) => see_other(app.base(), "/console/organizations?done=deleted"),
        Err(e) if e.status == StatusCode::NOT_FOUND => not_found(),
        Err(e) => super::failed(&e),
    }
}
