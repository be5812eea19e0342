#!/usr/bin/env python3
"""Interop client: the official Python SDK (`mcp` 2.x) `Client` walks the whole EVERYTHING-SERVER
contract (../shared/conformance/EVERYTHING-SERVER.md) against a server.

    python interop/py_client.py [--bin PATH] [--trace]            spawn `PATH serve --stdio`
    python interop/py_client.py [--trace] -- CMD [ARGS...]        spawn any stdio server command
    python interop/py_client.py --http http://127.0.0.1:PORT/mcp  Streamable HTTP (once `serve --http` lands)

PATH defaults to $SWITCHBOARD_BIN, else <repo>/target/debug/switchboard. The client connects in
`mode="legacy"` (the `initialize` handshake; `--mode auto` probes `server/discover` first and
falls back to `initialize` on the error a 2025-11-25-only server answers). This contract is the
2025 one: against a dual-era server (ours serves 2026-07-28 too) the auto probe succeeds and the
SDK speaks 2026-07-28, which this contract does not cover, so CI runs it in legacy mode.

Prints one line per check (`PASS name` / `FAIL name: ...`), then exactly `N passed, M failed`;
exits 0 only when every check passed (and at least one ran).

Every payload is checked on the raw JSON-RPC frames (a tap on the transport's streams records each
message before the SDK handles it); the SDK's own parsing must also accept each result. Contract
fields are compared exactly (JSON equality); the only keys tolerated beyond them are optional
fields the MCP schema defines for that object. Same checks, same names as ts-client.mjs.
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
from mcp.shared.exceptions import MCPDeprecationWarning

warnings.simplefilter("ignore", MCPDeprecationWarning)
warnings.simplefilter("ignore", DeprecationWarning)

REPO = Path(__file__).resolve().parent.parent
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
PROTOCOL = "2025-11-25"
REQUEST_TIMEOUT_S = 15.0
NOTIFY_WAIT_S = 3.0
QUIET_WAIT_S = 0.4
OVERALL_TIMEOUT_S = 180.0

OPT_CALL_RESULT = ["_meta"]
OPT_RESOURCE = ["title", "description", "annotations", "size", "icons", "_meta"]
OPT_TEMPLATE = ["title", "description", "annotations", "icons", "_meta"]
OPT_GET_PROMPT = ["description", "_meta"]
OPT_REQ_PARAMS = ["_meta"]

# ---------------------------------------------------------------- checks and output

passed = 0
failed = 0
skipped: list[str] = []


def J(v: Any) -> str:
    return "undefined" if v is MISSING else json.dumps(v, separators=(",", ":"), ensure_ascii=False)


class _Missing:
    pass


MISSING: Any = _Missing()


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


def skip(name: str, why: str) -> None:
    skipped.append(name)
    out(f"SKIP {name}: {why}")


def deep_equal(a: Any, b: Any) -> bool:
    """JSON equality: bool is not a number, 1 == 1.0 as in JSON."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(deep_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(deep_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def contract_diff(actual: Any, expected: dict, optional: list[str] = ()) -> str | None:
    """`actual` must hold exactly `expected`'s keys with equal values, plus nothing but `optional` keys."""
    if not isinstance(actual, dict):
        return f"expected an object {J(expected)}, got {J(actual)}"
    problems = []
    for k in expected:
        if k not in actual:
            problems.append(f'missing "{k}"')
        elif not deep_equal(actual[k], expected[k]):
            problems.append(f'"{k}" differs')
    for k in actual:
        if k not in expected and k not in optional:
            problems.append(f'unexpected key "{k}"')
    return f"{', '.join(problems)}; expected {J(expected)}, actual {J(actual)}" if problems else None


def expect_equal(name: str, actual: Any, expected: Any) -> None:
    if deep_equal(actual, expected):
        ok(name)
    else:
        bad(name, f"expected {J(expected)}, actual {J(actual)}")


def expect_contract(name: str, actual: Any, expected: dict, optional: list[str] = ()) -> None:
    d = contract_diff(actual, expected, optional)
    if d:
        bad(name, d)
    else:
        ok(name)


def expect_true(name: str, cond: Any, why: str) -> None:
    if cond:
        ok(name)
    else:
        bad(name, why)


def json_after(text: Any, prefix: str) -> tuple[bool, Any]:
    if not isinstance(text, str) or not text.startswith(prefix):
        return False, f"text does not start with {J(prefix)}: {J(text)}"
    try:
        return True, json.loads(text[len(prefix) :])
    except ValueError:
        return False, f"text after {J(prefix)} is not JSON: {J(text)}"


# ---------------------------------------------------------------- the wire tap


class Tap:
    """Every message in both directions, as JSON (envelope fields as sent, payloads verbatim)."""

    def __init__(self, trace: bool) -> None:
        self.log: list[tuple[str, dict]] = []  # ("in"|"out", message)
        self.errors: list[str] = []
        self.trace = trace

    def record(self, direction: str, item: Any) -> None:
        if isinstance(item, Exception):
            self.errors.append(repr(item))
            if self.trace:
                print(f"!! {item!r}", file=sys.stderr)
            return
        msg = item.message.model_dump(by_alias=True, mode="json", exclude_unset=True)
        self.log.append((direction, msg))
        if self.trace:
            print(f"{'>>' if direction == 'out' else '<<'} {json.dumps(msg)}", file=sys.stderr, flush=True)

    def mark(self) -> int:
        return len(self.log)

    def exchange(self, start: int, method: str) -> tuple[dict | None, dict | None, str | None]:
        reqs = [m for d, m in self.log[start:] if d == "out" and m.get("method") == method and "id" in m]
        if len(reqs) != 1:
            return None, None, f"found {len(reqs)} outbound {method} requests"
        req = reqs[0]
        for d, m in self.log:
            if d == "in" and "method" not in m and m.get("id") == req["id"]:
                return req, m, None
        return req, None, f"no reply to {method} id {req['id']}"

    def inbound(self, start: int, pred: Callable[[dict], bool]) -> list[dict]:
        return [m for d, m in self.log[start:] if d == "in" and pred(m)]

    def index(self, pred: Callable[[str, dict], bool], start: int = 0) -> int:
        for i in range(start, len(self.log)):
            if pred(*self.log[i]):
                return i
        return -1


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

    def __getattr__(self, name: str) -> Any:  # e.g. last_context
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


# ---------------------------------------------------------------- raw calls


class Exchange:
    def __init__(self, request: dict | None, reply: dict | None, why: str | None, sdk_error: BaseException | None):
        self.request, self.reply, self.why, self.sdk_error = request, reply, why, sdk_error


