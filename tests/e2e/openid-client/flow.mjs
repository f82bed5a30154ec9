// One relying party's session against Authrim, with panva's openid-client (v6, on
// oauth4webapi and jose): discovery, the code flow with PKCE, state and nonce, the ID token
// (claims always; its signature against the JWKS too, with non-repudiation checks on),
// userinfo, refresh, introspection, revocation, and the error after revocation. The browser
// part (login and consent forms) is plain fetch with a cookie jar.
//
// Input, from the environment: ISSUER, CLIENT_ID, CLIENT_SECRET, REDIRECT_URI, USERNAME,
// PASSWORD. Output: one JSON line of what it saw, for tests/e2e/test_openid_client.py to check.
// Exits non-zero, with the library's error, when any step fails.
import * as client from 'openid-client';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const redirectUri = env('REDIRECT_URI');

// The client is registered for client_secret_basic (the library's default would be
// client_secret_post, which Authrim refuses for it). The test server is plain HTTP on
// loopback; the library refuses that unless told.
const config = await client.discovery(
  new URL(env('ISSUER')),
  env('CLIENT_ID'),
  undefined,
  client.ClientSecretBasic(env('CLIENT_SECRET')),
  { execute: [client.allowInsecureRequests] },
);
client.enableNonRepudiationChecks(config);

// A browser, as far as the login and consent pages need one.
const jar = new Map();
async function browse(url, init = {}) {
  const headers = new Headers(init.headers);
  if (jar.size) headers.set('cookie', [...jar].map(([k, v]) => `${k}=${v}`).join('; '));
  const res = await fetch(url, { ...init, headers, redirect: 'manual' });
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const eq = pair.indexOf('=');
    jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
  }
  return res;
}
function hidden(html, name) {
  const m = html.match(new RegExp(`name="${name}" value="([^"]*)"`));
  if (!m) throw new Error(`no ${name} in page: ${html.slice(0, 500)}`);
  return m[1];
}
async function submit(base, path, fields) {
  return browse(new URL(path, base), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields),
  });
}
// From an authorization URL to the redirect back to the client, signing in and consenting.
async function authorize(url) {
  let res = await browse(url);
  let page = await res.text();
  if (page.includes('action="/login"')) {
    res = await submit(url, '/login', { challenge: hidden(page, 'challenge'), username: env('USERNAME'), password: env('PASSWORD') });
    page = await res.text();
  }
  if (page.includes('action="/consent"')) {
    res = await submit(url, '/consent', { challenge: hidden(page, 'challenge'), decision: 'allow' });
  }
  const location = res.headers.get('location');
  if (!location || !location.startsWith(redirectUri)) throw new Error(`no redirect to the client (status ${res.status})`);
  return new URL(location);
}

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
  id_token: { sub: idClaims.sub, iss: idClaims.iss, aud: idClaims.aud, nonce: idClaims.nonce, at_hash: idClaims.at_hash ?? null },
  userinfo: { sub: userinfo.sub, email: userinfo.email ?? null, name: userinfo.name ?? null },
  refreshed: {
    new_refresh_token: refreshed.refresh_token !== tokens.refresh_token,
    id_token_sub: refreshed.claims()?.sub ?? null,
  },
  introspection: { active: introspected.active, sub: introspected.sub ?? null, client_id: introspected.client_id ?? null },
  after_revocation: { active: afterRevocation.active, refresh_error: refreshError },
  silent: { state_ok: silentCallback.searchParams.get('state') === silentState, has_code: silentCallback.searchParams.has('code') },
}));
