#!/usr/bin/env node
// The official TypeScript SDK's client (`@modelcontextprotocol/sdk` 1.x, Streamable HTTP, with an
// `OAuthClientProvider`) against `switchboard serve --hostile SCENARIO --http ADDR`
// (interop/hostile-peers.sh). It does what a host does: connect, list the tools, and when the SDK
// asks for an authorization, approve it at once (a headless user agent following the redirects
// to the redirect URI), up to 8 times. What the SDK does is observed by the hostile server, not
// here; this prints one line, `outcome: ...`, and always exits 0 unless it cannot start.
//
//   node interop/hostile-client.mjs --url http://127.0.0.1:PORT/mcp

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
if (!args.url) {
  console.error('usage: hostile-client.mjs --url MCP_URL');
  process.exit(2);
}
const REDIRECT = 'http://127.0.0.1/callback';
const APPROVALS = 8;

// Follows the authorization URL's redirects down to REDIRECT; returns its code.
async function approve(authorizationUrl) {
  let url = new URL(authorizationUrl);
  for (let hop = 0; hop < 10; hop++) {
    const res = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(10000) });
    await res.arrayBuffer().catch(() => {});
    const location = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || !location) throw new Error(`authorization answered ${res.status}`);
    const next = new URL(location, url);
    if (`${next.origin}${next.pathname}` === REDIRECT) return next.searchParams.get('code');
    url = next;
  }
  throw new Error('too many redirects');
}

class Provider {
  constructor() {
    this.urls = [];
  }
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata() {
    return { client_name: 'hostile-test', redirect_uris: [REDIRECT], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  state() {
    return `s-${Math.random().toString(36).slice(2)}`;
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(c) {
    this.client = c;
  }
  tokens() {
    return this.t;
  }
  saveTokens(t) {
    this.t = t;
  }
  redirectToAuthorization(u) {
    this.urls.push(new URL(u));
  }
  saveCodeVerifier(v) {
    this.v = v;
  }
  codeVerifier() {
    return this.v;
  }
}

async function run() {
  const provider = new Provider();
  for (let round = 0; round <= APPROVALS; round++) {
    const transport = new StreamableHTTPClientTransport(new URL(args.url), { authProvider: provider });
    const client = new Client({ name: 'hostile-test-ts', version: '1.0.0' });
    try {
      await client.connect(transport);
      const tools = await client.listTools();
      return `listed ${tools.tools.length} tools`;
    } catch (e) {
      await transport.close().catch(() => {});
      if (!(e instanceof UnauthorizedError) || provider.urls.length === 0) throw e;
      const code = await approve(provider.urls.pop());
      const t = new StreamableHTTPClientTransport(new URL(args.url), { authProvider: provider });
      await t.finishAuth(code);
    }
  }
  return `stopped after ${APPROVALS} approvals`;
}

const timeout = new Promise((resolve) => setTimeout(() => resolve('timed out after 30 s'), 30000));
const outcome = await Promise.race([run().catch((e) => `error: ${String(e?.message ?? e).slice(0, 300)}`), timeout]);
console.log(`outcome: ${outcome}`);
process.exit(0);
