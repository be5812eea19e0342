//! Our client against our server's tools, in memory: pagination over the server's own cursors,
//! progress, cancellation, `structuredContent` validation, list changes, and tools that call back
//! into the client's sampling, elicitation and roots handlers. Every frame is schema-checked.

use std::sync::{Arc, Mutex};

use serde_json::json;
use switchboard::client::{CancellationToken, Client, ClientError, ClientSession, RequestOptions};
use switchboard::jsonrpc::{Flow, RequestError, SessionConfig, memory};
use switchboard::server::{Server, ToolError};
use switchboard::types::elicitation::{
    ElicitAction, ElicitContentValue, ElicitRequestFormParams, ElicitResult, RequestedSchema,
};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::meta::OrderedMap;
use switchboard::types::roots::Root;
use switchboard::types::sampling::{
    CreateMessageRequestParams, CreateMessageResult, SamplingMessage, SamplingMessageContentBlock,
};
use switchboard::types::tools::{CallToolResult, Tool};
use switchboard_test_support::wait;
use switchboard_tests::{Recorder, WAIT, validate_session};

fn tool(name: &str) -> Tool {
    Tool::new(name, json!({"type": "object"}))
}

fn server() -> Server {
    let mut b = Server::builder(Implementation::new("e2e", "1")).page_size(2);
    for n in ["a", "b", "c", "d", "e"] {
        b = b.tool(tool(n), |_| async { Ok(CallToolResult::text("ok")) });
    }
    b.tool(tool("slow"), |call| async move {
        for i in 1..=3 {
            call.cx
                .progress(f64::from(i), Some(3.0), None)
                .await
                .map_err(|e| ToolError::new(e.to_string()))?;
        }
        Ok(CallToolResult::text("done"))
    })
    .tool(tool("forever"), |call| async move {
        call.cx.cancellation().cancelled().await;
        Ok(CallToolResult::text("cancelled"))
    })
    .tool(
        tool("weather").with_output_schema(json!({"type": "object",
            "properties": {"temp": {"type": "number"}}, "required": ["temp"]})),
        |_| async { Ok(CallToolResult::structured(json!({"temp": 21.5}))) },
    )
    .tool(tool("ask_model"), |call| async move {
        let params = CreateMessageRequestParams::new(vec![SamplingMessage::user_text("2+2?")], 10);
        let r = call
            .cx
            .create_message(params)
            .await
            .map_err(|e| ToolError::new(e.to_string()))?;
        Ok(CallToolResult::text(format!(
            "model {} said {:?}",
            r.model,
            r.content.as_slice()[0]
        )))
    })
    .tool(tool("ask_user"), |call| async move {
        let form = ElicitRequestFormParams::new(
            "Your name?",
            RequestedSchema::default().with_required_property(
                "name",
                switchboard::types::elicitation::StringSchema::default(),
            ),
        );
        let r = call
            .cx
            .elicit(form)
            .await
            .map_err(|e| ToolError::new(e.to_string()))?;
        let name = match r.content.as_ref().and_then(|c| c.get("name")) {
            Some(ElicitContentValue::String(s)) => s.clone(),
            _ => "nobody".into(),
        };
        Ok(CallToolResult::text(name))
    })
    .tool(tool("roots"), |call| async move {
        let r = call
            .cx
            .list_roots()
            .await
            .map_err(|e| ToolError::new(e.to_string()))?;
        Ok(CallToolResult::text(r.roots[0].uri.clone()))
    })
    .build()
    .unwrap()
}

async fn connect(
    s: &Server,
    client: switchboard::client::ClientBuilder,
) -> (ClientSession, switchboard::server::ServerSession, Recorder) {
    let (a, b) = memory::pair();
    let session = s.serve(b).unwrap();
    let rec = Recorder::default();
    let c = client
        .session_config(SessionConfig::default().with_frame_hook(rec.hook()))
        .build()
        .connect(a)
        .await
        .unwrap();
    (c, session, rec)
}

fn client() -> switchboard::client::ClientBuilder {
    Client::builder(Implementation::new("e2e-client", "1"))
        .era(switchboard::client::EraMode::Legacy)
}

