//! `switchboard call --url` and `switchboard check --url` against `switchboard serve --http`
//! (the everything server over Streamable HTTP on 127.0.0.1).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

mod common;

use common::{Served, bin};

/// Starts the everything server over HTTP (`extra` flags added) and waits for its
/// `listening on` line.
fn serve(extra: &[&str]) -> Served {
    common::serve_http(extra)
}

fn call(url: &str, args: &[&str]) -> (Option<i32>, String, String) {
    common::run(&[&["call", "--url", url][..], args].concat())
}

#[test]
fn call_url_prints_results_over_sse_and_json_replies() {
    for extra in [&[][..], &["--json-response"][..]] {
        let served = serve(extra);
        let (code, out, err) = call(
            &served.url,
            &["tools/call", "test_structured_output", "a=2", "b=5"],
        );
        assert_eq!(code, Some(0), "{extra:?}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).expect("JSON on stdout");
        assert_eq!(
            v["structuredContent"],
            serde_json::json!({"sum": 7, "product": 10})
        );
        let (code, out, _) = call(&served.url, &["tools/list"]);
        assert_eq!(code, Some(0));
        assert!(out.contains("test_simple_text"), "{out}");
        let (code, out, _) = call(&served.url, &["resources/read", "test://static-text"]);
        assert_eq!(code, Some(0));
        assert!(out.contains("This is the content of the static text resource."));
    }
}

#[test]
fn call_url_answers_sampling_with_the_canned_result_and_reports_errors() {
    let served = serve(&[]);
    let canned = r#"{"role":"assistant","content":{"type":"text","text":"canned"},"model":"m"}"#;
    let (code, out, err) = call(
        &served.url,
        &[
            "tools/call",
            "test_sampling",
            "prompt=hi",
            "--sampling-response",
            canned,
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("LLM response: canned"), "{out}");
    let (code, out, err) = call(&served.url, &["resources/read", "test://nope"]);
    assert_eq!((code, out.as_str()), (Some(1), ""));
    let v: serde_json::Value = serde_json::from_str(&err).expect("JSON error on stderr");
    assert_eq!(v["code"], -32002);
}

#[test]
fn call_needs_exactly_one_server_and_exits_2_when_unreachable() {
    let out = bin().args(["call", "ping"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2), "neither --stdio nor --url");
    let out = bin()
        .args([
            "call",
            "--stdio",
            "x",
            "--url",
            "http://127.0.0.1:1/mcp",
            "ping",
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2), "both");
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let started = Instant::now();
    let (code, _, err) = call(&format!("http://127.0.0.1:{port}/mcp"), &["ping"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("cannot initialize"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn check_url_runs_the_checks_over_streamable_http() {
    let served = serve(&[]);
    let out = bin()
        .args(["check", "--url", &served.url, "--json"])
        .output()
        .expect("runs");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON lines"))
        .collect();
    let (summary, results) = lines.split_last().expect("a summary");
    let outcome = |name: &str| {
        results
            .iter()
            .find(|r| r["name"] == name)
            .map(|r| r["outcome"].as_str().unwrap_or_default().to_owned())
    };
    for name in [
        "ping answers {}",
        "malformed JSON is -32700",
        "a null id is an invalid request (-32600)",
        "notifications are never answered",
        "a 20 MiB frame does not crash the server",
    ] {
        assert_eq!(outcome(name).as_deref(), Some("pass"), "{name}: {text}");
    }
    // Streamable HTTP has no session before initialize: the early-ping check does not apply.
    assert_eq!(
        outcome("ping before initialize answers {}").as_deref(),
        Some("skip"),
        "{text}"
    );
    assert_eq!(summary["failed"], 0, "{text}");
    assert_eq!(out.status.code(), Some(0));
}
