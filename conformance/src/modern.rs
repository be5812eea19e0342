//! The client scenarios of revision 2026-07-28 (the suite sets
//! `MCP_CONFORMANCE_PROTOCOL_VERSION=2026-07-28`): the client is pinned to the modern era, so it
//! starts with `server/discover` and every request carries its envelope and the mirrored headers.
//!
//! | scenario | what this client does |
//! |---|---|
//! | `tools_call` | lists the tools, calls `add_numbers {a: 5, b: 3}` and checks the sum |
//! | `request-metadata` | discovers (retrying after the mock's -32022 at a revision from `data.supported`), lists the tools if the server offers any; declares roots, sampling and elicitation |
//! | `sep-2322-client-request-state` | calls the four MRTR tools: `test_mrtr_echo_state` and `test_mrtr_unrelated` at once, then `test_mrtr_no_state`, `test_mrtr_no_result_type` |
//! | `http-standard-headers` | lists and calls the tools, lists and reads the resources, lists and gets the prompts |
//! | `http-custom-headers` | lists the tools, then makes the calls `MCP_CONFORMANCE_CONTEXT` names |
//! | `http-invalid-tool-headers` | lists the tools (the invalid ones are left out) and calls every tool it kept |
//! | `json-schema-ref-no-deref` | lists the tools; nothing fetches a `$ref` |

use serde_json::{Map, Value, json};
use switchboard_client::{Client, ClientSession, EraMode};
use switchboard_http_client::{HttpClientConfig, HttpClientTransport};
use switchboard_types::ProtocolVersion;
use switchboard_types::content::ContentBlock;
use switchboard_types::roots::Root;
use switchboard_types::sampling::{CreateMessageResult, SamplingMessageContentBlock};
use switchboard_types::tools::Tool;

use crate::{Outcome, answer_with_defaults, call_text, finish, identity};

/// The environment variable holding the scenario's context (JSON).
const CONTEXT_ENV: &str = "MCP_CONFORMANCE_CONTEXT";

/// Whether the suite asked for the modern lifecycle.
pub(crate) fn requested() -> bool {
    std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION")
        .ok()
        .and_then(|v| ProtocolVersion::parse(&v))
        .is_some_and(ProtocolVersion::is_modern)
}

pub(crate) async fn run(scenario: &str, url: &str) -> Outcome {
    let session = connect(url).await?;
    let outcome = match scenario {
        "tools_call" => tools_call(&session).await,
        "request-metadata" => metadata(&session).await,
        "sep-2322-client-request-state" => request_state(&session).await,
        "http-standard-headers" => standard_headers(&session).await,
        "http-custom-headers" => custom_headers(&session).await,
        "http-invalid-tool-headers" => invalid_tool_headers(&session).await,
        "json-schema-ref-no-deref" => list(&session).await.map(|_| ()),
        other => Err(format!(
            "scenario {other:?} is not supported by this client at 2026-07-28"
        )),
    };
    finish(session).await;
    outcome
}

/// A modern client declaring roots, sampling and elicitation, answering them headlessly.
async fn connect(url: &str) -> Result<ClientSession, String> {
    let client = Client::builder(identity())
        .era(EraMode::Pin(ProtocolVersion::V2026_07_28))
        .elicitation(|params, _cx| async move { Ok(answer_with_defaults(&params)) })
        .sampling(|_, _| async move {
            Ok(CreateMessageResult::new(
                "switchboard-conformance-client",
                SamplingMessageContentBlock::Text(switchboard_types::content::TextContent::new(
                    "Paris",
                )),
            ))
        })
        .roots([Root::new("file:///conformance")])
        .build();
    let transport = HttpClientTransport::connect(url, HttpClientConfig::default())
        .map_err(|e| e.to_string())?;
    let session = client
        .connect(transport)
        .await
        .map_err(|e| format!("server/discover failed: {e}"))?;
    tracing::info!(
        version = session.protocol_version().as_str(),
        server = %session.negotiated().server_info.name,
        "modern session"
    );
    Ok(session)
}

async fn list(session: &ClientSession) -> Result<Vec<Tool>, String> {
    let tools = session
        .list_tools()
        .await
        .map_err(|e| format!("tools/list failed: {e}"))?;
    tracing::info!(tools = tools.len(), "tools listed");
    Ok(tools)
}

