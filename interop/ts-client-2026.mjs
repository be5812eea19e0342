#!/usr/bin/env node
// Interop client across eras: the official TypeScript SDK v2 client (`@modelcontextprotocol/client`
// 2.4.0) in revision 2026-07-28 walks the everything server's modern contract
// (EVERYTHING-SERVER.md, the 2026 fixtures, and ../shared/spec/SPEC-2026-NOTES.md) against a
// Switchboard server.
//
//   node interop/ts-client-2026.mjs [--bin PATH] [--trace]            spawn `PATH serve --stdio`
//   node interop/ts-client-2026.mjs [--trace] -- CMD [ARGS...]        spawn any stdio server command
//   node interop/ts-client-2026.mjs --http http://127.0.0.1:PORT/mcp  Streamable HTTP
//
// Two connections: the first with `versionNegotiation: { mode: { pin: '2026-07-28' } }` walks the
// whole contract; the second with `mode: 'auto'` must pick the modern era from its
// `server/discover` probe, with no `initialize` on the wire. Both run through a wrapping transport
// (the tap), so the SDK probes in place on stdio rather than in its throw-away sibling process,
// and every frame is seen. Same checks, same names as py_client_2026.py.
//
// Prints one line per check (`PASS name` / `FAIL name: why`), then exactly `N passed, M failed`;
// exits 0 only when every check passed. Payloads are checked on the raw JSON-RPC frames (and over
// HTTP on the request headers, through the transport's `fetch` option); the SDK must accept each
// result too.

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const VERSION = '2026-07-28';
const PV_KEY = 'io.modelcontextprotocol/protocolVersion';
const CAPS_KEY = 'io.modelcontextprotocol/clientCapabilities';
const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';
const LOG_LEVEL_KEY = 'io.modelcontextprotocol/logLevel';
const SUB_ID_KEY = 'io.modelcontextprotocol/subscriptionId';
const REQUEST_TIMEOUT_MS = 15000;
const NOTIFY_WAIT_MS = 3000;
const QUIET_WAIT_MS = 400;
const OVERALL_TIMEOUT_MS = 180000;

// ---------------------------------------------------------------- checks and output

let passed = 0;
let failed = 0;
const J = (v) => (v === undefined ? 'undefined' : JSON.stringify(v));
const pass = (name) => {
  passed++;
  console.log(`PASS ${name}`);
};
const fail = (name, why) => {
  failed++;
  console.log(`FAIL ${name}: ${why}`);
};
// One check: PASS when `problems` is empty, else FAIL naming all of them.
const check = (name, problems) => (problems.length ? fail(name, problems.join('; ')) : pass(name));

// JSON equality (key order ignored).
function same(a, b) {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && same(a[k], b[k]));
}

// ---------------------------------------------------------------- the wire tap

