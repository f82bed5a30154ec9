//! mTLS at the handshake (RFC 8705 §2): ask every client for a certificate, never insist, and
//! accept any chain. Which certificates authenticate which client is each client's registration
//! (`client_auth::tls`: a CA-issued certificate with a registered subject, or one of its own
//! keys), so it cannot be decided before the request names its client. What the handshake does
//! check is the client's signature over the handshake: it proves the client holds the key of
//! the certificate it sent, which is what makes the certificate worth anything afterwards.

use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, SignatureScheme};
use rustls_pki_types::{CertificateDer, UnixTime};
use std::sync::Arc;

#[derive(Debug)]
pub struct AnyClientCertificate {
    algorithms: WebPkiSupportedAlgorithms,
}

impl AnyClientCertificate {
    pub fn new(provider: Arc<CryptoProvider>) -> Self {
        Self { algorithms: provider.signature_verification_algorithms }
    }
}

impl ClientCertVerifier for AnyClientCertificate {
    fn offer_client_auth(&self) -> bool {
        true
    }

    /// Clients without a certificate (browsers, every other client) connect as before.
    fn client_auth_mandatory(&self) -> bool {
        false
    }

    /// No CA names: self-signed certificates are as welcome as CA-issued ones.
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(&self, _: &CertificateDer<'_>, _: &[CertificateDer<'_>], _: UnixTime) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(&self, message: &[u8], cert: &CertificateDer<'_>, dss: &DigitallySignedStruct) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(&self, message: &[u8], cert: &CertificateDer<'_>, dss: &DigitallySignedStruct) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}
