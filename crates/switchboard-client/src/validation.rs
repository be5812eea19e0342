//! Client side: `[SF-7]` validation of a tool result's `structuredContent` against the tool's
//! `outputSchema` from the cached `tools/list`. Each schema is compiled once and the validator is
//! kept until a re-listing drops or changes that tool.
//!
//! A schema without `$schema` is JSON Schema 2020-12; a schema in a dialect the validator does not
//! support is refused with an error that says so (`[SC-2]`). Remote `$ref`s are never fetched.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use switchboard_types::error::echo;
use switchboard_types::meta::JsonObject;
use switchboard_types::tools::{CallToolResult, Tool};

use crate::error::ClientError;

/// How many schema violations an error names.
const MAX_REPORTED: usize = 5;

/// Compiled output schemas, by tool name.
#[derive(Default)]
pub(crate) struct OutputValidators {
    compiled: Mutex<HashMap<String, (JsonObject, Arc<jsonschema::Validator>)>>,
}

impl OutputValidators {
    /// Keeps only validators whose tool is still listed with the same schema.
    pub(crate) fn retain_for(&self, tools: &[Tool]) {
        if let Ok(mut c) = self.compiled.lock() {
            c.retain(|name, (schema, _)| {
                tools
                    .iter()
                    .any(|t| &t.name == name && t.output_schema.as_ref() == Some(schema))
            });
        }
    }

    fn validator(
        &self,
        tool: &str,
        schema: &JsonObject,
    ) -> Result<Arc<jsonschema::Validator>, ClientError> {
        if let Some((s, v)) = self.compiled.lock().ok().and_then(|c| c.get(tool).cloned())
            && &s == schema
        {
            return Ok(v);
        }
        let compiled = jsonschema::validator_for(&Value::Object(schema.clone())).map_err(|e| {
            ClientError::InvalidOutputSchema {
                tool: tool.to_owned(),
                problem: echo(&e.to_string()).into_owned(),
            }
        })?;
        let compiled = Arc::new(compiled);
        if let Ok(mut c) = self.compiled.lock() {
            c.insert(tool.to_owned(), (schema.clone(), compiled.clone()));
        }
        Ok(compiled)
    }

    /// `[SF-7]`: a successful result of a tool with an `outputSchema` must carry conforming
    /// `structuredContent`. A result with `isError` is not checked.
    pub(crate) fn check(
        &self,
        tool: &Tool,
        result: CallToolResult,
    ) -> Result<CallToolResult, ClientError> {
        let Some(schema) = &tool.output_schema else {
            return Ok(result);
        };
        if result.is_error() {
            return Ok(result);
        }
        let validator = self.validator(&tool.name, schema)?;
        let problem = match &result.structured_content {
            None => "no structuredContent, but the tool declares an outputSchema".to_owned(),
            Some(content) => {
                let problems: Vec<String> = validator
                    .iter_errors(content)
                    .take(MAX_REPORTED)
                    .map(|e| {
                        // The validator quotes the server's value: cut, like every echo.
                        let at = e.instance_path().to_string();
                        let what = e.to_string();
                        if at.is_empty() {
                            echo(&what).into_owned()
                        } else {
                            format!("at {}: {}", echo(&at), echo(&what))
                        }
                    })
                    .collect();
                if problems.is_empty() {
                    return Ok(result);
                }
                problems.join("; ")
            }
        };
        Err(ClientError::InvalidStructuredContent {
            tool: tool.name.clone(),
            problem,
            result: Box::new(result),
        })
    }
}
