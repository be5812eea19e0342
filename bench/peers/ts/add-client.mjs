// The benchmark's client side on the official TypeScript SDK (@modelcontextprotocol/sdk, the copy
// installed in interop/node_modules by scripts/install-peers.sh; run with Node 22).
//
//   node add-client.mjs (--stdio CMD | --url URL) [-n N] [-k K] [--warmup W] [--max-seconds T]
//
// Connects as the SDK's documentation shows (`Client` with a `StdioClientTransport` for a
// command, a `StreamableHTTPClientTransport` for a URL), makes `tools/call add` {a: 1, b: 2} K at
// a time on that one session (K async workers), and prints one JSON object with the fields
// `switchboard-load --json` uses for the same figures. A call counts as an error unless its answer
// is a result whose text is `3`.

import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const MODULES = path.resolve(HERE, '../../../interop/node_modules');
const load = (rel) => import(pathToFileURL(path.join(MODULES, rel)).href);

const { Client } = await load('@modelcontextprotocol/sdk/dist/esm/client/index.js');
const { StdioClientTransport } = await load('@modelcontextprotocol/sdk/dist/esm/client/stdio.js');
const { StreamableHTTPClientTransport } = await load('@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js');

function usage() {
  process.stderr.write('usage: add-client.mjs (--stdio CMD | --url URL) [-n N] [-k K] [--warmup W] [--max-seconds T]\n');
  process.exit(2);
}

const argv = process.argv.slice(2);
let stdio = null, url = null, n = 1000, k = 1, warmup = null, maxSeconds = 60;
const num = (v) => { const x = Number(v); return Number.isFinite(x) ? x : usage(); };
for (let i = 0; i < argv.length; i++) {
  const v = argv[i + 1] ?? usage();
  switch (argv[i]) {
    case '--stdio': stdio = v; break;
    case '--url': url = v; break;
    case '-n': n = num(v); break;
    case '-k': k = num(v); break;
    case '--warmup': warmup = num(v); break;
    case '--max-seconds': maxSeconds = num(v); break;
    default: usage();
  }
  i++;
}
if ((stdio === null) === (url === null) || n < 1 || k < 1 || k > 10000 || !(maxSeconds > 0)) usage();
warmup ??= Math.min(Math.floor(n / 10), 1000);

const rank = (s, p) => (s.length ? s[Math.min(s.length, Math.max(1, Math.ceil(p * s.length))) - 1] : null);

async function phase(client, count, record, tally) {
  let taken = 0;
  const worker = async () => {
    while (taken < count) {
      taken++;
      const t = process.hrtime.bigint();
      let ok, why = 'the answer is not the text 3';
      try {
        const r = await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } });
        ok = !r.isError && r.content?.[0]?.text === '3';
      } catch (e) {
        ok = false; why = String(e);
      }
      const us = Number((process.hrtime.bigint() - t) / 1000n);
      if (record) {
        tally.samples.push(us);
        if (!ok) tally.errors++;
      }
      if (!ok) tally.firstError ??= why;
    }
  };
  await Promise.all(Array.from({ length: k }, worker));
}

const transport = stdio !== null
  ? new StdioClientTransport({ command: 'sh', args: ['-c', `exec ${stdio}`], stderr: 'ignore' })
  : new StreamableHTTPClientTransport(new URL(url));
const client = new Client({ name: 'bench-typescript-client', version: '0.1.0' });
const report = { mode: 'calls', client: 'typescript-sdk', transport: stdio !== null ? 'stdio' : 'http', target: stdio ?? url, in_flight: k, warmup };
const timer = setTimeout(() => {
  process.stdout.write(JSON.stringify({ ...report, calls: 0, errors: 0, timed_out: true, notes: ['stopped at --max-seconds'] }) + '\n');
  process.exit(1);
}, maxSeconds * 1000);

const tally = { samples: [], errors: 0, firstError: null };
await client.connect(transport);
await phase(client, warmup, false, tally);
const cpu0 = process.cpuUsage();
const t0 = process.hrtime.bigint();
await phase(client, n, true, tally);
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
const cpu = process.cpuUsage(cpu0);
clearTimeout(timer);
await client.close();

const s = tally.samples.sort((x, y) => x - y);
const calls = s.length;
process.stdout.write(JSON.stringify({
  ...report,
  calls,
  seconds,
  calls_per_sec: seconds > 0 ? calls / seconds : null,
  p50_us: rank(s, 0.5),
  p90_us: rank(s, 0.9),
  p99_us: rank(s, 0.99),
  max_us: calls ? s[calls - 1] : null,
  mean_us: calls ? s.reduce((x, y) => x + y, 0) / calls : null,
  errors: tally.errors,
  client_cpu_us_per_call: calls ? (cpu.user + cpu.system) / calls : null,
  timed_out: false,
  notes: tally.firstError ? [`first error: ${tally.firstError}`] : [],
}) + '\n');
process.exit(0);
