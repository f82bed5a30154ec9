//! What the mTLS methods read from a client certificate (RFC 8705 §2): its subject, compared
//! with a registered RFC 4514 distinguished name; its subject alternative names; and its
//! public key, compared with the keys of the client's JWK Set.

use crate::util::b64;
use serde_json::{Map, Value};
use std::net::IpAddr;
use x509_parser::prelude::{FromDer, GeneralName, X509Certificate};
use x509_parser::public_key::PublicKey;

/// One RDN: its attributes as (OID, value), values as the comparison sees them.
type Rdn = Vec<(String, String)>;

/// RFC 4514 short names (§3, and the ones certificates commonly carry) and their OIDs.
const ATTRIBUTE_TYPES: &[(&str, &str)] = &[
    ("CN", "2.5.4.3"),
    ("SERIALNUMBER", "2.5.4.5"),
    ("C", "2.5.4.6"),
    ("L", "2.5.4.7"),
    ("ST", "2.5.4.8"),
    ("STREET", "2.5.4.9"),
    ("O", "2.5.4.10"),
    ("OU", "2.5.4.11"),
    ("DC", "0.9.2342.19200300.100.1.25"),
    ("UID", "0.9.2342.19200300.100.1.1"),
    ("EMAILADDRESS", "1.2.840.113549.1.9.1"),
    ("E", "1.2.840.113549.1.9.1"),
];

/// A value as compared: surrounding spaces dropped, inner runs of spaces made one, ASCII case
/// folded (X.520 caseIgnoreMatch, which the attributes above use, ignores both).
fn fold(value: &str) -> String {
    value.split(' ').filter(|s| !s.is_empty()).collect::<Vec<_>>().join(" ").to_ascii_lowercase()
}

/// Parse an RFC 4514 distinguished name (`CN=client,O=Example,C=SE`): its RDNs in the order
/// written. Hex-encoded values (`#04...`) are refused: no registration needs them.
pub fn parse_dn(dn: &str) -> Result<Vec<Rdn>, String> {
    let mut rdns = vec![Vec::new()];
    let (mut kind, mut value, mut in_value) = (String::new(), String::new(), false);
    let mut chars = dn.chars().peekable();
    let finish = |rdns: &mut Vec<Rdn>, kind: &mut String, value: &mut String| -> Result<(), String> {
        let name = kind.trim();
        let oid = match ATTRIBUTE_TYPES.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
            Some((_, oid)) => oid.to_string(),
            None if !name.is_empty() && name.split('.').all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())) => name.to_string(),
            None => return Err(format!("unknown attribute type {name:?}")),
        };
        if value.trim_start().starts_with('#') {
            return Err("hex-encoded attribute values are not supported".into());
        }
        rdns.last_mut().expect("one RDN at least").push((oid, fold(value)));
        kind.clear();
        value.clear();
        Ok(())
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let next = chars.next().ok_or("a trailing backslash")?;
                let escaped = match chars.peek().copied().filter(|_| next.is_ascii_hexdigit()) {
                    Some(lo) if lo.is_ascii_hexdigit() => {
                        chars.next();
                        // A UTF-8 byte: kept as a char only when it is ASCII (multi-byte
                        // sequences escaped byte by byte are rare in registrations).
                        let byte = u8::from_str_radix(&format!("{next}{lo}"), 16).map_err(|e| e.to_string())?;
                        if !byte.is_ascii() {
                            return Err("escaped non-ASCII bytes are not supported; write the characters".into());
                        }
                        byte as char
                    }
                    _ => next,
                };
                if in_value { value.push(escaped) } else { kind.push(escaped) }
            }
            '=' if !in_value => in_value = true,
            ',' | ';' | '+' if in_value => {
                finish(&mut rdns, &mut kind, &mut value)?;
                in_value = false;
                if c != '+' {
                    rdns.push(Vec::new());
                }
            }
            _ if in_value => value.push(c),
            _ => kind.push(c),
        }
    }
    if !in_value {
        return Err("expected TYPE=value".into());
    }
    finish(&mut rdns, &mut kind, &mut value)?;
    Ok(rdns)
}

/// A client certificate, parsed.
pub struct Parsed<'a>(X509Certificate<'a>);