class Raw:
    """Runs an SDK call and pairs it with its raw frames."""

    def __init__(self, client: Client, tap: Tap) -> None:
        self.client, self.tap = client, tap

    async def run(self, method: str, coro_fn: Callable[[], Any]) -> Exchange:
        start = self.tap.mark()
        sdk_error = None
        try:
            with anyio.fail_after(REQUEST_TIMEOUT_S + 5):
                await coro_fn()
        except Exception as e:  # noqa: BLE001 - recorded and reported by the check
            sdk_error = e
        req, reply, why = self.tap.exchange(start, method)
        return Exchange(req, reply, why, sdk_error)

    async def tool(self, name: str, args: dict | None, progress=None) -> Exchange:
        return await self.run("tools/call", lambda: self.client.call_tool(name, args, progress_callback=progress))

    async def generic(self, method: str, params: dict | None) -> Exchange:
        req = types.Request[dict | None, str](method=method, params=params)
        return await self.run(method, lambda: self.client.session.send_request(req, types.Result))


def expect_raw(name: str, r: Exchange, check: Callable[[dict], None]) -> None:
    if r.request is None:
        return bad(name, f"{r.why or 'request not sent'}{f' (SDK: {r.sdk_error!r})' if r.sdk_error else ''}")
    if r.reply is None:
        return bad(name, f"{r.why}{f' (SDK: {r.sdk_error!r})' if r.sdk_error else ''}")
    if "error" in r.reply:
        return bad(name, f"expected a result, got JSON-RPC error {J(r.reply['error'])}")
    if r.sdk_error is not None:
        return bad(name, f"the SDK rejected the result {J(r.reply.get('result'))}: {r.sdk_error!r}")
    check(r.reply["result"])


def expect_error(name: str, r: Exchange, codes: list[int]) -> None:
    if r.request is None:
        return bad(name, f"{r.why or 'request not sent'}{f' (SDK: {r.sdk_error!r})' if r.sdk_error else ''}")
    if r.reply is None:
        return bad(name, f"{r.why}{f' (SDK: {r.sdk_error!r})' if r.sdk_error else ''}")
    if "error" not in r.reply:
        return bad(name, f"expected a JSON-RPC error {' or '.join(map(str, codes))}, got result {J(r.reply.get('result'))}")
    err = r.reply["error"]
    if err.get("code") not in codes:
        return bad(name, f"expected error code {' or '.join(map(str, codes))}, got {J(err)}")
    if not isinstance(err.get("message"), str):
        return bad(name, f"error without a message: {J(err)}")
    ok(name)


async def list_all(raw: Raw, method: str, key: str, max_pages: int = 20) -> tuple[list[dict], list[dict] | None, str | None]:
    calls = {
        "tools/list": lambda c: raw.client.list_tools(cursor=c, cache_mode="bypass"),
        "resources/list": lambda c: raw.client.list_resources(cursor=c, cache_mode="bypass"),
        "prompts/list": lambda c: raw.client.list_prompts(cursor=c, cache_mode="bypass"),
    }
    pages: list[dict] = []
    cursor = None
    for i in range(max_pages):
        r = await raw.run(method, lambda c=cursor: calls[method](c))
        if r.reply is None or "error" in r.reply or r.sdk_error is not None:
            return pages, None, f"{method} page {i + 1}: {r.why or ''} {J((r.reply or {}).get('error'))} {r.sdk_error!r}"
        pages.append(r.reply["result"])
        cursor = r.reply["result"].get("nextCursor")
        if "nextCursor" not in r.reply["result"]:
            return pages, [x for p in pages for x in p.get(key, [])], None
    return pages, None, f"{method}: more than {max_pages} pages"


async def wait_for(tap: Tap, start: int, pred: Callable[[dict], bool], seconds: float = NOTIFY_WAIT_S) -> list[dict]:
    deadline = time.monotonic() + seconds
    while True:
        found = tap.inbound(start, pred)
        if found or time.monotonic() >= deadline:
            return found
        await anyio.sleep(0.01)


# ---------------------------------------------------------------- the walk

NO_ARG_TOOLS = [
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_resource_link",
    "test_multiple_content_types",
    "test_error_handling",
    "test_tool_with_progress",
    "test_tool_with_logging",
    "test_list_roots",
    "test_trigger_resource_update",
    "test_add_dynamic_tool",
    "test_remove_dynamic_tool",
]
CONTRACT_TOOLS = NO_ARG_TOOLS + ["test_structured_output", "test_sampling", "test_elicitation"]
EXTRA_TOOLS = ["test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums", "json_schema_2020_12_tool", "test_reconnection", "test_task_slow", "test_task_required", "test_task_elicitation",
               # the 2026-07-28 conformance fixtures (ordinary tools in a 2025 session)
               "test_logging_tool", "test_missing_capability", "test_streaming_elicitation", "test_input_required_result_elicitation", "test_input_required_result_sampling", "test_input_required_result_list_roots", "test_input_required_result_request_state", "test_input_required_result_multiple_inputs", "test_input_required_result_multi_round", "test_input_required_result_tampered_state", "test_input_required_result_capabilities", "echo_region", "test_trigger_tool_change", "test_trigger_prompt_change",
               # the tasks extension fixtures (SEP-2663)
               "greet", "slow_compute", "failing_job", "protocol_error_job", "confirm_delete", "multi_input", "test_tool_with_task",
               # the OAuth step-up fixture (needs mcp:write when the server requires tokens)
               "test_scoped_write"]
# Prompts beyond the contract's four that a server may list (the 2026-07-28 conformance fixture).
EXTRA_PROMPTS = ["test_input_required_result_prompt"]
ELICIT_SCHEMA = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}
ROOTS = [
    {"uri": "file:///tmp/switchboard-interop/root-a", "name": "root-a"},
    {"uri": "file:///tmp/switchboard-interop/root-b", "name": "root-b"},
]


def text_result(t: str) -> dict:
    return {"content": [{"type": "text", "text": t}]}


class Handlers:
    def __init__(self) -> None:
        self.sampling: list[Any] = []
        self.elicitation: list[Any] = []
        self.roots = 0
        self.elicitation_reply = types.ElicitResult(action="cancel")

    async def on_sampling(self, context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        self.sampling.append(params)
        last = params.messages[-1].content
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=f"echo({getattr(last, 'text', None)})"),
            model="interop-echo-model",
            stop_reason="endTurn",
        )

    async def on_elicitation(self, context: Any, params: Any) -> types.ElicitResult:
        self.elicitation.append(params)
        return self.elicitation_reply

    async def on_roots(self, context: Any) -> types.ListRootsResult:
        self.roots += 1
        return types.ListRootsResult(roots=[types.Root(uri=r["uri"], name=r["name"]) for r in ROOTS])


