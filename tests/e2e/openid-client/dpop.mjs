// DPoP (RFC 9449) against Authrim with panva's openid-client (v6): a public client (no
// secret, PKCE) whose tokens are bound to a key pair generated here by jose (WebCrypto; the
// private half not extractable), through the library's DPoP handle (getDPoPHandle) passed as
// the {DPoP} option of authorizationCodeGrant, fetchUserInfo and refreshTokenGrant. The
// handle signs a proof for every request (at userinfo with the access token's hash, ath) and
// keeps the nonces the server hands out in DPoP-Nonce; told use_dpop_nonce (400 from the
// token endpoint, 401 with a DPoP challenge from userinfo) the library retries once, by
// itself, with the nonce.
//
// For each algorithm in ALGS, one sign-in (login and consent pages over plain fetch, rp.mjs):
//   - the code flow with PKCE, state and nonce (the Ed25519 run also names its key in the
//     authorization request, dpop_jkt, with the thumbprint the handle computes);
//   - userinfo with the DPoP scheme and a proof, then with a new handle for the same key (no
//     nonce cached: where the server wants nonces, the library must fetch one itself);
//   - the refresh token (bound to the key: the client is public) tried with a handle of
//     another key (must fail), then refreshed with the right one, and userinfo again;
//   - Ed25519 only: openid-client names an Ed25519 JWS "Ed25519" (RFC 9864), Authrim, as its
//     dpop_signing_alg_values_supported says, takes "EdDSA": the handle is made with the
//     library's modifyAssertion remapping the header, as its documentation shows for DPoP;
//     the refresh is tried first with a handle that does not remap (must fail).
// With PAR_ALG, before those: a fresh key and handle push the authorization request
// (buildAuthorizationUrlWithPAR with {DPoP}: the proof binds the code, RFC 9449 §10.1), then
// the code flow with that handle; a second push with that handle whose code is redeemed with
// another key's handle (must fail). Where the server wants nonces, the push is the handle's
// first request, so the nonce must come from /par's own answer.
//
// Every request to the server is kept (method, URL, the DPoP proof and Authorization scheme
// sent, status, DPoP-Nonce and WWW-Authenticate received, the JSON answer) for the test to
// check. Input, from the environment: ISSUER, CLIENT_ID (a public client, token endpoint auth
// "none", code and refresh grants), REDIRECT_URI, USERNAME, PASSWORD, ALGS (comma-separated
// jose algorithms, may be empty), PAR_ALG (optional). Output: one JSON line of what it saw.
// Exits non-zero with the library's error when a step that must succeed fails; a push that
// fails is reported (par.error) instead, and ends the program there.
import * as client from 'openid-client';
import { exportJWK, generateKeyPair } from 'jose';
import { authorizationRequest, browser, env, remapEd25519 } from './rp.mjs';

const redirectUri = env('REDIRECT_URI');
const ALGS = (process.env.ALGS ?? '').split(',').filter(Boolean);
const PAR_ALG = process.env.PAR_ALG || null;
const SCOPE = 'openid email offline_access';

// What went over the wire, in order.
const exchanges = [];
async function recorder(url, options) {
  const headers = new Headers(options?.headers);
  const res = await fetch(url, options);
  const u = new URL(String(url));
  exchanges.push({
    method: options?.method ?? 'GET',
    url: `${u.origin}${u.pathname}`,
    dpop: headers.get('dpop'),
    authorization_scheme: headers.get('authorization')?.split(' ')[0] ?? null,
    status: res.status,
    dpop_nonce: res.headers.get('dpop-nonce'),
    www_authenticate: res.headers.get('www-authenticate'),
    response: await res.clone().json().catch(() => null),
  });
  return res;
}

const config = await client.discovery(new URL(env('ISSUER')), env('CLIENT_ID'), undefined, client.None(), {
  execute: [client.allowInsecureRequests],
  [client.customFetch]: recorder,
});
client.enableNonRepudiationChecks(config);

async function newKey(alg) {
  const keyPair = await generateKeyPair(alg);
  return { keyPair, jwk: await exportJWK(keyPair.publicKey) };
}
const handleFor = (keyPair, alg) => client.getDPoPHandle(config, keyPair, alg === 'Ed25519' ? remapEd25519 : undefined);

const describeError = (e) => ({ error: e.error ?? null, status: e.status ?? null, code: e.code ?? null,
  description: e.error_description ?? e.message ?? null });
async function failure(promise) {
  try {
    await promise;
    return { succeeded: true };
  } catch (e) {
    return describeError(e);
  }
}
const since = (mark) => exchanges.slice(mark);

const request = (extra = {}) => authorizationRequest(redirectUri, SCOPE, extra);

