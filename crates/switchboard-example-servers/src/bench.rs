//! The benchmark's second server: `add`, `blob` (a large answer), and as many further tools and
//! resources as asked for (long lists). The cross-SDK benchmark gives every peer the same shapes.

use serde_json::{Value, json};
use switchboard::jsonrpc::SessionConfig;
use switchboard::server::{Server, ServerError, ToolCall, ToolError};
use switchboard::types::content::{ResourceContents, TextResourceContents};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::resources::{ReadResourceResult, Resource};
use switchboard::types::tools::{CallToolResult, Tool};

use crate::add::arith;

/// The largest answer `blob` writes: 16 MiB, the default frame bound.
pub const MAX_BLOB_BYTES: u64 = 16 << 20;

/// What the bench server registers besides `add` and `blob` (with feature `clap`, the flags of
/// `switchboard serve --example bench`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct BenchLists {
    /// With --example bench: register this many further tools (`tool_0` …), each adding
    /// two numbers as `add` does.
    #[cfg_attr(feature = "clap", arg(long, value_name = "N", default_value_t = 0))]
    pub tools: usize,
    /// With --example bench: register this many resources (`bench://resource/0` …), each
    /// a short text.
    #[cfg_attr(feature = "clap", arg(long, value_name = "N", default_value_t = 0))]
    pub resources: usize,
    /// With --example bench: items per page of tools/list and resources/list (default 100).
    #[cfg_attr(feature = "clap", arg(long, value_name = "N", value_parser = clap::builder::TypedValueParser::map(clap::value_parser!(u32).range(1..), |n| n as usize)))]
    pub page_size: Option<usize>,
}

/// The `add` schema, shared by `add` and every further tool.
fn add_schema() -> Value {
    json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]})
}

/// `blob`: one text block of `bytes` ASCII `x` characters.
fn blob(call: &ToolCall) -> Result<CallToolResult, ToolError> {
    let n = call
        .arguments
        .get("bytes")
        .and_then(Value::as_u64)
        .ok_or_else(|| ToolError::new("argument 'bytes' must be a non-negative integer"))?;
    if n > MAX_BLOB_BYTES {
        return Err(ToolError::new(format!(
            "argument 'bytes' must be at most {MAX_BLOB_BYTES}"
        )));
    }
    Ok(CallToolResult::text("x".repeat(n as usize)))
}

/// The bench server: `add` ({a: number, b: number} → the sum as text), `blob` ({bytes: integer}
/// → one text block of that many `x`), and the further tools and resources of `lists`.
///
/// # Errors
/// A registration error (none here: every name and URI is distinct).
pub fn bench_server(
    config: SessionConfig,
    lists: BenchLists,
    deployment: &crate::Deployment,
) -> Result<Server, ServerError> {
    let mut b = deployment.apply(Server::builder(Implementation::new(
        "switchboard-bench",
        env!("CARGO_PKG_VERSION"),
    )))
    .session_config(config.with_name("server"))
    .tool(
        Tool::new("add", add_schema()).with_description("Add two numbers"),
        |call| async move { arith(&call, ["a", "b"], i64::checked_add, |a, b| a + b) },
    )
    .tool(
        Tool::new(
            "blob",
            json!({"type": "object", "properties": {"bytes": {"type": "integer", "minimum": 0}}, "required": ["bytes"]}),
        )
        .with_description("Return a text block of this many bytes"),
        |call| async move { blob(&call) },
    );
    for i in 0..lists.tools {
        b = b.tool(
            Tool::new(format!("tool_{i}"), add_schema())
                .with_description(format!("Benchmark tool {i}: add two numbers")),
            |call| async move { arith(&call, ["a", "b"], i64::checked_add, |a, b| a + b) },
        );
    }
    if lists.resources > 0 {
        b = b.enable_resources();
    }
    if let Some(n) = lists.page_size {
        b = b.page_size(n);
    }
    for i in 0..lists.resources {
        b = b.resource(
            Resource::new(format!("bench://resource/{i}"), format!("resource-{i}"))
                .with_mime_type("text/plain"),
            move |r| async move {
                let mut c = TextResourceContents::new(r.uri, format!("resource {i}"));
                c.mime_type = Some("text/plain".into());
                Ok(ReadResourceResult::new(vec![ResourceContents::Text(c)]))
            },
        );
    }
    b.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_every_tool_and_resource() {
        let lists = BenchLists {
            tools: 3,
            resources: 5,
            page_size: Some(2),
        };
        let server = bench_server(SessionConfig::default(), lists, &Default::default()).unwrap();
        assert!(server.capabilities().resources.is_some());
        assert!(
            bench_server(
                SessionConfig::default(),
                BenchLists::default(),
                &Default::default()
            )
            .is_ok()
        );
    }
}
