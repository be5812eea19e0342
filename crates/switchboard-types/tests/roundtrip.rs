//! Round-trip vectors: for every wire type, a rich hand-written JSON value (with unknown members
//! added at several depths) is read into the Rust type and written back; the result must equal
//! the input as a `serde_json::Value` (member order aside), and must read back to an equal value.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use switchboard_types::capabilities::*;
use switchboard_types::completion::*;
use switchboard_types::content::*;
use switchboard_types::elicitation::*;
use switchboard_types::lifecycle::*;
use switchboard_types::logging::*;
use switchboard_types::meta::*;
use switchboard_types::prompts::*;
use switchboard_types::resources::*;
use switchboard_types::roots::*;
use switchboard_types::sampling::*;
use switchboard_types::tasks::*;
use switchboard_types::tools::*;

/// Reads `v` as `T` (from text, as on the wire), writes it back and compares.
#[track_caller]
fn rt<T: DeserializeOwned + Serialize + PartialEq + std::fmt::Debug>(v: Value) -> T {
    let text = v.to_string();
    let t: T = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{}: {e}\n{text}", std::any::type_name::<T>()));
    let back = serde_json::to_value(&t).expect("serialize");
    assert_eq!(
        back,
        v,
        "{} changed on the way back",
        std::any::type_name::<T>()
    );
    let again: T = serde_json::from_value(back).expect("read back");
    assert_eq!(again, t);
    t
}

fn icon() -> Value {
    json!({"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48", "any"],
           "theme": "dark", "x-icon": true})
}

fn annotations() -> Value {
    json!({"audience": ["user", "assistant"], "priority": 0.7, "lastModified": "2025-01-12T15:00:58Z",
           "x-ann": {"deep": [1, 2]}})
}

#[test]
fn meta_and_base_shapes() {
    let meta: Meta = rt(
        json!({"progressToken": 42, "io.modelcontextprotocol/related-task": {"taskId": "t1"},
        "io.modelcontextprotocol/model-immediate-response": "working on it", "com.example/x": [1, {"y": null}]}),
    );
    assert_eq!(meta.progress_token(), Some(42.into()));
    assert_eq!(
        meta.related_task().map(|t| t.task_id),
        Some("t1".to_owned())
    );
    assert_eq!(meta.model_immediate_response(), Some("working on it"));
    rt::<EmptyObject>(json!({}));
    rt::<EmptyObject>(json!({"x-flag": 1}));
    rt::<RequestParams>(json!({"_meta": {"progressToken": "p"}, "x-req": 1}));
    rt::<NotificationParams>(json!({"_meta": {"a": 1}, "x-note": "n"}));
    rt::<EmptyResult>(json!({}));
    rt::<EmptyResult>(json!({"_meta": {"k": "v"}, "x-res": [true]}));
    rt::<PaginatedRequestParams>(
        json!({"cursor": "eyJwYWdlIjogMn0=", "_meta": {"progressToken": 1}, "x": 0}),
    );
    rt::<PaginatedResult>(json!({"nextCursor": "c2", "_meta": {}, "ttlMs": 600000}));
    rt::<OrderedMap<String>>(json!({"b": "2", "a": "1"}));
}

