//! The everything server's fixtures for revision 2026-07-28 (the names and behaviour the
//! official conformance suite 0.2.0-alpha.12 expects at that revision; see
//! `shared/conformance/CONFORMANCE-2026.md` §3.3). They are ordinary tools and prompts: the same
//! handlers serve a 2025 session, where their requests for client input are real requests.

use std::time::Duration;

use serde_json::{Value, json};
use switchboard::server::{Context, PromptGet, Server, ServerBuilder, ServerError, ToolError};
use switchboard::types::ErrorObject;
use switchboard::types::elicitation::{ElicitRequestFormParams, ElicitResult};
use switchboard::types::logging::LoggingLevel;
use switchboard::types::prompts::{GetPromptResult, Prompt, PromptMessage};
use switchboard::types::sampling::{CreateMessageRequestParams, CreateMessageResult};
use switchboard::types::tools::{CallToolResult, TaskSupport, Tool};

fn no_args() -> Value {
    json!({"type": "object", "properties": {}})
}

fn tool(name: &str, description: &str, schema: Value) -> Tool {
    Tool::new(name, schema).with_description(description)
}

fn text(s: impl Into<String>) -> Result<CallToolResult, ToolError> {
    Ok(CallToolResult::text(s))
}

fn failed(e: impl std::fmt::Display) -> ToolError {
    ToolError::new(e.to_string())
}

fn form(message: &str, field: &str) -> ElicitRequestFormParams {
    serde_json::from_value(
        json!({"mode": "form", "message": message, "requestedSchema": {
        "type": "object", "properties": {field: {"type": "string"}}, "required": [field]}}),
    )
    .unwrap_or_else(|_| unreachable!("a fixed, valid form"))
}

fn question(q: &str) -> CreateMessageRequestParams {
    serde_json::from_value(
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": q}}],
        "maxTokens": 100}),
    )
    .unwrap_or_else(|_| unreachable!("a fixed, valid sampling request"))
}

/// The value of `field` in an accepted elicitation, or the action taken.
fn answered(r: &ElicitResult, field: &str) -> String {
    let content = r
        .content
        .as_ref()
        .and_then(|c| serde_json::to_value(c).ok())
        .unwrap_or_default();
    match content.get(field).and_then(Value::as_str) {
        Some(v) => v.to_owned(),
        None => format!("({})", serde_json::to_value(r.action).unwrap_or_default()),
    }
}

fn sampled(r: &CreateMessageResult) -> String {
    let v = serde_json::to_value(&r.content).unwrap_or_default();
    v.get("text")
        .and_then(Value::as_str)
        .map_or_else(|| v.to_string(), str::to_owned)
}

async fn ask_name(cx: &Context, key: &str) -> Result<String, ToolError> {
    let r = cx
        .elicit_as(key, form("What is your name?", "name"))
        .await
        .map_err(failed)?;
    Ok(answered(&r, "name"))
}

/// The input schema of `json_schema_2020_12_tool`: 2020-12 keywords a server must keep as they
/// are (`$schema`, `$defs` with `$anchor`, composition, conditionals, `additionalProperties`).
pub(crate) fn json_schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"$anchor": "address", "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contact": {"anyOf": [{"type": "string", "format": "email"}, {"type": "string", "pattern": "^\\+"}]},
            "kind": {"type": "string", "enum": ["person", "company"]},
            "vat": {"type": "string"}
        },
        "allOf": [{"required": ["name"]}, {"anyOf": [{"required": ["name"]}, {"required": ["address"]}]}],
        "if": {"properties": {"kind": {"const": "company"}}, "required": ["kind"]},
        "then": {"required": ["vat"]},
        "else": {},
        "additionalProperties": false
    })
}

