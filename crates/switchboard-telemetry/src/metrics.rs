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

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use opentelemetry::KeyValue;
use opentelemetry::metrics::{
    AsyncInstrument, Histogram, Meter, ObservableCounter, ObservableUpDownCounter, UpDownCounter,
};
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
    method_name(method_index(method))
}

/// The method's place in the catalogue; `CATALOGUE.len()` (`other`) when it is not there.
pub(crate) fn method_index(method: &str) -> usize {
    catalogue::CATALOGUE
        .iter()
        .position(|s| s.name == method)
        .unwrap_or(catalogue::CATALOGUE.len())
}

/// The label of a [`method_index`].
pub(crate) fn method_name(index: usize) -> &'static str {
    catalogue::CATALOGUE.get(index).map_or(OTHER, |s| s.name)
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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

/// Most distinct sides (`switchboard.side` values) counted apart in the atomic cells; the
/// sides past them share the last cell's counts (a layer serves one or two sides in practice).
const MAX_SIDES: usize = 4;

/// `switchboard.requests`' key: side, method index, outcome, tool label.
type RequestKey = (u8, u8, Outcome, Option<Arc<str>>);

/// The counts the observable instruments read when metrics are collected: in flight by side
/// and method, bytes by side and direction (relaxed atomic adds), requests finished by side,
/// method, outcome and tool (one small map under a lock). On the hot path this replaces an
/// attribute-set lookup in the SDK per measurement and reader.
#[derive(Debug)]
struct Cells {
    sides: [OnceLock<&'static str>; MAX_SIDES],
    /// `[side][method index]`: requests in flight, and whether the cell was ever used.
    in_flight: Vec<Vec<(AtomicI64, AtomicBool)>>,
    /// `[side][receive, transmit]`.
    bytes: [[AtomicU64; 2]; MAX_SIDES],
    /// Bounded: sides × methods × outcomes × (admitted tool labels + `other` + none).
    requests: Mutex<HashMap<RequestKey, u64>>,
}

impl Cells {
    fn new() -> Self {
        let methods = catalogue::CATALOGUE.len() + 1;
        let in_flight = (0..MAX_SIDES)
            .map(|_| {
                (0..methods)
                    .map(|_| (AtomicI64::new(0), AtomicBool::new(false)))
                    .collect()
            })
            .collect();
        Cells {
            sides: Default::default(),
            in_flight,
            bytes: Default::default(),
            requests: Mutex::new(HashMap::new()),
        }
    }

    fn side(&self, side: &'static str) -> usize {
        for (i, slot) in self.sides.iter().enumerate() {
            match slot.get() {
                Some(s) if *s == side => return i,
                Some(_) => continue,
                None => {
                    if *slot.get_or_init(|| side) == side {
                        return i;
                    }
                }
            }
        }
        MAX_SIDES - 1
    }

    fn in_flight(&self, side: usize, method: usize, delta: i64) {
        let cell = &self.in_flight[side][method];
        cell.1.store(true, Ordering::Relaxed);
        cell.0.fetch_add(delta, Ordering::Relaxed);
    }

    fn observe_in_flight(&self, o: &dyn AsyncInstrument<i64>) {
        for (side, cells) in self.sides.iter().zip(&self.in_flight) {
            let Some(side) = side.get() else { continue };
            for (method, (n, used)) in cells.iter().enumerate() {
                if used.load(Ordering::Relaxed) {
                    o.observe(
                        n.load(Ordering::Relaxed),
                        &[
                            KeyValue::new("switchboard.side", *side),
                            KeyValue::new("mcp.method.name", method_name(method)),
                        ],
                    );
                }
            }
        }
    }

    fn observe_bytes(&self, o: &dyn AsyncInstrument<u64>) {
        for (side, cells) in self.sides.iter().zip(&self.bytes) {
            let Some(side) = side.get() else { continue };
            for (direction, n) in ["receive", "transmit"].into_iter().zip(cells) {
                let n = n.load(Ordering::Relaxed);
                if n > 0 {
                    o.observe(
                        n,
                        &[
                            KeyValue::new("switchboard.side", *side),
                            KeyValue::new("network.io.direction", direction),
                        ],
                    );
                }
            }
        }
    }

