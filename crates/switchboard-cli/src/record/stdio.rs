//! `switchboard record -o FILE --stdio "CMD"`: a transparent recording proxy. It is itself a stdio
//! server to whoever launched it and relays every frame, byte for byte, to the spawned server and
//! back, writing one JSONL object per frame: `{ts_ms, direction, transport, session, frame}`.

use std::process::Stdio;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// Where recorded frames go.
#[derive(Clone)]
pub struct Recording(Arc<Mutex<tokio::io::BufWriter<tokio::fs::File>>>);

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Recording(..)")
    }
}

impl Recording {
    /// Creates (truncates) the recording file.
    ///
    /// # Errors
    /// The file cannot be created.
    pub async fn create(path: &str) -> anyhow::Result<Recording> {
        let file = tokio::fs::File::create(path)
            .await
            .with_context(|| format!("creating {path}"))?;
        Ok(Recording(Arc::new(Mutex::new(tokio::io::BufWriter::new(
            file,
        )))))
    }

    /// Appends one frame (flushed at once, so a crash loses nothing already relayed).
    ///
    /// # Errors
    /// The file cannot be written.
    pub async fn frame(
        &self,
        direction: &str,
        transport: &str,
        session: Option<&str>,
        text: &str,
    ) -> anyhow::Result<()> {
        let ts_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64() * 1000.0)
            .unwrap_or(0.0);
        let line = json!({"ts_ms": ts_ms, "direction": direction, "transport": transport, "session": session, "frame": text});
        let mut w = self.0.lock().await;
        w.write_all(line.to_string().as_bytes()).await?;
        w.write_all(b"\n").await?;
        w.flush().await?;
        Ok(())
    }
}

/// Relays lines from `from` to `to` unchanged, recording each one.
async fn relay<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
    from: R,
    mut to: W,
    rec: Recording,
    direction: &'static str,
) -> anyhow::Result<()> {
    let mut reader = BufReader::new(from);
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).await? == 0 {
            break;
        }
        to.write_all(&line).await?;
        to.flush().await?;
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches('\n').trim_end_matches('\r');
        if !text.is_empty() {
            rec.frame(direction, "stdio", None, text).await?;
        }
    }
    to.shutdown().await.ok();
    Ok(())
}

/// Runs the stdio recording proxy until both directions end; returns the server's exit code.
///
/// # Errors
/// The server cannot be started or the recording cannot be written.
pub async fn stdio(output: &str, command: &str) -> anyhow::Result<i32> {
    let rec = Recording::create(output).await?;
    let mut child = tokio::process::Command::new("sh")
        .args(["-c", &format!("exec {command}")])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("cannot start `{command}`"))?;
    let child_in = child.stdin.take().context("child stdin")?;
    let child_out = child.stdout.take().context("child stdout")?;
    let up = tokio::spawn(relay(tokio::io::stdin(), child_in, rec.clone(), "c2s"));
    let down = tokio::spawn(relay(child_out, tokio::io::stdout(), rec.clone(), "s2c"));
    // The host closing our stdin closes the server's; the server's exit ends the downstream relay.
    let _ = up.await;
    let status = child.wait().await?;
    let _ = down.await;
    Ok(status.code().unwrap_or(1))
}