#[test]
fn lifecycle_types() {
    let implementation = json!({"name": "switchboard", "title": "Switchboard", "version": "0.1.0",
        "description": "An MCP implementation", "icons": [icon()], "websiteUrl": "https://example.invalid",
        "x-impl": {"build": 7}});
    rt::<Implementation>(implementation.clone());
    let client_caps = json!({"experimental": {"x.y/z": {"on": true}}, "roots": {"listChanged": true, "x-r": 1},
        "sampling": {"context": {}, "tools": {"x-t": 2}}, "elicitation": {"form": {}, "url": {}},
        "tasks": {"list": {}, "cancel": {}, "requests": {"sampling": {"createMessage": {}},
        "elicitation": {"create": {}}, "x-req": {}}}, "extensions": {"io.modelcontextprotocol/ui": {}}});
    let p: InitializeRequestParams = rt(
        json!({"protocolVersion": "2025-11-25", "capabilities": client_caps,
        "clientInfo": implementation, "_meta": {"progressToken": "init"}, "x-init": 1}),
    );
    assert!(p.protocol_version().is_some());
    let server_caps = json!({"experimental": {"a": {}}, "logging": {}, "completions": {},
        "prompts": {"listChanged": true}, "resources": {"subscribe": true, "listChanged": false},
        "tools": {"listChanged": true}, "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
        "x-server": null});
    let r: InitializeResult = rt(
        json!({"protocolVersion": "2099-01-01", "capabilities": server_caps,
        "serverInfo": {"name": "s", "version": "1"}, "instructions": "Use tools wisely.",
        "_meta": {"k": 1}, "x-result": "future"}),
    );
    assert_eq!(
        r.protocol_version(),
        None,
        "an unknown revision is kept as a string"
    );
    rt::<CancelledNotificationParams>(
        json!({"requestId": "123", "reason": "User requested cancellation",
        "_meta": {}, "x-c": 1}),
    );
    rt::<CancelledNotificationParams>(json!({"reason": "task-era params may omit requestId"}));
    rt::<ProgressNotificationParams>(
        json!({"progressToken": "oivaizmir", "progress": 50, "total": 100,
        "message": "Reticulating splines...", "_meta": {}, "x-p": 1}),
    );
    rt::<ProgressNotificationParams>(json!({"progressToken": 7, "progress": 0.25, "total": 1.0}));
}

#[test]
fn capability_types() {
    rt::<ClientCapabilities>(json!({}));
    rt::<ClientCapabilities>(json!({"sampling": {}, "roots": {}, "elicitation": {}}));
    rt::<RootsCapability>(json!({"listChanged": true, "x": 1}));
    rt::<SamplingCapability>(json!({"context": {}, "tools": {}, "x": 1}));
    rt::<ElicitationCapability>(json!({"form": {"x": 1}, "url": {}, "y": 2}));
    rt::<ClientTasksCapability>(json!({"list": {}, "cancel": {}, "requests": {}, "x": 1}));
    rt::<ClientTaskRequests>(
        json!({"sampling": {"createMessage": {}}, "elicitation": {"create": {}}, "x": 1}),
    );
    rt::<SamplingTaskRequests>(json!({"createMessage": {"x": 1}, "y": 2}));
    rt::<ElicitationTaskRequests>(json!({"create": {}, "y": 2}));
    rt::<ServerCapabilities>(json!({"logging": {}, "prompts": {}, "resources": {}, "tools": {}}));
    rt::<PromptsCapability>(json!({"listChanged": false, "x": 1}));
    rt::<ResourcesCapability>(json!({"subscribe": true, "listChanged": true, "x": 1}));
    rt::<ToolsCapability>(json!({"listChanged": true, "x": 1}));
    rt::<ServerTasksCapability>(
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}, "x": 1}),
    );
    rt::<ServerTaskRequests>(json!({"tools": {"call": {}, "x": 1}, "y": 2}));
    rt::<ToolsTaskRequests>(json!({"call": {}, "y": 2}));
}

