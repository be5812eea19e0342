//! `switchboard fuzz`: the fuzzer of [`switchboard::check::fuzz`] against the server named on the
//! command line. This module prints: each case with problems as soon as it has run (or every
//! case as a JSON line), a progress line on stderr when that is a terminal, and the summary.

use std::time::Duration;

use switchboard::check::fuzz::{CaseReport, FuzzReport, Fuzzer};

/// `switchboard fuzz`'s flags: what to run.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct FuzzArgs {
    #[command(flatten)]
    server: crate::ServerArgs,
    /// How many cases.
    #[arg(long, default_value_t = switchboard::check::fuzz::DEFAULT_CASES)]
    cases: u64,
    /// The seed: the same seed gives the same cases (a random one when not given; printed).
    #[arg(long)]
    seed: Option<u64>,
    /// One JSON object per case ({case, seed, family, outcome, input, problems}), then
    /// {cases, problems, skipped, seed}.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    timeout: crate::TimeoutArg,
}

/// A seed for a run given none: the standard library's randomly keyed hasher, from the OS.
fn random_seed() -> u64 {
    use std::hash::BuildHasher as _;
    std::collections::hash_map::RandomState::new().hash_one(std::process::id())
}

/// Runs the cases, printing as they go; returns the report (the caller prints the last lines).
///
/// # Errors
/// The server could not be started or reached, or never completed a handshake (exit 2 at the
/// caller); stdout could not be written.
pub(crate) async fn run(args: &FuzzArgs) -> anyhow::Result<(String, i32)> {
    let seed = args.seed.unwrap_or_else(random_seed);
    let fuzzer = Fuzzer::new(args.server.target())
        .with_cases(args.cases)
        .with_seed(seed)
        .with_timeout(Duration::from_secs(args.timeout.timeout));
    let reproduce = fuzzer.reproduce();
    if !args.json {
        crate::write_stdout(&format!("fuzzing with seed {seed}: {} cases\n", args.cases))?;
    }
    let progress = crate::ui::progress_on_stderr();
    let (json, total) = (args.json, args.cases);
    let report = fuzzer
        .on_case(move |case: &CaseReport| {
            if progress {
                crate::ui::progress_line(&format!("case {}/{total} …", case.index + 1));
            }
            let text = if json {
                format!("{}\n", case.to_json())
            } else if case.problems.is_empty() {
                return;
            } else {
                case.to_text(&reproduce)
            };
            if progress {
                crate::ui::progress_line("");
            }
            let _ = crate::write_stdout(&text);
        })
        .run()
        .await;
    if progress {
        crate::ui::progress_line("");
    }
    Ok(summary(&report?, args.json))
}

/// The last lines (the skipped cases and `N cases, M problems`, or the JSON summary) and the
/// exit code: 0 when no problem was found, 1 otherwise.
fn summary(report: &FuzzReport, json: bool) -> (String, i32) {
    let text = if json {
        format!("{}\n", report.summary_json())
    } else {
        let skipped = report
            .skipped_line()
            .map(|l| format!("{l}\n"))
            .unwrap_or_default();
        format!("{skipped}{}\n", report.summary())
    };
    (text, i32::from(report.problems() > 0))
}
