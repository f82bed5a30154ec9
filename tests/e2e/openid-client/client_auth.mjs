// JWT client authentication against Authrim with panva's openid-client (v6): private_key_jwt
// (RFC 7523, OpenID Connect Core §9) through the library's PrivateKeyJwt with keys generated
// here by jose (WebCrypto CryptoKeys, the private halves not extractable), and
// client_secret_jwt through ClientSecretJwt. The client's public keys are published on this
// program's own jwks_uri (a node:http server on a listening socket the test binds and passes
// down, so the URI is registered before the keys exist). With each key, and with the secret:
// clientCredentialsGrant, then tokenIntrospection of the token with the same authentication.
// Then what must fail: tokenRevocation followed by introspection (inactive); an assertion
// replayed (its jti fixed through the library's modifyAssertion hook); a key the client never
// published, under a published kid; a wrong secret.
//
// openid-client signs an Ed25519 key with the fully-specified "Ed25519" JWS alg (RFC 9864);
// Authrim, like its discovery says, takes "EdDSA": the header is remapped with the library's
// modifyAssertion, as its documentation shows for this case.
//
// Input, from the environment: ISSUER, PKJWT_CLIENT_ID (a private_key_jwt client registered
// with jwks_uri http://127.0.0.1:<port of JWKS_FD>/jwks.json), CSJWT_CLIENT_ID and
// CSJWT_CLIENT_SECRET (a client_secret_jwt client), JWKS_FD. Both clients may use
// client_credentials for scope api.read. Output: one JSON line of what it saw (raw tokens and
// the assertions it sent, for tests/e2e/test_openid_client.py to verify). Exits non-zero
// with the library's error when a step that must succeed fails.
import http from 'node:http';
import * as client from 'openid-client';
import { exportJWK, generateKeyPair } from 'jose';
import { env, remapEd25519 } from './rp.mjs';

const SCOPE = 'api.read';
const ALGS = ['RS256', 'PS256', 'ES256', 'Ed25519'];

// The client's keys, and its JWK Set as the jwks_uri serves it.
const keys = {};
for (const alg of ALGS) {
  const { publicKey, privateKey } = await generateKeyPair(alg);
  const kid = `oc-${alg.toLowerCase()}`;
  keys[alg] = { privateKey, kid, jwk: { ...(await exportJWK(publicKey)), kid, use: 'sig' } };
}
const stranger = (await generateKeyPair('ES256')).privateKey;
const jwks = { keys: ALGS.map((alg) => keys[alg].jwk) };
let jwksFetches = 0;
const server = http.createServer((req, res) => {
  if (req.method !== 'GET' || req.url !== '/jwks.json') {
    res.writeHead(404).end();
    return;
  }
  jwksFetches += 1;
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks));
});
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen({ fd: Number(env('JWKS_FD')) }, resolve);
});

const discovered = await client.discovery(new URL(env('ISSUER')), env('PKJWT_CLIENT_ID'), undefined,
  client.None(), { execute: [client.allowInsecureRequests] });
const serverMetadata = discovered.serverMetadata();

// A configuration for one client and authentication method; every request it makes is kept
// (endpoint and form) so the test can check the assertions the library sent.
const sent = [];
function configFor(clientId, auth) {
  const config = new client.Configuration(serverMetadata, clientId, undefined, auth);
  client.allowInsecureRequests(config);
  config[client.customFetch] = (url, options) => {
    const form = Object.fromEntries(new URLSearchParams(options.body?.toString() ?? ''));
    sent.push({ url: String(url), authorization: new Headers(options.headers).has('authorization'), form });
    return fetch(url, options);
  };
  return config;
}
const lastAssertion = () => {
  const { url, authorization, form } = sent[sent.length - 1];
  return { url, authorization, client_assertion_type: form.client_assertion_type ?? null,
    client_assertion: form.client_assertion ?? null, client_secret: form.client_secret ?? null };
};
async function failure(promise) {
  try {
    await promise;
    return { succeeded: true };
  } catch (e) {
    return { error: e.error ?? null, status: e.status ?? null, code: e.code ?? null };
  }
}

