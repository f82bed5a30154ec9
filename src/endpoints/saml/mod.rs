//! SAML 2.0's HTTP endpoints (issue 33), per tenant: the IdP's metadata (`metadata`), its
//! single sign-on service (`sso`) and its single logout service (`slo`); and, as a service
//! provider of SAML upstream identity providers, its assertion consumer service and metadata
//! (`acs`). The protocol itself is `crate::saml`; these translate it to the sign-in every
//! client goes through (`authorize::continue_authorization`) and the logout (`end_session`),
//! and back.

pub mod acs;
pub mod metadata;
pub mod slo;
pub mod sso;
