//! `switchboard serve --hostile SCENARIO` against our own client (`switchboard call`): every
//! scenario is reached (its report says `exercised`) and holds (no finding); and the hostile
//! server does see a client that falls for it (a fetch of its trap, an answer read to the end,
//! a step-up without end), so that a clean report means something.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{Read as _, Write as _};
use std::process::{Command, Stdio};

use serde_json::Value;

/// A hostile server on a free port; its base URL.
fn hostile(scenario: &str) -> (common::Served, String) {
    let addr = format!("127.0.0.1:{}", common::free_port());
    let mut cmd = common::bin();
    cmd.args(["serve", "--hostile", scenario, "--http", &addr]);
    let served = common::start(cmd, "listening on", format!("http://{addr}/mcp"));
    (served, format!("http://{addr}"))
}

/// A plain HTTP/1.1 GET of `url` on 127.0.0.1: the status and body.
fn get(url: &str) -> (u16, String) {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_once('/').unwrap();
    let mut s = std::net::TcpStream::connect(host).unwrap();
    write!(
        s,
        "GET /{path} HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let status = out[9..12].parse().unwrap();
    let body = out
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

fn report(base: &str) -> Value {
    let (status, body) = get(&format!("{base}/hostile/report"));
    assert_eq!(status, 200);
    serde_json::from_str(&body).unwrap()
}

/// `switchboard call --url URL --oauth-headless tools/list` (a token file of its own), with
/// loopback allowed for the authorization server, as a developer testing on one machine does.
fn call(url: &str, scenario: &str) -> String {
    let tokens =
        std::env::temp_dir().join(format!("sb-hostile-{scenario}-{}.json", std::process::id()));
    let out = common::bin()
        .args([
            "call",
            "--url",
            url,
            "--oauth-headless",
            "--oauth-allow-loopback",
        ])
        .arg("--oauth-token-file")
        .arg(&tokens)
        .arg("tools/list")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&tokens);
    assert_ne!(
        out.status.code(),
        Some(0),
        "a hostile server's call cannot succeed"
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every HTTP scenario, with what our client says when it refuses.
#[test]
fn our_client_holds_against_every_hostile_scenario() {
    for (scenario, says) in [
        (
            "prm-other-resource",
            "names resource https://elsewhere.example/mcp",
        ),
        (
            "metadata-at-unspecified",
            "0.0.0.0 is not a unicast public address",
        ),
        ("redirect-to-unspecified", "could not be fetched"),
        (
            "as-at-unspecified",
            "0.0.0.0 is not a unicast public address",
        ),
        ("no-pkce", "does not advertise PKCE S256"),
        ("endless-step-up", "403"),
        ("huge-answer", "max_event_bytes"),
        ("endless-answer", "max_event_bytes"),
    ] {
        let (served, base) = hostile(scenario);
        let err = call(&served.url, scenario);
        assert!(err.contains(says), "{scenario}: {err}");
        let r = report(&base);
        assert_eq!(r["scenario"], scenario);
        assert_eq!(
            r["exercised"], true,
            "{scenario}: the client never reached the attack: {r}"
        );
        assert_eq!(r["findings"], serde_json::json!([]), "{scenario}: {r}");
        if scenario == "endless-step-up" {
            // The client asked again, for the challenged scopes, and then stopped.
            let asked = r["events"].as_array().unwrap().iter().filter(|e| {
                e.as_str()
                    .unwrap_or_default()
                    .starts_with("authorization request")
            });
            let n = asked.count();
            assert!((2..=5).contains(&n), "{n} authorizations: {r}");
        }
    }
}

/// The hostile server sees a client that falls for it: a fetch of its trap, a request sent
/// without the token it must carry, an answer read to the end.
#[test]
fn a_client_that_falls_for_it_is_a_finding() {
    let (_served, base) = hostile("as-at-unspecified");
    let r = report(&base);
    assert_eq!(r["exercised"], false, "nothing has happened yet: {r}");
    // A careless client reads the metadata and fetches the authorization server it names.
    let (_, prm) = get(&format!("{base}/.well-known/oauth-protected-resource/mcp"));
    let prm: Value = serde_json::from_str(&prm).unwrap();
    let trap = prm["authorization_servers"][0].as_str().unwrap();
    assert!(trap.starts_with("http://0.0.0.0:"), "{prm}");
    let (status, _) = get(&format!("{trap}/.well-known/oauth-authorization-server"));
    assert_eq!(status, 404);
    let r = report(&base);
    assert_eq!(r["exercised"], true);
    assert_eq!(r["findings"][0]["rule"], "SEC-SSRF-3", "{r}");

    // An authorization request without PKCE or resource, for the wrong scope.
    let (_served, base) = hostile("endless-step-up");
    let (status, _) = get(&format!(
        "{base}/authorize?redirect_uri=http://127.0.0.1:9/cb&scope=x"
    ));
    assert_eq!(status, 302);
    let rules: Vec<String> = report(&base)["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(rules, ["SEC-URL-6", "SEC-TP-4"]);

    // A client reading a huge answer to its end (here: as much as it sends, then stopping
    // early: the report says how far it got).
    let (_served, base) = hostile("huge-answer");
    let host = base.strip_prefix("http://").unwrap();
    let mut s = std::net::TcpStream::connect(host).unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut buf = vec![0u8; 1 << 20];
    let mut read = 0;
    while read < 4 << 20 {
        read += s.read(&mut buf).unwrap();
    }
    drop(s);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !report(&base)["events"].as_array().unwrap().iter().any(|e| {
        e.as_str()
            .unwrap_or_default()
            .starts_with("the client stopped reading the large answer after")
    }) {
        assert!(
            std::time::Instant::now() < deadline,
            "never noted: {}",
            report(&base)
        );
        // The poll interval of a bounded wait (synchronous code: no async wait::until).
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Over stdio: a line that does not end is cut by our client, which closes the child's output
/// after 64 MiB (four times the 16 MiB frame bound) instead of reading for as long as the
/// server writes (256 MiB here).
#[test]
fn our_stdio_client_bounds_a_line_that_does_not_end() {
    let server = format!(
        "{} serve --hostile huge-answer",
        env!("CARGO_BIN_EXE_switchboard")
    );
    let out = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["call", "--stdio", &server, "tools/list"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("frame of more than 16777216 bytes discarded"),
        "{err}"
    );
    assert!(
        err.contains("went on past 67108864 bytes; input closed"),
        "{err}"
    );
}