#[test]
fn content_types() {
    rt::<Role>(json!("assistant"));
    rt::<Annotations>(annotations());
    rt::<Icon>(icon());
    rt::<IconTheme>(json!("light"));
    rt::<BaseMetadata>(json!({"name": "n", "title": "T", "x": 1}));
    let text = json!({"type": "text", "text": "hello", "annotations": annotations(), "_meta": {"m": 1}, "x": 1});
    rt::<TextContent>(text.clone());
    let image = json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png",
        "annotations": {"audience": ["user"], "priority": 1}, "_meta": {}, "x": 1});
    rt::<ImageContent>(image.clone());
    let audio = json!({"type": "audio", "data": "UklGRiQ=", "mimeType": "audio/wav", "annotations": {}, "x": 1});
    rt::<AudioContent>(audio.clone());
    let link = json!({"type": "resource_link", "uri": "file:///project/src/main.rs", "name": "main.rs",
        "title": "Main", "description": "Entry point", "mimeType": "text/x-rust", "size": 1024,
        "annotations": annotations(), "icons": [icon()], "_meta": {"m": 2}, "x-link": 1});
    rt::<ResourceLink>(link.clone());
    let text_contents =
        json!({"uri": "file:///a.txt", "mimeType": "text/plain", "text": "A", "_meta": {}, "x": 1});
    let blob_contents =
        json!({"uri": "file:///a.png", "mimeType": "image/png", "blob": "iVBORw0KGgo=", "x": 2});
    rt::<TextResourceContents>(text_contents.clone());
    rt::<BlobResourceContents>(blob_contents.clone());
    assert!(matches!(
        rt::<ResourceContents>(text_contents.clone()),
        ResourceContents::Text(_)
    ));
    assert!(matches!(
        rt::<ResourceContents>(blob_contents.clone()),
        ResourceContents::Blob(_)
    ));
    let embedded = json!({"type": "resource", "resource": text_contents, "annotations": annotations(),
        "_meta": {}, "x": 1});
    rt::<EmbeddedResource>(embedded.clone());
    let unknown = json!({"type": "hologram", "frames": [1, 2, 3], "_meta": {"k": 1}});
    let blocks: Vec<ContentBlock> = rt(json!([text, image, audio, link, embedded, unknown]));
    let names: Vec<_> = blocks.iter().filter_map(ContentBlock::type_name).collect();
    assert_eq!(
        names,
        [
            "text",
            "image",
            "audio",
            "resource_link",
            "resource",
            "hologram"
        ]
    );
    assert!(matches!(blocks[5], ContentBlock::Unknown(_)));
}

#[test]
fn resource_types() {
    let resource = json!({"uri": "file:///project/README.md", "name": "README.md", "title": "Docs",
        "description": "Project documentation", "mimeType": "text/markdown", "annotations": annotations(),
        "size": 2048, "icons": [icon()], "_meta": {"m": 1}, "x-res": 1});
    rt::<Resource>(resource.clone());
    let template = json!({"uriTemplate": "file:///{path}", "name": "files", "title": "Files",
        "description": "Any file", "mimeType": "application/octet-stream", "annotations": annotations(),
        "icons": [icon()], "_meta": {}, "x-tpl": 1});
    rt::<ResourceTemplate>(template.clone());
    rt::<ListResourcesResult>(
        json!({"resources": [resource], "nextCursor": "n", "_meta": {}, "ttlMs": 1}),
    );
    rt::<ListResourceTemplatesResult>(
        json!({"resourceTemplates": [template], "nextCursor": "n", "x": 1}),
    );
    rt::<ResourceRequestParams>(json!({"uri": "file:///a", "_meta": {"progressToken": 1}, "x": 1}));
    rt::<ReadResourceRequestParams>(json!({"uri": "file:///a"}));
    rt::<SubscribeRequestParams>(json!({"uri": "file:///a", "x": 1}));
    rt::<UnsubscribeRequestParams>(json!({"uri": "file:///a", "x": 2}));
    rt::<ReadResourceResult>(json!({"contents": [{"uri": "file:///a", "text": "A"},
        {"uri": "file:///b", "blob": "Qg==", "mimeType": "application/octet-stream"}], "_meta": {}, "x": 1}));
    rt::<ResourceUpdatedNotificationParams>(json!({"uri": "file:///a", "_meta": {}, "x": 1}));
}

