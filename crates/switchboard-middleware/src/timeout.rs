//! A time limit on handling a request.

use std::time::Duration;

use serde_json::json;
use switchboard_jsonrpc::{BoxFuture, Call, HandlerResult, Layer, Next};

use crate::answer::ended;

/// Ends a request still running after its limit: its handler's future is dropped (so its work
/// stops at the next `.await`) and the caller is answered at once: a tool call with an
/// `isError` result naming the limit, any other request with -32603 (`reason: "timeout"`).
/// Scope it to one tool or method with `layer_for`; nest two for a default and an exception
/// (the shorter wins).
#[derive(Debug, Clone, Copy)]
pub struct Timeout {
    limit: Duration,
}

impl Timeout {
    /// Ends requests running longer than `limit`.
    pub fn new(limit: Duration) -> Self {
        Timeout { limit }
    }
}

impl Layer for Timeout {
    fn handle(&self, call: Call, next: Next) -> BoxFuture<HandlerResult> {
        let limit = self.limit;
        let method = call.method().to_owned();
        let target = call.target().map(str::to_owned);
        let fut = next.run(call);
        Box::pin(async move {
            match tokio::time::timeout(limit, fut).await {
                Ok(answer) => answer,
                Err(_) => {
                    let ms = limit.as_millis() as u64;
                    let what = match &target {
                        Some(t) => format!("{} {}", method, switchboard_types::error::echo(t)),
                        None => method.clone(),
                    };
                    ended(
                        &method,
                        "timeout",
                        format!("{what} timed out after {ms} ms"),
                        json!({"reason": "timeout", "timeoutMs": ms, "method": method}),
                    )
                }
            }
        })
    }
}
