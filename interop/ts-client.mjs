#!/usr/bin/env node
// Interop client: the official TypeScript SDK (`@modelcontextprotocol/sdk`) `Client` walks the whole
// EVERYTHING-SERVER contract (../shared/conformance/EVERYTHING-SERVER.md) against a server.
//
//   node interop/ts-client.mjs [--bin PATH] [--trace]           spawn `PATH serve --stdio`
//   node interop/ts-client.mjs [--trace] -- CMD [ARGS...]       spawn any stdio server command
//   node interop/ts-client.mjs --http http://127.0.0.1:PORT/mcp  Streamable HTTP (once `serve --http` lands)
//
// PATH defaults to $SWITCHBOARD_BIN, else <repo>/target/debug/switchboard.
// Prints one line per check (`PASS name` / `FAIL name: ...`), then exactly `N passed, M failed`;
// exits 0 only when every check passed (and at least one ran).
//
// Every payload is checked on the raw JSON-RPC frames the server sent (a tap on the transport sees
// each message before the SDK handles it); the SDK's own parsing must also accept each result.
// Contract fields are compared exactly (JSON deep equality); the only keys tolerated beyond them
// are optional fields the MCP schema defines for that object (listed per check below).

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  ResultSchema,
} from '@modelcontextprotocol/sdk/types.js';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..');

const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';
const PROTOCOL = '2025-11-25';
const REQUEST_TIMEOUT_MS = 15000;
const NOTIFY_WAIT_MS = 3000; // how long an expected notification may take to arrive
const QUIET_WAIT_MS = 400; // how long we watch for a notification that must NOT arrive
const OVERALL_TIMEOUT_MS = 180000;

// Optional keys the MCP 2025-11-25 schema allows beyond the contract's fields.
const OPT_CALL_RESULT = ['_meta'];
const OPT_RESOURCE = ['title', 'description', 'annotations', 'size', 'icons', '_meta'];
const OPT_TEMPLATE = ['title', 'description', 'annotations', 'icons', '_meta'];
const OPT_GET_PROMPT = ['description', '_meta'];
const OPT_REQ_PARAMS = ['_meta'];

// ---------------------------------------------------------------- arguments

function parseArgs(argv) {
  const opts = { bin: process.env.SWITCHBOARD_BIN || path.join(REPO, 'target/debug/switchboard'), http: null, command: null, trace: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--bin') opts.bin = argv[++i];
    else if (a === '--http') opts.http = argv[++i];
    else if (a === '--trace') opts.trace = true;
    else if (a === '--') { opts.command = argv.slice(i + 1); break; }
    else if (a === '-h' || a === '--help') {
      console.log('usage: ts-client.mjs [--bin PATH | --http URL | -- CMD ARGS...] [--trace]');
      process.exit(0);
    } else {
      console.error(`ts-client: unknown argument ${a}`);
      process.exit(2);
    }
  }
  if (!opts.command && !opts.http) opts.command = [opts.bin, 'serve', '--stdio'];
  return opts;
}

// ---------------------------------------------------------------- checks and output

let passed = 0;
let failed = 0;
const skipped = [];

function pass(name) {
  passed++;
  console.log(`PASS ${name}`);
}
function fail(name, why) {
  failed++;
  console.log(`FAIL ${name}: ${why}`);
}
function skip(name, why) {
  skipped.push(name);
  console.log(`SKIP ${name}: ${why}`);
}

const J = (v) => (v === undefined ? 'undefined' : JSON.stringify(v));

function deepEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return deepEqual(ka, kb) && ka.every((k) => deepEqual(a[k], b[k]));
}

// `actual` must hold exactly `expected`'s keys with equal values, plus nothing but `optional` keys.
function contractDiff(actual, expected, optional = []) {
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return `expected an object ${J(expected)}, got ${J(actual)}`;
  const problems = [];
  for (const k of Object.keys(expected)) {
    if (!(k in actual)) problems.push(`missing "${k}"`);
    else if (!deepEqual(actual[k], expected[k])) problems.push(`"${k}" differs`);
  }
  for (const k of Object.keys(actual)) {
    if (!(k in expected) && !optional.includes(k)) problems.push(`unexpected key "${k}"`);
  }
  return problems.length ? `${problems.join(', ')}; expected ${J(expected)}, actual ${J(actual)}` : null;
}

function expectEqual(name, actual, expected) {
  if (deepEqual(actual, expected)) pass(name);
  else fail(name, `expected ${J(expected)}, actual ${J(actual)}`);
}
function expectContract(name, actual, expected, optional) {
  const d = contractDiff(actual, expected, optional);
  if (d) fail(name, d);
  else pass(name);
}
function expectTrue(name, cond, why) {
  if (cond) pass(name);
  else fail(name, why);
}

// Parses the JSON that follows `prefix` in `text`; returns {ok, value, why}.
function jsonAfter(text, prefix) {
  if (typeof text !== 'string' || !text.startsWith(prefix)) return { ok: false, why: `text does not start with ${J(prefix)}: ${J(text)}` };
  try {
    return { ok: true, value: JSON.parse(text.slice(prefix.length)) };
  } catch (e) {
    return { ok: false, why: `text after ${J(prefix)} is not JSON: ${J(text)}` };
  }
}

// ---------------------------------------------------------------- the wire tap

