//! [`Inspector`]: annotates each frame of a session, in wire order.

use std::collections::{HashMap, VecDeque};
use std::fmt;

use serde::Serialize;
use serde_json::{Map, Value};
use switchboard_types::catalogue::{
    self, Cancelled, Initialize, Initialized, Method, Ping, Progress, Sender,
    TaskStatus as TaskStatusChanged,
};

use crate::modern::{self, ModernTracker, RequestFacts};
use crate::tasks::TaskTracker;

pub use switchboard_types::Direction;

/// The structural kind of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A request.
    Request,
    /// A successful response.
    Response,
    /// An error response.
    Error,
    /// A notification.
    Notification,
    /// Not a valid JSON-RPC message.
    Invalid,
}

impl Kind {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Request => "request",
            Kind::Response => "response",
            Kind::Error => "error",
            Kind::Notification => "notification",
            Kind::Invalid => "invalid",
        }
    }
}

/// The lifecycle phase a frame belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Up to and including `notifications/initialized`.
    Initialization,
    /// Normal operation.
    Operation,
    /// After the transport signalled the end.
    Shutdown,
}

pub use crate::violation::Violation;

/// What the inspector says of one frame.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrameReport {
    /// 0-based position in the session.
    pub index: usize,
    /// The direction.
    pub direction: Direction,
    /// The structural kind.
    pub kind: Kind,
    /// The id, as sent.
    pub id: Option<Value>,
    /// The method (for a response: the method of the request it answers).
    pub method: Option<String>,
    /// The protocol area.
    pub primitive: Option<&'static str>,
    /// The lifecycle phase.
    pub phase: Phase,
    /// The capability the method needs, e.g. `server.tools`.
    pub capability: Option<String>,
    /// Whether that capability was negotiated; `None` when none is needed or it is not known yet.
    pub negotiated: Option<bool>,
    /// The index of the request this response, progress or cancellation belongs to.
    pub refers_to: Option<usize>,
    /// Milliseconds since the first frame, when the input has timestamps.
    pub elapsed_ms: Option<f64>,
    /// Rules broken.
    pub violations: Vec<Violation>,
}

/// One line: `[#index] kind · method · primitive=… · phase=… · capability=… (negotiated) ·
/// answers #i · VIOLATION …`, what the demo prints under each frame.
impl fmt::Display for FrameReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[#{}] {}", self.index, self.kind.as_str())?;
        if let Some(m) = &self.method {
            write!(f, " · {m}")?;
        }
        if let Some(p) = self.primitive {
            write!(f, " · primitive={p}")?;
        }
        write!(f, " · phase={}", format!("{:?}", self.phase).to_lowercase())?;
        if let Some(c) = &self.capability {
            let n = match self.negotiated {
                Some(true) => " (negotiated)",
                Some(false) => " (NOT negotiated)",
                None => "",
            };
            write!(f, " · capability={c}{n}")?;
        }
        if let Some(i) = self.refers_to {
            let verb = match self.kind {
                Kind::Response | Kind::Error => "answers",
                _ => "refers to",
            };
            write!(f, " · {verb} #{i}")?;
        }
        for v in &self.violations {
            write!(f, " · VIOLATION {v}")?;
        }
        Ok(())
    }
}

struct Open {
    index: usize,
    method: String,
    /// `params.taskId` of a task method.
    task_id: Option<String>,
    progress_token: Option<Value>,
    last_progress: Option<f64>,
    at_ms: Option<f64>,
    /// For a request of a 2026-07-28 session: what it declared.
    modern: Option<RequestFacts>,
}

/// A request that was answered or cancelled.
struct Closed {
    index: usize,
    method: String,
    progress_token: Option<Value>,
}

/// How many answered or cancelled requests are remembered for late answers and late progress.
pub(crate) const MAX_CLOSED: usize = 4096;

