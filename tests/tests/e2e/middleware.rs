//! The built-in middleware on a real server, both eras, over the in-memory transport: each layer
//! crossed at its bound, answered with a readable error and the session going on.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use switchboard::jsonrpc::{Scope, memory};
use switchboard::middleware::{Audit, ConcurrencyLimit, RateLimit, ResultSizeLimit, Timeout};
use switchboard::server::{Server, ServerBuilder};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::tools::{CallToolResult, Tool};
use switchboard_test_support::wait;
use switchboard_tests::RawPeer;
use tokio::sync::Notify;

const V: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";

/// Tools: `fast`, `slow` (sleeps 60 s), `gate` (waits for `open`), `big` (100 KiB of text).
fn builder(open: Arc<Notify>, entered: Arc<AtomicUsize>) -> ServerBuilder {
    let any = || json!({"type": "object"});
    Server::builder(Implementation::new("mw", "1"))
        .tool(Tool::new("fast", any()), |_| async {
            Ok(CallToolResult::text("fast"))
        })
        .tool(Tool::new("slow", any()), |_| async {
            // Not a wait: a call that outlasts the test (a slow handler).
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok(CallToolResult::text("slow"))
        })
        .tool(Tool::new("gate", any()), move |_| {
            let open = open.clone();
            let entered = entered.clone();
            async move {
                entered.fetch_add(1, Ordering::SeqCst);
                open.notified().await;
                Ok(CallToolResult::text("through"))
            }
        })
        .tool(Tool::new("big", any()), |_| async {
            Ok(CallToolResult::text("x".repeat(100 * 1024)))
        })
}

fn plain() -> ServerBuilder {
    builder(Arc::new(Notify::new()), Arc::default())
}

async fn connect(s: &Server) -> RawPeer {
    let (a, b) = memory::pair();
    s.serve(b).expect("serve");
    let mut c = RawPeer::new(a, V);
    c.handshake(V, json!({})).await;
    c
}

fn call(name: &str) -> Value {
    json!({"name": name, "arguments": {}})
}

fn text_of(r: &Value) -> String {
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(start_paused = true)]
async fn sf_9_a_tool_timeout_ends_that_tool_only_with_an_is_error_result() {
    let s = plain()
        .layer_for(Scope::tool("slow"), Timeout::new(Duration::from_secs(2)))
        .build()
        .unwrap();
    let mut c = connect(&s).await;
    let r = c.request(json!(1), "tools/call", call("slow")).await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(text_of(&r).contains("timed out after 2000 ms"), "{r}");
    let r = c.request(json!(2), "tools/call", call("fast")).await;
    assert_eq!(text_of(&r), "fast");
}

#[tokio::test(start_paused = true)]
async fn a_timeout_on_another_method_is_an_internal_error_with_its_reason() {
    let s = Server::builder(Implementation::new("mw", "1"))
        .prompt(switchboard::types::prompts::Prompt::new("p"), |_| async {
            // Not a wait: a call that outlasts the test (a slow handler).
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok(switchboard::types::prompts::GetPromptResult::new(vec![]))
        })
        .layer(Timeout::new(Duration::from_millis(500)))
        .build()
        .unwrap();
    let mut c = connect(&s).await;
    let r = c
        .request(json!(1), "prompts/get", json!({"name": "p"}))
        .await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
    assert_eq!(r["error"]["data"]["reason"], "timeout");
    assert_eq!(r["error"]["data"]["timeoutMs"], 500);
}

/// Sends a `gate` call (id 1) on `c` and waits until its handler runs, holding its slot.
async fn hold_gate(c: &mut RawPeer, entered: &AtomicUsize) {
    c.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call("gate")}))
        .await;
    wait::until("the gate tool to start", || {
        entered.load(Ordering::SeqCst) == 1
    })
    .await;
}

#[tokio::test]
async fn sf_9_a_per_session_concurrency_limit_refuses_the_one_too_many_and_frees_its_slot() {
    let open = Arc::new(Notify::new());
    let entered = Arc::new(AtomicUsize::new(0));
    let s = builder(open.clone(), entered.clone())
        .layer(ConcurrencyLimit::per_session(1))
        .build()
        .unwrap();
    let mut c = connect(&s).await;
    let mut other = connect(&s).await;
    hold_gate(&mut c, &entered).await;
    let r = c.request(json!(2), "tools/call", call("fast")).await;
    assert_eq!(r["error"]["code"], -32000, "{r}");
    assert_eq!(r["error"]["data"]["reason"], "concurrency_limited");
    // Another session has its own limit.
    let r = other.request(json!(1), "tools/call", call("fast")).await;
    assert_eq!(text_of(&r), "fast", "{r}");
    open.notify_one();
    let r = c.recv_id(&json!(1)).await;
    assert_eq!(text_of(&r), "through");
    let r = c.request(json!(3), "tools/call", call("fast")).await;
    assert_eq!(text_of(&r), "fast", "the slot came back: {r}");
}

