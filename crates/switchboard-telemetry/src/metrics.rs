//! The instruments and their bounded labels.
//!
//! | Instrument | Kind | Unit | Attributes |
//! |---|---|---|---|
//! | `mcp.server.operation.duration` | histogram | `s` | `mcp.method.name`, `gen_ai.tool.name`, `error.type` |
//! | `mcp.client.operation.duration` | histogram | `s` | the same |
//! | `switchboard.requests` | counter | `{request}` | `switchboard.side`, `mcp.method.name`, `gen_ai.tool.name`, `switchboard.outcome` |
//! | `switchboard.requests.in_flight` | up-down counter | `{request}` | `switchboard.side`, `mcp.method.name` |
//! | `switchboard.sessions.open` | up-down counter | `{session}` | `switchboard.side` |
//! | `switchboard.transport.bytes` | counter | `By` | `switchboard.side`, `network.io.direction` (`receive`, `transmit`) |
//!
//! `switchboard.outcome` is `ok`, `error` (a JSON-RPC error), `tool_error` (a tool result with
//! `isError`) or `cancelled` (the request was given up before an answer). In Prometheus text
//! the names become `mcp_server_operation_duration_seconds`, `switchboard_requests_total`,
//! `switchboard_requests_in_flight`, `switchboard_sessions_open` and
//! `switchboard_transport_bytes_total`, the attributes `mcp_method_name` and so on.
//!
//! Label values are bounded: a method outside the MCP catalogue is `other`; a tool name is
//! itself only once a call of it was answered with a result and while fewer than
//! [`DEFAULT_MAX_TOOL_LABELS`] (or the configured number of) names have been admitted, `other`
//! after that.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram, Meter, UpDownCounter};
use switchboard_types::catalogue;

/// The default bound on distinct tool names as labels.
pub const DEFAULT_MAX_TOOL_LABELS: usize = 100;
/// Longest tool name kept as a label (MCP tool names are 1 to 128 characters); longer is `other`.
pub const MAX_TOOL_LABEL_CHARS: usize = 128;
/// The label value of everything past a bound.
pub const OTHER: &str = "other";

/// Bucket bounds of the duration histograms, in seconds (the conventions' advice).
pub const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The method as a label: itself when the catalogue knows it, `other` when not.
pub fn method_label(method: &str) -> &'static str {
    catalogue::request(method)
        .or_else(|| catalogue::notification(method))
        .map_or(OTHER, |s| s.name)
}

/// The tool names admitted as labels, at most `max`.
#[derive(Debug)]
pub struct LabelSet {
    max: usize,
    names: Mutex<HashSet<Arc<str>>>,
}

impl LabelSet {
    /// An empty set admitting at most `max` names.
    pub fn new(max: usize) -> Self {
        LabelSet {
            max,
            names: Mutex::new(HashSet::new()),
        }
    }

    /// The label for `name`: itself when admitted (admitting it now when `admit` and there is
    /// room), `other` when not.
    pub fn label(&self, name: &str, admit: bool) -> Arc<str> {
        if name.chars().count() > MAX_TOOL_LABEL_CHARS {
            return Arc::from(OTHER);
        }
        let Ok(mut names) = self.names.lock() else {
            return Arc::from(OTHER);
        };
        if let Some(n) = names.get(name) {
            return n.clone();
        }
        if admit && names.len() < self.max {
            let n: Arc<str> = Arc::from(name);
            names.insert(n.clone());
            return n;
        }
        Arc::from(OTHER)
    }

    /// How many names are admitted.
    pub fn len(&self) -> usize {
        self.names.lock().map(|n| n.len()).unwrap_or(0)
    }

    /// Whether no name is admitted yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// How a request ended, for the `switchboard.outcome` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Answered with a result.
    Ok,
    /// Answered with a JSON-RPC error (or failed before an answer, on the sending side).
    Error,
    /// A tool result with `isError: true`.
    ToolError,
    /// Given up before an answer (cancelled, or its future dropped).
    Cancelled,
}