// Wraps a transport: records every message in both directions (cloned before the SDK sees or
// mutates it), then passes it through unchanged.
//
// Inbound frames are handed to the SDK in arrival order, one per event-loop turn, as if each had
// arrived in its own read. The SDK (1.32.2) runs notification handlers in a microtask but handles a
// response synchronously, and deletes a request's progress handler when its response arrives: when
// a progress notification and the response land in the same stdout chunk, the SDK drops that
// notification ("unknown token"). The frames and their order are checked on the wire; this keeps
// the SDK-side checks from depending on how the pipe happened to coalesce writes.
const CLOSED = Symbol('closed');
class TapTransport {
  constructor(inner, trace) {
    this.inner = inner;
    this.trace = trace;
    this.log = []; // {dir: 'in'|'out', msg}
    this.errors = [];
    this.inbox = [];
    this.draining = false;
  }
  deliver(msg, extra) {
    this.inbox.push([msg, extra]);
    if (this.draining) return;
    this.draining = true;
    const next = () => {
      const item = this.inbox.shift();
      if (item === undefined) {
        this.draining = false;
        return;
      }
      if (item[0] === CLOSED) this.onclose?.();
      else this.onmessage?.(item[0], item[1]);
      setImmediate(next);
    };
    setImmediate(next);
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
      this.deliver(msg, extra);
    };
    this.inner.onerror = (err) => {
      this.errors.push(String(err?.stack || err));
      this.onerror?.(err);
    };
    this.inner.onclose = () => this.deliver(CLOSED); // after every frame that arrived before it
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
  // The single outbound request with `method` (and `params.name`/`params.uri` when given) sent at
  // or after `from`, and the server's reply to it.
  exchange(from, method, match = () => true) {
    const reqs = this.log.slice(from).filter((e) => e.dir === 'out' && e.msg.method === method && e.msg.id !== undefined && match(e.msg));
    if (reqs.length !== 1) return { request: null, reply: null, why: `found ${reqs.length} outbound ${method} requests` };
    const request = reqs[0].msg;
    const replyEntry = this.log.find((e) => e.dir === 'in' && e.msg.method === undefined && e.msg.id === request.id);
    return { request, reply: replyEntry ? replyEntry.msg : null, why: replyEntry ? null : `no reply to ${method} id ${request.id}` };
  }
  inbound(from, pred) {
    return this.log.slice(from).filter((e) => e.dir === 'in' && pred(e.msg)).map((e) => e.msg);
  }
  indexOf(pred, from = 0) {
    for (let i = from; i < this.log.length; i++) if (pred(this.log[i])) return i;
    return -1;
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(tap, from, pred, ms = NOTIFY_WAIT_MS) {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = tap.inbound(from, pred);
    if (found.length > 0) return found;
    if (Date.now() >= deadline) return [];
    await sleep(10);
  }
}

// ---------------------------------------------------------------- main walk

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const watchdog = setTimeout(() => {
    fail('harness: overall time limit', `the walk did not finish within ${OVERALL_TIMEOUT_MS} ms`);
    finish(1);
  }, OVERALL_TIMEOUT_MS);
  watchdog.unref();

  let inner;
  let stderrText = '';
  if (opts.http) {
    inner = new StreamableHTTPClientTransport(new URL(opts.http));
  } else {
    inner = new StdioClientTransport({ command: opts.command[0], args: opts.command.slice(1), stderr: 'pipe' });
    inner.stderr?.on('data', (chunk) => {
      stderrText += chunk.toString();
      if (opts.trace) process.stderr.write(`[server stderr] ${chunk}`);
    });
  }
  const tap = new TapTransport(inner, opts.trace);

  // Handler state: what the next sampling / elicitation request is answered with, and what came in.
  const seen = { sampling: [], elicitation: [], roots: 0 };
  let elicitationReply = { action: 'cancel' };
  const ROOTS = [
    { uri: 'file:///tmp/switchboard-interop/root-a', name: 'root-a' },
    { uri: 'file:///tmp/switchboard-interop/root-b', name: 'root-b' },
  ];

  const client = new Client(
    { name: 'switchboard-interop-ts', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } },
  );
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    seen.sampling.push(req.params);
    const last = req.params.messages[req.params.messages.length - 1];
    return { model: 'interop-echo-model', role: 'assistant', content: { type: 'text', text: `echo(${last?.content?.text})` }, stopReason: 'endTurn' };
  });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    seen.elicitation.push(req.params);
    return elicitationReply;
  });
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    seen.roots++;
    return { roots: ROOTS };
  });
  // Notifications are read off the tap; register no-op handlers so the SDK does not complain.
  client.fallbackNotificationHandler = async () => {};

  const target = opts.http ? opts.http : opts.command.join(' ');
  console.log(`# ts-client (@modelcontextprotocol/sdk Client) -> ${target}`);

  // ---- 1. lifecycle
  try {
    await client.connect(tap, { timeout: REQUEST_TIMEOUT_MS });
  } catch (e) {
    fail('initialize: connect', `${e}${stderrText ? `; server stderr: ${stderrText.slice(-2000)}` : ''}`);
    return finish(1, client);
  }
  const init = tap.exchange(0, 'initialize');
  expectEqual('initialize: client offered 2025-11-25', init.request?.params?.protocolVersion, PROTOCOL);
  const initResult = init.reply?.result;
  expectEqual('initialize: protocolVersion', initResult?.protocolVersion, PROTOCOL);
  expectTrue(
    'initialize: serverInfo.name and version',
    typeof initResult?.serverInfo?.name === 'string' && initResult.serverInfo.name.length > 0 && typeof initResult?.serverInfo?.version === 'string' && initResult.serverInfo.version.length > 0,
    `serverInfo = ${J(initResult?.serverInfo)}`,
  );
  const caps = initResult?.capabilities ?? {};
  expectEqual('initialize: capabilities.tools', caps.tools, { listChanged: true });
  expectEqual('initialize: capabilities.resources', caps.resources, { subscribe: true, listChanged: true });
  expectEqual('initialize: capabilities.prompts', caps.prompts, { listChanged: true });
  expectEqual('initialize: capabilities.logging', caps.logging, {});
  expectEqual('initialize: capabilities.completions', caps.completions, {});
  expectTrue('initialize: notifications/initialized sent', tap.log.some((e) => e.dir === 'out' && e.msg.method === 'notifications/initialized'), 'the SDK sent no initialized notification');

  const raw = new RawCaller(client, tap);

  {
    const r = await raw.call('ping', undefined);
    expectRaw('ping -> {}', r, (res) => expectEqual('ping -> {}', res, {}));
  }
  {
    const r = await raw.call('logging/setLevel', { level: 'debug' });
    expectRaw('logging/setLevel debug -> {}', r, (res) => expectEqual('logging/setLevel debug -> {}', res, {}));
  }
  {
    const r = await raw.call('switchboard/no_such_method', {});
    expectError('unknown method -> -32601', r, [-32601]);
  }

  // ---- 2. tools
  const toolsList = await listAll(raw, 'tools/list', 'tools');
  const tools = new Map((toolsList.items ?? []).map((t) => [t.name, t]));
  await checkToolsList(toolsList, tools);

  const simple = [
    ['test_simple_text', [{ type: 'text', text: 'This is a simple text response for testing.' }]],
    ['test_image_content', [{ type: 'image', data: PNG, mimeType: 'image/png' }]],
    ['test_audio_content', [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }]],
    ['test_embedded_resource', [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } }]],
    ['test_resource_link', [{ type: 'text', text: 'See linked resource.' }, { type: 'resource_link', uri: 'test://static-text', name: 'static-text', mimeType: 'text/plain' }]],
    [
      'test_multiple_content_types',
      [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: PNG, mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: '{"test":"data","value":123}' } },
      ],
    ],
  ];
  for (const [name, content] of simple) {
    const r = await raw.tool(name, {});
    expectRaw(`tools/call ${name}`, r, (res) => expectContract(`tools/call ${name}`, res, { content }, OPT_CALL_RESULT));
  }
  for (const [name, content] of simple) {
    const label = `tools/call ${name} (arguments omitted)`;
    const r = await raw.tool(name, undefined);
    if (r.request && 'arguments' in (r.request.params ?? {})) fail(label, `the request carried arguments: ${J(r.request.params)}`);
    else expectRaw(label, r, (res) => expectContract(label, res, { content }, OPT_CALL_RESULT));
  }
  {
    const r = await raw.tool('test_structured_output', { a: 6, b: 7 });
    expectRaw('tools/call test_structured_output {a:6,b:7}', r, (res) => {
      const text = res?.content?.[0]?.text;
      let parsed;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      const sc = { sum: 13, product: 42 };
      if (!deepEqual(res?.structuredContent, sc)) fail('tools/call test_structured_output: structuredContent', `expected ${J(sc)}, actual ${J(res?.structuredContent)}`);
      else if (!(Array.isArray(res?.content) && res.content.length === 1 && res.content[0].type === 'text' && Object.keys(res.content[0]).length === 2))
        fail('tools/call test_structured_output: content', `expected one text block, actual ${J(res?.content)}`);
      else if (!deepEqual(parsed, sc)) fail('tools/call test_structured_output: content', `expected text = JSON of ${J(sc)}, actual ${J(text)}`);
      else expectContract('tools/call test_structured_output {a:6,b:7}', res, { content: res.content, structuredContent: sc }, OPT_CALL_RESULT);
    });
  }
  {
    const r = await raw.tool('test_error_handling', {});
    expectRaw('tools/call test_error_handling -> isError result', r, (res) => {
      const expected = { type: 'text', text: 'This tool intentionally returns an error for testing' };
      if (res?.isError !== true) fail('tools/call test_error_handling -> isError result', `expected isError: true, actual ${J(res)}`);
      else if (!deepEqual(res?.content?.[0], expected)) fail('tools/call test_error_handling -> isError result', `content[0]: expected ${J(expected)}, actual ${J(res?.content?.[0])}`);
      else expectContract('tools/call test_error_handling -> isError result', res, { content: res.content, isError: true }, OPT_CALL_RESULT);
    });
  }
  await checkProgress(raw, tap);
  await checkLogging(raw, tap);
  await checkSampling(raw, tap, seen);
  await checkElicitation(raw, tap, seen, (r) => (elicitationReply = r), tools);
  await checkRoots(raw, tap, seen, ROOTS);
  await checkDynamicTools(raw, tap);
  {
    const r = await raw.tool('no_such_tool', {});
    if (r.reply?.error) expectError('tools/call unknown tool -> -32602 or isError', r, [-32602]);
    else expectRaw('tools/call unknown tool -> -32602 or isError', r, (res) => expectTrue('tools/call unknown tool -> -32602 or isError', res?.isError === true, `expected -32602 or isError: true, actual ${J(res)}`));
  }

  // ---- 3. resources
  await checkResources(raw, tap);

  // ---- 4. prompts
  await checkPrompts(raw);

  // ---- 5. completion
  await checkCompletion(raw);

  // ---- transport health
  expectTrue('transport: no errors (every frame parsed)', tap.errors.length === 0, tap.errors.join(' | '));
  expectTrue('transport: every inbound frame is JSON-RPC 2.0', tap.log.every((e) => e.dir !== 'in' || e.msg.jsonrpc === '2.0'), 'a frame without jsonrpc 2.0');
  const stray = tap.log.filter((e) => e.dir === 'in' && e.msg.method === undefined && !tap.log.some((o) => o.dir === 'out' && o.msg.id === e.msg.id && o.msg.method));
  expectTrue('transport: every response answers a request we sent', stray.length === 0, `stray responses ${J(stray.map((e) => e.msg))}`);
  if (!opts.http) expectTrue('server stderr: no panic', !/panicked at/.test(stderrText), stderrText.slice(-2000));
  return finish(0, client);
}

