//! Typed tools: arguments come from a Rust type whose JSON Schema (2020-12, schemars) becomes
//! `inputSchema`; an optional output type gives `outputSchema` and `structuredContent`.
//!
//! Arguments are validated against the schema before the handler runs: invalid ones give an
//! `isError` result naming the field under 2025-11-25, and -32602 under earlier revisions.
//! A result that breaks its `outputSchema` is the server's own bug: -32603, logged.
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use switchboard_server::{Server, typed};
//! use switchboard_types::lifecycle::Implementation;
//! use switchboard_types::tools::CallToolResult;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Add { a: i64, b: i64 }
//!
//! let server = Server::builder(Implementation::new("calc", "1.0"))
//!     .registered_tool(typed::tool("add", "Add two integers", |args: Add, _cx| async move {
//!         Ok(CallToolResult::text((args.a + args.b).to_string()))
//!     }))
//!     .build()
//!     .unwrap();
//! assert!(server.capabilities().tools.is_some());
//! ```

use std::future::Future;
use std::sync::Arc;

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use switchboard_types::tools::{CallToolResult, Tool};

use crate::context::Context;
use crate::tool::{RegisteredTool, RegistryError, ToolError};

/// The JSON Schema (2020-12) of `T`, as an object.
pub fn schema_of<T: JsonSchema>() -> Value {
    let schema = SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    serde_json::to_value(&schema).unwrap_or_else(|_| serde_json::json!({"type": "object"}))
}

pub(crate) fn parse_args<A: DeserializeOwned>(
    arguments: serde_json::Map<String, Value>,
) -> Result<A, ToolError> {
    serde_json::from_value(Value::Object(arguments)).map_err(|e| {
        let detail = e.to_string();
        ToolError::new(format!(
            "Invalid arguments: {}",
            switchboard_types::error::echo(&detail)
        ))
    })
}

/// A typed tool whose handler returns a [`CallToolResult`].
///
/// # Errors
/// [`RegistryError::InvalidSchema`] when the generated schema does not compile (not expected).
pub fn tool<A, F, Fut>(
    name: &str,
    description: &str,
    handler: F,
) -> Result<RegisteredTool, RegistryError>
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    F: Fn(A, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<CallToolResult, ToolError>> + Send + 'static,
{
    let def = Tool::new(name, schema_of::<A>()).with_description(description);
    let handler = Arc::new(handler);
    RegisteredTool::new(def, move |call| {
        let handler = handler.clone();
        async move {
            let args = parse_args::<A>(call.arguments)?;
            handler(args, call.cx).await
        }
    })
}

/// A typed tool with a typed output: `outputSchema` from `O`; the result carries
/// `structuredContent` and, beside it, a text block with the same JSON (for hosts that show only
/// content blocks).
///
/// # Errors
/// [`RegistryError::InvalidSchema`] when a generated schema does not compile (not expected).
pub fn tool_with_output<A, O, F, Fut>(
    name: &str,
    description: &str,
    handler: F,
) -> Result<RegisteredTool, RegistryError>
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    O: Serialize + JsonSchema + Send + 'static,
    F: Fn(A, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
{
    let def = Tool::new(name, schema_of::<A>())
        .with_description(description)
        .with_output_schema(schema_of::<O>());
    let handler = Arc::new(handler);
    RegisteredTool::new(def, move |call| {
        let handler = handler.clone();
        async move {
            let args = parse_args::<A>(call.arguments)?;
            let out = handler(args, call.cx).await?;
            structured(&out)
        }
    })
}

/// A result with `structuredContent` (which must serialize to a JSON object) and the same JSON as
/// a text block.
///
/// # Errors
/// [`ToolError::Failed`] when `out` does not serialize to an object.
pub fn structured<O: Serialize>(out: &O) -> Result<CallToolResult, ToolError> {
    match serde_json::to_value(out) {
        Ok(v @ Value::Object(_)) => Ok(CallToolResult::structured(v)),
        Ok(_) => Err(ToolError::new("structured output must be a JSON object")),
        Err(e) => Err(ToolError::new(format!("output serialization failed: {e}"))),
    }
}
