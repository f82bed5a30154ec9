//! The XML boundary of SAML (issue 33 item 3): every SAML message that comes in is decoded,
//! bounded, checked for DTDs and depth, and only then parsed; every signature is verified
//! against the certificates configured for its sender (never one from `KeyInfo`), and what is
//! then read is what the signature covers (the signature-wrapping defence). No samael type
//! leaves this module: callers get plain structs.
//!
//! `safe` reads the raw bytes (base64, DEFLATE, DTDs, depth, a quick-xml scan of the shape);
//! `verify` checks signatures and what they cover; `read` maps samael's types to ours.

mod decrypt;
mod read;
mod safe;
mod verify;
pub mod xmlsec_errors;
#[cfg(test)]
pub(in crate::saml) mod tests;
#[cfg(test)]
mod decrypt_tests;

/// Bounds on what is read (settings: `saml_max_message_bytes`).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The most bytes of XML a message may be, after base64 and after inflating.
    pub max_message_bytes: usize,
    /// The deepest element nesting accepted.
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_message_bytes: 64 * 1024, max_depth: 32 }
    }
}

/// Why a message was refused. Its `Display` is safe to show and to audit (no key material).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum XmlError {
    /// Larger than `max_message_bytes` (encoded, or once inflated).
    TooLarge,
    /// Not base64, not DEFLATE, or not UTF-8.
    Encoding(String),
    /// A document type declaration (DTDs, entities: XXE, billion laughs).
    Doctype,
    /// Nested deeper than `max_depth`.
    TooDeep,
    /// Not the XML, or not the message, expected.
    Malformed(String),
    /// The signature is missing where required, or does not verify with any configured
    /// certificate, or uses an algorithm not accepted (RSA-SHA256 and stronger only).
    Signature(String),
    /// The signature verifies but does not cover what would be read (signature wrapping:
    /// another root, a second element of the same ID, a second assertion).
    Wrapped,
}

impl std::fmt::Display for XmlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            XmlError::TooLarge => f.write_str("SAML message too large"),
            XmlError::Encoding(m) => write!(f, "SAML message encoding: {m}"),
            XmlError::Doctype => f.write_str("SAML message with a document type declaration"),
            XmlError::TooDeep => f.write_str("SAML message nested too deep"),
            XmlError::Malformed(m) => write!(f, "malformed SAML message: {m}"),
            XmlError::Signature(m) => write!(f, "SAML signature: {m}"),
            XmlError::Wrapped => f.write_str("SAML signature does not cover the message read"),
        }
    }
}

impl std::error::Error for XmlError {}

/// An AuthnRequest (SAML Core §3.4.1) as read: nothing in it is trusted yet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthnRequestIn {
    pub id: String,
    pub issuer: Option<String>,
    pub destination: Option<String>,
    /// Seconds since the epoch.
    pub issue_instant: i64,
    pub acs_url: Option<String>,
    pub acs_index: Option<u32>,
    pub protocol_binding: Option<String>,
    pub force_authn: bool,
    pub is_passive: bool,
    /// `NameIDPolicy/@Format`.
    pub name_id_format: Option<String>,
    /// `RequestedAuthnContext/AuthnContextClassRef`s, in order.
    pub authn_context_class_refs: Vec<String>,
    /// `RequestedAuthnContext/@Comparison` (`exact` when absent).
    pub authn_context_comparison: Option<String>,
    /// Whether the root carries an enveloped `ds:Signature` (the POST binding's way to sign).
    pub has_signature: bool,
}

/// A LogoutRequest (SAML Core §3.7.1) as read: nothing in it is trusted yet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogoutRequestIn {
    pub id: String,
    pub issuer: Option<String>,
    pub destination: Option<String>,
    /// Seconds since the epoch.
    pub issue_instant: i64,
    pub not_on_or_after: Option<i64>,
    /// `NameID` text (whole: a comment inside it is refused) and `@Format`.
    pub name_id: String,
    pub name_id_format: Option<String>,
    /// `SessionIndex`es, in order (none: every session of the principal at this SP).
    pub session_indexes: Vec<String>,
    /// Whether the root carries an enveloped `ds:Signature`.
    pub has_signature: bool,
}

