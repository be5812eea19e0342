//! SSE streaming over real 127.0.0.1 sockets with a hyper client: the standalone GET stream,
//! resumption, polling, concurrent POST streams, server requests on a POST stream, keep-alive.
//! Test names carry the SPEC-NOTES tags they cover.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::HashSet;
use std::time::Duration;

use http_body_util::BodyExt;
use serde_json::{Value, json};
use support::*;
use switchboard_http::HttpConfig;
use switchboard_server::Server;
use switchboard_types::tools::{CallToolResult, Tool};

fn add_tool(server: &Server, name: &str) {
    server
        .add_tool(
            Tool::new(name, json!({"type": "object"})).with_description("added at run time"),
            |_call| async move { Ok(CallToolResult::text("new")) },
        )
        .unwrap();
}

fn method(e: &SseEvent) -> Option<String> {
    e.json()
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

#[tokio::test]
async fn ht13_ht14_get_stream_carries_unsolicited_notifications_only() {
    let server = test_server();
    let live = live(&server, HttpConfig::default()).await;
    let sid = wire_session(live.addr).await;
    let resp = send(live.addr, wire_get(live.addr, &sid, None)).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let mut get = SseReader::new(resp.into_body());
    let priming = get.next_event(WAIT).await.unwrap();
    assert_eq!(priming.data.as_deref(), Some(""));
    assert_eq!(priming.retry, Some(1000));
    assert_eq!(priming.stream_seq().0, 0);

    // A POST in flight does not see the unsolicited notification, and the GET stream does not
    // see the POST's response.
    let post = send(
        live.addr,
        wire_post(
            live.addr,
            Some(&sid),
            call_body(1, "slow", json!({"ms": 200})),
        ),
    )
    .await;
    let mut post = SseReader::new(post.into_body());
    let _ = post.next_event(WAIT).await.unwrap();
    add_tool(&server, "late");
    let ev = get.next_event(WAIT).await.unwrap();
    assert_eq!(
        method(&ev).as_deref(),
        Some("notifications/tools/list_changed")
    );
    let mut rest = Vec::new();
    while let Some(e) = post.next_event(WAIT).await {
        rest.push(e);
    }
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0].json()["id"], 1);
}

#[tokio::test]
async fn get_second_concurrent_stream_is_409_until_the_first_closes() {
    let server = test_server();
    let config = HttpConfig::default().with_keep_alive(Some(Duration::from_millis(50)));
    let live = live(&server, config).await;
    let sid = wire_session(live.addr).await;
    let first = send(live.addr, wire_get(live.addr, &sid, None)).await;
    assert_eq!(first.status(), 200);
    let second = send(live.addr, wire_get(live.addr, &sid, None)).await;
    assert_eq!(second.status(), 409);
    drop(first);
    // The server notices the closed connection at its next keep-alive write.
    let deadline = switchboard_test_support::wait::Deadline::new("the first stream closed");
    loop {
        let again = send(live.addr, wire_get(live.addr, &sid, None)).await;
        match again.status().as_u16() {
            200 => break,
            409 => deadline.tick().await,
            other => panic!("unexpected status {other}"),
        }
    }
}

#[tokio::test]
async fn unsolicited_messages_wait_in_a_bounded_queue_for_a_get_stream() {
    let server = test_server();
    let live = live(&server, HttpConfig::default().with_unsolicited_queue(2)).await;
    let sid = wire_session(live.addr).await;
    for name in ["a", "b", "c"] {
        add_tool(&server, name);
    }
    // Let the three notifications reach the session's queue (bound 2: the oldest is dropped).
    // Kept: nothing outside the crate observes that queue without draining it.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let resp = send(live.addr, wire_get(live.addr, &sid, None)).await;
    let mut get = SseReader::new(resp.into_body());
    let priming = get.next_event(WAIT).await.unwrap();
    let a = get.next_event(WAIT).await.unwrap();
    let b = get.next_event(WAIT).await.unwrap();
    assert_eq!(
        method(&a).as_deref(),
        Some("notifications/tools/list_changed")
    );
    assert_eq!(
        method(&b).as_deref(),
        Some("notifications/tools/list_changed")
    );
    let (s0, p) = priming.stream_seq();
    assert_eq!(a.stream_seq(), (s0, p + 1));
    assert_eq!(b.stream_seq(), (s0, p + 2));
    assert!(
        tokio::time::timeout(Duration::from_millis(200), get.next_event(WAIT))
            .await
            .is_err(),
        "only two were kept"
    );
}

