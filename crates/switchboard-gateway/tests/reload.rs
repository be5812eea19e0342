//! Reloading the configuration of a running gateway: upstreams added and removed without
//! dropping the sessions open on it, each change a `list_changed`.

use std::sync::Arc;

use serde_json::json;
use switchboard_client::EraMode;
use switchboard_gateway::{Effect, Policy, Rule, UpstreamConfig, UpstreamKind};
use switchboard_test_support::wait;

mod common;

use common::*;

#[tokio::test]
async fn a_reload_adds_and_removes_upstreams_and_the_open_session_is_told() {
    let s = start(EraMode::Legacy, limits());
    both_up(&s.gateway).await;
    let client = front(&s.gateway, EraMode::Legacy).await;
    client.list_tools().await.expect("tools");
    // The new configuration: `text` removed, `more` added, `calc` unchanged (the same
    // connector: it is not restarted), and a policy.
    let mut config = switchboard_gateway::GatewayConfig::default();
    config.limits = limits();
    let calc = s.gateway.upstream_config("calc").expect("calc");
    config.upstreams = vec![
        calc,
        UpstreamConfig::new(
            "more",
            UpstreamKind::Custom(in_memory(upstream("more"), Arc::default())),
        )
        .with_era(EraMode::Legacy),
    ];
    config.policy = Policy::new(
        Effect::Allow,
        vec![Rule::new(Effect::Deny).tools(["more_hang"])],
    );
    let changed = wait::spawn_polled({
        let c = client.clone();
        async move {
            loop {
                let tools = c.tools_changed().await.expect("list_changed");
                let n = names(&tools);
                if n.iter().any(|t| t == "more_add") && !n.iter().any(|t| t.starts_with("text_")) {
                    return n;
                }
            }
        }
    })
    .await;
    let report = s.gateway.reload(config).expect("reloaded");
    assert_eq!(report.added, ["more"]);
    assert_eq!(report.removed, ["text"]);
    assert!(report.restarted.is_empty());
    let tools = tokio::time::timeout(wait::DEADLINE, changed)
        .await
        .expect("told in time")
        .expect("joined");
    assert_eq!(
        tools,
        [
            "calc_add",
            "calc_hang",
            "calc_slow_progress",
            "more_add",
            "more_slow_progress"
        ]
    );
    // The session lived through it: calc was not restarted, and serves on.
    assert_eq!(s.calc_sessions.lock().expect("lock").len(), 1);
    let r = client
        .call_tool("calc_add", json!({"a": 1, "b": 2}))
        .await
        .expect("a result");
    assert_eq!(text_of(&r), "calc: 3");
    let r = client
        .call_tool("more_add", json!({"a": 2, "b": 2}))
        .await
        .expect("a result");
    assert_eq!(text_of(&r), "more: 4");
    // A tool of the removed upstream: an error result saying so, not "unknown tool".
    let r = client
        .call_tool("text_add", json!({}))
        .await
        .expect("an error result");
    assert_eq!(r.is_error, Some(true));
    assert!(
        text_of(&r).contains("upstream `text` was removed"),
        "{}",
        text_of(&r)
    );
    assert!(s.gateway.is_up("text").is_none());
}

#[tokio::test]
async fn a_reload_refused_changes_nothing() {
    let s = start(EraMode::Legacy, limits());
    both_up(&s.gateway).await;
    let mut config = switchboard_gateway::GatewayConfig::default();
    config.separator = "/".into();
    assert!(s.gateway.reload(config).is_err());
    assert_eq!(s.gateway.is_up("calc"), Some(true));
    assert_eq!(s.gateway.is_up("text"), Some(true));
}
