//! Restarting an upstream in place (`Gateway::restart`, what `switchboard dev` does after a
//! build): the open client session lives through it and is told only what changed.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;
use switchboard_client::{Client, ClientError, EraMode};
use switchboard_gateway::{Connector, Gateway, GatewayConfig, UpstreamConfig, UpstreamKind};
use switchboard_jsonrpc::{Flow, FrameHook};
use switchboard_server::Server;
use switchboard_test_support::wait;
use switchboard_types::lifecycle::Implementation;
use switchboard_types::methods;
use switchboard_types::tools::{CallToolResult, Tool};

mod common;

use common::*;

/// Build `n` of an upstream: `add`, and from build 2 on `mul` too; the same prompt throughout.
fn build(n: usize) -> Server {
    let mut b = Server::builder(Implementation::new("dev", format!("0.{n}.0")))
        .instructions(format!("the dev server, build {n}"))
        .tool(Tool::new("add", obj()), move |_| async move {
            Ok(CallToolResult::text(format!("build {n}")))
        })
        .prompt(
            switchboard_types::prompts::Prompt::new("greet"),
            |_| async move { Ok(switchboard_types::prompts::GetPromptResult::new(vec![])) },
        );
    if n >= 2 {
        b = b.tool(Tool::new("mul", obj()), |_| async move {
            Ok(CallToolResult::text("mul"))
        });
    }
    b.build().expect("a server")
}

/// A connector whose `k`th connection serves build `k` (from 1), and refuses once `broken`.
fn builds(count: Arc<AtomicUsize>, broken: Arc<AtomicUsize>) -> Connector {
    Arc::new(move |client: Client| {
        let (count, broken) = (count.clone(), broken.clone());
        Box::pin(async move {
            if broken.load(Ordering::SeqCst) > 0 {
                return Err(ClientError::Handshake(
                    "the new build does not start".into(),
                ));
            }
            let n = count.fetch_add(1, Ordering::SeqCst) + 1;
            let (ours, theirs) = switchboard_jsonrpc::memory::pair();
            build(n)
                .serve(theirs)
                .map_err(|e| ClientError::Handshake(e.to_string()))?;
            client.connect(ours).await
        })
    })
}

/// The methods of the notifications the gateway sent its clients.
type Sent = Arc<Mutex<Vec<String>>>;

fn gateway(count: Arc<AtomicUsize>, broken: Arc<AtomicUsize>) -> (Gateway, Sent) {
    gateway_with(count, broken, false)
}

fn gateway_with(
    count: Arc<AtomicUsize>,
    broken: Arc<AtomicUsize>,
    pass_server_info: bool,
) -> (Gateway, Sent) {
    let sent: Sent = Arc::default();
    let mut config = GatewayConfig::default();
    config.pass_server_info = pass_server_info;
    config.limits = limits();
    config.upstreams = vec![UpstreamConfig::new(
        "",
        UpstreamKind::Custom(builds(count, broken)),
    )];
    config.frame_hook = Some(FrameHook::new({
        let sent = sent.clone();
        move |e| {
            if let (Flow::Outbound, None, Some(m)) = (e.direction, e.id, e.method) {
                sent.lock().expect("lock").push(m.to_owned());
            }
        }
    }));
    (Gateway::start(config).expect("a gateway"), sent)
}

#[tokio::test]
async fn a_restart_in_place_tells_the_open_session_only_what_changed() {
    let (count, broken) = (Arc::new(AtomicUsize::new(0)), Arc::default());
    let (gateway, sent) = gateway(count.clone(), broken);
    gateway.ready().await;
    let client = front(&gateway, EraMode::Legacy).await;
    assert_eq!(names(&client.list_tools().await.expect("tools")), ["add"]);
    let changed = wait::spawn_polled({
        let c = client.clone();
        async move { c.tools_changed().await.expect("list_changed") }
    })
    .await;
    gateway.restart("").await.expect("restarted");
    let tools = tokio::time::timeout(wait::DEADLINE, changed)
        .await
        .expect("told in time")
        .expect("joined");
    assert_eq!(names(&tools), ["add", "mul"]);
    // The same session, now served by build 2.
    let r = client.call_tool("add", json!({})).await.expect("a result");
    assert_eq!(text_of(&r), "build 2");
    assert_eq!(count.load(Ordering::SeqCst), 2);
    // Everything the restart sent is in by the time a later answer is: tools changed, the
    // prompts (the same in both builds) did not.
    client.ping().await.expect("pong");
    let sent = sent.lock().expect("lock").clone();
    assert!(
        sent.iter()
            .any(|m| m == methods::NOTIFICATIONS_TOOLS_LIST_CHANGED),
        "{sent:?}"
    );
    assert!(
        !sent
            .iter()
            .any(|m| m == methods::NOTIFICATIONS_PROMPTS_LIST_CHANGED),
        "{sent:?}"
    );
}

