//! SAML service providers in the console (issue 33): registered from their metadata, then
//! their SAML settings and sign-in policy changed on their own page. A SAML client's page is
//! this one, not the OpenID client form (whose grant types and redirect URIs it has none of).

use super::clients::enc;
use super::{checked, not_found, refused, text, Change, Viewer};
use crate::endpoints::first_party::see_other;
use crate::endpoints::operations;
use crate::registry::clients::saml::{SamlAttribute, SamlServiceProvider, NAMEID_FORMATS};
use crate::registry::{Client, ClientInput};
use crate::tenant::Issuer;
use crate::ui::{Msg, Page};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

/// The form's values: a client's settings, or what was typed.
fn values(c: &Client) -> Value {
    let sp = c.meta.saml.as_ref();
    json!({
        "client_id": c.meta.client_id, "client_name": c.meta.client_name,
        "entity_id": sp.map(|s| s.entity_id.as_str()), "acs": sp.map(|s| s.acs.iter().map(|a| a.url.as_str()).collect::<Vec<_>>()),
        "name_id_format": sp.map(|s| s.name_id_format.as_str()), "attributes": sp.map(|s| attribute_lines(&s.attributes)),
        "require_signed_requests": sp.is_some_and(|s| s.require_signed_requests), "encrypt_assertions": sp.is_some_and(|s| s.encrypt_assertions),
        "can_encrypt": sp.is_some_and(|s| !s.encryption_certificates.is_empty()), "idp_initiated": sp.is_some_and(|s| s.idp_initiated),
        "default_relay_state": sp.and_then(|s| s.default_relay_state.as_deref()), "sign_response": sp.is_none_or(|s| s.sign_response),
        "require_mfa": c.meta.require_mfa, "require_passkey": c.meta.require_passkey, "consent": sp.is_some_and(|s| s.consent),
    })
}

fn typed(params: &crate::http::params::Params) -> Value {
    json!({
        "client_name": text(params, "client_name"), "metadata": params.get("metadata").unwrap_or_default(),
        "name_id_format": text(params, "name_id_format"), "attributes": params.get("attributes").unwrap_or_default(),
        "require_signed_requests": checked(params, "require_signed_requests"), "encrypt_assertions": checked(params, "encrypt_assertions"),
        "idp_initiated": checked(params, "idp_initiated"), "default_relay_state": text(params, "default_relay_state"),
        "sign_response": checked(params, "sign_response"), "require_mfa": checked(params, "require_mfa"), "require_passkey": checked(params, "require_passkey"),
        "consent": checked(params, "consent"),
    })
}

fn attribute_lines(attrs: &[SamlAttribute]) -> String {
    attrs.iter().map(|a| format!("{}={}", a.name, a.claim)).collect::<Vec<_>>().join("\n")
}

/// `name=claim` lines; a line without `=` is the form's mistake.
fn attributes(params: &crate::http::params::Params) -> Result<Vec<SamlAttribute>, ()> {
    let text = params.get("attributes").unwrap_or_default();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| match l.split_once('=') {
            Some((name, claim)) if !name.trim().is_empty() => Ok(SamlAttribute { name: name.trim().into(), claim: claim.trim().into(), name_format: None, friendly_name: None }),
            _ => Err(()),
        })
        .collect()
}

pub(super) fn form_page(viewer: &Viewer, client: Value, new: bool) -> Page {
    let formats: Vec<Value> = NAMEID_FORMATS.iter().map(|f| json!({"value": f, "short": f.rsplit(':').next().unwrap_or(f)})).collect();
    viewer
        .page("console_saml.html", if new { "console-saml-new" } else { "console-client-title" }, "clients")
        .with("client", client)
        .with("new", new)
        .with("formats", formats)
        .with("claims", crate::registry::clients::saml::attribute_claims())
}

fn mistake(page: Page, field: &'static str, message: &'static str) -> Response {
    super::mistaken(page, (field, Msg::new(message)))
}

