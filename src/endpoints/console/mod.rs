//! The admin console (`/console`): clients, users, groups, signing keys and the audit log in the
//! browser (and, at the deployment's own issuer, the tenants), for users with a console role (`registry::users::ROLES`).
//!
//! It signs its users in as a client of this server (`first_party::CONSOLE`), so the
//! console has no password form, throttle or factor check of its own. What it adds:
//! - roles, checked here on every request (not only by hiding buttons): `admin` may change
//!   anything, `auditor` may look; an organization's administrator (a member with the
//!   reserved organization role `admin`, and no console role) manages the members of their
//!   organizations and nothing else (`Role::OrgAdmin`); anyone else is refused;
//! - a second factor (`console_mfa = required`, the default): the sign-in asks for one
//!   (`acr_values`), and a session without one is not served; a user who has none is sent
//!   to the account page to add one;
//! - a recent sign-in (`console_max_age`), else a new one;
//! - a CSRF token sealed to the session on every form; every change is an audited
//!   `operations` call, the same the admin API makes.

mod audit;
mod clients;
mod saml;
mod credentials;
mod groups;
mod keys;
mod members;
mod organizations;
mod presets;
mod roles;
mod tenants;
mod provisioning;
mod users;

use crate::app::{App, AppState};
use crate::endpoints::first_party::{form, see_other, signed_in, SignedIn, CONSOLE};
use crate::endpoints::operations::Actor;
use crate::factors::Level;
use crate::http::params::{FormParams, Params};
use crate::tenant::Issuer;
use crate::ui::{Msg, Page};
use axum::extract::{FromRequest, FromRequestParts, RawQuery};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;

pub fn router(app: &App) -> Router<AppState> {
    if !app.config.console {
        return Router::new();
    }
    Router::new()
        .route("/console", get(home))
        .route("/console/login", get(login))
        .route(CONSOLE.callback, get(callback))
        .route("/console/clients", get(clients::list).post(clients::create))
        .route("/console/clients/new", get(clients::new_form))
        .route("/console/saml", post(saml::create))
        .route("/console/clients/{id}", get(clients::show).post(clients::update))
        .route("/console/clients/{id}/secret", post(clients::rotate_secret))
        .route("/console/clients/{id}/delete", post(clients::delete))
        .route("/console/clients/{id}/roles", post(roles::define))
        .route("/console/clients/{id}/roles/remove", post(roles::remove))
        .route("/console/clients/{id}/roles/assign", post(roles::assign))
        .route("/console/clients/{id}/roles/unassign", post(roles::unassign))
        .route("/console/clients/{id}/provisioning", post(provisioning::set))
        .route("/console/clients/{id}/provisioning/resync", post(provisioning::resync))
        .route("/console/clients/{id}/provisioning/remove", post(provisioning::remove))
        .route("/console/users", get(users::list).post(users::create))
        .route("/console/users/new", get(users::new_form))
        .route("/console/users/{id}", get(users::show).post(users::update))
        .route("/console/users/{id}/factors/remove", post(users::remove_factors))
        .route("/console/users/{id}/sessions/end", post(users::end_sessions))
        .route("/console/users/{id}/delete", post(users::delete))
        .route("/console/keys", get(keys::list))
        .route("/console/keys/rotate", post(keys::rotate))
        .route("/console/audit", get(audit::list))
        .merge(tenants::routes(app.config.tenant_settings_body_limit()))
        .route("/console/organizations", get(organizations::list).post(organizations::create))
        .route("/console/organizations/{org}", get(organizations::show).post(organizations::update))
        .route("/console/organizations/{org}/delete", post(organizations::delete))
        .route("/console/organizations/{org}/members", post(members::add))
        .route("/console/organizations/{org}/members/{user}", post(members::change))
        .route("/console/organizations/{org}/members/{user}/remove", post(members::remove))
        .route("/console/groups", get(groups::list).post(groups::create))
        .route("/console/groups/{id}", get(groups::show).post(groups::update))
        .route("/console/groups/{id}/delete", post(groups::delete))
        .route("/console/groups/{id}/members", post(groups::add_member))
        .route("/console/groups/{id}/members/remove", post(groups::remove_member))
        .route("/console/credentials", get(credentials::list).post(credentials::create))
        .route("/console/credentials/{id}/revoke", post(credentials::revoke))
}