#[tokio::test]
async fn a_limit_for_all_is_shared_across_sessions() {
    let open = Arc::new(Notify::new());
    let entered = Arc::new(AtomicUsize::new(0));
    let s = builder(open.clone(), entered.clone())
        .layer_for(
            Scope::tools(),
            ConcurrencyLimit::new(switchboard::middleware::Per::All, 1),
        )
        .build()
        .unwrap();
    let mut a = connect(&s).await;
    let mut b = connect(&s).await;
    hold_gate(&mut a, &entered).await;
    let r = b.request(json!(1), "tools/call", call("fast")).await;
    assert_eq!(r["error"]["data"]["reason"], "concurrency_limited", "{r}");
    // Out of scope: not limited.
    let r = b.request(json!(2), "ping", json!({})).await;
    assert!(r.get("result").is_some(), "{r}");
    open.notify_one();
    a.recv_id(&json!(1)).await;
}

#[tokio::test(start_paused = true)]
async fn sf_9_a_rate_limit_refuses_past_its_burst_says_when_to_retry_and_refills() {
    let s = plain()
        .layer_for(
            Scope::tools(),
            RateLimit::per_session(2, Duration::from_secs(1)),
        )
        .build()
        .unwrap();
    let mut c = connect(&s).await;
    for id in 1..=2 {
        let r = c.request(json!(id), "tools/call", call("fast")).await;
        assert_eq!(text_of(&r), "fast");
    }
    let r = c.request(json!(3), "tools/call", call("fast")).await;
    assert_eq!(r["error"]["code"], -32000, "{r}");
    assert_eq!(r["error"]["data"]["reason"], "rate_limited");
    let retry = r["error"]["data"]["retryAfterMs"].as_u64().unwrap();
    assert!((1..=500).contains(&retry), "{retry}");
    tokio::time::advance(Duration::from_millis(retry)).await;
    let r = c.request(json!(4), "tools/call", call("fast")).await;
    assert_eq!(text_of(&r), "fast", "refilled after retryAfterMs: {r}");
}

#[tokio::test(start_paused = true)]
async fn a_rate_limit_keeps_state_for_at_most_its_keys() {
    // One key at most: while the first session's bucket is not full again, a second session
    // has no room and is refused; once it has refilled (holding nothing a new bucket would
    // not), it is forgotten for the second.
    let s = plain()
        .layer_for(
            Scope::tools(),
            RateLimit::per_session(1, Duration::from_secs(10)).with_max_keys(1),
        )
        .build()
        .unwrap();
    let mut first = connect(&s).await;
    let mut second = connect(&s).await;
    let r = first.request(json!(1), "tools/call", call("fast")).await;
    assert_eq!(text_of(&r), "fast");
    let r = second.request(json!(1), "tools/call", call("fast")).await;
    assert_eq!(r["error"]["data"]["reason"], "rate_limited", "{r}");
    tokio::time::advance(Duration::from_secs(10)).await;
    let r = second.request(json!(2), "tools/call", call("fast")).await;
    assert_eq!(text_of(&r), "fast", "{r}");
}

#[tokio::test]
async fn a_result_size_limit_turns_a_big_tool_result_into_an_is_error_result() {
    let s = plain()
        .layer(ResultSizeLimit::new(64 * 1024))
        .build()
        .unwrap();
    let mut c = connect(&s).await;
    let r = c.request(json!(1), "tools/call", call("big")).await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(text_of(&r).contains("over the limit of 65536"), "{r}");
    let r = c.request(json!(2), "tools/call", call("fast")).await;
    assert_eq!(text_of(&r), "fast");
}

