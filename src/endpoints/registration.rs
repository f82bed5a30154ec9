//! Dynamic client registration (RFC 7591, OpenID Connect Dynamic Registration 1.0) at
//! `POST /register`, and client configuration (RFC 7592) at `/register/{client_id}` with the
//! registration access token issued at registration.
//!
//! Who may register: holders of an initial access token from the operator (spent in the
//! transaction that saves the client), or anyone when `open_registration` is on. What they
//! may ask for is the operator's policy (`registration_*` settings); the metadata rules are
//! the admin API's (`registry::clients`), with RFC 7591's error codes. Open registration is
//! limited per client address (`registration_max_per_address`), and a registered client never
//! issued tokens is deleted after `registration_unused_client_ttl` (`expire_unused_clients`).

use crate::app::{App, AppState};
use crate::audit::AuditEvent;
use crate::endpoints::authorize::response_type;
use crate::error::{Challenge, OAuthError};
use crate::http::params::Body;
use crate::registry::clients::{self, Client, ClientInput, AUTH_BASIC};
use crate::registry::Registered;
use crate::tenant::Issuer;
use crate::util::split_list;
use crate::util::now;
use axum::extract::{ConnectInfo, Path};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};
use std::net::SocketAddr;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/register", post(register))
        .route("/register/{client_id}", axum::routing::get(read).put(update).delete(delete))
}

/// The metadata a client may send (RFC 7591 §2, OIDC Dynamic Registration §2). Fields we do
/// not know are ignored (RFC 7591 §2); fields we know but cannot honour are refused.
#[derive(Debug, Default, Deserialize)]
struct Registration {
    client_id: Option<String>,
    client_secret: Option<String>,
    redirect_uris: Option<Vec<String>>,
    token_endpoint_auth_method: Option<String>,
    grant_types: Option<Vec<String>>,
    response_types: Option<Vec<String>>,
    client_name: Option<String>,
    client_uri: Option<String>,
    logo_uri: Option<String>,
    tos_uri: Option<String>,
    policy_uri: Option<String>,
    contacts: Option<Vec<String>>,
    scope: Option<String>,
    jwks: Option<Value>,
    jwks_uri: Option<String>,
    application_type: Option<String>,
    default_acr_values: Option<Vec<String>>,
    token_endpoint_auth_signing_alg: Option<String>,
    request_object_signing_alg: Option<String>,
    require_signed_request_object: Option<bool>,
    request_uris: Option<Vec<String>>,
    initiate_login_uri: Option<String>,
    /// JARM §3.
    authorization_signed_response_alg: Option<String>,
    /// JARM §3: checked with the rest of the metadata (`clients::validate`).
    authorization_encrypted_response_alg: Option<String>,
    authorization_encrypted_response_enc: Option<String>,
    require_pushed_authorization_requests: Option<bool>,
    dpop_bound_access_tokens: Option<bool>,
    /// RFC 8705 §2.1.2 and §3.4 (checked with the rest: `clients::validate`).
    tls_client_auth_subject_dn: Option<String>,
    tls_client_auth_san_dns: Option<String>,
    tls_client_auth_san_uri: Option<String>,
    tls_client_auth_san_ip: Option<String>,
    tls_client_auth_san_email: Option<String>,
    tls_client_certificate_bound_access_tokens: Option<bool>,
    post_logout_redirect_uris: Option<Vec<String>>,
    backchannel_logout_uri: Option<String>,
    backchannel_logout_session_required: Option<bool>,
    frontchannel_logout_uri: Option<String>,
    frontchannel_logout_session_required: Option<bool>,
    backchannel_token_delivery_mode: Option<String>,
    backchannel_client_notification_endpoint: Option<String>,
    backchannel_user_code_parameter: Option<bool>,
    backchannel_authentication_request_signing_alg: Option<String>,
    software_statement: Option<String>,
    subject_type: Option<String>,
    sector_identifier_uri: Option<String>,
    id_token_signed_response_alg: Option<String>,
    userinfo_signed_response_alg: Option<String>,
    id_token_encrypted_response_alg: Option<String>,
    id_token_encrypted_response_enc: Option<String>,
    userinfo_encrypted_response_alg: Option<String>,
    userinfo_encrypted_response_enc: Option<String>,
    introspection_signed_response_alg: Option<String>,
    introspection_encrypted_response_alg: Option<String>,
    introspection_encrypted_response_enc: Option<String>,
    request_object_encryption_alg: Option<String>,
    request_object_encryption_enc: Option<String>,
}

