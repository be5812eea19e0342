//! Telemetry in memory: one trace across our client → our server → the server's request back to
//! the client ([D26-22] trace context in `params._meta`), the Prometheus text parsed, the tool
//! label cap crossed, malformed and oversized trace context ignored, nothing on unless asked.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use opentelemetry::trace::{SpanKind, TraceContextExt as _, TraceId};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use switchboard_client::{Client, ClientSession, EraMode};
use switchboard_jsonrpc::memory;
use switchboard_server::{Server, ServerSession, ToolError};
use switchboard_telemetry::{
    MAX_TRACEPARENT_LEN, MAX_TRACESTATE_LEN, Telemetry, extract_context, inject_context,
};
use switchboard_types::jsonrpc::to_raw;
use switchboard_types::lifecycle::Implementation;
use switchboard_types::roots::Root;
use switchboard_types::tools::{CallToolResult, Tool};

fn tool(name: &str) -> Tool {
    Tool::new(name, json!({"type": "object"}))
}

fn server(telemetry: &Telemetry) -> Server {
    let mut b = Server::builder(Implementation::new("telemetry-test", "1"));
    for n in ["a", "b", "c", "echo"] {
        b = b.tool(tool(n), |_| async { Ok(CallToolResult::text("ok")) });
    }
    b.tool(tool("fails"), |_| async { Ok(CallToolResult::error("no")) })
        .tool(tool("roots"), |call| async move {
            let r = call
                .cx
                .list_roots()
                .await
                .map_err(|e| ToolError::new(e.to_string()))?;
            Ok(CallToolResult::text(r.roots[0].uri.clone()))
        })
        .layer(telemetry.clone())
        .build()
        .unwrap()
}

async fn connect(s: &Server, client: Option<&Telemetry>) -> (ClientSession, ServerSession) {
    let (a, b) = memory::pair();
    let session = s.serve(b).unwrap();
    let mut builder = Client::builder(Implementation::new("telemetry-client", "1"))
        .era(EraMode::Legacy)
        .roots([Root::new("file:///work")]);
    if let Some(t) = client {
        builder = builder.layer(t.clone());
    }
    (builder.build().connect(a).await.unwrap(), session)
}

fn traced(exporter: &InMemorySpanExporter, name: &str) -> Telemetry {
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    Telemetry::builder(name)
        .tracer_provider(provider)
        .network_transport("pipe")
        .build()
        .unwrap()
}

fn find<'a>(spans: &'a [SpanData], name: &str, kind: SpanKind) -> &'a SpanData {
    spans
        .iter()
        .find(|s| s.name == name && s.span_kind == kind)
        .unwrap_or_else(|| {
            let all: Vec<_> = spans.iter().map(|s| (&s.name, &s.span_kind)).collect();
            panic!("no {kind:?} span {name:?} among {all:?}")
        })
}

fn attr(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.to_string())
}

