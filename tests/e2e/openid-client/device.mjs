// A device without a browser, with panva's openid-client (v6): the device authorization
// request (RFC 8628 §3.1), then polling the token endpoint at the interval the server gives
// until the user answers on the verification page, which tests/e2e/test_openid_client.py
// plays meanwhile. Optionally as a public client and with DPoP-bound tokens.
//
// Input, from the environment: ISSUER, CLIENT_ID, CLIENT_SECRET (empty: a public client),
// SCOPE, DPOP ("1": bind the tokens to a fresh key). Output: first a JSON line with the
// device authorization response (for the test to open its verification URI), then a JSON
// line of what the polling ended with: the tokens' claims and userinfo, or the error; with the
// polls it made.
import * as client from 'openid-client';
import { env } from './rp.mjs';

const secret = process.env.CLIENT_SECRET;
const config = await client.discovery(
  new URL(env('ISSUER')),
  env('CLIENT_ID'),
  undefined,
  secret ? client.ClientSecretBasic(secret) : client.None(),
  { execute: [client.allowInsecureRequests] },
);
client.enableNonRepudiationChecks(config);
// When each poll of the token endpoint was sent, and what it was answered (the error code
// while waiting): the test checks the library kept to the interval.
const polls = [];
const tokenEndpoint = config.serverMetadata().token_endpoint;
config[client.customFetch] = async (url, options) => {
  const at = Date.now();
  const res = await fetch(url, options);
  if (url === tokenEndpoint) {
    const body = await res.clone().json().catch(() => ({}));
    polls.push({ at, status: res.status, error: body.error ?? null });
  }
  return res;
};

const device = await client.initiateDeviceAuthorization(config, { scope: env('SCOPE') });
console.log(JSON.stringify({ device }));

const options = process.env.DPOP === '1' ? { DPoP: client.getDPoPHandle(config, await client.randomDPoPKeyPair()) } : undefined;
const started = Date.now();
try {
  const tokens = await client.pollDeviceAuthorizationGrant(config, device, undefined, options);
  const claims = tokens.claims();
  const userinfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub, options);
  console.log(JSON.stringify({
    token_type: tokens.token_type,
    scope: tokens.scope,
    refresh_token: Boolean(tokens.refresh_token),
    id_token: claims,
    userinfo,
    waited_ms: Date.now() - started,
    polls,
  }));
} catch (e) {
  console.log(JSON.stringify({ error: e.error ?? String(e), status: e.status ?? null, polls }));
}