// Sends requests through the SDK's own typed methods (so its parsing, capability checks and
// tool output-schema validation all apply) and pairs each with its raw frames.
class RawCaller {
  constructor(client, tap) {
    this.client = client;
    this.tap = tap;
  }
  sdk(method, params, options) {
    const c = this.client;
    switch (method) {
      case 'ping':
        return c.ping(options);
      case 'logging/setLevel':
        return c.setLoggingLevel(params.level, options);
      case 'tools/list':
        return c.listTools(params, options);
      case 'tools/call':
        return c.callTool(params, CallToolResultSchema, options);
      case 'resources/list':
        return c.listResources(params, options);
      case 'resources/templates/list':
        return c.listResourceTemplates(params, options);
      case 'resources/read':
        return c.readResource(params, options);
      case 'resources/subscribe':
        return c.subscribeResource(params, options);
      case 'resources/unsubscribe':
        return c.unsubscribeResource(params, options);
      case 'prompts/list':
        return c.listPrompts(params, options);
      case 'prompts/get':
        return c.getPrompt(params, options);
      case 'completion/complete':
        return c.complete(params, options);
      default: // a method the SDK has no helper for (the unknown-method check)
        return c.request(params === undefined ? { method } : { method, params }, ResultSchema, options);
    }
  }
  // -> {request, reply, sdkError, why}
  async call(method, params, options = {}) {
    const from = this.tap.mark();
    let sdkError = null;
    try {
      await this.sdk(method, params, { timeout: REQUEST_TIMEOUT_MS, ...options });
    } catch (e) {
      sdkError = e;
    }
    const ex = this.tap.exchange(from, method);
    return { ...ex, sdkError };
  }
  async tool(name, args, options = {}) {
    const params = args === undefined ? { name } : { name, arguments: args };
    return this.call('tools/call', params, options);
  }
}

// Runs `check(result)` when the exchange produced a result the SDK also accepted.
function expectRaw(name, r, check) {
  if (!r.request) return fail(name, `${r.why ?? 'request not sent'}${r.sdkError ? ` (SDK: ${r.sdkError.message})` : ''}`);
  if (!r.reply) return fail(name, `${r.why}${r.sdkError ? ` (SDK: ${r.sdkError.message})` : ''}`);
  if (r.reply.error) return fail(name, `expected a result, got JSON-RPC error ${J(r.reply.error)}`);
  if (r.sdkError) return fail(name, `the SDK rejected the result ${J(r.reply.result)}: ${r.sdkError.message}`);
  return check(r.reply.result);
}
function expectError(name, r, codes) {
  if (!r.request) return fail(name, `${r.why ?? 'request not sent'}${r.sdkError ? ` (SDK: ${r.sdkError.message})` : ''}`);
  if (!r.reply) return fail(name, `${r.why}${r.sdkError ? ` (SDK: ${r.sdkError.message})` : ''}`);
  if (!r.reply.error) return fail(name, `expected a JSON-RPC error ${codes.join(' or ')}, got result ${J(r.reply.result)}`);
  if (!codes.includes(r.reply.error.code)) return fail(name, `expected error code ${codes.join(' or ')}, got ${J(r.reply.error)}`);
  if (typeof r.reply.error.message !== 'string') return fail(name, `error without a message: ${J(r.reply.error)}`);
  return pass(name);
}

