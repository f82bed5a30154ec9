// JARM (JWT Secured Authorization Response Mode) as panva's openid-client (v6) receives it:
// useJwtResponseMode makes authorizationCodeGrant take the `response` JWT instead of plain
// parameters and check it (signature against the JWKS, iss, aud, exp) before it reads the
// code and state in it and redeems the code. The same callback with its JWT altered (the
// payload of another response under this one's signature) must be refused by the library.
//
// Input, from the environment: ISSUER, CLIENT_ID, CLIENT_SECRET, REDIRECT_URI, USERNAME,
// PASSWORD, RESPONSE_MODE (jwt or query.jwt). Output: one JSON line of what it saw, for
// tests/e2e/test_jarm.py to check. Exits non-zero, with the library's error, when a step that
// must succeed fails.
import * as client from 'openid-client';
import { browser, discover, env } from './rp.mjs';

const redirectUri = env('REDIRECT_URI');
const config = await discover();
client.useJwtResponseMode(config);
const { authorize } = browser(redirectUri);

async function signIn() {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid email',
    response_mode: env('RESPONSE_MODE'),
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  const callback = await authorize(url);
  return { callback, checks: { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true } };
}

const first = await signIn();
const params = [...first.callback.searchParams.keys()];
const tokens = await client.authorizationCodeGrant(config, first.callback, first.checks);

// A second response; its payload put under the first one's header and signature.
const second = await signIn();
const [header, , signature] = first.callback.searchParams.get('response').split('.');
const payload = second.callback.searchParams.get('response').split('.')[1];
const forged = new URL(second.callback);
forged.searchParams.set('response', `${header}.${payload}.${signature}`);
let forgedError = null;
try {
  await client.authorizationCodeGrant(config, forged, second.checks);
} catch (e) {
  // The library's error says little; its cause names the check that failed.
  forgedError = `${e.code ?? e.name}: ${e.message} (${e.cause?.code ?? ''}: ${e.cause?.message ?? ''})`;
}

console.log(JSON.stringify({
  callback_params: params,
  id_token: { sub: tokens.claims().sub, aud: tokens.claims().aud },
  forged_error: forgedError,
}));