#[tokio::test]
async fn a_restart_that_fails_leaves_the_running_build_serving() {
    let (count, broken) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (gateway, sent) = gateway(count.clone(), broken.clone());
    gateway.ready().await;
    let client = front(&gateway, EraMode::Legacy).await;
    broken.store(1, Ordering::SeqCst);
    let e = gateway
        .restart("")
        .await
        .expect_err("the new build does not start");
    assert!(e.to_string().contains("does not start"), "{e}");
    let r = client.call_tool("add", json!({})).await.expect("a result");
    assert_eq!(text_of(&r), "build 1");
    assert_eq!(names(&client.list_tools().await.expect("tools")), ["add"]);
    assert!(
        !sent
            .lock()
            .expect("lock")
            .iter()
            .any(|m| m.ends_with("list_changed")),
        "nothing changed"
    );
    // No such upstream is an error too.
    assert!(gateway.restart("nope").await.is_err());
}

#[tokio::test]
async fn more_restarts_at_once_than_are_queued_wait_their_turn_and_all_happen() {
    let (count, broken) = (Arc::new(AtomicUsize::new(0)), Arc::default());
    let (gateway, _) = gateway(count.clone(), broken);
    gateway.ready().await;
    // Six asked at once, past the four queued (`RESTARTS_QUEUED`): the others wait to be queued.
    let r = tokio::join!(
        gateway.restart(""),
        gateway.restart(""),
        gateway.restart(""),
        gateway.restart(""),
        gateway.restart(""),
        gateway.restart(""),
    );
    for one in [r.0, r.1, r.2, r.3, r.4, r.5] {
        one.expect("restarted");
    }
    assert_eq!(
        count.load(Ordering::SeqCst),
        7,
        "the first build and six restarts"
    );
}

#[tokio::test]
async fn a_gateway_standing_in_for_one_server_answers_the_handshake_with_its_server_info_and_instructions()
 {
    // Without the option: the gateway's own name, and no instructions.
    let (gateway, _) = gateway(Arc::default(), Arc::default());
    gateway.ready().await;
    let client = front(&gateway, EraMode::Legacy).await;
    assert_eq!(client.negotiated().server_info.name, "switchboard-gateway");
    assert_eq!(client.negotiated().instructions, None);

    // With it, in both eras: the upstream's, as its current session declared them.
    let count = Arc::new(AtomicUsize::new(0));
    let (gateway, _) = gateway_with(count.clone(), Arc::default(), true);
    gateway.ready().await;
    for era in [
        EraMode::Legacy,
        EraMode::Pin(switchboard_types::ProtocolVersion::V2026_07_28),
    ] {
        let client = front(&gateway, era).await;
        let n = client.negotiated();
        assert_eq!(
            (n.server_info.name.as_str(), n.server_info.version.as_str()),
            ("dev", "0.1.0"),
            "{era:?}"
        );
        assert_eq!(
            n.instructions.as_deref(),
            Some("the dev server, build 1"),
            "{era:?}"
        );
    }

    // The session open across a restart keeps its handshake; a client arriving after it is
    // told of build 2.
    let before = front(&gateway, EraMode::Legacy).await;
    gateway.restart("").await.expect("restarted");
    assert_eq!(count.load(Ordering::SeqCst), 2);
    assert_eq!(before.negotiated().server_info.version, "0.1.0");
    assert_eq!(
        names(&before.list_tools().await.expect("the same session lists")),
        ["add", "mul"]
    );
    let after = front(&gateway, EraMode::Legacy).await;
    assert_eq!(after.negotiated().server_info.version, "0.2.0");
    assert_eq!(
        after.negotiated().instructions.as_deref(),
        Some("the dev server, build 2")
    );
}
