//! # switchboard-conformance-client
//!
//! The client under test for the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`) in client mode, on our own stack: `switchboard-client`
//! over `switchboard-http-client`. The suite runs `/bin/sh -c "CMD URL"`, so the URL is the last
//! argument; the scenario is read from `MCP_CONFORMANCE_SCENARIO`.
//!
//! ```text
//! interop/conformance.sh client tools_call target/debug/switchboard-conformance-client
//! ```
//!
//! | scenario | what this client does |
//! |---|---|
//! | `initialize` | initialize (2025-11-25), `tools/list`, close |
//! | `tools_call` | initialize, `tools/list`, call `add_numbers {a: 5, b: 3}` and check the sum |
//! | `elicitation-sep1034-client-defaults` | declares elicitation; calls `test_client_elicitation_defaults`; answers the form with every schema `default` applied (SEP-1034) |
//! | `sse-retry` | calls `test_reconnection`, whose POST stream the server closes without the response; the transport waits the server's `retry:` and resumes with `GET` + `Last-Event-ID` (SEP-1699) |
//!
//! | `sep-2640-client-*` | the skills extension: list, load lazily, verify (see the `skills` module) |
//! | `auth/*` | the OAuth client as the transport's auth provider, then the work the server protects (see the `auth` module) |
//!
//! These speak the 2025 era (`initialize`). With `MCP_CONFORMANCE_PROTOCOL_VERSION=2026-07-28`
//! the client speaks revision 2026-07-28 instead and runs the scenarios of the `modern` module.
//!
//! Exit 0 when the scenario's work is done; otherwise a message on stderr and exit 1 (2 for a
//! usage error). Logs go to stderr only (`RUST_LOG` overrides the default filter); stdout stays
//! empty.

mod auth;
mod modern;
mod skills;

use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};
use switchboard_client::{Client, ClientSession, EraMode};
use switchboard_http_client::{HttpClientConfig, HttpClientTransport};
use switchboard_types::ErrorObject;
use switchboard_types::content::ContentBlock;
use switchboard_types::elicitation::{
    ElicitAction, ElicitContentValue, ElicitRequestParams, ElicitResult, RequestedSchema,
};
use switchboard_types::lifecycle::Implementation;
use switchboard_types::meta::OrderedMap;
use switchboard_types::tools::CallToolResult;

/// The environment variable the suite names the scenario in.
const SCENARIO_ENV: &str = "MCP_CONFORMANCE_SCENARIO";
/// The suite kills the client after 30 s; give up a little earlier with a message of our own.
const DEADLINE: Duration = Duration::from_secs(25);
/// How long closing the session (the transport's `DELETE`) may take before exiting anyway.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

pub(crate) type Outcome = Result<(), String>;