// Walks a paginated list; returns {pages: [raw results], items, error}.
async function listAll(raw, method, key, maxPages = 20) {
  const pages = [];
  let cursor;
  for (let i = 0; i < maxPages; i++) {
    const r = await raw.call(method, cursor === undefined ? undefined : { cursor });
    if (!r.reply || r.reply.error || r.sdkError) return { pages, items: null, error: `${method} page ${i + 1}: ${r.why ?? ''} ${J(r.reply?.error)} ${r.sdkError?.message ?? ''}` };
    pages.push(r.reply.result);
    cursor = r.reply.result.nextCursor;
    if (cursor === undefined) {
      const items = pages.flatMap((p) => p[key] ?? []);
      // The SDK caches tool output schemas from the last listTools page only; give it every page so
      // that callTool validates structuredContent against the listed outputSchema.
      if (method === 'tools/list') raw.client.cacheToolMetadata(items);
      return { pages, items, error: null };
    }
  }
  return { pages, items: null, error: `${method}: more than ${maxPages} pages` };
}

const NO_ARG_TOOLS = [
  'test_simple_text',
  'test_image_content',
  'test_audio_content',
  'test_embedded_resource',
  'test_resource_link',
  'test_multiple_content_types',
  'test_error_handling',
  'test_tool_with_progress',
  'test_tool_with_logging',
  'test_list_roots',
  'test_trigger_resource_update',
  'test_add_dynamic_tool',
  'test_remove_dynamic_tool',
];
const CONTRACT_TOOLS = [...NO_ARG_TOOLS, 'test_structured_output', 'test_sampling', 'test_elicitation'];
const EXTRA_TOOLS = ['test_elicitation_sep1034_defaults', 'test_elicitation_sep1330_enums', 'json_schema_2020_12_tool', 'test_reconnection', 'test_task_slow', 'test_task_required', 'test_task_elicitation',
  // the 2026-07-28 conformance fixtures (ordinary tools in a 2025 session)
  'test_logging_tool', 'test_missing_capability', 'test_streaming_elicitation', 'test_input_required_result_elicitation', 'test_input_required_result_sampling', 'test_input_required_result_list_roots', 'test_input_required_result_request_state', 'test_input_required_result_multiple_inputs', 'test_input_required_result_multi_round', 'test_input_required_result_tampered_state', 'test_input_required_result_capabilities', 'echo_region', 'test_trigger_tool_change', 'test_trigger_prompt_change',
  // the tasks extension fixtures (SEP-2663)
  'greet', 'slow_compute', 'failing_job', 'protocol_error_job', 'confirm_delete', 'multi_input', 'test_tool_with_task',
  // the OAuth step-up fixture (needs mcp:write when the server requires tokens)
  'test_scoped_write'];
// Prompts beyond the contract's four that a server may list (the 2026-07-28 conformance fixture).
const EXTRA_PROMPTS = ['test_input_required_result_prompt'];

async function checkToolsList(list, tools) {
  if (list.error) return fail('tools/list', list.error);
  const names = [...tools.keys()].sort();
  const expected = [...CONTRACT_TOOLS, ...EXTRA_TOOLS.filter((n) => tools.has(n))].sort();
  expectEqual('tools/list: names (contract tools + conformance extras; test_dynamic_tool not yet listed)', names, expected);
  expectEqual('tools/list: no duplicate names', list.items.length, tools.size);
  const notObject = list.items.filter((t) => t?.inputSchema?.type !== 'object').map((t) => t.name);
  expectTrue('tools/list: every inputSchema.type is "object"', notObject.length === 0, `not object: ${J(notObject)}`);
  const badNoArgs = NO_ARG_TOOLS.filter((n) => tools.has(n)).filter((n) => {
    const s = tools.get(n).inputSchema;
    return !(s.properties === undefined || deepEqual(s.properties, {})) || (s.required !== undefined && s.required.length > 0);
  });
  expectTrue('tools/list: no-arg tools take no properties and require nothing', badNoArgs.length === 0, badNoArgs.map((n) => `${n}: ${J(tools.get(n).inputSchema)}`).join('; '));
  const so = tools.get('test_structured_output');
  expectEqual('tools/list: test_structured_output outputSchema', so?.outputSchema, {
    type: 'object',
    properties: { sum: { type: 'integer' }, product: { type: 'integer' } },
    required: ['sum', 'product'],
  });
  expectArgSchema('tools/list: test_structured_output inputSchema (a, b: integer, required)', so, { a: 'integer', b: 'integer' });
  expectArgSchema('tools/list: test_sampling inputSchema (prompt: string, required)', tools.get('test_sampling'), { prompt: 'string' });
  expectArgSchema('tools/list: test_elicitation inputSchema (message: string, required)', tools.get('test_elicitation'), { message: 'string' });
  const pages = list.pages;
  expectTrue(
    'tools/list: pagination (every page but the last has a string nextCursor)',
    pages.slice(0, -1).every((p) => typeof p.nextCursor === 'string' && p.nextCursor.length > 0) && !('nextCursor' in pages[pages.length - 1]),
    `pages: ${J(pages.map((p) => ({ n: p.tools?.length, nextCursor: p.nextCursor })))}`,
  );
  const j = tools.get('json_schema_2020_12_tool');
  if (!j) skip('tools/list: json_schema_2020_12_tool inputSchema', 'conformance extra not listed');
  else {
    const s = j.inputSchema;
    const ok =
      s.$schema === 'https://json-schema.org/draft/2020-12/schema' &&
      s.type === 'object' &&
      s.$defs && typeof s.$defs.address === 'object' &&
      deepEqual(s.properties?.name, { type: 'string' }) &&
      deepEqual(s.properties?.address, { $ref: '#/$defs/address' }) &&
      s.additionalProperties === false;
    expectTrue('tools/list: json_schema_2020_12_tool inputSchema preserved verbatim', ok, `inputSchema = ${J(s)}`);
  }
}

function expectArgSchema(name, tool, props) {
  if (!tool) return fail(name, 'tool not listed');
  const s = tool.inputSchema;
  const typesOk = Object.entries(props).every(([k, t]) => s?.properties?.[k]?.type === t);
  const keysOk = deepEqual(Object.keys(s?.properties ?? {}).sort(), Object.keys(props).sort());
  const reqOk = deepEqual([...(s?.required ?? [])].sort(), Object.keys(props).sort());
  expectTrue(name, s?.type === 'object' && typesOk && keysOk && reqOk, `inputSchema = ${J(s)}`);
}