/// What a console user may do. A console role (`registry::users::ROLES`) covers the whole
/// tenant; an organization administrator's covers only their organizations, named here, so
/// that every handler that serves one says which it checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Role {
    Auditor,
    Admin,
    /// A member with the organization role `admin` (`ORG_ADMIN_ROLE`) of these organizations
    /// (their ids), with no console role: their members and roles, nothing else.
    OrgAdmin(Vec<String>),
}

impl Role {
    /// Read at every request (from memory), so that a role or an organization membership
    /// taken away holds at the next page, whatever session the user still has.
    fn of(app: &Issuer, user: &crate::registry::User) -> Option<Role> {
        match (user.has_role("admin"), user.has_role("auditor")) {
            (true, _) => return Some(Role::Admin),
            (false, true) => return Some(Role::Auditor),
            _ => {}
        }
        let orgs: Vec<String> = app
            .registry()
            .memberships(&user.id)
            .into_iter()
            .filter(|(_, m)| m.roles.iter().any(|r| r == ORG_ADMIN_ROLE))
            .map(|(org, _)| org.id.clone())
            .collect();
        (!orgs.is_empty()).then_some(Role::OrgAdmin(orgs))
    }

    fn name(&self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Auditor => "auditor",
            Role::OrgAdmin(_) => "org-admin",
        }
    }
}

use crate::registry::organizations::ORG_ADMIN_ROLE;

/// A console request's user, let in: a role, a recent enough sign-in, the factor policy met.
pub(crate) struct Viewer {
    pub me: SignedIn,
    pub role: Role,
    pub csrf: String,
    /// At the deployment's own issuer (the default tenant), whose console also lists tenants.
    pub deployment: bool,
}

impl Viewer {
    /// Whether the viewer's role covers the whole tenant (clients, users, keys, audit...).
    pub fn tenant_wide(&self) -> bool {
        matches!(self.role, Role::Admin | Role::Auditor)
    }

    /// Whether the viewer may see this organization (its settings, members and roles).
    pub fn sees_org(&self, org_id: &str) -> bool {
        match &self.role {
            Role::Admin | Role::Auditor => true,
            Role::OrgAdmin(orgs) => orgs.iter().any(|o| o == org_id),
        }
    }

    /// Whether the viewer may add, change and remove this organization's members.
    pub fn manages_members(&self, org_id: &str) -> bool {
        match &self.role {
            Role::Admin => true,
            Role::Auditor => false,
            Role::OrgAdmin(orgs) => orgs.iter().any(|o| o == org_id),
        }
    }

    /// A console page: the navigation, who is signed in, the CSRF token for its forms.
    pub fn page(&self, template: &'static str, title: &'static str, nav: &str) -> Page {
        Page::new(StatusCode::OK, template, title)
            .with("nav", nav)
            .with("me", &self.me.user.username)
            .with("role", self.role.name())
            .with("admin", self.role == Role::Admin)
            .with("org_admin", !self.tenant_wide())
            .with("csrf", &self.csrf)
            .with("deployment", self.deployment)
    }

    pub fn actor(&self) -> Actor {
        Actor::Console(self.me.user.id.clone())
    }
}

/// A page with a heading, a message and a link (refusals and next steps).
fn message(status: StatusCode, heading: &'static str, message: impl Into<Msg>, link: (&str, &'static str)) -> Response {
    Page::new(status, "console_message.html", heading)
        .msg("heading", heading)
        .msg("message", message)
        .with("link", link.0)
        .msg("link_text", link.1)
        .into_response()
}

/// Whether this signed-in user may use the console now; else where to send them.
async fn admit(app: &Issuer, me: SignedIn) -> Result<Viewer, Response> {
    let Some(role) = Role::of(app, &me.user) else {
        return Err(message(StatusCode::FORBIDDEN, "console-denied-heading", Msg::new("console-denied").arg("user", me.user.username.clone()), ("/", "error-home")));
    };
    if me.age() > app.config.console_max_age {
        return Err(see_other(app.base(), &CONSOLE.login_path(true)));
    }
    if app.config.console_mfa == "required" && Level::of(&me.session.acr).unwrap_or(Level::Password) < Level::Mfa {
        // A factor the user has is asked for by signing in again; without one, add one first.
        let best = crate::factors::best_level(&app.db, app.tenant.id, &me.user.id).await.map_err(crate::endpoints::authorize::unavailable)?;
        if best >= Level::Mfa {
            return Err(see_other(app.base(), &CONSOLE.login_path(true)));
        }
        return Err(message(StatusCode::FORBIDDEN, "console-needs-factor-heading", "console-needs-factor", ("/account", "console-go-account")));
    }
    let csrf = CONSOLE.csrf(app, &me);
    Ok(Viewer { me, role, csrf, deployment: app.tenant.id.is_default() })
}

