//! Chaos: streams dropped before their priming event, a server restarted mid-stream, a server's
//! `retry:` at both extremes, a server that makes a POST stream reconnect for ever. The client
//! never hangs: it resumes, or fails the call with a clear error, and the session (or a new one)
//! goes on.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::raw::{self, Reply, result, sse_head};
use support::{
    Options, RawClient, WAIT, connect, eventually, live, live_with, local_error, test_server, text,
};
use switchboard_http::HttpConfig;
use switchboard_http_client::{HttpClientConfig, SESSION_EXPIRED};

fn raw_config() -> HttpClientConfig {
    HttpClientConfig::default()
        .with_get_stream(false)
        .with_http_sse_fallback(false)
}

/// An SSE answer: the head, then `events`, then the connection closes.
fn sse(events: &str) -> Reply {
    let mut bytes = sse_head();
    bytes.extend_from_slice(events.as_bytes());
    Reply::close(bytes)
}

#[tokio::test]
async fn a_post_stream_dropped_before_its_priming_event_fails_its_call_at_once() {
    let srv = raw::raw(|req| match req.rpc_id() {
        Some(id) if id >= 100 => sse(&format!("data: {}\n\n", result(id, json!({"ok": id})))),
        _ => sse(""),
    })
    .await;
    let mut c = RawClient::new(&srv.url, raw_config());
    let started = Instant::now();
    c.call(1).await;
    let e = local_error(&c.recv().await, 1, "stream_ended");
    assert!(started.elapsed() < Duration::from_secs(2), "no hang");
    assert!(
        e["message"].as_str().unwrap().contains("no event id"),
        "{e}"
    );
    assert_eq!(srv.count("GET"), 0, "nothing to resume from");
    c.call(100).await;
    assert_eq!(c.recv().await["result"]["ok"], 100);
}

#[tokio::test]
async fn a_get_stream_dropped_before_its_priming_event_is_opened_again() {
    let server = test_server();
    let options = Options {
        cut_first_get: Some(0),
        ..Options::default()
    };
    let live = live_with(&server, HttpConfig::default(), options).await;
    let config = HttpClientConfig::default().with_default_retry(Duration::from_millis(100));
    let (session, _) = connect(&live.url, config).await;
    eventually("a second GET", || {
        live.seen().iter().filter(|s| s.method == "GET").count() >= 2
    })
    .await;
    let gets: Vec<_> = live
        .seen()
        .into_iter()
        .filter(|s| s.method == "GET")
        .collect();
    assert!(
        gets.iter().all(|g| g.last_event_id.is_none()),
        "no event id to resume from: a fresh GET: {gets:?}"
    );
    // Kept: the reopened GET is seen, but not when the server has attached it to the session.
    tokio::time::sleep(Duration::from_millis(200)).await;
    support::late_tool_is_announced(&server, session, "on the reopened stream").await;
}

