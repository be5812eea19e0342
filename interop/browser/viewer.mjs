// The session viewer (`switchboard trace FILE --html`) in a real browser:
//
//   node interop/browser/viewer.mjs PAGE.html FRAMES VIOLATIONS
//
// Serves PAGE.html on 127.0.0.1 (the only thing served) and opens it in Debian's Chromium, headless,
// driven by playwright-core. FRAMES and VIOLATIONS are what `switchboard trace --json` counted for
// the same recording. Checks: the page makes no request but for itself (every other request is
// aborted and fails the run); it states both counts and draws one row per frame, the violations
// marked; no script from a frame runs (no dialog); a frame's JSON opens as text; following an
// answer's link scrolls to and highlights its request, and the request's link leads back; the
// primitive filter hides that primitive's rows.
//
// Prints `PASS name` / `FAIL name: why` per check, then `N passed, M failed`; exit 0 only when
// every check passed. Every wait is for an element or an event, bounded by a timeout.

import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { chromium } from "playwright-core";
import { checks } from "./checks.mjs";

const [pagePath, framesArg, violationsArg] = process.argv.slice(2);
if (!pagePath || framesArg === undefined || violationsArg === undefined) {
  console.error("usage: node interop/browser/viewer.mjs PAGE.html FRAMES VIOLATIONS");
  process.exit(2);
}
const FRAMES = Number(framesArg);
const VIOLATIONS = Number(violationsArg);
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const WAIT_MS = 20_000;
const html = readFileSync(pagePath);

const { check, finish } = checks();

const served = [];
const server = createServer((req, res) => {
  served.push(req.url);
  if (req.url === "/viewer.html") {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(html);
  } else {
    res.writeHead(404);
    res.end();
  }
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${server.address().port}/viewer.html`;

const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"] });
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 700 } });
  page.setDefaultTimeout(WAIT_MS);
  const requests = [];
  await page.route("**/*", (route) => {
    const u = route.request().url();
    requests.push(u);
    return u === url ? route.continue() : route.abort();
  });
  const dialogs = [];
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    d.dismiss().catch(() => {});
  });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));

  await page.goto(url);
  await page.waitForSelector("body[data-ready='true']");
  check("the page loads and its script runs without error", errors);

  const counts = await page.evaluate(() => ({
    frames: document.getElementById("frame-count").dataset.count,
    framesText: document.getElementById("frame-count").innerText,
    violations: document.getElementById("violation-count").dataset.count,
    violationsText: document.getElementById("violation-count").innerText,
    rows: document.querySelectorAll("#diagram .frame").length,
    violationRows: document.querySelectorAll("#diagram .frame.violation").length,
    marked: [...document.querySelectorAll("#diagram .frame")].reduce((n, r) => n + Number(r.dataset.violations), 0),
    shownViolations: document.querySelectorAll("#diagram .viol").length,
  }));
  const p = [];
  if (counts.frames !== String(FRAMES) || counts.framesText !== String(FRAMES)) p.push(`frame count ${counts.frames}/${counts.framesText}, want ${FRAMES}`);
  if (counts.rows !== FRAMES) p.push(`${counts.rows} rows, want ${FRAMES}`);
  check(`the page states ${FRAMES} frames and draws one row per frame`, p);
  const v = [];
  if (counts.violations !== String(VIOLATIONS) || counts.violationsText !== String(VIOLATIONS)) v.push(`violation count ${counts.violations}/${counts.violationsText}, want ${VIOLATIONS}`);
  if (VIOLATIONS < 1) v.push("the recording must hold a violation");
  if (counts.marked !== VIOLATIONS || counts.shownViolations !== VIOLATIONS) v.push(`${counts.marked} marked, ${counts.shownViolations} shown, want ${VIOLATIONS}`);
  if (counts.violationRows < 1) v.push("no row highlighted as a violation");
  check(`the page states ${VIOLATIONS} violations and highlights their rows`, v);

  // The hostile frame's JSON opens as text; its script never ran.
  const hostileRow = page.locator("#diagram .frame.request", { hasText: "tools/call" }).last();
  await hostileRow.locator(".msg").click();
  const raw = await hostileRow.locator("pre.raw").innerText();
  const h = [];
  if (!raw.includes("</script><script>alert(1)</script>")) h.push(`raw JSON shown: ${raw.slice(0, 200)}`);
  if (dialogs.length) h.push(`dialogs: ${dialogs.join(", ")}`);
  check("a frame holding </script><script>alert(1)</script> shows as text and runs nothing", h);

  // An answer's link: scrolls to its request and highlights it; the request links back.
  const answer = page.locator("#diagram .frame.response").filter({ has: page.locator("a.link") }).last();
  const answerIndex = await answer.getAttribute("data-index");
  const target = await answer.getAttribute("data-refers-to");
  await page.evaluate(() => window.scrollTo(0, 0));
  await answer.locator("a.link", { hasText: "answers" }).click();
  await page.waitForSelector(`#f-${target}.highlight`);
  const l = [];
  const inView = await page.locator(`#f-${target}`).evaluate((e) => {
    const r = e.getBoundingClientRect();
    return r.top >= 0 && r.bottom <= window.innerHeight;
  });
  if (!inView) l.push(`request #${target} not scrolled into view`);
  const lit = await page.locator("#diagram .frame.highlight").count();
  if (lit !== 1) l.push(`${lit} rows highlighted`);
  await page.locator(`#f-${target} a.link[data-target='${answerIndex}']`).click();
  await page.waitForSelector(`#f-${answerIndex}.highlight`);
  if (await page.locator(`#f-${target}.highlight`).count()) l.push("the request stayed highlighted");
  check(`the answer #${answerIndex}'s link highlights its request #${target}, whose link leads back`, l);

  // The filter by primitive.
  const tools = await page.locator("#diagram .frame[data-primitive='tools']").count();
  await page.locator("#primitive-filters input[data-primitive='tools']").uncheck();
  const visible = await page.locator("#diagram .frame:not(.hidden)").count();
  const f = [];
  if (tools < 1) f.push("no tools frame");
  if (visible !== FRAMES - tools) f.push(`${visible} rows visible, want ${FRAMES - tools}`);
  check(`unchecking the tools filter hides its ${tools} rows`, f);

  const outside = requests.filter((u) => u !== url);
  const n = [];
  if (outside.length) n.push(`requests: ${outside.join(", ")}`);
  if (!requests.includes(url)) n.push("the page itself was not requested through the route");
  check("the page makes no network request but for itself", n);
} catch (e) {
  check("the viewer ran to its end", [String(e)]);
} finally {
  await browser.close();
  server.close();
}
finish();
