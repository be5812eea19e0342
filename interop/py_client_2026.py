#!/usr/bin/env python3
"""Interop client across eras: the official Python SDK (`mcp` 2.3) `Client` in revision 2026-07-28
walks the everything server's modern contract (EVERYTHING-SERVER.md, the 2026 fixtures, and
../shared/spec/SPEC-2026-NOTES.md) against a Switchboard server.

    python interop/py_client_2026.py [--bin PATH] [--trace]            spawn `PATH serve --stdio`
    python interop/py_client_2026.py [--trace] -- CMD [ARGS...]        spawn any stdio server command
    python interop/py_client_2026.py --http http://127.0.0.1:PORT/mcp  Streamable HTTP

Two connections: the first with `mode="2026-07-28"` (the pinned revision; the SDK adopts it without
a probe) walks the whole contract; the second with `mode="auto"` must pick the modern era from its
`server/discover` probe, with no `initialize` on the wire. Same checks, same names as
ts-client-2026.mjs.

Prints one line per check (`PASS name` / `FAIL name: why`), then exactly `N passed, M failed`;
exits 0 only when every check passed. Payloads are checked on the raw JSON-RPC frames (a tap on the
transport's streams; over HTTP also the request headers, through an httpx event hook), and the
SDK must accept each result too.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
import warnings
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Callable

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPDeprecationWarning

warnings.simplefilter("ignore", MCPDeprecationWarning)
warnings.simplefilter("ignore", DeprecationWarning)

REPO = Path(__file__).resolve().parent.parent
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
VERSION = "2026-07-28"
PV_KEY = "io.modelcontextprotocol/protocolVersion"
CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SUB_ID_KEY = "io.modelcontextprotocol/subscriptionId"
REQUEST_TIMEOUT_S = 15.0
NOTIFY_WAIT_S = 3.0
QUIET_WAIT_S = 0.4
OVERALL_TIMEOUT_S = 180.0

# ---------------------------------------------------------------- checks and output

passed = 0
failed = 0


def J(v: Any) -> str:
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def out(line: str) -> None:
    print(line, flush=True)


def ok(name: str) -> None:
    global passed
    passed += 1
    out(f"PASS {name}")


def bad(name: str, why: str) -> None:
    global failed
    failed += 1
    out(f"FAIL {name}: {why}")


def check(name: str, problems: list[str]) -> None:
    """One check: PASS when `problems` is empty, else FAIL naming all of them."""
    if problems:
        bad(name, "; ".join(problems))
    else:
        ok(name)


# ---------------------------------------------------------------- the wire tap


class Tap:
    """Every JSON-RPC message in both directions, and over HTTP every POST's headers."""

    def __init__(self, trace: bool) -> None:
        self.log: list[tuple[str, dict]] = []  # ("in"|"out", message)
        self.http: list[dict[str, str]] = []  # request headers, lower-cased names
        self.trace = trace

    def record(self, direction: str, item: Any) -> None:
        if isinstance(item, Exception):
            if self.trace:
                print(f"!! {item!r}", file=sys.stderr)
            return
        msg = item.message.model_dump(by_alias=True, mode="json", exclude_unset=True)
        self.log.append((direction, msg))
        if self.trace:
            print(f"{'>>' if direction == 'out' else '<<'} {json.dumps(msg)}", file=sys.stderr, flush=True)

    async def on_http_request(self, request: Any) -> None:
        if request.method == "POST":
            self.http.append({k.lower(): v for k, v in request.headers.items()})

    def mark(self) -> int:
        return len(self.log)

    def requests(self, start: int, method: str | None = None) -> list[dict]:
        return [m for d, m in self.log[start:] if d == "out" and "id" in m and "method" in m and (method is None or m["method"] == method)]

    def reply(self, req: dict) -> dict | None:
        for d, m in self.log:
            if d == "in" and "method" not in m and m.get("id") == req["id"]:
                return m
        return None

    def inbound(self, start: int, pred: Callable[[dict], bool]) -> list[dict]:
        return [m for d, m in self.log[start:] if d == "in" and pred(m)]


class _TapRead:
    def __init__(self, inner: Any, tap: Tap) -> None:
        self._inner, self._tap = inner, tap

    async def receive(self) -> Any:
        item = await self._inner.receive()
        self._tap.record("in", item)
        return item

    def __aiter__(self) -> "_TapRead":
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> "_TapRead":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _TapWrite:
    def __init__(self, inner: Any, tap: Tap) -> None:
        self._inner, self._tap = inner, tap

    async def send(self, item: Any) -> None:
        self._tap.record("out", item)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> "_TapWrite":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@asynccontextmanager
async def tapped(transport: Any, tap: Tap):
    async with transport as (read, write):
        yield _TapRead(read, tap), _TapWrite(write, tap)


async def sdk(coro_fn: Callable[[], Any]) -> tuple[Any, BaseException | None]:
    """Runs one SDK call; returns its value or the exception it raised."""
    try:
        with anyio.fail_after(REQUEST_TIMEOUT_S + 5):
            return await coro_fn(), None
    except Exception as e:  # noqa: BLE001 - reported by the check
        return None, e


async def wait_for(tap: Tap, start: int, pred: Callable[[dict], bool], seconds: float = NOTIFY_WAIT_S) -> list[dict]:
    deadline = time.monotonic() + seconds
    while True:
        found = tap.inbound(start, pred)
        if found or time.monotonic() >= deadline:
            return found
        await anyio.sleep(0.01)