fn invalid_metadata(msg: impl Into<std::borrow::Cow<'static, str>>) -> OAuthError {
    OAuthError::invalid_request(msg).code_as("invalid_client_metadata")
}

fn invalid_redirect_uri(msg: impl Into<std::borrow::Cow<'static, str>>) -> OAuthError {
    OAuthError::invalid_request(msg).code_as("invalid_redirect_uri")
}

impl Registration {
    fn parse(body: &[u8]) -> Result<Self, OAuthError> {
        let value: Value = serde_json::from_slice(body).map_err(|e| invalid_metadata(format!("the body is not JSON: {e}")))?;
        if !value.is_object() {
            return Err(invalid_metadata("the body must be a JSON object of client metadata"));
        }
        serde_json::from_value(value).map_err(|e| invalid_metadata(e.to_string()))
    }

    /// The metadata as the admin API's input, after the operator's policy. Every field is
    /// set (RFC 7592 §2.2: an update replaces the registration; omitted fields are reset).
    fn into_input(self, app: &Issuer) -> Result<ClientInput, OAuthError> {
        if self.software_statement.is_some() {
            return Err(OAuthError::invalid_request("software statements from no issuer are trusted here")
                .code_as("unapproved_software_statement"));
        }
        let unsupported = |name: &str, value: &Option<String>, allowed: &[&str]| match value {
            Some(v) if !allowed.contains(&v.as_str()) => Err(invalid_metadata(format!("{name} {v:?} is not supported"))),
            _ => Ok(()),
        };
        unsupported("id_token_signed_response_alg", &self.id_token_signed_response_alg, app.keys().algorithms())?;
        unsupported("userinfo_signed_response_alg", &self.userinfo_signed_response_alg, app.keys().algorithms())?;
        unsupported("introspection_signed_response_alg", &self.introspection_signed_response_alg, app.keys().algorithms())?;
        // JARM §3: `none` is not allowed; only what the server signs with is.
        unsupported("authorization_signed_response_alg", &self.authorization_signed_response_alg, app.keys().algorithms())?;

        let config = &app.config;
        let grant_types = self.grant_types.unwrap_or_else(|| vec!["authorization_code".into()]);
        let response_types = self.response_types.unwrap_or_else(|| vec!["code".into()]);
        let method = self.token_endpoint_auth_method.unwrap_or_else(|| AUTH_BASIC.into());
        for g in &grant_types {
            if !split_list(&config.registration_grant_types).any(|a| a == g) {
                return Err(invalid_metadata(format!("grant type {g:?} is not open to registered clients")));
            }
        }
        // RFC 7591 §2.1: the grant and response types must agree (the implicit grant is open
        // only where `registration_grant_types` names it).
        if let Some(why) = response_type::registration_refusal(&response_types, &grant_types) {
            return Err(invalid_metadata(why));
        }
        let code_grant = grant_types.iter().any(|g| g == "authorization_code");
        if code_grant != response_types.iter().filter_map(|r| response_type::ResponseType::parse(r)).any(|t| t.has_code()) {
            return Err(invalid_metadata("grant_types authorization_code and a response_type with code go together"));
        }

        if !split_list(&config.registration_auth_methods).any(|m| m == method) {
            return Err(invalid_metadata(format!("token_endpoint_auth_method {method:?} is not open to registered clients")));
        }
        let redirect_uris = self.redirect_uris.unwrap_or_default();
        if (code_grant || grant_types.iter().any(|g| g == response_type::IMPLICIT_GRANT)) && redirect_uris.is_empty() {
            return Err(invalid_redirect_uri("redirect_uris is required for the authorization code grant"));
        }
        for uri in &redirect_uris {
            clients::validate_redirect_uri(uri).map_err(invalid_redirect_uri)?;
        }
        // Scopes beyond the policy are dropped, never refused (RFC 7591 §2 lets the server
        // narrow them, and §3.2.1's answer says what was registered). The policy is
        // `registration_scopes` and the registered resource servers' scopes, as for
        // metadata-document clients (issue 36: an MCP client registers with the scope its
        // server's challenge named). When nothing requested is open, the client is registered
        // as if it had named no scope: with `registration_scopes`, which the answer's `scope`
        // then says.
        let open = crate::resources::open_to_self_registered(app);
        let kept: Vec<&str> = self.scope.as_deref().map(|s| split_list(s).filter(|x| open.iter().any(|a| a == x)).collect()).unwrap_or_default();
        let scope = if kept.is_empty() { config.registration_scopes.clone() } else { kept.join(" ") };
        let text = |v: Option<String>| Some(v.unwrap_or_default());
        Ok(ClientInput {
            client_id: None,
            client_name: text(self.client_name),
            redirect_uris: Some(redirect_uris),
            grant_types: Some(grant_types),
            response_types: Some(response_types),
            token_endpoint_auth_method: Some(method),
            scope: Some(scope),
            // Authrim's own extensions (token exchange targets, CORS origins) are the
            // operator's to grant, not a self-registered client's to take.
            allowed_audiences: Some(vec![]),
            allowed_resources: Some(vec![]),
            token_exchange: None,
            allowed_cors_origins: Some(vec![]),
            post_logout_redirect_uris: Some(self.post_logout_redirect_uris.unwrap_or_default()),
            backchannel_logout_uri: text(self.backchannel_logout_uri),
            backchannel_logout_session_required: Some(self.backchannel_logout_session_required.unwrap_or(false)),
            backchannel_token_delivery_mode: text(self.backchannel_token_delivery_mode),
            backchannel_client_notification_endpoint: text(self.backchannel_client_notification_endpoint),
            backchannel_user_code_parameter: Some(self.backchannel_user_code_parameter.unwrap_or(false)),
            backchannel_authentication_request_signing_alg: text(self.backchannel_authentication_request_signing_alg),
            frontchannel_logout_uri: text(self.frontchannel_logout_uri),
            frontchannel_logout_session_required: Some(self.frontchannel_logout_session_required.unwrap_or(false)),
            jwks: Some(self.jwks.unwrap_or_else(|| json!({"keys": []}))),
            jwks_uri: text(self.jwks_uri),
            token_endpoint_auth_signing_alg: text(self.token_endpoint_auth_signing_alg),
            require_pushed_authorization_requests: Some(self.require_pushed_authorization_requests.unwrap_or(false)),
            authorization_signed_response_alg: text(self.authorization_signed_response_alg),
            authorization_encrypted_response_alg: text(self.authorization_encrypted_response_alg),
            authorization_encrypted_response_enc: text(self.authorization_encrypted_response_enc),
            request_object_encryption_alg: text(self.request_object_encryption_alg),
            request_object_encryption_enc: text(self.request_object_encryption_enc),
            request_object_signing_alg: text(self.request_object_signing_alg),
            require_signed_request_object: Some(self.require_signed_request_object.unwrap_or(false)),
            request_uris: Some(self.request_uris.unwrap_or_default()),
            dpop_bound_access_tokens: Some(self.dpop_bound_access_tokens.unwrap_or(false)),
            tls_client_auth_subject_dn: text(self.tls_client_auth_subject_dn),
            tls_client_auth_san_dns: text(self.tls_client_auth_san_dns),
            tls_client_auth_san_uri: text(self.tls_client_auth_san_uri),
            tls_client_auth_san_ip: text(self.tls_client_auth_san_ip),
            tls_client_auth_san_email: text(self.tls_client_auth_san_email),
            tls_client_certificate_bound_access_tokens: Some(self.tls_client_certificate_bound_access_tokens.unwrap_or(false)),
            subject_type: text(self.subject_type),
            sector_identifier_uri: text(self.sector_identifier_uri),
            id_token_signed_response_alg: text(self.id_token_signed_response_alg),
            userinfo_signed_response_alg: text(self.userinfo_signed_response_alg),
            // Checked with the rest of the metadata (`clients::validate`).
            id_token_encrypted_response_alg: text(self.id_token_encrypted_response_alg),
            id_token_encrypted_response_enc: text(self.id_token_encrypted_response_enc),
            userinfo_encrypted_response_alg: text(self.userinfo_encrypted_response_alg),
            userinfo_encrypted_response_enc: text(self.userinfo_encrypted_response_enc),
            introspection_signed_response_alg: text(self.introspection_signed_response_alg),
            introspection_encrypted_response_alg: text(self.introspection_encrypted_response_alg),
            introspection_encrypted_response_enc: text(self.introspection_encrypted_response_enc),
            access_token_signing_alg: Some(String::new()),
            initiate_login_uri: text(self.initiate_login_uri),
            client_uri: text(self.client_uri),
            logo_uri: text(self.logo_uri),
            tos_uri: text(self.tos_uri),
            policy_uri: text(self.policy_uri),
            contacts: Some(self.contacts.unwrap_or_default()),
            application_type: text(self.application_type),
            default_acr_values: Some(self.default_acr_values.unwrap_or_default()),
            // Which groups a client learns of is the operator's to decide.
            groups_claim: None,
            groups_assigned_only: None,
            groups_prefixes: None,
            groups_claim_name: None,
            roles_claim_name: None,
            // Whether sign-ins need a second factor is the operator's to decide.
            require_mfa: None,
            require_passkey: None,
            // Whether a client is for organizations only is the operator's to decide.
            organization_required: None,
            refresh_reuse_grace: None,
            security_profile: None,
            // SAML service providers are the operator's to register (admin API, CLI, console).
            saml: None,
        })
    }
}

