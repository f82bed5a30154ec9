//! A client made, changed or given a new secret: from a `ClientInput` (the admin API, the CLI,
//! dynamic registration, a Client ID Metadata Document) to a validated `Client`.

use super::*;

/// Grant types a client may be registered for. Grows as grant modules land.
/// The token endpoint's grant types, and `implicit` (RFC 7591 §2.1), which a client registers
/// with the response types that return tokens from the authorization endpoint.
pub fn supported_grant_types() -> &'static [&'static str] {
    static ALL: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
        crate::grants::GRANT_TYPES.iter().copied().chain([crate::endpoints::authorize::response_type::IMPLICIT_GRANT]).collect()
    });
    &ALL
}

/// Build a new client from `input`; returns it with its plain secret (confidential clients).
pub fn new_client(input: ClientInput, vault: &Vault) -> Result<(Client, Option<String>), String> {
    let meta = metadata_of(input);
    validate_id(&meta.client_id)?;
    validate(&meta)?;
    let (secret, hash, sealed) = new_secret(&meta.token_endpoint_auth_method, &meta.client_id, vault);
    Ok((Client::build(meta, hash, sealed), secret))
}

/// One of Authrim's own pages as a client of itself (the account page signs its users in
/// through `/authorize` like any application): public, PKCE, one redirect URI, no consent.
pub fn internal_client(client_id: &str, name: &str, redirect_uri: String) -> Client {
    let mut meta = metadata_of(ClientInput {
        client_id: Some(client_id.into()),
        client_name: Some(name.into()),
        redirect_uris: Some(vec![redirect_uri]),
        token_endpoint_auth_method: Some("none".into()),
        scope: Some("openid".into()),
        ..Default::default()
    });
    meta.first_party = true;
    Client::build(meta, None, None)
}

/// A client described by a Client ID Metadata Document at `url` (`registry::documents`): its
/// id is the URL, and it has no secret.
pub fn document_client(mut input: ClientInput, url: &str) -> Result<Client, String> {
    input.client_id = Some(url.to_string());
    let meta = metadata_of(input);
    if has_secret(&meta.token_endpoint_auth_method) {
        return Err("a document client has no secret".into());
    }
    validate(&meta)?;
    Ok(Client::build(meta, None, None))
}

fn metadata_of(input: ClientInput) -> ClientMetadata {
    let mut meta = metadata_fields(input);
    default_encryption(&mut meta);
    meta
}

