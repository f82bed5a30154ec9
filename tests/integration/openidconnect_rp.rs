//! Authrim driven by a relying party nobody here wrote: the `openidconnect` crate (ramosbugs),
//! whose JOSE runs on RustCrypto rather than our aws-lc. It does discovery, the code flow with
//! PKCE and nonce, verifies the ID token (signature against the published JWKS, iss, aud, azp,
//! exp, nonce) and its `at_hash`, reads userinfo, refreshes, introspects (RFC 7662) and
//! revokes (RFC 7009), each time parsing our answers with its own types.

use crate::harness::*;
use openidconnect::core::{
    CoreAuthenticationFlow, CoreClient, CoreErrorResponseType, CoreProviderMetadata, CoreRevocableToken, CoreUserInfoClaims,
};
use openidconnect::{
    AccessTokenHash, AuthorizationCode, ClientId, ClientSecret, CsrfToken, IntrospectionUrl, IssuerUrl, Nonce,
    OAuth2TokenResponse, PkceCodeChallenge, RedirectUrl, RefreshToken, RequestTokenError, RevocationUrl, Scope, TokenIntrospectionResponse,
    TokenResponse,
};
use serde_json::json;

/// The crate's HTTP seam, on the test suite's reqwest (no redirects followed, as the crate asks).
async fn send(client: reqwest::Client, request: openidconnect::HttpRequest) -> Result<openidconnect::HttpResponse, reqwest::Error> {
    let (parts, body) = request.into_parts();
    let res = client.request(parts.method, parts.uri.to_string()).headers(parts.headers).body(body).send().await?;
    let mut answer = openidconnect::http::Response::builder().status(res.status());
    for (name, value) in res.headers() {
        answer = answer.header(name, value);
    }
    Ok(answer.body(res.bytes().await?.to_vec()).expect("a response rebuilt from a valid one"))
}

