//! OpenID Connect Discovery 1.0 §3 metadata, the same document as OAuth 2.0 Authorization
//! Server Metadata (RFC 8414, for OAuth-only clients such as MCP clients), and the JWKS
//! document. Only what is implemented is advertised: grant types come from the grant registry,
//! scopes and claims from the registry.

use crate::client_auth::keys::{ASYMMETRIC_ALGS, HMAC_ALGS};
use crate::endpoints::authorize::response_type::{IMPLICIT_GRANT, RESPONSE_TYPES};
use crate::profile::FAPI2_AUTH_METHODS;
use crate::registry::clients::{AUTH_METHODS, AUTH_NONE, AUTH_SELF_SIGNED_TLS, AUTH_TLS, SUPPORTED_SCOPES};
use crate::registry::users::supported_claims;
use crate::tenant::Issuer;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use serde_json::json;

pub async fn openid_configuration(app: Issuer) -> Response {
    cached_json(metadata(&app).to_string(), "public, max-age=300")
}

/// RFC 8414 §3: `/.well-known/oauth-authorization-server`, with the issuer's path (if any)
/// inserted after it (`/.well-known/oauth-authorization-server/tenant` for an issuer
/// `https://host/tenant`). The document is the OpenID one: RFC 8414 §5 lets both carry the
/// same metadata, and one source keeps them consistent.
pub async fn authorization_server_metadata(app: Issuer, uri: axum::http::Uri) -> Response {
    path_inserted(&app, &uri, AS_METADATA)
}

/// OpenID's name with the issuer's path inserted after it, as RFC 8414 does with its own
/// (`/.well-known/openid-configuration/t/acme` for the issuer `https://host/t/acme`).
/// OpenID Connect Discovery appends the path instead (`/t/acme/.well-known/…`, the route
/// above), but the MCP authorization specification has its clients try this form second,
/// after RFC 8414's: a client that skips or cannot reach the first must not be told there is
/// no such issuer. Only with the issuer's path: at the root the plain route answers.
pub async fn openid_configuration_path_inserted(app: Issuer, uri: axum::http::Uri) -> Response {
    path_inserted(&app, &uri, OPENID_CONFIGURATION)
}

pub const AS_METADATA: &str = "/.well-known/oauth-authorization-server";
pub const OPENID_CONFIGURATION: &str = "/.well-known/openid-configuration";

/// The metadata at `name` followed by the issuer's path; any other path after `name` is
/// another issuer's, not here (404).
fn path_inserted(app: &Issuer, uri: &axum::http::Uri, name: &str) -> Response {
    let suffix = uri.path().strip_prefix(name).unwrap_or_default();
    if suffix != issuer_path(app) {
        return crate::error::OAuthError::not_found("no authorization server with this issuer here").into_response();
    }
    cached_json(metadata(app).to_string(), "public, max-age=300")
}

/// The issuer's path, without a trailing slash ("" for an issuer at the host's root).
fn issuer_path(app: &Issuer) -> String {
    url::Url::parse(app.issuer()).map(|u| u.path().trim_end_matches('/').to_string()).unwrap_or_default()
}

