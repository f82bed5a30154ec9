//! A service provider registered by its metadata (SAML Metadata §2.4.4): its entity ID,
//! HTTP-POST assertion consumer services, Single Logout address, signing certificates and
//! `AuthnRequestsSigned` become the client's `saml` settings; what metadata does not say
//! (attributes, which NameID of those it lists) the operator adds.

use super::xml::{self, Limits};
use crate::registry::clients::saml::{AssertionConsumerService, SamlAttribute, SamlServiceProvider, BINDING_POST, BINDING_REDIRECT, NAMEID_FORMATS, NAMEID_PERSISTENT};
use base64::Engine as _;

/// What the operator says beside the metadata; each absent one is the metadata's or the
/// default.
#[derive(Debug, Clone, Default, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ServiceProviderOptions {
    pub name_id_format: Option<String>,
    pub attributes: Option<Vec<SamlAttribute>>,
    pub require_signed_requests: Option<bool>,
    pub sign_response: Option<bool>,
    /// Encrypt assertions to the metadata's encryption certificate (default: no).
    pub encrypt_assertions: Option<bool>,
    /// IdP-initiated SSO from the start page (default: off), landing at this RelayState.
    pub idp_initiated: Option<bool>,
    pub default_relay_state: Option<String>,
    /// Ask the user's consent before releasing attributes (default: no, as for an
    /// operator's own application).
    pub consent: Option<bool>,
}

pub fn service_provider(metadata: &str, limits: &Limits, o: ServiceProviderOptions) -> Result<SamlServiceProvider, String> {
    let m = xml::check_safe(metadata, limits).and_then(|_| xml::parse_sp_metadata(metadata, limits)).map_err(|e| format!("metadata: {e:?}"))?;
    let acs: Vec<AssertionConsumerService> = m
        .acs
        .iter()
        .filter(|(_, binding, _, _)| binding == BINDING_POST)
        .map(|(index, _, url, is_default)| AssertionConsumerService { index: *index, url: url.clone(), is_default: *is_default })
        .collect();
    if acs.is_empty() {
        return Err("metadata: no AssertionConsumerService with the HTTP-POST binding (the only one supported)".into());
    }
    // Redirect first: the binding front-channel Single Logout uses most.
    let slo = m.slo.iter().find(|(b, _)| b == BINDING_REDIRECT).or(m.slo.iter().find(|(b, _)| b == BINDING_POST)).map(|(_, l)| l.clone());
    let name_id_format = o
        .name_id_format
        .or_else(|| m.name_id_formats.iter().find(|f| NAMEID_FORMATS.contains(&f.as_str())).cloned())
        .unwrap_or_else(|| NAMEID_PERSISTENT.into());
    let sp = SamlServiceProvider {
        entity_id: m.entity_id,
        acs,
        slo_url: slo,
        signing_certificates: m.signing_certs.iter().map(|der| base64::engine::general_purpose::STANDARD.encode(der)).collect(),
        require_signed_requests: o.require_signed_requests.unwrap_or(m.authn_requests_signed),
        name_id_format,
        attributes: o.attributes.unwrap_or_default(),
        sign_response: o.sign_response.unwrap_or(true),
        encryption_certificates: m.encryption_certs.iter().map(|der| base64::engine::general_purpose::STANDARD.encode(der)).collect(),
        encrypt_assertions: o.encrypt_assertions.unwrap_or(false),
        idp_initiated: o.idp_initiated.unwrap_or(false),
        default_relay_state: o.default_relay_state,
        consent: o.consent.unwrap_or(false),
    };
    sp.validate()?;
    Ok(sp)
}
