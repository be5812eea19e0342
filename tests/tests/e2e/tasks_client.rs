//! The reverse direction of tasks (2025-11-25, SEP-1686): the server asks the client to run
//! sampling and elicitation as tasks. Our server against our client in memory (every frame
//! recorded and checked against the schema), then our client against a server played by hand
//! (which checks every frame the client emits).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use switchboard::client::{ClientBuilder, ClientSession, InMemoryTaskStore, TaskLimits};
use switchboard::jsonrpc::{Flow, SessionConfig, memory};
use switchboard::server::{ClientRequestError, Server, ToolError};
use switchboard::types::ErrorObject;
use switchboard::types::elicitation::{
    ElicitContentValue, ElicitRequestFormParams, ElicitResult, RequestedSchema, StringSchema,
};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::meta::OrderedMap;
use switchboard::types::sampling::{
    CreateMessageRequestParams, CreateMessageResult, SamplingMessage, SamplingMessageContentBlock,
};
use switchboard::types::tools::{CallToolResult, TaskSupport, Tool};
use switchboard_test_support::wait;
use switchboard_tests::{Recorder, validate_session};

const RELATED: &str = "io.modelcontextprotocol/related-task";

fn tool(name: &str) -> Tool {
    Tool::new(name, json!({"type": "object"})).with_task_support(TaskSupport::Optional)
}

fn question() -> ElicitRequestFormParams {
    ElicitRequestFormParams::new(
        "Your name?",
        RequestedSchema::default().with_required_property("name", StringSchema::default()),
    )
}

fn fail(e: ClientRequestError) -> ToolError {
    ToolError::new(e.to_string())
}

/// `model_task` and `user_task` ask the client as tasks; `model_refused` reports the local
/// refusal when the client cannot take the task.
fn server() -> Server {
    Server::builder(Implementation::new("reverse-tasks", "1"))
        .tool(tool("model_task"), |call| async move {
            let params =
                CreateMessageRequestParams::new(vec![SamplingMessage::user_text("2+2?")], 10);
            let r = call
                .cx
                .create_message_as_task(params, Some(60_000))
                .await
                .map_err(fail)?;
            Ok(CallToolResult::text(format!("model {}", r.model)))
        })
        .tool(tool("user_task"), |call| async move {
            let r = call
                .cx
                .elicit_as_task(question(), None)
                .await
                .map_err(fail)?;
            let name = match r.content.as_ref().and_then(|c| c.get("name")) {
                Some(ElicitContentValue::String(s)) => s.clone(),
                _ => "nobody".into(),
            };
            Ok(CallToolResult::text(name))
        })
        .tool(tool("model_refused"), |call| async move {
            let params = CreateMessageRequestParams::new(vec![SamplingMessage::user_text("?")], 10);
            match call.cx.start_message_task(params, None).await {
                Err(ClientRequestError::NotDeclared(what)) => Ok(CallToolResult::text(what)),
                other => Ok(CallToolResult::error(format!("{other:?}"))),
            }
        })
        .build()
        .expect("server")
}