/// RFC 7591 §3.2.1 / RFC 7592 §3: the client's metadata, its secret when just issued, and
/// where and with what token it manages its registration.
fn information(app: &Issuer, client: &Client, secret: Option<String>, registration_token: &str) -> Value {
    let mut v = serde_json::to_value(&client.meta).unwrap_or_default();
    if let Some(s) = secret {
        v["client_secret"] = Value::String(s);
        v["client_secret_expires_at"] = json!(0);
    }
    v["registration_access_token"] = Value::String(registration_token.to_string());
    v["registration_client_uri"] = Value::String(app.endpoint(&format!("/register/{}", client.id())));
    v
}

fn no_store(status: StatusCode, body: Value) -> Response {
    let mut res = (status, Json(body)).into_response();
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = v.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}

fn invalid_token(description: &'static str) -> OAuthError {
    OAuthError::invalid_token(description).with_challenge(Challenge::Bearer)
}

async fn register(app: Issuer, ConnectInfo(peer): ConnectInfo<SocketAddr>, headers: HeaderMap, Body(body): Body) -> Response {
    let address = super::interaction::client_address(&app, &headers, peer);
    match handle_register(&app, &address, &headers, &body).await {
        Ok(res) => res,
        Err(e) => e.into_response(),
    }
}

async fn handle_register(app: &Issuer, address: &str, headers: &HeaderMap, body: &[u8]) -> Result<Response, OAuthError> {
    let initial_token = bearer(headers).map(str::to_string);
    let bad_token = || invalid_token("the initial access token is not valid (unknown, expired or used up)");
    match &initial_token {
        None if !app.config.open_registration => {
            return Err(OAuthError::invalid_token("registration needs an initial access token").with_challenge(Challenge::BearerBare))
        }
        Some(t) => {
            let (tenant, t) = (app.tenant.id, t.clone());
            if !app.db.read(move |sql| crate::registry::initial_access::usable(sql, tenant, &t)).await? {
                return Err(bad_token());
            }
        }
        None => {
            // Open registration: every attempt counts against its address, so that one
            // address cannot fill `registration_max_clients` and close registration to all.
            // (A holder of an initial access token was let in by the operator.)
            let Some(attempt) = app.registration_limiter.begin(&format!("register:{address}"), address, now()) else {
                return Err(OAuthError::temporarily_unavailable("too many registrations from this address; try again later")
                    .with_status(StatusCode::TOO_MANY_REQUESTS));
            };
            attempt.failed(now());
        }
    }
    let input = Registration::parse(body)?.into_input(app)?;
    let (mut client, secret) = clients::new_client(input, app.vault()).map_err(|e| {
        if e.starts_with("redirect URI") { invalid_redirect_uri(e) } else { invalid_metadata(e) }
    })?;
    super::operations::check_algs(app, &client)?;
    super::admin::check_remote_uris(app, &client).await?;
    let registration_token = client.issue_registration_token();
    match app.registry().register_client(client.clone(), initial_token, app.config.registration_max_clients).await? {
        Registered::Saved => {}
        Registered::BadToken => return Err(bad_token()),
        Registered::Full => return Err(OAuthError::temporarily_unavailable("no more clients can register here")),
    }
    app.audit(AuditEvent::new("client_registered").client(client.id()).address(address)).await;
    Ok(no_store(StatusCode::CREATED, information(app, &client, secret, &registration_token)))
}