// Wraps a transport: records every message in both directions (cloned before the SDK sees or
// mutates it), then passes it through unchanged. Over HTTP, the transport's `fetch` records each
// POST's headers too.
class TapTransport {
  constructor(inner, trace) {
    this.inner = inner;
    this.trace = trace;
    this.log = []; // {dir: 'in'|'out', msg}
    this.http = []; // request headers of every POST, lower-cased names
  }
  get sessionId() {
    return this.inner.sessionId;
  }
  setProtocolVersion(v) {
    this.inner.setProtocolVersion?.(v);
  }
  async start() {
    this.inner.onmessage = (msg, extra) => {
      this.record('in', msg);
      this.onmessage?.(msg, extra);
    };
    this.inner.onerror = (err) => this.onerror?.(err);
    this.inner.onclose = () => this.onclose?.();
    return this.inner.start();
  }
  async send(msg, options) {
    this.record('out', msg);
    return this.inner.send(msg, options);
  }
  async close() {
    return this.inner.close();
  }
  record(dir, msg) {
    const copy = JSON.parse(JSON.stringify(msg));
    this.log.push({ dir, msg: copy });
    if (this.trace) process.stderr.write(`${dir === 'out' ? '>>' : '<<'} ${JSON.stringify(copy)}\n`);
  }
  mark() {
    return this.log.length;
  }
  requests(from, method) {
    return this.log
      .slice(from)
      .filter((e) => e.dir === 'out' && e.msg.id !== undefined && e.msg.method !== undefined && (method === undefined || e.msg.method === method))
      .map((e) => e.msg);
  }
  reply(req) {
    const e = this.log.find((x) => x.dir === 'in' && x.msg.method === undefined && x.msg.id === req.id);
    return e ? e.msg : null;
  }
  inbound(from, pred) {
    return this.log.slice(from).filter((e) => e.dir === 'in' && pred(e.msg)).map((e) => e.msg);
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Runs one SDK call; returns [value, error].
async function sdk(fn) {
  try {
    return [await fn(), null];
  } catch (e) {
    return [null, e];
  }
}

async function waitFor(tap, from, pred, ms = NOTIFY_WAIT_MS) {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = tap.inbound(from, pred);
    if (found.length > 0 || Date.now() >= deadline) return found;
    await sleep(10);
  }
}

// The raw result answering `req`, or why there is none.
function resultOf(tap, req) {
  if (!req) return [null, 'request not sent'];
  const reply = tap.reply(req);
  if (!reply) return [null, `no reply to ${req.method} id ${J(req.id)}`];
  if (reply.error) return [null, `JSON-RPC error ${J(reply.error)}`];
  return [reply.result, null];
}

// [D26-90] [D26-91]: `ttlMs` an integer >= 0 and `cacheScope` public or private.
function cacheHints(res) {
  const problems = [];
  if (!Number.isInteger(res.ttlMs) || res.ttlMs < 0) problems.push(`ttlMs ${J(res.ttlMs)} is not an integer >= 0`);
  if (res.cacheScope !== 'public' && res.cacheScope !== 'private') problems.push(`cacheScope ${J(res.cacheScope)} is not public or private`);
  return problems;
}

// ---------------------------------------------------------------- the contract

const CONTRACT_TOOLS = [
  'test_simple_text', 'test_image_content', 'test_audio_content', 'test_embedded_resource',
  'test_resource_link', 'test_multiple_content_types', 'test_error_handling', 'test_tool_with_progress',
  'test_tool_with_logging', 'test_list_roots', 'test_structured_output', 'test_sampling', 'test_elicitation',
  'test_trigger_tool_change', 'test_input_required_result_list_roots', 'test_input_required_result_multi_round',
  'echo_region',
];
// The members of `Tool` in the 2026-07-28 schema (2025's `execution` is gone from it).
const TOOL_FIELDS_2026 = ['_meta', 'annotations', 'description', 'icons', 'inputSchema', 'name', 'outputSchema', 'title'];
const CONTRACT_PROMPTS = ['test_simple_prompt', 'test_prompt_with_arguments', 'test_prompt_with_embedded_resource', 'test_prompt_with_image'];
const CONTRACT_CAPABILITIES = {
  tools: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  logging: {},
  completions: {},
};
const ELICIT_SCHEMA = {
  type: 'object',
  properties: {
    username: { type: 'string', description: "User's response" },
    email: { type: 'string', description: "User's email address" },
  },
  required: ['username', 'email'],
};
const ELICIT_CONTENT = { username: 'ada', email: 'ada@example.com' };
const ROOTS = [
  { uri: 'file:///tmp/switchboard-interop/root-a', name: 'root-a' },
  { uri: 'file:///tmp/switchboard-interop/root-b', name: 'root-b' },
];
const LOG_MESSAGES = ['Tool execution started', 'Tool processing data', 'Tool execution completed'];
// What the elicitation handler answers, by the field the form asks for.
const FORM_ANSWERS = { name: 'Ada', city: 'Paris', context: 'interop' };

// The SDK's own elicitation, sampling and roots handlers; they record what they were asked.
function makeClient(opts, mode, seen) {
  let inner;
  const http = [];
  if (opts.http) {
    inner = new StreamableHTTPClientTransport(new URL(opts.http), {
      fetch: async (url, init) => {
        if ((init?.method ?? 'GET') === 'POST') {
          const h = {};
          new Headers(init?.headers).forEach((v, k) => (h[k.toLowerCase()] = v));
          http.push(h);
        }
        return fetch(url, init);
      },
    });
  } else {
    inner = new StdioClientTransport({ command: opts.command[0], args: opts.command.slice(1), stderr: 'pipe' });
    inner.stderr?.on('data', (chunk) => {
      seen.stderr += chunk.toString();
      if (opts.trace) process.stderr.write(`[server stderr] ${chunk}`);
    });
  }
  const tap = new TapTransport(inner, opts.trace);
  tap.http = http;
  const client = new Client(
    { name: 'switchboard-interop-ts-2026', version: '1.0.0' },
    {
      capabilities: { sampling: {}, elicitation: { form: {} }, roots: {} },
      versionNegotiation: { mode },
    },
  );
  client.setRequestHandler('sampling/createMessage', async (req) => {
    seen.sampling.push(req.params);
    const last = req.params.messages[req.params.messages.length - 1];
    return { model: 'interop-echo-model', role: 'assistant', content: { type: 'text', text: `echo(${last?.content?.text})` }, stopReason: 'endTurn' };
  });
  client.setRequestHandler('elicitation/create', async (req) => {
    seen.elicitation.push(req.params);
    const props = req.params.requestedSchema?.properties ?? {};
    if ('username' in props) return { action: 'accept', content: ELICIT_CONTENT };
    return { action: 'accept', content: Object.fromEntries(Object.keys(props).map((k) => [k, FORM_ANSWERS[k] ?? 'yes'])) };
  });
  client.setRequestHandler('roots/list', async () => {
    seen.roots++;
    return { roots: ROOTS };
  });
  client.setNotificationHandler('notifications/message', async (n) => {
    seen.logs.push(n.params);
  });
  client.setNotificationHandler('notifications/tools/list_changed', async () => {
    seen.toolsChanged++;
  });
  return { client, tap };
}

function newSeen(stderr = '') {
  return { sampling: [], elicitation: [], roots: 0, logs: [], toolsChanged: 0, stderr };
}

// ---------------------------------------------------------------- the walk

async function walk(opts) {
  const target = opts.http ?? opts.command.join(' ');
  console.log(`# ts-client-2026 (@modelcontextprotocol/client Client, revision ${VERSION}) -> ${target}`);
  let stderr = '';

  let seen = newSeen();
  let { client, tap } = makeClient(opts, { pin: VERSION }, seen);
  let connected = false;
  try {
    await client.connect(tap, { timeout: REQUEST_TIMEOUT_MS });
    connected = true;
  } catch (e) {
    fail('pin: connect', `${e}${seen.stderr ? `; server stderr: ${seen.stderr.slice(-2000)}` : ''}`);
  }
  if (connected) {
    await pinnedChecks(client, tap, seen, Boolean(opts.http));
    wireChecks('pin', tap);
  }
  await client.close().catch(() => {});
  stderr += seen.stderr;

  seen = newSeen();
  ({ client, tap } = makeClient(opts, 'auto', seen));
  connected = false;
  try {
    await client.connect(tap, { timeout: REQUEST_TIMEOUT_MS });
    connected = true;
  } catch (e) {
    fail('auto: connect', `${e}${seen.stderr ? `; server stderr: ${seen.stderr.slice(-2000)}` : ''}`);
  }
  if (connected) {
    await autoChecks(client, tap, seen);
    wireChecks('auto', tap);
  }
  await client.close().catch(() => {});
  stderr += seen.stderr;

  // The SDK's own transport, untapped, as an application would build it (on stdio, `auto` then
  // probes in a throw-away sibling process before it starts this one).
  const problems = [];
  let plainStderr = '';
  const plainTransport = opts.http
    ? new StreamableHTTPClientTransport(new URL(opts.http))
    : new StdioClientTransport({ command: opts.command[0], args: opts.command.slice(1), stderr: 'pipe' });
  plainTransport.stderr?.on('data', (chunk) => (plainStderr += chunk.toString()));
  const plain = new Client({ name: 'switchboard-interop-ts-2026', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  try {
    await plain.connect(plainTransport, { timeout: REQUEST_TIMEOUT_MS });
    if (plain.getNegotiatedProtocolVersion() !== VERSION) problems.push(`negotiated ${J(plain.getNegotiatedProtocolVersion())}`);
    const [res, err] = await sdk(() => plain.callTool({ name: 'test_simple_text', arguments: {} }, { timeout: REQUEST_TIMEOUT_MS }));
    if (callText(res) !== 'This is a simple text response for testing.') problems.push(`test_simple_text gave ${J(res)} (SDK: ${err})`);
  } catch (e) {
    problems.push(`connect: ${e}`);
  }
  await plain.close().catch(() => {});
  stderr += plainStderr;
  check('default transport: auto picks 2026-07-28 and calls a tool', problems);

  if (!opts.http && passed + failed > 1) check('server stderr: no panic', /panicked at/.test(stderr) ? [stderr.slice(-2000)] : []);
}

// [D26-8] the envelope on every request and [D26-19] `resultType` on every result, over the whole connection.
function wireChecks(label, tap) {
  let problems = tap.requests(0).length ? [] : ['no request went over the wire'];
  for (const { dir, msg } of tap.log) {
    if (dir !== 'out' || msg.method === undefined || msg.id === undefined) continue;
    const meta = msg.params?._meta ?? {};
    if (meta[PV_KEY] !== VERSION || typeof meta[CAPS_KEY] !== 'object' || meta[CAPS_KEY] === null) problems.push(`${msg.method} id ${J(msg.id)} _meta ${J(meta)}`);
  }
  check(`${label}: every request carries the ${VERSION} _meta envelope`, problems.slice(0, 3));
  problems = tap.log.some(({ dir, msg }) => dir === 'in' && msg.result !== undefined) ? [] : ['no result came back'];
  for (const { dir, msg } of tap.log) {
    if (dir === 'in' && msg.result !== undefined && !['complete', 'input_required'].includes(msg.result.resultType)) {
      problems.push(`id ${J(msg.id)} resultType ${J(msg.result.resultType)}`);
    }
  }
  check(`${label}: every result carries resultType`, problems.slice(0, 3));
}

async function pinnedChecks(client, tap, seen, http) {
  check('pin: era 2026-07-28', client.getNegotiatedProtocolVersion() === VERSION && client.getProtocolEra() === 'modern' ? [] : [`negotiated ${J(client.getNegotiatedProtocolVersion())}, era ${J(client.getProtocolEra())}`]);
  const inits = tap.requests(0, 'initialize');
  check('pin: no initialize on the wire', inits.length ? [`${inits.length} initialize requests sent`] : []);

  // ---- server/discover: the pinned connect probes it; read the frame and the SDK's view of it.
  const [res, why] = resultOf(tap, tap.requests(0, 'server/discover')[0]);
  const problems = why ? [why] : [];
  if (res) {
    if (res.resultType !== 'complete') problems.push(`resultType ${J(res.resultType)}`);
    if (!(res.supportedVersions ?? []).includes(VERSION)) problems.push(`supportedVersions ${J(res.supportedVersions)} lacks ${VERSION}`);
    problems.push(...cacheHints(res));
    const info = res._meta?.[SERVER_INFO_KEY] ?? {};
    if (typeof info.name !== 'string' || typeof info.version !== 'string') problems.push(`_meta serverInfo ${J(info)} lacks name/version`);
    const caps = client.getServerCapabilities() ?? {};
    for (const [k, v] of Object.entries(CONTRACT_CAPABILITIES)) {
      if (!caps[k] || Object.entries(v).some(([f, x]) => caps[k][f] !== x)) problems.push(`capabilities.${k} is ${J(caps[k])}, expected ${J(v)}`);
    }
    if (client.getServerVersion()?.name !== info.name) problems.push(`the SDK's server version is ${J(client.getServerVersion())}`);
  }
  check('discover: serverInfo, capabilities and cache hints', problems);

  await checkTools(client, tap);
  await checkMrtr(client, tap, seen);
  await checkResources(client, tap);
  await checkPrompts(client, tap);
  await checkListen(client, tap, seen);
  await checkLogging(client, tap, seen);
  if (http) await checkRegion(client, tap);
}

async function autoChecks(client, tap, seen) {
  check('auto: era 2026-07-28', client.getNegotiatedProtocolVersion() === VERSION && client.getProtocolEra() === 'modern' ? [] : [`negotiated ${J(client.getNegotiatedProtocolVersion())}, era ${J(client.getProtocolEra())}`]);
  const reqs = tap.requests(0);
  const problems = [];
  if (reqs[0]?.method !== 'server/discover') problems.push(`first request is ${J(reqs[0]?.method)}, not server/discover`);
  if (tap.requests(0, 'initialize').length) problems.push('an initialize request went over the wire');
  check('auto: server/discover probe, no initialize', problems);
  const info = client.getServerVersion();
  check('auto: serverInfo from discover', info?.name ? [] : [`server version ${J(info)}`]);

  // The SDK has no client-wide log level: the per-request `_meta` key is how a call opts in.
  await sdk(() => client.listTools(undefined, { cacheMode: 'bypass' }));
  const start = tap.mark();
  seen.logs.length = 0;
  const [, err] = await sdk(() => client.callTool({ name: 'test_tool_with_logging', arguments: {}, _meta: { [LOG_LEVEL_KEY]: 'debug' } }));
  const p = err ? [`SDK: ${err}`] : [];
  const req = tap.requests(start, 'tools/call')[0];
  if (req && req.params?._meta?.[LOG_LEVEL_KEY] !== 'debug') p.push(`request _meta ${J(req.params?._meta)} lacks logLevel debug`);
  const data = tap.inbound(start, (m) => m.method === 'notifications/message').map((m) => m.params?.data);
  if (!same(data, LOG_MESSAGES)) p.push(`notifications/message data ${J(data)}, expected ${J(LOG_MESSAGES)}`);
  if (!same(seen.logs.map((x) => x.data), LOG_MESSAGES)) p.push(`the notification handler got ${J(seen.logs)}`);
  check("auto: log level delivers test_tool_with_logging's messages", p);
}

const callText = (res) => (res?.content?.[0]?.type === 'text' ? res.content[0].text : null);

// Calls a tool through the SDK; returns every tools/call exchange it made (MRTR rounds included).
async function call(client, tap, name, args, meta) {
  const start = tap.mark();
  const params = { name, arguments: args };
  if (meta) params._meta = meta;
  const [value, err] = await sdk(() => client.callTool(params, { timeout: REQUEST_TIMEOUT_MS }));
  return { rounds: tap.requests(start, 'tools/call').map((r) => [r, tap.reply(r)]), value, err };
}

function finalResult({ rounds, err }) {
  if (!rounds.length) return [null, [`no tools/call request sent (SDK: ${err})`]];
  const reply = rounds[rounds.length - 1][1];
  if (!reply) return [null, [`no reply to the last tools/call (SDK: ${err})`]];
  if (reply.error) return [null, [`JSON-RPC error ${J(reply.error)}`]];
  if (err) return [reply.result, [`the SDK raised ${err} on ${J(reply.result)}`]];
  return [reply.result, []];
}

async function checkTools(client, tap) {
  // ---- tools/list: the SDK walks every page when called without a cursor.
  const start = tap.mark();
  const [, err] = await sdk(() => client.listTools(undefined, { cacheMode: 'bypass' }));
  let problems = err ? [`SDK: ${err}`] : [];
  const names = [];
  const stray = [];
  for (const [i, req] of tap.requests(start, 'tools/list').entries()) {
    const [res, why] = resultOf(tap, req);
    if (why) {
      problems.push(why);
      continue;
    }
    problems.push(...cacheHints(res).map((p) => `page ${i + 1}: ${p}`));
    names.push(...(res.tools ?? []).map((t) => t.name));
    for (const t of res.tools ?? []) stray.push(...Object.keys(t).filter((k) => !TOOL_FIELDS_2026.includes(k)).map((k) => `${t.name}.${k}`));
  }
  const missing = CONTRACT_TOOLS.filter((n) => !names.includes(n));
  if (missing.length) problems.push(`missing tools ${J(missing)} (listed ${J(names)})`);
  check('tools/list: contract tools on every page, with cache hints', problems);
  check('tools/list: only members of the 2026-07-28 Tool', stray.length ? [`not in the schema: ${J(stray)}`] : []);

  // ---- plain calls
  let r = await call(client, tap, 'test_simple_text', {});
  let [res, p] = finalResult(r);
  const wantText = [{ type: 'text', text: 'This is a simple text response for testing.' }];
  if (res && !p.length && (!same(res.content, wantText) || res.isError)) p.push(`result ${J(res)}, expected content ${J(wantText)}`);
  check('tools/call test_simple_text', p);

  r = await call(client, tap, 'test_structured_output', { a: 3, b: 4 });
  [res, p] = finalResult(r);
  if (res && !p.length) {
    const want = { sum: 7, product: 12 };
    if (!same(res.structuredContent, want)) p.push(`structuredContent ${J(res.structuredContent)}, expected ${J(want)}`);
    let parsed = null;
    try {
      parsed = JSON.parse(callText(res));
    } catch {}
    if (!same(parsed, want)) p.push(`content[0] text ${J(callText(res))} is not the JSON of structuredContent`);
    if (r.value && !same(r.value.structuredContent, want)) p.push(`the SDK's structuredContent is ${J(r.value.structuredContent)}`);
  }
  check('tools/call test_structured_output', p);

  r = await call(client, tap, 'test_image_content', {});
  [res, p] = finalResult(r);
  if (res && !p.length && !same(res.content, [{ type: 'image', data: PNG, mimeType: 'image/png' }])) p.push(`content ${J(res.content)}`);
  check('tools/call test_image_content', p);

  r = await call(client, tap, 'test_error_handling', {});
  [res, p] = finalResult(r);
  if (res && !p.length) {
    if (res.isError !== true) p.push(`isError ${J(res.isError)}, expected true`);
    if (callText(res) !== 'This tool intentionally returns an error for testing') p.push(`content ${J(res.content)}`);
    if (r.value && r.value.isError !== true) p.push("the SDK's isError is not true");
  }
  check('tools/call test_error_handling: an isError result, not a protocol error', p);

  // §13: an unknown tool is a JSON-RPC error -32602.
  r = await call(client, tap, 'no_such_tool_xyz', {});
  const reply = r.rounds.length ? r.rounds[r.rounds.length - 1][1] : null;
  if (!reply) fail('tools/call unknown tool: -32602', `no reply (SDK: ${r.err})`);
  else if (!reply.error) fail('tools/call unknown tool: -32602', `got a result ${J(reply.result)}`);
  else {
    p = reply.error.code === -32602 ? [] : [`error ${J(reply.error)}`];
    if (!r.err) p.push('the SDK did not raise');
    else if (r.err.code !== -32602) p.push(`the SDK raised ${r.err} (code ${J(r.err.code)}), not a protocol error with code -32602`);
    check('tools/call unknown tool: -32602', p);
  }
}

// The input-required rounds on the wire ([D26-42..45]): each round's `inputRequests` hold the
// expected embedded methods, and each retry is a new id carrying `inputResponses` for exactly
// those keys and the byte-exact `requestState`.
function mrtrWire(rounds, methodsPerRound) {
  if (rounds.length !== methodsPerRound.length + 1) return [`${rounds.length} requests, expected ${methodsPerRound.length + 1} (an input-required round each, then the final one)`];
  const problems = [];
  const ids = rounds.map(([q]) => J(q.id));
  if (new Set(ids).size !== ids.length) problems.push(`request ids repeat: ${ids.join(',')}`);
  methodsPerRound.forEach((methods, i) => {
    const [req, reply] = rounds[i];
    const res = reply?.result ?? {};
    if (res.resultType !== 'input_required') {
      problems.push(`round ${i + 1} answer is ${J(reply)}, not input_required`);
      return;
    }
    const ir = res.inputRequests ?? {};
    const got = Object.values(ir).map((v) => v.method).sort();
    if (!same(got, [...methods].sort())) problems.push(`round ${i + 1} inputRequests methods ${J(got)}, expected ${J([...methods].sort())}`);
    if ('ttlMs' in res || 'cacheScope' in res) problems.push(`round ${i + 1} input_required result carries cache hints [D26-92]`);
    const retry = rounds[i + 1][0].params;
    const keys = Object.keys(retry.inputResponses ?? {}).sort();
    if (!same(keys, Object.keys(ir).sort())) problems.push(`retry ${i + 1} inputResponses keys ${J(keys)}, expected ${J(Object.keys(ir).sort())}`);
    if ('requestState' in res && retry.requestState !== res.requestState) problems.push(`retry ${i + 1} requestState is not the byte-exact echo`);
    if (!('requestState' in res) && 'requestState' in retry) problems.push(`retry ${i + 1} sends a requestState the server never gave [D26-44]`);
    if (retry.name !== req.params.name || !same(retry.arguments, req.params.arguments)) problems.push(`retry ${i + 1} changed the original params`);
  });
  return problems;
}

async function checkMrtr(client, tap, seen) {
  seen.elicitation.length = 0;
  let r = await call(client, tap, 'test_elicitation', { message: 'Who are you?' });
  let [res, p] = finalResult(r);
  p.push(...mrtrWire(r.rounds, [['elicitation/create']]));
  if (seen.elicitation.length !== 1) p.push(`the elicitation handler ran ${seen.elicitation.length} times`);
  else if (seen.elicitation[0].message !== 'Who are you?' || !same(seen.elicitation[0].requestedSchema, ELICIT_SCHEMA)) p.push(`the handler was asked ${J(seen.elicitation[0])}`);
  const prefix = 'User response: action=accept, content=';
  let text = res ? callText(res) : null;
  let parsed = null;
  try {
    parsed = text?.startsWith(prefix) ? JSON.parse(text.slice(prefix.length)) : null;
  } catch {}
  if (res && !same(parsed, ELICIT_CONTENT)) p.push(`text ${J(text)}, expected ${J(prefix + J(ELICIT_CONTENT))}`);
  check('input-required test_elicitation: answered by the elicitation callback', p);

  seen.sampling.length = 0;
  r = await call(client, tap, 'test_sampling', { prompt: 'What is 2+2?' });
  [res, p] = finalResult(r);
  p.push(...mrtrWire(r.rounds, [['sampling/createMessage']]));
  const wantMsgs = [{ role: 'user', content: { type: 'text', text: 'What is 2+2?' } }];
  if (seen.sampling.length !== 1 || !same(seen.sampling[0].messages, wantMsgs) || seen.sampling[0].maxTokens !== 100) p.push(`the sampling handler was asked ${J(seen.sampling)}`);
  if (res && callText(res) !== 'LLM response: echo(What is 2+2?)') p.push(`text ${J(callText(res))}`);
  check('input-required test_sampling: answered by the sampling callback', p);

  seen.roots = 0;
  r = await call(client, tap, 'test_list_roots', {});
  [res, p] = finalResult(r);
  p.push(...mrtrWire(r.rounds, [['roots/list']]));
  if (seen.roots !== 1) p.push(`the roots handler ran ${seen.roots} times`);
  text = res ? callText(res) : null;
  parsed = null;
  try {
    parsed = text?.startsWith('Roots: ') ? JSON.parse(text.slice(7)) : null;
  } catch {}
  if (res && !same(parsed, ROOTS)) p.push(`text ${J(text)}, expected Roots: ${J(ROOTS)}`);
  check('input-required test_list_roots: answered by the roots callback', p);

  r = await call(client, tap, 'test_input_required_result_list_roots', {});
  [res, p] = finalResult(r);
  p.push(...mrtrWire(r.rounds, [['roots/list']]));
  const want = `Roots: ${ROOTS.map((x) => x.uri).join(', ')}`;
  if (res && callText(res) !== want) p.push(`text ${J(callText(res))}, expected ${J(want)}`);
  check('input-required test_input_required_result_list_roots', p);

  seen.elicitation.length = 0;
  r = await call(client, tap, 'test_input_required_result_multi_round', {});
  [res, p] = finalResult(r);
  p.push(...mrtrWire(r.rounds, [['elicitation/create'], ['elicitation/create']]));
  const asked = seen.elicitation.map((x) => x.message);
  if (!same(asked, ['Step 1: your name?', 'Step 2: your city?'])) p.push(`the elicitation handler was asked ${J(asked)}`);
  if (res && callText(res) !== 'Ada from Paris') p.push(`text ${J(callText(res))}, expected "Ada from Paris"`);
  check('input-required test_input_required_result_multi_round: two rounds', p);
}

async function checkResources(client, tap) {
  let start = tap.mark();
  const [, err] = await sdk(() => client.listResources(undefined, { cacheMode: 'bypass' }));
  let problems = err ? [`SDK: ${err}`] : [];
  const uris = [];
  const pages = tap.requests(start, 'resources/list');
  for (const req of pages) {
    const [res, why] = resultOf(tap, req);
    if (why) {
      problems.push(why);
      continue;
    }
    problems.push(...cacheHints(res));
    uris.push(...(res.resources ?? []).map((x) => x.uri));
  }
  const want = ['test://static-text', 'test://static-binary', 'test://watched-resource', ...Array.from({ length: 25 }, (_, i) => `test://paginated/${String(i + 1).padStart(2, '0')}`)];
  const missing = want.filter((u) => !uris.includes(u));
  if (missing.length) problems.push(`missing ${J(missing)}`);
  if (pages.length < 2) problems.push(`${uris.length} resources on ${pages.length} page(s); the contract pages by 10`);
  check('resources/list: every page, with cache hints', [...new Set(problems)]);

  const read = async (uri) => {
    const s = tap.mark();
    const [, e] = await sdk(() => client.readResource({ uri }, { cacheMode: 'bypass', timeout: REQUEST_TIMEOUT_MS }));
    const req = tap.requests(s, 'resources/read')[0];
    return { reply: req ? tap.reply(req) : null, err: e };
  };

  let { reply, err: e } = await read('test://static-text');
  let res = reply?.result;
  problems = !res || e ? [`reply ${J(reply)} (SDK: ${e})`] : [];
  if (res) {
    problems.push(...cacheHints(res));
    const w = [{ uri: 'test://static-text', mimeType: 'text/plain', text: 'This is the content of the static text resource.' }];
    if (!same(res.contents, w)) problems.push(`contents ${J(res.contents)}, expected ${J(w)}`);
  }
  check('resources/read test://static-text', problems);

  ({ reply, err: e } = await read('test://template/42/data'));
  res = reply?.result;
  problems = !res || e ? [`reply ${J(reply)} (SDK: ${e})`] : [];
  if (res) {
    const c = res.contents?.[0] ?? {};
    let parsed = null;
    try {
      parsed = JSON.parse(c.text);
    } catch {}
    if (c.uri !== 'test://template/42/data' || c.mimeType !== 'application/json') problems.push(`contents[0] ${J(c)}`);
    else if (!same(parsed, { id: '42', templateTest: true, data: 'Data for ID: 42' })) problems.push(`text ${J(c.text)}`);
  }
  check('resources/read a template URI', problems);

  // [D26-98] an unknown resource is -32602, never -32002 and never an empty `contents`.
  ({ reply, err: e } = await read('test://no-such-resource'));
  if (!reply) fail('resources/read unknown URI: -32602', `no reply (SDK: ${e})`);
  else {
    problems = reply.error?.code === -32602 ? [] : [`reply ${J(reply)}`];
    if (!e) problems.push('the SDK did not raise');
    check('resources/read unknown URI: -32602', problems);
  }
}

async function checkPrompts(client, tap) {
  let start = tap.mark();
  let [, err] = await sdk(() => client.listPrompts(undefined, { cacheMode: 'bypass' }));
  let [res, why] = resultOf(tap, tap.requests(start, 'prompts/list')[0]);
  let problems = why || err ? [why ?? `SDK: ${err}`] : [];
  if (res) {
    problems.push(...cacheHints(res));
    const names = (res.prompts ?? []).map((x) => x.name);
    const missing = CONTRACT_PROMPTS.filter((n) => !names.includes(n));
    if (missing.length) problems.push(`missing ${J(missing)} (listed ${J(names)})`);
  }
  check('prompts/list', problems);

  start = tap.mark();
  [, err] = await sdk(() => client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'x', arg2: 'y' } }));
  [res, why] = resultOf(tap, tap.requests(start, 'prompts/get')[0]);
  problems = why || err ? [why ?? `SDK: ${err}`] : [];
  const want = [{ role: 'user', content: { type: 'text', text: "Prompt with arguments: arg1='x', arg2='y'" } }];
  if (res && !same(res.messages, want)) problems.push(`messages ${J(res.messages)}, expected ${J(want)}`);
  check('prompts/get test_prompt_with_arguments', problems);

