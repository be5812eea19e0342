// A stub MCP resource server for the OAuth end-to-end run (until the real resource server
// validates tokens): publishes its protected-resource metadata naming ISSUER, answers 401 with a
// Bearer challenge without a token, and otherwise answers a minimal MCP server (initialize,
// tools/list with one tool, tools/call), recording every request's Authorization header to
// RECORD (one JSON line each). Tokens are not validated here, only recorded.
// Prints `listening on http://127.0.0.1:PORT/mcp`.
import { createServer } from 'node:http';
import { appendFileSync } from 'node:fs';

const issuer = process.env.ISSUER;
const record = process.env.RECORD;
if (!issuer || !record) throw new Error('ISSUER and RECORD must be set');

const server = createServer((req, res) => {
  const base = `http://127.0.0.1:${server.address().port}`;
  const prmUrl = `${base}/.well-known/oauth-protected-resource/mcp`;
  if (req.method === 'GET' && req.url === '/.well-known/oauth-protected-resource/mcp') {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ resource: `${base}/mcp`, authorization_servers: [issuer], scopes_supported: ['mcp:basic'] }));
    return;
  }
  let body = '';
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    const auth = req.headers.authorization || null;
    appendFileSync(record, `${JSON.stringify({ method: req.method, url: req.url, authorization: auth })}\n`);
    if (!auth || !auth.startsWith('Bearer ')) {
      res.statusCode = 401;
      res.setHeader('www-authenticate', `Bearer resource_metadata="${prmUrl}", scope="mcp:basic"`);
      res.end();
      return;
    }
    if (req.method !== 'POST') { res.statusCode = 405; res.end(); return; }
    const msg = JSON.parse(body || 'null');
    if (!msg || msg.id === undefined) { res.statusCode = 202; res.end(); return; }
    const results = {
      initialize: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'stub-rs', version: '1' } },
      'tools/list': { tools: [{ name: 'whoami', inputSchema: { type: 'object' } }] },
      'tools/call': { content: [{ type: 'text', text: 'authorized' }] },
      ping: {},
    };
    const result = results[msg.method];
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(result
      ? { jsonrpc: '2.0', id: msg.id, result }
      : { jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'Method not found' } }));
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening on http://127.0.0.1:${server.address().port}/mcp\n`));
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => server.close(() => process.exit(0)));