// Through the browser to the code; the library checks state, nonce and the ID token.
async function redeem(url, { verifier, params }, DPoP) {
  const callback = await browser(redirectUri).authorize(url);
  return client.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: verifier,
    expectedState: params.state,
    expectedNonce: params.nonce,
    idTokenExpected: true,
  }, undefined, { DPoP });
}

const tokenSummary = (t) => ({ access_token: t.access_token, token_type: t.token_type,
  refresh_token: t.refresh_token ?? null, scope: t.scope ?? null, sub: t.claims()?.sub ?? null });

const out = { token_endpoint: config.serverMetadata().token_endpoint,
  userinfo_endpoint: config.serverMetadata().userinfo_endpoint,
  par_endpoint: config.serverMetadata().pushed_authorization_request_endpoint,
  runs: {}, par: null };

if (PAR_ALG) {
  const { keyPair, jwk } = await newKey(PAR_ALG);
  const DPoP = handleFor(keyPair, PAR_ALG);
  const par = { alg: PAR_ALG, jwk, jkt: await DPoP.calculateThumbprint() };
  out.par = par;
  const req = await request();
  let mark = exchanges.length;
  let url;
  try {
    url = await client.buildAuthorizationUrlWithPAR(config, req.params, { DPoP });
  } catch (e) {
    par.error = describeError(e);
    par.push_exchanges = since(mark);
    console.log(JSON.stringify(out));
    process.exit(0);
  }
  par.push_exchanges = since(mark);
  mark = exchanges.length;
  par.tokens = tokenSummary(await redeem(url, req, DPoP));
  par.token_exchanges = since(mark);

  // A second pushed request, bound to the same key; its code redeemed with another key.
  const other = handleFor((await newKey(PAR_ALG)).keyPair, PAR_ALG);
  const second = await request();
  mark = exchanges.length;
  const secondUrl = await client.buildAuthorizationUrlWithPAR(config, second.params, { DPoP });
  par.second_push_exchanges = since(mark);
  mark = exchanges.length;
  par.other_key = await failure(redeem(secondUrl, second, other));
  par.other_key_exchanges = since(mark);
}

for (const alg of ALGS) {
  const { keyPair, jwk } = await newKey(alg);
  const DPoP = handleFor(keyPair, alg);
  const run = { alg, jwk, jkt: await DPoP.calculateThumbprint() };
  out.runs[alg] = run;

  // The code flow; the Ed25519 run binds the code to its key (dpop_jkt) up front.
  const req = await request(alg === 'Ed25519' ? { dpop_jkt: run.jkt } : {});
  run.authorization_params = req.params;
  let mark = exchanges.length;
  const tokens = await redeem(client.buildAuthorizationUrl(config, req.params), req, DPoP);
  run.tokens = tokenSummary(tokens);
  run.token_exchanges = since(mark);
  const sub = tokens.claims().sub;

  mark = exchanges.length;
  const userinfo = await client.fetchUserInfo(config, tokens.access_token, sub, { DPoP });
  run.userinfo = { sub: userinfo.sub, email: userinfo.email ?? null };
  run.userinfo_exchanges = since(mark);

  // The same key in a new handle: no nonce remembered.
  mark = exchanges.length;
  const fresh = await client.fetchUserInfo(config, tokens.access_token, sub, { DPoP: handleFor(keyPair, alg) });
  run.userinfo_fresh_handle = { sub: fresh.sub };
  run.userinfo_fresh_handle_exchanges = since(mark);

  // The refresh token is bound to the key: another key's proof is refused, and so (for
  // Ed25519) is the library's own "Ed25519" header; neither may spend the token.
  mark = exchanges.length;
  run.refresh_other_key = await failure(client.refreshTokenGrant(config, tokens.refresh_token, undefined,
    { DPoP: handleFor((await newKey(alg)).keyPair, alg) }));
  run.refresh_other_key_exchanges = since(mark);
  if (alg === 'Ed25519') {
    mark = exchanges.length;
    run.refresh_unmapped_alg = await failure(client.refreshTokenGrant(config, tokens.refresh_token, undefined,
      { DPoP: client.getDPoPHandle(config, keyPair) }));
    run.refresh_unmapped_alg_exchanges = since(mark);
  }

  mark = exchanges.length;
  const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token, undefined, { DPoP });
  run.refreshed = tokenSummary(refreshed);
  run.refresh_exchanges = since(mark);
  mark = exchanges.length;
  const after = await client.fetchUserInfo(config, refreshed.access_token, sub, { DPoP });
  run.userinfo_after_refresh = { sub: after.sub };
  run.userinfo_after_refresh_exchanges = since(mark);
}

console.log(JSON.stringify(out));
