//! Per-call options on the client's calls, against a hand-played server: progress callbacks in
//! order (`[UT-6]`), timeouts (with `notifications/cancelled`), timeout reset on progress under a
//! hard maximum, and cancellation by token.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::client_support::{all_server_caps, builder, connect, expect_request, reply};
use serde_json::{Value, json};
use switchboard::client::{CancellationToken, ClientError, ProgressUpdate, RequestOptions};
use switchboard::jsonrpc::RequestError;
use switchboard_tests::RawPeer;
use tokio::time::Instant;

async fn progress(fake: &mut RawPeer, token: &Value, p: f64, message: Option<&str>) {
    let mut params = json!({"progressToken": token, "progress": p, "total": 3});
    if let Some(m) = message {
        params["message"] = json!(m);
    }
    fake.notify("notifications/progress", params).await;
}

#[tokio::test]
async fn ut_6_progress_reaches_the_callback_in_order() {
    let (client, mut fake) = connect(builder(), "2025-11-25", all_server_caps()).await;
    let seen: Arc<Mutex<Vec<ProgressUpdate>>> = Arc::default();
    let sink = seen.clone();
    let opts = RequestOptions::default().with_progress(move |u| sink.lock().unwrap().push(u));
    let call = tokio::spawn(async move { client.call_tool_with("slow", json!({}), opts).await });
    let req = fake.recv().await;
    assert_eq!(req["method"], "tools/call");
    let token = req["params"]["_meta"]["progressToken"].clone();
    assert!(
        token.is_i64() || token.is_string(),
        "UT-5: a progress token is asked for: {req}"
    );
    assert_eq!(req["params"]["name"], "slow");
    progress(&mut fake, &token, 1.0, Some("one")).await;
    progress(&mut fake, &token, 2.0, None).await;
    progress(&mut fake, &token, 1.5, None).await; // does not increase: dropped
    progress(&mut fake, &token, 3.0, Some("done")).await;
    progress(&mut fake, &json!("someone-else"), 9.0, None).await; // unknown token: dropped
    reply(
        &mut fake,
        &req["id"],
        json!({"content": [{"type": "text", "text": "ok"}]}),
    )
    .await;
    call.await.unwrap().unwrap();
    let got: Vec<(f64, Option<String>)> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|u| (u.progress, u.message.clone()))
        .collect();
    assert_eq!(
        got,
        [
            (1.0, Some("one".into())),
            (2.0, None),
            (3.0, Some("done".into()))
        ]
    );
    assert_eq!(seen.lock().unwrap()[0].total, Some(3.0));
}

#[tokio::test]
async fn ut_7_progress_after_the_response_is_dropped() {
    let (client, mut fake) = connect(builder(), "2025-11-25", all_server_caps()).await;
    let seen: Arc<Mutex<Vec<f64>>> = Arc::default();
    let sink = seen.clone();
    let opts =
        RequestOptions::default().with_progress(move |u| sink.lock().unwrap().push(u.progress));
    let call = tokio::spawn(async move { client.call_tool_with("t", json!({}), opts).await });
    let req = fake.recv().await;
    let token = req["params"]["_meta"]["progressToken"].clone();
    reply(&mut fake, &req["id"], json!({"content": []})).await;
    call.await.unwrap().unwrap();
    progress(&mut fake, &token, 1.0, None).await;
    fake.sync().await;
    assert!(seen.lock().unwrap().is_empty());
}