/// Annotates a session frame by frame. Keeps what later frames need (open requests, negotiated
/// capabilities, the phase); every map is bounded by the number of open requests, and at most
/// 4096 answered or cancelled requests (for late answers and late progress) and 4096 tasks are
/// remembered, the oldest forgotten first.
#[derive(Default)]
pub struct Inspector {
    count: usize,
    initialized: bool,
    shutdown: bool,
    client_caps: Option<Value>,
    server_caps: Option<Value>,
    /// Open requests by (direction of the request, id).
    open: HashMap<(Direction, String), Open>,
    /// Requests answered or cancelled, by (direction, id): for late answers and late progress.
    closed: HashMap<(Direction, String), Closed>,
    /// The order `closed` was filled in, oldest first (its bound).
    closed_order: VecDeque<(Direction, String)>,
    /// Ids of notification-named frames that carried an id (to flag answers to them).
    notification_ids: HashMap<(Direction, String), usize>,
    pub(crate) reports: Vec<FrameReport>,
    pub(crate) latencies: HashMap<String, Vec<f64>>,
    tasks: TaskTracker,
    modern: ModernTracker,
}

impl fmt::Debug for Inspector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inspector")
            .field("frames", &self.count)
            .field("open", &self.open.len())
            .finish()
    }
}

/// The protocol area of a method, from the catalogue (core methods, and those of the extensions
/// it describes: `skills/list` is `skills`); `None` for a method nobody defines.
pub(crate) fn primitive_of(method: &str) -> Option<&'static str> {
    catalogue::describe(method).map(|s| s.primitive.as_str())
}

/// The capability a method needs (`server.tools`, `client.sampling`, ...), from the catalogue.
///
/// Whose declaration counts follows the method's own direction (a `tools/list` sent the wrong
/// way still needs the server's `tools`); `None` for an ungated or unknown method, and for one
/// either side's declaration opens (`notifications/tasks/status`). `direction` decides for
/// methods either side sends (`tasks/get`: the receiver's `tasks`).
pub(crate) fn capability_of(method: &str, direction: Direction) -> Option<String> {
    let spec = catalogue::find(method)?;
    let natural = match spec.sender {
        Sender::Client => Direction::ClientToServer,
        Sender::Server => Direction::ServerToClient,
        Sender::Either => direction,
    };
    let (side, capability) = spec.gate_side(natural)?;
    Some(format!("{}.{}", side.as_str(), capability.path()))
}

fn declared(caps: &Value, path: &str) -> bool {
    let mut cur = caps;
    let mut parts = path.split('.').peekable();
    while let Some(p) = parts.next() {
        match cur.get(p) {
            // A boolean sub-flag (listChanged, subscribe) must be true; an object is present.
            Some(Value::Bool(b)) if parts.peek().is_none() => return *b,
            Some(Value::Null) | None => return false,
            Some(v) => cur = v,
        }
    }
    true
}

fn id_key(id: &Value) -> String {
    id.to_string()
}

fn is_valid_id(id: &Value) -> bool {
    id.is_string() || id.as_i64().is_some() || id.as_u64().is_some()
}

impl Inspector {
    /// A fresh inspector.
    pub fn new() -> Self {
        Inspector::default()
    }

    /// Marks the end of the session (the transport closed): later frames are in the shutdown phase.
    pub fn shutdown(&mut self) {
        self.shutdown = true;
    }

    /// The reports so far.
    pub fn reports(&self) -> &[FrameReport] {
        &self.reports
    }

    fn phase(&self) -> Phase {
        if self.shutdown {
            Phase::Shutdown
        } else if self.initialized || self.modern.active {
            Phase::Operation
        } else {
            Phase::Initialization
        }
    }

    fn negotiated(&self, capability: &str) -> Option<bool> {
        let (side, path) = capability.split_once('.')?;
        let caps = match side {
            "server" => self.server_caps.as_ref()?,
            _ => self.client_caps.as_ref()?,
        };
        Some(declared(caps, path))
    }