def result_of(tap: Tap, req: dict | None) -> tuple[dict | None, str | None]:
    """The raw result answering `req`, or why there is none."""
    if req is None:
        return None, "request not sent"
    reply = tap.reply(req)
    if reply is None:
        return None, f"no reply to {req['method']} id {J(req['id'])}"
    if "error" in reply:
        return None, f"JSON-RPC error {J(reply['error'])}"
    return reply["result"], None


def cache_hints(res: dict) -> list[str]:
    """[D26-90] [D26-91]: `ttlMs` an integer >= 0 and `cacheScope` public or private."""
    problems = []
    ttl = res.get("ttlMs")
    if not isinstance(ttl, int) or isinstance(ttl, bool) or ttl < 0:
        problems.append(f"ttlMs {J(ttl)} is not an integer >= 0")
    if res.get("cacheScope") not in ("public", "private"):
        problems.append(f"cacheScope {J(res.get('cacheScope'))} is not public or private")
    return problems


# ---------------------------------------------------------------- the contract

CONTRACT_TOOLS = [
    "test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
    "test_resource_link", "test_multiple_content_types", "test_error_handling", "test_tool_with_progress",
    "test_tool_with_logging", "test_list_roots", "test_structured_output", "test_sampling", "test_elicitation",
    "test_trigger_tool_change", "test_input_required_result_list_roots", "test_input_required_result_multi_round",
    "echo_region",
]
# The members of `Tool` in the 2026-07-28 schema (2025's `execution` is gone from it).
TOOL_FIELDS_2026 = ["_meta", "annotations", "description", "icons", "inputSchema", "name", "outputSchema", "title"]
CONTRACT_PROMPTS = ["test_simple_prompt", "test_prompt_with_arguments", "test_prompt_with_embedded_resource", "test_prompt_with_image"]
CONTRACT_CAPABILITIES = {
    "tools": {"listChanged": True},
    "resources": {"subscribe": True, "listChanged": True},
    "prompts": {"listChanged": True},
    "logging": {},
    "completions": {},
}
ELICIT_SCHEMA = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}
ELICIT_CONTENT = {"username": "ada", "email": "ada@example.com"}
ROOTS = [
    {"uri": "file:///tmp/switchboard-interop/root-a", "name": "root-a"},
    {"uri": "file:///tmp/switchboard-interop/root-b", "name": "root-b"},
]
LOG_MESSAGES = ["Tool execution started", "Tool processing data", "Tool execution completed"]
# What the elicitation handler answers, by the field the form asks for.
FORM_ANSWERS = {"name": "Ada", "city": "Paris", "context": "interop"}


class Handlers:
    """The SDK's own elicitation, sampling and roots callbacks; they record what they were asked."""

    def __init__(self) -> None:
        self.sampling: list[Any] = []
        self.elicitation: list[Any] = []
        self.roots = 0
        self.logs: list[Any] = []

    async def on_sampling(self, context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        self.sampling.append(params.model_dump(by_alias=True, mode="json", exclude_none=True))
        last = params.messages[-1].content
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=f"echo({getattr(last, 'text', None)})"),
            model="interop-echo-model",
            stop_reason="endTurn",
        )

    async def on_elicitation(self, context: Any, params: Any) -> types.ElicitResult:
        p = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        self.elicitation.append(p)
        props = (p.get("requestedSchema") or {}).get("properties") or {}
        if "username" in props:
            return types.ElicitResult(action="accept", content=ELICIT_CONTENT)
        return types.ElicitResult(action="accept", content={k: FORM_ANSWERS.get(k, "yes") for k in props})

    async def on_roots(self, context: Any) -> types.ListRootsResult:
        self.roots += 1
        return types.ListRootsResult(roots=[types.Root(uri=r["uri"], name=r["name"]) for r in ROOTS])

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params.model_dump(by_alias=True, mode="json", exclude_none=True))


def make_client(opts: argparse.Namespace, tap: Tap, handlers: Handlers, errlog: Any, mode: str, log_level: str | None = None) -> Client:
    if opts.http:
        http = create_mcp_http_client()
        http.event_hooks["request"] = [tap.on_http_request]
        transport = streamable_http_client(opts.http, http_client=http)
    else:
        transport = stdio_client(StdioServerParameters(command=opts.command[0], args=opts.command[1:]), errlog=errlog)
    return Client(
        tapped(transport, tap),
        sampling_callback=handlers.on_sampling,
        elicitation_callback=handlers.on_elicitation,
        list_roots_callback=handlers.on_roots,
        logging_callback=handlers.on_log,
        log_level=log_level,
        client_info=types.Implementation(name="switchboard-interop-py-2026", version="1.0.0"),
        read_timeout_seconds=REQUEST_TIMEOUT_S,
        mode=mode,
        cache=None,
    )


# ---------------------------------------------------------------- the walk


