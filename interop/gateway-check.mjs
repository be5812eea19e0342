#!/usr/bin/env node
// The official TypeScript SDK client through `switchboard gateway`, against each upstream
// spoken to directly: every upstream's tools, prompts, resources and templates are listed by the
// gateway under its prefix (names `PREFIX_name`, URIs `scheme://PREFIX/rest`), exactly and
// nothing else; a no-argument tool called through the gateway answers what it answers directly;
// a resource read through its gateway URI has the direct contents (with the gateway's URI).
// Both upstreams speak 2025-11-25 and offer tasks, so each tool keeps its `execution` (its task
// support) through the gateway, task-only tools included.
//
//   node interop/gateway-check.mjs GATEWAY_URL PREFIX=DIRECT_URL [PREFIX=DIRECT_URL ...]
//       each DIRECT_URL a Streamable HTTP endpoint, or `stdio:` + a shell command
//
// With GATEWAY_BEARER set, the gateway (only) is sent `Authorization: Bearer $GATEWAY_BEARER`.
// GATEWAY_MODERN names (comma-separated) the prefixes whose upstream the gateway speaks to on
// 2026-07-28: their tools' `execution` is the gateway's (`optional`, or none), the rest compared.
//
// Prints one line per check (`PASS name` / `FAIL name: ...`), then `N passed, M failed`.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

let passed = 0;
let failed = 0;
const pass = (n) => { passed++; console.log(`PASS ${n}`); };
const fail = (n, why) => { failed++; console.log(`FAIL ${n}: ${why}`); };
const J = (v) => JSON.stringify(v);
const same = (a, b) => J(a) === J(b);

async function connect(target, bearer) {
  const client = new Client({ name: 'gateway-check', version: '1' }, { capabilities: {} });
  const requestInit = bearer ? { headers: { Authorization: `Bearer ${bearer}` } } : undefined;
  const transport = target.startsWith('stdio:')
    ? new StdioClientTransport({ command: 'sh', args: ['-c', `exec ${target.slice(6)}`], stderr: 'ignore' })
    : new StreamableHTTPClientTransport(new URL(target), { requestInit });
  await client.connect(transport);
  return client;
}

async function all(client, method, key) {
  const items = [];
  let cursor;
  for (let i = 0; i < 50; i++) {
    const page = await client[method](cursor === undefined ? {} : { cursor });
    items.push(...page[key]);
    cursor = page.nextCursor;
    if (cursor === undefined) return items;
  }
  throw new Error(`${method}: more than 50 pages`);
}

// The gateway's URI for an upstream's: the prefix after the scheme.
function gatewayUri(prefix, uri) {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):(\/\/)?(.*)$/s.exec(uri);
  return m ? `${m[1]}:${m[2] ?? ''}${prefix}/${m[3]}` : null;
}

