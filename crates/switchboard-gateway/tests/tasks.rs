//! Tasks through the gateway, both eras: a client's task is the gateway's (its id minted by the
//! gateway's server, owned by the client's session), run on the upstream as a task of the
//! gateway's session there; `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel` are the
//! gateway's, a cancel reaches the upstream's task, and the status notifications go to the
//! client that created the task. The gateway offers tasks only as far as its upstreams do.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;
use switchboard_client::{Client, ClientSession, EraMode};
use switchboard_gateway::{Gateway, GatewayConfig, UpstreamConfig, UpstreamKind};
use switchboard_server::{Server, ToolError};
use switchboard_test_support::wait;
use switchboard_types::catalogue::TaskStatus as TaskStatusChanged;
use switchboard_types::lifecycle::Implementation;
use switchboard_types::meta::RELATED_TASK_KEY;
use switchboard_types::tasks::TaskStatus;
use switchboard_types::tools::{CallToolResult, TaskSupport, Tool};

mod common;

use common::{in_memory, limits, obj, text_of};

/// What the tests hold of an upstream: the gate its `work` tool waits on, and whether its
/// `hang` tool's work was dropped (the upstream's task cancelled).
#[derive(Clone, Default)]
struct Upstream {
    release: Arc<tokio::sync::Notify>,
    dropped: Arc<AtomicBool>,
}

