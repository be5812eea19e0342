#!/usr/bin/env python3
"""MCP Apps interop: the official Python SDK (`mcp` 2.3) `Client`, declaring the extension
`io.modelcontextprotocol/ui` with `mcp.client.advertise`, reads the notes example's app (docs/APPS.md).

    python interop/py_apps_client.py --note TITLE -- CMD [ARGS...]   spawn a stdio server command
    python interop/py_apps_client.py --note TITLE --http URL         Streamable HTTP

In both eras (mode="legacy": the 2025 handshake; mode="auto", which must settle on 2026-07-28 from
its `server/discover` probe: per-request envelopes), a host
with the extension must see: the extension in the server's capabilities; `search_notes` linked to
`ui://notes/list` by `_meta.ui.resourceUri`; the view listed and read as `text/html;profile=mcp-app`
with `_meta.ui` (a CSP with no external origin, a border) that the SDK's own Apps models
(`mcp.server.apps.ResourceCsp`) accept; an HTML document whose script calls `search_notes`; and
`search_notes` answering with the note TITLE, as it does when the view calls it through its host.
A client without the extension must see `search_notes` as a plain tool (no `_meta.ui`).

Prints one line per check (`PASS name` / `FAIL name: why`), then exactly `N passed, M failed`;
exits 0 only when every check passed.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import warnings
from typing import Any

import anyio
from mcp import Client
from mcp.client import advertise
from mcp.client.stdio import StdioServerParameters
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID, ResourceCsp
from mcp.shared.exceptions import MCPDeprecationWarning

warnings.simplefilter("ignore", MCPDeprecationWarning)
warnings.simplefilter("ignore", DeprecationWarning)

VIEW = "ui://notes/list"
OVERALL_TIMEOUT_S = 120.0
REQUEST_TIMEOUT_S = 15.0

passed = 0
failed = 0


def out(line: str) -> None:
    print(line, flush=True)


def check(name: str, problems: list[str]) -> None:
    global passed, failed
    if problems:
        failed += 1
        out(f"FAIL {name}: " + "; ".join(problems))
    else:
        passed += 1
        out(f"PASS {name}")


def dump(model: Any) -> dict:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def client(opts: argparse.Namespace, mode: str, apps: bool, errlog: Any) -> Client:
    server: Any = opts.http or StdioServerParameters(command=opts.command[0], args=opts.command[1:])
    extensions = [advertise(EXTENSION_ID, {"mimeTypes": [APP_MIME_TYPE]})] if apps else None
    kwargs: dict[str, Any] = {}
    if not opts.http:
        kwargs["errlog"] = errlog
    try:
        return Client(server, mode=mode, extensions=extensions, cache=None, read_timeout_seconds=REQUEST_TIMEOUT_S, **kwargs)
    except TypeError:
        # The stdio errlog is not a Client option in every release: the server's stderr then goes to ours.
        return Client(server, mode=mode, extensions=extensions, cache=None, read_timeout_seconds=REQUEST_TIMEOUT_S)


async def host_walk(opts: argparse.Namespace, mode: str, errlog: Any) -> None:
    async with client(opts, mode, True, errlog) as c:
        if mode == "auto":
            check("auto: the client settles on revision 2026-07-28",
                  [] if c.protocol_version == "2026-07-28" else [f"protocol version {c.protocol_version!r}"])
        caps = dump(c.server_capabilities)
        check(f"{mode}: the server declares {EXTENSION_ID}",
              [] if isinstance(caps.get("extensions", {}).get(EXTENSION_ID), dict) else [f"capabilities {json.dumps(caps)[:300]}"])

        tools = {t.name: dump(t) for t in (await c.list_tools()).tools}
        search = tools.get("search_notes")
        link = (search or {}).get("_meta", {}).get("ui", {})
        check(f"{mode}: search_notes links to {VIEW} (_meta.ui.resourceUri)",
              [] if link.get("resourceUri") == VIEW else [f"search_notes is {json.dumps(search)[:300]}"])

        listed = [dump(r) for r in (await c.list_resources()).resources]
        entry = next((r for r in listed if r.get("uri") == VIEW), None)
        problems = []
        if entry is None:
            problems.append(f"not in resources/list: {[r.get('uri') for r in listed]}")
        else:
            if entry.get("mimeType") != APP_MIME_TYPE:
                problems.append(f"mimeType {entry.get('mimeType')!r}")
            if "csp" not in entry.get("_meta", {}).get("ui", {}):
                problems.append(f"no _meta.ui.csp on the entry: {json.dumps(entry)[:300]}")
        check(f"{mode}: the view is listed as {APP_MIME_TYPE} with its _meta.ui", problems)

        read = await c.read_resource(VIEW)
        contents = [dump(x) for x in read.contents]
        first = contents[0] if contents else {}
        problems = []
        if first.get("uri") != VIEW:
            problems.append(f"contents uri {first.get('uri')!r}")
        if first.get("mimeType") != APP_MIME_TYPE:
            problems.append(f"mimeType {first.get('mimeType')!r}")
        html = first.get("text", "")
        if not html.lower().startswith("<!doctype html>"):
            problems.append(f"not an HTML document: {html[:60]!r}")
        for needle in ('"ui/initialize"', '"tools/call"', 'name: "search_notes"', "postMessage"):
            if needle not in html:
                problems.append(f"the view's script lacks {needle}")
        check(f"{mode}: resources/read gives the view as an HTML document calling search_notes through its host", problems)

        ui = first.get("_meta", {}).get("ui", {})
        problems = []
        try:
            csp = ResourceCsp.model_validate(ui.get("csp"))
            if csp.connect_domains != [] or csp.resource_domains != []:
                problems.append(f"external origins declared: {ui.get('csp')}")
        except Exception as e:  # noqa: BLE001
            problems.append(f"the SDK's ResourceCsp refuses {ui.get('csp')!r}: {e}")
        if ui.get("prefersBorder") is not True:
            problems.append(f"prefersBorder {ui.get('prefersBorder')!r}")
        check(f"{mode}: the contents' _meta.ui reads as the SDK's Apps CSP model (no external origin, a border)", problems)

        # What the host does when the view posts tools/call {name: "search_notes"}: forward it.
        result = dump(await c.call_tool("search_notes", {"query": ""}))
        notes = result.get("structuredContent", {}).get("notes")
        check(f"{mode}: search_notes, as the view calls it, names the notes",
              [] if isinstance(notes, list) and opts.note in notes else [f"result {json.dumps(result)[:300]}"])


async def plain_walk(opts: argparse.Namespace, mode: str, errlog: Any) -> None:
    async with client(opts, mode, False, errlog) as c:
        tools = {t.name: dump(t) for t in (await c.list_tools()).tools}
        search = tools.get("search_notes")
        problems = []
        if search is None:
            problems.append(f"search_notes not listed: {sorted(tools)}")
        elif "ui" in search.get("_meta", {}):
            problems.append(f"_meta.ui shown to a host without the extension: {json.dumps(search)[:300]}")
        check(f"{mode}: a client without the extension sees search_notes as a plain tool", problems)


async def walk(opts: argparse.Namespace) -> None:
    with tempfile.TemporaryFile(mode="w+") as errlog:
        for mode in ("legacy", "auto"):
            for walker in (host_walk, plain_walk):
                try:
                    with anyio.fail_after(OVERALL_TIMEOUT_S):
                        await walker(opts, mode, errlog)
                except Exception as e:  # noqa: BLE001
                    import traceback

                    check(f"{mode}: {walker.__name__} ran", ["".join(traceback.format_exception(e)).replace("\n", " | ")[-1500:]])
        errlog.seek(0)
        text = errlog.read()
        check("server stderr: no panic", [text[-2000:]] if "panicked at" in text else [])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--http", default=None)
    ap.add_argument("--note", required=True, help="the title of a note in the server's directory")
    ap.add_argument("command", nargs="*")
    opts = ap.parse_args(sys.argv[1:])
    if not opts.http and not opts.command:
        ap.error("give -- CMD [ARGS...] or --http URL")
    anyio.run(walk, opts)
    if passed + failed == 0:
        check("harness", ["no check ran"])
    out(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
