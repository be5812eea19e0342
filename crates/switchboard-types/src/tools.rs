//! Tools: [`Tool`], `tools/list` and `tools/call` (SPEC-NOTES §11.5, §11.6, §9.2).
//!
//! Client → server. A tool's `inputSchema` / `outputSchema` are JSON Schema objects kept as
//! [`JsonObject`]s; validating arguments and `structuredContent` against them is the server
//! crate's job (`[SF-7]`, `[SF-9]`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::content::{ContentBlock, Icon};
use crate::meta::{Cursor, JsonObject, Meta, PaginatedRequestParams};
use crate::tasks::TaskMetadata;

/// Whether a tool may run as a task (`ToolExecution.taskSupport`, 2025-11-25, §9.2).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Never as a task (the default, `[TK-2]`).
    #[default]
    Forbidden,
    /// Either way.
    Optional,
    /// Only as a task (`[TK-4]`, `[TK-5]`).
    Required,
}

/// Execution properties of a tool (`ToolExecution`, 2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecution {
    /// Task support; absent means `forbidden`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_support: Option<TaskSupport>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Hints about a tool's behaviour (`ToolAnnotations`, 2025-03-26+). Untrusted unless the server
/// is trusted (`[SF-8]`); the accessors apply the spec defaults.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// Display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not change its environment (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may make destructive changes (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating a call has no further effect (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with external entities (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ToolAnnotations {
    /// `readOnlyHint`, defaulting to false.
    pub fn read_only(&self) -> bool {
        self.read_only_hint.unwrap_or(false)
    }

    /// `destructiveHint`, defaulting to true.
    pub fn destructive(&self) -> bool {
        self.destructive_hint.unwrap_or(true)
    }

    /// `idempotentHint`, defaulting to false.
    pub fn idempotent(&self) -> bool {
        self.idempotent_hint.unwrap_or(false)
    }

    /// `openWorldHint`, defaulting to true.
    pub fn open_world(&self) -> bool {
        self.open_world_hint.unwrap_or(true)
    }
}

