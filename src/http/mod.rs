//! The HTTP shell around the endpoints: routing, middleware, and the server's life cycle.

pub mod account_pages;
pub mod connections;
pub mod cookies;
pub mod cors;
pub mod demo;
pub mod edge;
pub mod fetch;
pub mod json_errors;
pub mod pages;
pub mod params;
pub mod sealed;
pub mod server;
pub mod user_agent;
pub mod client_cert;

use crate::app::AppState;
use crate::endpoints::{account, admin, authorize, passkey_login, discovery, end_session, interaction, introspection, par, registration, revocation, second_factor, token, userinfo};
use crate::error::OAuthError;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderValue, Request};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::Router;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{MakeRequestId, PropagateRequestIdLayer, RequestId, SetRequestIdLayer};
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use tracing::Level;

/// Every route, behind the tenant resolver (`edge::Root`).
pub fn root(app: AppState) -> edge::Root {
    edge::Root::new(app.clone(), router(app))
}

pub fn router(app: AppState) -> Router {
    let mut r = Router::new()
        .route("/.well-known/openid-configuration", get(discovery::openid_configuration))
        .route("/.well-known/openid-configuration/{*issuer_path}", get(discovery::openid_configuration_path_inserted))
        .route("/.well-known/oauth-authorization-server", get(discovery::authorization_server_metadata))
        .route("/.well-known/oauth-authorization-server/{*issuer_path}", get(discovery::authorization_server_metadata))
        .route("/jwks", get(discovery::jwks))
        .route("/authorize", get(authorize::get).post(authorize::post))
        .route("/login", post(interaction::login))
        .route("/login/second-factor", post(second_factor::verify))
        .route("/login/passkey", post(passkey_login::login))
        .route("/login/select", post(interaction::select_account))
        .route("/login/organization", post(authorize::choose_organization))
        .route("/login/upstream", post(crate::endpoints::upstream_login::from_login))
        .route(crate::endpoints::signup::SIGNUP, get(crate::endpoints::signup::page).post(crate::endpoints::signup::submit))
        .route(crate::endpoints::signup::VERIFY, get(crate::endpoints::signup::verify_page).post(crate::endpoints::signup::verify))
        .route(crate::endpoints::password_reset::FORGOT, get(crate::endpoints::password_reset::forgot_page).post(crate::endpoints::password_reset::forgot))
        .route(crate::endpoints::password_reset::RESET, get(crate::endpoints::password_reset::reset_page).post(crate::endpoints::password_reset::reset))
        .route(crate::endpoints::upstream_login::CALLBACK, get(crate::endpoints::upstream_login::callback))
        .route("/login/upstream/{id}/jwks", get(crate::endpoints::upstream_login::assertion_jwks))
        .route("/", get(landing))
        .route("/assets/{name}", get(asset))
        .route("/consent", get(interaction::consent_page).post(interaction::consent))
        .route("/logout", get(end_session::get).post(end_session::post))
        .route(crate::endpoints::check_session::PATH, get(crate::endpoints::check_session::iframe))
        .route("/logout/confirm", post(end_session::confirm))
        .route(end_session::UPSTREAM_RETURN, get(end_session::upstream_return))
        .route(crate::saml::SSO_PATH, get(crate::endpoints::saml::sso::get).post(crate::endpoints::saml::sso::post))
        .route(crate::saml::SLO_PATH, get(crate::endpoints::saml::slo::get).post(crate::endpoints::saml::slo::post))
        .route(crate::endpoints::saml::slo_out::POST_PATH, get(crate::endpoints::saml::slo_out::post))
        .route(crate::saml::METADATA_PATH, get(crate::endpoints::saml::metadata::get))
        .route("/saml/start/{client}", get(crate::endpoints::saml::sso::initiate))
        .route(crate::saml::sp::ACS_PATH, post(crate::endpoints::saml::acs::post))
        .route(crate::saml::sp::SP_METADATA_PATH, get(crate::endpoints::saml::acs::metadata))
        .route("/token", post(token::token))
        .route("/par", post(par::par))
        .route(crate::endpoints::device_authorization::PATH, post(crate::endpoints::device_authorization::device_authorization))
        .route(crate::endpoints::ciba::PATH, post(crate::endpoints::ciba::backchannel_authentication))
        .route("/revoke", post(revocation::revoke))
        .route("/introspect", post(introspection::introspect))
        .route("/userinfo", get(userinfo::userinfo).post(userinfo::userinfo))
        .route("/healthz", get(discovery::healthz))
        .route("/admin/openapi.json", get(crate::endpoints::admin_openapi::serve))
        .route("/metrics", get(metrics))
        .merge(registration::router())
        .merge(account::router())
        .merge(crate::endpoints::device::router())
        .merge(crate::endpoints::organization_invitations::router())
        .merge(crate::endpoints::console::router(&app))
        .merge(crate::endpoints::scim::router(app.clone()))
        .merge(admin::router(app.clone()));
    if app.config.demo {
        r = r.route(demo::PAGE, get(demo::page)).route(demo::START, get(demo::start)).route(demo::CALLBACK, get(demo::callback));
    }
    // A browser route answers a page, whatever went wrong (an odd method, an odd path under
    // /account or /console); an API route, an OAuth JSON error.
    let console = app.config.console;
    r.fallback(move |method: axum::http::Method, uri: axum::http::Uri, headers: axum::http::HeaderMap, extensions: axum::http::Extensions| async move {
        let path = uri.path();
        // The tenant's base path, for the redirects below (resolved by the edge layer).
        let base = extensions.get::<std::sync::Arc<crate::tenant::Tenant>>().map(|t| t.base.as_str()).unwrap_or_default();
        if !json_errors::answers_pages(path, &headers) {
            return OAuthError::not_found("no such endpoint").into_response();
        }
        // `/admin` typed in the address bar: the admin API is for programs; people have the console.
        if matches!(path, "/admin" | "/admin/") && console && method == axum::http::Method::GET {
            return axum::response::Redirect::to(&format!("{base}/console")).into_response();
        }
        // `/account/` or `/console/users/` typed in the address bar: the page without the slash.
        if method == axum::http::Method::GET && path.len() > 1 && path.ends_with('/') {
            let to = match uri.query() {
                Some(q) => format!("{}?{q}", path.trim_end_matches('/')),
                None => path.trim_end_matches('/').to_string(),
            };
            if !to.is_empty() && !to.starts_with("//") {
                return axum::response::Redirect::permanent(&format!("{base}{to}")).into_response();
            }
        }
        pages::error_page(axum::http::StatusCode::NOT_FOUND, "err-not-found")
    })
    .method_not_allowed_fallback(|method: axum::http::Method, uri: axum::http::Uri, headers: axum::http::HeaderMap| async move {
        let path = uri.path();
        if !json_errors::answers_pages(path, &headers) {
            return OAuthError::invalid_request("method not allowed").with_status(axum::http::StatusCode::METHOD_NOT_ALLOWED).into_response();
        }
        // A form's address opened directly (Enter in the address bar after a wrong password,
        // a bookmark, Reload after the form was sent): say where sign-in starts.
        if method == axum::http::Method::GET && is_form_only(path) {
            return pages::form_only_page();
        }
        pages::error_page(axum::http::StatusCode::METHOD_NOT_ALLOWED, "err-method")
    })
        .layer(DefaultBodyLimit::max(app.config.max_body_bytes))
        // CORS and JSON errors, inside `track` so that the error metrics count what it answers.
        .layer(edge::EdgeLayer::new(app.clone()))
        .layer(axum::middleware::from_fn(track))
        .layer(CatchPanicLayer::custom(|_| {
            tracing::error!("handler panicked");
            OAuthError::server_error("internal error").into_response()
        }))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(|req: &Request<_>| {
                    let id = req.headers().get("x-request-id").and_then(|v| v.to_str().ok()).unwrap_or("-");
                    // The path only: query strings can carry codes, hints and state. The path is
                    // the tenant's (its `/t/{slug}` taken off by `edge::Root`): the tenant says whose.
                    let tenant = req.extensions().get::<std::sync::Arc<crate::tenant::Tenant>>().map_or("-", |t| t.slug.as_str());
                    tracing::info_span!("request", method = %req.method(), path = %req.uri().path(), tenant = %tenant, request_id = %id)
                })
                .on_response(DefaultOnResponse::new().level(Level::DEBUG)),
        )
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(SetRequestIdLayer::x_request_id(RandomRequestId))
        .with_state(app)
}