pub fn parse(der: &[u8]) -> Result<Parsed<'_>, String> {
    match X509Certificate::from_der(der) {
        Ok((rest, cert)) if rest.is_empty() => Ok(Parsed(cert)),
        _ => Err("the client certificate is not a readable X.509 certificate".into()),
    }
}

impl Parsed<'_> {
    /// Whether the subject is `registered` (parsed by `parse_dn`). RFC 4514 writes the RDNs
    /// last first; operators often copy them in the certificate's order: both are accepted.
    pub fn subject_is(&self, registered: &[Rdn]) -> bool {
        let mut subject: Vec<Rdn> = Vec::new();
        for rdn in self.0.subject().iter() {
            let mut set = Vec::new();
            for atv in rdn.iter() {
                let Ok(value) = atv.as_str() else { return false };
                set.push((atv.attr_type().to_id_string(), fold(value)));
            }
            subject.push(set);
        }
        let same_rdn = |a: &Rdn, b: &Rdn| a.len() == b.len() && a.iter().all(|x| b.contains(x));
        let same = |order: &mut dyn Iterator<Item = &Rdn>| {
            subject.len() == registered.len() && order.zip(registered).all(|(a, b)| same_rdn(a, b))
        };
        same(&mut subject.iter().rev()) || same(&mut subject.iter())
    }

    fn alt_names(&self) -> Vec<&GeneralName<'_>> {
        match self.0.subject_alternative_name() {
            Ok(Some(ext)) => ext.value.general_names.iter().collect(),
            _ => Vec::new(),
        }
    }

    pub fn has_dns_name(&self, name: &str) -> bool {
        self.alt_names().iter().any(|n| matches!(n, GeneralName::DNSName(d) if d.eq_ignore_ascii_case(name)))
    }

    pub fn has_uri(&self, uri: &str) -> bool {
        self.alt_names().iter().any(|n| matches!(n, GeneralName::URI(u) if *u == uri))
    }

    pub fn has_email(&self, email: &str) -> bool {
        self.alt_names().iter().any(|n| matches!(n, GeneralName::RFC822Name(e) if *e == email))
    }

    pub fn has_ip(&self, ip: IpAddr) -> bool {
        self.alt_names().iter().any(|n| match n {
            GeneralName::IPAddress(b) => match b.len() {
                4 => IpAddr::from(<[u8; 4]>::try_from(*b).expect("4 bytes")) == ip,
                16 => IpAddr::from(<[u8; 16]>::try_from(*b).expect("16 bytes")).to_canonical() == ip.to_canonical(),
                _ => false,
            },
            _ => false,
        })
    }

    /// The public key as [`jwk_public_key`] writes a JWK's, to find it in a JWK Set.
    pub fn public_key(&self) -> Option<String> {
        let spki = self.0.public_key();
        match spki.parsed().ok()? {
            PublicKey::RSA(rsa) => Some(format!("RSA.{}.{}", b64(unpadded(rsa.modulus)), b64(unpadded(rsa.exponent)))),
            PublicKey::EC(point) => Some(format!("EC.{}", b64(point.data()))),
            // id-Ed25519 (RFC 8410): the key is the bit string itself.
            PublicKey::Unknown(raw) if spki.algorithm.algorithm.to_id_string() == "1.3.101.112" => Some(format!("OKP.{}", b64(raw))),
            _ => None,
        }
    }
}

fn unpadded(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|b| *b != 0).unwrap_or(bytes.len());
    &bytes[start..]
}