/// On the paused clock: the timeouts under test are tokio timers.
#[tokio::test(start_paused = true)]
async fn timeout_sends_cancelled_and_fails_the_call() {
    let (client, mut fake) = connect(builder(), "2025-11-25", all_server_caps()).await;
    let opts = RequestOptions::default().with_timeout(Duration::from_millis(150));
    let call = tokio::spawn(async move { client.call_tool_with("slow", json!({}), opts).await });
    let id = expect_request(
        &mut fake,
        "tools/call",
        json!({"name": "slow", "arguments": {}}),
    )
    .await;
    let cancelled = fake.recv().await;
    assert_eq!(
        cancelled,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "timeout"}})
    );
    match call.await.unwrap() {
        Err(ClientError::Request(RequestError::Timeout { method, .. })) => {
            assert_eq!(method, "tools/call")
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    // UT-4: a late answer after the cancellation is ignored quietly.
    reply(&mut fake, &id, json!({"content": []})).await;
    fake.sync().await;
}

/// On the paused clock: the timeouts under test are tokio timers.
#[tokio::test(start_paused = true)]
async fn progress_resets_the_timeout() {
    let (client, mut fake) = connect(builder(), "2025-11-25", all_server_caps()).await;
    let opts = RequestOptions::default()
        .with_timeout(Duration::from_millis(500))
        .reset_on_progress(Duration::from_secs(10))
        .with_progress(|_| {});
    let call = tokio::spawn(async move { client.call_tool_with("slow", json!({}), opts).await });
    let req = fake.recv().await;
    let token = req["params"]["_meta"]["progressToken"].clone();
    let started = Instant::now();
    for i in 1..=10 {
        // Not a wait: progress paced across the timeout it resets (the pacing is the scenario).
        tokio::time::sleep(Duration::from_millis(100)).await;
        progress(&mut fake, &token, f64::from(i), None).await;
    }
    assert!(
        started.elapsed() >= Duration::from_millis(1000),
        "well past one timeout"
    );
    reply(&mut fake, &req["id"], json!({"content": []})).await;
    call.await.unwrap().expect("progress kept the call alive");
}

/// On the paused clock: the timeouts under test are tokio timers.
#[tokio::test(start_paused = true)]
async fn the_hard_maximum_applies_despite_progress() {
    let (client, mut fake) = connect(builder(), "2025-11-25", all_server_caps()).await;
    let opts = RequestOptions::default()
        .with_timeout(Duration::from_millis(300))
        .reset_on_progress(Duration::from_millis(700))
        .with_progress(|_| {});
    let started = Instant::now();
    let call = tokio::spawn(async move { client.call_tool_with("slow", json!({}), opts).await });
    let req = fake.recv().await;
    let token = req["params"]["_meta"]["progressToken"].clone();
    let mut cancelled = None;
    for i in 1..=20 {
        // Not a wait: progress paced across the timeout (the pacing is the scenario).
        tokio::time::sleep(Duration::from_millis(100)).await;
        if call.is_finished() {
            break;
        }
        progress(&mut fake, &token, f64::from(i), None).await;
    }
    if let Ok(f) = tokio::time::timeout(Duration::from_millis(500), fake.recv()).await {
        cancelled = Some(f);
    }
    let r = call.await.unwrap();
    let elapsed = started.elapsed();
    assert!(
        matches!(r, Err(ClientError::Request(RequestError::Timeout { .. }))),
        "{r:?}"
    );
    assert!(
        elapsed >= Duration::from_millis(650) && elapsed < Duration::from_millis(1500),
        "ended at the hard maximum: {elapsed:?}"
    );
    let cancelled = cancelled.expect("notifications/cancelled was sent");
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], req["id"]);
}

#[tokio::test]
async fn cancelling_the_token_sends_cancelled() {
    let (client, mut fake) = connect(builder(), "2025-11-25", all_server_caps()).await;
    let token = CancellationToken::new();
    let opts = RequestOptions::default().with_cancel(token.clone());
    let call =
        tokio::spawn(async move { client.call_tool_with("slow", json!({"n": 1}), opts).await });
    let id = expect_request(
        &mut fake,
        "tools/call",
        json!({"name": "slow", "arguments": {"n": 1}}),
    )
    .await;
    token.cancel();
    assert_eq!(
        fake.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "cancelled by the caller"}})
    );
    assert!(matches!(
        call.await.unwrap(),
        Err(ClientError::Request(RequestError::Cancelled))
    ));
}

#[tokio::test]
async fn options_apply_to_the_generic_request_too() {
    let (client, mut fake) = connect(builder(), "2025-11-25", all_server_caps()).await;
    let token = CancellationToken::new();
    let opts = RequestOptions::default().with_cancel(token.clone());
    let call = tokio::spawn(async move {
        client
            .request::<_, Value>("resources/read", json!({"uri": "file:///big"}), opts)
            .await
    });
    let id = expect_request(&mut fake, "resources/read", json!({"uri": "file:///big"})).await;
    token.cancel();
    let n = fake.recv().await;
    assert_eq!(n["params"]["requestId"], id);
    assert!(call.await.unwrap().is_err());
}