#[tokio::test]
async fn d26_22_one_trace_runs_client_to_server_to_the_servers_request_back() {
    let exporter = InMemorySpanExporter::default();
    let server_side = traced(&exporter, "server");
    let client_side = traced(&exporter, "client");
    let s = server(&server_side);
    let (c, _session) = connect(&s, Some(&client_side)).await;
    let r = c.call_tool("roots", json!({})).await.unwrap();
    assert!(format!("{:?}", r.content).contains("file:///work"), "{r:?}");
    let spans = exporter.get_finished_spans().unwrap();

    let call_out = find(&spans, "tools/call roots", SpanKind::Client);
    let call_in = find(&spans, "tools/call roots", SpanKind::Server);
    let roots_out = find(&spans, "roots/list", SpanKind::Client);
    let roots_in = find(&spans, "roots/list", SpanKind::Server);

    let trace: TraceId = call_out.span_context.trace_id();
    for s in [call_in, roots_out, roots_in] {
        assert_eq!(
            s.span_context.trace_id(),
            trace,
            "{} in another trace",
            s.name
        );
    }
    assert_eq!(call_in.parent_span_id, call_out.span_context.span_id());
    assert_eq!(roots_out.parent_span_id, call_in.span_context.span_id());
    assert_eq!(roots_in.parent_span_id, roots_out.span_context.span_id());
    assert!(call_in.parent_span_is_remote && roots_in.parent_span_is_remote);
    assert!(
        !roots_out.parent_span_is_remote,
        "a local child of the handler's span"
    );

    // The conventions' attributes.
    assert_eq!(attr(call_in, "mcp.method.name").unwrap(), "tools/call");
    assert_eq!(attr(call_in, "gen_ai.tool.name").unwrap(), "roots");
    assert_eq!(
        attr(call_in, "gen_ai.operation.name").unwrap(),
        "execute_tool"
    );
    assert_eq!(attr(call_in, "mcp.protocol.version").unwrap(), "2025-11-25");
    assert_eq!(attr(call_in, "network.transport").unwrap(), "pipe");
    assert_eq!(
        attr(call_in, "jsonrpc.request.id").unwrap(),
        attr(call_out, "jsonrpc.request.id").unwrap(),
        "both ends record the id the engine chose"
    );
    assert!(attr(call_in, "error.type").is_none());
    assert_eq!(attr(roots_in, "mcp.method.name").unwrap(), "roots/list");
    // The initialize exchange is traced too, in a trace of its own.
    let init = find(&spans, "initialize", SpanKind::Server);
    assert_ne!(init.span_context.trace_id(), trace);
}

/// Over Streamable HTTP the client learns the session id from the transport: its spans carry
/// the same `mcp.session.id` as the server's, and a sent request's span the id the engine chose
/// for it (`jsonrpc.request.id`), the one the server's span records.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d26_22_client_spans_carry_the_session_and_request_ids_the_server_sees() {
    use switchboard_http::{HttpConfig, SessionStartError, StreamableHttpService};
    use switchboard_http_client::{HttpClientConfig, HttpClientTransport};

    let exporter = InMemorySpanExporter::default();
    let s = server(&traced(&exporter, "server"));
    let factory = {
        let s = s.clone();
        move |t| {
            s.serve(t)
                .map(|session| session.peer().clone())
                .map_err(SessionStartError::role)
        }
    };
    let service = StreamableHttpService::new(factory, HttpConfig::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let serving = tokio::spawn(switchboard_http::serve(listener, service));

    let transport = HttpClientTransport::connect(&url, HttpClientConfig::default()).unwrap();
    let handle = transport.handle();
    let c = Client::builder(Implementation::new("telemetry-client", "1"))
        .era(EraMode::Legacy)
        .layer(traced(&exporter, "client"))
        .build()
        .connect(transport)
        .await
        .unwrap();
    c.call_tool("echo", json!({})).await.unwrap();
    let spans = exporter.get_finished_spans().unwrap();
    let out = find(&spans, "tools/call echo", SpanKind::Client);
    let inn = find(&spans, "tools/call echo", SpanKind::Server);
    let sid = handle.session_id().unwrap();
    assert_eq!(attr(out, "mcp.session.id").as_deref(), Some(sid.as_str()));
    assert_eq!(attr(inn, "mcp.session.id").as_deref(), Some(sid.as_str()));
    let id = attr(out, "jsonrpc.request.id").expect("the sent request's id");
    assert_eq!(attr(inn, "jsonrpc.request.id").unwrap(), id);
    // Before the server issued an id, the client had none to record.
    let init = find(&spans, "initialize", SpanKind::Client);
    assert!(attr(init, "mcp.session.id").is_none());
    c.close();
    serving.abort();
}