#[test]
fn sf_6_tool_types() {
    let tool = json!({"name": "get_weather", "title": "Weather", "description": "Current weather",
        "inputSchema": {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
            "properties": {"location": {"type": "string"}}, "required": ["location"], "additionalProperties": false},
        "execution": {"taskSupport": "optional", "x": 1},
        "outputSchema": {"type": "object", "properties": {"t": {"type": "number"}}, "required": ["t"]},
        "annotations": {"title": "W", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true,
            "openWorldHint": false, "x": 1},
        "icons": [icon()], "_meta": {"m": 1}, "x-tool": {"future": true}});
    let t: Tool = rt(tool.clone());
    assert_eq!(t.task_support(), TaskSupport::Optional);
    assert_eq!(t.display_name(), "Weather");
    rt::<ToolAnnotations>(json!({"readOnlyHint": false, "x": 1}));
    rt::<ToolExecution>(json!({"taskSupport": "required", "x": 1}));
    rt::<TaskSupport>(json!("forbidden"));
    rt::<ListToolsResult>(
        json!({"tools": [tool], "nextCursor": "next", "_meta": {}, "ttlMs": 300000}),
    );
    rt::<CallToolRequestParams>(
        json!({"name": "get_weather", "arguments": {"location": "NYC", "n": [1, 2.5]},
        "task": {"ttl": 120000, "x": 1}, "_meta": {"progressToken": "p1"}, "x": 1}),
    );
    let r: CallToolResult = rt(json!({"content": [{"type": "text", "text": "22.5"},
        {"type": "widget", "w": 1}], "structuredContent": {"temperature": 22.5}, "isError": false,
        "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t"}}, "x": 1}));
    assert!(!r.is_error());
}

#[test]
fn prompt_types() {
    let prompt = json!({"name": "code_review", "title": "Code review", "description": "Review code",
        "arguments": [{"name": "code", "title": "Code", "description": "The code", "required": true, "x": 1}],
        "icons": [icon()], "_meta": {}, "x-prompt": 1});
    rt::<Prompt>(prompt.clone());
    rt::<PromptArgument>(json!({"name": "lang", "required": false, "x": 2}));
    rt::<ListPromptsResult>(json!({"prompts": [prompt], "nextCursor": "c", "_meta": {}, "x": 1}));
    rt::<GetPromptRequestParams>(
        json!({"name": "code_review", "arguments": {"code": "x = 1", "lang": "py"},
        "_meta": {"progressToken": 3}, "x": 1}),
    );
    let msg = json!({"role": "user", "content": {"type": "resource_link", "uri": "file:///a", "name": "a"},
        "x-msg": 1});
    rt::<PromptMessage>(msg.clone());
    rt::<GetPromptResult>(
        json!({"description": "Code review prompt", "messages": [msg,
        {"role": "assistant", "content": {"type": "text", "text": "ok"}}], "_meta": {}, "resultType": "complete"}),
    );
}

