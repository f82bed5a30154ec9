//! Security profiles: one setting (`security_profile`) that turns on a published set of
//! stricter rules, rather than a dozen settings an operator must get right together.
//!
//! `standard` is OpenID Connect and OAuth 2.0 as the rest of the code describes them.
//! `fapi2` is the FAPI 2.0 Security Profile (final), with DPoP or mutual TLS (RFC 8705) as
//! the sender constraint. `fapi-ciba` is FAPI-CIBA (Implementer's Draft 1), the profile of
//! CIBA built on FAPI 1.0 Advanced, with mutual TLS as the sender constraint. The tenant has a
//! profile (`security_profile`), and a client may be registered with `fapi2` or `fapi-ciba`
//! (client metadata `security_profile`): the rules asked about a client follow the stricter of
//! the two (`for_client`). Where one is `fapi2` and the other `fapi-ciba`, the client is held
//! to both (`Fapi2AndCiba`): every restriction of either, so neither profile's promise is
//! broken by the other's allowance (the issuer as the only `aud` from FAPI 2.0, no EdDSA and
//! certificate-bound tokens only from FAPI-CIBA). Those asked before a client is known
//! (discovery, which DPoP algorithms a proof may use) follow the tenant's.
//!
//! | rule | FAPI 2.0 SP | FAPI-CIBA ID1 (on FAPI 1.0 Part 2) | here |
//! |---|---|---|---|
//! | PKCE with S256 for every client | §5.3.2.2 | (code flow: as `fapi2`, below) | `requires_pkce` |
//! | authorization requests only through PAR | §5.3.2.2 | (code flow: as `fapi2`) | `requires_par` |
//! | client authentication by `private_key_jwt` or mutual TLS only | §5.3.2.1 | Part 2 §5.2.2 item 14, FAPI-CIBA §5.2.2 | `allows_auth_method` |
//! | an assertion's `aud` is the issuer, as a string | §5.3.2.1 item 8 | no: the issuer, the token endpoint or the endpoint called (OIDC Core §9, CIBA Core §7.1) | `strict_assertion_audience` |
//! | sender-constrained access tokens: DPoP, or a certificate-bound client's certificate | §5.3.2.1 | certificate-bound only (Part 2 §5.2.2 items 5-6) | `requires_dpop`, `requires_certificate_bound`, `endpoints::token` |
//! | no refresh-token rotation (tenant-wide only) | §5.3.2.1 | no | `Config::refresh_rotation` |
//! | authorization codes live at most 60 s | §5.3.2.1 | (code flow: as `fapi2`) | `code_lifetime` |
//! | `response_type=code` only (no hybrid or implicit) | §5.3.2.2 | (code flow: as `fapi2`) | `refusal`, `authorize::response_type::check` |
//! | signatures we make or accept: PS256, ES256 (and EdDSA under FAPI 2.0 only) | §5.4 | Part 2 §8.6 | `Config::validate`, `allows_alg` |
//! | request objects: `nbf` at most 60 min past, `exp` at most 60 min after it | Message Signing §5.3.1 | (code flow: as `fapi2`) | `authorize::request_object::fapi2_lifetime` |
//! | CIBA: signed authentication requests only, living at most 60 min | (FAPI-CIBA's, below) | §5.2.2 items 6 and 9 | `requires_signed_ciba_requests`, `endpoints::ciba::signed` |
//! | CIBA: no push mode | (FAPI-CIBA's) | §5.2.2 item 3 | `refusal`, `endpoints::ciba` |
//! | CIBA: a `binding_message` in every request (it has no other unique context) | no | §5.2.2 item 2 | `requires_binding_message`, `endpoints::ciba` |
//! | CIBA: confidential clients only | (FAPI-CIBA's) | §5.2.2 item 1 | `allows_auth_method` (and CIBA's own rule here) |
//!
//! FAPI 2.0 says nothing of CIBA; a deployment held to it that offers CIBA gets the
//! authorization server's rules of FAPI-CIBA (which builds on FAPI's): confidential clients
//! only (CIBA's own rule here), signed requests living at most an hour from `nbf` to `exp`
//! (every signed request here), no push mode, and the client authentication and sender
//! constraint above.
//!
//! Under `fapi-ciba`:
//! - EdDSA is refused: FAPI 1.0 Part 2 §8.6 names PS256 and ES256 only, and a FAPI-CIBA
//!   client or resource server may rely on never seeing anything else.
//! - DPoP alone does not make a token sender-constrained: FAPI 1.0 Part 2 (on which
//!   FAPI-CIBA rests) knows mutual TLS only (§5.2.2 item 6; DPoP came later), and its
//!   resource servers check `cnf.x5t#S256` (§6.2.1); a DPoP-only token would be a bearer token
//!   to them. Every client registers `tls_client_certificate_bound_access_tokens`.
//! - The code flow, which FAPI-CIBA does not cover, follows `fapi2`'s authorization-endpoint
//!   rules (PAR, PKCE S256, `code` only, 60 s codes, request-object lifetime): stricter than
//!   FAPI 1.0 Part 2 (which also allows signed request objects at `/authorize` and, with JARM
//!   or a detached ID token, hybrid responses), and one set of rules for every FAPI tenant.
//!   The client authentication, algorithms and sender constraint are `fapi-ciba`'s.
//!
//! Authrim's own pages (the account page and console, `endpoints::first_party`) are clients
//! of this server that never leave it: they sign users in through the front channel with
//! PKCE and spend their codes in process, so the PAR, DPoP, certificate and
//! client-authentication rules, which protect codes and tokens that travel to other parties,
//! do not apply to them.