#[tokio::test]
async fn the_openidconnect_crate_completes_the_code_flow_and_uses_every_token() {
    // Over HTTPS: the crate refuses a plain-HTTP revocation endpoint (RFC 7009 §2 requires TLS).
    let s = TestServer::start_tls().await;
    let http = |request| send(s.http.clone(), request);
    let (id, secret) = s.client("rp", json!({"grant_types": ["authorization_code", "refresh_token"]})).await;
    let sub = s.user("alice", json!({"email": "alice@example.com", "email_verified": true, "name": "Alice"})).await;

    // Discovery: the crate checks that the document's issuer is the one it asked for, and
    // fetches the JWKS it names.
    let metadata = CoreProviderMetadata::discover_async(IssuerUrl::new(s.issuer()).unwrap(), &http).await.expect("discovery");
    let doc: serde_json::Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    let client = CoreClient::from_provider_metadata(metadata, ClientId::new(id.clone()), Some(ClientSecret::new(secret.unwrap())))
        .set_redirect_uri(RedirectUrl::new(REDIRECT.to_string()).unwrap())
        .set_introspection_url(IntrospectionUrl::new(doc["introspection_endpoint"].as_str().unwrap().to_string()).unwrap())
        .set_revocation_url(RevocationUrl::new(doc["revocation_endpoint"].as_str().unwrap().to_string()).unwrap());

    // The authorization request as the crate builds it, through our login and consent pages.
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (url, state, nonce) = client
        .authorize_url(CoreAuthenticationFlow::AuthorizationCode, CsrfToken::new_random, Nonce::new_random)
        .add_scope(Scope::new("email".into()))
        .add_scope(Scope::new("profile".into()))
        .add_scope(Scope::new("offline_access".into()))
        .set_pkce_challenge(challenge)
        .url();
    let browser = s.browser();
    let res = browser.client.get(url.as_str()).send().await.unwrap();
    let back = browser.finish_login(res, "alice", PASSWORD).await;
    assert_eq!(back["state"], *state.secret());

    let tokens = client
        .exchange_code(AuthorizationCode::new(back["code"].clone()))
        .unwrap()
        .set_pkce_verifier(verifier)
        .request_async(&http)
        .await
        .expect("code exchange");
    let id_token = tokens.id_token().expect("an ID token for scope openid");
    let verifier = client.id_token_verifier();
    let claims = id_token.claims(&verifier, &nonce).expect("the ID token verifies");
    assert_eq!(claims.subject().as_str(), sub);
    let at_hash = AccessTokenHash::from_token(
        tokens.access_token(),
        id_token.signing_alg().unwrap(),
        id_token.signing_key(&verifier).unwrap(),
    )
    .unwrap();
    assert_eq!(claims.access_token_hash(), Some(&at_hash));
    // The same ID token with another nonce is refused: the crate is really checking.
    assert!(id_token.claims(&verifier, &Nonce::new("another".into())).is_err());

    let info: CoreUserInfoClaims = client
        .user_info(tokens.access_token().clone(), Some(claims.subject().clone()))
        .unwrap()
        .request_async(&http)
        .await
        .expect("userinfo");
    assert_eq!(info.subject().as_str(), sub);
    // Scope claims come from userinfo (OpenID Connect Core §5.4, response type `code`).
    assert_eq!(info.email().map(|e| e.as_str()), Some("alice@example.com"));
    assert_eq!(info.email_verified(), Some(true));
    assert_eq!(info.name().and_then(|n| n.get(None)).map(|n| n.as_str()), Some("Alice"));

    // Refresh: a new access token and a rotated refresh token.
    let refresh = tokens.refresh_token().expect("a refresh token for offline_access").clone();
    let refreshed = client.exchange_refresh_token(&refresh).unwrap().request_async(&http).await.expect("refresh");
    let rotated = refreshed.refresh_token().expect("a rotated refresh token");
    assert_ne!(rotated.secret(), refresh.secret());
    // OpenID Connect Core §12.2: a new ID token for the same subject and authentication, with
    // no nonce (none is sent with a refresh).
    let renewed = refreshed.id_token().expect("an ID token: the grant has scope openid");
    let renewed = renewed.claims(&verifier, |n: Option<&Nonce>| n.map_or(Ok(()), |_| Err("a nonce".to_string()))).expect("it verifies");
    assert_eq!(renewed.subject(), claims.subject());
    assert_eq!(renewed.auth_time(), claims.auth_time());

    // Introspection (RFC 7662), parsed by the crate's response type.
    let access = refreshed.access_token().clone();
    let described = client.introspect(&access).request_async(&http).await.expect("introspection");
    assert!(described.active());
    assert_eq!(described.sub(), Some(sub.as_str()));
    assert_eq!(described.client_id().map(|c| c.as_str()), Some(id.as_str()));

    // Revocation (RFC 7009) of the refresh token ends the grant: its family and the access
    // tokens issued from it.
    client
        .revoke_token(CoreRevocableToken::from(RefreshToken::new(rotated.secret().clone())))
        .unwrap()
        .request_async(&http)
        .await
        .expect("revocation");
    let after = client.introspect(&access).request_async(&http).await.expect("introspection after revocation");
    assert!(!after.active());
    // The error is RFC 6749 §5.2 JSON that the crate parses: invalid_grant.
    match client.exchange_refresh_token(rotated).unwrap().request_async(&http).await {
        Err(RequestTokenError::ServerResponse(e)) => assert_eq!(*e.error(), CoreErrorResponseType::InvalidGrant),
        other => panic!("a revoked refresh token was not refused as invalid_grant: {other:?}"),
    }
}

