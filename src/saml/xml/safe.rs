//! Decoding and the raw-document checks: everything here runs before libxml2 sees a byte.

use super::{Limits, XmlError};
use base64::alphabet::STANDARD as ALPHABET;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use quick_xml::events::Event;
use quick_xml::name::ResolveResult;
use quick_xml::NsReader;
use std::io::Read;

pub(super) const NS_PROTOCOL: &str = "urn:oasis:names:tc:SAML:2.0:protocol";
pub(super) const NS_ASSERTION: &str = "urn:oasis:names:tc:SAML:2.0:assertion";
pub(super) const NS_METADATA: &str = "urn:oasis:names:tc:SAML:2.0:metadata";
pub(super) const NS_DSIG: &str = "http://www.w3.org/2000/09/xmldsig#";
/// SOAP 1.1, which SAML's SOAP binding uses (Bindings §3.2.1).
pub(crate) const NS_SOAP_ENVELOPE: &str = "http://schemas.xmlsoap.org/soap/envelope/";

// SPs differ on padding; what matters is the alphabet and the bound.
const B64: GeneralPurpose =
    GeneralPurpose::new(&ALPHABET, GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent));

/// Base64 with the whitespace SPs wrap lines with, bounded before anything is allocated for it.
pub(super) fn base64_bounded(b64: &str, max_decoded: usize) -> Result<Vec<u8>, XmlError> {
    let max_encoded = max_decoded.div_ceil(3).saturating_mul(4);
    // Whitespace is free to send: bound the raw length too, generously (76-column lines).
    if b64.len() > max_encoded.saturating_mul(2).saturating_add(1024) {
        return Err(XmlError::TooLarge);
    }
    let compact: String = b64.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    if compact.len() > max_encoded {
        return Err(XmlError::TooLarge);
    }
    let raw = B64.decode(compact.as_bytes()).map_err(|_| XmlError::Encoding("not base64".into()))?;
    if raw.len() > max_decoded {
        return Err(XmlError::TooLarge);
    }
    Ok(raw)
}

fn utf8(raw: Vec<u8>) -> Result<String, XmlError> {
    String::from_utf8(raw).map_err(|_| XmlError::Encoding("not UTF-8".into()))
}

pub(super) fn decode_post(b64: &str, limits: &Limits) -> Result<String, XmlError> {
    let xml = utf8(base64_bounded(b64, limits.max_message_bytes)?)?;
    check_safe(&xml, limits)?;
    Ok(xml)
}

pub(super) fn decode_redirect(b64: &str, limits: &Limits) -> Result<String, XmlError> {
    let raw = base64_bounded(b64, limits.max_message_bytes)?;
    let mut out = Vec::new();
    // One byte past the bound tells a bomb from a message of exactly the bound.
    flate2::read::DeflateDecoder::new(&raw[..])
        .take(limits.max_message_bytes as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|_| XmlError::Encoding("not DEFLATE".into()))?;
    if out.len() > limits.max_message_bytes {
        return Err(XmlError::TooLarge);
    }
    let xml = utf8(out)?;
    check_safe(&xml, limits)?;
    Ok(xml)
}

pub(super) fn check_safe(xml: &str, limits: &Limits) -> Result<(), XmlError> {
    scan(xml, limits).map(|_| ())
}

fn contains_ci(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle))
}

const MAX_ATTRIBUTES: usize = 64;

/// One element of a scanned document, in document order (index 0 is the root).
pub(super) struct El {
    pub ns: Option<String>,
    pub local: String,
    pub parent: Option<usize>,
    /// Attributes by qualified name as written, values unescaped.
    pub attrs: Vec<(String, String)>,
    /// A comment is a direct child (NameID comment injection).
    pub comment: bool,
    /// Its direct text content, entities resolved (what a NameID or SessionIndex says).
    pub text: String,
}

/// The shape of a document as quick-xml reads it: enough to check what libxml2 verified.
pub(super) struct Doc {
    pub els: Vec<El>,
}

impl Doc {
    pub fn is(&self, i: usize, ns: &str, local: &str) -> bool {
        let e = &self.els[i];
        e.local == local && e.ns.as_deref() == Some(ns)
    }

