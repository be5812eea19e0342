//! `switchboard demo`: the demo's two sessions (switchboard-example-servers), on the wire the
//! user picks, printed frame by frame with what the inspector says of each frame.
//!
//! Over stdio and HTTP each server is this very binary in a child process
//! (`switchboard serve --example NAME`, with `--http 127.0.0.1:0` for HTTP).

use switchboard_example_servers::demo::{DemoError, Wire, play};

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

/// Runs both sessions on the wire `args` names; returns what `switchboard demo` prints: the raw
/// frames, one per line (`--raw`), or the annotated text.
pub(crate) async fn run(args: &DemoArgs) -> Result<String, DemoError> {
    play(args.transport, args.raw).await
}
