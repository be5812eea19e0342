//! The gateway with in-process upstreams: our own servers over the in-memory transport, reached
//! through the gateway's connector, and a client of the gateway over the same transport.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use switchboard_client::{Client, ClientError, EraMode};
use switchboard_gateway::{Connector, Gateway, GatewayConfig, UpstreamConfig, UpstreamKind};
use switchboard_server::Server;
use switchboard_test_support::wait;
use switchboard_types::ProtocolVersion;
use switchboard_types::lifecycle::Implementation;
use switchboard_types::tools::{CallToolResult, Tool};

mod common;

use common::*;

#[tokio::test]
async fn two_upstreams_are_listed_under_their_prefixes_and_each_is_called_through_the_gateway() {
    let s = start(EraMode::Legacy, limits());
    both_up(&s.gateway).await;
    let client = front(&s.gateway, EraMode::Legacy).await;
    let tools = client.list_tools().await.expect("tools");
    assert_eq!(
        names(&tools),
        [
            "calc_add",
            "calc_hang",
            "calc_slow_progress",
            "text_add",
            "text_hang",
            "text_slow_progress"
        ]
    );
    let r = client
        .call_tool("calc_add", json!({"a": 2, "b": 3}))
        .await
        .expect("a result");
    assert_eq!(text_of(&r), "calc: 5");
    let r = client
        .call_tool("text_add", json!({"a": 1, "b": 1}))
        .await
        .expect("a result");
    assert_eq!(text_of(&r), "text: 2");
    // Prompts under the same prefixes, forwarded.
    let prompts = client.list_prompts().await.expect("prompts");
    let mut p: Vec<_> = prompts.iter().map(|p| p.name.as_str()).collect();
    p.sort_unstable();
    assert_eq!(p, ["calc_greet", "text_greet"]);
    let got = client
        .get_prompt("text_greet", Vec::<(String, String)>::new())
        .await
        .expect("a prompt");
    assert_eq!(text_of(&got), "hello from text");
}

#[tokio::test]
async fn resources_and_templates_are_read_through_rewritten_uris() {
    let s = start(EraMode::Legacy, limits());
    both_up(&s.gateway).await;
    let client = front(&s.gateway, EraMode::Legacy).await;
    let mut uris: Vec<String> = client
        .list_resources()
        .await
        .expect("resources")
        .into_iter()
        .map(|r| r.uri)
        .collect();
    uris.sort();
    assert_eq!(uris, ["test://calc/static-text", "test://text/static-text"]);
    let mut templates: Vec<String> = client
        .list_resource_templates()
        .await
        .expect("templates")
        .into_iter()
        .map(|t| t.uri_template)
        .collect();
    templates.sort();
    assert_eq!(
        templates,
        [
            "test://calc/template/{id}/data",
            "test://text/template/{id}/data"
        ]
    );

    let r = client
        .read_resource("test://text/static-text")
        .await
        .expect("read");
    assert_eq!(text_of(&r), "text static");
    // The contents name the gateway's URI, not the upstream's.
    assert_eq!(r.contents[0].uri(), "test://text/static-text");
    // A templated URI reaches the right upstream with its own URI (the upstream's template
    // matched it, so it was rewritten back).
    let r = client
        .read_resource("test://calc/template/7/data")
        .await
        .expect("read");
    assert_eq!(text_of(&r), "calc template 7");
    assert_eq!(r.contents[0].uri(), "test://calc/template/7/data");
}

