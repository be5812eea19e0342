#!/usr/bin/env python3
"""The EVERYTHING-SERVER contract (../shared/conformance/EVERYTHING-SERVER.md) written with the
official Python SDK (`mcp` 2.3.0, low-level `mcp.server.Server`), so our client and recorder can be
tested against a server nobody on this team's Rust code wrote.

    python interop/py_everything_server.py [--stdio]          newline-delimited JSON-RPC on stdio
    python interop/py_everything_server.py --http PORT        Streamable HTTP on http://127.0.0.1:PORT/mcp
                                                              (PORT 0 picks a free port); prints
                                                              `listening on http://127.0.0.1:PORT/mcp`
                                                              on stderr once it accepts connections

Everything in the contract is implemented: all tools (sampling, elicitation and roots requests
sent back to the client related to the originating tools/call; progress; logging with
logging/setLevel filtering), the 28 resources paginated 10 per page with opaque cursors,
per-session subscriptions with notifications/resources/updated, the template, the four prompts,
completion values, per-session dynamic tools with notifications/tools/list_changed.

Where the SDK shapes what we can do (none of it breaks the contract):
- `test_reconnection` (SEP-1699 polling) is not implemented: the contract lists it as "not covered".
- The SDK's `ServerSession.list_roots()` sends `roots/list` on the standalone channel (over HTTP
  the GET stream); the contract wants it related to the tools/call, so `test_list_roots` sends a
  typed `ListRootsRequest` through `ServerSession.send_request` with `related_request_id` instead.
- The low-level request context does not expose the per-connection state publicly, so
  per-session state (subscriptions, update counter, dynamic tool, log level) is keyed by the
  `Mcp-Session-Id` request header over HTTP and is process-wide over stdio (one connection per
  process). It is never cleaned up (a test server).
- The SDK also answers `server/discover` (2026-07-28 era) by itself; clients that send
  `initialize` get the 2025-11-25 handshake.
- Unknown resource URIs answer -32602 (the SDK defines no -32002 constant; the contract accepts
  either).
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND

# Logging, sampling and roots are deprecated as of 2026-07-28 (SEP-2577) but are part of the
# 2025-11-25 contract this server implements.
warnings.simplefilter("ignore", MCPDeprecationWarning)
warnings.simplefilter("ignore", DeprecationWarning)

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
WATCHED = "test://watched-resource"
TEMPLATE = "test://template/{id}/data"
PAGE_SIZE = 10
LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


def compact(v: Any) -> str:
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def text_result(s: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": s}]}


def error_result(s: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": s}], "isError": True}


# ---------------------------------------------------------------- per-session state


@dataclass
class SessionState:
    subscriptions: set[str] = field(default_factory=set)
    updates: int = 0
    dynamic_tool: bool = False
    log_level: str = "debug"


_sessions: dict[str | None, SessionState] = {}


def state(ctx: ServerRequestContext[Any, Any]) -> SessionState:
    headers = getattr(ctx.request, "headers", None)
    key = headers.get("mcp-session-id") if headers is not None else None
    return _sessions.setdefault(key, SessionState())


def related(ctx: ServerRequestContext[Any, Any]) -> ServerMessageMetadata:
    """Routes a server->client request onto the originating request's stream."""
    return ServerMessageMetadata(related_request_id=ctx.request_id)


# ---------------------------------------------------------------- tools

NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}}