  // An input-required prompts/get, answered by the elicitation handler.
  start = tap.mark();
  [, err] = await sdk(() => client.getPrompt({ name: 'test_input_required_result_prompt', arguments: {} }));
  const rounds = tap.requests(start, 'prompts/get').map((q) => [q, tap.reply(q)]);
  problems = err ? [`SDK: ${err}`] : [];
  problems.push(...mrtrWire(rounds, [['elicitation/create']]));
  res = rounds.length ? rounds[rounds.length - 1][1]?.result ?? {} : {};
  const wantP = [{ role: 'user', content: { type: 'text', text: 'Context: interop' } }];
  if (!same(res.messages, wantP)) problems.push(`messages ${J(res.messages)}, expected ${J(wantP)}`);
  check('input-required prompts/get test_input_required_result_prompt', problems);

  start = tap.mark();
  [, err] = await sdk(() => client.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'al' } }));
  [res, why] = resultOf(tap, tap.requests(start, 'completion/complete')[0]);
  problems = why || err ? [why ?? `SDK: ${err}`] : [];
  const wantC = { values: ['alpha', 'alpine'], total: 2, hasMore: false };
  if (res && !same(res.completion, wantC)) problems.push(`completion ${J(res.completion)}, expected ${J(wantC)}`);
  check('completion/complete arg1 "al"', problems);
}