#[test]
fn sa_sampling_types() {
    let tool_use = json!({"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"},
        "_meta": {"cache": "k"}, "x": 1});
    let tool_result = json!({"type": "tool_result", "toolUseId": "call_1",
        "content": [{"type": "text", "text": "18C"}], "structuredContent": {"c": 18}, "isError": false,
        "_meta": {}, "x": 1});
    rt::<ToolUseContent>(tool_use.clone());
    rt::<ToolResultContent>(tool_result.clone());
    rt::<SamplingMessageContentBlock>(json!({"type": "text", "text": "hi"}));
    rt::<SamplingMessageContentBlock>(json!({"type": "thinking", "text": "unknown tag kept"}));
    let single = json!({"role": "user", "content": {"type": "text", "text": "Weather?"}, "_meta": {}, "x": 1});
    let assistant = json!({"role": "assistant", "content": [tool_use.clone(),
        {"type": "audio", "data": "UklG", "mimeType": "audio/wav"}]});
    let results = json!({"role": "user", "content": [tool_result]});
    rt::<SamplingMessage>(single.clone());
    rt::<OneOrMany<SamplingMessageContentBlock>>(
        json!([{"type": "image", "data": "iVBO", "mimeType": "image/png"}]),
    );
    rt::<ModelHint>(json!({"name": "claude", "x": 1}));
    let prefs = json!({"hints": [{"name": "claude-3-sonnet"}, {}], "costPriority": 0.3, "speedPriority": 1,
        "intelligencePriority": 0.5, "x": 1});
    rt::<ModelPreferences>(prefs.clone());
    rt::<ToolChoice>(json!({"mode": "required", "x": 1}));
    rt::<ToolChoiceMode>(json!("none"));
    rt::<IncludeContext>(json!("thisServer"));
    rt::<CreateMessageRequestParams>(
        json!({"messages": [single, assistant, results], "modelPreferences": prefs,
        "systemPrompt": "Be brief.", "includeContext": "none", "temperature": 0.7, "maxTokens": 1000,
        "stopSequences": ["\n\n"], "metadata": {"provider": {"k": 1}},
        "tools": [{"name": "get_weather", "inputSchema": {"type": "object"}}], "toolChoice": {"mode": "auto"},
        "task": {"ttl": 60000}, "_meta": {"progressToken": 9}, "x": 1}),
    );
    rt::<CreateMessageResult>(
        json!({"role": "assistant", "content": [tool_use], "model": "claude-3-sonnet",
        "stopReason": "toolUse", "_meta": {}, "x": 1}),
    );
    rt::<CreateMessageResult>(
        json!({"role": "assistant", "content": {"type": "text", "text": "Paris"},
        "model": "m", "stopReason": "provider-specific"}),
    );
}

#[test]
fn el_elicitation_types() {
    let string = json!({"type": "string", "title": "Email", "description": "Your email", "minLength": 3,
        "maxLength": 50, "format": "email", "default": "a@b.c", "pattern": "^.+@.+$"});
    let number = json!({"type": "integer", "title": "Age", "minimum": 18, "maximum": 150.5, "default": 30, "x": 1});
    let boolean = json!({"type": "boolean", "title": "Subscribe", "description": "d", "default": false, "x": 1});
    let untitled_single = json!({"type": "string", "title": "Color", "enum": ["Red", "Green"], "default": "Red",
        "x": 1});
    let titled_single = json!({"type": "string", "oneOf": [{"const": "#F00", "title": "Red", "x": 1}],
        "default": "#F00"});
    let untitled_multi = json!({"type": "array", "minItems": 1, "maxItems": 2,
        "items": {"type": "string", "enum": ["Red", "Green"], "x": 1}, "default": ["Red"], "x": 2});
    let titled_multi = json!({"type": "array", "title": "Colors",
        "items": {"anyOf": [{"const": "#F00", "title": "Red"}], "x": 1}, "default": ["#F00"]});
    let legacy = json!({"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"], "default": "a", "x": 1});
    rt::<StringSchema>(string.clone());
    rt::<NumberSchema>(number.clone());
    rt::<NumberType>(json!("number"));
    rt::<BooleanSchema>(boolean.clone());
    rt::<UntitledSingleSelectEnumSchema>(untitled_single.clone());
    rt::<TitledSingleSelectEnumSchema>(titled_single.clone());
    rt::<TitledEnumOption>(json!({"const": "v", "title": "V", "x": 1}));
    rt::<UntitledEnumItems>(json!({"type": "string", "enum": ["a"], "x": 1}));
    rt::<TitledEnumItems>(json!({"anyOf": [], "x": 1}));
    rt::<UntitledMultiSelectEnumSchema>(untitled_multi.clone());
    rt::<TitledMultiSelectEnumSchema>(titled_multi.clone());
    rt::<LegacyTitledEnumSchema>(legacy.clone());
    rt::<SingleSelectEnumSchema>(titled_single.clone());
    rt::<MultiSelectEnumSchema>(untitled_multi.clone());
    rt::<EnumSchema>(legacy.clone());
    let unknown = json!({"type": "object", "properties": {}});
    for v in [
        &string,
        &number,
        &boolean,
        &untitled_single,
        &titled_single,
        &untitled_multi,
        &titled_multi,
        &legacy,
        &unknown,
    ] {
        rt::<PrimitiveSchemaDefinition>(v.clone());
    }
    let schema = json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
        "properties": {"email": string, "age": number, "ok": boolean, "color": untitled_single,
            "tint": titled_single, "colors": untitled_multi, "tints": titled_multi, "legacy": legacy},
        "required": ["email"], "x": 1});
    rt::<RequestedSchema>(schema.clone());
    let form = json!({"mode": "form", "message": "Contact info?", "requestedSchema": schema,
        "task": {"ttl": 1}, "_meta": {"progressToken": 1}, "x": 1});
    rt::<ElicitRequestFormParams>(form.clone());
    let url = json!({"mode": "url", "message": "Link your account", "elicitationId": "el-3f9c",
        "url": "https://mcp.example.com/link?e=el-3f9c", "task": {}, "_meta": {}, "x": 1});
    rt::<ElicitRequestURLParams>(url.clone());
    assert!(matches!(
        rt::<ElicitRequestParams>(form),
        ElicitRequestParams::Form(_)
    ));
    assert!(matches!(
        rt::<ElicitRequestParams>(url.clone()),
        ElicitRequestParams::Url(_)
    ));
    rt::<ElicitAction>(json!("decline"));
    rt::<ElicitContentValue>(json!(["a", "b"]));
    rt::<ElicitResult>(
        json!({"action": "accept", "content": {"name": "octocat", "age": 30, "ratio": 0.5,
        "ok": true, "colors": ["Red"]}, "_meta": {}, "x": 1}),
    );
    rt::<ElicitResult>(json!({"action": "cancel"}));
    rt::<ElicitationCompleteNotificationParams>(
        json!({"elicitationId": "el-3f9c", "_meta": {}, "x": 1}),
    );
    rt::<URLElicitationRequiredErrorData>(json!({"elicitations": [url], "x": 1}));
}

