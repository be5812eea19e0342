//! `switchboard check --url` and `switchboard call --url` end to end over Streamable HTTP: the
//! HTTP rules (sessions, headers, status codes, Origin) pass against our everything server in
//! both reply modes, and a deliberately broken server (tests/fixtures/broken_http_server.py)
//! fails exactly the rules it breaks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

mod common;

use common::{Served, bin};

/// Spawns `cmd` and waits (20 s at most) for a line containing `listening on http://…/mcp` on
/// `stdout` or `stderr`; the URL is taken from that line.
fn spawn_listening(mut cmd: Command, on_stdout: bool) -> Served {
    cmd.stdin(Stdio::null());
    if on_stdout {
        cmd.stdout(Stdio::piped()).stderr(Stdio::null());
    } else {
        cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    }
    let mut child = cmd.spawn().expect("spawns");
    let pipe: Box<dyn std::io::Read + Send> = if on_stdout {
        Box::new(child.stdout.take().unwrap())
    } else {
        Box::new(child.stderr.take().unwrap())
    };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            if !sent && let Some(at) = line.find("http://") {
                let url: String = line[at..]
                    .chars()
                    .take_while(|c| !c.is_whitespace() && *c != '\x1b')
                    .collect();
                let _ = tx.send(url);
                sent = true;
            }
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("the server listens");
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    Served { child, url }
}

/// Our everything server over Streamable HTTP on a port it picks.
fn serve(extra: &[&str]) -> Served {
    let mut cmd = bin();
    cmd.args(["serve", "--http", "127.0.0.1:0"]).args(extra);
    spawn_listening(cmd, false)
}

/// The broken fixture server.
fn broken() -> Served {
    let mut cmd = Command::new("python3");
    cmd.arg(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/broken_http_server.py"
    ));
    spawn_listening(cmd, true)
}

/// `switchboard check --json --url URL`: exit code, result lines, summary.
fn check(url: &str) -> (Option<i32>, Vec<Value>, Value, String) {
    let out = bin()
        .args(["check", "--json", "--url", url])
        .output()
        .expect("runs");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let mut lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON lines"))
        .collect();
    let summary = lines.pop().expect("a summary line");
    (out.status.code(), lines, summary, text)
}

fn is_http_rule(r: &Value) -> bool {
    let tag = r["tag"].as_str().unwrap_or_default();
    tag == "HT" || tag.starts_with("HT-") || tag == "JR-12"
}

