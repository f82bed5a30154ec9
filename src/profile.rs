//! Security profiles: one setting (`security_profile`) that turns on a published set of
//! stricter rules, rather than a dozen settings an operator must get right together.
//!
//! `standard` is OpenID Connect and OAuth 2.0 as the rest of the code describes them.
//! `fapi2` is the FAPI 2.0 Security Profile (final), with DPoP or mutual TLS (RFC 8705) as
//! the sender constraint. The tenant has a profile (`security_profile`), and a client
//! may be registered with `fapi2` on a `standard` tenant (client metadata
//! `security_profile`): the rules asked about a client follow the stricter of the two
//! (`for_client`). Those asked before a client is known (discovery, which DPoP algorithms a
//! proof may use) follow the tenant's.
//!
//! | rule | FAPI 2.0 SP | here |
//! |---|---|---|
//! | PKCE with S256 for every client | §5.3.2.2 | `requires_pkce` |
//! | authorization requests only through PAR | §5.3.2.2 | `requires_par` |
//! | client authentication by `private_key_jwt` or mutual TLS only | §5.3.2.1 | `allows_auth_method` |
//! | an assertion's `aud` is the issuer, as a string | §5.3.2.1 item 8 | `strict_assertion_audience` |
//! | sender-constrained access tokens only (DPoP, or a certificate-bound client's certificate) | §5.3.2.1 | `requires_dpop`, `endpoints::token` |
//! | no refresh-token rotation (tenant-wide only) | §5.3.2.1 | `Config::refresh_rotation` |
//! | authorization codes live at most 60 s | §5.3.2.1 | `code_lifetime` |
//! | `response_type=code` only (no hybrid or implicit) | §5.3.2.2 | `refusal`, `authorize::response_type::check` |
//! | PS256, ES256 or EdDSA for every signature we make or accept | §5.4 | `Config::validate`, `dpop_algs` |
//! | request objects: `nbf` at most 60 min past, `exp` at most 60 min after it | Message Signing §5.3.1 | `authorize::request_object::fapi2_lifetime` |
//! | CIBA: signed authentication requests only | FAPI-CIBA §5.2.2 | `requires_signed_ciba_requests`, `endpoints::ciba::signed` |
//! | CIBA: no push mode | FAPI-CIBA §5.2.2 | `refusal`, `endpoints::ciba` |
//!
//! FAPI 2.0 says nothing of CIBA; a deployment held to it that offers CIBA gets the
//! authorization server's rules of FAPI-CIBA (which builds on FAPI's): confidential clients
//! only (CIBA's own rule here), signed requests living at most an hour from `nbf` to `exp`
//! (every signed request here), no push mode, and the client authentication and sender
//! constraint above.
//!
//! Authrim's own pages (the account page and console, `endpoints::first_party`) are clients
//! of this server that never leave it: they sign users in through the front channel with
//! PKCE and spend their codes in process, so the PAR, DPoP and client-authentication rules,
//! which protect codes and tokens that travel to other parties, do not apply to them.

use crate::registry::clients::{AUTH_PRIVATE_KEY_JWT, AUTH_SELF_SIGNED_TLS, AUTH_TLS};
use crate::registry::Client;

/// FAPI 2.0 §5.3.2.1 item 4: the client authentication methods it allows.
pub const FAPI2_AUTH_METHODS: [&str; 3] = [AUTH_PRIVATE_KEY_JWT, AUTH_TLS, AUTH_SELF_SIGNED_TLS];

/// The algorithms FAPI 2.0 §5.4 allows for signatures.
pub const FAPI_ALGS: [&str; 3] = ["PS256", "ES256", "EdDSA"];

/// The longest an authorization code lives under FAPI 2.0, in seconds.
pub const FAPI_MAX_CODE_LIFETIME: u64 = 60;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Profile {
    #[default]
    Standard,
    Fapi2,
}

