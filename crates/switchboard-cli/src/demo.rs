//! `switchboard demo`: the demo's two sessions (switchboard-example-servers), on the wire the
//! user picks, printed frame by frame with what the inspector says of each frame.
//!
//! Over stdio and HTTP each server is this very binary in a child process
//! (`switchboard serve --example NAME`, with `--http 127.0.0.1:0` for HTTP).

use switchboard::jsonrpc::Flow;
use switchboard_example_servers::demo::{
    ChildProcess, DemoError, Host, InMemory, TraceFrame, part_one, part_two, step_title,
};

/// `switchboard demo`'s flags.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct DemoArgs {
    /// Print only the raw frames, one JSON object per line, with no annotations.
    #[arg(long)]
    raw: bool,
    /// Where the servers run: in memory, or in a child process of this binary over stdio or
    /// Streamable HTTP (127.0.0.1).
    #[arg(long, value_enum, default_value = "memory")]
    transport: Wire,
}

/// The transport the demo runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum Wire {
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
    fn describe(self) -> &'static str {
        match self {
            Wire::Memory => "in memory",
            Wire::Stdio => "over stdio (each server is `switchboard serve` in a child process)",
            Wire::Http => {
                "over Streamable HTTP on 127.0.0.1 (each server is `switchboard serve --http` in a child process)"
            }
        }
    }
}

/// Runs both sessions on the wire `args` names; returns what `switchboard demo` prints: the raw
/// frames, one per line (`--raw`), or the annotated text.
pub(crate) async fn run(args: &DemoArgs) -> Result<String, DemoError> {
    let (wire, raw) = (args.transport, args.raw);
    let (one, two) = match wire {
        Wire::Memory => sessions(&InMemory).await?,
        Wire::Stdio | Wire::Http => {
            let exe = std::env::current_exe()
                .map_err(|e| DemoError::Unexpected(format!("own executable: {e}")))?;
            sessions(&ChildProcess::new(exe, wire == Wire::Http)).await?
        }
    };
    let mut text = String::new();
    if raw {
        for f in one.iter().chain(&two) {
            text.push_str(&f.text);
            text.push('\n');
        }
        return Ok(text);
    }
    text.push_str(&format!(
        "switchboard demo: MCP sessions between our client and our servers, {}.\n",
        wire.describe()
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

async fn sessions(host: &impl Host) -> Result<(Vec<TraceFrame>, Vec<TraceFrame>), DemoError> {
    let one = part_one::run(host).await?;
    let two = part_two::run(host, part_one::STEPS.len() + 1).await?;
    Ok((one, two))
}

/// Renders frames as annotated text: a heading per step, one line per frame, and under each
/// frame what the inspector (switchboard-inspect) says of it.
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