/// A tool the client can call (`Tool`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Unique name (11-25 guidance: 1–128 of `A–Z a–z 0–9 _ - .`).
    pub name: String,
    /// Display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments: an object with root `type: "object"` (`[SF-6]`).
    pub input_schema: JsonObject,
    /// Execution properties (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<ToolExecution>,
    /// JSON Schema of `structuredContent` (2025-06-18+, `[SF-7]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<JsonObject>,
    /// Behaviour hints (2025-03-26+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Tool {
    /// A tool with a name and an input schema.
    ///
    /// `input_schema` should be a JSON object with `"type": "object"` (`[SF-6]`). Anything that is
    /// not an object (which the spec forbids) is replaced by `{"type": "object"}`, so a `Tool`
    /// always serializes with an object schema.
    pub fn new(name: impl Into<String>, input_schema: Value) -> Self {
        let input_schema = match input_schema {
            Value::Object(map) => map,
            _ => Self::empty_input_schema(),
        };
        Tool {
            name: name.into(),
            title: None,
            description: None,
            input_schema,
            execution: None,
            output_schema: None,
            annotations: None,
            icons: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// `{"type": "object"}`: the schema of a tool without parameters.
    pub fn empty_input_schema() -> JsonObject {
        let mut map = JsonObject::new();
        map.insert("type".to_owned(), Value::String("object".to_owned()));
        map
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the display title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the output schema; a non-object value clears it.
    pub fn with_output_schema(mut self, schema: Value) -> Self {
        self.output_schema = match schema {
            Value::Object(map) => Some(map),
            _ => None,
        };
        self
    }

    /// Sets the annotations.
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// Sets `execution.taskSupport`.
    pub fn with_task_support(mut self, support: TaskSupport) -> Self {
        self.execution
            .get_or_insert_with(ToolExecution::default)
            .task_support = Some(support);
        self
    }

    /// The effective task support: `forbidden` when absent (`[TK-2]`).
    pub fn task_support(&self) -> TaskSupport {
        self.execution
            .as_ref()
            .and_then(|e| e.task_support)
            .unwrap_or_default()
    }

    /// The name to show: `title`, then `annotations.title`, then `name` (§11.7).
    pub fn display_name(&self) -> &str {
        self.title
            .as_deref()
            .or_else(|| self.annotations.as_ref().and_then(|a| a.title.as_deref()))
            .unwrap_or(&self.name)
    }
}

/// Params of `tools/list`.
pub type ListToolsRequestParams = PaginatedRequestParams;

/// Result of `tools/list` (`ListToolsResult`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    /// One page of tools.
    pub tools: Vec<Tool>,
    /// The cursor of the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ListToolsResult {
    /// A single page with `tools`.
    pub fn new(tools: Vec<Tool>) -> Self {
        ListToolsResult {
            tools,
            ..Default::default()
        }
    }
}

/// Params of `tools/call` (`CallToolRequestParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolRequestParams {
    /// The tool.
    pub name: String,
    /// The arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<JsonObject>,
    /// Present to run the call as a task (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl CallToolRequestParams {
    /// A call of `name` without arguments.
    pub fn new(name: impl Into<String>) -> Self {
        CallToolRequestParams {
            name: name.into(),
            arguments: None,
            task: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// Sets the arguments; a non-object value clears them.
    pub fn with_arguments(mut self, arguments: Value) -> Self {
        self.arguments = match arguments {
            Value::Object(map) => Some(map),
            _ => None,
        };
        self
    }
}

/// Result of `tools/call` (`CallToolResult`). Tool failures, input validation included, are
/// results with `isError: true`, not protocol errors (§11.6).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// Unstructured content.
    pub content: Vec<ContentBlock>,
    /// Structured output, conforming to the tool's `outputSchema` (2025-06-18+). Any JSON
    /// value in revision 2026-07-28; an object in 2025 revisions (a dual-era server leaves a
    /// non-object value out of its answers to 2025 sessions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the call failed (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl CallToolResult {
    /// A successful result with `content`.
    pub fn new(content: Vec<ContentBlock>) -> Self {
        CallToolResult {
            content,
            ..Default::default()
        }
    }

    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(vec![ContentBlock::text(text)])
    }

    /// A failed result (`isError: true`) with one text block explaining why.
    pub fn error(text: impl Into<String>) -> Self {
        CallToolResult {
            is_error: Some(true),
            ..Self::text(text)
        }
    }

    /// A successful result with `structuredContent` and, for older clients, the same JSON as a
    /// text block. Any JSON value (revision 2026-07-28); a 2025 session gets a non-object
    /// value as the text block only.
    pub fn structured(value: Value) -> Self {
        let text = value.to_string();
        CallToolResult {
            structured_content: Some(value),
            ..Self::text(text)
        }
    }

    /// The result as a 2025 revision allows it: `structuredContent` only when it is an object.
    pub fn for_legacy(mut self) -> Self {
        if self
            .structured_content
            .as_ref()
            .is_some_and(|v| !v.is_object())
        {
            self.structured_content = None;
        }
        self
    }

    /// Whether the call failed (`isError`, default false).
    pub fn is_error(&self) -> bool {
        self.is_error.unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sf_6_input_schema_is_object() {
        let tool = Tool::new("t", Value::Null);
        assert_eq!(
            serde_json::to_value(&tool).expect("json")["inputSchema"],
            json!({"type": "object"})
        );
        assert!(serde_json::from_value::<Tool>(json!({"name": "t", "inputSchema": null})).is_err());
        assert!(serde_json::from_value::<Tool>(json!({"name": "t"})).is_err());
    }

    #[test]
    fn error_result_sets_is_error() {
        let v = serde_json::to_value(CallToolResult::error("bad date")).expect("json");
        assert_eq!(
            v,
            json!({"content": [{"type": "text", "text": "bad date"}], "isError": true})
        );
    }

    #[test]
    fn tk_2_absent_task_support_is_forbidden() {
        let tool = Tool::new("t", json!({"type": "object"}));
        assert_eq!(tool.task_support(), TaskSupport::Forbidden);
        assert_eq!(
            tool.with_task_support(TaskSupport::Required).task_support(),
            TaskSupport::Required
        );
    }
}
