//! RFC 8705 client metadata: the subject a `tls_client_auth` client's certificate carries
//! (§2.1.2: exactly one of the five fields), and certificate-bound access tokens (§3.4).

use super::{ClientInput, ClientMetadata, AUTH_SELF_SIGNED_TLS, AUTH_TLS};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MtlsMetadata {
    /// The certificate's subject, as an RFC 4514 distinguished name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_client_auth_subject_dn: Option<String>,
    /// A `dNSName` subject alternative name of the certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_client_auth_san_dns: Option<String>,
    /// A `uniformResourceIdentifier` SAN.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_client_auth_san_uri: Option<String>,
    /// An `iPAddress` SAN, IPv4 dotted or IPv6 text form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_client_auth_san_ip: Option<String>,
    /// An `rfc822Name` SAN.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_client_auth_san_email: Option<String>,
    /// Access tokens (and a public client's refresh tokens) are bound to the certificate the
    /// token request came with (`cnf.x5t#S256`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tls_client_certificate_bound_access_tokens: bool,
}

fn text(v: &Option<String>) -> Option<String> {
    v.clone().filter(|s| !s.is_empty())
}

impl MtlsMetadata {
    pub(super) fn from_input(input: &ClientInput) -> Self {
        let mut m = Self::default();
        m.apply(input);
        m
    }

    /// The fields `input` sets (`Some("")` clears one).
    pub(super) fn apply(&mut self, input: &ClientInput) {
        for (field, value) in [
            (&mut self.tls_client_auth_subject_dn, &input.tls_client_auth_subject_dn),
            (&mut self.tls_client_auth_san_dns, &input.tls_client_auth_san_dns),
            (&mut self.tls_client_auth_san_uri, &input.tls_client_auth_san_uri),
            (&mut self.tls_client_auth_san_ip, &input.tls_client_auth_san_ip),
            (&mut self.tls_client_auth_san_email, &input.tls_client_auth_san_email),
        ] {
            if value.is_some() {
                *field = text(value);
            }
        }
        if let Some(v) = input.tls_client_certificate_bound_access_tokens {
            self.tls_client_certificate_bound_access_tokens = v;
        }
    }

    fn subject_fields(&self) -> [(&'static str, &Option<String>); 5] {
        [
            ("tls_client_auth_subject_dn", &self.tls_client_auth_subject_dn),
            ("tls_client_auth_san_dns", &self.tls_client_auth_san_dns),
            ("tls_client_auth_san_uri", &self.tls_client_auth_san_uri),
            ("tls_client_auth_san_ip", &self.tls_client_auth_san_ip),
            ("tls_client_auth_san_email", &self.tls_client_auth_san_email),
        ]
    }
}

pub(super) fn validate(meta: &ClientMetadata) -> Result<(), String> {
    let m = &meta.mtls;
    let set: Vec<(&str, &String)> = m.subject_fields().into_iter().filter_map(|(n, v)| v.as_ref().map(|v| (n, v))).collect();
    let method = meta.token_endpoint_auth_method.as_str();
    if method != AUTH_TLS {
        if let Some((name, _)) = set.first() {
            return Err(format!("{name} applies only to {AUTH_TLS}"));
        }
    } else {
        let [(name, value)] = set[..] else {
            return Err(format!("{AUTH_TLS} needs exactly one of {} (RFC 8705 section 2.1.2)", m.subject_fields().map(|(n, _)| n).join(", ")));
        };
        let ok = match name {
            "tls_client_auth_subject_dn" => crate::client_auth::x509::parse_dn(value).map(|_| ()),
            "tls_client_auth_san_ip" => value.parse::<std::net::IpAddr>().map(|_| ()).map_err(|_| "not an IP address".into()),
            "tls_client_auth_san_uri" => url::Url::parse(value).map(|_| ()).map_err(|e| e.to_string()),
            "tls_client_auth_san_email" if !value.contains('@') => Err("not an e-mail address".into()),
            _ if value.len() > 1024 || value.chars().any(char::is_whitespace) => Err("no spaces, at most 1024 characters".into()),
            _ => Ok(()),
        };
        ok.map_err(|e| format!("{name}: {e}"))?;
    }
    if method == AUTH_SELF_SIGNED_TLS && meta.jwks.is_none() && meta.jwks_uri.is_none() {
        return Err(format!("{AUTH_SELF_SIGNED_TLS} needs the client's certificates' keys: jwks or jwks_uri"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{new_client, ClientInput};
    use crate::keys::Vault;

    fn tls(fields: ClientInput) -> Result<(), String> {
        let input = ClientInput { token_endpoint_auth_method: Some("tls_client_auth".into()), grant_types: Some(vec!["client_credentials".into()]), ..fields };
        new_client(input, &Vault::from_key([7; 32])).map(|_| ())
    }

    #[test]
    fn tls_client_auth_needs_exactly_one_valid_subject_field() {
        assert!(tls(ClientInput { tls_client_auth_subject_dn: Some("CN=rp,O=Example".into()), ..Default::default() }).is_ok());
        assert!(tls(ClientInput { tls_client_auth_san_ip: Some("10.0.0.1".into()), ..Default::default() }).is_ok());
        assert!(tls(ClientInput::default()).unwrap_err().contains("exactly one"));
        let two = ClientInput { tls_client_auth_san_dns: Some("rp.example".into()), tls_client_auth_san_email: Some("a@rp.example".into()), ..Default::default() };
        assert!(tls(two).unwrap_err().contains("exactly one"));
        assert!(tls(ClientInput { tls_client_auth_subject_dn: Some("nonsense".into()), ..Default::default() }).unwrap_err().contains("subject_dn"));
        assert!(tls(ClientInput { tls_client_auth_san_ip: Some("10.0.0.300".into()), ..Default::default() }).is_err());
        // The fields mean nothing to another method: refused rather than silently ignored.
        let other = ClientInput { tls_client_auth_san_dns: Some("rp.example".into()), redirect_uris: Some(vec!["https://rp.example/cb".into()]), ..Default::default() };
        assert!(new_client(other, &Vault::from_key([7; 32])).unwrap_err().contains("applies only to tls_client_auth"));
    }

    #[test]
    fn self_signed_needs_keys() {
        let input = ClientInput {
            token_endpoint_auth_method: Some("self_signed_tls_client_auth".into()),
            grant_types: Some(vec!["client_credentials".into()]),
            ..Default::default()
        };
        assert!(new_client(input, &Vault::from_key([7; 32])).unwrap_err().contains("jwks"));
    }
}
