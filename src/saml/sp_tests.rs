use super::*;
use crate::keys::SigningKey;

fn cert_b64() -> String {
    let (key, _) = SigningKey::generate().unwrap();
    crate::saml::signer::of(&key).unwrap().cert_base64()
}

fn idp_metadata(sso: &str, cert: &str) -> String {
    format!(
        r#"<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="https://idp.example/idp">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="encryption"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>{cert}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>
{cert}
</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    {sso}
  </md:IDPSSODescriptor>
</md:EntityDescriptor>"#
    )
}

const POST_SSO: &str = r#"<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://idp.example/sso/post"/>"#;
const REDIRECT_SSO: &str = r#"<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.example/sso/redirect"/>"#;

fn provider(toml_extra: &str) -> IdentityProvider {
    toml::from_str(&format!("id = \"corp\"\nname = \"Corp\"\nkind = \"saml\"\n{toml_extra}")).unwrap()
}

#[test]
fn idp_metadata_gives_entity_id_sso_and_only_signing_certificates() {
    let cert = cert_b64();
    let md = idp_metadata(&format!("{POST_SSO}{REDIRECT_SSO}"), &cert);
    let m = xml::parse_idp_metadata(&md, &Limits::default()).unwrap();
    assert_eq!(m.entity_id, "https://idp.example/idp");
    assert_eq!(m.sso.len(), 2);
    assert_eq!(m.signing_certs.len(), 1, "the encryption key is not a signing key");
    assert_eq!(base64::engine::general_purpose::STANDARD.encode(&m.signing_certs[0]), cert);

    // Redirect preferred, POST when it is all there is.
    let p = provider(&format!("metadata = '''{md}'''"));
    let c = IdpConfig::of(&p).unwrap();
    assert_eq!((c.binding, c.sso_url.as_str(), c.sign_requests), (SsoBinding::Redirect, "https://idp.example/sso/redirect", true));
    let p = provider(&format!("metadata = '''{}'''\nsign_requests = false", idp_metadata(POST_SSO, &cert)));
    let c = IdpConfig::of(&p).unwrap();
    assert_eq!((c.binding, c.sso_url.as_str(), c.sign_requests), (SsoBinding::Post, "https://idp.example/sso/post", false));
    assert!(p.validate(0).is_ok());
}