#[test]
fn ro_roots_types() {
    let root = json!({"uri": "file:///home/user/project", "name": "Project", "_meta": {}, "x": 1});
    rt::<Root>(root.clone());
    rt::<ListRootsResult>(json!({"roots": [root, {"uri": "file:///tmp"}], "_meta": {}, "x": 1}));
    rt::<ListRootsRequestParams>(json!({}));
}

#[test]
fn logging_types() {
    rt::<LoggingLevel>(json!("emergency"));
    rt::<SetLevelRequestParams>(json!({"level": "warning", "_meta": {}, "x": 1}));
    rt::<LoggingMessageNotificationParams>(json!({"level": "error", "logger": "database",
        "data": {"error": "Connection failed", "details": {"port": 5432}}, "_meta": {}, "x": 1}));
    rt::<LoggingMessageNotificationParams>(json!({"level": "info", "data": null}));
}

#[test]
fn completion_types() {
    let prompt_ref =
        json!({"type": "ref/prompt", "name": "code_review", "title": "Review", "x": 1});
    let resource_ref = json!({"type": "ref/resource", "uri": "file:///{path}", "x": 1});
    rt::<PromptReference>(prompt_ref.clone());
    rt::<ResourceTemplateReference>(resource_ref.clone());
    assert!(matches!(
        rt::<Reference>(prompt_ref.clone()),
        Reference::Prompt(_)
    ));
    assert!(matches!(
        rt::<Reference>(resource_ref),
        Reference::Resource(_)
    ));
    assert!(matches!(
        rt::<Reference>(json!({"type": "ref/tool", "name": "t"})),
        Reference::Unknown(_)
    ));
    rt::<CompleteArgument>(json!({"name": "framework", "value": "fla", "x": 1}));
    rt::<CompleteContext>(json!({"arguments": {"language": "python"}, "x": 1}));
    rt::<CompleteRequestParams>(
        json!({"ref": prompt_ref, "argument": {"name": "framework", "value": "fla"},
        "context": {"arguments": {"language": "python"}}, "_meta": {}, "x": 1}),
    );
    rt::<Completion>(
        json!({"values": ["python", "pytorch"], "total": 10, "hasMore": true, "x": 1}),
    );
    rt::<CompleteResult>(json!({"completion": {"values": []}, "_meta": {}, "x": 1}));
}

