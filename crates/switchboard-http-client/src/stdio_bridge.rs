//! A remote Streamable HTTP server exposed to a stdio host: frames read line by line from the
//! host go to the server through [`HttpClientTransport`] (a POST per frame, JSON or SSE
//! answers, the session id, `MCP-Protocol-Version` after initialize, the GET stream,
//! resumption, the HTTP+SSE fallback); every frame the server sends is written to the
//! host, one per line. Every frame is shown to the [`FrameTap`] first, with the HTTP session id.

use std::time::Duration;

use switchboard_jsonrpc::{FrameSink, FrameSource, Transport, TransportError};
use switchboard_transport::FrameTap;
use switchboard_transport::{one_line, read_frame, tap_body};
use switchboard_types::Direction;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use crate::HttpClientTransport;

/// How long the server's last answers may take to arrive once the host's input has ended.
const DRAIN_GRACE: Duration = Duration::from_secs(3);

/// Relays the host on `input` / `output` (for a stdio server: this process's stdin and stdout)
/// to the server behind `transport` until the host's input ends (the session is then closed
/// with `DELETE` and its last answers drained) or the HTTP side fails.
///
/// # Errors
/// The HTTP side failed before the host's input ended.
pub async fn relay<R, W>(
    transport: HttpClientTransport,
    input: R,
    output: W,
    tap: &dyn FrameTap,
) -> Result<(), TransportError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let handle = transport.handle();
    let (mut sink, mut source) = transport.split();
    let down = async {
        let mut out = output;
        while let Some(item) = source.recv().await {
            let text = item?;
            let session = handle.session_id();
            tap_body(tap, Direction::ServerToClient, session.as_deref(), &text);
            let line = one_line(&text);
            let wrote = async {
                out.write_all(line.as_bytes()).await?;
                out.write_all(b"\n").await?;
                out.flush().await
            };
            if wrote.await.is_err() {
                return Ok(());
            }
        }
        Ok(())
    };
    tokio::pin!(down);
    let up = async {
        let mut reader = BufReader::new(input);
        let mut line = Vec::with_capacity(4096);
        while let Some(frame) = read_frame(&mut reader, &mut line).await {
            let session = handle.session_id();
            tap_body(
                tap,
                Direction::ClientToServer,
                session.as_deref(),
                &frame.text,
            );
            if sink.send(frame).await.is_err() {
                // The reason comes through the receiving side.
                break;
            }
        }
    };
    let finished = tokio::select! {
        () = up => None,
        end = &mut down => Some(end),
    };
    match finished {
        Some(end) => end,
        None => {
            // The host's input ended: end the session (DELETE), let the last answers drain.
            let _ = sink.close().await;
            tokio::time::timeout(DRAIN_GRACE, &mut down)
                .await
                .unwrap_or(Ok(()))
        }
    }
}
