//! The everything server (../shared/conformance/EVERYTHING-SERVER.md), row by row, driven by a
//! hand-played client over the in-memory transport. Every frame the server emits is validated
//! against the 2025-11-25 schema.

use serde_json::{Value, json};
use switchboard::jsonrpc::{SessionConfig, memory};
use switchboard_example_servers::everything::{PNG, WAV, everything_server};
use switchboard_tests::RawPeer;

const CLIENT_CAPS: &str =
    r#"{"sampling":{},"elicitation":{"form":{}},"roots":{"listChanged":true}}"#;

async fn connect() -> RawPeer {
    let server = everything_server(SessionConfig::default()).unwrap();
    let (a, b) = memory::pair();
    server.serve(b).unwrap();
    let mut c = RawPeer::new(a, "2025-11-25");
    let init = c
        .handshake("2025-11-25", serde_json::from_str(CLIENT_CAPS).unwrap())
        .await;
    assert_eq!(init["protocolVersion"], "2025-11-25");
    assert_eq!(
        init["capabilities"],
        json!({"logging": {}, "completions": {}, "prompts": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": true}, "tools": {"listChanged": true},
            "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}})
    );
    c
}

async fn call(c: &mut RawPeer, id: i64, name: &str, args: Value) -> Value {
    let r = c
        .request(
            json!(id),
            "tools/call",
            json!({"name": name, "arguments": args}),
        )
        .await;
    assert!(r.get("error").is_none(), "{name}: {r}");
    r["result"].clone()
}

#[tokio::test]
async fn contract_1_ping_set_level_and_unknown_method() {
    let mut c = connect().await;
    assert_eq!(
        c.request(json!(1), "ping", Value::Null).await["result"],
        json!({})
    );
    assert_eq!(
        c.request(json!(2), "logging/setLevel", json!({"level": "debug"}))
            .await["result"],
        json!({})
    );
    assert_eq!(
        c.request(json!(3), "logging/setLevel", json!({"level": "loud"}))
            .await["error"]["code"],
        -32602
    );
    assert_eq!(
        c.request(json!(4), "server/discover", json!({})).await["error"]["code"],
        -32601
    );
}

#[tokio::test]
async fn contract_2_static_content_tools() {
    let mut c = connect().await;
    let r = call(&mut c, 1, "test_simple_text", json!({})).await;
    assert_eq!(
        r,
        json!({"content": [{"type": "text", "text": "This is a simple text response for testing."}]})
    );
    let r = call(&mut c, 2, "test_image_content", json!({})).await;
    assert_eq!(
        r["content"],
        json!([{"type": "image", "data": PNG, "mimeType": "image/png"}])
    );
    let r = call(&mut c, 3, "test_audio_content", json!({})).await;
    assert_eq!(
        r["content"],
        json!([{"type": "audio", "data": WAV, "mimeType": "audio/wav"}])
    );
    let r = call(&mut c, 4, "test_embedded_resource", json!({})).await;
    assert_eq!(
        r["content"][0]["resource"]["text"],
        "This is an embedded resource content."
    );
    let r = call(&mut c, 5, "test_resource_link", json!({})).await;
    assert_eq!(
        r["content"][1],
        json!({"type": "resource_link", "uri": "test://static-text", "name": "static-text", "mimeType": "text/plain"})
    );
    let r = call(&mut c, 6, "test_multiple_content_types", json!({})).await;
    assert_eq!(r["content"].as_array().unwrap().len(), 3);
    // Arguments may be omitted altogether.
    let r = c
        .request(json!(7), "tools/call", json!({"name": "test_simple_text"}))
        .await;
    assert_eq!(r["result"]["content"][0]["type"], "text");
}

#[tokio::test]
async fn contract_2_structured_output_and_errors() {
    let mut c = connect().await;
    let r = call(&mut c, 1, "test_structured_output", json!({"a": 3, "b": 4})).await;
    assert_eq!(r["structuredContent"], json!({"sum": 7, "product": 12}));
    assert_eq!(r["content"][0]["text"], r#"{"sum":7,"product":12}"#);
    let r = call(&mut c, 2, "test_error_handling", json!({})).await;
    assert_eq!(
        r,
        json!({"content": [{"type": "text", "text": "This tool intentionally returns an error for testing"}], "isError": true})
    );
    // SEP-1303 (2025-11-25): invalid arguments are an isError result naming the field.
    let r = call(
        &mut c,
        3,
        "test_structured_output",
        json!({"a": "x", "b": 4}),
    )
    .await;
    assert_eq!(r["isError"], true);
    assert!(
        r["content"][0]["text"].as_str().unwrap().contains("/a"),
        "{r}"
    );
    let r = c
        .request(json!(4), "tools/call", json!({"name": "no_such_tool"}))
        .await;
    assert_eq!(r["error"]["code"], -32602);
}

#[tokio::test]
async fn contract_2_progress_tool_sends_0_50_100_before_the_response() {
    let mut c = connect().await;
    c.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "tok-1"}}}))
        .await;
    let mut progress = Vec::new();
    loop {
        let f = c.recv().await;
        if f.get("id") == Some(&json!(1)) {
            assert_eq!(f["result"]["content"][0]["text"], "tok-1");
            break;
        }
        assert_eq!(f["method"], "notifications/progress");
        assert_eq!(f["params"]["progressToken"], "tok-1");
        assert_eq!(f["params"]["total"], 100);
        progress.push(f["params"]["progress"].as_f64().unwrap());
    }
    assert_eq!(
        progress,
        vec![0.0, 50.0, 100.0],
        "UT-6: increasing, all before the response (UT-7)"
    );
}

