//! `switchboard record` over HTTP, end to end on 127.0.0.1: the Streamable HTTP reverse proxy in
//! front of `switchboard serve --http` and of `@modelcontextprotocol/server-everything`, the
//! stdio→HTTP bridge (`--listen --stdio`) and the HTTP→stdio bridge (`--url` alone), each driven
//! by `switchboard call` and compared with the same call made directly; plus raw HTTP exchanges
//! that check the recording holds each frame exactly as it travelled.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");

mod common;

use common::{Served as Running, bin, free_port, serve_http, start};

/// `switchboard record -o FILE --listen ADDR` with `upstream` flags, on a free port.
fn record_listen(file: &Path, upstream: &[&str]) -> Running {
    let addr = format!("127.0.0.1:{}", free_port());
    let mut cmd = bin();
    cmd.args(["record", "-o", file.to_str().unwrap(), "--listen", &addr])
        .args(upstream);
    start(cmd, "listening on", format!("http://{addr}/mcp"))
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sb-record-http-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("rec.jsonl")
}

fn recording(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .expect("recording")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSONL"))
        .collect()
}

/// `switchboard call` with `target` flags; (exit code, stdout, stderr).
fn call(target: &[&str], args: &[&str]) -> (Option<i32>, String, String) {
    let out = bin()
        .arg("call")
        .args(target)
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

const CANNED: &str =
    r#"{"role":"assistant","content":{"type":"text","text":"canned"},"model":"m"}"#;

/// Calls that cover JSON and SSE answers, a server request answered by the client (sampling) and
/// an error; with `logging`, a tool whose log notifications ride its SSE stream (not used against
/// a JSON-only server, which sends them on the GET stream, where `call` may exit before they come).
fn calls(logging: bool) -> Vec<Vec<&'static str>> {
    let mut calls = vec![
        vec!["tools/call", "test_structured_output", "a=2", "b=5"],
        vec!["tools/list"],
        vec!["resources/read", "test://static-text"],
        vec![
            "tools/call",
            "test_sampling",
            "prompt=hi",
            "--sampling-response",
            CANNED,
        ],
        vec!["resources/read", "test://nope"],
    ];
    if logging {
        calls.push(vec!["tools/call", "test_tool_with_logging"]);
    }
    calls
}

/// Every call gives the same exit code, stdout and stderr through `via` as through `direct`.
fn same_results(direct: &[&str], via: &[&str], logging: bool) {
    for args in calls(logging) {
        let want = call(direct, &args);
        let got = call(via, &args);
        assert_eq!(got, want, "{args:?}");
        if args[0] != "resources/read" || args[1] != "test://nope" {
            assert_eq!(want.0, Some(0), "{args:?}: {}", want.2);
        } else {
            assert_eq!(want.0, Some(1), "{args:?}");
        }
    }
}

/// Checks what every HTTP recording must satisfy: transport http; each session's frames, after
/// the initialize request, carry one non-null session id; c2s frames hold initialize,
/// notifications/initialized and each call's method; the answer to sampling went c2s.
fn check_http_recording(
    lines: &[Value],
    sessions_expected: usize,
    initialize_has_session: bool,
    logging: bool,
) {
    assert!(!lines.is_empty());
    let mut sessions = std::collections::BTreeSet::new();
    for l in lines {
        assert_eq!(l["transport"], "http", "{l}");
        let frame: Value =
            serde_json::from_str(l["frame"].as_str().unwrap()).expect("a JSON frame");
        let is_init_request = frame["method"] == "initialize";
        if is_init_request && !initialize_has_session {
            assert!(l["session"].is_null(), "{l}");
        } else {
            let s = l["session"]
                .as_str()
                .unwrap_or_else(|| panic!("no session: {l}"));
            assert!(s.len() >= 16, "{l}");
            sessions.insert(s.to_owned());
        }
    }
    assert_eq!(sessions.len(), sessions_expected, "one session per call");
    let c2s_methods: Vec<String> = lines
        .iter()
        .filter(|l| l["direction"] == "c2s")
        .filter_map(|l| serde_json::from_str::<Value>(l["frame"].as_str()?).ok())
        .filter_map(|f| f["method"].as_str().map(str::to_owned))
        .collect();
    for m in [
        "initialize",
        "notifications/initialized",
        "tools/call",
        "tools/list",
        "resources/read",
    ] {
        assert!(c2s_methods.iter().any(|x| x == m), "{m} not recorded c2s");
    }
    let s2c_frames: Vec<Value> = lines
        .iter()
        .filter(|l| l["direction"] == "s2c")
        .map(|l| serde_json::from_str(l["frame"].as_str().unwrap()).unwrap())
        .collect();
    assert!(
        s2c_frames
            .iter()
            .any(|f| f["method"] == "sampling/createMessage"),
        "the server's sampling request is recorded s2c"
    );
    assert!(
        lines
            .iter()
            .any(|l| l["direction"] == "c2s"
                && l["frame"].as_str().unwrap().contains(r#""model":"m""#)),
        "the client's sampling answer is recorded c2s"
    );
    if logging {
        assert!(
            s2c_frames
                .iter()
                .any(|f| f["method"] == "notifications/message"),
            "log notifications recorded s2c"
        );
    }
}

/// The recording explains cleanly with `switchboard trace`.
fn traces_clean(file: &Path) {
    let out = bin()
        .args(["trace", "--json", file.to_str().unwrap()])
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\"summary\""), "{text}");
}

