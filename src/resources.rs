//! Resource indicators (RFC 8707): which resources a client may ask tokens for, what a
//! resource's scopes are, and how a later request may only narrow the resources of a grant.
//!
//! A client may name a registered resource server (the tenant's `resource_servers`, open to every client:
//! the user's consent is the gate) or one of its own `allowed_resources`. A token for named
//! resources carries them as `aud` (RFC 9068 §3), so a resource server accepts only tokens
//! meant for it; without a resource the audience is Authrim's own userinfo.

use crate::tenant::Issuer;
use crate::config::agents::ResourceServer;
use crate::error::{OAuthError, OAuthResult};
use crate::registry::Client;

/// Check requested `resource` values (in order, duplicates dropped) for `client`.
pub fn allowed(app: &Issuer, client: &Client, requested: &[String]) -> OAuthResult<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for r in requested {
        crate::registry::clients::validate_resource(r).map_err(OAuthError::invalid_target)?;
        if app.tenant.resource_server(r).is_none() && !client.meta.allowed_resources.iter().any(|x| x == r) {
            return Err(OAuthError::invalid_target(format!("resource {r:?} is not allowed for this client")));
        }
        if !out.contains(r) {
            out.push(r.clone());
        }
    }
    Ok(out)
}

/// Whether `client` may ask for `scope` with `resources`: its own scopes, or a scope of one
/// of the registered resource servers it names.
pub fn allows_scope(app: &Issuer, client: &Client, scope: &str, resources: &[String]) -> bool {
    client.allows_scope(scope)
        || resources.iter().filter_map(|r| app.tenant.resource_server(r)).any(|rs| rs.scopes.contains_key(scope))
}

/// RFC 8707 §2.2: a token request may name only resources the grant was given (and then the
/// token is for those alone); naming none keeps them all.
pub fn narrow(granted: &[String], requested: &[String]) -> OAuthResult<Vec<String>> {
    if requested.is_empty() {
        return Ok(granted.to_vec());
    }
    let mut out = Vec::new();
    for r in requested {
        if !granted.contains(r) {
            return Err(OAuthError::invalid_target(format!("resource {r:?} was not granted")));
        }
        if !out.contains(r) {
            out.push(r.clone());
        }
    }
    Ok(out)
}

/// The registered resource server of each resource, for the consent page.
pub fn servers<'a>(app: &'a Issuer, resources: &[String]) -> Vec<&'a ResourceServer> {
    resources.iter().filter_map(|r| app.tenant.resource_server(r)).collect()
}

/// The words the consent page shows for a resource server's scope, if one defines it.
pub fn scope_description<'a>(app: &'a Issuer, resources: &[String], scope: &str) -> Option<&'a str> {
    servers(app, resources).into_iter().find_map(|rs| rs.scopes.get(scope).map(String::as_str))
}

#[cfg(test)]
mod tests {
    use super::narrow;

    #[test]
    fn a_request_only_narrows_the_resources() {
        let granted = vec!["https://a.example/".to_string(), "https://b.example/".to_string()];
        assert_eq!(narrow(&granted, &[]).unwrap(), granted);
        assert_eq!(narrow(&granted, &["https://b.example/".into()]).unwrap(), vec!["https://b.example/".to_string()]);
        assert_eq!(narrow(&granted, &["https://c.example/".into()]).unwrap_err().code, "invalid_target");
    }
}

/// The scopes a client that registers itself (RFC 7591) or names itself by a metadata
/// document may have: the operator's `registration_scopes` and every registered resource
/// server's scopes (an MCP client asks for the scope its server's challenge named).
pub fn open_to_self_registered(app: &Issuer) -> Vec<String> {
    let mut open: Vec<String> = crate::util::split_list(&app.config.registration_scopes).map(str::to_string).collect();
    for rs in &app.tenant.resource_servers {
        open.extend(rs.scopes.keys().filter(|s| !open.contains(s)).cloned().collect::<Vec<_>>());
    }
    open
}
