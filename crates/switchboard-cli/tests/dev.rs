//! `switchboard dev`: a host connected once over stdio lives through rebuilds. The server is
//! `switchboard serve --example bench --tools N` with N read from a file the test edits; the
//! build command is a script the test makes succeed or fail; the watched directory is the
//! test's own.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use switchboard::client::{Client, ClientSession, EraMode};
use switchboard::transport::StdioTransport;
use switchboard::types::lifecycle::Implementation;
use switchboard::types::tools::Tool;
use switchboard_test_support::wait;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("switchboard-dev-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    dir
}

fn names(tools: &[Tool]) -> Vec<String> {
    let mut n: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
    n.sort();
    n
}

/// A change of the watched sources (a length the file has not had, so it differs even within
/// one tick of the file system's clock).
fn touch(dir: &Path, n: usize) {
    std::fs::write(dir.join("src/lib.rs"), "/".repeat(n)).unwrap();
}

/// Everything `dev` wrote on stderr so far.
type Lines = Arc<Mutex<Vec<String>>>;

fn seen(lines: &Lines, needle: &str) -> bool {
    lines.lock().unwrap().iter().any(|l| l.contains(needle))
}

struct Dev {
    _child: tokio::process::Child,
    host: ClientSession,
    stderr: Lines,
}

async fn dev(dir: &Path) -> Dev {
    let bin = env!("CARGO_BIN_EXE_switchboard");
    let mut child = tokio::process::Command::new(bin)
        .args([
            "dev",
            "--watch",
            dir.join("src").to_str().unwrap(),
            "--build",
            &format!("sh {}", dir.join("build.sh").display()),
            "--ui",
            "0",
            "--",
            bin,
            "serve",
            "--example",
            "bench",
            "--tools",
            &format!("$(cat {})", dir.join("tools").display()),
        ])
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("dev starts");
    let stderr: Lines = Arc::default();
    let mut err = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let sink = stderr.clone();
    tokio::spawn(async move {
        while let Ok(Some(l)) = err.next_line().await {
            sink.lock().unwrap().push(l);
        }
    });
    let transport = StdioTransport::new(child.stdout.take().unwrap(), child.stdin.take().unwrap());
    // The 2025 era: list_changed reaches the host unasked.
    let host = Client::builder(Implementation::new("dev-host", "1"))
        .era(EraMode::Legacy)
        .build()
        .connect(transport)
        .await
        .expect("dev answers the host");
    Dev {
        _child: child,
        host,
        stderr,
    }
}

/// The live viewer's address, from dev's announcement.
fn viewer(lines: &Lines) -> Option<String> {
    let lines = lines.lock().unwrap();
    let l = lines
        .iter()
        .find(|l| l.contains("live session viewer is at http://"))?;
    let at = l.find("http://")? + "http://".len();
    Some(
        l[at..]
            .trim_end_matches('/')
            .trim_end()
            .trim_end_matches('/')
            .to_owned(),
    )
}

