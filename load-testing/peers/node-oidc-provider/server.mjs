// node-oidc-provider peer for the side-by-side benchmark (load-testing/peers.sh).
//
//   PORT=18090 CLIENT_SECRET=s3cret RS_SECRET=rs3cret NODE_ENV=production node server.mjs
//
// Client `svc` (client credentials, scope `svc`) gets RS256 JWT access tokens for the default
// resource https://api.example.com, signed with an RSA-2048 key made at start. oidc-provider
// does not introspect JWT access tokens (400 unsupported_token_type), so a token request with
// `resource=https://opaque.api.example.com` gets an opaque token, which client `rs` may
// introspect. The library's in-memory adapter keeps those (it is an LRU of ~1000 entries,
// enough for the one token the benchmark introspects). Prints `ready` once listening.
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';

import Provider, { errors } from 'oidc-provider';

function required(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`missing environment variable ${name}`);
    process.exit(2);
  }
  return value;
}

const PORT = Number.parseInt(required('PORT'), 10);
const CLIENT_SECRET = required('CLIENT_SECRET');
const RS_SECRET = required('RS_SECRET');
const ACCESS_TOKEN_TTL = 3600; // Authrim's default

const ISSUER = `http://127.0.0.1:${PORT}`;
const RESOURCE = 'https://api.example.com';
const OPAQUE_RESOURCE = 'https://opaque.api.example.com';

// One RSA-2048 signing key, generated at start, used for RS256.
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = {
  ...privateKey.export({ format: 'jwk' }),
  kid: randomUUID(),
  alg: 'RS256',
  use: 'sig',
};

const jwtResourceServer = {
  scope: 'svc',
  audience: RESOURCE,
  accessTokenTTL: ACCESS_TOKEN_TTL,
  accessTokenFormat: 'jwt',
  jwt: { sign: { alg: 'RS256' } },
};
const opaqueResourceServer = {
  scope: 'svc',
  audience: OPAQUE_RESOURCE,
  accessTokenTTL: ACCESS_TOKEN_TTL,
  accessTokenFormat: 'opaque',
};

const configuration = {
  jwks: { keys: [signingKey] },
  // ID tokens are not issued here; keep the provider-wide default alg consistent with the key.
  clientDefaults: { id_token_signed_response_alg: 'RS256' },
  enabledJWA: {
    // Only the algorithm actually used; discovery advertises what is enabled.
    idTokenSigningAlgValues: ['RS256'],
  },
  scopes: ['svc'],
  clients: [
    {
      client_id: 'svc',
      client_secret: CLIENT_SECRET,
      grant_types: ['client_credentials'],
      token_endpoint_auth_method: 'client_secret_basic',
      redirect_uris: [],
      response_types: [],
      scope: 'svc',
    },
    {
      client_id: 'rs',
      client_secret: RS_SECRET,
      grant_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
      introspection_endpoint_auth_method: 'client_secret_basic',
      redirect_uris: [],
      response_types: [],
    },
  ],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: {
      enabled: true,
      // Only the resource server client may introspect.
      allowedPolicy: async (_ctx, client) => client.clientId === 'rs',
    },
    // Not part of the comparison; off so that the token endpoint does not look for DPoP proofs.
    dPoP: { enabled: false },
    resourceIndicators: {
      enabled: true,
      defaultResource: async () => RESOURCE,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx, resourceIndicator) => {
        if (resourceIndicator === RESOURCE) return jwtResourceServer;
        if (resourceIndicator === OPAQUE_RESOURCE) return opaqueResourceServer;
        throw new errors.InvalidTarget();
      },
    },
  },
  ttl: {
    // Only used for tokens without a resource server; the resource server's accessTokenTTL wins.
    ClientCredentials: ACCESS_TOKEN_TTL,
    AccessToken: ACCESS_TOKEN_TTL,
  },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  // No browser clients: no CORS origins are allowed (also avoids the default's notice).
  clientBasedCORS: () => false,
};

const provider = new Provider(ISSUER, configuration);

provider.on('server_error', (_ctx, err) => {
  console.error('server_error', err);
});

const server = provider.listen(PORT, '127.0.0.1', () => {
  console.log('ready');
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
    setTimeout(() => process.exit(0), 2000).unref();
  });
}