async def walk(opts: argparse.Namespace, errlog: Any) -> None:
    target = opts.http or " ".join(opts.command)
    out(f"# py_client_2026 (mcp Python SDK Client, revision {VERSION}) -> {target}")

    tap = Tap(opts.trace)
    handlers = Handlers()
    client = make_client(opts, tap, handlers, errlog, VERSION)
    connected = False
    try:
        async with client:
            connected = True
            await pinned_checks(client, tap, handlers, bool(opts.http))
    except Exception as e:  # noqa: BLE001
        if connected:
            raise
        bad("pin: connect", f"{e!r}")
    wire_checks("pin", tap)

    tap = Tap(opts.trace)
    handlers = Handlers()
    client = make_client(opts, tap, handlers, errlog, "auto", log_level="debug")
    connected = False
    try:
        async with client:
            connected = True
            await auto_checks(client, tap, handlers)
    except Exception as e:  # noqa: BLE001
        if connected:
            raise
        bad("auto: connect", f"{e!r}")
    wire_checks("auto", tap)

    # The SDK's own transport, untapped, as an application would build it: a URL or
    # `StdioServerParameters` straight into `Client`.
    server: Any = opts.http or StdioServerParameters(command=opts.command[0], args=opts.command[1:])
    problems: list[str] = []
    try:
        async with Client(server, mode="auto", read_timeout_seconds=REQUEST_TIMEOUT_S, cache=None,
                          client_info=types.Implementation(name="switchboard-interop-py-2026", version="1.0.0")) as plain:
            if plain.protocol_version != VERSION:
                problems.append(f"negotiated {J(plain.protocol_version)}")
            await list_every_page(plain)
            res, err = await sdk(lambda: plain.call_tool("test_simple_text", {}))
            text = res.content[0].text if res is not None and res.content and hasattr(res.content[0], "text") else None
            if text != "This is a simple text response for testing.":
                problems.append(f"test_simple_text gave {text!r} (SDK: {err!r})")
    except Exception as e:  # noqa: BLE001
        problems.append(f"connect: {e!r}")
    check("default transport: auto picks 2026-07-28 and calls a tool", problems)


def wire_checks(label: str, tap: Tap) -> None:
    """[D26-8] the envelope on every request and [D26-19] `resultType` on every result, over the whole connection."""
    problems = [] if tap.requests(0) else ["no request went over the wire"]
    for d, m in tap.log:
        if d != "out" or "method" not in m or "id" not in m:
            continue
        meta = (m.get("params") or {}).get("_meta") or {}
        if meta.get(PV_KEY) != VERSION or not isinstance(meta.get(CAPS_KEY), dict):
            problems.append(f"{m['method']} id {J(m['id'])} _meta {J(meta)}")
    check(f"{label}: every request carries the {VERSION} _meta envelope", problems[:3])
    problems = [] if any(d == "in" and "result" in m for d, m in tap.log) else ["no result came back"]
    for d, m in tap.log:
        if d == "in" and "result" in m and m["result"].get("resultType") not in ("complete", "input_required"):
            problems.append(f"id {J(m['id'])} resultType {J(m['result'].get('resultType'))}")
    check(f"{label}: every result carries resultType", problems[:3])


async def pinned_checks(client: Client, tap: Tap, h: Handlers, http: bool) -> None:
    check("pin: era 2026-07-28", [] if client.protocol_version == VERSION else [f"negotiated {J(client.protocol_version)}"])
    inits = tap.requests(0, "initialize")
    check("pin: no initialize on the wire", [f"{len(inits)} initialize requests sent"] if inits else [])

    # ---- server/discover (the pinned SDK adopts the version without a probe; ask explicitly)
    start = tap.mark()
    raw, err = await sdk(lambda: client.session.send_discover(VERSION))
    res, why = result_of(tap, (tap.requests(start, "server/discover") or [None])[0])
    problems = [why] if why else []
    if res is not None:
        if res.get("resultType") != "complete":
            problems.append(f"resultType {J(res.get('resultType'))}")
        if VERSION not in (res.get("supportedVersions") or []):
            problems.append(f"supportedVersions {J(res.get('supportedVersions'))} lacks {VERSION}")
        problems += cache_hints(res)
        info = (res.get("_meta") or {}).get(SERVER_INFO_KEY) or {}
        if not isinstance(info.get("name"), str) or not isinstance(info.get("version"), str):
            problems.append(f"_meta serverInfo {J(info)} lacks name/version")
        try:
            parsed = types.DiscoverResult.model_validate(raw).capabilities.model_dump(by_alias=True, mode="json", exclude_none=True)
            for k, v in CONTRACT_CAPABILITIES.items():
                if k not in parsed or any(parsed[k].get(f) != x for f, x in v.items()):
                    problems.append(f"capabilities.{k} is {J(parsed.get(k))}, expected {J(v)}")
        except Exception as e:  # noqa: BLE001
            problems.append(f"the SDK rejected the result: {e!r}")
    elif err is not None:
        problems.append(f"SDK: {err!r}")
    check("discover: serverInfo, capabilities and cache hints", problems)

    await check_tools(client, tap, h)
    await check_mrtr(client, tap, h)
    await check_resources(client, tap)
    await check_prompts(client, tap)
    await check_listen(client, tap)
    await check_logging(client, tap, h)
    if http:
        await check_region(client, tap)