fn main() -> ExitCode {
    init_logs();
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: {SCENARIO_ENV}=NAME switchboard-conformance-client [ARGS...] URL");
        return ExitCode::from(2);
    };
    let scenario = match std::env::var(SCENARIO_ENV) {
        Ok(s) if !s.is_empty() => s,
        _ => {
            eprintln!("switchboard-conformance-client: {SCENARIO_ENV} is not set");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("switchboard-conformance-client: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(async {
        tokio::time::timeout(DEADLINE, run(&scenario, &url))
            .await
            .unwrap_or_else(|_| Err(format!("not done within {DEADLINE:?}")))
    });
    match outcome {
        Ok(()) => {
            tracing::info!(scenario, "done");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("switchboard-conformance-client: scenario {scenario}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Logs on stderr, plain text (the suite saves stderr to a file).
fn init_logs() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new("warn,switchboard_conformance_client=info")
    });
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(filter)
        .init();
}

async fn run(scenario: &str, url: &str) -> Outcome {
    if scenario.starts_with("auth/") {
        return auth::run(scenario, url, modern::requested()).await;
    }
    if scenario.starts_with("sep-2640-client-") {
        return skills::run(scenario, url).await;
    }
    if modern::requested() {
        return modern::run(scenario, url).await;
    }
    match scenario {
        "initialize" => initialize(url).await,
        "tools_call" => tools_call(url).await,
        "elicitation-sep1034-client-defaults" => elicitation_defaults(url).await,
        "sse-retry" => sse_retry(url).await,
        other => Err(format!(
            "scenario {other:?} is not supported by this client"
        )),
    }
}

pub(crate) fn identity() -> Implementation {
    Implementation::new("switchboard-conformance-client", env!("CARGO_PKG_VERSION"))
}

/// Connects `client` to `url` over Streamable HTTP and performs the handshake.
async fn connect(
    client: &Client,
    url: &str,
    config: HttpClientConfig,
) -> Result<ClientSession, String> {
    let transport = HttpClientTransport::connect(url, config).map_err(|e| e.to_string())?;
    let session = client
        .connect(transport)
        .await
        .map_err(|e| format!("initialize failed: {e}"))?;
    let n = session.negotiated();
    tracing::info!(
        version = n.protocol_version.as_str(),
        server = %n.server_info.name,
        "initialized"
    );
    Ok(session)
}

/// Closes the session and waits (bounded) for the transport to finish (`DELETE`).
pub(crate) async fn finish(session: ClientSession) {
    session.close();
    if tokio::time::timeout(CLOSE_WAIT, session.closed())
        .await
        .is_err()
    {
        tracing::warn!("the session did not close within {CLOSE_WAIT:?}; exiting anyway");
    }
}

/// Lists the tools and checks that `name` is among them.
async fn require_tool(session: &ClientSession, name: &str) -> Outcome {
    let tools = session
        .list_tools()
        .await
        .map_err(|e| format!("tools/list failed: {e}"))?;
    tracing::info!(tools = tools.len(), "tools listed");
    if tools.iter().any(|t| t.name == name) {
        Ok(())
    } else {
        Err(format!("the server does not list the tool {name:?}"))
    }
}

/// Calls `name` and returns the text of its result; a tool error is a failure.
pub(crate) async fn call_text(
    session: &ClientSession,
    name: &str,
    arguments: Value,
) -> Result<String, String> {
    let result: CallToolResult = session
        .call_tool(name, arguments)
        .await
        .map_err(|e| format!("tools/call {name} failed: {e}"))?;
    let text = result
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    if result.is_error == Some(true) {
        return Err(format!("tools/call {name} returned a tool error: {text}"));
    }
    tracing::info!(tool = name, text, "tool result");
    Ok(text)
}

/// `initialize`: the handshake (offering 2025-11-25 with our name and version), then one
/// request to see the session work: `tools/list` as the reference client does when the server
/// declared `tools` (this scenario's server declares nothing, and a client sends nothing for an
/// undeclared capability), else `ping`.
async fn initialize(url: &str) -> Outcome {
    let client = Client::builder(identity()).era(EraMode::Legacy).build();
    let session = connect(&client, url, HttpClientConfig::default()).await?;
    let checked = if session.server_capabilities().tools.is_some() {
        session
            .list_tools()
            .await
            .map(|_| ())
            .map_err(|e| format!("tools/list failed: {e}"))
    } else {
        session
            .ping()
            .await
            .map_err(|e| format!("ping failed: {e}"))
    };
    finish(session).await;
    checked
}

/// `tools_call`: list the tools and call `add_numbers` with numbers.
async fn tools_call(url: &str) -> Outcome {
    let client = Client::builder(identity()).era(EraMode::Legacy).build();
    let session = connect(&client, url, HttpClientConfig::default()).await?;
    let outcome = async {
        require_tool(&session, "add_numbers").await?;
        let text = call_text(&session, "add_numbers", json!({"a": 5, "b": 3})).await?;
        if text.contains('8') {
            Ok(())
        } else {
            Err(format!("add_numbers(5, 3) did not answer 8: {text:?}"))
        }
    }
    .await;
    finish(session).await;
    outcome
}

/// `elicitation-sep1034-client-defaults`: call the tool; the server elicits a form whose fields
/// all have defaults and none is required; the handler accepts with every default applied.
async fn elicitation_defaults(url: &str) -> Outcome {
    const TOOL: &str = "test_client_elicitation_defaults";
    let client = Client::builder(identity())
        .era(EraMode::Legacy)
        .elicitation(
            |params, _cx| async move { Ok::<_, ErrorObject>(answer_with_defaults(&params)) },
        )
        .build();
    let session = connect(&client, url, HttpClientConfig::default()).await?;
    let outcome = async {
        require_tool(&session, TOOL).await?;
        let text = call_text(&session, TOOL, json!({})).await?;
        if text.starts_with("Elicitation completed") {
            Ok(())
        } else {
            Err(format!(
                "the server did not take the elicitation answer: {text:?}"
            ))
        }
    }
    .await;
    finish(session).await;
    outcome
}

/// A headless form answer (SEP-1034): every field with a schema `default` gets it. A required
/// field without a default cannot be filled without a user, so such a form is declined; a URL
/// elicitation is declined too (nothing here can open a browser).
pub(crate) fn answer_with_defaults(params: &ElicitRequestParams) -> ElicitResult {
    let ElicitRequestParams::Form(form) = params else {
        tracing::info!("URL elicitation declined (headless client)");
        return ElicitResult::new(ElicitAction::Decline);
    };
    match defaults(&form.requested_schema) {
        Ok(content) => {
            tracing::info!(
                content = %serde_json::to_string(&content).unwrap_or_default(),
                "elicitation accepted with the schema's defaults"
            );
            ElicitResult::accept(content)
        }
        Err(field) => {
            tracing::info!(
                field,
                "elicitation declined: a required field has no default"
            );
            ElicitResult::new(ElicitAction::Decline)
        }
    }
}

/// The schema's `default` of every property, in schema order; `Err(name)` for the first
/// required property without a usable default.
fn defaults(schema: &RequestedSchema) -> Result<OrderedMap<ElicitContentValue>, String> {
    let required = schema.required.as_deref().unwrap_or_default();
    let mut content = OrderedMap::new();
    for (name, property) in &schema.properties.0 {
        let value = serde_json::to_value(property)
            .ok()
            .and_then(|v| v.get("default").cloned())
            .and_then(content_value);
        match value {
            Some(v) => {
                content.insert(name.clone(), v);
            }
            None if required.iter().any(|r| r == name) => return Err(name.clone()),
            None => {}
        }
    }
    Ok(content)
}

/// A JSON default as a form value: string, number, boolean or list of strings.
fn content_value(v: Value) -> Option<ElicitContentValue> {
    match v {
        Value::String(s) => Some(ElicitContentValue::String(s)),
        Value::Number(n) => Some(ElicitContentValue::Number(n)),
        Value::Bool(b) => Some(ElicitContentValue::Bool(b)),
        Value::Array(items) => items
            .into_iter()
            .map(|i| match i {
                Value::String(s) => Some(s),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .map(ElicitContentValue::StringArray),
        _ => None,
    }
}

/// `sse-retry` (SEP-1699): the server (which negotiates 2025-03-26) closes the `tools/call` POST
/// stream after a priming event (`id`, `retry: 500`) and before the response; the transport
/// waits the `retry` and resumes with `GET` + `Last-Event-ID`, where the response arrives.
///
/// The standalone GET stream is off here: it is optional (`[HT-12]`), and the scenario's server
/// hands the pending response to *any* GET, so a standalone GET racing the call would be
/// counted as a reconnection made too early.
async fn sse_retry(url: &str) -> Outcome {
    const TOOL: &str = "test_reconnection";
    let client = Client::builder(identity()).era(EraMode::Legacy).build();
    let config = HttpClientConfig::default().with_get_stream(false);
    let session = connect(&client, url, config).await?;
    let outcome = async {
        require_tool(&session, TOOL).await?;
        call_text(&session, TOOL, json!({})).await.map(|_| ())
    }
    .await;
    finish(session).await;
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(v: Value) -> RequestedSchema {
        serde_json::from_value(v).expect("schema")
    }

    #[test]
    fn applies_every_default_with_its_type() {
        let s = schema(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
                "verified": {"type": "boolean", "default": true},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "default": ["b"]},
                "free": {"type": "string"}
            },
            "required": []
        }));
        let content = defaults(&s).expect("no required field lacks a default");
        assert_eq!(
            serde_json::to_value(&content).expect("json"),
            json!({"name": "John Doe", "age": 30, "score": 95.5, "status": "active",
                   "verified": true, "tags": ["b"]})
        );
    }

    #[test]
    fn a_required_field_without_default_declines() {
        let s = schema(json!({
            "type": "object",
            "properties": {"email": {"type": "string"}},
            "required": ["email"]
        }));
        assert_eq!(defaults(&s).err().as_deref(), Some("email"));
    }
}
