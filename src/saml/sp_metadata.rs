//! A service provider registered by its metadata (SAML Metadata §2.4.4): its entity ID,
//! HTTP-POST assertion consumer services, Single Logout address, signing certificates and
//! `AuthnRequestsSigned` become the client's `saml` settings; what metadata does not say
//! (attributes, which NameID of those it lists) the operator adds.

use super::xml::{self, Limits};
use crate::registry::clients::saml::{AssertionConsumerService, SamlAttribute, SamlServiceProvider, SloBinding, BINDING_POST, BINDING_SOAP, BINDING_REDIRECT, NAMEID_FORMATS, NAMEID_PERSISTENT};
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
    // Redirect first: the binding front-channel Single Logout uses most (a URL, no page of
    // ours in between); POST for an SP that offers only that.
    let slo = [(BINDING_REDIRECT, SloBinding::Redirect), (BINDING_POST, SloBinding::Post)]
        .into_iter()
        .find_map(|(urn, binding)| m.slo.iter().find(|(b, _)| b == urn).map(|(_, l)| (l.clone(), binding)));
    let name_id_format = o
        .name_id_format
        .or_else(|| m.name_id_formats.iter().find(|f| NAMEID_FORMATS.contains(&f.as_str())).cloned())
        .unwrap_or_else(|| NAMEID_PERSISTENT.into());
    let sp = SamlServiceProvider {
        entity_id: m.entity_id,
        acs,
        slo_url: slo.as_ref().map(|(url, _)| url.clone()),
        slo_binding: slo.map(|(_, b)| b).unwrap_or_default(),
        slo_soap_url: m.slo.iter().find(|(b, _)| b == BINDING_SOAP).map(|(_, l)| l.clone()),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::saml::xml::tests::{key_and_cert, metadata};

    const REDIRECT_SLO: &str = r#"<md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://sp.test/slo"/>"#;

    fn registered(metadata: &str) -> SamlServiceProvider {
        service_provider(metadata, &Limits::default(), ServiceProviderOptions::default()).unwrap()
    }

    #[test]
    fn single_logout_takes_the_redirect_binding_when_offered_else_post() {
        let (_, cert) = key_and_cert("sp");
        let redirect_only = metadata(&cert);
        let sp = registered(&redirect_only);
        assert_eq!((sp.slo_url.as_deref(), sp.slo_binding), (Some("https://sp.test/slo"), SloBinding::Redirect));

        let post = r#"<md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://sp.test/slo-post"/>"#;
        let sp = registered(&redirect_only.replace(REDIRECT_SLO, post));
        assert_eq!((sp.slo_url.as_deref(), sp.slo_binding), (Some("https://sp.test/slo-post"), SloBinding::Post));
        // Both, POST listed first: Redirect all the same.
        let sp = registered(&redirect_only.replace(REDIRECT_SLO, &format!("{post}{REDIRECT_SLO}")));
        assert_eq!((sp.slo_url.as_deref(), sp.slo_binding), (Some("https://sp.test/slo"), SloBinding::Redirect));
        // SOAP only: nothing to send by through the browser; the back channel's address.
        let soap = post.replace("HTTP-POST", "SOAP").replace("slo-post", "slo-soap");
        let sp = registered(&redirect_only.replace(REDIRECT_SLO, &soap));
        assert_eq!((sp.slo_url.as_deref(), sp.slo_soap_url.as_deref()), (None, Some("https://sp.test/slo-soap")));
        let sp = registered(&redirect_only.replace(REDIRECT_SLO, &format!("{soap}{REDIRECT_SLO}")));
        assert_eq!((sp.slo_url.as_deref(), sp.slo_soap_url.as_deref()), (Some("https://sp.test/slo"), Some("https://sp.test/slo-soap")));
    }

    #[test]
    fn the_binding_is_written_short_and_read_short_or_as_its_urn() {
        let (_, cert) = key_and_cert("sp");
        let mut sp = registered(&metadata(&cert));
        let json = serde_json::to_value(&sp).unwrap();
        assert!(json.get("slo_binding").is_none(), "the default is not written: {json}");
        sp.slo_binding = SloBinding::Post;
        let mut json = serde_json::to_value(&sp).unwrap();
        assert_eq!(json["slo_binding"], "post");
        assert_eq!(serde_json::from_value::<SamlServiceProvider>(json.clone()).unwrap(), sp);
        json["slo_binding"] = BINDING_POST.into();
        assert_eq!(serde_json::from_value::<SamlServiceProvider>(json.clone()).unwrap().slo_binding, SloBinding::Post);
        json["slo_binding"] = "urn:oasis:names:tc:SAML:2.0:bindings:SOAP".into();
        assert!(serde_json::from_value::<SamlServiceProvider>(json).is_err());
    }
}