async function checkProgress(raw, tap) {
  const name = 'tools/call test_tool_with_progress (onprogress)';
  const got = [];
  const r = await raw.tool('test_tool_with_progress', {}, { onprogress: (p) => got.push(p) });
  const token = r.request?.params?._meta?.progressToken;
  expectTrue(`${name}: request carried _meta.progressToken`, token !== undefined, `request ${J(r.request)}`);
  expectRaw(name, r, (res) => expectContract(`${name}: result text is String(progressToken)`, res, { content: [{ type: 'text', text: String(token) }] }, OPT_CALL_RESULT));
  // Raw notifications for our token, and where they sit relative to the response.
  const reqIdx = tap.log.findIndex((e) => e.msg === r.request);
  const replyIdx = tap.indexOf((e) => e.dir === 'in' && e.msg.id === r.request?.id && e.msg.method === undefined);
  const notes = [];
  for (let i = 0; i < tap.log.length; i++) {
    const m = tap.log[i].msg;
    if (tap.log[i].dir === 'in' && m.method === 'notifications/progress' && m.params?.progressToken === token) notes.push({ i, params: m.params });
  }
  const wanted = [0, 50, 100].map((p) => ({ progressToken: token, progress: p, total: 100 }));
  const diffs = notes.map((n, k) => contractDiff(n.params, wanted[k] ?? {}, ['message', '_meta'])).filter(Boolean);
  expectTrue(
    `${name}: notifications/progress 0, 50, 100 of total 100, in order`,
    notes.length === 3 && diffs.length === 0,
    `expected ${J(wanted)}, actual ${J(notes.map((n) => n.params))}${diffs.length ? `; ${diffs.join('; ')}` : ''}`,
  );
  expectTrue(`${name}: every progress notification before the response`, replyIdx > 0 && notes.every((n) => n.i > reqIdx && n.i < replyIdx), `positions ${J(notes.map((n) => n.i))}, request ${reqIdx}, response ${replyIdx}`);
  expectEqual(`${name}: SDK onprogress saw 0, 50, 100 of 100`, got.map((p) => [p.progress, p.total]), [
    [0, 100],
    [50, 100],
    [100, 100],
  ]);
}

async function checkLogging(raw, tap) {
  const name = 'tools/call test_tool_with_logging';
  const from = tap.mark();
  const r = await raw.tool('test_tool_with_logging', {});
  expectRaw(name, r, (res) => expectContract(name, res, { content: [{ type: 'text', text: 'Tool with logging executed successfully' }] }, OPT_CALL_RESULT));
  const replyIdx = tap.indexOf((e) => e.dir === 'in' && e.msg.id === r.request?.id && e.msg.method === undefined, from);
  const msgs = [];
  for (let i = from; i < tap.log.length; i++) if (tap.log[i].dir === 'in' && tap.log[i].msg.method === 'notifications/message') msgs.push({ i, params: tap.log[i].msg.params });
  const texts = ['Tool execution started', 'Tool processing data', 'Tool execution completed'];
  const diffs = msgs.map((m, k) => contractDiff(m.params, { level: 'info', data: texts[k] }, ['logger', '_meta'])).filter(Boolean);
  expectTrue(
    `${name}: 3 notifications/message (info) in order`,
    msgs.length === 3 && diffs.length === 0,
    `expected ${J(texts.map((t) => ({ level: 'info', data: t })))}, actual ${J(msgs.map((m) => m.params))}${diffs.length ? `; ${diffs.join('; ')}` : ''}`,
  );
  expectTrue(`${name}: messages arrive before the response`, replyIdx > 0 && msgs.every((m) => m.i < replyIdx), `positions ${J(msgs.map((m) => m.i))}, response ${replyIdx}`);
}

async function checkSampling(raw, tap, seen) {
  const name = 'tools/call test_sampling (answered by the sampling handler)';
  const from = tap.mark();
  const before = seen.sampling.length;
  const prompt = 'What is 2+2? (interop)';
  const r = await raw.tool('test_sampling', { prompt });
  const reqs = tap.inbound(from, (m) => m.method === 'sampling/createMessage');
  expectTrue(`${name}: exactly one sampling/createMessage`, reqs.length === 1 && seen.sampling.length === before + 1, `saw ${reqs.length} on the wire, handler ran ${seen.sampling.length - before} times`);
  if (reqs[0]) expectContract(`${name}: request params`, reqs[0].params, { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 }, OPT_REQ_PARAMS);
  expectRaw(name, r, (res) => expectContract(name, res, { content: [{ type: 'text', text: `LLM response: echo(${prompt})` }] }, OPT_CALL_RESULT));
  const replyIdx = tap.indexOf((e) => e.dir === 'in' && e.msg.id === r.request?.id && e.msg.method === undefined, from);
  const ourReply = reqs[0] ? tap.indexOf((e) => e.dir === 'out' && e.msg.id === reqs[0].id && e.msg.method === undefined, from) : -1;
  expectTrue(`${name}: tool responds after our sampling reply`, ourReply > 0 && replyIdx > ourReply, `our reply at ${ourReply}, tool response at ${replyIdx}`);
}

const ELICIT_SCHEMA = {
  type: 'object',
  properties: { username: { type: 'string', description: "User's response" }, email: { type: 'string', description: "User's email address" } },
  required: ['username', 'email'],
};

