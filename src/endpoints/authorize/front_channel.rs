//! Tokens returned by the authorization endpoint itself (OpenID Connect Core §3.2 implicit,
//! §3.3 hybrid): an access token for `… token`, an ID token for `… id_token`, each as the token
//! endpoint would make it, with the hashes that tie them to each other and to the code.

use super::response_type::ResponseType;
use super::AuthorizationRequest;
use crate::error::OAuthError;
use crate::registry::users::SCOPE_CLAIMS;
use crate::stores::Session;
use crate::tenant::Issuer;
use crate::tokens::{self, claims_request, AccessTokenSpec, IdTokenSpec};
use crate::util::split_list;

/// The response's token parameters for `req` in `session`; `code`: the code issued with them
/// (hybrid), for `c_hash`.
pub async fn tokens(app: &Issuer, req: &AuthorizationRequest, session: &Session, code: Option<&str>) -> Result<Vec<(&'static str, String)>, OAuthError> {
    let user = app
        .registry()
        .user(&session.user_id)
        .filter(|u| !u.disabled)
        .ok_or_else(|| OAuthError::access_denied("the signed-in user no longer exists or is disabled"))?;
    let acr = req.reported_acr(&session.acr);
    let org = match &req.organization {
        Some(id) => Some(tokens::OrgClaims::of(app, id, &user.id).ok_or_else(|| OAuthError::access_denied("the user is not a member of the organization"))?),
        None => None,
    };
    let directory = app.client(&req.client_id).and_then(|c| tokens::directory::DirectoryClaims::of(app, &c, &user.id));
    let mut out = Vec::new();
    let access_token = match req.response_type.has_token() {
        true => {
            let (jti, exp) = tokens::new_token_id(app);
            let spec = AccessTokenSpec {
                sub: &user.id,
                client_id: &req.client_id,
                scope: &req.scope,
                auth_time: Some(session.auth_time),
                acr: Some(&acr),
                sid: Some(&session.sid),
                userinfo_claims: claims_request::requested(req.claims.as_ref(), "userinfo"),
                // No refresh token from the front channel, so no grant to revoke it through;
                // the token dies with its `jti` or its session.
                grant_id: None,
                audience: req.resource.clone(),
                act: None,
                may_act: None,
                cnf: None,
                org: org.as_ref(),
                directory: directory.as_ref(),
            };
            let at = tokens::mint_access_token(app, spec, jti, exp).map_err(|e| OAuthError::internal("signing", e))?;
            out.push(("access_token", at.clone()));
            out.push(("token_type", "Bearer".to_string()));
            out.push(("expires_in", app.config.access_token_ttl.to_string()));
            // RFC 6749 §4.2.2: required when it differs from the request's (we may narrow it).
            out.push(("scope", req.scope.clone()));
            Some(at)
        }
        false => None,
    };
    if req.response_type.has_id_token() {
        let mut requested = claims_request::requested(req.claims.as_ref(), "id_token");
        // Core §5.4: the scopes' claims go to userinfo when the response type issues an
        // access token (here or at the token endpoint); `id_token` issues none, so they go in
        // the ID token.
        if req.response_type == ResponseType::IdToken {
            let scoped = SCOPE_CLAIMS.iter().filter(|(s, _)| split_list(&req.scope).any(|x| x == *s)).flat_map(|(_, names)| names.iter());
            for name in scoped {
                if !requested.iter().any(|r| r == name) {
                    requested.push(name.to_string());
                }
            }
        }
        let spec = IdTokenSpec {
            user: &user,
            client_id: &req.client_id,
            nonce: req.nonce.as_deref(),
            auth_time: session.auth_time,
            sid: &session.sid,
            acr: Some(&acr),
            access_token: access_token.as_deref(),
            code,
            requested: &requested,
            grant_id: None,
            amr: &session.amr,
            org: org.as_ref(),
            directory: directory.as_ref(),
            ciba_push: None,
        };
        let signed = tokens::mint_id_token(app, spec).map_err(|e| OAuthError::internal("signing", e))?;
        // Encrypted if the client asked (the lookup is made only for an ID token here).
        let id_token = match app.client(&req.client_id) {
            Some(client) => tokens::encryption::id_token(app, &client, signed).await?,
            None => signed,
        };
        out.push(("id_token", id_token));
    }
    Ok(out)
}
