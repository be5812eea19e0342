//! The load tool over Streamable HTTP, run as a program against a minimal hyper server in this
//! test (127.0.0.1, an ephemeral port) that answers either JSON bodies or SSE streams, keeps
//! sessions by `Mcp-Session-Id`, and checks the headers every request must carry; it also
//! answers stateless 2026-07-28 calls (no session, the envelope in `_meta` mirrored by headers).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

const LOAD: &str = env!("CARGO_BIN_EXE_switchboard-load");

/// What the test server saw.
#[derive(Default)]
struct State {
    sse: bool,
    live: Mutex<HashSet<String>>,
    opened: AtomicU64,
    deleted: AtomicU64,
    calls: AtomicU64,
    /// Requests refused for a missing or wrong header.
    refused: AtomicU64,
    /// Live sessions allowed (0: no bound); past it, initialize is answered 503.
    max_sessions: usize,
    /// 2026-07-28 calls answered.
    modern: AtomicU64,
    /// 2026-07-28: every call with an even id gets an `input_required` result.
    input_required: bool,
    /// Every request's method, `Authorization` and `DPoP` headers.
    credentials: Mutex<Vec<Credentials>>,
}

/// A request's method, `Authorization` and `DPoP` headers.
type Credentials = (Method, Option<String>, Option<String>);

/// Serves on an ephemeral port until the test ends; returns the URL and the state.
async fn serve(sse: bool) -> (String, Arc<State>) {
    serve_with(State {
        sse,
        ..State::default()
    })
    .await
}

async fn serve_with(state: State) -> (String, Arc<State>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let state = Arc::new(state);
    let st = state.clone();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let st = st.clone();
            tokio::spawn(async move {
                let svc = service_fn(move |req| handle(req, st.clone()));
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tcp), svc)
                    .await;
            });
        }
    });
    (url, state)
}

fn status(code: StatusCode) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::new()));
    *r.status_mut() = code;
    r
}