/// Delete the dynamically registered clients never issued tokens at `/token` within
/// `registration_unused_client_ttl` of their registration: what open registration lets
/// anyone create does not stay forever, nor hold `registration_max_clients` against those
/// who register to sign users in. Each deletion is audited.
pub async fn expire_unused_clients(app: &App) {
    match app.registry.expire_unused_clients(app.config.registration_unused_client_ttl).await {
        Ok(ids) => {
            for (tenant, id) in ids {
                let detail = json!({"reason": "unused", "ttl": app.config.registration_unused_client_ttl});
                app.audit.record(AuditEvent::new("client_expired").tenant(tenant).client(&id).detail(detail)).await;
            }
        }
        Err(e) => tracing::warn!(error = %e, "cannot expire unused registered clients"),
    }
}

/// The client the registration access token is for, if it is that client's.
fn authorized(app: &Issuer, headers: &HeaderMap, client_id: &str) -> Result<(std::sync::Arc<Client>, String), OAuthError> {
    let token = bearer(headers).ok_or_else(|| OAuthError::invalid_token("a registration access token is required").with_challenge(Challenge::BearerBare))?;
    // An unknown client and a wrong token look the same.
    let client = app.registry().client(client_id).filter(|c| c.check_registration_token(token)).ok_or_else(|| invalid_token("invalid registration access token"))?;
    Ok((client, token.to_string()))
}