#[test]
fn idp_metadata_refusals() {
    let cert = cert_b64();
    let l = Limits::default();
    let sp = r#"<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"><md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"/></md:EntityDescriptor>"#;
    assert!(xml::parse_idp_metadata(sp, &l).is_err(), "an SP's metadata");
    let no_cert = idp_metadata(POST_SSO, &cert).replace(r#"use="signing""#, r#"use="encryption""#);
    assert!(xml::parse_idp_metadata(&no_cert, &l).is_err(), "no signing certificate");
    let bad_cert = idp_metadata(POST_SSO, "bm90IGEgY2VydA==");
    assert!(xml::parse_idp_metadata(&bad_cert, &l).is_err(), "not X.509");
    let no_entity = idp_metadata(POST_SSO, &cert).replace(r#"entityID="https://idp.example/idp""#, "");
    assert!(xml::parse_idp_metadata(&no_entity, &l).is_err(), "no entityID");
    let two = idp_metadata(POST_SSO, &cert).replace("</md:EntityDescriptor>", r#"<md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"/></md:EntityDescriptor>"#);
    assert!(xml::parse_idp_metadata(&two, &l).is_err(), "two IDPSSODescriptors");
    let doctype = format!("<!DOCTYPE x [<!ENTITY e 'x'>]>{}", idp_metadata(POST_SSO, &cert));
    assert!(IdpConfig::of(&provider(&format!("metadata = '''{doctype}'''"))).is_err(), "a DTD");
    let no_sso = idp_metadata("", &cert);
    assert!(IdpConfig::of(&provider(&format!("metadata = '''{no_sso}'''"))).is_err(), "no SSO service");
}

#[test]
fn fields_instead_of_metadata() {
    let cert = cert_b64();
    let pem = format!("-----BEGIN CERTIFICATE-----\n{cert}\n-----END CERTIFICATE-----\n");
    let p = provider(&format!("entity_id = \"https://idp.example/idp\"\nsso_url = \"https://idp.example/sso\"\nsso_binding = \"post\"\ncertificates = [{pem:?}]"));
    let c = IdpConfig::of(&p).unwrap();
    assert_eq!((c.entity_id.as_str(), c.binding, c.certs_der.len()), ("https://idp.example/idp", SsoBinding::Post, 1));
    assert!(IdpConfig::of(&provider("entity_id = \"https://idp.example/idp\"\nsso_url = \"https://idp.example/sso\"")).is_err(), "no certificate");
    assert!(IdpConfig::of(&provider(&format!("entity_id = \"e\"\nsso_url = \"ftp://idp.example/sso\"\ncertificates = [{cert:?}]"))).is_err());
    assert!(provider("").validate(0).is_err());
}

/// The Redirect binding's signature is over the query as sent, and verifies with our
/// certificate by the verifier SPs' requests go through.
#[test]
fn a_redirect_request_is_signed_over_its_query() {
    let (key, _) = SigningKey::generate().unwrap();
    let signer = crate::saml::signer::of(&key).unwrap();
    let idp = IdpConfig { entity_id: "https://idp.example/idp".into(), sso_url: "https://idp.example/sso?tenant=a".into(), binding: SsoBinding::Redirect, certs_der: vec![], sign_requests: true };
    let xml = authn_request(&idp, "https://op.example", "_req1", 1_800_000_000, true).unwrap();
    let url = redirect_url(&idp.sso_url, &xml, "relay+/=state", Some(&signer)).unwrap();
    let query = url.split_once("?tenant=a&").unwrap().1;
    xml::verify_redirect_signature(query, &[signer.cert_der.clone()]).unwrap();
    let (other, _) = SigningKey::generate().unwrap();
    assert!(xml::verify_redirect_signature(query, &[crate::saml::signer::of(&other).unwrap().cert_der.clone()]).is_err());
    let request: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes()).into_owned().collect();
    assert_eq!(request[1], ("RelayState".to_string(), "relay+/=state".to_string()));
    let back = xml::decode_redirect(&request[0].1, &Limits::default()).unwrap();
    let r = xml::parse_authn_request(&back, &Limits::default()).unwrap();
    assert_eq!(r.id, "_req1");
    assert_eq!(r.issuer.as_deref(), Some("https://op.example/saml/sp"));
    assert_eq!(r.acs_url.as_deref(), Some("https://op.example/saml/acs"));
    assert_eq!(r.destination.as_deref(), Some("https://idp.example/sso?tenant=a"));
    assert_eq!(r.protocol_binding.as_deref(), Some(BINDING_POST));
    assert!(r.force_authn);
}

#[test]
fn a_post_request_is_signed_enveloped() {
    let (key, _) = SigningKey::generate().unwrap();
    let signer = crate::saml::signer::of(&key).unwrap();
    let idp = IdpConfig { entity_id: "e".into(), sso_url: "https://idp.example/sso".into(), binding: SsoBinding::Post, certs_der: vec![], sign_requests: true };
    let xml = authn_request(&idp, "https://op.example", "_req2", 1_800_000_000, false).unwrap();
    let signed = signed_enveloped(&signer, &xml, "_req2").unwrap();
    let reduced = xml::verified_root(&signed, &[signer.cert_der.clone()]).unwrap();
    assert_eq!(xml::parse_authn_request(&reduced, &Limits::default()).unwrap().id, "_req2");
    assert!(xml::parse_authn_request(&signed, &Limits::default()).unwrap().has_signature);
}

fn good() -> (IdpConfig, ResponseIn) {
    let idp = IdpConfig { entity_id: "https://idp.example/idp".into(), sso_url: "https://idp.example/sso".into(), binding: SsoBinding::Redirect, certs_der: vec![], sign_requests: true };
    let a = AssertionIn {
        id: "_a1".into(),
        issuer: idp.entity_id.clone(),
        name_id: "alice".into(),
        name_id_format: Some("urn:oasis:names:tc:SAML:2.0:nameid-format:persistent".into()),
        in_response_to: Some("_req".into()),
        recipient: Some("https://op.example/saml/acs".into()),
        confirmation_not_on_or_after: Some(1_000 + 300),
        not_before: Some(1_000 - 10),
        not_on_or_after: Some(1_000 + 300),
        audiences: vec!["https://op.example/saml/sp".into()],
        attributes: vec![("mail".into(), vec!["a@example.com".into()]), ("urn:oid:2.5.4.42".into(), vec!["Alice".into()]), ("upn".into(), vec!["alice@corp".into()])],
        ..Default::default()
    };
    let r = ResponseIn { id: "_r".into(), in_response_to: Some("_req".into()), destination: Some("https://op.example/saml/acs".into()), issuer: Some(idp.entity_id.clone()), status: SUCCESS.into(), sub_status: None, assertion: Some(a), assertion_encrypted: false };
    (idp, r)
}

#[test]
fn a_response_is_checked_against_the_request_and_the_clock() {
    let (idp, r) = good();
    let expect = |now: i64| Expect { idp: &idp, sp_entity_id: "https://op.example/saml/sp", acs_url: "https://op.example/saml/acs", request_id: "_req", now, skew: 120 };
    assert!(check(&r, &expect(1_000)).is_ok());
    assert!(check(&r, &expect(1_000 + 300 + 119)).is_ok(), "within the skew");
    assert!(check(&r, &expect(1_000 + 300 + 120)).unwrap_err().contains("expired"));
    assert!(check(&r, &expect(1_000 - 10 - 121)).unwrap_err().contains("NotBefore"));
    let altered: &[(&str, fn(&mut ResponseIn))] = &[
        ("answered", |r| r.status = "urn:oasis:names:tc:SAML:2.0:status:Responder".into()),
        ("Issuer", |r| r.assertion.as_mut().unwrap().issuer = "https://evil.example".into()),
        ("Issuer", |r| r.issuer = Some("https://evil.example".into())),
        ("Destination", |r| r.destination = Some("https://evil.example/acs".into())),
        ("Recipient", |r| r.assertion.as_mut().unwrap().recipient = None),
        ("InResponseTo", |r| r.assertion.as_mut().unwrap().in_response_to = Some("_other".into())),
        ("InResponseTo", |r| r.assertion.as_mut().unwrap().in_response_to = None),
        ("InResponseTo", |r| r.in_response_to = Some("_other".into())),
        ("Audience", |r| r.assertion.as_mut().unwrap().audiences = vec!["https://other.example".into()]),
        ("NotOnOrAfter", |r| r.assertion.as_mut().unwrap().confirmation_not_on_or_after = None),
        ("transient", |r| r.assertion.as_mut().unwrap().name_id_format = Some(NAMEID_TRANSIENT.into())),
    ];
    for (why, alter) in altered {
        let mut bad = r.clone();
        alter(&mut bad);
        let e = check(&bad, &expect(1_000)).unwrap_err();
        assert!(e.contains(why), "{why}: {e}");
    }
}

#[test]
fn attributes_become_claims_by_default_names_or_the_mapping() {
    let (_, r) = good();
    let a = r.assertion.unwrap();
    let c = claims(&a, &BTreeMap::new());
    assert_eq!(c.get("email"), Some(&Value::String("a@example.com".into())));
    assert_eq!(c.get("given_name"), Some(&Value::String("Alice".into())));
    assert!(c.get("name").is_none());
    let mapping = BTreeMap::from([("email".to_string(), "upn".to_string()), ("preferred_username".to_string(), "upn".to_string())]);
    let c = claims(&a, &mapping);
    assert_eq!(c.get("email"), Some(&Value::String("alice@corp".into())));
    assert_eq!(c.get("preferred_username"), Some(&Value::String("alice@corp".into())));
}

#[test]
fn sp_metadata_reads_back_as_what_an_idp_registers() {
    let cert = cert_b64();
    let md = metadata(vec![cert.clone()], vec![cert.clone()], "https://op.example", true).unwrap();
    let m = xml::parse_sp_metadata(&md, &Limits::default()).unwrap();
    assert_eq!(m.entity_id, "https://op.example/saml/sp");
    assert_eq!(m.acs, vec![(0, BINDING_POST.to_string(), "https://op.example/saml/acs".to_string(), true)]);
    assert_eq!(m.signing_certs.len(), 1);
    assert_eq!(m.encryption_certs.len(), 1, "{md}");
    // The algorithms we decrypt, named for the IdP to choose from.
    for alg in xml::ENCRYPTION_METHODS {
        assert!(md.contains(&format!(r#"EncryptionMethod Algorithm="{alg}""#)), "{alg} in {md}");
    }
    assert!(m.authn_requests_signed && m.want_assertions_signed);
}
