// Pushed authorization requests (RFC 9126) and signed request objects (JAR, RFC 9101) against
// Authrim with panva's openid-client (v6): the library's buildAuthorizationUrlWithPAR (pushed
// with client_secret_basic, and with PrivateKeyJwt), buildAuthorizationUrlWithJAR (request
// objects signed by keys this program generates with jose), and the two together (a request
// object pushed to /par). Each authorization goes through the browser (rp.mjs: login and
// consent pages over plain fetch) to authorizationCodeGrant, which checks state, nonce and the
// ID token (its signature too, with non-repudiation checks on).
//
// The keys are made here, as a relying party would make them, and only their public halves
// leave: the program first prints one JSON line, {"jwks": …}, and then reads one line of JSON
// from stdin naming the clients the test registered with those keys:
//   basic:  client_secret_basic, require_pushed_authorization_requests
//   pkjwt:  private_key_jwt with the jwks (RS256 for its assertions; any key for its objects)
//   signed: client_secret_basic with the jwks, require_signed_request_object and
//           request_object_signing_alg ES256
// ({client_id, client_secret?} each). Every client has REDIRECT_URI and scope openid email.
//
// openid-client names an Ed25519 JWS "Ed25519" (RFC 9864); Authrim, as its discovery says,
// takes "EdDSA": the request object's header is remapped with the library's modifyAssertion.
//
// Input, from the environment: ISSUER, REDIRECT_URI, USERNAME, PASSWORD. Output: a last line
// of JSON, what it saw (raw ID tokens, request objects and the pushed requests included, for
// tests/e2e/test_openid_client.py to verify). Exits non-zero with the library's error when a
// step that must succeed fails.
import { createInterface } from 'node:readline';
import * as client from 'openid-client';
import { exportJWK, generateKeyPair } from 'jose';
import { authorizationRequest, browser, env, remapEd25519 } from './rp.mjs';

const redirectUri = env('REDIRECT_URI');
const SCOPE = 'openid email';

// The client's keys; the public JWK Set goes to the test, which registers it.
const keys = {};
for (const alg of ['RS256', 'PS256', 'ES256', 'Ed25519']) {
  const { publicKey, privateKey } = await generateKeyPair(alg);
  const kid = `oc-jar-${alg.toLowerCase()}`;
  keys[alg] = { key: privateKey, kid, jwk: { ...(await exportJWK(publicKey)), kid, use: 'sig' } };
}
process.stdout.write(JSON.stringify({ jwks: { keys: Object.values(keys).map((k) => k.jwk) } }) + '\n');
const lines = createInterface({ input: process.stdin });
const clients = JSON.parse(await new Promise((resolve, reject) => {
  lines.once('line', resolve);
  lines.once('close', () => reject(new Error('stdin closed before the clients were named')));
}));
lines.close();

const discovered = await client.discovery(new URL(env('ISSUER')), clients.basic.client_id, undefined,
  client.None(), { execute: [client.allowInsecureRequests] });
const serverMetadata = discovered.serverMetadata();

// One configuration per client and authentication method; what it pushes to /par is kept
// (the form, whether a Basic header went with it, the answer) for the test to check.
function configFor(clientId, auth) {
  const config = new client.Configuration(serverMetadata, clientId, undefined, auth);
  client.allowInsecureRequests(config);
  client.enableNonRepudiationChecks(config);
  const pushed = [];
  config[client.customFetch] = async (url, options) => {
    const res = await fetch(url, options);
    if (String(url) === serverMetadata.pushed_authorization_request_endpoint) {
      pushed.push({
        url: String(url),
        authorization: new Headers(options.headers).get('authorization')?.split(' ')[0] ?? null,
        form: Object.fromEntries(new URLSearchParams(options.body?.toString() ?? '')),
        status: res.status,
        body: await res.clone().json().catch(() => null),
      });
    }
    return res;
  };
  return { config, pushed };
}
const signingKey = (alg) => ({ key: keys[alg].key, kid: keys[alg].kid });

const request = () => authorizationRequest(redirectUri, SCOPE);

// From the authorization URL through the browser to the tokens, the library checking state,
// nonce and the ID token on the way.
async function complete(config, rp, url, { verifier, params }) {
  const callback = await rp.authorize(url);
  const tokens = await client.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: verifier,
    expectedState: params.state,
    expectedNonce: params.nonce,
    idTokenExpected: true,
  });
  return {
    url: { origin_path: `${url.origin}${url.pathname}`, params: Object.fromEntries(url.searchParams) },
    callback: Object.fromEntries(callback.searchParams),
    sent: { state: params.state, nonce: params.nonce },
    scope: tokens.scope ?? null,
    id_token: tokens.id_token,
    claims: tokens.claims(),
  };
}

