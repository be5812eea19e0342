#!/usr/bin/env python3
"""A small OTLP/HTTP receiver for the telemetry interop (interop/otel-peers.sh).

    python interop/otel_receiver.py OUT.jsonl

Listens on a free 127.0.0.1 port and prints `listening on http://127.0.0.1:PORT` (the base URL,
as OTEL_EXPORTER_OTLP_ENDPOINT means it) on stdout. Every POST to /v1/traces or /v1/metrics is
decoded with the official protobuf definitions (`opentelemetry-proto`'s ExportTraceServiceRequest
and ExportMetricsServiceRequest), never by hand, and appended to OUT.jsonl as one JSON line per
span or metric data point:

    {"signal": "span", "service": ..., "name": ..., "kind": "SERVER", "trace_id": hex,
     "span_id": hex, "parent_span_id": hex or "", "attributes": {...}}
    {"signal": "metric", "service": ..., "name": ..., "attributes": {...}, "value": number}

Anything else (another path, a body that does not decode) is answered 400 and logged on stderr.
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span

MAX_BODY = 16 * 1024 * 1024
LOCK = threading.Lock()


def value(v):  # an AnyValue
    kind = v.WhichOneof("value")
    if kind is None:
        return None
    if kind in ("array_value", "kvlist_value", "bytes_value"):
        return str(getattr(v, kind))
    return getattr(v, kind)


def attrs(kvs) -> dict:
    return {kv.key: value(kv.value) for kv in kvs}


def service_of(resource) -> str:
    return str(attrs(resource.attributes).get("service.name", ""))


def spans(req: ExportTraceServiceRequest):
    for rs in req.resource_spans:
        service = service_of(rs.resource)
        for ss in rs.scope_spans:
            for s in ss.spans:
                yield {
                    "signal": "span",
                    "service": service,
                    "scope": ss.scope.name,
                    "name": s.name,
                    "kind": Span.SpanKind.Name(s.kind).removeprefix("SPAN_KIND_"),
                    "trace_id": s.trace_id.hex(),
                    "span_id": s.span_id.hex(),
                    "parent_span_id": s.parent_span_id.hex(),
                    "attributes": attrs(s.attributes),
                    "status": s.status.code,
                }


def points(req: ExportMetricsServiceRequest):
    for rm in req.resource_metrics:
        service = service_of(rm.resource)
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                kind = m.WhichOneof("data")
                data = getattr(m, kind)
                for p in data.data_points:
                    if kind == "histogram":
                        v = p.count
                    else:
                        v = p.as_int if p.WhichOneof("value") == "as_int" else p.as_double
                    yield {"signal": "metric", "service": service, "name": m.name, "kind": kind,
                           "attributes": attrs(p.attributes), "value": v}


class Handler(BaseHTTPRequestHandler):
    out = None

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_POST(self) -> None:  # noqa: N802
        n = int(self.headers.get("content-length") or 0)
        if n > MAX_BODY:
            self.send_error(413)
            return
        body = self.rfile.read(n)
        try:
            if self.path == "/v1/traces":
                req = ExportTraceServiceRequest()
                req.ParseFromString(body)
                rows, answer = list(spans(req)), ExportTraceServiceResponse()
            elif self.path == "/v1/metrics":
                req = ExportMetricsServiceRequest()
                req.ParseFromString(body)
                rows, answer = list(points(req)), ExportMetricsServiceResponse()
            else:
                raise ValueError(f"unexpected path {self.path}")
        except Exception as e:  # noqa: BLE001 - any decoding failure is the sender's
            print(f"otel_receiver: {e}", file=sys.stderr, flush=True)
            self.send_error(400)
            return
        with LOCK, open(self.out, "a", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
        data = answer.SerializeToString()
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main() -> None:
    Handler.out = sys.argv[1]
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"listening on http://127.0.0.1:{httpd.server_address[1]}", flush=True)
    httpd.serve_forever()


if __name__ == "__main__":
    main()
