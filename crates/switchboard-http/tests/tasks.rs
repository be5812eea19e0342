//! Tasks over Streamable HTTP, on real 127.0.0.1 sockets with a hyper client: a task that waits
//! for the client's input (`input_required`) sends its request on the SSE stream of an open
//! `tasks/result` of that task (SPEC-NOTES §9.5), or on the standalone GET stream when none is
//! open; the result then ends the `tasks/result` stream with the related-task `_meta`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::*;
use switchboard_http::HttpConfig;
use switchboard_server::{Server, ToolError};
use switchboard_test_support::server::ms_arg;
use switchboard_types::lifecycle::Implementation;
use switchboard_types::sampling::{CreateMessageRequestParams, SamplingMessage};
use switchboard_types::tools::{CallToolResult, TaskSupport, Tool};

const RELATED: &str = "io.modelcontextprotocol/related-task";

/// `ask_later`: waits `ms`, then asks the client to sample; optional task support.
fn server() -> Server {
    Server::builder(Implementation::new("http-tasks", "1"))
        .tool(
            Tool::new("ask_later", json!({"type": "object"}))
                .with_task_support(TaskSupport::Optional),
            |call| async move {
                let ms = ms_arg(&call, 0);
                // Not a wait: the tool's work takes `ms` (a slow handler).
                tokio::time::sleep(Duration::from_millis(ms)).await;
                let params =
                    CreateMessageRequestParams::new(vec![SamplingMessage::user_text("hi?")], 10);
                let r = call
                    .cx
                    .create_message(params)
                    .await
                    .map_err(|e| ToolError::new(e.to_string()))?;
                Ok(CallToolResult::text(format!("model {}", r.model)))
            },
        )
        .build()
        .unwrap()
}

/// An event's data as JSON (`null` for the priming event, which has none).
trait DataJson {
    fn data_json(&self) -> Value;
}

impl DataJson for SseEvent {
    fn data_json(&self) -> Value {
        match self.data.as_deref() {
            None | Some("") => Value::Null,
            Some(_) => self.json(),
        }
    }
}

fn body(id: i64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

fn answer(id: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": {
        "role": "assistant", "content": {"type": "text", "text": "hello"},
        "model": "m1", "stopReason": "endTurn"}})
    .to_string()
}

/// Starts `ask_later` as a task; returns its id.
async fn start(live: &Live, sid: &str, ms: u64) -> String {
    let resp = send(
        live.addr,
        wire_post(
            live.addr,
            Some(sid),
            body(
                1,
                "tools/call",
                json!({"name": "ask_later", "arguments": {"ms": ms}, "task": {"ttl": 60000}}),
            ),
        ),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let mut r = SseReader::new(resp.into_body());
    loop {
        let v = r
            .next_event(WAIT)
            .await
            .expect("the CreateTaskResult")
            .data_json();
        if v["id"] == 1 {
            return v["result"]["task"]["taskId"].as_str().unwrap().to_owned();
        }
    }
}

#[tokio::test]
async fn a_waiting_tasks_request_travels_on_its_open_tasks_result_stream() {
    let server = server();
    let live = live(&server, HttpConfig::default()).await;
    let sid = wire_session(live.addr).await;
    let id = start(&live, &sid, 300).await;

    let resp = send(
        live.addr,
        wire_post(
            live.addr,
            Some(&sid),
            body(2, "tasks/result", json!({"taskId": id})),
        ),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let mut result = SseReader::new(resp.into_body());
    let mut request = None;
    while request.is_none() {
        let v = result.next_event(WAIT).await.expect("an event").data_json();
        if v["method"] == "sampling/createMessage" {
            request = Some(v);
        }
    }
    let request = request.unwrap();
    assert_eq!(
        request["params"]["_meta"][RELATED]["taskId"], id,
        "TK-13: {request}"
    );
    let resp = send(
        live.addr,
        wire_post(live.addr, Some(&sid), answer(&request["id"])),
    )
    .await;
    assert_eq!(resp.status(), 202);
    let done = loop {
        let v = result
            .next_event(WAIT)
            .await
            .expect("the result")
            .data_json();
        if v["id"] == 2 {
            break v;
        }
    };
    assert_eq!(done["result"]["content"][0]["text"], "model m1", "{done}");
    assert_eq!(done["result"]["_meta"][RELATED]["taskId"], id, "TK-21");
    assert_eq!(result.next_event(WAIT).await, None, "the stream ends");
}

#[tokio::test]
async fn without_an_open_tasks_result_the_request_goes_to_the_get_stream() {
    let server = server();
    let live = live(&server, HttpConfig::default()).await;
    let sid = wire_session(live.addr).await;
    let resp = send(live.addr, wire_get(live.addr, &sid, None)).await;
    assert_eq!(resp.status(), 200);
    let mut get = SseReader::new(resp.into_body());
    let id = start(&live, &sid, 0).await;
    let request = loop {
        let v = get.next_event(WAIT).await.expect("an event").data_json();
        if v["method"] == "sampling/createMessage" {
            break v;
        }
    };
    assert_eq!(request["params"]["_meta"][RELATED]["taskId"], id);
    let resp = send(
        live.addr,
        wire_post(live.addr, Some(&sid), answer(&request["id"])),
    )
    .await;
    assert_eq!(resp.status(), 202);
    let resp = send(
        live.addr,
        wire_post(
            live.addr,
            Some(&sid),
            body(3, "tasks/result", json!({"taskId": id})),
        ),
    )
    .await;
    let mut result = SseReader::new(resp.into_body());
    let done = loop {
        let v = result
            .next_event(WAIT)
            .await
            .expect("the result")
            .data_json();
        if v["id"] == 3 {
            break v;
        }
    };
    assert_eq!(done["result"]["content"][0]["text"], "model m1", "{done}");
}
