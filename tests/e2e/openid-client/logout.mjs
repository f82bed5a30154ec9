// Logout of one relying party's session against Authrim, with panva's openid-client (v6):
// sign in with the code flow (PKCE, state, nonce; no offline_access, so nothing outlives the
// session), RP-Initiated Logout with the URL from the library's buildEndSessionUrl, followed
// in the same browser, and Back-Channel Logout received on this program's own HTTP endpoint.
// openid-client 6 has no logout-token helper, so the token is verified with jose, the JOSE
// library openid-client is built on: jwtVerify against createRemoteJWKSet(jwks_uri), with the
// issuer, the audience (this client), typ logout+jwt and RS256 required. Then, with the session
// over: userinfo with the session's access token, and a silent authorization (prompt=none) in
// the same browser and with the old session cookie put back.
//
// Input, from the environment: what rp.mjs reads, REDIRECT_URI, POST_LOGOUT_REDIRECT_URI
// (registered for the client), BACKCHANNEL_FD (a listening TCP socket, inherited from the test,
// that the client's backchannel_logout_uri points at; the test binds it, so there is no race
// for a port) and BACKCHANNEL_WAIT_MS (how long to wait for the logout token, 10000 if unset).
// Output: one JSON line of what it saw, for tests/e2e/test_openid_client.py to check. Exits
// non-zero, with the error, when any step fails or no logout token comes in time.
import http from 'node:http';
import * as client from 'openid-client';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { browser, discover, env } from './rp.mjs';

const SESSION_COOKIE = 'authrim_session';
const redirectUri = env('REDIRECT_URI');
const postLogoutRedirectUri = env('POST_LOGOUT_REDIRECT_URI');
const waitMs = Number(process.env.BACKCHANNEL_WAIT_MS || 10000);

const config = await discover();
const metadata = config.serverMetadata();
const clientId = config.clientMetadata().client_id;
const jwks = createRemoteJWKSet(new URL(metadata.jwks_uri));

// How a relying party checks a logout token (Back-Channel Logout 1.0 §2.6), the library part.
async function verifyLogoutToken(token, audience = clientId) {
  return jwtVerify(token, jwks, {
    issuer: metadata.issuer,
    audience,
    typ: 'logout+jwt',
    algorithms: ['RS256'],
    requiredClaims: ['iss', 'aud', 'iat', 'exp', 'jti', 'events'],
  });
}

// The back-channel logout endpoint: answers 200 to a logout token that verifies, 400 to
// anything else, and keeps every delivery for the output (delivery is at least once).
const deliveries = [];
let delivered;
const firstDelivery = new Promise((resolve) => { delivered = resolve; });
const server = http.createServer(async (req, res) => {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > 65536) break;
    chunks.push(chunk);
  }
  const body = Buffer.concat(chunks).toString('utf8');
  const form = new URLSearchParams(body);
  const seen = {
    method: req.method,
    path: req.url,
    content_type: req.headers['content-type'] ?? null,
    fields: [...form.keys()],
    logout_token: form.get('logout_token'),
  };
  try {
    if (req.method !== 'POST') throw new Error(`${req.method} is not POST`);
    if (!seen.logout_token) throw new Error('no logout_token in the body');
    const { payload, protectedHeader } = await verifyLogoutToken(seen.logout_token);
    Object.assign(seen, { verified: true, header: protectedHeader, claims: payload });
    res.writeHead(200, { 'cache-control': 'no-store' }).end();
  } catch (e) {
    Object.assign(seen, { verified: false, error: `${e.code ?? e.name}: ${e.message}` });
    res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_request' }));
  }
  deliveries.push(seen);
  delivered(seen);
});
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen({ fd: Number(env('BACKCHANNEL_FD')) }, resolve);
});

