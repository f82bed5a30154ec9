//! Fuzz body for the XML boundary of SAML (`saml::xml`): every message an SP or IdP sends
//! (see the parent module).

use super::*;
use crate::saml::xml::{self, Limits, XmlError};

/// The certificate the seed corpus's signed messages verify with (fuzz/corpus/saml_message/):
/// a self-signed RSA-2048 one whose key is nowhere.
const CERT_B64: &str = "MIIDEzCCAfugAwIBAgIUH92yCYq8VlmtcX44ROdughFPX/UwDQYJKoZIhvcNAQELBQAwGDEWMBQGA1UEAwwNZnV6ei5pZHAudGVzdDAgFw0yNjExMjkxODMyMjhaGA8yMTI2MTEwNTE4MzIyOFowGDEWMBQGA1UEAwwNZnV6ei5pZHAudGVzdDCCASIwDQYJKoZIhvcNAQEBBQADggEPADCCAQoCggEBAPT2LyQTQU3mvDetQEPx4U0+pKd9FjXncoCDtua9VLcLQKc8htaJIZfcWooySxYSiNsCTrOgTmbiM2H0ABQ4RnoKvil/Oo0+9hYdfcveB/A98IpQFPaPiHEiUSRBRaLy2pGkj1rTqrBQ6jiwXOs6TJEagUKyLdhynRLmJqf4oT7ESQvoQvuqLUJR878u5eKHQMTVOUYlxx32B5SJqnn8SkVnXtxKeYUJuAdDNda46DtMieeYgnhhHePsZ/hqTDg7YZzsYDrxvWDIOYqCeXRlMRtGUS2Vxfi2HPgWsuKll56U3nmP4Ywhab11fH+aj7WXM0k/XdAKndISl/iljICxNXMCAwEAAaNTMFEwHQYDVR0OBBYEFM/n1mTlQYkKDysTktGcyFDFRoOMMB8GA1UdIwQYMBaAFM/n1mTlQYkKDysTktGcyFDFRoOMMA8GA1UdEwEB/wQFMAMBAf8wDQYJKoZIhvcNAQELBQADggEBAIoZGV7SwT3URzfKZrBjHIg5DRtMVHE426CKIcl0Ds95+584aSV+e3cJ7xZi4JExB2jJz0iG3cb0sa9nEBHK5Njg+ZT6STNxb9qzsGkDokqGKC2XD28DCXIsrAbu6JtatzbSujSAB5BamYMXutpAqZaKytYnGrdhE2aOYMMv5rpNl50LC+GFYNurUXg2TB1yzZmNqaGl11KttztGBUVQTvxtOBCDzMcGBSJvRNlg5AFGGE9mmvy1C69A4HBMuDfdZhn68C8K6MhprMnHHkNuIu0T43P1XkrsIR4Hry1C909BZcz244ISVc3jvRMhYV5xamAvUU4b9593je6cQQQQqa0=";

fn certs() -> &'static [Vec<u8>] {
    static CERTS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    CERTS.get_or_init(|| vec![STANDARD.decode(CERT_B64).expect("the fuzz certificate")])
}

/// A key of our own for encrypted assertions: nothing in the corpus is encrypted to it, so
/// every `EncryptedAssertion` is read (its shape, algorithms, base64) and then refused.
fn decryption_keys() -> &'static [Vec<u8>] {
    static KEYS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    KEYS.get_or_init(|| vec![crate::keys::EncryptionKey::generate("RSA-OAEP-256").expect("an RSA key").1])
}

fn check_error(e: &XmlError) {
    assert!(e.to_string().len() < 120, "a long error: {e}");
}

