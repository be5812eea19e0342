//! `switchboard`: the command-line toolkit.

use clap::{Parser, Subcommand};

/// Switchboard: an MCP stack and toolkit.
#[derive(Debug, Parser)]
#[command(name = "switchboard", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve an example server: over stdio (the default; frames on stdout, logs on stderr).
    Serve {
        /// Serve over this process's stdin and stdout (the default).
        #[arg(long)]
        stdio: bool,
        /// Which example server to run.
        #[arg(long, value_enum, default_value = "everything")]
        example: switchboard_cli::examples::Example,
        /// The largest frame accepted, in bytes.
        #[arg(long, default_value_t = switchboard::jsonrpc::config::DEFAULT_MAX_FRAME_BYTES)]
        max_frame_bytes: usize,
    },
    /// Run a full MCP session against the embedded demo server, in memory, and print every frame.
    Demo {
        /// Print only the raw frames, one JSON object per line, with no annotations.
        #[arg(long)]
        raw: bool,
    },
}

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let cli = Cli::parse();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match cli.command {
        Command::Serve {
            stdio: _,
            example,
            max_frame_bytes,
        } => {
            let config = switchboard::jsonrpc::SessionConfig::default()
                .with_max_frame_bytes(max_frame_bytes);
            rt.block_on(async move {
                let server = switchboard_cli::examples::build(example, config)?;
                let transport = switchboard::transport::stdio::StdioTransport::stdio()
                    .with_max_frame_bytes(max_frame_bytes);
                let session = server.serve(transport)?;
                tracing::info!(?example, "serving on stdio");
                session.closed().await;
                anyhow::Ok(())
            })?;
        }
        Command::Demo { raw } => {
            let frames = rt.block_on(switchboard_cli::demo::run())?;
            if raw {
                for f in &frames {
                    println!("{}", f.text);
                }
            } else {
                println!(
                    "switchboard demo: one MCP session against the embedded demo server, in memory."
                );
                println!(
                    "Every frame is shown as it crossed the wire (JSON text, serialized and parsed again)."
                );
                print!("{}", switchboard_cli::demo::render(&frames));
                println!("\n{} frames; session closed cleanly.", frames.len());
            }
        }
    }
    Ok(())
}
