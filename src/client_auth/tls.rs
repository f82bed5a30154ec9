//! The mutual-TLS methods (RFC 8705 §2): the client names itself (`client_id`) and proves it
//! with the TLS client certificate of the request (`http::client_cert`), whose key the TLS
//! handshake has shown it holds.
//!
//! - `tls_client_auth` (§2.1): the certificate chains to a CA of `mtls_trust_anchors` and
//!   carries the one subject DN or subject alternative name the client registered.
//! - `self_signed_tls_client_auth` (§2.2): no CA; the certificate's public key is one of the
//!   client's registered keys (`jwks` or `jwks_uri`).

use super::{x509, AuthMethod, Context, Presented, Refusal};
use crate::registry::clients::{MtlsMetadata, AUTH_SELF_SIGNED_TLS, AUTH_TLS};
use crate::registry::Client;
use async_trait::async_trait;
use rustls::server::danger::ClientCertVerifier;
use rustls_pki_types::UnixTime;
use std::sync::Arc;

pub struct TlsClientAuth;
pub struct SelfSignedTlsClientAuth;

/// The CAs `tls_client_auth` certificates must chain to (`mtls_trust_anchors`), read once at
/// start; `None` when unset. An unreadable or empty file stops the start: an operator who named
/// one meant it.
pub fn trust_anchors(config: &crate::config::Config) -> anyhow::Result<Option<Arc<dyn ClientCertVerifier>>> {
    use rustls_pki_types::pem::PemObject;
    let Some(path) = &config.mtls_trust_anchors else { return Ok(None) };
    let mut roots = rustls::RootCertStore::empty();
    let certs = rustls_pki_types::CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| anyhow::anyhow!("mtls_trust_anchors {}: {e}", path.display()))?;
    let (added, _) = roots.add_parsable_certificates(certs);
    if added == 0 {
        anyhow::bail!("mtls_trust_anchors {}: no CA certificate in it", path.display());
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
        .build()
        .map_err(|e| anyhow::anyhow!("mtls_trust_anchors {}: {e}", path.display()))?;
    Ok(Some(verifier))
}

/// The certificate of a request that names only its client (RFC 8705 §2: `client_id` and
/// nothing else in the body).
fn certificate<'a>(cx: &'a Context<'_>, presented: &Presented, method: &str) -> Result<&'a crate::http::client_cert::ClientCertificate, Refusal> {
    let Presented::Nothing { .. } = presented else { return Err(Refusal::WrongMethod) };
    cx.cert.ok_or_else(|| Refusal::Invalid(format!("this client authenticates with a TLS client certificate ({method}); none was presented")))
}

#[async_trait]
impl AuthMethod for TlsClientAuth {
    fn name(&self) -> &'static str {
        AUTH_TLS
    }

    async fn verify(&self, cx: &Context<'_>, client: &Client, presented: &Presented) -> Result<(), Refusal> {
        let cert = certificate(cx, presented, AUTH_TLS)?;
        let anchors = cx.app.mtls_anchors.as_ref().ok_or_else(|| Refusal::Invalid("this server trusts no CA for tls_client_auth (mtls_trust_anchors)".into()))?;
        anchors
            .verify_client_cert(cert.end_entity(), cert.intermediates(), UnixTime::now())
            .map_err(|e| Refusal::Invalid(format!("the client certificate is not accepted: {e}")))?;
        let parsed = x509::parse(cert.end_entity()).map_err(Refusal::Invalid)?;
        match matches_registration(&parsed, &client.meta.mtls) {
            true => Ok(()),
            false => Err(Refusal::Invalid("the client certificate's subject is not the one this client registered".into())),
        }
    }
}

/// RFC 8705 §2.1.2: the one registered subject field, compared with the certificate's.
fn matches_registration(cert: &x509::Parsed<'_>, m: &MtlsMetadata) -> bool {
    if let Some(dn) = &m.tls_client_auth_subject_dn {
        return x509::parse_dn(dn).is_ok_and(|dn| cert.subject_is(&dn));
    }
    if let Some(name) = &m.tls_client_auth_san_dns {
        return cert.has_dns_name(name);
    }
    if let Some(uri) = &m.tls_client_auth_san_uri {
        return cert.has_uri(uri);
    }
    if let Some(ip) = &m.tls_client_auth_san_ip {
        return ip.parse().is_ok_and(|ip| cert.has_ip(ip));
    }
    if let Some(email) = &m.tls_client_auth_san_email {
        return cert.has_email(email);
    }
    // Registration refuses a tls_client_auth client without one; never a match by default.
    false
}

#[async_trait]
impl AuthMethod for SelfSignedTlsClientAuth {
    fn name(&self) -> &'static str {
        AUTH_SELF_SIGNED_TLS
    }

    async fn verify(&self, cx: &Context<'_>, client: &Client, presented: &Presented) -> Result<(), Refusal> {
        let cert = certificate(cx, presented, AUTH_SELF_SIGNED_TLS)?;
        let parsed = x509::parse(cert.end_entity()).map_err(Refusal::Invalid)?;
        let public = parsed.public_key().ok_or_else(|| Refusal::Invalid("the client certificate's key type is not supported".into()))?;
        match cx.app.client_keys.has_public_key(cx.app, client, &public).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(Refusal::Invalid("the client certificate's key is not one of this client's registered keys".into())),
            Err(e) => Err(Refusal::Invalid(e)),
        }
    }
}
