//! The gateway's policy and audit log with in-process upstreams: what a caller may not use is
//! neither listed nor usable; one audit line per request. (Per-subject and per-scope rules
//! need a token: `switchboard-cli`'s `tests/gateway_auth.rs` checks them on the wire.)

use serde_json::json;
use switchboard_client::EraMode;
use switchboard_gateway::{Effect, Policy, Rule};
use switchboard_test_support::wait;

mod common;

use common::*;

#[tokio::test]
async fn a_denied_tool_or_upstream_is_neither_listed_nor_usable() {
    let s = start_with(EraMode::Legacy, limits(), |config| {
        config.policy = Policy::new(
            Effect::Allow,
            vec![
                Rule::new(Effect::Deny).tools(["calc_h*"]),
                Rule::new(Effect::Allow)
                    .upstreams(["text"])
                    .tools(["text_add"]),
                Rule::new(Effect::Deny).upstreams(["text"]),
            ],
        );
    });
    both_up(&s.gateway).await;
    let client = front(&s.gateway, EraMode::Legacy).await;
    assert_eq!(
        names(&client.list_tools().await.expect("tools")),
        ["calc_add", "calc_slow_progress", "text_add"]
    );
    let e = client
        .call_tool("calc_hang", json!({}))
        .await
        .expect_err("refused");
    assert!(e.to_string().contains("not available"), "{e}");
    let e = client
        .call_tool("text_slow_progress", json!({}))
        .await
        .expect_err("refused");
    assert!(e.to_string().contains("not available"), "{e}");
    let r = client
        .call_tool("text_add", json!({"a": 1, "b": 1}))
        .await
        .expect("allowed");
    assert_eq!(text_of(&r), "text: 2");
    // Text's prompts, resources and templates are not listed, and not usable.
    let prompts: Vec<String> = client
        .list_prompts()
        .await
        .expect("prompts")
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(prompts, ["calc_greet"]);
    let uris: Vec<String> = client
        .list_resources()
        .await
        .expect("resources")
        .into_iter()
        .map(|r| r.uri)
        .collect();
    assert_eq!(uris, ["test://calc/static-text"]);
    let templates: Vec<String> = client
        .list_resource_templates()
        .await
        .expect("templates")
        .into_iter()
        .map(|t| t.uri_template)
        .collect();
    assert_eq!(templates, ["test://calc/template/{id}/data"]);
    assert!(
        client
            .get_prompt("text_greet", Vec::<(String, String)>::new())
            .await
            .is_err()
    );
    assert!(
        client
            .read_resource("test://text/static-text")
            .await
            .is_err()
    );
    assert!(
        client
            .read_resource("test://text/template/1/data")
            .await
            .is_err()
    );
    let r = client
        .read_resource("test://calc/template/1/data")
        .await
        .expect("allowed");
    assert_eq!(text_of(&r), "calc template 1");
}

#[tokio::test]
async fn every_request_is_one_audit_line_naming_its_method_target_and_outcome() {
    let dir =
        std::env::temp_dir().join(format!("switchboard-gateway-audit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a directory");
    let path = dir.join("audit.log");
    let s = start_with(EraMode::Legacy, limits(), |config| {
        config.audit_log = Some(path.clone());
        config.policy = Policy::new(
            Effect::Allow,
            vec![Rule::new(Effect::Deny).tools(["calc_hang"])],
        );
    });
    both_up(&s.gateway).await;
    let client = front(&s.gateway, EraMode::Legacy).await;
    client
        .call_tool("calc_add", json!({"a": 1, "b": 2}))
        .await
        .expect("a result");
    client
        .call_tool("calc_hang", json!({}))
        .await
        .expect_err("refused");
    let lines = || -> Vec<serde_json::Value> {
        std::fs::read_to_string(&path)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .filter(|l: &serde_json::Value| l["method"] == switchboard_types::methods::TOOLS_CALL)
            .collect()
    };
    wait::until("two call lines", || lines().len() == 2).await;
    let lines = lines();
    assert_eq!(lines[0]["target"], "calc_add");
    assert_eq!(lines[0]["outcome"], "ok");
    assert_eq!(lines[1]["target"], "calc_hang");
    assert_eq!(lines[1]["code"], -32602);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn search_tools_returns_the_matching_tools_the_caller_may_use_with_their_schemas() {
    let s = start_with(EraMode::Legacy, limits(), |config| {
        config.search_tools = true;
        config.policy = Policy::new(
            Effect::Allow,
            vec![Rule::new(Effect::Deny).tools(["text_add"])],
        );
    });
    both_up(&s.gateway).await;
    let client = front(&s.gateway, EraMode::Legacy).await;
    assert!(names(&client.list_tools().await.expect("tools")).contains(&"search_tools".to_owned()));
    let r = client
        .call_tool("search_tools", json!({"query": "ADD"}))
        .await
        .expect("a result");
    let found = r.structured_content.expect("structured");
    let names: Vec<&str> = found["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("a name"))
        .collect();
    assert_eq!(names, ["calc_add"], "text_add is denied");
    assert_eq!(
        found["tools"][0]["inputSchema"]["properties"]["a"]["type"],
        "integer"
    );
    assert_eq!(found["truncated"], false);
    // `limit` bounds the answer (a bound crossed: three match, one is returned).
    let r = client
        .call_tool("search_tools", json!({"query": "", "limit": 1}))
        .await
        .expect("a result");
    let found = r.structured_content.expect("structured");
    assert_eq!(found["tools"].as_array().expect("tools").len(), 1);
    assert_eq!(found["truncated"], true);
}

/// The names `search_tools` finds for `query`.
async fn found(client: &switchboard_client::ClientSession, query: &str) -> Vec<String> {
    let r = client
        .call_tool("search_tools", json!({"query": query}))
        .await
        .expect("a result");
    let found = r.structured_content.expect("structured");
    found["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("a name").to_owned())
        .collect()
}

#[tokio::test]
async fn search_tools_follows_an_upstreams_list_changes() {
    let s = start_with(EraMode::Legacy, limits(), |config| {
        config.search_tools = true;
    });
    both_up(&s.gateway).await;
    let client = front(&s.gateway, EraMode::Legacy).await;
    // A first search (what it reads is built once per list change).
    assert!(found(&client, "multiplies").await.is_empty());
    let mut tool = switchboard_types::tools::Tool::new("times", json!({"type": "object"}));
    tool.description = Some("Multiplies two Numbers".into());
    s.calc
        .add_tool(tool, |_| async {
            Ok(switchboard_types::tools::CallToolResult::text("6"))
        })
        .expect("added");
    let deadline = wait::Deadline::new("search_tools finds the added tool");
    while found(&client, "MULTIPLIES numbers").await != ["calc_times"] {
        deadline.tick().await;
    }
    s.calc.remove_tool("times").expect("removed");
    let deadline = wait::Deadline::new("search_tools no longer finds the removed tool");
    while !found(&client, "multiplies").await.is_empty() {
        deadline.tick().await;
    }
}
