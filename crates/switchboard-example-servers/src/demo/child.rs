//! The demo's servers in child processes: `switchboard serve --example NAME` over stdio, or
//! with `--http 127.0.0.1:0` over Streamable HTTP (`switchboard demo --transport stdio|http`).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use switchboard::client::{Client, ClientSession};
use switchboard::http_client::{HttpClientConfig, HttpClientTransport};
use switchboard::transport::{ChildCommand, ChildTransport};
use tokio::io::{AsyncBufReadExt, BufReader};

use super::host::{Host, HostedServer};
use super::trace::DemoError;
use crate::Example;

/// The servers run as `exe serve --example NAME` (the `switchboard` binary) in child
/// processes, over stdio or over Streamable HTTP on 127.0.0.1.
#[derive(Debug, Clone)]
pub struct ChildProcess {
    exe: PathBuf,
    http: bool,
}

impl ChildProcess {
    /// Servers started as `exe serve` (the `switchboard` binary), over HTTP when `http`.
    pub fn new(exe: PathBuf, http: bool) -> Self {
        ChildProcess { exe, http }
    }
}

/// A demo server in a child process: its pid, for the operator's signal.
#[derive(Debug)]
pub struct Child {
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
            let command = ChildCommand::new(&self.exe).args([
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
        let (child, url) = spawn_http(&self.exe, example).await?;
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

/// Spawns `switchboard serve --http 127.0.0.1:0` and reads the address it announces on stderr
/// (under the default log filter, whatever RUST_LOG says here).
async fn spawn_http(
    exe: &Path,
    example: Example,
) -> Result<(tokio::process::Child, String), DemoError> {
    let mut child = tokio::process::Command::new(exe)
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
