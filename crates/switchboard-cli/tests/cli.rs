//! The `switchboard` binary end to end: exit codes and output of `demo`, `trace`, `serve`,
//! `check`, `call` and `record`.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::bin;

#[test]
fn demo_prints_the_annotated_session_and_exits_0() {
    let out = bin().arg("demo").output().expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).expect("utf-8");
    assert!(text.contains("# step 6: server registers subtract"));
    assert!(text.contains("# summary: 12 frames, 0 violations"));
    assert!(text.contains("# step 13: subscription"));
    assert!(text.contains("# summary: 36 frames, 0 violations"));
    assert!(
        out.stderr.is_empty(),
        "nothing on stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn demo_annotates_each_step_and_direction_and_speaks_to_users() {
    let out = bin().arg("demo").output().expect("runs");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    for n in 1..=13 {
        let heading = format!("\n# step {n}: ");
        let at = text.find(&heading).unwrap_or_else(|| panic!("no step {n}"));
        let title = text[at + heading.len()..].lines().next().unwrap_or("");
        assert!(!title.trim().is_empty(), "step {n} has a title");
    }
    let (one, two) = text.split_once("## Part 2").expect("two parts");
    assert!(one.contains("## Part 1: a worked session, against the demo server"));
    assert_eq!(one.matches("client → server").count(), 6);
    assert_eq!(one.matches("server → client").count(), 6);
    assert_eq!(
        two.matches("client → server").count() + two.matches("server → client").count(),
        36
    );
    for internal in ["seed", "SPEC-NOTES", "../shared", "issue "] {
        assert!(!text.contains(internal), "the demo mentions {internal:?}");
    }
}

#[test]
fn help_speaks_to_users() {
    for command in [
        &["--help"][..],
        &["serve", "--help"],
        &["demo", "--help"],
        &["record", "--help"],
        &["check", "--help"],
    ] {
        let out = bin().args(command).output().expect("runs");
        assert_eq!(out.status.code(), Some(0), "{command:?}");
        let text = String::from_utf8(out.stdout).expect("utf-8");
        for internal in ["seed", "Seed", "SPEC-NOTES", "../shared", ".md", "issue "] {
            assert!(
                !text.contains(internal),
                "{command:?} mentions {internal:?}:\n{text}"
            );
        }
    }
}

/// `serve --http` announces its address on stderr at INFO, shown without RUST_LOG; stdout stays
/// empty.
#[test]
fn serve_http_prints_listening_on_to_stderr_by_default() {
    use std::io::{BufRead, BufReader};
    let mut child = bin()
        .args(["serve", "--http", "127.0.0.1:0"])
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    let line = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("a line on stderr");
    let _ = child.kill();
    let out = child.wait_with_output().expect("exits");
    assert!(line.contains("INFO"), "{line}");
    assert!(line.contains("listening on http://127.0.0.1:"), "{line}");
    assert!(line.trim_end().ends_with("/mcp"), "{line}");
    assert!(out.stdout.is_empty(), "nothing on stdout");
}

/// `serve --server-card NAME` refuses a name that is not reverse DNS with one `/` (exit 2, the
/// rule said), before anything is served.
#[test]
fn serve_refuses_a_server_card_name_the_schema_would_refuse() {
    let out = bin()
        .args([
            "serve",
            "--http",
            "127.0.0.1:0",
            "--server-card",
            "no-slash",
        ])
        .stdin(Stdio::null())
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("reverse DNS and one `/`"), "{stderr}");
    assert!(out.stdout.is_empty());
}

fn trace_stdin(input: &str, extra: &[&str]) -> (Option<i32>, String) {
    let mut child = bin()
        .args(["trace", "-"])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawns");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("writes");
    let out = child.wait_with_output().expect("waits");
    (
        out.status.code(),
        String::from_utf8(out.stdout).expect("utf-8"),
    )
}

#[test]
fn trace_of_the_demo_has_no_violations() {
    let raw = bin().args(["demo", "--raw"]).output().expect("runs");
    let (code, text) = trace_stdin(&String::from_utf8(raw.stdout).expect("utf-8"), &["--json"]);
    assert_eq!(code, Some(0), "{text}");
    let last = text.lines().last().expect("a summary line");
    let v: serde_json::Value = serde_json::from_str(last).expect("json");
    assert_eq!(v["summary"]["frames"], 48, "both parts of the demo");
    assert_eq!(v["summary"]["violations"], 0);
}