fn metadata(app: &Issuer) -> serde_json::Value {
    let profile = app.profile();
    let jwt_algs: Vec<&str> = ASYMMETRIC_ALGS.iter().chain(HMAC_ALGS).copied().filter(|a| profile.allows_alg(a)).collect();
    // What a client may ask its signed answers in (ID tokens list RS256 always: below).
    let signing_algs: Vec<&str> = app.keys().algorithms().iter().copied().filter(|a| profile.allows_alg(a)).collect();
    // FAPI 2.0 §5.3.2.1, FAPI 1.0 Part 2 §5.2.2 item 14: private_key_jwt or mTLS only
    // (Authrim's own pages are not listed clients); the mTLS methods only where certificates
    // reach us (`mtls`).
    let mtls = app.config.mtls;
    let auth_methods: Vec<&str> = AUTH_METHODS
        .iter()
        .copied()
        .filter(|m| !profile.is_fapi() || FAPI2_AUTH_METHODS.contains(m))
        .filter(|m| mtls || (*m != AUTH_TLS && *m != AUTH_SELF_SIGNED_TLS))
        .collect();
    let mut doc = json!({
        "issuer": app.issuer(),
        "authorization_endpoint": app.endpoint("/authorize"),
        "token_endpoint": app.endpoint("/token"),
        "userinfo_endpoint": app.endpoint("/userinfo"),
        "jwks_uri": app.endpoint("/jwks"),
        "revocation_endpoint": app.endpoint("/revoke"),
        "revocation_endpoint_auth_methods_supported": &auth_methods,
        "introspection_endpoint": app.endpoint("/introspect"),
        // Introspection is for confidential clients (resource servers) only.
        "introspection_endpoint_auth_methods_supported": auth_methods.iter().filter(|m| **m != AUTH_NONE).collect::<Vec<_>>(),
        "token_endpoint_auth_signing_alg_values_supported": &jwt_algs,
        "revocation_endpoint_auth_signing_alg_values_supported": &jwt_algs,
        "introspection_endpoint_auth_signing_alg_values_supported": &jwt_algs,
        "scopes_supported": SUPPORTED_SCOPES.iter().copied()
            .chain(app.tenant.resource_servers.iter().flat_map(|rs| rs.scopes.keys().map(String::as_str)))
            .collect::<std::collections::BTreeSet<_>>(),
        // FAPI 2.0 §5.3.2.2 (and fapi-ciba's code flow): code only; elsewhere the hybrid and
        // implicit types too, which clients use only if they registered them.
        "response_types_supported": if profile.is_fapi() { &RESPONSE_TYPES[..1] } else { RESPONSE_TYPES },
        "response_modes_supported": crate::endpoints::authorize::response::RESPONSE_MODES,
        "grant_types_supported": grant_types(app),
        "subject_types_supported": ["public", "pairwise"],
        // OpenID Connect Discovery §3: RS256 MUST be listed, so it stays under FAPI 2.0 (which
        // signs nothing with it: `tokens::id_token_alg`, `profile::refusal`).
        "id_token_signing_alg_values_supported": app.keys().algorithms(),
        "userinfo_signing_alg_values_supported": &signing_algs,
        "token_endpoint_auth_methods_supported": &auth_methods,
        "code_challenge_methods_supported": ["S256"],
        "claims_supported": supported_claims().into_iter()
            .chain(["iss", "aud", "exp", "iat", "auth_time", "nonce", "acr", "amr", "azp", "sid", "at_hash", "c_hash"])
            .collect::<Vec<_>>(),
        "claims_parameter_supported": true,
        "request_parameter_supported": true,
        "request_object_signing_alg_values_supported": crate::endpoints::authorize::request_object_algorithms().into_iter().filter(|a| profile.allows_alg(a)).collect::<Vec<_>>(),
        "request_uri_parameter_supported": true,
        "require_request_uri_registration": true,
        "prompt_values_supported": ["none", "login", "consent", "select_account"],
        "ui_locales_supported": app.tenant.ui.languages(),
        "acr_values_supported": crate::factors::ACR_VALUES
            .iter()
            .filter(|a| app.tenant.passkeys.is_some() || **a != crate::factors::ACR_PASSKEY)
            .collect::<Vec<_>>(),
        "authorization_response_iss_parameter_supported": true,
        "end_session_endpoint": app.endpoint("/logout"),
        "pushed_authorization_request_endpoint": app.endpoint("/par"),
        "dpop_signing_alg_values_supported": app.dpop.algs,
        "registration_endpoint": app.endpoint("/register"),
        "require_pushed_authorization_requests": app.config.require_pushed_authorization_requests || profile.is_fapi(),
        "backchannel_logout_supported": true,
        "backchannel_logout_session_supported": true,
        "frontchannel_logout_supported": true,
        "frontchannel_logout_session_supported": true,
        // draft-ietf-oauth-client-id-metadata-document §5.
        "client_id_metadata_document_supported": app.config.document_policy() != crate::config::agents::DocumentPolicy::Off,
    });
    // OpenID Connect Session Management 1.0 §3.3 (outside the literal: json! nests too deep).
    doc["check_session_iframe"] = app.endpoint(crate::endpoints::check_session::PATH).into();
    // RFC 8705 §3.3 and §5: certificate-bound tokens, and where clients present certificates
    // (the same endpoints: Authrim asks every TLS client for one, or its proxy forwards it).
    if mtls {
        doc["tls_client_certificate_bound_access_tokens"] = true.into();
        let mut aliases = serde_json::Map::new();
        for (name, path) in MTLS_ENDPOINTS {
            aliases.insert(name.to_string(), app.endpoint(path).into());
        }
        doc["mtls_endpoint_aliases"] = aliases.into();
    }
    // RFC 8628 §4.
    doc["device_authorization_endpoint"] = app.endpoint(crate::endpoints::device_authorization::PATH).into();
    // CIBA Core §4: poll, ping and push (not under FAPI: FAPI-CIBA §5.2.2); signed requests
    // with asymmetric algorithms; user codes.
    doc["backchannel_authentication_endpoint"] = app.endpoint(crate::endpoints::ciba::PATH).into();
    let modes = crate::endpoints::ciba::DELIVERY_MODES.iter().filter(|m| !profile.is_fapi() || **m != "push");
    doc["backchannel_token_delivery_modes_supported"] = modes.copied().collect::<Vec<_>>().into();
    doc["backchannel_authentication_request_signing_alg_values_supported"] = crate::endpoints::ciba::signed::algorithms(app).into();
    doc["backchannel_user_code_parameter_supported"] = true.into();
    // JARM §4: what `authorization_signed_response_alg` may name.
    doc["authorization_signing_alg_values_supported"] = signing_algs.into();
    // RFC 9701 §7: introspection answers as JWTs, signed with what userinfo may be.
    doc["introspection_signing_alg_values_supported"] = doc["userinfo_signing_alg_values_supported"].clone();
    // OpenID Connect Discovery §3, RFC 9701 §7, JARM §4: what ID tokens, userinfo and
    // introspection answers and JARM responses can be encrypted with (`keys::jwe`), to the
    // client's keys; and what request objects may be encrypted with, to ours (an RSA key
    // takes both RSA-OAEP algs, the P-256 key every ECDH-ES one).
    for what in ["id_token", "userinfo", "introspection", "authorization", "request_object"] {
        doc[format!("{what}_encryption_alg_values_supported")] = crate::keys::jwe::KEY_ALGS.into();
        doc[format!("{what}_encryption_enc_values_supported")] = crate::keys::jwe::CONTENT_ENCS.into();
    }
    doc
}