/// `GET /console/clients/new?type=saml`.
pub(super) fn new_form(viewer: &Viewer) -> Response {
    form_page(viewer, json!({"sign_response": true}), true).into_response()
}

/// `POST /console/saml`: a service provider from its metadata and the form's settings.
pub async fn create(app: Issuer, Change { admin, params }: Change) -> Response {
    let page = || form_page(&admin, typed(&params), true);
    let Ok(attributes) = attributes(&params) else { return mistake(page(), "attributes", "console-saml-attributes-bad") };
    let Some(metadata) = params.get("metadata").filter(|m| !m.trim().is_empty()) else {
        return mistake(page(), "metadata", "console-saml-metadata-missing");
    };
    let overrides = crate::saml::sp_metadata::ServiceProviderOptions {
        name_id_format: text(&params, "name_id_format"),
        attributes: Some(attributes),
        require_signed_requests: checked(&params, "require_signed_requests").then_some(true),
        sign_response: Some(checked(&params, "sign_response")),
        encrypt_assertions: Some(checked(&params, "encrypt_assertions")),
        idp_initiated: Some(checked(&params, "idp_initiated")),
        default_relay_state: text(&params, "default_relay_state"),
        consent: Some(checked(&params, "consent")),
    };
    let limits = crate::saml::xml::Limits { max_message_bytes: app.config.saml_max_message_bytes, ..Default::default() };
    let sp = match crate::saml::sp_metadata::service_provider(metadata, &limits, overrides) {
        Ok(sp) => sp,
        Err(e) => return refused(page(), &operations::invalid_metadata(e)),
    };
    let input = ClientInput {
        client_name: text(&params, "client_name"),
        require_mfa: Some(checked(&params, "require_mfa")),
        require_passkey: Some(checked(&params, "require_passkey")),
        saml: Some(sp),
        ..Default::default()
    };
    match operations::create_client(&app, &admin.actor(), input).await {
        Ok((client, _)) => see_other(app.base(), &format!("/console/clients/{}?done=saved", enc(client.id()))),
        Err(e) => refused(page(), &e),
    }
}

/// A SAML client's page: its settings, its roles (for the `roles` and `groups` attributes).
pub(super) fn edit_page(app: &Issuer, viewer: &Viewer, client: &Client) -> Page {
    form_page(viewer, values(client), false).with("roles", super::roles::rows(app, client.id()))
}

/// `POST /console/clients/{id}` of a SAML client: its settings changed, its metadata's
/// (entity ID, ACS URLs, certificates) kept.
pub(super) async fn update(app: &Issuer, admin: &Viewer, client: &Client, params: &crate::http::params::Params) -> Response {
    let Some(current) = client.meta.saml.clone() else { return not_found() };
    let entity_id = current.entity_id.clone();
    let page = || {
        let mut v = typed(params);
        v["client_id"] = client.id().into();
        v["entity_id"] = entity_id.clone().into();
        edit_page(app, admin, client).with("client", v)
    };
    let Ok(attributes) = attributes(params) else { return mistake(page(), "attributes", "console-saml-attributes-bad") };
    let sp = SamlServiceProvider {
        name_id_format: text(params, "name_id_format").unwrap_or(current.name_id_format.clone()),
        attributes,
        require_signed_requests: checked(params, "require_signed_requests"),
        encrypt_assertions: checked(params, "encrypt_assertions"),
        idp_initiated: checked(params, "idp_initiated"),
        default_relay_state: text(params, "default_relay_state"),
        sign_response: checked(params, "sign_response"),
        consent: checked(params, "consent"),
        ..current
    };
    let input = ClientInput {
        client_name: Some(text(params, "client_name").unwrap_or_default()),
        require_mfa: Some(checked(params, "require_mfa")),
        require_passkey: Some(checked(params, "require_passkey")),
        saml: Some(sp),
        ..Default::default()
    };
    match operations::update_client(app, &admin.actor(), client.id(), input).await {
        Ok(_) => see_other(app.base(), &format!("/console/clients/{}?done=saved", enc(client.id()))),
        Err(e) => refused(page(), &e),
    }
}
