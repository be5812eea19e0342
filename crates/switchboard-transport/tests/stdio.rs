//! Byte-exact stdio transcripts: the real engine behind a `StdioTransport` on `tokio::io::duplex`,
//! the test playing the peer with raw bytes. Test names carry the SPEC-NOTES tags they cover.
#![allow(clippy::unwrap_used)]

mod support;

use std::sync::Arc;
use std::time::Duration;

use support::Echo;
use switchboard_jsonrpc::{NullService, Peer, RequestOptions, SessionConfig, spawn};
use switchboard_transport::StdioTransport;
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

/// A server engine on one end of a duplex pipe; the other end is returned for the test to play
/// the client with raw bytes.
fn serve(max_frame_bytes: Option<usize>) -> (DuplexStream, Peer) {
    serve_with(max_frame_bytes, Echo::default())
}

fn serve_with(max_frame_bytes: Option<usize>, echo: Echo) -> (DuplexStream, Peer) {
    let (client, server) = tokio::io::duplex(64 * 1024);
    let (r, w) = tokio::io::split(server);
    let mut transport = StdioTransport::new(r, w);
    if let Some(n) = max_frame_bytes {
        transport = transport.with_max_frame_bytes(n);
    }
    let peer = spawn(
        transport,
        Arc::new(echo),
        SessionConfig::default().with_name("server"),
    );
    (client, peer)
}

/// Reads exactly `lines` newline-terminated lines (and nothing more arrives within 50 ms).
async fn read_lines(io: &mut DuplexStream, lines: usize) -> String {
    let mut out = Vec::new();
    let mut byte = [0u8; 1];
    while out.iter().filter(|&&b| b == b'\n').count() < lines {
        let n = tokio::time::timeout(Duration::from_secs(5), io.read(&mut byte))
            .await
            .expect("bytes within 5 s")
            .unwrap();
        assert_eq!(
            n,
            1,
            "unexpected end of output after {:?}",
            String::from_utf8_lossy(&out)
        );
        out.push(byte[0]);
    }
    if let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(50), io.read(&mut byte)).await {
        assert_eq!(
            n,
            0,
            "unexpected extra output after {:?}",
            String::from_utf8_lossy(&out)
        );
    }
    String::from_utf8(out).unwrap()
}

const REQ1: &str = r#"{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1}}"#;
const RESP1: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"a":1}}"#;
const REQ2: &str = r#"{"jsonrpc":"2.0","id":"two","method":"echo","params":{"s":"é\n"}}"#;
const RESP2: &str = r#"{"jsonrpc":"2.0","id":"two","result":{"s":"é\n"}}"#;

#[tokio::test]
async fn st_1_exact_bytes_in_exact_bytes_out() {
    let (mut c, _p) = serve(None);
    c.write_all(format!("{REQ1}\n").as_bytes()).await.unwrap();
    assert_eq!(read_lines(&mut c, 1).await, format!("{RESP1}\n"));
}

#[tokio::test]
async fn st_1_crlf_input_is_accepted_and_answered_with_lf() {
    let (mut c, _p) = serve(None);
    c.write_all(format!("{REQ1}\r\n").as_bytes()).await.unwrap();
    assert_eq!(read_lines(&mut c, 1).await, format!("{RESP1}\n"));
}

#[tokio::test]
async fn st_1_several_frames_in_one_read() {
    let (mut c, _p) = serve(None);
    c.write_all(format!("{REQ1}\n\n{REQ2}\r\n").as_bytes())
        .await
        .unwrap();
    let out = read_lines(&mut c, 2).await;
    // Requests run concurrently, so answers may come in either order.
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort_unstable();
    let mut want = vec![RESP1, RESP2];
    want.sort_unstable();
    assert_eq!(lines, want);
    assert!(out.ends_with('\n'));
}

#[tokio::test]
async fn st_1_frame_split_across_reads() {
    let (mut c, _p) = serve(None);
    let bytes = format!("{REQ2}\n");
    let (a, b) = bytes.as_bytes().split_at(bytes.len() / 2);
    c.write_all(a).await.unwrap();
    // The session reads the first half before the second is written.
    tokio::task::yield_now().await;
    c.write_all(b).await.unwrap();
    assert_eq!(read_lines(&mut c, 1).await, format!("{RESP2}\n"));
}

#[tokio::test]
async fn st_1_frame_trickled_byte_by_byte() {
    let (mut c, _p) = serve(None);
    for b in format!("{REQ1}\n").bytes() {
        c.write_all(&[b]).await.unwrap();
        tokio::task::yield_now().await;
    }
    assert_eq!(read_lines(&mut c, 1).await, format!("{RESP1}\n"));
}

#[tokio::test]
async fn oversized_line_is_answered_without_id_and_the_next_frame_served() {
    let (mut c, _p) = serve(Some(64));
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"echo","params":{{"pad":"{}"}}}}"#,
        "x".repeat(10_000)
    );
    // The oversized line arrives in several writes; the session answers once and reads on.
    for piece in big.as_bytes().chunks(1000) {
        c.write_all(piece).await.unwrap();
        tokio::task::yield_now().await;
    }
    c.write_all(format!("\n{REQ1}\n").as_bytes()).await.unwrap();
    let out = read_lines(&mut c, 2).await;
    assert_eq!(
        out,
        format!(
            "{}\n{RESP1}\n",
            r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"frame too large","data":{"reason":"frame_too_large","limit":64}}}"#
        )
    );
}

