//! `search_tools` (configuration opt-in): for clients that cannot hold hundreds of tools, a
//! query returns the names, descriptions and input schemas of the tools whose name or
//! description holds every one of its words (case-insensitive), among those the caller may use.

use std::sync::{Arc, RwLock};

use serde_json::{Value, json};
use switchboard_server::{ToolCall, ToolError};
use switchboard_types::tools::{CallToolResult, Tool};

use crate::policy::{Caller, Policy};
use crate::registry::Registry;

/// The tool's name on the gateway.
pub(crate) const SEARCH_TOOLS: &str = "search_tools";
/// Most matches one search returns (default and cap of `limit`).
pub(crate) const MAX_SEARCH_RESULTS: usize = 50;

/// The tool's definition.
pub(crate) fn definition() -> Tool {
    let mut tool = Tool::new(
        SEARCH_TOOLS,
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words that every matching tool's name or description holds (case-insensitive); empty matches every tool."},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_RESULTS, "description": "Most tools returned (default and most: 50)."}
            },
            "required": ["query"]
        }),
    );
    tool.description = Some(
        "Finds the gateway's tools by words of their names and descriptions, and returns their names, descriptions and input schemas; call a tool found by its name.".into(),
    );
    tool
}

/// Runs one search.
pub(crate) async fn search(
    registry: Arc<Registry>,
    policy: Arc<RwLock<Arc<Policy>>>,
    call: ToolCall,
) -> Result<CallToolResult, ToolError> {
    let query = call
        .arguments
        .get("query")
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::new("`query` (a string) is required"))?
        .to_lowercase();
    let limit = call
        .arguments
        .get("limit")
        .and_then(Value::as_u64)
        .map_or(MAX_SEARCH_RESULTS, |n| {
            usize::try_from(n).unwrap_or(MAX_SEARCH_RESULTS)
        })
        .clamp(1, MAX_SEARCH_RESULTS);
    let words: Vec<&str> = query.split_whitespace().collect();
    let policy = policy.read().map(|p| Arc::clone(&p)).unwrap_or_default();
    let scopes: Vec<String> = call.cx.scopes().into_iter().map(str::to_owned).collect();
    let caller = Caller {
        subject: call.cx.subject(),
        scopes: &scopes,
    };
    let mut found = Vec::new();
    let mut more = false;
    'upstreams: for mirror in registry.mirrors() {
        for tool in mirror.searchable().iter() {
            if !policy.allows_tool(&caller, Some(&mirror.link.name), &tool.name) {
                continue;
            }
            if !words.iter().all(|w| tool.text.contains(w)) {
                continue;
            }
            if found.len() == limit {
                more = true;
                break 'upstreams;
            }
            found.push(tool.entry.clone());
        }
    }
    let structured = json!({"tools": found, "truncated": more});
    let mut result = CallToolResult::text(structured.to_string());
    result.structured_content = Some(structured);
    Ok(result)
}
