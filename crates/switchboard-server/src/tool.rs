//! Tools: registration, per-client allow-lists, and the `tools/call` error lattice.
//!
//! | situation | answer |
//! |---|---|
//! | unknown tool name | -32602 (spec §11.6; seed 000 said -32601, the spec wins) |
//! | tool exists, not in this client's allow-list | -32600, and it is not listed to that client |
//! | the tool's own error, or a panic inside it | a result with `isError: true`, reason in a text block |
//! | a deliberate protocol error ([`ToolError::Rpc`], e.g. -32042) | that JSON-RPC error |

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use switchboard_jsonrpc::BoxFuture;
use switchboard_types::ErrorObject;
use switchboard_types::capabilities::ClientCapabilities;
use switchboard_types::lifecycle::Implementation;
use switchboard_types::meta::JsonObject;
use switchboard_types::tools::{CallToolResult, Tool};

use crate::context::Context;

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
pub type ToolHandler =
    Arc<dyn Fn(ToolCall) -> BoxFuture<Result<CallToolResult, ToolError>> + Send + Sync>;

/// A registered tool: its definition, handler, and compiled input and output schemas.
#[derive(Clone)]
pub struct RegisteredTool {
    /// The definition listed by `tools/list`.
    pub tool: Tool,
    pub(crate) handler: ToolHandler,
    pub(crate) input: Option<Arc<jsonschema::Validator>>,
    pub(crate) output: Option<Arc<jsonschema::Validator>>,
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
    /// any) are compiled once here: arguments are validated before the handler runs, and
    /// `structuredContent` after it.
    ///
    /// # Errors
    /// [`RegistryError::InvalidSchema`] when a schema is not a valid JSON Schema.
    pub fn new<F, Fut>(tool: Tool, handler: F) -> Result<Self, RegistryError>
    where
        F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallToolResult, ToolError>> + Send + 'static,
    {
        let compile = |schema: &JsonObject, which: &'static str| {
            jsonschema::validator_for(&serde_json::Value::Object(schema.clone()))
                .map(Arc::new)
                .map_err(|e| RegistryError::InvalidSchema {
                    name: tool.name.clone(),
                    which,
                    reason: e.to_string(),
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
            Some(v) => violations(v, args),
            None => Ok(()),
        }
    }

    /// Validates a result against `outputSchema` (`[SF-7]`): `Err` says what is wrong.
    pub(crate) fn check_output(&self, result: &CallToolResult) -> Result<(), String> {
        let Some(v) = &self.output else { return Ok(()) };
        if result.is_error() {
            return Ok(());
        }
        let Some(sc) = &result.structured_content else {
            return Err("the tool declares outputSchema but returned no structuredContent".into());
        };
        violations(v, &serde_json::Value::Object(sc.clone()))
    }

    /// Runs the handler; a failure or a panic becomes an `isError` result, a deliberate
    /// protocol error stays one.
    pub(crate) async fn run(&self, call: ToolCall) -> Result<CallToolResult, ErrorObject> {
        let name = call.name.clone();
        match AssertUnwindSafe((self.handler)(call)).catch_unwind().await {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(ToolError::Failed(m))) => Ok(CallToolResult::error(m)),
            Ok(Err(ToolError::Rpc(e))) => Err(e),
            Err(_) => {
                tracing::error!(tool = %name, "tool handler panicked");
                Ok(CallToolResult::error(format!(
                    "tool '{name}' failed: internal error"
                )))
            }
        }
    }
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
pub struct ToolRegistry {
    /// Shared so that a call holds its tool without copying the definition and its schemas.
    tools: BTreeMap<String, Arc<RegisteredTool>>,
}

/// A registration error.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// A tool, prompt or resource with this name is already registered.
    #[error("{kind} '{name}' is already registered")]
    Duplicate {
        /// What kind of thing ("tool", "prompt", ...).
        kind: &'static str,
        /// The duplicated name.
        name: String,
    },
    /// A tool's schema is not a valid JSON Schema.
    #[error("tool '{name}': invalid {which}: {reason}")]
    InvalidSchema {
        /// The tool.
        name: String,
        /// `inputSchema` or `outputSchema`.
        which: &'static str,
        /// What the validator said.
        reason: String,
    },
    /// Nothing with this name is registered.
    #[error("{kind} '{name}' is not registered")]
    NotFound {
        /// What kind of thing.
        kind: &'static str,
        /// The missing name.
        name: String,
    },
}

impl ToolRegistry {
    /// Adds a tool.
    ///
    /// # Errors
    /// [`RegistryError::Duplicate`] when the name is taken.
    pub fn insert(&mut self, tool: RegisteredTool) -> Result<(), RegistryError> {
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
    pub fn remove(&mut self, name: &str) -> Result<Arc<RegisteredTool>, RegistryError> {
        self.tools
            .remove(name)
            .ok_or_else(|| RegistryError::NotFound {
                kind: "tool",
                name: name.to_owned(),
            })
    }

    /// The tool with this name.
    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.tools.get(name).map(|t| &**t)
    }

    /// The tool with this name, shared (what a call holds while it runs).
    pub(crate) fn get_shared(&self, name: &str) -> Option<Arc<RegisteredTool>> {
        self.tools.get(name).cloned()
    }

    /// All tools, in name order.
    pub fn iter(&self) -> impl Iterator<Item = &RegisteredTool> {
        self.tools.values().map(|t| &**t)
    }

    /// How many tools are registered.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

/// Which tools one client may see and call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum AllowList {
    /// Every tool.
    #[default]
    All,
    /// Only these tools.
    Only(HashSet<String>),
    /// Every tool but these.
    AllExcept(HashSet<String>),
}

impl AllowList {
    /// Only the named tools.
    pub fn only<I: IntoIterator<Item = S>, S: Into<String>>(names: I) -> Self {
        AllowList::Only(names.into_iter().map(Into::into).collect())
    }

    /// Every tool but the named ones.
    pub fn all_except<I: IntoIterator<Item = S>, S: Into<String>>(names: I) -> Self {
        AllowList::AllExcept(names.into_iter().map(Into::into).collect())
    }

    /// Whether the tool `name` is allowed.
    pub fn allows(&self, name: &str) -> bool {
        match self {
            AllowList::All => true,
            AllowList::Only(s) => s.contains(name),
            AllowList::AllExcept(s) => !s.contains(name),
        }
    }
}

/// Who the client is, as the allow-list policy sees it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientIdentity {
    /// `clientInfo` from `initialize`.
    pub info: Implementation,
    /// The client's declared capabilities.
    pub capabilities: ClientCapabilities,
}

/// Decides a session's allow-list once, when the client has initialized.
pub type ToolPolicy = Arc<dyn Fn(&ClientIdentity) -> AllowList + Send + Sync>;

/// -32602 for an unknown tool name.
pub fn unknown_tool(name: &str) -> ErrorObject {
    ErrorObject::new(
        switchboard_types::ErrorCode::INVALID_PARAMS,
        format!("Unknown tool: {name}"),
    )
    .with_data(serde_json::json!({"reason": "unknown_tool", "tool": name}))
}

/// -32600 for a tool outside the client's allow-list.
pub fn tool_not_permitted(name: &str) -> ErrorObject {
    ErrorObject::new(
        switchboard_types::ErrorCode::INVALID_REQUEST,
        format!("tool '{name}' not permitted for this client"),
    )
    .with_data(serde_json::json!({"reason": "tool_not_permitted", "tool": name}))
}
