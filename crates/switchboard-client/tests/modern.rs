//! The client in revision 2026-07-28, against a scripted server over the in-memory transport:
//! one test per client rule of SPEC-2026-NOTES (the era probe of §20.3, the envelope of §3,
//! `resultType` of §4, the input-required loop of §8.4, per-request log levels of §11,
//! `subscriptions/listen` of §9, the headers of §14.2 as handed to the transport).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use switchboard_client::{Client, ClientError, Era, EraMode, ListenEvent};
use switchboard_jsonrpc::memory::{MemorySink, MemorySource, MemoryTransport, pair};
use switchboard_jsonrpc::{FrameSink, OutboundFrame, RequestError, Transport, TransportError};
use switchboard_test_support::wait;
use switchboard_types::elicitation::{ElicitAction, ElicitResult};
use switchboard_types::lifecycle::Implementation;
use switchboard_types::logging::LoggingLevel;
use switchboard_types::modern::SubscriptionFilter;
use switchboard_types::{ErrorCode, ProtocolVersion};

mod support;
use support::*;

#[tokio::test]
async fn d26_121_auto_probes_with_discover_and_speaks_modern() {
    let (session, seen) =
        modern_session(|f| result(f, json!({"resultType": "complete", "content": []}))).await;
    assert_eq!(session.era(), Era::Modern);
    assert_eq!(session.protocol_version(), ProtocolVersion::V2026_07_28);
    assert_eq!(session.negotiated().server_info.name, "fake");
    session.list_tools().await.unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen[0]["method"], "server/discover",
        "the probe comes first"
    );
    assert!(requests(&seen, "initialize").is_empty());
    // [D26-8]: every request, the probe included, carries the envelope.
    for f in &seen {
        let meta = &f["params"]["_meta"];
        assert_eq!(meta["io.modelcontextprotocol/protocolVersion"], V, "{f}");
        assert!(
            meta["io.modelcontextprotocol/clientCapabilities"].is_object(),
            "{f}"
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientInfo"]["name"],
            "modern-test"
        );
        assert!(
            meta.get("io.modelcontextprotocol/logLevel").is_none(),
            "no logLevel by default"
        );
        let caps = &meta["io.modelcontextprotocol/clientCapabilities"];
        assert!(caps["elicitation"].is_object() && caps["roots"].is_object());
        assert!(
            caps["roots"].get("listChanged").is_none(),
            "2026-07-28 has no roots.listChanged"
        );
    }
}

#[tokio::test]
async fn d26_121_auto_falls_back_to_initialize_on_any_non_modern_error() {
    for code in [-32601, -32600, -32602, -32603] {
        let (a, b) = pair();
        let seen = server(b, move |f| match f["method"].as_str() {
            Some("server/discover") => error(f, code, Value::Null),
            Some("initialize") => result(f, initialize_result()),
            _ => vec![],
        });
        let session = client().build().connect(a).await.unwrap();
        assert_eq!(session.era(), Era::Legacy, "code {code}");
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen[0]["method"], "server/discover");
        assert_eq!(seen[1]["method"], "initialize");
        assert!(
            seen[1]["params"].get("_meta").is_none(),
            "a legacy request has no envelope"
        );
    }
}

#[tokio::test]
async fn d26_121_auto_falls_back_when_the_probe_gets_no_answer() {
    let (a, b) = pair();
    let seen = server(b, |f| match f["method"].as_str() {
        Some("initialize") => result(f, initialize_result()),
        _ => vec![],
    });
    let session = client()
        .probe_timeout(Duration::from_millis(200))
        .build()
        .connect(a)
        .await
        .unwrap();
    assert_eq!(session.era(), Era::Legacy);
    assert_eq!(requests(&seen.lock().unwrap(), "initialize").len(), 1);
}