    pub fn attr(&self, i: usize, name: &str) -> Option<&str> {
        self.els[i].attrs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    pub fn children(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        (i + 1..self.els.len()).filter(move |&j| self.els[j].parent == Some(i))
    }

    pub fn all(&self, ns: &str, local: &str) -> Vec<usize> {
        (0..self.els.len()).filter(|&i| self.is(i, ns, local)).collect()
    }

    pub fn within(&self, mut i: usize, ns: &str, local: &str) -> bool {
        loop {
            if self.is(i, ns, local) {
                return true;
            }
            match self.els[i].parent {
                Some(p) => i = p,
                None => return false,
            }
        }
    }

    /// The one child `ns:local` of `i`, if exactly one.
    pub fn only_child(&self, i: usize, ns: &str, local: &str) -> Result<Option<usize>, XmlError> {
        let mut found = self.children(i).filter(|&c| self.is(c, ns, local));
        match (found.next(), found.next()) {
            (first, None) => Ok(first),
            _ => Err(XmlError::Malformed(format!("more than one {local}"))),
        }
    }

    pub fn has_signature_child(&self, i: usize) -> bool {
        self.children(i).any(|c| self.is(c, NS_DSIG, "Signature"))
    }

    /// libxml2's `xmlGetProp("ID")` ignores prefixes (any `*:ID` counts here too), and it
    /// registers `xml:id` itself: one space of IDs for all three.
    pub fn duplicate_ids(&self) -> bool {
        let mut seen = std::collections::HashSet::new();
        let ids = self.els.iter().flat_map(|e| e.attrs.iter());
        for (_, v) in ids.filter(|(k, _)| k == "ID" || k.ends_with(":ID") || k == "xml:id") {
            if !seen.insert(v.as_str()) {
                return true;
            }
        }
        false
    }
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Size, DTD, depth and well-formedness, and the document's shape for the checks after.
pub(super) fn scan(xml: &str, limits: &Limits) -> Result<Doc, XmlError> {
    if xml.len() > limits.max_message_bytes {
        return Err(XmlError::TooLarge);
    }
    let raw = xml.as_bytes();
    if contains_ci(raw, b"<!DOCTYPE") || contains_ci(raw, b"<!ENTITY") {
        return Err(XmlError::Doctype);
    }
    // NUL is not XML; a UTF-16 document read as UTF-8 is full of them.
    if raw.contains(&0) {
        return Err(XmlError::Malformed("not XML".into()));
    }
    let bad = |m: &str| XmlError::Malformed(m.into());
    let mut reader = NsReader::from_str(xml);
    reader.config_mut().check_comments = true;
    let mut els: Vec<El> = Vec::new();
    let mut stack: Vec<usize> = Vec::new();
    let mut closed_root = false;
    loop {
        let (ns, ev) = reader.read_resolved_event().map_err(|_| bad("not well-formed XML"))?;
        let ns = match ns {
            ResolveResult::Bound(n) => Some(lossy(n.as_ref())),
            ResolveResult::Unbound => None,
            ResolveResult::Unknown(_) => return Err(bad("unbound namespace prefix")),
        };
        match ev {
            Event::Start(ref e) | Event::Empty(ref e) => {
                if closed_root && stack.is_empty() {
                    return Err(bad("more than one root element"));
                }
                if stack.len() + 1 > limits.max_depth {
                    return Err(XmlError::TooDeep);
                }
                let mut attrs = Vec::new();
                // quick-xml (like libxml2) checks for duplicates pairwise: keep that small.
                for a in e.attributes().take(MAX_ATTRIBUTES + 1) {
                    if attrs.len() == MAX_ATTRIBUTES {
                        return Err(bad("too many attributes"));
                    }
                    let a = a.map_err(|_| bad("bad attribute"))?;
                    let v = a.normalized_value(quick_xml::XmlVersion::Implicit1_0).map_err(|_| bad("bad attribute value"))?;
                    attrs.push((lossy(a.key.as_ref()), v.into_owned()));
                }
                els.push(El { ns, local: lossy(e.local_name().as_ref()), parent: stack.last().copied(), attrs, comment: false, text: String::new() });
                if matches!(ev, Event::Start(_)) {
                    stack.push(els.len() - 1);
                } else if stack.is_empty() {
                    closed_root = true;
                }
            }
            Event::End(_) => {
                stack.pop().ok_or_else(|| bad("unbalanced end tag"))?;
                closed_root |= stack.is_empty();
            }
            // Not folded into the guard: text outside the root must never reach the next arm.
            Event::Text(ref t) if stack.is_empty() => {
                if !(**t).iter().all(u8::is_ascii_whitespace) {
                    return Err(bad("text outside the root"));
                }
            }
            Event::CData(_) if stack.is_empty() => return Err(bad("text outside the root")),
            Event::Text(ref t) => {
                let top = *stack.last().expect("text outside the root handled above");
                els[top].text.push_str(&t.xml_content(quick_xml::XmlVersion::Implicit1_0).map_err(|_| bad("bad text"))?);
            }
            Event::CData(ref t) => {
                let top = *stack.last().expect("text outside the root handled above");
                els[top].text.push_str(&t.decode().map_err(|_| bad("bad text"))?);
            }
            Event::GeneralRef(ref r) => {
                let c = match &**r {
                    b"lt" => Some('<'),
                    b"gt" => Some('>'),
                    b"amp" => Some('&'),
                    b"apos" => Some('\''),
                    b"quot" => Some('"'),
                    _ if r.is_char_ref() => r.resolve_char_ref().ok().flatten(),
                    _ => None,
                };
                match (stack.last(), c) {
                    (Some(&top), Some(c)) => els[top].text.push(c),
                    _ => return Err(bad("undefined entity")),
                }
            }
            Event::Comment(_) => {
                if let Some(&top) = stack.last() {
                    els[top].comment = true;
                }
            }
            Event::Decl(ref d) => {
                if let Some(enc) = d.encoding() {
                    let enc = enc.map_err(|_| bad("bad XML declaration"))?;
                    if !enc.eq_ignore_ascii_case(b"utf-8") {
                        return Err(bad("not UTF-8"));
                    }
                }
            }
            Event::DocType(_) => return Err(XmlError::Doctype),
            Event::Eof => break,
            _ => {}
        }
    }
    if !stack.is_empty() || els.is_empty() {
        return Err(bad("not well-formed XML"));
    }
    Ok(Doc { els })
}
