//! libxmlsec1 reports every failure (a signature that does not verify, a digest that does not
//! match) by a callback that writes a line to stderr, outside our logs: anyone who posts a
//! bad signature could write lines there at will. `route` replaces that callback, once per
//! process, with one that counts the failure and logs it through `tracing` at debug level
//! (the refusal itself is already audited by the endpoint, with its reason). What xmlsec
//! reports are function and algorithm names, error codes and node names: no key material,
//! nothing of a message's content.
//!
//! The order matters: samael initialises xmlsec on its first use, and xmlsec-openssl's
//! initialisation installs its own callback, replacing any set before. So `route` first has
//! samael initialise, by a call that reports nothing (a certificate loaded, a document with
//! no signature to find), and only then sets ours. Every path into xmlsec calls `route` first.
//!
//! samael keeps its xmlsec bindings private, hence this one declaration of our own; the
//! library is linked by samael already.

use std::ffi::{c_char, c_int, CStr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

/// xmlsec's `xmlSecErrorsCallback` (xmlsec/errors.h).
type Callback = unsafe extern "C" fn(*const c_char, c_int, *const c_char, *const c_char, *const c_char, c_int, *const c_char);

unsafe extern "C" {
    fn xmlSecErrorsSetCallback(callback: Option<Callback>);
}

/// How many failures xmlsec has reported since the process started.
static REPORTED: AtomicU64 = AtomicU64::new(0);
static ROUTED: Once = Once::new();

/// Install our callback, xmlsec initialised first by loading `cert_der` (a certificate the
/// caller is about to use anyway). Idempotent; after the first call, one atomic load.
pub fn route(cert_der: &[u8]) {
    ROUTED.call_once(|| {
        use samael::crypto::CryptoProvider as _;
        let cert = samael::crypto::CertificateDer::from(cert_der.to_vec());
        // Fails (no signature in it) after xmlsec is up; only that is wanted of it.
        let _ = samael::crypto::Crypto::verify_signed_xml("<warm-up/>", &cert, None);
        // SAFETY: xmlSecErrorsSetCallback stores a function pointer in a global of libxmlsec1;
        // `report` has the C signature xmlsec calls it with and lives for the whole process.
        unsafe { xmlSecErrorsSetCallback(Some(report)) };
    });
}

pub fn reported() -> u64 {
    REPORTED.load(Ordering::Relaxed)
}

/// # Safety
/// Called by libxmlsec1 with NUL-terminated strings or nulls.
unsafe extern "C" fn report(
    _file: *const c_char,
    _line: c_int,
    func: *const c_char,
    object: *const c_char,
    subject: *const c_char,
    reason: c_int,
    msg: *const c_char,
) {
    REPORTED.fetch_add(1, Ordering::Relaxed);
    // SAFETY: xmlsec passes C strings that outlive the call, or null.
    let text = |p: *const c_char| if p.is_null() { "".into() } else { unsafe { CStr::from_ptr(p) }.to_string_lossy() };
    tracing::debug!(func = %text(func), object = %text(object), subject = %text(subject), reason, msg = %text(msg), "xmlsec refused");
}

#[cfg(test)]
mod tests {
    use crate::saml::logout::{post_value, request_xml, LogoutRequestOut};

    #[test]
    fn a_signature_that_does_not_verify_is_reported_to_us_not_to_stderr() {
        let (key, _) = crate::keys::SigningKey::generate().unwrap();
        let signer = crate::saml::signer::of(&key).unwrap();
        let out = LogoutRequestOut {
            idp_entity_id: "https://idp.test/saml/metadata",
            destination: "https://sp.test/slo",
            name_id: "alice",
            name_id_format: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent",
            session_index: "sid-1",
            now: 1_800_000_000,
        };
        let (id, xml) = request_xml(&out);
        use base64::Engine as _;
        let signed = String::from_utf8(base64::engine::general_purpose::STANDARD.decode(post_value(&signer, &id, &xml).unwrap()).unwrap()).unwrap();
        let before = super::reported();
        let tampered = signed.replace(">alice<", ">mallory<");
        assert!(super::super::verified_root(&tampered, std::slice::from_ref(&signer.cert_der)).is_err());
        assert!(super::reported() > before, "xmlsec's report of the failed digest did not reach our callback");
    }
}