/// A form asking to confirm (a required boolean `confirm`).
fn confirmation(message: &str) -> ElicitRequestFormParams {
    serde_json::from_value(json!({"mode": "form", "message": message, "requestedSchema": {
        "type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}}))
    .unwrap_or_else(|_| unreachable!("a fixed, valid form"))
}

fn confirmed(r: &ElicitResult) -> bool {
    r.content
        .as_ref()
        .and_then(|c| serde_json::to_value(c).ok())
        .and_then(|c| c.get("confirm").and_then(Value::as_bool))
        .unwrap_or(false)
}

/// The fixtures of the tasks extension (SEP-2663 scenarios `tasks-*`). In 2026-07-28 a call
/// from a request that declares the extension becomes a task when the handler waits (a sleep,
/// or `start_task`); in a 2025 session they are ordinary tools, run as tasks when asked to.
fn task_fixtures(b: ServerBuilder) -> ServerBuilder {
    let greet =
        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
    let slow = json!({"type": "object", "properties": {"seconds": {"type": "number", "minimum": 0},
        "label": {"type": "string"}}, "required": ["seconds"]});
    let file = json!({"type": "object", "properties": {"filename": {"type": "string"}}, "required": ["filename"]});
    b.tool(
        tool("greet", "Greets by name, at once (never a task)", greet),
        |call| async move {
            let name = call
                .arguments
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("stranger");
            text(format!("Hello, {name}!"))
        },
    )
    .tool(
        tool(
            "slow_compute",
            "Waits `seconds` seconds, then returns its label; may run as a task",
            slow,
        )
        .with_task_support(TaskSupport::Optional),
        |call| async move {
            let seconds = call
                .arguments
                .get("seconds")
                .and_then(Value::as_f64)
                .unwrap_or(0.0)
                .clamp(0.0, 600.0);
            let label = call
                .arguments
                .get("label")
                .and_then(Value::as_str)
                .unwrap_or("compute")
                .to_owned();
            if seconds > 0.0 {
                tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
            }
            text(format!("{label}: done after {seconds} s"))
        },
    )
    .tool(
        tool(
            "failing_job",
            "Fails (a tool error, isError) after a second; runs only as a task",
            no_args(),
        )
        .with_task_support(TaskSupport::Required),
        |_| async {
            tokio::time::sleep(Duration::from_secs(1)).await;
            Err(ToolError::new("failing_job failed, as it always does"))
        },
    )
    .tool(
        tool(
            "protocol_error_job",
            "Ends with a JSON-RPC error (-32603) after a moment; may run as a task",
            no_args(),
        )
        .with_task_support(TaskSupport::Optional),
        |_| async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            Err(ToolError::Rpc(ErrorObject::internal(
                "protocol_error_job ended with an internal error",
            )))
        },
    )
    .tool(
        tool(
            "confirm_delete",
            "Asks to confirm (confirm) before it deletes filename; runs as a task when it can",
            file,
        )
        .with_task_support(TaskSupport::Optional),
        |call| async move {
            call.cx.run_as_task().await;
            let filename = call
                .arguments
                .get("filename")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_owned();
            let r = call
                .cx
                .elicit_as("confirm", confirmation(&format!("Delete {filename}?")))
                .await
                .map_err(failed)?;
            text(if confirmed(&r) {
                format!("Deleted {filename}")
            } else {
                format!("Kept {filename}")
            })
        },
    )
    .tool(
        tool(
            "multi_input",
            "Asks for a name and a confirmation at once; runs as a task when it can",
            no_args(),
        )
        .with_task_support(TaskSupport::Optional),
        |call| async move {
            call.cx.run_as_task().await;
            let (name, confirm) = tokio::join!(
                call.cx
                    .elicit_as("name", form("What is your name?", "name")),
                call.cx.elicit_as("confirm", confirmation("Go ahead?")),
            );
            let (name, confirm) = (name.map_err(failed)?, confirm.map_err(failed)?);
            text(format!(
                "{} (confirmed: {})",
                answered(&name, "name"),
                confirmed(&confirm)
            ))
        },
    )
    .tool(
        tool(
            "test_tool_with_task",
            "Asks for the user's name (user_name) first, then greets them as a task",
            no_args(),
        )
        .with_task_support(TaskSupport::Required),
        |call| async move {
            let name = ask_name(&call.cx, "user_name").await?;
            call.cx.run_as_task().await;
            text(format!("Hello, {name}!"))
        },
    )
}

/// The 2026-07-28 fixtures, added to the everything server's builder.
pub(crate) fn fixtures(b: ServerBuilder) -> ServerBuilder {
    task_fixtures(b).tool(tool("test_logging_tool", "Sends three log messages (only to a request that asked for logs)", no_args()), |call| async move {
        for (i, level) in [LoggingLevel::Info, LoggingLevel::Warning, LoggingLevel::Error].into_iter().enumerate() {
            let _ = call.cx.log(level, json!(format!("log message {}", i + 1))).await;
        }
        text("Sent three log messages")
    })
    .tool(tool("test_missing_capability", "Needs sampling: without it the request is refused (-32021)", no_args()), |call| async move {
        let r = call.cx.create_message(question("Say hello")).await.map_err(failed)?;
        text(format!("Sampled: {}", sampled(&r)))
    })
    .tool(tool("test_streaming_elicitation", "Asks the user to confirm (elicitation)", no_args()), |call| async move {
        let r = call.cx.elicit_as("confirmation", form("Please confirm", "confirm")).await.map_err(failed)?;
        text(format!("Confirmed: {}", answered(&r, "confirm")))
    })
    .tool(tool("test_input_required_result_elicitation", "Asks for the user's name (user_name)", no_args()), |call| async move {
        let name = ask_name(&call.cx, "user_name").await?;
        text(format!("Hello, {name}!"))
    })
    .tool(tool("test_input_required_result_sampling", "Asks the model a question (capital_question)", no_args()), |call| async move {
        let r = call.cx.create_message_as("capital_question", question("What is the capital of France?")).await.map_err(failed)?;
        text(format!("The model said: {}", sampled(&r)))
    })
    .tool(tool("test_input_required_result_list_roots", "Asks for the client's roots (client_roots)", no_args()), |call| async move {
        let r = call.cx.list_roots_as("client_roots").await.map_err(failed)?;
        let uris: Vec<&str> = r.roots.iter().map(|r| r.uri.as_str()).collect();
        text(format!("Roots: {}", uris.join(", ")))
    })
    .tool(tool("test_input_required_result_request_state", "Asks for a confirmation; the state travels with the request", no_args()), |call| async move {
        let r = call.cx.elicit_as("confirm", form("Confirm the operation?", "confirm")).await.map_err(failed)?;
        text(format!("Operation confirmed: {}", answered(&r, "confirm")))
    })
    .tool(tool("test_input_required_result_multiple_inputs", "Asks for a name, a model answer and the roots at once", no_args()), |call| async move {
        let (name, answer, roots) = tokio::join!(
            ask_name(&call.cx, "user_name"),
            call.cx.create_message_as("capital_question", question("What is the capital of France?")),
            call.cx.list_roots_as("client_roots"),
        );
        let (name, answer, roots) = (name?, answer.map_err(failed)?, roots.map_err(failed)?);
        text(format!("{name}; {}; {} roots", sampled(&answer), roots.roots.len()))
    })
    .tool(tool("test_input_required_result_multi_round", "Asks twice, one round after the other (step1, step2)", no_args()), |call| async move {
        let first = call.cx.elicit_as("step1", form("Step 1: your name?", "name")).await.map_err(failed)?;
        let second = call.cx.elicit_as("step2", form("Step 2: your city?", "city")).await.map_err(failed)?;
        text(format!("{} from {}", answered(&first, "name"), answered(&second, "city")))
    })
    .tool(tool("test_input_required_result_tampered_state", "Asks for a name; its sealed state refuses tampering", no_args()), |call| async move {
        let name = ask_name(&call.cx, "user_name").await?;
        text(format!("Hello, {name}!"))
    })
    .tool(tool("test_input_required_result_capabilities", "Asks only for what the request's capabilities allow", no_args()), |call| async move {
        let caps = call.cx.client_capabilities();
        if caps.elicitation.is_some() {
            let name = ask_name(&call.cx, "user_name").await?;
            return text(format!("Hello, {name}!"));
        }
        if caps.sampling.is_some() {
            let r = call.cx.create_message_as("capital_question", question("What is the capital of France?")).await.map_err(failed)?;
            return text(format!("The model said: {}", sampled(&r)));
        }
        if caps.roots.is_some() {
            let r = call.cx.list_roots_as("client_roots").await.map_err(failed)?;
            return text(format!("{} roots", r.roots.len()));
        }
        text("The client declared nothing to ask with")
    })
    .tool(
        tool(
            // Named to sort onto the first page of tools/list (the suite reads only that page).
            "echo_region",
            "Echoes its region argument, which travels in the Mcp-Param-Region header too",
            json!({"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}),
        ),
        |call| async move {
            let region = call.arguments.get("region").and_then(Value::as_str).unwrap_or("(none)");
            text(format!("Region: {region}"))
        },
    )
    .prompt(
        {
            let mut p = Prompt::new("test_input_required_result_prompt");
            p.description = Some("Asks the user for context (user_context) before it is built".into());
            p
        },
        |get: PromptGet| async move {
            let r = get
                .cx
                .elicit_as("user_context", form("What context should the prompt use?", "context"))
                .await
                .map_err(|e| ErrorObject::internal(e.to_string()))?;
            Ok(GetPromptResult::new(vec![PromptMessage::user_text(format!(
                "Context: {}",
                answered(&r, "context")
            ))]))
        },
    )
}

/// The tools that change the server's lists (their handlers hold the server weakly).
pub(crate) fn triggers(server: &Server) -> Result<(), ServerError> {
    let weak = server.downgrade();
    server.add_tool(
        tool(
            "test_trigger_tool_change",
            "Adds or removes test_changing_tool (tools list_changed)",
            no_args(),
        ),
        move |_| {
            let weak = weak.clone();
            async move {
                let s = weak
                    .upgrade()
                    .ok_or_else(|| ToolError::new("server gone"))?;
                if s.remove_tool("test_changing_tool").is_err() {
                    s.add_tool(
                        tool(
                            "test_changing_tool",
                            "Listed every other trigger",
                            no_args(),
                        ),
                        |_| async { text("changing") },
                    )
                    .map_err(failed)?;
                }
                text("The tool list changed")
            }
        },
    )?;
    let weak = server.downgrade();
    server.add_tool(
        tool(
            "test_trigger_prompt_change",
            "Adds or removes test_changing_prompt (prompts list_changed)",
            no_args(),
        ),
        move |_| {
            let weak = weak.clone();
            async move {
                let s = weak
                    .upgrade()
                    .ok_or_else(|| ToolError::new("server gone"))?;
                if s.remove_prompt("test_changing_prompt").is_err() {
                    let mut p = Prompt::new("test_changing_prompt");
                    p.description = Some("Listed every other trigger".into());
                    s.add_prompt(p, |_| async {
                        Ok(GetPromptResult::new(vec![PromptMessage::user_text(
                            "changing",
                        )]))
                    })
                    .map_err(failed)?;
                }
                text("The prompt list changed")
            }
        },
    )
}
