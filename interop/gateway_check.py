#!/usr/bin/env python3
"""The official Python SDK client through `switchboard gateway`, against each upstream spoken to
directly: the checks of gateway-check.mjs (each upstream's tools, prompts, resources and
templates listed under its prefix exactly; definitions unchanged but for the name, their
`execution` (task support) included: both upstreams speak 2025-11-25 and offer tasks; a call and
a read through the gateway equal to the direct ones).

    .tools/venv/bin/python interop/gateway_check.py GATEWAY_URL PREFIX=DIRECT [PREFIX=DIRECT ...]
        each DIRECT a Streamable HTTP endpoint, or `stdio:` + a shell command

With GATEWAY_BEARER set, the gateway (only) is sent `Authorization: Bearer $GATEWAY_BEARER`.
GATEWAY_MODERN names (comma-separated) the prefixes whose upstream the gateway speaks to on
2026-07-28: their tools' `execution` is the gateway's (`optional`, or none), the rest compared.

Prints one line per check (`PASS name` / `FAIL name: ...`), then `N passed, M failed`.
"""

from __future__ import annotations

import json
import os
import re
import sys
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types  # noqa: F401  (the SDK's types package; imported to fail early if absent)
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

passed = 0
failed = 0


def ok(name: str) -> None:
    global passed
    passed += 1
    print(f"PASS {name}", flush=True)


def bad(name: str, why: str) -> None:
    global failed
    failed += 1
    print(f"FAIL {name}: {why}", flush=True)


def J(v: Any) -> str:
    return json.dumps(v, sort_keys=True)


def dump(m: Any) -> Any:
    return m.model_dump(by_alias=True, exclude_none=True, mode="json")


@asynccontextmanager
async def connect(target: str, bearer: str | None = None):
    if target.startswith("stdio:"):
        transport = stdio_client(StdioServerParameters(command="sh", args=["-c", f"exec {target[6:]}"]))
    elif bearer:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {bearer}"})
        transport = streamable_http_client(target, http_client=http)
    else:
        transport = streamable_http_client(target)
    client = Client(transport, mode="legacy", cache=None)
    async with client:
        yield client


async def all_items(client: Client, kind: str) -> list[dict]:
    method = {
        "tools": client.list_tools,
        "prompts": client.list_prompts,
        "resources": client.list_resources,
        "resourceTemplates": client.list_resource_templates,
    }[kind]
    items: list[dict] = []
    cursor = None
    for _ in range(50):
        page = dump(await method(cursor=cursor, cache_mode="bypass"))
        items += page.get(kind, [])
        cursor = page.get("nextCursor")
        if cursor is None:
            return items
    raise RuntimeError(f"{kind}: more than 50 pages")


