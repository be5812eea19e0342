//! A protocol-state fuzzer for any MCP server: the library behind `switchboard fuzz`.
//!
//! Each case is a short hostile session made from a seed by a small deterministic generator
//! (SplitMix64), so a seed names a case on every machine: the lifecycle out of order (requests
//! and notifications before `initialize`, `initialize` twice, `initialized` twice, `initialize`
//! cancelled or with bad params), ids of every kind (empty, huge, unicode, negative, past 2^53
//! and 2^63, floats, null, objects, collisions, the same digits as string and integer),
//! cancellations racing their answers, unknown progress tokens, responses to nothing, frames that
//! are malformed, not UTF-8, split across writes or run together, oversized, 100,000 levels
//! deep, batches under each revision, every params member of the known methods given a wrong
//! type, and over Streamable HTTP requests whose headers and bodies disagree or lie
//! (`Content-Type`, `Accept`, `Content-Length`, chunked coding), bogus and missing session ids,
//! hostile `Last-Event-ID` and `MCP-Protocol-Version`, odd methods and oversized headers.
//!
//! After each case the answers are judged (the error code the spec names: -32700, -32600,
//! -32601, -32602; the HTTP status; ids kept exactly; notifications never answered), nothing may
//! hang past the timeout, the session must still answer `ping`, and the process must still run
//! (over HTTP, the endpoint must still answer). A case that breaks a rule gives [`Problem`]s,
//! each with the SPEC-NOTES tag of the rule; `--seed S --cases 1` replays it alone.
//!
//! ```no_run
//! use switchboard_check::Target;
//! use switchboard_check::fuzz::Fuzzer;
//!
//! # async fn doc() -> Result<(), switchboard_check::CheckError> {
//! let report = Fuzzer::new(Target::stdio("node dist/server.js"))
//!     .with_cases(300)
//!     .with_seed(7)
//!     .run()
//!     .await?;
//! assert_eq!(report.problems(), 0, "{}", report.to_text());
//! # Ok(())
//! # }
//! ```
//!
//! Cases that need an initialized session reuse the one the previous case left healthy (over
//! stdio a new process costs a server's start-up); a case starting the lifecycle gets a new
//! connection, and so does every case after a problem. A case replayed alone starts on a new
//! connection; `--seed` with the run's seed and `--cases` up to the case replays what came
//! before it too.
//!
//! # Layout
//! | module | role |
//! |---|---|
//! | `rng` | SplitMix64 and the seed of each case |
//! | `case` | a case as data: its start, steps, and what may answer each frame |
//! | `generate`, `generate_frames`, `generate_http` | the families of cases |
//! | `judge` | matching answers to frames by id, and the rules they must follow |
//! | `stdio`, `http` | the server spoken to byte by byte (a child process; hand-written HTTP/1.1) |
//! | `run` | running a case: its connection, its steps, the proof of life after it |

mod build;
mod case;
mod generate;
mod generate_frames;
mod generate_http;
mod http;
mod judge;
mod rng;
mod run;
mod stdio;

use std::fmt::Write as _;
use std::time::Duration;

use serde_json::json;

use crate::{CheckError, Target};

/// How many cases a run has unless told otherwise.
pub const DEFAULT_CASES: u64 = 200;

/// One rule a case found broken.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Problem {
    /// The SPEC-NOTES tag of the rule (`JR`, `JR-6`, `HT-20`, ...; `ST` for the robustness rule
    /// that a server survives any input).
    pub rule: &'static str,
    /// What happened, with what was expected.
    pub what: String,
}

impl Problem {
    pub(crate) fn new(rule: &'static str, what: impl Into<String>) -> Problem {
        Problem {
            rule,
            what: what.into(),
        }
    }
}

/// One case run: what it sent and what was wrong.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CaseReport {
    /// Its place in the run, from 0.
    pub index: u64,
    /// Its seed: `--seed` with this value and `--cases 1` replays it alone.
    pub seed: u64,
    /// Its family and variant, e.g. `frame/not-utf-8`.
    pub family: String,
    /// What it sent, one line per frame or request, long ones cut.
    pub input: String,
    /// The rules it found broken.
    pub problems: Vec<Problem>,
    /// Why it did not apply to this server (a version it does not speak, no sessions).
    pub skipped: Option<String>,
}

impl CaseReport {
    /// `ok`, `problem` or `skipped`.
    pub fn outcome(&self) -> &'static str {
        if !self.problems.is_empty() {
            "problem"
        } else if self.skipped.is_some() {
            "skipped"
        } else {
            "ok"
        }
    }

    /// The case as one JSON object: `{case, seed, family, outcome, input, problems, skipped?}`
    /// (the seed as a string, since it may pass 2^53).
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = json!({
            "case": self.index,
            "seed": self.seed.to_string(),
            "family": self.family,
            "outcome": self.outcome(),
            "input": self.input,
            "problems": self.problems.iter()
                .map(|p| json!({"rule": p.rule, "what": p.what}))
                .collect::<Vec<_>>(),
        });
        if let Some(why) = &self.skipped {
            v["skipped"] = json!(why);
        }
        v
    }

    /// The case's problems for a person: a heading, each problem with its rule, what was sent,
    /// and how to replay it (`reproduce` is the command without `--seed`).
    pub fn to_text(&self, reproduce: &str) -> String {
        let mut s = format!(
            "problem in case {} (seed {}): {}\n",
            self.index, self.seed, self.family
        );
        for p in &self.problems {
            let _ = writeln!(s, "  [{}] {}", p.rule, p.what);
        }
        for (i, line) in self.input.lines().enumerate() {
            let label = if i == 0 { "sent:" } else { "     " };
            let _ = writeln!(s, "  {label} {line}");
        }
        let _ = writeln!(s, "  reproduce: {reproduce} --seed {} --cases 1", self.seed);
        s
    }
}

