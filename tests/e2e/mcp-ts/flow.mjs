// Authrim and the official MCP TypeScript SDK (see ../README.md, test_mcp_ts.py).
//
// One program, both sides of MCP: an MCP server built with the SDK (McpServer, stateless
// streamable HTTP on express, RFC 9728 metadata from mcpAuthMetadataRouter naming Authrim,
// requireBearerAuth with `mcp:tools` required, so its 401 challenge names the scope) whose
// token verifier checks Authrim's JWT access tokens with jose (JWKS, typ at+jwt, iss, aud = its
// own URL); and the SDK's Client over StreamableHTTPClientTransport with an OAuthClientProvider
// kept in memory. The provider's redirectToAuthorization plays the user over HTTP (Authrim's
// login and consent pages, cookies kept by hand) and hands the code to finishAuth.
//
// Environment: ISSUER (Authrim's issuer), MCP_PORT, USERNAME, PASSWORD, BASE (the issuer's
// path: the forms are expected under it), CLIENT_METADATA_URL (a Client ID Metadata Document
// client; without it the SDK registers dynamically), WAIT_FOR_EXPIRY (seconds to sleep before
// the second tool call, so that the access token has expired and the SDK refreshes).
// Prints one JSON object: what the test checks (every request to Authrim, the tokens, the
// tool's answers, the MCP server's challenge).

import express from "express";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import { mcpAuthMetadataRouter, getOAuthProtectedResourceMetadataUrl } from "@modelcontextprotocol/sdk/server/auth/router.js";
import { InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const env = (name, fallback) => process.env[name] ?? fallback;
const ISSUER = env("ISSUER");
const MCP_PORT = Number(env("MCP_PORT"));
const BASE = env("BASE", "");
const MCP_URL = `http://127.0.0.1:${MCP_PORT}/mcp`;
const REDIRECT = `http://127.0.0.1:${MCP_PORT}/callback`;
const SCOPE = "mcp:tools";
const STEP_MS = 10_000;

const out = { requests: [], tokens: [], tools: [], challenge: null, registration: null, consent_shown: false };
const die = (msg) => {
  out.error = String(msg?.stack ?? msg);
  console.log(JSON.stringify(out));
  process.exit(1);
};
setTimeout(() => die("gave up after 60 s"), 60_000).unref();

// ---------------------------------------------------------------- the MCP server
const asMeta = await (await fetch(`${ISSUER}/.well-known/openid-configuration`)).json();
const jwks = createRemoteJWKSet(new URL(asMeta.jwks_uri));
const verifier = {
  async verifyAccessToken(token) {
    try {
      const { payload, protectedHeader } = await jwtVerify(token, jwks, { issuer: ISSUER, audience: MCP_URL, typ: "at+jwt" });
      void protectedHeader;
      return {
        token,
        clientId: payload.client_id,
        scopes: String(payload.scope ?? "").split(" ").filter(Boolean),
        expiresAt: payload.exp,
        resource: new URL(MCP_URL),
        extra: { sub: payload.sub },
      };
    } catch (e) {
      throw new InvalidTokenError(`not a token for this server: ${e.code ?? e.message}`);
    }
  },
};
const app = express();
app.use(mcpAuthMetadataRouter({ oauthMetadata: asMeta, resourceServerUrl: new URL(MCP_URL), scopesSupported: [SCOPE], resourceName: "TS SDK test server" }));
app.use(express.json());
const bearer = requireBearerAuth({ verifier, requiredScopes: [SCOPE], resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(new URL(MCP_URL)), expectedResource: new URL(MCP_URL) });
app.post("/mcp", bearer, async (req, res) => {
  const server = new McpServer({ name: "authrim-e2e", version: "1.0.0" });
  server.registerTool("whoami", { description: "the caller's subject" }, async (extra) => ({
    content: [{ type: "text", text: `sub=${extra.authInfo?.extra?.sub} client=${extra.authInfo?.clientId}` }],
  }));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on("close", () => { transport.close(); server.close(); });
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
});
await new Promise((resolve) => app.listen(MCP_PORT, "127.0.0.1", resolve));

// The challenge a client without a token gets.
{
  const r = await fetch(MCP_URL, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) });
  out.challenge = { status: r.status, www_authenticate: r.headers.get("www-authenticate") };
}

// ---------------------------------------------------------------- the user, over HTTP
const jar = new Map();
const keepCookies = (res) => {
  for (const c of res.headers.getSetCookie()) {
    const [pair, ...attrs] = c.split(";");
    const [name, value] = pair.split("=");
    out.cookie_paths = out.cookie_paths ?? [];
    out.cookie_paths.push(`${name.trim()}:${attrs.map((a) => a.trim()).find((a) => a.startsWith("Path=")) ?? ""}`);
    if (value) jar.set(name.trim(), value); else jar.delete(name.trim());
  }
};
const browse = async (url, init = {}) => {
  const headers = { ...(init.headers ?? {}), cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ") };
  const res = await fetch(url, { ...init, headers, redirect: "manual", signal: AbortSignal.timeout(STEP_MS) });
  keepCookies(res);
  return res;
};
const field = (html, name) => html.match(new RegExp(`name="${name}" value="([^"]*)"`))?.[1];
const formAction = (html, path) => {
  const actions = [...html.matchAll(/<form[^>]*action="([^"]*)"/g)].map((m) => m[1]);
  const want = `${BASE}${path}`;
  if (!actions.includes(want)) die(`no form posting to ${want} (forms: ${actions.join(", ")})`);
  return new URL(want, ISSUER).href;
};
const post = (url, fields) => browse(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });

