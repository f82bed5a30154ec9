//! The SCIM 2.0 service (RFC 7643/7644; issue 32, slice 2) at `{issuer}/scim/v2` of each
//! tenant: a protocol front-end over the directory (`registry::directory`), the tenant
//! resolved as for every request, so that a tenant's SCIM sees only that tenant.
//!
//! Resources: `Users` (with the enterprise extension; `users`, mapped onto the user and its
//! claims by `user_map`, checked against the schema table of `user_schema`) and `Groups`
//! (`groups`, `group_writes`): read (one, or a list with `filter`, sorting, pagination and
//! `attributes`/`excludedAttributes`, also as a POST `.search`), created, replaced, patched
//! and deleted; and the discovery resources (`ServiceProviderConfig`, `ResourceTypes`,
//! `Schemas`). Bulk answers 501, as RFC 7644 §3.12 has a service provider answer an operation
//! it does not support.
//!
//! Who may call: a provisioning system holding one of the tenant's admin credentials with the
//! scope `scim` (made with `scopes: ["scim"]`, good for nothing else), or `admin`, or the
//! deployment's admin token. Errors are SCIM errors (§3.12): the error schema, `status` as a
//! string, `scimType` where the RFC names one, `detail`.

mod discovery;
mod group_writes;
mod groups;
mod query;
mod user_map;
mod user_schema;
mod users;

use crate::app::AppState;
use crate::endpoints::operations::Actor;
use crate::registry::admin_credentials::{self, PREFIX};
use crate::tenant::Issuer;
use axum::extract::Request;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Value};

/// Where the service is, under the issuer.
pub const BASE: &str = "/scim/v2";
/// RFC 7644 §8.1.
pub const CONTENT_TYPE: &str = "application/scim+json";
const ERROR_SCHEMA: &str = "urn:ietf:params:scim:api:messages:2.0:Error";
const LIST_SCHEMA: &str = "urn:ietf:params:scim:api:messages:2.0:ListResponse";

pub fn router(app: AppState) -> Router<AppState> {
    Router::new()
        .route("/scim/v2/ServiceProviderConfig", get(discovery::service_provider_config))
        .route("/scim/v2/ResourceTypes", get(discovery::resource_types))
        .route("/scim/v2/ResourceTypes/{id}", get(discovery::resource_type))
        .route("/scim/v2/Schemas", get(discovery::schemas))
        .route("/scim/v2/Schemas/{id}", get(discovery::schema))
        .route("/scim/v2/.search", post(search_all))
        .route("/scim/v2/Users/.search", post(users::search))
        .route("/scim/v2/Groups/.search", post(groups::search))
        .route("/scim/v2/Groups", get(groups::list).post(group_writes::create))
        .route("/scim/v2/Groups/{id}", get(groups::one).put(group_writes::replace).patch(group_writes::modify).delete(group_writes::delete))
        .route("/scim/v2/Users", get(users::list).post(users::create))
        .route("/scim/v2/Users/{id}", get(users::one).put(users::replace).patch(users::modify).delete(users::delete))
        .route("/scim/v2/Bulk", post(not_yet))
        .route("/scim/v2/{*rest}", axum::routing::any(no_such_endpoint))
        .layer(axum::middleware::from_fn_with_state(app, require_provisioner))
}

/// A SCIM error response (RFC 7644 §3.12).
#[derive(Debug)]
pub struct ScimError {
    pub status: StatusCode,
    pub scim_type: Option<&'static str>,
    pub detail: String,
}

impl ScimError {
    pub fn new(status: StatusCode, scim_type: Option<&'static str>, detail: impl Into<String>) -> Self {
        ScimError { status, scim_type, detail: detail.into() }
    }

    pub fn bad(scim_type: &'static str, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, Some(scim_type), detail)
    }

    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, None, detail)
    }
}

impl From<crate::db::StoreError> for ScimError {
    fn from(e: crate::db::StoreError) -> Self {
        match e {
            // A login name (a userName, a primary e-mail address) another user has.
            crate::db::StoreError::Conflict(what) => ScimError::new(StatusCode::CONFLICT, Some("uniqueness"), what),
            e => {
                tracing::warn!(error = %e, "scim: store");
                ScimError::new(StatusCode::SERVICE_UNAVAILABLE, None, "the directory is not available; try again")
            }
        }
    }
}

/// An error of the operations the admin API shares (`endpoints::operations`), in SCIM's form.
impl From<crate::error::OAuthError> for ScimError {
    fn from(e: crate::error::OAuthError) -> Self {
        match e.status {
            StatusCode::CONFLICT => ScimError::new(StatusCode::CONFLICT, Some("uniqueness"), e.description),
            StatusCode::BAD_REQUEST => ScimError::bad("invalidValue", e.description),
            StatusCode::NOT_FOUND => ScimError::not_found(e.description),
            s if s.is_server_error() => ScimError::new(StatusCode::SERVICE_UNAVAILABLE, None, "the directory is not available; try again"),
            s => ScimError::new(s, None, e.description),
        }
    }
}

impl From<crate::scim::FilterError> for ScimError {
    fn from(e: crate::scim::FilterError) -> Self {
        ScimError::bad(e.scim_type.as_str(), e.detail)
    }
}