#[tokio::test]
async fn jr_2_invalid_utf8_is_a_parse_error_and_the_next_frame_served() {
    let (mut c, _p) = serve(None);
    c.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}\n")
        .await
        .unwrap();
    tokio::task::yield_now().await;
    c.write_all(format!("{REQ1}\n").as_bytes()).await.unwrap();
    let out = read_lines(&mut c, 2).await;
    let mut lines = out.lines();
    let err: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert!(err.get("id").is_none(), "an error without id: {err}");
    assert_eq!(err["error"]["code"], -32700);
    assert_eq!(lines.next().unwrap(), RESP1);
}

#[tokio::test]
async fn eof_on_input_closes_the_session_and_the_output() {
    let (c, peer) = serve(None);
    let (mut r, mut w) = tokio::io::split(c);
    w.write_all(format!("{REQ1}\n").as_bytes()).await.unwrap();
    let mut line = vec![0u8; RESP1.len() + 1];
    tokio::time::timeout(Duration::from_secs(5), r.read_exact(&mut line))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(line, format!("{RESP1}\n").into_bytes());
    w.shutdown().await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), peer.closed())
        .await
        .expect("EOF on stdin closes the session");
    assert!(
        peer.close_reason().is_none(),
        "a clean end, not a lost connection"
    );
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), r.read_to_end(&mut rest))
        .await
        .expect("the output is closed")
        .unwrap();
    assert!(rest.is_empty());
}

#[tokio::test]
async fn unterminated_last_line_is_served_before_eof_closes() {
    let echo = Echo::default();
    let notes = echo.notes.clone();
    let (c, peer) = serve_with(None, echo);
    let (_r, mut w) = tokio::io::split(c);
    w.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}")
        .await
        .unwrap();
    w.shutdown().await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), peer.closed())
        .await
        .unwrap();
    assert_eq!(*notes.lock().unwrap(), vec!["notifications/x".to_owned()]);
}

#[tokio::test]
async fn two_engines_talk_over_a_duplex_pipe() {
    let (a, b) = tokio::io::duplex(1024);
    let (ar, aw) = tokio::io::split(a);
    let (br, bw) = tokio::io::split(b);
    let _server = spawn(
        StdioTransport::new(ar, aw),
        Arc::new(Echo::default()),
        SessionConfig::default(),
    );
    let client = spawn(
        StdioTransport::new(br, bw),
        Arc::new(NullService),
        SessionConfig::default(),
    );
    let params =
        serde_json::value::to_raw_value(&serde_json::json!({"big": "y".repeat(5000)})).unwrap();
    let calls = (0..20).map(|_| {
        let client = client.clone();
        let params = params.clone();
        async move {
            client
                .request("echo", Some(params), RequestOptions::default())
                .await
        }
    });
    for r in futures_join(calls).await {
        assert_eq!(r.unwrap().get(), params.get());
    }
}

/// Joins futures without pulling in the `futures` crate.
async fn futures_join<F: std::future::Future + Send + 'static>(
    futs: impl Iterator<Item = F>,
) -> Vec<F::Output>
where
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futs.map(tokio::spawn).collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

#[test]
fn stdio_constructor_has_the_expected_type() {
    fn is_transport<T: switchboard_jsonrpc::Transport>(_: &T) {}
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let t = StdioTransport::stdio().with_max_frame_bytes(1024);
        is_transport(&t);
    });
}

#[tokio::test]
async fn a_batch_is_written_as_consecutive_lines_and_pipelined_requests_are_each_answered_once() {
    use switchboard_jsonrpc::{FrameSink, OutboundFrame, Transport};
    use switchboard_types::MessageKind;
    // The sink alone: three frames, one write, three lines.
    let (mut far, near) = tokio::io::duplex(4096);
    let (sink, _source) = StdioTransport::new(tokio::io::empty(), near).split();
    let mut sink = sink;
    let mut batch: Vec<OutboundFrame> = ["1", "2", "3"]
        .iter()
        .map(|i| OutboundFrame {
            text: format!(r#"{{"jsonrpc":"2.0","id":{i},"result":{{}}}}"#),
            kind: MessageKind::Result,
            id: None,
            related: None,
            headers: Vec::new(),
            cancels: None,
        })
        .collect();
    sink.send_batch(&mut batch).await.unwrap();
    let mut got = vec![0u8; 4096];
    let n = far.read(&mut got).await.unwrap();
    assert_eq!(
        std::str::from_utf8(&got[..n]).unwrap(),
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n"
    );
    // The engine: 200 requests written at once are each answered exactly once, one per line,
    // whatever batches the writer formed.
    let (mut client, _peer) = serve(None);
    let mut input = String::new();
    for i in 0..200 {
        input.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"echo\",\"params\":{{\"n\":{i}}}}}\n"
        ));
    }
    client.write_all(input.as_bytes()).await.unwrap();
    let mut text = String::new();
    let mut buf = vec![0u8; 64 * 1024];
    while text.matches('\n').count() < 200 {
        let n = tokio::time::timeout(Duration::from_secs(5), client.read(&mut buf))
            .await
            .unwrap()
            .unwrap();
        text.push_str(std::str::from_utf8(&buf[..n]).unwrap());
    }
    let mut ids: Vec<i64> = text
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["result"]["n"], v["id"]);
            v["id"].as_i64().unwrap()
        })
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..200).collect::<Vec<_>>());
}
