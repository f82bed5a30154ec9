//! The admin API's SAML service providers (issue 33): one registered from its metadata (the
//! XML, or a URL fetched through the public-address fetcher) as a client with `saml`
//! settings. Registering by fields, and every change after, is `/admin/clients` with a
//! `saml` object, as for any client.

use super::operations::{self, Actor};
use crate::error::OAuthError;
use crate::http::params::Body;
use crate::registry::ClientInput;
use crate::saml::sp_metadata::{self, ServiceProviderOptions};
use crate::tenant::Issuer;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};

pub fn routes() -> Router<crate::app::AppState> {
    Router::new().route("/admin/saml/service-providers", post(register))
}

/// A service provider by its metadata.
#[derive(serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ServiceProviderInput {
    /// The SP's metadata document (an `EntityDescriptor` with an `SPSSODescriptor`)...
    pub metadata: Option<String>,
    /// ... or where to fetch it (https; through the public-address fetcher).
    pub metadata_url: Option<String>,
    pub client_id: Option<String>,
    pub client_name: Option<String>,
    #[serde(flatten)]
    pub overrides: ServiceProviderOptions,
}

/// Register a SAML service provider from its metadata: a client whose `saml` settings the
/// metadata gives (entity ID, HTTP-POST ACS URLs, SLO URL, signing certificates,
/// `AuthnRequestsSigned`), with the operator's NameID format and attributes.
#[utoipa::path(post, path = "/admin/saml/service-providers", tag = "clients", operation_id = "register_saml_service_provider", request_body = ServiceProviderInput, responses((status = 201, description = "the client, with its `saml` settings", body = Object), (status = 400, description = "`invalid_client_metadata`: metadata that cannot be read or used, an entity ID registered already"), (status = 401, description = "no or a wrong admin token (`invalid_token`)")), security(("admin_token" = [])))]
pub(crate) async fn register(app: Issuer, actor: Actor, Body(body): Body) -> Result<Response, OAuthError> {
    let input: ServiceProviderInput = super::admin::parse(&body)?;
    let metadata = match (input.metadata, input.metadata_url) {
        (Some(xml), None) => xml,
        (None, Some(url)) => fetch(&app, &url).await?,
        _ => return Err(OAuthError::invalid_request("give metadata or metadata_url (one of them)")),
    };
    let limits = crate::saml::xml::Limits { max_message_bytes: app.config.saml_max_message_bytes, ..Default::default() };
    let sp = sp_metadata::service_provider(&metadata, &limits, input.overrides).map_err(operations::invalid_metadata)?;
    let client = ClientInput { client_id: input.client_id, client_name: input.client_name, saml: Some(sp), ..Default::default() };
    let (client, _) = operations::create_client(&app, &actor, client).await?;
    Ok((StatusCode::CREATED, Json(serde_json::to_value(&client.meta).unwrap_or_default())).into_response())
}

async fn fetch(app: &Issuer, url: &str) -> Result<String, OAuthError> {
    if !url.starts_with("https://") && !app.config.fetch_allow_private_addresses {
        return Err(OAuthError::invalid_request("metadata_url must be https"));
    }
    let (bytes, _) = app
        .fetcher
        .get_bytes(url, "application/samlmetadata+xml, application/xml, text/xml")
        .await
        .map_err(|e| operations::invalid_metadata(format!("metadata_url: {e}")))?;
    String::from_utf8(bytes.to_vec()).map_err(|_| operations::invalid_metadata("metadata_url: not UTF-8".into()))
}