impl Profile {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "standard" | "" => Some(Self::Standard),
            "fapi2" => Some(Self::Fapi2),
            _ => None,
        }
    }

    pub fn is_fapi2(self) -> bool {
        self == Self::Fapi2
    }

    /// The profile a client with this metadata is held to: the tenant's (`self`), or
    /// `fapi2` if the client was registered with it.
    fn for_meta(self, meta: &crate::registry::clients::ClientMetadata) -> Self {
        match meta.security_profile.as_deref() {
            Some("fapi2") => Self::Fapi2,
            _ => self,
        }
    }

    /// The profile `client` is held to (`for_meta`).
    pub fn for_client(self, client: &Client) -> Self {
        self.for_meta(&client.meta)
    }

    /// Whether `client`'s authorization requests need a PKCE challenge.
    pub fn requires_pkce(self, client: &Client) -> bool {
        client.is_public() || self.for_client(client).is_fapi2()
    }

    /// Whether `client`'s authorization requests must come through `/par`.
    pub fn requires_par(self, client: &Client) -> bool {
        client.meta.require_pushed_authorization_requests || (self.for_client(client).is_fapi2() && !client.meta.first_party)
    }

    /// Whether `client`'s access tokens must be DPoP-bound (a token request without a proof
    /// is refused).
    pub fn requires_dpop(self, client: &Client) -> bool {
        client.meta.dpop_bound_access_tokens || (self.for_client(client).is_fapi2() && !client.meta.first_party)
    }

    /// Whether `client` may authenticate with `method`.
    pub fn allows_auth_method(self, client: &Client, method: &str) -> bool {
        // FAPI 2.0 §5.3.2.1 item 4: private_key_jwt or mutual TLS (RFC 8705).
        !self.for_client(client).is_fapi2() || client.meta.first_party || FAPI2_AUTH_METHODS.contains(&method)
    }

    /// Whether `client`'s CIBA authentication requests must be signed (FAPI-CIBA §5.2.2).
    pub fn requires_signed_ciba_requests(self, client: &Client) -> bool {
        self.for_client(client).is_fapi2()
    }

    /// Whether `client` may have its CIBA answers pushed (FAPI-CIBA §5.2.2: not under FAPI).
    pub fn allows_ciba_push(self, client: &Client) -> bool {
        !self.for_client(client).is_fapi2()
    }

    /// Whether `client`'s assertions must have exactly the issuer identifier, as a string, as
    /// `aud` (not an array, not an endpoint URL).
    pub fn strict_assertion_audience(self, client: &Client) -> bool {
        self.for_client(client).is_fapi2()
    }

    /// How long `client`'s authorization codes live: `configured`, at most 60 s under FAPI 2.0.
    pub fn code_lifetime(self, client: &Client, configured: u64) -> u64 {
        match self.for_client(client).is_fapi2() {
            true => configured.min(FAPI_MAX_CODE_LIFETIME),
            false => configured,
        }
    }

    /// Why a client with this metadata cannot be registered under this profile, if it
    /// cannot: a method other than `private_key_jwt`, or an algorithm §5.4 does not allow.
    pub fn refusal(self, meta: &crate::registry::clients::ClientMetadata) -> Option<String> {
        let profile = self.for_meta(meta);
        if !profile.is_fapi2() || meta.first_party {
            return None;
        }
        // §5.3.2.2: only response_type code (no token from the authorization endpoint).
        if let Some(r) = meta.response_types.iter().find(|r| *r != "code") {
            return Some(format!("this server's security profile (FAPI 2.0) allows only response_type code, not {r:?}"));
        }
        // FAPI-CIBA §5.2.2: poll or ping, never push.
        if meta.backchannel_token_delivery_mode.as_deref() == Some("push") {
            return Some("this server's security profile (FAPI 2.0, with FAPI-CIBA for CIBA) does not allow backchannel_token_delivery_mode push: use poll or ping".into());
        }
        if !FAPI2_AUTH_METHODS.contains(&meta.token_endpoint_auth_method.as_str()) {
            return Some(format!(
                "this server's security profile (FAPI 2.0) accepts only private_key_jwt or mutual TLS as token_endpoint_auth_method, not {}",
                meta.token_endpoint_auth_method
            ));
        }
        let algs = [
            ("token_endpoint_auth_signing_alg", &meta.token_endpoint_auth_signing_alg),
            ("request_object_signing_alg", &meta.request_object_signing_alg),
            ("id_token_signed_response_alg", &meta.id_token_signed_response_alg),
            ("userinfo_signed_response_alg", &meta.userinfo_signed_response_alg),
            ("access_token_signing_alg", &meta.access_token_signing_alg),
            ("authorization_signed_response_alg", &meta.authorization_signed_response_alg),
            ("backchannel_authentication_request_signing_alg", &meta.backchannel_authentication_request_signing_alg),
        ];
        algs.iter().find_map(|(name, alg)| {
            let alg = alg.as_deref()?;
            (!profile.allows_alg(alg)).then(|| format!("{name} {alg} is not allowed under FAPI 2.0 (section 5.4): use {}", FAPI_ALGS.join(", ")))
        })
    }

    /// Whether signatures with `alg` are allowed (ours and the ones we verify).
    pub fn allows_alg(self, alg: &str) -> bool {
        !self.is_fapi2() || FAPI_ALGS.contains(&alg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(first_party: bool, public: bool) -> Client {
        let mut c = crate::registry::clients::internal_client("c", "C", "https://rp.example/cb".into());
        c.meta.first_party = first_party;
        if !public {
            c.meta.token_endpoint_auth_method = "private_key_jwt".into();
        }
        c
    }

    #[test]
    fn the_standard_profile_asks_only_what_clients_registered() {
        let p = Profile::Standard;
        let confidential = client(false, false);
        assert!(!p.requires_pkce(&confidential) && !p.requires_par(&confidential) && !p.requires_dpop(&confidential));
        assert!(p.requires_pkce(&client(false, true)), "public clients always use PKCE");
        assert!(p.allows_auth_method(&confidential, "client_secret_basic") && p.allows_alg("RS256"));
        assert!(!p.strict_assertion_audience(&confidential));
    }

    #[test]
    fn fapi2_asks_every_third_party_client_but_not_our_own_pages() {
        let p = Profile::parse("fapi2").unwrap();
        let rp = client(false, false);
        assert!(p.requires_pkce(&rp) && p.requires_par(&rp) && p.requires_dpop(&rp));
        assert!(p.allows_auth_method(&rp, "private_key_jwt"));
        for m in ["client_secret_basic", "client_secret_post", "client_secret_jwt", "none"] {
            assert!(!p.allows_auth_method(&rp, m), "{m}");
        }
        let own = client(true, true);
        assert!(p.requires_pkce(&own) && !p.requires_par(&own) && !p.requires_dpop(&own) && p.allows_auth_method(&own, "none"));
        assert!(p.strict_assertion_audience(&rp));
        assert_eq!(p.code_lifetime(&rp, 600), 60);
        assert!(!p.allows_alg("RS256") && p.allows_alg("PS256") && p.allows_alg("ES256") && p.allows_alg("EdDSA"));
        assert_eq!(Profile::parse("fapi"), None);
    }

    #[test]
    fn a_client_registered_with_fapi2_is_held_to_it_on_a_standard_tenant() {
        let tenant = Profile::Standard;
        let mut bank = client(false, false);
        bank.meta.security_profile = Some("fapi2".into());
        assert!(tenant.requires_pkce(&bank) && tenant.requires_par(&bank) && tenant.requires_dpop(&bank));
        assert!(tenant.strict_assertion_audience(&bank) && !tenant.allows_auth_method(&bank, "client_secret_basic"));
        assert_eq!(tenant.code_lifetime(&bank, 600), 60);
        let mut rs = bank.meta.clone();
        rs.id_token_signed_response_alg = Some("RS256".into());
        assert!(tenant.refusal(&rs).is_some());
        let other = client(false, false);
        assert!(!tenant.requires_par(&other) && tenant.code_lifetime(&other, 600) == 600, "other clients keep the tenant's rules");
    }
}