fn client() -> ClientBuilder {
    switchboard::client::Client::builder(Implementation::new("reverse-client", "1"))
        .era(switchboard::client::EraMode::Legacy)
        .sampling(|_, _| async {
            // Not a wait: a slow sampling handler (its work takes 80 ms).
            tokio::time::sleep(Duration::from_millis(80)).await;
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
}

async fn connect(s: &Server, b: ClientBuilder) -> (ClientSession, Recorder) {
    let (a, srv) = memory::pair();
    s.serve(srv).expect("serve");
    let rec = Recorder::default();
    let c = b
        .session_config(SessionConfig::default().with_frame_hook(rec.hook()))
        .build()
        .connect(a)
        .await
        .expect("connect");
    (c, rec)
}

/// The frames as JSON values.
fn frames(rec: &Recorder) -> Vec<Value> {
    rec.frames()
        .iter()
        .map(|(_, t)| serde_json::from_str(t).expect("JSON"))
        .collect()
}

#[tokio::test]
async fn the_server_runs_sampling_and_elicitation_as_tasks_on_the_client() {
    let s = server();
    let (c, rec) = connect(&s, client().enable_tasks()).await;
    let r = c.call_tool("model_task", json!({})).await.expect("call");
    assert_eq!(r.content[0].as_text(), Some("model m1"), "{r:?}");
    let r = c.call_tool("user_task", json!({})).await.expect("call");
    assert_eq!(r.content[0].as_text(), Some("Ada"), "{r:?}");

    let all = frames(&rec);
    let init = &all[0];
    assert_eq!(
        init["params"]["capabilities"]["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {
            "sampling": {"createMessage": {}}, "elicitation": {"create": {}}}}),
        "declared for the installed handlers"
    );
    let sampling = all
        .iter()
        .find(|f| f["method"] == "sampling/createMessage")
        .expect("sampling request");
    assert_eq!(
        sampling["params"]["task"],
        json!({"ttl": 60000}),
        "{sampling}"
    );
    // The client's own frames: its answers to the server's requests.
    let sent: Vec<Value> = rec
        .frames()
        .iter()
        .filter(|(flow, _)| *flow == Flow::Outbound)
        .map(|(_, t)| serde_json::from_str(t).expect("JSON"))
        .collect();
    let created = sent
        .iter()
        .find(|f| f["id"] == sampling["id"] && f.get("result").is_some())
        .expect("answered");
    let task_id = created["result"]["task"]["taskId"].clone();
    assert_eq!(created["result"]["task"]["status"], "working", "TK-7, TK-9");
    assert!(
        all.iter()
            .any(|f| f["method"] == "tasks/get" && f["params"]["taskId"] == task_id),
        "the server polls"
    );
    let result_req = all
        .iter()
        .find(|f| f["method"] == "tasks/result" && f["params"]["taskId"] == task_id)
        .expect("the server collects");
    let result = sent
        .iter()
        .find(|f| f["id"] == result_req["id"] && f.get("result").is_some())
        .expect("the result");
    assert_eq!(result["result"]["model"], "m1");
    assert_eq!(
        result["result"]["_meta"][RELATED]["taskId"], task_id,
        "TK-21"
    );
    assert!(
        all.iter()
            .any(|f| f["method"] == "notifications/tasks/status"
                && f["params"]["taskId"] == task_id
                && f["params"]["status"] == "completed"),
        "the client tells the server"
    );
    assert!(
        all.iter()
            .any(|f| f["method"] == "elicitation/create" && f["params"]["task"].is_object())
    );
    assert!(validate_session(&rec.frames(), "2025-11-25") > 15);
}

#[tokio::test]
async fn a_server_task_asks_the_client_as_a_task_tagged_with_its_own_task() {
    let s = server();
    let (c, rec) = connect(&s, client().enable_tasks()).await;
    let t = c
        .start_tool_task("model_task", json!({}), None)
        .await
        .expect("task");
    let r = c.tool_task_result(&t.task_id).await.expect("result");
    assert_eq!(r.content[0].as_text(), Some("model m1"));
    let all = frames(&rec);
    let sampling = all
        .iter()
        .find(|f| f["method"] == "sampling/createMessage")
        .expect("sampling request");
    assert_eq!(
        sampling["params"]["_meta"][RELATED]["taskId"],
        json!(t.task_id),
        "TK-13"
    );
    assert!(sampling["params"]["task"].is_object());
    validate_session(&rec.frames(), "2025-11-25");
}

#[tokio::test]
async fn nothing_is_sent_when_the_client_did_not_declare_tasks_for_the_request() {
    let s = server();
    let (c, rec) = connect(&s, client()).await;
    let r = c.call_tool("model_refused", json!({})).await.expect("call");
    assert_eq!(
        r.content[0].as_text(),
        Some("client capability tasks.requests.sampling.createMessage"),
        "{r:?}"
    );
    assert!(
        !frames(&rec)
            .iter()
            .any(|f| f["method"] == "sampling/createMessage"),
        "refused locally"
    );
    // An older revision has no tasks, even for a client that would take them.
    let (c, _) = connect(
        &s,
        client()
            .enable_tasks()
            .protocol_version(switchboard::types::ProtocolVersion::V2025_06_18),
    )
    .await;
    let r = c.call_tool("model_refused", json!({})).await.expect("call");
    assert_eq!(r.is_error, None, "{r:?}");
}

mod raw_server {
    use super::*;
    use crate::client_support::{all_server_caps, connect_with};
    use switchboard_tests::RawPeer;

    const V: &str = "2025-11-25";

    async fn session(b: ClientBuilder) -> (ClientSession, RawPeer) {
        let (c, f, _) = connect_with(b.build(), V, all_server_caps()).await;
        (c, f)
    }

