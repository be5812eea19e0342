//! The client's handlers for server requests, against a hand-played server: sampling,
//! elicitation (form and URL mode) and roots answer; undeclared capabilities get -32601
//! (`[CP-2]`), undeclared elicitation modes -32602 (`[EL-4]`), sampling with tools without
//! `sampling.tools` an error (`[CP-5]`); roots changes are announced only when declared
//! (`[RO-2]`); log lines and elicitation completions reach their callbacks (`[EL-9]`).

use std::sync::{Arc, Mutex};

use crate::client_support::{
    all_server_caps, builder, connect, connect_with, expect_request, reply_error, serve,
};
use serde_json::{Value, json};
use switchboard::client::ClientError;
use switchboard::types::capabilities::{
    ClientCapabilities, ElicitationCapability, RootsCapability, SamplingCapability,
};
use switchboard::types::elicitation::{
    ElicitAction, ElicitContentValue, ElicitRequestParams, ElicitResult,
};
use switchboard::types::meta::{EmptyObject, OrderedMap};
use switchboard::types::roots::Root;
use switchboard::types::sampling::{CreateMessageResult, SamplingMessageContentBlock};
use switchboard::types::{ErrorCode, ErrorObject};

fn sampling_request(extra: Value) -> Value {
    let mut p = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hello"}}],
        "maxTokens": 10});
    if let (Some(p), Some(e)) = (p.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
    p
}

fn echo_sampler() -> switchboard::client::ClientBuilder {
    builder().sampling(|params, _cx| async move {
        let n = params.messages.len();
        let mut r = CreateMessageResult::new(
            "test-model",
            SamplingMessageContentBlock::text(format!("{n} messages")),
        );
        r.stop_reason = Some(CreateMessageResult::STOP_END_TURN.into());
        Ok(r)
    })
}

#[tokio::test]
async fn sampling_handler_answers_and_declares_sampling() {
    let (_client, mut fake, init) =
        connect_with(echo_sampler().build(), "2025-11-25", all_server_caps()).await;
    assert_eq!(init["capabilities"], json!({"sampling": {}}));
    let r = fake
        .request(
            json!("s1"),
            "sampling/createMessage",
            sampling_request(json!({})),
        )
        .await;
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": "s1", "result": {"role": "assistant",
            "content": {"type": "text", "text": "1 messages"}, "model": "test-model", "stopReason": "endTurn"}})
    );
}

#[tokio::test]
async fn a_handler_error_is_the_wire_error() {
    let client = builder().sampling(|_, _| async {
        Err::<CreateMessageResult, _>(ErrorObject::new(
            ErrorCode::USER_REJECTED,
            "User rejected sampling request",
        ))
    });
    let (_client, mut fake) = connect(client, "2025-11-25", json!({})).await;
    let r = fake
        .request(
            json!(1),
            "sampling/createMessage",
            sampling_request(json!({})),
        )
        .await;
    assert_eq!(
        r["error"],
        json!({"code": -1, "message": "User rejected sampling request"})
    );
}

#[tokio::test]
async fn a_panicking_handler_is_answered_32603_and_the_session_lives_on() {
    let client = builder().sampling(|_, _| async { panic!("handler bug") });
    let (session, mut fake) = connect(client, "2025-11-25", json!({})).await;
    let r = fake
        .request(
            json!(1),
            "sampling/createMessage",
            sampling_request(json!({})),
        )
        .await;
    assert_eq!(r["error"]["code"], -32603);
    fake.sync().await;
    assert!(session.is_open());
}

#[tokio::test]
async fn malformed_params_get_32602() {
    let (_client, mut fake) = connect(echo_sampler(), "2025-11-25", json!({})).await;
    let r = fake
        .request(
            json!(1),
            "sampling/createMessage",
            json!({"messages": "nope"}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602);
}

#[tokio::test]
async fn cp_5_sampling_with_tools_needs_sampling_tools() {
    let (_client, mut fake) = connect(echo_sampler(), "2025-11-25", json!({})).await;
    for extra in [
        json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}),
        json!({"toolChoice": {"mode": "auto"}}),
    ] {
        let r = fake
            .request(json!(1), "sampling/createMessage", sampling_request(extra))
            .await;
        assert_eq!(r["error"]["code"], -32602, "{r}");
        assert_eq!(r["error"]["data"]["reason"], "sampling_tools_not_declared");
    }
}