use crate::registry::clients::{AUTH_PRIVATE_KEY_JWT, AUTH_SELF_SIGNED_TLS, AUTH_TLS};
use crate::registry::Client;

/// FAPI 2.0 §5.3.2.1 item 4 (and FAPI 1.0 Part 2 §5.2.2 item 14): the client authentication
/// methods it allows.
pub const FAPI2_AUTH_METHODS: [&str; 3] = [AUTH_PRIVATE_KEY_JWT, AUTH_TLS, AUTH_SELF_SIGNED_TLS];

/// The algorithms FAPI 2.0 §5.4 allows for signatures.
pub const FAPI_ALGS: [&str; 3] = ["PS256", "ES256", "EdDSA"];

/// The algorithms FAPI 1.0 Part 2 §8.6 (so FAPI-CIBA) allows for signatures.
pub const FAPI1_ALGS: [&str; 2] = ["PS256", "ES256"];

/// The longest an authorization code lives under FAPI 2.0, in seconds.
pub const FAPI_MAX_CODE_LIFETIME: u64 = 60;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Profile {
    #[default]
    Standard,
    Fapi2,
    FapiCiba,
    /// Both FAPI profiles' restrictions at once: never configured, the profile of a client
    /// registered with one on a tenant held to the other (`stricter`).
    Fapi2AndCiba,
}