// Sign in.
const { jar, browse, authorize } = browser(redirectUri);
const verifier = client.randomPKCECodeVerifier();
const state = client.randomState();
const nonce = client.randomNonce();
const callback = await authorize(client.buildAuthorizationUrl(config, {
  redirect_uri: redirectUri,
  scope: 'openid email profile',
  code_challenge: await client.calculatePKCECodeChallenge(verifier),
  code_challenge_method: 'S256',
  state,
  nonce,
}));
const tokens = await client.authorizationCodeGrant(config, callback, {
  pkceCodeVerifier: verifier,
  expectedState: state,
  expectedNonce: nonce,
  idTokenExpected: true,
});
const idClaims = tokens.claims();
const userinfoBefore = await client.fetchUserInfo(config, tokens.access_token, idClaims.sub);
const sessionCookie = jar.get(SESSION_COOKIE);
if (!sessionCookie) throw new Error(`no ${SESSION_COOKIE} cookie after signing in`);

// RP-Initiated Logout, in the same browser.
const logoutState = client.randomState();
const endSessionUrl = client.buildEndSessionUrl(config, {
  id_token_hint: tokens.id_token,
  post_logout_redirect_uri: postLogoutRedirectUri,
  state: logoutState,
});
const ended = await browse(endSessionUrl);

// Back-Channel Logout: the first delivery, within the bound.
let timer;
const delivery = await Promise.race([
  firstDelivery,
  new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no back-channel logout token within ${waitMs} ms`)), waitMs);
  }),
]);
clearTimeout(timer);
if (!delivery.verified) throw new Error(`the logout token did not verify: ${delivery.error}`);
// The verifier really checks the audience: the same token is refused for another client.
let wrongAudience = null;
try {
  await verifyLogoutToken(delivery.logout_token, `${clientId}-other`);
} catch (e) {
  wrongAudience = { code: e.code ?? null, claim: e.claim ?? null };
}

// The session is over: its access token, and silent authorization.
let userinfoAfter = null;
try {
  await client.fetchUserInfo(config, tokens.access_token, idClaims.sub);
} catch (e) {
  const challenge = Array.isArray(e.cause) ? e.cause[0] : undefined;
  userinfoAfter = {
    status: e.status ?? e.response?.status ?? null,
    code: e.code ?? null,
    challenge: challenge ? { scheme: challenge.scheme, error: challenge.parameters?.error ?? null } : null,
  };
}
async function silent() {
  const silentState = client.randomState();
  const res = await browse(client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid',
    prompt: 'none',
    state: silentState,
    nonce: client.randomNonce(),
  }));
  const location = res.headers.get('location');
  if (!location || !location.startsWith(redirectUri)) throw new Error(`prompt=none: no redirect to the client (status ${res.status})`);
  const params = new URL(location).searchParams;
  return { error: params.get('error'), state_ok: params.get('state') === silentState, has_code: params.has('code') };
}
const sessionCookieAfterLogout = jar.has(SESSION_COOKIE);
const silentAfter = await silent();
jar.set(SESSION_COOKIE, sessionCookie);
const silentWithOldCookie = await silent();

server.close();
server.closeAllConnections();

const { logout_token: _token, ...received } = delivery;
console.log(JSON.stringify({
  end_session_endpoint: metadata.end_session_endpoint ?? null,
  id_token: { sub: idClaims.sub, sid: idClaims.sid ?? null },
  userinfo_before: { sub: userinfoBefore.sub },
  end_session_url: {
    endpoint: `${endSessionUrl.origin}${endSessionUrl.pathname}`,
    params: Object.fromEntries(endSessionUrl.searchParams),
    id_token_hint_is_id_token: endSessionUrl.searchParams.get('id_token_hint') === tokens.id_token,
    state: logoutState,
  },
  end_session: {
    status: ended.status,
    location: ended.headers.get('location'),
    session_cookie_kept: sessionCookieAfterLogout,
  },
  backchannel: { ...received, deliveries: deliveries.length, wrong_audience: wrongAudience },
  userinfo_after: userinfoAfter,
  silent_after: silentAfter,
  silent_with_old_cookie: silentWithOldCookie,
}));