async def walk(opts: argparse.Namespace, tap: Tap, errlog: Any) -> None:
    handlers = Handlers()
    if opts.http:
        transport = streamable_http_client(opts.http)
        target = opts.http
    else:
        params = StdioServerParameters(command=opts.command[0], args=opts.command[1:])
        transport = stdio_client(params, errlog=errlog)
        target = " ".join(opts.command)
    out(f"# py_client (mcp Python SDK Client, mode={opts.mode}) -> {target}")

    client = Client(
        tapped(transport, tap),
        sampling_callback=handlers.on_sampling,
        elicitation_callback=handlers.on_elicitation,
        list_roots_callback=handlers.on_roots,
        client_info=types.Implementation(name="switchboard-interop-py", version="1.0.0"),
        read_timeout_seconds=REQUEST_TIMEOUT_S,
        mode=opts.mode,
        cache=None,
    )
    connected = False
    try:
        async with client:
            connected = True
            await run_checks(client, tap, handlers, bool(opts.http), opts.mode == "auto")
    except Exception as e:  # noqa: BLE001
        if connected:
            raise
        bad("initialize: connect", f"{e!r}")


async def run_checks(client: Client, tap: Tap, handlers: Handlers, http: bool, probed: bool) -> None:
    raw = Raw(client, tap)

    # ---- 1. lifecycle (in auto mode, the probe first)
    first_out = next((m for d, m in tap.log if d == "out"), {})
    if not probed:
        expect_equal("initialize: first request (legacy mode, no probe)", first_out.get("method"), "initialize")
    else:
        check_probe(tap, first_out, http)
    await check_session(client, tap, raw, handlers, http)


def check_probe(tap: Tap, first_out: dict, http: bool) -> None:
    disc_req, disc_reply, why = tap.exchange(0, "server/discover")
    expect_true(
        "discover probe: first request is server/discover",
        first_out.get("method") == "server/discover",
        f"first outbound message {J(first_out)}",
    )
    if http:
        # On Streamable HTTP a session-less POST may be refused with HTTP 4xx (the contract allows it);
        # the SDK's transport then hands its own JSON-RPC error to the session, so any error passes.
        name = "discover probe: answered with an error (JSON-RPC error or HTTP 4xx)"
        codes_ok = disc_reply is not None and isinstance(disc_reply.get("error", {}).get("code"), int)
    else:
        name = "discover probe: answered -32601 (method not found)"
        codes_ok = disc_reply is not None and disc_reply.get("error", {}).get("code") == -32601
    if disc_reply is None:
        bad(name, why or "no reply")
    else:
        expect_true(name, codes_ok and isinstance(disc_reply["error"].get("message"), str), f"reply {J(disc_reply)}")


async def check_session(client: Client, tap: Tap, raw: Raw, handlers: Handlers, http: bool) -> None:
    init_req, init_reply, why = tap.exchange(0, "initialize")
    expect_equal("initialize: client offered 2025-11-25", (init_req or {}).get("params", {}).get("protocolVersion"), PROTOCOL)
    res = (init_reply or {}).get("result", {})
    expect_equal("initialize: protocolVersion", res.get("protocolVersion"), PROTOCOL)
    info = res.get("serverInfo") or {}
    expect_true(
        "initialize: serverInfo.name and version",
        isinstance(info.get("name"), str) and info["name"] and isinstance(info.get("version"), str) and info["version"],
        f"serverInfo = {J(res.get('serverInfo', MISSING))}",
    )
    caps = res.get("capabilities") or {}
    expect_equal("initialize: capabilities.tools", caps.get("tools", MISSING), {"listChanged": True})
    expect_equal("initialize: capabilities.resources", caps.get("resources", MISSING), {"subscribe": True, "listChanged": True})
    expect_equal("initialize: capabilities.prompts", caps.get("prompts", MISSING), {"listChanged": True})
    expect_equal("initialize: capabilities.logging", caps.get("logging", MISSING), {})
    expect_equal("initialize: capabilities.completions", caps.get("completions", MISSING), {})
    expect_true(
        "initialize: notifications/initialized sent",
        any(d == "out" and m.get("method") == "notifications/initialized" for d, m in tap.log),
        "the SDK sent no initialized notification",
    )
    expect_equal("initialize: SDK negotiated 2025-11-25", client.protocol_version, PROTOCOL)

    r = await raw.run("ping", lambda: client.send_ping())
    expect_raw("ping -> {}", r, lambda res: expect_equal("ping -> {}", res, {}))
    r = await raw.run("logging/setLevel", lambda: client.set_logging_level("debug"))
    expect_raw("logging/setLevel debug -> {}", r, lambda res: expect_equal("logging/setLevel debug -> {}", res, {}))
    r = await raw.generic("switchboard/no_such_method", {})
    expect_error("unknown method -> -32601", r, [-32601])

    # ---- 2. tools
    pages, items, err = await list_all(raw, "tools/list", "tools")
    tools = {t["name"]: t for t in (items or [])}
    check_tools_list(pages, items, err, tools)

    simple = [
        ("test_simple_text", [{"type": "text", "text": "This is a simple text response for testing."}]),
        ("test_image_content", [{"type": "image", "data": PNG, "mimeType": "image/png"}]),
        ("test_audio_content", [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]),
        (
            "test_embedded_resource",
            [{"type": "resource", "resource": {"uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content."}}],
        ),
        (
            "test_resource_link",
            [
                {"type": "text", "text": "See linked resource."},
                {"type": "resource_link", "uri": "test://static-text", "name": "static-text", "mimeType": "text/plain"},
            ],
        ),
        (
            "test_multiple_content_types",
            [
                {"type": "text", "text": "Multiple content types test:"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "test://mixed-content-resource", "mimeType": "application/json", "text": '{"test":"data","value":123}'}},
            ],
        ),
    ]
    for name, content in simple:
        r = await raw.tool(name, {})
        expect_raw(f"tools/call {name}", r, lambda res, n=name, c=content: expect_contract(f"tools/call {n}", res, {"content": c}, OPT_CALL_RESULT))
    for name, content in simple:
        label = f"tools/call {name} (arguments omitted)"
        r = await raw.tool(name, None)
        if r.request is not None and "arguments" in (r.request.get("params") or {}):
            bad(label, f"the request carried arguments: {J(r.request['params'])}")
        else:
            expect_raw(label, r, lambda res, label=label, c=content: expect_contract(label, res, {"content": c}, OPT_CALL_RESULT))

    r = await raw.tool("test_structured_output", {"a": 6, "b": 7})

    def structured(res: dict) -> None:
        sc = {"sum": 13, "product": 42}
        content = res.get("content")
        try:
            parsed = json.loads(content[0]["text"])
        except (TypeError, ValueError, KeyError, IndexError):
            parsed = MISSING
        if not deep_equal(res.get("structuredContent", MISSING), sc):
            bad("tools/call test_structured_output: structuredContent", f"expected {J(sc)}, actual {J(res.get('structuredContent', MISSING))}")
        elif not (isinstance(content, list) and len(content) == 1 and content[0].get("type") == "text" and len(content[0]) == 2):
            bad("tools/call test_structured_output: content", f"expected one text block, actual {J(content)}")
        elif not deep_equal(parsed, sc):
            bad("tools/call test_structured_output: content", f"expected text = JSON of {J(sc)}, actual {J(content[0].get('text'))}")
        else:
            expect_contract("tools/call test_structured_output {a:6,b:7}", res, {"content": content, "structuredContent": sc}, OPT_CALL_RESULT)

    expect_raw("tools/call test_structured_output {a:6,b:7}", r, structured)

    r = await raw.tool("test_error_handling", {})

    def error_result(res: dict) -> None:
        n = "tools/call test_error_handling -> isError result"
        expected = {"type": "text", "text": "This tool intentionally returns an error for testing"}
        content = res.get("content") or [MISSING]
        if res.get("isError") is not True:
            bad(n, f"expected isError: true, actual {J(res)}")
        elif not deep_equal(content[0], expected):
            bad(n, f"content[0]: expected {J(expected)}, actual {J(content[0])}")
        else:
            expect_contract(n, res, {"content": res["content"], "isError": True}, OPT_CALL_RESULT)

    expect_raw("tools/call test_error_handling -> isError result", r, error_result)

    await check_progress(raw, tap)
    await check_logging(raw, tap)
    await check_sampling(raw, tap, handlers)
    await check_elicitation(raw, tap, handlers, tools)
    await check_roots(raw, tap, handlers)
    await check_dynamic_tools(raw, tap)
    r = await raw.tool("no_such_tool", {})
    n = "tools/call unknown tool -> -32602 or isError"
    if r.reply is not None and "error" in r.reply:
        expect_error(n, r, [-32602])
    else:
        expect_raw(n, r, lambda res: expect_true(n, res.get("isError") is True, f"expected -32602 or isError: true, actual {J(res)}"))

    # ---- 3-5
    await check_resources(raw, tap)
    await check_prompts(raw)
    await check_completion(raw)

    # ---- transport health
    expect_true("transport: no errors (every frame parsed)", not tap.errors, " | ".join(tap.errors))
    expect_true(
        "transport: every inbound frame is JSON-RPC 2.0",
        all(d != "in" or m.get("jsonrpc") == "2.0" for d, m in tap.log),
        "a frame without jsonrpc 2.0",
    )
    sent_ids = {json.dumps(m["id"]) for d, m in tap.log if d == "out" and "method" in m and "id" in m}
    stray = [m for d, m in tap.log if d == "in" and "method" not in m and json.dumps(m.get("id")) not in sent_ids]
    expect_true("transport: every response answers a request we sent", not stray, f"stray responses {J(stray)}")