#[tokio::test]
async fn errors_are_recorded_as_the_conventions_say() {
    let exporter = InMemorySpanExporter::default();
    let t = traced(&exporter, "server");
    let s = server(&t);
    let (c, _session) = connect(&s, None).await;
    let r = c.call_tool("fails", json!({})).await.unwrap();
    assert_eq!(r.is_error, Some(true));
    assert!(c.call_tool("nope", json!({})).await.is_err());
    let spans = exporter.get_finished_spans().unwrap();
    let failed = find(&spans, "tools/call fails", SpanKind::Server);
    assert_eq!(attr(failed, "error.type").unwrap(), "tool_error");
    assert!(attr(failed, "rpc.response.status_code").is_none());
    assert!(matches!(
        failed.status,
        opentelemetry::trace::Status::Error { .. }
    ));
    let unknown = find(&spans, "tools/call nope", SpanKind::Server);
    assert_eq!(attr(unknown, "error.type").unwrap(), "-32602");
    assert_eq!(attr(unknown, "rpc.response.status_code").unwrap(), "-32602");
}

/// One sample line of the text format: name, labels, value.
fn parse(text: &str) -> Vec<(String, BTreeMap<String, String>, f64)> {
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') || line.is_empty() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let kind = rest.split(' ').nth(1).unwrap();
                assert!(["counter", "gauge", "histogram"].contains(&kind), "{line}");
            }
            continue;
        }
        let (series, value) = line.rsplit_once(' ').unwrap();
        let value: f64 = match value {
            "+Inf" => f64::INFINITY,
            v => v
                .parse()
                .unwrap_or_else(|_| panic!("bad value in {line:?}")),
        };
        let (name, labels) = match series.split_once('{') {
            None => (series.to_owned(), BTreeMap::new()),
            Some((name, rest)) => {
                let body = rest.strip_suffix('}').unwrap();
                let mut labels = BTreeMap::new();
                // Label values here hold no commas or escaped quotes.
                for pair in body.split("\",") {
                    let (k, v) = pair.split_once("=\"").unwrap();
                    labels.insert(k.to_owned(), v.trim_end_matches('"').to_owned());
                }
                (name.to_owned(), labels)
            }
        };
        assert!(
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':'),
            "{name}"
        );
        out.push((name, labels, value));
    }
    out
}

