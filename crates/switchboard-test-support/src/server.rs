//! (feature `server`) The test server the HTTP crates' tests share, and its tools one by one for
//! servers built in a test.
//!
//! [`tool_server`] is a builder with logging and four tools: `echo` (answers its arguments as
//! JSON text), `chatty` (a progress report and a log line, then "done"), `slow` (sleeps `ms`
//! milliseconds, 100 when absent) and `sample` (asks the client to sample, related to its
//! request). Each tool's handler is public too, so a test's own server can register it under its
//! own definition (`|call| slow(call, 0)` with task support, say).

use std::time::Duration;

use serde_json::{Value, json};
use switchboard_server::{Server, ServerBuilder, ToolCall, ToolError};
use switchboard_types::LoggingLevel;
use switchboard_types::lifecycle::Implementation;
use switchboard_types::sampling::{CreateMessageRequestParams, SamplingMessage};
use switchboard_types::tools::{CallToolResult, Tool};

/// A server builder named `name` (version 0.1.0) with logging and the tools `echo`, `chatty`,
/// `slow` (100 ms unless the call asks for `ms`) and `sample`.
pub fn tool_server(name: &str) -> ServerBuilder {
    let obj = json!({"type": "object"});
    Server::builder(Implementation::new(name, "0.1.0"))
        .enable_logging()
        .tool(
            Tool::new("echo", obj.clone()).with_description("echoes its arguments"),
            echo,
        )
        .tool(
            Tool::new("chatty", obj.clone()).with_description("progress and a log first"),
            chatty,
        )
        .tool(
            Tool::new("slow", obj.clone()).with_description("sleeps ms milliseconds"),
            |call| slow(call, 100),
        )
        .tool(
            Tool::new("sample", obj).with_description("asks the client to sample"),
            sample,
        )
}

/// The call's `ms` argument, or `default` when it has none.
pub fn ms_arg(call: &ToolCall, default: u64) -> u64 {
    call.arguments
        .get("ms")
        .and_then(Value::as_u64)
        .unwrap_or(default)
}

/// Answers the call's arguments as JSON text.
///
/// # Errors
/// Never: the arguments are a JSON object.
pub async fn echo(call: ToolCall) -> Result<CallToolResult, ToolError> {
    let text = serde_json::to_string(&call.arguments).map_err(|e| ToolError::new(e.to_string()))?;
    Ok(CallToolResult::text(text))
}

/// Reports progress 1 of 2 ("half way"), logs "working" at info, then answers "done".
///
/// # Errors
/// When the progress report or the log line cannot be sent.
pub async fn chatty(call: ToolCall) -> Result<CallToolResult, ToolError> {
    call.cx
        .progress(1.0, Some(2.0), Some("half way"))
        .await
        .map_err(|e| ToolError::new(e.to_string()))?;
    call.cx
        .log(LoggingLevel::Info, json!("working"))
        .await
        .map_err(|e| ToolError::new(e.to_string()))?;
    Ok(CallToolResult::text("done"))
}

/// Sleeps the call's `ms` milliseconds (`default_ms` when absent: a handler that must be slow;
/// not at all for 0), then answers "slept {ms}".
///
/// # Errors
/// Never.
pub async fn slow(call: ToolCall, default_ms: u64) -> Result<CallToolResult, ToolError> {
    let ms = ms_arg(&call, default_ms);
    if ms > 0 {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    Ok(CallToolResult::text(format!("slept {ms}")))
}

/// Asks the client to sample one user message "hi" (at most 10 tokens), related to the call;
/// answers the client's result as JSON text.
///
/// # Errors
/// When the client refuses or cannot be asked.
pub async fn sample(call: ToolCall) -> Result<CallToolResult, ToolError> {
    let params = CreateMessageRequestParams::new(vec![SamplingMessage::user_text("hi")], 10);
    let r = call
        .cx
        .create_message(params)
        .await
        .map_err(|e| ToolError::new(e.to_string()))?;
    let text = serde_json::to_string(&r).map_err(|e| ToolError::new(e.to_string()))?;
    Ok(CallToolResult::text(text))
}
