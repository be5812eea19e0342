//! Tools run as tasks under races and time: cancel against completion under load, `tasks/result`
//! asked twice at once, cancel while the task waits for the client (`input_required`), expiry
//! (`[TK-12]`), and a progress token that lives as long as its task. Every frame the server
//! emits is checked against the schema by the raw peer.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use switchboard::client::{InMemoryTaskStore, TaskLimits};
use switchboard::jsonrpc::{ProgressError, memory};
use switchboard::server::{Server, ToolError};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::tools::{CallToolResult, TaskSupport, Tool};
use switchboard_test_support::server::slow;
use switchboard_tests::RawPeer;

fn obj() -> Value {
    json!({"type": "object"})
}

/// `slow` (sleeps `ms`), `asks` (elicits a name), `steps` (progress 1, then 2 after 50 ms, then
/// answers; a late report 150 ms after it ended is recorded in `late`).
fn server(limits: Option<TaskLimits>, late: Arc<Mutex<Vec<ProgressError>>>) -> Server {
    let mut b = Server::builder(Implementation::new("tasks-races", "1"))
        .tool(
            Tool::new("slow", obj()).with_task_support(TaskSupport::Optional),
            |call| slow(call, 0),
        )
        .tool(
            Tool::new("asks", obj()).with_task_support(TaskSupport::Optional),
            |call| async move {
                let form: switchboard::types::elicitation::ElicitRequestFormParams =
                    serde_json::from_value(json!({"message": "Your name?", "requestedSchema":
                        {"type": "object", "properties": {"name": {"type": "string"}}}}))
                    .map_err(|e| ToolError::new(e.to_string()))?;
                call.cx
                    .elicit(form)
                    .await
                    .map_err(|e| ToolError::new(e.to_string()))?;
                Ok(CallToolResult::text("answered"))
            },
        )
        .tool(
            Tool::new("steps", obj()).with_task_support(TaskSupport::Optional),
            move |call| {
                let late = late.clone();
                async move {
                    let e = |e: ProgressError| ToolError::new(e.to_string());
                    call.cx.progress(1.0, Some(2.0), None).await.map_err(e)?;
                    // Not a wait: the tool's work between two reports (the scenario).
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    call.cx.progress(2.0, Some(2.0), None).await.map_err(e)?;
                    let cx = call.cx.clone();
                    tokio::spawn(async move {
                        // Not a wait: a report made after the task ended (the scenario).
                        tokio::time::sleep(Duration::from_millis(150)).await;
                        if let Err(e) = cx.progress(3.0, None, None).await {
                            late.lock().unwrap().push(e);
                        }
                    });
                    Ok(CallToolResult::text("stepped"))
                }
            },
        );
    if let Some(l) = limits {
        b = b.task_store(Arc::new(InMemoryTaskStore::new(l)));
    }
    b.build().expect("server")
}

async fn client(s: &Server, caps: Value) -> RawPeer {
    let (a, b) = memory::pair();
    s.serve(b).expect("serve");
    let mut c = RawPeer::new(a, "2025-11-25");
    c.handshake("2025-11-25", caps).await;
    c
}

fn task_call(name: &str, args: Value, task: Value) -> Value {
    json!({"name": name, "arguments": args, "task": task})
}

fn task_id(r: &Value) -> String {
    r["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a CreateTaskResult: {r}"))
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tk_10_tk_19_cancel_against_completion_under_load() {
    const N: u64 = 300;
    let s = server(None, Arc::default());
    let mut c = client(&s, json!({})).await;
    for i in 0..N {
        c.send(json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": task_call("slow", json!({"ms": i % 4}), json!({}))}))
            .await;
    }
    let mut ids = Vec::new();
    for i in 0..N {
        ids.push(task_id(&c.recv_id(&json!(i)).await));
    }
    // Each cancel races its task's completion.
    for (i, id) in ids.iter().enumerate() {
        c.send(
            json!({"jsonrpc": "2.0", "id": format!("x{i}"), "method": "tasks/cancel",
            "params": {"taskId": id}}),
        )
        .await;
    }
    let mut cancelled = Vec::new();
    for i in 0..ids.len() {
        let x = c.recv_id(&json!(format!("x{i}"))).await;
        if x["result"]["status"] == "cancelled" {
            cancelled.push(true);
        } else {
            assert_eq!(x["error"]["code"], -32602, "TK-14: already terminal: {x}");
            cancelled.push(false);
        }
    }
    for (i, id) in ids.iter().enumerate() {
        let g = c
            .request(json!(format!("g{i}")), "tasks/get", json!({"taskId": id}))
            .await;
        let want = if cancelled[i] {
            "cancelled"
        } else {
            "completed"
        };
        assert_eq!(g["result"]["status"], want, "TK-19: {g}");
        let r = c
            .request(
                json!(format!("r{i}")),
                "tasks/result",
                json!({"taskId": id}),
            )
            .await;
        if cancelled[i] {
            assert_eq!(r["error"]["data"]["reason"], "task_cancelled", "{r}");
        } else {
            assert_eq!(
                r["result"]["content"][0]["text"],
                format!("slept {}", i as u64 % 4)
            );
        }
    }
    assert!(c.checked() > 4 * N as usize);
}

#[tokio::test]
async fn tk_15_tk_16_tasks_result_asked_twice_at_once_answers_both_alike() {
    let s = server(None, Arc::default());
    let mut c = client(&s, json!({})).await;
    let r = c
        .request(
            json!(1),
            "tools/call",
            task_call("slow", json!({"ms": 100}), json!({})),
        )
        .await;
    let id = task_id(&r);
    for n in [2, 3] {
        c.send(
            json!({"jsonrpc": "2.0", "id": n, "method": "tasks/result", "params": {"taskId": id}}),
        )
        .await;
    }
    let a = c.recv_id(&json!(2)).await;
    let b = c.recv_id(&json!(3)).await;
    assert_eq!(a["result"]["content"][0]["text"], "slept 100", "{a}");
    assert_eq!(a["result"], b["result"], "TK-15: the same answer twice");
}

#[tokio::test]
async fn tk_19_cancel_while_input_required_stops_the_wait_for_the_client() {
    let s = server(None, Arc::default());
    let mut c = client(&s, json!({"elicitation": {}})).await;
    let r = c
        .request(
            json!(1),
            "tools/call",
            task_call("asks", json!({}), json!({})),
        )
        .await;
    let id = task_id(&r);
    let ask = loop {
        let f = c.recv().await;
        if f["method"] == "elicitation/create" {
            break f;
        }
    };
    let g = c
        .request(json!(2), "tasks/get", json!({"taskId": id}))
        .await;
    assert_eq!(g["result"]["status"], "input_required", "{g}");
    let x = c
        .request(json!(3), "tasks/cancel", json!({"taskId": id}))
        .await;
    assert_eq!(x["result"]["status"], "cancelled", "{x}");
    // The stopped work withdraws its question.
    let withdrawn = loop {
        let f = c.recv().await;
        if f["method"] == "notifications/cancelled" {
            break f;
        }
    };
    assert_eq!(withdrawn["params"]["requestId"], ask["id"]);
    // A late answer changes nothing.
    c.send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "decline"}}))
        .await;
    let g = c
        .request(json!(4), "tasks/get", json!({"taskId": id}))
        .await;
    assert_eq!(g["result"]["status"], "cancelled", "TK-19: {g}");
}