/// Discovery did the work (the envelope, the headers, the retry after -32022); one request
/// more when the server offers tools, so that more than the probe is judged.
async fn metadata(session: &ClientSession) -> Outcome {
    if session.server_capabilities().tools.is_some() {
        list(session).await?;
    }
    Ok(())
}

async fn tools_call(session: &ClientSession) -> Outcome {
    let tools = list(session).await?;
    if !tools.iter().any(|t| t.name == "add_numbers") {
        return Err("the server does not list add_numbers".into());
    }
    let text = call_text(session, "add_numbers", json!({"a": 5, "b": 3})).await?;
    if text.contains('8') {
        Ok(())
    } else {
        Err(format!("add_numbers(5, 3) did not answer 8: {text:?}"))
    }
}

/// The MRTR tools: each ends with a complete result once its rounds are answered.
async fn request_state(session: &ClientSession) -> Outcome {
    list(session).await?;
    let (echo, unrelated) = tokio::join!(
        call_text(session, "test_mrtr_echo_state", json!({})),
        call_text(session, "test_mrtr_unrelated", json!({}))
    );
    echo?;
    unrelated?;
    call_text(session, "test_mrtr_no_state", json!({})).await?;
    call_text(session, "test_mrtr_no_result_type", json!({})).await?;
    Ok(())
}

async fn standard_headers(session: &ClientSession) -> Outcome {
    let caps = session.server_capabilities().clone();
    if caps.tools.is_some() {
        for tool in list(session).await? {
            call_text(session, &tool.name, json!({})).await?;
        }
    }
    if caps.resources.is_some() {
        let resources = session
            .list_resources()
            .await
            .map_err(|e| format!("resources/list failed: {e}"))?;
        for r in resources {
            session
                .read_resource(&r.uri)
                .await
                .map_err(|e| format!("resources/read {} failed: {e}", r.uri))?;
        }
    }
    if caps.prompts.is_some() {
        let prompts = session
            .list_prompts()
            .await
            .map_err(|e| format!("prompts/list failed: {e}"))?;
        for p in prompts {
            session
                .get_prompt(&p.name, std::iter::empty::<(String, String)>())
                .await
                .map_err(|e| format!("prompts/get {} failed: {e}", p.name))?;
        }
    }
    Ok(())
}

/// The calls the scenario's context names, with their arguments as given.
async fn custom_headers(session: &ClientSession) -> Outcome {
    let context: Value = std::env::var(CONTEXT_ENV)
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .ok_or_else(|| format!("{CONTEXT_ENV} is not set or not JSON"))?;
    let calls = context["toolCalls"]
        .as_array()
        .ok_or_else(|| format!("{CONTEXT_ENV} has no toolCalls"))?;
    list(session).await?;
    for call in calls {
        let name = call["name"].as_str().ok_or("a tool call without a name")?;
        let arguments = call.get("arguments").cloned().unwrap_or_else(|| json!({}));
        call_text(session, name, arguments).await?;
    }
    Ok(())
}

/// Calls every tool the client kept, with an argument for each required property.
async fn invalid_tool_headers(session: &ClientSession) -> Outcome {
    for tool in list(session).await? {
        let arguments = sample_arguments(&tool);
        let result = session
            .call_tool(&tool.name, arguments)
            .await
            .map_err(|e| format!("tools/call {} failed: {e}", tool.name))?;
        let texts = result
            .content
            .iter()
            .filter(|b| matches!(b, ContentBlock::Text(_)))
            .count();
        tracing::info!(tool = %tool.name, texts, "called");
    }
    Ok(())
}

/// A value of each required property's type.
fn sample_arguments(tool: &Tool) -> Value {
    let mut args = Map::new();
    let props = tool
        .input_schema
        .get("properties")
        .and_then(Value::as_object);
    let required = tool
        .input_schema
        .get("required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for name in required.iter().filter_map(Value::as_str) {
        let kind = props
            .and_then(|p| p.get(name))
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str);
        let value = match kind {
            Some("integer" | "number") => json!(1),
            Some("boolean") => json!(true),
            Some("object") => json!({}),
            Some("array") => json!([]),
            _ => json!("conformance"),
        };
        args.insert(name.to_owned(), value);
    }
    Value::Object(args)
}