/// The endpoints a client authenticates at, or presents a bound token to (RFC 8705 §5).
const MTLS_ENDPOINTS: [(&str, &str); 7] = [
    ("token_endpoint", "/token"),
    ("revocation_endpoint", "/revoke"),
    ("introspection_endpoint", "/introspect"),
    ("userinfo_endpoint", "/userinfo"),
    ("pushed_authorization_request_endpoint", "/par"),
    ("device_authorization_endpoint", crate::endpoints::device_authorization::PATH),
    ("backchannel_authentication_endpoint", crate::endpoints::ciba::PATH),
];

/// The token endpoint's grants, and `implicit` where its response types are offered.
fn grant_types(app: &Issuer) -> Vec<&'static str> {
    let mut names = app.grants.names();
    if !app.profile().is_fapi() {
        names.push(IMPLICIT_GRANT);
    }
    names
}

pub async fn jwks(app: Issuer) -> Response {
    let mut res = cached_json(app.keys().jwks_json().to_string(), "public, max-age=300");
    res.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/jwk-set+json"));
    res
}

fn cached_json(body: String, cache: &'static str) -> Response {
    let mut res = body.into_response();
    res.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    res.headers_mut().insert("access-control-allow-origin", HeaderValue::from_static("*"));
    res
}

/// 200 when this node can serve everything; 503 while a PostgreSQL node is out of step with
/// the others (a load balancer then sends its traffic elsewhere).
pub async fn healthz(app: Issuer) -> Response {
    if app.is_ready() {
        axum::Json(json!({"status": "ok"})).into_response()
    } else {
        let body = axum::Json(json!({"status": "unavailable", "reason": "not in step with the database"}));
        (axum::http::StatusCode::SERVICE_UNAVAILABLE, body).into_response()
    }
}