def check_tools_list(pages: list[dict], items: list[dict] | None, err: str | None, tools: dict) -> None:
    if err:
        return bad("tools/list", err)
    names = sorted(tools)
    expected = sorted(CONTRACT_TOOLS + [n for n in EXTRA_TOOLS if n in tools])
    expect_equal("tools/list: names (contract tools + conformance extras; test_dynamic_tool not yet listed)", names, expected)
    expect_equal("tools/list: no duplicate names", len(items), len(tools))
    not_object = [t.get("name") for t in items if (t.get("inputSchema") or {}).get("type") != "object"]
    expect_true('tools/list: every inputSchema.type is "object"', not not_object, f"not object: {J(not_object)}")

    def no_args_bad(n: str) -> bool:
        s = tools[n]["inputSchema"]
        return not ("properties" not in s or deep_equal(s["properties"], {})) or bool(s.get("required"))

    bad_no_args = [n for n in NO_ARG_TOOLS if n in tools and no_args_bad(n)]
    expect_true(
        "tools/list: no-arg tools take no properties and require nothing",
        not bad_no_args,
        "; ".join(f"{n}: {J(tools[n]['inputSchema'])}" for n in bad_no_args),
    )
    so = tools.get("test_structured_output")
    expect_equal(
        "tools/list: test_structured_output outputSchema",
        (so or {}).get("outputSchema", MISSING),
        {"type": "object", "properties": {"sum": {"type": "integer"}, "product": {"type": "integer"}}, "required": ["sum", "product"]},
    )
    expect_arg_schema("tools/list: test_structured_output inputSchema (a, b: integer, required)", so, {"a": "integer", "b": "integer"})
    expect_arg_schema("tools/list: test_sampling inputSchema (prompt: string, required)", tools.get("test_sampling"), {"prompt": "string"})
    expect_arg_schema("tools/list: test_elicitation inputSchema (message: string, required)", tools.get("test_elicitation"), {"message": "string"})
    expect_true(
        "tools/list: pagination (every page but the last has a string nextCursor)",
        all(isinstance(p.get("nextCursor"), str) and p["nextCursor"] for p in pages[:-1]) and "nextCursor" not in pages[-1],
        f"pages: {J([{'n': len(p.get('tools', [])), 'nextCursor': p.get('nextCursor')} for p in pages])}",
    )
    j = tools.get("json_schema_2020_12_tool")
    if j is None:
        skip("tools/list: json_schema_2020_12_tool inputSchema", "conformance extra not listed")
    else:
        s = j["inputSchema"]
        good = (
            s.get("$schema") == "https://json-schema.org/draft/2020-12/schema"
            and s.get("type") == "object"
            and isinstance((s.get("$defs") or {}).get("address"), dict)
            and deep_equal((s.get("properties") or {}).get("name"), {"type": "string"})
            and deep_equal((s.get("properties") or {}).get("address"), {"$ref": "#/$defs/address"})
            and s.get("additionalProperties") is False
        )
        expect_true("tools/list: json_schema_2020_12_tool inputSchema preserved verbatim", good, f"inputSchema = {J(s)}")


def expect_arg_schema(name: str, tool: dict | None, props: dict) -> None:
    if tool is None:
        return bad(name, "tool not listed")
    s = tool.get("inputSchema") or {}
    types_ok = all((s.get("properties") or {}).get(k, {}).get("type") == t for k, t in props.items())
    keys_ok = sorted((s.get("properties") or {}).keys()) == sorted(props)
    req_ok = sorted(s.get("required") or []) == sorted(props)
    expect_true(name, s.get("type") == "object" and types_ok and keys_ok and req_ok, f"inputSchema = {J(s)}")


