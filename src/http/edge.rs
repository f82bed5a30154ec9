//! What every request passes through. Before routing, `Root`: the tenant it addresses
//! (`tenant::Tenants::resolve`, which takes a path tenant's `/t/{slug}` off the URI so that
//! the routes know nothing of tenants), put in the request's extensions for the `Issuer`
//! extractor. Then, as one tower layer on the routes, `Edge`: CORS (`cors`), the guarantee that API errors are OAuth JSON (`json_errors`), and the
//! rendering of pages (`ui::Page`) with the tenant's templates in the language the request's
//! `Accept-Language` prefers.
//!
//! Why a hand-written layer rather than two `axum::middleware::from_fn`s: each `from_fn` boxes
//! the request's future and clones a boxed inner service per request. Measured with callgrind,
//! the two cost userinfo about 11,700 instructions per request (2.7 % of all it executes, the
//! RS256 verification included) and about a tenth of its throughput under load. Here the
//! success path allocates nothing: the checks are synchronous, and only an error that must be
//! rewritten (its body read) takes a boxed future.

use super::{cors, json_errors};
use axum::Router;
use crate::app::AppState;
use crate::tenant::Tenant;
use std::sync::Arc;
use axum::extract::Request;
use axum::response::Response;
use pin_project_lite::pin_project;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tower::{Layer, Service};

#[derive(Clone)]
pub struct EdgeLayer {
    app: AppState,
}

impl EdgeLayer {
    pub fn new(app: AppState) -> Self {
        Self { app }
    }
}

impl<S> Layer<S> for EdgeLayer {
    type Service = Edge<S>;

    fn layer(&self, inner: S) -> Edge<S> {
        Edge { inner, app: self.app.clone() }
    }
}

#[derive(Clone)]
pub struct Edge<S> {
    inner: S,
    app: AppState,
}

/// What the response needs from its request.
struct Policy {
    browser_page: bool,
    /// The SCIM service (`/scim/…`), whose errors are SCIM errors (RFC 7644 §3.12).
    scim: bool,
    cors: Option<cors::Pending>,
    /// Where pages are answered: the tenant (for its templates and base path) and the
    /// reader's languages. Only there, so that API requests pay nothing for it.
    pages: Option<(Arc<Tenant>, Option<axum::http::HeaderValue>)>,
}

impl Policy {
    fn finish(self, mut res: Response) -> Response {
        if let Some(page) = res.extensions_mut().remove::<crate::ui::Page>() {
            if let Some((tenant, accept)) = &self.pages {
                res = tenant.ui.render(res, page, accept.as_ref().and_then(|v| v.to_str().ok()), &tenant.base);
            }
        }
        match self.cors {
            Some(pending) => cors::decorate(pending, res),
            None => res,
        }
    }
}

impl<S> Service<Request> for Edge<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = EdgeFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        // Put there by `Root`, before routing; a request that reached the router otherwise is
        // a bug of ours, answered as the default tenant's (whose routes it was matched to).
        let tenant = req.extensions().get::<Arc<Tenant>>().cloned().unwrap_or_else(|| self.app.tenants.default_tenant().clone());
        let cors = match cors::before(&self.app, tenant.id, &req) {
            Ok(pending) => pending,
            Err(preflight) => return EdgeFuture::Ready { res: Some(preflight) },
        };
        let path = req.uri().path();
        let browser_page = json_errors::answers_pages(path, req.headers());
        let pages = (browser_page || path == "/").then(|| (tenant.clone(), req.headers().get(axum::http::header::ACCEPT_LANGUAGE).cloned()));
        let scim = path.starts_with("/scim/");
        let policy = Policy { browser_page, scim, cors, pages };
        EdgeFuture::Inner { fut: self.inner.call(req), policy: Some(policy) }
    }
}

type Rewrite = Pin<Box<dyn Future<Output = Response> + Send>>;

pin_project! {
    #[project = EdgeProj]
    pub enum EdgeFuture<F> {
        Ready { res: Option<Response> },
        Inner { #[pin] fut: F, policy: Option<Policy> },
        Rewriting { fut: Rewrite, policy: Option<Policy> },
    }
}

impl<F> Future for EdgeFuture<F>
where
    F: Future<Output = Result<Response, Infallible>>,
{
    type Output = Result<Response, Infallible>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            let next = match self.as_mut().project() {
                EdgeProj::Ready { res } => return Poll::Ready(Ok(res.take().expect("polled after completion"))),
                EdgeProj::Inner { fut, policy } => {
                    let Ok(res) = ready!(fut.poll(cx));
                    let policy = policy.take().expect("polled after completion");
                    let needed = match policy.scim {
                        true => json_errors::needs_scim_rewrite(&res),
                        false => json_errors::needs_rewrite(policy.browser_page, &res),
                    };
                    if !needed {
                        return Poll::Ready(Ok(policy.finish(res)));
                    }
                    EdgeFuture::Rewriting { fut: Box::pin(json_errors::rewrite(res, policy.scim)), policy: Some(policy) }
                }
                EdgeProj::Rewriting { fut, policy } => {
                    let res = ready!(fut.as_mut().poll(cx));
                    return Poll::Ready(Ok(policy.take().expect("polled after completion").finish(res)));
                }
            };
            self.set(next);
        }
    }
}

/// The service connections hand requests to: the tenant resolved (and a path tenant's prefix
/// taken off the URI) before the router matches a route. A slug no active tenant has is left
/// in the path, so that no route matches it and the router's fallback answers 404 (a page or
/// JSON, as for any unknown path): never the default tenant's endpoint by chance.
#[derive(Clone)]
pub struct Root {
    app: AppState,
    router: Router,
}

impl Root {
    pub fn new(app: AppState, router: Router) -> Self {
        Self { app, router }
    }
}

impl Service<Request> for Root {
    type Response = Response;
    type Error = Infallible;
    type Future = <Router as Service<Request>>::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Service::<Request>::poll_ready(&mut self.router, cx)
    }

    fn call(&mut self, mut req: Request) -> Self::Future {
        let tenant = self.app.tenants.resolve(&mut req).unwrap_or_else(|| self.app.tenants.default_tenant().clone());
        req.extensions_mut().insert(tenant);
        self.router.call(req)
    }
}
