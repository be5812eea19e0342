//! The security probes can fail: a deliberately careless server, written here with axum, breaks
//! one rule of each probe family, and each family's test asserts that its probe reports the
//! failure (a probe that cannot fail would be a defect). The careless server accepts a foreign
//! Origin and Host, takes the first of two headers, reads `"Method"` as `"method"`, reads any
//! body to its end, issues a session id with a refused initialize, numbers its sessions 1, 2, 3
//! and never ends them, accepts any bearer token (and answers 401 with a stack trace), and
//! completes a 2026-07-28 request whatever requestState comes back.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use switchboard_check::{Checker, Report, Target, Verdict};

#[derive(Default)]
struct Careless {
    /// Answer 401 (with a Python stack trace in the body) to a request without a bearer token;
    /// any token at all is accepted.
    auth: bool,
    next: AtomicU64,
}

/// The value of the first key that equals `key` ignoring case (the flaw of a folding parser).
fn folded<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.as_object()?
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, v)| v)
}

fn reply(status: StatusCode, body: Value, session: Option<String>) -> Response {
    let mut r = (
        status,
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response();
    if let Some(s) = session {
        r.headers_mut().insert("mcp-session-id", s.parse().unwrap());
    }
    r
}

async fn mcp(
    State(s): State<Arc<Careless>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    // A token in the query string is as good as one in the header here.
    let bearer = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("Bearer "))
        || uri.query().is_some_and(|q| q.contains("access_token="));
    if s.auth && !bearer {
        return (
            StatusCode::UNAUTHORIZED,
            [("www-authenticate", "Bearer")],
            "Traceback (most recent call last):\n  File \"/srv/app/auth.py\", line 7, in check\n",
        )
            .into_response();
    }
    let json_type = headers
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    let msg: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let id = msg.get("id").cloned().unwrap_or(Value::Null);
    let method = folded(&msg, "method").and_then(Value::as_str).unwrap_or("");
    let result = |r: Value| json!({"jsonrpc": "2.0", "id": id, "result": r});
    match method {
        "initialize" => {
            let sid = s.next.fetch_add(1, Ordering::SeqCst).to_string();
            if !json_type {
                // Refused, yet a session id comes with the refusal.
                return reply(StatusCode::UNSUPPORTED_MEDIA_TYPE, json!({}), Some(sid));
            }
            reply(
                StatusCode::OK,
                result(
                    json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "careless", "version": "1"}}),
                ),
                Some(sid),
            )
        }
        "server/discover" => reply(
            StatusCode::OK,
            result(
                json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}}, "serverInfo": {"name": "careless", "version": "1"}}),
            ),
            None,
        ),
        "tools/call" if msg.pointer("/params/requestState").is_none() => reply(
            StatusCode::OK,
            result(
                json!({"resultType": "input_required", "requestState": "state-1",
                "inputRequests": {"name": {"method": "elicitation/create",
                    "params": {"message": "name?", "requestedSchema": {"type": "object"}}}}}),
            ),
            None,
        ),
        "tools/call" => reply(
            StatusCode::OK,
            result(json!({"resultType": "complete", "content": []})),
            None,
        ),
        "" => StatusCode::ACCEPTED.into_response(),
        _ => {
            // The first Mcp-Session-Id only; any known number is a session.
            let known = headers
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse::<u64>().ok())
                .is_some_and(|n| n < s.next.load(Ordering::SeqCst));
            if !known && s.next.load(Ordering::SeqCst) > 0 && !method.starts_with("notifications/")
            {
                return reply(StatusCode::NOT_FOUND, json!({}), None);
            }
            if id.is_null() {
                return StatusCode::ACCEPTED.into_response();
            }
            reply(StatusCode::OK, result(json!({})), None)
        }
    }
}

/// Serves a careless server on a thread of its own (the tests' runtimes come and go).
fn careless(auth: bool) -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let state = Arc::new(Careless {
                auth,
                next: AtomicU64::new(1),
            });
            let app = Router::new()
                .route("/mcp", post(mcp).delete(|| async { StatusCode::OK }))
                .layer(DefaultBodyLimit::disable())
                .with_state(state);
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(format!("http://{}/mcp", listener.local_addr().unwrap()))
                .unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    rx.recv().unwrap()
}

/// The security report against the careless server without authorization (made once).
fn open_report() -> &'static Report {
    static REPORT: OnceLock<Report> = OnceLock::new();
    REPORT.get_or_init(|| {
        let url = careless(false);
        run(Checker::new(Target::http(url))
            .security()
            .with_input_tool("ask"))
    })
}

/// The report against the careless server asking for tokens, with minted ones (made once).
fn auth_report() -> &'static Report {
    static REPORT: OnceLock<Report> = OnceLock::new();
    REPORT.get_or_init(|| {
        let url = careless(true);
        let key = switchboard_test_support::issuer::TestKey::es256("k1");
        run(Checker::new(Target::http(url)).security().with_issuer_key(
            &key.private_key_pem(),
            "http://127.0.0.1:9",
            Some("k1"),
        ))
    })
}

fn run(checker: Checker) -> Report {
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(
                checker
                    .with_timeout(std::time::Duration::from_secs(3))
                    .run(),
            )
            .expect("the probes run")
    })
    .join()
    .unwrap()
}