async function checkListen(client, tap, seen) {
  const start = tap.mark();
  let problems = [];
  const [sub, err] = await sdk(() => client.listen({ toolsListChanged: true }, { timeout: REQUEST_TIMEOUT_MS }));
  const req = tap.requests(start, 'subscriptions/listen')[0];
  if (err) problems.push(`listen: ${err}`);
  else {
    if (sub.honoredFilter?.toolsListChanged !== true) problems.push(`honored filter ${J(sub.honoredFilter)} lacks toolsListChanged`);
    const acks = tap.inbound(start, (m) => m.method === 'notifications/subscriptions/acknowledged');
    if (!req || !acks.length) problems.push('no listen request or no acknowledgement on the wire');
    else if (acks[0].params?._meta?.[SUB_ID_KEY] !== req.id) problems.push(`the acknowledgement's subscriptionId is not ${J(req.id)}: ${J(acks[0])}`);
  }
  check('subscriptions/listen: acknowledged with the tools filter', problems);

  problems = [];
  if (sub) {
    const mark = tap.mark();
    seen.toolsChanged = 0;
    const r = await call(client, tap, 'test_trigger_tool_change', {});
    if (r.err) problems.push(`test_trigger_tool_change: ${r.err}`);
    const found = await waitFor(tap, mark, (m) => m.method === 'notifications/tools/list_changed');
    if (!found.length) problems.push('no notifications/tools/list_changed on the wire');
    else if (found[0].params?._meta?.[SUB_ID_KEY] !== req?.id) problems.push(`list_changed lacks subscriptionId ${J(req?.id)}: ${J(found[0])}`);
    const deadline = Date.now() + NOTIFY_WAIT_MS;
    while (seen.toolsChanged === 0 && Date.now() < deadline) await sleep(10);
    if (seen.toolsChanged === 0) problems.push('the notifications/tools/list_changed handler did not run');
    const others = tap.inbound(mark, (m) => ['notifications/prompts/list_changed', 'notifications/resources/list_changed'].includes(m.method));
    if (others.length) problems.push(`notifications the filter did not ask for [D26-69]: ${J(others)}`);
    await sub.close().catch(() => {});
  } else problems.push('no subscription');
  check('subscriptions/listen: tools list_changed after test_trigger_tool_change', problems);
  // Put the list back as it was.
  await call(client, tap, 'test_trigger_tool_change', {});
}

