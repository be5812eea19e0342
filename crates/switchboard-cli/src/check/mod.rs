//! `switchboard check`: our own conformance and robustness checks against any server, stdio
//! included (the official suite cannot do stdio). One line per check with its SPEC-NOTES tag.

mod checks;
pub mod conn;

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

/// Runs every check against `target`.
///
/// # Errors
/// The server could not be started or never completed a handshake (exit 2 at the caller).
pub async fn run(target: &Target, timeout: Duration) -> anyhow::Result<Vec<CheckResult>> {
    checks::all(target, timeout).await
}

/// Prints results (a line each, then `N passed, M failed[, K skipped]`, or JSON) and returns the
/// exit code: 0 when nothing failed, 1 otherwise.
pub fn report(results: &[CheckResult], json: bool) -> (String, i32) {
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
            let word = match r.outcome {
                Outcome::Pass => "pass",
                Outcome::Fail => "FAIL",
                Outcome::Skip => "skip",
            };
            out.push_str(&format!("{word:<4} [{}] {}: {}\n", r.tag, r.name, r.detail));
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
