//! `switchboard record -o FILE --stdio "CMD"`: the stdio recording proxy. It is itself a stdio
//! server to whoever launched it and relays every frame, byte for byte, to the spawned server and
//! back, recording each one (transport `stdio`, session `null`).

use anyhow::Context as _;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use super::Recording;

/// Relays lines from `from` to `to` unchanged, recording each one (`direction`: `c2s`/`s2c`),
/// until `from` ends; then shuts `to` down.
///
/// # Errors
/// Reading, writing or recording failed.
pub async fn relay<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
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
        // Recorded before it is relayed: the answer to a frame cannot reach the recording
        // (through the other direction's relay) before the frame itself.
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches('\n').trim_end_matches('\r');
        if !text.is_empty() {
            rec.frame(direction, "stdio", None, text).await?;
        }
        to.write_all(&line).await?;
        to.flush().await?;
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
    let mut child = super::spawn_server(command)?;
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
