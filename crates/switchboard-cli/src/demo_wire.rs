//! Where the demo's server runs: in memory (the default), or in a child process of this very
//! binary (`switchboard serve --example NAME`) over stdio or over Streamable HTTP on 127.0.0.1.
//!
//! The client side is the same in every case; only the transport handed to `Client::connect`
//! changes, so the demo shows the same session on each wire.

use std::process::Stdio;
use std::time::Duration;

use switchboard::client::{Client, ClientSession};
use switchboard::http_client::{HttpClientConfig, HttpClientTransport};
use switchboard::jsonrpc::memory;
use switchboard::server::Server;
use switchboard::transport::{ChildCommand, ChildTransport};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::demo::DemoError;
use crate::examples::Example;

/// The transport the demo runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
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

/// The server side of one demo session: kept alive for the session, ended on drop.
pub(crate) enum Hosted {
    /// In this process.
    Memory(Server),
    /// A child process (its pid, for the operator signal).
    Child {
        pid: u32,
        /// The HTTP server's process; the stdio child is owned by its transport.
        _http: Option<tokio::process::Child>,
    },
}

impl Hosted {
    /// The operator's action of part one: register `subtract` on the running server. In a child
    /// process that is SIGUSR1, which `serve --example demo` answers by adding the tool.
    pub(crate) async fn add_subtract(&self) -> Result<(), DemoError> {
        match self {
            Hosted::Memory(server) => server
                .add_tool(crate::demo::subtract_tool(), |call| async move {
                    crate::demo::arith(&call, ["x", "y"], i64::checked_sub, |a, b| a - b)
                })
                .map_err(DemoError::Server),
            Hosted::Child { pid, .. } => {
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
    }
}

/// Starts `example`'s server on `wire` and connects `client` to it.
pub(crate) async fn connect(
    wire: Wire,
    example: Example,
    in_memory: impl FnOnce() -> Result<Server, DemoError>,
    client: &Client,
) -> Result<(ClientSession, Hosted), DemoError> {
    match wire {
        Wire::Memory => {
            let server = in_memory()?;
            let (client_end, server_end) = memory::pair();
            server.serve(server_end).map_err(DemoError::Server)?;
            let session = client
                .connect(client_end)
                .await
                .map_err(DemoError::Client)?;
            Ok((session, Hosted::Memory(server)))
        }
        Wire::Stdio => {
            let command = ChildCommand::new(self_exe()?).args([
                "serve",
                "--stdio",
                "--example",
                example_name(example),
            ]);
            let transport = ChildTransport::spawn(command)
                .map_err(|e| DemoError::Unexpected(format!("spawning the server: {e}")))?;
            let pid = transport.pid();
            let session = client.connect(transport).await.map_err(DemoError::Client)?;
            Ok((session, Hosted::Child { pid, _http: None }))
        }
        Wire::Http => {
            let (child, url) = spawn_http(example).await?;
            let pid = child
                .id()
                .ok_or_else(|| DemoError::Unexpected("the HTTP server exited".into()))?;
            let transport = HttpClientTransport::connect(&url, HttpClientConfig::default())
                .map_err(|e| DemoError::Unexpected(format!("{url}: {e}")))?;
            let session = client.connect(transport).await.map_err(DemoError::Client)?;
            Ok((
                session,
                Hosted::Child {
                    pid,
                    _http: Some(child),
                },
            ))
        }
    }
}

fn self_exe() -> Result<std::path::PathBuf, DemoError> {
    std::env::current_exe().map_err(|e| DemoError::Unexpected(format!("own executable: {e}")))
}

fn example_name(example: Example) -> &'static str {
    match example {
        Example::Everything => "everything",
        Example::Add => "add",
        Example::Demo => "demo",
    }
}

/// Spawns `switchboard serve --http 127.0.0.1:0` and reads the address it announces on stderr.
async fn spawn_http(example: Example) -> Result<(tokio::process::Child, String), DemoError> {
    let mut child = tokio::process::Command::new(self_exe()?)
        .args([
            "serve",
            "--http",
            "127.0.0.1:0",
            "--example",
            example_name(example),
        ])
        .env("RUST_LOG", "warn")
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
