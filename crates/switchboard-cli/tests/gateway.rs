//! `switchboard gateway CONFIG`: two upstreams (our example servers as stdio children, and one
//! over Streamable HTTP) behind one server, spoken to by our client over stdio and by
//! `switchboard call` over Streamable HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use switchboard::client::{Client, ClientSession, EraMode, RequestOptions};
use switchboard::transport::{ChildCommand, ChildTransport};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::tools::Tool;
use switchboard_test_support::wait;

mod common;

use common::bin;

/// A directory of its own for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("switchboard-gateway-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn text_of(v: &impl serde::Serialize) -> String {
    let v = serde_json::to_value(v).unwrap();
    v.pointer("/content/0/text")
        .or_else(|| v.pointer("/contents/0/text"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn has(tools: &[Tool], name: &str) -> bool {
    tools.iter().any(|t| t.name == name)
}

async fn gateway_over_stdio(config: &std::path::Path) -> ClientSession {
    let command = ChildCommand::new(env!("CARGO_BIN_EXE_switchboard")).args([
        "gateway",
        config.to_str().unwrap(),
        "--stdio",
    ]);
    let child = ChildTransport::spawn(command).expect("the gateway starts");
    // The 2025 era, whose list_changed notifications reach a client unasked (a 2026-07-28
    // client would open a subscriptions/listen stream for them).
    Client::builder(Implementation::new("gateway-test", "1"))
        .era(EraMode::Legacy)
        .build()
        .connect(child)
        .await
        .expect("the gateway answers")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_stdio_upstreams_are_served_under_their_prefixes_and_a_killed_one_restarts() {
    let dir = scratch("stdio");
    let bin = env!("CARGO_BIN_EXE_switchboard");
    let pid_file = dir.join("calc.pid");
    // `calc` writes its pid (the `exec`ed server's), so that the test can kill it.
    let config = format!(
        "[[upstream]]\nname = \"calc\"\nstdio = \"sh -c 'echo $$ > {pid}; exec {bin} serve --example everything'\"\n\n\
         [[upstream]]\nname = \"sum\"\nstdio = \"{bin} serve --example add\"\nera = \"legacy\"\n",
        pid = pid_file.display(),
    );
    let config_path = dir.join("gateway.toml");
    std::fs::write(&config_path, config).unwrap();
    let client = gateway_over_stdio(&config_path).await;

    // Both upstreams come up in the background; the gateway's list grows as they do.
    let deadline = wait::Deadline::new("both upstreams listed");
    let tools = loop {
        let tools = client.list_tools().await.expect("tools/list");
        let resources = client.list_resources().await.expect("resources/list");
        if has(&tools, "sum_add")
            && has(&tools, "calc_test_simple_text")
            && resources.iter().any(|r| r.uri == "test://calc/static-text")
        {
            break tools;
        }
        deadline.tick().await;
    };
    assert!(
        tools
            .iter()
            .all(|t| t.name.starts_with("calc_") || t.name.starts_with("sum_"))
    );

    // A call on each upstream.
    let r = client
        .call_tool("sum_add", json!({"a": 2, "b": 40}))
        .await
        .expect("a result");
    assert_eq!(text_of(&r), "42");
    let r = client
        .call_tool("calc_test_simple_text", json!({}))
        .await
        .expect("a result");
    assert_eq!(text_of(&r), "This is a simple text response for testing.");

    // A resource read through its rewritten URI reaches `calc`.
    let resources = client.list_resources().await.expect("resources/list");
    assert!(resources.iter().any(|r| r.uri == "test://calc/static-text"));
    let r = client
        .read_resource("test://calc/static-text")
        .await
        .expect("resources/read");
    assert_eq!(r.contents[0].uri(), "test://calc/static-text");
    assert!(!text_of(&r).is_empty());

    // A slow call in flight on `calc` (its progress says it is running) when `calc` is killed.
    let (started_tx, started) = tokio::sync::oneshot::channel();
    let started_tx = std::sync::Mutex::new(Some(started_tx));
    let opts = RequestOptions::default().with_progress(move |_| {
        if let Some(tx) = started_tx.lock().unwrap().take() {
            let _ = tx.send(());
        }
    });
    let c = client.clone();
    let slow = tokio::spawn(async move {
        c.call_tool_with("calc_test_task_slow", json!({"ms": 600_000}), opts)
            .await
    });
    tokio::time::timeout(wait::DEADLINE, started)
        .await
        .expect("progress in time")
        .unwrap();
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let status = std::process::Command::new("kill")
        .args(["-9", pid.trim()])
        .status()
        .unwrap();
    assert!(status.success());
    let r = tokio::time::timeout(Duration::from_secs(10), slow)
        .await
        .expect("the caller hears at once, not after the call's 10 minutes")
        .unwrap()
        .expect("an error result, not a protocol error");
    assert_eq!(r.is_error, Some(true));
    assert!(text_of(&r).contains("upstream `calc`"), "{}", text_of(&r));

    // A call to `calc` while it restarts: its answer if it is back already, else an error
    // result naming it, never "unknown tool" (tests/memory.rs holds one down to see the latter).
    let r = client
        .call_tool("calc_test_simple_text", json!({}))
        .await
        .expect("a result, not a protocol error");
    if r.is_error == Some(true) {
        assert!(text_of(&r).contains("upstream `calc`"), "{}", text_of(&r));
    }

    // The other upstream keeps serving.
    let r = client
        .call_tool("sum_add", json!({"a": 1, "b": 1}))
        .await
        .expect("a result");
    assert_eq!(text_of(&r), "2");

    // `calc` is restarted and listed again, which the client learns from list_changed.
    let relisted = async {
        loop {
            let tools = client.tools_changed().await.expect("list_changed");
            if has(&tools, "calc_test_simple_text") {
                break;
            }
        }
    };
    tokio::time::timeout(wait::DEADLINE, relisted)
        .await
        .expect("calc is listed again");
    let new_pid = std::fs::read_to_string(&pid_file).unwrap();
    assert_ne!(new_pid.trim(), pid.trim(), "a new process");
    let r = client
        .call_tool("calc_test_simple_text", json!({}))
        .await
        .expect("a result");
    assert_eq!(text_of(&r), "This is a simple text response for testing.");
    client.close();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_http_upstream_is_served_over_http_under_its_prefix() {
    let upstream = common::serve_http(&[]);
    let dir = scratch("http");
    let config_path = dir.join("gateway.toml");
    std::fs::write(
        &config_path,
        format!(
            "separator = \".\"\n[[upstream]]\nname = \"web\"\nurl = \"{}\"\n",
            upstream.url
        ),
    )
    .unwrap();
    let addr = format!("127.0.0.1:{}", common::free_port());
    let mut cmd = bin();
    cmd.args(["gateway", config_path.to_str().unwrap(), "--http", &addr]);
    let gateway = common::start(cmd, "listening on", format!("http://{addr}/mcp"));
    let call = |args: &[&str]| {
        let out = bin()
            .args(["call", "--url", &gateway.url])
            .args(args)
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8(out.stdout).unwrap())
    };
    wait::until_blocking("web is listed", || {
        let (code, out) = call(&["tools/list"]);
        code == Some(0) && out.contains("\"web.test_simple_text\"")
    });
    let (code, out) = call(&["tools/call", "web.test_simple_text"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("This is a simple text response for testing."),
        "{out}"
    );
    let (code, out) = call(&["resources/read", "test://web/static-text"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("test://web/static-text"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_config_mistake_is_a_message_naming_the_file_line_and_key() {
    let dir = scratch("bad");
    let path = dir.join("gateway.toml");
    std::fs::write(
        &path,
        "[[upstream]]\nname = \"calc\"\nstdio = \"x\"\nera = \"2030\"\n",
    )
    .unwrap();
    let out = bin()
        .args(["gateway", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("gateway.toml: line 4: `era`"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The configuration reloaded when its file changes: an upstream added reaches the open
/// session with `list_changed`, and the session (and the upstream it was using) lives on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_config_file_adds_an_upstream_without_dropping_the_session() {
    let dir = scratch("reload-file");
    let bin = env!("CARGO_BIN_EXE_switchboard");
    let sum = format!(
        "[[upstream]]\nname = \"sum\"\nstdio = \"{bin} serve --example add\"\nera = \"legacy\"\n"
    );
    let config_path = dir.join("gateway.toml");
    std::fs::write(&config_path, &sum).unwrap();
    let client = gateway_over_stdio(&config_path).await;
    let deadline = wait::Deadline::new("sum listed");
    while !has(&client.list_tools().await.unwrap(), "sum_add") {
        deadline.tick().await;
    }
    let more = format!(
        "{sum}\n[[upstream]]\nname = \"more\"\nstdio = \"{bin} serve --example add\"\nera = \"legacy\"\n"
    );
    std::fs::write(&config_path, more).unwrap();
    let added = async {
        loop {
            let tools = client.tools_changed().await.expect("list_changed");
            if has(&tools, "more_add") {
                break;
            }
        }
    };
    tokio::time::timeout(wait::DEADLINE, added)
        .await
        .expect("more is listed after the file changed");
    for tool in ["sum_add", "more_add"] {
        let r = client
            .call_tool(tool, json!({"a": 2, "b": 3}))
            .await
            .unwrap();
        assert_eq!(text_of(&r), "5", "{tool}");
    }
    client.close();
    let _ = std::fs::remove_dir_all(&dir);
}

/// SIGHUP reloads (here with the file watch off): an upstream removed leaves the list, and a
/// call to one of its tools is an error result saying it was removed.
#[test]
fn sighup_reloads_the_configuration_and_a_removed_upstream_says_so() {
    let dir = scratch("reload-hup");
    let exe = env!("CARGO_BIN_EXE_switchboard");
    let one = format!("[[upstream]]\nname = \"sum\"\nstdio = \"{exe} serve --example add\"\n");
    let two =
        format!("{one}[[upstream]]\nname = \"gone\"\nstdio = \"{exe} serve --example add\"\n");
    let config_path = dir.join("gateway.toml");
    std::fs::write(&config_path, &two).unwrap();
    let addr = format!("127.0.0.1:{}", common::free_port());
    let mut cmd = bin();
    cmd.args([
        "gateway",
        config_path.to_str().unwrap(),
        "--http",
        &addr,
        "--no-watch",
    ]);
    let gateway = common::start(cmd, "listening on", format!("http://{addr}/mcp"));
    let call = |args: &[&str]| {
        let out = bin()
            .args(["call", "--url", &gateway.url])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    wait::until_blocking("gone is listed", || {
        call(&["tools/list"]).contains("\"gone_add\"")
    });
    std::fs::write(&config_path, &one).unwrap();
    let status = std::process::Command::new("kill")
        .args(["-HUP", &gateway.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    wait::until_blocking("gone leaves the list", || {
        !call(&["tools/list"]).contains("\"gone_add\"")
    });
    let out = call(&["tools/call", "gone_add", "a=1", "b=2"]);
    assert!(out.contains("upstream `gone` was removed"), "{out}");
    assert!(call(&["tools/list"]).contains("\"sum_add\""));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `[D26-130]` `[D26-138]` tasks through the gateway over Streamable HTTP: a 2026-07-28
/// client's call of the everything server's `test_task_elicitation` (a 2025-11-25 upstream)
/// becomes the gateway's task, run as the upstream's task, which asks this client for a name.
/// Over HTTP each 2026-07-28 request is an exchange of its own that ends when the call becomes
/// a task: the client's own upstream session, and the upstream's task, live on until the task
/// ends, and the task is not cancelled with the exchange.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_clients_task_asks_it_for_input_through_the_gateway_over_http() {
    let dir = scratch("tasks");
    let config_path = dir.join("gateway.toml");
    let everything = format!(
        "{} serve --example everything",
        env!("CARGO_BIN_EXE_switchboard")
    );
    std::fs::write(
        &config_path,
        format!("[[upstream]]\nname = \"sb\"\nstdio = \"{everything}\"\nera = \"legacy\"\n"),
    )
    .unwrap();
    let addr = format!("127.0.0.1:{}", common::free_port());
    let mut cmd = bin();
    cmd.args(["gateway", config_path.to_str().unwrap(), "--http", &addr]);
    let gateway = common::start(cmd, "listening on", format!("http://{addr}/mcp"));
    let transport = switchboard::http_client::HttpClientTransport::connect(
        &gateway.url,
        switchboard::http_client::HttpClientConfig::default(),
    )
    .unwrap();
    let client = Client::builder(Implementation::new("tasks-test", "1"))
        .era(EraMode::Pin(
            switchboard::types::ProtocolVersion::V2026_07_28,
        ))
        .tasks_extension()
        .elicitation(|_, _| async {
            Ok(
                serde_json::from_value(json!({"action": "accept", "content": {"name": "Ada"}}))
                    .unwrap(),
            )
        })
        .build()
        .connect(transport)
        .await
        .expect("connected to the gateway");
    let deadline = wait::Deadline::new("sb is listed");
    while !client
        .list_tools()
        .await
        .is_ok_and(|t| has(&t, "sb_test_task_elicitation"))
    {
        deadline.tick().await;
    }
    let r = client
        .call_tool("sb_test_task_elicitation", json!({}))
        .await
        .expect("a result");
    assert_eq!(text_of(&r), "hello Ada");
    let _ = std::fs::remove_dir_all(&dir);
}