async def auto_checks(client: Client, tap: Tap, h: Handlers) -> None:
    check("auto: era 2026-07-28", [] if client.protocol_version == VERSION else [f"negotiated {J(client.protocol_version)}"])
    reqs = tap.requests(0)
    problems = []
    if not reqs or reqs[0].get("method") != "server/discover":
        problems.append(f"first request is {J(reqs[0].get('method') if reqs else None)}, not server/discover")
    if tap.requests(0, "initialize"):
        problems.append("an initialize request went over the wire")
    check("auto: server/discover probe, no initialize", problems)
    info = client.server_info
    check("auto: serverInfo from discover", [] if info is not None and info.name else [f"server_info {info!r}"])

    # The client-level log level (`Client(log_level=...)`) stamps every request. (The SDK
    # validates structured content against the listed tool, so list every page first.)
    await list_every_page(client)
    start = tap.mark()
    h.logs.clear()
    res, err = await sdk(lambda: client.call_tool("test_tool_with_logging", {}))
    problems = [f"SDK: {err!r}"] if err else []
    req = (tap.requests(start, "tools/call") or [None])[0]
    if req is not None and ((req.get("params") or {}).get("_meta") or {}).get(LOG_LEVEL_KEY) != "debug":
        problems.append(f"request _meta {J(req['params'].get('_meta'))} lacks logLevel debug")
    msgs = tap.inbound(start, lambda m: m.get("method") == "notifications/message")
    data = [(m.get("params") or {}).get("data") for m in msgs]
    if data != LOG_MESSAGES:
        problems.append(f"notifications/message data {J(data)}, expected {J(LOG_MESSAGES)}")
    if [x.get("data") for x in h.logs] != LOG_MESSAGES:
        problems.append(f"the logging callback got {J(h.logs)}")
    check("auto: log level delivers test_tool_with_logging's messages", problems)


async def list_every_page(client: Client) -> None:
    """Lists every page of tools: the SDK validates a call's structured content against the tool
    as listed, and warns about a tool it has not seen."""
    cursor = None
    for _ in range(20):
        page, _err = await sdk(lambda c=cursor: client.list_tools(cursor=c, cache_mode="bypass"))
        cursor = page.next_cursor if page is not None else None
        if cursor is None:
            return


def call_text(res: Any) -> str | None:
    content = (res or {}).get("content") or []
    return content[0].get("text") if content and content[0].get("type") == "text" else None


async def call(client: Client, tap: Tap, name: str, args: dict | None, meta: dict | None = None) -> tuple[list[tuple[dict, dict | None]], Any, BaseException | None]:
    """Calls a tool through the SDK; returns every tools/call exchange it made (MRTR rounds included)."""
    start = tap.mark()
    value, err = await sdk(lambda: client.call_tool(name, args, meta=meta))
    return [(r, tap.reply(r)) for r in tap.requests(start, "tools/call")], value, err


def final_result(name: str, rounds: list[tuple[dict, dict | None]], err: BaseException | None) -> tuple[dict | None, list[str]]:
    if not rounds:
        return None, [f"no tools/call request sent (SDK: {err!r})"]
    reply = rounds[-1][1]
    if reply is None:
        return None, [f"no reply to the last tools/call (SDK: {err!r})"]
    if "error" in reply:
        return None, [f"JSON-RPC error {J(reply['error'])}"]
    if err is not None:
        return reply["result"], [f"the SDK raised {err!r} on {J(reply['result'])}"]
    return reply["result"], []


async def check_tools(client: Client, tap: Tap, h: Handlers) -> None:
    # ---- tools/list, every page
    start = tap.mark()
    names: list[str] = []
    stray: list[str] = []
    problems: list[str] = []
    cursor = None
    for _ in range(20):
        page, err = await sdk(lambda c=cursor: client.list_tools(cursor=c, cache_mode="bypass"))
        res, why = result_of(tap, (tap.requests(start, "tools/list") or [None])[-1])
        if why or err:
            problems.append(why or f"SDK: {err!r}")
            break
        problems += [f"page {len(tap.requests(start, 'tools/list'))}: {p}" for p in cache_hints(res)]
        names += [t.get("name") for t in res.get("tools", [])]
        stray += [f"{t.get('name')}.{k}" for t in res.get("tools", []) for k in t if k not in TOOL_FIELDS_2026]
        cursor = res.get("nextCursor")
        if cursor is None:
            break
    missing = [n for n in CONTRACT_TOOLS if n not in names]
    if missing:
        problems.append(f"missing tools {J(missing)} (listed {J(names)})")
    check("tools/list: contract tools on every page, with cache hints", problems)
    check("tools/list: only members of the 2026-07-28 Tool", [f"not in the schema: {J(stray)}"] if stray else [])

    # ---- plain calls
    rounds, _, err = await call(client, tap, "test_simple_text", {})
    res, problems = final_result("", rounds, err)
    if res is not None and not problems:
        want = [{"type": "text", "text": "This is a simple text response for testing."}]
        if res.get("content") != want or res.get("isError"):
            problems.append(f"result {J(res)}, expected content {J(want)}")
    check("tools/call test_simple_text", problems)

    rounds, value, err = await call(client, tap, "test_structured_output", {"a": 3, "b": 4})
    res, problems = final_result("", rounds, err)
    if res is not None and not problems:
        if res.get("structuredContent") != {"sum": 7, "product": 12}:
            problems.append(f"structuredContent {J(res.get('structuredContent'))}, expected {J({'sum': 7, 'product': 12})}")
        text = call_text(res)
        if text is None or json.loads(text) != {"sum": 7, "product": 12}:
            problems.append(f"content[0] text {J(text)} is not the JSON of structuredContent")
        if value is not None and value.structured_content != {"sum": 7, "product": 12}:
            problems.append(f"the SDK's structured_content is {J(value.structured_content)}")
    check("tools/call test_structured_output", problems)

    rounds, _, err = await call(client, tap, "test_image_content", {})
    res, problems = final_result("", rounds, err)
    if res is not None and not problems and res.get("content") != [{"type": "image", "data": PNG, "mimeType": "image/png"}]:
        problems.append(f"content {J(res.get('content'))}")
    check("tools/call test_image_content", problems)

    rounds, value, err = await call(client, tap, "test_error_handling", {})
    res, problems = final_result("", rounds, err)
    if res is not None and not problems:
        if res.get("isError") is not True:
            problems.append(f"isError {J(res.get('isError'))}, expected true")
        if call_text(res) != "This tool intentionally returns an error for testing":
            problems.append(f"content {J(res.get('content'))}")
        if value is not None and value.is_error is not True:
            problems.append("the SDK's is_error is not True")
    check("tools/call test_error_handling: an isError result, not a protocol error", problems)

    # [D26-...] §13: an unknown tool is a JSON-RPC error -32602.
    rounds, _, err = await call(client, tap, "no_such_tool_xyz", {})
    reply = rounds[-1][1] if rounds else None
    if reply is None:
        bad("tools/call unknown tool: -32602", f"no reply (SDK: {err!r})")
    elif "error" not in reply:
        bad("tools/call unknown tool: -32602", f"got a result {J(reply.get('result'))}")
    else:
        code = reply["error"].get("code")
        problems = [] if code == -32602 else [f"error {J(reply['error'])}"]
        if err is None:
            problems.append("the SDK did not raise")
        elif getattr(getattr(err, "error", None), "code", None) != -32602:
            problems.append(f"the SDK raised {err!r}, not an MCPError with code -32602")
        check("tools/call unknown tool: -32602", problems)


