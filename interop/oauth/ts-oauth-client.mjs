#!/usr/bin/env node
// The official TypeScript SDK's OAuth client (`@modelcontextprotocol/sdk` 1.x: an
// `OAuthClientProvider` given to `StreamableHTTPClientTransport` as `authProvider`) against our
// resource server (`switchboard serve --http ... --auth-issuer ISSUER`) with oidc-provider
// (interop/oauth/server.mjs) as the authorization server.
//
//   node interop/oauth/ts-oauth-client.mjs --url http://127.0.0.1:PORT/mcp --issuer http://127.0.0.1:PORT \
//     --machine-key FILE
//
// FILE is the private key server.mjs wrote for the private_key_jwt client (MACHINE_KEY_FILE).
// The person a browser would need is played by a headless follower: it fetches the
// authorization URL the SDK hands to `redirectToAuthorization`, follows oidc-provider's login
// and consent redirects (which approve at once) with a cookie jar, and stops at the redirect
// URI, whose code goes to `transport.finishAuth`.
//
// Prints one line per check (`PASS name` / `FAIL name: why`), then `N passed, M failed`; exits 0
// only when every check passed.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { ClientCredentialsProvider, PrivateKeyJwtProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { readFileSync } from 'node:fs';

const SDK_VERSION = JSON.parse(
  readFileSync(new URL('../node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url), 'utf8'),
).version;

const REDIRECT = 'http://127.0.0.1/callback';
const CIMD_NO_REFRESH = 'https://client.switchboard.test/oauth/no-refresh.json';
const SIMPLE_TEXT = 'This is a simple text response for testing.';
const USER = 'switchboard-test-user';
const OVERALL_TIMEOUT_MS = 120000;

// ---------------------------------------------------------------- arguments and output

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
if (!args.url || !args.issuer || !args['machine-key']) {
  console.error('usage: ts-oauth-client.mjs --url MCP_URL --issuer ISSUER --machine-key FILE');
  process.exit(2);
}
const URL_ = args.url;
const ISSUER = args.issuer;
const PRM_URL = URL_.replace(/\/mcp$/, '/.well-known/oauth-protected-resource/mcp');

let passed = 0;
let failed = 0;
function pass(name) {
  passed += 1;
  console.log(`PASS ${name}`);
}
function fail(name, why) {
  failed += 1;
  console.log(`FAIL ${name}: ${why}`);
}
// Runs `fn`; a throw or a false result fails `name`, a string result is the failure's reason.
async function check(name, fn) {
  try {
    const r = await fn();
    if (r === true || r === undefined) pass(name);
    else fail(name, r === false ? 'check failed' : String(r));
  } catch (e) {
    fail(name, e?.stack?.split('\n').slice(0, 3).join(' | ') || String(e));
  }
}

function claimsOf(jwt) {
  return JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString());
}
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// ---------------------------------------------------------------- the headless user agent

// Fetches `authorizationUrl` and follows its redirects with a cookie jar until one leads to
// REDIRECT; returns that redirect's query parameters (code, state, iss).
async function approve(authorizationUrl) {
  const jar = new Map();
  let url = new URL(authorizationUrl);
  for (let hop = 0; hop < 20; hop++) {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const gone = !value || attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=.*1970/i.test(a));
      if (gone) jar.delete(name);
      else jar.set(name, value);
    }
    await res.arrayBuffer();
    const location = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || !location) {
      throw new Error(`the authorization server answered ${res.status} at ${url.pathname} without a redirect`);
    }
    const next = new URL(location, url);
    if (`${next.origin}${next.pathname}` === REDIRECT) {
      if (next.searchParams.get('error')) throw new Error(`authorization refused: ${next.searchParams.get('error')}`);
      return Object.fromEntries(next.searchParams);
    }
    url = next;
  }
  throw new Error('more than 20 redirects');
}

// ---------------------------------------------------------------- an in-memory provider