async function checkElicitation(raw, tap, seen, setReply, tools) {
  const name = 'tools/call test_elicitation (answered by the elicitation handler)';
  const content = { username: 'octocat', email: 'octocat@example.com' };
  {
    setReply({ action: 'accept', content });
    const from = tap.mark();
    const message = 'Please provide your details (interop)';
    const r = await raw.tool('test_elicitation', { message });
    const reqs = tap.inbound(from, (m) => m.method === 'elicitation/create');
    expectTrue(`${name}: exactly one elicitation/create`, reqs.length === 1, `saw ${reqs.length}`);
    if (reqs[0]) {
      const p = { ...reqs[0].params };
      const modeOk = p.mode === undefined || p.mode === 'form';
      delete p.mode;
      if (!modeOk) fail(`${name}: request params`, `mode must be absent or "form", got ${J(reqs[0].params.mode)}`);
      else expectContract(`${name}: request params`, p, { message, requestedSchema: ELICIT_SCHEMA }, OPT_REQ_PARAMS);
    }
    expectRaw(`${name}: accept`, r, (res) => {
      const text = res?.content?.[0]?.text;
      const j = jsonAfter(text, 'User response: action=accept, content=');
      if (!j.ok) return fail(`${name}: accept`, j.why);
      if (!deepEqual(j.value, content)) return fail(`${name}: accept`, `content JSON: expected ${J(content)}, actual ${J(j.value)}`);
      expectContract(`${name}: accept`, res, { content: [{ type: 'text', text }] }, OPT_CALL_RESULT);
    });
  }
  {
    setReply({ action: 'decline' });
    const r = await raw.tool('test_elicitation', { message: 'Decline this one' });
    expectRaw(`${name}: decline`, r, (res) => expectContract(`${name}: decline`, res, { content: [{ type: 'text', text: 'User response: action=decline, content={}' }] }, OPT_CALL_RESULT));
  }
  // Conformance extras.
  if (!tools.has('test_elicitation_sep1034_defaults')) skip('tools/call test_elicitation_sep1034_defaults', 'conformance extra not listed');
  else {
    const n = 'tools/call test_elicitation_sep1034_defaults';
    const answer = { name: 'John Doe', age: 30, score: 95.5, status: 'active', verified: true };
    setReply({ action: 'accept', content: answer });
    const from = tap.mark();
    const r = await raw.tool('test_elicitation_sep1034_defaults', {});
    const req = tap.inbound(from, (m) => m.method === 'elicitation/create')[0];
    const props = req?.params?.requestedSchema?.properties ?? {};
    const want = {
      name: ['string', 'John Doe'],
      age: ['integer', 30],
      score: ['number', 95.5],
      status: ['string', 'active'],
      verified: ['boolean', true],
    };
    const bad = Object.entries(want).filter(([k, [t, d]]) => props[k]?.type !== t || !deepEqual(props[k]?.default, d));
    const enumOk = deepEqual(props.status?.enum, ['active', 'inactive', 'pending']);
    expectTrue(`${n}: requestedSchema defaults`, req && bad.length === 0 && enumOk && deepEqual(Object.keys(props).sort(), Object.keys(want).sort()), `properties = ${J(props)}`);
    expectRaw(n, r, (res) => {
      const j = jsonAfter(res?.content?.[0]?.text, 'Elicitation completed: action=accept, content=');
      if (!j.ok) return fail(n, j.why);
      expectEqual(n, j.value, answer);
    });
  }
  if (!tools.has('test_elicitation_sep1330_enums')) skip('tools/call test_elicitation_sep1330_enums', 'conformance extra not listed');
  else {
    const n = 'tools/call test_elicitation_sep1330_enums';
    const from = tap.mark();
    setReply({ action: 'decline' });
    const r = await raw.tool('test_elicitation_sep1330_enums', {});
    const req = tap.inbound(from, (m) => m.method === 'elicitation/create')[0];
    const props = req?.params?.requestedSchema?.properties ?? {};
    const shapes =
      Array.isArray(props.untitledSingle?.enum) &&
      Array.isArray(props.titledSingle?.oneOf) && props.titledSingle.oneOf.every((o) => 'const' in o && typeof o.title === 'string') &&
      Array.isArray(props.legacyEnum?.enum) && Array.isArray(props.legacyEnum?.enumNames) &&
      props.untitledMulti?.type === 'array' && Array.isArray(props.untitledMulti?.items?.enum) &&
      props.titledMulti?.type === 'array' && Array.isArray(props.titledMulti?.items?.anyOf) && props.titledMulti.items.anyOf.every((o) => 'const' in o && typeof o.title === 'string');
    expectTrue(`${n}: requestedSchema has the five enum forms`, req && shapes, `properties = ${J(props)}`);
    expectRaw(n, r, (res) => expectEqual(n, res?.content, [{ type: 'text', text: 'Elicitation completed: action=decline, content={}' }]));
  }
}

async function checkRoots(raw, tap, seen, ROOTS) {
  const name = 'tools/call test_list_roots (answered by the roots handler)';
  const from = tap.mark();
  const before = seen.roots;
  const r = await raw.tool('test_list_roots', {});
  const reqs = tap.inbound(from, (m) => m.method === 'roots/list');
  expectTrue(`${name}: exactly one roots/list`, reqs.length === 1 && seen.roots === before + 1, `saw ${reqs.length} on the wire, handler ran ${seen.roots - before} times`);
  if (reqs[0]) {
    const p = reqs[0].params;
    expectTrue(`${name}: roots/list params empty`, p === undefined || contractDiff(p, {}, OPT_REQ_PARAMS) === null, `params = ${J(p)}`);
  }
  expectRaw(name, r, (res) => {
    const text = res?.content?.[0]?.text;
    const j = jsonAfter(text, 'Roots: ');
    if (!j.ok) return fail(name, j.why);
    if (!deepEqual(j.value, ROOTS)) return fail(name, `roots JSON: expected ${J(ROOTS)}, actual ${J(j.value)}`);
    expectContract(name, res, { content: [{ type: 'text', text }] }, OPT_CALL_RESULT);
  });
}

async function checkDynamicTools(raw, tap) {
  const listed = async () => {
    const l = await listAll(raw, 'tools/list', 'tools');
    return l.items ? l.items.map((t) => t.name) : null;
  };
  const isListChanged = (m) => m.method === 'notifications/tools/list_changed';
  const text = (t) => ({ content: [{ type: 'text', text: t }] });

  let from = tap.mark();
  let r = await raw.tool('test_add_dynamic_tool', {});
  expectRaw('dynamic tools: test_add_dynamic_tool', r, (res) => expectContract('dynamic tools: test_add_dynamic_tool', res, text('Registered test_dynamic_tool'), OPT_CALL_RESULT));
  let notes = await waitFor(tap, from, isListChanged);
  expectTrue('dynamic tools: notifications/tools/list_changed after add', notes.length === 1, `saw ${notes.length}`);
  let names = await listed();
  expectTrue('dynamic tools: tools/list includes test_dynamic_tool after add', names?.includes('test_dynamic_tool'), `names ${J(names)}`);
  r = await raw.tool('test_dynamic_tool', {});
  expectRaw('dynamic tools: tools/call test_dynamic_tool', r, (res) => expectContract('dynamic tools: tools/call test_dynamic_tool', res, text('dynamic tool response'), OPT_CALL_RESULT));
  r = await raw.tool('test_add_dynamic_tool', {});
  expectRaw('dynamic tools: test_add_dynamic_tool again (idempotent)', r, (res) => expectContract('dynamic tools: test_add_dynamic_tool again (idempotent)', res, text('Registered test_dynamic_tool'), OPT_CALL_RESULT));
  names = await listed();
  expectTrue('dynamic tools: listed once after adding twice', names?.filter((n) => n === 'test_dynamic_tool').length === 1, `names ${J(names)}`);

  from = tap.mark();
  r = await raw.tool('test_remove_dynamic_tool', {});
  expectRaw('dynamic tools: test_remove_dynamic_tool', r, (res) => expectContract('dynamic tools: test_remove_dynamic_tool', res, text('Removed test_dynamic_tool'), OPT_CALL_RESULT));
  notes = await waitFor(tap, from, isListChanged);
  expectTrue('dynamic tools: notifications/tools/list_changed after remove', notes.length === 1, `saw ${notes.length}`);
  names = await listed();
  expectTrue('dynamic tools: tools/list excludes test_dynamic_tool after remove', names !== null && !names.includes('test_dynamic_tool'), `names ${J(names)}`);
  r = await raw.tool('test_dynamic_tool', {});
  if (r.reply?.error) expectError('dynamic tools: tools/call test_dynamic_tool after remove -> -32602 or isError', r, [-32602]);
  else
    expectRaw('dynamic tools: tools/call test_dynamic_tool after remove -> -32602 or isError', r, (res) =>
      expectTrue('dynamic tools: tools/call test_dynamic_tool after remove -> -32602 or isError', res?.isError === true, `expected -32602 or isError: true, actual ${J(res)}`),
    );
  r = await raw.tool('test_remove_dynamic_tool', {});
  expectRaw('dynamic tools: test_remove_dynamic_tool again (idempotent)', r, (res) => expectContract('dynamic tools: test_remove_dynamic_tool again (idempotent)', res, text('Removed test_dynamic_tool'), OPT_CALL_RESULT));
}