#[tokio::test]
async fn a_killed_upstream_fails_its_call_with_an_error_result_naming_it_and_comes_back_listed() {
    let s = start(EraMode::Legacy, limits());
    both_up(&s.gateway).await;
    let client = front(&s.gateway, EraMode::Legacy).await;
    client.list_tools().await.expect("tools");
    // A call in flight when the upstream dies.
    let c = client.clone();
    let pending = tokio::spawn(async move { c.call_tool("calc_hang", json!({})).await });
    wait::until("the upstream runs the call", || {
        s.calc_sessions.lock().expect("lock").len() == 1 && s.calc.session_count() == 1
    })
    .await;
    // Wait until the call reached the upstream, so that the kill lands mid-call.
    let deadline = wait::Deadline::new("the call is pending upstream");
    while s.calc_sessions.lock().expect("lock")[0]
        .peer()
        .in_flight_count()
        == 0
    {
        deadline.tick().await;
    }
    let changed = wait::spawn_polled({
        let c = client.clone();
        async move { c.tools_changed().await }
    })
    .await;
    s.calc_sessions.lock().expect("lock")[0].close();
    let r = pending
        .await
        .expect("joined")
        .expect("an error result, not a protocol error");
    assert_eq!(r.is_error, Some(true));
    assert!(text_of(&r).contains("upstream `calc`"), "{}", text_of(&r));
    // The other upstream keeps serving.
    let r = client
        .call_tool("text_add", json!({"a": 20, "b": 22}))
        .await
        .expect("a result");
    assert_eq!(text_of(&r), "text: 42");
    // Its tools left the list, and the client was told.
    changed.await.expect("joined").expect("list_changed");
    // Restarted after the backoff: listed again, which the client learns from list_changed
    // (each turn of the loop needs a notification the cache has not seen).
    let relisted = async {
        loop {
            let tools = client.tools_changed().await.expect("list_changed");
            if names(&tools).iter().any(|n| n == "calc_add") {
                break;
            }
        }
    };
    tokio::time::timeout(wait::DEADLINE, relisted)
        .await
        .expect("calc is listed again");
    assert_eq!(
        s.calc_sessions.lock().expect("lock").len(),
        2,
        "one restart"
    );
    let r = client
        .call_tool("calc_add", json!({"a": 1, "b": 2}))
        .await
        .expect("a result");
    assert_eq!(text_of(&r), "calc: 3");
}

/// A server whose tool list changes at run time, announced with `list_changed`.
fn changing() -> Server {
    Server::builder(Implementation::new("changing", "1"))
        .tool(Tool::new("first", obj()), |_| async {
            Ok(CallToolResult::text("first"))
        })
        .build()
        .expect("a server")
}

async fn upstream_list_changed_becomes_the_gateways(upstream_era: EraMode, front_era: EraMode) {
    let server = changing();
    let mut config = GatewayConfig::default();
    config.upstreams = vec![
        UpstreamConfig::new(
            "up",
            UpstreamKind::Custom(in_memory(server.clone(), Arc::default())),
        )
        .with_era(upstream_era),
    ];
    let gateway = Gateway::start(config).expect("a gateway");
    wait::until("the upstream is up", || gateway.is_up("up") == Some(true)).await;
    let client = front(&gateway, front_era).await;
    assert_eq!(
        names(&client.list_tools().await.expect("tools")),
        ["up_first"]
    );
    let changed = wait::spawn_polled({
        let c = client.clone();
        async move {
            loop {
                let tools = c.tools_changed().await?;
                if tools.len() == 2 {
                    return Ok::<_, ClientError>(tools);
                }
            }
        }
    })
    .await;
    server
        .add_tool(Tool::new("second", obj()), |_| async {
            Ok(CallToolResult::text("second"))
        })
        .expect("added");
    let tools = tokio::time::timeout(wait::DEADLINE, changed)
        .await
        .expect("in time")
        .expect("joined")
        .expect("list_changed");
    assert_eq!(names(&tools), ["up_first", "up_second"]);
    let r = client
        .call_tool("up_second", json!({}))
        .await
        .expect("a result");
    assert_eq!(text_of(&r), "second");
}

#[tokio::test]
async fn an_upstreams_list_changed_becomes_the_gateways_own_on_the_2025_era() {
    upstream_list_changed_becomes_the_gateways(EraMode::Legacy, EraMode::Legacy).await;
}

#[tokio::test]
async fn an_upstreams_list_changed_on_a_listen_stream_becomes_the_gateways_own_on_2026_07_28() {
    let modern = EraMode::Pin(ProtocolVersion::V2026_07_28);
    // The upstream speaks 2026-07-28 (its changes come on a subscriptions/listen stream); the
    // gateway's client speaks 2025-11-25.
    upstream_list_changed_becomes_the_gateways(modern, EraMode::Legacy).await;
}