#[tokio::test]
async fn ht17_sec_sh_9_last_event_id_replays_only_its_own_stream_then_continues() {
    let server = test_server();
    let live = live(&server, HttpConfig::default()).await;
    let sid = wire_session(live.addr).await;
    let get = send(live.addr, wire_get(live.addr, &sid, None)).await;
    let mut get = SseReader::new(get.into_body());
    let get_priming = get.next_event(WAIT).await.unwrap();

    let post = send(
        live.addr,
        wire_post(live.addr, Some(&sid), call_body(9, "chatty", json!({}))),
    )
    .await;
    let mut post_reader = SseReader::new(post.into_body());
    let priming = post_reader.next_event(WAIT).await.unwrap();
    let priming_id = priming.id.clone().unwrap();
    let mut post_events = Vec::new();
    while let Some(e) = post_reader.next_event(WAIT).await {
        post_events.push(e);
    }
    assert_eq!(post_events.len(), 3);
    add_tool(&server, "other-stream");
    let note = get.next_event(WAIT).await.unwrap();
    assert_eq!(
        method(&note).as_deref(),
        Some("notifications/tools/list_changed")
    );

    // Resume the POST stream from its priming event: its three events, nothing of stream 0.
    let resp = send(live.addr, wire_get(live.addr, &sid, Some(&priming_id))).await;
    assert_eq!(resp.status(), 200);
    let mut resumed = SseReader::new(resp.into_body());
    let mut replay = Vec::new();
    while let Some(e) = resumed.next_event(WAIT).await {
        replay.push(e);
    }
    assert_eq!(replay[0].retry, Some(1000));
    assert_eq!(replay[0].id, None);
    assert_eq!(
        &replay[1..],
        &post_events[..],
        "the same events, the same ids"
    );
    // Resume from the middle: only what came after.
    let mid = post_events[1].id.clone().unwrap();
    let resp = send(live.addr, wire_get(live.addr, &sid, Some(&mid))).await;
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    let tail = parse_sse(std::str::from_utf8(&body).unwrap());
    assert_eq!(&tail[1..], &post_events[2..]);

    // Resume the standalone stream from its priming event: the notification, then live.
    drop(get);
    let resp = send(
        live.addr,
        wire_get(live.addr, &sid, Some(get_priming.id.as_deref().unwrap())),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let mut get2 = SseReader::new(resp.into_body());
    let _retry = get2.next_event(WAIT).await.unwrap();
    assert_eq!(get2.next_event(WAIT).await.unwrap(), note);
    add_tool(&server, "after-resume");
    let live_note = get2.next_event(WAIT).await.unwrap();
    assert_eq!(
        live_note.stream_seq(),
        (note.stream_seq().0, note.stream_seq().1 + 1)
    );

    // Ids of streams that never existed, or are malformed, are refused.
    for bad in ["999-0", "nonsense"] {
        let resp = send(live.addr, wire_get(live.addr, &sid, Some(bad))).await;
        assert_eq!(resp.status(), 400, "{bad}");
    }
}

#[tokio::test]
async fn post_stream_interrupted_before_its_response_is_finished_on_a_resumed_get() {
    let server = test_server();
    let live = live(&server, HttpConfig::default()).await;
    let sid = wire_session(live.addr).await;
    let post = send(
        live.addr,
        wire_post(
            live.addr,
            Some(&sid),
            call_body(4, "slow", json!({"ms": 400})),
        ),
    )
    .await;
    let mut reader = SseReader::new(post.into_body());
    let priming = reader.next_event(WAIT).await.unwrap();
    drop(reader); // the client disconnects; the request goes on (a disconnect is no cancellation)
    // The resume is refused (409) until the server has seen the POST stream go.
    let deadline = switchboard_test_support::wait::Deadline::new("the POST stream let go");
    let resp = loop {
        let resp = send(live.addr, wire_get(live.addr, &sid, priming.id.as_deref())).await;
        if resp.status() != 409 {
            break resp;
        }
        deadline.tick().await;
    };
    assert_eq!(resp.status(), 200);
    let mut resumed = SseReader::new(resp.into_body());
    let mut got = Vec::new();
    while let Some(e) = resumed.next_event(WAIT).await {
        got.push(e);
    }
    let v = got.last().unwrap().json();
    assert_eq!(v["id"], 4);
    assert_eq!(v["result"]["content"][0]["text"], "slept 400");
}

#[tokio::test]
async fn sep1699_polling_closes_the_post_stream_and_the_client_resumes() {
    let server = test_server();
    let config = HttpConfig::default()
        .with_close_sse_after_priming_ms(Some(50))
        .with_sse_retry_ms(20);
    let live = live(&server, config).await;
    let sid = wire_session(live.addr).await;
    let post = send(
        live.addr,
        wire_post(
            live.addr,
            Some(&sid),
            call_body(5, "slow", json!({"ms": 300})),
        ),
    )
    .await;
    let mut reader = SseReader::new(post.into_body());
    let priming = reader.next_event(WAIT).await.unwrap();
    assert_eq!(priming.retry, Some(20));
    assert_eq!(
        reader.next_event(WAIT).await,
        None,
        "closed before the response"
    );
    let mut last = priming.id.clone().unwrap();
    let mut answer = None;
    let deadline = switchboard_test_support::wait::Deadline::new("the answer on a resumed stream");
    while answer.is_none() {
        let resp = send(live.addr, wire_get(live.addr, &sid, Some(&last))).await;
        assert_eq!(resp.status(), 200);
        let mut r = SseReader::new(resp.into_body());
        while let Some(e) = r.next_event(WAIT).await {
            if let Some(id) = &e.id {
                last = id.clone();
            }
            if e.data.is_some() {
                answer = Some(e.json());
            }
        }
        if answer.is_none() {
            deadline.tick().await;
        }
    }
    let v = answer.expect("the response after reconnecting");
    assert_eq!(v["id"], 5);
    assert_eq!(v["result"]["content"][0]["text"], "slept 300");
}

#[tokio::test]
async fn sep1699_a_handler_closes_its_own_stream_and_the_answer_waits_for_the_resume() {
    let server = test_server();
    let live = live(&server, HttpConfig::default()).await;
    let sid = wire_session(live.addr).await;
    let post = send(
        live.addr,
        wire_post(live.addr, Some(&sid), call_body(6, "reconnect", json!({}))),
    )
    .await;
    let mut reader = SseReader::new(post.into_body());
    let priming = reader.next_event(WAIT).await.unwrap();
    assert_eq!(reader.next_event(WAIT).await, None, "closed by the handler");
    let resp = send(live.addr, wire_get(live.addr, &sid, priming.id.as_deref())).await;
    assert_eq!(resp.status(), 200);
    let mut resumed = SseReader::new(resp.into_body());
    let mut got = Vec::new();
    while let Some(e) = resumed.next_event(WAIT).await {
        got.push(e);
    }
    let v = got.last().unwrap().json();
    assert_eq!(v["id"], 6);
    assert_eq!(v["result"]["content"][0]["text"], "closed=true");
    assert_eq!(
        got.last().unwrap().stream_seq(),
        (priming.stream_seq().0, 1)
    );
}

#[tokio::test]
async fn ht15_ht16_concurrent_posts_each_get_their_own_stream() {
    let server = test_server();
    let live = live(&server, HttpConfig::default()).await;
    let sid = wire_session(live.addr).await;
    let mut tasks = Vec::new();
    for i in 0..8i64 {
        let addr = live.addr;
        let sid = sid.clone();
        tasks.push(tokio::spawn(async move {
            let ms = 40 * (8 - i) as u64;
            let resp = send(
                addr,
                wire_post(
                    addr,
                    Some(&sid),
                    call_body(100 + i, "slow", json!({"ms": ms})),
                ),
            )
            .await;
            assert_eq!(resp.status(), 200);
            let mut r = SseReader::new(resp.into_body());
            let mut events = Vec::new();
            while let Some(e) = r.next_event(WAIT).await {
                events.push(e);
            }
            (i, ms, events)
        }));
    }
    let mut ids = HashSet::new();
    let mut streams = HashSet::new();
    for t in tasks {
        let (i, ms, events) = t.await.unwrap();
        assert_eq!(events.len(), 2, "priming + own response: {events:?}");
        let v = events[1].json();
        assert_eq!(v["id"], 100 + i);
        assert_eq!(v["result"]["content"][0]["text"], format!("slept {ms}"));
        streams.insert(events[0].stream_seq().0);
        for e in &events {
            assert!(ids.insert(e.id.clone().unwrap()), "event ids are unique");
        }
    }
    assert_eq!(streams.len(), 8);
}

#[tokio::test]
async fn server_requests_related_to_a_call_travel_on_its_post_stream() {
    let server = test_server();
    let live = live(&server, HttpConfig::default()).await;
    let sid = wire_session(live.addr).await;
    let post = send(
        live.addr,
        wire_post(live.addr, Some(&sid), call_body(3, "sample", json!({}))),
    )
    .await;
    let mut reader = SseReader::new(post.into_body());
    let _priming = reader.next_event(WAIT).await.unwrap();
    let req = reader.next_event(WAIT).await.unwrap().json();
    assert_eq!(req["method"], "sampling/createMessage");
    let answer = json!({"jsonrpc": "2.0", "id": req["id"], "result": {
        "role": "assistant", "content": {"type": "text", "text": "hello from the model"},
        "model": "test-model", "stopReason": "endTurn"}})
    .to_string();
    let resp = send(live.addr, wire_post(live.addr, Some(&sid), answer)).await;
    assert_eq!(resp.status(), 202);
    let v = reader.next_event(WAIT).await.unwrap().json();
    assert_eq!(v["id"], 3);
    let text = v["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("hello from the model"), "{text}");
    assert_eq!(reader.next_event(WAIT).await, None);
}

#[tokio::test]
async fn keep_alive_comments_on_a_silent_stream() {
    let server = test_server();
    let config = HttpConfig::default().with_keep_alive(Some(Duration::from_millis(50)));
    let live = live(&server, config).await;
    let sid = wire_session(live.addr).await;
    let resp = send(live.addr, wire_get(live.addr, &sid, None)).await;
    let mut get = SseReader::new(resp.into_body());
    let _priming = get.next(WAIT).await.unwrap();
    let c = get.next(Duration::from_secs(2)).await.unwrap();
    assert!(c.comment, "{c:?}");
}

#[tokio::test]
async fn ht20_delete_ends_open_streams_and_shutdown_ends_everything() {
    let server = test_server();
    let live = live(&server, HttpConfig::default()).await;
    let sid = wire_session(live.addr).await;
    let resp = send(live.addr, wire_get(live.addr, &sid, None)).await;
    let mut get = SseReader::new(resp.into_body());
    let _ = get.next_event(WAIT).await.unwrap();
    let del = http::Request::delete("/mcp")
        .header("host", live.addr.to_string())
        .header("mcp-session-id", &sid)
        .body(http_body_util::Full::new(bytes::Bytes::new()))
        .unwrap();
    assert_eq!(send(live.addr, del).await.status(), 200);
    assert_eq!(get.next_event(WAIT).await, None, "the GET stream ended");
    assert_eq!(live.service.session_count(), 0);
    let resp = send(live.addr, wire_get(live.addr, &sid, None)).await;
    assert_eq!(resp.status(), 404);
}