#[tokio::test]
async fn a_late_probe_answer_and_a_refused_initialize_still_end_modern() {
    // A slow dual-era server: the probe times out, the server took the connection as modern
    // anyway and refuses initialize with -32022 naming its modern revisions.
    let (a, b) = pair();
    let mut discovers = 0;
    let seen = server(b, move |f| match f["method"].as_str() {
        Some("server/discover") => {
            discovers += 1;
            if discovers == 1 {
                vec![]
            } else {
                result(f, discover())
            }
        }
        Some("initialize") => error(
            f,
            -32022,
            json!({"supported": [V], "requested": "2025-11-25"}),
        ),
        _ => vec![],
    });
    let session = client()
        .probe_timeout(Duration::from_millis(200))
        .build()
        .connect(a)
        .await
        .unwrap();
    assert_eq!(session.era(), Era::Modern);
    let methods: Vec<Value> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|f| f["method"].clone())
        .collect();
    assert_eq!(
        methods,
        [
            json!("server/discover"),
            json!("notifications/cancelled"),
            json!("initialize"),
            json!("server/discover")
        ]
    );
}

#[tokio::test]
async fn d26_27_a_recognised_modern_error_never_falls_back() {
    // -32022 is retried once with a revision from data.supported.
    let (a, b) = pair();
    let mut first = true;
    let seen = server(b, move |f| match f["method"].as_str() {
        Some("server/discover") if std::mem::take(&mut first) => {
            error(f, -32022, json!({"supported": [V], "requested": V}))
        }
        Some("server/discover") => result(f, discover()),
        _ => vec![],
    });
    let session = client().build().connect(a).await.unwrap();
    assert_eq!(session.era(), Era::Modern);
    let seen = seen.lock().unwrap().clone();
    assert_eq!(requests(&seen, "server/discover").len(), 2);
    assert_ne!(seen[0]["id"], seen[1]["id"], "the retry has a new id");
    // -32020 and -32022 without a revision in common: an error, and no initialize.
    for (code, data) in [
        (-32020, json!({})),
        (-32022, json!({"supported": ["2099-01-01"], "requested": V})),
    ] {
        let (a, b) = pair();
        let seen = server(b, move |f| match f["method"].as_str() {
            Some("server/discover") => error(f, code, data.clone()),
            Some("initialize") => result(f, initialize_result()),
            _ => vec![],
        });
        let e = client().build().connect(a).await.unwrap_err();
        assert!(matches!(e, ClientError::Discover(_)), "{code}: {e}");
        assert!(requests(&seen.lock().unwrap(), "initialize").is_empty());
    }
}

#[tokio::test]
async fn pinned_modern_never_falls_back_and_legacy_never_probes() {
    let (a, b) = pair();
    server(b, |f| match f["method"].as_str() {
        Some("server/discover") => error(f, -32601, Value::Null),
        Some("initialize") => result(f, initialize_result()),
        _ => vec![],
    });
    let e = client()
        .era(EraMode::Pin(ProtocolVersion::V2026_07_28))
        .build()
        .connect(a)
        .await
        .unwrap_err();
    assert!(matches!(e, ClientError::Discover(_)), "{e}");
    let (a, b) = pair();
    let seen = server(b, |f| match f["method"].as_str() {
        Some("initialize") => result(f, initialize_result()),
        _ => vec![],
    });
    let session = legacy_session(a).await;
    assert_eq!(session.era(), Era::Legacy);
    assert_eq!(seen.lock().unwrap()[0]["method"], "initialize");
}

#[tokio::test]
async fn d26_20_d26_21_result_type_missing_is_complete_and_unknown_is_invalid() {
    let (session, _) = modern_session(|f| match f["params"]["name"].as_str() {
        Some("plain") => result(f, json!({"content": [{"type": "text", "text": "ok"}]})),
        _ => result(f, json!({"resultType": "bogus", "content": []})),
    })
    .await;
    let r = session.call_tool("plain", json!({})).await.unwrap();
    assert_eq!(r.content.len(), 1);
    let e = session.call_tool("odd", json!({})).await.unwrap_err();
    assert!(
        matches!(&e, ClientError::UnexpectedResultType { result_type, .. } if result_type == "bogus"),
        "{e}"
    );
}