const pad2 = (n) => String(n).padStart(2, '0');
const EXPECTED_RESOURCES = [
  { uri: 'test://static-text', name: 'static-text', mimeType: 'text/plain' },
  { uri: 'test://static-binary', name: 'static-binary', mimeType: 'image/png' },
  { uri: 'test://watched-resource', name: 'watched-resource', mimeType: 'text/plain' },
  ...Array.from({ length: 25 }, (_, i) => ({ uri: `test://paginated/${pad2(i + 1)}`, name: `paginated-${pad2(i + 1)}`, mimeType: 'text/plain' })),
];

async function checkResources(raw, tap) {
  const list = await listAll(raw, 'resources/list', 'resources');
  if (list.error) fail('resources/list', list.error);
  else {
    const sizes = list.pages.map((p) => p.resources?.length);
    expectEqual('resources/list: page sizes', sizes, [10, 10, 8]);
    expectTrue(
      'resources/list: nextCursor on pages 1-2 (string), absent on page 3',
      list.pages.length === 3 && typeof list.pages[0].nextCursor === 'string' && typeof list.pages[1].nextCursor === 'string' && !('nextCursor' in list.pages[2]),
      `nextCursors ${J(list.pages.map((p) => p.nextCursor))}`,
    );
    const diffs = [];
    for (let i = 0; i < Math.max(EXPECTED_RESOURCES.length, list.items.length); i++) {
      const d = contractDiff(list.items[i], EXPECTED_RESOURCES[i] ?? {}, OPT_RESOURCE);
      if (d) diffs.push(`#${i}: ${d}`);
    }
    expectTrue('resources/list: the 28 resources, in order', list.items.length === 28 && diffs.length === 0, `${list.items.length} items; ${diffs.slice(0, 5).join('; ')}`);
    for (const [k, p] of list.pages.entries()) {
      const extra = Object.keys(p).filter((x) => !['resources', 'nextCursor', '_meta'].includes(x));
      if (extra.length) fail(`resources/list: page ${k + 1} keys`, `unexpected ${J(extra)}`);
    }
  }
  {
    const r = await raw.call('resources/list', { cursor: 'switchboard-interop-bogus-cursor' });
    expectError('resources/list: unknown cursor -> -32602', r, [-32602]);
  }
  const read = async (uri) => raw.call('resources/read', { uri });
  const expectRead = async (label, uri, contents0) => {
    const r = await read(uri);
    expectRaw(label, r, (res) => expectContract(label, res, { contents: [contents0] }, ['_meta']));
  };
  await expectRead('resources/read test://static-text', 'test://static-text', { uri: 'test://static-text', mimeType: 'text/plain', text: 'This is the content of the static text resource.' });
  await expectRead('resources/read test://static-binary', 'test://static-binary', { uri: 'test://static-binary', mimeType: 'image/png', blob: PNG });
  {
    const label = 'resources/read test://paginated/01 ... /25';
    const diffs = [];
    for (let i = 1; i <= 25; i++) {
      const uri = `test://paginated/${pad2(i)}`;
      const r = await read(uri);
      const want = { contents: [{ uri, mimeType: 'text/plain', text: `Paginated resource ${pad2(i)}` }] };
      if (!r.reply) diffs.push(`${uri}: ${r.why}`);
      else if (r.reply.error) diffs.push(`${uri}: JSON-RPC error ${J(r.reply.error)}`);
      else if (r.sdkError) diffs.push(`${uri}: the SDK rejected ${J(r.reply.result)}: ${r.sdkError.message}`);
      else {
        const d = contractDiff(r.reply.result, want, ['_meta']);
        if (d) diffs.push(`${uri}: ${d}`);
      }
    }
    expectTrue(label, diffs.length === 0, diffs.slice(0, 5).join('; '));
  }
  const watched = 'test://watched-resource';
  const watchedRead = (t) => ({ uri: watched, mimeType: 'text/plain', text: t });
  await expectRead('resources/read test://watched-resource (initial)', watched, watchedRead('Watched resource content'));

  // Templates.
  {
    const r = await raw.call('resources/templates/list', undefined);
    expectRaw('resources/templates/list', r, (res) => {
      const ts = res?.resourceTemplates;
      if (!Array.isArray(ts) || ts.length !== 1) return fail('resources/templates/list', `expected exactly one template, actual ${J(res)}`);
      if ('nextCursor' in res) return fail('resources/templates/list', `unexpected nextCursor ${J(res.nextCursor)}`);
      expectContract('resources/templates/list', ts[0], { uriTemplate: 'test://template/{id}/data', name: 'template', mimeType: 'application/json' }, OPT_TEMPLATE);
    });
  }
  for (const id of ['42', 'abc']) {
    const uri = `test://template/${id}/data`;
    const label = `resources/read ${uri} (template)`;
    const r = await read(uri);
    expectRaw(label, r, (res) => {
      const c = res?.contents?.[0];
      let body;
      try {
        body = JSON.parse(c?.text);
      } catch {
        return fail(label, `text is not JSON: ${J(c)}`);
      }
      const want = { id, templateTest: true, data: `Data for ID: ${id}` };
      if (!deepEqual(body, want)) return fail(label, `text JSON: expected ${J(want)}, actual ${J(body)}`);
      expectContract(label, res, { contents: [{ uri, mimeType: 'application/json', text: c.text }] }, ['_meta']);
    });
  }
  {
    const r = await read('test://no-such-resource');
    expectError('resources/read unknown URI -> -32002 or -32602', r, [-32002, -32602]);
  }

  // Subscriptions and updates.
  const isUpdated = (m) => m.method === 'notifications/resources/updated';
  const trigger = (n, notified) => ({ content: [{ type: 'text', text: `Updated ${watched}: update=${n} notified=${notified}` }] });
  {
    const r = await raw.call('resources/subscribe', { uri: watched });
    expectRaw('resources/subscribe -> {}', r, (res) => expectEqual('resources/subscribe -> {}', res, {}));
  }
  let from = tap.mark();
  let r = await raw.tool('test_trigger_resource_update', {});
  expectRaw('subscriptions: trigger while subscribed', r, (res) => expectContract('subscriptions: trigger while subscribed', res, trigger(1, true), OPT_CALL_RESULT));
  let notes = await waitFor(tap, from, isUpdated);
  expectTrue('subscriptions: notifications/resources/updated received', notes.length === 1, `saw ${notes.length}`);
  if (notes[0]) expectContract('subscriptions: notifications/resources/updated params', notes[0].params, { uri: watched }, ['_meta']);
  await expectRead('resources/read test://watched-resource (after update 1)', watched, watchedRead('Watched resource content (update 1)'));
  {
    const r2 = await raw.call('resources/unsubscribe', { uri: watched });
    expectRaw('resources/unsubscribe -> {}', r2, (res) => expectEqual('resources/unsubscribe -> {}', res, {}));
  }
  from = tap.mark();
  r = await raw.tool('test_trigger_resource_update', {});
  expectRaw('subscriptions: trigger after unsubscribe', r, (res) => expectContract('subscriptions: trigger after unsubscribe', res, trigger(2, false), OPT_CALL_RESULT));
  await sleep(QUIET_WAIT_MS);
  notes = tap.inbound(from, isUpdated);
  expectTrue('subscriptions: no notifications/resources/updated after unsubscribe', notes.length === 0, `saw ${J(notes)}`);
  await expectRead('resources/read test://watched-resource (after update 2)', watched, watchedRead('Watched resource content (update 2)'));
}