/// On the paused clock: the sleep is the TTL passing.
#[tokio::test(start_paused = true)]
async fn tk_12_tasks_expire_after_their_ttl_even_while_a_result_waits() {
    let limits = TaskLimits::default().with_ttl(100, 300);
    let s = server(Some(limits), Arc::default());
    let mut c = client(&s, json!({})).await;
    let r = c
        .request(
            json!(1),
            "tools/call",
            task_call("slow", json!({}), json!({"ttl": 10_000_000})),
        )
        .await;
    assert_eq!(
        r["result"]["task"]["ttl"], 300,
        "TK-12: cut to the longest: {r}"
    );
    let id = task_id(&r);
    let r = c
        .request(
            json!(2),
            "tools/call",
            task_call("slow", json!({"ms": 60_000}), json!({"ttl": 150})),
        )
        .await;
    let waiting = task_id(&r);
    let res = c
        .request(json!(3), "tasks/result", json!({"taskId": waiting}))
        .await;
    assert_eq!(res["error"]["code"], -32602, "expired while waiting: {res}");
    // Not a wait: the task outlives its TTL (time passing is the scenario).
    tokio::time::sleep(Duration::from_millis(350)).await;
    let g = c
        .request(json!(4), "tasks/get", json!({"taskId": id}))
        .await;
    assert_eq!(g["error"]["code"], -32602, "expired: {g}");
    let l = c.request(json!(5), "tasks/list", json!({})).await;
    assert_eq!(l["result"]["tasks"], json!([]), "TK-18: {l}");
}

#[tokio::test]
async fn tk_17_a_tasks_progress_token_lives_until_its_terminal_status() {
    let late = Arc::new(Mutex::new(Vec::new()));
    let s = server(None, late.clone());
    let mut c = client(&s, json!({})).await;
    c.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "steps", "arguments": {}, "task": {}, "_meta": {"progressToken": "p"}}}),
    )
    .await;
    let mut answered = false;
    let mut progress = Vec::new();
    loop {
        let f = c.recv().await;
        if f["id"] == 1 {
            task_id(&f);
            answered = true;
        } else if f["method"] == "notifications/progress" {
            assert_eq!(f["params"]["progressToken"], "p");
            progress.push((answered, f["params"]["progress"].clone()));
        } else if f["method"] == "notifications/tasks/status" {
            assert_eq!(f["params"]["status"], "completed");
            break;
        }
    }
    assert_eq!(progress.len(), 2, "{progress:?}");
    assert_eq!(
        progress[1],
        (true, json!(2)),
        "progress after the CreateTaskResult"
    );
    // Nothing after the terminal status.
    c.expect_silence(250).await;
    assert_eq!(late.lock().unwrap().clone(), vec![ProgressError::Completed]);
}

#[tokio::test]
async fn tk_17_our_client_hears_a_tasks_progress_for_its_whole_life() {
    let s = server(None, Arc::default());
    let (a, b) = memory::pair();
    s.serve(b).expect("serve");
    let c = switchboard::client::Client::builder(Implementation::new("progress", "1"))
        .era(switchboard::client::EraMode::Legacy)
        .build()
        .connect(a)
        .await
        .expect("connect");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let (task, watch) = c
        .start_tool_task_with_progress("steps", json!({}), None, move |u| {
            sink.lock().unwrap().push(u.progress)
        })
        .await
        .expect("task");
    let r = c.tool_task_result(&task.task_id).await.expect("result");
    assert_eq!(r.content[0].as_text(), Some("stepped"));
    assert_eq!(
        *seen.lock().unwrap(),
        vec![1.0, 2.0],
        "after the CreateTaskResult too"
    );
    drop(watch);
}