#[tokio::test]
async fn d26_42_to_d26_46_input_required_rounds_are_answered_and_retried() {
    let mut round = 0;
    let (session, seen) = modern_session(move |f| {
        if f["params"]["name"] == "other" {
            return result(f, json!({"resultType": "complete", "content": []}));
        }
        round += 1;
        match round {
            1 => result(
                f,
                json!({"resultType": "input_required", "requestState": "s1 \u{e9}\"x",
                "inputRequests": {"who": {"method": "elicitation/create", "params": {
                    "message": "Name?", "requestedSchema": {"type": "object", "properties": {
                        "answer": {"type": "string"}}}}}}}),
            ),
            2 => result(
                f,
                json!({"resultType": "input_required",
                "inputRequests": {"where": {"method": "roots/list"}}}),
            ),
            _ => result(
                f,
                json!({"resultType": "complete", "content": [{"type": "text", "text": "done"}]}),
            ),
        }
    })
    .await;
    let (done, other) = tokio::join!(
        session.call_tool("t", json!({"region": "eu"})),
        session.call_tool("other", json!({}))
    );
    assert_eq!(done.unwrap().content.len(), 1);
    other.unwrap();
    let seen = seen.lock().unwrap().clone();
    let chain: Vec<&Value> = requests(&seen, "tools/call")
        .into_iter()
        .filter(|f| f["params"]["name"] == "t")
        .collect();
    assert_eq!(chain.len(), 3);
    // [D26-45]: a new id each round.
    assert_ne!(chain[0]["id"], chain[1]["id"]);
    assert_ne!(chain[1]["id"], chain[2]["id"]);
    // The original params each time.
    for f in &chain {
        assert_eq!(f["params"]["arguments"], json!({"region": "eu"}));
        assert_eq!(
            f["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            V
        );
    }
    // [D26-42], [D26-43]: the inputs answered by the elicitation handler, the state echoed.
    assert!(chain[0]["params"].get("inputResponses").is_none());
    assert_eq!(chain[1]["params"]["requestState"], "s1 \u{e9}\"x");
    assert_eq!(
        chain[1]["params"]["inputResponses"],
        json!({"who": {"action": "accept", "content": {"answer": "Name?"}}})
    );
    // [D26-44]: no state when the result had none; only this round's answers.
    assert!(chain[2]["params"].get("requestState").is_none());
    assert_eq!(
        chain[2]["params"]["inputResponses"],
        json!({"where": {"roots": [{"uri": "file:///work"}]}})
    );
    // [D26-46]: nothing of the chain on the request sent meanwhile.
    let other = requests(&seen, "tools/call")
        .into_iter()
        .find(|f| f["params"]["name"] == "other")
        .unwrap();
    assert!(other["params"].get("inputResponses").is_none());
    assert!(other["params"].get("requestState").is_none());
}

#[tokio::test]
async fn mrtr_rounds_are_bounded_and_undeclared_capabilities_refused() {
    let (a, b) = pair();
    modern(b, |f| match f["params"]["name"].as_str() {
        Some("sample") => result(
            f,
            json!({"resultType": "input_required", "inputRequests": {
            "q": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}}}}),
        ),
        Some("empty") => result(f, json!({"resultType": "input_required"})),
        _ => result(
            f,
            json!({"resultType": "input_required", "requestState": "again"}),
        ),
    });
    let session = client()
        .max_input_rounds(3)
        .build()
        .connect(a)
        .await
        .unwrap();
    let e = session.call_tool("loop", json!({})).await.unwrap_err();
    assert!(
        matches!(e, ClientError::TooManyInputRounds { rounds: 3, .. }),
        "{e}"
    );
    // [D26-41]: this client declared no sampling.
    let e = session.call_tool("sample", json!({})).await.unwrap_err();
    match e {
        ClientError::InputRequest { key, error, .. } => {
            assert_eq!(key, "q");
            assert_eq!(error.code, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY);
        }
        other => panic!("{other}"),
    }
    // [D26-37]: neither inputRequests nor requestState.
    let e = session.call_tool("empty", json!({})).await.unwrap_err();
    assert!(matches!(e, ClientError::InvalidInputRequired { .. }), "{e}");
    // [D26-34]: input_required to a method that cannot have it is an invalid response.
    let e = session.list_prompts_page(None).await.unwrap_err();
    assert!(matches!(e, ClientError::UnexpectedResultType { .. }), "{e}");
}