#[test]
fn the_reverse_proxy_is_transparent_for_our_client_and_records_every_frame() {
    for extra in [&[][..], &["--json-response"][..]] {
        let served = serve_http(extra);
        let file = temp(if extra.is_empty() {
            "proxy-sse"
        } else {
            "proxy-json"
        });
        let proxy = record_listen(&file, &["--url", &served.url]);
        let logging = extra.is_empty();
        same_results(&["--url", &served.url], &["--url", &proxy.url], logging);
        let lines = recording(&file);
        check_http_recording(&lines, calls(logging).len(), false, logging);
        traces_clean(&file);
    }
}

/// A raw exchange through the proxy: frames and headers exactly as sent, both ways.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_records_frames_byte_for_byte_and_passes_headers_and_statuses() {
    let served = serve_http(&["--json-response"]);
    let file = temp("raw");
    let proxy = record_listen(&file, &["--url", &served.url]);
    let client = reqwest::Client::new();
    let post = |body: &'static str, session: Option<&str>, version: Option<&str>| {
        let mut rb = client
            .post(&proxy.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body);
        if let Some(s) = session {
            rb = rb.header("mcp-session-id", s);
        }
        if let Some(v) = version {
            rb = rb.header("mcp-protocol-version", v);
        }
        rb.send()
    };
    // Odd spacing and an escaped character: the recording must keep them as sent.
    let init = "{ \"jsonrpc\": \"2.0\", \"id\": \"i\\u0031\", \"method\": \"initialize\", \"params\": {\"protocolVersion\": \"2025-03-26\", \"capabilities\": {}, \"clientInfo\": {\"name\": \"raw\", \"version\": \"1\"}} }";
    let r = post(init, None, None).await.unwrap();
    assert_eq!(r.status(), 200);
    let session = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let init_answer = r.text().await.unwrap();
    assert!(init_answer.contains(r#""id":"i1""#), "{init_answer}");
    let r = post(
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        Some(&session),
        Some("2025-03-26"),
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 202);
    // A batch (allowed in 2025-03-26): recorded entry by entry, each entry's exact text.
    let batch = "[ {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"} ,\n {\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/list\"} ]";
    let r = post(batch, Some(&session), Some("2025-03-26"))
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let batch_answer = r.text().await.unwrap();
    // Statuses and headers pass both ways: a bad protocol version is refused upstream (400).
    let r = post(
        r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#,
        Some(&session),
        Some("1999-01-01"),
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 400);
    // DELETE ends the session; the next POST is 404, relayed.
    let r = client
        .delete(&proxy.url)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-03-26")
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.status());
    let r = post(
        r#"{"jsonrpc":"2.0","id":10,"method":"ping"}"#,
        Some(&session),
        Some("2025-03-26"),
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 404);
    // Only /mcp (and the upstream's own path) is the endpoint.
    let elsewhere = proxy.url.replace("/mcp", "/elsewhere");
    let r = client.post(elsewhere).body("{}").send().await.unwrap();
    assert_eq!(r.status(), 404);

    let lines = recording(&file);
    let frames: Vec<(&str, Option<&str>, &str)> = lines
        .iter()
        .map(|l| {
            (
                l["direction"].as_str().unwrap(),
                l["session"].as_str(),
                l["frame"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(frames[0], ("c2s", None, init));
    assert_eq!(
        frames[1],
        ("s2c", Some(session.as_str()), init_answer.as_str())
    );
    assert_eq!(
        frames[2].2,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
    );
    assert_eq!(
        frames[3],
        (
            "c2s",
            Some(session.as_str()),
            r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#
        )
    );
    assert_eq!(
        frames[4],
        (
            "c2s",
            Some(session.as_str()),
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/list"}"#
        )
    );
    // The batch answer, entry by entry, each a verbatim slice of the body the client got.
    let answers: Vec<&str> = frames[5..]
        .iter()
        .take_while(|f| f.0 == "s2c")
        .map(|f| f.2)
        .collect();
    assert_eq!(answers.len(), 2, "{frames:?}");
    for a in &answers {
        assert!(batch_answer.contains(a), "{a} not in {batch_answer}");
    }
    assert!(lines.iter().all(|l| l["transport"] == "http"));
}

/// SSE answers are relayed event by event as they arrive: the first progress notification of a
/// slow tool reaches the client long before the stream ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sse_is_relayed_as_it_arrives_not_buffered() {
    let served = serve_http(&[]);
    let file = temp("stream");
    let proxy = record_listen(&file, &["--url", &served.url]);
    let (session, first_gap, total) = progress_stream(&proxy.url).await;
    assert!(
        total - first_gap >= Duration::from_millis(40),
        "the first event came {first_gap:?} in, the stream ended {total:?} in: buffered?"
    );
    let lines = recording(&file);
    let progress = lines
        .iter()
        .filter(|l| {
            l["frame"]
                .as_str()
                .unwrap()
                .contains("notifications/progress")
        })
        .count();
    assert_eq!(progress, 3, "three progress notifications recorded");
    assert!(
        lines
            .iter()
            .skip(1)
            .all(|l| l["session"] == session.as_str())
    );
}

/// Initializes over raw HTTP, then calls test_tool_with_progress with a progress token and reads
/// its SSE answer; returns the session id, when the first progress event arrived and when the
/// stream ended (from the POST).
async fn progress_stream(url: &str) -> (String, Duration, Duration) {
    let client = reqwest::Client::new();
    let post = |body: String, session: Option<String>| {
        let mut rb = client
            .post(url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body);
        if let Some(s) = session {
            rb = rb
                .header("mcp-session-id", s)
                .header("mcp-protocol-version", "2025-11-25");
        }
        rb.send()
    };
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}});
    let r = post(init.to_string(), None).await.unwrap();
    let session = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    r.text().await.unwrap();
    let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    post(note.to_string(), Some(session.clone())).await.unwrap();
    let call = json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_tool_with_progress","arguments":{},"_meta":{"progressToken":"tok"}}});
    let started = Instant::now();
    let mut r = post(call.to_string(), Some(session.clone())).await.unwrap();
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let mut body = String::new();
    let mut first = None;
    while let Some(chunk) = r.chunk().await.unwrap() {
        body.push_str(std::str::from_utf8(&chunk).unwrap());
        if first.is_none() && body.contains("notifications/progress") {
            first = Some(started.elapsed());
        }
    }
    let total = started.elapsed();
    assert_eq!(body.matches("notifications/progress").count(), 3, "{body}");
    assert!(body.contains(r#""id":2"#), "{body}");
    (session, first.expect("a progress event"), total)
}

#[test]
fn the_stdio_to_http_bridge_serves_a_stdio_server_to_our_http_client() {
    let server = format!("{BIN} serve");
    let file = temp("bridge-in");
    let bridge = record_listen(&file, &["--stdio", &server]);
    same_results(&["--stdio", &server], &["--url", &bridge.url], true);
    let lines = recording(&file);
    check_http_recording(&lines, calls(true).len(), true, true);
    traces_clean(&file);
}

/// Over the stdio→HTTP bridge, progress and the answer of a request ride its own POST stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stdio_to_http_bridge_routes_progress_to_the_post_stream() {
    let server = format!("{BIN} serve");
    let file = temp("bridge-progress");
    let bridge = record_listen(&file, &["--stdio", &server]);
    let (session, first, total) = progress_stream(&bridge.url).await;
    assert!(
        total - first >= Duration::from_millis(40),
        "{first:?} {total:?}"
    );
    let lines = recording(&file);
    assert!(lines.iter().all(|l| l["session"] == session.as_str()));
}

/// Over the stdio→HTTP bridge, a cancelled request's POST stream ends at once (the child drops
/// the request and will never answer it), as it does on `switchboard serve --http`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stdio_to_http_bridge_ends_a_cancelled_requests_stream_at_once() {
    use switchboard::types::methods;
    let server = format!("{BIN} serve");
    let file = temp("bridge-cancel");
    let bridge = record_listen(&file, &["--stdio", &server]);
    let client = reqwest::Client::new();
    let post = |body: Value, session: Option<&str>| {
        let mut rb = client
            .post(&bridge.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(s) = session {
            rb = rb
                .header("mcp-session-id", s)
                .header("mcp-protocol-version", "2025-11-25");
        }
        rb.send()
    };
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": methods::INITIALIZE, "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"sampling": {}},
        "clientInfo": {"name": "raw", "version": "1"}}});
    let r = post(init, None).await.unwrap();
    let session = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    r.text().await.unwrap();
    let note = json!({"jsonrpc": "2.0", "method": methods::NOTIFICATIONS_INITIALIZED});
    post(note, Some(&session)).await.unwrap();
    // test_sampling waits for our sampling answer, which never comes.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": methods::TOOLS_CALL,
        "params": {"name": "test_sampling", "arguments": {"prompt": "hi"}}});
    let mut r = post(call, Some(&session)).await.unwrap();
    let mut body = String::new();
    while !body.contains(methods::SAMPLING_CREATE_MESSAGE) {
        let chunk = tokio::time::timeout(Duration::from_secs(10), r.chunk())
            .await
            .expect("the sampling request")
            .unwrap()
            .expect("the stream is open");
        body.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    let cancel = json!({"jsonrpc": "2.0", "method": methods::NOTIFICATIONS_CANCELLED,
        "params": {"requestId": 2, "reason": "user"}});
    assert_eq!(post(cancel, Some(&session)).await.unwrap().status(), 202);
    let rest = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(chunk) = r.chunk().await.unwrap() {
            body.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    })
    .await;
    assert!(rest.is_ok(), "the stream ended at once: {body}");
    assert!(!body.contains(r#""id":2,"result""#), "{body}");
}

#[test]
fn the_http_to_stdio_bridge_serves_a_remote_server_to_a_stdio_host() {
    let served = serve_http(&[]);
    let mut lines = Vec::new();
    for (i, args) in calls(true).iter().enumerate() {
        // One recording per run: each `record` process writes its own file.
        let file = temp(&format!("bridge-out-{i}"));
        let bridged = format!("{BIN} record -o {} --url {}", file.display(), served.url);
        let want = call(&["--url", &served.url], args);
        let got = call(&["--stdio", &bridged], args);
        assert_eq!(got, want, "{args:?}");
        traces_clean(&file);
        lines.extend(recording(&file));
    }
    check_http_recording(&lines, calls(true).len(), false, true);
}

/// The repository root (two levels above this crate).
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `@modelcontextprotocol/server-everything` in its streamableHttp mode on 127.0.0.1, from
/// interop/node_modules on Node 22 (installed by scripts/install-peers.sh). Missing peers fail
/// the test: an interop run that cannot start must never pass.
fn server_everything_http() -> Running {
    let repo = repo();
    let node = repo.join(".tools/node22/bin/node");
    let js =
        repo.join("interop/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let preload = repo.join("interop/listen-localhost.mjs");
    for p in [&node, &js, &preload] {
        assert!(
            p.exists(),
            "{} is missing: run scripts/install-peers.sh",
            p.display()
        );
    }
    let port = free_port();
    let mut cmd = Command::new(node);
    cmd.arg("--import")
        .arg(&preload)
        .arg(&js)
        .arg("streamableHttp")
        .env("PORT", port.to_string());
    start(
        cmd,
        "listening on port",
        format!("http://127.0.0.1:{port}/mcp"),
    )
}

#[test]
fn the_reverse_proxy_is_transparent_for_the_official_server_everything() {
    let served = server_everything_http();
    let file = temp("interop");
    let proxy = record_listen(&file, &["--url", &served.url]);
    let sampling =
        r#"{"role":"assistant","content":{"type":"text","text":"canned reply"},"model":"m"}"#;
    let cases: Vec<Vec<&str>> = vec![
        vec!["tools/call", "echo", "message=hello"],
        vec!["tools/call", "get-sum", "a=2", "b=3"],
        vec!["tools/list"],
        vec!["prompts/list"],
        vec![
            "tools/call",
            "trigger-sampling-request",
            "prompt=hi",
            "maxTokens=10",
            "--sampling-response",
            sampling,
        ],
    ];
    for args in &cases {
        let want = call(&["--url", &served.url], args);
        let got = call(&["--url", &proxy.url], args);
        assert_eq!(want.0, Some(0), "{args:?}: {}", want.2);
        assert_eq!(got, want, "{args:?}");
    }
    let lines = recording(&file);
    let text = |dir: &str| -> String {
        lines
            .iter()
            .filter(|l| l["direction"] == dir)
            .map(|l| l["frame"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(text("s2c").contains("Echo: hello"));
    assert!(text("s2c").contains("sampling/createMessage"));
    assert!(text("c2s").contains("canned reply"));
    let sessions: std::collections::BTreeSet<&str> =
        lines.iter().filter_map(|l| l["session"].as_str()).collect();
    assert_eq!(sessions.len(), cases.len(), "one session id per call");
}