def mrtr_wire(rounds: list[tuple[dict, dict | None]], methods_per_round: list[list[str]]) -> list[str]:
    """The input-required rounds on the wire ([D26-42..45]): each round's `inputRequests` hold the
    expected embedded methods, and each retry is a new id carrying `inputResponses` for exactly those
    keys and the byte-exact `requestState`."""
    problems = []
    if len(rounds) != len(methods_per_round) + 1:
        return [f"{len(rounds)} requests, expected {len(methods_per_round) + 1} (an input-required round each, then the final one)"]
    ids = [r[0]["id"] for r in rounds]
    if len(set(map(J, ids))) != len(ids):
        problems.append(f"request ids repeat: {J(ids)}")
    for i, methods in enumerate(methods_per_round):
        req, reply = rounds[i]
        res = (reply or {}).get("result") or {}
        if res.get("resultType") != "input_required":
            problems.append(f"round {i + 1} answer is {J(reply)}, not input_required")
            continue
        ir = res.get("inputRequests") or {}
        got = sorted(v.get("method") for v in ir.values())
        if got != sorted(methods):
            problems.append(f"round {i + 1} inputRequests methods {J(got)}, expected {J(sorted(methods))}")
        if "ttlMs" in res or "cacheScope" in res:
            problems.append(f"round {i + 1} input_required result carries cache hints [D26-92]")
        retry = rounds[i + 1][0]["params"]
        if sorted((retry.get("inputResponses") or {}).keys()) != sorted(ir.keys()):
            problems.append(f"retry {i + 1} inputResponses keys {J(sorted((retry.get('inputResponses') or {}).keys()))}, expected {J(sorted(ir.keys()))}")
        if "requestState" in res and retry.get("requestState") != res["requestState"]:
            problems.append(f"retry {i + 1} requestState is not the byte-exact echo")
        if "requestState" not in res and "requestState" in retry:
            problems.append(f"retry {i + 1} sends a requestState the server never gave [D26-44]")
        if retry.get("name") != req["params"].get("name") or retry.get("arguments") != req["params"].get("arguments"):
            problems.append(f"retry {i + 1} changed the original params")
    return problems


