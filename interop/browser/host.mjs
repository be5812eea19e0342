// A minimal MCP Apps host (SEP-1865) around the notes example, driven in a real browser:
//
//   node interop/browser/host.mjs path/to/notes DIR
//
// The backend (this process) is the MCP client: it spawns `notes DIR` over stdio, declares
// io.modelcontextprotocol/ui, lists the tools and reads the view `ui://notes/list` that
// `search_notes` links to. It serves, on 127.0.0.1 only, a host page (one origin) and the view
// (another origin, with the Content-Security-Policy the spec builds from the view's
// `_meta.ui.csp`). The host page puts the view in a sandboxed iframe and answers its JSON-RPC over
// postMessage: `ui/initialize`, and `tools/call`, forwarded to the server through the backend
// (refused for a tool whose visibility lacks "app"). Playwright (playwright-core) drives Debian's
// Chromium, headless: the view must start, call search_notes by itself and show the notes, then
// search when the form is used; no CSP violation may be reported.
//
// Prints `PASS name` / `FAIL name: why` per check, then `N passed, M failed`; exit 0 only when
// every check passed. Every wait is for an event (a frame, an element), bounded by a timeout.

import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { createInterface } from "node:readline";
import { chromium } from "playwright-core";
import { checks } from "./checks.mjs";

const [notesBin, notesDir] = process.argv.slice(2);
if (!notesBin || !notesDir) {
  console.error("usage: node interop/browser/host.mjs path/to/notes DIR");
  process.exit(2);
}
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const WAIT_MS = 20_000;
const VIEW = "ui://notes/list";
const APP_MIME = "text/html;profile=mcp-app";
const UI = "io.modelcontextprotocol/ui";

const { check, finish } = checks();

// ---------------------------------------------------------------- the MCP client (stdio)
const child = spawn(notesBin, [notesDir], { stdio: ["pipe", "pipe", "inherit"] });
const pending = new Map();
let nextId = 1;
createInterface({ input: child.stdout }).on("line", (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  const waiter = msg.id !== undefined && msg.method === undefined ? pending.get(msg.id) : undefined;
  if (waiter) {
    pending.delete(msg.id);
    waiter(msg);
  }
});
const rpc = (method, params) =>
  new Promise((resolve, reject) => {
    const id = nextId++;
    const timer = setTimeout(() => reject(new Error(`${method}: no answer in ${WAIT_MS} ms`)), WAIT_MS);
    pending.set(id, (msg) => {
      clearTimeout(timer);
      resolve(msg);
    });
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
  });

// ---------------------------------------------------------------- the two origins
const listen = (handler) =>
  new Promise((resolve) => {
    const server = createServer(handler);
    server.listen(0, "127.0.0.1", () => resolve(server));
  });