#[tokio::test]
async fn cp_5_declared_sampling_tools_reach_the_handler() {
    let caps = ClientCapabilities {
        sampling: Some(SamplingCapability {
            tools: Some(EmptyObject::default()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let (_client, mut fake, init) = connect_with(
        echo_sampler().capabilities(caps).build(),
        "2025-11-25",
        json!({}),
    )
    .await;
    assert_eq!(
        init["capabilities"],
        json!({"sampling": {"tools": {}}}),
        "explicit capabilities win over the handler's"
    );
    let r = fake
        .request(
            json!(1),
            "sampling/createMessage",
            sampling_request(
                json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}],
                "toolChoice": {"mode": "auto"}}),
            ),
        )
        .await;
    assert_eq!(r["result"]["model"], "test-model", "{r}");

    // But not in a revision that has no sampling tools.
    let caps = ClientCapabilities {
        sampling: Some(SamplingCapability {
            tools: Some(EmptyObject::default()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let (_client, mut fake) =
        connect(echo_sampler().capabilities(caps), "2025-06-18", json!({})).await;
    let r = fake
        .request(
            json!(1),
            "sampling/createMessage",
            sampling_request(json!({"toolChoice": {}})),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602);
}

#[tokio::test]
async fn sa_2_sa_3_the_tool_loop_shape_is_checked() {
    let caps = ClientCapabilities {
        sampling: Some(SamplingCapability {
            tools: Some(EmptyObject::default()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let (_client, mut fake) =
        connect(echo_sampler().capabilities(caps), "2025-11-25", json!({})).await;
    let tool_use = json!({"role": "assistant", "content": [{"type": "tool_use", "id": "u1", "name": "t", "input": {}}]});
    let result_u1 = json!({"type": "tool_result", "toolUseId": "u1", "content": [{"type": "text", "text": "r"}]});
    let ok = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "go"}}, tool_use, {"role": "user", "content": [result_u1]}],
        "maxTokens": 5});
    let r = fake.request(json!(1), "sampling/createMessage", ok).await;
    assert!(r.get("result").is_some(), "{r}");
    // SA-2: tool results mixed with other content.
    let mixed = json!({"messages": [tool_use, {"role": "user", "content": [result_u1, {"type": "text", "text": "and"}]}],
        "maxTokens": 5});
    let r = fake
        .request(json!(2), "sampling/createMessage", mixed)
        .await;
    assert_eq!(r["error"]["code"], -32602);
    assert_eq!(r["error"]["data"]["spec"], "SA-2");
    // SA-3: a tool_use left unanswered.
    let unanswered = json!({"messages": [tool_use, {"role": "user", "content": {"type": "text", "text": "?"}}],
        "maxTokens": 5});
    let r = fake
        .request(json!(3), "sampling/createMessage", unanswered)
        .await;
    assert_eq!(r["error"]["code"], -32602);
    assert_eq!(r["error"]["data"]["spec"], "SA-3");
}

type Seen = Arc<Mutex<Vec<ElicitRequestParams>>>;

/// Log lines seen: level, logger, data.
type Lines = Arc<Mutex<Vec<(String, Option<String>, Value)>>>;

fn eliciting(seen: &Seen) -> switchboard::client::ClientBuilder {
    let seen = seen.clone();
    builder().elicitation(move |params, _cx| {
        let seen = seen.clone();
        async move {
            let result = match &params {
                ElicitRequestParams::Form(_) => ElicitResult::accept(
                    OrderedMap::new().with("name", ElicitContentValue::String("Ada".into())),
                ),
                ElicitRequestParams::Url(_) => ElicitResult::new(ElicitAction::Accept),
            };
            seen.lock().unwrap().push(params);
            Ok(result)
        }
    })
}

fn form_request(mode: Option<&str>) -> Value {
    let mut p = json!({"message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}});
    if let Some(m) = mode {
        p["mode"] = json!(m);
    }
    p
}

fn url_request(id: &str) -> Value {
    json!({"mode": "url", "message": "Link your account", "elicitationId": id,
        "url": "https://example.test/link"})
}

#[tokio::test]
async fn el_1_elicitation_without_mode_is_form() {
    let seen = Seen::default();
    let (_client, mut fake, init) =
        connect_with(eliciting(&seen).build(), "2025-11-25", json!({})).await;
    assert_eq!(
        init["capabilities"],
        json!({"elicitation": {}}),
        "CP-4: {{}} means form"
    );
    let r = fake
        .request(json!(1), "elicitation/create", form_request(None))
        .await;
    assert_eq!(
        r["result"],
        json!({"action": "accept", "content": {"name": "Ada"}})
    );
    let r = fake
        .request(json!(2), "elicitation/create", form_request(Some("form")))
        .await;
    assert_eq!(r["result"]["action"], "accept");
    assert!(matches!(
        seen.lock().unwrap()[0],
        ElicitRequestParams::Form(_)
    ));
    // 2025-06-18 knows form mode only; it works there too.
    let (_client, mut fake) = connect(eliciting(&seen), "2025-06-18", json!({})).await;
    let r = fake
        .request(json!(1), "elicitation/create", form_request(None))
        .await;
    assert_eq!(r["result"]["action"], "accept");
}

#[tokio::test]
async fn el_4_an_undeclared_mode_gets_32602() {
    let seen = Seen::default();
    // Form only: URL mode is refused before the handler runs.
    let (_client, mut fake) = connect(eliciting(&seen), "2025-11-25", json!({})).await;
    let r = fake
        .request(json!(1), "elicitation/create", url_request("el-1"))
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(
        r["error"]["data"]["reason"],
        "elicitation_mode_not_declared"
    );
    // An unknown mode is invalid params too.
    let mut bad = form_request(None);
    bad["mode"] = json!("telepathy");
    let r = fake.request(json!(2), "elicitation/create", bad).await;
    assert_eq!(r["error"]["code"], -32602);
    // URL only: form mode (explicit or implied) is refused.
    let (_client, mut fake, init) = connect_with(
        eliciting(&seen).elicitation_modes(false, true).build(),
        "2025-11-25",
        json!({}),
    )
    .await;
    assert_eq!(init["capabilities"], json!({"elicitation": {"url": {}}}));
    for (i, req) in [form_request(None), form_request(Some("form"))]
        .into_iter()
        .enumerate()
    {
        let r = fake.request(json!(i), "elicitation/create", req).await;
        assert_eq!(r["error"]["code"], -32602, "{r}");
    }
    assert!(seen.lock().unwrap().is_empty(), "the handler never ran");
    // URL mode declared but the session negotiated 2025-06-18, which has no URL mode.
    let (_client, mut fake) = connect(
        eliciting(&seen).elicitation_modes(true, true),
        "2025-06-18",
        json!({}),
    )
    .await;
    let r = fake
        .request(json!(1), "elicitation/create", url_request("el-1"))
        .await;
    assert_eq!(r["error"]["code"], -32602);
}

#[tokio::test]
async fn elicitation_is_method_not_found_before_2025_06_18() {
    let seen = Seen::default();
    let (_client, mut fake) = connect(eliciting(&seen), "2025-03-26", json!({})).await;
    let r = fake
        .request(json!(1), "elicitation/create", form_request(None))
        .await;
    assert_eq!(r["error"]["code"], -32601);
}

#[tokio::test]
async fn el_9_completion_reaches_the_callback_for_known_ids_only() {
    let seen = Seen::default();
    let done: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = done.clone();
    let client = eliciting(&seen)
        .elicitation_modes(true, true)
        .on_elicitation_complete(move |n| sink.lock().unwrap().push(n.elicitation_id));
    let (session, mut fake, init) =
        connect_with(client.build(), "2025-11-25", all_server_caps()).await;
    assert_eq!(
        init["capabilities"],
        json!({"elicitation": {"form": {}, "url": {}}})
    );
    let r = fake
        .request(json!(1), "elicitation/create", url_request("el-1"))
        .await;
    assert_eq!(r["result"], json!({"action": "accept"}));
    let complete = |id: &str| json!({"elicitationId": id});
    fake.notify("notifications/elicitation/complete", complete("el-unknown"))
        .await;
    fake.notify("notifications/elicitation/complete", complete("el-1"))
        .await;
    fake.notify("notifications/elicitation/complete", complete("el-1"))
        .await; // already completed
    fake.sync().await;
    assert_eq!(*done.lock().unwrap(), ["el-1"]);

    // Ids named by a -32042 error become known too.
    let call = tokio::spawn(async move { session.call_tool("crm", json!({})).await });
    let id = expect_request(
        &mut fake,
        "tools/call",
        json!({"name": "crm", "arguments": {}}),
    )
    .await;
    fake.send(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32042, "message": "Link the CRM first",
        "data": {"elicitations": [url_request("el-2")]}}}))
        .await;
    let e = call.await.unwrap().unwrap_err();
    assert_eq!(
        e.url_elicitations().unwrap().elicitations[0].elicitation_id,
        "el-2"
    );
    fake.notify("notifications/elicitation/complete", complete("el-2"))
        .await;
    fake.sync().await;
    assert_eq!(*done.lock().unwrap(), ["el-1", "el-2"]);
}

#[tokio::test]
async fn roots_are_listed_and_changes_announced() {
    let client = builder().roots([Root::new("file:///home/u/proj").with_name("proj")]);
    let (session, mut fake, init) = connect_with(client.build(), "2025-11-25", json!({})).await;
    assert_eq!(
        init["capabilities"],
        json!({"roots": {"listChanged": true}})
    );
    let r = fake.request(json!(1), "roots/list", Value::Null).await;
    assert_eq!(
        r["result"],
        json!({"roots": [{"uri": "file:///home/u/proj", "name": "proj"}]})
    );
    let sent = session
        .set_roots([Root::new("file:///home/u/other")])
        .await
        .unwrap();
    assert!(sent);
    assert_eq!(
        fake.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
    );
    let r = fake.request(json!(2), "roots/list", Value::Null).await;
    assert_eq!(
        r["result"],
        json!({"roots": [{"uri": "file:///home/u/other"}]})
    );
}

#[tokio::test]
async fn ro_2_roots_list_changed_only_when_declared() {
    let caps = ClientCapabilities {
        roots: Some(RootsCapability::default()),
        ..Default::default()
    };
    let client = builder().capabilities(caps).roots([Root::new("file:///a")]);
    let (session, mut fake, init) = connect_with(client.build(), "2025-11-25", json!({})).await;
    assert_eq!(init["capabilities"], json!({"roots": {}}));
    assert!(!session.set_roots([Root::new("file:///b")]).await.unwrap());
    assert!(!session.notify_roots_changed().await.unwrap());
    fake.expect_silence(100).await;
    // The list still changed.
    let r = fake.request(json!(1), "roots/list", Value::Null).await;
    assert_eq!(r["result"]["roots"][0]["uri"], "file:///b");
    // Sending it by hand is refused locally too.
    assert!(
        session
            .peer()
            .notify::<()>("notifications/roots/list_changed", None)
            .await
            .is_err()
    );
}

#[tokio::test]
async fn ro_1_ro_3_sec_res_1_roots_must_be_file_uris_without_traversal() {
    let client = builder()
        .roots([Root::new("https://example.test/repo")])
        .build();
    let (a, _b) = switchboard::jsonrpc::memory::pair();
    assert!(matches!(
        client.connect(a).await,
        Err(ClientError::InvalidRoot { uri, .. }) if uri == "https://example.test/repo"
    ));
    let (session, mut fake) = connect(builder().roots([]), "2025-11-25", json!({})).await;
    assert!(matches!(
        session
            .set_roots([Root::new("file:///ok"), Root::new("../escape")])
            .await,
        Err(ClientError::InvalidRoot { .. })
    ));
    // RO-3: no path traversal.
    for uri in [
        "file:///home/u/../../etc",
        "file:///a/%2E%2E/b",
        "file:///a/..",
    ] {
        assert!(
            matches!(
                session.set_roots([Root::new(uri)]).await,
                Err(ClientError::InvalidRoot { reason, .. }) if reason.contains("..")
            ),
            "{uri}"
        );
    }
    fake.expect_silence(50).await;
    assert!(session.roots().is_empty(), "nothing changed");
}

#[tokio::test]
async fn a_roots_provider_answers_roots_list() {
    let client =
        builder().roots_provider(|_cx| async { Ok(vec![Root::new("file:///from/provider")]) });
    let (session, mut fake) = connect(client, "2025-11-25", json!({})).await;
    let r = fake.request(json!(1), "roots/list", Value::Null).await;
    assert_eq!(r["result"]["roots"][0]["uri"], "file:///from/provider");
    assert!(session.notify_roots_changed().await.unwrap());
    assert_eq!(
        fake.recv().await["method"],
        "notifications/roots/list_changed"
    );
}

#[tokio::test]
async fn cp_2_undeclared_client_capabilities_get_32601() {
    let (_client, mut fake) = connect(builder(), "2025-11-25", json!({})).await;
    for (i, (m, p)) in [
        ("sampling/createMessage", sampling_request(json!({}))),
        ("elicitation/create", form_request(None)),
        ("roots/list", Value::Null),
        ("no/such/method", json!({})),
    ]
    .into_iter()
    .enumerate()
    {
        let r = fake.request(json!(i), m, p).await;
        assert_eq!(r["error"]["code"], -32601, "{m}: {r}");
    }
}

#[tokio::test]
async fn a_declared_capability_without_a_handler_gets_32603() {
    let caps = ClientCapabilities {
        elicitation: Some(ElicitationCapability::default()),
        ..Default::default()
    };
    let (_client, mut fake) = connect(builder().capabilities(caps), "2025-11-25", json!({})).await;
    let r = fake
        .request(json!(1), "elicitation/create", form_request(None))
        .await;
    assert_eq!(r["error"]["code"], -32603);
}

#[tokio::test]
async fn log_lines_reach_the_callback_and_set_level_is_sent() {
    let lines: Lines = Arc::default();
    let sink = lines.clone();
    let client = builder().on_log(move |m| {
        sink.lock()
            .unwrap()
            .push((m.level.to_string(), m.logger, m.data))
    });
    let (session, mut fake) = connect(client, "2025-11-25", all_server_caps()).await;
    let c = session.clone();
    let call =
        tokio::spawn(async move { c.set_level(switchboard::types::LoggingLevel::Debug).await });
    serve(
        &mut fake,
        "logging/setLevel",
        json!({"level": "debug"}),
        json!({}),
    )
    .await;
    call.await.unwrap().unwrap();
    fake.notify(
        "notifications/message",
        json!({"level": "info", "logger": "db", "data": {"rows": 3}}),
    )
    .await;
    fake.notify(
        "notifications/message",
        json!({"level": "error", "data": "boom"}),
    )
    .await;
    fake.notify("notifications/message", json!({"level": "loud", "data": 1}))
        .await; // malformed: ignored, not answered
    fake.sync().await;
    assert_eq!(
        *lines.lock().unwrap(),
        [
            ("info".to_owned(), Some("db".to_owned()), json!({"rows": 3})),
            ("error".to_owned(), None, json!("boom")),
        ]
    );
    // A refused setLevel is the server's error.
    let call = tokio::spawn(async move {
        session
            .set_level(switchboard::types::LoggingLevel::Info)
            .await
    });
    let id = expect_request(&mut fake, "logging/setLevel", json!({"level": "info"})).await;
    reply_error(&mut fake, &id, -32602, "bad level").await;
    assert!(call.await.unwrap().is_err());
}