async def check_mrtr(client: Client, tap: Tap, h: Handlers) -> None:
    h.elicitation.clear()
    rounds, _, err = await call(client, tap, "test_elicitation", {"message": "Who are you?"})
    res, problems = final_result("", rounds, err)
    problems += mrtr_wire(rounds, [["elicitation/create"]])
    if len(h.elicitation) != 1:
        problems.append(f"the elicitation callback ran {len(h.elicitation)} times")
    else:
        p = h.elicitation[0]
        if p.get("message") != "Who are you?" or p.get("requestedSchema") != ELICIT_SCHEMA:
            problems.append(f"the callback was asked {J(p)}")
    prefix = "User response: action=accept, content="
    text = call_text(res) if res else None
    if res is not None and (text is None or not text.startswith(prefix) or json.loads(text[len(prefix):]) != ELICIT_CONTENT):
        problems.append(f"text {J(text)}, expected {J(prefix + J(ELICIT_CONTENT))}")
    check("input-required test_elicitation: answered by the elicitation callback", problems)

    h.sampling.clear()
    rounds, _, err = await call(client, tap, "test_sampling", {"prompt": "What is 2+2?"})
    res, problems = final_result("", rounds, err)
    problems += mrtr_wire(rounds, [["sampling/createMessage"]])
    want_msgs = [{"role": "user", "content": {"type": "text", "text": "What is 2+2?"}}]
    if len(h.sampling) != 1 or h.sampling[0].get("messages") != want_msgs or h.sampling[0].get("maxTokens") != 100:
        problems.append(f"the sampling callback was asked {J(h.sampling)}")
    if res is not None and call_text(res) != "LLM response: echo(What is 2+2?)":
        problems.append(f"text {J(call_text(res))}")
    check("input-required test_sampling: answered by the sampling callback", problems)

    h.roots = 0
    rounds, _, err = await call(client, tap, "test_list_roots", {})
    res, problems = final_result("", rounds, err)
    problems += mrtr_wire(rounds, [["roots/list"]])
    if h.roots != 1:
        problems.append(f"the roots callback ran {h.roots} times")
    text = call_text(res) if res else None
    if res is not None and (text is None or not text.startswith("Roots: ") or json.loads(text[7:]) != ROOTS):
        problems.append(f"text {J(text)}, expected Roots: {J(ROOTS)}")
    check("input-required test_list_roots: answered by the roots callback", problems)

    h.roots = 0
    rounds, _, err = await call(client, tap, "test_input_required_result_list_roots", {})
    res, problems = final_result("", rounds, err)
    problems += mrtr_wire(rounds, [["roots/list"]])
    want = "Roots: " + ", ".join(r["uri"] for r in ROOTS)
    if res is not None and call_text(res) != want:
        problems.append(f"text {J(call_text(res))}, expected {J(want)}")
    check("input-required test_input_required_result_list_roots", problems)

    h.elicitation.clear()
    rounds, _, err = await call(client, tap, "test_input_required_result_multi_round", {})
    res, problems = final_result("", rounds, err)
    problems += mrtr_wire(rounds, [["elicitation/create"], ["elicitation/create"]])
    asked = [p.get("message") for p in h.elicitation]
    if asked != ["Step 1: your name?", "Step 2: your city?"]:
        problems.append(f"the elicitation callback was asked {J(asked)}")
    if res is not None and call_text(res) != "Ada from Paris":
        problems.append(f"text {J(call_text(res))}, expected \"Ada from Paris\"")
    check("input-required test_input_required_result_multi_round: two rounds", problems)


async def check_resources(client: Client, tap: Tap) -> None:
    start = tap.mark()
    uris: list[str] = []
    problems: list[str] = []
    cursor = None
    for _ in range(20):
        _, err = await sdk(lambda c=cursor: client.list_resources(cursor=c, cache_mode="bypass"))
        res, why = result_of(tap, (tap.requests(start, "resources/list") or [None])[-1])
        if why or err:
            problems.append(why or f"SDK: {err!r}")
            break
        problems += cache_hints(res)
        uris += [r.get("uri") for r in res.get("resources", [])]
        cursor = res.get("nextCursor")
        if cursor is None:
            break
    want = ["test://static-text", "test://static-binary", "test://watched-resource"] + [f"test://paginated/{i:02d}" for i in range(1, 26)]
    missing = [u for u in want if u not in uris]
    if missing:
        problems.append(f"missing {J(missing)}")
    pages = len(tap.requests(start, "resources/list"))
    if pages < 2:
        problems.append(f"{len(uris)} resources on {pages} page(s); the contract pages by 10")
    check("resources/list: every page, with cache hints", sorted(set(problems)))

    async def read(uri: str) -> tuple[dict | None, dict | None, BaseException | None]:
        start = tap.mark()
        _, err = await sdk(lambda: client.read_resource(uri, cache_mode="bypass"))
        req = (tap.requests(start, "resources/read") or [None])[0]
        return req, (tap.reply(req) if req else None), err

    _, reply, err = await read("test://static-text")
    res = (reply or {}).get("result")
    want = [{"uri": "test://static-text", "mimeType": "text/plain", "text": "This is the content of the static text resource."}]
    problems = [f"reply {J(reply)} (SDK: {err!r})"] if res is None or err else []
    if res is not None:
        problems += cache_hints(res)
        if res.get("contents") != want:
            problems.append(f"contents {J(res.get('contents'))}, expected {J(want)}")
    check("resources/read test://static-text", problems)

    _, reply, err = await read("test://template/42/data")
    res = (reply or {}).get("result")
    problems = [f"reply {J(reply)} (SDK: {err!r})"] if res is None or err else []
    if res is not None:
        c = (res.get("contents") or [{}])[0]
        if c.get("uri") != "test://template/42/data" or c.get("mimeType") != "application/json":
            problems.append(f"contents[0] {J(c)}")
        elif json.loads(c.get("text", "null")) != {"id": "42", "templateTest": True, "data": "Data for ID: 42"}:
            problems.append(f"text {J(c.get('text'))}")
    check("resources/read a template URI", problems)

    # [D26-98] an unknown resource is -32602, never -32002 and never an empty `contents`.
    _, reply, err = await read("test://no-such-resource")
    if reply is None:
        bad("resources/read unknown URI: -32602", f"no reply (SDK: {err!r})")
    else:
        code = (reply.get("error") or {}).get("code")
        problems = [] if code == -32602 else [f"reply {J(reply)}"]
        if err is None:
            problems.append("the SDK did not raise")
        check("resources/read unknown URI: -32602", problems)