fn metadata_fields(input: ClientInput) -> ClientMetadata {
    // A SAML service provider has no OAuth side: none of it, unless given (and then refused).
    let saml = input.saml.is_some();
    let none = |v: &Option<Vec<String>>| v.clone().unwrap_or_default();
    let method = input.token_endpoint_auth_method.clone().unwrap_or_else(|| if saml { AUTH_NONE } else { AUTH_BASIC }.into());
    ClientMetadata {
        client_id: input.client_id.clone().unwrap_or_else(|| format!("client_{}", &random_token()[..22])),
        client_name: input.client_name.clone().filter(|n| !n.is_empty()),
        redirect_uris: input.redirect_uris.clone().unwrap_or_default(),
        grant_types: if saml { none(&input.grant_types) } else { input.grant_types.clone().unwrap_or_else(|| vec!["authorization_code".into()]) },
        response_types: if saml { none(&input.response_types) } else { input.response_types.clone().unwrap_or_else(|| vec!["code".into()]) },
        token_endpoint_auth_method: method,
        scope: input.scope.clone().unwrap_or_else(|| SUPPORTED_SCOPES.join(" ")),
        allowed_audiences: input.allowed_audiences.clone().unwrap_or_default(),
        allowed_resources: input.allowed_resources.clone().unwrap_or_default(),
        token_exchange: input.token_exchange.clone(),
        allowed_cors_origins: input.allowed_cors_origins.clone().unwrap_or_default(),
        post_logout_redirect_uris: input.post_logout_redirect_uris.clone().unwrap_or_default(),
        backchannel_logout_uri: input.backchannel_logout_uri.clone().filter(|u| !u.is_empty()),
        backchannel_logout_session_required: input.backchannel_logout_session_required.unwrap_or(false),
        backchannel_token_delivery_mode: input.backchannel_token_delivery_mode.clone().filter(|u| !u.is_empty()),
        backchannel_client_notification_endpoint: input.backchannel_client_notification_endpoint.clone().filter(|u| !u.is_empty()),
        backchannel_user_code_parameter: input.backchannel_user_code_parameter.unwrap_or(false),
        backchannel_authentication_request_signing_alg: input.backchannel_authentication_request_signing_alg.clone().filter(|a| !a.is_empty()),
        frontchannel_logout_uri: input.frontchannel_logout_uri.clone().filter(|u| !u.is_empty()),
        frontchannel_logout_session_required: input.frontchannel_logout_session_required.unwrap_or(false),
        jwks: input.jwks.clone().filter(|j| !client_keys::is_empty_set(j)),
        jwks_uri: input.jwks_uri.clone().filter(|u| !u.is_empty()),
        token_endpoint_auth_signing_alg: input.token_endpoint_auth_signing_alg.clone().filter(|a| !a.is_empty()),
        require_pushed_authorization_requests: input.require_pushed_authorization_requests.unwrap_or(false),
        authorization_signed_response_alg: input.authorization_signed_response_alg.clone().filter(|a| !a.is_empty()),
        authorization_encrypted_response_alg: input.authorization_encrypted_response_alg.clone().filter(|a| !a.is_empty()),
        authorization_encrypted_response_enc: input.authorization_encrypted_response_enc.clone().filter(|a| !a.is_empty()),
        request_object_encryption_alg: input.request_object_encryption_alg.clone().filter(|a| !a.is_empty()),
        request_object_encryption_enc: input.request_object_encryption_enc.clone().filter(|a| !a.is_empty()),
        request_object_signing_alg: input.request_object_signing_alg.clone().filter(|a| !a.is_empty()),
        require_signed_request_object: input.require_signed_request_object.unwrap_or(false),
        request_uris: input.request_uris.clone().unwrap_or_default(),
        dpop_bound_access_tokens: input.dpop_bound_access_tokens.unwrap_or(false),
        mtls: MtlsMetadata::from_input(&input),
        subject_type: input.subject_type.clone().filter(|a| !a.is_empty()),
        sector_identifier_uri: input.sector_identifier_uri.clone().filter(|a| !a.is_empty()),
        id_token_signed_response_alg: input.id_token_signed_response_alg.clone().filter(|a| !a.is_empty()),
        userinfo_signed_response_alg: input.userinfo_signed_response_alg.clone().filter(|a| !a.is_empty()),
        id_token_encrypted_response_alg: input.id_token_encrypted_response_alg.clone().filter(|a| !a.is_empty()),
        id_token_encrypted_response_enc: input.id_token_encrypted_response_enc.clone().filter(|a| !a.is_empty()),
        userinfo_encrypted_response_alg: input.userinfo_encrypted_response_alg.clone().filter(|a| !a.is_empty()),
        userinfo_encrypted_response_enc: input.userinfo_encrypted_response_enc.clone().filter(|a| !a.is_empty()),
        introspection_signed_response_alg: input.introspection_signed_response_alg.clone().filter(|a| !a.is_empty()),
        introspection_encrypted_response_alg: input.introspection_encrypted_response_alg.clone().filter(|a| !a.is_empty()),
        introspection_encrypted_response_enc: input.introspection_encrypted_response_enc.clone().filter(|a| !a.is_empty()),
        access_token_signing_alg: input.access_token_signing_alg.clone().filter(|a| !a.is_empty()),
        initiate_login_uri: input.initiate_login_uri.clone().filter(|u| !u.is_empty()),
        client_uri: input.client_uri.clone().filter(|u| !u.is_empty()),
        logo_uri: input.logo_uri.clone().filter(|u| !u.is_empty()),
        tos_uri: input.tos_uri.clone().filter(|u| !u.is_empty()),
        policy_uri: input.policy_uri.clone().filter(|u| !u.is_empty()),
        contacts: input.contacts.clone().unwrap_or_default(),
        application_type: input.application_type.clone().filter(|u| !u.is_empty()),
        default_acr_values: input.default_acr_values.clone().unwrap_or_default(),
        directory: DirectoryClaimsMetadata {
            groups_claim: input.groups_claim.clone().filter(|v| !v.is_empty()),
            groups_assigned_only: input.groups_assigned_only.unwrap_or(false),
            groups_prefixes: input.groups_prefixes.clone().unwrap_or_default(),
            groups_claim_name: input.groups_claim_name.clone().filter(|v| !v.is_empty()),
            roles_claim_name: input.roles_claim_name.clone().filter(|v| !v.is_empty()),
        },
        require_mfa: input.require_mfa.unwrap_or(false),
        require_passkey: input.require_passkey.unwrap_or(false),
        organization_required: input.organization_required.unwrap_or(false),
        refresh_reuse_grace: input.refresh_reuse_grace.and_then(|g| u64::try_from(g).ok()),
        security_profile: input.security_profile.clone().filter(|p| !p.is_empty()),
        saml: input.saml.clone(),
        first_party: false,
        client_id_issued_at: now(),
    }
}

