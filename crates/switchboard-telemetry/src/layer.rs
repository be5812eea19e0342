//! The layer: a span and the metrics of every request, on both roles.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use opentelemetry::context::FutureExt as _;
use opentelemetry::trace::{SpanKind, Status, TraceContextExt as _, Tracer as _};
use opentelemetry::{Context, KeyValue};
use switchboard_jsonrpc::{
    BoxFuture, Call, FrameEvent, HandlerResult, Layer, Next, Outgoing, RequestError, SendNext,
};
use switchboard_types::{ErrorObject, RawJson, methods};

use crate::metrics::{Finished, OTHER, Outcome, method_index, method_name};
use crate::{Inner, MAX_TARGET_CHARS, Telemetry};

/// What a request names, for the span.
struct Describe<'a> {
    method: &'a str,
    /// The method's catalogue label (`other` when the catalogue does not know it).
    label: &'static str,
    target: Option<&'a str>,
    id: Option<String>,
    session: Option<&'a str>,
    version: Option<&'static str>,
}

fn cut(s: &str) -> Cow<'_, str> {
    match s.char_indices().nth(MAX_TARGET_CHARS) {
        Some((i, _)) => Cow::Owned(s[..i].to_owned()),
        None => Cow::Borrowed(s),
    }
}

impl Describe<'_> {
    /// The method as a span attribute value: the catalogue's own string when it is a method
    /// the catalogue knows (no copy), else the method as sent.
    fn method_value(&self) -> opentelemetry::Value {
        match self.label {
            OTHER => self.method.to_owned().into(),
            known => known.into(),
        }
    }

    fn name(&self) -> Cow<'static, str> {
        match (self.target, self.method) {
            (Some(t), methods::TOOLS_CALL | methods::PROMPTS_GET) => {
                Cow::Owned(format!("{} {}", self.method, cut(t)))
            }
            _ => match self.label {
                OTHER => Cow::Owned(self.method.to_owned()),
                known => Cow::Borrowed(known),
            },
        }
    }

    fn attributes(&self, transport: Option<&'static str>) -> Vec<KeyValue> {
        let mut a = Vec::with_capacity(8);
        a.push(KeyValue::new("mcp.method.name", self.method_value()));
        if let Some(id) = &self.id {
            a.push(KeyValue::new("jsonrpc.request.id", id.clone()));
        }
        if let Some(s) = self.session {
            a.push(KeyValue::new("mcp.session.id", s.to_owned()));
        }
        if let Some(v) = self.version {
            a.push(KeyValue::new("mcp.protocol.version", v));
        }
        if let Some(t) = self.target {
            let t = cut(t).into_owned();
            match self.method {
                methods::TOOLS_CALL => {
                    a.push(KeyValue::new("gen_ai.tool.name", t));
                    a.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
                }
                methods::PROMPTS_GET => a.push(KeyValue::new("gen_ai.prompt.name", t)),
                _ => a.push(KeyValue::new("mcp.resource.uri", t)),
            }
        }
        if let Some(t) = transport {
            a.push(KeyValue::new("network.transport", t));
        }
        a
    }
}

/// A JSON-RPC error code as `error.type`: the code for the reserved range (-32768 to -32000,
/// where JSON-RPC and MCP define theirs), `_OTHER` for any other (a peer's codes are not a
/// bounded set).
fn code_label(code: i64) -> Cow<'static, str> {
    if (-32768..=-32000).contains(&code) {
        Cow::Owned(code.to_string())
    } else {
        Cow::Borrowed("_OTHER")
    }
}

/// Whether a `tools/call` result says `isError: true`.
fn is_tool_error(result: &RawJson) -> bool {
    let text = result.get();
    if !text.contains("isError") {
        return false;
    }
    #[derive(serde::Deserialize)]
    struct R {
        #[serde(rename = "isError", default)]
        is_error: Option<serde_json::Value>,
    }
    serde_json::from_str::<R>(text)
        .ok()
        .and_then(|r| r.is_error)
        .and_then(|v| v.as_bool())
        == Some(true)
}