/// A LogoutResponse (SAML Core §3.7.2) as read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogoutResponseIn {
    pub id: String,
    pub in_response_to: Option<String>,
    pub issuer: Option<String>,
    pub destination: Option<String>,
    pub issue_instant: i64,
    /// `Status/StatusCode/@Value`, and the second-level code if any.
    pub status: String,
    pub sub_status: Option<String>,
    pub has_signature: bool,
}

/// An SP's `EntityDescriptor` (SAML Metadata §2.4.4) as read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpMetadataIn {
    pub entity_id: String,
    /// `AssertionConsumerService`s: (index, binding, location, isDefault).
    pub acs: Vec<(u32, String, String, bool)>,
    /// `SingleLogoutService`s: (binding, location).
    pub slo: Vec<(String, String)>,
    /// DER certificates of `KeyDescriptor use="signing"` (or no `use`).
    pub signing_certs: Vec<Vec<u8>>,
    /// DER certificates of `KeyDescriptor use="encryption"` (or no `use`).
    pub encryption_certs: Vec<Vec<u8>>,
    pub name_id_formats: Vec<String>,
    pub authn_requests_signed: bool,
    pub want_assertions_signed: bool,
}

/// An IdP's `EntityDescriptor` (SAML Metadata §2.4.3) as read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IdpMetadataIn {
    pub entity_id: String,
    /// `SingleSignOnService`s: (binding, location).
    pub sso: Vec<(String, String)>,
    /// DER certificates of `KeyDescriptor use="signing"` (or no `use`).
    pub signing_certs: Vec<Vec<u8>>,
}

/// The XML of a `SAMLRequest`/`SAMLResponse` sent by HTTP-POST (Bindings §3.5.4): base64.
pub fn decode_post(b64: &str, limits: &Limits) -> Result<String, XmlError> {
    safe::decode_post(b64, limits)
}

/// The XML of a `SAMLRequest` sent by HTTP-Redirect (Bindings §3.4.4.1): DEFLATE, then base64.
/// `b64` is the parameter's value once URL-decoded.
pub fn decode_redirect(b64: &str, limits: &Limits) -> Result<String, XmlError> {
    safe::decode_redirect(b64, limits)
}

/// Size, DTD and depth checks on the raw document, before any parser sees it.
pub fn check_safe(xml: &str, limits: &Limits) -> Result<(), XmlError> {
    safe::check_safe(xml, limits)
}

/// Read an AuthnRequest (after `check_safe`). Its signature is not looked at here.
pub fn parse_authn_request(xml: &str, limits: &Limits) -> Result<AuthnRequestIn, XmlError> {
    read::parse_authn_request(xml, limits)
}

/// Read a LogoutRequest (after `check_safe`). Its signature is not looked at here.
pub fn parse_logout_request(xml: &str, limits: &Limits) -> Result<LogoutRequestIn, XmlError> {
    read::parse_logout_request(xml, limits)
}

/// Read a LogoutResponse (after `check_safe`). Its signature is not looked at here.
pub fn parse_logout_response(xml: &str, limits: &Limits) -> Result<LogoutResponseIn, XmlError> {
    read::parse_logout_response(xml, limits)
}

/// The LogoutResponse in a SOAP envelope (an SP's answer by the SOAP binding), read; its
/// signature is not looked at (the answer changes nothing here).
pub fn parse_soap_logout_response(xml: &str, limits: &Limits) -> Result<LogoutResponseIn, XmlError> {
    read::parse_soap_logout_response(xml, limits)
}

/// Read an SP's metadata (after `check_safe`).
pub fn parse_sp_metadata(xml: &str, limits: &Limits) -> Result<SpMetadataIn, XmlError> {
    read::parse_sp_metadata(xml, limits)
}

/// Read an IdP's metadata (after `check_safe`).
pub fn parse_idp_metadata(xml: &str, limits: &Limits) -> Result<IdpMetadataIn, XmlError> {
    read::parse_idp_metadata(xml, limits)
}

/// A certificate as configuration gives it (base64 DER, or PEM): its DER, if X.509.
pub fn certificate_der(text: &str) -> Result<Vec<u8>, XmlError> {
    let body: String = text.lines().filter(|l| !l.trim_start().starts_with("-----")).collect();
    read::cert_der(&body)
}

