//! Our client in the tasks extension of revision 2026-07-28 (SEP-2663, SPEC-2026-NOTES §16)
//! against the everything server: a client that declares the extension gets each tool's
//! result whether the server answered at once or with a task; the task's input requests are
//! answered by the same elicitation handler; a failed task is the call's JSON-RPC error; a
//! cancelled call cancels its task with `tasks/cancel`. Every frame validated against the
//! 2026-07-28 schema.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use switchboard::client::{Client, ClientError, ClientSession};
use switchboard::jsonrpc::{Flow, RequestError, RequestOptions, SessionConfig, memory};
use switchboard::types::elicitation::{ElicitContentValue, ElicitResult};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::meta::OrderedMap;
use switchboard::types::{ErrorCode, methods};
use switchboard_example_servers::everything::everything_server;
use switchboard_test_support::wait;
use switchboard_tests::{Recorder, text, validate_session};
use tokio_util::sync::CancellationToken;

async fn connect(tasks: bool) -> (ClientSession, Recorder) {
    let server = everything_server(SessionConfig::default()).unwrap();
    let (a, b) = memory::pair();
    server.serve(b).unwrap();
    let rec = Recorder::default();
    let mut builder = Client::builder(Implementation::new("task-client", "1"))
        .session_config(SessionConfig::default().with_frame_hook(rec.hook()))
        .elicitation(|_, _| async {
            let mut content = OrderedMap::new();
            content.insert("name", ElicitContentValue::String("Ann".into()));
            content.insert("user_name", ElicitContentValue::String("Ann".into()));
            content.insert("confirm", ElicitContentValue::Bool(true));
            Ok(ElicitResult::accept(content))
        });
    if tasks {
        builder = builder.tasks_extension();
    }
    let c = builder.build().connect(a).await.unwrap();
    (c, rec)
}

/// The outbound requests' methods, and the inbound results' `resultType`s, in order.
fn methods_sent(rec: &Recorder) -> Vec<String> {
    rec.frames()
        .iter()
        .filter(|(f, _)| *f == Flow::Outbound)
        .filter_map(|(_, t)| serde_json::from_str::<Value>(t).ok())
        .filter_map(|v| v["method"].as_str().map(str::to_owned))
        .collect()
}

