//! `authrim client …`: the client commands and the metadata flags they share (`ClientArgs`,
//! turned into the registry's `ClientInput`).

use crate::registry::ClientInput;
use clap::{Args, Subcommand};

#[derive(Subcommand)]
pub enum ClientCommand {
    /// Register a client; prints its metadata and, once, its secret.
    Create(ClientArgs),
    List,
    Show { client_id: String },
    Update {
        /// Its own arg id: `ClientArgs` has a `--client-id` too, and clap refuses two args
        /// with one id (a panic in debug builds).
        #[arg(id = "target_client_id", value_name = "CLIENT_ID")]
        client_id: String,
        #[command(flatten)]
        args: ClientArgs,
    },
    Delete { client_id: String },
    /// Issue a new secret (the old one stops working).
    RotateSecret { client_id: String },
}

#[derive(Args, Default)]
pub struct ClientArgs {
    #[arg(long)]
    pub client_id: Option<String>,
    #[arg(long)]
    pub name: Option<String>,
    /// Repeat for several URIs.
    #[arg(long = "redirect-uri")]
    pub redirect_uris: Vec<String>,
    /// Repeat for several grant types.
    #[arg(long = "grant-type")]
    pub grant_types: Vec<String>,
    /// Repeat for several response types: code (the default), or the hybrid and implicit
    /// ones ("code id_token", "id_token token", ...), which need --grant-type implicit.
    #[arg(long = "response-type")]
    pub response_types: Vec<String>,
    /// client_secret_basic (default), client_secret_post, client_secret_jwt, private_key_jwt
    /// (with --jwks-uri or --jwks-file) or none.
    #[arg(long)]
    pub auth_method: Option<String>,
    /// Shorthand for --auth-method none (a public client, which must use PKCE).
    #[arg(long)]
    pub public: bool,
    /// Scopes the client may request, space-separated.
    #[arg(long)]
    pub scope: Option<String>,
    /// An audience the client may request tokens for (repeat for several).
    #[arg(long = "audience")]
    pub audiences: Vec<String>,
    /// A resource URI the client may request tokens for (repeat for several).
    #[arg(long = "resource")]
    pub resources: Vec<String>,
    /// An origin (scheme://host[:port]) whose pages may call /token, /revoke and /userinfo
    /// (CORS; repeat for several). Default: the origins of the redirect URIs.
    #[arg(long = "cors-origin")]
    pub cors_origins: Vec<String>,
    /// Where RP-initiated logout may send the user back (repeat for several).
    #[arg(long = "post-logout-redirect-uri")]
    pub post_logout_redirect_uris: Vec<String>,
    /// Back-Channel Logout: the URL logout tokens are POSTed to ("" removes it).
    #[arg(long)]
    pub backchannel_logout_uri: Option<String>,
    /// CIBA: how the client learns that the user answered, poll or ping ("" removes it).
    #[arg(long)]
    pub backchannel_token_delivery_mode: Option<String>,
    /// CIBA ping mode: where the client is told ("" removes it).
    #[arg(long)]
    pub backchannel_client_notification_endpoint: Option<String>,
    /// Front-Channel Logout: the page loaded in an iframe on logout ("" removes it).
    #[arg(long)]
    pub frontchannel_logout_uri: Option<String>,
    /// Where the client publishes its public keys, for private_key_jwt ("" removes it).
    #[arg(long)]
    pub jwks_uri: Option<String>,
    /// A file holding the client's public keys as a JWK Set (instead of --jwks-uri).
    #[arg(long)]
    pub jwks_file: Option<std::path::PathBuf>,
    /// The one algorithm the client's authentication JWTs may use (e.g. ES256, HS256).
    #[arg(long)]
    pub token_endpoint_auth_signing_alg: Option<String>,
    /// The client's authorization requests must be pushed (/par) first.
    #[arg(long)]
    pub require_par: bool,
    /// The client's authorization requests must be signed request objects (RFC 9101).
    #[arg(long)]
    pub require_signed_request_object: bool,
    /// Seconds in which a retry with the client's just-superseded refresh token gets the same
    /// successor (0: strict; -1: the deployment's refresh_reuse_grace again).
    #[arg(long, allow_negative_numbers = true)]
    pub refresh_reuse_grace: Option<i64>,
    /// fapi2 or fapi-ciba: hold this client to the FAPI 2.0 Security Profile or to FAPI-CIBA
    /// as well as the deployment's security_profile ("" returns it to the deployment's).
    #[arg(long)]
    pub security_profile: Option<String>,
    /// Where the application starts a sign-in itself (OpenID Connect third-party initiated
    /// login, https; "" removes it): listed on the start page and the account page.
    #[arg(long)]
    pub initiate_login_uri: Option<String>,
    /// ID tokens are signed, then encrypted (JWE) to the client's key for this alg (RSA-OAEP, RSA-OAEP-256, ECDH-ES, ECDH-ES+A128KW, ECDH-ES+A256KW; needs --jwks-file or --jwks-uri) ("" removes it).
    #[arg(long)]
    pub id_token_encrypted_response_alg: Option<String>,
    /// Its content encryption (A128CBC-HS256 by default; A256CBC-HS512, A128GCM, A256GCM).
    #[arg(long)]
    pub id_token_encrypted_response_enc: Option<String>,
    /// Userinfo answers are encrypted to the client's key for this alg ("" removes it).
    #[arg(long)]
    pub userinfo_encrypted_response_alg: Option<String>,
    /// Its content encryption (A128CBC-HS256 by default; A256CBC-HS512, A128GCM, A256GCM).
    #[arg(long)]
    pub userinfo_encrypted_response_enc: Option<String>,
    /// JWT introspection answers (RFC 9701) are encrypted to the client's key for this alg ("" removes it).
    #[arg(long)]
    pub introspection_encrypted_response_alg: Option<String>,
    /// Its content encryption (A128CBC-HS256 by default; A256CBC-HS512, A128GCM, A256GCM).
    #[arg(long)]
    pub introspection_encrypted_response_enc: Option<String>,
    /// JARM responses are signed, then encrypted to the client's key for this alg ("" removes it).
    #[arg(long)]
    pub authorization_encrypted_response_alg: Option<String>,
    /// Its content encryption (A128CBC-HS256 by default; A256CBC-HS512, A128GCM, A256GCM).
    #[arg(long)]
    pub authorization_encrypted_response_enc: Option<String>,
    /// The client's request objects are encrypted to this server's keys (its JWKS, use enc) with this alg; a plain one is then refused ("" removes it).
    #[arg(long)]
    pub request_object_encryption_alg: Option<String>,
    /// Its content encryption (A128CBC-HS256 by default; A256CBC-HS512, A128GCM, A256GCM).
    #[arg(long)]
    pub request_object_encryption_enc: Option<String>,
    /// The user's groups in the client's tokens: names or ids ("" for none; docs/groups-and-roles.md).
    #[arg(long)]
    pub groups_claim: Option<String>,
    /// Only the groups that hold one of the client's roles.
    #[arg(long)]
    pub groups_assigned_only: Option<bool>,
    /// Only the groups whose name begins with this (repeat for several; "" alone for none).
    #[arg(long = "groups-prefix")]
    pub groups_prefixes: Vec<String>,
    /// The groups claim's name in ID tokens and userinfo ("" for `groups`).
    #[arg(long)]
    pub groups_claim_name: Option<String>,
    /// The roles claim's name in ID tokens and userinfo ("" for `roles`).
    #[arg(long)]
    pub roles_claim_name: Option<String>,
    /// A SAML 2.0 service provider, from its metadata (an EntityDescriptor file): the client
    /// signs users in by SAML only (docs/saml.md). Given on `update`, it replaces the client's
    /// SAML settings.
    #[arg(long, value_name = "FILE")]
    pub saml_metadata: Option<std::path::PathBuf>,
    /// The SAML NameID: persistent (default), transient, emailAddress or unspecified.
    #[arg(long, requires = "saml_metadata")]
    pub saml_name_id_format: Option<String>,
    /// A SAML attribute from a user's claim, NAME=CLAIM (repeat for several), e.g.
    /// mail=email, or groups=groups.
    #[arg(long = "saml-attribute", value_name = "NAME=CLAIM", requires = "saml_metadata")]
    pub saml_attributes: Vec<String>,
    /// Refuse the service provider's AuthnRequests that are not signed (default: as its
    /// metadata's AuthnRequestsSigned says).
    #[arg(long, requires = "saml_metadata")]
    pub saml_require_signed_requests: bool,
    /// Encrypt assertions to the service provider's encryption certificate (from its metadata).
    #[arg(long, requires = "saml_metadata")]
    pub saml_encrypt_assertions: bool,
    /// List the service provider on the start and account pages, signed into from there
    /// (IdP-initiated SSO; the SP must accept unsolicited Responses).
    #[arg(long, requires = "saml_metadata")]
    pub saml_idp_initiated: bool,
}

