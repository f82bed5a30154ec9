// What the relying-party programs here share: the configuration openid-client discovers, and
// a browser (plain fetch with a cookie jar) that signs in and consents on Authrim's pages.
//
// Input, from the environment: ISSUER, CLIENT_ID, CLIENT_SECRET, USERNAME, PASSWORD (see
// conftest.py's run_relying_party).
import * as client from 'openid-client';

export const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

// The client is registered for client_secret_basic (the library's default would be
// client_secret_post, which Authrim refuses for it). The test server is plain HTTP on
// loopback; the library refuses that unless told.
export async function discover() {
  const config = await client.discovery(
    new URL(env('ISSUER')),
    env('CLIENT_ID'),
    undefined,
    client.ClientSecretBasic(env('CLIENT_SECRET')),
    { execute: [client.allowInsecureRequests] },
  );
  client.enableNonRepudiationChecks(config);
  return config;
}

// A browser, as far as the login and consent pages need one. `jar` is its cookies (name ->
// value), open to the program for the checks it makes.
export function browser(redirectUri) {
  const jar = new Map();
  async function browse(url, init = {}) {
    const headers = new Headers(init.headers);
    if (jar.size) headers.set('cookie', [...jar].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      // Max-Age=0 removes the cookie, as a browser does (the logout endpoint's answer).
      if (attributes.some((a) => /^\s*max-age\s*=\s*0\s*$/i.test(a))) jar.delete(name);
      else jar.set(name, pair.slice(eq + 1).trim());
    }
    return res;
  }
  function hidden(html, name) {
    const m = html.match(new RegExp(`name="${name}" value="([^"]*)"`));
    if (!m) throw new Error(`no ${name} in page: ${html.slice(0, 500)}`);
    return m[1];
  }
  // POST a form; a 303 to one of Authrim's own pages (the consent page after the login) is
  // followed with a GET, as a browser does. Redirects to the client are left to the caller.
  async function submit(base, path, fields) {
    const res = await browse(new URL(path, base), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields),
    });
    const location = res.headers.get('location');
    if (res.status === 303 && location && location.startsWith('/')) return browse(new URL(location, base));
    return res;
  }
  // The action of the page's form posting to `name` (`/login`, or `/t/acme/login` at a
  // tenant's path issuer: the pages name their issuer's own URLs), if it has one.
  function formAction(html, name) {
    return html.match(new RegExp(`action="((?:/[^"/?]+)*/${name})"`))?.[1];
  }
  // From an authorization URL to the redirect back to the client, signing in and consenting.
  async function authorize(url) {
    let res = await browse(url);
    let page = await res.text();
    let action = formAction(page, 'login');
    if (action) {
      res = await submit(url, action, { challenge: hidden(page, 'challenge'), username: env('USERNAME'), password: env('PASSWORD') });
      page = await res.text();
    }
    action = formAction(page, 'consent');
    if (action) {
      res = await submit(url, action, { challenge: hidden(page, 'challenge'), decision: 'allow' });
    }
    const location = res.headers.get('location');
    if (!location || !location.startsWith(redirectUri)) throw new Error(`no redirect to the client (status ${res.status})`);
    return new URL(location);
  }
  return { jar, browse, authorize };
}

// openid-client names an Ed25519 key's JWS algorithm "Ed25519" (RFC 9864); Authrim accepts
// "EdDSA", as its discovery says. Passed where the library signs (assertions, request
// objects, DPoP proofs), it renames the header's alg.
export const remapEd25519 = { [client.modifyAssertion]: (header) => { if (header.alg === 'Ed25519') header.alg = 'EdDSA'; } };

// Fresh parameters for one authorization request (PKCE S256, state, nonce), and the verifier.
export async function authorizationRequest(redirectUri, scope, extra = {}) {
  const verifier = client.randomPKCECodeVerifier();
  return {
    verifier,
    params: {
      redirect_uri: redirectUri,
      scope,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: client.randomState(),
      nonce: client.randomNonce(),
      ...extra,
    },
  };
}
