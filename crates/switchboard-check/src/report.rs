//! Results: one [`CheckResult`] per check, gathered in a [`Report`] that renders as text (a line
//! per check, then a summary) or as JSON lines (what `switchboard check --json` prints).

use std::fmt;

use serde::Serialize;

/// The outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The server did what the spec says.
    Pass,
    /// It did not; the detail says what happened.
    Fail,
    /// Not applicable to this server (the detail says why); never counted as a pass.
    Skip,
}

impl Verdict {
    /// The word a text report shows: `pass`, `FAIL` or `skip`.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "FAIL",
            Verdict::Skip => "skip",
        }
    }

    /// The SGR colour of [`word`](Self::word) on a terminal: green, red, yellow.
    fn sgr(self) -> &'static str {
        match self {
            Verdict::Pass => "32",
            Verdict::Fail => "31",
            Verdict::Skip => "33",
        }
    }
}

/// One check's result. Serialized, it is one line of `switchboard check --json`:
/// `{"tag": …, "name": …, "outcome": "pass" | "fail" | "skip", "detail": …}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct CheckResult {
    /// The SPEC-NOTES tag(s) of the rule checked (`HT-3`, `JR-6`; a bare `JR` or `HT` for a
    /// rule of that chapter without its own number).
    pub tag: &'static str,
    /// What was checked, as a sentence; unique within a run.
    pub name: &'static str,
    /// The outcome.
    pub outcome: Verdict,
    /// What was seen (for a skip: why the rule does not apply).
    pub detail: String,
}

impl CheckResult {
    /// A result.
    pub fn new(
        tag: &'static str,
        name: &'static str,
        outcome: Verdict,
        detail: impl Into<String>,
    ) -> CheckResult {
        CheckResult {
            tag,
            name,
            outcome,
            detail: detail.into(),
        }
    }

    /// The result as a text line (without its newline), the outcome word coloured or not.
    fn line(&self, colour: bool) -> String {
        let word = self.outcome.word();
        let word = if colour {
            format!("\x1b[{}m{word}\x1b[0m", self.outcome.sgr())
        } else {
            word.to_owned()
        };
        format!("{word} [{}] {}: {}", self.tag, self.name, self.detail)
    }
}

impl fmt::Display for CheckResult {
    /// `pass [HT-3] a foreign Origin is 403: 403`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.line(false))
    }
}

/// The results of one run, in the order the checks ran.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    results: Vec<CheckResult>,
}

impl From<Vec<CheckResult>> for Report {
    fn from(results: Vec<CheckResult>) -> Report {
        Report { results }
    }
}

impl Report {
    /// Every result, in order.
    pub fn results(&self) -> &[CheckResult] {
        &self.results
    }

    /// Every result, in order, owned.
    pub fn into_results(self) -> Vec<CheckResult> {
        self.results
    }

    /// The failed checks.
    pub fn failures(&self) -> impl Iterator<Item = &CheckResult> {
        self.with(Verdict::Fail)
    }

    /// The result of the check named `name`, if it ran.
    pub fn get(&self, name: &str) -> Option<&CheckResult> {
        self.results.iter().find(|r| r.name == name)
    }

    /// How many checks passed.
    pub fn passed(&self) -> usize {
        self.with(Verdict::Pass).count()
    }

    /// How many checks failed: 0 when the server did everything it was checked for.
    pub fn failed(&self) -> usize {
        self.with(Verdict::Fail).count()
    }

    /// How many checks did not apply to this server.
    pub fn skipped(&self) -> usize {
        self.with(Verdict::Skip).count()
    }

    fn with(&self, outcome: Verdict) -> impl Iterator<Item = &CheckResult> {
        self.results.iter().filter(move |r| r.outcome == outcome)
    }