#[test]
fn trace_html_prints_the_viewer_page_with_the_sessions_counts() {
    let raw = bin().args(["demo", "--raw"]).output().expect("runs");
    let (code, page) = trace_stdin(&String::from_utf8(raw.stdout).expect("utf-8"), &["--html"]);
    assert_eq!(code, Some(0));
    assert!(
        page.starts_with("<!doctype html>"),
        "{}",
        &page[..page.len().min(200)]
    );
    assert!(page.contains(r#"id="frame-count" data-count="48">48<"#));
    assert!(page.contains(r#"id="violation-count" data-count="0">0<"#));
    assert!(page.contains(r#"<script type="application/json" id="session">"#));
    let (code, page) = trace_stdin(
        "-> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n",
        &["--html"],
    );
    assert_eq!(code, Some(1), "exit codes as without --html");
    assert!(page.contains(r#"id="violation-count" data-count="1">1<"#));
}

#[test]
fn trace_exits_1_on_a_violation_and_2_on_a_missing_file() {
    let (code, text) = trace_stdin(
        "-> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n",
        &[],
    );
    assert_eq!(code, Some(1));
    assert!(text.contains("[LC-1]"), "{text}");
    let out = bin()
        .args(["trace", "/nonexistent/file"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("reading /nonexistent/file"));
}

#[test]
fn serve_stdio_writes_nothing_but_frames_to_stdout() {
    let mut child = bin()
        .args(["serve", "--example", "add"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    let script = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#,
        "\n"
    );
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(script.as_bytes())
        .expect("writes");
    let out = child.wait_with_output().expect("exits at EOF");
    assert_eq!(
        out.status.code(),
        Some(0),
        "EOF on stdin ends the session cleanly"
    );
    let stdout = String::from_utf8(out.stdout).expect("utf-8");
    let expected = format!(
        "{}\n{}\n",
        format_args!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":"2025-11-25","capabilities":{{"tools":{{"listChanged":true}}}},"serverInfo":{{"name":"switchboard-add","version":"{}"}}}}}}"#,
            env!("CARGO_PKG_VERSION")
        ),
        r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"5"}]}}"#
    );
    assert_eq!(stdout, expected, "ST-2: byte-exact, frames only");
}

#[test]
fn d26_102_d26_120_serve_stdio_speaks_2026_07_28_when_the_first_request_does() {
    let mut child = bin()
        .args(["serve", "--example", "add"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let script = format!(
        "{}\n{}\n{}\n",
        format_args!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{meta}}}}}"#
        ),
        format_args!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"add","arguments":{{"a":2,"b":3}},{meta}}}}}"#
        ),
        r#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    );
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(script.as_bytes())
        .expect("writes");
    let out = child.wait_with_output().expect("exits at EOF");
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).expect("utf-8");
    let info = format!(
        r#""_meta":{{"io.modelcontextprotocol/serverInfo":{{"name":"switchboard-add","version":"{}"}}}}"#,
        env!("CARGO_PKG_VERSION")
    );
    let expected = format!(
        "{}\n{}\n{}\n",
        format_args!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{{"tools":{{"listChanged":true}}}},"ttlMs":0,"cacheScope":"private",{info}}}}}"#
        ),
        format_args!(
            r#"{{"jsonrpc":"2.0","id":2,"result":{{"content":[{{"type":"text","text":"5"}}],"resultType":"complete",{info}}}}}"#
        ),
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32022,"message":"Unsupported protocol version 2025-11-25; supported: 2026-07-28","data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}}"#,
    );
    assert_eq!(
        stdout, expected,
        "byte-exact: the first request opened a 2026-07-28 connection; initialize is not a way back"
    );
}

fn check(server: &str) -> (Option<i32>, Vec<serde_json::Value>) {
    let out = bin()
        .args(["check", "--json", "--stdio", server])
        .output()
        .expect("runs");
    let lines = String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    (out.status.code(), lines)
}

