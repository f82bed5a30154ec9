// Dynamic client registration (RFC 7591, OpenID Connect Dynamic Registration) against Authrim
// with panva's openid-client (v6): the library's dynamicClientRegistration, given the
// operator's initial access token, registers two clients and the Configuration it returns is
// then the relying party's, through the whole code flow (PKCE, state, nonce; the ID token's
// claims and, with non-repudiation checks on, its signature), userinfo, and a refresh:
//   basic:  client_secret_basic, with the secret the server issued (ClientSecretBasic())
//   pkjwt:  private_key_jwt, with an ES256 key generated here by jose (the private half not
//           extractable) whose public JWK is registered inline as jwks (PrivateKeyJwt)
// Then what the library is told when it may not register: the basic client's token again
// (used up: 401 invalid_token), and with the spare token a redirect URI with a fragment
// (400 invalid_redirect_uri) followed by a public client's registration with the same token,
// which the refusal must not have spent.
//
// Every request the library makes is kept (registration: its Authorization header and JSON
// body; token endpoint: its authentication) with the server's answer, for the test to check.
//
// Input, from the environment: ISSUER, REDIRECT_URI, USERNAME, PASSWORD, and
// INITIAL_ACCESS_TOKENS, JSON {"basic", "pkjwt", "spare"}: three tokens the test created,
// each good for one registration. Output: one JSON line of what it saw. Exits non-zero with
// the library's error when a step that must succeed fails.
import * as client from 'openid-client';
import { exportJWK, generateKeyPair } from 'jose';
import { browser, env } from './rp.mjs';

const issuer = new URL(env('ISSUER'));
const redirectUri = env('REDIRECT_URI');
const tokens = JSON.parse(env('INITIAL_ACCESS_TOKENS'));

// What went over the wire, in order.
const exchanges = [];
async function recorder(url, options) {
  const headers = new Headers(options?.headers);
  const body = options?.body?.toString() ?? null;
  const res = await fetch(url, options);
  const sent = { url: String(url), method: options?.method ?? 'GET', authorization: headers.get('authorization') };
  if (headers.get('content-type')?.startsWith('application/json')) sent.json = JSON.parse(body);
  else if (body) sent.form = Object.fromEntries(new URLSearchParams(body));
  exchanges.push({
    ...sent,
    status: res.status,
    cache_control: res.headers.get('cache-control'),
    www_authenticate: res.headers.get('www-authenticate'),
    response: await res.clone().json().catch(() => null),
  });
  return res;
}
const lastTo = (url) => exchanges.filter((x) => x.url === url).at(-1) ?? null;
const options = (initialAccessToken) => ({
  initialAccessToken,
  execute: [client.allowInsecureRequests, client.enableNonRepudiationChecks],
  [client.customFetch]: recorder,
});

async function failure(promise) {
  try {
    await promise;
    return { succeeded: true };
  } catch (e) {
    const challenge = Array.isArray(e.cause) ? e.cause[0] : undefined;
    return {
      status: e.status ?? null,
      code: e.code ?? null,
      error: e.error ?? null,
      description: e.error_description ?? null,
      challenge: challenge ? { scheme: challenge.scheme, error: challenge.parameters?.error ?? null } : null,
    };
  }
}