async function checkLogging(client, tap, seen) {
  // [D26-84] no logLevel in _meta: no notifications/message.
  let start = tap.mark();
  let r = await call(client, tap, 'test_tool_with_logging', {});
  let [res, p] = finalResult(r);
  await sleep(QUIET_WAIT_MS);
  let msgs = tap.inbound(start, (m) => m.method === 'notifications/message');
  if (msgs.length) p.push(`${msgs.length} notifications/message without a log level: ${J(msgs[0])}`);
  check('logging: no notifications/message without a log level', p);

  // A per-request level: the `_meta` key on the call's params (user keys merge over the envelope).
  seen.logs.length = 0;
  start = tap.mark();
  r = await call(client, tap, 'test_tool_with_logging', {}, { [LOG_LEVEL_KEY]: 'debug' });
  [res, p] = finalResult(r);
  const meta = r.rounds[0]?.[0].params?._meta ?? {};
  if (meta[LOG_LEVEL_KEY] !== 'debug' || meta[PV_KEY] !== VERSION) p.push(`request _meta ${J(meta)} lacks logLevel debug or the envelope`);
  msgs = tap.inbound(start, (m) => m.method === 'notifications/message');
  const got = msgs.map((m) => [m.params?.level, m.params?.data]);
  if (!same(got, LOG_MESSAGES.map((d) => ['info', d]))) p.push(`notifications/message ${J(got)}, expected three info messages ${J(LOG_MESSAGES)}`);
  if (res && callText(res) !== 'Tool with logging executed successfully') p.push(`text ${J(callText(res))}`);
  if (!same(seen.logs.map((x) => x.data), LOG_MESSAGES)) p.push(`the notification handler got ${J(seen.logs)}`);
  check("logging: a per-request log level delivers test_tool_with_logging's messages", p);

  // Only messages at or above the request's level: the tool logs at info, so warning gets none.
  start = tap.mark();
  r = await call(client, tap, 'test_tool_with_logging', {}, { [LOG_LEVEL_KEY]: 'warning' });
  [res, p] = finalResult(r);
  await sleep(QUIET_WAIT_MS);
  msgs = tap.inbound(start, (m) => m.method === 'notifications/message');
  if (msgs.length) p.push(`${msgs.length} notifications/message below the level warning: ${J(msgs[0])}`);
  check('logging: a per-request level filters lower levels', p);
}

