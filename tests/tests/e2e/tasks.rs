//! Tools run as tasks (2025-11-25, SEP-1686): every frame we emit is checked against the schema
//! by the raw peer.

use serde_json::{Value, json};
use switchboard::jsonrpc::memory;
use switchboard::server::Server;
use switchboard::types::lifecycle::Implementation;
use switchboard::types::tools::{CallToolResult, TaskSupport, Tool};
use switchboard_test_support::server::slow;
use switchboard_tests::RawPeer;

fn server() -> Server {
    let obj = json!({"type": "object"});
    Server::builder(Implementation::new("tasks", "1"))
        .tool(
            Tool::new(
                "slow",
                json!({"type": "object", "properties": {"ms": {"type": "integer"}}}),
            )
            .with_task_support(TaskSupport::Optional),
            |call| slow(call, 0),
        )
        .tool(
            Tool::new("required", obj.clone()).with_task_support(TaskSupport::Required),
            |_| async { Ok(CallToolResult::text("done")) },
        )
        .tool(
            Tool::new("asks", obj.clone()).with_task_support(TaskSupport::Optional),
            |call| async move {
                let form: switchboard::types::elicitation::ElicitRequestFormParams =
                    serde_json::from_value(json!({"message": "Your name?", "requestedSchema":
                        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}))
                    .map_err(|e| switchboard::server::ToolError::new(e.to_string()))?;
                let r = call
                    .cx
                    .elicit(form)
                    .await
                    .map_err(|e| switchboard::server::ToolError::new(e.to_string()))?;
                let name = r.content.and_then(|c| serde_json::to_value(c).ok()).unwrap_or_default();
                Ok(CallToolResult::text(format!("hello {}", name["name"].as_str().unwrap_or("?"))))
            },
        )
        .tool(Tool::new("plain", obj.clone()), |_| async {
            Ok(CallToolResult::text("plain"))
        })
        .tool(
            Tool::new("fails", obj).with_task_support(TaskSupport::Optional),
            |_| async { Ok(CallToolResult::error("it broke")) },
        )
        .build()
        .expect("server")
}

async fn client(s: &Server, version: &str) -> RawPeer {
    let (a, b) = memory::pair();
    s.serve(b).expect("serve");
    let mut c = RawPeer::new(a, version);
    let init = c.handshake(version, json!({})).await;
    if version == "2025-11-25" {
        assert_eq!(
            init["capabilities"]["tasks"],
            json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
            "declared because a tool supports tasks"
        );
    } else {
        assert!(
            init["capabilities"].get("tasks").is_none(),
            "not before 2025-11-25"
        );
    }
    c
}

fn call(name: &str, args: Value, task: Option<Value>) -> Value {
    let mut p = json!({"name": name, "arguments": args});
    if let Some(t) = task {
        p["task"] = t;
    }
    p
}