#[tokio::test]
async fn both_eras_on_the_front_list_and_call_the_same_prefixed_tools() {
    let s = start(EraMode::Auto, limits());
    both_up(&s.gateway).await;
    let modern = front(&s.gateway, EraMode::Pin(ProtocolVersion::V2026_07_28)).await;
    assert_eq!(modern.era(), switchboard_client::Era::Modern);
    let legacy = front(&s.gateway, EraMode::Legacy).await;
    assert_eq!(
        names(&modern.list_tools().await.expect("tools")),
        names(&legacy.list_tools().await.expect("tools"))
    );
    let r = modern
        .call_tool("calc_add", json!({"a": 4, "b": 5}))
        .await
        .expect("a result");
    assert_eq!(text_of(&r), "calc: 9");
    let r = modern
        .read_resource("test://text/template/x/data")
        .await
        .expect("read");
    assert_eq!(text_of(&r), "text template x");
}

#[tokio::test]
async fn progress_from_the_upstream_reaches_the_client_that_asked_for_it() {
    let s = start(EraMode::Legacy, limits());
    both_up(&s.gateway).await;
    let client = front(&s.gateway, EraMode::Legacy).await;
    client.list_tools().await.expect("tools");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let opts = switchboard_client::RequestOptions::default().with_progress({
        let seen = seen.clone();
        move |u| seen.lock().expect("lock").push(u.progress)
    });
    let r = client
        .call_tool_with("calc_slow_progress", json!({}), opts)
        .await
        .expect("a result");
    assert_eq!(text_of(&r), "done");
    // Progress is sent before the answer on one ordered connection each way; updates that come
    // faster than they are passed on are coalesced into the latest.
    wait::until("the last update", || {
        seen.lock().expect("lock").last() == Some(&3.0)
    })
    .await;
    let seen = seen.lock().expect("lock").clone();
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
}

#[tokio::test]
async fn a_cancelled_client_request_cancels_the_upstreams() {
    let s = start(EraMode::Legacy, limits());
    both_up(&s.gateway).await;
    let client = front(&s.gateway, EraMode::Legacy).await;
    client.list_tools().await.expect("tools");
    let cancel = switchboard_client::CancellationToken::new();
    let opts = switchboard_client::RequestOptions::default().with_cancel(cancel.clone());
    let c = client.clone();
    let call = tokio::spawn(async move { c.call_tool_with("calc_hang", json!({}), opts).await });
    let upstream = s.calc_sessions.lock().expect("lock")[0].clone();
    wait::until("the call is running upstream", || {
        upstream.peer().in_flight_count() == 1
    })
    .await;
    cancel.cancel();
    assert!(call.await.expect("joined").is_err(), "the caller gave up");
    // `hang` ends only when its request is cancelled: the cancellation crossed the gateway.
    wait::until("the upstream's call ended", || {
        upstream.peer().in_flight_count() == 0
    })
    .await;
}

/// `[SEC]` never a hang: a call the upstream does not answer is an error result naming it once
/// `call_timeout` passes (a bound crossed).
#[tokio::test]
async fn a_call_the_upstream_never_answers_is_an_error_result_after_call_timeout() {
    let mut l = limits();
    l.call_timeout = Duration::from_millis(200);
    let s = start(EraMode::Legacy, l);
    both_up(&s.gateway).await;
    let client = front(&s.gateway, EraMode::Legacy).await;
    client.list_tools().await.expect("tools");
    let r = client
        .call_tool("text_hang", json!({}))
        .await
        .expect("a result");
    assert_eq!(r.is_error, Some(true));
    let text = text_of(&r);
    assert!(
        text.contains("upstream `text`") && text.contains("timed out"),
        "{text}"
    );
}