#[tokio::test]
async fn a_server_restarted_mid_stream_expires_the_session_and_a_new_one_works() {
    let server = test_server();
    let config = HttpConfig::default().with_sse_retry_ms(100);
    let first = live(&server, config.clone()).await;
    let (url, addr) = (first.url.clone(), first.addr);
    let client_config = HttpClientConfig::default();
    let (session, handle) = connect(&url, client_config.clone()).await;
    let call = tokio::spawn(async move {
        let r = session.call_tool("slow", json!({"ms": 5000})).await;
        (r, session)
    });
    eventually("the slow call reached the server", || {
        first.seen().iter().filter(|s| s.method == "POST").count() >= 3
    })
    .await;
    // Kept: the slow call's SSE stream must be open on the server before it goes away (not observable).
    tokio::time::sleep(Duration::from_millis(100)).await;
    // The restart: the process goes (every session and stream with it), a new one binds the
    // same port with no sessions.
    drop(first);
    let second = live_with(
        &test_server(),
        config,
        Options {
            addr: Some(addr),
            ..Options::default()
        },
    )
    .await;
    let (r, session) = tokio::time::timeout(WAIT, call)
        .await
        .expect("no hang")
        .unwrap();
    let e = r.expect_err("the call cannot finish").to_string();
    tokio::time::timeout(WAIT, session.closed())
        .await
        .expect("the session closes");
    let reason = session.peer().close_reason().unwrap_or_default();
    assert!(reason.contains(SESSION_EXPIRED), "{reason} / {e}");
    assert!(handle.session_expired());
    assert!(
        second
            .seen()
            .iter()
            .any(|s| s.method == "GET" && s.last_event_id.is_some()),
        "the client tried to resume on the new server: {:?}",
        second.seen()
    );
    // Starting over, as `switchboard call` or any host does on SESSION_EXPIRED: a new transport
    // and a new initialize.
    let (again, handle2) = connect(&url, client_config).await;
    assert_ne!(handle2.session_id(), handle.session_id());
    let r = again
        .call_tool("echo", json!({"again": true}))
        .await
        .unwrap();
    assert_eq!(text(&r), r#"{"again":true}"#);
    again.close();
}

/// A POST stream closed after its priming event (with `retry`), resumed by a GET that brings
/// the response; the GETs are counted.
async fn resumable(retry: &'static str) -> raw::RawServer {
    raw::raw(move |req| {
        if req.method == "GET" {
            let id = 1;
            return sse(&format!(
                "data: {}\n\n",
                result(id, json!({"resumed": true}))
            ));
        }
        sse(&format!("id: 1-0\nretry: {retry}\ndata: \n\n"))
    })
    .await
}

#[tokio::test]
async fn a_huge_retry_is_clamped_to_the_longest_wait() {
    let srv = resumable("999999999").await;
    let ms = Duration::from_millis;
    let config = raw_config().with_retry_range(ms(100), ms(400));
    let mut c = RawClient::new(&srv.url, config);
    let started = Instant::now();
    c.call(1).await;
    let v = c.recv().await;
    assert_eq!(v["result"]["resumed"], true, "{v}");
    let took = started.elapsed();
    assert!(took >= ms(380) && took < ms(3000), "{took:?}");
}

#[tokio::test]
async fn a_zero_retry_is_raised_to_the_shortest_wait_and_attempts_stay_bounded() {
    // Every resumption ends at once with nothing in it.
    let srv = raw::raw(|req| {
        if req.method == "GET" {
            return sse("retry: 0\n\n");
        }
        sse("id: 1-0\nretry: 0\ndata: \n\n")
    })
    .await;
    let mut c = RawClient::new(&srv.url, raw_config());
    let started = Instant::now();
    c.call(1).await;
    let e = local_error(&c.recv().await, 1, "reconnect_attempts_exhausted");
    assert_eq!(e["data"]["attempts"], 5);
    assert_eq!(srv.count("GET"), 5, "max_reconnect_attempts");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(450),
        "at least 100 ms before each of 5 reconnections: {took:?}"
    );
}

#[tokio::test]
async fn a_post_stream_reconnected_for_ever_is_given_up_after_the_bound() {
    // Each resumption brings one event (so the consecutive count never grows), never the response.
    let srv = raw::raw(|req| {
        if req.method == "GET" {
            return sse("id: 1-1\nretry: 0\ndata: \n\n");
        }
        sse("id: 1-0\nretry: 0\ndata: \n\n")
    })
    .await;
    let mut c = RawClient::new(&srv.url, raw_config().with_max_resumptions(3));
    c.call(1).await;
    let e = local_error(&c.recv().await, 1, "resumptions_exhausted");
    assert!(
        e["message"].as_str().unwrap().contains("max_resumptions"),
        "{e}"
    );
    assert_eq!(srv.count("GET"), 3);
}

#[tokio::test]
async fn an_event_id_too_long_to_send_back_is_not_resumed_with() {
    let srv = raw::raw(|_| {
        let id = "i".repeat(5000);
        sse(&format!("id: {id}\nretry: 10\ndata: \n\n"))
    })
    .await;
    let mut c = RawClient::new(&srv.url, raw_config());
    c.call(1).await;
    let e = local_error(&c.recv().await, 1, "event_id_too_long");
    assert_eq!(e["data"]["limit"], 4096);
    assert_eq!(srv.count("GET"), 0);
}
