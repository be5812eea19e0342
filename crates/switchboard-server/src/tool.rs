//! Tools: registration, per-client allow-lists, and the `tools/call` error lattice.
//!
//! | situation | answer |
//! |---|---|
//! | unknown tool name | -32602 (spec §11.6; seed 000 said -32601, the spec wins) |
//! | tool exists, not in this client's allow-list | -32600, and it is not listed to that client |
//! | the tool's own error, or a panic inside it | a result with `isError: true`, reason in a text block |
//! | a deliberate protocol error ([`ToolError::Rpc`], e.g. -32042) | that JSON-RPC error |

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use switchboard_jsonrpc::BoxFuture;
use switchboard_types::ErrorObject;
use switchboard_types::meta::JsonObject;
use switchboard_types::tools::{CallToolResult, Tool};

use crate::context::Context;
pub use crate::error::RegistryError;
use crate::error::SessionError;
pub(crate) use crate::policy::{AllowList, ClientIdentity, ToolPolicy};
use crate::schema::Schema;
use crate::session::{ServerSession, SessionState};
use switchboard_jsonrpc::RequestError;

/// Why a tool did not produce a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The tool's own failure: reported to the model as an `isError` result, never as a
    /// protocol error.
    #[error("{0}")]
    Failed(String),
    /// A deliberate JSON-RPC error, such as -32042 (URL elicitation required).
    #[error("{0}")]
    Rpc(ErrorObject),
}

impl ToolError {
    /// A tool failure with a message the model can read.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError::Failed(message.into())
    }
}

impl From<ErrorObject> for ToolError {
    fn from(e: ErrorObject) -> Self {
        ToolError::Rpc(e)
    }
}

/// What a tool handler gets: the arguments and the request context.
#[derive(Debug)]
#[non_exhaustive]
pub struct ToolCall {
    /// The tool name.
    pub name: String,
    /// The arguments object (empty when the client sent none).
    pub arguments: JsonObject,
    /// The request's context: session, progress, cancellation, logging, requests to the client.
    pub cx: Context,
}

/// The boxed handler of one tool.
pub(crate) type ToolHandler =
    Arc<dyn Fn(ToolCall) -> BoxFuture<Result<CallToolResult, ToolError>> + Send + Sync>;

/// A registered tool: its definition, handler, and compiled input and output schemas.
#[derive(Clone)]
pub struct RegisteredTool {
    /// The definition listed by `tools/list`.
    pub tool: Tool,
    pub(crate) handler: ToolHandler,
    pub(crate) input: Option<Arc<Schema>>,
    pub(crate) output: Option<Arc<Schema>>,
}

impl fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredTool")
            .field("name", &self.tool.name)
            .finish()
    }
}