/// A whole run.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FuzzReport {
    /// The run's seed.
    pub seed: u64,
    /// The command that replays a case, without `--seed` (`switchboard fuzz --stdio '…'`).
    pub reproduce: String,
    /// Every case, in order.
    pub cases: Vec<CaseReport>,
}

impl FuzzReport {
    /// How many problems the run found.
    pub fn problems(&self) -> usize {
        self.cases.iter().map(|c| c.problems.len()).sum()
    }

    /// How many cases did not apply to the server.
    pub fn skipped(&self) -> usize {
        self.cases.iter().filter(|c| c.skipped.is_some()).count()
    }

    /// The last line: `N cases, M problems`.
    pub fn summary(&self) -> String {
        format!("{} cases, {} problems", self.cases.len(), self.problems())
    }

    /// The summary as JSON: `{cases, problems, skipped, seed}`.
    pub fn summary_json(&self) -> serde_json::Value {
        json!({
            "cases": self.cases.len(),
            "problems": self.problems(),
            "skipped": self.skipped(),
            "seed": self.seed.to_string(),
        })
    }

    /// What `switchboard fuzz` prints: every case with problems, a line on the skipped cases,
    /// and the summary last.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        for c in self.cases.iter().filter(|c| !c.problems.is_empty()) {
            s.push_str(&c.to_text(&self.reproduce));
        }
        if let Some(line) = self.skipped_line() {
            s.push_str(&line);
            s.push('\n');
        }
        s.push_str(&self.summary());
        s.push('\n');
        s
    }

    /// `12 cases did not apply: …` (grouped by reason), if any did not.
    pub fn skipped_line(&self) -> Option<String> {
        let mut reasons: Vec<(&str, usize)> = Vec::new();
        for why in self.cases.iter().filter_map(|c| c.skipped.as_deref()) {
            match reasons.iter_mut().find(|(r, _)| *r == why) {
                Some((_, n)) => *n += 1,
                None => reasons.push((why, 1)),
            }
        }
        (!reasons.is_empty()).then(|| {
            let parts: Vec<String> = reasons.iter().map(|(r, n)| format!("{n} × {r}")).collect();
            format!(
                "{} cases did not apply: {}",
                self.skipped(),
                parts.join("; ")
            )
        })
    }

    /// One JSON object per case, then the summary, a line each.
    pub fn to_json_lines(&self) -> String {
        let mut s = String::new();
        for c in &self.cases {
            s.push_str(&c.to_json().to_string());
            s.push('\n');
        }
        s.push_str(&self.summary_json().to_string());
        s.push('\n');
        s
    }
}

/// Called with each case as soon as it has run.
type Observer = Box<dyn FnMut(&CaseReport) + Send>;

/// A fuzzing run, configured: the target, how many cases, the seed, the timeout, an observer.
pub struct Fuzzer {
    target: Target,
    cases: u64,
    seed: u64,
    timeout: Duration,
    observer: Option<Observer>,
}

impl std::fmt::Debug for Fuzzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fuzzer")
            .field("target", &self.target)
            .field("cases", &self.cases)
            .field("seed", &self.seed)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// `'text'` for a POSIX shell.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

impl Fuzzer {
    /// [`DEFAULT_CASES`] cases against `target` with seed 0 and a
    /// 5 s per wait. Targets in the same process
    /// ([`Target::in_process`]) are not supported: the cases write bytes no transport carries.
    pub fn new(target: Target) -> Fuzzer {
        Fuzzer {
            target,
            cases: DEFAULT_CASES,
            seed: 0,
            timeout: crate::DEFAULT_TIMEOUT,
            observer: None,
        }
    }

    /// How many cases to run.
    pub fn with_cases(mut self, cases: u64) -> Fuzzer {
        self.cases = cases;
        self
    }

    /// The run's seed: the same seed gives the same cases.
    pub fn with_seed(mut self, seed: u64) -> Fuzzer {
        self.seed = seed;
        self
    }

    /// How long to wait for each answer (and for the proof of life after each case).
    pub fn with_timeout(mut self, timeout: Duration) -> Fuzzer {
        self.timeout = timeout;
        self
    }

    /// Calls `observer` with each case as soon as it has run.
    pub fn on_case(mut self, observer: impl FnMut(&CaseReport) + Send + 'static) -> Fuzzer {
        self.observer = Some(Box::new(observer));
        self
    }