async def check_progress(raw: Raw, tap: Tap) -> None:
    name = "tools/call test_tool_with_progress (onprogress)"
    got: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        got.append((progress, total))

    r = await raw.tool("test_tool_with_progress", {}, progress=on_progress)
    token = ((r.request or {}).get("params") or {}).get("_meta", {}).get("progressToken", MISSING)
    expect_true(f"{name}: request carried _meta.progressToken", token is not MISSING, f"request {J(r.request)}")
    # JS String(token): an integer token prints without a fraction.
    token_text = str(token) if not isinstance(token, float) or not token.is_integer() else str(int(token))
    expect_raw(name, r, lambda res: expect_contract(f"{name}: result text is String(progressToken)", res, text_result(token_text), OPT_CALL_RESULT))
    req_idx = tap.index(lambda d, m: d == "out" and m is r.request)
    reply_idx = tap.index(lambda d, m: d == "in" and "method" not in m and r.request is not None and m.get("id") == r.request["id"])
    notes = [
        (i, m["params"])
        for i, (d, m) in enumerate(tap.log)
        if d == "in" and m.get("method") == "notifications/progress" and deep_equal((m.get("params") or {}).get("progressToken", MISSING), token)
    ]
    wanted = [{"progressToken": token, "progress": p, "total": 100} for p in (0, 50, 100)]
    diffs = [d for d in (contract_diff(p, wanted[k] if k < 3 else {}, ["message", "_meta"]) for k, (_, p) in enumerate(notes)) if d]
    expect_true(
        f"{name}: notifications/progress 0, 50, 100 of total 100, in order",
        len(notes) == 3 and not diffs,
        f"expected {J(wanted)}, actual {J([p for _, p in notes])}{'; ' + '; '.join(diffs) if diffs else ''}",
    )
    expect_true(
        f"{name}: every progress notification before the response",
        reply_idx > 0 and all(req_idx < i < reply_idx for i, _ in notes),
        f"positions {J([i for i, _ in notes])}, request {req_idx}, response {reply_idx}",
    )
    await anyio.sleep(0.05)  # the SDK runs progress callbacks as tasks; let the last one finish
    expect_equal(f"{name}: SDK onprogress saw 0, 50, 100 of 100", [list(x) for x in got], [[0, 100], [50, 100], [100, 100]])


async def check_logging(raw: Raw, tap: Tap) -> None:
    name = "tools/call test_tool_with_logging"
    start = tap.mark()
    r = await raw.tool("test_tool_with_logging", {})
    expect_raw(name, r, lambda res: expect_contract(name, res, text_result("Tool with logging executed successfully"), OPT_CALL_RESULT))
    reply_idx = tap.index(lambda d, m: d == "in" and "method" not in m and r.request is not None and m.get("id") == r.request["id"], start)
    msgs = [(i, m.get("params")) for i, (d, m) in enumerate(tap.log) if i >= start and d == "in" and m.get("method") == "notifications/message"]
    texts = ["Tool execution started", "Tool processing data", "Tool execution completed"]
    diffs = [d for d in (contract_diff(p, {"level": "info", "data": texts[k]} if k < 3 else {}, ["logger", "_meta"]) for k, (_, p) in enumerate(msgs)) if d]
    expect_true(
        f"{name}: 3 notifications/message (info) in order",
        len(msgs) == 3 and not diffs,
        f"expected {J([{'level': 'info', 'data': t} for t in texts])}, actual {J([p for _, p in msgs])}{'; ' + '; '.join(diffs) if diffs else ''}",
    )
    expect_true(
        f"{name}: messages arrive before the response",
        reply_idx > 0 and all(i < reply_idx for i, _ in msgs),
        f"positions {J([i for i, _ in msgs])}, response {reply_idx}",
    )


async def check_sampling(raw: Raw, tap: Tap, h: Handlers) -> None:
    name = "tools/call test_sampling (answered by the sampling handler)"
    start = tap.mark()
    before = len(h.sampling)
    prompt = "What is 2+2? (interop)"
    r = await raw.tool("test_sampling", {"prompt": prompt})
    reqs = tap.inbound(start, lambda m: m.get("method") == "sampling/createMessage")
    expect_true(
        f"{name}: exactly one sampling/createMessage",
        len(reqs) == 1 and len(h.sampling) == before + 1,
        f"saw {len(reqs)} on the wire, handler ran {len(h.sampling) - before} times",
    )
    if reqs:
        expect_contract(
            f"{name}: request params",
            reqs[0].get("params"),
            {"messages": [{"role": "user", "content": {"type": "text", "text": prompt}}], "maxTokens": 100},
            OPT_REQ_PARAMS,
        )
    expect_raw(name, r, lambda res: expect_contract(name, res, text_result(f"LLM response: echo({prompt})"), OPT_CALL_RESULT))
    reply_idx = tap.index(lambda d, m: d == "in" and "method" not in m and r.request is not None and m.get("id") == r.request["id"], start)
    our_reply = tap.index(lambda d, m: d == "out" and "method" not in m and bool(reqs) and m.get("id") == reqs[0]["id"], start)
    expect_true(f"{name}: tool responds after our sampling reply", our_reply > 0 and reply_idx > our_reply, f"our reply at {our_reply}, tool response at {reply_idx}")


