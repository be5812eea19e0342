//! `switchboard demo`: the demo's two sessions (switchboard-example-servers), on the wire the
//! user picks, printed frame by frame with what the inspector says of each frame.
//!
//! Over stdio and HTTP each server is this very binary in a child process
//! (`switchboard serve --example NAME`, with `--http 127.0.0.1:0` for HTTP).

use switchboard_example_servers::demo::{ChildProcess, DemoError, InMemory, transcript};

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
    let wire = args.transport;
    match wire {
        Wire::Memory => transcript(&InMemory, wire.describe(), args.raw).await,
        Wire::Stdio | Wire::Http => {
            let exe = std::env::current_exe()
                .map_err(|e| DemoError::Unexpected(format!("own executable: {e}")))?;
            let host = ChildProcess::new(exe, wire == Wire::Http);
            transcript(&host, wire.describe(), args.raw).await
        }
    }
}