    fn observe_requests(&self, o: &dyn AsyncInstrument<u64>) {
        let Ok(requests) = self.requests.lock() else {
            return;
        };
        for ((side, method, outcome, tool), n) in requests.iter() {
            let Some(side) = self.sides[usize::from(*side)].get() else {
                continue;
            };
            let mut attrs = Vec::with_capacity(4);
            attrs.push(KeyValue::new(
                "mcp.method.name",
                method_name(usize::from(*method)),
            ));
            if let Some(tool) = tool {
                attrs.push(KeyValue::new(
                    "gen_ai.tool.name",
                    opentelemetry::StringValue::from(tool.clone()),
                ));
            }
            attrs.push(KeyValue::new("switchboard.side", *side));
            attrs.push(KeyValue::new("switchboard.outcome", outcome.as_str()));
            o.observe(*n, &attrs);
        }
    }
}

/// The instruments, made once per [`crate::Telemetry`].
#[derive(Debug)]
pub(crate) struct Instruments {
    server_duration: Histogram<f64>,
    client_duration: Histogram<f64>,
    sessions: UpDownCounter<i64>,
    cells: Arc<Cells>,
    /// Registered with the meter; kept so that they live as long as the instruments.
    _requests: ObservableCounter<u64>,
    _in_flight: ObservableUpDownCounter<i64>,
    _bytes: ObservableCounter<u64>,
}

/// What one finished request records.
pub(crate) struct Finished<'a> {
    pub(crate) side: &'static str,
    pub(crate) handled: bool,
    /// A [`method_index`].
    pub(crate) method: usize,
    pub(crate) tool: Option<Arc<str>>,
    pub(crate) outcome: Outcome,
    pub(crate) error_type: Option<&'a str>,
    pub(crate) seconds: f64,
}

impl Instruments {
    pub(crate) fn new(meter: &Meter) -> Self {
        let cells = Arc::new(Cells::new());
        let (c1, c2, c3) = (cells.clone(), cells.clone(), cells.clone());
        Instruments {
            cells,
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
            _requests: meter
                .u64_observable_counter("switchboard.requests")
                .with_unit("{request}")
                .with_description("MCP requests finished, by side, method, tool and outcome.")
                .with_callback(move |o| c3.observe_requests(o))
                .build(),
            _in_flight: meter
                .i64_observable_up_down_counter("switchboard.requests.in_flight")
                .with_unit("{request}")
                .with_description("MCP requests being handled or awaited now.")
                .with_callback(move |o| c1.observe_in_flight(o))
                .build(),
            sessions: meter
                .i64_up_down_counter("switchboard.sessions.open")
                .with_unit("{session}")
                .with_description("Engine sessions open now (a connection, a 2025 session, or one 2026-07-28 exchange).")
                .build(),
            _bytes: meter
                .u64_observable_counter("switchboard.transport.bytes")
                .with_unit("By")
                .with_description("Bytes of MCP frames received and sent.")
                .with_callback(move |o| c2.observe_bytes(o))
                .build(),
        }
    }

    pub(crate) fn started(&self, side: &'static str, method: usize) {
        self.cells.in_flight(self.cells.side(side), method, 1);
    }

    pub(crate) fn finished(&self, f: Finished<'_>) {
        let side = self.cells.side(f.side);
        self.cells.in_flight(side, f.method, -1);
        let mut attrs = Vec::with_capacity(3);
        attrs.push(KeyValue::new("mcp.method.name", method_name(f.method)));
        if let Some(tool) = &f.tool {
            attrs.push(KeyValue::new(
                "gen_ai.tool.name",
                opentelemetry::StringValue::from(tool.clone()),
            ));
        }
        if let Some(e) = f.error_type {
            attrs.push(KeyValue::new("error.type", e.to_owned()));
        }
        let hist = if f.handled {
            &self.server_duration
        } else {
            &self.client_duration
        };
        hist.record(f.seconds, &attrs);
        // Side and method fit in a byte: MAX_SIDES and the catalogue (checked in the tests).
        let key = (side as u8, f.method as u8, f.outcome, f.tool);
        if let Ok(mut requests) = self.cells.requests.lock() {
            *requests.entry(key).or_insert(0) += 1;
        }
    }

    pub(crate) fn session(&self, side: &'static str, delta: i64) {
        self.sessions
            .add(delta, &[KeyValue::new("switchboard.side", side)]);
    }

    pub(crate) fn bytes(&self, side: &'static str, inbound: bool, n: usize) {
        let cell = &self.cells.bytes[self.cells.side(side)][usize::from(!inbound)];
        cell.fetch_add(n as u64, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_side_and_a_method_index_fit_the_request_key() {
        assert!(MAX_SIDES <= usize::from(u8::MAX));
        assert!(catalogue::CATALOGUE.len() < usize::from(u8::MAX));
        assert_eq!(method_name(method_index("tools/call")), "tools/call");
        assert_eq!(method_name(method_index("x/unknown")), OTHER);
    }

    #[test]
    fn past_max_sides_the_sides_share_the_last_cell() {
        let cells = Cells::new();
        let names: [&'static str; MAX_SIDES + 2] = ["a", "b", "c", "d", "e", "f"];
        let slots: Vec<usize> = names.iter().map(|s| cells.side(s)).collect();
        assert_eq!(slots, [0, 1, 2, 3, 3, 3]);
        assert_eq!(cells.side("b"), 1, "a side keeps its cell");
    }
}