def tool(name: str, description: str, schema: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {"name": name, "description": description, "inputSchema": schema or NO_ARGS, **extra}


def string_args(*names: str) -> dict[str, Any]:
    return {"type": "object", "properties": {n: {"type": "string"} for n in names}, "required": list(names)}


TOOLS = [
    tool("test_simple_text", "Returns a simple text response"),
    tool("test_image_content", "Returns an image"),
    tool("test_audio_content", "Returns audio"),
    tool("test_embedded_resource", "Returns an embedded resource"),
    tool("test_resource_link", "Returns a resource link"),
    tool("test_multiple_content_types", "Returns several content types"),
    tool(
        "test_structured_output",
        "Returns the sum and product of a and b as structured content",
        {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]},
        outputSchema={
            "type": "object",
            "properties": {"sum": {"type": "integer"}, "product": {"type": "integer"}},
            "required": ["sum", "product"],
        },
    ),
    tool("test_error_handling", "Always fails"),
    tool("test_tool_with_progress", "Reports progress 0, 50, 100"),
    tool("test_tool_with_logging", "Sends three log messages"),
    tool("test_sampling", "Asks the client to sample", string_args("prompt")),
    tool("test_elicitation", "Asks the user for a username and email", string_args("message")),
    tool("test_elicitation_sep1034_defaults", "Elicitation with defaults (SEP-1034)"),
    tool("test_elicitation_sep1330_enums", "Elicitation with every enum form (SEP-1330)"),
    tool(
        "json_schema_2020_12_tool",
        "A tool whose inputSchema uses JSON Schema 2020-12 features",
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {"type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}
            },
            "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
            "additionalProperties": False,
        },
    ),
    tool("test_list_roots", "Asks the client for its roots"),
    tool("test_trigger_resource_update", "Updates the watched resource for this session"),
    tool("test_add_dynamic_tool", "Registers test_dynamic_tool for this session"),
    tool("test_remove_dynamic_tool", "Removes test_dynamic_tool for this session"),
]
DYNAMIC_TOOL = tool("test_dynamic_tool", "Only listed between add and remove")

ELICIT_BASIC_SCHEMA = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}
ELICIT_DEFAULTS_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
}
ELICIT_ENUMS_SCHEMA = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "description": "Select one option", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "description": "Select one option with titles",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "description": "Select one option (legacy)",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "description": "Select multiple options",
            "minItems": 1,
            "maxItems": 3,
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "description": "Select multiple options with titles",
            "minItems": 1,
            "maxItems": 3,
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
    "required": [],
}


async def list_tools(ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams) -> dict[str, Any]:
    return {"tools": TOOLS + ([DYNAMIC_TOOL] if state(ctx).dynamic_tool else [])}


async def elicit(ctx: ServerRequestContext[Any, Any], message: str, schema: dict[str, Any], prefix: str) -> dict[str, Any]:
    r = await ctx.session.send_request(
        types.ElicitRequest(params=types.ElicitRequestFormParams(message=message, requested_schema=schema)),
        types.ElicitResult,
        metadata=related(ctx),
    )
    return text_result(f"{prefix}action={r.action}, content={compact(r.content or {})}")


async def log(ctx: ServerRequestContext[Any, Any], level: str, data: Any) -> None:
    if LEVELS.index(level) >= LEVELS.index(state(ctx).log_level):
        await ctx.session.send_log_message(level, data, related_request_id=ctx.request_id)  # type: ignore[arg-type]