/// A writer into shared memory.
#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Sink {
    fn lines(&self) -> Vec<Value> {
        String::from_utf8(self.0.lock().unwrap().clone())
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

#[tokio::test]
async fn the_audit_log_writes_one_line_per_request_in_both_eras() {
    let sink = Sink::default();
    let audit = Audit::to_writer(sink.clone());
    let stats = audit.stats();
    let s = plain()
        .layer_for(Scope::tools(), audit)
        .layer_for(Scope::tool("slow"), Timeout::new(Duration::from_millis(1)))
        .build()
        .unwrap();
    let mut c = connect(&s).await;
    c.request(json!(1), "tools/call", call("fast")).await;
    c.request(json!(2), "tools/call", call("slow")).await;
    c.request(json!(3), "tools/call", json!({"name": "n".repeat(500)}))
        .await;
    c.request(json!(4), "ping", json!({})).await;
    // The 2026-07-28 era: one request, no session.
    let (a, b) = memory::pair();
    s.serve(b).unwrap();
    let mut m = RawPeer::new(a, MODERN);
    let mut params = call("fast");
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}});
    let r = m.request(json!(9), "tools/call", params).await;
    assert_eq!(r["result"]["content"][0]["text"], "fast", "{r}");
    wait::until("four audit lines", || stats.written() == 4).await;
    let lines = sink.lines();
    assert_eq!(lines.len(), 4, "ping is out of scope: {lines:?}");
    assert_eq!(lines[0]["method"], "tools/call");
    assert_eq!(lines[0]["target"], "fast");
    assert_eq!(lines[0]["outcome"], "ok");
    assert_eq!(lines[0]["side"], "server");
    assert_eq!(lines[0]["id"], "1");
    assert!(lines[0]["durationMs"].is_number());
    assert!(lines[0]["time"].as_str().unwrap().ends_with('Z'));
    assert!(
        lines[0].get("subject").is_none(),
        "no authorization in memory"
    );
    assert_eq!(lines[1]["outcome"], "tool_error", "{:?}", lines[1]);
    assert_eq!(lines[2]["outcome"], "error");
    assert_eq!(lines[2]["code"], -32602);
    let target = lines[2]["target"].as_str().unwrap();
    assert_eq!(target.chars().count(), 201, "cut to its bound: {target}");
    assert_eq!(lines[3]["target"], "fast");
    assert_eq!(lines[3]["id"], "9");
    assert_eq!(stats.dropped(), 0);
}

/// A writer whose first flush blocks until released, so the audit queue fills behind it.
struct Blocked {
    release: Arc<std::sync::Barrier>,
    flushes: Arc<AtomicUsize>,
    sink: Sink,
}

impl std::io::Write for Blocked {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.sink.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        if self.flushes.fetch_add(1, Ordering::SeqCst) == 0 {
            self.release.wait();
        }
        Ok(())
    }
}

#[tokio::test]
async fn audit_lines_past_the_queue_are_dropped_and_counted_never_blocking_the_request() {
    let release = Arc::new(std::sync::Barrier::new(2));
    let flushes = Arc::new(AtomicUsize::new(0));
    let sink = Sink::default();
    let writer = Blocked {
        release: release.clone(),
        flushes: flushes.clone(),
        sink: sink.clone(),
    };
    let audit = Audit::with_queue(writer, 2);
    let stats = audit.stats();
    let s = plain().layer(audit).build().unwrap();
    let mut c = connect(&s).await;
    wait::until("the writer to block at its first flush", || {
        flushes.load(Ordering::SeqCst) == 1
    })
    .await;
    let before = stats.written();
    for id in 1..=6 {
        let r = c.request(json!(id), "tools/call", call("fast")).await;
        assert_eq!(text_of(&r), "fast", "requests are never held up by the log");
    }
    // At most two lines wait in the queue; the rest of the six (and the handshake's) are dropped.
    let dropped = stats.dropped();
    assert!(dropped >= 4, "{dropped}");
    tokio::task::spawn_blocking(move || release.wait())
        .await
        .unwrap();
    wait::until("the two queued audit lines", || {
        stats.written() == before + 2
    })
    .await;
    let lines = sink.lines();
    assert!(
        lines.iter().any(|l| l["dropped"].as_u64() == Some(dropped)),
        "a dropped-count line follows: {lines:?}"
    );
    assert_eq!(stats.dropped(), dropped);
}

/// A server whose `whoami` tool reports what its context knows, behind authorization on
/// Streamable HTTP forwarding `x-request-id`, with `limited` allowed once per subject per minute
/// and every tool call audited.
async fn http_fixture(
    sink: Sink,
) -> (
    crate::auth::Fixture,
    Arc<switchboard::middleware::AuditStats>,
) {
    let any = || json!({"type": "object"});
    let audit = Audit::to_writer(sink);
    let stats = audit.stats();
    let server = Server::builder(Implementation::new("ctx", "1"))
        .tool(Tool::new("whoami", any()), |call| async move {
            let cx = &call.cx;
            let facts = json!({
                "subject": cx.subject(),
                "client": cx.client_id(),
                "scopes": cx.scopes(),
                "session": cx.session_id().as_deref(),
                "requestId": cx.header("X-Request-Id"),
                "auth": cx.header("authorization"),
                "version": cx.protocol_version().map(|v| v.as_str()),
            });
            Ok(CallToolResult::text(facts.to_string()))
        })
        .tool(Tool::new("limited", any()), |_| async {
            Ok(CallToolResult::text("once"))
        })
        .layer_for(Scope::tools(), audit)
        .layer_for(
            Scope::tool("limited"),
            RateLimit::per_subject(1, Duration::from_secs(60)),
        )
        .build()
        .unwrap();
    let fixture = crate::auth::Fixture::start_configured(
        server,
        true,
        |c| c,
        |http| http.with_forwarded_headers(["x-request-id", "Authorization"]),
    )
    .await;
    (fixture, stats)
}