// The code flow with a registered client's Configuration, in a new browser.
async function signIn(config, scope, refresh) {
  const rp = browser(redirectUri);
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  const callback = await rp.authorize(url);
  const tokenSet = await client.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: verifier,
    expectedState: state,
    expectedNonce: nonce,
    idTokenExpected: true,
  });
  const tokenEndpoint = config.serverMetadata().token_endpoint;
  const tokenRequest = lastTo(tokenEndpoint);
  const claims = tokenSet.claims();
  const userinfo = await client.fetchUserInfo(config, tokenSet.access_token, claims.sub);
  const out = {
    authorization_url: { client_id: url.searchParams.get('client_id'), redirect_uri: url.searchParams.get('redirect_uri') },
    callback: { iss: callback.searchParams.get('iss'), state_ok: callback.searchParams.get('state') === state },
    sent: { nonce },
    token_request: { authorization_scheme: tokenRequest.authorization?.split(' ')[0] ?? null, form: tokenRequest.form },
    scope: tokenSet.scope ?? null,
    access_token: tokenSet.access_token,
    id_token: tokenSet.id_token,
    claims,
    userinfo,
  };
  if (refresh) {
    const refreshed = await client.refreshTokenGrant(config, tokenSet.refresh_token);
    out.refreshed = {
      authorization_scheme: lastTo(tokenEndpoint).authorization?.split(' ')[0] ?? null,
      new_refresh_token: Boolean(refreshed.refresh_token) && refreshed.refresh_token !== tokenSet.refresh_token,
      id_token_sub: refreshed.claims()?.sub ?? null,
    };
  }
  return out;
}

// The registration the library made (the last POST to the registration endpoint).
function registration(config) {
  const x = exchanges.filter((e) => e.method === 'POST' && e.url === config.serverMetadata().registration_endpoint).at(-1);
  return { url: x.url, authorization: x.authorization, json: x.json, status: x.status, cache_control: x.cache_control, response: x.response };
}

const out = {};

// 1. client_secret_basic: the server's secret, as the library keeps it in clientMetadata().
{
  const config = await client.dynamicClientRegistration(issuer, {
    client_name: 'openid-client (DCR, basic)',
    redirect_uris: [redirectUri],
    response_types: ['code'],
    grant_types: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_method: 'client_secret_basic',
    scope: 'openid email profile offline_access',
  }, client.ClientSecretBasic(), options(tokens.basic));
  out.basic = {
    registration_endpoint: config.serverMetadata().registration_endpoint,
    registration: registration(config),
    client_id: config.clientMetadata().client_id,
    library_has_secret: typeof config.clientMetadata().client_secret === 'string',
    flow: await signIn(config, 'openid email profile offline_access', true),
  };
}

// 2. private_key_jwt with an ES256 key whose public JWK is registered inline.
{
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const kid = 'oc-dcr-es256';
  const jwk = { ...(await exportJWK(publicKey)), kid, use: 'sig', alg: 'ES256' };
  const config = await client.dynamicClientRegistration(issuer, {
    client_name: 'openid-client (DCR, private_key_jwt)',
    redirect_uris: [redirectUri],
    response_types: ['code'],
    grant_types: ['authorization_code'],
    token_endpoint_auth_method: 'private_key_jwt',
    token_endpoint_auth_signing_alg: 'ES256',
    jwks: { keys: [jwk] },
    scope: 'openid email',
  }, client.PrivateKeyJwt({ key: privateKey, kid }), options(tokens.pkjwt));
  out.pkjwt = {
    jwk,
    registration: registration(config),
    client_id: config.clientMetadata().client_id,
    library_has_secret: config.clientMetadata().client_secret !== undefined,
    flow: await signIn(config, 'openid email', false),
  };
}

// 3. Refusals the library reports, and a token a refusal did not spend.
out.spent_token = await failure(client.dynamicClientRegistration(issuer, {
  redirect_uris: [redirectUri], token_endpoint_auth_method: 'client_secret_basic',
}, undefined, options(tokens.basic)));
out.fragment = await failure(client.dynamicClientRegistration(issuer, {
  redirect_uris: [`${redirectUri}#fragment`], token_endpoint_auth_method: 'client_secret_basic',
}, undefined, options(tokens.spare)));
{
  const config = await client.dynamicClientRegistration(issuer, {
    application_type: 'native',
    redirect_uris: [redirectUri],
    token_endpoint_auth_method: 'none',
  }, client.None(), options(tokens.spare));
  out.public_after_refusal = { registration: registration(config), client_id: config.clientMetadata().client_id };
}

console.log(JSON.stringify(out));
