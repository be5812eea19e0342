//! Hostile input on the in-memory transport: floods of bad frames and bad batch entries (the log
//! stays bounded, every entry is still answered), echoes of huge names (cut), panics in the
//! synchronous part of a handler and in a notification handler (the session lives on), ids
//! repeated inside a huge batch, and a peer that does not read its answers (the reader waits).
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use switchboard_jsonrpc::memory::{self, MemorySink, MemorySource, MemoryTransport};
use switchboard_jsonrpc::{
    BoxFuture, FrameSink, FrameSource, HandlerResult, OutboundFrame, Peer, RequestContext, Service,
    SessionConfig, Transport, spawn,
};
use switchboard_test_support::logs::count_logs;
use switchboard_types::error::{ELLIPSIS, MAX_ECHO_BYTES};
use switchboard_types::jsonrpc::{MAX_BATCH_ENTRIES, to_raw};
use switchboard_types::{ErrorObject, MessageKind, Notification, Request};

/// Log output allowed for a whole flood, in bytes.
const LOG_BOUND: usize = 64 * 1024;

/// `echo` answers its params at once; `panic_now` panics before it returns a future;
/// `slow` answers after 20 ms; anything else is -32601. The notification `boom` panics.
struct Hostile;

impl Service for Hostile {
    fn call(&self, req: Request, _cx: RequestContext) -> BoxFuture<HandlerResult> {
        match req.method.as_str() {
            "echo" => {
                let p = req.params.map_or(Value::Null, |p| {
                    serde_json::from_str(p.get()).unwrap_or(Value::Null)
                });
                Box::pin(std::future::ready(Ok(to_raw(&p).unwrap())))
            }
            "panic_now" => panic!("synchronous handler bug"),
            "slow" => Box::pin(async {
                // Not a wait: a slow handler (its work takes 20 ms).
                tokio::time::sleep(Duration::from_millis(20)).await;
                Ok(to_raw(&json!({})).unwrap())
            }),
            m => Box::pin(std::future::ready(Err(ErrorObject::method_not_found(m)))),
        }
    }

    fn notify(&self, n: Notification, _peer: &Peer) {
        if n.method == "boom" {
            panic!("notification handler bug");
        }
    }

    fn batch_allowed(&self) -> bool {
        true
    }
}

fn start(config: SessionConfig) -> (Peer, MemorySink, MemorySource) {
    let (a, b) = memory::pair();
    let peer = spawn(a, Arc::new(Hostile), config);
    let (sink, source) = b.split();
    (peer, sink, source)
}

fn frame(text: String) -> OutboundFrame {
    OutboundFrame {
        text,
        kind: MessageKind::Request,
        id: None,
        related: None,
        headers: Vec::new(),
        cancels: None,
    }
}

async fn recv(source: &mut MemorySource) -> Value {
    let text = tokio::time::timeout(Duration::from_secs(20), source.recv())
        .await
        .expect("an answer in time")
        .expect("open")
        .expect("a frame");
    serde_json::from_str(&text).unwrap()
}

async fn ask(sink: &mut MemorySink, source: &mut MemorySource, id: &str, method: &str) -> Value {
    let text = json!({"jsonrpc": "2.0", "id": id, "method": method}).to_string();
    sink.send(frame(text)).await.unwrap();
    recv(source).await
}

