//! A thousand tool tasks running at once, over stdio framing (a byte pipe in the process) and
//! over Streamable HTTP on 127.0.0.1, between our client and our server: every task is created,
//! listed while it runs, and collected with exactly its own result; nothing is lost. Every frame
//! the client sees is checked against the 2025-11-25 schema. Then the reverse direction over
//! Streamable HTTP: the server runs sampling as a task on the client.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use switchboard::client::{Client, ClientSession};
use switchboard::jsonrpc::{SessionConfig, Transport};
use switchboard::server::{Server, ToolError};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::sampling::{
    CreateMessageRequestParams, CreateMessageResult, SamplingMessage, SamplingMessageContentBlock,
};
use switchboard::types::tasks::TaskStatus;
use switchboard::types::tools::{CallToolResult, TaskSupport, Tool};
use switchboard_tests::{Recorder, validate_session};
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;

const TASKS: u64 = 1_000;
/// Requests a side keeps in flight at once (the engine answers more with -32603).
const AT_ONCE: usize = 100;

/// `gated`: waits until the gate opens, then answers with its argument `n`.
fn server(gate: watch::Receiver<bool>) -> Server {
    Server::builder(Implementation::new("tasks-wire", "1"))
        .tool(
            Tool::new("gated", json!({"type": "object"})).with_task_support(TaskSupport::Required),
            move |call| {
                let mut gate = gate.clone();
                async move {
                    let _ = gate.wait_for(|open| *open).await;
                    let n = call.arguments.get("n").and_then(Value::as_u64);
                    Ok(CallToolResult::text(format!("task {}", n.unwrap_or(0))))
                }
            },
        )
        .build()
        .expect("server")
}

async fn connect<T: Transport>(t: T, rec: &Recorder) -> ClientSession {
    Client::builder(Implementation::new("tasks-wire-client", "1"))
        .era(switchboard::client::EraMode::Legacy)
        .session_config(SessionConfig::default().with_frame_hook(rec.hook()))
        .build()
        .connect(t)
        .await
        .expect("connect")
}

/// Starts `TASKS` tasks, checks they all run at once, opens the gate, collects every result.
async fn thousand_tasks(c: ClientSession, gate: watch::Sender<bool>, rec: &Recorder) {
    let limit = Arc::new(Semaphore::new(AT_ONCE));
    let mut started = JoinSet::new();
    for n in 0..TASKS {
        let c = c.clone();
        let limit = limit.clone();
        started.spawn(async move {
            let _slot = limit.acquire_owned().await.expect("open");
            let t = c
                .start_tool_task("gated", json!({"n": n}), None)
                .await
                .expect("task created");
            (n, t)
        });
    }
    let mut tasks = Vec::new();
    while let Some(r) = started.join_next().await {
        tasks.push(r.expect("join"));
    }
    assert_eq!(tasks.len(), TASKS as usize);
    let listed = c.list_tasks().await.expect("list");
    assert_eq!(listed.len(), TASKS as usize, "TK-18: every task listed");
    assert!(
        listed.iter().all(|t| t.status == TaskStatus::Working),
        "all running at once"
    );
    gate.send(true).expect("gate");
    let mut collected = JoinSet::new();
    for (n, t) in tasks {
        let c = c.clone();
        let limit = limit.clone();
        collected.spawn(async move {
            let _slot = limit.acquire_owned().await.expect("open");
            let r = c.tool_task_result(&t.task_id).await.expect("result");
            (n, r)
        });
    }
    let mut seen = 0;
    while let Some(r) = collected.join_next().await {
        let (n, r) = r.expect("join");
        assert_eq!(
            r.content[0].as_text(),
            Some(format!("task {n}").as_str()),
            "TK-15: its own result"
        );
        seen += 1;
    }
    assert_eq!(seen, TASKS);
    let listed = c.list_tasks().await.expect("list");
    assert!(
        listed.iter().all(|t| t.status == TaskStatus::Completed),
        "nothing left behind"
    );
    let checked = validate_session(&rec.frames(), "2025-11-25");
    assert!(checked > 4 * TASKS as usize, "{checked} frames checked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_tasks_at_once_over_stdio() {
    let (gate, rx) = watch::channel(false);
    let s = server(rx);
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let (sr, sw) = tokio::io::split(server_end);
    s.serve(switchboard::transport::StdioTransport::new(sr, sw))
        .expect("serve");
    let (cr, cw) = tokio::io::split(client_end);
    let rec = Recorder::default();
    let c = connect(switchboard::transport::StdioTransport::new(cr, cw), &rec).await;
    tokio::time::timeout(Duration::from_secs(120), thousand_tasks(c, gate, &rec))
        .await
        .expect("in time");
}

/// Serves `s` over Streamable HTTP on 127.0.0.1; returns the endpoint and the stop switch.
async fn serve_http(s: &Server) -> (String, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let service = switchboard::http::StreamableHttpService::new(
        switchboard::server_http::session_factory(s),
        switchboard::http::HttpConfig::for_bind_address(addr),
    );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = switchboard::http::serve_with_shutdown(listener, service, async move {
            let _ = stopped.await;
        })
        .await;
    });
    (format!("http://{addr}/mcp"), stop)
}

fn http_transport(url: &str) -> switchboard::http_client::HttpClientTransport {
    switchboard::http_client::HttpClientTransport::connect(
        url,
        switchboard::http_client::HttpClientConfig::default(),
    )
    .expect("transport")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_tasks_at_once_over_streamable_http() {
    let (gate, rx) = watch::channel(false);
    let s = server(rx);
    let (url, stop) = serve_http(&s).await;
    let rec = Recorder::default();
    let c = connect(http_transport(&url), &rec).await;
    tokio::time::timeout(Duration::from_secs(120), thousand_tasks(c, gate, &rec))
        .await
        .expect("in time");
    let _ = stop.send(());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_runs_as_a_task_on_the_client_over_streamable_http() {
    let s = Server::builder(Implementation::new("reverse-http", "1"))
        .tool(
            Tool::new("model_task", json!({"type": "object"})),
            |call| async move {
                let params =
                    CreateMessageRequestParams::new(vec![SamplingMessage::user_text("2+2?")], 10);
                let r = call
                    .cx
                    .create_message_as_task(params, None)
                    .await
                    .map_err(|e| ToolError::new(e.to_string()))?;
                Ok(CallToolResult::text(format!("model {}", r.model)))
            },
        )
        .build()
        .expect("server");
    let (url, stop) = serve_http(&s).await;
    let rec = Recorder::default();
    let c = Client::builder(Implementation::new("reverse-http-client", "1"))
        .era(switchboard::client::EraMode::Legacy)
        .sampling(|_, _| async {
            Ok(CreateMessageResult::new(
                "m1",
                SamplingMessageContentBlock::text("4"),
            ))
        })
        .enable_tasks()
        .session_config(SessionConfig::default().with_frame_hook(rec.hook()))
        .build()
        .connect(http_transport(&url))
        .await
        .expect("connect");
    let r = c.call_tool("model_task", json!({})).await.expect("call");
    assert_eq!(r.content[0].as_text(), Some("model m1"), "{r:?}");
    let frames = rec.frames();
    for method in ["tasks/get", "tasks/result"] {
        assert!(
            frames.iter().any(|(_, t)| t.contains(method)),
            "the server used {method}"
        );
    }
    assert!(validate_session(&frames, "2025-11-25") > 8);
    let _ = stop.send(());
}
