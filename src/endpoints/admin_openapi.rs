//! The admin API's OpenAPI 3.1 document, generated from the handlers' annotations and the
//! input types (utoipa), served at `GET /admin/openapi.json` (public: it describes, it
//! grants nothing; every operation it lists needs the admin token or a tenant's admin credential).

use super::{admin, admin_credentials, admin_saml, admin_directory, admin_factors, admin_org_invitations, admin_organizations, admin_provisioning, admin_tenants};
use crate::registry::{clients::TokenExchangePolicy, ClientInput, UserInput};
use axum::response::{IntoResponse, Response};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Authrim admin API",
        description = "Clients, users, sessions, second factors, registration tokens and the audit log of a tenant (at its issuer), the tenant's admin credentials (at its issuer), and the tenants (at the deployment's issuer), behind `Authorization: Bearer $AUTHRIM_ADMIN_TOKEN` (every tenant, and the tenants) or `Authorization: Bearer atk_…`, one of the tenant's admin credentials (that tenant only, never the tenants). Off (404) when no admin token is set, but to a tenant's credential. Errors are OAuth JSON errors (`error`, `error_description`)."
    ),
    paths(
        admin::list_clients, admin::create_client, admin::show_client, admin::update_client, admin::rotate_secret, admin::delete_client,
        admin::list_users, admin::create_user, admin::show_user, admin::update_user, admin::delete_user,
        admin::list_sessions, admin::end_all_sessions, admin::end_one_session, admin::withdraw_consent,
        admin::list_audit, admin::create_registration_token,
        admin_factors::list, admin_factors::reset, admin_factors::remove, admin_factors::enrol_totp, admin_factors::new_recovery_codes,
        admin_tenants::list_tenants, admin_tenants::create_tenant, admin_tenants::show_tenant, admin_tenants::update_tenant, admin_tenants::delete_tenant,
        admin_credentials::list_credentials, admin_credentials::create_credential, admin_credentials::revoke_credential,
        admin_organizations::list_organizations, admin_organizations::create_organization, admin_organizations::show_organization, admin_organizations::update_organization, admin_organizations::delete_organization, admin_organizations::list_members, admin_organizations::put_member, admin_organizations::remove_member,
        admin_org_invitations::create_invitation, admin_org_invitations::list_invitations, admin_org_invitations::revoke_invitation,
        admin_directory::list_groups, admin_directory::create_group, admin_directory::show_group, admin_directory::update_group, admin_directory::delete_group, admin_directory::list_group_members, admin_directory::put_group_member, admin_directory::remove_group_member,
        admin_directory::list_roles, admin_directory::put_role, admin_directory::delete_role, admin_directory::list_assignments, admin_directory::put_assignment, admin_directory::remove_assignment, admin_directory::user_groups,
        admin_provisioning::show, admin_provisioning::set, admin_provisioning::remove, admin_provisioning::resync,
        admin_saml::register,
    ),
    components(schemas(ClientInput, UserInput, TokenExchangePolicy, admin::RegistrationTokenRequest, admin_factors::Enrol, admin_tenants::NewTenant, admin_tenants::TenantChange, crate::tenant::rows::Overrides, crate::tenant::overrides::SettingsPatch, crate::ui::look::ThemeSetting, crate::tenant::rows::State, admin_credentials::NewCredential, crate::registry::admin_credentials::Credential, crate::registry::OrganizationInput, admin_organizations::MemberInput, admin_org_invitations::InvitationInput, crate::registry::directory::GroupInput, admin_directory::RoleInput, admin_provisioning::TargetInput, admin_saml::ServiceProviderInput, crate::saml::sp_metadata::ServiceProviderOptions, crate::registry::clients::saml::SamlServiceProvider, crate::registry::clients::saml::AssertionConsumerService, crate::registry::clients::saml::SamlAttribute)),
    modifiers(&AdminToken)
)]
struct AdminApi;

/// The bearer scheme every operation names.
struct AdminToken;

impl Modify for AdminToken {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "admin_token",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).description(Some("AUTHRIM_ADMIN_TOKEN, or an admin credential of the tenant (atk_…)")).build()),
        );
    }
}

/// The document, made once.
pub fn document() -> &'static str {
    static DOC: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DOC.get_or_init(|| {
        let mut doc = AdminApi::openapi();
        doc.info.version = env!("CARGO_PKG_VERSION").to_string();
        doc.to_pretty_json().expect("the document serialises")
    })
}

pub async fn serve() -> Response {
    ([(axum::http::header::CONTENT_TYPE, "application/json")], document()).into_response()
}
