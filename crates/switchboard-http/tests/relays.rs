//! The relays beside this transport: the stdio bridge (a stdio server behind this endpoint, one
//! child per session) and, with the `proxy` feature, the reverse proxy. Every frame reaches the
//! tap exactly as it travelled, with its direction and session, and is passed on unchanged.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::{Arc, Mutex};

use support::*;
use switchboard_http::{HttpConfig, stdio_bridge};
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
    let svc = stdio_bridge::service(sh_server, tap, HttpConfig::default());
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
}