async fn read(app: Issuer, headers: HeaderMap, Path(client_id): Path<String>) -> Response {
    match authorized(&app, &headers, &client_id) {
        Ok((client, token)) => no_store(StatusCode::OK, information(&app, &client, None, &token)),
        Err(e) => e.into_response(),
    }
}

async fn update(app: Issuer, headers: HeaderMap, Path(client_id): Path<String>, Body(body): Body) -> Response {
    let result = async {
        let (existing, token) = authorized(&app, &headers, &client_id)?;
        let registration = Registration::parse(&body)?;
        // RFC 7592 §2.2: the body names the client, and a secret in it must be the current one.
        if registration.client_id.as_deref() != Some(existing.id()) {
            return Err(OAuthError::invalid_request("client_id in the body must be the client's"));
        }
        if registration.client_secret.as_deref().is_some_and(|s| !existing.check_secret(s)) {
            return Err(OAuthError::invalid_request("client_secret does not match the client's"));
        }
        let input = registration.into_input(&app)?;
        let (client, secret) = clients::update_client(&existing, input, app.vault()).map_err(|e| {
            if e.starts_with("redirect URI") { invalid_redirect_uri(e) } else { invalid_metadata(e) }
        })?;
        super::operations::check_algs(&app, &client)?;
        super::admin::check_remote_uris(&app, &client).await?;
        if let Some(uri) = &existing.meta.jwks_uri {
            app.client_keys.forget(uri);
        }
        app.registry().save_client(client.clone()).await?;
        Ok(no_store(StatusCode::OK, information(&app, &client, secret, &token)))
    }
    .await;
    result.unwrap_or_else(IntoResponse::into_response)
}

async fn delete(app: Issuer, headers: HeaderMap, Path(client_id): Path<String>) -> Response {
    let result = async {
        let (client, _) = authorized(&app, &headers, &client_id)?;
        app.registry().delete_client(client.id()).await?;
        app.audit(AuditEvent::new("client_unregistered").client(client.id())).await;
        let mut res = StatusCode::NO_CONTENT.into_response();
        res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        Ok::<_, OAuthError>(res)
    }
    .await;
    result.unwrap_or_else(IntoResponse::into_response)
}