async def check_prompts(client: Client, tap: Tap) -> None:
    start = tap.mark()
    _, err = await sdk(lambda: client.list_prompts(cache_mode="bypass"))
    res, why = result_of(tap, (tap.requests(start, "prompts/list") or [None])[0])
    problems = [why or f"SDK: {err!r}"] if why or err else []
    if res is not None:
        problems += cache_hints(res)
        names = [p.get("name") for p in res.get("prompts", [])]
        missing = [n for n in CONTRACT_PROMPTS if n not in names]
        if missing:
            problems.append(f"missing {J(missing)} (listed {J(names)})")
    check("prompts/list", problems)

    start = tap.mark()
    value, err = await sdk(lambda: client.get_prompt("test_prompt_with_arguments", {"arg1": "x", "arg2": "y"}))
    res, why = result_of(tap, (tap.requests(start, "prompts/get") or [None])[0])
    problems = [why or f"SDK: {err!r}"] if why or err else []
    want = [{"role": "user", "content": {"type": "text", "text": "Prompt with arguments: arg1='x', arg2='y'"}}]
    if res is not None and res.get("messages") != want:
        problems.append(f"messages {J(res.get('messages'))}, expected {J(want)}")
    check("prompts/get test_prompt_with_arguments", problems)

    # An input-required prompts/get, answered by the elicitation callback.
    h_start = tap.mark()
    value, err = await sdk(lambda: client.get_prompt("test_input_required_result_prompt", {}))
    rounds = [(r, tap.reply(r)) for r in tap.requests(h_start, "prompts/get")]
    problems = [f"SDK: {err!r}"] if err else []
    problems += mrtr_wire(rounds, [["elicitation/create"]])
    res = ((rounds[-1][1] or {}).get("result") if rounds else None) or {}
    want = [{"role": "user", "content": {"type": "text", "text": "Context: interop"}}]
    if res.get("messages") != want:
        problems.append(f"messages {J(res.get('messages'))}, expected {J(want)}")
    check("input-required prompts/get test_input_required_result_prompt", problems)

    start = tap.mark()
    ref = types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments")
    value, err = await sdk(lambda: client.complete(ref, {"name": "arg1", "value": "al"}))
    res, why = result_of(tap, (tap.requests(start, "completion/complete") or [None])[0])
    problems = [why or f"SDK: {err!r}"] if why or err else []
    want = {"values": ["alpha", "alpine"], "total": 2, "hasMore": False}
    if res is not None and res.get("completion") != want:
        problems.append(f"completion {J(res.get('completion'))}, expected {J(want)}")
    check("completion/complete arg1 \"al\"", problems)


async def check_listen(client: Client, tap: Tap) -> None:
    start = tap.mark()
    problems: list[str] = []
    events: list[Any] = []
    try:
        with anyio.fail_after(REQUEST_TIMEOUT_S):
            async with client.listen(tools_list_changed=True) as sub:
                if not sub.honored.tools_list_changed:
                    problems.append(f"honored filter {sub.honored!r} lacks toolsListChanged")
                req = (tap.requests(start, "subscriptions/listen") or [None])[0]
                acks = tap.inbound(start, lambda m: m.get("method") == "notifications/subscriptions/acknowledged")
                if req is None or not acks:
                    problems.append("no listen request or no acknowledgement on the wire")
                elif ((acks[0].get("params") or {}).get("_meta") or {}).get(SUB_ID_KEY) != req["id"]:
                    problems.append(f"the acknowledgement's subscriptionId is not {J(req['id'])}: {J(acks[0])}")
                check("subscriptions/listen: acknowledged with the tools filter", problems)
                problems = []

                mark = tap.mark()
                _, _, err = await call(client, tap, "test_trigger_tool_change", {})
                if err:
                    problems.append(f"test_trigger_tool_change: {err!r}")
                with anyio.move_on_after(NOTIFY_WAIT_S):
                    async for event in sub:
                        events.append(event)
                        break
                found = tap.inbound(mark, lambda m: m.get("method") == "notifications/tools/list_changed")
                if not found:
                    problems.append("no notifications/tools/list_changed on the wire")
                elif req is not None and ((found[0].get("params") or {}).get("_meta") or {}).get(SUB_ID_KEY) != req["id"]:
                    problems.append(f"list_changed lacks subscriptionId {J(req['id'])}: {J(found[0])}")
                if not events or type(events[0]).__name__ != "ToolsListChanged":
                    problems.append(f"the subscription yielded {events!r}, expected a ToolsListChanged event")
                others = tap.inbound(mark, lambda m: m.get("method") in ("notifications/prompts/list_changed", "notifications/resources/list_changed"))
                if others:
                    problems.append(f"notifications the filter did not ask for [D26-69]: {J(others)}")
    except Exception as e:  # noqa: BLE001
        problems.append(f"listen: {e!r}")
    check("subscriptions/listen: tools list_changed after test_trigger_tool_change", problems)
    # Put the list back as it was.
    await sdk(lambda: client.call_tool("test_trigger_tool_change", {}))