impl RegisteredTool {
    /// A tool from a definition and an async handler. Its `inputSchema` (and `outputSchema`, if
    /// any) are compiled once: arguments are validated before the handler runs, and
    /// `structuredContent` after it. A schema that may be invalid is compiled here; one written
    /// only with keywords whose values are plainly valid is compiled when first needed (or
    /// ahead of that, off the path of the first answers, once the server is built).
    ///
    /// # Errors
    /// [`RegistryError::InvalidSchema`] when a schema is not a valid JSON Schema.
    pub fn new<F, Fut>(tool: Tool, handler: F) -> Result<Self, RegistryError>
    where
        F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallToolResult, ToolError>> + Send + 'static,
    {
        let compile = |schema: &JsonObject, which: &'static str| {
            Schema::new(serde_json::Value::Object(schema.clone()))
                .map(Arc::new)
                .map_err(|reason| RegistryError::InvalidSchema {
                    name: tool.name.clone(),
                    which,
                    reason,
                })
        };
        let input = Some(compile(&tool.input_schema, "inputSchema")?);
        let output = tool
            .output_schema
            .as_ref()
            .map(|s| compile(s, "outputSchema"))
            .transpose()?;
        Ok(RegisteredTool {
            handler: Arc::new(move |call| Box::pin(handler(call))),
            tool,
            input,
            output,
        })
    }

    /// Validates arguments against `inputSchema`: `Err` lists each violation with its path.
    pub(crate) fn check_input(&self, args: &serde_json::Value) -> Result<(), String> {
        match &self.input {
            Some(s) => violations(compiled(s)?, args),
            None => Ok(()),
        }
    }

    /// The schemas whose compile is still to come.
    pub(crate) fn pending_schemas(&self) -> impl Iterator<Item = Arc<Schema>> + '_ {
        [&self.input, &self.output]
            .into_iter()
            .flatten()
            .filter(|s| s.pending())
            .cloned()
    }

    /// Validates a result against `outputSchema` (`[SF-7]`): `Err` says what is wrong.
    pub(crate) fn check_output(&self, result: &CallToolResult) -> Result<(), String> {
        let Some(s) = &self.output else { return Ok(()) };
        let v = compiled(s)?;
        if result.is_error() {
            return Ok(());
        }
        let Some(sc) = &result.structured_content else {
            return Err("the tool declares outputSchema but returned no structuredContent".into());
        };
        violations(v, sc)
    }

    /// Runs the handler; a failure or a panic becomes an `isError` result, a deliberate
    /// protocol error stays one.
    pub(crate) async fn run(&self, call: ToolCall) -> Result<CallToolResult, ErrorObject> {
        // The call was routed by this name: the tool's own.
        let name = &self.tool.name;
        let peer = call.cx.request.peer().unrelated();
        // The handler's synchronous part (before its future exists) is caught as well.
        let outcome = match std::panic::catch_unwind(AssertUnwindSafe(|| (self.handler)(call))) {
            Ok(fut) => AssertUnwindSafe(fut).catch_unwind().await,
            Err(panic) => Err(panic),
        };
        match outcome {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(ToolError::Failed(m))) => Ok(CallToolResult::error(m)),
            Ok(Err(ToolError::Rpc(e))) => Err(e),
            Err(_) => {
                // The client can call a failing tool as often as it likes: within the budget.
                if peer.log_throttle().admit("server") {
                    tracing::error!(tool = %name, "tool handler panicked");
                }
                Ok(CallToolResult::error(format!(
                    "tool '{name}' failed: internal error"
                )))
            }
        }
    }
}

/// The validator of a schema; `Err` says why it does not compile (never expected: a schema is
/// compiled at registration unless it is plainly valid).
fn compiled(s: &Schema) -> Result<&jsonschema::Validator, String> {
    s.validator()
        .map_err(|why| format!("the schema does not compile: {why}"))
}