#[tokio::test]
async fn the_openidconnect_crate_reads_our_token_errors() {
    let s = TestServer::start_tls().await;
    let http = |request| send(s.http.clone(), request);
    let (id, secret) = s.client("rp", json!({})).await;
    let metadata = CoreProviderMetadata::discover_async(IssuerUrl::new(s.issuer()).unwrap(), &http).await.expect("discovery");
    let client = |secret: &str| {
        CoreClient::from_provider_metadata(metadata.clone(), ClientId::new(id.clone()), Some(ClientSecret::new(secret.into())))
            .set_redirect_uri(RedirectUrl::new(REDIRECT.to_string()).unwrap())
    };
    let error_of = |result: Result<_, RequestTokenError<_, openidconnect::StandardErrorResponse<CoreErrorResponseType>>>| match result {
        Err(RequestTokenError::ServerResponse(e)) => e.error().clone(),
        other => panic!("not an OAuth error response: {other:?}"),
    };
    let code = || AuthorizationCode::new("1_not-a-code".into());
    // RFC 6749 §5.2: a failed client authentication is invalid_client, before the code is looked at.
    let wrong = client("wrong").exchange_code(code()).unwrap().request_async(&http).await;
    assert_eq!(error_of(wrong), CoreErrorResponseType::InvalidClient);
    let unknown = client(&secret.unwrap()).exchange_code(code()).unwrap().request_async(&http).await;
    assert_eq!(error_of(unknown), CoreErrorResponseType::InvalidGrant);
}

/// The crate's device flow (RFC 8628): the device authorization request and the polling, as
/// its own types parse them, while the user approves on the verification page meanwhile; the
/// ID token verified by the crate.
#[tokio::test]
async fn the_openidconnect_crate_completes_the_device_flow() {
    use openidconnect::core::CoreDeviceAuthorizationResponse;
    use openidconnect::DeviceAuthorizationUrl;
    let s = TestServer::start_tls_with(|c| c.device_poll_interval = 1).await;
    let http = |request| send(s.http.clone(), request);
    let (id, secret) = s
        .client("tv", json!({"grant_types": ["urn:ietf:params:oauth:grant-type:device_code"], "redirect_uris": [], "scope": "openid profile"}))
        .await;
    let sub = s.user("alice", json!({"name": "Alice"})).await;
    let metadata = CoreProviderMetadata::discover_async(IssuerUrl::new(s.issuer()).unwrap(), &http).await.expect("discovery");
    let doc: serde_json::Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    let client = CoreClient::from_provider_metadata(metadata, ClientId::new(id.clone()), Some(ClientSecret::new(secret.unwrap())))
        .set_device_authorization_url(DeviceAuthorizationUrl::new(doc["device_authorization_endpoint"].as_str().unwrap().to_string()).unwrap());
    let details: CoreDeviceAuthorizationResponse =
        client.exchange_device_code().add_scope(Scope::new("profile".into())).request_async(&http).await.expect("device authorization");
    assert_eq!(details.interval(), std::time::Duration::from_secs(1));
    let uri = details.verification_uri_complete().expect("verification_uri_complete").secret().clone();
    assert!(uri.ends_with(details.user_code().secret()), "{uri}");
    let browser = s.browser();
    // The crate polls (authorization_pending, then its interval) while the user answers.
    let poll = client.exchange_device_access_token(&details).unwrap().request_async(&http, tokio::time::sleep, None);
    let approve = async {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        crate::device::answer(&s, &browser, &uri, "allow").await
    };
    let (tokens, page) = tokio::join!(poll, approve);
    assert_eq!(page.status, 200, "{}", page.html);
    let tokens = tokens.expect("tokens after the approval");
    let claims = tokens.id_token().expect("an ID token").claims(&client.id_token_verifier(), |_: Option<&Nonce>| Ok(())).expect("a valid ID token");
    assert_eq!(claims.subject().as_str(), sub);
    assert!(claims.auth_time().is_some());
    // Used once: the crate's second exchange is refused as invalid_grant.
    let again = client.exchange_device_access_token(&details).unwrap().request_async(&http, tokio::time::sleep, None).await;
    match again {
        Err(RequestTokenError::ServerResponse(e)) => assert_eq!(e.error().as_ref(), "invalid_grant"),
        other => panic!("a spent device code was not refused: {other:?}"),
    }
}
