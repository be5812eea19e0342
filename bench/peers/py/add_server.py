#!/usr/bin/env python3
"""The benchmark's `add` server on the official Python SDK (`mcp` 2.x, `MCPServer`).

    python add_server.py --stdio [--tools N] [--resources N]
    python add_server.py --http 127.0.0.1:PORT [--stateless] [--json-response] [--tools N] [--resources N]

The tools are the same as every other peer's: `add`, {a: number, b: number} -> one text block with
the sum, and `blob`, {bytes: integer} -> one text block of that many `x` (unstructured: no
structuredContent, as the others). `--tools N` registers N further tools `tool_{i}` adding two
numbers (`add_tool`), `--resources N` N text resources `bench://resource/{i}` (`add_resource`
with a `TextResource`); the SDK lists them in one page. Fastest settings the SDK offers: logging at
WARNING, uvicorn with its access log off and a long keep-alive; Streamable HTTP at /mcp on
127.0.0.1 only, stateful by default (a session per initialize), `--stateless` for the SDK's
stateless mode, `--json-response` for application/json answers instead of SSE.
"""

from __future__ import annotations

import argparse
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("bench-python-add", log_level="WARNING")


@server.tool(description="Add two numbers", structured_output=False)
def add(a: float, b: float) -> str:
    total = a + b
    # Written as the other peers write it: 3, not 3.0.
    return str(int(total)) if float(total).is_integer() and abs(total) < 2**53 else repr(float(total))


MAX_BLOB_BYTES = 16 << 20


@server.tool(description="Return a text block of this many bytes", structured_output=False)
def blob(bytes: int) -> str:
    if not 0 <= bytes <= MAX_BLOB_BYTES:
        raise ValueError(f"bytes must be in 0..={MAX_BLOB_BYTES}")
    return "x" * bytes


def register_lists(tools: int, resources: int) -> None:
    """The further tools and resources of --tools and --resources."""
    from mcp.server.mcpserver.resources import TextResource

    for i in range(tools):
        server.add_tool(add, name=f"tool_{i}", description=f"Benchmark tool {i}: add two numbers", structured_output=False)
    for i in range(resources):
        server.add_resource(
            TextResource(uri=f"bench://resource/{i}", name=f"resource-{i}", mime_type="text/plain", text=f"resource {i}")
        )


def main() -> int:
    ap = argparse.ArgumentParser()
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--stdio", action="store_true")
    mode.add_argument("--http", metavar="HOST:PORT")
    ap.add_argument("--stateless", action="store_true")
    ap.add_argument("--json-response", action="store_true")
    ap.add_argument("--tools", type=int, default=0, metavar="N")
    ap.add_argument("--resources", type=int, default=0, metavar="N")
    args = ap.parse_args()
    register_lists(args.tools, args.resources)
    if args.stdio:
        server.run()
        return 0
    host, _, port = args.http.rpartition(":")
    if host not in ("127.0.0.1", "localhost"):
        print("add_server.py: listens on 127.0.0.1 only", file=sys.stderr)
        return 2
    import uvicorn

    app = server.streamable_http_app(
        json_response=args.json_response,
        stateless_http=args.stateless,
        host=host,
    )
    config = uvicorn.Config(
        app,
        host=host,
        port=int(port),
        log_level="warning",
        access_log=False,
        timeout_keep_alive=600,
        lifespan="on",
    )
    uvicorn.Server(config).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