/// How a request ended, as the span and the metrics record it.
struct End {
    outcome: Outcome,
    error_type: Option<Cow<'static, str>>,
    /// `rpc.response.status_code` and the status message of a JSON-RPC error.
    rpc: Option<(String, String)>,
}

impl End {
    fn ok(tool_error: bool) -> Self {
        if tool_error {
            End {
                outcome: Outcome::ToolError,
                error_type: Some(Cow::Borrowed("tool_error")),
                rpc: None,
            }
        } else {
            End {
                outcome: Outcome::Ok,
                error_type: None,
                rpc: None,
            }
        }
    }

    fn rejected(e: &ErrorObject) -> Self {
        let code = e.code.0;
        End {
            outcome: Outcome::Error,
            error_type: Some(code_label(code)),
            rpc: Some((code.to_string(), e.message.clone())),
        }
    }

    fn failed(e: &RequestError) -> Self {
        let kind = match e {
            RequestError::Rejected(e) => return End::rejected(e),
            RequestError::Timeout { .. } => "timeout",
            RequestError::Cancelled => {
                return End {
                    outcome: Outcome::Cancelled,
                    error_type: Some(Cow::Borrowed("cancelled")),
                    rpc: None,
                };
            }
            RequestError::Closed => "closed",
            RequestError::ConnectionLost(_) => "connection_lost",
            RequestError::NotAllowed(_) => "not_allowed",
            RequestError::TooManyPending { .. } => "too_many_pending",
            _ => "_OTHER",
        };
        End {
            outcome: Outcome::Error,
            error_type: Some(Cow::Borrowed(kind)),
            rpc: None,
        }
    }

    fn dropped() -> Self {
        End {
            outcome: Outcome::Cancelled,
            error_type: Some(Cow::Borrowed("cancelled")),
            rpc: None,
        }
    }
}

/// One request on its way: ends its span and records its metrics exactly once, when it is
/// answered or, if its future is dropped first, as cancelled.
struct Pending {
    inner: Arc<Inner>,
    cx: Context,
    side: &'static str,
    handled: bool,
    /// A [`method_index`].
    method: usize,
    tool: Option<String>,
    start: Instant,
    done: bool,
}

impl Pending {
    fn new(
        inner: Arc<Inner>,
        cx: Context,
        side: &'static str,
        handled: bool,
        method: usize,
        tool: Option<String>,
    ) -> Self {
        if let Some(m) = &inner.instruments {
            m.started(side, method);
        }
        Pending {
            inner,
            cx,
            side,
            handled,
            method,
            tool,
            start: Instant::now(),
            done: false,
        }
    }