impl IntoResponse for ScimError {
    fn into_response(self) -> Response {
        let mut body = json!({"schemas": [ERROR_SCHEMA], "status": self.status.as_u16().to_string(), "detail": self.detail});
        if let Some(t) = self.scim_type {
            body["scimType"] = t.into();
        }
        let mut res = (self.status, scim_json(&body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            res.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"scim\""));
        }
        res
    }
}

/// A body as `application/scim+json`.
pub fn scim_json(v: &Value) -> Response {
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], serde_json::to_string(v).unwrap_or_default()).into_response()
}

/// The guard: the deployment's admin token, or a credential of this tenant with `scim` or
/// `admin` among its scopes. Read from the database at each request, as the admin API's, so
/// that a revoked credential is refused at once on every node.
async fn require_provisioner(app: Issuer, mut req: Request, next: Next) -> Response {
    let headers = req.headers();
    let deployment = app.config.admin_token.as_deref().filter(|t| !t.is_empty());
    if deployment.is_some_and(|expected| crate::http::bearer_matches(headers, expected)) {
        req.extensions_mut().insert(Actor::ApiToken);
        return next.run(req).await;
    }
    let presented = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "));
    let Some(token) = presented.filter(|t| t.starts_with(PREFIX)).map(str::to_string) else {
        return ScimError::new(StatusCode::UNAUTHORIZED, None, "a bearer credential is required").into_response();
    };
    let tenant = app.tenant.id;
    match app.db.read(move |sql| admin_credentials::authenticate(sql, tenant, &token)).await {
        Ok(Some(c)) if c.has_scope(admin_credentials::SCIM_SCOPE) || c.has_scope(admin_credentials::ADMIN_SCOPE) => {
            // Who made each change, for the audit log.
            req.extensions_mut().insert(Actor::Credential(c.id));
            next.run(req).await
        }
        Ok(Some(_)) => ScimError::new(StatusCode::FORBIDDEN, None, "this credential's scopes do not include scim").into_response(),
        Ok(None) => ScimError::new(StatusCode::UNAUTHORIZED, None, "unknown, revoked or expired credential for this tenant").into_response(),
        Err(e) => ScimError::from(e).into_response(),
    }
}

/// §3.4.3: a search at the service's root, over every resource type.
async fn search_all(app: Issuer, crate::http::params::Body(body): crate::http::params::Body) -> Result<Response, ScimError> {
    let q = query::Query::from_search(&body_json(&body)?)?;
    let filter = q.filter()?;
    let registry = app.registry();
    let (users, groups) = (registry.list_users(), registry.list_groups());
    let all = users.iter().map(|u| user_map::representation(&app, u)).chain(groups.iter().map(|g| groups::representation(&app, g)));
    q.answer(all, filter.as_ref())
}

async fn not_yet() -> ScimError {
    ScimError::new(StatusCode::NOT_IMPLEMENTED, None, "not supported yet by this service provider")
}

async fn no_such_endpoint() -> ScimError {
    ScimError::not_found("no such SCIM endpoint")
}

/// Whether an `If-Match` or `If-None-Match` list names `tag` (or is `*`).
fn etag_matches(list: &str, tag: &str) -> bool {
    list.split(',').any(|t| t.trim() == "*" || t.trim() == tag)
}

/// RFC 7644 §3.14: a request that names a version must name the current one (412 if not).
fn check_if_match(headers: &HeaderMap, tag: &str) -> Result<(), ScimError> {
    let Some(wanted) = headers.get(header::IF_MATCH).and_then(|v| v.to_str().ok()) else { return Ok(()) };
    match etag_matches(wanted, tag) {
        true => Ok(()),
        false => Err(ScimError::new(StatusCode::PRECONDITION_FAILED, None, "the resource has changed since that version")),
    }
}

/// One resource read (§3.4.1), with its `ETag`; 304 when `If-None-Match` names that tag.
fn read_one(headers: &HeaderMap, tag: &str, body: impl FnOnce() -> Value) -> Response {
    if headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()).is_some_and(|v| etag_matches(v, tag)) {
        return StatusCode::NOT_MODIFIED.into_response();
    }
    with_etag(scim_json(&body()), tag)
}

/// A resource written (§3.3, §3.5): 201 with its `Location` when `created`, else 200; its
/// `ETag` either way.
fn written(app: &Issuer, kind: &str, id: &str, created: bool, body: &Value, tag: &str) -> Response {
    let mut res = with_etag((if created { StatusCode::CREATED } else { StatusCode::OK }, scim_json(body)).into_response(), tag);
    if created {
        if let Ok(v) = HeaderValue::from_str(&location(app, kind, id)) {
            res.headers_mut().insert(header::LOCATION, v);
        }
    }
    res
}

fn with_etag(mut res: Response, tag: &str) -> Response {
    if let Ok(v) = HeaderValue::from_str(tag) {
        res.headers_mut().insert(header::ETAG, v);
    }
    res
}

fn body_json(body: &[u8]) -> Result<Value, ScimError> {
    serde_json::from_slice(body).map_err(|e| ScimError::bad("invalidSyntax", format!("not JSON: {e}")))
}

/// The URL of a resource of this tenant's service.
fn location(app: &Issuer, kind: &str, id: &str) -> String {
    app.endpoint(&format!("{BASE}/{kind}/{id}"))
}