async def check_logging(client: Client, tap: Tap, h: Handlers) -> None:
    # [D26-84] no logLevel in _meta: no notifications/message.
    h.logs.clear()
    start = tap.mark()
    rounds, _, err = await call(client, tap, "test_tool_with_logging", {})
    res, problems = final_result("", rounds, err)
    await anyio.sleep(QUIET_WAIT_S)
    msgs = tap.inbound(start, lambda m: m.get("method") == "notifications/message")
    if msgs:
        problems.append(f"{len(msgs)} notifications/message without a log level: {J(msgs[0])}")
    check("logging: no notifications/message without a log level", problems)

    # A per-request level (`meta=` on the call overrides the client's default).
    h.logs.clear()
    start = tap.mark()
    rounds, _, err = await call(client, tap, "test_tool_with_logging", {}, meta={LOG_LEVEL_KEY: "debug"})
    res, problems = final_result("", rounds, err)
    if rounds and ((rounds[0][0].get("params") or {}).get("_meta") or {}).get(LOG_LEVEL_KEY) != "debug":
        problems.append(f"request _meta {J(rounds[0][0]['params'].get('_meta'))} lacks logLevel debug")
    msgs = tap.inbound(start, lambda m: m.get("method") == "notifications/message")
    got = [((m.get("params") or {}).get("level"), (m.get("params") or {}).get("data")) for m in msgs]
    if got != [("info", d) for d in LOG_MESSAGES]:
        problems.append(f"notifications/message {J(got)}, expected three info messages {J(LOG_MESSAGES)}")
    if res is not None and call_text(res) != "Tool with logging executed successfully":
        problems.append(f"text {J(call_text(res))}")
    if [x.get("data") for x in h.logs] != LOG_MESSAGES:
        problems.append(f"the logging callback got {J(h.logs)}")
    check("logging: a per-request log level delivers test_tool_with_logging's messages", problems)

    # Only messages at or above the request's level: the tool logs at info, so warning gets none.
    start = tap.mark()
    rounds, _, err = await call(client, tap, "test_tool_with_logging", {}, meta={LOG_LEVEL_KEY: "warning"})
    res, problems = final_result("", rounds, err)
    await anyio.sleep(QUIET_WAIT_S)
    msgs = tap.inbound(start, lambda m: m.get("method") == "notifications/message")
    if msgs:
        problems.append(f"{len(msgs)} notifications/message below the level warning: {J(msgs[0])}")
    check("logging: a per-request level filters lower levels", problems)


async def check_region(client: Client, tap: Tap) -> None:
    """[D26-62] the `x-mcp-header` argument mirrored into `Mcp-Param-Region` (the SDK reads the
    annotation from its last tools/list, which check_tools made)."""
    h0 = len(tap.http)
    rounds, _, err = await call(client, tap, "echo_region", {"region": "eu-west-1"})
    res, problems = final_result("", rounds, err)
    posts = [h for h in tap.http[h0:] if h.get("mcp-method") == "tools/call"]
    if not posts:
        problems.append("no tools/call POST seen")
    else:
        hdr = posts[-1]
        if hdr.get("mcp-param-region") != "eu-west-1":
            problems.append(f"Mcp-Param-Region is {J(hdr.get('mcp-param-region'))}")
        if hdr.get("mcp-name") != "echo_region" or hdr.get("mcp-protocol-version") != VERSION:
            problems.append(f"headers {J(hdr)}")
    if res is not None and call_text(res) != "Region: eu-west-1":
        problems.append(f"text {J(call_text(res))}")
    check("http: echo_region with Mcp-Param-Region", problems)


# ---------------------------------------------------------------- entry point


def parse_args(argv: list[str]) -> argparse.Namespace:
    command = None
    if "--" in argv:
        i = argv.index("--")
        argv, command = argv[:i], argv[i + 1 :]
    ap = argparse.ArgumentParser(description="Python SDK interop client (revision 2026-07-28) for the Switchboard everything server")
    ap.add_argument("--bin", default=os.environ.get("SWITCHBOARD_BIN") or str(REPO / "target/debug/switchboard"))
    ap.add_argument("--http", default=None, help="Streamable HTTP endpoint, e.g. http://127.0.0.1:PORT/mcp")
    ap.add_argument("--trace", action="store_true", help="print every frame (and the server's stderr) on stderr")
    opts = ap.parse_args(argv)
    opts.command = command if command else (None if opts.http else [opts.bin, "serve", "--stdio"])
    return opts


async def amain(opts: argparse.Namespace) -> None:
    with tempfile.TemporaryFile(mode="w+") as errlog:
        try:
            with anyio.fail_after(OVERALL_TIMEOUT_S):
                await walk(opts, errlog)
        except TimeoutError:
            bad("harness: overall time limit", f"the walk did not finish within {OVERALL_TIMEOUT_S} s")
        except Exception as e:  # noqa: BLE001
            import traceback

            bad("harness: uncaught error", "".join(traceback.format_exception(e)).replace("\n", " | "))
        if not opts.http:
            errlog.seek(0)
            stderr_text = errlog.read()
            if opts.trace and stderr_text:
                sys.stderr.write(f"[server stderr]\n{stderr_text}")
            if passed + failed > 1:
                check("server stderr: no panic", [stderr_text[-2000:]] if re.search(r"panicked at", stderr_text) else [])


def main() -> int:
    opts = parse_args(sys.argv[1:])
    anyio.run(amain, opts)
    if passed + failed == 0:
        bad("harness", "no check ran")
    out(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