/// Every violation of `value` against `v`, with its path, joined; `Ok` when there is none.
fn violations(v: &jsonschema::Validator, value: &serde_json::Value) -> Result<(), String> {
    // The common case (valid) takes the short-circuiting check; errors are collected only then.
    if v.is_valid(value) {
        return Ok(());
    }
    let errors: Vec<String> = v.iter_errors(value).map(|e| describe(&e)).collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

fn describe(e: &jsonschema::ValidationError<'_>) -> String {
    let path = e.instance_path().to_string();
    if path.is_empty() {
        e.to_string()
    } else {
        format!("{path}: {e}")
    }
}

/// The tools of a server, by name, listed in name order.
#[derive(Debug, Clone, Default)]
pub(crate) struct ToolRegistry {
    /// Shared so that a call holds its tool without copying the definition and its schemas.
    tools: BTreeMap<String, Arc<RegisteredTool>>,
}

impl ToolRegistry {
    /// Adds a tool.
    ///
    /// # Errors
    /// [`RegistryError::Duplicate`] when the name is taken.
    pub(crate) fn insert(&mut self, tool: RegisteredTool) -> Result<(), RegistryError> {
        if self.tools.contains_key(&tool.tool.name) {
            return Err(RegistryError::Duplicate {
                kind: "tool",
                name: tool.tool.name,
            });
        }
        self.tools.insert(tool.tool.name.clone(), Arc::new(tool));
        Ok(())
    }

    /// Removes a tool.
    ///
    /// # Errors
    /// [`RegistryError::NotFound`] when no tool has this name.
    pub(crate) fn remove(&mut self, name: &str) -> Result<Arc<RegisteredTool>, RegistryError> {
        self.tools
            .remove(name)
            .ok_or_else(|| RegistryError::NotFound {
                kind: "tool",
                name: name.to_owned(),
            })
    }

    /// The tool with this name, shared (what a call holds while it runs).
    pub(crate) fn get_shared(&self, name: &str) -> Option<Arc<RegisteredTool>> {
        self.tools.get(name).cloned()
    }

    /// All tools, in name order, shared (a listing holds them without copying).
    pub(crate) fn shared(&self) -> impl Iterator<Item = &Arc<RegisteredTool>> {
        self.tools.values()
    }

    /// All tools, in name order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &RegisteredTool> {
        self.tools.values().map(|t| &**t)
    }

    /// How many tools are registered.
    pub(crate) fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether no tool is registered.
    pub(crate) fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

/// -32602 for an unknown tool name; the name is cut by
/// [`echo`](switchboard_types::error::echo).
pub(crate) fn unknown_tool(name: &str) -> ErrorObject {
    let name = switchboard_types::error::echo(name);
    ErrorObject::new(
        switchboard_types::ErrorCode::INVALID_PARAMS,
        format!("Unknown tool: {name}"),
    )
    .with_data(serde_json::json!({"reason": "unknown_tool", "tool": name}))
}

/// -32600 for a tool outside the client's allow-list; the name is cut by
/// [`echo`](switchboard_types::error::echo).
pub(crate) fn tool_not_permitted(name: &str) -> ErrorObject {
    let name = switchboard_types::error::echo(name);
    ErrorObject::new(
        switchboard_types::ErrorCode::INVALID_REQUEST,
        format!("tool '{name}' not permitted for this client"),
    )
    .with_data(serde_json::json!({"reason": "tool_not_permitted", "tool": name}))
}

/// The tools registered for one session only, kept in the session's extension map.
#[derive(Debug, Default)]
struct SessionTools(std::sync::Mutex<ToolRegistry>);

/// The session tool called `name`, if any.
pub(crate) fn session_tool(state: &SessionState, name: &str) -> Option<Arc<RegisteredTool>> {
    let tools = state.existing_extension::<SessionTools>()?;
    let registry = tools.0.lock().ok()?;
    registry.get_shared(name)
}

/// The session's own tools.
pub(crate) fn session_tools(state: &SessionState) -> Vec<Arc<RegisteredTool>> {
    let Some(tools) = state.existing_extension::<SessionTools>() else {
        return Vec::new();
    };
    tools
        .0
        .lock()
        .map(|r| r.shared().cloned().collect())
        .unwrap_or_default()
}

impl ServerSession {
    /// Registers a tool for this session only, and tells this client its tool list changed.
    /// Re-registering an existing session tool replaces it.
    ///
    /// # Errors
    /// A bound on session tools, or a failure to notify.
    pub async fn add_tool<F, Fut>(&self, tool: Tool, handler: F) -> Result<(), SessionError>
    where
        F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallToolResult, ToolError>> + Send + 'static,
    {
        {
            let tools = self.state.extension::<SessionTools>();
            let mut registry = tools.0.lock().map_err(|_| RequestError::Closed)?;
            let _ = registry.remove(&tool.name);
            if registry.len() >= self.max_session_tools {
                return Err(RegistryError::Duplicate {
                    kind: "session tool (limit reached)",
                    name: tool.name,
                }
                .into());
            }
            registry.insert(RegisteredTool::new(tool, handler)?)?;
        }
        self.tools_changed().await
    }

    /// Removes a session tool (a no-op when absent) and tells this client its tool list changed.
    ///
    /// # Errors
    /// A failure to notify.
    pub async fn remove_tool(&self, name: &str) -> Result<(), SessionError> {
        if let Some(tools) = self.state.existing_extension::<SessionTools>() {
            let mut registry = tools.0.lock().map_err(|_| RequestError::Closed)?;
            let _ = registry.remove(name);
        }
        self.tools_changed().await
    }
}