async fn handle(
    req: Request<Incoming>,
    st: Arc<State>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (parts, body) = req.into_parts();
    let header = |k: &str| {
        parts
            .headers
            .get(k)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    st.credentials.lock().unwrap().push((
        parts.method.clone(),
        header("authorization"),
        header("dpop"),
    ));
    let session = header("mcp-session-id");
    let known = session
        .as_ref()
        .is_some_and(|s| st.live.lock().unwrap().contains(s));
    if parts.uri.path() != "/mcp" || header("host").is_none() {
        st.refused.fetch_add(1, Ordering::Relaxed);
        return Ok(status(StatusCode::BAD_REQUEST));
    }
    if parts.method == Method::DELETE {
        if !known {
            return Ok(status(StatusCode::NOT_FOUND));
        }
        st.live.lock().unwrap().remove(session.as_deref().unwrap());
        st.deleted.fetch_add(1, Ordering::Relaxed);
        return Ok(status(StatusCode::OK));
    }
    let accept = header("accept").unwrap_or_default();
    if !(accept.contains("application/json") && accept.contains("text/event-stream"))
        || header("content-type").as_deref() != Some("application/json")
    {
        st.refused.fetch_add(1, Ordering::Relaxed);
        return Ok(status(StatusCode::NOT_ACCEPTABLE));
    }
    let body = body.collect().await.unwrap().to_bytes();
    let msg: Value = serde_json::from_slice(&body).unwrap();
    let mut new_session = None;
    if header("mcp-protocol-version").as_deref() == Some("2026-07-28") {
        let meta = &msg["params"]["_meta"];
        let well_formed = session.is_none()
            && msg["method"] == "tools/call"
            && header("mcp-method").as_deref() == Some("tools/call")
            && header("mcp-name").as_deref() == msg["params"]["name"].as_str()
            && meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
            && meta["io.modelcontextprotocol/clientCapabilities"] == json!({});
        if !well_formed {
            st.refused.fetch_add(1, Ordering::Relaxed);
            return Ok(status(StatusCode::BAD_REQUEST));
        }
        st.modern.fetch_add(1, Ordering::Relaxed);
        let result = if st.input_required && msg["id"].as_u64().unwrap().is_multiple_of(2) {
            json!({"resultType": "input_required", "inputRequests": {}})
        } else {
            let a = &msg["params"]["arguments"];
            let sum = a["a"].as_i64().unwrap() + a["b"].as_i64().unwrap();
            json!({"content": [{"type": "text", "text": sum.to_string()}], "resultType": "complete"})
        };
        let answer = json!({"jsonrpc": "2.0", "id": msg["id"], "result": result}).to_string();
        let mut resp = Response::new(Full::new(Bytes::from(answer)));
        resp.headers_mut()
            .insert("content-type", "application/json".parse().unwrap());
        return Ok(resp);
    }
    let result = match msg["method"].as_str() {
        Some("initialize") => {
            if st.max_sessions > 0 && st.live.lock().unwrap().len() >= st.max_sessions {
                return Ok(status(StatusCode::SERVICE_UNAVAILABLE));
            }
            let id = format!("s-{}", st.opened.fetch_add(1, Ordering::Relaxed));
            st.live.lock().unwrap().insert(id.clone());
            new_session = Some(id);
            json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "t", "version": "0"}})
        }
        _ if !known || header("mcp-protocol-version").as_deref() != Some("2025-11-25") => {
            st.refused.fetch_add(1, Ordering::Relaxed);
            return Ok(status(if known {
                StatusCode::BAD_REQUEST
            } else {
                StatusCode::NOT_FOUND
            }));
        }
        _ if msg.get("id").is_none() => return Ok(status(StatusCode::ACCEPTED)),
        Some("tools/call") => {
            st.calls.fetch_add(1, Ordering::Relaxed);
            let a = &msg["params"]["arguments"];
            let sum = a["a"].as_i64().unwrap() + a["b"].as_i64().unwrap();
            json!({"content": [{"type": "text", "text": sum.to_string()}]})
        }
        _ => return Ok(status(StatusCode::BAD_REQUEST)),
    };
    let answer = json!({"jsonrpc": "2.0", "id": msg["id"], "result": result}).to_string();
    let (ctype, text) = if st.sse {
        // A priming event, a notification and a server request come before the answer.
        let note = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#;
        let ping = r#"{"jsonrpc":"2.0","id":"srv-1","method":"ping"}"#;
        let text = format!(
            "id: 0\r\ndata:\r\n\r\n: comment\nevent: message\ndata: {note}\n\ndata: {ping}\n\nid: 1\nevent: message\ndata: {answer}\n\n"
        );
        ("text/event-stream", text)
    } else {
        ("application/json", answer)
    };
    let mut resp = Response::new(Full::new(Bytes::from(text)));
    resp.headers_mut()
        .insert("content-type", ctype.parse().unwrap());
    if let Some(id) = new_session {
        resp.headers_mut()
            .insert("mcp-session-id", id.parse().unwrap());
    }
    Ok(resp)
}