#[test]
fn tk_task_types() {
    let task = json!({"taskId": "tsk_9b1e", "status": "input_required", "statusMessage": "Needs input",
        "createdAt": "2026-01-10T08:00:00Z", "lastUpdatedAt": "2026-01-10T08:01:00Z", "ttl": 120000,
        "pollInterval": 2000, "x-task": 1});
    rt::<Task>(task.clone());
    rt::<Task>(
        json!({"taskId": "t", "status": "completed", "createdAt": "a", "lastUpdatedAt": "b", "ttl": null}),
    );
    for s in [
        "working",
        "input_required",
        "completed",
        "failed",
        "cancelled",
    ] {
        rt::<TaskStatus>(json!(s));
    }
    rt::<TaskMetadata>(json!({"ttl": 60000, "x": 1}));
    rt::<RelatedTaskMetadata>(json!({"taskId": "t1", "x": 1}));
    rt::<TaskAugmentedRequestParams>(json!({"task": {"ttl": 5}, "_meta": {}, "x": 1}));
    let created: CreateTaskResult = rt(json!({"task": task.clone(),
        "_meta": {"io.modelcontextprotocol/model-immediate-response": "Started the export."}, "x": 1}));
    assert_eq!(created.task.status, TaskStatus::InputRequired);
    rt::<GetTaskRequestParams>(json!({"taskId": "t1", "_meta": {}, "x": 1}));
    rt::<GetTaskPayloadRequestParams>(json!({"taskId": "t1"}));
    rt::<CancelTaskRequestParams>(json!({"taskId": "t1"}));
    let mut with_meta = task.clone();
    with_meta["_meta"] = json!({"k": 1});
    let got: GetTaskResult = rt(with_meta.clone());
    assert_eq!(got.task.extra.get("x-task"), Some(&json!(1)));
    assert!(
        !got.task.extra.contains_key("_meta"),
        "_meta is the result's, not an unknown task member"
    );
    rt::<CancelTaskResult>(task.clone());
    rt::<TaskStatusNotificationParams>(with_meta);
    rt::<ListTasksResult>(json!({"tasks": [task], "nextCursor": "c", "_meta": {}, "x": 1}));
    let payload: GetTaskPayloadResult = rt(json!({"content": [{"type": "text", "text": "done"}],
        "isError": false, "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t1"}}}));
    let call: CallToolResult = payload.parse().expect("a CallToolResult");
    assert_eq!(call.content[0].as_text(), Some("done"));
    let wrapped = GetTaskPayloadResult::wrap(&CallToolResult::text("done"), "t1").expect("wrap");
    assert_eq!(
        wrapped
            .meta
            .and_then(|m| m.related_task())
            .map(|t| t.task_id),
        Some("t1".to_owned())
    );
}

#[test]
fn wrong_tags_are_rejected() {
    assert!(serde_json::from_value::<TextContent>(json!({"type": "image", "text": "x"})).is_err());
    assert!(
        serde_json::from_value::<ElicitRequestURLParams>(json!({"mode": "form", "message": "m",
        "elicitationId": "e", "url": "https://x"}))
        .is_err()
    );
    assert!(
        serde_json::from_value::<RequestedSchema>(json!({"type": "array", "properties": {}}))
            .is_err()
    );
}