impl Profile {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "standard" | "" => Some(Self::Standard),
            "fapi2" => Some(Self::Fapi2),
            "fapi-ciba" => Some(Self::FapiCiba),
            _ => None,
        }
    }

    /// Held to any FAPI profile: the rules they share (client authentication, the code flow's
    /// PAR, PKCE and `code` only, CIBA's signed requests and no push, no RS256 by default).
    pub fn is_fapi(self) -> bool {
        self != Self::Standard
    }

    /// Held to FAPI 2.0's own rules (the issuer as the assertion's only `aud`, DPoP as a
    /// sender constraint, no refresh-token rotation).
    pub fn is_fapi2(self) -> bool {
        matches!(self, Self::Fapi2 | Self::Fapi2AndCiba)
    }

    /// Held to FAPI-CIBA's own rules (certificate-bound tokens only, PS256 and ES256 only).
    pub fn is_fapi_ciba(self) -> bool {
        matches!(self, Self::FapiCiba | Self::Fapi2AndCiba)
    }

    /// What the profile is called in refusals.
    pub fn title(self) -> &'static str {
        match self {
            Self::Standard => "standard",
            Self::Fapi2 => "FAPI 2.0",
            Self::FapiCiba => "FAPI-CIBA",
            Self::Fapi2AndCiba => "FAPI 2.0 and FAPI-CIBA",
        }
    }

    /// Held to both: every restriction of either.
    pub fn stricter(self, other: Self) -> Self {
        match (self.is_fapi2() || other.is_fapi2(), self.is_fapi_ciba() || other.is_fapi_ciba()) {
            (true, true) => Self::Fapi2AndCiba,
            (true, false) => Self::Fapi2,
            (false, true) => Self::FapiCiba,
            (false, false) => Self::Standard,
        }
    }

    /// The profile a client with this metadata is held to: the tenant's (`self`), made
    /// stricter by the one the client was registered with.
    fn for_meta(self, meta: &crate::registry::clients::ClientMetadata) -> Self {
        self.stricter(meta.security_profile.as_deref().and_then(Self::parse).unwrap_or_default())
    }

    /// The profile `client` is held to (`for_meta`).
    pub fn for_client(self, client: &Client) -> Self {
        self.for_meta(&client.meta)
    }

    /// Whether `client`'s authorization requests need a PKCE challenge.
    pub fn requires_pkce(self, client: &Client) -> bool {
        client.is_public() || self.for_client(client).is_fapi()
    }

    /// Whether `client`'s authorization requests must come through `/par`.
    pub fn requires_par(self, client: &Client) -> bool {
        client.meta.require_pushed_authorization_requests || (self.for_client(client).is_fapi() && !client.meta.first_party)
    }

    /// Whether `client`'s access tokens must be DPoP-bound (a token request without a proof
    /// is refused) unless they are bound to its certificate.
    pub fn requires_dpop(self, client: &Client) -> bool {
        client.meta.dpop_bound_access_tokens || (self.for_client(client).is_fapi2() && !client.meta.first_party)
    }

    /// Whether `client`'s access tokens must be bound to its certificate (RFC 8705): FAPI 1.0
    /// Part 2 §5.2.2 items 5 and 6, for FAPI-CIBA. DPoP does not stand in for it (module doc).
    pub fn requires_certificate_bound(self, client: &Client) -> bool {
        self.for_client(client).is_fapi_ciba() && !client.meta.first_party
    }

    /// Whether `client` may authenticate with `method`.
    pub fn allows_auth_method(self, client: &Client, method: &str) -> bool {
        // FAPI 2.0 §5.3.2.1 item 4, FAPI 1.0 Part 2 §5.2.2 item 14: private_key_jwt or
        // mutual TLS (RFC 8705).
        !self.for_client(client).is_fapi() || client.meta.first_party || FAPI2_AUTH_METHODS.contains(&method)
    }

    /// Whether `client`'s CIBA authentication requests must be signed (FAPI-CIBA §5.2.2).
    pub fn requires_signed_ciba_requests(self, client: &Client) -> bool {
        self.for_client(client).is_fapi()
    }

    /// Whether `client`'s CIBA authentication requests must carry a `binding_message`
    /// (FAPI-CIBA §5.2.2 item 2: no other unique authorization context exists here).
    pub fn requires_binding_message(self, client: &Client) -> bool {
        self.for_client(client).is_fapi_ciba() && !client.meta.first_party
    }

    /// Whether `client` may have its CIBA answers pushed (FAPI-CIBA §5.2.2: not under FAPI).
    pub fn allows_ciba_push(self, client: &Client) -> bool {
        !self.for_client(client).is_fapi()
    }

    /// Whether `client`'s assertions must have exactly the issuer identifier, as a string, as
    /// `aud` (not an array, not an endpoint URL): FAPI 2.0's rule. FAPI-CIBA's (FAPI 1.0's)
    /// is OpenID Connect Core §9's and CIBA Core §7.1's: the issuer, the token endpoint or the
    /// endpoint the assertion was sent to, as everywhere else (`client_auth::jwt`).
    pub fn strict_assertion_audience(self, client: &Client) -> bool {
        self.for_client(client).is_fapi2()
    }

    /// How long `client`'s authorization codes live: `configured`, at most 60 s under FAPI.
    pub fn code_lifetime(self, client: &Client, configured: u64) -> u64 {
        match self.for_client(client).is_fapi() {
            true => configured.min(FAPI_MAX_CODE_LIFETIME),
            false => configured,
        }
    }

    /// Why a client with this metadata cannot be registered under this profile, if it
    /// cannot: a response type, delivery mode, method, sender constraint or algorithm the
    /// profile does not allow.
    pub fn refusal(self, meta: &crate::registry::clients::ClientMetadata) -> Option<String> {
        let profile = self.for_meta(meta);
        if !profile.is_fapi() || meta.first_party {
            return None;
        }
        let name = profile.title();
        // FAPI 2.0 §5.3.2.2: only response_type code (no token from the authorization endpoint).
        if let Some(r) = meta.response_types.iter().find(|r| *r != "code") {
            return Some(format!("this server's security profile ({name}) allows only response_type code, not {r:?}"));
        }
        // FAPI-CIBA §5.2.2: poll or ping, never push.
        if meta.backchannel_token_delivery_mode.as_deref() == Some("push") {
            let name = if profile.is_fapi_ciba() { name.to_string() } else { format!("{name}, with FAPI-CIBA for CIBA") };
            return Some(format!("this server's security profile ({name}) does not allow backchannel_token_delivery_mode push: use poll or ping"));
        }
        if !FAPI2_AUTH_METHODS.contains(&meta.token_endpoint_auth_method.as_str()) {
            return Some(format!(
                "this server's security profile ({name}) accepts only private_key_jwt or mutual TLS as token_endpoint_auth_method, not {}",
                meta.token_endpoint_auth_method
            ));
        }
        // FAPI 1.0 Part 2 §5.2.2 items 5-6: every access token bound to the certificate.
        if profile.is_fapi_ciba() && !meta.mtls.tls_client_certificate_bound_access_tokens {
            return Some(format!("this server's security profile ({name}) issues only certificate-bound access tokens: register tls_client_certificate_bound_access_tokens true"));
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
        algs.iter().find_map(|(field, alg)| {
            let alg = alg.as_deref()?;
            let rule = if profile.is_fapi_ciba() { profile.alg_rule("section ") } else { "section 5.4".into() };
            (!profile.allows_alg(alg)).then(|| format!("{field} {alg} is not allowed under {name} ({rule}): use {}", profile.algs().join(", ")))
        })
    }

    /// The algorithms signatures may use under this profile (`allows_alg`).
    pub fn algs(self) -> &'static [&'static str] {
        match self.is_fapi_ciba() {
            true => &FAPI1_ALGS,
            false => &FAPI_ALGS,
        }
    }

    /// Where the profile's algorithms are listed, as a section number (`§`, for messages to
    /// operators) or in words (for `error_description`, which is ASCII only, RFC 6749 §5.2).
    pub fn alg_rule(self, sign: &str) -> String {
        match self.is_fapi_ciba() {
            true => format!("FAPI 1.0 Part 2 {sign}8.6"),
            false => format!("FAPI 2.0 {sign}5.4"),
        }
    }

    /// Whether signatures with `alg` are allowed (ours and the ones we verify).
    pub fn allows_alg(self, alg: &str) -> bool {
        !self.is_fapi() || self.algs().contains(&alg)
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

    /// A third-party client as FAPI-CIBA asks it to register.
    fn bank() -> Client {
        let mut c = client(false, false);
        c.meta.mtls.tls_client_certificate_bound_access_tokens = true;
        c.meta.backchannel_token_delivery_mode = Some("poll".into());
        c
    }

    #[test]
    fn fapi_ciba_asks_private_key_jwt_or_mtls_fapi1_algorithms_and_certificate_bound_tokens() {
        let p = Profile::parse("fapi-ciba").unwrap();
        assert_eq!(p, Profile::FapiCiba);
        let rp = bank();
        for m in ["private_key_jwt", "tls_client_auth", "self_signed_tls_client_auth"] {
            assert!(p.allows_auth_method(&rp, m), "{m}");
        }
        for m in ["client_secret_basic", "client_secret_post", "client_secret_jwt", "none"] {
            assert!(!p.allows_auth_method(&rp, m), "{m}");
        }
        // FAPI 1.0 Part 2 §8.6: PS256 and ES256; no EdDSA (FAPI 2.0's), no RS256.
        assert!(p.allows_alg("PS256") && p.allows_alg("ES256") && !p.allows_alg("EdDSA") && !p.allows_alg("RS256"));
        // The assertion's aud may name the token endpoint (not FAPI 2.0's rule); the token is
        // bound to the certificate, and DPoP is not what is asked for.
        assert!(!p.strict_assertion_audience(&rp));
        assert!(p.requires_certificate_bound(&rp) && !p.requires_dpop(&rp));
        assert!(p.requires_signed_ciba_requests(&rp) && !p.allows_ciba_push(&rp) && p.requires_binding_message(&rp));
        // The code flow: fapi2's authorization-endpoint rules.
        assert!(p.requires_par(&rp) && p.requires_pkce(&rp));
        assert_eq!(p.code_lifetime(&rp, 600), 60);
        // Our own pages are not held to it.
        let own = client(true, true);
        assert!(!p.requires_certificate_bound(&own) && !p.requires_par(&own) && p.allows_auth_method(&own, "none"));
        assert!(p.is_fapi() && p.is_fapi_ciba() && !p.is_fapi2());
        assert!(!Profile::Fapi2.requires_certificate_bound(&rp), "fapi2 takes DPoP instead");
        assert!(!Profile::Fapi2.requires_binding_message(&rp) && !Profile::Standard.requires_binding_message(&rp), "fapi2 as it was");
    }

    #[test]
    fn fapi_ciba_registers_only_what_it_allows() {
        let p = Profile::FapiCiba;
        assert_eq!(p.refusal(&bank().meta), None);
        let refused = |change: &dyn Fn(&mut crate::registry::clients::ClientMetadata), word: &str| {
            let mut m = bank().meta;
            change(&mut m);
            let why = p.refusal(&m).unwrap_or_else(|| panic!("{word}: accepted"));
            assert!(why.contains(word) && why.contains("FAPI-CIBA"), "{why}");
        };
        refused(&|m| m.token_endpoint_auth_method = "client_secret_basic".into(), "client_secret_basic");
        refused(&|m| m.backchannel_token_delivery_mode = Some("push".into()), "push");
        refused(&|m| m.mtls.tls_client_certificate_bound_access_tokens = false, "certificate-bound");
        refused(&|m| m.backchannel_authentication_request_signing_alg = Some("EdDSA".into()), "EdDSA");
        refused(&|m| m.token_endpoint_auth_signing_alg = Some("RS256".into()), "RS256");
        refused(&|m| m.response_types = vec!["code id_token".into()], "code id_token");
        let mut own = bank().meta;
        own.first_party = true;
        own.token_endpoint_auth_method = "none".into();
        assert_eq!(p.refusal(&own), None);
    }

    #[test]
    fn fapi2_and_fapi_ciba_together_hold_a_client_to_both() {
        use Profile::*;
        // Commutative, and the identity and absorbing cases.
        for a in [Standard, Fapi2, FapiCiba, Fapi2AndCiba] {
            assert_eq!(a.stricter(Standard), a);
            assert_eq!(a.stricter(a), a);
            assert_eq!(a.stricter(Fapi2AndCiba), Fapi2AndCiba);
            for b in [Standard, Fapi2, FapiCiba, Fapi2AndCiba] {
                assert_eq!(a.stricter(b), b.stricter(a), "{a:?} {b:?}");
            }
        }
        assert_eq!(Fapi2.stricter(FapiCiba), Fapi2AndCiba);
        assert_eq!(Profile::parse("fapi2-and-ciba"), None, "not a setting");

        // A fapi-ciba client on a fapi2 tenant, and a fapi2 client on a fapi-ciba tenant.
        let mut on_fapi2 = bank();
        on_fapi2.meta.security_profile = Some("fapi-ciba".into());
        let mut on_ciba = bank();
        on_ciba.meta.security_profile = Some("fapi2".into());
        for (tenant, c) in [(Fapi2, &on_fapi2), (FapiCiba, &on_ciba)] {
            assert_eq!(tenant.for_client(c), Fapi2AndCiba);
            // FAPI 2.0's: the issuer as the only aud, a sender constraint asked for.
            assert!(tenant.strict_assertion_audience(c) && tenant.requires_dpop(c), "{tenant:?}");
            // FAPI-CIBA's: certificate-bound (DPoP alone is not enough), no EdDSA.
            assert!(tenant.requires_certificate_bound(c), "{tenant:?}");
            let mut m = c.meta.clone();
            m.id_token_signed_response_alg = Some("EdDSA".into());
            let why = tenant.refusal(&m).unwrap();
            assert!(why.contains("FAPI 2.0 and FAPI-CIBA") && why.contains("EdDSA"), "{why}");
            m.id_token_signed_response_alg = Some("PS256".into());
            assert_eq!(tenant.refusal(&m), None);
            m.mtls.tls_client_certificate_bound_access_tokens = false;
            assert!(tenant.refusal(&m).is_some(), "{tenant:?}: DPoP would do for FAPI 2.0, not for FAPI-CIBA");
            // Shared rules.
            assert!(tenant.requires_par(c) && !tenant.allows_ciba_push(c) && tenant.requires_signed_ciba_requests(c));
        }
        // A neighbour without a profile keeps the tenant's.
        let plain = bank();
        assert_eq!(Fapi2.for_client(&plain), Fapi2);
        assert_eq!(FapiCiba.for_client(&plain), FapiCiba);
        assert!(!FapiCiba.strict_assertion_audience(&plain) && !Fapi2.requires_certificate_bound(&plain));
        // On a standard tenant, a client registered with fapi-ciba is held to it alone.
        let mut held = bank();
        held.meta.security_profile = Some("fapi-ciba".into());
        assert_eq!(Standard.for_client(&held), FapiCiba);
        assert!(Standard.requires_certificate_bound(&held) && !Standard.strict_assertion_audience(&held));
        assert!(!Standard.requires_certificate_bound(&plain));
    }
}
