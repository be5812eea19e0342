//! `switchboard demo`: the demo's two sessions (switchboard-example-servers), on the wire the
//! user picks, printed frame by frame with what the inspector says of each frame.
//!
//! Over stdio and HTTP each server is this very binary in a child process
//! (`switchboard serve --example NAME`, with `--http 127.0.0.1:0` for HTTP).

use std::process::Stdio;
use std::time::Duration;

use switchboard::client::{Client, ClientSession};
use switchboard::http_client::{HttpClientConfig, HttpClientTransport};
use switchboard::jsonrpc::Flow;
use switchboard::transport::{ChildCommand, ChildTransport};
use switchboard_example_servers::Example;
use switchboard_example_servers::demo::{
    DemoError, Host, HostedServer, InMemory, TraceFrame, part_one, part_two, step_title,
};
use tokio::io::{AsyncBufReadExt, BufReader};

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
            sessions(&ChildProcess {
                http: wire == Wire::Http,
            })
            .await?
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

/// The servers run as this binary in child processes, over stdio or over HTTP.
struct ChildProcess {
    http: bool,
}

/// A demo server in a child process: its pid, for the operator's signal.
struct Child {
    pid: u32,
    /// The HTTP server's process, killed on drop; the stdio child is owned by its transport.
    _http: Option<tokio::process::Child>,
}

impl Host for ChildProcess {
    type Server = Child;

    async fn connect(
        &self,
        example: Example,
        client: &Client,
    ) -> Result<(ClientSession, Child), DemoError> {
        if !self.http {
            let command = ChildCommand::new(self_exe()?).args([
                "serve",
                "--stdio",
                "--example",
                example.name(),
            ]);
            let transport = ChildTransport::spawn(command)
                .map_err(|e| DemoError::Unexpected(format!("spawning the server: {e}")))?;
            let pid = transport.pid();
            let session = client.connect(transport).await.map_err(DemoError::Client)?;
            return Ok((session, Child { pid, _http: None }));
        }
        let (child, url) = spawn_http(example).await?;
        let pid = child
            .id()
            .ok_or_else(|| DemoError::Unexpected("the HTTP server exited".into()))?;
        let transport = HttpClientTransport::connect(&url, HttpClientConfig::default())
            .map_err(|e| DemoError::Unexpected(format!("{url}: {e}")))?;
        let session = client.connect(transport).await.map_err(DemoError::Client)?;
        Ok((
            session,
            Child {
                pid,
                _http: Some(child),
            },
        ))
    }
}

impl HostedServer for Child {
    /// SIGUSR1, which `serve --example demo` answers by registering `subtract`.
    async fn add_subtract(&self) -> Result<(), DemoError> {
        let pid = self.pid;
        let status = tokio::process::Command::new("kill")
            .args(["-USR1", &pid.to_string()])
            .status()
            .await
            .map_err(|e| DemoError::Unexpected(format!("kill -USR1: {e}")))?;
        if status.success() {
            Ok(())
        } else {
            Err(DemoError::Unexpected(format!("kill -USR1 {pid}: {status}")))
        }
    }
}

fn self_exe() -> Result<std::path::PathBuf, DemoError> {
    std::env::current_exe().map_err(|e| DemoError::Unexpected(format!("own executable: {e}")))
}

/// Spawns `switchboard serve --http 127.0.0.1:0` and reads the address it announces on stderr
/// (under the default log filter, whatever RUST_LOG says here).
async fn spawn_http(example: Example) -> Result<(tokio::process::Child, String), DemoError> {
    let mut child = tokio::process::Command::new(self_exe()?)
        .args([
            "serve",
            "--http",
            "127.0.0.1:0",
            "--example",
            example.name(),
        ])
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| DemoError::Unexpected(format!("spawning the HTTP server: {e}")))?;
    let stderr = child
        .stderr
        .take()
        .ok_or_else(|| DemoError::Unexpected("no stderr pipe".into()))?;
    let mut lines = BufReader::new(stderr).lines();
    let find = async {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(i) = line.find("listening on ") {
                return Some(line[i + "listening on ".len()..].trim().to_owned());
            }
        }
        None
    };
    let url = tokio::time::timeout(Duration::from_secs(10), find)
        .await
        .ok()
        .flatten()
        .ok_or_else(|| {
            DemoError::Unexpected("the HTTP server did not announce its address".into())
        })?;
    // Keep draining its stderr so that it never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok((child, url))
}
