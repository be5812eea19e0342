//! A bound on the bytes of one result.

use serde_json::json;
use switchboard_jsonrpc::{BoxFuture, Call, HandlerResult, Layer, Next};

use crate::answer::ended;

/// Refuses to send a result longer than `max_bytes` of JSON text: a tool call gets an
/// `isError` result saying how long it was, any other request -32603
/// (`reason: "result_too_large"`). The handler ran; only its answer is replaced.
#[derive(Debug, Clone, Copy)]
pub struct ResultSizeLimit {
    max_bytes: usize,
}

impl ResultSizeLimit {
    /// Results of at most `max_bytes`.
    pub fn new(max_bytes: usize) -> Self {
        ResultSizeLimit { max_bytes }
    }
}

impl Layer for ResultSizeLimit {
    fn handle(&self, call: Call, next: Next) -> BoxFuture<HandlerResult> {
        let max = self.max_bytes;
        let method = call.method().to_owned();
        let fut = next.run(call);
        Box::pin(async move {
            let raw = fut.await?;
            let len = raw.get().len();
            if len <= max {
                return Ok(raw);
            }
            ended(
                &method,
                "result_too_large",
                format!("the result of {method} is {len} bytes, over the limit of {max}"),
                json!({"reason": "result_too_large", "limit": max, "size": len, "method": method}),
            )
        })
    }
}