fn with_outcome(results: &[Value], outcome: &str) -> BTreeSet<(String, String)> {
    results
        .iter()
        .filter(|r| r["outcome"] == outcome)
        .map(|r| {
            (
                r["tag"].as_str().unwrap_or_default().to_owned(),
                r["name"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// The HTTP rules the fixture breaks on purpose, one check each.
const BROKEN: [(&str, &str); 7] = [
    ("HT-3", "a foreign Origin is 403"),
    ("HT-19", "a request without the session id is 400"),
    ("HT-7", "a POSTed notification gets 202 and no body"),
    (
        "HT-7",
        "a POSTed response gets 202 and no body (or a 4xx when refused, HT-8)",
    ),
    ("HT-23", "an unsupported MCP-Protocol-Version header is 400"),
    (
        "HT-13",
        "GET with Accept: text/event-stream opens an SSE stream or is 405",
    ),
    (
        "HT-6",
        "a batch is refused when the negotiated version has none (400 or -32600)",
    ),
];

#[test]
fn check_url_fails_exactly_the_http_rules_a_broken_server_breaks() {
    let served = broken();
    let (code, results, summary, text) = check(&served.url);
    let failed = with_outcome(&results, "fail");
    let expected: BTreeSet<(String, String)> = BROKEN
        .iter()
        .map(|(t, n)| ((*t).to_owned(), (*n).to_owned()))
        .collect();
    assert_eq!(failed, expected, "{text}");
    assert_eq!(summary["failed"], 7, "{text}");
    assert_eq!(code, Some(1), "a failed check exits 1");
    // What the fixture does right passes: the checks can tell the rules apart.
    let passed = with_outcome(&results, "pass");
    for (tag, name) in [
        (
            "HT-18",
            "initialize gives a visible-ASCII MCP-Session-Id, or none (stateless)",
        ),
        ("HT-20", "an unknown session id is 404"),
        ("HT-20", "DELETE ends the session (then 404) or is 405"),
        (
            "HT-5",
            "a POST whose Accept lacks application/json or text/event-stream is 406 or 400",
        ),
        ("HT-6", "a malformed JSON body is 400 with a -32700 error"),
        ("JR-12", "a batch is answered under 2025-03-26"),
        (
            "HT",
            "a 20 MiB body gets 413 (or another clean answer) and the session lives on",
        ),
    ] {
        assert!(
            passed.contains(&(tag.to_owned(), name.to_owned())),
            "{tag} {name} should pass: {text}"
        );
    }
    // The detail says what the server did.
    let detail = |name: &str| {
        results
            .iter()
            .find(|r| r["name"] == name)
            .and_then(|r| r["detail"].as_str())
            .unwrap_or_default()
            .to_owned()
    };
    assert!(
        detail("a foreign Origin is 403").contains("HTTP 200"),
        "{text}"
    );
    assert!(
        detail("GET with Accept: text/event-stream opens an SSE stream or is 405")
            .contains("text/html"),
        "{text}"
    );
}

#[test]
fn check_url_passes_every_http_rule_against_our_server_in_both_reply_modes() {
    for extra in [&[][..], &["--json-response"][..]] {
        let served = serve(extra);
        let (code, results, summary, text) = check(&served.url);
        assert_eq!(summary["failed"], 0, "{extra:?}: {text}");
        assert_eq!(code, Some(0), "{extra:?}");
        let http: Vec<&Value> = results.iter().filter(|r| is_http_rule(r)).collect();
        assert_eq!(http.len(), 15, "every HTTP check reported: {text}");
        for r in &http {
            assert_eq!(r["outcome"], "pass", "{extra:?}: {r}");
            for key in ["tag", "name", "outcome", "detail"] {
                assert!(r[key].is_string(), "{key} in {r}");
            }
        }
        let detail = |name: &str| {
            http.iter()
                .find(|r| r["name"] == name)
                .and_then(|r| r["detail"].as_str())
                .unwrap_or_default()
                .to_owned()
        };
        // The option the server chose is named.
        let reply = if extra.is_empty() {
            "text/event-stream"
        } else {
            "application/json"
        };
        let ct = detail("a request is answered as application/json or text/event-stream");
        assert!(ct.contains(&format!("ping: {reply}")), "{ct}");
        assert!(
            detail("initialize gives a visible-ASCII MCP-Session-Id, or none (stateless)")
                .starts_with("stateful")
        );
        assert_eq!(
            detail("DELETE ends the session (then 404) or is 405"),
            "DELETE 200, then 404"
        );
        assert!(detail("a foreign Origin is 403").contains("initialize 403"));
    }
}

#[test]
fn check_url_lets_a_stateless_server_pass_and_names_the_options_it_took() {
    let served = serve(&["--stateless"]);
    let (code, results, summary, text) = check(&served.url);
    assert_eq!(summary["failed"], 0, "{text}");
    assert_eq!(code, Some(0));
    let by_name = |name: &str| {
        results
            .iter()
            .find(|r| r["name"] == name)
            .map(|r| {
                (
                    r["outcome"].as_str().unwrap_or_default().to_owned(),
                    r["detail"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .unwrap_or_default()
    };
    let (o, d) = by_name("initialize gives a visible-ASCII MCP-Session-Id, or none (stateless)");
    assert_eq!(
        (o.as_str(), d.as_str()),
        ("pass", "none: the server is stateless")
    );
    let (o, d) = by_name("GET with Accept: text/event-stream opens an SSE stream or is 405");
    assert_eq!((o.as_str(), d.as_str()), ("pass", "405: no GET stream"));
    // The session rules do not apply without sessions: skipped, never passed.
    for name in [
        "a request without the session id is 400",
        "an unknown session id is 404",
        "DELETE ends the session (then 404) or is 405",
        "a request before initialize is refused",
    ] {
        let (o, d) = by_name(name);
        assert_eq!(o, "skip", "{name}: {d}");
        assert!(d.contains("stateless"), "{name}: {d}");
    }
}

#[test]
fn check_url_prints_one_line_per_check_without_colour_when_piped() {
    let served = serve(&[]);
    let out = bin()
        .args(["check", "--url", &served.url])
        .env_remove("NO_COLOR")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).expect("utf-8");
    assert!(!text.contains('\x1b'), "no colour on a pipe: {text:?}");
    assert!(
        text.contains("pass [HT-3] a foreign Origin is 403: "),
        "{text}"
    );
    let last = text.lines().last().unwrap_or_default();
    assert!(last.ends_with("0 failed, 3 skipped"), "{last}");
    let stderr = String::from_utf8(out.stderr).expect("utf-8");
    assert!(!stderr.contains("checking"), "no progress line off a TTY");
}

fn call(url: &str, args: &[&str]) -> (Option<i32>, Value, String) {
    let out = bin()
        .args(["call", "--url", url])
        .args(args)
        .output()
        .expect("runs");
    let stdout = String::from_utf8(out.stdout).expect("utf-8");
    let stderr = String::from_utf8(out.stderr).expect("utf-8");
    let v = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (out.status.code(), v, stderr)
}

#[test]
fn call_url_covers_prompts_elicitation_roots_and_tool_errors() {
    for extra in [&[][..], &["--json-response"][..]] {
        let served = serve(extra);
        let url = &served.url;
        let (code, v, err) = call(url, &["prompts/get", "test_simple_prompt"]);
        assert_eq!(code, Some(0), "{err}");
        assert_eq!(v["messages"][0]["role"], "user", "{v}");
        let (code, v, err) = call(
            url,
            &[
                "tools/call",
                "test_elicitation",
                "message=who?",
                "--elicitation-response",
                r#"{"action":"accept","content":{"username":"ada","email":"a@b.c"}}"#,
            ],
        );
        assert_eq!(code, Some(0), "{err}");
        let said = v["content"][0]["text"].as_str().unwrap_or_default();
        assert!(said.starts_with("User response: action=accept"), "{v}");
        assert!(said.contains("ada"), "{v}");
        let (code, v, err) = call(
            url,
            &[
                "tools/call",
                "test_list_roots",
                "--roots",
                r#"[{"uri":"file:///tmp/r","name":"r"}]"#,
            ],
        );
        assert_eq!(code, Some(0), "{err}");
        assert!(
            v["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .contains("file:///tmp/r"),
            "{v}"
        );
        // A tool's failure is a result (exit 0) with isError, not a JSON-RPC error.
        let (code, v, err) = call(url, &["tools/call", "test_error_handling"]);
        assert_eq!(code, Some(0), "{err}");
        assert_eq!(v["isError"], true, "{v}");
        // An unknown tool is a JSON-RPC error: stderr, exit 1.
        let (code, _, err) = call(url, &["tools/call", "no_such_tool"]);
        assert_eq!(code, Some(1), "{err}");
        let e: Value = serde_json::from_str(&err).expect("the error as JSON on stderr");
        assert_eq!(e["code"], -32602);
    }
}