#[tokio::test]
async fn contract_2_logging_tool_sends_three_info_messages() {
    let mut c = connect().await;
    c.request(json!(0), "logging/setLevel", json!({"level": "debug"}))
        .await;
    c.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "test_tool_with_logging"}})).await;
    let mut logs = Vec::new();
    loop {
        let f = c.recv().await;
        if f.get("id").is_some() {
            assert_eq!(
                f["result"]["content"][0]["text"],
                "Tool with logging executed successfully"
            );
            break;
        }
        assert_eq!(
            (f["method"].as_str(), f["params"]["level"].as_str()),
            (Some("notifications/message"), Some("info"))
        );
        logs.push(f["params"]["data"].as_str().unwrap().to_owned());
    }
    assert_eq!(
        logs,
        [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed"
        ]
    );
}

#[tokio::test]
async fn logging_respects_the_clients_level() {
    let mut c = connect().await;
    c.request(json!(0), "logging/setLevel", json!({"level": "error"}))
        .await;
    let r = call(&mut c, 1, "test_tool_with_logging", json!({})).await;
    assert_eq!(
        r["content"][0]["text"], "Tool with logging executed successfully",
        "no info message got through"
    );
}

/// Answers the next server request with `result`, checking its method; returns its params.
async fn answer(c: &mut RawPeer, method: &str, result: Value) -> Value {
    let req = c.recv().await;
    assert_eq!(req["method"], method, "{req}");
    c.send(json!({"jsonrpc": "2.0", "id": req["id"], "result": result}))
        .await;
    req["params"].clone()
}

#[tokio::test]
async fn contract_2_sampling_elicitation_roots_requests_to_the_client() {
    let mut c = connect().await;
    c.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "test_sampling", "arguments": {"prompt": "Hi"}}})).await;
    let p = answer(
        &mut c,
        "sampling/createMessage",
        json!({"role": "assistant", "content": {"type": "text", "text": "Hello!"}, "model": "m"}),
    )
    .await;
    assert_eq!(
        p,
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Hi"}}], "maxTokens": 100})
    );
    assert_eq!(
        c.recv_id(&json!(1)).await["result"]["content"][0]["text"],
        "LLM response: Hello!"
    );

    c.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "test_elicitation", "arguments": {"message": "Who?"}}})).await;
    let p = answer(
        &mut c,
        "elicitation/create",
        json!({"action": "accept", "content": {"username": "ann", "email": "a@b.c"}}),
    )
    .await;
    assert_eq!(
        p["requestedSchema"]["required"],
        json!(["username", "email"])
    );
    assert_eq!(
        c.recv_id(&json!(2)).await["result"]["content"][0]["text"],
        r#"User response: action=accept, content={"username":"ann","email":"a@b.c"}"#
    );

    c.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "test_list_roots"}})).await;
    answer(
        &mut c,
        "roots/list",
        json!({"roots": [{"uri": "file:///tmp", "name": "tmp"}]}),
    )
    .await;
    assert_eq!(
        c.recv_id(&json!(3)).await["result"]["content"][0]["text"],
        r#"Roots: [{"uri":"file:///tmp","name":"tmp"}]"#
    );
}