/// `GET path` with `Host: host` from the viewer at `addr`: the status line and the body.
async fn get(addr: &str, host: &str, path: &str) -> (String, String) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(
        format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .await
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    let status = out.lines().next().unwrap_or_default().to_owned();
    let body = out
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_good_build_restarts_the_server_in_place_and_the_host_is_told_a_bad_one_changes_nothing()
{
    let dir = scratch("loop");
    std::fs::write(dir.join("tools"), "1").unwrap();
    std::fs::write(dir.join("build.sh"), "exit 0\n").unwrap();
    touch(&dir, 1);
    let d = dev(&dir).await;
    // The host sees the server it develops, not the gateway in front of it.
    assert_eq!(d.host.negotiated().server_info.name, "switchboard-bench");
    let before = names(&d.host.list_tools().await.expect("tools"));
    assert!(before.contains(&"tool_0".to_owned()) && !before.contains(&"tool_1".to_owned()));
    wait::until("dev watches", || seen(&d.stderr, "dev: serving")).await;

    // A good build: the new server (two numbered tools) replaces the old, the host is told.
    let changed = wait::spawn_polled({
        let h = d.host.clone();
        async move { h.tools_changed().await.expect("list_changed") }
    })
    .await;
    std::fs::write(dir.join("tools"), "2").unwrap();
    touch(&dir, 2);
    let tools = tokio::time::timeout(wait::DEADLINE, changed)
        .await
        .expect("told in time")
        .unwrap();
    assert!(
        names(&tools).contains(&"tool_1".to_owned()),
        "{:?}",
        names(&tools)
    );
    wait::until("the restart is reported", || {
        seen(&d.stderr, "dev: restarted")
    })
    .await;

    // A failing build: its output on stderr, the running build serves on unchanged.
    std::fs::write(
        dir.join("build.sh"),
        "echo 'error[E0425]: compile-error-xyz' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::write(dir.join("tools"), "3").unwrap();
    touch(&dir, 3);
    wait::until("the build error is shown", || {
        seen(&d.stderr, "dev: build failed") && seen(&d.stderr, "compile-error-xyz")
    })
    .await;
    let tools = names(&d.host.list_tools().await.expect("tools"));
    assert!(
        tools.contains(&"tool_1".to_owned()) && !tools.contains(&"tool_2".to_owned()),
        "{tools:?}"
    );
    let r = d
        .host
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .expect("the old build answers");
    assert_eq!(
        serde_json::to_value(&r)
            .unwrap()
            .pointer("/content/0/text")
            .and_then(Value::as_str),
        Some("5")
    );

    // The build fixed: the change it held back arrives.
    let changed = wait::spawn_polled({
        let h = d.host.clone();
        async move { h.tools_changed().await.expect("list_changed") }
    })
    .await;
    std::fs::write(dir.join("build.sh"), "exit 0\n").unwrap();
    touch(&dir, 4);
    let tools = tokio::time::timeout(wait::DEADLINE, changed)
        .await
        .expect("told in time")
        .unwrap();
    assert!(
        names(&tools).contains(&"tool_2".to_owned()),
        "{:?}",
        names(&tools)
    );

    // One host session throughout: the live view on stderr shows one initialize, the host's.
    d.host.ping().await.expect("pong");
    let initializes = d
        .stderr
        .lock()
        .unwrap()
        .iter()
        .filter(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w.get(2) == Some(&"request") && w.get(4) == Some(&"initialize")
        })
        .count();
    assert_eq!(initializes, 1, "{:#?}", d.stderr.lock().unwrap());
    assert!(seen(&d.stderr, "notifications/tools/list_changed"));

    // The live viewer: the session so far, on its own origin only.
    let addr = viewer(&d.stderr).expect("the viewer is announced");
    let (status, body) = get(&addr, &addr, "/session.json").await;
    assert!(status.contains("200"), "{status}");
    let data: Value = serde_json::from_str(&body).unwrap();
    assert!(data["frames_total"].as_u64().unwrap() >= 10, "{data}");
    assert_eq!(data["live"], true);
    let (status, page) = get(&addr, &addr, "/").await;
    assert!(
        status.contains("200") && page.contains("connect-src 'self'"),
        "{status}"
    );
    let (status, _) = get(&addr, "attacker.example", "/session.json").await;
    assert!(status.contains("403"), "{status}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_streamable_http_the_host_is_told_of_a_rebuild_on_its_session() {
    let dir = scratch("http");
    std::fs::write(dir.join("tools"), "1").unwrap();
    touch(&dir, 1);
    let bin = env!("CARGO_BIN_EXE_switchboard");
    // No build command and no `cargo run`: each change restarts the server.
    let mut child = tokio::process::Command::new(bin)
        .args([
            "dev",
            "--http",
            "127.0.0.1:0",
            "--watch",
            dir.join("src").to_str().unwrap(),
            "--",
            bin,
            "serve",
            "--example",
            "bench",
            "--tools",
            &format!("$(cat {})", dir.join("tools").display()),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("dev starts");
    let stderr: Lines = Arc::default();
    let mut err = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let sink = stderr.clone();
    tokio::spawn(async move {
        while let Ok(Some(l)) = err.next_line().await {
            sink.lock().unwrap().push(l);
        }
    });
    wait::until("the front listens", || {
        seen(&stderr, "dev: the front listens on http://")
    })
    .await;
    let url = {
        let lines = stderr.lock().unwrap();
        let l = lines
            .iter()
            .find(|l| l.contains("the front listens on"))
            .unwrap();
        l[l.find("http://").unwrap()..].trim().to_owned()
    };
    let transport = switchboard::http_client::HttpClientTransport::connect(
        &url,
        switchboard::http_client::HttpClientConfig::default(),
    )
    .unwrap();
    let host = Client::builder(Implementation::new("dev-http-host", "1"))
        .era(EraMode::Legacy)
        .build()
        .connect(transport)
        .await
        .expect("the front answers");
    assert!(!names(&host.list_tools().await.unwrap()).contains(&"tool_1".to_owned()));
    wait::until("dev watches", || seen(&stderr, "dev: serving")).await;
    let changed = wait::spawn_polled({
        let h = host.clone();
        async move { h.tools_changed().await.expect("list_changed") }
    })
    .await;
    std::fs::write(dir.join("tools"), "2").unwrap();
    touch(&dir, 2);
    let tools = tokio::time::timeout(wait::DEADLINE, changed)
        .await
        .expect("told in time")
        .unwrap();
    assert!(
        names(&tools).contains(&"tool_1".to_owned()),
        "{:?}",
        names(&tools)
    );
    assert!(!seen(&stderr, "dev: building"), "no build command");
    let _ = std::fs::remove_dir_all(&dir);
}
