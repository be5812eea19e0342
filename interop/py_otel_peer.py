#!/usr/bin/env python3
"""The official Python SDK (`mcp` 2.x) with OpenTelemetry exporting, for interop/otel-peers.sh.

    python interop/py_otel_peer.py client MCP_URL OTLP_BASE   call `add` on MCP_URL (legacy era)
    python interop/py_otel_peer.py server OTLP_BASE           serve `add` on a free port

The SDK emits its spans through the OpenTelemetry API, on by default (a CLIENT span per request
it sends, with `traceparent` injected into `params._meta`; a SERVER span per request it handles,
parented on the `traceparent` it extracts). This script only installs the OpenTelemetry SDK's
tracer provider with the official OTLP/HTTP exporter to OTLP_BASE/v1/traces, service name
`py-client` or `py-server`. The server prints `listening on http://127.0.0.1:PORT/mcp` on stderr.
"""

from __future__ import annotations

import sys
import warnings

import anyio
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

warnings.simplefilter("ignore", DeprecationWarning)


def install(service: str, base: str) -> TracerProvider:
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{base.rstrip('/')}/v1/traces")))
    trace.set_tracer_provider(provider)
    return provider


async def client(url: str) -> None:
    from mcp import Client

    async with Client(url, mode="legacy", read_timeout_seconds=15) as c:
        r = await c.call_tool("add", {"a": 2, "b": 3})
        text = r.content[0].text if r.content else None
        if r.is_error or text is None or "5" not in text:
            raise SystemExit(f"py_otel_peer: unexpected result {r}")
        print(f"add -> {text}", flush=True)


async def server() -> None:
    import uvicorn
    from mcp.server.mcpserver import MCPServer

    mcp = MCPServer("py-otel-server")

    @mcp.tool()
    def add(a: float, b: float) -> str:
        """Add two numbers."""
        return str(a + b)

    app = mcp.streamable_http_app(host="127.0.0.1", streamable_http_path="/mcp")
    web = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on"))

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
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "client" and len(sys.argv) == 4:
        provider = install("py-client", sys.argv[3])
        anyio.run(client, sys.argv[2])
        provider.shutdown()
    elif mode == "server" and len(sys.argv) == 3:
        install("py-server", sys.argv[2])
        anyio.run(server)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
