//! SAML 2.0 (issue 33; docs/design/saml.md): Authrim as a SAML identity provider for
//! applications that speak only SAML, over the same sign-in as OpenID clients. A front-end
//! (DESIGN §8): it translates SAML to the core's calls and back, and is the only module that
//! sees samael, xmlsec1 or OpenSSL.

pub mod xml;
