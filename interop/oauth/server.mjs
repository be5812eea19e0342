// A real authorization server for tests: oidc-provider (OpenID Certified) on 127.0.0.1, on a
// free port, configured the way the MCP authorization spec asks of one:
//   - PKCE required (S256), authorization code with refresh tokens rotated on every use;
//   - resource indicators (RFC 8707): every access token is a JWT (RFC 9068, typ at+jwt)
//     whose audience is the resource the client asked for;
//   - dynamic client registration (RFC 7591), open;
//   - client ID metadata documents (draft-02, experimental in oidc-provider): documents are
//     served from CIMD_DOCUMENTS below instead of the network, so tests need no https host;
//   - the client-credentials grant, for the pre-registered client `switchboard-machine`
//     (secret `switchboard-machine-secret`, client_secret_basic or client_secret_post);
//   - login and consent complete without a person: the interaction URL approves at once
//     (user `switchboard-test-user`, every scope and resource asked for), so a client that
//     follows redirects with a cookie jar gets its code.
// Prints `issuer http://127.0.0.1:PORT` on stdout once listening. Test use only.
import { createServer } from 'node:http';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import Provider from 'oidc-provider';

const SCOPES = ['openid', 'offline_access', 'mcp:basic', 'mcp:write'];
const RESOURCE_SCOPES = 'mcp:basic mcp:write';
export const MACHINE = { id: 'switchboard-machine', secret: 'switchboard-machine-secret' };
const CIMD_URL = 'https://client.switchboard.test/oauth/client.json';
const CIMD_DOCUMENTS = {
  [CIMD_URL]: {
    client_id: CIMD_URL,
    client_name: 'switchboard (client ID metadata document)',
    redirect_uris: ['http://127.0.0.1/callback'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    application_type: 'native',
  },
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
  ],
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
      getResourceServerInfo: async (_ctx, resourceIndicator) => ({
        scope: RESOURCE_SCOPES,
        audience: resourceIndicator,
        accessTokenTTL: 600,
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