/// Sets its flag when dropped (the work holding it was stopped).
struct OnDrop(Arc<AtomicBool>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// An upstream whose `work` (tasks optional) waits for the test's release and says whether it
/// ran as the upstream's task, and whose `hang` waits until stopped; `plain` forbids tasks.
fn tasked(tag: &'static str, up: &Upstream) -> Server {
    let (release, dropped) = (up.release.clone(), up.dropped.clone());
    Server::builder(Implementation::new(tag, "1"))
        .tool(
            Tool::new("work", obj()).with_task_support(TaskSupport::Optional),
            move |call| {
                let release = release.clone();
                async move {
                    let as_task = call.cx.run_as_task().await;
                    release.notified().await;
                    Ok(CallToolResult::text(format!(
                        "{tag}: done (task: {as_task})"
                    )))
                }
            },
        )
        .tool(
            Tool::new("hang", obj()).with_task_support(TaskSupport::Optional),
            move |call| {
                let guard = OnDrop(dropped.clone());
                async move {
                    let _guard = guard;
                    call.cx.cancellation().cancelled().await;
                    Err(ToolError::new("cancelled"))
                }
            },
        )
        .tool(
            Tool::new("ask", obj()).with_task_support(TaskSupport::Optional),
            |call| async move {
                let name = common::elicit_name(&call.cx).await?;
                Ok(CallToolResult::text(format!(
                    "hello {}",
                    name.as_deref().unwrap_or("?")
                )))
            },
        )
        .tool(
            Tool::new("greet", obj()).with_task_support(TaskSupport::Required),
            |call| async move {
                let params: switchboard_types::elicitation::ElicitRequestParams =
                    serde_json::from_value(json!({
                        "mode": "form", "message": "your name?",
                        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
                    }))
                    .expect("params");
                let r = call
                    .cx
                    .elicit_as("user_name", params)
                    .await
                    .map_err(|e| ToolError::new(e.to_string()))?;
                let as_task = call.cx.run_as_task().await;
                let r = serde_json::to_value(r).expect("a result");
                let name = r.pointer("/content/name").and_then(|v| v.as_str()).unwrap_or("?");
                Ok(CallToolResult::text(format!("Hello, {name}! (task: {as_task})")))
            },
        )
        .tool(Tool::new("report", obj()).with_task_support(TaskSupport::Optional), {
            let release = up.release.clone();
            move |call| {
                let release = release.clone();
                async move {
                    let kept = call.cx.set_task_message(Some("halfway")).await;
                    release.notified().await;
                    Ok(CallToolResult::text(format!("{tag}: reported (kept: {kept})")))
                }
            }
        })
        .tool(
            Tool::new("ttl", obj()).with_task_support(TaskSupport::Optional),
            move |call| async move {
                Ok(CallToolResult::text(format!(
                    "{tag}: ttl {:?}",
                    call.cx.task_ttl()
                )))
            },
        )
        .tool(Tool::new("plain", obj()), move |_| async move {
            Ok(CallToolResult::text(format!("{tag}: plain")))
        })
        .enable_tasks()
        // Polled often (the gateway follows an upstream task's status message by polling).
        .task_store(Arc::new(switchboard_client::InMemoryTaskStore::new(
            switchboard_client::TaskLimits::default().with_poll_interval(50),
        )))
        .build()
        .expect("a server")
}

/// A server with no tasks at all.
fn untasked() -> Server {
    Server::builder(Implementation::new("plain", "1"))
        .tool(Tool::new("echo", obj()), |_| async {
            Ok(CallToolResult::text("echo"))
        })
        .build()
        .expect("a server")
}

/// A gateway in front of upstreams `a` and `b` (both offering tasks) on `era`.
async fn gateway(era: EraMode) -> (Gateway, Upstream, Upstream) {
    let (a, b) = (Upstream::default(), Upstream::default());
    let mut config = GatewayConfig::default();
    config.limits = limits();
    config.upstreams = vec![
        UpstreamConfig::new(
            "a",
            UpstreamKind::Custom(in_memory(tasked("a", &a), Arc::default())),
        )
        .with_era(era),
        UpstreamConfig::new(
            "b",
            UpstreamKind::Custom(in_memory(tasked("b", &b), Arc::default())),
        )
        .with_era(era),
    ];
    let gateway = Gateway::start(config).expect("a gateway");
    gateway.ready().await;
    assert_eq!(gateway.is_up("a"), Some(true));
    assert_eq!(gateway.is_up("b"), Some(true));
    (gateway, a, b)
}

/// A 2025-11-25 client of the gateway that records the task status notifications it gets.
async fn client(gateway: &Gateway) -> (ClientSession, Arc<Mutex<Vec<(String, TaskStatus)>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let c = Client::builder(Implementation::new("front", "1"))
        .era(EraMode::Legacy)
        .notification::<TaskStatusChanged, _>(move |p, _| {
            s.lock()
                .expect("lock")
                .push((p.task.task_id.clone(), p.task.status));
        })
        .build();
    let session = common::connect(gateway, c).await;
    session.list_tools().await.expect("tools");
    (session, seen)
}

fn related_task(result: &CallToolResult) -> Option<String> {
    let meta = serde_json::to_value(result.meta.as_ref()?).ok()?;
    meta.get(RELATED_TASK_KEY)?
        .get("taskId")?
        .as_str()
        .map(str::to_owned)
}

/// `[TK-7]` `[TK-15]` `[TK-16]` `[TK-23]`: a task-augmented call through the gateway is the
/// gateway's task, run as the upstream's own task; two upstreams' tasks get the gateway's
/// distinct ids, are listed for their client, their results come from the right upstream
/// tagged with the gateway's id, and the client that created each is told it completed.
#[tokio::test]
async fn a_task_through_the_gateway_runs_as_the_upstreams_task_under_the_gateways_id() {
    let (gateway, a, b) = gateway(EraMode::Legacy).await;
    let (c, statuses) = client(&gateway).await;
    let ta = c
        .start_tool_task("a_work", json!({}), None)
        .await
        .expect("a task");
    let tb = c
        .start_tool_task("b_work", json!({}), None)
        .await
        .expect("a task");
    assert_eq!(ta.status, TaskStatus::Working);
    assert_ne!(ta.task_id, tb.task_id);
    let mut listed: Vec<String> = c
        .list_tasks()
        .await
        .expect("listed")
        .into_iter()
        .map(|t| t.task_id)
        .collect();
    listed.sort();
    let mut ids = vec![ta.task_id.clone(), tb.task_id.clone()];
    ids.sort();
    assert_eq!(listed, ids);
    assert_eq!(
        c.get_task(&ta.task_id).await.expect("got").status,
        TaskStatus::Working
    );
    a.release.notify_one();
    b.release.notify_one();
    let ra = c.tool_task_result(&ta.task_id).await.expect("a's result");
    let rb = c.tool_task_result(&tb.task_id).await.expect("b's result");
    assert_eq!(text_of(&ra), "a: done (task: true)");
    assert_eq!(text_of(&rb), "b: done (task: true)");
    assert_eq!(related_task(&ra), Some(ta.task_id.clone()));
    assert_eq!(related_task(&rb), Some(tb.task_id.clone()));
    wait::until("both completions are notified", || {
        let s = statuses.lock().expect("lock");
        [&ta.task_id, &tb.task_id]
            .iter()
            .all(|id| s.contains(&((*id).clone(), TaskStatus::Completed)))
    })
    .await;
}

/// `[TK-12]`: the time to live a client asks for its task reaches the upstream's task, which
/// the gateway's runs as (and the gateway's task keeps it too).
#[tokio::test]
async fn tk_12_the_ttl_a_client_asks_for_reaches_the_upstreams_task() {
    let (gateway, _a, _b) = gateway(EraMode::Legacy).await;
    let (c, _) = client(&gateway).await;
    let t = c
        .start_tool_task("a_ttl", json!({}), Some(120_000))
        .await
        .expect("a task");
    assert_eq!(t.ttl, Some(120_000));
    let r = c.tool_task_result(&t.task_id).await.expect("result");
    assert_eq!(text_of(&r), "a: ttl Some(120000)");
    let t = c
        .start_tool_task("b_ttl", json!({}), None)
        .await
        .expect("a task");
    let r = c.tool_task_result(&t.task_id).await.expect("result");
    assert_eq!(text_of(&r), "b: ttl None");
}

/// `[TK-20]`: the status message an upstream's task shows (`statusMessage`) is the gateway's
/// task's too, while it runs.
#[tokio::test]
async fn tk_20_an_upstream_tasks_status_message_is_the_gateways_tasks() {
    let (gateway, a, _b) = gateway(EraMode::Legacy).await;
    let (c, _) = client(&gateway).await;
    let t = c
        .start_tool_task("a_report", json!({}), None)
        .await
        .expect("a task");
    let deadline = wait::Deadline::new("the gateway's task shows the upstream's message");
    loop {
        let got = c.get_task(&t.task_id).await.expect("got");
        if got.status_message.as_deref() == Some("halfway") {
            assert_eq!(got.status, TaskStatus::Working);
            break;
        }
        deadline.tick().await;
    }
    a.release.notify_one();
    let r = c.tool_task_result(&t.task_id).await.expect("result");
    assert_eq!(text_of(&r), "a: reported (kept: true)");
}

/// `[TK-23]` `[SEC]`: another client of the gateway cannot get, collect, cancel or list a
/// client's task, and is not told of it.
#[tokio::test]
async fn another_client_cannot_reach_a_clients_task_through_the_gateway() {
    let (gateway, a, _b) = gateway(EraMode::Legacy).await;
    let (mine, _) = client(&gateway).await;
    let (other, heard) = client(&gateway).await;
    let t = mine
        .start_tool_task("a_work", json!({}), None)
        .await
        .expect("a task");
    assert!(other.get_task(&t.task_id).await.is_err());
    assert!(other.cancel_task(&t.task_id).await.is_err());
    assert!(other.list_tasks().await.expect("listed").is_empty());
    a.release.notify_one();
    let r = mine.tool_task_result(&t.task_id).await.expect("result");
    assert_eq!(text_of(&r), "a: done (task: true)");
    assert!(other.tool_task_result(&t.task_id).await.is_err());
    assert!(heard.lock().expect("lock").is_empty());
}

/// `[TK-14]`: a client's `tasks/cancel` of its gateway task cancels the upstream's task (its
/// work stops there), and the task is `cancelled`.
#[tokio::test]
async fn cancelling_the_gateways_task_cancels_the_upstreams() {
    let (gateway, a, _b) = gateway(EraMode::Legacy).await;
    let (c, _) = client(&gateway).await;
    let t = c
        .start_tool_task("a_hang", json!({}), None)
        .await
        .expect("a task");
    let cancelled = c.cancel_task(&t.task_id).await.expect("cancelled");
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    wait::until("the upstream's task stops", || {
        a.dropped.load(Ordering::SeqCst)
    })
    .await;
    assert_eq!(
        c.get_task(&t.task_id).await.expect("got").status,
        TaskStatus::Cancelled
    );
}

/// The served tools keep the task support their upstream declared when the upstream offers
/// tasks, and a tool that forbids them is refused as a task.
#[tokio::test]
async fn tools_keep_their_upstreams_task_support_when_it_offers_tasks() {
    let (gateway, _a, _b) = gateway(EraMode::Legacy).await;
    let (c, _) = client(&gateway).await;
    assert!(c.server_capabilities().supports_task_tool_calls());
    let tools = c.list_tools().await.expect("tools");
    let support = |name: &str| {
        tools
            .iter()
            .find(|t| t.name == name)
            .map(Tool::task_support)
    };
    assert_eq!(support("a_work"), Some(TaskSupport::Optional));
    assert_eq!(support("a_plain"), Some(TaskSupport::Forbidden));
    assert!(c.start_tool_task("a_plain", json!({}), None).await.is_err());
    let r = c.call_tool("a_plain", json!({})).await.expect("called");
    assert_eq!(text_of(&r), "a: plain");
}

/// The gateway offers tasks only as far as its upstreams do: in front of an upstream without
/// tasks, neither `initialize` nor `server/discover` offers them.
#[tokio::test]
async fn a_gateway_whose_upstreams_offer_no_tasks_offers_none_in_either_era() {
    let mut config = GatewayConfig::default();
    config.limits = limits();
    config.upstreams = vec![UpstreamConfig::new(
        "p",
        UpstreamKind::Custom(in_memory(untasked(), Arc::default())),
    )];
    let gateway = Gateway::start(config).expect("a gateway");
    gateway.ready().await;
    assert_eq!(gateway.is_up("p"), Some(true));
    let legacy = common::front(&gateway, EraMode::Legacy).await;
    assert!(legacy.server_capabilities().tasks.is_none());
    let modern = common::front(
        &gateway,
        EraMode::Pin(switchboard_types::ProtocolVersion::V2026_07_28),
    )
    .await;
    let caps = serde_json::to_value(modern.server_capabilities()).expect("json");
    assert!(caps.get("tasks").is_none(), "{caps}");
    assert!(
        caps.pointer("/extensions/io.modelcontextprotocol~1tasks")
            .is_none(),
        "{caps}"
    );
    // In front of upstreams that offer them, both eras are offered tasks.
    let (gateway, _a, _b) = gateway_with_tasks().await;
    let modern = common::front(
        &gateway,
        EraMode::Pin(switchboard_types::ProtocolVersion::V2026_07_28),
    )
    .await;
    let caps = serde_json::to_value(modern.server_capabilities()).expect("json");
    assert!(
        caps.pointer("/extensions/io.modelcontextprotocol~1tasks")
            .is_some(),
        "{caps}"
    );
}

async fn gateway_with_tasks() -> (Gateway, Upstream, Upstream) {
    gateway(EraMode::Legacy).await
}

/// `[D26-130]` `[D26-135]`: a 2026-07-28 client declaring the tasks extension calls a tool
/// through the gateway; the call becomes the gateway's task, run as the 2025 upstream's task,
/// and the client, following it, gets the upstream's result.
#[tokio::test]
async fn a_2026_call_through_the_gateway_becomes_a_task_run_as_the_upstreams() {
    let (gateway, a, _b) = gateway(EraMode::Legacy).await;
    let c = common::connect(
        &gateway,
        Client::builder(Implementation::new("front", "1"))
            .era(EraMode::Pin(
                switchboard_types::ProtocolVersion::V2026_07_28,
            ))
            .tasks_extension()
            .build(),
    )
    .await;
    c.list_tools().await.expect("tools");
    let call = tokio::spawn({
        let c = c.clone();
        async move { c.call_tool("a_work", json!({})).await }
    });
    // Released until the call ends (a release before the upstream waits is kept by `Notify`).
    a.release.notify_one();
    let r = call.await.expect("joined").expect("called");
    assert_eq!(text_of(&r), "a: done (task: true)");
}

/// The `resultType`s of the results a client's session received, in order, recorded by its
/// frame hook.
type Seen = Arc<Mutex<Vec<serde_json::Value>>>;

/// A 2026-07-28 client of the gateway declaring the tasks extension, answering an elicitation
/// with the name "Alice", whose received results are recorded.
async fn modern_client(gateway: &Gateway) -> (ClientSession, Seen) {
    let seen: Seen = Arc::default();
    let hook = {
        let seen = seen.clone();
        switchboard_jsonrpc::FrameHook::new(move |e| {
            if e.direction == switchboard_jsonrpc::Flow::Inbound
                && let Ok(v) = serde_json::from_str::<serde_json::Value>(e.text)
                && v.get("result").is_some()
            {
                seen.lock().expect("lock").push(v["result"].clone());
            }
        })
    };
    let c = common::connect(
        gateway,
        Client::builder(Implementation::new("front", "1"))
            .era(EraMode::Pin(
                switchboard_types::ProtocolVersion::V2026_07_28,
            ))
            .tasks_extension()
            .session_config(switchboard_jsonrpc::SessionConfig::default().with_frame_hook(hook))
            .elicitation(|_, _| async {
                Ok(serde_json::from_value(
                    json!({"action": "accept", "content": {"name": "Alice"}}),
                )
                .expect("a result"))
            })
            .build(),
    )
    .await;
    c.list_tools().await.expect("tools");
    (c, seen)
}

/// The `resultType`s of the `tools/call` answers among `seen`: `input_required`, `task`, or
/// `complete` for the tool's result itself (not the results of `tasks/get`).
fn call_rounds(seen: &Seen) -> Vec<String> {
    seen.lock()
        .expect("lock")
        .iter()
        .filter(|r| {
            r.get("content").is_some()
                || r.get("inputRequests").is_some()
                || r.get("resultType") == Some(&json!("task"))
        })
        .filter_map(|r| {
            r.get("resultType")
                .and_then(|t| t.as_str())
                .map(str::to_owned)
        })
        .collect()
}

/// `[D26-130]` `[D26-131]`: a 2026-07-28 upstream decides which calls become tasks, and the
/// gateway follows it: its tools are served as supporting tasks (they declare nothing there);
/// a 2025 client's plain call stays plain upstream, its task is the upstream's task too; a
/// 2026-07-28 client's call becomes the gateway's task when the upstream answers with one, and
/// a call the upstream answers at once is answered at once.
#[tokio::test]
async fn d26_130_a_2026_upstream_decides_which_calls_through_the_gateway_become_tasks() {
    let (gateway, a, b) = gateway(EraMode::Pin(
        switchboard_types::ProtocolVersion::V2026_07_28,
    ))
    .await;
    let (c, _) = client(&gateway).await;
    assert!(c.server_capabilities().supports_task_tool_calls());
    let tools = c.list_tools().await.expect("tools");
    assert!(
        tools
            .iter()
            .all(|t| t.task_support() == TaskSupport::Optional)
    );
    let call = tokio::spawn({
        let c = c.clone();
        async move { c.call_tool("a_work", json!({})).await }
    });
    a.release.notify_one();
    let r = call.await.expect("joined").expect("called");
    assert_eq!(text_of(&r), "a: done (task: false)");
    let t = c
        .start_tool_task("a_work", json!({}), None)
        .await
        .expect("a task");
    a.release.notify_one();
    let r = c.tool_task_result(&t.task_id).await.expect("result");
    assert_eq!(text_of(&r), "a: done (task: true)");
    let (m, seen) = modern_client(&gateway).await;
    let call = tokio::spawn({
        let m = m.clone();
        async move { m.call_tool("b_work", json!({})).await }
    });
    b.release.notify_one();
    let r = call.await.expect("joined").expect("called");
    assert_eq!(text_of(&r), "b: done (task: true)");
    assert_eq!(call_rounds(&seen), ["task"]);
    seen.lock().expect("lock").clear();
    let r = m.call_tool("b_plain", json!({})).await.expect("called");
    assert_eq!(text_of(&r), "b: plain");
    assert_eq!(call_rounds(&seen), ["complete"]);
}

/// `[D26-34]` `[D26-130]` SEP-2663's composition with multi round-trip requests
/// (`tasks-mrtr-composition`) through the gateway: the 2026-07-28 upstream's tool asks for
/// input first, then becomes a task; the gateway's call is not a task while the upstream asks
/// (round 1 is the client's input-required round, under the upstream's key, with no task id),
/// and becomes the gateway's task on the round where the upstream's call becomes one, whose
/// result carries the answer.
#[tokio::test]
async fn d26_34_input_rounds_then_a_task_from_a_2026_upstream_through_the_gateway() {
    let (gateway, _a, _b) = gateway(EraMode::Pin(
        switchboard_types::ProtocolVersion::V2026_07_28,
    ))
    .await;
    let (m, seen) = modern_client(&gateway).await;
    let r = m.call_tool("a_greet", json!({})).await.expect("called");
    assert_eq!(text_of(&r), "Hello, Alice! (task: true)");
    assert_eq!(call_rounds(&seen), ["input_required", "task"]);
    let results = seen.lock().expect("lock").clone();
    let round1 = results
        .iter()
        .find(|r| r.get("resultType") == Some(&json!("input_required")))
        .expect("round 1");
    assert!(
        round1["inputRequests"].get("user_name").is_some(),
        "{round1}"
    );
    assert!(round1.get("taskId").is_none(), "{round1}");
    let created = results
        .iter()
        .find(|r| r.get("resultType") == Some(&json!("task")))
        .expect("round 2");
    assert!(created.get("taskId").is_some(), "{created}");
    assert!(created.get("requestState").is_none(), "{created}");
}

/// `[TK-13]` `[SEC]`: an upstream task that asks for input reaches the client that created the
/// gateway's task (and no other), through that task: the client is told the task waits for
/// input, answers, and the result carries its answer.
#[tokio::test]
async fn an_upstream_tasks_input_request_reaches_the_client_that_created_the_task() {
    let (gateway, _a, _b) = gateway(EraMode::Legacy).await;
    let elicited = Arc::new(Mutex::new(Vec::new()));
    let statuses = Arc::new(Mutex::new(Vec::new()));
    let make = |name: &'static str| {
        let (e, s) = (elicited.clone(), statuses.clone());
        Client::builder(Implementation::new(name, "1"))
            .era(EraMode::Legacy)
            .elicitation(move |_, _| {
                e.lock().expect("lock").push(name);
                async move {
                    Ok(serde_json::from_value(
                        json!({"action": "accept", "content": {"name": name}}),
                    )
                    .expect("a result"))
                }
            })
            .notification::<TaskStatusChanged, _>(move |p, _| {
                s.lock().expect("lock").push((name, p.task.status));
            })
            .build()
    };
    let mine = common::connect(&gateway, make("mine")).await;
    let other = common::connect(&gateway, make("other")).await;
    mine.list_tools().await.expect("tools");
    other.list_tools().await.expect("tools");
    let t = mine
        .start_tool_task("a_ask", json!({}), None)
        .await
        .expect("a task");
    let r = mine.tool_task_result(&t.task_id).await.expect("result");
    assert_eq!(text_of(&r), "hello mine");
    assert_eq!(*elicited.lock().expect("lock"), ["mine"]);
    wait::until("the completion is notified", || {
        statuses
            .lock()
            .expect("lock")
            .contains(&("mine", TaskStatus::Completed))
    })
    .await;
    let s = statuses.lock().expect("lock").clone();
    assert!(s.contains(&("mine", TaskStatus::InputRequired)), "{s:?}");
    assert!(s.iter().all(|(who, _)| *who == "mine"), "{s:?}");
}

