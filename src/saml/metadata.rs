//! The tenant's IdP metadata (SAML Metadata §2.4.3): its entity ID, the certificate of each
//! RSA key that signs or is about to (rollover: an SP that reads the metadata before a
//! rotation already trusts the next key), the certificate of each RSA encryption key (active
//! and next, as issue 33 asks of IdP metadata; the same keys our SP metadata offers for
//! assertions; nothing an SP sends our IdP is decrypted yet: an `EncryptedID` is refused),
//! where to send AuthnRequests and logout messages (both bindings),
//! the NameID formats it issues. Signed by the current key, valid for `VALID_FOR`.

use super::signer::{self, Signer};
use super::SamlError;
use crate::keys::KeyManager;
use crate::registry::clients::saml::{BINDING_POST, BINDING_REDIRECT, NAMEID_FORMATS};
use chrono::{TimeZone, Utc};
use samael::key_info::{KeyInfo, X509Data};
use samael::metadata::{EncryptionMethod, Endpoint, EntityDescriptor, IdpSsoDescriptor, KeyDescriptor};
use samael::traits::ToXml as _;
use std::sync::Arc;

/// How long a metadata document is valid (`validUntil`); it is made again well before.
pub const VALID_FOR: u64 = 7 * 86_400;
const PROTOCOL: &str = "urn:oasis:names:tc:SAML:2.0:protocol";

/// The signed metadata document of the issuer `issuer`, made at `now`.
pub fn document(keys: &KeyManager, issuer: &str, now: u64) -> Result<String, SamlError> {
    let all = signer::all(keys)?;
    let current = all.iter().find(|(signs, _)| *signs).map(|(_, s)| s.clone()).ok_or(SamlError::NoKey)?;
    let certs: Vec<Arc<Signer>> = all.into_iter().map(|(_, s)| s).collect();
    let encryption = signer::encryption_certs(keys)?;
    let id = super::new_id();
    let sso = format!("{issuer}{}", super::SSO_PATH);
    let slo = format!("{issuer}{}", super::SLO_PATH);
    let descriptor = IdpSsoDescriptor {
        protocol_support_enumeration: Some(PROTOCOL.into()),
        key_descriptors: certs
            .iter()
            .map(|s| KeyDescriptor {
                key_use: Some("signing".into()),
                key_info: KeyInfo { id: None, x509_data: Some(X509Data { certificates: vec![s.cert_base64()] }) },
                encryption_methods: None,
            })
            .chain(encryption.iter().map(|s| encryption_descriptor(s.cert_base64())))
            .collect(),
        name_id_formats: NAMEID_FORMATS.iter().map(|f| f.to_string()).collect(),
        want_authn_requests_signed: Some(false),
        single_sign_on_services: [BINDING_REDIRECT, BINDING_POST]
            .iter()
            .map(|b| Endpoint { binding: b.to_string(), location: sso.clone(), response_location: None })
            .collect(),
        // Profiles §4.4: LogoutRequests and LogoutResponses from SPs, by either binding.
        single_logout_services: [BINDING_REDIRECT, BINDING_POST]
            .iter()
            .map(|b| Endpoint { binding: b.to_string(), location: slo.clone(), response_location: None })
            .collect(),
        ..empty_descriptor()
    };
    let entity = EntityDescriptor {
        entity_id: Some(super::entity_id(issuer)), // an XML attribute: escaped by samael
        id: None, // written below
        valid_until: Utc.timestamp_opt((now + VALID_FOR) as i64, 0).single(),
        idp_sso_descriptors: Some(vec![descriptor]),
        ..Default::default()
    };
    let mut xml = entity.to_string().map_err(|e| SamlError::Internal(format!("metadata: {e}")))?;
    // SAML Metadata §2.3.2: the signature is the root's first child.
    const ROOT: &str = "<md:EntityDescriptor";
    let root = xml.find(ROOT).ok_or_else(|| SamlError::Internal("metadata without its root".into()))?;
    // samael writes no `ID` on an EntityDescriptor: the signature's reference needs one (ours,
    // an NCName of URL-safe characters: nothing to escape).
    xml.insert_str(root + ROOT.len(), &format!(" ID=\"{id}\""));
    let after = root + xml[root..].find('>').ok_or_else(|| SamlError::Internal("metadata root unterminated".into()))? + 1;
    xml.insert_str(after, &current.template(&id)?);
    current.sign(&xml)
}

/// A `KeyDescriptor use="encryption"` for the certificate `cert_base64`, naming the algorithms
/// we decrypt (Metadata §2.4.1.1: a sender picks among them), strongest first.
pub fn encryption_descriptor(cert_base64: String) -> KeyDescriptor {
    KeyDescriptor {
        key_use: Some("encryption".into()),
        key_info: KeyInfo { id: None, x509_data: Some(X509Data { certificates: vec![cert_base64] }) },
        encryption_methods: Some(super::xml::ENCRYPTION_METHODS.iter().map(|a| EncryptionMethod { algorithm: a.to_string() }).collect()),
    }
}

fn empty_descriptor() -> IdpSsoDescriptor {
    IdpSsoDescriptor {
        id: None,
        valid_until: None,
        cache_duration: None,
        protocol_support_enumeration: None,
        error_url: None,
        signature: None,
        key_descriptors: vec![],
        organization: None,
        contact_people: vec![],
        artifact_resolution_service: vec![],
        single_logout_services: vec![],
        manage_name_id_services: vec![],
        name_id_formats: vec![],
        want_authn_requests_signed: None,
        single_sign_on_services: vec![],
        name_id_mapping_services: vec![],
        assertion_id_request_services: vec![],
        attribute_profiles: vec![],
        attributes: vec![],
    }
}