/// `Viewer` as an extractor: a user with a console role over the whole tenant. An
/// organization administrator is refused here, so every page that does not say otherwise
/// (clients, users, keys, audit, tenants, credentials) is closed to them.
impl FromRequestParts<AppState> for Viewer {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, shared: &AppState) -> Result<Self, Response> {
        let OrgViewer(viewer) = OrgViewer::from_request_parts(parts, shared).await?;
        if !viewer.tenant_wide() {
            return Err(org_only());
        }
        Ok(viewer)
    }
}

/// A console user of any role, organization administrators too: for the pages that serve
/// them (the organizations), which check `Viewer::sees_org` themselves.
pub(crate) struct OrgViewer(pub Viewer);

impl FromRequestParts<AppState> for OrgViewer {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, shared: &AppState) -> Result<Self, Response> {
        let app = &Issuer::from_parts(parts, shared)?;
        let Some(me) = signed_in(app, &parts.headers).await else { return Err(see_other(app.base(), &CONSOLE.login_path(false))) };
        admit(app, me).await.map(OrgViewer)
    }
}

/// What an organization administrator is told on any page outside their organizations.
pub(crate) fn org_only() -> Response {
    message(StatusCode::FORBIDDEN, "console-org-only-heading", "console-org-only", ("/console/organizations", "console-organizations"))
}

/// A console change: an admin (checked here, whatever the page showed), the form, and its
/// CSRF token valid for this session.
pub(crate) struct Change {
    pub admin: Viewer,
    pub params: Params,
}

impl FromRequest<AppState> for Change {
    type Rejection = Response;

    async fn from_request(req: axum::extract::Request, shared: &AppState) -> Result<Self, Response> {
        let MemberChange { viewer, params } = MemberChange::from_request(req, shared).await?;
        match viewer.role {
            Role::Admin => Ok(Change { admin: viewer, params }),
            Role::OrgAdmin(_) => Err(org_only()),
            Role::Auditor => Err(read_only()),
        }
    }
}

fn read_only() -> Response {
    message(StatusCode::FORBIDDEN, "console-read-only-heading", "console-read-only", ("/console", "console-home"))
}

/// A change to an organization's members: a tenant admin or an organization administrator
/// (the handler checks `Viewer::manages_members` for the organization), the form, its CSRF
/// token valid for this session. An auditor is refused here.
pub(crate) struct MemberChange {
    pub viewer: Viewer,
    pub params: Params,
}

impl FromRequest<AppState> for MemberChange {
    type Rejection = Response;

    async fn from_request(req: axum::extract::Request, shared: &AppState) -> Result<Self, Response> {
        let app = &Issuer::from_extensions(req.extensions(), shared)?;
        let headers = req.headers().clone();
        let params = form(FormParams::from_request(req, shared).await)?;
        let me = CONSOLE.form_user(app, &headers, &params).await?;
        let viewer = admit(app, me).await?;
        if viewer.role == Role::Auditor {
            return Err(read_only());
        }
        Ok(MemberChange { viewer, params })
    }
}

/// The id in a console path (a client's or a user's); a path that is not one (not UTF-8) is
/// answered with the console's not-found page, not axum's plain-text rejection.
pub(crate) struct Id(pub String);

impl FromRequestParts<AppState> for Id {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, Response> {
        match axum::extract::Path::<String>::from_request_parts(parts, app).await {
            Ok(axum::extract::Path(id)) => Ok(Id(id)),
            Err(_) => Err(not_found()),
        }
    }
}

/// Two ids in a console path (an organization's and a member's), answered as `Id` is.
pub(crate) struct Ids(pub String, pub String);

impl FromRequestParts<AppState> for Ids {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, Response> {
        match axum::extract::Path::<(String, String)>::from_request_parts(parts, app).await {
            Ok(axum::extract::Path((a, b))) => Ok(Ids(a, b)),
            Err(_) => Err(not_found()),
        }
    }
}

/// `?done=…` on a console page: the notice it shows (a message id).
pub(crate) fn notice(query: Option<&str>) -> Option<&'static str> {
    let params = Params::parse(query.unwrap_or_default().as_bytes()).ok()?;
    Some(match params.get("done")? {
        "created" => "console-done-created",
        "saved" => "console-done-saved",
        "deleted" => "console-done-deleted",
        "ended" => "console-done-ended",
        "removed" => "console-done-removed",
        "rotated" => "console-done-rotated",
        "revoked" => "console-done-revoked",
        "queued" => "console-done-queued",
        _ => return None,
    })
}