/// Browser routes that only take a form's POST: opened with GET, they answer
/// `pages::form_only_page`.
fn is_form_only(path: &str) -> bool {
    matches!(path, "/login" | "/login/second-factor" | "/login/passkey" | "/login/select" | "/login/organization" | "/login/upstream")
}

/// The pages' style sheet, logo and scripts (`ui`).
async fn asset(app: crate::tenant::Issuer, axum::extract::Path(name): axum::extract::Path<String>) -> axum::response::Response {
    app.tenant.ui.asset(&name)
}

/// `GET /`: a small page that says what this is and links on.
async fn landing(app: crate::tenant::Issuer) -> axum::response::Response {
    pages::landing(&app)
}

/// Duration, CPU time and OAuth errors of every request, by endpoint (and grant type).
async fn track(req: axum::extract::Request, next: axum::middleware::Next) -> axum::response::Response {
    use crate::metrics::{CpuTimed, EndpointLabels, ErrorLabels, RequestLabels, METRICS};
    let endpoint = endpoint_label(req.uri().path());
    let start = std::time::Instant::now();
    let (res, cpu) = CpuTimed::new(next.run(req), crate::metrics::request_cpu_sample_due(start)).await;
    let grant_type = res.extensions().get::<token::GrantTypeLabel>().map(|g| g.0).unwrap_or("");
    let status = res.status().as_u16();
    METRICS.request_duration.get_or_create(&RequestLabels { endpoint, grant_type, status }).observe(start.elapsed().as_secs_f64());
    // The series exists from an endpoint's first request, sampled or not.
    let request_cpu = METRICS.request_cpu.get_or_create(&EndpointLabels { endpoint, grant_type });
    if let Some(cpu) = cpu {
        request_cpu.observe(cpu.as_secs_f64());
    }
    if let Some(code) = res.extensions().get::<crate::error::ErrorCode>() {
        METRICS.errors.get_or_create(&ErrorLabels { endpoint, error: code.0 }).inc();
    }
    res
}