/// The HTTP-Redirect binding's signature (Bindings §3.4.4.1), over the raw query string as
/// received: `SAMLRequest=…&RelayState=…&SigAlg=…` (RelayState only if present), the octets
/// unchanged. RSA-SHA256 (and RSA-SHA512) only; SHA-1 and unknown algorithms refused.
pub fn verify_redirect_signature(raw_query: &str, certs_der: &[Vec<u8>]) -> Result<(), XmlError> {
    verify::verify_redirect_signature(raw_query, certs_der)
}

/// An enveloped signature over the document's root by one of `certs_der`: the document
/// reduced to what is signed, whose root ID is the original root's (else `Wrapped`).
/// The reduction drops the `ds:Signature` itself: `parse_authn_request` of the result says
/// `has_signature: false` (ask the original document whether it was signed).
pub fn verified_root(xml: &str, certs_der: &[Vec<u8>]) -> Result<String, XmlError> {
    verify::verified_root(xml, certs_der)
}

/// A `Response` (SAML Core §3.2.2) as verified: the reduced, signed document's values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResponseIn {
    pub id: String,
    pub in_response_to: Option<String>,
    pub destination: Option<String>,
    pub issuer: Option<String>,
    /// `Status/StatusCode/@Value`, and the second-level code if any.
    pub status: String,
    pub sub_status: Option<String>,
    /// The one assertion, if the status is Success.
    pub assertion: Option<AssertionIn>,
    /// Whether it came as an `EncryptedAssertion` (and was decrypted).
    pub assertion_encrypted: bool,
}

/// The one `Assertion` of a verified Response: the element the signature covers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AssertionIn {
    pub id: String,
    pub issuer: String,
    /// `Subject/NameID` text (whole: comments inside it refused, not dropped) and `@Format`.
    pub name_id: String,
    pub name_id_format: Option<String>,
    /// Bearer `SubjectConfirmationData`: InResponseTo, Recipient, NotOnOrAfter (epoch s).
    pub in_response_to: Option<String>,
    pub recipient: Option<String>,
    pub confirmation_not_on_or_after: Option<i64>,
    /// `Conditions`: NotBefore, NotOnOrAfter (epoch s), and every `Audience`.
    pub not_before: Option<i64>,
    pub not_on_or_after: Option<i64>,
    pub audiences: Vec<String>,
    /// `AuthnStatement`: SessionIndex, AuthnInstant (epoch s), AuthnContextClassRef.
    pub session_index: Option<String>,
    pub authn_instant: Option<i64>,
    pub authn_context_class_ref: Option<String>,
    /// `AttributeStatement`: (Name, values).
    pub attributes: Vec<(String, Vec<String>)>,
}

/// A Response from an identity provider whose certificates are `certs_der`, verified
/// strictly: the Response signed (then its one Assertion is read from the signed document),
/// or else its one Assertion signed (then only that element is read); unsigned, two
/// assertions, an element of a duplicated ID, a signature over something else (the XSW
/// variants), an algorithm other than RSA-SHA256/512 with SHA-256/512 digests, or a
/// certificate other than those given: refused. An encrypted assertion is refused here (no
/// key to decrypt it): see `verified_response_decrypting`.
pub fn verified_response(xml: &str, certs_der: &[Vec<u8>], limits: &Limits) -> Result<ResponseIn, XmlError> {
    verify::verified_response(xml, certs_der, limits, &[])
}

/// `verified_response`, and an `EncryptedAssertion` in place of the Assertion decrypted with
/// the first of `keys` (our RSA encryption keys, PKCS#8) it was encrypted to (RSA-OAEP; AES-GCM
/// or AES-CBC), then held to the same rules: signed (the Response's signature over the
/// ciphertext, or the assertion's own), one assertion, no wrapping, no comments.
pub fn verified_response_decrypting(xml: &str, certs_der: &[Vec<u8>], limits: &Limits, keys: &[Vec<u8>]) -> Result<ResponseIn, XmlError> {
    verify::verified_response(xml, certs_der, limits, keys)
}

/// The algorithms an `EncryptedAssertion` to us may use (`decrypt`), as our metadata's
/// `EncryptionMethod`s name them: content first (GCM before CBC), then key transport.
pub const ENCRYPTION_METHODS: &[&str] = &[
    decrypt::AES256_GCM,
    decrypt::AES128_GCM,
    decrypt::AES256_CBC,
    decrypt::AES128_CBC,
    decrypt::RSA_OAEP,
    decrypt::RSA_OAEP_MGF1P,
];
