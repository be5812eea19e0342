//! `switchboard demo --transport stdio|http`: the same two sessions as in memory, with the
//! servers in child processes of the binary (over real pipes, and over Streamable HTTP on
//! 127.0.0.1).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_switchboard"))
}

fn raw_frames(transport: &str) -> Vec<String> {
    let out = bin()
        .args(["demo", "--raw", "--transport", transport])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "demo --transport {transport}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    // Concurrent frames (the cancellation, the subscription) may interleave differently on a
    // real wire: compare the frames, not their order.
    lines.sort();
    lines
}

#[test]
fn demo_over_stdio_and_http_exchanges_exactly_the_in_memory_frames() {
    let memory = raw_frames("memory");
    assert_eq!(memory.len(), 48, "both parts of the demo");
    for transport in ["stdio", "http"] {
        assert_eq!(
            raw_frames(transport),
            memory,
            "demo --transport {transport}"
        );
    }
}

#[test]
fn demo_names_its_wire_in_the_heading() {
    let out = bin()
        .args(["demo", "--transport", "http"])
        .output()
        .expect("runs");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains("over Streamable HTTP on 127.0.0.1"),
        "{text}"
    );
    assert!(text.contains("48 frames in two sessions; both closed cleanly."));
}
