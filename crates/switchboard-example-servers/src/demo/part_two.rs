//! Part two of the demo: the rest of the protocol against the everything server: sampling,
//! elicitation, progress, logging, a cancellation and a resource subscription. Steps are numbered
//! on from part one's.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use switchboard::client::{CancellationToken, Client, ClientError, RequestOptions};
use switchboard::jsonrpc::SessionConfig;
use switchboard::types::content::TextContent;
use switchboard::types::elicitation::{ElicitContentValue, ElicitResult};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::logging::LoggingLevel;
use switchboard::types::meta::OrderedMap;
use switchboard::types::sampling::{CreateMessageResult, SamplingMessageContentBlock};

use tokio::sync::Notify;

use super::host::Host;
use super::trace::{DemoError, Recorder, TraceFrame};
use crate::Example;

/// The titles of part two's steps (numbered after part one's six).
pub const STEPS: [&str; 7] = [
    "handshake with the everything server (2025-11-25, sampling and elicitation declared)",
    "sampling: a tool asks the client's model (sampling/createMessage) before it answers",
    "elicitation: a tool asks the user for a form (elicitation/create)",
    "progress: the client asks for progress and gets 0, 50, 100 before the result",
    "logging: setLevel debug, then a tool logs three messages",
    "cancellation: the client gives up on a call; the server drops it (and cancels its own sampling request)",
    "subscription: subscribe to a resource; a change sends notifications/resources/updated",
];

/// Runs part two on `host`; `first_step` is the number of its first step (7 after part one).
///
/// # Errors
/// A [`DemoError`] when a step does not behave as expected.
pub async fn run(host: &impl Host, first_step: usize) -> Result<Vec<TraceFrame>, DemoError> {
    let recorder = Recorder::new(first_step);
    let set = |n: usize| recorder.set_step(first_step + n);
    // Told when the sampling request that the user will cancel has reached the client.
    let endless_sampling = Arc::new(Notify::new());
    let endless = endless_sampling.clone();
    let unexpected =
        |what: &str, got: &dyn std::fmt::Debug| DemoError::Unexpected(format!("{what}: {got:?}"));

    let client = Client::builder(Implementation::new(
        "demo-client",
        env!("CARGO_PKG_VERSION"),
    ))
    .era(switchboard::client::EraMode::Legacy)
    .session_config(SessionConfig::default().with_frame_hook(recorder.hook(|_| None)))
    .sampling(move |params, _| {
        let endless = endless.clone();
        async move {
            let prompt =
                serde_json::to_value(&params.messages).unwrap_or_default()[0]["content"]["text"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned();
            if prompt == "think forever" {
                // The model never finishes: the user will cancel the call.
                endless.notify_one();
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
            let text = TextContent::new(format!("The answer to {prompt:?} is 42."));
            Ok(CreateMessageResult::new(
                "demo-model",
                SamplingMessageContentBlock::Text(text),
            ))
        }
    })
    .elicitation(|_, _| async {
        let mut content = OrderedMap::new();
        content.insert("username", ElicitContentValue::String("ada".into()));
        content.insert(
            "email",
            ElicitContentValue::String("ada@example.test".into()),
        );
        Ok(ElicitResult::accept(content))
    })
    .build();
    let (c, hosted) = host.connect(Example::Everything, &client).await?;

    set(1);
    let r = c
        .call_tool("test_sampling", json!({"prompt": "life"}))
        .await
        .map_err(DemoError::Client)?;
    if r.content.first().and_then(|b| b.as_text())
        != Some("LLM response: The answer to \"life\" is 42.")
    {
        return Err(unexpected("sampling", &r));
    }
    set(2);
    let r = c
        .call_tool("test_elicitation", json!({"message": "Who are you?"}))
        .await
        .map_err(DemoError::Client)?;
    if !r
        .content
        .first()
        .and_then(|b| b.as_text())
        .is_some_and(|t| t.contains("action=accept"))
    {
        return Err(unexpected("elicitation", &r));
    }
    set(3);
    let seen: Arc<Mutex<Vec<f64>>> = Arc::default();
    let s2 = seen.clone();
    let opts = RequestOptions::default()
        .with_progress(move |u| s2.lock().map(|mut s| s.push(u.progress)).unwrap_or(()));
    c.call_tool_with("test_tool_with_progress", json!({}), opts)
        .await
        .map_err(DemoError::Client)?;
    let seen = seen.lock().map(|s| s.clone()).unwrap_or_default();
    if seen != [0.0, 50.0, 100.0] {
        return Err(unexpected("progress", &seen));
    }
    set(4);
    c.set_level(LoggingLevel::Debug)
        .await
        .map_err(DemoError::Client)?;
    c.call_tool("test_tool_with_logging", json!({}))
        .await
        .map_err(DemoError::Client)?;
    set(5);
    let token = CancellationToken::new();
    let t2 = token.clone();
    let c2 = c.clone();
    // Cancel once the server's sampling request has reached the client.
    let call = tokio::spawn(async move {
        c2.call_tool_with(
            "test_sampling",
            json!({"prompt": "think forever"}),
            RequestOptions::default().with_cancel(t2),
        )
        .await
    });
    let _ = tokio::time::timeout(Duration::from_secs(2), endless_sampling.notified()).await;
    token.cancel();
    match call.await {
        Ok(Err(ClientError::Request(switchboard::jsonrpc::RequestError::Cancelled))) => {}
        other => return Err(unexpected("cancellation", &other)),
    }
    c.ping().await.map_err(DemoError::Client)?;
    set(6);
    let updates: Arc<Mutex<Vec<String>>> = Arc::default();
    let u2 = updates.clone();
    c.subscribe("test://watched-resource", move |p| {
        if let Ok(mut u) = u2.lock() {
            u.push(p.uri);
        }
    })
    .await
    .map_err(DemoError::Client)?;
    c.call_tool("test_trigger_resource_update", json!({}))
        .await
        .map_err(DemoError::Client)?;
    c.read_resource("test://watched-resource")
        .await
        .map_err(DemoError::Client)?;
    if updates.lock().map(|u| u.len()).unwrap_or(0) != 1 {
        return Err(unexpected("subscription", &updates));
    }
    c.close();
    c.closed().await;
    drop(hosted);
    Ok(recorder.frames())
}
