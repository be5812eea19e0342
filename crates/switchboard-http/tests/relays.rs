//! The relays beside this transport: the stdio bridge (a stdio server behind this endpoint, one
//! child per session) and, with the `proxy` feature, the reverse proxy. Every frame reaches the
//! tap exactly as it travelled, with its direction and session, and is passed on unchanged.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::{Arc, Mutex};

use support::*;
use switchboard_http::{HttpConfig, stdio_bridge};
use switchboard_test_support::logs::count_logs;
use switchboard_transport::{FrameTap, TappedFrame};
use switchboard_types::{Direction, methods};

type Seen = Arc<Mutex<Vec<(Direction, Option<String>, String)>>>;

fn tap() -> (Seen, Arc<dyn FrameTap>) {
    let seen: Seen = Arc::default();
    let s = seen.clone();
    let tap = move |f: TappedFrame<'_>| {
        s.lock()
            .unwrap()
            .push((f.direction, f.session.map(str::to_owned), f.text.to_owned()));
    };
    (seen, Arc::new(tap))
}

/// A stdio server in `sh`: answers initialize, and request 2 with a progress notification
/// (token `p2`, as `call_body` sets it) before its result.
fn sh_server() -> tokio::process::Command {
    let (init, progress) = (methods::INITIALIZE, methods::NOTIFICATIONS_PROGRESS);
    let script = format!(
        r#"while IFS= read -r line; do
  case "$line" in
    *'"method":"{init}"'*) echo '{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":"2025-11-25","capabilities":{{}},"serverInfo":{{"name":"sh","version":"1"}}}}}}' ;;
    *'"id":2'*) echo '{{"jsonrpc":"2.0","method":"{progress}","params":{{"progressToken":"p2","progress":1}}}}'
                echo '{{"jsonrpc":"2.0","id":2,"result":{{"ok":true}}}}' ;;
  esac
done"#
    );
    let mut c = tokio::process::Command::new("sh");
    c.args(["-c", &script]);
    c
}

#[tokio::test]
async fn the_stdio_bridge_relays_a_session_to_its_child_and_taps_every_frame() {
    let (seen, tap) = tap();
    let svc = stdio_bridge(sh_server, tap, HttpConfig::default());
    let init = init_body(1, "2025-11-25");
    let resp = oneshot(&svc, post(None, init.clone())).await;
    assert_eq!(resp.status(), 200);
    let sid = resp.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let events = parse_sse(&body_text(resp).await);
    assert_eq!(
        events.last().unwrap().json()["result"]["serverInfo"]["name"],
        "sh"
    );
    let resp = oneshot(&svc, post(Some(&sid), initialized_body())).await;
    assert_eq!(resp.status(), 202);
    // The progress notification rides the POST stream of the request whose token it names.
    let call = call_body(2, "anything", serde_json::json!({}));
    let resp = oneshot(&svc, post(Some(&sid), call.clone())).await;
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let events: Vec<_> = parse_sse(&body_text(resp).await)
        .into_iter()
        .filter(|e| e.data.as_deref().is_some_and(|d| !d.is_empty()))
        .collect();
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0].json()["method"], methods::NOTIFICATIONS_PROGRESS);
    assert_eq!(events[1].json()["id"], 2);
    let seen = seen.lock().unwrap().clone();
    let c2s: Vec<&str> = seen
        .iter()
        .filter(|f| f.0 == Direction::ClientToServer)
        .map(|f| f.2.as_str())
        .collect();
    assert_eq!(
        c2s,
        [init.as_str(), initialized_body().as_str(), call.as_str()]
    );
    assert_eq!(
        seen.iter()
            .filter(|f| f.0 == Direction::ServerToClient)
            .count(),
        3
    );
    assert!(seen.iter().all(|f| f.1.as_deref() == Some(sid.as_str())));
}

#[tokio::test]
async fn a_child_answering_an_unknown_1_mib_id_is_logged_with_the_id_cut() {
    let (counter, _guard) = count_logs(tracing::Level::TRACE);
    let init = methods::INITIALIZE;
    // Before its answer to request 2, the child answers a request nobody sent, with an id of
    // 1 MiB: no stream takes it, and the line saying so shows 256 bytes of the id.
    let script = format!(
        r#"big=$(head -c 1048576 /dev/zero | tr '\0' x)
while IFS= read -r line; do
  case "$line" in
    *'"method":"{init}"'*) echo '{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":"2025-11-25","capabilities":{{}},"serverInfo":{{"name":"sh","version":"1"}}}}}}' ;;
    *'"id":2'*) printf '{{"jsonrpc":"2.0","id":"%s","result":{{}}}}\n' "$big"
                echo '{{"jsonrpc":"2.0","id":2,"result":{{"ok":true}}}}' ;;
  esac
