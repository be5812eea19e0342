//! `switchboard trace FILE`: the inspector (switchboard-inspect) over a recorded session.

use anyhow::Context as _;
use switchboard::inspect::{Inspector, html_page, parse_input, render};

/// `switchboard trace`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct TraceArgs {
    /// The session to explain.
    file: String,
    /// One JSON object per frame, then a summary line.
    #[arg(long, conflicts_with = "html")]
    json: bool,
    /// One self-contained HTML page (the session viewer) on standard output.
    #[arg(long)]
    html: bool,
}

/// Traces the file `args` names (`-` for stdin); prints a table (or JSON lines, or the HTML viewer) and returns the exit code:
/// 0 without violations, 1 with.
///
/// # Errors
/// The file cannot be read (exit 2 at the caller) or parsed.
pub(crate) fn run(args: &TraceArgs) -> anyhow::Result<i32> {
    let (file, json) = (&args.file, args.json);
    let text = if file == "-" {
        std::io::read_to_string(std::io::stdin()).context("reading standard input")?
    } else {
        std::fs::read_to_string(file).with_context(|| format!("reading {file}"))?
    };
    let frames = parse_input(&text).with_context(|| format!("parsing {file}"))?;
    let mut inspector = Inspector::new();
    for f in &frames {
        inspector.observe(f.direction, &f.text, f.at_ms);
    }
    let summary = inspector.summary();
    if args.html {
        print!(
            "{}",
            html_page(file, &frames, inspector.reports(), &summary)
        );
    } else if json {
        for r in inspector.reports() {
            println!("{}", serde_json::to_string(r)?);
        }
        println!("{}", serde_json::json!({"summary": summary}));
    } else {
        print!("{}", render::table(inspector.reports()));
        println!();
        print!("{}", render::summary(&summary));
    }
    Ok(if summary.violations > 0 { 1 } else { 0 })
}