    /// The command that replays a case of this run, without `--seed`.
    pub fn reproduce(&self) -> String {
        let timeout = if self.timeout == crate::DEFAULT_TIMEOUT {
            String::new()
        } else {
            format!(" --timeout {}", self.timeout.as_secs())
        };
        match &self.target {
            Target::Stdio(cmd) => format!("switchboard fuzz --stdio {}{timeout}", shell_quote(cmd)),
            Target::Http(url) => format!("switchboard fuzz --url {}{timeout}", shell_quote(url)),
            Target::InProcess(_) => "(in process)".into(),
        }
    }

    /// Runs every case.
    ///
    /// # Errors
    /// The server could not be started or reached, never completed a handshake, or the target
    /// is in process.
    pub async fn run(mut self) -> Result<FuzzReport, CheckError> {
        let server = match &self.target {
            Target::Stdio(cmd) => run::Server::Stdio(cmd.clone()),
            Target::Http(url) => {
                run::Server::Http(http::Endpoint::parse(url).map_err(|reason| {
                    CheckError::Connect {
                        url: url.clone(),
                        reason,
                    }
                })?)
            }
            Target::InProcess(_) => {
                return Err(CheckError::InProcess {
                    reason: "the fuzzer needs a server over stdio or HTTP".into(),
                });
            }
        };
        let wire = server.wire();
        let mut runner = run::Runner::new(server, self.timeout);
        runner
            .discover()
            .await
            .map_err(|reason| match &self.target {
                Target::Http(url) if reason.contains("unreachable") => CheckError::Connect {
                    url: url.clone(),
                    reason,
                },
                Target::Stdio(cmd) if reason.starts_with("cannot start") => CheckError::Spawn {
                    command: cmd.clone(),
                    reason,
                },
                _ => CheckError::NoHandshake { reason },
            })?;
        let mut cases = Vec::new();
        for index in 0..self.cases {
            let seed = rng::case_seed(self.seed, index);
            let mut case = generate::case(seed, wire);
            runner.facts().resolve(&mut case);
            let ran = runner.run(&case).await;
            let report = CaseReport {
                index,
                seed,
                family: case.family.clone(),
                input: case.describe(),
                problems: ran.problems,
                skipped: ran.skipped,
            };
            if let Some(observe) = &mut self.observer {
                observe(&report);
            }
            cases.push(report);
        }
        runner.finish().await;
        Ok(FuzzReport {
            seed: self.seed,
            reproduce: self.reproduce(),
            cases,
        })
    }
}

/// The cases a run with `seed` over stdio (`http` false) or HTTP would send, described: for
/// checking that a seed gives the same cases.
#[cfg(test)]
fn describe_cases(seed: u64, cases: u64, http: bool) -> Vec<String> {
    let wire = if http {
        build::Wire::Http
    } else {
        build::Wire::Stdio
    };
    (0..cases)
        .map(|i| {
            let c = generate::case(rng::case_seed(seed, i), wire);
            format!("{}: {}", c.family, c.describe())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(problems: Vec<Problem>, skipped: Option<&str>) -> CaseReport {
        CaseReport {
            index: 3,
            seed: 42,
            family: "frame/malformed-json".into(),
            input: "{\"jsonrpc\"".into(),
            problems,
            skipped: skipped.map(str::to_owned),
        }
    }

    #[test]
    fn the_last_line_counts_cases_and_problems() {
        let r = FuzzReport {
            seed: 1,
            reproduce: "switchboard fuzz --stdio 'x'".into(),
            cases: vec![
                report(vec![Problem::new("JR", "expected error -32700")], None),
                report(Vec::new(), Some("the server does not speak 2025-03-26")),
                report(Vec::new(), None),
            ],
        };
        let text = r.to_text();
        assert!(text.ends_with("3 cases, 1 problems\n"), "{text}");
        assert!(text.contains("[JR] expected error -32700"), "{text}");
        assert!(
            text.contains("reproduce: switchboard fuzz --stdio 'x' --seed 42 --cases 1"),
            "{text}"
        );
        assert!(
            text.contains("1 cases did not apply: 1 × the server does not speak"),
            "{text}"
        );
        let json = r.to_json_lines();
        let last: serde_json::Value =
            serde_json::from_str(json.lines().last().unwrap_or_default()).unwrap_or_default();
        assert_eq!(last["problems"], 1);
        assert_eq!(last["skipped"], 1);
    }

    #[test]
    fn commands_are_quoted_for_the_shell() {
        let f = Fuzzer::new(Target::stdio("python3 it's.py"));
        assert_eq!(
            f.reproduce(),
            r"switchboard fuzz --stdio 'python3 it'\''s.py'"
        );
    }

    #[test]
    fn a_seed_describes_the_same_cases() {
        assert_eq!(describe_cases(9, 50, false), describe_cases(9, 50, false));
        assert_ne!(describe_cases(9, 50, false), describe_cases(10, 50, false));
        // Case i of seed S is case 0 of its own seed.
        let seed = rng::case_seed(9, 17);
        assert_eq!(
            describe_cases(9, 18, true)[17],
            describe_cases(seed, 1, true)[0]
        );
    }
}