/// Runs the load tool; returns its exit code, its JSON report and its stderr.
async fn load(args: &[&str]) -> (i32, Value, String) {
    let out = tokio::process::Command::new(LOAD)
        .args(args)
        .output()
        .await
        .unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (
        out.status.code().unwrap_or(-1),
        report,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

async fn calls_with_a_session_per_connection(sse: bool) {
    let (url, st) = serve(sse).await;
    let (code, r, err) = load(&[
        "--url", &url, "-n", "300", "--warmup", "20", "-k", "4", "--json",
    ])
    .await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["transport"], "http");
    assert_eq!(r["calls"], 300, "{r}");
    assert_eq!(r["errors"], 0, "{r}");
    assert_eq!(r["sessions"], 4, "{r}");
    assert!(r["calls_per_sec"].as_f64().unwrap() > 0.0);
    assert!(r["p999_us"].as_u64().is_some(), "{r}");
    assert_eq!(st.calls.load(Ordering::Relaxed), 320);
    assert_eq!(st.opened.load(Ordering::Relaxed), 4);
    assert_eq!(
        st.deleted.load(Ordering::Relaxed),
        4,
        "sessions are deleted at the end"
    );
    assert_eq!(st.refused.load(Ordering::Relaxed), 0);
    assert!(st.live.lock().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_over_json_bodies() {
    calls_with_a_session_per_connection(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_over_sse_streams() {
    calls_with_a_session_per_connection(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_session_over_k_connections() {
    let (url, st) = serve(true).await;
    let (code, r, err) = load(&[
        "--url",
        &url,
        "-n",
        "200",
        "-k",
        "8",
        "--one-session",
        "--json",
    ])
    .await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["calls"], 200, "{r}");
    assert_eq!(r["one_session"], true);
    assert_eq!(r["sessions"], 1);
    assert_eq!(st.opened.load(Ordering::Relaxed), 1);
    assert_eq!(st.deleted.load(Ordering::Relaxed), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_mode_opens_and_deletes() {
    let (url, st) = serve(false).await;
    let pid = std::process::id().to_string();
    let args = [
        "--url",
        &url,
        "--mode",
        "sessions",
        "--sessions",
        "200",
        "-k",
        "4",
        "--pid",
        &pid,
        "--json",
    ];
    let (code, r, err) = load(&args).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["mode"], "sessions");
    assert_eq!(r["sessions"], 200, "{r}");
    assert_eq!(r["errors"], 0, "{r}");
    for k in [
        "rss_before_kib",
        "rss_after_open_kib",
        "rss_after_delete_kib",
        "peak_rss_kib",
    ] {
        assert!(r[k].as_u64().is_some_and(|v| v > 0), "{k}: {r}");
    }
    assert!(r["bytes_per_session"].as_i64().is_some(), "{r}");
    assert!(r["sessions_per_sec"].as_f64().unwrap() > 0.0, "{r}");
    assert_eq!(st.opened.load(Ordering::Relaxed), 200);
    assert_eq!(st.deleted.load(Ordering::Relaxed), 200);
    assert!(st.live.lock().unwrap().is_empty());
    assert_eq!(st.refused.load(Ordering::Relaxed), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sse_sessions_and_the_readable_block() {
    let (url, st) = serve(true).await;
    let out = tokio::process::Command::new(LOAD)
        .args([
            "--url",
            &url,
            "--mode",
            "sessions",
            "--sessions",
            "20",
            "-k",
            "2",
        ])
        .output()
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("20 opened") && text.contains("no --pid"),
        "{text}"
    );
    assert_eq!(st.deleted.load(Ordering::Relaxed), 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_and_wrong_urls_fail_cleanly() {
    // A port that was just free: connection refused.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (code, _, err) = load(&["--url", &url, "-n", "10", "--max-seconds", "5"]).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("connecting"), "{err}");
    let (code, _, err) = load(&["--url", "https://127.0.0.1/mcp", "-n", "10"]).await;
    assert_eq!(code, 2);
    assert!(err.contains("http://"), "{err}");
    // A wrong path is answered 400: initialize fails, a setup error.
    let (wrong, _) = serve(false).await;
    let (code, _, err) = load(&["--url", &wrong.replace("/mcp", "/other"), "-n", "10"]).await;
    assert_eq!(code, 2, "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_sessions_are_counted_with_the_first_reason() {
    let (url, st) = serve_with(State {
        max_sessions: 10,
        ..State::default()
    })
    .await;
    let args = [
        "--url",
        &url,
        "--mode",
        "sessions",
        "--sessions",
        "25",
        "-k",
        "3",
        "--json",
    ];
    let (code, r, err) = load(&args).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["sessions"], 10, "{r}");
    assert_eq!(r["errors_transport"], 15, "{r}");
    assert!(r["notes"].to_string().contains("503"), "{r}");
    assert_eq!(st.deleted.load(Ordering::Relaxed), 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rounds_with_a_call_each_under_a_session_bound() {
    // The bound equals the sessions of a round: the second round opens only because the first
    // round's sessions were deleted.
    let (url, st) = serve_with(State {
        max_sessions: 30,
        ..State::default()
    })
    .await;
    let pid = std::process::id().to_string();
    let args = [
        "--url",
        &url,
        "--mode",
        "sessions",
        "--sessions",
        "30",
        "--rounds",
        "2",
        "--call",
        "-k",
        "3",
        "--pid",
        &pid,
        "--max-rss-growth-kib",
        "1048576",
        "--json",
    ];
    let (code, r, err) = load(&args).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["errors"], 0, "{r}");
    let rounds: Vec<u64> = r["rounds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["sessions"].as_u64().unwrap())
        .collect();
    assert_eq!(rounds, [30, 30], "{r}");
    assert!(r["rss_growth_kib"].as_i64().is_some(), "{r}");
    assert_eq!(r["over_bound"], false);
    assert_eq!(st.opened.load(Ordering::Relaxed), 60);
    assert_eq!(st.calls.load(Ordering::Relaxed), 60, "one call per session");
    assert_eq!(st.deleted.load(Ordering::Relaxed), 60);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn churn_abandons_sessions_at_its_rate_and_counts_refusals() {
    // This server never reaps: past its bound of 10, every session is refused.
    let (url, st) = serve_with(State {
        max_sessions: 10,
        ..State::default()
    })
    .await;
    let pid = std::process::id().to_string();
    let args = [
        "--url",
        &url,
        "--mode",
        "churn",
        "--sessions",
        "25",
        "--rate",
        "100",
        "--warmup",
        "5",
        "--call",
        "-k",
        "2",
        "--pid",
        &pid,
        "--rss-every-ms",
        "50",
        "--json",
    ];
    let started = std::time::Instant::now();
    let (code, r, err) = load(&args).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(200),
        "25 sessions at 100 a second take a quarter of a second: {:?}",
        started.elapsed()
    );
    assert_eq!(r["mode"], "churn");
    assert_eq!(r["sessions"], 10, "{r}");
    assert_eq!(r["errors_transport"], 15, "{r}");
    assert!(r["notes"].to_string().contains("503"), "{r}");
    assert!(r["rss_baseline_kib"].as_u64().is_some(), "{r}");
    assert!(!r["rss_samples"].as_array().unwrap().is_empty(), "{r}");
    assert_eq!(st.calls.load(Ordering::Relaxed), 10);
    assert_eq!(
        st.deleted.load(Ordering::Relaxed),
        0,
        "abandoned, never deleted"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_2026_calls_carry_the_envelope_and_the_headers() {
    let (url, st) = serve(false).await;
    let (code, r, err) = load(&[
        "--url",
        &url,
        "--protocol",
        "2026-07-28",
        "-n",
        "200",
        "--warmup",
        "10",
        "-k",
        "4",
        "--json",
    ])
    .await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["protocol"], "2026-07-28", "{r}");
    assert_eq!(r["calls"], 200, "{r}");
    assert_eq!(r["errors"], 0, "{r}");
    assert_eq!(
        r["sessions"],
        Value::Null,
        "no sessions in this revision: {r}"
    );
    assert_eq!(st.modern.load(Ordering::Relaxed), 210);
    assert_eq!(st.opened.load(Ordering::Relaxed), 0, "no initialize");
    assert_eq!(st.deleted.load(Ordering::Relaxed), 0, "no DELETE");
    assert_eq!(st.refused.load(Ordering::Relaxed), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_required_results_count_as_errors() {
    let (url, st) = serve_with(State {
        input_required: true,
        ..State::default()
    })
    .await;
    let (code, r, err) = load(&[
        "--url",
        &url,
        "--protocol",
        "2026-07-28",
        "-n",
        "100",
        "--warmup",
        "0",
        "--json",
    ])
    .await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["calls"], 100, "{r}");
    assert_eq!(r["errors_input_required"], 50, "{r}");
    assert_eq!(r["errors"], 50, "{r}");
    assert_eq!(st.refused.load(Ordering::Relaxed), 0);
    // The modes that need sessions or the handshake refuse the stateless revision.
    for args in [&["--mode", "sessions"][..], &["--one-session"][..]] {
        let mut all = vec!["--url", &url, "--protocol", "2026-07-28", "--json"];
        all.extend_from_slice(args);
        let (code, _, err) = load(&all).await;
        assert_eq!(code, 2, "{args:?}: {err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bearer_and_dpop_credentials_go_with_every_request_each_proof_once() {
    let (url, st) = serve(false).await;
    let args = [
        "--url", &url, "-n", "40", "--warmup", "4", "-k", "2", "--json",
    ];
    let (code, r, err) = load(&[&args[..], &["--bearer", "tok"]].concat()).await;
    assert_eq!((code, &r["errors"]), (0, &json!(0)), "{err} {r}");
    // The same token from the environment, where no other user can read it.
    let out = tokio::process::Command::new(LOAD)
        .args(args)
        .env("SWITCHBOARD_LOAD_BEARER", "tok")
        .output()
        .await
        .unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (out.status.code(), &r["errors"]),
        (Some(0), &json!(0)),
        "{r}"
    );
    let seen = std::mem::take(&mut *st.credentials.lock().unwrap());
    // Twice: two initialize, two initialized, 44 calls, two DELETE.
    assert_eq!(seen.len(), 100);
    assert!(
        seen.iter()
            .all(|(_, a, d)| a.as_deref() == Some("Bearer tok") && d.is_none())
    );

    let dir = std::env::temp_dir().join(format!("load-dpop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("proofs");
    let mut text = "bound-token\n".to_owned();
    for i in 0..60 {
        text.push_str(&format!("p{i}\n"));
    }
    text.push_str("DELETE d0\nDELETE d1\n");
    std::fs::write(&file, text).unwrap();
    let proofs = ["--dpop-proofs", file.to_str().unwrap()];
    let (code, r, err) = load(&[&args[..], &proofs].concat()).await;
    assert_eq!((code, &r["errors"]), (0, &json!(0)), "{err} {r}");
    let seen = std::mem::take(&mut *st.credentials.lock().unwrap());
    assert_eq!(seen.len(), 50);
    assert!(
        seen.iter()
            .all(|(_, a, _)| a.as_deref() == Some("DPoP bound-token"))
    );
    let mut posts: Vec<String> = seen
        .iter()
        .filter(|(m, ..)| m == Method::POST)
        .map(|(_, _, d)| d.clone().unwrap())
        .collect();
    posts.sort_by_key(|p| p[1..].parse::<u32>().unwrap());
    let first_48: Vec<String> = (0..48).map(|i| format!("p{i}")).collect();
    assert_eq!(posts, first_48, "each POST proof once, in the file's order");
    let mut deletes: Vec<_> = seen
        .iter()
        .filter(|(m, ..)| m == Method::DELETE)
        .map(|(_, _, d)| d.clone().unwrap())
        .collect();
    deletes.sort();
    assert_eq!(deletes, ["d0", "d1"]);

    // Too few proofs: the calls past them fail, and the report says why.
    std::fs::write(&file, "bound-token\np0\np1\np2\np3\np4\np5\np6\np7\n").unwrap();
    let (_, r, err) = load(&[&args[..], &proofs].concat()).await;
    assert!(r["errors"].as_u64().unwrap() > 0, "{err} {r}");
    assert!(
        r.to_string()
            .contains("more than the 8 DPoP proofs given for POST"),
        "{r}"
    );

    // A file past the bound (64 MiB) is refused before anything is sent.
    let big = std::fs::File::create(&file).unwrap();
    big.set_len((64 << 20) + 1).unwrap();
    let before = st.credentials.lock().unwrap().len();
    let (code, _, err) = load(&[&args[..], &proofs].concat()).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is over 67108864 bytes"), "{err}");
    assert_eq!(st.credentials.lock().unwrap().len(), before);
    std::fs::remove_dir_all(&dir).unwrap();
}