#[tokio::test]
async fn requests_to_a_client_without_the_capability_are_refused_locally() {
    let server = everything_server(SessionConfig::default()).unwrap();
    let (a, b) = memory::pair();
    server.serve(b).unwrap();
    let mut c = RawPeer::new(a, "2025-11-25");
    c.handshake("2025-11-25", json!({})).await;
    for (id, name, args) in [
        (1, "test_sampling", json!({"prompt": "x"})),
        (2, "test_elicitation", json!({"message": "x"})),
        (3, "test_list_roots", json!({})),
    ] {
        let r = call(&mut c, id, name, args).await;
        assert_eq!(
            r["isError"], true,
            "{name}: no frame sent to the client, the tool reports it: {r}"
        );
    }
}

#[tokio::test]
async fn contract_3_resources_paginate_10_10_8() {
    let mut c = connect().await;
    let mut uris = Vec::new();
    let mut cursor = Value::Null;
    let mut pages = Vec::new();
    for id in 0.. {
        let params = if cursor.is_null() {
            json!({})
        } else {
            json!({"cursor": cursor})
        };
        let r = c.request(json!(id), "resources/list", params).await["result"].clone();
        let items = r["resources"].as_array().unwrap();
        pages.push(items.len());
        uris.extend(items.iter().map(|i| i["uri"].as_str().unwrap().to_owned()));
        match r.get("nextCursor") {
            Some(next) => cursor = next.clone(),
            None => break,
        }
    }
    assert_eq!(pages, vec![10, 10, 8]);
    assert_eq!(
        &uris[..3],
        [
            "test://static-text",
            "test://static-binary",
            "test://watched-resource"
        ]
    );
    assert_eq!(uris[27], "test://paginated/25");
}

#[tokio::test]
async fn ut_12_forged_cursor_is_32602() {
    let mut c = connect().await;
    let r = c.request(json!(1), "resources/list", json!({})).await;
    let cursor = r["result"]["nextCursor"].as_str().unwrap().to_owned();
    let forged = format!("1{cursor}");
    let r = c
        .request(json!(2), "resources/list", json!({"cursor": forged}))
        .await;
    assert_eq!(r["error"]["code"], -32602);
    let r = c
        .request(json!(3), "tools/list", json!({"cursor": cursor}))
        .await;
    assert_eq!(
        r["error"]["code"], -32602,
        "a resources/list cursor is not a tools/list cursor"
    );
}

#[tokio::test]
async fn contract_3_reads_and_templates() {
    let mut c = connect().await;
    let r = c
        .request(
            json!(1),
            "resources/read",
            json!({"uri": "test://static-text"}),
        )
        .await;
    assert_eq!(
        r["result"]["contents"][0],
        json!({"uri": "test://static-text", "mimeType": "text/plain", "text": "This is the content of the static text resource."})
    );
    let r = c
        .request(
            json!(2),
            "resources/read",
            json!({"uri": "test://static-binary"}),
        )
        .await;
    assert_eq!(r["result"]["contents"][0]["blob"], PNG);
    let r = c
        .request(
            json!(3),
            "resources/read",
            json!({"uri": "test://paginated/07"}),
        )
        .await;
    assert_eq!(r["result"]["contents"][0]["text"], "Paginated resource 07");
    let r = c
        .request(json!(4), "resources/templates/list", json!({}))
        .await;
    assert_eq!(
        r["result"]["resourceTemplates"],
        json!([{"uriTemplate": "test://template/{id}/data", "name": "template", "mimeType": "application/json"}])
    );
    let r = c
        .request(
            json!(5),
            "resources/read",
            json!({"uri": "test://template/42/data"}),
        )
        .await;
    let body: Value =
        serde_json::from_str(r["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        body,
        json!({"id": "42", "templateTest": true, "data": "Data for ID: 42"})
    );
    assert_eq!(r["result"]["contents"][0]["uri"], "test://template/42/data");
    let r = c
        .request(json!(6), "resources/read", json!({"uri": "test://nope"}))
        .await;
    assert_eq!(r["error"]["code"], -32002);
    assert_eq!(r["error"]["data"]["uri"], "test://nope");
}

#[tokio::test]
async fn contract_3_subscriptions_are_per_session() {
    let server = everything_server(SessionConfig::default()).unwrap();
    let mut sessions = Vec::new();
    for _ in 0..2 {
        let (a, b) = memory::pair();
        server.serve(b).unwrap();
        let mut c = RawPeer::new(a, "2025-11-25");
        c.handshake("2025-11-25", json!({})).await;
        sessions.push(c);
    }
    let (mut one, mut two) = (sessions.remove(0), sessions.remove(0));
    assert_eq!(
        one.request(
            json!(1),
            "resources/subscribe",
            json!({"uri": "test://watched-resource"})
        )
        .await["result"],
        json!({})
    );
    one.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "test_trigger_resource_update"}})).await;
    let mut got_update = false;
    loop {
        let f = one.recv().await;
        if f.get("id").is_some() {
            assert_eq!(
                f["result"]["content"][0]["text"],
                "Updated test://watched-resource: update=1 notified=true"
            );
            break;
        }
        assert_eq!(
            f,
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "test://watched-resource"}})
        );
        got_update = true;
    }
    assert!(got_update);
    let r = one
        .request(
            json!(3),
            "resources/read",
            json!({"uri": "test://watched-resource"}),
        )
        .await;
    assert_eq!(
        r["result"]["contents"][0]["text"],
        "Watched resource content (update 1)"
    );
    // The other session did not subscribe: it is not notified and its counter is its own, but
    // its trigger announces the update to every subscriber, session one among them (one path
    // per notification: issue 24).
    let r = call(&mut two, 1, "test_trigger_resource_update", json!({})).await;
    assert_eq!(
        r["content"][0]["text"],
        "Updated test://watched-resource: update=1 notified=true"
    );
    assert_eq!(
        one.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "test://watched-resource"}})
    );
    one.expect_silence(50).await;
    two.expect_silence(50).await;
    // Unsubscribing stops updates.
    one.request(
        json!(4),
        "resources/unsubscribe",
        json!({"uri": "test://watched-resource"}),
    )
    .await;
    let r = call(&mut one, 5, "test_trigger_resource_update", json!({})).await;
    assert_eq!(
        r["content"][0]["text"],
        "Updated test://watched-resource: update=2 notified=false"
    );
}

