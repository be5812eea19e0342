//! Redirects: followed on the endpoint's origin only, with the method kept; a redirect to
//! another origin is refused with a clear error, and the other origin receives nothing (no
//! session id, no `Authorization`, no configured header).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use http::{HeaderName, HeaderValue};
use serde_json::json;
use support::raw::{self, Reply, redirect, result, sse_head};
use support::{Options, RawClient, connect, eventually, live_with, local_error, test_server, text};
use switchboard_http::HttpConfig;
use switchboard_http_client::HttpClientConfig;

/// A configuration carrying credentials: `Authorization` and a custom API key.
fn with_credentials() -> HttpClientConfig {
    HttpClientConfig::default()
        .with_header(
            http::header::AUTHORIZATION,
            HeaderValue::from_static("Bearer secret-token"),
        )
        .with_header(
            HeaderName::from_static("x-api-key"),
            HeaderValue::from_static("secret-key"),
        )
}

/// Another origin (another port on 127.0.0.1) that records whatever reaches it.
async fn elsewhere() -> raw::RawServer {
    raw::raw(|req| {
        let id = req.rpc_id().unwrap_or(0);
        Reply::close(raw::json(&result(id, json!({"stolen": true}))))
    })
    .await
}

#[tokio::test]
async fn sec_sh_8_a_session_redirected_to_another_origin_sends_it_nothing() {
    let thief = elsewhere().await;
    let server = test_server();
    let options = Options {
        redirect_sessions_to: Some(thief.url.clone()),
        ..Options::default()
    };
    let live = live_with(&server, HttpConfig::default(), options).await;
    // initialize carries no session id and is answered; everything after it is redirected.
    let (session, handle) = connect(&live.url, with_credentials()).await;
    let e = session
        .call_tool("echo", json!({}))
        .await
        .expect_err("a redirect to another origin is refused")
        .to_string();
    assert!(
        e.contains("redirected") && e.contains(&thief.addr.to_string()) && e.contains("origin"),
        "{e}"
    );
    eventually("the GET stream was tried", || {
        live.seen().iter().any(|s| s.method == "GET")
    })
    .await;
    assert!(thief.seen().is_empty(), "{:?}", thief.seen());
    assert!(handle.failure().is_none(), "only the call fails");
    session.close();
    session.closed().await;
    assert!(
        thief.seen().is_empty(),
        "not even the DELETE: {:?}",
        thief.seen()
    );
}

#[tokio::test]
async fn a_refused_redirect_names_its_status_and_target() {
    let thief = elsewhere().await;
    let to = thief.url.clone();
    let srv = raw::raw(move |_| Reply::close(redirect(308, &to))).await;
    let mut c = RawClient::new(&srv.url, with_credentials().with_get_stream(false));
    c.call(1).await;
    let e = local_error(&c.recv().await, 1, "redirect_refused");
    assert_eq!(e["data"]["status"], 308);
    assert_eq!(e["data"]["location"], thief.url);
    assert!(thief.seen().is_empty());
    assert_eq!(srv.count("POST"), 1);
}

#[tokio::test]
async fn an_initialize_redirected_to_another_origin_fails_with_the_reason() {
    let thief = elsewhere().await;
    let to = thief.url.clone();
    let srv = raw::raw(move |_| Reply::close(redirect(307, &to))).await;
    let transport =
        switchboard_http_client::HttpClientTransport::connect(&srv.url, with_credentials())
            .unwrap();
    let handle = transport.handle();
    let r = tokio::time::timeout(support::WAIT, support::client().connect(transport))
        .await
        .expect("fails in time");
    assert!(r.is_err());
    let failure = handle.failure().unwrap();
    assert!(
        failure.contains("POST initialize") && failure.contains("leaves the endpoint's origin"),
        "{failure}"
    );
    assert!(thief.seen().is_empty());
}

#[tokio::test]
async fn a_resumption_redirected_to_another_origin_is_refused() {
    let thief = elsewhere().await;
    let to = thief.url.clone();
    let srv = raw::raw(move |req| {
        if req.method == "GET" {
            return Reply::close(redirect(307, &to));
        }
        let mut reply = sse_head();
        reply.extend_from_slice(b"id: 1-0\nretry: 10\ndata: \n\n");
        Reply::close(reply)
    })
    .await;
    let mut c = RawClient::new(&srv.url, with_credentials().with_get_stream(false));
    c.call(1).await;
    let e = local_error(&c.recv().await, 1, "redirect_refused");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("could not be resumed"),
        "{e}"
    );
    assert_eq!(srv.count("GET"), 1);
    assert!(thief.seen().is_empty());
}

#[tokio::test]
async fn a_post_redirected_with_a_method_change_is_refused() {
    let srv = raw::raw(|_| Reply::close(redirect(302, "/mcp/"))).await;
    let mut c = RawClient::new(&srv.url, HttpClientConfig::default().with_get_stream(false));
    c.call(1).await;
    let e = local_error(&c.recv().await, 1, "redirect_refused");
    assert!(e["message"].as_str().unwrap().contains("as a GET"), "{e}");
    assert_eq!(srv.seen().len(), 1, "nothing followed: {:?}", srv.seen());
}

#[tokio::test]
async fn same_origin_redirects_are_bounded() {
    let srv = raw::raw(|_| Reply::close(redirect(307, "/mcp"))).await;
    let config = HttpClientConfig::default()
        .with_get_stream(false)
        .with_max_redirects(2);
    let mut c = RawClient::new(&srv.url, config);
    c.call(1).await;
    let e = local_error(&c.recv().await, 1, "redirect_refused");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("more than 2 redirects"),
        "{e}"
    );
    assert_eq!(srv.count("POST"), 3, "the request and two followed hops");
}

#[tokio::test]
async fn a_same_origin_redirect_is_followed_with_the_session_and_credentials() {
    let server = test_server();
    let options = Options {
        moved_from: Some("/old"),
        ..Options::default()
    };
    let live = live_with(&server, HttpConfig::default(), options).await;
    let old = format!("http://{}/old", live.addr);
    let (session, handle) = connect(&old, with_credentials()).await;
    let r = session.call_tool("echo", json!({"a": 1})).await.unwrap();
    assert_eq!(text(&r), r#"{"a":1}"#);
    eventually("the GET stream opened at the endpoint", || {
        live.seen()
            .iter()
            .any(|s| s.method == "GET" && s.path == "/mcp")
    })
    .await;
    session.close();
    session.closed().await;
    let sid = handle.session_id().unwrap();
    let seen = live.seen();
    for s in &seen {
        assert_eq!(
            s.authorization.as_deref(),
            Some("Bearer secret-token"),
            "{s:?}"
        );
    }
    let at_endpoint: Vec<_> = seen.iter().filter(|s| s.path == "/mcp").collect();
    for method in ["POST", "GET", "DELETE"] {
        assert!(
            at_endpoint.iter().any(|s| s.method == method),
            "{method} followed: {seen:?}"
        );
    }
    for s in &at_endpoint[1..] {
        assert_eq!(s.session.as_deref(), Some(sid.as_str()), "{s:?}");
    }
    // Each request went to /old first: the client keeps the URL it was given.
    assert_eq!(
        seen.iter().filter(|s| s.path == "/old").count(),
        at_endpoint.len()
    );
}