#[tokio::test]
async fn lists_follow_the_servers_cursors_and_calls_validate() {
    let s = server();
    let (c, _s, rec) = connect(&s, client()).await;
    let tools = c.list_tools().await.unwrap();
    assert_eq!(tools.len(), 11, "every page of two followed");
    let r = c.call_tool("weather", json!({})).await.unwrap();
    assert_eq!(r.structured_content.unwrap()["temp"], 21.5);
    // The bound applies to a real server's cursors too.
    let (c2, _s2, _) = connect(&s, client().max_pages(2)).await;
    assert!(matches!(
        c2.list_tools().await,
        Err(ClientError::TooManyPages { pages: 2, .. })
    ));
    assert!(validate_session(&rec.frames(), "2025-11-25") > 10);
}

#[tokio::test]
async fn progress_and_cancellation_end_to_end() {
    let s = server();
    let (c, _s, rec) = connect(&s, client()).await;
    let seen: Arc<Mutex<Vec<f64>>> = Arc::default();
    let sink = seen.clone();
    let r = c
        .call_tool_with(
            "slow",
            json!({}),
            RequestOptions::default().with_progress(move |u| sink.lock().unwrap().push(u.progress)),
        )
        .await
        .unwrap();
    assert_eq!(r.content[0].as_text(), Some("done"));
    assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0]);

    let token = CancellationToken::new();
    let c2 = c.clone();
    let t = token.clone();
    let call = tokio::spawn(async move {
        c2.call_tool_with(
            "forever",
            json!({}),
            RequestOptions::default().with_cancel(t),
        )
        .await
    });
    wait::until("the call on the wire", || {
        rec.frames()
            .iter()
            .any(|(d, t)| *d == Flow::Outbound && t.contains("\"forever\""))
    })
    .await;
    token.cancel();
    assert!(matches!(
        tokio::time::timeout(WAIT, call).await.unwrap().unwrap(),
        Err(ClientError::Request(RequestError::Cancelled))
    ));
    c.ping().await.unwrap();
    validate_session(&rec.frames(), "2025-11-25");
}

#[tokio::test]
async fn tools_call_back_into_the_clients_handlers() {
    let s = server();
    let builder = client()
        .sampling(|_, _| async {
            Ok(CreateMessageResult::new(
                "m1",
                SamplingMessageContentBlock::text("4"),
            ))
        })
        .elicitation(|_, _| async {
            Ok(ElicitResult::accept(
                OrderedMap::new().with("name", ElicitContentValue::String("Ada".into())),
            ))
        })
        .roots([Root::new("file:///work")]);
    let (c, _s, rec) = connect(&s, builder).await;
    let r = c.call_tool("ask_model", json!({})).await.unwrap();
    assert!(
        r.content[0].as_text().unwrap().contains("model m1"),
        "{r:?}"
    );
    let r = c.call_tool("ask_user", json!({})).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("Ada"));
    let r = c.call_tool("roots", json!({})).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("file:///work"));
    assert!(c.set_roots([Root::new("file:///elsewhere")]).await.unwrap());
    let r = c.call_tool("roots", json!({})).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("file:///elsewhere"));
    validate_session(&rec.frames(), "2025-11-25");
}

#[tokio::test]
async fn a_declined_elicitation_reaches_the_tool() {
    let s = server();
    let builder =
        client().elicitation(|_, _| async { Ok(ElicitResult::new(ElicitAction::Decline)) });
    let (c, _s, _) = connect(&s, builder).await;
    let r = c.call_tool("ask_user", json!({})).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("nobody"));
}

#[tokio::test]
async fn list_changed_from_the_server_refreshes_the_cache() {
    let s = server();
    let (c, _s, _) = connect(&s, client().auto_refresh(true)).await;
    c.list_tools().await.unwrap();
    let waiter = wait::spawn_polled({
        let c = c.clone();
        async move { c.tools_changed().await }
    })
    .await;
    s.add_tool(tool("new"), |_| async { Ok(CallToolResult::text("new")) })
        .unwrap();
    let tools = tokio::time::timeout(WAIT, waiter)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(tools.iter().any(|t| t.name == "new"));
    assert!(c.cached_tools().unwrap().iter().any(|t| t.name == "new"));
}