#[tokio::test]
async fn contract_2_dynamic_tools_are_per_session() {
    let mut c = connect().await;
    let names = |r: &Value| {
        r["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    // The tool sorts onto the second page of ten (the tasks extension's seven fixtures sort
    // before it), so the whole list is walked.
    async fn all_tools(
        c: &mut RawPeer,
        id: i64,
        names: impl Fn(&Value) -> Vec<String>,
    ) -> Vec<String> {
        let mut r = c.request(json!(id), "tools/list", json!({})).await;
        let mut all = names(&r);
        while let Some(cursor) = r["result"].get("nextCursor").cloned() {
            r = c
                .request(json!(id), "tools/list", json!({"cursor": cursor}))
                .await;
            all.extend(names(&r));
        }
        all
    }
    assert!(
        !all_tools(&mut c, 1, names)
            .await
            .contains(&"test_dynamic_tool".to_owned())
    );
    c.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "test_add_dynamic_tool"}})).await;
    assert_eq!(c.recv().await["method"], "notifications/tools/list_changed");
    assert_eq!(
        c.recv_id(&json!(2)).await["result"]["content"][0]["text"],
        "Registered test_dynamic_tool"
    );
    assert!(
        all_tools(&mut c, 3, names)
            .await
            .contains(&"test_dynamic_tool".to_owned())
    );
    assert_eq!(
        call(&mut c, 4, "test_dynamic_tool", json!({})).await["content"][0]["text"],
        "dynamic tool response"
    );
    c.send(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "test_remove_dynamic_tool"}})).await;
    assert_eq!(c.recv().await["method"], "notifications/tools/list_changed");
    c.recv_id(&json!(5)).await;
    assert_eq!(
        c.request(json!(6), "tools/call", json!({"name": "test_dynamic_tool"}))
            .await["error"]["code"],
        -32602
    );
}

#[tokio::test]
async fn contract_4_prompts() {
    let mut c = connect().await;
    let r = c.request(json!(1), "prompts/list", json!({})).await;
    let names: Vec<&str> = r["result"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "test_simple_prompt",
            "test_prompt_with_arguments",
            "test_prompt_with_embedded_resource",
            "test_prompt_with_image",
            "test_input_required_result_prompt"
        ]
    );
    let r = c
        .request(
            json!(2),
            "prompts/get",
            json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}}),
        )
        .await;
    assert_eq!(
        r["result"]["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Prompt with arguments: arg1='a', arg2='b'"}}])
    );
    let r = c
        .request(
            json!(3),
            "prompts/get",
            json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "a"}}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602, "missing required argument");
    assert_eq!(r["error"]["data"]["missing"], json!(["arg2"]));
    let r = c.request(json!(4), "prompts/get", json!({"name": "test_prompt_with_embedded_resource", "arguments": {"resourceUri": "test://x"}})).await;
    assert_eq!(
        r["result"]["messages"][0]["content"]["resource"],
        json!({"uri": "test://x", "mimeType": "text/plain", "text": "Embedded resource content for testing."})
    );
    let r = c
        .request(
            json!(5),
            "prompts/get",
            json!({"name": "test_prompt_with_image"}),
        )
        .await;
    assert_eq!(r["result"]["messages"][0]["content"]["data"], PNG);
    assert_eq!(
        c.request(json!(6), "prompts/get", json!({"name": "nope"}))
            .await["error"]["code"],
        -32602
    );
}

