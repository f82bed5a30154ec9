// node-oidc-provider (panva's oidc-provider 8.x) as an upstream OpenID provider of Authrim,
// for tests/e2e/test_upstream.py.
//
//   PORT=18091 CLIENT_SECRET=s3cret REDIRECT_URI=http://127.0.0.1:PORT2/login/upstream/callback \
//     [JWT_CLIENTS='[{"client_id":"pk","jwks_uri":"http://…/jwks","token_endpoint_auth_signing_alg":"ES256"}]'] \
//     node op.mjs
//
// Issuer http://127.0.0.1:PORT. One confidential client, `downstream` (client_secret_basic,
// the code flow, PKCE as the library requires it), whose only redirect URI is REDIRECT_URI:
// the downstream Authrim's callback. JWT_CLIENTS (optional, JSON): more such clients that
// authenticate with private_key_jwt (RFC 7523), each {client_id, jwks_uri or jwks,
// token_endpoint_auth_signing_alg}. Three people, `ulla`, `vera` and `wanda`: the library's
// own development interactions (devInteractions: a login form that takes the login as the
// account id, then a consent form) sign them in; findAccount knows them alone, so any other
// login fails there. The scopes `openid email profile` carry their claims; as OpenID
// Connect Core §5.4 says (the library's default conformIdTokenClaims), the ID token of the
// code flow carries `sub` only, and the e-mail and profile come from the userinfo endpoint. Every authorization response
// carries `iss` (RFC 9207; discovery says authorization_response_iss_parameter_supported).
// Every request to the token endpoint is written to stdout as one line, `token_request ` and
// JSON: its form (a client_secret in it as "(present)"), whether it had an Authorization
// header, the answer's status and error. Prints `ready` once listening; stops on SIGTERM.
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
const JWT_CLIENTS = JSON.parse(process.env.JWT_CLIENTS || '[]');

// The people here: by account id (the `sub` they get), their claims.
const person = (id, name) => ({
  sub: id,
  email: `${id}@upstream.example`,
  email_verified: true,
  name: `${name} Upstream`,
  given_name: name,
  family_name: 'Upstream',
  preferred_username: `${id}.upstream`,
  nickname: `${id}-nick`,
  locale: 'sv-SE',
});
const ACCOUNTS = {
  ulla: person('ulla', 'Ulla'),
  vera: person('vera', 'Vera'),
  wanda: person('wanda', 'Wanda'),
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
    ...JWT_CLIENTS.map((client) => ({
      ...client,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'private_key_jwt',
      redirect_uris: [REDIRECT_URI],
    })),
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

provider.use(async (ctx, next) => {
  await next();
  if (ctx.oidc?.route !== 'token') return;
  const form = { ...(ctx.oidc.body || {}) };
  if ('client_secret' in form) form.client_secret = '(present)';
  const line = {
    form,
    authorization: ctx.get('authorization') !== '',
    status: ctx.status,
    error: ctx.body?.error,
  };
  console.log(`token_request ${JSON.stringify(line)}`);
});

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