async def call_tool(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> dict[str, Any]:
    listed = {t["name"] for t in TOOLS} | ({DYNAMIC_TOOL["name"]} if state(ctx).dynamic_tool else set())
    if params.name not in listed:
        raise MCPError(INVALID_PARAMS, f"Unknown tool: {params.name}")
    try:
        return await run_tool(ctx, params)
    except MCPError as e:
        # The client refused a sampling / elicitation / roots request: the tool fails, the call does not.
        return error_result(f"{params.name} failed: {e.message}")


async def run_tool(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> dict[str, Any]:
    name, args = params.name, params.arguments or {}
    st = state(ctx)
    if name == "test_simple_text":
        return text_result("This is a simple text response for testing.")
    if name == "test_image_content":
        return {"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]}
    if name == "test_audio_content":
        return {"content": [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]}
    if name == "test_embedded_resource":
        return {
            "content": [
                {
                    "type": "resource",
                    "resource": {
                        "uri": "test://embedded-resource",
                        "mimeType": "text/plain",
                        "text": "This is an embedded resource content.",
                    },
                }
            ]
        }
    if name == "test_resource_link":
        return {
            "content": [
                {"type": "text", "text": "See linked resource."},
                {"type": "resource_link", "uri": "test://static-text", "name": "static-text", "mimeType": "text/plain"},
            ]
        }
    if name == "test_multiple_content_types":
        return {
            "content": [
                {"type": "text", "text": "Multiple content types test:"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
                {
                    "type": "resource",
                    "resource": {
                        "uri": "test://mixed-content-resource",
                        "mimeType": "application/json",
                        "text": '{"test":"data","value":123}',
                    },
                },
            ]
        }
    if name == "test_structured_output":
        a, b = args.get("a"), args.get("b")
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in (a, b)):
            return error_result("a and b must be integers")
        sc = {"sum": a + b, "product": a * b}
        return {"content": [{"type": "text", "text": compact(sc)}], "structuredContent": sc}
    if name == "test_error_handling":
        return error_result("This tool intentionally returns an error for testing")
    if name == "test_tool_with_progress":
        token = ((ctx.params or {}).get("_meta") or {}).get("progressToken")
        if token is None:
            return text_result("no progress token")
        for i, p in enumerate((0, 50, 100)):
            if i:
                await anyio.sleep(0.05)
            await ctx.session.send_progress_notification(token, p, 100, related_request_id=ctx.request_id)  # type: ignore[arg-type]
        return text_result(token if isinstance(token, str) else compact(token))
    if name == "test_tool_with_logging":
        for m in ("Tool execution started", "Tool processing data", "Tool execution completed"):
            await log(ctx, "info", m)
        return text_result("Tool with logging executed successfully")
    if name == "test_sampling":
        prompt = args.get("prompt")
        if not isinstance(prompt, str):
            return error_result("missing argument 'prompt'")
        r = await ctx.session.send_request(
            types.CreateMessageRequest(
                params=types.CreateMessageRequestParams(
                    messages=[types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))],
                    max_tokens=100,
                )
            ),
            types.CreateMessageResultWithTools,
            metadata=related(ctx),
        )
        blocks = r.content if isinstance(r.content, list) else [r.content]
        said = "".join(b.text for b in blocks if isinstance(b, types.TextContent))
        return text_result(f"LLM response: {said}")
    if name == "test_elicitation":
        message = args.get("message")
        if not isinstance(message, str):
            return error_result("missing argument 'message'")
        return await elicit(ctx, message, ELICIT_BASIC_SCHEMA, "User response: ")
    if name == "test_elicitation_sep1034_defaults":
        return await elicit(
            ctx, "Please review and update the form fields with defaults", ELICIT_DEFAULTS_SCHEMA, "Elicitation completed: "
        )
    if name == "test_elicitation_sep1330_enums":
        return await elicit(ctx, "Please select options from the enum fields", ELICIT_ENUMS_SCHEMA, "Elicitation completed: ")
    if name == "json_schema_2020_12_tool":
        return text_result(f"Received: {compact(args)}")
    if name == "test_list_roots":
        r = await ctx.session.send_request(types.ListRootsRequest(), types.ListRootsResult, metadata=related(ctx))
        roots = [x.model_dump(by_alias=True, mode="json", exclude_none=True) for x in r.roots]
        return text_result(f"Roots: {compact(roots)}")
    if name == "test_trigger_resource_update":
        st.updates += 1
        notified = WATCHED in st.subscriptions
        if notified:
            await ctx.session.send_resource_updated(WATCHED)
        return text_result(f"Updated {WATCHED}: update={st.updates} notified={'true' if notified else 'false'}")
    if name == "test_add_dynamic_tool":
        st.dynamic_tool = True
        await ctx.session.send_tool_list_changed()
        return text_result("Registered test_dynamic_tool")
    if name == "test_remove_dynamic_tool":
        st.dynamic_tool = False
        await ctx.session.send_tool_list_changed()
        return text_result("Removed test_dynamic_tool")
    return text_result("dynamic tool response")  # test_dynamic_tool: call_tool let it through


# ---------------------------------------------------------------- resources

RESOURCES: list[dict[str, Any]] = [
    {"uri": "test://static-text", "name": "static-text", "mimeType": "text/plain"},
    {"uri": "test://static-binary", "name": "static-binary", "mimeType": "image/png"},
    {"uri": WATCHED, "name": "watched-resource", "mimeType": "text/plain"},
] + [{"uri": f"test://paginated/{i:02}", "name": f"paginated-{i:02}", "mimeType": "text/plain"} for i in range(1, 26)]


def page(items: list[dict[str, Any]], cursor: str | None, key: str) -> dict[str, Any]:
    start = 0
    if cursor is not None:
        if not (cursor.startswith("page-") and cursor[5:].isdigit() and 0 < int(cursor[5:]) < len(items)):
            raise MCPError(INVALID_PARAMS, f"Invalid cursor: {cursor}")
        start = int(cursor[5:])
    out: dict[str, Any] = {key: items[start : start + PAGE_SIZE]}
    if start + PAGE_SIZE < len(items):
        out["nextCursor"] = f"page-{start + PAGE_SIZE}"
    return out


async def list_resources(ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams) -> dict[str, Any]:
    return page(RESOURCES, params.cursor if params else None, "resources")


async def list_templates(ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams) -> dict[str, Any]:
    return {"resourceTemplates": [{"uriTemplate": TEMPLATE, "name": "template", "mimeType": "application/json"}]}


def text_contents(uri: str, mime: str, body: str) -> dict[str, Any]:
    return {"contents": [{"uri": uri, "mimeType": mime, "text": body}]}


async def read_resource(ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams) -> dict[str, Any]:
    uri = str(params.uri)
    if uri == "test://static-text":
        return text_contents(uri, "text/plain", "This is the content of the static text resource.")
    if uri == "test://static-binary":
        return {"contents": [{"uri": uri, "mimeType": "image/png", "blob": PNG}]}
    if uri == WATCHED:
        n = state(ctx).updates
        return text_contents(uri, "text/plain", "Watched resource content" + (f" (update {n})" if n else ""))
    if uri.startswith("test://paginated/") and any(r["uri"] == uri for r in RESOURCES):
        return text_contents(uri, "text/plain", f"Paginated resource {uri.rsplit('/', 1)[1]}")
    prefix, suffix = "test://template/", "/data"
    if uri.startswith(prefix) and uri.endswith(suffix) and len(uri) > len(prefix) + len(suffix):
        rid = uri[len(prefix) : -len(suffix)]
        if "/" not in rid:
            body = compact({"id": rid, "templateTest": True, "data": f"Data for ID: {rid}"})
            return text_contents(uri, "application/json", body)
    raise MCPError(INVALID_PARAMS, f"Resource not found: {uri}", {"uri": uri})


async def subscribe(ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams) -> dict[str, Any]:
    state(ctx).subscriptions.add(str(params.uri))
    return {}


async def unsubscribe(ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams) -> dict[str, Any]:
    state(ctx).subscriptions.discard(str(params.uri))
    return {}


# ---------------------------------------------------------------- prompts

PROMPTS = [
    {"name": "test_simple_prompt", "description": "A simple prompt without arguments"},
    {
        "name": "test_prompt_with_arguments",
        "description": "A prompt with two required arguments",
        "arguments": [
            {"name": "arg1", "description": "The arg1 argument", "required": True},
            {"name": "arg2", "description": "The arg2 argument", "required": True},
        ],
    },
    {
        "name": "test_prompt_with_embedded_resource",
        "description": "A prompt that embeds a resource",
        "arguments": [{"name": "resourceUri", "description": "The resourceUri argument", "required": True}],
    },
    {"name": "test_prompt_with_image", "description": "A prompt that includes an image"},
]


def user(content: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": content}


def user_text(s: str) -> dict[str, Any]:
    return user({"type": "text", "text": s})


async def list_prompts(ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams) -> dict[str, Any]:
    return {"prompts": PROMPTS}


async def get_prompt(ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams) -> dict[str, Any]:
    args = params.arguments or {}
    declared = next((p for p in PROMPTS if p["name"] == params.name), None)
    if declared is None:
        raise MCPError(INVALID_PARAMS, f"Unknown prompt: {params.name}")
    missing = [a["name"] for a in declared.get("arguments", []) if a["name"] not in args]
    if missing:
        raise MCPError(INVALID_PARAMS, f"Missing required arguments: {', '.join(missing)}")
    if params.name == "test_simple_prompt":
        return {"messages": [user_text("This is a simple prompt for testing.")]}
    if params.name == "test_prompt_with_arguments":
        return {"messages": [user_text(f"Prompt with arguments: arg1='{args['arg1']}', arg2='{args['arg2']}'")]}
    if params.name == "test_prompt_with_embedded_resource":
        resource = {"uri": args["resourceUri"], "mimeType": "text/plain", "text": "Embedded resource content for testing."}
        return {
            "messages": [
                user({"type": "resource", "resource": resource}),
                user_text("Please process the embedded resource above."),
            ]
        }
    return {
        "messages": [
            user({"type": "image", "data": PNG, "mimeType": "image/png"}),
            user_text("Please analyze the image above."),
        ]
    }


# ---------------------------------------------------------------- completion and logging

COMPLETIONS: dict[tuple[str, str, str], list[str]] = {
    ("ref/prompt", "test_prompt_with_arguments", "arg1"): ["alpha", "alpine", "beta", "gamma"],
    ("ref/prompt", "test_prompt_with_arguments", "arg2"): ["one", "two", "three"],
    ("ref/resource", TEMPLATE, "id"): ["100", "123", "200"],
}


async def complete(ctx: ServerRequestContext[Any, Any], params: types.CompleteRequestParams) -> dict[str, Any]:
    ref = params.ref
    target = ref.name if isinstance(ref, types.PromptReference) else str(ref.uri)
    candidates = COMPLETIONS.get((ref.type, target, params.argument.name), [])
    values = [c for c in candidates if c.startswith(params.argument.value)]
    return {"completion": {"values": values, "total": len(values), "hasMore": False}}


async def set_level(ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams) -> dict[str, Any]:
    state(ctx).log_level = params.level
    return {}


# ---------------------------------------------------------------- wiring and transports


class EverythingServer(Server[Any]):
    """Declares every listChanged flag of the contract by default, for stdio and for each HTTP session."""

    def create_initialization_options(self, notification_options: NotificationOptions | None = None, *a: Any, **k: Any):  # type: ignore[override]
        return super().create_initialization_options(
            notification_options or NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True),
            *a,
            **k,
        )


async def no_discover(ctx: ServerRequestContext[Any, Any], params: types.RequestParams) -> dict[str, Any]:
    raise MCPError(METHOD_NOT_FOUND, "Method not found", "server/discover")


def build_server() -> Server[Any]:
    server = EverythingServer(
        "py-everything-server",
        version="1.0.0",
        instructions="The everything contract (EVERYTHING-SERVER.md) on the official Python SDK.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_subscribe_resource=subscribe,
        on_unsubscribe_resource=unsubscribe,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_completion=complete,
        on_set_logging_level=set_level,
    )
    # The contract is the 2025-11-25 handshake era: `server/discover` (2026-07-28) is an unknown
    # method, so a Python SDK client in mode="auto" falls back to `initialize`.
    server.add_request_handler("server/discover", types.RequestParams, no_discover)
    return server


async def run_stdio() -> None:
    from mcp.server.runner import serve_loop
    from mcp.server.stdio import stdio_server

    server = build_server()
    # `Server.run` lets the first request pick the protocol era (a 2026-07-28 `_meta` envelope
    # opens a modern connection that refuses a later `initialize`); `serve_loop` is the SDK's
    # handshake-only loop, the one its Streamable HTTP manager uses for each session.
    async with server.lifespan(server) as lifespan_state, stdio_server() as (read_stream, write_stream):
        await serve_loop(
            server,
            read_stream,
            write_stream,
            lifespan_state=lifespan_state,
            init_options=server.create_initialization_options(),
        )


async def run_http(port: int) -> None:
    import uvicorn

    server = build_server()
    app = server.streamable_http_app(host="127.0.0.1", streamable_http_path="/mcp")
    web = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))

    async def announce() -> None:
        while not web.started:
            await anyio.sleep(0.02)
        bound = web.servers[0].sockets[0].getsockname()[1]
        print(f"listening on http://127.0.0.1:{bound}/mcp", file=sys.stderr, flush=True)

    async with anyio.create_task_group() as tg:
        tg.start_soon(announce)
        await web.serve()
        tg.cancel_scope.cancel()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--stdio", action="store_true", help="serve over stdio (the default)")
    mode.add_argument("--http", type=int, metavar="PORT", help="serve Streamable HTTP on http://127.0.0.1:PORT/mcp")
    a = ap.parse_args()
    if a.http is not None:
        anyio.run(run_http, a.http)
    else:
        anyio.run(run_stdio)


if __name__ == "__main__":
    main()