/// Bound: items of one kind taken from one upstream (`max_items`).
#[tokio::test]
async fn an_upstream_listing_more_than_max_items_is_served_up_to_the_bound() {
    let mut b = Server::builder(Implementation::new("many", "1"));
    for i in 0..5 {
        b = b.tool(Tool::new(format!("t{i}"), obj()), |_| async {
            Ok(CallToolResult::text("t"))
        });
    }
    let mut config = GatewayConfig::default();
    config.limits.max_items = 3;
    config.upstreams = vec![UpstreamConfig::new(
        "many",
        UpstreamKind::Custom(in_memory(b.build().expect("a server"), Arc::default())),
    )];
    let gateway = Gateway::start(config).expect("a gateway");
    wait::until("up", || gateway.is_up("many") == Some(true)).await;
    let client = front(&gateway, EraMode::Legacy).await;
    assert_eq!(
        names(&client.list_tools().await.expect("tools")),
        ["many_t0", "many_t1", "many_t2"]
    );
}

/// Bound: the number of upstreams (`max_upstreams`), for a configuration built in code.
#[tokio::test]
async fn more_upstreams_than_max_upstreams_is_refused() {
    let mut config = GatewayConfig::default();
    config.limits.max_upstreams = 2;
    for name in ["a", "b", "c"] {
        config.upstreams.push(UpstreamConfig::new(
            name,
            UpstreamKind::Stdio("unused".into()),
        ));
    }
    let e = Gateway::start(config).expect_err("refused");
    assert!(e.to_string().contains("at most 2 (max_upstreams)"), "{e}");
}

/// Bound: the restart backoff doubles from `backoff_initial` and stops at `backoff_max`
/// (on the paused clock, an upstream that never comes up).
#[tokio::test(start_paused = true)]
async fn restarts_back_off_doubling_up_to_backoff_max() {
    let attempts = Arc::new(Mutex::new(Vec::new()));
    let connector: Connector = {
        let attempts = attempts.clone();
        Arc::new(move |_client: Client| {
            attempts
                .lock()
                .expect("lock")
                .push(tokio::time::Instant::now());
            Box::pin(async { Err(ClientError::Handshake("not today".into())) })
        })
    };
    let mut config = GatewayConfig::default();
    config.limits.backoff_initial = Duration::from_millis(100);
    config.limits.backoff_max = Duration::from_millis(400);
    config.upstreams = vec![UpstreamConfig::new(
        "never",
        UpstreamKind::Custom(connector),
    )];
    let gateway = Gateway::start(config).expect("a gateway");
    wait::until("seven attempts", || {
        attempts.lock().expect("lock").len() >= 7
    })
    .await;
    let at = attempts.lock().expect("lock").clone();
    let gaps: Vec<u128> = at.windows(2).map(|w| (w[1] - w[0]).as_millis()).collect();
    assert_eq!(gaps[..6], [100, 200, 400, 400, 400, 400]);
    assert_eq!(gateway.is_up("never"), Some(false));
}

/// A connector that connects through `inner` only while `open` is set (else the upstream
/// refuses, and stays down).
fn gated(inner: Connector, open: Arc<std::sync::atomic::AtomicBool>) -> Connector {
    Arc::new(move |client: Client| {
        if open.load(std::sync::atomic::Ordering::SeqCst) {
            inner(client)
        } else {
            Box::pin(async { Err(ClientError::Handshake("kept down by the test".into())) })
        }
    })
}

