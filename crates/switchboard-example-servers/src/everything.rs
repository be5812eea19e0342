//! The everything server: every MCP feature, with exactly the names, payloads and behaviour the
//! interop and conformance runs expect: pagination (10 per page), per-session subscriptions and
//! dynamic tools, completion values. A superset of what the official conformance suite requires.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use switchboard::jsonrpc::SessionConfig;
use switchboard::server::{
    CompletionTarget, Context, PromptGet, ResourceRead, Server, ServerError, ToolCall, ToolError,
    prefix_matches, resource_not_found,
};
use switchboard::types::content::{
    BlobResourceContents, ContentBlock, EmbeddedResource, ResourceContents, TextResourceContents,
};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::prompts::{GetPromptResult, Prompt, PromptArgument, PromptMessage};
use switchboard::types::resources::{ReadResourceResult, Resource, ResourceTemplate};
use switchboard::types::tools::{CallToolResult, TaskSupport, Tool};

/// The 1x1 PNG of the contract, base64.
pub const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// The minimal WAV of the contract, base64.
pub const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";
/// The URI whose content `test_trigger_resource_update` changes.
pub const WATCHED: &str = "test://watched-resource";

/// This session's update counter for [`WATCHED`].
#[derive(Debug, Default)]
struct WatchedCount(AtomicU64);

fn no_args() -> Value {
    json!({"type": "object", "properties": {}})
}

fn from_json<T: DeserializeOwned>(v: Value) -> Result<T, ToolError> {
    serde_json::from_value(v).map_err(|e| ToolError::new(format!("internal: {e}")))
}

fn text(s: impl Into<String>) -> Result<CallToolResult, ToolError> {
    Ok(CallToolResult::text(s))
}

fn content(blocks: Value) -> Result<CallToolResult, ToolError> {
    Ok(CallToolResult::new(from_json(blocks)?))
}

fn str_arg<'a>(call: &'a ToolCall, key: &str) -> Result<&'a str, ToolError> {
    call.arguments
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::new(format!("missing argument '{key}'")))
}

fn int_arg(call: &ToolCall, key: &str) -> Result<i64, ToolError> {
    call.arguments
        .get(key)
        .and_then(Value::as_i64)
        .ok_or_else(|| ToolError::new(format!("missing integer argument '{key}'")))
}

fn tool(name: &str, description: &str, schema: Value) -> Tool {
    Tool::new(name, schema).with_description(description)
}

async fn elicit_and_report(
    cx: &Context,
    params: Value,
    prefix: &str,
) -> Result<CallToolResult, ToolError> {
    let params: switchboard::types::elicitation::ElicitRequestFormParams = from_json(params)?;
    let r = cx
        .elicit(params)
        .await
        .map_err(|e| ToolError::new(format!("elicitation failed: {e}")))?;
    let action = serde_json::to_value(r.action).unwrap_or(Value::Null);
    let content = r
        .content
        .map(|c| serde_json::to_value(c).unwrap_or(json!({})))
        .unwrap_or(json!({}));
    text(format!(
        "{prefix}action={}, content={content}",
        action.as_str().unwrap_or("?")
    ))
}

fn static_text(uri: &str, mime: &str, body: String) -> ReadResourceResult {
    let mut c = TextResourceContents::new(uri, body);
    c.mime_type = Some(mime.to_owned());
    ReadResourceResult::new(vec![ResourceContents::Text(c)])
}

/// The scope every request needs when the everything server is an OAuth resource server.
pub const SCOPE_BASIC: &str = "mcp:basic";
/// The scope `test_scoped_write` needs beside [`SCOPE_BASIC`].
pub const SCOPE_WRITE: &str = "mcp:write";

/// Builds the everything server with the given engine configuration.
///
/// # Errors
/// A registration error (none with these fixed definitions).
pub fn everything_server(config: SessionConfig) -> Result<Server, ServerError> {
    everything_server_deployed(config, &crate::Deployment::default())
}