/// `[D26-130]` `[D26-138]`: a 2026-07-28 client's call through the gateway becomes the
/// gateway's task while the upstream's task asks that client for input: the upstream session
/// of the client's own outlives the request's exchange (which ends when the call becomes a
/// task) until the task ends, the task is `input_required` until the client answers with
/// `tasks/update`, and the result carries its answer.
#[tokio::test]
async fn a_2026_clients_task_through_the_gateway_asks_it_for_input_on_its_own_session() {
    let (gateway, _a, _b) = gateway(EraMode::Legacy).await;
    let asked = Arc::new(Mutex::new(0));
    let n = asked.clone();
    let c = common::connect(
        &gateway,
        Client::builder(Implementation::new("front", "1"))
            .era(EraMode::Pin(
                switchboard_types::ProtocolVersion::V2026_07_28,
            ))
            .tasks_extension()
            .elicitation(move |_, _| {
                *n.lock().expect("lock") += 1;
                async move {
                    Ok(serde_json::from_value(
                        json!({"action": "accept", "content": {"name": "modern"}}),
                    )
                    .expect("a result"))
                }
            })
            .build(),
    )
    .await;
    let r = c.call_tool("a_ask", json!({})).await.expect("called");
    assert_eq!(text_of(&r), "hello modern");
    assert_eq!(*asked.lock().expect("lock"), 1);
}