#[tokio::test]
async fn a_full_batch_of_bad_entries_is_answered_entry_by_entry_with_a_bounded_log() {
    let (logged, _guard) = count_logs(tracing::Level::TRACE);
    let (_peer, mut sink, mut source) = start(SessionConfig::default());
    // Three kinds of bad entry: an envelope without a method (answered with its id), a bare
    // number (answered with a null id) and an invalid notification (never answered).
    let mut entries = Vec::new();
    let mut answerable = 0;
    for i in 0..MAX_BATCH_ENTRIES {
        entries.push(match i % 3 {
            0 => {
                answerable += 1;
                format!(r#"{{"jsonrpc":"2.0","id":{i}}}"#)
            }
            1 => {
                answerable += 1;
                "7".to_owned()
            }
            _ => r#"{"jsonrpc":"1.0","method":"x"}"#.to_owned(),
        });
    }
    let batch = format!("[{}]", entries.join(","));
    sink.send(frame(batch)).await.unwrap();
    let answer = recv(&mut source).await;
    let answers = answer.as_array().expect("one array");
    assert_eq!(answers.len(), answerable);
    assert!(answers.iter().all(|a| a["error"]["code"] == -32600));
    assert_eq!(ask(&mut sink, &mut source, "p", "echo").await["id"], "p");
    let bytes = logged.bytes();
    assert!(bytes < LOG_BOUND, "{bytes} bytes of log for one batch");
}

/// The measured attacks (20,000 bad entries in 300 KB; two million `1` in 4 MB, which were
/// answered with 258 MB of errors) are past the batch entry bound: one -32600 without id for
/// the whole frame, a bounded log, and the session goes on.
#[tokio::test]
async fn a_batch_over_the_entry_bound_is_refused_whole_with_one_error() {
    let (logged, _guard) = count_logs(tracing::Level::TRACE);
    let (peer, mut sink, mut source) = start(SessionConfig::default());
    let bad: Vec<String> = (0..20_000).map(|i| format!(r#"{{"id":{i}}}"#)).collect();
    let ones = format!("[{}]", vec!["1"; 2_000_000].join(","));
    let pings: Vec<String> = (0..=MAX_BATCH_ENTRIES)
        .map(|i| format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"echo"}}"#))
        .collect();
    for (batch, entries) in [
        (format!("[{}]", bad.join(",")), 20_000),
        (ones, 2_000_000),
        (format!("[{}]", pings.join(",")), MAX_BATCH_ENTRIES + 1),
    ] {
        sink.send(frame(batch)).await.unwrap();
        let answer = recv(&mut source).await;
        assert_eq!(answer["id"], Value::Null, "{answer}");
        assert_eq!(answer["error"]["code"], -32600);
        assert_eq!(answer["error"]["data"]["reason"], "batch_too_large");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains(&format!("{entries} entries")), "{message}");
        assert_eq!(ask(&mut sink, &mut source, "p", "echo").await["id"], "p");
    }
    assert!(!peer.is_closed());
    let bytes = logged.bytes();
    assert!(bytes < LOG_BOUND, "{bytes} bytes of log for three batches");
}

#[tokio::test]
async fn twenty_thousand_bad_frames_are_each_answered_with_a_bounded_log() {
    let (logged, _guard) = count_logs(tracing::Level::TRACE);
    let (_peer, mut sink, mut source) = start(SessionConfig::default());
    // Frames the peer answers (no method) and frames it only logs (orphan responses, invalid
    // notifications), each with a long tail so that a logged frame would show.
    let tail = "x".repeat(2_000);
    let reader = tokio::spawn(async move {
        let mut answered = 0;
        loop {
            let a = recv(&mut source).await;
            if a["id"] == "end" {
                return answered;
            }
            assert_eq!(a["error"]["code"], -32600);
            answered += 1;
        }
    });
    let mut answerable = 0;
    for i in 0..20_000 {
        let text = match i % 3 {
            0 => {
                answerable += 1;
                format!(r#"{{"jsonrpc":"2.0","id":{i},"pad":"{tail}"}}"#)
            }
            1 => format!(r#"{{"jsonrpc":"2.0","id":{i},"result":{{"pad":"{tail}"}}}}"#),
            _ => format!(r#"{{"jsonrpc":"1.0","method":"x","params":{{"pad":"{tail}"}}}}"#),
        };
        sink.send(frame(text)).await.unwrap();
    }
    sink.send(frame(
        r#"{"jsonrpc":"2.0","id":"end","method":"echo"}"#.into(),
    ))
    .await
    .unwrap();
    assert_eq!(reader.await.unwrap(), answerable);
    let bytes = logged.bytes();
    assert!(bytes < LOG_BOUND, "{bytes} bytes of log for 20,000 frames");
}

#[tokio::test]
async fn a_4_mib_method_name_is_echoed_cut() {
    let (_peer, mut sink, mut source) = start(SessionConfig::default());
    let name = "m".repeat(4 << 20);
    let answer = ask(&mut sink, &mut source, "1", &name).await;
    assert_eq!(answer["error"]["code"], -32601);
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.ends_with(ELLIPSIS), "{message}");
    assert!(answer.to_string().len() < 3 * MAX_ECHO_BYTES, "{answer}");
    // The same name, repeated as a request id twice in a batch, is cut in that message too.
    let id = "i".repeat(1 << 20);
    let slow = json!({"jsonrpc": "2.0", "id": id, "method": "slow"});
    sink.send(frame(json!([slow, slow]).to_string()))
        .await
        .unwrap();
    let answer = recv(&mut source).await;
    let duplicate = answer
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["error"]["data"]["reason"] == "duplicate_request_id")
        .expect("the second is refused");
    assert!(duplicate["error"]["message"].as_str().unwrap().len() < 2 * MAX_ECHO_BYTES);
}

#[tokio::test]
async fn a_panic_before_the_future_is_answered_32603_and_the_session_lives_on() {
    let (_peer, mut sink, mut source) = start(SessionConfig::default());
    let answer = ask(&mut sink, &mut source, "1", "panic_now").await;
    assert_eq!(answer["error"]["code"], -32603);
    assert_eq!(answer["error"]["data"]["reason"], "handler_panicked");
    assert_eq!(ask(&mut sink, &mut source, "2", "echo").await["id"], "2");
    // And inside a batch.
    let batch = json!([
        {"jsonrpc": "2.0", "id": 3, "method": "panic_now"},
        {"jsonrpc": "2.0", "id": 4, "method": "echo"},
    ]);
    sink.send(frame(batch.to_string())).await.unwrap();
    let answer = recv(&mut source).await;
    assert_eq!(answer[0]["error"]["code"], -32603);
    assert_eq!(answer[1]["id"], 4);
    assert_eq!(ask(&mut sink, &mut source, "5", "echo").await["id"], "5");
}

#[tokio::test]
async fn a_panicking_notification_handler_does_not_end_the_session() {
    let (peer, mut sink, mut source) = start(SessionConfig::default());
    for _ in 0..3 {
        let n = json!({"jsonrpc": "2.0", "method": "boom"}).to_string();
        sink.send(frame(n)).await.unwrap();
    }
    assert_eq!(ask(&mut sink, &mut source, "1", "echo").await["id"], "1");
    assert!(!peer.is_closed());
}

#[tokio::test]
async fn ids_repeated_at_both_ends_of_a_full_batch_are_refused() {
    // Every entry is dispatched before any is polled, so a repeated id meets the first in the
    // in-flight map: one lookup per entry, whatever the batch's size.
    let (_peer, mut sink, mut source) = start(SessionConfig::default().with_max_in_flight(2_000));
    let n = MAX_BATCH_ENTRIES;
    let id = |i: usize| match i {
        1 => 0,
        i if i == n - 1 => n - 2,
        i => i,
    };
    let entries: Vec<Value> = (0..n)
        .map(|i| json!({"jsonrpc": "2.0", "id": id(i), "method": "echo", "params": {"i": i}}))
        .collect();
    sink.send(frame(Value::Array(entries).to_string()))
        .await
        .unwrap();
    let answer = recv(&mut source).await;
    let answers = answer.as_array().unwrap();
    assert_eq!(answers.len(), n);
    let refused: Vec<&Value> = answers
        .iter()
        .filter(|a| a["error"]["data"]["reason"] == "duplicate_request_id")
        .map(|a| &a["id"])
        .collect();
    assert_eq!(refused, [&json!(0), &json!(n - 2)]);
    // The first of each pair was answered with its own params, in frame order.
    assert_eq!(answers[0]["result"]["i"], 0);
    assert_eq!(answers[n - 2]["result"]["i"], n - 2);
}

#[tokio::test]
async fn a_peer_that_does_not_read_its_answers_is_slowed_down_not_buffered() {
    let (a, b) = memory::pair_with_capacity(8);
    let mut config = SessionConfig::default();
    config.outbound_queue = 8;
    let _peer = spawn(a, Arc::new(Hostile), config);
    let (mut sink, mut source) = MemoryTransport::split(b);
    // Unanswered, the answers fill the pipe back (8), the outbound queue (8) and the one the
    // reader holds; the pipe in (8) fills next, then sending waits.
    let mut sent = 0;
    for i in 0..10_000 {
        let text = format!(r#"{{"jsonrpc":"2.0","id":{i}}}"#);
        match tokio::time::timeout(Duration::from_millis(200), sink.send(frame(text))).await {
            Ok(r) => {
                r.unwrap();
                sent += 1;
            }
            Err(_) => break,
        }
    }
    assert!(sent < 64, "{sent} frames taken in while no answer was read");
    // Reading on, every frame taken in is answered.
    for _ in 0..sent {
        assert_eq!(recv(&mut source).await["error"]["code"], -32600);
    }
}

#[tokio::test]
async fn garbage_from_a_peer_that_reads_nothing_never_stalls_the_reader() {
    let (a, b) = memory::pair_with_capacity(8);
    let mut config = SessionConfig::default();
    config.outbound_queue = 8;
    let _peer = spawn(a, Arc::new(Hostile), config);
    let (mut sink, mut source) = MemoryTransport::split(b);
    // Parse errors carry no id: once nobody reads them, they are dropped, and reading goes on.
    for _ in 0..10_000 {
        tokio::time::timeout(Duration::from_secs(5), sink.send(frame("not json".into())))
            .await
            .expect("the reader keeps reading")
            .unwrap();
    }
    sink.send(frame(
        r#"{"jsonrpc":"2.0","id":"end","method":"echo"}"#.into(),
    ))
    .await
    .unwrap();
    let mut parse_errors = 0;
    loop {
        let a = recv(&mut source).await;
        if a["id"] == "end" {
            break;
        }
        assert_eq!(a["error"]["code"], -32700);
        parse_errors += 1;
    }
    assert!(
        (1..10_000).contains(&parse_errors),
        "{parse_errors} parse errors answered: those nobody read were dropped"
    );
}

#[tokio::test]
async fn at_end_of_input_handlers_get_eof_grace_to_finish_and_no_more() {
    for (grace, answered) in [
        (Duration::from_secs(2), true),
        (Duration::from_millis(1), false),
    ] {
        let (_peer, mut sink, mut source) = start(SessionConfig::default().with_eof_grace(grace));
        let slow = json!({"jsonrpc": "2.0", "id": 1, "method": "slow"}).to_string();
        sink.send(frame(slow)).await.unwrap();
        drop(sink); // End of input.
        let next = tokio::time::timeout(Duration::from_secs(5), source.recv())
            .await
            .expect("the session ends in time");
        assert_eq!(next.is_some(), answered, "grace {grace:?}: {next:?}");
    }
}