// [D26-62] the `x-mcp-header` argument mirrored into `Mcp-Param-Region` (the SDK reads the
// annotation from its cached tools/list, which checkTools made).
async function checkRegion(client, tap) {
  const h0 = tap.http.length;
  const r = await call(client, tap, 'echo_region', { region: 'eu-west-1' });
  const [res, p] = finalResult(r);
  const posts = tap.http.slice(h0).filter((h) => h['mcp-method'] === 'tools/call');
  if (!posts.length) p.push('no tools/call POST seen');
  else {
    const h = posts[posts.length - 1];
    if (h['mcp-param-region'] !== 'eu-west-1') p.push(`Mcp-Param-Region is ${J(h['mcp-param-region'])}`);
    if (h['mcp-name'] !== 'echo_region' || h['mcp-protocol-version'] !== VERSION) p.push(`headers ${J(h)}`);
  }
  if (res && callText(res) !== 'Region: eu-west-1') p.push(`text ${J(callText(res))}`);
  check('http: echo_region with Mcp-Param-Region', p);
}

// ---------------------------------------------------------------- entry point

function parseArgs(argv) {
  const opts = { bin: process.env.SWITCHBOARD_BIN || path.join(REPO, 'target/debug/switchboard'), http: null, trace: false, command: null };
  const dd = argv.indexOf('--');
  if (dd >= 0) {
    opts.command = argv.slice(dd + 1);
    argv = argv.slice(0, dd);
  }
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--bin') opts.bin = argv[++i];
    else if (argv[i] === '--http') opts.http = argv[++i];
    else if (argv[i] === '--trace') opts.trace = true;
    else {
      console.error(`unknown argument ${argv[i]}`);
      process.exit(2);
    }
  }
  if (!opts.command && !opts.http) opts.command = [opts.bin, 'serve', '--stdio'];
  return opts;
}

function finish() {
  if (passed + failed === 0) fail('harness', 'no check ran');
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}

const watchdog = setTimeout(() => {
  fail('harness: overall time limit', `the walk did not finish within ${OVERALL_TIMEOUT_MS} ms`);
  finish();
}, OVERALL_TIMEOUT_MS);
watchdog.unref();

walk(parseArgs(process.argv.slice(2)))
  .catch((e) => fail('harness: uncaught error', String(e?.stack ?? e).replace(/\n/g, ' | ')))
  .finally(finish);