/// `[D26-140]`: a 2026-07-28 client's cancel of the gateway's task (`tasks/cancel`) stops the
/// gateway's work, and with it the 2026-07-28 upstream's task, cancelled there with
/// `tasks/cancel`: its work stops.
#[tokio::test]
async fn d26_140_cancelling_the_gateways_task_cancels_the_2026_upstreams_task() {
    let (gateway, _a, b) = gateway(EraMode::Pin(
        switchboard_types::ProtocolVersion::V2026_07_28,
    ))
    .await;
    let (m, seen) = modern_client(&gateway).await;
    let cancel = switchboard_client::CancellationToken::new();
    let call = tokio::spawn({
        let (m, cancel) = (m.clone(), cancel.clone());
        async move {
            m.request::<_, CallToolResult>(
                switchboard_types::methods::TOOLS_CALL,
                json!({"name": "b_hang"}),
                switchboard_client::RequestOptions::default().with_cancel(cancel),
            )
            .await
        }
    });
    wait::until("the gateway's call is a task", || {
        call_rounds(&seen) == ["task"]
    })
    .await;
    assert!(!b.dropped.load(Ordering::SeqCst));
    cancel.cancel();
    let r = call.await.expect("joined");
    assert!(r.is_err(), "{r:?}");
    wait::until("the upstream's task stops", || {
        b.dropped.load(Ordering::SeqCst)
    })
    .await;
}