/// [`everything_server`] for `deployment` (its task store and shared key).
///
/// # Errors
/// A registration error (none with these fixed definitions).
pub fn everything_server_deployed(
    config: SessionConfig,
    deployment: &crate::Deployment,
) -> Result<Server, ServerError> {
    let mut b = Server::builder(Implementation::new(
        "switchboard-everything",
        env!("CARGO_PKG_VERSION"),
    ))
    .instructions(
        "The Switchboard everything server: every MCP feature, for clients and conformance tests.",
    )
    .session_config(config.with_name("server"))
    .enable_tools()
    .enable_resources()
    .enable_prompts()
    .enable_logging()
    .enable_completions()
    .page_size(10);
    b = deployment.apply(b);

    // --- Tools (contract §2) ---
    b = b
        .tool(tool("test_simple_text", "Returns a simple text response", no_args()), |_| async {
            text("This is a simple text response for testing.")
        })
        .tool(tool("test_image_content", "Returns an image", no_args()), |_| async {
            content(json!([{"type": "image", "data": PNG, "mimeType": "image/png"}]))
        })
        .tool(tool("test_audio_content", "Returns audio", no_args()), |_| async {
            content(json!([{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]))
        })
        .tool(tool("test_embedded_resource", "Returns an embedded resource", no_args()), |_| async {
            content(json!([{"type": "resource", "resource": {"uri": "test://embedded-resource", "mimeType": "text/plain",
                "text": "This is an embedded resource content."}}]))
        })
        .tool(tool("test_resource_link", "Returns a resource link", no_args()), |_| async {
            content(json!([{"type": "text", "text": "See linked resource."},
                {"type": "resource_link", "uri": "test://static-text", "name": "static-text", "mimeType": "text/plain"}]))
        })
        .tool(tool("test_multiple_content_types", "Returns several content types", no_args()), |_| async {
            content(json!([{"type": "text", "text": "Multiple content types test:"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "test://mixed-content-resource", "mimeType": "application/json",
                    "text": "{\"test\":\"data\",\"value\":123}"}}]))
        })
        .tool(
            tool(
                "test_structured_output",
                "Returns the sum and product of a and b as structured content",
                json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}),
            )
            .with_output_schema(json!({"type": "object", "properties": {"sum": {"type": "integer"}, "product": {"type": "integer"}},
                "required": ["sum", "product"]})),
            |call| async move {
                let (a, b) = (int_arg(&call, "a")?, int_arg(&call, "b")?);
                Ok(CallToolResult::structured(json!({"sum": a + b, "product": a * b})))
            },
        )
        .tool(
            tool(
                "test_task_slow",
                "Sleeps ms milliseconds (reporting the milliseconds slept every 100 ms when given a progress token), then returns a text block; may run as a task",
                json!({"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0}}, "required": ["ms"]}),
            )
            .with_task_support(TaskSupport::Optional),
            |call| async move {
                let ms = int_arg(&call, "ms")?.clamp(0, 600_000) as u64;
                if call.cx.progress_token().is_some() {
                    let mut slept = 0;
                    while slept < ms {
                        let step = (ms - slept).min(100);
                        tokio::time::sleep(std::time::Duration::from_millis(step)).await;
                        slept += step;
                        call.cx
                            .progress(slept as f64, Some(ms as f64), None)
                            .await
                            .map_err(|e| ToolError::new(e.to_string()))?;
                    }
                } else {
                    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                }
                text(format!("slept {ms} ms"))
            },
        )
        .tool(
            tool(
                "test_task_elicitation",
                "Asks the user for a name (elicitation), then greets them; as a task it is input_required meanwhile",
                no_args(),
            )
            .with_task_support(TaskSupport::Optional),
            |call| async move {
                let params = json!({"message": "What is your name?", "requestedSchema": {"type": "object",
                    "properties": {"name": {"type": "string", "description": "Your name"}}, "required": ["name"]}});
                let params: switchboard::types::elicitation::ElicitRequestFormParams = from_json(params)?;
                let r = call
                    .cx
                    .elicit(params)
                    .await
                    .map_err(|e| ToolError::new(format!("elicitation failed: {e}")))?;
                let content = r.content.map(|c| serde_json::to_value(c).unwrap_or(json!({}))).unwrap_or(json!({}));
                text(format!("hello {}", content["name"].as_str().unwrap_or("stranger")))
            },
        )
        .tool(
            tool("test_task_required", "Returns a text block; runs only as a task", no_args())
                .with_task_support(TaskSupport::Required),
            |_| async { text("the task is done") },
        )
        .tool(tool("test_error_handling", "Always fails", no_args()), |_| async {
            Err(ToolError::new("This tool intentionally returns an error for testing"))
        })
        .tool(tool("test_tool_with_progress", "Reports progress 0, 50, 100", no_args()), |call| async move {
            let token = call.cx.progress_token().cloned();
            if token.is_some() {
                for (i, p) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                    if i > 0 {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    call.cx.progress(p, Some(100.0), None).await.map_err(|e| ToolError::new(e.to_string()))?;
                }
            }
            let shown = match token {
                Some(t) => t.as_str().map(str::to_owned).unwrap_or_else(|| t.to_string()),
                None => "no progress token".to_owned(),
            };
            text(shown)
        })
        .tool(tool("test_tool_with_logging", "Sends three log messages", no_args()), |call| async move {
            for m in ["Tool execution started", "Tool processing data", "Tool execution completed"] {
                call.cx
                    .log(switchboard::types::logging::LoggingLevel::Info, json!(m))
                    .await
                    .map_err(|e| ToolError::new(e.to_string()))?;
            }
            text("Tool with logging executed successfully")
        })
        .tool(
            tool("test_sampling", "Asks the client to sample", json!({"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]})),
            |call| async move {
                let prompt = str_arg(&call, "prompt")?.to_owned();
                let params = from_json(json!({"messages": [{"role": "user", "content": {"type": "text", "text": prompt}}], "maxTokens": 100}))?;
                let r = call.cx.create_message(params).await.map_err(|e| ToolError::new(format!("sampling failed: {e}")))?;
                let said: Vec<String> = r.content.as_slice().iter().filter_map(|b| match b {
                    switchboard::types::sampling::SamplingMessageContentBlock::Text(t) => Some(t.text.clone()),
                    _ => None,
                }).collect();
                text(format!("LLM response: {}", said.join("")))
            },
        )
        .tool(
            tool("test_elicitation", "Asks the user for a username and email", json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]})),
            |call| async move {
                let message = str_arg(&call, "message")?.to_owned();
                let params = json!({"message": message, "requestedSchema": {"type": "object", "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"}}, "required": ["username", "email"]}});
                elicit_and_report(&call.cx, params, "User response: ").await
            },
        )
        .tool(tool("test_elicitation_sep1034_defaults", "Elicitation with defaults (SEP-1034)", no_args()), |call| async move {
            let params = json!({"message": "Please review and update the form fields with defaults", "requestedSchema": {"type": "object", "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "description": "Verification status", "default": true}}}});
            elicit_and_report(&call.cx, params, "Elicitation completed: ").await
        })
        .tool(tool("test_elicitation_sep1330_enums", "Elicitation with every enum form (SEP-1330)", no_args()), |call| async move {
            let params = json!({"message": "Please select options from the enum fields", "requestedSchema": {"type": "object", "properties": {
                "untitledSingle": {"type": "string", "description": "Select one option", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {"type": "string", "description": "Select one option with titles", "oneOf": [
                    {"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"}, {"const": "value3", "title": "Third Option"}]},
                "legacyEnum": {"type": "string", "description": "Select one option (legacy)", "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"]},
                "untitledMulti": {"type": "array", "description": "Select multiple options", "minItems": 1, "maxItems": 3,
                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                "titledMulti": {"type": "array", "description": "Select multiple options with titles", "minItems": 1, "maxItems": 3,
                    "items": {"anyOf": [{"const": "value1", "title": "First Choice"}, {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"}]}}}, "required": []}});
            elicit_and_report(&call.cx, params, "Elicitation completed: ").await
        })
        .tool(
            tool("json_schema_2020_12_tool", "A tool whose inputSchema uses JSON Schema 2020-12 features", crate::everything_modern::json_schema_2020_12()),
            |call| async move { text(format!("Received: {}", Value::Object(call.arguments))) },
        )
        .tool(
            tool("test_reconnection", "Closes its SSE stream before answering (SEP-1699 polling)", no_args()),
            |call| async move {
                // Over Streamable HTTP the client gets the answer by reconnecting with
                // Last-Event-ID; over other transports this is a no-op.
                let closed = call.cx.close_stream();
                tokio::time::sleep(Duration::from_millis(100)).await;
                text(format!("Reconnection test completed successfully (stream closed: {closed})"))
            },
        )
        .tool(tool("test_list_roots", "Asks the client for its roots", no_args()), |call| async move {
            let r = call.cx.list_roots().await.map_err(|e| ToolError::new(format!("roots/list failed: {e}")))?;
            text(format!("Roots: {}", serde_json::to_value(&r.roots).unwrap_or(json!([]))))
        })
        .tool(tool("test_trigger_resource_update", "Updates the watched resource for this session and tells its subscribers", no_args()), |call| async move {
            let n = call.cx.session().extension::<WatchedCount>().0.fetch_add(1, Ordering::SeqCst) + 1;
            // Every subscriber hears of it: 2025 sessions that subscribed and 2026-07-28 listen
            // streams whose filter names it.
            let notified = call.cx.resource_updated(WATCHED).await > 0;
            text(format!("Updated {WATCHED}: update={n} notified={notified}"))
        })
        .tool(tool("test_add_dynamic_tool", "Registers test_dynamic_tool for this session", no_args()), |call| async move {
            call.cx
                .session()
                .add_tool(tool("test_dynamic_tool", "Only listed between add and remove", no_args()), |_| async {
                    text("dynamic tool response")
                })
                .await
                .map_err(|e| ToolError::new(e.to_string()))?;
            text("Registered test_dynamic_tool")
        })
        .tool(tool("test_remove_dynamic_tool", "Removes test_dynamic_tool for this session", no_args()), |call| async move {
            call.cx.session().remove_tool("test_dynamic_tool").await.map_err(|e| ToolError::new(e.to_string()))?;
            text("Removed test_dynamic_tool")
        });

    // --- Resources (contract §3) ---
    b = b
        .resource(
            Resource::new("test://static-text", "static-text").with_mime_type("text/plain"),
            |r| async move {
                Ok(static_text(
                    &r.uri,
                    "text/plain",
                    "This is the content of the static text resource.".into(),
                ))
            },
        )
        .resource(
            Resource::new("test://static-binary", "static-binary").with_mime_type("image/png"),
            |r| async move {
                let mut c = BlobResourceContents::new(r.uri, PNG);
                c.mime_type = Some("image/png".into());
                Ok(ReadResourceResult::new(vec![ResourceContents::Blob(c)]))
            },
        )
        .resource(
            Resource::new(WATCHED, "watched-resource").with_mime_type("text/plain"),
            |r: ResourceRead| async move {
                let n =
                    r.cx.session()
                        .extension::<WatchedCount>()
                        .0
                        .load(Ordering::SeqCst);
                let body = if n == 0 {
                    "Watched resource content".to_owned()
                } else {
                    format!("Watched resource content (update {n})")
                };
                Ok(static_text(&r.uri, "text/plain", body))
            },
        );
    for i in 1..=25 {
        let uri = format!("test://paginated/{i:02}");
        b = b.resource(
            Resource::new(&uri, format!("paginated-{i:02}")).with_mime_type("text/plain"),
            move |r| async move {
                Ok(static_text(
                    &r.uri,
                    "text/plain",
                    format!("Paginated resource {i:02}"),
                ))
            },
        );
    }
    let mut template = ResourceTemplate::new("test://template/{id}/data", "template");
    template.mime_type = Some("application/json".into());
    b = b.resource_template(template, |r: ResourceRead| async move {
        let id = r
            .vars
            .get("id")
            .cloned()
            .ok_or_else(|| resource_not_found(&r.uri))?;
        let body = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")})
            .to_string();
        Ok(static_text(&r.uri, "application/json", body))
    });

    // --- Prompts (contract §4) ---
    let prompt = |name: &str, description: &str| {
        let mut p = Prompt::new(name);
        p.description = Some(description.to_owned());
        p
    };
    let arg = |name: &str| {
        let mut a = PromptArgument::new(name);
        a.description = Some(format!("The {name} argument"));
        a.required = Some(true);
        a
    };
    let mut with_args = prompt(
        "test_prompt_with_arguments",
        "A prompt with two required arguments",
    );
    with_args.arguments = Some(vec![arg("arg1"), arg("arg2")]);
    let mut with_resource = prompt(
        "test_prompt_with_embedded_resource",
        "A prompt that embeds a resource",
    );
    with_resource.arguments = Some(vec![arg("resourceUri")]);
    b = b
        .prompt(
            prompt("test_simple_prompt", "A simple prompt without arguments"),
            |_| async {
                Ok(GetPromptResult::new(vec![PromptMessage::user_text(
                    "This is a simple prompt for testing.",
                )]))
            },
        )
        .prompt(with_args, |g: PromptGet| async move {
            let (a1, a2) = (
                g.arguments.get("arg1").cloned().unwrap_or_default(),
                g.arguments.get("arg2").cloned().unwrap_or_default(),
            );
            Ok(GetPromptResult::new(vec![PromptMessage::user_text(
                format!("Prompt with arguments: arg1='{a1}', arg2='{a2}'"),
            )]))
        })
        .prompt(with_resource, |g: PromptGet| async move {
            let uri = g.arguments.get("resourceUri").cloned().unwrap_or_default();
            let mut c = TextResourceContents::new(uri, "Embedded resource content for testing.");
            c.mime_type = Some("text/plain".into());
            let embedded = ContentBlock::Resource(EmbeddedResource::new(ResourceContents::Text(c)));
            Ok(GetPromptResult::new(vec![
                PromptMessage::new(switchboard::types::content::Role::User, embedded),
                PromptMessage::user_text("Please process the embedded resource above."),
            ]))
        })
        .prompt(
            prompt("test_prompt_with_image", "A prompt that includes an image"),
            |_| async {
                Ok(GetPromptResult::new(vec![
                    PromptMessage::new(
                        switchboard::types::content::Role::User,
                        ContentBlock::image(PNG, "image/png"),
                    ),
                    PromptMessage::user_text("Please analyze the image above."),
                ]))
            },
        );

    // --- Completion (contract §5) ---
    b = b
        .completion(
            CompletionTarget::Prompt("test_prompt_with_arguments".into()),
            "arg1",
            prefix_matches(["alpha", "alpine", "beta", "gamma"]),
        )
        .completion(
            CompletionTarget::Prompt("test_prompt_with_arguments".into()),
            "arg2",
            prefix_matches(["one", "two", "three"]),
        )
        .completion(
            CompletionTarget::ResourceTemplate("test://template/{id}/data".into()),
            "id",
            prefix_matches(["100", "123", "200"]),
        );
    b = crate::everything_modern::fixtures(b);

    // --- Authorization (OAuth 2.1, `switchboard serve --auth-issuer`) ---
    // Without a transport that authorizes requests these declarations change nothing.
    b = b
        // Says whom it wrote for; needs mcp:write beside mcp:basic (a step-up).
        .tool(
            tool(
                "test_scoped_write",
                "Needs the mcp:write scope; says who called",
                no_args(),
            ),
            |call| async move {
                match call.cx.auth() {
                    Some(auth) => text(format!("Scoped write done for {}", auth.subject)),
                    None => text("Scoped write done (no authorization)"),
                }
            },
        )
        .require_scopes([SCOPE_BASIC])
        .tool_scopes("test_scoped_write", [SCOPE_WRITE]);
    let server = b.build()?;
    crate::everything_modern::triggers(&server)?;
    Ok(server)
}