async function failure(promise) {
  try {
    await promise;
    return { succeeded: true };
  } catch (e) {
    return { error: e.error ?? null, status: e.status ?? null, code: e.code ?? null,
      description: e.error_description ?? e.message ?? null };
  }
}

// What the browser is answered for a URL: a redirect to the client (its parameters), or a page.
async function visit(rp, url) {
  const res = await rp.browse(url);
  const location = res.headers.get('location');
  const page = await res.text();
  return {
    status: res.status,
    to_client: location?.startsWith(redirectUri) ? Object.fromEntries(new URL(location).searchParams) : null,
    location,
    page: page.replace(/<head>[\s\S]*<\/head>/, '').replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 400),
  };
}

const out = {};

// 1. client_secret_basic, a client that must push: the plain request is refused (to the
// client, with its state); the pushed one signs in; its request_uri is spent after one use.
{
  const { config, pushed } = configFor(clients.basic.client_id, client.ClientSecretBasic(clients.basic.client_secret));
  const rp = browser(redirectUri);
  const plain = await request();
  const refused = await visit(rp, client.buildAuthorizationUrl(config, plain.params));
  const req = await request();
  const url = await client.buildAuthorizationUrlWithPAR(config, req.params);
  const flow = await complete(config, rp, url, req);
  out.basic = {
    plain: { ...refused, sent_state: plain.params.state },
    ...flow,
    pushed,
    reused: await visit(rp, url),
    reused_in_new_browser: await visit(browser(redirectUri), url),
  };
}

// 2. private_key_jwt: pushed with the library's PrivateKeyJwt (RS256); a request object alone
// (ES256, then Ed25519); a request object pushed (PS256).
{
  const { config, pushed } = configFor(clients.pkjwt.client_id, client.PrivateKeyJwt(signingKey('RS256')));
  const rp = browser(redirectUri);
  const parReq = await request();
  const par = await complete(config, rp, await client.buildAuthorizationUrlWithPAR(config, parReq.params), parReq);
  par.pushed = pushed.splice(0);

  const jar = {};
  for (const alg of ['ES256', 'Ed25519']) {
    const req = await request();
    const url = await client.buildAuthorizationUrlWithJAR(config, req.params, signingKey(alg), remapEd25519);
    jar[alg] = await complete(config, rp, url, req);
  }

  const both = await request();
  const { searchParams } = await client.buildAuthorizationUrlWithJAR(config, both.params, signingKey('PS256'));
  const parUrl = await client.buildAuthorizationUrlWithPAR(config, searchParams);
  const jarPar = await complete(config, rp, parUrl, both);
  jarPar.pushed = pushed.splice(0);
  jarPar.reused = await visit(rp, parUrl);
  out.pkjwt = { par, jar, jar_par: jarPar };
}

// 3. A client that must sign its requests, with ES256: a plain request (pushed or not) and an
// object signed with another of its keys are refused; an ES256 object pushed goes through.
{
  const { config, pushed } = configFor(clients.signed.client_id, client.ClientSecretBasic(clients.signed.client_secret));
  const rp = browser(redirectUri);
  const unsigned = await request();
  const unsignedPush = await failure(client.buildAuthorizationUrlWithPAR(config, unsigned.params));
  const plain = await request();
  const unsignedFront = await visit(rp, client.buildAuthorizationUrl(config, plain.params));
  const wrongAlg = await request();
  const ps = await client.buildAuthorizationUrlWithJAR(config, wrongAlg.params, signingKey('PS256'));
  const wrongAlgPush = await failure(client.buildAuthorizationUrlWithPAR(config, ps.searchParams));
  const req = await request();
  const es = await client.buildAuthorizationUrlWithJAR(config, req.params, signingKey('ES256'));
  const flow = await complete(config, rp, await client.buildAuthorizationUrlWithPAR(config, es.searchParams), req);
  out.signed = {
    unsigned_push: unsignedPush,
    unsigned_front: { ...unsignedFront, sent_state: plain.params.state },
    wrong_alg_push: wrongAlgPush,
    ...flow,
    pushed,
  };
}

console.log(JSON.stringify(out));
