// One relying party's session against Authrim, with panva's openid-client (v6, on
// oauth4webapi and jose): discovery, the code flow with PKCE, state and nonce, the ID token
// (claims always; its signature against the JWKS too, with non-repudiation checks on),
// userinfo, refresh, introspection, revocation, and the error after revocation. The browser
// part (login and consent forms) is plain fetch with a cookie jar (rp.mjs).
//
// Input, from the environment: ISSUER, CLIENT_ID, CLIENT_SECRET, REDIRECT_URI, USERNAME,
// PASSWORD; OTHER_ISSUER (optional), another issuer of the deployment, whose userinfo must
// refuse the access token. Output: one JSON line of what it saw, for tests/e2e/test_openid_client.py to check.
// Exits non-zero, with the library's error, when any step fails.
import * as client from 'openid-client';
import { browser, discover, env } from './rp.mjs';

const redirectUri = env('REDIRECT_URI');
const config = await discover();
const { browse, authorize } = browser(redirectUri);

const verifier = client.randomPKCECodeVerifier();
const state = client.randomState();
const nonce = client.randomNonce();
const authorizationUrl = client.buildAuthorizationUrl(config, {
  redirect_uri: redirectUri,
  scope: 'openid email profile offline_access',
  code_challenge: await client.calculatePKCECodeChallenge(verifier),
  code_challenge_method: 'S256',
  state,
  nonce,
});
const callback = await authorize(authorizationUrl);
const tokens = await client.authorizationCodeGrant(config, callback, {
  pkceCodeVerifier: verifier,
  expectedState: state,
  expectedNonce: nonce,
  idTokenExpected: true,
});
const idClaims = tokens.claims();
const userinfo = await client.fetchUserInfo(config, tokens.access_token, idClaims.sub);
// OTHER_ISSUER: another issuer of the same deployment (another tenant), which must refuse
// this issuer's access token at its userinfo endpoint, found by its own discovery.
let otherUserinfo = null;
if (process.env.OTHER_ISSUER) {
  const other = await client.discovery(new URL(process.env.OTHER_ISSUER), 'anyone', undefined, client.None(),
    { execute: [client.allowInsecureRequests] });
  try {
    await client.fetchUserInfo(other, tokens.access_token, idClaims.sub);
    otherUserinfo = { accepted: true };
  } catch (e) {
    otherUserinfo = { status: e.status ?? null, error: e.error ?? e.cause?.[0]?.parameters?.error ?? null, issuer: other.serverMetadata().issuer };
  }
}

const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token);
const introspected = await client.tokenIntrospection(config, refreshed.access_token);
await client.tokenRevocation(config, refreshed.refresh_token, { token_type_hint: 'refresh_token' });
const afterRevocation = await client.tokenIntrospection(config, refreshed.access_token);
let refreshError = null;
try {
  await client.refreshTokenGrant(config, refreshed.refresh_token);
} catch (e) {
  refreshError = { error: e.error ?? null, status: e.status ?? null };
}

// A second authorization in the same browser, silently (prompt=none, live session).
const silentState = client.randomState();
const silentUrl = client.buildAuthorizationUrl(config, {
  redirect_uri: redirectUri,
  scope: 'openid',
  prompt: 'none',
  state: silentState,
  nonce: client.randomNonce(),
});
const silent = await browse(silentUrl);
const silentCallback = new URL(silent.headers.get('location'));

console.log(JSON.stringify({
  id_token_jwt: tokens.id_token,
  other_userinfo: otherUserinfo,
  id_token: { sub: idClaims.sub, iss: idClaims.iss, aud: idClaims.aud, nonce: idClaims.nonce, at_hash: idClaims.at_hash ?? null },
  userinfo: { sub: userinfo.sub, email: userinfo.email ?? null, name: userinfo.name ?? null },
  refreshed: {
    new_refresh_token: refreshed.refresh_token !== tokens.refresh_token,
    id_token_sub: refreshed.claims()?.sub ?? null,
  },
  introspection: { active: introspected.active, sub: introspected.sub ?? null, client_id: introspected.client_id ?? null },
  after_revocation: { active: afterRevocation.active, refresh_error: refreshError },
  silent: { state_ok: silentCallback.searchParams.get('state') === silentState, has_code: silentCallback.searchParams.has('code') },
  // Groups and roles (issue 32) as the library decoded them: the ID token's claims (verified
  // above), userinfo's answer, and the introspection of the refreshed access token.
  directory: {
    id_token: { groups: idClaims.groups ?? null, roles: idClaims.roles ?? null },
    userinfo: { groups: userinfo.groups ?? null, roles: userinfo.roles ?? null },
    introspection: { groups: introspected.groups ?? null, roles: introspected.roles ?? null },
  },
}));