#[tokio::test]
async fn d26_84_log_levels_travel_per_request() {
    let (session, seen) =
        modern_session(|f| result(f, json!({"resultType": "complete", "content": []}))).await;
    session.call_tool("a", json!({})).await.unwrap();
    session
        .with_log_level(Some(LoggingLevel::Warning))
        .call_tool("b", json!({}))
        .await
        .unwrap();
    session.set_level(LoggingLevel::Debug).await.unwrap();
    session.call_tool("c", json!({})).await.unwrap();
    let seen = seen.lock().unwrap().clone();
    assert!(
        requests(&seen, "logging/setLevel").is_empty(),
        "no setLevel in 2026-07-28"
    );
    let level = |name: &str| {
        requests(&seen, "tools/call")
            .into_iter()
            .find(|f| f["params"]["name"] == name)
            .unwrap()["params"]["_meta"]
            .get("io.modelcontextprotocol/logLevel")
            .cloned()
    };
    assert_eq!(level("a"), None);
    assert_eq!(level("b"), Some(json!("warning")));
    assert_eq!(level("c"), Some(json!("debug")));
}

#[tokio::test]
async fn modern_capability_gates_and_resource_not_found() {
    let (session, seen) = modern_session(|f| match f["method"].as_str() {
        Some("resources/read") if f["params"]["uri"] == "old://x" => error(f, -32002, json!({})),
        Some("resources/read") => error(f, -32602, json!({"uri": "new://x"})),
        _ => result(f, json!({"resultType": "complete"})),
    })
    .await;
    // Methods 2026-07-28 removed, and ones the server did not declare, are refused locally.
    assert!(matches!(
        session.ping().await,
        Err(ClientError::Request(RequestError::NotAllowed(_)))
    ));
    let e = session
        .complete(
            switchboard_types::completion::Reference::Prompt(
                switchboard_types::completion::PromptReference::new("p"),
            ),
            "a",
            "b",
        )
        .await
        .unwrap_err();
    assert!(
        matches!(e, ClientError::Request(RequestError::NotAllowed(_))),
        "{e}"
    );
    for uri in ["old://x", "new://x"] {
        let e = session.read_resource(uri).await.unwrap_err();
        assert!(e.is_resource_not_found(), "{uri}: {e}");
    }
    let seen = seen.lock().unwrap().clone();
    assert!(requests(&seen, "ping").is_empty());
    assert!(requests(&seen, "completion/complete").is_empty());
}

#[tokio::test]
async fn d26_65_tools_with_invalid_x_mcp_header_are_left_out() {
    let (session, _) = modern_session(|f| result(f, json!({"resultType": "complete"}))).await;
    let tools = session.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["t"]);
}

/// A transport that records the header lines and cancellation marks of every frame it sends.
struct Recording(MemorySink, Arc<Mutex<Vec<OutboundFrame>>>);

impl FrameSink for Recording {
    async fn send(&mut self, frame: OutboundFrame) -> Result<(), TransportError> {
        self.1.lock().unwrap().push(frame.clone());
        self.0.send(frame).await
    }
}

fn recording(t: MemoryTransport) -> ((Recording, MemorySource), Arc<Mutex<Vec<OutboundFrame>>>) {
    let frames: Arc<Mutex<Vec<OutboundFrame>>> = Arc::default();
    let (sink, source) = t.split();
    ((Recording(sink, frames.clone()), source), frames)
}

#[tokio::test]
async fn d26_57_d26_62_header_lines_go_to_the_transport_with_each_frame() {
    let (a, b) = pair();
    modern(b, |f| {
        result(f, json!({"resultType": "complete", "content": []}))
    });
    let (transport, frames) = recording(a);
    let session = client().build().connect(transport).await.unwrap();
    session.list_tools().await.unwrap();
    session
        .call_tool("t", json!({"region": "Zürich", "other": 1}))
        .await
        .unwrap();
    let frames = frames.lock().unwrap().clone();
    let headers = |i: usize| frames[i].headers.clone();
    assert_eq!(
        headers(0),
        [
            ("MCP-Protocol-Version".to_owned(), V.to_owned()),
            ("Mcp-Method".to_owned(), "server/discover".to_owned())
        ]
    );
    let call = frames
        .iter()
        .find(|f| f.text.contains("tools/call"))
        .unwrap();
    assert_eq!(
        call.headers,
        [
            ("MCP-Protocol-Version".to_owned(), V.to_owned()),
            ("Mcp-Method".to_owned(), "tools/call".to_owned()),
            ("Mcp-Name".to_owned(), "t".to_owned()),
            (
                "Mcp-Param-Region".to_owned(),
                "=?base64?WsO8cmljaA==?=".to_owned()
            ),
        ]
    );
}