async def check_elicitation(raw: Raw, tap: Tap, h: Handlers, tools: dict) -> None:
    name = "tools/call test_elicitation (answered by the elicitation handler)"
    content = {"username": "octocat", "email": "octocat@example.com"}
    h.elicitation_reply = types.ElicitResult(action="accept", content=content)
    start = tap.mark()
    message = "Please provide your details (interop)"
    r = await raw.tool("test_elicitation", {"message": message})
    reqs = tap.inbound(start, lambda m: m.get("method") == "elicitation/create")
    expect_true(f"{name}: exactly one elicitation/create", len(reqs) == 1, f"saw {len(reqs)}")
    if reqs:
        p = dict(reqs[0].get("params") or {})
        mode = p.pop("mode", None)
        if mode not in (None, "form"):
            bad(f"{name}: request params", f'mode must be absent or "form", got {J(mode)}')
        else:
            expect_contract(f"{name}: request params", p, {"message": message, "requestedSchema": ELICIT_SCHEMA}, OPT_REQ_PARAMS)

    def accept(res: dict) -> None:
        text = (res.get("content") or [{}])[0].get("text")
        good, v = json_after(text, "User response: action=accept, content=")
        if not good:
            return bad(f"{name}: accept", v)
        if not deep_equal(v, content):
            return bad(f"{name}: accept", f"content JSON: expected {J(content)}, actual {J(v)}")
        expect_contract(f"{name}: accept", res, text_result(text), OPT_CALL_RESULT)

    expect_raw(f"{name}: accept", r, accept)

    h.elicitation_reply = types.ElicitResult(action="decline")
    r = await raw.tool("test_elicitation", {"message": "Decline this one"})
    expect_raw(
        f"{name}: decline",
        r,
        lambda res: expect_contract(f"{name}: decline", res, text_result("User response: action=decline, content={}"), OPT_CALL_RESULT),
    )

    if "test_elicitation_sep1034_defaults" not in tools:
        skip("tools/call test_elicitation_sep1034_defaults", "conformance extra not listed")
    else:
        n = "tools/call test_elicitation_sep1034_defaults"
        answer = {"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": True}
        h.elicitation_reply = types.ElicitResult(action="accept", content=answer)
        start = tap.mark()
        r = await raw.tool("test_elicitation_sep1034_defaults", {})
        req = next(iter(tap.inbound(start, lambda m: m.get("method") == "elicitation/create")), None)
        props = (((req or {}).get("params") or {}).get("requestedSchema") or {}).get("properties") or {}
        want = {
            "name": ("string", "John Doe"),
            "age": ("integer", 30),
            "score": ("number", 95.5),
            "status": ("string", "active"),
            "verified": ("boolean", True),
        }
        wrong = [k for k, (t, d) in want.items() if (props.get(k) or {}).get("type") != t or not deep_equal((props.get(k) or {}).get("default", MISSING), d)]
        enum_ok = deep_equal((props.get("status") or {}).get("enum", MISSING), ["active", "inactive", "pending"])
        expect_true(f"{n}: requestedSchema defaults", req is not None and not wrong and enum_ok and sorted(props) == sorted(want), f"properties = {J(props)}")

        def defaults(res: dict) -> None:
            good, v = json_after((res.get("content") or [{}])[0].get("text"), "Elicitation completed: action=accept, content=")
            if not good:
                return bad(n, v)
            expect_equal(n, v, answer)

        expect_raw(n, r, defaults)

    if "test_elicitation_sep1330_enums" not in tools:
        skip("tools/call test_elicitation_sep1330_enums", "conformance extra not listed")
    else:
        n = "tools/call test_elicitation_sep1330_enums"
        h.elicitation_reply = types.ElicitResult(action="decline")
        start = tap.mark()
        r = await raw.tool("test_elicitation_sep1330_enums", {})
        req = next(iter(tap.inbound(start, lambda m: m.get("method") == "elicitation/create")), None)
        props = (((req or {}).get("params") or {}).get("requestedSchema") or {}).get("properties") or {}

        def titled(opts: Any) -> bool:
            return isinstance(opts, list) and all(isinstance(o, dict) and "const" in o and isinstance(o.get("title"), str) for o in opts)

        g = lambda k: props.get(k) or {}  # noqa: E731
        shapes = (
            isinstance(g("untitledSingle").get("enum"), list)
            and titled(g("titledSingle").get("oneOf"))
            and isinstance(g("legacyEnum").get("enum"), list)
            and isinstance(g("legacyEnum").get("enumNames"), list)
            and g("untitledMulti").get("type") == "array"
            and isinstance((g("untitledMulti").get("items") or {}).get("enum"), list)
            and g("titledMulti").get("type") == "array"
            and titled((g("titledMulti").get("items") or {}).get("anyOf"))
        )
        expect_true(f"{n}: requestedSchema has the five enum forms", req is not None and shapes, f"properties = {J(props)}")
        expect_raw(n, r, lambda res: expect_equal(n, res.get("content", MISSING), [{"type": "text", "text": "Elicitation completed: action=decline, content={}"}]))


async def check_roots(raw: Raw, tap: Tap, h: Handlers) -> None:
    name = "tools/call test_list_roots (answered by the roots handler)"
    start = tap.mark()
    before = h.roots
    r = await raw.tool("test_list_roots", {})
    reqs = tap.inbound(start, lambda m: m.get("method") == "roots/list")
    expect_true(f"{name}: exactly one roots/list", len(reqs) == 1 and h.roots == before + 1, f"saw {len(reqs)} on the wire, handler ran {h.roots - before} times")
    if reqs:
        p = reqs[0].get("params")
        expect_true(f"{name}: roots/list params empty", p is None or contract_diff(p, {}, OPT_REQ_PARAMS) is None, f"params = {J(p)}")

    def roots(res: dict) -> None:
        text = (res.get("content") or [{}])[0].get("text")
        good, v = json_after(text, "Roots: ")
        if not good:
            return bad(name, v)
        if not deep_equal(v, ROOTS):
            return bad(name, f"roots JSON: expected {J(ROOTS)}, actual {J(v)}")
        expect_contract(name, res, text_result(text), OPT_CALL_RESULT)

    expect_raw(name, r, roots)


async def check_dynamic_tools(raw: Raw, tap: Tap) -> None:
    async def listed() -> list[str] | None:
        _, items, _ = await list_all(raw, "tools/list", "tools")
        return None if items is None else [t.get("name") for t in items]

    def is_list_changed(m: dict) -> bool:
        return m.get("method") == "notifications/tools/list_changed"

    def call_ok(label: str, r: Exchange, text: str) -> None:
        expect_raw(label, r, lambda res: expect_contract(label, res, text_result(text), OPT_CALL_RESULT))

    start = tap.mark()
    call_ok("dynamic tools: test_add_dynamic_tool", await raw.tool("test_add_dynamic_tool", {}), "Registered test_dynamic_tool")
    notes = await wait_for(tap, start, is_list_changed)
    expect_true("dynamic tools: notifications/tools/list_changed after add", len(notes) == 1, f"saw {len(notes)}")
    names = await listed()
    expect_true("dynamic tools: tools/list includes test_dynamic_tool after add", names is not None and "test_dynamic_tool" in names, f"names {J(names)}")
    call_ok("dynamic tools: tools/call test_dynamic_tool", await raw.tool("test_dynamic_tool", {}), "dynamic tool response")
    call_ok("dynamic tools: test_add_dynamic_tool again (idempotent)", await raw.tool("test_add_dynamic_tool", {}), "Registered test_dynamic_tool")
    names = await listed()
    expect_true("dynamic tools: listed once after adding twice", names is not None and names.count("test_dynamic_tool") == 1, f"names {J(names)}")

    start = tap.mark()
    call_ok("dynamic tools: test_remove_dynamic_tool", await raw.tool("test_remove_dynamic_tool", {}), "Removed test_dynamic_tool")
    notes = await wait_for(tap, start, is_list_changed)
    expect_true("dynamic tools: notifications/tools/list_changed after remove", len(notes) == 1, f"saw {len(notes)}")
    names = await listed()
    expect_true("dynamic tools: tools/list excludes test_dynamic_tool after remove", names is not None and "test_dynamic_tool" not in names, f"names {J(names)}")
    r = await raw.tool("test_dynamic_tool", {})
    n = "dynamic tools: tools/call test_dynamic_tool after remove -> -32602 or isError"
    if r.reply is not None and "error" in r.reply:
        expect_error(n, r, [-32602])
    else:
        expect_raw(n, r, lambda res: expect_true(n, res.get("isError") is True, f"expected -32602 or isError: true, actual {J(res)}"))
    call_ok("dynamic tools: test_remove_dynamic_tool again (idempotent)", await raw.tool("test_remove_dynamic_tool", {}), "Removed test_dynamic_tool")