impl Outcome {
    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Error => "error",
            Outcome::ToolError => "tool_error",
            Outcome::Cancelled => "cancelled",
        }
    }
}

/// The instruments, made once per [`crate::Telemetry`].
#[derive(Debug)]
pub(crate) struct Instruments {
    server_duration: Histogram<f64>,
    client_duration: Histogram<f64>,
    requests: Counter<u64>,
    in_flight: UpDownCounter<i64>,
    sessions: UpDownCounter<i64>,
    bytes: Counter<u64>,
}

/// What one finished request records.
pub(crate) struct Finished<'a> {
    pub(crate) side: &'static str,
    pub(crate) handled: bool,
    pub(crate) method: &'static str,
    pub(crate) tool: Option<Arc<str>>,
    pub(crate) outcome: Outcome,
    pub(crate) error_type: Option<&'a str>,
    pub(crate) seconds: f64,
}

impl Instruments {
    pub(crate) fn new(meter: &Meter) -> Self {
        Instruments {
            server_duration: meter
                .f64_histogram("mcp.server.operation.duration")
                .with_unit("s")
                .with_description("MCP request duration as observed on the receiver, from the time it was received until the result was sent.")
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build(),
            client_duration: meter
                .f64_histogram("mcp.client.operation.duration")
                .with_unit("s")
                .with_description("MCP request duration as observed on the sender, from the time it was sent until the response was received.")
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build(),
            requests: meter
                .u64_counter("switchboard.requests")
                .with_unit("{request}")
                .with_description("MCP requests finished, by side, method, tool and outcome.")
                .build(),
            in_flight: meter
                .i64_up_down_counter("switchboard.requests.in_flight")
                .with_unit("{request}")
                .with_description("MCP requests being handled or awaited now.")
                .build(),
            sessions: meter
                .i64_up_down_counter("switchboard.sessions.open")
                .with_unit("{session}")
                .with_description("Engine sessions open now (a connection, a 2025 session, or one 2026-07-28 exchange).")
                .build(),
            bytes: meter
                .u64_counter("switchboard.transport.bytes")
                .with_unit("By")
                .with_description("Bytes of MCP frames received and sent.")
                .build(),
        }
    }

    pub(crate) fn started(&self, side: &'static str, method: &'static str) {
        self.in_flight.add(
            1,
            &[
                KeyValue::new("switchboard.side", side),
                KeyValue::new("mcp.method.name", method),
            ],
        );
    }

    pub(crate) fn finished(&self, f: Finished<'_>) {
        self.in_flight.add(
            -1,
            &[
                KeyValue::new("switchboard.side", f.side),
                KeyValue::new("mcp.method.name", f.method),
            ],
        );
        let mut attrs = Vec::with_capacity(4);
        attrs.push(KeyValue::new("mcp.method.name", f.method));
        if let Some(tool) = &f.tool {
            attrs.push(KeyValue::new(
                "gen_ai.tool.name",
                opentelemetry::StringValue::from(tool.clone()),
            ));
        }
        let mut duration_attrs = attrs.clone();
        if let Some(e) = f.error_type {
            duration_attrs.push(KeyValue::new("error.type", e.to_owned()));
        }
        let hist = if f.handled {
            &self.server_duration
        } else {
            &self.client_duration
        };
        hist.record(f.seconds, &duration_attrs);
        attrs.push(KeyValue::new("switchboard.side", f.side));
        attrs.push(KeyValue::new("switchboard.outcome", f.outcome.as_str()));
        self.requests.add(1, &attrs);
    }

    pub(crate) fn session(&self, side: &'static str, delta: i64) {
        self.sessions
            .add(delta, &[KeyValue::new("switchboard.side", side)]);
    }

    pub(crate) fn bytes(&self, side: &'static str, inbound: bool, n: usize) {
        let direction = if inbound { "receive" } else { "transmit" };
        self.bytes.add(
            n as u64,
            &[
                KeyValue::new("switchboard.side", side),
                KeyValue::new("network.io.direction", direction),
            ],
        );
    }
}