#[tokio::test]
async fn d26_70_to_d26_75_listen_streams_are_acknowledged_demultiplexed_and_cancelled() {
    let (a, b) = pair();
    let seen = modern(b, |f| {
        if f["method"] != "subscriptions/listen" {
            return result(f, json!({"resultType": "complete"}));
        }
        let id = f["id"].clone();
        let tag = json!({"io.modelcontextprotocol/subscriptionId": id});
        let n = |method: &str, params: Value| json!({"jsonrpc": "2.0", "method": method, "params": params});
        let mut out = vec![n(
            "notifications/subscriptions/acknowledged",
            json!({"notifications": f["params"]["notifications"], "_meta": tag}),
        )];
        if f["params"]["notifications"]["toolsListChanged"] == true {
            out.push(n("notifications/tools/list_changed", json!({"_meta": tag})));
        } else {
            out.push(n(
                "notifications/resources/updated",
                json!({"uri": "file:///a", "_meta": tag}),
            ));
        }
        out
    });
    let (transport, frames) = recording(a);
    let session = client().build().connect(transport).await.unwrap();
    let mut tools = session
        .listen(SubscriptionFilter {
            tools_list_changed: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut files = session
        .listen(SubscriptionFilter {
            resource_subscriptions: Some(vec!["file:///a".into()]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(tools.acknowledged().tools_list_changed, Some(true));
    assert_ne!(tools.id(), files.id());
    assert_eq!(tools.next().await, Some(ListenEvent::ToolsListChanged));
    match files.next().await {
        Some(ListenEvent::ResourceUpdated(u)) => assert_eq!(u.uri, "file:///a"),
        other => panic!("{other:?}"),
    }
    // Dropping a stream cancels its listen: notifications/cancelled naming it, marked for the
    // transport.
    let id = tools.id().clone();
    drop(tools);
    wait::until("the listen cancelled", || {
        !requests(&seen.lock().unwrap(), "notifications/cancelled").is_empty()
    })
    .await;
    let seen = seen.lock().unwrap().clone();
    let cancelled = requests(&seen, "notifications/cancelled");
    assert_eq!(cancelled.len(), 1);
    assert_eq!(
        cancelled[0]["params"]["requestId"],
        serde_json::to_value(&id).unwrap()
    );
    let frames = frames.lock().unwrap().clone();
    assert!(frames.iter().any(|f| f.cancels.as_ref() == Some(&id)));
    // The envelope on the listen request too ([D26-8]).
    for f in requests(&seen, "subscriptions/listen") {
        assert_eq!(
            f["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            V
        );
    }
    drop(files);
}

#[tokio::test]
async fn listen_on_a_legacy_connection_is_refused_locally() {
    let (a, b) = pair();
    server(b, |f| match f["method"].as_str() {
        Some("initialize") => result(f, initialize_result()),
        _ => vec![],
    });
    let session = legacy_session(a).await;
    let e = session
        .listen(SubscriptionFilter::default())
        .await
        .unwrap_err();
    assert!(
        matches!(e, ClientError::Request(RequestError::NotAllowed(_))),
        "{e}"
    );
}

#[tokio::test]
async fn listen_streams_and_their_buffers_are_bounded() {
    let (a, b) = pair();
    let seen = modern(b, |f| {
        if f["method"] != "subscriptions/listen" {
            return result(f, json!({"resultType": "complete"}));
        }
        let tag = json!({"io.modelcontextprotocol/subscriptionId": f["id"]});
        let n =
            |method: &str| json!({"jsonrpc": "2.0", "method": method, "params": {"_meta": tag}});
        let mut out = vec![
            json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
            "params": {"notifications": {"toolsListChanged": true}, "_meta": tag}}),
        ];
        out.extend((0..3).map(|_| n("notifications/tools/list_changed")));
        out
    });
    let session = client()
        .max_listens(1)
        .listen_buffer(1)
        .build()
        .connect(a)
        .await
        .unwrap();
    let filter = SubscriptionFilter {
        tools_list_changed: Some(true),
        ..Default::default()
    };
    let mut one = session.listen(filter.clone()).await.unwrap();
    let e = session.listen(filter.clone()).await.unwrap_err();
    assert!(matches!(e, ClientError::TooManyListens { limit: 1 }), "{e}");
    assert_eq!(
        requests(&seen.lock().unwrap(), "subscriptions/listen").len(),
        1
    );
    // A request answered after them (whatever its answer says): the three notifications have
    // reached the stream's buffer.
    let _ = session.call_tool("after", json!({})).await;
    assert_eq!(one.next().await, Some(ListenEvent::ToolsListChanged));
    // The other two did not fit in a buffer of one: dropped, the stream goes on.
    let more = tokio::time::timeout(Duration::from_millis(100), one.next()).await;
    assert!(more.is_err(), "nothing more: {more:?}");
    drop(one);
    // Its place is free once the cancelled listen has ended.
    let deadline = wait::Deadline::new("the listen's place free again");
    loop {
        match session.listen(filter.clone()).await {
            Ok(_) => break,
            Err(ClientError::TooManyListens { .. }) => deadline.tick().await,
            Err(e) => panic!("{e}"),
        }
    }
}

#[tokio::test]
async fn a_2026_url_elicitation_without_id_reaches_the_handler() {
    let (a, b) = pair();
    let mut round = 0;
    let seen = modern(b, move |f| {
        round += 1;
        if round == 1 {
            result(
                f,
                json!({"resultType": "input_required", "requestState": "st",
                "inputRequests": {"login": {"method": "elicitation/create", "params": {
                    "mode": "url", "message": "Sign in", "url": "https://example.com/login"}}}}),
            )
        } else {
            result(f, json!({"resultType": "complete", "content": []}))
        }
    });
    let session = Client::builder(Implementation::new("modern-test", "1"))
        .elicitation(|p, _| async move {
            match p {
                switchboard_types::elicitation::ElicitRequestParams::Url(u) => {
                    assert_eq!(u.url, "https://example.com/login");
                    assert_eq!(u.elicitation_id, "", "2026-07-28 has no elicitation id");
                    Ok(ElicitResult::new(ElicitAction::Accept))
                }
                _ => Ok(ElicitResult::new(ElicitAction::Decline)),
            }
        })
        .elicitation_modes(true, true)
        .build()
        .connect(a)
        .await
        .unwrap();
    session.call_tool("login", json!({})).await.unwrap();
    let seen = seen.lock().unwrap().clone();
    let retry = requests(&seen, "tools/call")[1];
    assert_eq!(
        retry["params"]["inputResponses"],
        json!({"login": {"action": "accept"}})
    );
    assert_eq!(
        retry["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["elicitation"],
        json!({"form": {}, "url": {}})
    );
}

#[tokio::test]
async fn a_listen_never_acknowledged_fails_after_the_request_timeout_and_is_cancelled() {
    let (a, b) = pair();
    // The server takes the listen and never acknowledges it.
    let seen = modern(b, |f| {
        if f["method"] == "subscriptions/listen" {
            return vec![];
        }
        result(f, json!({"resultType": "complete"}))
    });
    let config = switchboard_jsonrpc::SessionConfig::default()
        .with_request_timeout(Some(Duration::from_millis(200)));
    let session = client()
        .session_config(config)
        .build()
        .connect(a)
        .await
        .unwrap();
    let filter = SubscriptionFilter {
        tools_list_changed: Some(true),
        ..Default::default()
    };
    let e = tokio::time::timeout(Duration::from_secs(10), session.listen(filter))
        .await
        .expect("listen waited past its request timeout")
        .unwrap_err();
    assert!(
        matches!(e, ClientError::Request(RequestError::Timeout { .. })),
        "{e}"
    );
    wait::until("the timed-out listen cancelled", || {
        !requests(&seen.lock().unwrap(), "notifications/cancelled").is_empty()
    })
    .await;
    let seen = seen.lock().unwrap().clone();
    let listen = requests(&seen, "subscriptions/listen");
    assert_eq!(listen.len(), 1);
    let cancelled = requests(&seen, "notifications/cancelled");
    assert_eq!(cancelled.len(), 1, "{seen:?}");
    assert_eq!(cancelled[0]["params"]["requestId"], listen[0]["id"]);
    // The session goes on.
    assert_eq!(session.list_tools().await.unwrap().len(), 1);
}

#[tokio::test]
async fn d26_57_a_header_mismatch_relists_the_tools_once_per_call_then_is_the_error() {
    let (session, seen) = modern_session(|f| error(f, -32020, json!({}))).await;
    let listed_before = requests(&seen.lock().unwrap(), "tools/list").len();
    let e = session
        .call_tool("t", json!({"region": "eu"}))
        .await
        .unwrap_err();
    match &e {
        ClientError::Request(RequestError::Rejected(r)) => assert_eq!(r.code.0, -32020),
        other => panic!("{other}"),
    }
    let seen_now = seen.lock().unwrap().clone();
    assert_eq!(requests(&seen_now, "tools/call").len(), 2, "one retry only");
    assert_eq!(
        requests(&seen_now, "tools/list").len(),
        listed_before + 1,
        "one re-listing only"
    );
    // The next call gets its own single re-listing.
    session.call_tool("t", json!({})).await.unwrap_err();
    let seen_now = seen.lock().unwrap().clone();
    assert_eq!(requests(&seen_now, "tools/call").len(), 4);
    assert_eq!(requests(&seen_now, "tools/list").len(), listed_before + 2);
}

/// `[D26-42]` the input requests of one round are all asked at once (a sampling answer that
/// waits for the elicitation's does not hold the round up), and each handler is told its
/// request's key ([`switchboard_client::InputKey`]).
#[tokio::test]
async fn the_input_requests_of_one_round_are_answered_at_once_each_with_its_key() {
    let (a, b) = pair();
    let mut round = 0;
    let seen = modern(b, move |f| {
        round += 1;
        if round == 1 {
            result(
                f,
                json!({"resultType": "input_required", "inputRequests": {
                    "first": {"method": "sampling/createMessage", "params": {
                        "messages": [{"role": "user", "content": {"type": "text", "text": "x"}}],
                        "maxTokens": 5}},
                    "second": {"method": "elicitation/create", "params": {
                        "message": "Name?", "requestedSchema": {"type": "object", "properties": {}}}}}}),
            )
        } else {
            result(f, json!({"resultType": "complete", "content": []}))
        }
    });
    let elicited = Arc::new(tokio::sync::Notify::new());
    let keys = Arc::new(Mutex::new(Vec::new()));
    let (k1, k2, told) = (keys.clone(), keys.clone(), elicited.clone());
    let key = |cx: &switchboard_client::RequestContext| {
        cx.attachment_as::<switchboard_client::InputKey>()
            .map(|k| k.0.clone())
            .unwrap_or_default()
    };
    let session = Client::builder(Implementation::new("modern-test", "1"))
        .sampling(move |_, cx| {
            k1.lock().unwrap().push(key(&cx));
            let elicited = elicited.clone();
            async move {
                // Answered only once the elicitation was asked: asked one after the other,
                // this would wait for ever.
                elicited.notified().await;
                Ok(
                    serde_json::from_value(json!({"role": "assistant", "model": "m",
                    "content": {"type": "text", "text": "y"}}))
                    .unwrap(),
                )
            }
        })
        .elicitation(move |_, cx| {
            k2.lock().unwrap().push(key(&cx));
            told.notify_one();
            async { Ok(ElicitResult::new(ElicitAction::Decline)) }
        })
        .build()
        .connect(a)
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(30), session.call_tool("t", json!({})))
        .await
        .expect("answered at once, not one after the other")
        .unwrap();
    let mut keys = keys.lock().unwrap().clone();
    keys.sort();
    assert_eq!(keys, ["first", "second"]);
    let seen = seen.lock().unwrap().clone();
    let retry = requests(&seen, "tools/call")[1];
    let responses = retry["params"]["inputResponses"].as_object().unwrap();
    assert_eq!(responses.len(), 2);
    assert_eq!(responses["second"], json!({"action": "decline"}));
}
