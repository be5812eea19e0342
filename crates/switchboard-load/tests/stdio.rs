//! The load tool over stdio, run as a program against a raw-JSON Python fixture server
//! (`fixtures/mcp_stdio.py`) and against our own `switchboard serve --example add`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

const LOAD: &str = env!("CARGO_BIN_EXE_switchboard-load");
const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mcp_stdio.py");

/// Runs the load tool; returns its exit code, its JSON report (Null if none) and its stderr.
fn load(args: &[&str]) -> (i32, Value, String) {
    let out = Command::new(LOAD)
        .args(args)
        .output()
        .expect("run switchboard-load");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
    (
        out.status.code().unwrap_or(-1),
        report,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn fixture(opts: &str) -> String {
    format!("python3 {FIXTURE} {opts}")
}

#[test]
fn counts_calls_latency_and_server_cost() {
    let (code, r, err) = load(&[
        "--stdio",
        &fixture(""),
        "-n",
        "300",
        "--warmup",
        "30",
        "-k",
        "4",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["mode"], "calls");
    assert_eq!(r["transport"], "stdio");
    assert_eq!(r["calls"], 300);
    assert_eq!(r["in_flight"], 4);
    assert_eq!(r["errors"], 0);
    assert_eq!(r["timed_out"], false);
    assert!(r["calls_per_sec"].as_f64().unwrap() > 0.0);
    let (p50, p99, p999) = (&r["p50_us"], &r["p99_us"], &r["p999_us"]);
    assert!(p50.as_u64().unwrap() <= p99.as_u64().unwrap(), "{r}");
    assert!(p99.as_u64().unwrap() <= p999.as_u64().unwrap(), "{r}");
    assert!(
        r["peak_rss_kib"].as_u64().unwrap() > 1000,
        "python's RSS is megabytes: {r}"
    );
    assert!(r["cpu_us_per_call"].as_f64().is_some(), "{r}");
    assert!(r["pid"].as_u64().is_some());
}

#[test]
fn tool_errors_and_protocol_errors_are_counted() {
    let server = fixture("--error-every 10 --rpc-error-every 25 --notify");
    let (code, r, err) = load(&[
        "--stdio", &server, "-n", "100", "--warmup", "0", "-k", "8", "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["calls"], 100);
    // Calls 25, 50, 75, 100 are JSON-RPC errors; 10..90 step 10 less 50 are isError results.
    assert_eq!(r["errors_rpc"], 4, "{r}");
    assert_eq!(r["errors_tool"], 8, "{r}");
    assert_eq!(r["errors_transport"], 0, "{r}");
    assert_eq!(r["errors"], 12, "{r}");
}

#[test]
fn k_requests_really_overlap() {
    // Each call takes 0.2 s: one after another, 64 calls would take 12.8 s.
    let server = fixture("--delay 0.2");
    let (code, r, err) = load(&[
        "--stdio", &server, "-n", "64", "--warmup", "0", "-k", "32", "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["calls"], 64);
    let secs = r["seconds"].as_f64().unwrap();
    assert!(
        (0.35..4.0).contains(&secs),
        "64 calls of 0.2 s, 32 at a time: {secs} s"
    );
    assert!(r["p50_us"].as_u64().unwrap() >= 200_000, "{r}");
    // And with one in flight they do not.
    let (_, r, _) = load(&[
        "--stdio", &server, "-n", "5", "--warmup", "0", "-k", "1", "--json",
    ]);
    assert!(r["seconds"].as_f64().unwrap() >= 1.0, "{r}");
}

#[test]
fn refuses_to_run_without_a_target() {
    let (code, r, err) = load(&["-n", "10"]);
    assert_eq!(code, 2);
    assert_eq!(r, Value::Null);
    assert!(err.contains("--stdio") && err.contains("--url"), "{err}");
    let (code, _, err) = load(&["--stdio", "true", "--url", "http://127.0.0.1:1/mcp"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = load(&["--stdio", &fixture(""), "--mode", "sessions"]);
    assert_eq!(code, 2);
    assert!(err.contains("--url"), "{err}");
}

#[test]
fn stops_at_max_seconds() {
    let t = Instant::now();
    let (code, r, err) = load(&[
        "--stdio",
        &fixture("--hang"),
        "-n",
        "1000",
        // The budget covers the whole run, the fixture's start and initialize included: a
        // Python start on a machine loaded by parallel builds once took longer than 1.5 s, and
        // the run was then (rightly) a setup error. Five seconds leave room for that.
        "--max-seconds",
        "5",
        "--json",
    ]);
    let took = t.elapsed();
    assert_eq!(code, 1, "a cut-short run exits 1: {err}");
    assert_eq!(r["timed_out"], true, "{r}");
    assert!(took < Duration::from_secs(15), "took {took:?}");
    // A server that never answers initialize is a setup error, also bounded.
    let t = Instant::now();
    let (code, _, err) = load(&["--stdio", "sleep 30", "--max-seconds", "1"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("initialize"), "{err}");
    assert!(t.elapsed() < Duration::from_secs(6));
}

#[test]
fn answers_server_pings() {
    // The fixture answers no call until its ping is answered.
    let (code, r, err) = load(&[
        "--stdio",
        &fixture("--ping"),
        "-n",
        "20",
        "--warmup",
        "0",
        "--max-seconds",
        "20",
        "--json",
    ]);
    assert_eq!(code, 0, "{err} {r}");
    assert_eq!(r["calls"], 20);
    assert_eq!(r["errors"], 0);
}

#[test]
fn a_server_that_dies_is_counted_not_hung() {
    let server = fixture("--die-after 50");
    let (code, r, err) = load(&[
        "--stdio",
        &server,
        "-n",
        "100",
        "--warmup",
        "0",
        "-k",
        "4",
        "--max-seconds",
        "20",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let ok = r["calls"].as_u64().unwrap() - r["errors"].as_u64().unwrap();
    assert!(ok <= 50, "{r}");
    assert!(r["errors_transport"].as_u64().unwrap() >= 1, "{r}");
    assert!(r["notes"].to_string().contains("closed its stdout"), "{r}");
}

#[test]
fn leaves_no_orphans() {
    let file = std::env::temp_dir().join(format!("switchboard-load-child-{}", std::process::id()));
    let server = fixture(&format!("--spawn-child {}", file.display()));
    let (code, _, err) = load(&["--stdio", &server, "-n", "10", "--warmup", "0", "--json"]);
    assert_eq!(code, 0, "{err}");
    let pid = std::fs::read_to_string(&file).expect("the fixture wrote its child's pid");
    let _ = std::fs::remove_file(&file);
    let stat = PathBuf::from(format!("/proc/{}/stat", pid.trim()));
    // Gone, or a zombie waiting for its new parent to reap it: not running.
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let state = std::fs::read_to_string(&stat).ok().and_then(|s| {
            let rest = s[s.rfind(')')? + 1..].trim_start().to_owned();
            rest.chars().next()
        });
        if matches!(state, None | Some('Z' | 'X')) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the server's child {pid} still runs ({state:?})"
        );
        // The poll interval of a bounded wait (synchronous code: no async wait::until).
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn cold_start_repeats_spawn_to_initialize() {
    let (code, r, err) = load(&[
        "--stdio",
        &fixture(""),
        "--mode",
        "cold-start",
        "-n",
        "3",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["mode"], "cold-start");
    assert_eq!(r["repetitions"], 3);
    let (median, p90) = (
        r["cold_start_ms_median"].as_f64().unwrap(),
        r["cold_start_ms_p90"].as_f64().unwrap(),
    );
    assert!(median > 0.0 && median <= p90, "{r}");
    let (code, _, err) = load(&["--url", "http://127.0.0.1:1/", "--mode", "cold-start"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn stateless_2026_calls_skip_the_handshake_and_carry_the_envelope() {
    let (code, r, err) = load(&[
        "--stdio",
        &fixture("--modern"),
        "--protocol",
        "2026-07-28",
        "-n",
        "200",
        "-k",
        "8",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["protocol"], "2026-07-28", "{r}");
    assert_eq!(r["calls"], 200, "{r}");
    assert_eq!(r["errors"], 0, "{r}");
    // The same server refuses the 2025 handshake, which the default protocol starts with.
    let (code, _, err) = load(&["--stdio", &fixture("--modern"), "-n", "10", "--json"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("initialize failed"), "{err}");
    // Cold start measures the handshake, which this revision does not have.
    let (code, _, err) = load(&[
        "--stdio",
        &fixture(""),
        "--protocol",
        "2026-07-28",
        "--mode",
        "cold-start",
    ]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn the_readable_block() {
    let out = Command::new(LOAD)
        .args(["--stdio", &fixture(""), "-n", "20"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for word in [
        "calls over stdio",
        "throughput",
        "p99.9",
        "errors",
        "peak rss",
    ] {
        assert!(text.contains(word), "{word} missing from:\n{text}");
    }
}

/// Our own server: `switchboard serve --example add`, built beside this binary (the workspace
/// test run builds every binary; alone, run `cargo build --bin switchboard` first).
#[test]
fn smoke_against_switchboard_serve_add() {
    let dir = PathBuf::from(LOAD).parent().unwrap().to_path_buf();
    let server = dir.join("switchboard");
    assert!(
        server.exists(),
        "{} not found: run `cargo build --bin switchboard` (the workspace test run builds it)",
        server.display()
    );
    let cmd = format!("{} serve --example add", server.display());
    for k in ["1", "32"] {
        let (code, r, err) = load(&["--stdio", &cmd, "-n", "2000", "-k", k, "--json"]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(r["calls"], 2000, "{r}");
        assert_eq!(r["errors"], 0, "{r}");
    }
    let (code, r, err) = load(&["--stdio", &cmd, "--mode", "cold-start", "-n", "3", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["repetitions"], 3, "{r}");
    // The same binary answers the stateless revision: the first request decides the era.
    let (code, r, err) = load(&[
        "--stdio",
        &cmd,
        "--protocol",
        "2026-07-28",
        "-n",
        "500",
        "-k",
        "8",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["calls"], 500, "{r}");
    assert_eq!(r["errors"], 0, "{r}");
}

#[test]
fn rss_is_read_along_the_way_and_judged_against_the_bound() {
    let args = [
        "--stdio",
        &fixture(""),
        "-n",
        "2000",
        "--warmup",
        "200",
        "-k",
        "8",
        "--rss-every-ms",
        "20",
        "--max-rss-growth-kib",
        "1048576",
        "--json",
    ];
    let (code, r, err) = load(&args);
    assert_eq!(code, 0, "{err}");
    assert!(
        r["rss_baseline_kib"].as_u64().is_some_and(|k| k > 1000),
        "{r}"
    );
    assert!(r["rss_growth_kib"].as_i64().is_some(), "{r}");
    assert!(
        r["rss_samples"].as_array().is_some_and(|s| s.len() >= 2),
        "{r}"
    );
    assert_eq!(r["over_bound"], false);
    // A bound that cannot be judged (no readings) fails the run with exit 3.
    let (code, r, _) = load(&[
        "--stdio",
        &fixture(""),
        "-n",
        "100",
        "--max-rss-growth-kib",
        "1",
        "--json",
    ]);
    assert_eq!(code, 3, "{r}");
    assert_eq!(r["over_bound"], true);
}
