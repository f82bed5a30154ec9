//! The HTTP shell around the endpoints: routing, middleware, and the server's life cycle.

pub mod client_auth;
pub mod cookies;
pub mod demo;
pub mod pages;
pub mod params;
pub mod server;

use crate::app::AppState;
use crate::endpoints::{admin, authorize, discovery, interaction, introspection, revocation, token, userinfo};
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

pub fn router(app: AppState) -> Router {
    let mut r = Router::new()
        .route("/.well-known/openid-configuration", get(discovery::openid_configuration))
        .route("/jwks", get(discovery::jwks))
        .route("/authorize", get(authorize::get).post(authorize::post))
        .route("/login", post(interaction::login))
        .route("/consent", post(interaction::consent))
        .route("/token", post(token::token))
        .route("/revoke", post(revocation::revoke))
        .route("/introspect", post(introspection::introspect))
        .route("/userinfo", get(userinfo::userinfo).post(userinfo::userinfo))
        .route("/healthz", get(discovery::healthz))
        .merge(admin::router(app.clone()));
    if app.config.demo {
        r = r.route("/demo/callback", get(demo::callback));
    }
    r.fallback(|| async { OAuthError::not_found("no such endpoint").into_response() })
        .method_not_allowed_fallback(|| async {
            OAuthError::invalid_request("method not allowed")
                .with_status(axum::http::StatusCode::METHOD_NOT_ALLOWED)
                .into_response()
        })
        .layer(DefaultBodyLimit::max(app.config.max_body_bytes))
        .layer(CatchPanicLayer::custom(|_| {
            tracing::error!("handler panicked");
            OAuthError::server_error("internal error").into_response()
        }))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(|req: &Request<_>| {
                    let id = req.headers().get("x-request-id").and_then(|v| v.to_str().ok()).unwrap_or("-");
                    // The path only: query strings can carry codes, hints and state.
                    tracing::info_span!("request", method = %req.method(), path = %req.uri().path(), request_id = %id)
                })
                .on_response(DefaultOnResponse::new().level(Level::DEBUG)),
        )
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(SetRequestIdLayer::x_request_id(RandomRequestId))
        .with_state(app)
}

#[derive(Clone, Copy)]
struct RandomRequestId;

impl MakeRequestId for RandomRequestId {
    fn make_request_id<B>(&mut self, _: &Request<B>) -> Option<RequestId> {
        let id = crate::util::b64(&crate::util::random_bytes::<12>());
        HeaderValue::from_str(&id).ok().map(RequestId::new)
    }
}
