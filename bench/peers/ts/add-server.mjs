// The benchmark's `add` server on the official TypeScript SDK (@modelcontextprotocol/sdk, the
// copy installed in interop/node_modules by scripts/install-peers.sh; run with Node 22).
//
//   node add-server.mjs --stdio [--tools N] [--resources N]
//   node add-server.mjs --http 127.0.0.1:PORT [--stateless] [--json-response] [--tools N] [--resources N]
//
// The tools are the same as every other peer's: `add`, {a: number, b: number} -> one text block
// with the sum, and `blob`, {bytes: integer} -> one text block of that many `x`. --tools N
// registers N further tools `tool_{i}` adding two numbers, --resources N N text resources
// `bench://resource/{i}` (registerResource); the SDK lists them in one page. Streamable HTTP is served by node:http (TCP_NODELAY on, long keep-alive) at /mcp on
// 127.0.0.1 only, written as the SDK's documentation writes it: stateful by default (a transport
// and an McpServer per session, kept in a map by session id, removed on DELETE/close);
// --stateless creates a server and a transport per request (the SDK's stateless pattern: a
// stateless transport cannot be reused); --json-response sets enableJsonResponse.

import http from 'node:http';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const MODULES = path.resolve(HERE, '../../../interop/node_modules');
const load = (rel) => import(pathToFileURL(path.join(MODULES, rel)).href);

const { McpServer } = await load('@modelcontextprotocol/sdk/dist/esm/server/mcp.js');
const { StdioServerTransport } = await load('@modelcontextprotocol/sdk/dist/esm/server/stdio.js');
const { StreamableHTTPServerTransport } = await load('@modelcontextprotocol/sdk/dist/esm/server/streamableHttp.js');
const { isInitializeRequest } = await load('@modelcontextprotocol/sdk/dist/esm/types.js');
const { z } = await load('zod/index.js');

function usage() {
  process.stderr.write('usage: add-server.mjs (--stdio | --http 127.0.0.1:PORT [--stateless] [--json-response]) [--tools N] [--resources N]\n');
  process.exit(2);
}

const argv = process.argv.slice(2);
let stdio = false, addr = null, stateless = false, jsonResponse = false, tools = 0, resources = 0;
const count = (v) => { const n = Number(v); return Number.isInteger(n) && n >= 0 ? n : usage(); };
for (let i = 0; i < argv.length; i++) {
  switch (argv[i]) {
    case '--stdio': stdio = true; break;
    case '--http': addr = argv[++i] ?? usage(); break;
    case '--stateless': stateless = true; break;
    case '--json-response': jsonResponse = true; break;
    case '--tools': tools = count(argv[++i]); break;
    case '--resources': resources = count(argv[++i]); break;
    default: usage();
  }
}
if (stdio === (addr !== null)) usage();

const MAX_BLOB_BYTES = 16 << 20;

function newServer() {
  const server = new McpServer({ name: 'bench-typescript-add', version: '0.1.0' });
  server.registerTool(
    'add',
    { description: 'Add two numbers', inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
  );
  server.registerTool(
    'blob',
    { description: 'Return a text block of this many bytes', inputSchema: { bytes: z.number().int().min(0).max(MAX_BLOB_BYTES) } },
    async ({ bytes }) => ({ content: [{ type: 'text', text: 'x'.repeat(bytes) }] }),
  );
  for (let i = 0; i < tools; i++) {
    server.registerTool(
      `tool_${i}`,
      { description: `Benchmark tool ${i}: add two numbers`, inputSchema: { a: z.number(), b: z.number() } },
      async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
    );
  }
  for (let i = 0; i < resources; i++) {
    const uri = `bench://resource/${i}`;
    server.registerResource(
      `resource-${i}`,
      uri,
      { mimeType: 'text/plain' },
      async () => ({ contents: [{ uri, mimeType: 'text/plain', text: `resource ${i}` }] }),
    );
  }
  return server;
}

if (stdio) {
  await newServer().connect(new StdioServerTransport());
} else {
  const idx = addr.lastIndexOf(':');
  const host = addr.slice(0, idx);
  const port = Number(addr.slice(idx + 1));
  if (host !== '127.0.0.1') usage();

  const sessions = new Map(); // session id -> transport

  const readJson = (req) => new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      try { resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))); } catch (e) { reject(e); }
    });
    req.on('error', reject);
  });

  const fail = (res, status, message) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message } }));
  };

  const handle = async (req, res) => {
    if (new URL(req.url, 'http://x').pathname !== '/mcp') return fail(res, 404, 'Not found');
    if (stateless) {
      if (req.method !== 'POST') return fail(res, 405, 'Method not allowed');
      const server = newServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: jsonResponse });
      res.on('close', () => { transport.close(); server.close(); });
      await server.connect(transport);
      return transport.handleRequest(req, res, await readJson(req));
    }
    const sid = req.headers['mcp-session-id'];
    if (sid !== undefined) {
      const transport = sessions.get(sid);
      if (!transport) return fail(res, 404, 'Session not found');
      return transport.handleRequest(req, res);
    }
    if (req.method !== 'POST') return fail(res, 400, 'No session');
    const body = await readJson(req);
    if (!isInitializeRequest(body)) return fail(res, 400, 'No session');
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: jsonResponse,
      onsessioninitialized: (id) => { sessions.set(id, transport); },
    });
    transport.onclose = () => { if (transport.sessionId) sessions.delete(transport.sessionId); };
    await newServer().connect(transport);
    return transport.handleRequest(req, res, body);
  };

  const httpServer = http.createServer({ noDelay: true, keepAliveTimeout: 600_000 }, (req, res) => {
    handle(req, res).catch((e) => { if (!res.headersSent) fail(res, 500, String(e)); else res.end(); });
  });
  httpServer.keepAliveTimeout = 600_000;
  httpServer.headersTimeout = 0;
  httpServer.requestTimeout = 0;
  httpServer.listen(port, host, () => {
    process.stderr.write(`add-server.mjs listening on http://${host}:${httpServer.address().port}/mcp\n`);
  });
}
