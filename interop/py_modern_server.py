#!/usr/bin/env python3
"""A small dual-era server written with the official Python SDK (`mcp` 2.3.0, `MCPServer`), to
run our client against in revision 2026-07-28 (and in the 2025 era with the same tools).

    python interop/py_modern_server.py [--stdio]      newline-delimited JSON-RPC on stdio (the
                                                      first request picks the era)
    python interop/py_modern_server.py --http PORT    Streamable HTTP on http://127.0.0.1:PORT/mcp
                                                      (PORT 0 picks a free port); prints
                                                      `listening on http://127.0.0.1:PORT/mcp` on
                                                      stderr once it accepts connections

Tools:
- `add(a, b)`: the sum as text.
- `greet()`: asks the client for a name (an elicitation: an input-required round in 2026-07-28, a
  server-to-client request in the 2025 era) and answers `Hello, NAME!`.
- `count_roots()`: asks for the client's roots (`roots/list`, the same way) and answers how many.
- `regional(region, query)`: `region` carries `x-mcp-header: Region`, so a 2026 HTTP client
  mirrors it into `Mcp-Param-Region` (the SDK checks the header against the body); answers
  `region=REGION`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Annotated

import anyio
from mcp.server.mcpserver import Elicit, ListRoots, MCPServer, Resolve
from mcp_types import ListRootsResult
from pydantic import BaseModel, Field

server = MCPServer("py-modern-server")


@server.tool()
def add(a: int, b: int) -> str:
    """Adds two integers."""
    return str(a + b)


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


@server.tool()
def greet(who: Annotated[Name, Resolve(ask_name)]) -> str:
    """Greets whoever the client names."""
    return f"Hello, {who.name}!"


def ask_roots() -> ListRoots:
    return ListRoots()


@server.tool()
def count_roots(roots: Annotated[ListRootsResult, Resolve(ask_roots)]) -> str:
    """Counts the client's roots."""
    return f"{len(roots.roots)} roots"


@server.tool()
def regional(
    region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
    query: str = "",
) -> str:
    """Answers with the region it was asked for (mirrored into Mcp-Param-Region on HTTP)."""
    return f"region={region}"


async def run_http(port: int) -> None:
    import uvicorn

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
        server.run("stdio")


if __name__ == "__main__":
    main()
