//! [`transcript`]: what `switchboard demo` prints, both parts played on a host.

use switchboard::jsonrpc::Flow;

use super::host::Host;
use super::trace::{DemoError, TraceFrame};
use super::{part_one, part_two, step_title};

/// Plays both parts on `host` (which `wire` describes, e.g. `in memory`) and returns the raw
/// frames, one per line (`raw`), or the annotated text: a heading per step, one line per frame
/// and under each frame what the inspector (switchboard-inspect) says of it.
///
/// # Errors
/// A part failed ([`DemoError`]).
pub async fn transcript(host: &impl Host, wire: &str, raw: bool) -> Result<String, DemoError> {
    let one = part_one::run(host).await?;
    let two = part_two::run(host, part_one::STEPS.len() + 1).await?;
    let mut text = String::new();
    if raw {
        for f in one.iter().chain(&two) {
            text.push_str(&f.text);
            text.push('\n');
        }
        return Ok(text);
    }
    text.push_str(&format!(
        "switchboard demo: MCP sessions between our client and our servers, {wire}.\n"
    ));
    text.push_str(
        "Every frame is shown as it crossed the wire (JSON text, serialized and parsed\n",
    );
    text.push_str("again), with what the inspector says of it underneath.\n");
    text.push_str("\n## Part 1: a worked session, against the demo server\n");
    text.push_str(&render(&one));
    text.push_str("\n## Part 2: the rest of the protocol, against the everything server\n");
    text.push_str(&render(&two));
    text.push_str(&format!(
        "\n{} frames in two sessions; both closed cleanly.\n",
        one.len() + two.len()
    ));
    Ok(text)
}

/// Renders frames as annotated text: a heading per step, one line per frame, and under each
/// frame what the inspector says of it.
fn render(frames: &[TraceFrame]) -> String {
    let mut out = String::new();
    let mut current = 0;
    let mut inspector = switchboard::inspect::Inspector::new();
    for f in frames {
        let dir = match f.direction {
            Flow::Outbound => switchboard::inspect::Direction::ClientToServer,
            Flow::Inbound => switchboard::inspect::Direction::ServerToClient,
        };
        let r = inspector.observe(dir, &f.text, None).clone();
        if f.step != current {
            current = f.step;
            let title = step_title(current).unwrap_or("");
            out.push_str(&format!("\n# step {current}: {title}\n"));
        }
        let arrow = match f.direction {
            Flow::Outbound => "client → server",
            Flow::Inbound => "server → client",
        };
        out.push_str(&format!("  {arrow}  {}\n", f.text));
        out.push_str(&format!("      {r}\n"));
    }
    let s = inspector.summary();
    out.push_str(&format!(
        "\n# summary: {} frames, {} violations, lifecycle share {:.2}\n",
        s.frames, s.violations, s.lifecycle_share
    ));
    out
}

/// Where `switchboard demo` runs the servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Wire {
    /// Both ends in this process, over an in-memory pair (JSON text, serialized and parsed).
    #[default]
    Memory,
    /// The server is this binary, spawned as `switchboard serve --example NAME` on stdio.
    Stdio,
    /// The server is this binary, spawned as `switchboard serve --example NAME --http
    /// 127.0.0.1:0`; the client speaks Streamable HTTP to it.
    Http,
}

impl Wire {
    /// How the demo's heading names this wire.
    pub fn describe(self) -> &'static str {
        match self {
            Wire::Memory => "in memory",
            Wire::Stdio => "over stdio (each server is `switchboard serve` in a child process)",
            Wire::Http => {
                "over Streamable HTTP on 127.0.0.1 (each server is `switchboard serve --http` in a child process)"
            }
        }
    }
}

/// [`transcript`] on `wire`: in memory, or with each server this very executable (the
/// `switchboard` binary) in a child process ([`ChildProcess`](super::ChildProcess)).
///
/// # Errors
/// This executable's path is unknown, or a part failed ([`DemoError`]).
pub async fn play(wire: Wire, raw: bool) -> Result<String, DemoError> {
    match wire {
        Wire::Memory => transcript(&super::InMemory, wire.describe(), raw).await,
        Wire::Stdio | Wire::Http => {
            let exe = std::env::current_exe()
                .map_err(|e| DemoError::Unexpected(format!("own executable: {e}")))?;
            let host = super::ChildProcess::new(exe, wire == Wire::Http);
            transcript(&host, wire.describe(), raw).await
        }
    }
}