EXPECTED_RESOURCES = [
    {"uri": "test://static-text", "name": "static-text", "mimeType": "text/plain"},
    {"uri": "test://static-binary", "name": "static-binary", "mimeType": "image/png"},
    {"uri": "test://watched-resource", "name": "watched-resource", "mimeType": "text/plain"},
] + [{"uri": f"test://paginated/{i:02d}", "name": f"paginated-{i:02d}", "mimeType": "text/plain"} for i in range(1, 26)]


async def check_resources(raw: Raw, tap: Tap) -> None:
    client = raw.client
    pages, items, err = await list_all(raw, "resources/list", "resources")
    if err:
        bad("resources/list", err)
    else:
        expect_equal("resources/list: page sizes", [len(p.get("resources", [])) for p in pages], [10, 10, 8])
        expect_true(
            "resources/list: nextCursor on pages 1-2 (string), absent on page 3",
            len(pages) == 3 and isinstance(pages[0].get("nextCursor"), str) and isinstance(pages[1].get("nextCursor"), str) and "nextCursor" not in pages[2],
            f"nextCursors {J([p.get('nextCursor') for p in pages])}",
        )
        diffs = []
        for i in range(max(len(EXPECTED_RESOURCES), len(items))):
            d = contract_diff(items[i] if i < len(items) else MISSING, EXPECTED_RESOURCES[i] if i < len(EXPECTED_RESOURCES) else {}, OPT_RESOURCE)
            if d:
                diffs.append(f"#{i}: {d}")
        expect_true("resources/list: the 28 resources, in order", len(items) == 28 and not diffs, f"{len(items)} items; {'; '.join(diffs[:5])}")
        for k, p in enumerate(pages):
            extra = [x for x in p if x not in ("resources", "nextCursor", "_meta")]
            if extra:
                bad(f"resources/list: page {k + 1} keys", f"unexpected {J(extra)}")
    r = await raw.run("resources/list", lambda: client.list_resources(cursor="switchboard-interop-bogus-cursor", cache_mode="bypass"))
    expect_error("resources/list: unknown cursor -> -32602", r, [-32602])

    async def read(uri: str) -> Exchange:
        return await raw.run("resources/read", lambda: client.read_resource(uri, cache_mode="bypass"))

    async def expect_read(label: str, uri: str, contents0: dict) -> None:
        r = await read(uri)
        expect_raw(label, r, lambda res: expect_contract(label, res, {"contents": [contents0]}, ["_meta"]))

    await expect_read("resources/read test://static-text", "test://static-text", {"uri": "test://static-text", "mimeType": "text/plain", "text": "This is the content of the static text resource."})
    await expect_read("resources/read test://static-binary", "test://static-binary", {"uri": "test://static-binary", "mimeType": "image/png", "blob": PNG})
    diffs = []
    for i in range(1, 26):
        uri = f"test://paginated/{i:02d}"
        r = await read(uri)
        want = {"contents": [{"uri": uri, "mimeType": "text/plain", "text": f"Paginated resource {i:02d}"}]}
        if r.reply is None:
            diffs.append(f"{uri}: {r.why}")
        elif "error" in r.reply:
            diffs.append(f"{uri}: JSON-RPC error {J(r.reply['error'])}")
        elif r.sdk_error is not None:
            diffs.append(f"{uri}: the SDK rejected {J(r.reply['result'])}: {r.sdk_error!r}")
        elif d := contract_diff(r.reply["result"], want, ["_meta"]):
            diffs.append(f"{uri}: {d}")
    expect_true("resources/read test://paginated/01 ... /25", not diffs, "; ".join(diffs[:5]))
    watched = "test://watched-resource"

    def watched_read(t: str) -> dict:
        return {"uri": watched, "mimeType": "text/plain", "text": t}

    await expect_read("resources/read test://watched-resource (initial)", watched, watched_read("Watched resource content"))

    r = await raw.run("resources/templates/list", lambda: client.list_resource_templates(cache_mode="bypass"))

    def templates(res: dict) -> None:
        ts = res.get("resourceTemplates")
        if not isinstance(ts, list) or len(ts) != 1:
            return bad("resources/templates/list", f"expected exactly one template, actual {J(res)}")
        if "nextCursor" in res:
            return bad("resources/templates/list", f"unexpected nextCursor {J(res['nextCursor'])}")
        expect_contract(
            "resources/templates/list",
            ts[0],
            {"uriTemplate": "test://template/{id}/data", "name": "template", "mimeType": "application/json"},
            OPT_TEMPLATE,
        )

    expect_raw("resources/templates/list", r, templates)
    for id_ in ("42", "abc"):
        uri = f"test://template/{id_}/data"
        label = f"resources/read {uri} (template)"
        r = await read(uri)

        def template_read(res: dict, uri=uri, id_=id_, label=label) -> None:
            c = (res.get("contents") or [{}])[0]
            try:
                body = json.loads(c.get("text"))
            except (TypeError, ValueError):
                return bad(label, f"text is not JSON: {J(c)}")
            want = {"id": id_, "templateTest": True, "data": f"Data for ID: {id_}"}
            if not deep_equal(body, want):
                return bad(label, f"text JSON: expected {J(want)}, actual {J(body)}")
            expect_contract(label, res, {"contents": [{"uri": uri, "mimeType": "application/json", "text": c["text"]}]}, ["_meta"])

        expect_raw(label, r, template_read)
    r = await read("test://no-such-resource")
    expect_error("resources/read unknown URI -> -32002 or -32602", r, [-32002, -32602])

    def is_updated(m: dict) -> bool:
        return m.get("method") == "notifications/resources/updated"

    def trigger(n: int, notified: str) -> dict:
        return text_result(f"Updated {watched}: update={n} notified={notified}")

    r = await raw.run("resources/subscribe", lambda: client.subscribe_resource(watched))
    expect_raw("resources/subscribe -> {}", r, lambda res: expect_equal("resources/subscribe -> {}", res, {}))
    start = tap.mark()
    r = await raw.tool("test_trigger_resource_update", {})
    expect_raw("subscriptions: trigger while subscribed", r, lambda res: expect_contract("subscriptions: trigger while subscribed", res, trigger(1, "true"), OPT_CALL_RESULT))
    notes = await wait_for(tap, start, is_updated)
    expect_true("subscriptions: notifications/resources/updated received", len(notes) == 1, f"saw {len(notes)}")
    if notes:
        expect_contract("subscriptions: notifications/resources/updated params", notes[0].get("params"), {"uri": watched}, ["_meta"])
    await expect_read("resources/read test://watched-resource (after update 1)", watched, watched_read("Watched resource content (update 1)"))
    r = await raw.run("resources/unsubscribe", lambda: client.unsubscribe_resource(watched))
    expect_raw("resources/unsubscribe -> {}", r, lambda res: expect_equal("resources/unsubscribe -> {}", res, {}))
    start = tap.mark()
    r = await raw.tool("test_trigger_resource_update", {})
    expect_raw("subscriptions: trigger after unsubscribe", r, lambda res: expect_contract("subscriptions: trigger after unsubscribe", res, trigger(2, "false"), OPT_CALL_RESULT))
    await anyio.sleep(QUIET_WAIT_S)
    notes = tap.inbound(start, is_updated)
    expect_true("subscriptions: no notifications/resources/updated after unsubscribe", not notes, f"saw {J(notes)}")
    await expect_read("resources/read test://watched-resource (after update 2)", watched, watched_read("Watched resource content (update 2)"))