/// The `saml` settings the `--saml-*` flags describe.
fn saml_settings(args: &ClientArgs) -> anyhow::Result<Option<crate::registry::clients::saml::SamlServiceProvider>> {
    use crate::registry::clients::saml::{SamlAttribute, NAMEID_FORMATS};
    let Some(path) = &args.saml_metadata else { return Ok(None) };
    let xml = std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let name_id_format = match args.saml_name_id_format.as_deref() {
        None => None,
        Some(short) => Some(NAMEID_FORMATS.iter().find(|f| **f == short || f.ends_with(&format!(":{short}"))).ok_or_else(|| anyhow::anyhow!("--saml-name-id-format: persistent, transient, emailAddress or unspecified"))?.to_string()),
    };
    let attributes = args
        .saml_attributes
        .iter()
        .map(|a| match a.split_once('=') {
            Some((name, claim)) => Ok(SamlAttribute { name: name.into(), claim: claim.into(), name_format: None, friendly_name: None }),
            None => Err(anyhow::anyhow!("--saml-attribute {a:?}: NAME=CLAIM")),
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let overrides = crate::saml::sp_metadata::ServiceProviderOptions {
        name_id_format,
        attributes: (!attributes.is_empty()).then_some(attributes),
        require_signed_requests: args.saml_require_signed_requests.then_some(true),
        sign_response: None,
        encrypt_assertions: args.saml_encrypt_assertions.then_some(true),
        idp_initiated: args.saml_idp_initiated.then_some(true),
        default_relay_state: None,
        consent: None,
    };
    let sp = crate::saml::sp_metadata::service_provider(&xml, &Default::default(), overrides).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok(Some(sp))
}

impl ClientArgs {
    pub(super) fn input(self) -> anyhow::Result<ClientInput> {
        let saml = saml_settings(&self)?;
        let jwks = match &self.jwks_file {
            None => None,
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
                Some(serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{}: not JSON: {e}", path.display()))?)
            }
        };
        Ok(ClientInput {
            client_id: self.client_id,
            client_name: self.name,
            redirect_uris: (!self.redirect_uris.is_empty()).then_some(self.redirect_uris),
            grant_types: (!self.grant_types.is_empty()).then_some(self.grant_types),
            response_types: (!self.response_types.is_empty()).then_some(self.response_types),
            token_endpoint_auth_method: if self.public { Some("none".into()) } else { self.auth_method },
            scope: self.scope,
            allowed_audiences: (!self.audiences.is_empty()).then_some(self.audiences),
            allowed_resources: (!self.resources.is_empty()).then_some(self.resources),
            allowed_cors_origins: (!self.cors_origins.is_empty()).then_some(self.cors_origins),
            token_exchange: None,
            post_logout_redirect_uris: (!self.post_logout_redirect_uris.is_empty()).then_some(self.post_logout_redirect_uris),
            backchannel_logout_uri: self.backchannel_logout_uri,
            backchannel_logout_session_required: None,
            backchannel_token_delivery_mode: self.backchannel_token_delivery_mode,
            backchannel_client_notification_endpoint: self.backchannel_client_notification_endpoint,
            backchannel_user_code_parameter: None,
            backchannel_authentication_request_signing_alg: None,
            frontchannel_logout_uri: self.frontchannel_logout_uri,
            frontchannel_logout_session_required: None,
            jwks,
            jwks_uri: self.jwks_uri,
            token_endpoint_auth_signing_alg: self.token_endpoint_auth_signing_alg,
            require_pushed_authorization_requests: self.require_par.then_some(true),
            request_object_signing_alg: None,
            require_signed_request_object: self.require_signed_request_object.then_some(true),
            refresh_reuse_grace: self.refresh_reuse_grace,
            security_profile: self.security_profile.clone(),
            saml,
            initiate_login_uri: self.initiate_login_uri,
            id_token_encrypted_response_alg: self.id_token_encrypted_response_alg,
            id_token_encrypted_response_enc: self.id_token_encrypted_response_enc,
            userinfo_encrypted_response_alg: self.userinfo_encrypted_response_alg,
            userinfo_encrypted_response_enc: self.userinfo_encrypted_response_enc,
            introspection_encrypted_response_alg: self.introspection_encrypted_response_alg,
            introspection_encrypted_response_enc: self.introspection_encrypted_response_enc,
            authorization_encrypted_response_alg: self.authorization_encrypted_response_alg,
            authorization_encrypted_response_enc: self.authorization_encrypted_response_enc,
            request_object_encryption_alg: self.request_object_encryption_alg,
            request_object_encryption_enc: self.request_object_encryption_enc,
            groups_claim: self.groups_claim,
            groups_assigned_only: self.groups_assigned_only,
            // `--groups-prefix ""` names none: the client's prefixes are cleared.
            groups_prefixes: (!self.groups_prefixes.is_empty()).then(|| self.groups_prefixes.into_iter().filter(|p| !p.is_empty()).collect()),
            groups_claim_name: self.groups_claim_name,
            roles_claim_name: self.roles_claim_name,
            ..Default::default()
        })
    }
}