/// Apply `input` to an existing client. A change of authentication method that needs a secret
/// the client does not have (a public client made confidential, or `client_secret_jwt`, whose
/// secret must be kept sealed rather than hashed) issues one (returned); a method without a
/// secret drops it.
pub fn update_client(existing: &Client, input: ClientInput, vault: &Vault) -> Result<(Client, Option<String>), String> {
    if input.client_id.as_deref().is_some_and(|id| id != existing.id()) {
        return Err("client_id cannot be changed".into());
    }
    let mut meta = existing.meta.clone();
    meta.mtls.apply(&input);
    if let Some(v) = input.client_name { meta.client_name = Some(v).filter(|n| !n.is_empty()) }
    if let Some(v) = input.redirect_uris { meta.redirect_uris = v }
    if let Some(v) = input.grant_types { meta.grant_types = v }
    if let Some(v) = input.response_types { meta.response_types = v }
    if let Some(v) = input.token_endpoint_auth_method { meta.token_endpoint_auth_method = v }
    if let Some(v) = input.scope { meta.scope = v }
    if let Some(v) = input.allowed_audiences { meta.allowed_audiences = v }
    if let Some(v) = input.allowed_resources { meta.allowed_resources = v }
    if let Some(v) = input.token_exchange { meta.token_exchange = Some(v) }
    if let Some(v) = input.allowed_cors_origins { meta.allowed_cors_origins = v }
    if let Some(v) = input.post_logout_redirect_uris { meta.post_logout_redirect_uris = v }
    if let Some(v) = input.backchannel_logout_uri { meta.backchannel_logout_uri = Some(v).filter(|u| !u.is_empty()) }
    if let Some(v) = input.backchannel_logout_session_required { meta.backchannel_logout_session_required = v }
    if let Some(v) = input.backchannel_token_delivery_mode { meta.backchannel_token_delivery_mode = Some(v).filter(|u| !u.is_empty()) }
    if let Some(v) = input.backchannel_client_notification_endpoint { meta.backchannel_client_notification_endpoint = Some(v).filter(|u| !u.is_empty()) }
    if let Some(v) = input.backchannel_user_code_parameter { meta.backchannel_user_code_parameter = v }
    if let Some(v) = input.backchannel_authentication_request_signing_alg { meta.backchannel_authentication_request_signing_alg = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.frontchannel_logout_uri { meta.frontchannel_logout_uri = Some(v).filter(|u| !u.is_empty()) }
    if let Some(v) = input.frontchannel_logout_session_required { meta.frontchannel_logout_session_required = v }
    if let Some(v) = input.jwks { meta.jwks = Some(v).filter(|j| !client_keys::is_empty_set(j)) }
    if let Some(v) = input.jwks_uri { meta.jwks_uri = Some(v).filter(|u| !u.is_empty()) }
    if let Some(v) = input.token_endpoint_auth_signing_alg { meta.token_endpoint_auth_signing_alg = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.require_pushed_authorization_requests { meta.require_pushed_authorization_requests = v }
    if let Some(v) = input.authorization_signed_response_alg { meta.authorization_signed_response_alg = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.authorization_encrypted_response_alg { meta.authorization_encrypted_response_alg = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.authorization_encrypted_response_enc { meta.authorization_encrypted_response_enc = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.request_object_encryption_alg { meta.request_object_encryption_alg = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.request_object_encryption_enc { meta.request_object_encryption_enc = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.request_object_signing_alg { meta.request_object_signing_alg = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.require_signed_request_object { meta.require_signed_request_object = v }
    if let Some(v) = input.request_uris { meta.request_uris = v }
    if let Some(v) = input.dpop_bound_access_tokens { meta.dpop_bound_access_tokens = v }
    if let Some(v) = input.subject_type { meta.subject_type = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.sector_identifier_uri { meta.sector_identifier_uri = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.id_token_signed_response_alg { meta.id_token_signed_response_alg = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.userinfo_signed_response_alg { meta.userinfo_signed_response_alg = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.id_token_encrypted_response_alg { meta.id_token_encrypted_response_alg = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.id_token_encrypted_response_enc { meta.id_token_encrypted_response_enc = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.userinfo_encrypted_response_alg { meta.userinfo_encrypted_response_alg = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.userinfo_encrypted_response_enc { meta.userinfo_encrypted_response_enc = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.introspection_signed_response_alg { meta.introspection_signed_response_alg = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.introspection_encrypted_response_alg { meta.introspection_encrypted_response_alg = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.introspection_encrypted_response_enc { meta.introspection_encrypted_response_enc = Some(v).filter(|a| !a.is_empty()) }
    default_encryption(&mut meta);
    if let Some(v) = input.access_token_signing_alg { meta.access_token_signing_alg = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.initiate_login_uri { meta.initiate_login_uri = Some(v).filter(|u| !u.is_empty()) }
    if let Some(v) = input.client_uri { meta.client_uri = Some(v).filter(|u| !u.is_empty()) }
    if let Some(v) = input.logo_uri { meta.logo_uri = Some(v).filter(|u| !u.is_empty()) }
    if let Some(v) = input.tos_uri { meta.tos_uri = Some(v).filter(|u| !u.is_empty()) }
    if let Some(v) = input.policy_uri { meta.policy_uri = Some(v).filter(|u| !u.is_empty()) }
    if let Some(v) = input.contacts { meta.contacts = v }
    if let Some(v) = input.application_type { meta.application_type = Some(v).filter(|u| !u.is_empty()) }
    if let Some(v) = input.default_acr_values { meta.default_acr_values = v }
    if let Some(v) = input.groups_claim { meta.directory.groups_claim = Some(v).filter(|v| !v.is_empty()) }
    if let Some(v) = input.groups_assigned_only { meta.directory.groups_assigned_only = v }
    if let Some(v) = input.groups_prefixes { meta.directory.groups_prefixes = v }
    if let Some(v) = input.groups_claim_name { meta.directory.groups_claim_name = Some(v).filter(|v| !v.is_empty()) }
    if let Some(v) = input.roles_claim_name { meta.directory.roles_claim_name = Some(v).filter(|v| !v.is_empty()) }
    if let Some(v) = input.require_mfa { meta.require_mfa = v }
    if let Some(v) = input.require_passkey { meta.require_passkey = v }
    if let Some(v) = input.organization_required { meta.organization_required = v }
    if let Some(v) = input.refresh_reuse_grace { meta.refresh_reuse_grace = u64::try_from(v).ok() }
    if let Some(v) = input.security_profile { meta.security_profile = Some(v).filter(|p| !p.is_empty()) }
    if let Some(v) = input.saml {
        if meta.saml.is_none() {
            return Err("an OpenID client cannot be made a SAML service provider: register a new client".into());
        }
        meta.saml = Some(v);
    }
    validate(&meta)?;
    let method = meta.token_endpoint_auth_method.as_str();
    let keeps = match method {
        _ if !has_secret(method) => false,
        AUTH_SECRET_JWT => existing.secret_sealed.is_some(),
        _ => existing.secret_hash.is_some(),
    };
    if keeps {
        // A client moving from client_secret_jwt to a hashed method keeps its secret, sealed
        // copy dropped (nothing needs it any more).
        let sealed = (method == AUTH_SECRET_JWT).then(|| existing.secret_sealed.clone()).flatten();
        return Ok((Client::build(meta, existing.secret_hash, sealed).keep_registration_token(existing), None));
    }
    let (secret, hash, sealed) = new_secret(method, &meta.client_id, vault);
    Ok((Client::build(meta, hash, sealed).keep_registration_token(existing), secret))
}

/// A fresh secret for a client that has one (the old one stops working).
pub fn rotate_secret(existing: &Client, vault: &Vault) -> Result<(Client, String), String> {
    let (secret, hash, sealed) = new_secret(existing.auth_method(), existing.id(), vault);
    let secret = secret.ok_or_else(|| format!("a client using {} has no secret", existing.auth_method()))?;
    Ok((Client::build(existing.meta.clone(), hash, sealed).keep_registration_token(existing), secret))
}

/// `existing` with `secret` as its secret (kept hashed like any other): for a client whose
/// secret the server can work out again (the demo client, `http::demo`). Not for
/// `client_secret_jwt`, whose secret is kept sealed rather than hashed.
pub fn with_secret(existing: &Client, secret: &str) -> Result<Client, String> {
    if !has_secret(existing.auth_method()) || existing.auth_method() == AUTH_SECRET_JWT {
        return Err(format!("a client using {} cannot be given a secret this way", existing.auth_method()));
    }
    Ok(Client::build(existing.meta.clone(), Some(secret_hash(secret)), None).keep_registration_token(existing))
}