done"#
    );
    let child = move || {
        let mut c = tokio::process::Command::new("sh");
        c.args(["-c", &script]);
        c
    };
    let (_, tap) = tap();
    let svc = stdio_bridge(child, tap, HttpConfig::default());
    let resp = oneshot(&svc, post(None, init_body(1, "2025-11-25"))).await;
    let sid = resp.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    body_text(resp).await;
    oneshot(&svc, post(Some(&sid), initialized_body())).await;
    let before = counter.bytes();
    let resp = oneshot(
        &svc,
        post(Some(&sid), call_body(2, "anything", serde_json::json!({}))),
    )
    .await;
    let events = parse_sse(&body_text(resp).await);
    assert_eq!(
        events.last().unwrap().json()["id"],
        2,
        "the session goes on"
    );
    let bytes = counter.bytes() - before;
    assert!(bytes < 4096, "{bytes} bytes of log for a 1 MiB id");
}

#[cfg(feature = "proxy")]
mod proxy {
    use super::*;
    use switchboard_http::proxy;

    #[test]
    fn only_http_upstreams_are_accepted() {
        assert!(proxy::upstream_url("http://127.0.0.1:1/mcp").is_ok());
        for bad in ["https://example.com/mcp", "not a url", "ftp://x/"] {
            assert!(proxy::upstream_url(bad).is_err(), "{bad}");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_proxy_passes_frames_statuses_and_headers_and_taps_each_frame_exactly() {
        let upstream = live(
            &test_server(),
            HttpConfig::default().with_json_response(true),
        )
        .await;
        let (seen, tap) = tap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let url = format!("http://{}/mcp", upstream.addr);
        tokio::spawn(async move {
            proxy::serve(listener, &url, tap, proxy::ProxyConfig::default()).await
        });
        // Odd spacing: the tap must see it as sent.
        let init = init_body(1, "2025-03-26").replace(",", " ,  ");
        let resp = send(addr, wire_post(addr, None, init.clone())).await;
        assert_eq!(resp.status(), 200);
        let sid = resp.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let answer = String::from_utf8(
            http_body_util::BodyExt::collect(resp.into_body())
                .await
                .unwrap()
                .to_bytes()
                .to_vec(),
        )
        .unwrap();
        // A batch is tapped entry by entry, each entry's exact text.
        let batch = "[ {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"x/a\"} ,\n {\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"x/b\"} ]";
        let resp = send(addr, wire_post(addr, Some(&sid), batch.to_owned())).await;
        assert!(resp.status().is_success() || resp.status().is_client_error());
        // Elsewhere than the endpoint is 404, from the proxy itself.
        let mut elsewhere = wire_post(addr, None, "{}".to_owned());
        *elsewhere.uri_mut() = "/elsewhere".parse().unwrap();
        assert_eq!(send(addr, elsewhere).await.status(), 404);
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen[0], (Direction::ClientToServer, None, init));
        assert_eq!(
            seen[1],
            (Direction::ServerToClient, Some(sid.clone()), answer)
        );
        assert_eq!(seen[2].2, r#"{"jsonrpc":"2.0","id":7,"method":"x/a"}"#);
        assert_eq!(seen[3].2, r#"{"jsonrpc":"2.0","id":8,"method":"x/b"}"#);
        assert_eq!(seen[3].1.as_deref(), Some(sid.as_str()));
    }

    /// An upstream that answers with what it was sent (`host`, `x-forwarded-host`, `origin`),
    /// slowly when `x-mode: slow`, with 300 bytes when `x-mode: big`; counts its requests.
    async fn echo_upstream() -> (std::net::SocketAddr, Arc<std::sync::atomic::AtomicUsize>) {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let hits = Arc::new(AtomicUsize::new(0));
        let count = hits.clone();
        let app = axum::Router::new().route(
            "/mcp",
            axum::routing::any(move |headers: http::HeaderMap| {
                let count = count.clone();
                async move {
                    count.fetch_add(1, Ordering::SeqCst);
                    let get = |name: &str| {
                        headers
                            .get(name)
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or("")
                            .to_owned()
                    };
                    if get("x-mode") == "sse" {
                        let big = format!(
                            r#"{{"jsonrpc":"2.0","method":"n","params":{{"pad":"{}"}}}}"#,
                            "x".repeat(300)
                        );
                        let small = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
                        return http::Response::builder()
                            .header("content-type", "text/event-stream")
                            .body(axum::body::Body::from(format!(
                                "id: 1\ndata: {big}\n\nid: 2\ndata: {small}\n\n"
                            )))
                            .unwrap();
                    }
                    let body = match get("x-mode").as_str() {
                        "slow" => {
                            // Not a wait: a slow upstream (its answer takes 600 ms).
                            tokio::time::sleep(std::time::Duration::from_millis(600)).await;
                            "{}".to_owned()
                        }
                        "big" => format!("{{\"pad\":\"{}\"}}", "x".repeat(300)),
                        _ => serde_json::json!({
                            "host": get("host"),
                            "forwarded": get("x-forwarded-host"),
                            "origin": get("origin"),
                        })
                        .to_string(),
                    };
                    http::Response::builder()
                        .header("content-type", "application/json")
                        .body(axum::body::Body::from(body))
                        .unwrap()
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        (addr, hits)
    }

    async fn start_proxy(
        upstream: std::net::SocketAddr,
        config: impl FnOnce(std::net::SocketAddr) -> proxy::ProxyConfig,
    ) -> std::net::SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let url = format!("http://{upstream}/mcp");
        let (_, tap) = tap();
        let config = config(addr);
        tokio::spawn(async move { proxy::serve(listener, &url, tap, config).await });
        addr
    }

    fn request(
        addr: std::net::SocketAddr,
        host: &str,
        extra: &[(&str, &str)],
    ) -> http::Request<http_body_util::Full<bytes::Bytes>> {
        let mut b = http::Request::post("/mcp")
            .header("host", host)
            .header("accept", ACCEPT_BOTH)
            .header("content-type", "application/json");
        for (k, v) in extra {
            b = b.header(*k, *v);
        }
        let _ = addr;
        b.body(http_body_util::Full::new(bytes::Bytes::from_static(b"{}")))
            .unwrap()
    }

    async fn json_of(resp: http::Response<hyper::body::Incoming>) -> serde_json::Value {
        let bytes = http_body_util::BodyExt::collect(resp.into_body())
            .await
            .unwrap()
            .to_bytes();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_proxy_checks_host_and_origin_then_sends_the_upstreams_own_host() {
        use std::sync::atomic::Ordering;
        let (upstream, hits) = echo_upstream().await;
        let addr = start_proxy(upstream, proxy::ProxyConfig::for_bind_address).await;
        let me = addr.to_string();
        // A DNS-rebinding page: its Host names the attacker's domain.
        let resp = send(addr, request(addr, "evil.example:80", &[])).await;
        assert_eq!(resp.status(), 403);
        assert_eq!(
            json_of(resp).await["error"]["data"]["reason"],
            "host_not_allowed"
        );
        let resp = send(
            addr,
            request(addr, &me, &[("origin", "http://evil.example")]),
        )
        .await;
        assert_eq!(resp.status(), 403);
        assert_eq!(
            json_of(resp).await["error"]["data"]["reason"],
            "origin_not_allowed"
        );
        assert_eq!(
            hits.load(Ordering::SeqCst),
            0,
            "nothing reached the upstream"
        );
        // Allowed: the upstream gets its own authority as Host, the client's as
        // X-Forwarded-Host, and the Origin unchanged.
        let resp = send(
            addr,
            request(addr, &me, &[("origin", "http://localhost:5173")]),
        )
        .await;
        assert_eq!(resp.status(), 200);
        let seen = json_of(resp).await;
        assert_eq!(seen["host"], upstream.to_string());
        assert_eq!(seen["forwarded"], me);
        assert_eq!(seen["origin"], "http://localhost:5173");
    }

    /// Finding 9 of issue 25, on `record` (the recording proxy): two `Host` headers are
    /// refused 400 (RFC 9112 §3.2), and nothing reaches the upstream.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn finding_9_the_proxy_refuses_two_host_headers_400() {
        use std::sync::atomic::Ordering;
        let (upstream, hits) = echo_upstream().await;
        let addr = start_proxy(upstream, proxy::ProxyConfig::for_bind_address).await;
        for second in ["evil.example", "localhost"] {
            let head = format!(
                "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nHost: {second}\r\nAccept: {ACCEPT_BOTH}\r\nContent-Type: application/json"
            );
            let (status, answer) = raw_exchange(addr, &head, "{}").await;
            assert_eq!(status, 400, "second Host {second}: {answer}");
            assert!(answer.contains("repeated_header"), "{answer}");
        }
        assert_eq!(
            hits.load(Ordering::SeqCst),
            0,
            "nothing reached the upstream"
        );
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: {ACCEPT_BOTH}\r\nContent-Type: application/json"
        );
        assert_eq!(raw_exchange(addr, &head, "{}").await.0, 200);
        assert_eq!(hits.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_proxy_bounds_bodies_answers_and_requests_at_once() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (upstream, hits) = echo_upstream().await;
        let addr = start_proxy(upstream, |a| {
            proxy::ProxyConfig::for_bind_address(a)
                .with_max_concurrent(1)
                .with_max_request_bytes(1024)
                .with_max_answer_bytes(150)
                .with_connection_limits(
                    switchboard_http::ConnectionLimits::default()
                        .with_body_read_timeout(Some(std::time::Duration::from_millis(300))),
                )
        })
        .await;
        let me = addr.to_string();
        // One request in flight takes the only place: the next gets 503, then it is free again.
        let slow = tokio::spawn({
            let me = me.clone();
            async move {
                send(addr, request(addr, &me, &[("x-mode", "slow")]))
                    .await
                    .status()
            }
        });
        // It holds its place once it reaches the upstream (which answers it 600 ms later).
        switchboard_test_support::wait::until("the slow request reached the upstream", || {
            hits.load(std::sync::atomic::Ordering::SeqCst) == 1
        })
        .await;
        let busy = send(addr, request(addr, &me, &[])).await;
        assert_eq!(busy.status(), 503);
        assert_eq!(busy.headers()["retry-after"], "1");
        assert_eq!(slow.await.unwrap(), 200);
        assert_eq!(send(addr, request(addr, &me, &[])).await.status(), 200);
        // A JSON answer over its bound: 502.
        let big = send(addr, request(addr, &me, &[("x-mode", "big")])).await;
        assert_eq!(big.status(), 502);
        // A body over its bound: 413.
        let mut req = request(addr, &me, &[]);
        *req.body_mut() = http_body_util::Full::new(bytes::Bytes::from(vec![b' '; 2048]));
        assert_eq!(send(addr, req).await.status(), 413);
        // A body that stalls: 408, and the connection closes.
        let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nhost: {me}\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{{\"jsonrpc\""
        );
        tcp.write_all(head.as_bytes()).await.unwrap();
        let mut answer = String::new();
        tokio::time::timeout(
            std::time::Duration::from_secs(3),
            tcp.read_to_string(&mut answer),
        )
        .await
        .expect("answered and closed in time")
        .unwrap();
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        assert!(answer.contains("body_timeout"), "{answer}");
        // The proxy still serves.
        assert_eq!(send(addr, request(addr, &me, &[])).await.status(), 200);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_sse_event_over_the_tap_bound_is_relayed_but_not_tapped() {
        let (upstream, _) = echo_upstream().await;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let url = format!("http://{upstream}/mcp");
        let (seen, tap) = tap();
        let config = proxy::ProxyConfig::for_bind_address(addr).with_max_tapped_event_bytes(100);
        tokio::spawn(async move { proxy::serve(listener, &url, tap, config).await });
        let me = addr.to_string();
        let resp = send(addr, request(addr, &me, &[("x-mode", "sse")])).await;
        assert_eq!(resp.status(), 200);
        let body = http_body_util::BodyExt::collect(resp.into_body())
            .await
            .unwrap()
            .to_bytes();
        let body = String::from_utf8(body.to_vec()).unwrap();
        // The client gets both events whole.
        assert!(body.contains(&"x".repeat(300)), "{body}");
        assert!(body.contains(r#""id":1,"result":{}"#), "{body}");
        // The tap got the POST's body and the small event only.
        let seen = seen.lock().unwrap().clone();
        let from_server: Vec<_> = seen
            .iter()
            .filter(|(d, _, _)| *d == Direction::ServerToClient)
            .collect();
        assert_eq!(from_server.len(), 1, "{seen:?}");
        assert_eq!(from_server[0].2, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    }
}