    /// The report as `switchboard check` prints it: a line per check
    /// (`pass [HT-3] a foreign Origin is 403: 403`), then `N passed, M failed[, K skipped]`.
    /// With `colour`, the outcome words carry ANSI colours (green, red, yellow).
    pub fn to_text(&self, colour: bool) -> String {
        let mut out = String::new();
        for r in &self.results {
            out.push_str(&r.line(colour));
            out.push('\n');
        }
        let skipped = self.skipped();
        let tail = if skipped > 0 {
            format!(", {skipped} skipped")
        } else {
            String::new()
        };
        out.push_str(&format!(
            "{} passed, {} failed{tail}\n",
            self.passed(),
            self.failed()
        ));
        out
    }

    /// The report as `switchboard check --json` prints it: a JSON object per line per check
    /// (`{"tag", "name", "outcome", "detail"}`), then `{"passed", "failed", "skipped"}`.
    pub fn to_json_lines(&self) -> String {
        let mut out = String::new();
        for r in &self.results {
            out.push_str(&serde_json::to_string(r).unwrap_or_default());
            out.push('\n');
        }
        out.push_str(
            &serde_json::json!({
                "passed": self.passed(),
                "failed": self.failed(),
                "skipped": self.skipped(),
            })
            .to_string(),
        );
        out.push('\n');
        out
    }
}

impl fmt::Display for Report {
    /// [`Report::to_text`] without colour: what an assertion message should show.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text(false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> Report {
        Report::from(vec![
            CheckResult::new("HT-3", "a foreign Origin is 403", Verdict::Pass, "403"),
            CheckResult::new(
                "HT-7",
                "a POSTed notification gets 202 and no body",
                Verdict::Fail,
                "HTTP 200",
            ),
            CheckResult::new(
                "UT-1",
                "ping before initialize answers {}",
                Verdict::Skip,
                "n/a",
            ),
        ])
    }

    #[test]
    fn plain_text_has_a_line_per_check_and_a_summary() {
        let r = report();
        assert_eq!(
            r.to_text(false),
            "pass [HT-3] a foreign Origin is 403: 403\n\
             FAIL [HT-7] a POSTed notification gets 202 and no body: HTTP 200\n\
             skip [UT-1] ping before initialize answers {}: n/a\n\
             1 passed, 1 failed, 1 skipped\n"
        );
        assert_eq!(r.to_string(), r.to_text(false));
        assert_eq!(
            (r.passed(), r.failed(), r.skipped()),
            (1, 1, 1),
            "the counts"
        );
        let failures: Vec<&str> = r.failures().map(|f| f.tag).collect();
        assert_eq!(failures, ["HT-7"]);
        assert_eq!(
            r.get("a foreign Origin is 403").map(|c| c.outcome),
            Some(Verdict::Pass)
        );
    }

    #[test]
    fn nothing_skipped_leaves_the_summary_short() {
        let r = Report::from(report().into_results()[..1].to_vec());
        assert_eq!(
            r.to_text(false),
            "pass [HT-3] a foreign Origin is 403: 403\n1 passed, 0 failed\n"
        );
        assert_eq!(r.failed(), 0);
    }

    #[test]
    fn colour_marks_only_the_outcome_word() {
        let text = report().to_text(true);
        assert!(text.starts_with("\x1b[32mpass\x1b[0m [HT-3]"), "{text:?}");
        assert!(text.contains("\x1b[31mFAIL\x1b[0m [HT-7]"), "{text:?}");
        assert!(text.contains("\x1b[33mskip\x1b[0m [UT-1]"), "{text:?}");
        assert!(text.ends_with("1 passed, 1 failed, 1 skipped\n"));
    }

    #[test]
    fn json_lines_keep_their_shape_and_never_colour() {
        let text = report().to_json_lines();
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
        // The keys in the order the command has always printed them.
        assert!(text.starts_with(
            r#"{"tag":"HT-3","name":"a foreign Origin is 403","outcome":"pass","detail":"403"}"#
        ));
    }
}
