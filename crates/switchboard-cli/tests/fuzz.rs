//! `switchboard fuzz` end to end: our everything server gives no problem over stdio and
//! Streamable HTTP; a deliberately broken server (tests/fixtures/fuzz_broken_server.py) gives
//! problems, each replayed by its case's seed; the same seed gives the same cases.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use serde_json::Value;

mod common;

use common::{bin, serve_http};

/// Our server over stdio, as a command for `--stdio`.
fn our_stdio() -> String {
    format!("'{}' serve", env!("CARGO_BIN_EXE_switchboard"))
}

/// The broken fixture over stdio.
fn broken_stdio() -> String {
    format!(
        "python3 '{}'",
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/fuzz_broken_server.py"
        )
    )
}

/// `switchboard fuzz ARGS --json`: exit code, the case lines, the summary.
fn fuzz(args: &[&str]) -> (Option<i32>, Vec<Value>, Value) {
    let out = bin()
        .arg("fuzz")
        .args(args)
        .arg("--json")
        .output()
        .expect("runs");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let mut lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let summary = lines.pop().unwrap_or_else(|| {
        panic!(
            "no output; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), lines, summary)
}

/// The problem cases, each as one line for an assertion message.
fn problems(cases: &[Value]) -> String {
    cases
        .iter()
        .filter(|c| c["outcome"] == "problem")
        .map(|c| format!("{} {} {}\n", c["seed"], c["family"], c["problems"]))
        .collect()
}

#[test]
fn our_server_gives_no_problem_over_stdio() {
    let out = bin()
        .args([
            "fuzz",
            "--stdio",
            &our_stdio(),
            "--cases",
            "250",
            "--seed",
            "20261201",
        ])
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert_eq!(text.lines().last(), Some("250 cases, 0 problems"), "{text}");
    assert!(
        text.starts_with("fuzzing with seed 20261201: 250 cases\n"),
        "{text}"
    );
}

#[test]
fn our_server_gives_no_problem_over_http_in_both_reply_modes() {
    for (flags, cases) in [(&[][..], "250"), (&["--json-response"][..], "100")] {
        let served = serve_http(flags);
        let (code, lines, summary) = fuzz(&["--url", &served.url, "--cases", cases, "--seed", "7"]);
        assert_eq!(summary["problems"], 0, "{flags:?}: {}", problems(&lines));
        assert_eq!(code, Some(0));
        assert_eq!(summary["cases"].to_string(), cases);
        // The HTTP families ran, not only the JSON-RPC ones.
        assert!(
            lines
                .iter()
                .any(|c| c["family"].as_str().is_some_and(|f| f.starts_with("http/"))),
            "{lines:?}"
        );
    }
}

#[test]
fn a_broken_server_gives_problems_that_their_seeds_replay() {
    let cmd = broken_stdio();
    let (code, cases, summary) = fuzz(&[
        "--stdio",
        &cmd,
        "--cases",
        "60",
        "--seed",
        "5",
        "--timeout",
        "1",
    ]);
    assert_eq!(code, Some(1), "a problem exits 1");
    assert!(summary["problems"].as_u64().unwrap_or(0) > 0, "{summary}");
    // Each flaw of the fixture is found, by the rule it breaks.
    let rules: BTreeSet<String> = cases
        .iter()
        .flat_map(|c| c["problems"].as_array().cloned().unwrap_or_default())
        .map(|p| p["rule"].as_str().unwrap_or_default().to_owned())
        .collect();
    for rule in ["JR", "JR-6", "JR-11", "ST"] {
        assert!(
            rules.contains(rule),
            "{rule} not found: {}",
            problems(&cases)
        );
    }
    let exited = cases.iter().any(|c| {
        c["problems"].as_array().is_some_and(|ps| {
            ps.iter().any(|p| {
                p["what"]
                    .as_str()
                    .is_some_and(|w| w.contains("exited (exit status: 3)"))
            })
        })
    });
    assert!(exited, "the crash is reported: {}", problems(&cases));
    // A problem's seed replays its case alone: the same input and the same broken rules.
    let mut replayed = 0;
    for case in cases.iter().filter(|c| c["outcome"] == "problem").take(6) {
        let seed = case["seed"].as_str().expect("a seed");
        let (code, again, _) = fuzz(&[
            "--stdio",
            &cmd,
            "--seed",
            seed,
            "--cases",
            "1",
            "--timeout",
            "1",
        ]);
        assert_eq!(code, Some(1), "{case}");
        assert_eq!(again[0]["seed"], case["seed"]);
        assert_eq!(again[0]["family"], case["family"]);
        assert_eq!(again[0]["input"], case["input"]);
        let rules = |c: &Value| -> BTreeSet<String> {
            c["problems"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| p["rule"].to_string())
                .collect()
        };
        assert_eq!(rules(&again[0]), rules(case), "{case}\n{}", again[0]);
        replayed += 1;
    }
    assert!(replayed > 0);
}

#[test]
fn help_names_the_options_and_nothing_internal() {
    let out = bin().args(["fuzz", "--help"]).output().expect("runs");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    for option in [
        "--stdio",
        "--url",
        "--cases",
        "--seed",
        "--json",
        "--timeout",
    ] {
        assert!(text.contains(option), "{option}:\n{text}");
    }
    for internal in ["SPEC-NOTES", "../shared", ".md", "issue "] {
        assert!(!text.contains(internal), "mentions {internal:?}:\n{text}");
    }
}

#[test]
fn the_same_seed_gives_the_same_cases() {
    let run = |seed: &str| {
        let (code, cases, _) = fuzz(&["--stdio", &our_stdio(), "--cases", "40", "--seed", seed]);
        assert_eq!(code, Some(0), "{}", problems(&cases));
        cases
            .iter()
            .map(|c| format!("{} {} {}", c["seed"], c["family"], c["input"]))
            .collect::<Vec<_>>()
    };
    let first = run("99");
    assert_eq!(first.len(), 40);
    assert_eq!(first, run("99"));
    assert_ne!(first, run("100"));
}
