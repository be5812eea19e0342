#!/usr/bin/env node
// A long tool call through a cluster, with the node serving it killed in the middle (run by
// interop/cluster.sh, which does the killing): the official TypeScript SDK client calls
// `test_task_slow {ms}` with a progress token through the proxy, prints `SESSION <id>` and one
// `PROGRESS <n>` line per notification as they arrive, and when the call returns checks that
// every progress value came exactly once and in order (100, 200, ... ms) and that the result
// came once. The transport resumes the broken stream with `GET` + `Last-Event-ID` by itself.
//
//   node interop/cluster-kill.mjs URL MS
//
// Prints `PASS name` / `FAIL name: why` lines, then `N passed, M failed`.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, msArg] = process.argv.slice(2);
const ms = Number(msArg ?? 3000);
let passed = 0;
let failed = 0;
const pass = (name) => {
  console.log(`PASS ${name}`);
  passed += 1;
};
const fail = (name, why) => {
  console.log(`FAIL ${name}: ${why}`);
  failed += 1;
};

const transport = new StreamableHTTPClientTransport(new URL(url), {
  reconnectionOptions: {
    initialReconnectionDelay: 200,
    maxReconnectionDelay: 2000,
    reconnectionDelayGrowFactor: 1.5,
    maxRetries: 20,
  },
});
const results = [];
const seenIds = new Map();
const client = new Client({ name: 'cluster-kill', version: '1.0.0' }, { capabilities: {} });
try {
  await client.connect(transport);
} catch (e) {
  fail('connect through the proxy', e.message);
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(1);
}
// Count every response frame by id as the transport hands it over (a duplicate would show).
const handler = transport.onmessage;
transport.onmessage = (m, extra) => {
  if (m && 'id' in m && ('result' in m || 'error' in m)) {
    seenIds.set(String(m.id), (seenIds.get(String(m.id)) ?? 0) + 1);
  }
  handler?.(m, extra);
};
console.log(`SESSION ${transport.sessionId}`);
const progress = [];
let result;
try {
  result = await client.callTool({ name: 'test_task_slow', arguments: { ms } }, undefined, {
    onprogress: (p) => {
      progress.push(p.progress);
      console.log(`PROGRESS ${p.progress}`);
    },
    timeout: 60000,
    resetTimeoutOnProgress: true,
  });
  results.push(result);
} catch (e) {
  fail('the long call returns after its node was killed', e.message);
}
if (result) {
  const text = result.content?.[0]?.text;
  if (text === `slept ${ms} ms`) pass(`the result arrived after the kill: "${text}"`);
  else fail('the result after the kill', JSON.stringify(result));
  const answers = [...seenIds.values()].reduce((a, b) => a + b, 0);
  if (answers === 1) pass('the result arrived once');
  else fail('the result arrived once', `${answers} responses: ${JSON.stringify([...seenIds])}`);
}
const expected = [];
for (let t = 100; t < ms; t += 100) expected.push(t);
expected.push(ms);
if (JSON.stringify(progress) === JSON.stringify(expected)) {
  pass(`every progress notification arrived once, in order (${progress.length} of ${expected.length})`);
} else {
  const dup = progress.filter((p, i) => progress.indexOf(p) !== i);
  const missing = expected.filter((p) => !progress.includes(p));
  fail('every progress notification once, in order', `got ${progress.length}; duplicates [${dup}], missing [${missing}]`);
}
// The session goes on after the take-over.
try {
  const r = await client.callTool({ name: 'test_simple_text', arguments: {} });
  const text = r.content?.[0]?.text;
  if (text === 'This is a simple text response for testing.') pass('the session goes on after the take-over (test_simple_text)');
  else fail('the session goes on after the take-over', JSON.stringify(r));
} catch (e) {
  fail('the session goes on after the take-over', e.message);
}
await client.close().catch(() => {});
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