// An `OAuthClientProvider` keeping everything in memory, recording what the SDK asks of it.
class MemoryProvider {
  constructor({ clientMetadata, clientMetadataUrl }) {
    this._clientMetadata = clientMetadata;
    if (clientMetadataUrl) this.clientMetadataUrl = clientMetadataUrl;
    this.saved = { clients: [], tokens: [] };
    this.authorizationUrls = [];
    this.states = [];
  }
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata() {
    return this._clientMetadata;
  }
  state() {
    const s = `state-${Math.random().toString(36).slice(2)}`;
    this.states.push(s);
    return s;
  }
  clientInformation() {
    return this._client;
  }
  saveClientInformation(info) {
    this._client = info;
    this.saved.clients.push(info);
  }
  tokens() {
    return this._tokens;
  }
  saveTokens(tokens) {
    this._tokens = tokens;
    this.saved.tokens.push(tokens);
  }
  redirectToAuthorization(url) {
    this.authorizationUrls.push(new URL(url));
  }
  saveCodeVerifier(v) {
    this._verifier = v;
  }
  codeVerifier() {
    return this._verifier;
  }
  invalidateCredentials(scope) {
    if (scope === 'all' || scope === 'client') this._client = undefined;
    if (scope === 'all' || scope === 'tokens') this._tokens = undefined;
    if (scope === 'all' || scope === 'verifier') this._verifier = undefined;
  }
}

// The redirect the SDK asked for, approved headlessly; checks the state it carried and returns the code.
async function redirectBack(provider) {
  const asked = provider.authorizationUrls.at(-1);
  if (!asked) throw new Error('the SDK did not call redirectToAuthorization');
  const back = await approve(asked);
  if (back.state !== asked.searchParams.get('state')) throw new Error(`state ${back.state} is not the one sent`);
  if (back.iss !== ISSUER) throw new Error(`iss ${back.iss} is not the issuer`);
  return back.code;
}

const newClient = () => new Client({ name: 'switchboard-oauth-interop-ts', version: '1.0.0' });
const transportFor = (provider) => new StreamableHTTPClientTransport(new URL(URL_), { authProvider: provider });

// Connects through `provider`: the first attempt must end in UnauthorizedError after a
// redirect, which is approved; then `finishAuth` and a second connect.
async function authorizeAndConnect(provider) {
  let transport = transportFor(provider);
  let client = newClient();
  try {
    await client.connect(transport);
    throw new Error('connected without authorizing');
  } catch (e) {
    if (!(e instanceof UnauthorizedError)) throw e;
  }
  const code = await redirectBack(provider);
  await transport.finishAuth(code);
  await transport.close().catch(() => {});
  transport = transportFor(provider);
  client = newClient();
  await client.connect(transport);
  return { client, transport };
}