fn whoami(r: &crate::auth::Reply) -> Value {
    let v = r.json();
    serde_json::from_str(v["result"]["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[tokio::test]
async fn a_handler_reads_the_callers_subject_scopes_session_and_forwarded_headers_over_http() {
    let (f, _) = http_fixture(Sink::default()).await;
    let mut claims = f.claims("alice", "mcp:tools");
    claims["client_id"] = json!("app-1");
    let token = f.issuer.token(&claims);
    let sid = f.open(&token).await;
    let req = f
        .http
        .post(&f.url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("authorization", format!("Bearer {token}"))
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", crate::auth::V2025)
        .header("x-request-id", "req-42")
        .body(crate::auth::call(1, "whoami").to_string());
    let r = f.send(req).await;
    let got = whoami(&r);
    assert_eq!(got["subject"], "alice", "{got}");
    assert_eq!(got["client"], "app-1");
    assert_eq!(got["scopes"], json!(["mcp:tools"]));
    assert_eq!(got["session"], sid.as_str());
    assert_eq!(got["requestId"], "req-42");
    assert_eq!(
        got["auth"],
        Value::Null,
        "the token itself is never forwarded ([AU-23])"
    );
    assert_eq!(got["version"], crate::auth::V2025);
    // Not sent: None.
    let r = f
        .post(&crate::auth::call(2, "whoami"), Some(&token), Some(&sid))
        .await;
    assert_eq!(whoami(&r)["requestId"], Value::Null);
}

#[tokio::test]
async fn sf_9_a_per_subject_rate_limit_spans_sessions_and_spares_other_subjects_and_is_audited() {
    let sink = Sink::default();
    let (f, stats) = http_fixture(sink.clone()).await;
    let alice = f.token("alice", "mcp:tools");
    let bob = f.token("bob", "mcp:tools");
    let (a1, a2, b1) = (
        f.open(&alice).await,
        f.open(&alice).await,
        f.open(&bob).await,
    );
    let r = f
        .post(&crate::auth::call(1, "limited"), Some(&alice), Some(&a1))
        .await;
    assert_eq!(
        r.json()["result"]["content"][0]["text"],
        "once",
        "{}",
        r.body
    );
    // The same subject on another session: refused, with the spec's JSON-RPC error in a 200.
    let r = f
        .post(&crate::auth::call(2, "limited"), Some(&alice), Some(&a2))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.json()["error"]["data"]["reason"],
        "rate_limited",
        "{}",
        r.body
    );
    assert_eq!(r.json()["error"]["data"]["per"], "subject");
    let r = f
        .post(&crate::auth::call(3, "limited"), Some(&bob), Some(&b1))
        .await;
    assert_eq!(
        r.json()["result"]["content"][0]["text"],
        "once",
        "{}",
        r.body
    );
    wait::until("three audit lines", || stats.written() == 3).await;
    let lines = sink.lines();
    let subjects: Vec<_> = lines.iter().map(|l| l["subject"].clone()).collect();
    assert_eq!(subjects, vec![json!("alice"), json!("alice"), json!("bob")]);
    assert_eq!(lines[1]["outcome"], "error");
    assert_eq!(lines[1]["code"], -32000);
    assert_eq!(lines[0]["session"], a1.as_str());
}

#[tokio::test]
async fn a_client_layer_sees_every_request_the_client_sends_in_both_eras() {
    use switchboard::client::{Client, EraMode};
    for (era, version) in [
        (EraMode::Legacy, V),
        (
            EraMode::Pin(switchboard::types::ProtocolVersion::V2026_07_28),
            MODERN,
        ),
    ] {
        let sink = Sink::default();
        let audit = Audit::to_writer(sink.clone());
        let stats = audit.stats();
        let s = plain().build().unwrap();
        let (a, b) = memory::pair();
        s.serve(b).unwrap();
        let client = Client::builder(Implementation::new("c", "1"))
            .era(era)
            .layer_for(Scope::tools(), audit)
            .build()
            .connect(a)
            .await
            .unwrap();
        let r = client.call_tool("fast", json!({})).await.unwrap();
        assert_eq!(switchboard_tests::text(&r), "fast");
        client.call_tool("slow-nope", json!({})).await.unwrap_err();
        wait::until("two audit lines", || stats.written() == 2).await;
        let lines = sink.lines();
        assert_eq!(lines[0]["side"], "client", "{lines:?}");
        assert_eq!(lines[0]["direction"], "out");
        assert_eq!(lines[0]["target"], "fast");
        assert_eq!(lines[0]["outcome"], "ok");
        assert_eq!(lines[1]["outcome"], "error");
        assert_eq!(lines[1]["code"], -32602, "{version}: {lines:?}");
    }
}