    fn finish(&mut self, end: End) {
        if std::mem::replace(&mut self.done, true) {
            return;
        }
        if self.inner.tracer.is_some() {
            let span = self.cx.span();
            if let Some(e) = &end.error_type {
                span.set_attribute(KeyValue::new("error.type", e.clone().into_owned()));
                let message = end.rpc.as_ref().map(|(_, m)| m.clone()).unwrap_or_default();
                span.set_status(Status::error(message));
            }
            if let Some((code, _)) = &end.rpc {
                span.set_attribute(KeyValue::new("rpc.response.status_code", code.clone()));
            }
            span.end();
        }
        if let Some(m) = &self.inner.instruments {
            // A tool name becomes a label only once a call of it was answered with a result.
            let admit = matches!(end.outcome, Outcome::Ok | Outcome::ToolError);
            let tool = self
                .tool
                .as_deref()
                .map(|t| self.inner.tools.label(t, admit));
            m.finished(Finished {
                side: self.side,
                handled: self.handled,
                method: self.method,
                tool,
                outcome: end.outcome,
                error_type: end.error_type.as_deref(),
                seconds: self.start.elapsed().as_secs_f64(),
            });
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.finish(End::dropped());
    }
}

impl Telemetry {
    /// The context a request's span lives in, child of `parent`.
    fn start(&self, parent: &Context, d: &Describe<'_>, kind: SpanKind) -> Context {
        match &self.inner.tracer {
            Some(tracer) => {
                let span = tracer
                    .span_builder(d.name())
                    .with_kind(kind)
                    .with_attributes(d.attributes(self.inner.transport))
                    .start_with_context(tracer, parent);
                parent.with_span(span)
            }
            None => parent.clone(),
        }
    }
}

/// The id as `jsonrpc.request.id` records it: a string id as itself, a number in decimal.
fn request_id(id: &switchboard_types::RequestId) -> String {
    id.as_str()
        .map_or_else(|| id.to_string(), |s| cut(s).into_owned())
}

impl Layer for Telemetry {
    fn handle(&self, call: Call, next: Next) -> BoxFuture<HandlerResult> {
        // The catalogue is searched once a request: the span's label and the metrics' index.
        let method = method_index(call.method());
        let facts = call.facts();
        let side = facts.side;
        let version = facts.protocol_version.map(|v| v.as_str());
        let tool = (call.method() == methods::TOOLS_CALL)
            .then(|| call.target().map(str::to_owned))
            .flatten();
        let cx = if self.inner.tracer.is_some() {
            let parent = crate::propagation::extract_context(call.request.params.as_ref())
                .unwrap_or_else(Context::current);
            let d = Describe {
                method: call.method(),
                label: method_name(method),
                target: call.target(),
                id: Some(request_id(&call.request.id)),
                session: facts.session_id.as_deref(),
                version,
            };
            self.start(&parent, &d, SpanKind::Server)
        } else {
            Context::current()
        };
        let tool_call = call.method() == methods::TOOLS_CALL;
        let mut pending = Pending::new(self.inner.clone(), cx.clone(), side, true, method, tool);
        // The role runs inside the span's context: its synchronous part now, the rest as the
        // future is polled (so the requests a handler sends are the span's children).
        let fut = {
            let _guard = cx.clone().attach();
            next.run(call)
        };
        Box::pin(async move {
            let result = fut.with_context(cx).await;
            let end = match &result {
                Ok(r) => End::ok(tool_call && is_tool_error(r)),
                Err(e) => End::rejected(e),
            };
            pending.finish(end);
            result
        })
    }

    fn send(&self, mut call: Outgoing, next: SendNext) -> BoxFuture<Result<RawJson, RequestError>> {
        let method = method_index(&call.method);
        let facts = call.facts();
        let side = facts.side;
        let target = call.target();
        let tool = (call.method == methods::TOOLS_CALL)
            .then(|| target.clone())
            .flatten();
        let cx = if self.inner.tracer.is_some() {
            let d = Describe {
                method: &call.method,
                label: method_name(method),
                target: target.as_deref(),
                id: None,
                session: facts.session_id.as_deref(),
                version: facts.protocol_version.map(|v| v.as_str()),
            };
            let cx = self.start(&Context::current(), &d, SpanKind::Client);
            call.params = crate::propagation::inject_context(&cx, call.params.take());
            // The engine chooses the id after the layers: the span learns it then, before the
            // frame is queued (a callback the caller set still runs).
            let span = cx.clone();
            let theirs = call.options.on_id.take();
            call.options.on_id = Some(Arc::new(move |id| {
                span.span()
                    .set_attribute(KeyValue::new("jsonrpc.request.id", request_id(id)));
                if let Some(f) = &theirs {
                    f(id);
                }
            }));
            cx
        } else {
            Context::current()
        };
        let tool_call = call.method == methods::TOOLS_CALL;
        let mut pending = Pending::new(self.inner.clone(), cx.clone(), side, false, method, tool);
        let fut = next.run(call);
        Box::pin(async move {
            let result = fut.await;
            let end = match &result {
                Ok(r) => End::ok(tool_call && is_tool_error(r)),
                Err(e) => End::failed(e),
            };
            pending.finish(end);
            result
        })
    }

    fn session_opened(&self, side: &'static str) {
        if let Some(m) = &self.inner.instruments {
            m.session(side, 1);
        }
    }

    fn session_closed(&self, side: &'static str) {
        if let Some(m) = &self.inner.instruments {
            m.session(side, -1);
        }
    }

    fn frame(&self, side: &'static str, event: &FrameEvent<'_>) {
        if let Some(m) = &self.inner.instruments {
            m.bytes(
                side,
                event.direction == switchboard_jsonrpc::Flow::Inbound,
                event.text.len(),
            );
        }
    }
}