// A raw POST to the endpoint.
async function post(body, { token, session } = {}) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (token) headers.authorization = `Bearer ${token}`;
  if (session) {
    headers['mcp-session-id'] = session;
    headers['mcp-protocol-version'] = '2025-11-25';
  }
  const res = await fetch(URL_, { method: 'POST', headers, body: JSON.stringify(body) });
  await res.arrayBuffer();
  return { status: res.status, challenge: res.headers.get('www-authenticate') || '' };
}
const INITIALIZE = {
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

// ---------------------------------------------------------------- the checks

async function main() {
  console.log(`# ts-oauth-client (@modelcontextprotocol/sdk ${SDK_VERSION}) -> ${URL_}, authorization server ${ISSUER}`);

  await check('[AU-4] [AU-22] no token: 401 with a Bearer challenge naming the metadata and the scope', async () => {
    const r = await post(INITIALIZE);
    if (r.status !== 401) return `status ${r.status}`;
    if (!r.challenge.includes(`resource_metadata="${PRM_URL}"`)) return `challenge ${r.challenge}`;
    return r.challenge.includes('scope="mcp:basic"') || `challenge ${r.challenge}`;
  });

  await check('[AU-1] [AU-2] protected-resource metadata names the resource and the issuer', async () => {
    const md = await (await fetch(PRM_URL)).json();
    return (md.resource === URL_ && same(md.authorization_servers, [ISSUER])) || JSON.stringify(md);
  });

  // Dynamic registration, authorization code with PKCE, and a refresh: the client's name asks
  // oidc-provider for an already-expired first access token (server.mjs's `expired-first`).
  const dcr = new MemoryProvider({
    clientMetadata: {
      client_name: 'ts-sdk expired-first',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    },
  });
  let session = null;
  await check('[AU-13] [AU-15] the first connect asks for authorization: S256, resource, challenged scope', async () => {
    const transport = transportFor(dcr);
    try {
      await newClient().connect(transport);
      return 'connected without a token';
    } catch (e) {
      if (!(e instanceof UnauthorizedError)) throw e;
    } finally {
      await transport.close().catch(() => {});
    }
    const u = dcr.authorizationUrls.at(-1);
    if (!u) return 'redirectToAuthorization was not called';
    const p = u.searchParams;
    if (p.get('code_challenge_method') !== 'S256' || !p.get('code_challenge')) return `PKCE ${u}`;
    if (p.get('resource') !== URL_) return `resource ${p.get('resource')}`;
    if (!(p.get('scope') || '').split(' ').includes('mcp:basic')) return `scope ${p.get('scope')}`;
    return p.get('state') === dcr.states.at(-1) || 'state';
  });
  await check('[AU-16] dynamic client registration (RFC 7591) at oidc-provider', async () => {
    const c = dcr.saved.clients[0];
    if (!c?.client_id) return 'no client registered';
    return (c.client_id !== CIMD_NO_REFRESH && dcr.authorizationUrls.at(-1).searchParams.get('client_id') === c.client_id) ||
      JSON.stringify(c);
  });
  await check('finishAuth: the code from the headless redirect is exchanged for an audience-bound token', async () => {
    const code = await redirectBack(dcr);
    const transport = transportFor(dcr);
    await transport.finishAuth(code);
    const t = dcr.tokens();
    if (!t?.access_token || !t.refresh_token) return `tokens ${JSON.stringify(Object.keys(t || {}))}`;
    const c = claimsOf(t.access_token);
    if (c.aud !== URL_) return `aud ${c.aud}`;
    if (c.sub !== USER) return `sub ${c.sub}`;
    return c.scope.split(' ').includes('mcp:basic') || `scope ${c.scope}`;
  });
  let client = null;
  await check('[AU-25] an expired access token: 401, the SDK refreshes (rotated refresh token) and connects', async () => {
    const before = dcr.tokens();
    const transport = transportFor(dcr);
    client = newClient();
    await client.connect(transport);
    session = transport.sessionId;
    const after = dcr.tokens();
    if (after.access_token === before.access_token) return 'the same access token';
    if (after.refresh_token === before.refresh_token) return 'the refresh token was not rotated';
    return claimsOf(after.access_token).exp > Date.now() / 1000 || 'still expired';
  });
  if (!client) {
    fail('the remaining checks of the authorization-code client', 'no connection');
  } else {
    await check('tools/list through the authorized session (every page)', async () => {
      const names = [];
      let cursor;
      do {
        const page = await client.listTools(cursor ? { cursor } : {});
        names.push(...page.tools.map((t) => t.name));
        cursor = page.nextCursor;
      } while (cursor);
      return (names.includes('test_simple_text') && names.includes('test_scoped_write')) || names.join(',');
    });
    await check('tools/call test_simple_text: the exact text', async () => {
      const r = await client.callTool({ name: 'test_simple_text', arguments: {} });
      return same(r.content, [{ type: 'text', text: SIMPLE_TEXT }]) || JSON.stringify(r);
    });
    await check('[AU-26] [SEC-SC-2] a token without mcp:write: 403 insufficient_scope naming what the call needs', async () => {
      const call = { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'test_scoped_write', arguments: {} } };
      const r = await post(call, { token: dcr.tokens().access_token, session });
      if (r.status !== 403) return `status ${r.status}`;
      return (r.challenge.includes('error="insufficient_scope"') && r.challenge.includes('scope="mcp:basic mcp:write"')) ||
        r.challenge;
    });
    await check('[SEC-SH-2] the session id without a token: 401', async () => {
      const r = await post({ jsonrpc: '2.0', id: 10, method: 'ping' }, { session });
      return r.status === 401 || `status ${r.status}`;
    });
    await client.close();
  }

  await check('[AU-21] [SEC-TP-1] a token of the same issuer for another resource: 401 invalid_token', async () => {
    const basic = Buffer.from('switchboard-machine:switchboard-machine-secret').toString('base64');
    const res = await fetch(`${ISSUER}/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', resource: 'http://127.0.0.1:1/other', scope: 'mcp:basic' }),
    });
    const { access_token: other } = await res.json();
    if (claimsOf(other).aud !== 'http://127.0.0.1:1/other') return 'no token for the other resource';
    const r = await post(INITIALIZE, { token: other });
    return (r.status === 401 && r.challenge.includes('error="invalid_token"')) || `${r.status} ${r.challenge}`;
  });

  // A client ID metadata document instead of registration, without refresh tokens, so that the
  // SDK's step-up on 403 is a new authorization asking for the challenged scopes: with a refresh
  // token, this SDK answers the 403 by refreshing (which cannot add a scope), sends the call again
  // and gives up on the same 403.
  const cimd = new MemoryProvider({
    clientMetadataUrl: CIMD_NO_REFRESH,
    clientMetadata: {
      client_name: 'ts-sdk (client ID metadata document)',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    },
  });
  let cimdClient = null;
  await check('[AU-10] a client ID metadata document URL as client_id, no registration', async () => {
    ({ client: cimdClient } = await authorizeAndConnect(cimd));
    if (!same(cimd.saved.clients.map((c) => c.client_id), [CIMD_NO_REFRESH])) return JSON.stringify(cimd.saved.clients);
    return claimsOf(cimd.tokens().access_token).client_id === CIMD_NO_REFRESH || 'client_id claim';
  });
  if (cimdClient) {
    await check('[AU-26] [AU-7] step-up: 403 on test_scoped_write, a new authorization for mcp:basic mcp:write', async () => {
      const asked = cimd.authorizationUrls.length;
      try {
        await cimdClient.callTool({ name: 'test_scoped_write', arguments: {} });
        return 'the call passed without mcp:write';
      } catch (e) {
        if (!(e instanceof UnauthorizedError)) throw e;
      }
      if (cimd.authorizationUrls.length !== asked + 1) return 'no new authorization request';
      const scope = (cimd.authorizationUrls.at(-1).searchParams.get('scope') || '').split(' ');
      if (!scope.includes('mcp:write') || !scope.includes('mcp:basic')) return `scope ${scope}`;
      const code = await redirectBack(cimd);
      // The transport of this client finishes the authorization; the session stays the same.
      await cimdClient.transport.finishAuth(code);
      const r = await cimdClient.callTool({ name: 'test_scoped_write', arguments: {} });
      return same(r.content, [{ type: 'text', text: `Scoped write done for ${USER}` }]) || JSON.stringify(r);
    });
    await cimdClient.close();
  }

  // Client credentials: a secret, with a token that has no `sub` (the session is bound to the
  // client), then private_key_jwt.
  await check('[SEC-SH-5] client credentials (client_secret_basic), a token without sub: the client is the subject', async () => {
    const provider = new ClientCredentialsProvider({
      clientId: 'switchboard-machine-nosub',
      clientSecret: 'switchboard-machine-nosub-secret',
      expectedIssuer: ISSUER,
      scope: 'mcp:basic mcp:write',
    });
    const c = newClient();
    await c.connect(transportFor(provider));
    const claims = claimsOf(provider.tokens().access_token);
    if ('sub' in claims) return 'the token has a sub';
    const r = await c.callTool({ name: 'test_scoped_write', arguments: {} });
    await c.close();
    return same(r.content, [{ type: 'text', text: 'Scoped write done for switchboard-machine-nosub' }]) || JSON.stringify(r);
  });
  await check('client credentials with private_key_jwt (RFC 7523, ES256)', async () => {
    const provider = new PrivateKeyJwtProvider({
      clientId: 'switchboard-machine-jwt',
      privateKey: readFileSync(args['machine-key'], 'utf8'),
      algorithm: 'ES256',
      expectedIssuer: ISSUER,
      scope: 'mcp:basic',
    });
    const c = newClient();
    await c.connect(transportFor(provider));
    const r = await c.callTool({ name: 'test_simple_text', arguments: {} });
    await c.close();
    if (claimsOf(provider.tokens().access_token).client_id !== 'switchboard-machine-jwt') return 'client_id claim';
    return same(r.content, [{ type: 'text', text: SIMPLE_TEXT }]) || JSON.stringify(r);
  });
}

const timer = setTimeout(() => {
  fail('overall', `not done within ${OVERALL_TIMEOUT_MS} ms`);
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(1);
}, OVERALL_TIMEOUT_MS);
try {
  await main();
} catch (e) {
  fail('run', e?.stack || String(e));
}
clearTimeout(timer);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