#[tokio::test]
async fn contract_5_completion() {
    let mut c = connect().await;
    let complete = |r: Value, name: &str, value: &str| json!({"ref": r, "argument": {"name": name, "value": value}});
    let p = json!({"type": "ref/prompt", "name": "test_prompt_with_arguments"});
    let r = c
        .request(
            json!(1),
            "completion/complete",
            complete(p.clone(), "arg1", "al"),
        )
        .await;
    assert_eq!(
        r["result"]["completion"],
        json!({"values": ["alpha", "alpine"], "total": 2, "hasMore": false})
    );
    let r = c
        .request(
            json!(2),
            "completion/complete",
            complete(p.clone(), "arg2", "t"),
        )
        .await;
    assert_eq!(r["result"]["completion"]["values"], json!(["two", "three"]));
    let t = json!({"type": "ref/resource", "uri": "test://template/{id}/data"});
    let r = c
        .request(json!(3), "completion/complete", complete(t, "id", "1"))
        .await;
    assert_eq!(r["result"]["completion"]["values"], json!(["100", "123"]));
    let r = c
        .request(json!(4), "completion/complete", complete(p, "arg1", "test"))
        .await;
    assert_eq!(r["result"]["completion"]["values"], json!([]));
    let r = c
        .request(
            json!(5),
            "completion/complete",
            complete(json!({"type": "ref/prompt", "name": "nope"}), "a", ""),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602);
}

#[tokio::test]
async fn json_schema_2020_12_tool_keeps_its_schema_verbatim() {
    let mut c = connect().await;
    let r = c.request(json!(1), "tools/list", json!({})).await;
    let mut tools = r["result"]["tools"].as_array().unwrap().clone();
    let mut cursor = r["result"].get("nextCursor").cloned();
    while let Some(cur) = cursor {
        let r = c
            .request(json!(2), "tools/list", json!({"cursor": cur}))
            .await;
        tools.extend(r["result"]["tools"].as_array().unwrap().iter().cloned());
        cursor = r["result"].get("nextCursor").cloned();
    }
    let t = tools
        .iter()
        .find(|t| t["name"] == "json_schema_2020_12_tool")
        .unwrap();
    assert_eq!(
        t["inputSchema"]["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(t["inputSchema"]["additionalProperties"], false);
    assert_eq!(
        t["inputSchema"]["properties"]["address"],
        json!({"$ref": "#/$defs/address"})
    );
    let keys: Vec<&String> = t["inputSchema"].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "$schema",
            "type",
            "$defs",
            "properties",
            "allOf",
            "if",
            "then",
            "else",
            "additionalProperties"
        ],
        "member order kept"
    );
    assert_eq!(t["inputSchema"]["$defs"]["address"]["$anchor"], "address");
    assert!(
        tools.iter().all(|t| t["inputSchema"]["type"] == "object"),
        "SF-6"
    );
}

#[tokio::test]
async fn cancellation_drops_a_running_tool_and_no_answer_is_sent() {
    let mut c = connect().await;
    c.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "test_sampling", "arguments": {"prompt": "x"}}})).await;
    let req = c.recv().await;
    assert_eq!(req["method"], "sampling/createMessage");
    c.notify(
        "notifications/cancelled",
        json!({"requestId": 1, "reason": "user"}),
    )
    .await;
    // The tool's future (awaiting our sampling answer) is dropped: it cancels its own sampling
    // request in turn, and no answer to id 1 ever comes.
    let f = c.recv().await;
    assert_eq!(f["method"], "notifications/cancelled");
    assert_eq!(f["params"]["requestId"], req["id"]);
    c.expect_silence(100).await;
    assert_eq!(
        c.request(json!(2), "ping", Value::Null).await["result"],
        json!({})
    );
}
