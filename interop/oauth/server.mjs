// A real authorization server for tests: oidc-provider (OpenID Certified) on 127.0.0.1, on a
// free port, configured the way the MCP authorization spec asks of one:
//   - PKCE required (S256), authorization code with refresh tokens rotated on every use;
//   - resource indicators (RFC 8707): every access token is a JWT (RFC 9068, typ at+jwt)
//     whose audience is the resource the client asked for;
//   - dynamic client registration (RFC 7591), open;
//   - client ID metadata documents (draft-02, experimental in oidc-provider): documents are
//     served from CIMD_DOCUMENTS below instead of the network, so tests need no https host;
//   - the client-credentials grant, for the pre-registered clients `switchboard-machine`
//     (secret `switchboard-machine-secret`, client_secret_basic), `switchboard-machine-nosub`
//     (secret `switchboard-machine-nosub-secret`; its access tokens carry no `sub`, as some
//     issuers' client-credentials tokens do, so a resource server must bind them to the client)
//     and `switchboard-machine-jwt` (private_key_jwt, RFC 7523, with an ES256 key made at start;
//     the private key is written as PKCS#8 PEM, mode 0600, to $MACHINE_KEY_FILE when it is set);
//   - login and consent complete without a person: the interaction URL approves at once
//     (user `switchboard-test-user`, every scope and resource asked for), so a client that
//     follows redirects with a cookie jar gets its code.
// Two test knobs, keyed on the client's registered `client_name`, so that a client registering
// itself dynamically can ask for them:
//   - `expired-first`: the access token of its authorization-code exchange is already expired
//     (`exp` two minutes past; the token response still says `expires_in` 600), so its first
//     request is refused with 401 and it must refresh (refresh tokens are rotated);
//   - `short-lived`: its access tokens say `expires_in` 2, so a client that refreshes ahead of
//     expiry refreshes after two seconds.
// Prints `issuer http://127.0.0.1:PORT` on stdout once listening. Test use only.
import { createServer } from 'node:http';
import { createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import Provider from 'oidc-provider';

const SCOPES = ['openid', 'offline_access', 'mcp:basic', 'mcp:write'];
const RESOURCE_SCOPES = 'mcp:basic mcp:write';
export const MACHINE = { id: 'switchboard-machine', secret: 'switchboard-machine-secret' };
const MACHINE_NOSUB = { id: 'switchboard-machine-nosub', secret: 'switchboard-machine-nosub-secret' };
const MACHINE_JWT = 'switchboard-machine-jwt';
const CIMD_URL = 'https://client.switchboard.test/oauth/client.json';
// The same client without refresh tokens: its step-up is a new authorization.
const CIMD_NO_REFRESH_URL = 'https://client.switchboard.test/oauth/no-refresh.json';
const cimd = (url, name, grantTypes) => ({
  client_id: url,
  client_name: name,
  redirect_uris: ['http://127.0.0.1/callback'],
  grant_types: grantTypes,
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
  application_type: 'native',
});
const CIMD_DOCUMENTS = {
  [CIMD_URL]: cimd(CIMD_URL, 'switchboard (client ID metadata document)', ['authorization_code', 'refresh_token']),
  [CIMD_NO_REFRESH_URL]: cimd(CIMD_NO_REFRESH_URL, 'client ID metadata document, no refresh', ['authorization_code']),
};

const jwk = (type, options) => ({
  ...generateKeyPairSync(type, options).privateKey.export({ format: 'jwk' }),
});
const jwks = {
  keys: [
    { ...jwk('ec', { namedCurve: 'P-256' }), alg: 'ES256', use: 'sig', kid: 'es256' },
    { ...jwk('rsa', { modulusLength: 2048 }), alg: 'RS256', use: 'sig', kid: 'rs256' },
  ],
};

// The private_key_jwt client's key pair.
const machineKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
if (process.env.MACHINE_KEY_FILE) {
  writeFileSync(process.env.MACHINE_KEY_FILE, machineKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
}
const machinePublicJwk = { ...createPublicKey(machineKey).export({ format: 'jwk' }), alg: 'ES256', use: 'sig' };

const named = (client, knob) => Boolean(client?.clientName?.includes(knob));

const server = createServer();
await new Promise((resolve) => server.listen(Number(process.env.PORT || 0), '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  jwks,
  cookies: { keys: [randomBytes(32).toString('hex')] },
  scopes: SCOPES,
  clients: [
    {
      client_id: MACHINE.id,
      client_secret: MACHINE.secret,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
    },
    {
      client_id: MACHINE_NOSUB.id,
      client_secret: MACHINE_NOSUB.secret,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
    },
    {
      client_id: MACHINE_JWT,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'private_key_jwt',
      token_endpoint_auth_signing_alg: 'ES256',
      jwks: { keys: [machinePublicJwk] },
    },
  ],
  formats: {
    customizers: {
      // The test knobs on the JWT access tokens themselves (see the header).
      jwt: async (_ctx, token, jwt) => {
        if (token.clientId === MACHINE_NOSUB.id) delete jwt.payload.sub;
        if (token.gty === 'authorization_code' && named(token.client, 'expired-first')) {
          jwt.payload.iat -= 720;
          jwt.payload.exp = jwt.payload.iat + 600;
        }
      },
    },
  },
  clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'],
  pkce: { required: () => true },
  rotateRefreshToken: true,
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: async (_ctx, _client, oneOf) => (oneOf ? oneOf[0] : undefined),
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx, resourceIndicator, client) => ({
        scope: RESOURCE_SCOPES,
        audience: resourceIndicator,
        accessTokenTTL: named(client, 'short-lived') ? 2 : 600,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'ES256' } },
      }),
    },
    clientIdMetadataDocument: {
      enabled: true,
      ack: 'draft-02',
      allowFetch: async (_ctx, id) => id in CIMD_DOCUMENTS,
    },
  },
  // Client ID metadata documents come from CIMD_DOCUMENTS, never from the network.
  fetch: async (url) => {
    const doc = CIMD_DOCUMENTS[String(url)];
    if (!doc) return new Response('not found', { status: 404 });
    return new Response(JSON.stringify(doc), {
      status: 200,
      headers: { 'content-type': 'application/json', 'cache-control': 'max-age=60' },
    });
  },
});

// The interaction (login, then consent) approves at once.
async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params, session, grantId } = details;
  if (prompt.name === 'login') {
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: 'switchboard-test-user' } },
      { mergeWithLastSubmission: false },
    );
    return;
  }
  const grant = grantId
    ? await provider.Grant.find(grantId)
    : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
  const d = prompt.details;
  if (d.missingOIDCScope) grant.addOIDCScope(d.missingOIDCScope.join(' '));
  if (d.missingOIDCClaims) grant.addOIDCClaims(d.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(d.missingResourceScopes || {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  const id = await grant.save();
  await provider.interactionFinished(req, res, { consent: { grantId: id } }, { mergeWithLastSubmission: true });
}

const callback = provider.callback();
server.on('request', (req, res) => {
  if (req.method === 'GET' && req.url.startsWith('/interaction/')) {
    interaction(req, res).catch((e) => {
      res.statusCode = 500;
      res.end(`interaction failed: ${e.message}`);
    });
    return;
  }
  callback(req, res);
});

process.stdout.write(`issuer ${issuer}\n`);
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => server.close(() => process.exit(0)));
