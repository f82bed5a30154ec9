//! The SCIM 2.0 service (RFC 7643/7644; issue 32, slice 2) at `{issuer}/scim/v2` of each
//! tenant: a protocol front-end over the directory (`registry::directory`), the tenant
//! resolved as for every request, so that a tenant's SCIM sees only that tenant.
//!
//! Built so far: the discovery resources (`ServiceProviderConfig`, `ResourceTypes`,
//! `Schemas`) and `Groups`: read (one, or a list with `filter`, sorting, pagination and
//! `attributes`/`excludedAttributes`), created, replaced, patched and deleted. The `Users`
//! resource comes next (docs/design/directory.md); until then it answers 501, as RFC 7644
//! §3.12 has a service provider answer an operation it does not support.
//!
//! Who may call: a provisioning system holding one of the tenant's admin credentials with the
//! scope `scim` (made with `scopes: ["scim"]`, good for nothing else), or `admin`, or the
//! deployment's admin token. Errors are SCIM errors (§3.12): the error schema, `status` as a
//! string, `scimType` where the RFC names one, `detail`.

mod discovery;
mod group_writes;
mod groups;

use crate::app::AppState;
use crate::endpoints::operations::Actor;
use crate::registry::admin_credentials::{self, PREFIX};
use crate::tenant::Issuer;
use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
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
        .route("/scim/v2/Groups", get(groups::list).post(group_writes::create))
        .route("/scim/v2/Groups/{id}", get(groups::one).put(group_writes::replace).patch(group_writes::modify).delete(group_writes::delete))
        .route("/scim/v2/Users", get(not_yet).post(not_yet))
        .route("/scim/v2/Users/{id}", get(not_yet).put(not_yet).patch(not_yet).delete(not_yet))
        .route("/scim/v2/Bulk", axum::routing::post(not_yet))
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
        tracing::warn!(error = %e, "scim: store");
        ScimError::new(StatusCode::SERVICE_UNAVAILABLE, None, "the directory is not available; try again")
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

async fn not_yet() -> ScimError {
    ScimError::new(StatusCode::NOT_IMPLEMENTED, None, "not supported yet by this service provider")
}

async fn no_such_endpoint() -> ScimError {
    ScimError::not_found("no such SCIM endpoint")
}

/// The URL of a resource of this tenant's service.
fn location(app: &Issuer, kind: &str, id: &str) -> String {
    app.endpoint(&format!("{BASE}/{kind}/{id}"))
}
