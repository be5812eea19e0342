// The live session viewer (`switchboard record --ui ADDR`) in a real browser, during a session:
//
//   node interop/browser/live.mjs VIEWER_URL FIFO
//
// VIEWER_URL is the page `record --ui` serves; FIFO is the recorded client's input, still open,
// which this script writes the next request into once the page is loaded. Checks: the page
// loads and shows the frames so far; the `lifecycle` filter, unchecked before the request, is
// still unchecked after the redraw; the request and its answer appear without a reload, the
// counts and the rows agreeing; the page asks its own origin only (the page and session.json;
// every other request is aborted and fails the run).
//
// Prints `PASS name` / `FAIL name: why` per check, then `N passed, M failed`; exit 0 only when
// every check passed. Every wait is for an element or an event, bounded by a timeout.

import { appendFileSync } from "node:fs";
import { chromium } from "playwright-core";
import { checks } from "./checks.mjs";

const [viewerUrl, fifo] = process.argv.slice(2);
if (!viewerUrl || !fifo) {
  console.error("usage: node interop/browser/live.mjs VIEWER_URL FIFO");
  process.exit(2);
}
const origin = new URL(viewerUrl).origin;
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const WAIT_MS = 20_000;

const { check, finish } = checks();

const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"] });
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 700 } });
  page.setDefaultTimeout(WAIT_MS);
  const requests = [];
  await page.route("**/*", (route) => {
    const u = route.request().url();
    requests.push(u);
    return new URL(u).origin === origin ? route.continue() : route.abort();
  });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));

  await page.goto(viewerUrl);
  await page.waitForSelector("body[data-ready='true']");
  // The handshake the shell wrote before the page opened: three frames.
  await page.waitForFunction(() => Number(document.getElementById("frame-count").dataset.count) >= 3);
  const before = await page.evaluate(() => Number(document.getElementById("frame-count").dataset.count));
  check(`the live page loads and shows the ${before} frames so far`, errors);

  await page.locator("#primitive-filters input[data-primitive='lifecycle']").uncheck();
  appendFileSync(
    fifo,
    JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "add", arguments: { a: 20, b: 22 } } }) + "\n",
  );
  await page.waitForSelector("#diagram .frame.response[data-primitive='tools']");
  const now = await page.evaluate(() => ({
    frames: Number(document.getElementById("frame-count").dataset.count),
    text: document.getElementById("frame-count").innerText,
    rows: document.querySelectorAll("#diagram .frame").length,
    call: document.querySelectorAll("#diagram .frame.request[data-primitive='tools']").length,
    lifecycleBox: document.querySelector("#primitive-filters input[data-primitive='lifecycle']").checked,
    lifecycleShown: document.querySelectorAll("#diagram .frame[data-primitive='lifecycle']:not(.hidden)").length,
    lifecycleRows: document.querySelectorAll("#diagram .frame[data-primitive='lifecycle']").length,
    answer: document.querySelector("#diagram .frame.response[data-primitive='tools']").dataset.refersTo,
  }));
  const p = [];
  if (now.frames !== before + 2) p.push(`frame count ${now.frames}, want ${before + 2}`);
  if (now.text !== String(now.frames)) p.push(`the count reads ${now.text}`);
  if (now.rows !== now.frames) p.push(`${now.rows} rows for ${now.frames} frames`);
  if (now.call !== 1) p.push(`${now.call} tools/call requests drawn`);
  const callIndex = await page.locator("#diagram .frame.request[data-primitive='tools']").getAttribute("data-index");
  if (now.answer !== callIndex) p.push(`the answer refers to #${now.answer}, the call is #${callIndex}`);
  check("the request written after the page loaded and its answer appear without a reload", p);
  const f = [];
  if (now.lifecycleBox) f.push("the lifecycle filter was checked again");
  if (now.lifecycleShown !== 0) f.push(`${now.lifecycleShown} of ${now.lifecycleRows} lifecycle rows shown`);
  if (now.lifecycleRows < 3) f.push(`${now.lifecycleRows} lifecycle rows`);
  check("a filter unchecked before the redraw stays unchecked after it", f);

  const outside = requests.filter((u) => new URL(u).origin !== origin);
  const polls = requests.filter((u) => new URL(u).pathname === "/session.json").length;
  const n = [];
  if (outside.length) n.push(`requests: ${outside.join(", ")}`);
  if (polls < 1) n.push("session.json was never asked for");
  check(`the page asks its own origin only (${polls} polls of session.json)`, n);
} catch (e) {
  check("the live viewer ran to its end", [String(e)]);
} finally {
  await browser.close();
}
finish();