/// A page as a response, with the notice its `?done=…` asks for.
pub(crate) fn with_notice(mut page: Page, query: Option<&str>) -> Response {
    if let Some(n) = notice(query) {
        page = page.msg("notice", n);
    }
    page.into_response()
}

/// A form's lines, trimmed, empty ones dropped (redirect URIs and other lists).
pub(crate) fn lines(params: &Params, name: &str) -> Vec<String> {
    params.get(name).unwrap_or_default().lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_string).collect()
}

/// A form's text field, trimmed; `None` when absent or empty.
pub(crate) fn text(params: &Params, name: &str) -> Option<String> {
    params.get(name).map(str::trim).filter(|v| !v.is_empty()).map(str::to_string)
}

/// A checkbox: present = on.
pub(crate) fn checked(params: &Params, name: &str) -> bool {
    params.get(name).is_some()
}

/// A moment in ISO 8601 (UTC), as pages show it in a `<time data-local>` (which `ui.js`
/// turns into the browser's zone); empty for never.
pub(crate) fn when(t: u64) -> String {
    if t == 0 {
        return String::new();
    }
    crate::util::iso8601(t)
}

async fn home(app: Issuer, OrgViewer(viewer): OrgViewer, RawQuery(query): RawQuery) -> Response {
    // An organization administrator's console is their organizations.
    if !viewer.tenant_wide() {
        return see_other(app.base(), "/console/organizations");
    }
    app.audit.flush().await;
    let filter = crate::audit::Filter { tenant: app.tenant.id, limit: 10, ..Default::default() };
    let events = match app.db.read(move |sql| crate::audit::list_filtered(sql, &filter)).await {
        Ok(e) => e,
        Err(e) => return crate::endpoints::authorize::unavailable(e),
    };
    let mut page = viewer
        .page("console_home.html", "console-title", "home")
        .with("clients", app.registry().list_clients().len())
        .with("users", app.registry().list_users().len())
        .with("algs", app.keys().algorithms())
        .with("events", audit::rows(&app, &events));
    if let Some(n) = notice(query.as_deref()) {
        page = page.msg("notice", n);
    }
    page.into_response()
}

/// `GET /console/login[?reauth=1]`: to `/authorize` as the console, asking for a second
/// factor when the policy wants one.
async fn login(app: Issuer, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    let acr = (app.config.console_mfa == "required").then_some(Level::Mfa.acr());
    CONSOLE.login(&app, &headers, query.as_deref(), acr)
}

async fn callback(app: Issuer, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    CONSOLE.callback(&app, &headers, query.as_deref(), not_signed_in).await
}

fn not_signed_in() -> Response {
    message(StatusCode::BAD_REQUEST, "not-signed-in-heading", "not-signed-in-body", ("/console/login", "console-sign-in"))
}

/// A failed change: the form again with what was wrong (an operation's error, in its words).
pub(crate) fn refused(page: Page, e: &crate::error::OAuthError) -> Response {
    let status = if e.status.is_server_error() { e.status } else { StatusCode::BAD_REQUEST };
    // The registry's reason has no translation: said to be the server's, in English.
    let mut page = page.msg("error", Msg::new("console-refused").detail(e.description.to_string())).msg("reason", "console-err-other").with("advanced_open", true);
    page.status = status;
    page.into_response()
}

/// A form with a mistake the page words itself (`presets::check`): the form again, the
/// field marked, what is wrong in the page's language.
pub(crate) fn mistaken(page: Page, (field, reason): presets::Mistake) -> Response {
    let mut page = page.msg("error", "console-refused").msg("reason", reason).with("invalid", field);
    if !matches!(field, "client_name" | "redirect_uris" | "post_logout_redirect_uris") {
        page = page.with("advanced_open", true);
    }
    page.status = StatusCode::BAD_REQUEST;
    page.into_response()
}

/// A change refused or failed where there is no form to show again.
pub(crate) fn failed(e: &crate::error::OAuthError) -> Response {
    let status = if e.status.is_server_error() { e.status } else { StatusCode::BAD_REQUEST };
    message(status, "console-refused-heading", Msg::new("console-refused").detail(e.description.to_string()), ("/console", "console-home"))
}

pub(crate) fn not_found() -> Response {
    message(StatusCode::NOT_FOUND, "console-not-found-heading", "console-not-found", ("/console", "console-home"))
}