/// A fixed label per route, so that arbitrary paths cannot grow the label set.
fn endpoint_label(path: &str) -> &'static str {
    match path {
        "/authorize" => "authorize",
        "/saml/sso" => "saml_sso",
        "/saml/acs" => "saml_acs",
        "/saml/slo" => "saml_slo",
        "/login" | "/login/second-factor" => "login",
        "/consent" => "consent",
        "/logout" | "/logout/confirm" => "end_session",
        "/token" => "token",
        "/userinfo" => "userinfo",
        "/revoke" => "revoke",
        "/introspect" => "introspect",
        "/device_authorization" => "device_authorization",
        "/backchannel" => "backchannel_authentication",
        "/device" | "/device/decide" => "device",
        "/jwks" => "jwks",
        p if p.starts_with(discovery::OPENID_CONFIGURATION) || p.starts_with(discovery::AS_METADATA) => "discovery",
        "/healthz" => "healthz",
        "/metrics" => "metrics",
        p if p.starts_with("/admin/") => "admin",
        p if p.starts_with("/test/") => "test",
        _ => "other",
    }
}

async fn metrics(app: crate::tenant::Issuer, headers: axum::http::HeaderMap) -> axum::response::Response {
    use crate::metrics::{StoreLabels, METRICS};
    if let Some(expected) = app.config.metrics_token.as_deref().filter(|t| !t.is_empty()) {
        if !bearer_matches(&headers, expected) {
            return OAuthError::invalid_token("metrics token required").with_challenge(crate::error::Challenge::Bearer).into_response();
        }
    }
    for (store, lens) in app.stores.shard_lens() {
        for (shard, n) in lens.into_iter().enumerate() {
            METRICS.store_entries.get_or_create(&StoreLabels { store, shard: shard as u32 }).set(n as i64);
        }
    }
    let mut res = crate::metrics::render().into_response();
    res.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
    );
    res
}

/// Whether the request's `Authorization: Bearer` token equals `expected` (constant time):
/// the check behind the operator tokens (admin API, metrics).
pub fn bearer_matches(headers: &axum::http::HeaderMap, expected: &str) -> bool {
    let presented = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    crate::util::ct_eq(presented.as_bytes(), expected.as_bytes())
}

#[derive(Clone, Copy)]
struct RandomRequestId;

impl MakeRequestId for RandomRequestId {
    fn make_request_id<B>(&mut self, _: &Request<B>) -> Option<RequestId> {
        let id = crate::util::b64(&crate::util::unique_random::<12>());
        HeaderValue::from_str(&id).ok().map(RequestId::new)
    }
}