fn result_types(rec: &Recorder) -> Vec<String> {
    rec.frames()
        .iter()
        .filter(|(f, _)| *f == Flow::Inbound)
        .filter_map(|(_, t)| serde_json::from_str::<Value>(t).ok())
        .filter_map(|v| v["result"]["resultType"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn d26_131_a_task_result_is_followed_to_the_tools_result() {
    let (c, rec) = connect(true).await;
    // A tool that waits becomes a task; the call returns its result.
    let r = c
        .call_tool("test_task_slow", json!({"ms": 300}))
        .await
        .unwrap();
    assert_eq!(text(&r), "slept 300 ms");
    assert!(
        result_types(&rec).contains(&"task".to_owned()),
        "{:?}",
        result_types(&rec)
    );
    assert!(methods_sent(&rec).contains(&methods::TASKS_GET.to_owned()));
    // A tool that requires a task, after an input-required round (MRTR then task).
    let r = c.call_tool("test_tool_with_task", json!({})).await.unwrap();
    assert_eq!(text(&r), "Hello, Ann!");
    // A tool error is a completed task with an isError result, not a failure (D26-135).
    let r = c.call_tool("failing_job", json!({})).await.unwrap();
    assert!(r.is_error(), "{r:?}");
    assert!(text(&r).contains("failing_job failed"));
    // Every request declared the extension (D26-130 is the server's; D26-8 ours).
    for (flow, t) in rec.frames() {
        let v: Value = serde_json::from_str(&t).unwrap();
        if flow == Flow::Outbound && v.get("id").is_some() && v.get("method").is_some() {
            assert_eq!(
                v["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
                json!({}),
                "{t}"
            );
        }
    }
    assert!(validate_session(&rec.frames(), "2026-07-28") > 10);
}

/// `[D26-130]` `[D26-131]`: one handle of a client built without the extension declares it on
/// its own requests: the server's task is followed to the tool's result, and the handle is told
/// the task's id before; the session's other handles still declare nothing.
#[tokio::test]
async fn d26_130_one_handle_declares_the_extension_and_is_told_of_its_tasks() {
    let (c, rec) = connect(false).await;
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let s = seen.clone();
    let h = c.with_tasks_extension(move |id| s.lock().unwrap().push(id.to_owned()));
    let r = h
        .call_tool("test_task_slow", json!({"ms": 50}))
        .await
        .unwrap();
    assert_eq!(text(&r), "slept 50 ms");
    let ids = seen.lock().unwrap().clone();
    assert_eq!(ids.len(), 1, "{ids:?}");
    let polled = rec.frames().iter().any(|(f, t)| {
        let v: Value = serde_json::from_str(t).unwrap();
        *f == Flow::Outbound && v["method"] == methods::TASKS_GET && v["params"]["taskId"] == ids[0]
    });
    assert!(polled, "the task told of is the one followed");
    let r = c
        .call_tool("test_task_slow", json!({"ms": 10}))
        .await
        .unwrap();
    assert_eq!(text(&r), "slept 10 ms");
    assert_eq!(seen.lock().unwrap().len(), 1);
    let calls: Vec<Value> = rec
        .frames()
        .iter()
        .filter(|(f, _)| *f == Flow::Outbound)
        .filter_map(|(_, t)| serde_json::from_str::<Value>(t).ok())
        .filter(|v| v["method"] == methods::TOOLS_CALL)
        .collect();
    let declared = |v: &Value| {
        v["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"]
            .get("io.modelcontextprotocol/tasks")
            .is_some()
    };
    assert_eq!(calls.len(), 2);
    assert!(declared(&calls[0]) && !declared(&calls[1]), "{calls:?}");
    assert!(validate_session(&rec.frames(), "2026-07-28") > 4);
}

#[tokio::test]
async fn d26_138_task_input_requests_are_answered_with_tasks_update() {
    let (c, rec) = connect(true).await;
    let r = c
        .call_tool("confirm_delete", json!({"filename": "notes.txt"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "Deleted notes.txt");
    let r = c.call_tool("multi_input", json!({})).await.unwrap();
    assert_eq!(text(&r), "Ann (confirmed: true)");
    let sent = methods_sent(&rec);
    let updates = sent.iter().filter(|m| *m == methods::TASKS_UPDATE).count();
    assert!(updates >= 2, "{sent:?}");
    // Each key answered once per task, though polls repeat outstanding requests.
    let mut keys = Vec::new();
    for (flow, t) in rec.frames() {
        let v: Value = serde_json::from_str(&t).unwrap();
        if flow == Flow::Outbound && v["method"] == methods::TASKS_UPDATE {
            let task = v["params"]["taskId"].as_str().unwrap().to_owned();
            for key in v["params"]["inputResponses"].as_object().unwrap().keys() {
                keys.push((task.clone(), key.clone()));
            }
        }
    }
    let mut unique = keys.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(keys.len(), unique.len(), "{keys:?}");
    assert_eq!(keys.len(), 3, "confirm; name and confirm: {keys:?}");
    assert!(validate_session(&rec.frames(), "2026-07-28") > 10);
}

#[tokio::test]
async fn d26_135_a_failed_task_is_the_calls_json_rpc_error() {
    let (c, _rec) = connect(true).await;
    let err = c
        .call_tool("protocol_error_job", json!({}))
        .await
        .unwrap_err();
    match err {
        ClientError::Request(RequestError::Rejected(e)) => {
            assert_eq!(e.code, ErrorCode::INTERNAL_ERROR);
            assert!(e.message.contains("protocol_error_job"), "{e:?}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn d26_140_cancelling_the_call_cancels_the_task_with_tasks_cancel() {
    let (c, rec) = connect(true).await;
    let cancel = CancellationToken::new();
    let opts = RequestOptions::default().with_cancel(cancel.clone());
    let call = c.call_tool_with("test_task_slow", json!({"ms": 60_000}), opts);
    let stop = async {
        // Once the task exists and has been polled once.
        wait::until("the task made and polled", || {
            result_types(&rec).contains(&"task".to_owned())
                && methods_sent(&rec).contains(&methods::TASKS_GET.to_owned())
        })
        .await;
        cancel.cancel();
    };
    let (r, ()) = tokio::join!(call, stop);
    assert!(matches!(r, Err(ClientError::TaskCancelled(_))), "{r:?}");
    let sent = methods_sent(&rec);
    assert!(sent.contains(&methods::TASKS_CANCEL.to_owned()), "{sent:?}");
    assert!(
        !sent.contains(&methods::NOTIFICATIONS_CANCELLED.to_owned()),
        "D26-140: never notifications/cancelled for a task: {sent:?}"
    );
}

#[tokio::test]
async fn d26_130_without_the_extension_no_task_is_made() {
    let (c, rec) = connect(false).await;
    let r = c
        .call_tool("test_task_slow", json!({"ms": 50}))
        .await
        .unwrap();
    assert_eq!(text(&r), "slept 50 ms");
    assert!(!result_types(&rec).contains(&"task".to_owned()));
    // A tool that runs only as a task is refused with -32021 naming the extension (D26-132).
    let err = c
        .call_tool("test_task_required", json!({}))
        .await
        .unwrap_err();
    let ClientError::Request(RequestError::Rejected(e)) = err else {
        panic!("{err:?}")
    };
    assert_eq!(e.code.0, -32021, "{e:?}");
}