fn assert_fails(report: &Report, names: &[&str]) {
    for name in names {
        let r = report
            .get(name)
            .unwrap_or_else(|| panic!("{name} did not run:\n{report}"));
        assert_eq!(r.outcome, Verdict::Fail, "{name}:\n{report}");
        assert!(
            r.detail.contains("sent"),
            "the detail shows what was sent: {r}"
        );
    }
}

#[test]
fn dns_rebinding_probes_fail_on_a_server_taking_any_origin_and_host() {
    assert_fails(
        open_report(),
        &[
            "security/dns-rebinding/host",
            "security/dns-rebinding/origin",
        ],
    );
}

#[test]
fn duplicate_header_probes_fail_on_a_server_taking_the_first() {
    assert_fails(
        open_report(),
        &[
            "security/duplicate-headers/host",
            "security/duplicate-headers/session-id",
            "security/duplicate-headers/protocol-version",
        ],
    );
}

#[test]
fn folded_key_probes_fail_on_a_server_folding_case() {
    assert_fails(
        open_report(),
        &[
            "security/folded-keys/method-case",
            "security/folded-keys/method-upper",
            "security/folded-keys/jsonrpc-upper",
        ],
    );
    // Look-alikes are not ASCII case: this server does not fold them.
    assert_eq!(
        open_report()
            .get("security/folded-keys/unicode")
            .unwrap()
            .outcome,
        Verdict::Pass
    );
}

#[test]
fn oversized_body_probes_fail_on_a_server_reading_any_body() {
    assert_fails(
        open_report(),
        &[
            "security/oversized/content-length",
            "security/oversized/chunked",
            "security/oversized/endless",
        ],
    );
}

#[test]
fn session_probes_fail_on_sessions_from_refusals_and_numbered_ids() {
    let report = open_report();
    assert_fails(report, &["security/rejected-session/content-type"]);
    let entropy = report.get("security/session-id/entropy").unwrap();
    assert_eq!(entropy.outcome, Verdict::Fail, "{report}");
    assert!(entropy.detail.contains("sequential"), "{entropy}");
    assert_fails(report, &["security/session-id/ended"]);
}

#[test]
fn request_state_probes_fail_on_a_server_trusting_any_state() {
    assert_fails(
        open_report(),
        &[
            "security/request-state/tampered",
            "security/request-state/forged",
        ],
    );
}

#[test]
fn authorization_probes_fail_on_a_server_taking_any_token() {
    assert_fails(
        auth_report(),
        &[
            "security/auth/garbage-token",
            "security/auth/alg-none",
            "security/auth/hmac-public-key",
            "security/auth/query-token",
            "security/auth/wrong-audience",
            "security/auth/expired",
        ],
    );
    let challenge = auth_report().get("security/auth/challenge").unwrap();
    assert_eq!(challenge.outcome, Verdict::Fail, "{challenge}");
}

#[test]
fn error_hygiene_fails_on_a_stack_trace_in_an_answer() {
    let r = auth_report().get("security/error-hygiene").unwrap();
    assert_eq!(r.outcome, Verdict::Fail, "{r}");
    assert!(r.detail.contains("Traceback"), "{r}");
}

/// A careless server in this process, over the in-memory pair: it reads `"Method"` as
/// `"method"`, needs no `"jsonrpc"`, and answers a line of any size.
fn careless_in_process() -> Target {
    Target::in_process(|| {
        let (ours, mut theirs) = switchboard_jsonrpc::memory::pair();
        tokio::spawn(async move {
            while let Some(text) = theirs.recv_text().await {
                let Ok(frame) = serde_json::from_str::<Value>(&text) else {
                    continue;
                };
                let (Some(id), Some(method)) = (
                    frame.get("id"),
                    folded(&frame, "method").and_then(Value::as_str),
                ) else {
                    continue;
                };
                let result = if method == "initialize" {
                    json!({"protocolVersion": "2025-11-25", "capabilities": {},
                        "serverInfo": {"name": "careless", "version": "1"}})
                } else {
                    json!({})
                };
                let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
                if theirs.send_text(answer.to_string()).await.is_err() {
                    break;
                }
            }
        });
        Ok::<_, std::convert::Infallible>(ours)
    })
}

#[tokio::test]
async fn over_a_raw_connection_folded_keys_and_a_huge_line_fail() {
    let report = Checker::new(careless_in_process())
        .security()
        .with_timeout(std::time::Duration::from_millis(500))
        .run()
        .await
        .expect("the probes run");
    for name in [
        "security/folded-keys/method-case",
        "security/folded-keys/method-upper",
        "security/folded-keys/jsonrpc-upper",
        "security/oversized/line",
    ] {
        let r = report.get(name).unwrap();
        assert_eq!(r.outcome, Verdict::Fail, "{name}:\n{report}");
    }
    // Every HTTP probe is a skip over a raw connection, with its reason.
    let http = report.get("security/dns-rebinding/origin").unwrap();
    assert_eq!(http.outcome, Verdict::Skip);
    assert!(http.detail.contains("an HTTP probe"), "{http}");
    assert_eq!(
        report.results().len(),
        43,
        "one result per probe:\n{report}"
    );
}
