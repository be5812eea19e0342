//! Engine behaviour on the in-memory transport, one side played by raw JSON text.
//! Test names carry the SPEC-NOTES tags they cover.
#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use switchboard_jsonrpc::memory::{self, MemoryTransport};
use switchboard_jsonrpc::{
    BoxFuture, Flow, FrameHook, HandlerResult, Peer, ProgressError, ProgressUpdate, RequestContext,
    RequestError, RequestOptions, Service, SessionConfig, Transport, TransportControl, spawn,
};
use switchboard_test_support::wait;
use switchboard_types::jsonrpc::to_raw;
use switchboard_types::{ErrorObject, MessageKind, Notification, Request, RequestId};

/// A test service: `echo` returns its params, `sleep` waits `ms` then answers, `panic` panics,
/// `fail` returns -32602, `progress` reports progress, anything else is -32601.
#[derive(Default)]
struct TestService {
    dropped: Arc<AtomicBool>,
    /// How many `sleep` handlers have started.
    started: Arc<AtomicUsize>,
    notes: Arc<Mutex<Vec<String>>>,
    batch: bool,
    progress_errors: Arc<Mutex<Vec<ProgressError>>>,
}

struct DropFlag(Arc<AtomicBool>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl Service for TestService {
    fn call(&self, req: Request, cx: RequestContext) -> BoxFuture<HandlerResult> {
        let params: Value = req
            .params
            .as_ref()
            .map(|p| serde_json::from_str(p.get()).unwrap())
            .unwrap_or(Value::Null);
        let dropped = self.dropped.clone();
        let started = self.started.clone();
        let perr = self.progress_errors.clone();
        Box::pin(async move {
            match req.method.as_str() {
                "echo" => Ok(to_raw(&params).unwrap()),
                "sleep" => {
                    let _flag = DropFlag(dropped);
                    started.fetch_add(1, Ordering::SeqCst);
                    // Not a wait: the `sleep` method's work takes `ms` (a slow handler).
                    tokio::time::sleep(Duration::from_millis(params["ms"].as_u64().unwrap_or(10)))
                        .await;
                    Ok(to_raw(&json!({"slept": params["ms"]})).unwrap())
                }
                "panic" => panic!("handler bug"),
                "fail" => Err(ErrorObject::invalid_params("bad")),
                "progress" => {
                    cx.report_progress(ProgressUpdate::new(1.0).with_total(2.0))
                        .await
                        .unwrap();
                    cx.report_progress(ProgressUpdate::new(2.0).with_message("done"))
                        .await
                        .unwrap();
                    if let Err(e) = cx.report_progress(ProgressUpdate::new(2.0)).await {
                        perr.lock().unwrap().push(e);
                    }
                    let late = cx.clone();
                    tokio::spawn(async move {
                        // Not a wait: a report made after the answer (the delay is the scenario).
                        tokio::time::sleep(Duration::from_millis(30)).await;
                        if let Err(e) = late.report_progress(ProgressUpdate::new(3.0)).await {
                            perr.lock().unwrap().push(e);
                        }
                    });
                    Ok(to_raw(&json!({})).unwrap())
                }
                "kept" => {
                    // Work that outlives the answer keeps the token until it ends it.
                    assert!(cx.keep_progress().await);
                    let work = cx.clone();
                    tokio::spawn(async move {
                        // Not a wait: work that outlives the answer (the delay is the scenario).
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        work.report_progress(ProgressUpdate::new(1.0))
                            .await
                            .unwrap();
                        work.report_progress(ProgressUpdate::new(2.0))
                            .await
                            .unwrap();
                        work.end_progress().await;
                        if let Err(e) = work.report_progress(ProgressUpdate::new(3.0)).await {
                            perr.lock().unwrap().push(e);
                        }
                    });
                    Ok(to_raw(&json!({"started": true})).unwrap())
                }
                m => Err(ErrorObject::method_not_found(m)),
            }
        })
    }

    fn notify(&self, n: Notification, _peer: &Peer) {
        self.notes.lock().unwrap().push(n.method);
    }

    fn batch_allowed(&self) -> bool {
        self.batch
    }

    fn cancellable(&self, method: &str) -> bool {
        method != "initialize"
    }

    fn allowed_in_batch(&self, method: &str) -> bool {
        method != "initialize"
    }
}

fn start(service: TestService, config: SessionConfig) -> (Peer, MemoryTransport) {
    let (a, b) = memory::pair();
    (spawn(a, Arc::new(service), config), b)
}

async fn next(b: &mut MemoryTransport) -> Value {
    let text = tokio::time::timeout(Duration::from_secs(5), b.recv_text())
        .await
        .expect("a frame")
        .expect("open");
    assert!(!text.contains('\n'), "ST-1: a frame holds no raw newline");
    serde_json::from_str(&text).unwrap()
}

async fn nothing_within(b: &mut MemoryTransport, ms: u64) {
    if let Ok(Some(t)) = tokio::time::timeout(Duration::from_millis(ms), b.recv_text()).await {
        panic!("expected no frame, got {t}");
    }
}

#[tokio::test]
async fn jr_6_response_keeps_id_type_and_value() {
    let (_p, mut b) = start(TestService::default(), SessionConfig::default());
    b.send_text(r#"{"jsonrpc":"2.0","id":"1","method":"echo","params":{"a":1}}"#)
        .await
        .unwrap();
    assert_eq!(
        next(&mut b).await,
        json!({"jsonrpc":"2.0","id":"1","result":{"a":1}})
    );
    b.send_text(r#"{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}"#)
        .await
        .unwrap();
    assert_eq!(
        next(&mut b).await,
        json!({"jsonrpc":"2.0","id":1,"result":{}})
    );
    b.send_text(r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"echo"}"#)
        .await
        .unwrap();
    let text = b.recv_text().await.unwrap();
    assert!(
        text.contains("\"id\":9007199254740993"),
        "JR-3: an id beyond 2^53 survives exactly: {text}"
    );
}

#[tokio::test]
async fn jr_parse_error_is_32700_without_id() {
    let (_p, mut b) = start(TestService::default(), SessionConfig::default());
    b.send_text(r#"{"jsonrpc":"2.0","id":1,"method":"echo""#)
        .await
        .unwrap();
    let v = next(&mut b).await;
    assert_eq!(v["error"]["code"], -32700);
    assert!(
        v.get("id").is_none(),
        "no id can be read from unparsable JSON: {v}"
    );
}

#[tokio::test]
async fn jr_4_null_id_is_invalid_request_not_notification() {
    let (_p, mut b) = start(TestService::default(), SessionConfig::default());
    b.send_text(r#"{"jsonrpc":"2.0","id":null,"method":"echo"}"#)
        .await
        .unwrap();
    let v = next(&mut b).await;
    assert_eq!(v["error"]["code"], -32600);
    assert_eq!(v["error"]["data"]["reason"], "null_id");
}

#[tokio::test]
async fn jr_1_wrong_jsonrpc_version_is_32600_with_id() {
    let (_p, mut b) = start(TestService::default(), SessionConfig::default());
    b.send_text(r#"{"jsonrpc":"1.0","id":7,"method":"echo"}"#)
        .await
        .unwrap();
    assert_eq!(next(&mut b).await["error"]["code"], -32600);
    b.send_text(r#"{"id":8,"method":"echo"}"#).await.unwrap();
    let v = next(&mut b).await;
    assert_eq!(
        (v["id"].clone(), v["error"]["code"].clone()),
        (json!(8), json!(-32600))
    );
}

#[tokio::test]
async fn jr_11_notifications_are_never_answered_even_when_invalid() {
    let svc = TestService::default();
    let notes = svc.notes.clone();
    let (_p, mut b) = start(svc, SessionConfig::default());
    b.send_text(r#"{"jsonrpc":"2.0","method":"notifications/unknown"}"#)
        .await
        .unwrap();
    b.send_text(r#"{"jsonrpc":"1.0","method":"notifications/bad_version"}"#)
        .await
        .unwrap();
    b.send_text(r#"{"jsonrpc":"2.0","method":42}"#)
        .await
        .unwrap();
    nothing_within(&mut b, 100).await;
    assert_eq!(
        *notes.lock().unwrap(),
        vec!["notifications/unknown".to_string()]
    );
}

#[tokio::test]
async fn jr_unknown_method_is_32601_and_bad_params_32602() {
    let (_p, mut b) = start(TestService::default(), SessionConfig::default());
    b.send_text(r#"{"jsonrpc":"2.0","id":1,"method":"nope"}"#)
        .await
        .unwrap();
    assert_eq!(next(&mut b).await["error"]["code"], -32601);
    b.send_text(r#"{"jsonrpc":"2.0","id":2,"method":"fail","params":{}}"#)
        .await
        .unwrap();
    assert_eq!(next(&mut b).await["error"]["code"], -32602);
    b.send_text(r#"{"jsonrpc":"2.0","id":3,"method":"echo","params":"scalar"}"#)
        .await
        .unwrap();
    assert_eq!(
        next(&mut b).await["error"]["code"],
        -32600,
        "scalar params are not a valid request"
    );
}

#[tokio::test]
async fn panicking_handler_answers_32603_and_session_lives_on() {
    let (_p, mut b) = start(TestService::default(), SessionConfig::default());
    b.send_text(r#"{"jsonrpc":"2.0","id":1,"method":"panic"}"#)
        .await
        .unwrap();
    let v = next(&mut b).await;
    assert_eq!(v["error"]["code"], -32603);
    assert_eq!(v["error"]["data"]["reason"], "handler_panicked");
    b.send_text(r#"{"jsonrpc":"2.0","id":2,"method":"echo","params":{"ok":true}}"#)
        .await
        .unwrap();
    assert_eq!(next(&mut b).await["result"]["ok"], true);
}

#[tokio::test]
async fn slow_request_never_blocks_a_fast_one() {
    let (_p, mut b) = start(TestService::default(), SessionConfig::default());
    b.send_text(r#"{"jsonrpc":"2.0","id":1,"method":"sleep","params":{"ms":300}}"#)
        .await
        .unwrap();
    b.send_text(r#"{"jsonrpc":"2.0","id":2,"method":"echo","params":{}}"#)
        .await
        .unwrap();
    assert_eq!(
        next(&mut b).await["id"],
        2,
        "the fast request is answered first"
    );
    assert_eq!(next(&mut b).await["id"], 1);
}

#[tokio::test]
async fn duplicate_in_flight_id_is_rejected_with_32600() {
    let (_p, mut b) = start(TestService::default(), SessionConfig::default());
    b.send_text(r#"{"jsonrpc":"2.0","id":5,"method":"sleep","params":{"ms":200}}"#)
        .await
        .unwrap();
    b.send_text(r#"{"jsonrpc":"2.0","id":5,"method":"echo","params":{}}"#)
        .await
        .unwrap();
    let v = next(&mut b).await;
    assert_eq!(v["error"]["code"], -32600);
    assert_eq!(v["error"]["data"]["reason"], "duplicate_request_id");
    assert_eq!(
        next(&mut b).await["result"]["slept"],
        200,
        "the original request still completes"
    );
    // Once answered, the id may be used again.
    b.send_text(r#"{"jsonrpc":"2.0","id":5,"method":"echo","params":{"again":1}}"#)
        .await
        .unwrap();
    assert_eq!(next(&mut b).await["result"]["again"], 1);
}

#[tokio::test]
async fn bound_in_flight_requests_per_session() {
    let (_p, mut b) = start(
        TestService::default(),
        SessionConfig::default().with_max_in_flight(2),
    );
    for id in 1..=3 {
        b.send_text(format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"sleep","params":{{"ms":200}}}}"#
        ))
        .await
        .unwrap();
    }
    let v = next(&mut b).await;
    assert_eq!(v["id"], 3);
    assert_eq!(v["error"]["data"]["reason"], "too_many_requests");
    assert_eq!(v["error"]["data"]["limit"], 2);
    let mut ids = vec![
        next(&mut b).await["id"].as_i64().unwrap(),
        next(&mut b).await["id"].as_i64().unwrap(),
    ];
    ids.sort();
    assert_eq!(ids, vec![1, 2]);
}

#[tokio::test]
async fn bound_frame_size() {
    let (_p, mut b) = start(
        TestService::default(),
        SessionConfig::default().with_max_frame_bytes(64),
    );
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"echo","params":{{"x":"{}"}}}}"#,
        "a".repeat(100)
    );
    b.send_text(big).await.unwrap();
    let v = next(&mut b).await;
    assert_eq!(v["error"]["code"], -32600);
    assert_eq!(v["error"]["data"]["reason"], "frame_too_large");
    b.send_text(r#"{"jsonrpc":"2.0","id":2,"method":"echo","params":{}}"#)
        .await
        .unwrap();
    assert_eq!(
        next(&mut b).await["id"],
        2,
        "the session survives an oversized frame"
    );
}

#[tokio::test]
async fn ut_2_cancellation_drops_the_handler_and_suppresses_the_answer() {
    let svc = TestService::default();
    let dropped = svc.dropped.clone();
    let started = svc.started.clone();
    let (_p, mut b) = start(svc, SessionConfig::default());
    b.send_text(r#"{"jsonrpc":"2.0","id":1,"method":"sleep","params":{"ms":5000}}"#)
        .await
        .unwrap();
    wait::until("the handler started", || {
        started.load(Ordering::SeqCst) == 1
    })
    .await;
    b.send_text(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}"#)
        .await
        .unwrap();
    wait::until("the handler's future dropped", || {
        dropped.load(Ordering::SeqCst)
    })
    .await;
    b.send_text(r#"{"jsonrpc":"2.0","id":2,"method":"echo","params":{}}"#)
        .await
        .unwrap();
    assert_eq!(
        next(&mut b).await["id"],
        2,
        "no answer for the cancelled request; the next one is served"
    );
}

#[tokio::test]
async fn ut_4_late_or_unknown_cancellation_is_ignored() {
    let (_p, mut b) = start(TestService::default(), SessionConfig::default());
    b.send_text(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}"#,
    )
    .await
    .unwrap();
    b.send_text(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}"#)
        .await
        .unwrap();
    nothing_within(&mut b, 50).await;
    b.send_text(r#"{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}"#)
        .await
        .unwrap();
    assert_eq!(next(&mut b).await["id"], 1);
}

#[tokio::test]
async fn ut_8_initialize_is_never_cancelled() {
    struct SlowInit;
    impl Service for SlowInit {
        fn call(&self, _r: Request, _cx: RequestContext) -> BoxFuture<HandlerResult> {
            Box::pin(async {
                // Not a wait: a slow initialize (its work takes 100 ms).
                tokio::time::sleep(Duration::from_millis(100)).await;
                Ok(to_raw(&json!({"ok": 1})).unwrap())
            })
        }
        fn notify(&self, _n: Notification, _p: &Peer) {}
        fn cancellable(&self, m: &str) -> bool {
            m != "initialize"
        }
    }
    let (a, mut b) = memory::pair();
    let _p = spawn(a, Arc::new(SlowInit), SessionConfig::default());
    b.send_text(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#)
        .await
        .unwrap();
    b.send_text(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#)
        .await
        .unwrap();
    assert_eq!(
        next(&mut b).await["result"]["ok"],
        1,
        "initialize is answered despite the cancellation"
    );
}

/// A memory transport with a control that records which requests the engine reported
/// cancelled by the peer, and which of ours it reported given up.
struct Recorded {
    end: MemoryTransport,
    cancelled: Arc<Mutex<Vec<String>>>,
    abandoned: Arc<Mutex<Vec<String>>>,
}

struct Recorder {
    cancelled: Arc<Mutex<Vec<String>>>,
    abandoned: Arc<Mutex<Vec<String>>>,
}

impl TransportControl for Recorder {
    fn request_cancelled(&self, request: &RequestId) {
        self.cancelled.lock().unwrap().push(request.to_string());
    }

    fn request_abandoned(&self, request: &RequestId) {
        self.abandoned.lock().unwrap().push(request.to_string());
    }
}

impl Transport for Recorded {
    type Sink = <MemoryTransport as Transport>::Sink;
    type Source = <MemoryTransport as Transport>::Source;

    fn control(&self) -> Option<Arc<dyn TransportControl>> {
        Some(Arc::new(Recorder {
            cancelled: self.cancelled.clone(),
            abandoned: self.abandoned.clone(),
        }))
    }

    fn split(self) -> (Self::Sink, Self::Source) {
        self.end.split()
    }
}

#[tokio::test]
async fn ut_2_the_transport_is_told_of_a_cancelled_request_and_of_nothing_else() {
    let cancelled = Arc::new(Mutex::new(Vec::new()));
    let (a, mut b) = memory::pair();
    let transport = Recorded {
        end: a,
        cancelled: cancelled.clone(),
        abandoned: Arc::default(),
    };
    let _p = spawn(
        transport,
        Arc::new(TestService::default()),
        SessionConfig::default(),
    );
    for frame in [
        r#"{"jsonrpc":"2.0","id":"s","method":"sleep","params":{"ms":5000}}"#,
        r#"{"jsonrpc":"2.0","id":"e","method":"echo","params":{}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"e"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s"}}"#,
    ] {
        b.send_text(frame).await.unwrap();
    }
    // `echo` is answered at once; the cancellation behind it meets no request in flight.
    assert_eq!(next(&mut b).await["id"], "e");
    wait::until("the stray cancellation seen", || {
        !cancelled.lock().unwrap().is_empty()
    })
    .await;
    nothing_within(&mut b, 50).await;
    assert_eq!(
        *cancelled.lock().unwrap(),
        vec![r#""s""#.to_owned()],
        "only the cancellable request in flight is reported"
    );
}

#[tokio::test]
async fn the_transport_is_told_of_each_request_its_caller_gave_up_and_of_no_other() {
    let abandoned: Arc<Mutex<Vec<String>>> = Arc::default();
    let (a, b) = memory::pair();
    let transport = Recorded {
        end: a,
        cancelled: Arc::default(),
        abandoned: abandoned.clone(),
    };
    let client = spawn(
        transport,
        Arc::new(TestService::default()),
        SessionConfig::default().with_name("client"),
    );
    let served = TestService::default();
    let started = served.started.clone();
    let _server = spawn(
        b,
        Arc::new(served),
        SessionConfig::default().with_name("server"),
    );
    let long = json!({"ms": 5000});
    // 1: its timeout passes.
    let timed_out = client
        .call::<_, Value>(
            "sleep",
            Some(&long),
            RequestOptions::default().with_timeout(Duration::from_millis(50)),
        )
        .await;
    assert!(matches!(timed_out, Err(RequestError::Timeout { .. })));
    // 2: its caller cancels it.
    let token = tokio_util::sync::CancellationToken::new();
    let c = client.clone();
    let t = token.clone();
    let p = long.clone();
    let call = tokio::spawn(async move {
        c.call::<_, Value>("sleep", Some(&p), RequestOptions::default().with_cancel(t))
            .await
    });
    // Cancelled once the server is working on it (the first call's handler was the first).
    wait::until("the second handler started", || {
        started.load(Ordering::SeqCst) == 2
    })
    .await;
    token.cancel();
    assert!(matches!(call.await.unwrap(), Err(RequestError::Cancelled)));
    // 3: its caller's future is dropped.
    let dropped = tokio::time::timeout(
        Duration::from_millis(50),
        client.call::<_, Value>("sleep", Some(&long), RequestOptions::default()),
    )
    .await;
    assert!(dropped.is_err());
    // 4: answered, so never given up.
    let answered = client
        .call::<_, Value>("echo", Some(&json!({})), RequestOptions::default())
        .await;
    assert!(answered.is_ok());
    assert_eq!(*abandoned.lock().unwrap(), vec!["1", "2", "3"]);
}

/// Two engines back to back: a client-side peer calling a server-side service.
fn engines(svc: TestService, client_cfg: SessionConfig) -> (Peer, Peer) {
    let (a, b) = memory::pair();
    let server = spawn(
        a,
        Arc::new(svc),
        SessionConfig::default().with_name("server"),
    );
    let client = spawn(
        b,
        Arc::new(switchboard_jsonrpc::NullService),
        client_cfg.with_name("client"),
    );
    (client, server)
}

#[tokio::test]
async fn responses_route_by_id_out_of_order() {
    let (client, _server) = engines(TestService::default(), SessionConfig::default());
    let (p1, p2, p3) = (json!({"ms": 200}), json!({"ms": 10}), json!({"k": "v"}));
    let slow = client.call::<_, Value>("sleep", Some(&p1), RequestOptions::default());
    let fast = client.call::<_, Value>("sleep", Some(&p2), RequestOptions::default());
    let echo = client.call::<_, Value>("echo", Some(&p3), RequestOptions::default());
    let (s, f, e) = tokio::join!(slow, fast, echo);
    assert_eq!(s.unwrap()["slept"], 200);
    assert_eq!(f.unwrap()["slept"], 10);
    assert_eq!(e.unwrap()["k"], "v");
    assert_eq!(client.pending_count(), 0);
}

#[tokio::test]
async fn orphan_response_is_dropped_and_session_continues() {
    let (a, mut b) = memory::pair();
    let client = spawn(
        a,
        Arc::new(switchboard_jsonrpc::NullService),
        SessionConfig::default(),
    );
    let call = tokio::spawn({
        let c = client.clone();
        async move {
            c.call::<Value, Value>("echo", None, RequestOptions::default())
                .await
        }
    });
    let req = next(&mut b).await;
    b.send_text(r#"{"jsonrpc":"2.0","id":424242,"result":{"orphan":true}}"#)
        .await
        .unwrap();
    b.send_text(r#"{"jsonrpc":"2.0","id":"1","result":{"wrong_type":true}}"#)
        .await
        .unwrap();
    b.send_text(json!({"jsonrpc":"2.0","id":req["id"],"result":{"right":true}}).to_string())
        .await
        .unwrap();
    let got = call.await.unwrap().unwrap();
    assert_eq!(
        got,
        json!({"right": true}),
        "only the response with the exact id (type included) is routed"
    );
    nothing_within(&mut b, 50).await;
}

#[tokio::test]
async fn timeout_gives_clear_error_and_sends_cancelled() {
    let (a, mut b) = memory::pair();
    let client = spawn(
        a,
        Arc::new(switchboard_jsonrpc::NullService),
        SessionConfig::default(),
    );
    let c = client.clone();
    let call = tokio::spawn(async move {
        c.request(
            "sleep",
            None,
            RequestOptions::default().with_timeout(Duration::from_millis(50)),
        )
        .await
    });
    let req = next(&mut b).await;
    let cancel = next(&mut b).await;
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], req["id"]);
    assert_eq!(cancel["params"]["reason"], "timeout");
    match call.await.unwrap() {
        Err(RequestError::Timeout { method, .. }) => assert_eq!(method, "sleep"),
        other => panic!("expected a timeout, got {other:?}"),
    }
    // The late answer is suppressed: nobody receives it, nothing breaks.
    b.send_text(json!({"jsonrpc":"2.0","id":req["id"],"result":{}}).to_string())
        .await
        .unwrap();
    assert_eq!(client.pending_count(), 0);
}

#[tokio::test]
async fn caller_cancellation_sends_cancelled_notification() {
    let (a, mut b) = memory::pair();
    let client = spawn(
        a,
        Arc::new(switchboard_jsonrpc::NullService),
        SessionConfig::default(),
    );
    let token = tokio_util_token();
    let c = client.clone();
    let t = token.clone();
    let call = tokio::spawn(async move {
        c.request("sleep", None, RequestOptions::default().with_cancel(t))
            .await
    });
    let req = next(&mut b).await;
    token.cancel();
    let n = next(&mut b).await;
    assert_eq!(
        (n["method"].clone(), n["params"]["requestId"].clone()),
        (json!("notifications/cancelled"), req["id"].clone())
    );
    assert!(matches!(call.await.unwrap(), Err(RequestError::Cancelled)));
}

fn tokio_util_token() -> tokio_util::sync::CancellationToken {
    tokio_util::sync::CancellationToken::new()
}

#[tokio::test]
async fn dropping_the_call_future_cancels_the_request() {
    let (a, mut b) = memory::pair();
    let client = spawn(
        a,
        Arc::new(switchboard_jsonrpc::NullService),
        SessionConfig::default(),
    );
    let c = client.clone();
    let call =
        tokio::spawn(async move { c.request("sleep", None, RequestOptions::default()).await });
    let req = next(&mut b).await;
    call.abort();
    let n = next(&mut b).await;
    assert_eq!(n["params"]["requestId"], req["id"]);
    assert_eq!(client.pending_count(), 0);
}

#[tokio::test]
async fn ut_6_ut_7_progress_routes_to_caller_increases_and_stops_after_response() {
    let svc = TestService::default();
    let perr = svc.progress_errors.clone();
    let (client, _server) = engines(svc, SessionConfig::default());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let opts = RequestOptions::default().with_progress(move |u| s.lock().unwrap().push(u));
    client.request("progress", None, opts).await.unwrap();
    // The handler reports twice more after its answer; both refused.
    wait::until("the late reports refused", || {
        perr.lock().unwrap().len() >= 2
    })
    .await;
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![
            ProgressUpdate::new(1.0).with_total(2.0),
            ProgressUpdate::new(2.0).with_message("done")
        ]
    );
    let errs = perr.lock().unwrap().clone();
    assert_eq!(
        errs,
        vec![
            ProgressError::NotIncreasing {
                last: 2.0,
                next: 2.0
            },
            ProgressError::Completed
        ]
    );
}

#[tokio::test]
async fn a_kept_progress_token_outlives_the_response_until_it_is_ended() {
    let svc = TestService::default();
    let perr = svc.progress_errors.clone();
    let (a, mut b) = memory::pair();
    let _server = spawn(a, Arc::new(svc), SessionConfig::default());
    b.send_text(
        r#"{"jsonrpc":"2.0","id":1,"method":"kept","params":{"_meta":{"progressToken":"p"}}}"#,
    )
    .await
    .unwrap();
    assert_eq!(next(&mut b).await["result"], json!({"started": true}));
    for want in [1, 2] {
        let n = next(&mut b).await;
        assert_eq!(n["method"], "notifications/progress");
        assert_eq!(n["params"], json!({"progressToken": "p", "progress": want}));
    }
    nothing_within(&mut b, 50).await;
    assert_eq!(
        perr.lock().unwrap().clone(),
        vec![ProgressError::Completed],
        "nothing after end_progress"
    );
}

#[tokio::test]
async fn a_watched_progress_token_is_delivered_until_the_watch_is_dropped() {
    let (a, mut b) = memory::pair();
    let client = spawn(
        a,
        Arc::new(switchboard_jsonrpc::NullService),
        SessionConfig::default(),
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let token = RequestId::from("task-1");
    let watch = client
        .watch_progress(token.clone(), move |u| s.lock().unwrap().push(u.progress))
        .unwrap();
    assert!(matches!(
        client.watch_progress(token.clone(), |_| {}),
        Err(RequestError::NotAllowed(_))
    ));
    let progress = |p: u64| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":"task-1","progress":{p}}}}}"#
        )
    };
    for p in [1, 1, 2] {
        b.send_text(progress(p)).await.unwrap();
    }
    // Frames are handled in order: once 2 is seen, the repeated 1 has been too.
    wait::until("progress 2", || seen.lock().unwrap().len() >= 2).await;
    assert_eq!(
        *seen.lock().unwrap(),
        vec![1.0, 2.0],
        "UT-6: not increasing is dropped"
    );
    drop(watch);
    b.send_text(progress(3)).await.unwrap();
    // Frames are handled in order: once a request sent after it is answered, progress 3 has
    // been handled (and, the watch gone, dropped).
    b.send_text(r#"{"jsonrpc":"2.0","id":"after","method":"echo","params":{}}"#)
        .await
        .unwrap();
    assert_eq!(next(&mut b).await["id"], "after");
    assert_eq!(
        *seen.lock().unwrap(),
        vec![1.0, 2.0],
        "nothing after the watch ends"
    );
    assert!(client.watch_progress(token, |_| {}).is_ok(), "free again");
}

/// A watched token that is a number keeps its progress when a request sent later is given
/// that number as its id (a gateway passing a client's token on cannot choose the ids).
#[tokio::test]
async fn a_watched_numeric_token_keeps_its_progress_when_a_later_request_has_that_id() {
    let (a, mut b) = memory::pair();
    let client = spawn(
        a,
        Arc::new(switchboard_jsonrpc::NullService),
        SessionConfig::default(),
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    // The engine numbers its requests from 1: its first request gets the watched number.
    let _w1 = client
        .watch_progress(RequestId::int(1), move |u| {
            s.lock().unwrap().push(u.progress)
        })
        .unwrap();
    let pending = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .request("echo", None, RequestOptions::default())
                .await
        }
    });
    let sent = next(&mut b).await;
    let id = sent["id"].clone();
    assert_eq!(id, json!(1), "the request has the watched number as its id");
    b.send_text(format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{id},"progress":5}}}}"#
    ))
    .await
    .unwrap();
    b.send_text(format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#))
        .await
        .unwrap();
    pending.await.unwrap().unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        vec![5.0],
        "the watch keeps its token"
    );
}

#[tokio::test]
async fn bound_watched_progress_tokens() {
    let (a, _b) = memory::pair();
    let client = spawn(
        a,
        Arc::new(switchboard_jsonrpc::NullService),
        SessionConfig::default().with_max_pending(2),
    );
    let one = client.watch_progress(RequestId::from("a"), |_| {}).unwrap();
    let _two = client.watch_progress(RequestId::from("b"), |_| {}).unwrap();
    assert!(matches!(
        client.watch_progress(RequestId::from("c"), |_| {}),
        Err(RequestError::TooManyPending { limit: 2 })
    ));
    drop(one);
    assert!(client.watch_progress(RequestId::from("c"), |_| {}).is_ok());
}

#[tokio::test]
async fn progress_resets_timeout_up_to_a_hard_maximum() {
    let (a, mut b) = memory::pair();
    let client = spawn(
        a,
        Arc::new(switchboard_jsonrpc::NullService),
        SessionConfig::default(),
    );
    let c = client.clone();
    let call = tokio::spawn(async move {
        let opts = RequestOptions::default()
            .with_timeout(Duration::from_millis(100))
            .with_progress(|_| {})
            .reset_on_progress(Duration::from_secs(5));
        c.request("long", None, opts).await
    });
    let req = next(&mut b).await;
    let token = req["params"]["_meta"]["progressToken"].clone();
    assert_eq!(token, req["id"], "the progress token is added to _meta");
    for i in 1..=4 {
        // Not a wait: progress paced across the timeout it resets (the pacing is the scenario).
        tokio::time::sleep(Duration::from_millis(60)).await;
        b.send_text(json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":token,"progress":i}}).to_string())
            .await
            .unwrap();
    }
    b.send_text(json!({"jsonrpc":"2.0","id":req["id"],"result":{"ok":true}}).to_string())
        .await
        .unwrap();
    assert_eq!(
        call.await.unwrap().unwrap().get(),
        r#"{"ok":true}"#,
        "240ms > 100ms timeout, kept alive by progress"
    );
}

#[tokio::test]
async fn frame_hook_sees_every_frame_with_direction_and_id() {
    type Seen = Vec<(Flow, Option<MessageKind>, Option<String>)>;
    let log: Arc<Mutex<Seen>> = Arc::default();
    let l = log.clone();
    let hook = FrameHook::new(move |e| {
        l.lock()
            .unwrap()
            .push((e.direction, e.kind, e.id.map(|i| i.to_string())))
    });
    let (_p, mut b) = start(
        TestService::default(),
        SessionConfig::default().with_frame_hook(hook),
    );
    b.send_text(r#"{"jsonrpc":"2.0","id":"a","method":"echo","params":{}}"#)
        .await
        .unwrap();
    next(&mut b).await;
    b.send_text("not json").await.unwrap();
    next(&mut b).await;
    let log = log.lock().unwrap().clone();
    assert_eq!(
        log,
        vec![
            (
                Flow::Inbound,
                Some(MessageKind::Request),
                Some("\"a\"".into())
            ),
            (
                Flow::Outbound,
                Some(MessageKind::Result),
                Some("\"a\"".into())
            ),
            (Flow::Inbound, None, None),
            (Flow::Outbound, Some(MessageKind::Error), None),
        ]
    );
}

#[tokio::test]
async fn jr_12_batch_rejected_when_revision_forbids_it() {
    let (_p, mut b) = start(TestService::default(), SessionConfig::default());
    b.send_text(r#"[{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}]"#)
        .await
        .unwrap();
    let v = next(&mut b).await;
    assert_eq!(v["error"]["code"], -32600);
    assert_eq!(v["error"]["data"]["reason"], "batch_not_allowed");
}

#[tokio::test]
async fn jr_12_jr_9_batch_answered_as_array_initialize_refused_inside() {
    let svc = TestService {
        batch: true,
        ..Default::default()
    };
    let notes = svc.notes.clone();
    let (_p, mut b) = start(svc, SessionConfig::default());
    b.send_text(
        r#"[{"jsonrpc":"2.0","id":1,"method":"echo","params":{"n":1}},
            {"jsonrpc":"2.0","method":"notifications/x"},
            {"jsonrpc":"2.0","id":2,"method":"initialize","params":{}},
            {"jsonrpc":"2.0","id":3,"method":"nope"}]"#,
    )
    .await
    .unwrap();
    let v = next(&mut b).await;
    let arr = v.as_array().expect("a batch is answered with an array");
    assert_eq!(
        arr.len(),
        3,
        "one entry per request, none for the notification: {v}"
    );
    let by_id = |id: i64| arr.iter().find(|e| e["id"] == id).unwrap().clone();
    assert_eq!(by_id(1)["result"]["n"], 1);
    assert_eq!(by_id(2)["error"]["code"], -32600);
    assert_eq!(by_id(3)["error"]["code"], -32601);
    assert_eq!(*notes.lock().unwrap(), vec!["notifications/x".to_string()]);
    // A batch of notifications only gets no reply.
    b.send_text(r#"[{"jsonrpc":"2.0","method":"notifications/y"}]"#)
        .await
        .unwrap();
    nothing_within(&mut b, 50).await;
}

#[tokio::test]
async fn closing_the_transport_fails_waiting_callers() {
    let (a, mut b) = memory::pair();
    let client = spawn(
        a,
        Arc::new(switchboard_jsonrpc::NullService),
        SessionConfig::default(),
    );
    let c = client.clone();
    let call = tokio::spawn(async move { c.request("x", None, RequestOptions::default()).await });
    assert_eq!(next(&mut b).await["method"], "x", "the request is out");
    drop(b);
    assert!(matches!(call.await.unwrap(), Err(RequestError::Closed)));
    client.closed().await;
    assert!(client.is_closed());
}

#[tokio::test]
async fn bound_pending_outbound_requests() {
    let (a, _b) = memory::pair();
    let client = spawn(
        a,
        Arc::new(switchboard_jsonrpc::NullService),
        SessionConfig::default().with_max_pending(2),
    );
    let counter = Arc::new(AtomicUsize::new(0));
    for _ in 0..2 {
        let c = client.clone();
        let n = counter.clone();
        tokio::spawn(async move {
            n.fetch_add(1, Ordering::SeqCst);
            let _ = c.request("x", None, RequestOptions::default()).await;
        });
    }
    wait::until("two requests pending", || client.pending_count() == 2).await;
    match client.request("x", None, RequestOptions::default()).await {
        Err(RequestError::TooManyPending { limit }) => assert_eq!(limit, 2),
        other => panic!("expected the pending bound, got {other:?}"),
    }
}

/// A transport whose source fails fatally after one frame, as a dying child process would.
struct Dying;

impl switchboard_jsonrpc::FrameSink for Dying {
    async fn send(
        &mut self,
        _f: switchboard_jsonrpc::OutboundFrame,
    ) -> Result<(), switchboard_jsonrpc::TransportError> {
        Ok(())
    }
}

struct DyingSource(tokio::sync::mpsc::Receiver<()>);

impl switchboard_jsonrpc::FrameSource for DyingSource {
    async fn recv(&mut self) -> Option<Result<String, switchboard_jsonrpc::TransportError>> {
        self.0.recv().await;
        Some(Err(switchboard_jsonrpc::TransportError::Other(
            "child exited with exit status: 3".into(),
        )))
    }
}

#[tokio::test]
async fn transport_failure_fails_pending_calls_at_once_with_the_reason() {
    let (kill_tx, kill_rx) = tokio::sync::mpsc::channel(1);
    let transport = (Dying, DyingSource(kill_rx));
    let client = spawn(
        transport,
        Arc::new(switchboard_jsonrpc::NullService),
        SessionConfig::default(),
    );
    let c = client.clone();
    let call = tokio::spawn(async move {
        c.request("x", None, RequestOptions::default().without_timeout())
            .await
    });
    wait::until("the request pending", || client.pending_count() == 1).await;
    kill_tx.send(()).await.unwrap();
    match tokio::time::timeout(Duration::from_secs(2), call)
        .await
        .expect("fails at once")
        .unwrap()
    {
        Err(RequestError::ConnectionLost(reason)) => {
            assert!(reason.contains("exit status: 3"), "{reason}")
        }
        other => panic!("expected ConnectionLost, got {other:?}"),
    }
    assert_eq!(
        client.close_reason().as_deref(),
        Some("transport: child exited with exit status: 3")
    );
}