def gateway_uri(prefix: str, uri: str) -> str | None:
    m = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*):(//)?(.*)$", uri, re.S)
    return f"{m.group(1)}:{m.group(2) or ''}{prefix}/{m.group(3)}" if m else None


def caps_of(client: Client) -> dict:
    return dump(client.server_capabilities) if client.server_capabilities else {}


async def check_upstream(gw: Client, lists: dict, prefix: str, target: str) -> None:
    async with connect(target) as direct:
        caps = caps_of(direct)
        direct_tools = await all_items(direct, "tools") if "tools" in caps else []
        for cap, kind, field in (
            ("tools", "tools", "name"),
            ("prompts", "prompts", "name"),
            ("resources", "resources", "uri"),
            ("resources", "resourceTemplates", "uriTemplate"),
        ):
            if cap not in caps:
                continue
            items = direct_tools if kind == "tools" else await all_items(direct, kind)
            if field == "name":
                want = sorted(f"{prefix}_{x[field]}" for x in items)
                got = sorted(x[field] for x in lists[kind] if x[field].startswith(f"{prefix}_"))
            else:
                want = sorted(gateway_uri(prefix, x[field]) or "" for x in items)
                got = sorted(x[field] for x in lists[kind] if f"://{prefix}/" in x[field] or x[field].startswith(f"{prefix}:"))
            # Tools there must be; a server may declare prompts or resources and have none.
            if got == want and (want or kind != "tools"):
                ok(f"{prefix}: {kind} listed under the prefix ({len(want)})")
            else:
                bad(f"{prefix}: {kind} listed under the prefix", f"expected {J(want)}, got {J(got)}")
        by_name = {t["name"]: t for t in lists["tools"]}
        modern = prefix in os.environ.get("GATEWAY_MODERN", "").split(",")
        for t in direct_tools:
            g = by_name.get(f"{prefix}_{t['name']}")
            if g is not None and modern:
                # A 2026-07-28 upstream decides per call which calls become tasks: the gateway
                # serves its tools as `optional` when it offers tasks, and compares the rest.
                if g.get("execution", {"taskSupport": "optional"}) != {"taskSupport": "optional"}:
                    bad(f"{prefix}: tool {t['name']} execution", f"gateway {J(g)}")
                    break
                g = {k: v for k, v in g.items() if k != "execution"}
                t = {k: v for k, v in t.items() if k != "execution"}
            if g is not None and {**g, "name": t["name"]} != t:
                bad(f"{prefix}: tool {t['name']} definition", f"direct {J(t)}, gateway {J(g)}")
                break
        else:
            if direct_tools:
                ok(f"{prefix}: every tool's definition is the upstream's but for its name")
        simple = next(
            (t for t in direct_tools if not (t.get("inputSchema") or {}).get("required")
             and re.search(r"simple_text|get-env", t["name"])),
            None,
        ) or next((t for t in direct_tools if t["name"] == "add"), None)
        args = {"a": 2, "b": 3} if simple and simple["name"] == "add" else {}
        if simple is None:
            bad(f"{prefix}: tools/call", "no argument-free tool (nor add) found")
        else:
            a = dump(await direct.call_tool(simple["name"], args))
            b = dump(await gw.call_tool(f"{prefix}_{simple['name']}", args))
            if a.get("content") == b.get("content") and not b.get("isError"):
                ok(f"{prefix}: tools/call {prefix}_{simple['name']} answers as {simple['name']} does directly")
            else:
                bad(f"{prefix}: tools/call {prefix}_{simple['name']}", f"direct {J(a)}, gateway {J(b)}")
        if "resources" in caps:
            resources = await all_items(direct, "resources")
            if resources:
                uri = resources[0]["uri"]
                a = dump(await direct.read_resource(uri, cache_mode="bypass"))
                b = dump(await gw.read_resource(gateway_uri(prefix, uri), cache_mode="bypass"))
                want = [{**c, "uri": gateway_uri(prefix, c["uri"])} for c in a["contents"]]
                if b["contents"] == want:
                    ok(f"{prefix}: resources/read {gateway_uri(prefix, uri)} has the upstream's contents")
                else:
                    bad(f"{prefix}: resources/read", f"expected {J(want)}, got {J(b['contents'])}")


async def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: gateway_check.py GATEWAY_URL PREFIX=DIRECT ...", file=sys.stderr)
        return 2
    gateway_url, pairs = argv[0], argv[1:]
    async with connect(gateway_url, os.environ.get("GATEWAY_BEARER")) as gw:
        caps = caps_of(gw)
        lists = {
            "tools": await all_items(gw, "tools") if "tools" in caps else [],
            "prompts": await all_items(gw, "prompts") if "prompts" in caps else [],
            "resources": await all_items(gw, "resources") if "resources" in caps else [],
            "resourceTemplates": await all_items(gw, "resourceTemplates") if "resources" in caps else [],
        }
        prefixes = [p.split("=", 1)[0] for p in pairs]
        stray = [t["name"] for t in lists["tools"] if not any(t["name"].startswith(f"{p}_") for p in prefixes)]
        if stray:
            bad("every tool of the gateway is under an upstream prefix", J(stray))
        else:
            ok("every tool of the gateway is under an upstream prefix")
        for pair in pairs:
            prefix, target = pair.split("=", 1)
            try:
                await check_upstream(gw, lists, prefix, target)
            except Exception as e:  # noqa: BLE001
                bad(f"{prefix}: checks", repr(e))
    print(f"{passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    try:
        sys.exit(anyio.run(main, sys.argv[1:]))
    except Exception as e:  # noqa: BLE001
        print(f"FAIL gateway_check: {e!r}")
        print(f"{passed} passed, {failed + 1} failed")
        sys.exit(1)