#[tokio::test]
async fn tk_7_tk_15_tk_16_tk_21_a_task_is_created_at_once_and_its_result_comes_later() {
    let s = server();
    let mut c = client(&s, "2025-11-25").await;
    let r = c
        .request(
            json!(1),
            "tools/call",
            call("slow", json!({"ms": 150}), Some(json!({"ttl": 60000}))),
        )
        .await;
    let task = &r["result"]["task"];
    assert_eq!(task["status"], "working", "TK-9: {r}");
    assert_eq!(task["ttl"], 60000);
    assert!(task["pollInterval"].is_u64() && task["createdAt"].is_string());
    let id = task["taskId"].as_str().expect("taskId").to_owned();
    let g = c
        .request(json!(2), "tasks/get", json!({"taskId": id}))
        .await;
    assert_eq!(g["result"]["status"], "working", "{g}");
    let res = c
        .request(json!(3), "tasks/result", json!({"taskId": id}))
        .await;
    assert_eq!(
        res["result"]["content"][0]["text"], "slept 150",
        "TK-15/16: {res}"
    );
    assert_eq!(
        res["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], id,
        "TK-21"
    );
    let g = c
        .request(json!(4), "tasks/get", json!({"taskId": id}))
        .await;
    assert_eq!(g["result"]["status"], "completed");
    let again = c
        .request(json!(5), "tasks/result", json!({"taskId": id}))
        .await;
    assert_eq!(
        again["result"], res["result"],
        "asked twice: the same answer"
    );
}

#[tokio::test]
async fn tk_2_tk_5_tk_6_support_levels() {
    let s = server();
    let mut c = client(&s, "2025-11-25").await;
    let r = c
        .request(json!(1), "tools/call", call("required", json!({}), None))
        .await;
    assert_eq!(r["error"]["code"], -32601, "TK-5: {r}");
    let r = c
        .request(
            json!(2),
            "tools/call",
            call("plain", json!({}), Some(json!({}))),
        )
        .await;
    assert_eq!(r["error"]["code"], -32601, "TK-2: {r}");
    let r = c
        .request(
            json!(3),
            "tools/call",
            call("required", json!({}), Some(json!({}))),
        )
        .await;
    assert!(r["result"]["task"]["taskId"].is_string(), "{r}");
    let r = c
        .request(json!(4), "tools/call", call("slow", json!({}), None))
        .await;
    assert_eq!(
        r["result"]["content"][0]["text"], "slept 0",
        "optional: plain is fine"
    );
    // An older revision has no tasks: the field is ignored and the call runs (TK-6).
    let mut old = client(&s, "2025-06-18").await;
    let r = old
        .request(
            json!(1),
            "tools/call",
            call("slow", json!({}), Some(json!({}))),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "slept 0", "{r}");
    let r = old.request(json!(2), "tasks/list", json!({})).await;
    assert_eq!(
        r["error"]["code"], -32601,
        "no tasks methods before 2025-11-25: {r}"
    );
}

#[tokio::test]
async fn tk_14_tk_19_cancel_stops_the_work_and_is_final() {
    let s = server();
    let mut c = client(&s, "2025-11-25").await;
    let r = c
        .request(
            json!(1),
            "tools/call",
            call("slow", json!({"ms": 60000}), Some(json!({}))),
        )
        .await;
    let id = r["result"]["task"]["taskId"]
        .as_str()
        .expect("id")
        .to_owned();
    let x = c
        .request(json!(2), "tasks/cancel", json!({"taskId": id}))
        .await;
    assert_eq!(x["result"]["status"], "cancelled", "TK-19: {x}");
    let g = c
        .request(json!(3), "tasks/get", json!({"taskId": id}))
        .await;
    assert_eq!(g["result"]["status"], "cancelled");
    let res = c
        .request(json!(4), "tasks/result", json!({"taskId": id}))
        .await;
    assert!(
        res["error"].is_object(),
        "a cancelled task has no result: {res}"
    );
    let x = c
        .request(json!(5), "tasks/cancel", json!({"taskId": id}))
        .await;
    assert_eq!(x["error"]["code"], -32602, "TK-14: {x}");
}

#[tokio::test]
async fn failed_tasks_keep_the_is_error_result() {
    let s = server();
    let mut c = client(&s, "2025-11-25").await;
    let r = c
        .request(
            json!(1),
            "tools/call",
            call("fails", json!({}), Some(json!({}))),
        )
        .await;
    let id = r["result"]["task"]["taskId"]
        .as_str()
        .expect("id")
        .to_owned();
    let res = c
        .request(json!(2), "tasks/result", json!({"taskId": id}))
        .await;
    assert_eq!(
        res["result"]["isError"], true,
        "TK-15: exactly the call's result: {res}"
    );
    let g = c
        .request(json!(3), "tasks/get", json!({"taskId": id}))
        .await;
    assert_eq!(g["result"]["status"], "failed");
}

#[tokio::test]
async fn tk_18_tk_23_list_shows_only_this_sessions_tasks() {
    let s = server();
    let mut c = client(&s, "2025-11-25").await;
    let mut ids = Vec::new();
    for i in 0..3 {
        let r = c
            .request(
                json!(i),
                "tools/call",
                call("slow", json!({}), Some(json!({}))),
            )
            .await;
        ids.push(r["result"]["task"]["taskId"].clone());
    }
    let l = c.request(json!(10), "tasks/list", json!({})).await;
    let listed: Vec<Value> = l["result"]["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| t["taskId"].clone())
        .collect();
    assert_eq!(listed, ids, "{l}");
    let mut other = client(&s, "2025-11-25").await;
    let l = other.request(json!(1), "tasks/list", json!({})).await;
    assert_eq!(l["result"]["tasks"], json!([]), "TK-23");
    let g = other
        .request(json!(2), "tasks/get", json!({"taskId": ids[0]}))
        .await;
    assert_eq!(
        g["error"]["code"], -32602,
        "another session's task is unknown: {g}"
    );
    let g = c
        .request(json!(11), "tasks/get", json!({"taskId": "tsk_nope"}))
        .await;
    assert_eq!(g["error"]["code"], -32602);
    let l = c
        .request(json!(12), "tasks/list", json!({"cursor": "zz-not-ours"}))
        .await;
    assert_eq!(l["error"]["code"], -32602, "an invalid cursor: {l}");
}

/// The next `notifications/tasks/status` frame (other frames are skipped).
async fn next_status(c: &mut RawPeer) -> Value {
    loop {
        let f = c.recv().await;
        if f["method"] == "notifications/tasks/status" {
            return f;
        }
    }
}

#[tokio::test]
async fn tk_20_tk_22_status_notifications_carry_the_whole_task() {
    let s = server();
    let mut c = client(&s, "2025-11-25").await;
    let r = c
        .request(
            json!(1),
            "tools/call",
            call("slow", json!({"ms": 10}), Some(json!({}))),
        )
        .await;
    let id = r["result"]["task"]["taskId"].clone();
    let n = next_status(&mut c).await;
    assert_eq!(n["params"]["taskId"], id, "{n}");
    assert_eq!(n["params"]["status"], "completed");
    assert!(n["params"]["lastUpdatedAt"].is_string());
    assert!(
        n["params"].get("_meta").is_none(),
        "TK-22: no related-task meta"
    );
    let r = c
        .request(
            json!(2),
            "tools/call",
            call("slow", json!({"ms": 60000}), Some(json!({}))),
        )
        .await;
    let id = r["result"]["task"]["taskId"].clone();
    c.request(json!(3), "tasks/cancel", json!({"taskId": id}))
        .await;
    let n = next_status(&mut c).await;
    assert_eq!(
        (n["params"]["taskId"].clone(), n["params"]["status"].clone()),
        (id, json!("cancelled"))
    );
}

mod client_api {
    use super::*;
    use switchboard::client::{Client, ClientError};
    use switchboard::types::tasks::TaskStatus;

    async fn session(s: &Server) -> switchboard::client::ClientSession {
        let (a, b) = memory::pair();
        s.serve(b).expect("serve");
        Client::builder(Implementation::new("tasks-client", "1"))
            .era(switchboard::client::EraMode::Legacy)
            .build()
            .connect(a)
            .await
            .expect("connect")
    }

    #[tokio::test]
    async fn a_tool_task_is_started_polled_and_collected() {
        let s = server();
        let c = session(&s).await;
        let t = c
            .start_tool_task("slow", json!({"ms": 30}), Some(10_000))
            .await
            .expect("task");
        assert_eq!(t.status, TaskStatus::Working);
        let done = c.wait_task(&t.task_id).await.expect("wait");
        assert_eq!(done.status, TaskStatus::Completed);
        let r = c.tool_task_result(&t.task_id).await.expect("result");
        assert_eq!(r.content, CallToolResult::text("slept 30").content, "TK-15");
        let related = r
            .meta
            .as_ref()
            .and_then(|m| m.related_task())
            .map(|m| m.task_id);
        assert_eq!(related.as_deref(), Some(t.task_id.as_str()), "TK-21");
        let listed = c.list_tasks().await.expect("list");
        assert_eq!(listed.len(), 1);
        let slow = c
            .start_tool_task("slow", json!({"ms": 60000}), None)
            .await
            .expect("task");
        let x = c.cancel_task(&slow.task_id).await.expect("cancel");
        assert_eq!(x.status, TaskStatus::Cancelled);
        let again = c.cancel_task(&slow.task_id).await.unwrap_err();
        assert_eq!(again.code().map(|c| c.0), Some(-32602), "TK-14");
    }

    #[tokio::test]
    async fn tk_1_tk_2_nothing_is_sent_for_a_task_the_server_cannot_run() {
        let s = server();
        let c = session(&s).await;
        c.list_tools().await.expect("tools");
        let e = c
            .start_tool_task("plain", json!({}), None)
            .await
            .unwrap_err();
        assert!(matches!(e, ClientError::TaskRefused(_)), "TK-2: {e}");
        let no_tasks = Server::builder(Implementation::new("plain", "1"))
            .tool(Tool::new("t", json!({"type": "object"})), |_| async {
                Ok(CallToolResult::text("x"))
            })
            .build()
            .expect("server");
        let c = session(&no_tasks).await;
        let e = c.start_tool_task("t", json!({}), None).await.unwrap_err();
        assert!(matches!(e, ClientError::TaskRefused(_)), "TK-1: {e}");
    }

    #[tokio::test]
    async fn tk_4_a_tool_that_requires_a_task_is_never_called_plainly() {
        let s = server();
        let c = session(&s).await;
        // Before the list is known, the server refuses (TK-5).
        let e = c.call_tool("required", json!({})).await.unwrap_err();
        assert_eq!(e.code().map(|c| c.0), Some(-32601), "TK-5: {e}");
        c.list_tools().await.expect("tools");
        let e = c.call_tool("required", json!({})).await.unwrap_err();
        assert!(matches!(e, ClientError::TaskRequired(_)), "TK-4: {e}");
        let t = c
            .start_tool_task("required", json!({}), None)
            .await
            .expect("as a task");
        let r = c.tool_task_result(&t.task_id).await.expect("result");
        assert_eq!(r.content, CallToolResult::text("done").content);
    }
}

#[tokio::test]
async fn tk_13_a_task_that_asks_the_client_is_input_required_meanwhile() {
    let s = server();
    let (a, b) = memory::pair();
    s.serve(b).expect("serve");
    let mut c = RawPeer::new(a, "2025-11-25");
    c.handshake("2025-11-25", json!({"elicitation": {}})).await;
    let r = c
        .request(
            json!(1),
            "tools/call",
            call("asks", json!({}), Some(json!({}))),
        )
        .await;
    let id = r["result"]["task"]["taskId"].clone();
    // The server's elicitation request, tagged with the task.
    let ask = loop {
        let f = c.recv().await;
        if f["method"] == "elicitation/create" {
            break f;
        }
    };
    assert_eq!(
        ask["params"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], id,
        "TK-13: {ask}"
    );
    let g = c
        .request(json!(2), "tasks/get", json!({"taskId": id}))
        .await;
    assert_eq!(g["result"]["status"], "input_required", "{g}");
    c.send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"name": "Ada"}}}))
        .await;
    let res = c
        .request(json!(3), "tasks/result", json!({"taskId": id}))
        .await;
    assert_eq!(res["result"]["content"][0]["text"], "hello Ada", "{res}");
    let g = c
        .request(json!(4), "tasks/get", json!({"taskId": id}))
        .await;
    assert_eq!(g["result"]["status"], "completed");
}