// private_key_jwt, each key: a token, then introspection with the same authentication.
const pkjwt = {};
for (const alg of ALGS) {
  const { privateKey, kid } = keys[alg];
  const config = configFor(env('PKJWT_CLIENT_ID'), client.PrivateKeyJwt({ key: privateKey, kid }, remapEd25519));
  const tokens = await client.clientCredentialsGrant(config, { scope: SCOPE });
  const tokenRequest = lastAssertion();
  const introspected = await client.tokenIntrospection(config, tokens.access_token);
  pkjwt[alg] = {
    token: { access_token: tokens.access_token, token_type: tokens.token_type, scope: tokens.scope ?? null,
      expires_in: tokens.expires_in ?? null, refresh_token: tokens.refresh_token ?? null },
    token_request: tokenRequest,
    introspection: { active: introspected.active, client_id: introspected.client_id ?? null, sub: introspected.sub ?? null },
    introspection_request: lastAssertion(),
  };
}

// Revocation with private_key_jwt, then the token is inactive.
const es = configFor(env('PKJWT_CLIENT_ID'), client.PrivateKeyJwt({ key: keys.ES256.privateKey, kid: keys.ES256.kid }));
const toRevoke = await client.clientCredentialsGrant(es, { scope: SCOPE });
await client.tokenRevocation(es, toRevoke.access_token, { token_type_hint: 'access_token' });
const revocationRequest = lastAssertion();
const afterRevocation = await client.tokenIntrospection(es, toRevoke.access_token);

// Replay: the library signs a fresh assertion each time, so its jti is pinned here.
const jti = client.randomState();
const replaying = configFor(env('PKJWT_CLIENT_ID'), client.PrivateKeyJwt({ key: keys.RS256.privateKey, kid: keys.RS256.kid }, {
  [client.modifyAssertion]: (_header, payload) => { payload.jti = jti; },
}));
const replayFirst = await failure(client.clientCredentialsGrant(replaying, { scope: SCOPE }));
const replaySecond = await failure(client.clientCredentialsGrant(replaying, { scope: SCOPE }));

// A key the client never published, under the kid of one it did.
const impostor = configFor(env('PKJWT_CLIENT_ID'), client.PrivateKeyJwt({ key: stranger, kid: keys.ES256.kid }));
const strangerToken = await failure(client.clientCredentialsGrant(impostor, { scope: SCOPE }));
const strangerIntrospection = await failure(client.tokenIntrospection(impostor, toRevoke.access_token));

// client_secret_jwt.
const secretConfig = configFor(env('CSJWT_CLIENT_ID'), client.ClientSecretJwt(env('CSJWT_CLIENT_SECRET')));
const secretTokens = await client.clientCredentialsGrant(secretConfig, { scope: SCOPE });
const secretTokenRequest = lastAssertion();
const secretIntrospected = await client.tokenIntrospection(secretConfig, secretTokens.access_token);
const wrongSecret = env('CSJWT_CLIENT_SECRET').slice(0, -1) + (env('CSJWT_CLIENT_SECRET').endsWith('A') ? 'B' : 'A');
const wrongSecretResult = await failure(client.clientCredentialsGrant(
  configFor(env('CSJWT_CLIENT_ID'), client.ClientSecretJwt(wrongSecret)), { scope: SCOPE }));

server.close();
console.log(JSON.stringify({
  token_endpoint: serverMetadata.token_endpoint,
  jwks,
  jwks_fetches: jwksFetches,
  private_key_jwt: pkjwt,
  revocation: { request: revocationRequest, introspection_after: afterRevocation },
  replay: { jti, first: replayFirst, second: replaySecond },
  stranger: { token: strangerToken, introspection: strangerIntrospection },
  client_secret_jwt: {
    token: { access_token: secretTokens.access_token, token_type: secretTokens.token_type, scope: secretTokens.scope ?? null,
      expires_in: secretTokens.expires_in ?? null },
    token_request: secretTokenRequest,
    introspection: { active: secretIntrospected.active, client_id: secretIntrospected.client_id ?? null },
    wrong_secret: wrongSecretResult,
  },
}));