    /// Annotates one frame (`text` is the raw JSON of the frame; `at_ms` its time, if known).
    pub fn observe(
        &mut self,
        direction: Direction,
        text: &str,
        at_ms: Option<f64>,
    ) -> &FrameReport {
        let index = self.count;
        self.count += 1;
        let mut report = FrameReport {
            index,
            direction,
            kind: Kind::Invalid,
            id: None,
            method: None,
            primitive: None,
            phase: self.phase(),
            capability: None,
            negotiated: None,
            refers_to: None,
            elapsed_ms: at_ms,
            violations: Vec::new(),
        };
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(obj)) => self.classify(&mut report, &obj),
            Ok(Value::Array(_)) => report.violations.push(Violation {
                tag: "JR-12",
                reason: "batch frame (only 2025-03-26 allows batches)".into(),
            }),
            Ok(_) => report.violations.push(Violation {
                tag: "JR-1",
                reason: "not a JSON object".into(),
            }),
            Err(e) => report.violations.push(Violation {
                tag: "JR-1",
                reason: format!("not JSON: {e}"),
            }),
        }
        self.reports.push(report);
        &self.reports[index]
    }

    fn classify(&mut self, r: &mut FrameReport, obj: &Map<String, Value>) {
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            r.violations.push(Violation {
                tag: "JR-1",
                reason: "jsonrpc must be \"2.0\"".into(),
            });
        }
        let id = obj.get("id").cloned();
        r.id = id.clone();
        if let Some(method) = obj.get("method").and_then(Value::as_str) {
            r.method = Some(method.to_owned());
            r.primitive = primitive_of(method);
            r.capability = capability_of(method, r.direction);
            r.negotiated = r.capability.as_deref().and_then(|c| self.negotiated(c));
            if r.negotiated == Some(false) {
                r.violations.push(Violation {
                    tag: "LC-5",
                    reason: format!(
                        "{method} needs {} which was not negotiated",
                        r.capability.as_deref().unwrap_or("?")
                    ),
                });
            }
            match id {
                None => self.on_notification(r, method, obj),
                Some(id) => self.on_request(r, method, &id, obj),
            }
        } else if obj.contains_key("result") || obj.contains_key("error") {
            self.on_response(r, obj);
        } else {
            r.violations.push(Violation {
                tag: "JR-7",
                reason: "neither a method nor a result or error".into(),
            });
        }
    }

    fn on_request(
        &mut self,
        r: &mut FrameReport,
        method: &str,
        id: &Value,
        obj: &Map<String, Value>,
    ) {
        r.kind = Kind::Request;
        if id.is_null() {
            r.kind = Kind::Invalid;
            r.violations.push(Violation {
                tag: "JR-4",
                reason: "request id is null".into(),
            });
            return;
        }
        if !is_valid_id(id) {
            r.violations.push(Violation {
                tag: "JR-3",
                reason: "request id must be a string or an integer".into(),
            });
        }
        if method.starts_with("notifications/") {
            r.violations.push(Violation {
                tag: "JR-10",
                reason: format!("notification {method} carries an id"),
            });
            self.notification_ids
                .insert((r.direction, id_key(id)), r.index);
        }
        // A request whose `_meta` names the protocol version opens a 2026-07-28 session (no
        // handshake); one without it on such a session breaks [D26-8].
        let c2s = r.direction == Direction::ClientToServer;
        if c2s && !self.initialized && method != Initialize::NAME && modern::claims(obj) {
            self.modern.active = true;
        }
        let mut facts = None;
        if self.modern.active {
            r.phase = self.phase();
            if c2s {
                facts = Some(self.modern.request(method, id, obj, &mut r.violations));
            } else {
                r.violations.push(Violation {
                    tag: "D26-1",
                    reason: format!("the server sent a request ({method}) in 2026-07-28"),
                });
            }
        } else if !self.initialized && method != Initialize::NAME && method != Ping::NAME {
            r.violations.push(Violation {
                tag: "LC-1",
                reason: format!("{method} before the handshake completed"),
            });
        }
        if method == Initialize::NAME {
            self.client_caps = obj
                .get("params")
                .and_then(|p| p.get("capabilities"))
                .cloned();
        }
        let key = (r.direction, id_key(id));
        if self.open.contains_key(&key) {
            r.violations.push(Violation {
                tag: "JR-5",
                reason: format!("id {id} reused while a request with it is in flight"),
            });
        }
        let progress_token = obj
            .get("params")
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get("progressToken"))
            .cloned();
        // tasks/get, tasks/result, tasks/cancel: linked to the call that created the task.
        let task_id = obj
            .get("params")
            .and_then(|p| p.get("taskId"))
            .and_then(Value::as_str)
            .filter(|_| primitive_of(method) == Some("tasks"))
            .map(str::to_owned);
        if let Some(id) = &task_id {
            r.refers_to = self.tasks.created_by(id);
        }
        self.open.insert(
            key,
            Open {
                index: r.index,
                method: method.to_owned(),
                task_id,
                progress_token,
                last_progress: None,
                at_ms: r.elapsed_ms,
                modern: facts,
            },
        );
    }

    fn on_notification(&mut self, r: &mut FrameReport, method: &str, obj: &Map<String, Value>) {
        r.kind = Kind::Notification;
        let params = obj.get("params");
        if method == Initialized::NAME {
            r.phase = Phase::Initialization;
            self.initialized = true;
        } else if method == Cancelled::NAME {
            let target = params.and_then(|p| p.get("requestId")).map(id_key);
            // A cancellation refers to a request sent earlier in the same direction (UT-2).
            let key = target.map(|t| (r.direction, t));
            if let Some(open) = key.as_ref().and_then(|k| self.open.get(k)) {
                r.refers_to = Some(open.index);
                if open.method == Initialize::NAME {
                    r.violations.push(Violation {
                        tag: "UT-8",
                        reason: "initialize must not be cancelled".into(),
                    });
                }
            }
            if let Some(k) = key
                && let Some(o) = self.open.remove(&k)
            {
                if let Some(id) = params.and_then(|p| p.get("requestId")) {
                    self.modern.closed(id);
                }
                self.close(k, o);
            }
        } else if method == Progress::NAME {
            self.on_progress(r, params);
        } else if self.modern.active && r.direction == Direction::ServerToClient {
            let asked_for_logs = self
                .open
                .values()
                .any(|o| o.modern.as_ref().is_some_and(|f| f.log_level));
            self.modern
                .notification(method, params, asked_for_logs, &mut r.violations);
        } else if method == TaskStatusChanged::NAME
            && let Some(task) = params
        {
            self.tasks.observe_task(task, &mut r.violations);
            let id = task.get("taskId").and_then(Value::as_str);
            r.refers_to = id.and_then(|id| self.tasks.created_by(id));
        }
    }

    /// Remembers an answered or cancelled request, for late answers and late progress. The
    /// oldest is forgotten beyond [`MAX_CLOSED`], so memory stays bounded on endless sessions.
    fn close(&mut self, key: (Direction, String), open: Open) {
        if self.closed.len() >= MAX_CLOSED
            && let Some(old) = self.closed_order.pop_front()
        {
            self.closed.remove(&old);
        }
        if self
            .closed
            .insert(
                key.clone(),
                Closed {
                    index: open.index,
                    method: open.method,
                    progress_token: open.progress_token,
                },
            )
            .is_none()
        {
            self.closed_order.push_back(key);
        }
    }

    fn on_progress(&mut self, r: &mut FrameReport, params: Option<&Value>) {
        let token = params.and_then(|p| p.get("progressToken")).cloned();
        let progress = params
            .and_then(|p| p.get("progress"))
            .and_then(Value::as_f64);
        let found = self
            .open
            .values_mut()
            .find(|o| o.progress_token.is_some() && o.progress_token == token)
            .map(|o| {
                let before = o.last_progress;
                if let Some(p) = progress {
                    o.last_progress = Some(p);
                }
                (o.index, before)
            });
        match found {
            Some((index, before)) => {
                r.refers_to = Some(index);
                if let (Some(b), Some(p)) = (before, progress)
                    && p <= b
                {
                    r.violations.push(Violation {
                        tag: "UT-6",
                        reason: format!("progress {p} does not increase past {b}"),
                    });
                }
            }
            None => {
                // After the response (or the cancellation): still linked to its request.
                let late = self
                    .closed
                    .values()
                    .filter(|c| c.progress_token.is_some() && c.progress_token == token)
                    .max_by_key(|c| c.index);
                match late {
                    Some(c) => {
                        r.refers_to = Some(c.index);
                        r.violations.push(Violation {
                            tag: "UT-7",
                            reason: format!(
                                "progress after the request at frame {} was answered",
                                c.index
                            ),
                        });
                    }
                    None => r.violations.push(Violation {
                        tag: "UT-7",
                        reason: "progress for no active request (unknown token)".into(),
                    }),
                }
            }
        }
    }

    fn on_response(&mut self, r: &mut FrameReport, obj: &Map<String, Value>) {
        let has_result = obj.contains_key("result");
        let has_error = obj.contains_key("error");
        r.kind = if has_error {
            Kind::Error
        } else {
            Kind::Response
        };
        if has_result && has_error {
            // Neither shape: not an answer. Linked to its request, which stays open.
            r.kind = Kind::Invalid;
            r.violations.push(Violation {
                tag: "JR-7",
                reason: "both result and error: neither a response nor an error".into(),
            });
            if let Some(open) = obj
                .get("id")
                .and_then(|id| self.open.get(&(r.direction.reverse(), id_key(id))))
            {
                r.refers_to = Some(open.index);
                r.method = Some(open.method.clone());
                r.primitive = primitive_of(&open.method);
            }
            return;
        }
        let Some(id) = obj.get("id").filter(|i| !i.is_null()) else {
            if has_result {
                r.violations.push(Violation {
                    tag: "JR-6",
                    reason: "a result without an id".into(),
                });
            }
            return;
        };
        let key = (r.direction.reverse(), id_key(id));
        if let Some(n) = self.notification_ids.get(&key) {
            r.violations.push(Violation {
                tag: "JR-11",
                reason: format!("answers the notification at frame {n}"),
            });
            r.refers_to = Some(*n);
            return;
        }
        match self.open.remove(&key) {
            Some(open) => {
                r.refers_to = Some(open.index);
                r.method = Some(open.method.clone());
                r.primitive = primitive_of(&open.method);
                if let (Some(a), Some(b)) = (open.at_ms, r.elapsed_ms) {
                    self.latencies
                        .entry(open.method.clone())
                        .or_default()
                        .push(b - a);
                }
                if let (Some(result), Some(facts)) = (obj.get("result"), &open.modern) {
                    self.modern
                        .result(&open.method, facts, result, &mut r.violations);
                    if open.method == catalogue::Discover::NAME {
                        self.server_caps = result.get("capabilities").cloned();
                    }
                }
                if open.modern.is_some() {
                    self.modern.closed(id);
                }
                // The tasks extension acknowledges `tasks/cancel` with an empty result.
                let empty_ack = open.modern.is_some() && open.method == catalogue::CancelTask::NAME;
                if let Some(result) = obj.get("result").filter(|_| !empty_ack) {
                    self.tasks.response(
                        &open.method,
                        open.index,
                        open.task_id.as_deref(),
                        result,
                        &mut r.violations,
                    );
                }
                if open.method == Initialize::NAME && has_result {
                    self.server_caps = obj
                        .get("result")
                        .and_then(|res| res.get("capabilities"))
                        .cloned();
                }
                self.close(key, open);
            }
            None => match self.closed.get(&key) {
                Some(c) => {
                    r.refers_to = Some(c.index);
                    r.method = Some(c.method.clone());
                    r.violations.push(Violation {
                        tag: "JR-6",
                        reason: format!("second answer to the request at frame {}", c.index),
                    });
                }
                None => r.violations.push(Violation {
                    tag: "JR-6",
                    reason: format!("orphan response: no request with id {id}"),
                }),
            },
        }
    }

    /// Requests still without an answer, by frame index.
    pub fn unanswered(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self.open.values().map(|o| o.index).collect();
        v.sort_unstable();
        v
    }
}
