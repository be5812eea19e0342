//! `switchboard check --security` against our own everything server: over stdio, over Streamable
//! HTTP, and behind `serve --http --auth-issuer` with a test issuer whose key mints the probes'
//! tokens. Each run's failures and skips are asserted exactly, by probe name.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeSet;

use serde_json::Value;
use switchboard_test_support::issuer::TestIssuer;

/// The probes that cannot be observed over stdio besides [`AUTH_PROBES`].
const OTHER_HTTP_PROBES: [&str; 17] = [
    "security/dns-rebinding/host",
    "security/dns-rebinding/origin",
    "security/duplicate-headers/host",
    "security/duplicate-headers/mcp-method",
    "security/duplicate-headers/mcp-name",
    "security/duplicate-headers/protocol-version",
    "security/duplicate-headers/session-id",
    "security/oversized/chunked",
    "security/oversized/content-length",
    "security/oversized/endless",
    "security/rejected-session/content-type",
    "security/rejected-session/foreign-origin",
    "security/rejected-session/invalid-json",
    "security/rejected-session/no-accept",
    "security/session-id/alphabet",
    "security/session-id/ended",
    "security/session-id/entropy",
];

/// The authorization probes, skipped on a server asking for no token.
const AUTH_PROBES: [&str; 15] = [
    "security/auth/alg-none",
    "security/auth/challenge",
    "security/auth/expired",
    "security/auth/garbage-token",
    "security/auth/hmac-public-key",
    "security/auth/iss-array",
    "security/auth/no-sub",
    "security/auth/prm-resource",
    "security/auth/query-token",
    "security/auth/session-binding",
    "security/auth/tasks",
    "security/auth/valid-token",
    "security/auth/wrong-audience",
    "security/auth/wrong-issuer",
    "security/rejected-session/no-token",
];

/// The tool of the everything server that answers `input_required` with a sealed state.
const INPUT_TOOL: &str = "test_input_required_result_request_state";

/// Runs `check --security --json ARGS`: the names failed and skipped, and the exit code.
fn check(args: &[&str]) -> (BTreeSet<String>, BTreeSet<String>, Option<i32>, String) {
    let out = common::bin()
        .args(["check", "--security", "--json"])
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let names = |outcome: &str| -> BTreeSet<String> {
        lines
            .iter()
            .filter(|l| l["outcome"] == outcome)
            .map(|l| l["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(lines.len(), 44, "43 probes and the summary:\n{text}");
    (names("fail"), names("skip"), out.status.code(), text)
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn over_stdio_every_observable_probe_passes() {
    let server = format!("{} serve", env!("CARGO_BIN_EXE_switchboard"));
    // Short waits: a frame the server drops costs a whole one.
    let (failed, skipped, code, text) = check(&[
        "--stdio",
        &server,
        "--input-tool",
        INPUT_TOOL,
        "--timeout",
        "2",
    ]);
    assert!(failed.is_empty(), "{text}");
    assert_eq!(code, Some(0), "{text}");
    // The probes that cannot be observed over stdio.
    let mut expected = set(&AUTH_PROBES);
    expected.extend(set(&OTHER_HTTP_PROBES));
    expected.extend(set(&[
        // Both need plain HTTP: the 2026-07-28 header, and two users' tokens.
        "security/duplicate-keys/header-mismatch",
        "security/request-state/other-user",
    ]));
    assert_eq!(skipped, expected, "{text}");
}

#[test]
fn over_streamable_http_nothing_fails() {
    let served = common::serve_http(&[]);
    let (failed, skipped, code, text) = check(&["--url", &served.url, "--input-tool", INPUT_TOOL]);
    assert_eq!(failed, BTreeSet::new(), "{text}");
    assert_eq!(code, Some(0), "{text}");
    let mut expected = set(&AUTH_PROBES);
    expected.extend(set(&[
        "security/oversized/line",
        "security/request-state/other-user",
    ]));
    assert_eq!(skipped, expected, "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn behind_auth_issuer_minted_tokens_find_nothing() {
    let issuer = TestIssuer::start().await;
    let served = tokio::task::block_in_place(|| {
        common::serve_http(&["--json-response", "--auth-issuer", issuer.url()])
    });
    let dir = std::env::temp_dir().join(format!("sb-check-security-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pem = dir.join("issuer.pem");
    std::fs::write(&pem, issuer.key().private_key_pem()).unwrap();
    let pem = pem.to_str().unwrap().to_owned();
    let kid = issuer.key().kid;
    let (failed, skipped, code, text) = tokio::task::block_in_place(|| {
        check(&[
            "--url",
            &served.url,
            "--issuer-key",
            &pem,
            "--issuer",
            issuer.url(),
            "--kid",
            &kid,
            "--input-tool",
            INPUT_TOOL,
        ])
    });
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(failed, BTreeSet::new(), "{text}");
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(
        skipped,
        set(&["security/auth/tasks", "security/oversized/line"]),
        "{text}"
    );
}

#[test]
fn an_unreachable_target_exits_2() {
    let url = format!("http://127.0.0.1:{}/mcp", common::free_port());
    let out = common::bin()
        .args(["check", "--security", "--url", &url])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot reach"), "{err}");
}