/// A JWK's public key in one canonical form (RSA: modulus and exponent without leading zeros;
/// EC: the uncompressed point; OKP Ed25519: the key), to compare with a certificate's.
pub fn jwk_public_key(jwk: &Map<String, Value>) -> Option<String> {
    let field = |name: &str| jwk.get(name).and_then(Value::as_str).and_then(crate::util::b64_decode);
    match jwk.get("kty")?.as_str()? {
        "RSA" => Some(format!("RSA.{}.{}", b64(unpadded(&field("n")?)), b64(unpadded(&field("e")?)))),
        "EC" => {
            let mut point = vec![4u8];
            point.extend(field("x")?);
            point.extend(field("y")?);
            Some(format!("EC.{}", b64(&point)))
        }
        "OKP" if jwk.get("crv")?.as_str()? == "Ed25519" => Some(format!("OKP.{}", b64(&field("x")?))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(oid: &str, v: &str) -> (String, String) {
        (oid.to_string(), v.to_string())
    }

    #[test]
    fn distinguished_names_parse_as_rfc4514_writes_them() {
        let dn = parse_dn("CN=Client One,O=Example\\, Inc.,C=SE").unwrap();
        assert_eq!(dn, vec![vec![pair("2.5.4.3", "client one")], vec![pair("2.5.4.10", "example, inc.")], vec![pair("2.5.4.6", "se")]]);
        // Multi-valued RDNs, dotted OIDs, spaces after separators, hex escapes.
        let dn = parse_dn("OU=a+CN=b, 2.5.4.10=\\4Frg").unwrap();
        assert_eq!(dn, vec![vec![pair("2.5.4.11", "a"), pair("2.5.4.3", "b")], vec![pair("2.5.4.10", "org")]]);
        for bad in ["", "CN", "XX=y", "CN=#0403616263", "CN=a\\"] {
            assert!(parse_dn(bad).is_err(), "{bad}");
        }
    }

    fn cert(subject: &[(rcgen::DnType, &str)], sans: Vec<rcgen::SanType>) -> (rcgen::Certificate, rcgen::KeyPair) {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut p = rcgen::CertificateParams::default();
        let mut dn = rcgen::DistinguishedName::new();
        for (t, v) in subject {
            dn.push(t.clone(), *v);
        }
        p.distinguished_name = dn;
        p.subject_alt_names = sans;
        (p.self_signed(&key).unwrap(), key)
    }

    #[test]
    fn subjects_and_alternative_names_match_exactly_what_was_registered() {
        use rcgen::{DnType, SanType};
        let (c, _) = cert(
            &[(DnType::CountryName, "SE"), (DnType::OrganizationName, "Example"), (DnType::CommonName, "client-1")],
            vec![SanType::DnsName("rp.example".try_into().unwrap()), SanType::IpAddress("10.0.0.7".parse().unwrap()), SanType::Rfc822Name("ops@rp.example".try_into().unwrap()), SanType::URI("https://rp.example/id".try_into().unwrap())],
        );
        let p = parse(c.der()).unwrap();
        assert!(p.subject_is(&parse_dn("CN=client-1,O=Example,C=SE").unwrap()));
        assert!(p.subject_is(&parse_dn("C=SE, O=Example, CN=client-1").unwrap()), "the certificate's order");
        assert!(p.subject_is(&parse_dn("cn=CLIENT-1,o=example,c=se").unwrap()), "case-insensitive");
        assert!(!p.subject_is(&parse_dn("CN=client-2,O=Example,C=SE").unwrap()));
        assert!(!p.subject_is(&parse_dn("CN=client-1,O=Example").unwrap()), "a prefix is not the name");
        assert!(p.has_dns_name("RP.example") && !p.has_dns_name("other.example"));
        assert!(p.has_ip("10.0.0.7".parse().unwrap()) && !p.has_ip("10.0.0.8".parse().unwrap()));
        assert!(p.has_email("ops@rp.example") && !p.has_email("dev@rp.example"));
        assert!(p.has_uri("https://rp.example/id") && !p.has_uri("https://rp.example/id2"));
    }

    #[test]
    fn a_certificates_key_is_found_as_its_jwk() {
        let (c, key) = cert(&[(rcgen::DnType::CommonName, "x")], vec![]);
        // The P-256 point rcgen made, as a JWK would carry it.
        let point = key.public_key_raw();
        let jwk = serde_json::json!({"kty": "EC", "crv": "P-256", "x": b64(&point[1..33]), "y": b64(&point[33..])});
        let from_cert = parse(c.der()).unwrap().public_key().unwrap();
        assert_eq!(Some(from_cert), jwk_public_key(jwk.as_object().unwrap()));
        let (other, _) = cert(&[(rcgen::DnType::CommonName, "x")], vec![]);
        assert_ne!(parse(other.der()).unwrap().public_key(), jwk_public_key(jwk.as_object().unwrap()));
        assert!(parse(b"not a certificate").is_err());
    }
}
