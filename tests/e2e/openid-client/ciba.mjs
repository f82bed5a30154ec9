// CIBA (OpenID Connect Client-Initiated Backchannel Authentication Core 1.0, poll mode) with
// panva's openid-client (v6): the backchannel authentication request naming the user by
// login_hint, with a binding message, then polling the token endpoint at the interval the
// server gives until the user answers on their account page, which tests/e2e/test_ciba.py
// has Chromium do meanwhile.
//
// Input, from the environment: ISSUER, CLIENT_ID, CLIENT_SECRET, SCOPE, LOGIN_HINT,
// BINDING_MESSAGE. Output: first a JSON line with the backchannel authentication response,
// then a JSON line of what the polling ended with: the tokens' claims and userinfo, or the
// error.
import * as client from 'openid-client';
import { env } from './rp.mjs';

const config = await client.discovery(
  new URL(env('ISSUER')),
  env('CLIENT_ID'),
  undefined,
  client.ClientSecretBasic(env('CLIENT_SECRET')),
  { execute: [client.allowInsecureRequests] },
);
client.enableNonRepudiationChecks(config);

const request = await client.initiateBackchannelAuthentication(config, {
  scope: env('SCOPE'),
  login_hint: env('LOGIN_HINT'),
  binding_message: env('BINDING_MESSAGE'),
});
console.log(JSON.stringify({ request }));

const started = Date.now();
try {
  const tokens = await client.pollBackchannelAuthenticationGrant(config, request);
  const claims = tokens.claims();
  const userinfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
  console.log(JSON.stringify({
    token_type: tokens.token_type,
    scope: tokens.scope,
    refresh_token: Boolean(tokens.refresh_token),
    id_token: claims,
    userinfo,
    waited_ms: Date.now() - started,
  }));
} catch (e) {
  console.log(JSON.stringify({ error: e.error ?? String(e), status: e.status ?? null }));
}