#[test]
fn check_passes_our_everything_and_add_servers() {
    for example in ["everything", "add"] {
        let (code, lines) = check(&format!(
            "{} serve --example {example}",
            env!("CARGO_BIN_EXE_switchboard")
        ));
        let summary = lines.last().expect("summary");
        assert_eq!(summary["failed"], 0, "{example}: {lines:#?}");
        assert_eq!(code, Some(0));
        assert!(summary["passed"].as_u64().unwrap_or(0) >= 20);
    }
}

#[test]
fn check_fails_exactly_the_rules_a_broken_server_breaks() {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/broken_server.py"
    );
    let (code, lines) = check(&format!("python3 {script}"));
    assert_eq!(code, Some(1));
    let failed: Vec<(String, String)> = lines
        .iter()
        .filter(|l| l["outcome"] == "fail")
        .map(|l| {
            (
                l["tag"].as_str().unwrap_or("").to_owned(),
                l["name"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    for (tag, name) in [
        ("LC-1", "a request before initialize is refused"),
        (
            "LC-8",
            "an unsupported version gets a counter-offer (a result, not an error)",
        ),
        ("JR-6", "an integer id stays an integer"),
        ("JR-11", "notifications are never answered"),
        ("SF-6", "tools are listed with an object inputSchema"),
        ("JR", "an unknown method is -32601"),
    ] {
        assert!(
            failed.contains(&(tag.to_owned(), name.to_owned())),
            "{tag} {name} should fail: {failed:#?}"
        );
    }
    let passed: Vec<&str> = lines
        .iter()
        .filter(|l| l["outcome"] == "pass")
        .filter_map(|l| l["name"].as_str())
        .collect();
    assert!(
        passed.contains(&"a string id stays a string"),
        "what the broken server does right still passes"
    );
}

fn call(args: &[&str]) -> (Option<i32>, String, String) {
    let server = format!("{} serve", env!("CARGO_BIN_EXE_switchboard"));
    common::run(&[&["call", "--stdio", &server][..], args].concat())
}

#[test]
fn call_prints_the_result_and_exits_0() {
    let (code, out, _) = call(&["tools/call", "test_structured_output", "a=2", "b=5"]);
    assert_eq!(code, Some(0));
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON on stdout");
    assert_eq!(
        v["structuredContent"],
        serde_json::json!({"sum": 7, "product": 10})
    );
    // --params merges over the target and the pairs: the name replaced, the arguments kept.
    let merged = [
        "tools/call",
        "nothing",
        "a=2",
        "b=5",
        "--params",
        r#"{"name": "test_structured_output"}"#,
    ];
    let (code, again, err) = call(&merged);
    assert_eq!((code, again.as_str()), (Some(0), out.as_str()), "{err}");
    let (code, out, _) = call(&["resources/read", "test://static-text"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("This is the content of the static text resource."));
    let (code, out, _) = call(&["tools/list"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("test_simple_text"));
}

#[test]
fn call_follows_a_list_to_its_last_page() {
    let server = format!(
        "{} serve --example bench --tools 250 --page-size 100",
        env!("CARGO_BIN_EXE_switchboard")
    );
    let (code, out, err) = common::run(&["call", "--stdio", &server, "tools/list"]);
    assert_eq!(code, Some(0), "{err}");
    let all: serde_json::Value = serde_json::from_str(&out).expect("JSON on stdout");
    // add, blob and 250 more, over three pages of 100.
    assert_eq!(all["tools"].as_array().map(Vec::len), Some(252), "{all}");
    assert!(all.get("nextCursor").is_none(), "{all}");
}

#[test]
fn call_puts_a_json_rpc_error_on_stderr_and_exits_1() {
    let (code, out, err) = call(&["resources/read", "test://nope"]);
    assert_eq!((code, out.as_str()), (Some(1), ""));
    let v: serde_json::Value = serde_json::from_str(&err).expect("JSON error on stderr");
    assert_eq!(v["code"], -32002);
}

#[test]
fn call_exits_2_when_the_server_cannot_be_reached() {
    let out = bin()
        .args(["call", "--stdio", "/nonexistent/server", "ping"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot initialize"));
}

#[test]
fn call_speaks_either_era_and_answers_input_requests_in_2026() {
    // `call` runs `switchboard serve`: the everything server, which serves both eras.
    let answer = r#"{"action":"accept","content":{"name":"Ada"}}"#;
    for era in ["legacy", "auto", "2026-07-28"] {
        let (code, out, err) = call(&[
            "tools/call",
            "test_input_required_result_elicitation",
            "--era",
            era,
            "--elicitation-response",
            answer,
        ]);
        assert_eq!(code, Some(0), "{era}: {err}");
        assert!(out.contains("Hello, Ada!"), "{era}: {out}");
    }
    let (code, _, err) = call(&["tools/list", "--era", "2099"]);
    assert_eq!(code, Some(2), "a bad --era is a usage error: {err}");
}

#[test]
fn call_declines_server_requests_unless_given_a_canned_answer() {
    let (code, out, _) = call(&["tools/call", "test_sampling", "prompt=hi"]);
    assert_eq!(code, Some(0));
    assert!(
        out.contains("\"isError\": true") && out.contains("declined"),
        "{out}"
    );
    let canned = r#"{"role":"assistant","content":{"type":"text","text":"canned"},"model":"m"}"#;
    let (code, out, _) = call(&[
        "tools/call",
        "test_sampling",
        "prompt=hi",
        "--sampling-response",
        canned,
    ]);
    assert_eq!(code, Some(0));
    assert!(out.contains("LLM response: canned"), "{out}");
    let (_, out, _) = call(&[
        "tools/call",
        "test_list_roots",
        "--roots",
        r#"[{"uri":"file:///tmp","name":"tmp"}]"#,
    ]);
    assert!(out.contains("file:///tmp"), "{out}");
}

#[test]
fn record_relays_byte_for_byte_and_its_recording_traces_clean() {
    let script = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        "\r\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#,
        "\n"
    );
    let server = format!("{} serve --example add", env!("CARGO_BIN_EXE_switchboard"));
    let run = |cmd: &mut Command| {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawns");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(script.as_bytes())
            .expect("writes");
        child.wait_with_output().expect("exits")
    };
    let direct = run(Command::new("sh").args(["-c", &server]));
    let dir = std::env::temp_dir().join(format!("sb-record-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp");
    let file = dir.join("rec.jsonl");
    // A file there before, readable by all: the recording narrows it (issue 25, finding 10).
    std::fs::write(&file, "old").expect("tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    }
    let proxied = run(bin().args([
        "record",
        "-o",
        file.to_str().expect("utf-8"),
        "--stdio",
        &server,
    ]));
    assert_eq!(proxied.status.code(), Some(0));
    assert_eq!(proxied.stdout, direct.stdout, "the proxy is transparent");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&file)
            .expect("recording")
            .permissions()
            .mode();
        assert_eq!(
            mode & 0o777,
            0o600,
            "finding 10: the recording is its owner's only"
        );
    }
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&file)
        .expect("recording")
        .lines()
        .map(|l| serde_json::from_str(l).expect("jsonl"))
        .collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[0]["direction"], "c2s");
    assert_eq!(lines[0]["transport"], "stdio");
    assert!(
        lines[0]["frame"]
            .as_str()
            .expect("raw text")
            .starts_with(r#"{"jsonrpc":"2.0","id":1,"method":"initialize""#)
    );
    assert!(
        lines.iter().any(|l| l["direction"] == "s2c"
            && l["frame"].as_str().unwrap_or("").contains(r#""id":"x""#))
    );
    let out = bin()
        .args(["trace", file.to_str().expect("utf-8")])
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn call_task_shows_the_status_then_prints_the_result() {
    let (code, out, err) = call(&[
        "tools/call",
        "test_task_slow",
        "ms=200",
        "--task",
        "--ttl",
        "60000",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON on stdout");
    assert_eq!(v["content"][0]["text"], "slept 200 ms");
    let task = v["_meta"]["io.modelcontextprotocol/related-task"]["taskId"]
        .as_str()
        .expect("related task");
    assert!(err.contains(&format!("task {task}: working")), "{err}");
    assert!(err.contains(&format!("task {task}: completed")), "{err}");
    let (code, out, err) = call(&["tools/call", "test_task_required", "--task"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("the task is done"));
    let (code, _, err) = call(&["tools/call", "test_simple_text", "--task"]);
    assert_eq!(code, Some(2), "a tool that forbids tasks: nothing sent");
    assert!(err.contains("TK-2"), "{err}");
}

#[test]
fn tk_call_task_that_asks_for_input_is_answered_through_tasks_result() {
    // The task is input_required while it waits for the elicitation; tasks/result carries the
    // request to the client, whose canned answer finishes it.
    let answer = r#"{"action": "accept", "content": {"name": "Ada"}}"#;
    let args = ["tools/call", "test_task_elicitation", "--task"];
    let (code, out, err) = call(&[&args[..], &["--elicitation-response", answer]].concat());
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON on stdout");
    assert_eq!(v["content"][0]["text"], "hello Ada", "{out}");
    let task = v["_meta"]["io.modelcontextprotocol/related-task"]["taskId"]
        .as_str()
        .expect("related task");
    assert!(err.contains(&format!("task {task}: working")), "{err}");
    assert!(
        err.contains(&format!("task {task}: input_required")),
        "{err}"
    );
}

#[test]
fn d26_call_task_in_2026_07_28_declares_the_tasks_extension_and_follows_the_task() {
    let server = format!("{} serve", env!("CARGO_BIN_EXE_switchboard"));
    let call = |task: bool| {
        let mut c = bin();
        c.args(["call", "--era", "2026-07-28", "--stdio", &server]);
        if task {
            c.arg("--task");
        }
        c.args(["tools/call", "failing_job"])
            .output()
            .expect("runs")
    };
    // A tool that runs only as a task: refused without the extension (-32021, D26-132)...
    let out = call(false);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("-32021"));
    // ...and with --task, followed to its end: its isError result is the call's (D26-135).
    let out = call(true);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["isError"], true);
    assert_eq!(
        v["content"][0]["text"],
        "failing_job failed, as it always does"
    );
}

#[test]
fn completions_for_bash_zsh_and_fish() {
    for (shell, marker) in [
        ("bash", "complete -F _switchboard"),
        ("zsh", "#compdef switchboard"),
        ("fish", "complete -c switchboard"),
    ] {
        let out = bin().args(["completions", shell]).output().expect("runs");
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let script = String::from_utf8(out.stdout).expect("utf-8");
        assert!(
            script.contains(marker),
            "{shell}: {}",
            &script[..script.len().min(300)]
        );
        for sub in ["serve", "call", "check", "fuzz", "trace", "record", "demo"] {
            assert!(script.contains(sub), "{shell} completes {sub}");
        }
    }
    let out = bin().args(["completions", "tcsh"]).output().expect("runs");
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unknown shell is a usage error"
    );
}

#[test]
fn quiet_and_plain_logs_off_a_terminal() {
    // Off a terminal, log lines carry no colour codes; --quiet leaves only the address.
    let serve = |quiet: bool| {
        let mut c = bin();
        if quiet {
            c.arg("--quiet");
        }
        let mut child = c
            .args(["serve", "--http", "127.0.0.1:0"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawns");
        let mut line = String::new();
        let mut err = std::io::BufReader::new(child.stderr.take().expect("stderr"));
        std::io::BufRead::read_line(&mut err, &mut line).expect("a line");
        let _ = child.kill();
        let _ = child.wait();
        line
    };
    let normal = serve(false);
    assert!(
        normal.contains("INFO") && normal.contains("listening on http://127.0.0.1:"),
        "{normal}"
    );
    assert!(
        !normal.contains('\u{1b}'),
        "no ANSI codes off a terminal: {normal:?}"
    );
    let quiet = serve(true);
    assert!(
        quiet.starts_with("listening on http://127.0.0.1:"),
        "{quiet:?}"
    );
    let help = bin().arg("--help").output().expect("runs");
    let help = String::from_utf8(help.stdout).expect("utf-8");
    assert!(
        help.contains("Exit codes: 0 success; 1 a finding"),
        "{help}"
    );
}
