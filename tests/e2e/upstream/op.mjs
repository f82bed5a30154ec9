// node-oidc-provider (panva's oidc-provider 8.x) as an upstream OpenID provider of Authrim,
// for tests/e2e/test_upstream.py.
//
//   PORT=18091 CLIENT_SECRET=s3cret REDIRECT_URI=http://127.0.0.1:PORT2/login/upstream/callback \
//     node op.mjs
//
// Issuer http://127.0.0.1:PORT. One confidential client, `downstream` (client_secret_basic,
// the code flow, PKCE as the library requires it), whose only redirect URI is REDIRECT_URI:
// the downstream Authrim's callback. One person, `ulla`: the library's own development
// interactions (devInteractions: a login form that takes the login as the account id, then a
// consent form) sign her in; findAccount knows her alone, so any other login fails there.
// The scopes `openid email profile` carry her claims; as OpenID Connect Core §5.4 says (the
// library's default conformIdTokenClaims), the ID token of the code flow carries `sub` only,
// and the e-mail and profile come from the userinfo endpoint. Every authorization response
// carries `iss` (RFC 9207; discovery says authorization_response_iss_parameter_supported).
// Prints `ready` once listening; stops on SIGTERM.
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';

import Provider from 'oidc-provider';

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
const REDIRECT_URI = required('REDIRECT_URI');
const ISSUER = `http://127.0.0.1:${PORT}`;

// The one person here: her account id (the `sub` she gets) and claims.
const ACCOUNTS = {
  ulla: {
    sub: 'ulla',
    email: 'ulla@upstream.example',
    email_verified: true,
    name: 'Ulla Upstream',
    given_name: 'Ulla',
    family_name: 'Upstream',
    preferred_username: 'ulla.upstream',
    nickname: 'ulla-nick',
    locale: 'sv-SE',
  },
};

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = {
  ...privateKey.export({ format: 'jwk' }),
  kid: randomUUID(),
  alg: 'RS256',
  use: 'sig',
};

const configuration = {
  jwks: { keys: [signingKey] },
  clients: [
    {
      client_id: 'downstream',
      client_secret: CLIENT_SECRET,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      redirect_uris: [REDIRECT_URI],
    },
  ],
  scopes: ['openid', 'email', 'profile'],
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name', 'given_name', 'family_name', 'preferred_username', 'nickname', 'locale'],
  },
  async findAccount(_ctx, id) {
    const account = ACCOUNTS[id];
    if (!account) return undefined;
    return {
      accountId: id,
      async claims() {
        return { ...account };
      },
    };
  },
  features: {
    devInteractions: { enabled: true },
  },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  clientBasedCORS: () => false,
};

const provider = new Provider(ISSUER, configuration);

for (const event of ['server_error', 'grant.error', 'authorization.error', 'userinfo.error']) {
  provider.on(event, (_ctx, err) => {
    console.error(event, err);
  });
}

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