PROMPT_ARGS = {
    "test_simple_prompt": [],
    "test_prompt_with_arguments": ["arg1", "arg2"],
    "test_prompt_with_embedded_resource": ["resourceUri"],
    "test_prompt_with_image": [],
}


async def check_prompts(raw: Raw) -> None:
    client = raw.client
    pages, items, err = await list_all(raw, "prompts/list", "prompts")
    if err:
        bad("prompts/list", err)
    else:
        expect_equal("prompts/list: the four prompts", sorted(p.get("name") for p in items if p.get("name") not in EXTRA_PROMPTS), sorted(PROMPT_ARGS))
        for p in items:
            want = PROMPT_ARGS.get(p.get("name"))
            if want is None:
                continue
            args = p.get("arguments") or []
            good = [a.get("name") for a in args] == want and all(a.get("required") is True for a in args)
            expect_true(f"prompts/list: {p['name']} arguments {J(want)} (required)", good, f"arguments = {J(p.get('arguments', MISSING))}")

    def user(content: dict) -> dict:
        return {"role": "user", "content": content}

    async def get(label: str, name: str, args: dict | None, messages: list) -> None:
        r = await raw.run("prompts/get", lambda: client.get_prompt(name, args))
        expect_raw(label, r, lambda res: expect_contract(label, res, {"messages": messages}, OPT_GET_PROMPT))

    await get("prompts/get test_simple_prompt", "test_simple_prompt", None, [user({"type": "text", "text": "This is a simple prompt for testing."})])
    await get(
        "prompts/get test_prompt_with_arguments",
        "test_prompt_with_arguments",
        {"arg1": "hello", "arg2": "world"},
        [user({"type": "text", "text": "Prompt with arguments: arg1='hello', arg2='world'"})],
    )
    await get(
        "prompts/get test_prompt_with_embedded_resource",
        "test_prompt_with_embedded_resource",
        {"resourceUri": "test://static-text"},
        [
            user({"type": "resource", "resource": {"uri": "test://static-text", "mimeType": "text/plain", "text": "Embedded resource content for testing."}}),
            user({"type": "text", "text": "Please process the embedded resource above."}),
        ],
    )
    await get(
        "prompts/get test_prompt_with_image",
        "test_prompt_with_image",
        None,
        [user({"type": "image", "data": PNG, "mimeType": "image/png"}), user({"type": "text", "text": "Please analyze the image above."})],
    )
    r = await raw.run("prompts/get", lambda: client.get_prompt("test_prompt_with_arguments", {"arg1": "only-one"}))
    expect_error("prompts/get test_prompt_with_arguments missing arg2 -> -32602", r, [-32602])
    r = await raw.run("prompts/get", lambda: client.get_prompt("no_such_prompt"))
    expect_error("prompts/get unknown prompt -> -32602", r, [-32602])


async def check_completion(raw: Raw) -> None:
    prompt_ref = types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments")
    template_ref = types.ResourceTemplateReference(type="ref/resource", uri="test://template/{id}/data")
    cases = [
        ('arg1 "al"', prompt_ref, "arg1", "al", ["alpha", "alpine"]),
        ('arg1 ""', prompt_ref, "arg1", "", ["alpha", "alpine", "beta", "gamma"]),
        ('arg1 "test" (no match)', prompt_ref, "arg1", "test", []),
        ('arg1 "AL" (case-sensitive)', prompt_ref, "arg1", "AL", []),
        ('arg2 "t"', prompt_ref, "arg2", "t", ["two", "three"]),
        ('template id "1"', template_ref, "id", "1", ["100", "123"]),
        ('template id "2"', template_ref, "id", "2", ["200"]),
    ]
    for label, ref, arg, value, values in cases:
        name = f"completion/complete {label}"
        r = await raw.run("completion/complete", lambda ref=ref, arg=arg, value=value: raw.client.complete(ref, {"name": arg, "value": value}))

        def check(res: dict, name=name, values=values) -> None:
            d = contract_diff(res, {"completion": res.get("completion", MISSING)}, ["_meta"])
            if d:
                return bad(name, d)
            expect_contract(name, res["completion"], {"values": values, "total": len(values), "hasMore": False})

        expect_raw(name, r, check)


# ---------------------------------------------------------------- entry point


def parse_args(argv: list[str]) -> argparse.Namespace:
    command = None
    if "--" in argv:
        i = argv.index("--")
        argv, command = argv[:i], argv[i + 1 :]
    ap = argparse.ArgumentParser(description="Python SDK interop client for the Switchboard everything server")
    ap.add_argument("--bin", default=os.environ.get("SWITCHBOARD_BIN") or str(REPO / "target/debug/switchboard"))
    ap.add_argument("--http", default=None, help="Streamable HTTP endpoint, e.g. http://127.0.0.1:PORT/mcp")
    ap.add_argument("--trace", action="store_true", help="print every frame (and the server's stderr) on stderr")
    ap.add_argument("--mode", choices=["legacy", "auto"], default="legacy",
                    help="legacy: initialize first (default); auto: probe server/discover first")
    opts = ap.parse_args(argv)
    opts.command = command if command else (None if opts.http else [opts.bin, "serve", "--stdio"])
    return opts


async def amain(opts: argparse.Namespace) -> None:
    tap = Tap(opts.trace)
    with tempfile.TemporaryFile(mode="w+") as errlog:
        try:
            with anyio.fail_after(OVERALL_TIMEOUT_S):
                await walk(opts, tap, errlog)
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
            # Only judged once the walk ran: a server that never started already failed `connect`.
            if passed + failed > 1:
                expect_true("server stderr: no panic", not re.search(r"panicked at", stderr_text), stderr_text[-2000:])
            elif stderr_text:
                out(f"# server stderr: {stderr_text[-2000:]!r}")


def main() -> int:
    opts = parse_args(sys.argv[1:])
    anyio.run(amain, opts)
    if passed + failed == 0:
        bad("harness", "no check ran")
    if skipped:
        out(f"# skipped (absent conformance extras): {', '.join(skipped)}")
    out(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