async function checkUpstream(gw, lists, prefix, directTarget) {
  const direct = await connect(directTarget);
  try {
    const caps = direct.getServerCapabilities() ?? {};
    const kinds = [
      ['tools', 'listTools', 'tools', 'name', (n) => `${prefix}_${n}`],
      ['prompts', 'listPrompts', 'prompts', 'name', (n) => `${prefix}_${n}`],
      ['resources', 'listResources', 'resources', 'uri', (u) => gatewayUri(prefix, u)],
      ['resources', 'listResourceTemplates', 'resourceTemplates', 'uriTemplate', (u) => gatewayUri(prefix, u)],
    ];
    const directTools = caps.tools ? await all(direct, 'listTools', 'tools') : [];
    for (const [cap, method, key, field, map] of kinds) {
      if (!caps[cap]) continue;
      const want = (await all(direct, method, key)).map((x) => map(x[field])).sort();
      const got = lists[key].map((x) => x[field]).filter((v) => v.startsWith(`${prefix}_`) || v.includes(`://${prefix}/`) || v.startsWith(`${prefix}:`) ).sort();
      // Tools there must be; a server may declare prompts or resources and have none.
      if (same(got, want) && (want.length > 0 || key !== 'tools')) pass(`${prefix}: ${key} listed under the prefix (${want.length})`);
      else fail(`${prefix}: ${key} listed under the prefix`, `expected ${J(want)}, got ${J(got)}`);
    }
    // Definitions pass through unchanged but for the name.
    const modern = (process.env.GATEWAY_MODERN ?? '').split(',').includes(prefix);
    for (let t of directTools) {
      let g = lists.tools.find((x) => x.name === `${prefix}_${t.name}`);
      if (!g) continue;
      if (modern) {
        // A 2026-07-28 upstream decides per call which calls become tasks: the gateway serves
        // its tools as `optional` when it offers tasks, and the rest is compared.
        const { execution, ...rest } = g;
        if (execution !== undefined && !same(execution, { taskSupport: 'optional' })) {
          fail(`${prefix}: tool ${t.name} execution`, `gateway ${J(g)}`);
          return;
        }
        const { execution: _direct, ...plain } = t;
        [g, t] = [rest, plain];
      }
      if (!same({ ...g, name: t.name }, t)) {
        fail(`${prefix}: tool ${t.name} definition`, `direct ${J(t)}, gateway ${J(g)}`);
        return;
      }
    }
    if (directTools.length) pass(`${prefix}: every tool's definition is the upstream's but for its name`);
    // A tool without required arguments, called both ways.
    const simple = directTools.find((t) => !(t.inputSchema?.required?.length) && /simple_text|^echo$|get-tiny|get_tiny|printEnv|get-env/.test(t.name))
      ?? directTools.find((t) => t.name === 'echo') ?? directTools.find((t) => t.name === 'add');
    if (simple) {
      const args = { echo: { message: 'through the gateway' }, add: { a: 2, b: 3 } }[simple.name] ?? {};
      const a = await direct.callTool({ name: simple.name, arguments: args });
      const b = await gw.callTool({ name: `${prefix}_${simple.name}`, arguments: args });
      if (same(a.content, b.content) && !b.isError) pass(`${prefix}: tools/call ${prefix}_${simple.name} answers as ${simple.name} does directly`);
      else fail(`${prefix}: tools/call ${prefix}_${simple.name}`, `direct ${J(a)}, gateway ${J(b)}`);
    } else {
      fail(`${prefix}: tools/call`, `no argument-free tool (nor echo, nor add) found among ${J(directTools.map((t) => t.name))}`);
    }
    // A resource read both ways.
    if (caps.resources) {
      const resources = await all(direct, 'listResources', 'resources');
      const r = resources[0];
      if (r) {
        const a = await direct.readResource({ uri: r.uri });
        const uri = gatewayUri(prefix, r.uri);
        const b = await gw.readResource({ uri });
        const want = a.contents.map((c) => ({ ...c, uri: gatewayUri(prefix, c.uri) }));
        if (same(b.contents, want)) pass(`${prefix}: resources/read ${uri} has the upstream's contents`);
        else fail(`${prefix}: resources/read ${uri}`, `expected ${J(want)}, got ${J(b.contents)}`);
      }
    }
  } finally {
    await direct.close();
  }
}

async function main() {
  const [gatewayUrl, ...pairs] = process.argv.slice(2);
  if (!gatewayUrl || pairs.length === 0) {
    console.error('usage: gateway-check.mjs GATEWAY_URL PREFIX=DIRECT ...');
    process.exit(2);
  }
  const gw = await connect(gatewayUrl, process.env.GATEWAY_BEARER);
  try {
    const caps = gw.getServerCapabilities() ?? {};
    const lists = {
      tools: caps.tools ? await all(gw, 'listTools', 'tools') : [],
      prompts: caps.prompts ? await all(gw, 'listPrompts', 'prompts') : [],
      resources: caps.resources ? await all(gw, 'listResources', 'resources') : [],
      resourceTemplates: caps.resources ? await all(gw, 'listResourceTemplates', 'resourceTemplates') : [],
    };
    const prefixes = pairs.map((p) => p.slice(0, p.indexOf('=')));
    const stray = lists.tools.map((t) => t.name).filter((n) => !prefixes.some((p) => n.startsWith(`${p}_`)));
    if (stray.length === 0) pass('every tool of the gateway is under an upstream prefix');
    else fail('every tool of the gateway is under an upstream prefix', J(stray));
    for (const pair of pairs) {
      const i = pair.indexOf('=');
      try {
        await checkUpstream(gw, lists, pair.slice(0, i), pair.slice(i + 1));
      } catch (e) {
        fail(`${pair.slice(0, i)}: checks`, e?.stack ?? String(e));
      }
    }
  } finally {
    await gw.close();
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 && passed > 0 ? 0 : 1);
}

main().catch((e) => {
  console.log(`FAIL gateway-check: ${e?.stack ?? e}`);
  console.log(`${passed} passed, ${failed + 1} failed`);
  process.exit(1);
});
