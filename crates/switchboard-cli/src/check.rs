//! `switchboard check`: the checks of [`switchboard::check`] against the server named on the
//! command line, printed a line each with its SPEC-NOTES tag (or as JSON lines). This module adds
//! only what a terminal needs: the progress line and the colours.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use switchboard::check::{Checker, Report};

/// `switchboard check`'s flags.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct CheckArgs {
    #[command(flatten)]
    server: crate::ServerArgs,
    /// Results as JSON lines ({tag, name, outcome, detail}), then {passed, failed, skipped}.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    timeout: crate::TimeoutArg,
    /// Run the security probes instead of the conformance checks: DNS rebinding, duplicate
    /// headers, folded JSON keys, oversized bodies, sessions from refused requests, session ids,
    /// authorization and 2026-07-28 requestState, each named (security/...) with its rule tag.
    /// No tool is called unless --input-tool names one.
    #[arg(long)]
    security: bool,
    /// With --security: the PEM private key of an issuer the server trusts (EC P-256, RSA or
    /// Ed25519), to mint tokens for the audience, issuer, expiry and session-binding probes.
    /// For testing one's own deployment.
    #[arg(long, value_name = "PEM_FILE", requires_all = ["security", "issuer"])]
    issuer_key: Option<std::path::PathBuf>,
    /// With --issuer-key: the issuer the minted tokens name.
    #[arg(long, value_name = "URL", requires = "issuer_key")]
    issuer: Option<String>,
    /// With --issuer-key: the key id (kid) the minted tokens name.
    #[arg(long, value_name = "KID", requires = "issuer_key")]
    kid: Option<String>,
    /// With --security: a tool of a 2026-07-28 server that answers input_required (called with
    /// empty arguments), for the requestState probes.
    #[arg(long, value_name = "NAME", requires = "security")]
    input_tool: Option<String>,
}

/// Runs every check against the server `args` names. When stderr is a terminal and the run lasts over a second,
/// a progress line (`checking 12/36 …`) is rewritten there, and cleared at the end.
///
/// # Errors
/// The server could not be started or never completed a handshake (exit 2 at the caller).
pub(crate) async fn run(args: &CheckArgs) -> anyhow::Result<(String, i32)> {
    let done = Arc::new(AtomicUsize::new(0));
    let counter = done.clone();
    let mut checker = Checker::new(args.server.target())
        .with_timeout(Duration::from_secs(args.timeout.timeout))
        .on_result(move |_| {
            counter.fetch_add(1, Ordering::Relaxed);
        });
    if args.security {
        checker = checker.security();
    }
    if let (Some(path), Some(issuer)) = (&args.issuer_key, &args.issuer) {
        let pem = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("--issuer-key {}: {e}", path.display()))?;
        checker = checker.with_issuer_key(&pem, issuer, args.kid.as_deref());
    }
    if let Some(tool) = &args.input_tool {
        checker = checker.with_input_tool(tool);
    }
    let total = checker.estimated_total();
    let progress = crate::ui::progress_on_stderr().then(|| tokio::spawn(progress(done, total)));
    let ran = checker.run().await;
    if let Some(task) = progress {
        task.abort();
        let _ = task.await;
        // Clear whatever the progress line wrote (nothing when the run was short).
        crate::ui::progress_line("");
    }
    Ok(report(&ran?, args.json))
}

/// Rewrites `checking N/M …` on stderr every 100 ms, from one second on.
async fn progress(done: Arc<AtomicUsize>, total: usize) {
    tokio::time::sleep(Duration::from_secs(1)).await;
    loop {
        let n = done.load(Ordering::Relaxed);
        crate::ui::progress_line(&format!("checking {}/{} …", n + 1, total.max(n + 1)));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The report as printed (a line each, then `N passed, M failed[, K skipped]`, or JSON lines)
/// and the exit code: 0 when nothing failed, 1 otherwise. The words are coloured (green pass,
/// red FAIL) only when stdout is a terminal and `NO_COLOR` is not set.
fn report(report: &Report, json: bool) -> (String, i32) {
    let text = if json {
        report.to_json_lines()
    } else {
        report.to_text(crate::ui::colour_on_stdout())
    };
    (text, i32::from(report.failed() > 0))
}