async function playUser(authorizationUrl) {
  out.authorization_url = authorizationUrl.href;
  out.authorizations = (out.authorizations ?? 0) + 1;
  let res = await browse(authorizationUrl.href);
  let html = await res.text();
  let location = res.headers.get("location");
  // Signed in and consented before: straight back to the client.
  if (res.status === 302 || res.status === 303) {
    if (!location?.startsWith(REDIRECT)) die(`authorize: ${res.status} to ${location}`);
    return new URL(location).searchParams.get("code");
  }
  if (res.status !== 200) die(`authorize: ${res.status} ${html.slice(0, 500)}`);
  res = await post(formAction(html, "/login"), { challenge: field(html, "challenge"), username: env("USERNAME"), password: env("PASSWORD") });
  location = res.headers.get("location");
  if (res.status === 303 && location?.startsWith(`${BASE}/consent`)) {
    res = await browse(new URL(location, ISSUER).href);
    html = await res.text();
    out.consent_shown = true;
    out.consent_mentions_scope = html.includes(SCOPE) || html.includes("TS SDK") || html.includes("tools");
    res = await post(formAction(html, "/consent"), { challenge: field(html, "challenge"), decision: "allow" });
    location = res.headers.get("location");
  }
  if (!location?.startsWith(REDIRECT)) die(`expected a redirect to ${REDIRECT}, got ${res.status} ${location}`);
  out.redirect_location_ok = true;
  return new URL(location).searchParams.get("code");
}

// ---------------------------------------------------------------- the SDK's client
const store = { client: undefined, tokens: undefined, verifier: undefined, discovery: undefined, code: undefined };
const clientMetadataUrl = env("CLIENT_METADATA_URL");
const provider = {
  get redirectUrl() { return REDIRECT; },
  get clientMetadata() {
    return { client_name: "Authrim e2e TS MCP client", redirect_uris: [REDIRECT], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" };
  },
  ...(clientMetadataUrl ? { clientMetadataUrl } : {}),
  clientInformation: () => store.client,
  saveClientInformation: (info) => { store.client = info; },
  tokens: () => store.tokens,
  saveTokens: (tokens) => { store.tokens = tokens; out.tokens.push({ access_token: tokens.access_token, refresh_token: tokens.refresh_token ?? null, scope: tokens.scope ?? null }); },
  saveCodeVerifier: (v) => { store.verifier = v; },
  codeVerifier: () => store.verifier,
  saveDiscoveryState: (s) => { store.discovery = s; },
  discoveryState: () => store.discovery,
  redirectToAuthorization: async (url) => { store.code = await playUser(url); },
};

// Every request the SDK makes (to Authrim and to the MCP server), recorded.
const recordingFetch = async (url, init) => {
  const u = String(url);
  const entry = { method: init?.method ?? "GET", url: u };
  if (u.startsWith(ISSUER.split("/").slice(0, 3).join("/")) && init?.body) {
    entry.body = typeof init.body === "string" ? init.body : init.body instanceof URLSearchParams ? init.body.toString() : null;
  }
  const res = await fetch(url, init);
  entry.status = res.status;
  if (u.endsWith("/register") && res.status === 201) out.registration = await res.clone().json();
  out.requests.push(entry);
  return res;
};

async function connected() {
  const client = new Client({ name: "authrim-e2e-ts", version: "1.0.0" });
  const transport = () => new StreamableHTTPClientTransport(new URL(MCP_URL), { authProvider: provider, fetch: recordingFetch });
  try {
    await client.connect(transport());
    return client;
  } catch (e) {
    if (!(e instanceof UnauthorizedError) || !store.code) throw e;
  }
  const t = transport();
  await t.finishAuth(store.code);
  store.code = undefined;
  const again = new Client({ name: "authrim-e2e-ts", version: "1.0.0" });
  await again.connect(t);
  return again;
}

try {
  const client = await connected();
  const call = async () => (await client.callTool({ name: "whoami", arguments: {} })).content[0].text;
  out.tools.push(await call());
  const wait = Number(env("WAIT_FOR_EXPIRY", "0"));
  if (wait > 0) {
    await new Promise((r) => setTimeout(r, wait * 1000));
    // The access token has expired: the MCP server answers 401 and the SDK refreshes.
    const fresh = await connected();
    out.tools.push(await (async () => (await fresh.callTool({ name: "whoami", arguments: {} })).content[0].text)());
  }
  out.client_id = store.client?.client_id;
  console.log(JSON.stringify(out));
  process.exit(0);
} catch (e) {
  die(e);
}