const PROMPT_ARGS = {
  test_simple_prompt: [],
  test_prompt_with_arguments: ['arg1', 'arg2'],
  test_prompt_with_embedded_resource: ['resourceUri'],
  test_prompt_with_image: [],
};

async function checkPrompts(raw) {
  const list = await listAll(raw, 'prompts/list', 'prompts');
  if (list.error) fail('prompts/list', list.error);
  else {
    const names = list.items.map((p) => p.name).sort();
    expectEqual('prompts/list: the four prompts', names.filter((n) => !EXTRA_PROMPTS.includes(n)), Object.keys(PROMPT_ARGS).sort());
    for (const p of list.items) {
      const want = PROMPT_ARGS[p.name];
      if (!want) continue;
      const args = p.arguments ?? [];
      const ok = deepEqual(args.map((a) => a.name), want) && args.every((a) => a.required === true);
      expectTrue(`prompts/list: ${p.name} arguments ${J(want)} (required)`, ok, `arguments = ${J(p.arguments)}`);
    }
  }
  const get = async (label, name, args, messages) => {
    const r = await raw.call('prompts/get', args === undefined ? { name } : { name, arguments: args });
    expectRaw(label, r, (res) => expectContract(label, res, { messages }, OPT_GET_PROMPT));
  };
  const user = (content) => ({ role: 'user', content });
  await get('prompts/get test_simple_prompt', 'test_simple_prompt', undefined, [user({ type: 'text', text: 'This is a simple prompt for testing.' })]);
  await get('prompts/get test_prompt_with_arguments', 'test_prompt_with_arguments', { arg1: 'hello', arg2: 'world' }, [
    user({ type: 'text', text: "Prompt with arguments: arg1='hello', arg2='world'" }),
  ]);
  await get('prompts/get test_prompt_with_embedded_resource', 'test_prompt_with_embedded_resource', { resourceUri: 'test://static-text' }, [
    user({ type: 'resource', resource: { uri: 'test://static-text', mimeType: 'text/plain', text: 'Embedded resource content for testing.' } }),
    user({ type: 'text', text: 'Please process the embedded resource above.' }),
  ]);
  await get('prompts/get test_prompt_with_image', 'test_prompt_with_image', undefined, [
    user({ type: 'image', data: PNG, mimeType: 'image/png' }),
    user({ type: 'text', text: 'Please analyze the image above.' }),
  ]);
  {
    const r = await raw.call('prompts/get', { name: 'test_prompt_with_arguments', arguments: { arg1: 'only-one' } });
    expectError('prompts/get test_prompt_with_arguments missing arg2 -> -32602', r, [-32602]);
  }
  {
    const r = await raw.call('prompts/get', { name: 'no_such_prompt' });
    expectError('prompts/get unknown prompt -> -32602', r, [-32602]);
  }
}

async function checkCompletion(raw) {
  const promptRef = { type: 'ref/prompt', name: 'test_prompt_with_arguments' };
  const templateRef = { type: 'ref/resource', uri: 'test://template/{id}/data' };
  const cases = [
    ['arg1 "al"', promptRef, 'arg1', 'al', ['alpha', 'alpine']],
    ['arg1 ""', promptRef, 'arg1', '', ['alpha', 'alpine', 'beta', 'gamma']],
    ['arg1 "test" (no match)', promptRef, 'arg1', 'test', []],
    ['arg1 "AL" (case-sensitive)', promptRef, 'arg1', 'AL', []],
    ['arg2 "t"', promptRef, 'arg2', 't', ['two', 'three']],
    ['template id "1"', templateRef, 'id', '1', ['100', '123']],
    ['template id "2"', templateRef, 'id', '2', ['200']],
  ];
  for (const [label, ref, argName, value, values] of cases) {
    const name = `completion/complete ${label}`;
    const r = await raw.call('completion/complete', { ref, argument: { name: argName, value } });
    expectRaw(name, r, (res) => {
      const d = contractDiff(res, { completion: res?.completion }, ['_meta']);
      if (d) return fail(name, d);
      expectContract(name, res.completion, { values, total: values.length, hasMore: false });
    });
  }
}

let finished = false;
async function finish(code, client) {
  if (finished) return;
  finished = true;
  if (client) {
    try {
      await Promise.race([client.close(), sleep(3000)]);
    } catch {
      /* closing is best effort */
    }
  }
  if (passed + failed === 0) fail('harness', 'no check ran');
  if (skipped.length) console.log(`# skipped (absent conformance extras): ${skipped.join(', ')}`);
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 && code === 0 ? 0 : 1);
}

main().catch((e) => {
  fail('harness: uncaught error', String(e?.stack || e));
  finish(1);
});