    fn sampling(task: Option<Value>) -> Value {
        let mut p = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            "maxTokens": 5});
        if let Some(t) = task {
            p["task"] = t;
        }
        p
    }

    async fn next_status(f: &mut RawPeer) -> Value {
        loop {
            let n = f.recv().await;
            if n["method"] == "notifications/tasks/status" {
                return n["params"].clone();
            }
        }
    }

    #[tokio::test]
    async fn tk_7_to_tk_21_a_sampling_task_on_the_client() {
        let (_c, mut f) = session(client().enable_tasks()).await;
        let r = f
            .request(
                json!("s1"),
                "sampling/createMessage",
                sampling(Some(json!({"ttl": 5000}))),
            )
            .await;
        let task = &r["result"]["task"];
        assert_eq!(task["status"], "working", "TK-7, TK-9: {r}");
        assert_eq!(task["ttl"], 5000);
        assert!(
            task["createdAt"].is_string() && task["lastUpdatedAt"].is_string(),
            "TK-11"
        );
        assert!(task["pollInterval"].is_u64());
        let id = task["taskId"].clone();
        let g = f
            .request(json!("g1"), "tasks/get", json!({"taskId": id}))
            .await;
        assert_eq!(g["result"]["taskId"], id, "{g}");
        let res = f
            .request(json!("r1"), "tasks/result", json!({"taskId": id}))
            .await;
        assert_eq!(res["result"]["model"], "m1", "TK-16: {res}");
        assert_eq!(res["result"]["_meta"][RELATED]["taskId"], id, "TK-21");
        let st = next_status(&mut f).await;
        assert_eq!(
            (st["taskId"].clone(), st["status"].clone()),
            (id.clone(), json!("completed"))
        );
        assert!(st.get("_meta").is_none(), "TK-22");
        let again = f
            .request(json!("r2"), "tasks/result", json!({"taskId": id}))
            .await;
        assert_eq!(again["result"], res["result"], "TK-15");
        let l = f.request(json!("l1"), "tasks/list", json!({})).await;
        assert_eq!(l["result"]["tasks"][0]["taskId"], id, "TK-18: {l}");
        let x = f
            .request(json!("x1"), "tasks/cancel", json!({"taskId": id}))
            .await;
        assert_eq!(x["error"]["code"], -32602, "TK-14: {x}");
        let u = f
            .request(json!("u1"), "tasks/get", json!({"taskId": "tsk_nope"}))
            .await;
        assert_eq!(u["error"]["code"], -32602, "unknown task: {u}");
    }

    #[tokio::test]
    async fn tk_19_a_cancelled_elicitation_task_stops_its_handler() {
        let stopped = Arc::new(AtomicBool::new(false));
        let flag = stopped.clone();
        let b = switchboard::client::Client::builder(Implementation::new("c", "1"))
            .era(switchboard::client::EraMode::Legacy)
            .elicitation(move |_, _| {
                let flag = flag.clone();
                async move {
                    struct OnDrop(Arc<AtomicBool>);
                    impl Drop for OnDrop {
                        fn drop(&mut self) {
                            self.0.store(true, Ordering::SeqCst);
                        }
                    }
                    let _guard = OnDrop(flag);
                    std::future::pending::<Result<ElicitResult, ErrorObject>>().await
                }
            })
            .enable_tasks();
        let (_c, mut f) = session(b).await;
        let r = f
            .request(
                json!("e1"),
                "elicitation/create",
                json!({"message": "name?", "requestedSchema": {"type": "object", "properties": {}},
                    "task": {}}),
            )
            .await;
        let id = r["result"]["task"]["taskId"].clone();
        assert!(id.is_string(), "{r}");
        let x = f
            .request(json!("x1"), "tasks/cancel", json!({"taskId": id}))
            .await;
        assert_eq!(x["result"]["status"], "cancelled", "TK-19: {x}");
        let st = next_status(&mut f).await;
        assert_eq!(st["status"], "cancelled");
        wait::until("the handler dropped", || stopped.load(Ordering::SeqCst)).await;
        let res = f
            .request(json!("r1"), "tasks/result", json!({"taskId": id}))
            .await;
        assert_eq!(res["error"]["data"]["reason"], "task_cancelled", "{res}");
    }

    #[tokio::test]
    async fn a_failing_handler_fails_its_task_with_the_same_error() {
        let b = switchboard::client::Client::builder(Implementation::new("c", "1"))
            .era(switchboard::client::EraMode::Legacy)
            .sampling(|_, _| async { Err(ErrorObject::invalid_params("no model here")) })
            .enable_tasks();
        let (_c, mut f) = session(b).await;
        let r = f
            .request(
                json!(1),
                "sampling/createMessage",
                sampling(Some(json!({}))),
            )
            .await;
        let id = r["result"]["task"]["taskId"].clone();
        let res = f
            .request(json!(2), "tasks/result", json!({"taskId": id}))
            .await;
        assert_eq!(res["error"]["code"], -32602, "TK-15: {res}");
        assert_eq!(res["error"]["message"], "no model here");
        let g = f
            .request(json!(3), "tasks/get", json!({"taskId": id}))
            .await;
        assert_eq!(g["result"]["status"], "failed");
    }

    #[tokio::test]
    async fn tk_6_a_client_without_task_support_answers_plainly() {
        let (_c, mut f) = session(client()).await;
        let r = f
            .request(
                json!(1),
                "sampling/createMessage",
                sampling(Some(json!({}))),
            )
            .await;
        assert_eq!(r["result"]["model"], "m1", "TK-6: {r}");
        let g = f
            .request(json!(2), "tasks/get", json!({"taskId": "t"}))
            .await;
        assert_eq!(g["error"]["code"], -32601, "{g}");
        // Declared for sampling only: elicitation asked as a task runs plainly.
        let b = switchboard::client::Client::builder(Implementation::new("c", "1"))
            .era(switchboard::client::EraMode::Legacy)
            .sampling(|_, _| async {
                Ok(CreateMessageResult::new(
                    "m2",
                    SamplingMessageContentBlock::text("x"),
                ))
            })
            .elicitation(|_, _| async {
                Ok(ElicitResult::new(
                    switchboard::types::elicitation::ElicitAction::Decline,
                ))
            })
            .capabilities(
                serde_json::from_value(
                    json!({"tasks": {"requests": {"sampling": {"createMessage": {}}}}}),
                )
                .unwrap(),
            )
            .enable_tasks();
        let (_c, mut f) = session(b).await;
        let r = f
            .request(
                json!(3),
                "elicitation/create",
                json!({"message": "?", "requestedSchema": {"type": "object", "properties": {}},
                    "task": {}}),
            )
            .await;
        assert_eq!(r["result"]["action"], "decline", "TK-6: {r}");
        let r = f
            .request(
                json!(4),
                "sampling/createMessage",
                sampling(Some(json!({}))),
            )
            .await;
        assert!(r["result"]["task"]["taskId"].is_string(), "{r}");
    }

    #[tokio::test]
    async fn tk_18_the_clients_task_list_comes_in_pages() {
        let (_c, mut f) = session(client().enable_tasks()).await;
        // One past a page: the client answers `tasks/list` 100 at a time (`TASK_LIST_PAGE`).
        let n = 100 + 1;
        for i in 0..n {
            let r = f
                .request(
                    json!(i),
                    "sampling/createMessage",
                    sampling(Some(json!({}))),
                )
                .await;
            assert!(r["result"]["task"].is_object(), "{r}");
        }
        let first = f.request(json!("l1"), "tasks/list", json!({})).await;
        let page = first["result"]["tasks"].as_array().expect("tasks").len();
        assert_eq!(page, n - 1, "{first}");
        let cursor = first["result"]["nextCursor"].clone();
        assert!(cursor.is_string(), "TK-18: more exist");
        let rest = f
            .request(json!("l2"), "tasks/list", json!({"cursor": cursor}))
            .await;
        assert_eq!(rest["result"]["tasks"].as_array().map(Vec::len), Some(1));
        assert!(rest["result"].get("nextCursor").is_none(), "{rest}");
    }

    /// On the paused clock: the sleep is the TTL passing.
    #[tokio::test(start_paused = true)]
    async fn tk_12_client_tasks_expire() {
        let store = InMemoryTaskStore::new(TaskLimits::default().with_ttl(50, 100));
        let (_c, mut f) = session(client().task_store(Arc::new(store))).await;
        let r = f
            .request(
                json!(1),
                "sampling/createMessage",
                sampling(Some(json!({"ttl": 60000}))),
            )
            .await;
        assert_eq!(r["result"]["task"]["ttl"], 100, "TK-12: {r}");
        let id = r["result"]["task"]["taskId"].clone();
        // Not a wait: the task outlives its 100 ms TTL (time passing is the scenario).
        tokio::time::sleep(Duration::from_millis(300)).await;
        let g = f
            .request(json!(2), "tasks/get", json!({"taskId": id}))
            .await;
        assert_eq!(g["error"]["code"], -32602, "expired: {g}");
    }

    #[tokio::test]
    async fn tk_23_another_sessions_tasks_are_not_found() {
        let c = client().enable_tasks().build();
        let (_a, mut fa, _) = connect_with(c.clone(), V, all_server_caps()).await;
        let (_b, mut fb, _) = connect_with(c, V, all_server_caps()).await;
        let r = fa
            .request(
                json!(1),
                "sampling/createMessage",
                sampling(Some(json!({}))),
            )
            .await;
        let id = r["result"]["task"]["taskId"].clone();
        let g = fb
            .request(json!(1), "tasks/get", json!({"taskId": id}))
            .await;
        assert_eq!(g["error"]["code"], -32602, "TK-23: {g}");
        let l = fb.request(json!(2), "tasks/list", json!({})).await;
        assert_eq!(l["result"]["tasks"], json!([]));
        let g = fa
            .request(json!(2), "tasks/get", json!({"taskId": id}))
            .await;
        assert!(g["result"]["status"].is_string(), "{g}");
    }
}