fn sample(
    rows: &[(String, BTreeMap<String, String>, f64)],
    name: &str,
    want: &[(&str, &str)],
) -> Option<f64> {
    rows.iter()
        .filter(|(n, l, _)| {
            n == name
                && want
                    .iter()
                    .all(|(k, v)| l.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|(_, _, v)| *v)
        .reduce(|a, b| a + b)
}

#[tokio::test]
async fn the_prometheus_text_counts_requests_by_method_tool_and_outcome() {
    let t = Telemetry::builder("server")
        .prometheus(true)
        .build()
        .unwrap();
    assert!(!t.traces(), "no span is recorded unless asked");
    let s = server(&t);
    let (c, _session) = connect(&s, None).await;
    for _ in 0..3 {
        c.call_tool("echo", json!({})).await.unwrap();
    }
    c.call_tool("fails", json!({})).await.unwrap();
    assert!(c.call_tool("nope", json!({})).await.is_err());
    c.list_tools().await.unwrap();
    let rows = parse(&t.prometheus_text());

    let requests = "switchboard_requests_total";
    let server_calls = |tool: &str, outcome: &str| {
        sample(
            &rows,
            requests,
            &[
                ("switchboard_side", "server"),
                ("mcp_method_name", "tools/call"),
                ("gen_ai_tool_name", tool),
                ("switchboard_outcome", outcome),
            ],
        )
    };
    assert_eq!(server_calls("echo", "ok"), Some(3.0));
    assert_eq!(server_calls("fails", "tool_error"), Some(1.0));
    assert_eq!(
        server_calls("other", "error"),
        Some(1.0),
        "an unknown tool is not a label"
    );
    assert_eq!(
        sample(&rows, requests, &[("mcp_method_name", "tools/list")]),
        Some(1.0)
    );
    assert_eq!(
        sample(&rows, requests, &[("mcp_method_name", "initialize")]),
        Some(1.0)
    );
    let count = "mcp_server_operation_duration_seconds_count";
    assert_eq!(
        sample(
            &rows,
            count,
            &[
                ("mcp_method_name", "tools/call"),
                ("gen_ai_tool_name", "echo")
            ]
        ),
        Some(3.0)
    );
    assert_eq!(
        sample(
            &rows,
            "mcp_server_operation_duration_seconds_bucket",
            &[("gen_ai_tool_name", "echo"), ("le", "+Inf")]
        ),
        Some(3.0)
    );
    assert_eq!(sample(&rows, count, &[("error_type", "-32602")]), Some(1.0));
    assert_eq!(
        sample(&rows, "switchboard_requests_in_flight", &[]),
        Some(0.0)
    );
    assert_eq!(sample(&rows, "switchboard_sessions_open", &[]), Some(1.0));
    let received = sample(
        &rows,
        "switchboard_transport_bytes_total",
        &[("network_io_direction", "receive")],
    )
    .unwrap();
    let sent = sample(
        &rows,
        "switchboard_transport_bytes_total",
        &[("network_io_direction", "transmit")],
    )
    .unwrap();
    assert!(received > 200.0 && sent > 200.0, "{received} {sent}");
}

#[tokio::test]
async fn tool_names_beyond_the_label_cap_are_counted_as_other() {
    let t = Telemetry::builder("server")
        .prometheus(true)
        .max_tool_labels(2)
        .build()
        .unwrap();
    let s = server(&t);
    let (c, _session) = connect(&s, None).await;
    // Unknown tools never take room; a and b fill it; c and echo are past the cap.
    assert!(c.call_tool("nope-1", json!({})).await.is_err());
    for name in ["a", "b", "c", "echo", "a"] {
        c.call_tool(name, json!({})).await.unwrap();
    }
    let rows = parse(&t.prometheus_text());
    let calls = |tool: &str| {
        sample(
            &rows,
            "switchboard_requests_total",
            &[("gen_ai_tool_name", tool), ("switchboard_outcome", "ok")],
        )
    };
    assert_eq!(calls("a"), Some(2.0));
    assert_eq!(calls("b"), Some(1.0));
    assert_eq!(calls("c"), None, "past the cap");
    assert_eq!(calls("other"), Some(2.0), "c and echo");
    let tools: std::collections::BTreeSet<&str> = rows
        .iter()
        .filter_map(|(_, l, _)| l.get("gen_ai_tool_name").map(String::as_str))
        .collect();
    assert_eq!(
        tools.into_iter().collect::<Vec<_>>(),
        vec!["a", "b", "other"]
    );
}

#[test]
fn methods_outside_the_catalogue_are_other() {
    use switchboard_telemetry::metrics::method_label;
    assert_eq!(method_label("tools/call"), "tools/call");
    assert_eq!(
        method_label("notifications/initialized"),
        "notifications/initialized"
    );
    assert_eq!(method_label("x-custom/anything"), "other");
    assert_eq!(method_label(&"a".repeat(10_000)), "other");
}

const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

fn raw(v: serde_json::Value) -> switchboard_types::RawJson {
    to_raw(&v).unwrap()
}

#[test]
fn d26_22_a_valid_traceparent_is_read_from_meta() {
    let cx = extract_context(Some(&raw(json!({"name": "t", "_meta": {
        "traceparent": PARENT, "tracestate": "rojo=00f067aa0ba902b7"}}))))
    .unwrap();
    let sc = cx.span().span_context().clone();
    assert_eq!(
        sc.trace_id().to_string(),
        "4bf92f3577b34da6a3ce929d0e0e4736"
    );
    assert_eq!(sc.span_id().to_string(), "00f067aa0ba902b7");
    assert!(sc.is_remote() && sc.is_sampled());
    assert_eq!(sc.trace_state().get("rojo"), Some("00f067aa0ba902b7"));
}

#[test]
fn d26_22_malformed_or_oversized_trace_context_is_ignored() {
    for bad in [
        json!({"_meta": {"traceparent": "00-zz-00f067aa0ba902b7-01"}}),
        json!({"_meta": {"traceparent": "00-00000000000000000000000000000000-00f067aa0ba902b7-01"}}),
        json!({"_meta": {"traceparent": 42}}),
        json!({"_meta": "traceparent"}),
        json!({"traceparent": PARENT}),
        json!(["traceparent", PARENT]),
        json!({"_meta": {"traceparent": format!("{PARENT}-{}", "a".repeat(MAX_TRACEPARENT_LEN))}}),
    ] {
        assert!(extract_context(Some(&raw(bad.clone()))).is_none(), "{bad}");
    }
    // A tracestate past its bound is dropped; the traceparent beside it still counts.
    let long = format!("k={}", "v".repeat(MAX_TRACESTATE_LEN));
    let cx = extract_context(Some(&raw(
        json!({"_meta": {"traceparent": PARENT, "tracestate": long}}),
    )))
    .unwrap();
    assert_eq!(cx.span().span_context().trace_state().header(), "");
}

#[test]
fn d26_22_injection_keeps_other_meta_and_leaves_odd_params_alone() {
    let remote = extract_context(Some(&raw(json!({"_meta": {"traceparent": PARENT}})))).unwrap();
    let out = inject_context(
        &remote,
        Some(raw(json!({"name": "t", "_meta": {"progressToken": 7}}))),
    )
    .unwrap();
    let v: serde_json::Value = serde_json::from_str(out.get()).unwrap();
    assert_eq!(v["_meta"]["progressToken"], 7);
    assert_eq!(v["_meta"]["traceparent"], PARENT);
    assert_eq!(v["name"], "t");
    let none = inject_context(&remote, None).unwrap();
    let v: serde_json::Value = serde_json::from_str(none.get()).unwrap();
    assert_eq!(v["_meta"]["traceparent"], PARENT);
    let arr = inject_context(&remote, Some(raw(json!([1, 2])))).unwrap();
    assert_eq!(arr.get(), "[1,2]");
    let odd = inject_context(&remote, Some(raw(json!({"_meta": 3})))).unwrap();
    assert_eq!(odd.get(), r#"{"_meta":3}"#);
    // No span, nothing injected.
    let plain = inject_context(&opentelemetry::Context::new(), Some(raw(json!({"a": 1})))).unwrap();
    assert_eq!(plain.get(), r#"{"a":1}"#);
}

#[tokio::test]
async fn d26_22_a_malformed_traceparent_is_served_as_a_root_span_never_an_error() {
    let exporter = InMemorySpanExporter::default();
    let t = traced(&exporter, "server");
    let s = server(&t);
    let (c, _session) = connect(&s, None).await;
    // Our client adds no _meta without a layer: one request plain, one with a bad traceparent
    // written by hand through the session's peer.
    c.call_tool("echo", json!({})).await.unwrap();
    let raw_peer = c.peer();
    let answer = raw_peer
        .request(
            "tools/call",
            Some(raw(
                json!({"name": "echo", "arguments": {}, "_meta": {"traceparent": "garbage"}}),
            )),
            switchboard_jsonrpc::RequestOptions::default(),
        )
        .await
        .unwrap();
    assert!(answer.get().contains("ok"));
    let spans = exporter.get_finished_spans().unwrap();
    let echo: Vec<_> = spans
        .iter()
        .filter(|s| s.name == "tools/call echo")
        .collect();
    assert_eq!(echo.len(), 2);
    assert!(
        echo.iter()
            .all(|s| s.parent_span_id == opentelemetry::trace::SpanId::INVALID)
    );
}

#[test]
fn nothing_is_on_unless_asked() {
    let t = Telemetry::builder("quiet").build().unwrap();
    assert!(!t.traces());
    assert_eq!(t.prometheus_text(), "");
    assert!(matches!(
        Telemetry::builder("x").otlp("localhost:4318").build(),
        Err(switchboard_telemetry::TelemetryError::Url(_))
    ));
}

#[test]
fn a_tool_name_past_128_characters_is_never_a_label() {
    let set = switchboard_telemetry::metrics::LabelSet::new(10);
    let long = "t".repeat(129);
    assert_eq!(&*set.label(&long, true), "other");
    assert_eq!(&*set.label(&"t".repeat(128), true), "t".repeat(128));
    assert_eq!(set.len(), 1);
}

#[tokio::test]
async fn a_target_past_256_characters_is_cut_on_the_span() {
    let exporter = InMemorySpanExporter::default();
    let t = traced(&exporter, "server");
    let s = server(&t);
    let (c, _session) = connect(&s, None).await;
    let long = "x".repeat(300);
    assert!(c.call_tool(&long, json!({})).await.is_err());
    let spans = exporter.get_finished_spans().unwrap();
    let want = format!(
        "tools/call {}",
        "x".repeat(switchboard_telemetry::MAX_TARGET_CHARS)
    );
    let span = find(&spans, &want, SpanKind::Server);
    assert_eq!(
        attr(span, "gen_ai.tool.name").unwrap().len(),
        switchboard_telemetry::MAX_TARGET_CHARS
    );
}

/// Answers every request with the error code its method names (`code/N`).
struct Codes;
impl switchboard_jsonrpc::Service for Codes {
    fn call(
        &self,
        req: switchboard_types::Request,
        _cx: switchboard_jsonrpc::RequestContext,
    ) -> switchboard_jsonrpc::BoxFuture<switchboard_jsonrpc::HandlerResult> {
        let code: i64 = req.method.trim_start_matches("code/").parse().unwrap();
        Box::pin(async move {
            Err(switchboard_types::ErrorObject::new(
                switchboard_types::ErrorCode(code),
                "no",
            ))
        })
    }

    fn notify(&self, _n: switchboard_types::Notification, _peer: &switchboard_jsonrpc::Peer) {}
}

#[tokio::test]
async fn a_peers_error_codes_outside_the_reserved_range_are_one_error_type() {
    use switchboard_jsonrpc::{Layers, RequestOptions, SessionConfig, spawn, spawn_layered};
    let t = Telemetry::builder("client")
        .prometheus(true)
        .build()
        .unwrap();
    let (a, b) = memory::pair();
    spawn(a, std::sync::Arc::new(Codes), SessionConfig::default());
    let ours = spawn_layered(
        b,
        std::sync::Arc::new(switchboard_jsonrpc::NullService),
        SessionConfig::default().with_name("client"),
        &Layers::new().layer(t.clone()),
    );
    for code in [-32601, 1, 2, 3, 987_654] {
        let r = ours
            .request(&format!("code/{code}"), None, RequestOptions::default())
            .await;
        assert!(r.is_err());
    }
    let rows = parse(&t.prometheus_text());
    let count = |e: &str| {
        sample(
            &rows,
            "mcp_client_operation_duration_seconds_count",
            &[("error_type", e)],
        )
    };
    assert_eq!(count("-32601"), Some(1.0));
    assert_eq!(count("_OTHER"), Some(4.0));
    let types: std::collections::BTreeSet<&str> = rows
        .iter()
        .filter_map(|(_, l, _)| l.get("error_type").map(String::as_str))
        .collect();
    assert_eq!(
        types.into_iter().collect::<Vec<_>>(),
        vec!["-32601", "_OTHER"]
    );
    assert_eq!(
        sample(
            &rows,
            "switchboard_requests_total",
            &[("mcp_method_name", "other"), ("switchboard_side", "client")]
        ),
        Some(5.0),
        "methods outside the catalogue are one label"
    );
}