/// `saml::xml`: no panic on any input, and what is accepted is safe. Modes:
/// 0. `decode_post`; 1. `decode_redirect`: what they return passes `check_safe`;
/// 2. `parse_authn_request`; 3. `parse_sp_metadata` and `parse_idp_metadata`: only what
///    `check_safe` passes is read;
/// 4. `verified_root` (the fixed certificate): its output is a safe document whose root ID
///    is the input's;
/// 5. `verified_response_decrypting` (a key nothing is encrypted to): an assertion exactly
///    when the status is Success;
/// 6. `parse_logout_request`; 7. `parse_logout_response` and `parse_soap_logout_response`:
///    only what `check_safe` passes is read, and its ID is in the input.
pub fn saml_message(data: &[u8]) {
    let limits = Limits { max_message_bytes: 16 * 1024, max_depth: 24 };
    let (m, rest) = mode(data, 8);
    let input = text(rest);
    let safe = xml::check_safe(&input, &limits);
    if let Err(e) = &safe {
        check_error(e);
    }
    match m {
        0 | 1 => {
            let out = if m == 0 { xml::decode_post(&input, &limits) } else { xml::decode_redirect(&input, &limits) };
            match out {
                Ok(x) => {
                    assert!(x.len() <= limits.max_message_bytes, "decoded past the bound");
                    assert_eq!(xml::check_safe(&x, &limits), Ok(()), "decoded but not safe");
                }
                Err(e) => check_error(&e),
            }
        }
        2 => match xml::parse_authn_request(&input, &limits) {
            Ok(r) => {
                assert_eq!(safe, Ok(()), "an unsafe AuthnRequest read");
                assert!(input.contains(r.id.as_str()), "an ID from nowhere");
            }
            Err(e) => check_error(&e),
        },
        3 => {
            match xml::parse_sp_metadata(&input, &limits) {
                Ok(md) => {
                    assert_eq!(safe, Ok(()), "unsafe metadata read");
                    assert!(!md.entity_id.trim().is_empty());
                }
                Err(e) => check_error(&e),
            }
            // An IdP's metadata (a SAML upstream's configuration) goes through the same reader.
            match xml::parse_idp_metadata(&input, &limits) {
                Ok(md) => {
                    assert_eq!(safe, Ok(()), "unsafe metadata read");
                    assert!(!md.entity_id.trim().is_empty() && !md.signing_certs.is_empty());
                }
                Err(e) => check_error(&e),
            }
        }
        4 => match xml::verified_root(&input, certs()) {
            Ok(reduced) => {
                let big = Limits { max_message_bytes: usize::MAX, max_depth: 64 };
                assert_eq!(xml::check_safe(&reduced, &big), Ok(()), "the reduced document is not safe");
                // verified_root leaves the size to its caller and bounds depth by the default.
                let unbounded = Limits { max_message_bytes: usize::MAX, ..Limits::default() };
                assert_eq!(xml::check_safe(&input, &unbounded), Ok(()), "an unsafe document verified");
            }
            Err(e) => check_error(&e),
        },
        6 => match xml::parse_logout_request(&input, &limits) {
            Ok(r) => {
                assert_eq!(safe, Ok(()), "an unsafe LogoutRequest read");
                assert!(!r.id.is_empty(), "a LogoutRequest without an ID");
            }
            Err(e) => check_error(&e),
        },
        7 => {
            // Alone, or in a SOAP envelope (what an SP answers our SOAP LogoutRequest with).
            for read in [xml::parse_logout_response(&input, &limits), xml::parse_soap_logout_response(&input, &limits)] {
                match read {
                    Ok(r) => {
                        assert_eq!(safe, Ok(()), "an unsafe LogoutResponse read");
                        assert!(!r.id.is_empty() && !r.status.is_empty(), "a LogoutResponse without an ID or a status");
                    }
                    Err(e) => check_error(&e),
                }
            }
        }
        _ => match xml::verified_response_decrypting(&input, certs(), &limits, decryption_keys()) {
            Ok(r) => {
                assert_eq!(safe, Ok(()), "an unsafe Response verified");
                let success = r.status == "urn:oasis:names:tc:SAML:2.0:status:Success";
                assert_eq!(success, r.assertion.is_some(), "status and assertion disagree");
            }
            Err(e) => check_error(&e),
        },
    }
}
