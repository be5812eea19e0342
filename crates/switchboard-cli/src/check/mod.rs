//! `switchboard check`: our own conformance and robustness checks against any server, stdio
//! included (the official suite cannot do stdio). One line per check with its SPEC-NOTES tag.
//!
//! `checks` runs over both transports through a raw connection (`conn`); `http_rules` adds the
//! Streamable HTTP rules (sessions, headers, status codes, Origin) as raw HTTP, with `--url` only.

mod checks;
pub mod conn;
mod http_rules;

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde::Serialize;

pub use conn::Target;

/// The outcome of one check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The server did what the spec says.
    Pass,
    /// It did not; the detail says what happened.
    Fail,
    /// Not applicable to this server (the detail says why); never counted as a pass.
    Skip,
}

/// One check's result.
#[derive(Debug, Clone, Serialize)]
pub struct CheckResult {
    /// The SPEC-NOTES tag(s).
    pub tag: &'static str,
    /// What was checked.
    pub name: &'static str,
    /// The outcome.
    pub outcome: Outcome,
    /// What was seen.
    pub detail: String,
}

/// The results so far; each push is counted for the progress line.
#[derive(Debug, Default)]
pub(crate) struct Results {
    items: Vec<CheckResult>,
    done: Arc<AtomicUsize>,
}

impl Results {
    pub(crate) fn push(&mut self, r: CheckResult) {
        self.items.push(r);
        self.done.store(self.items.len(), Ordering::Relaxed);
    }
}

/// About how many results the transport-independent checks give (the capability gates vary).
const SHARED_ESTIMATE: usize = 21;

/// Runs every check against `target`: the shared ones, then over HTTP the HTTP rules. When
/// stderr is a terminal and the run lasts over a second, a progress line (`checking 12/36 …`)
/// is rewritten there, and cleared at the end.
///
/// # Errors
/// The server could not be started or never completed a handshake (exit 2 at the caller).
pub async fn run(target: &Target, timeout: Duration) -> anyhow::Result<Vec<CheckResult>> {
    let mut results = Results::default();
    let total = match target {
        Target::Stdio(_) => SHARED_ESTIMATE,
        Target::Http(_) => SHARED_ESTIMATE + http_rules::COUNT,
    };
    let progress = std::io::stderr()
        .is_terminal()
        .then(|| tokio::spawn(progress(results.done.clone(), total)));
    let ran = async {
        checks::all(target, timeout, &mut results).await?;
        if let Target::Http(url) = target {
            http_rules::all(url, timeout, &mut results).await;
        }
        anyhow::Ok(())
    }
    .await;
    if let Some(task) = progress {
        task.abort();
        let _ = task.await;
        // Clear whatever the progress line wrote (nothing when the run was short).
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[K");
        let _ = err.flush();
    }
    ran.map(|()| results.items)
}

/// Rewrites `checking N/M …` on stderr every 100 ms, from one second on.
async fn progress(done: Arc<AtomicUsize>, total: usize) {
    tokio::time::sleep(Duration::from_secs(1)).await;
    loop {
        let n = done.load(Ordering::Relaxed);
        {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[Kchecking {}/{} …", n + 1, total.max(n + 1));
            let _ = err.flush();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Whether results are coloured: stdout is a terminal and `NO_COLOR` is unset or empty.
fn colour_wanted() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Prints results (a line each, then `N passed, M failed[, K skipped]`, or JSON) and returns the
/// exit code: 0 when nothing failed, 1 otherwise. The words are coloured (green pass, red FAIL)
/// only when stdout is a terminal and `NO_COLOR` is not set.
pub fn report(results: &[CheckResult], json: bool) -> (String, i32) {
    render(results, json, !json && colour_wanted())
}

/// [`report`] with the colour decided by the caller.
pub fn render(results: &[CheckResult], json: bool, colour: bool) -> (String, i32) {
    let passed = results
        .iter()
        .filter(|r| r.outcome == Outcome::Pass)
        .count();
    let failed = results
        .iter()
        .filter(|r| r.outcome == Outcome::Fail)
        .count();
    let skipped = results
        .iter()
        .filter(|r| r.outcome == Outcome::Skip)
        .count();
    let mut out = String::new();
    if json {
        for r in results {
            out.push_str(&serde_json::to_string(r).unwrap_or_default());
            out.push('\n');
        }
        out.push_str(
            &serde_json::json!({"passed": passed, "failed": failed, "skipped": skipped})
                .to_string(),
        );
        out.push('\n');
    } else {
        for r in results {
            let (word, sgr) = match r.outcome {
                Outcome::Pass => ("pass", "32"),
                Outcome::Fail => ("FAIL", "31"),
                Outcome::Skip => ("skip", "33"),
            };
            let word = if colour {
                format!("\x1b[{sgr}m{word}\x1b[0m")
            } else {
                word.to_owned()
            };
            out.push_str(&format!("{word} [{}] {}: {}\n", r.tag, r.name, r.detail));
        }
        let tail = if skipped > 0 {
            format!(", {skipped} skipped")
        } else {
            String::new()
        };
        out.push_str(&format!("{passed} passed, {failed} failed{tail}\n"));
    }
    (out, i32::from(failed > 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results() -> Vec<CheckResult> {
        vec![
            CheckResult {
                tag: "HT-3",
                name: "a foreign Origin is 403",
                outcome: Outcome::Pass,
                detail: "403".into(),
            },
            CheckResult {
                tag: "HT-7",
                name: "a POSTed notification gets 202 and no body",
                outcome: Outcome::Fail,
                detail: "HTTP 200".into(),
            },
            CheckResult {
                tag: "UT-1",
                name: "ping before initialize answers {}",
                outcome: Outcome::Skip,
                detail: "n/a".into(),
            },
        ]
    }

    #[test]
    fn plain_text_has_a_line_per_check_and_a_summary() {
        let (text, code) = render(&results(), false, false);
        assert_eq!(code, 1);
        assert_eq!(
            text,
            "pass [HT-3] a foreign Origin is 403: 403\n\
             FAIL [HT-7] a POSTed notification gets 202 and no body: HTTP 200\n\
             skip [UT-1] ping before initialize answers {}: n/a\n\
             1 passed, 1 failed, 1 skipped\n"
        );
    }

    #[test]
    fn colour_marks_only_the_outcome_word() {
        let (text, _) = render(&results(), false, true);
        assert!(text.starts_with("\x1b[32mpass\x1b[0m [HT-3]"), "{text:?}");
        assert!(text.contains("\x1b[31mFAIL\x1b[0m [HT-7]"), "{text:?}");
        assert!(text.ends_with("1 passed, 1 failed, 1 skipped\n"));
    }

    #[test]
    fn json_lines_keep_their_shape_and_never_colour() {
        let (text, code) = render(&results(), true, true);
        assert_eq!(code, 1);
        assert!(!text.contains('\x1b'));
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_default())
            .collect();
        assert_eq!(
            lines[1],
            serde_json::json!({"tag": "HT-7", "name": "a POSTed notification gets 202 and no body",
                "outcome": "fail", "detail": "HTTP 200"})
        );
        assert_eq!(
            lines[3],
            serde_json::json!({"passed": 1, "failed": 1, "skipped": 1})
        );
    }

    #[test]
    fn nothing_failed_exits_0() {
        let (_, code) = render(&results()[..1], false, false);
        assert_eq!(code, 0);
    }
}