/** The spec's CSP from `_meta.ui.csp` ("CSP Construction from Metadata"). */
function cspOf(csp = {}) {
  const list = (key) => (csp[key] || []).join(" ");
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${list("resourceDomains")}`,
    `style-src 'self' 'unsafe-inline' ${list("resourceDomains")}`,
    `connect-src 'self' ${list("connectDomains")}`,
    `img-src 'self' data: ${list("resourceDomains")}`,
    `font-src 'self' ${list("resourceDomains")}`,
    `media-src 'self' data: ${list("resourceDomains")}`,
    `frame-src ${list("frameDomains") || "'none'"}`,
    "object-src 'none'",
    `base-uri ${list("baseUriDomains") || "'self'"}`,
  ].join("; ");
}

function hostPage(viewUrl) {
  return `<!doctype html><html><head><meta charset="utf-8"><title>host</title></head><body>
<iframe id="view" sandbox="allow-scripts allow-forms" src="${viewUrl}" style="width:600px;height:400px"></iframe>
<script>
"use strict";
const frame = document.getElementById("view");
let initialized = false;
window.addEventListener("message", async (event) => {
  if (event.source !== frame.contentWindow) return;
  const msg = event.data;
  if (!msg || msg.jsonrpc !== "2.0" || typeof msg.method !== "string") return;
  const reply = (body) => frame.contentWindow.postMessage(Object.assign({ jsonrpc: "2.0", id: msg.id }, body), "*");
  if (msg.method === "ui/initialize") {
    reply({ result: { protocolVersion: "2026-01-26", hostInfo: { name: "switchboard-test-host", version: "1.0.0" },
      hostCapabilities: { serverTools: {} }, hostContext: { theme: "light", displayMode: "inline" } } });
  } else if (msg.method === "ui/notifications/initialized") {
    initialized = true;
  } else if (msg.method === "tools/call" && msg.id !== undefined) {
    const r = await fetch("/rpc", { method: "POST", body: JSON.stringify({ initialized, params: msg.params }) });
    reply(await r.json());
  } else if (msg.id !== undefined) {
    reply({ error: { code: -32601, message: "not offered by this host" } });
  }
});
</script></body></html>`;
}

async function main() {
  const init = await rpc("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: { extensions: { [UI]: { mimeTypes: [APP_MIME] } } },
    clientInfo: { name: "switchboard-browser-host", version: "1.0.0" },
  });
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
  check("the server declares the ui extension", init.result?.capabilities?.extensions?.[UI] ? [] : [JSON.stringify(init).slice(0, 300)]);
  const tools = (await rpc("tools/list", {})).result?.tools ?? [];
  const link = tools.find((t) => t.name === "search_notes")?._meta?.ui;
  check("search_notes links to the view", link?.resourceUri === VIEW ? [] : [JSON.stringify(link)]);
  const read = await rpc("resources/read", { uri: VIEW });
  const contents = read.result?.contents?.[0] ?? {};
  check("the view is read as the app MIME type", contents.mimeType === APP_MIME ? [] : [JSON.stringify(read).slice(0, 300)]);
  const html = contents.text ?? "";
  const csp = cspOf(contents._meta?.ui?.csp);

  const calls = [];
  const viewServer = await listen((req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", "content-security-policy": csp });
    res.end(html);
  });
  const viewUrl = `http://127.0.0.1:${viewServer.address().port}/view`;
  const hostServer = await listen(async (req, res) => {
    if (req.method === "POST" && req.url === "/rpc") {
      let body = "";
      for await (const chunk of req) body += chunk;
      const { initialized, params } = JSON.parse(body);
      calls.push({ initialized, ...params });
      const tool = tools.find((t) => t.name === params?.name);
      const visibility = tool?._meta?.ui?.visibility ?? ["model", "app"];
      let answer;
      if (!tool || !visibility.includes("app")) {
        answer = { error: { code: -32602, message: "not callable from this app" } };
      } else {
        const r = await rpc("tools/call", params);
        answer = r.error ? { error: r.error } : { result: r.result };
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(answer));
      return;
    }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(hostPage(viewUrl));
  });
  const hostUrl = `http://127.0.0.1:${hostServer.address().port}/`;

  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"] });
  try {
    const page = await browser.newPage();
    const cspErrors = [];
    page.on("console", (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) cspErrors.push(m.text());
    });
    await page.goto(hostUrl);
    const view = page.frameLocator("#view");
    await view.locator("#notes li").first().waitFor({ timeout: WAIT_MS });
    const shown = await view.locator("#notes li").allTextContents();
    check("the view calls search_notes by itself through its host and lists the notes",
      shown.join(",") === "groceries,hello" ? [] : [`shown ${JSON.stringify(shown)}`]);
    check("the view's first call comes after ui/initialize and ui/notifications/initialized",
      calls[0]?.name === "search_notes" && calls[0]?.initialized === true && calls[0]?.arguments?.query === ""
        ? [] : [JSON.stringify(calls)]);
    await view.locator("#query").fill("GROC");
    await view.locator("#search button").click();
    await view.locator("#status", { hasText: "1 note" }).waitFor({ timeout: WAIT_MS });
    const found = await view.locator("#notes li").allTextContents();
    check("searching in the view calls search_notes with the query and shows the match",
      found.join(",") === "groceries" && calls.at(-1)?.arguments?.query === "GROC" ? [] : [`shown ${JSON.stringify(found)}, calls ${JSON.stringify(calls)}`]);
    check("the view runs under the CSP built from its _meta.ui with no violation", cspErrors.length === 0 ? [] : cspErrors.slice(0, 3));
  } finally {
    await browser.close();
    viewServer.close();
    hostServer.close();
  }
}

try {
  await main();
} catch (e) {
  check("the browser host ran", [String(e?.stack ?? e).replace(/\n/g, " | ").slice(0, 1500)]);
} finally {
  child.kill();
}
finish();
