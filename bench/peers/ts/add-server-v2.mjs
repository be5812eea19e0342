// The benchmark's `add` server on the official TypeScript SDK v2 (@modelcontextprotocol/server,
// the copy installed in interop/node_modules by scripts/install-peers.sh; run with Node 22). It
// serves the 2026-07-28 revision (and the 2025 era as the SDK's stateless fallback).
//
//   node add-server-v2.mjs --stdio
//   node add-server-v2.mjs --http 127.0.0.1:PORT
//
// The tool is the same as every other peer's: {a: number, b: number} -> one text block with the
// sum. Written as the SDK's documentation writes it: one factory that builds an McpServer, served
// by `serveStdio` (the opening request picks the era of the connection) or by `createMcpHandler`
// (a fresh instance per HTTP request; no sessions in 2026-07-28), with its default response mode
// (one JSON body unless the handler emits a notification first). The handler's web-standard face
// (`fetch`) is mounted on node:http (TCP_NODELAY on, long keep-alive) at /mcp on 127.0.0.1 by a
// few lines below that turn a Node request into a `Request` and a `Response` back (what
// `toNodeHandler` of @modelcontextprotocol/node does), so that no other package is needed.

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const MODULES = process.env.BENCH_TS_V2_MODULES ?? path.resolve(HERE, '../../../interop/node_modules');
const PKG = path.join(MODULES, '@modelcontextprotocol/server');
if (!fs.existsSync(path.join(PKG, 'package.json'))) {
  process.stderr.write(
    `add-server-v2.mjs: @modelcontextprotocol/server is not installed in ${MODULES}; run scripts/install-peers.sh\n`,
  );
  process.exit(3);
}
// The package's own exports map, resolved from its folder (the script lives outside it).
const load = (spec) => import(pathToFileURL(path.join(PKG, 'dist', spec)).href);
const { McpServer, createMcpHandler } = await load('index.mjs');
const { serveStdio } = await load('stdio.mjs');
// zod as the SDK itself resolves it (v4; a v3 copy may sit at the top of node_modules).
const { z } = await import(pathToFileURL(createRequire(path.join(PKG, 'package.json')).resolve('zod')).href);

function usage() {
  process.stderr.write('usage: add-server-v2.mjs --stdio | --http 127.0.0.1:PORT\n');
  process.exit(2);
}

const argv = process.argv.slice(2);
let stdio = false, addr = null;
for (let i = 0; i < argv.length; i++) {
  switch (argv[i]) {
    case '--stdio': stdio = true; break;
    case '--http': addr = argv[++i] ?? usage(); break;
    default: usage();
  }
}
if (stdio === (addr !== null)) usage();

function newServer() {
  const server = new McpServer({ name: 'bench-typescript-v2-add', version: '0.1.0' });
  server.registerTool(
    'add',
    { description: 'Add two numbers', inputSchema: z.object({ a: z.number(), b: z.number() }) },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
  );
  return server;
}

if (stdio) {
  serveStdio(newServer);
} else {
  const idx = addr.lastIndexOf(':');
  const host = addr.slice(0, idx);
  const port = Number(addr.slice(idx + 1));
  if (host !== '127.0.0.1') usage();

  const handler = createMcpHandler(newServer);
  const origin = `http://${addr}`;

  const toRequest = (req) => {
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      if (Array.isArray(v)) v.forEach((x) => headers.append(k, x));
      else if (v !== undefined) headers.set(k, v);
    }
    const init = { method: req.method, headers };
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      init.body = Readable.toWeb(req);
      init.duplex = 'half';
    }
    return new Request(new URL(req.url, origin), init);
  };

  const handle = async (req, res) => {
    if (new URL(req.url, origin).pathname !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    const response = await handler.fetch(toRequest(req));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (!response.body) {
      res.end();
      return;
    }
    for await (const chunk of response.body) res.write(chunk);
    res.end();
  };

  const httpServer = http.createServer({ noDelay: true, keepAliveTimeout: 600_000 }, (req, res) => {
    handle(req, res).catch((e) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(e));
    });
  });
  httpServer.keepAliveTimeout = 600_000;
  httpServer.headersTimeout = 0;
  httpServer.requestTimeout = 0;
  httpServer.listen(port, host, () => {
    process.stderr.write(`add-server-v2.mjs listening on http://${host}:${httpServer.address().port}/mcp\n`);
  });
}