/// `[SEC]` never a hang, never "unknown tool": while an upstream is down, a call to one of its
/// tools (listed before, or never listed but under its prefix) is at once an `isError` result
/// naming it; a get or read is an error naming it; the other upstream serves on.
#[tokio::test]
async fn a_call_to_a_down_upstreams_tool_is_an_error_result_naming_it_not_unknown_tool() {
    let open = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let sessions = Arc::new(Mutex::new(Vec::new()));
    let s = start_with(EraMode::Legacy, limits(), |config| {
        let inner = in_memory(upstream("calc"), sessions.clone());
        config.upstreams[0] =
            UpstreamConfig::new("calc", UpstreamKind::Custom(gated(inner, open.clone())))
                .with_era(EraMode::Legacy);
    });
    both_up(&s.gateway).await;
    let client = front(&s.gateway, EraMode::Legacy).await;
    assert!(names(&client.list_tools().await.expect("tools")).contains(&"calc_add".to_owned()));
    open.store(false, std::sync::atomic::Ordering::SeqCst);
    sessions.lock().expect("lock")[0].close();
    wait::until("calc is down", || s.gateway.is_up("calc") == Some(false)).await;
    assert!(!names(&client.list_tools().await.expect("tools")).contains(&"calc_add".to_owned()));
    for tool in ["calc_add", "calc_never_listed"] {
        let r = tokio::time::timeout(wait::DEADLINE, client.call_tool(tool, json!({"a": 1})))
            .await
            .expect("at once, not a hang")
            .expect("an error result, not a protocol error");
        assert_eq!(r.is_error, Some(true), "{tool}");
        assert!(
            text_of(&r).contains("upstream `calc` is down"),
            "{tool}: {}",
            text_of(&r)
        );
    }
    let e = client
        .get_prompt("calc_greet", Vec::<(String, String)>::new())
        .await
        .expect_err("an error");
    assert!(e.to_string().contains("upstream `calc` is down"), "{e}");
    let e = client
        .read_resource("test://calc/template/1/data")
        .await
        .expect_err("an error");
    assert!(e.to_string().contains("upstream `calc` is down"), "{e}");
    // A name of no upstream is still unknown.
    let e = client.call_tool("nobody_add", json!({})).await;
    assert!(e.is_err() || e.is_ok_and(|r| !text_of(&r).contains("upstream")));
    // The other upstream serves on; calc comes back once it may.
    let r = client
        .call_tool("text_add", json!({"a": 1, "b": 2}))
        .await
        .expect("a result");
    assert_eq!(text_of(&r), "text: 3");
    open.store(true, std::sync::atomic::Ordering::SeqCst);
    wait::until("calc is back", || s.gateway.is_up("calc") == Some(true)).await;
    let r = client
        .call_tool("calc_add", json!({"a": 1, "b": 2}))
        .await
        .expect("a result");
    assert_eq!(text_of(&r), "calc: 3");
}

/// A burst of changes (an upstream of 20 tools going down, then coming back) is one
/// `list_changed` each time, not one per tool.
#[tokio::test]
async fn a_burst_of_list_changes_is_one_list_changed_per_list() {
    let mut b = Server::builder(Implementation::new("many", "1"));
    for i in 0..20 {
        b = b.tool(Tool::new(format!("t{i}"), common::obj()), |_| async {
            Ok(CallToolResult::text("t"))
        });
    }
    let sessions = Arc::new(Mutex::new(Vec::new()));
    let mut config = GatewayConfig::default();
    config.limits = limits();
    config.upstreams = vec![
        UpstreamConfig::new(
            "many",
            UpstreamKind::Custom(in_memory(b.build().expect("a server"), sessions.clone())),
        )
        .with_era(EraMode::Legacy),
    ];
    let gateway = Gateway::start(config).expect("a gateway");
    wait::until("up", || gateway.is_up("many") == Some(true)).await;
    let client = front(&gateway, EraMode::Legacy).await;
    assert_eq!(client.list_tools().await.expect("tools").len(), 20);
    let kind = switchboard_client::ListKind::Tools;
    let before = client.list_generation(kind);
    sessions.lock().expect("lock")[0].close();
    let back = async {
        loop {
            let tools = client.tools_changed().await.expect("list_changed");
            if tools.len() == 20 && client.list_generation(kind) > before + 1 {
                break;
            }
        }
    };
    tokio::time::timeout(wait::DEADLINE, back)
        .await
        .expect("listed again");
    client.ping().await.expect("pong");
    assert_eq!(
        client.list_generation(kind) - before,
        2,
        "one for the 20 removals, one for the 20 additions"
    );
}

/// `Gateway::ready` returns once every upstream's first attempt has ended: both are then up
/// and listed, without polling.
#[tokio::test]
async fn ready_waits_for_every_upstreams_first_attempt() {
    let s = start(EraMode::Legacy, limits());
    tokio::time::timeout(wait::DEADLINE, s.gateway.ready())
        .await
        .expect("ready in time");
    assert_eq!(s.gateway.is_up("calc"), Some(true));
    assert_eq!(s.gateway.is_up("text"), Some(true));
    let client = front(&s.gateway, EraMode::Legacy).await;
    assert_eq!(client.list_tools().await.expect("tools").len(), 6);
}
