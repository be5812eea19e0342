//! Schema conformance: a populated instance of each type, built in Rust and serialized, is
//! validated against the same-named type of every revision's official `schema.json` that defines
//! it. Params are also validated inside a full request or notification frame against the method's
//! own type, so revisions before 2025-11-25 (which have no `*Params` types) are checked too.
//!
//! Where an older revision has a narrower shape (content arrays in sampling, resource links,
//! titled enums), a second instance that fits every revision is checked as well, and the rich one
//! only from the revision that introduced the feature.
//!
//! `every_schema_type_is_covered` runs all checks again and fails when a type of any revision is
//! neither checked nor listed as an envelope or union type with no Rust mirror of its own.

use std::cell::RefCell;
use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::{Number, Value, json};
use switchboard_test_support::{Schemas, result_def_for};
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
use switchboard_types::{ErrorObject, RequestId};

const REVISIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

thread_local! {
    static COVERED: RefCell<BTreeSet<String>> = const { RefCell::new(BTreeSet::new()) };
}

fn to_value<T: Serialize>(t: &T) -> Value {
    serde_json::to_value(t).expect("serialize")
}

fn revisions_since(since: &str) -> impl Iterator<Item = &'static str> {
    REVISIONS.into_iter().filter(move |r| *r >= since)
}

/// Validates `value` against `def` in every revision from `since` that defines `def`; at least one must.
#[track_caller]
fn check_since<T: Serialize>(def: &str, value: &T, since: &str) {
    let v = to_value(value);
    let mut n = 0;
    for rev in revisions_since(since) {
        let s = Schemas::get(rev);
        if s.has_def(def) {
            s.validate_def(def, &v).unwrap_or_else(|e| panic!("{e}"));
            n += 1;
        }
    }
    assert!(n > 0, "no revision from {since} defines {def}");
    COVERED.with(|c| c.borrow_mut().insert(def.to_owned()));
}

#[track_caller]
fn check<T: Serialize>(def: &str, value: &T) {
    check_since(def, value, REVISIONS[0]);
}

/// Validates a request (`id` given) or notification frame carrying `params` against the method's type.
#[track_caller]
fn check_frame<T: Serialize>(method: &str, params: &T, request: bool, since: &str) {
    let frame = if request {
        json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": to_value(params)})
    } else {
        json!({"jsonrpc": "2.0", "method": method, "params": to_value(params)})
    };
    let mut n = 0;
    for rev in revisions_since(since) {
        let s = Schemas::get(rev);
        if let Some(def) = s.def_for_method(method) {
            s.validate_frame(&frame, None)
                .unwrap_or_else(|e| panic!("{e}"));
            let def = def.to_owned();
            COVERED.with(|c| c.borrow_mut().insert(def));
            n += 1;
        }
    }
    assert!(n > 0, "no revision from {since} has method {method}");
}

#[track_caller]
fn check_request<T: Serialize>(method: &str, params: &T, since: &str) {
    check_frame(method, params, true, since);
}

#[track_caller]
fn check_notification<T: Serialize>(method: &str, params: &T, since: &str) {
    check_frame(method, params, false, since);
}

/// Validates a result against the type answering `method` in each revision from `since`.
#[track_caller]
fn check_result<T: Serialize>(method: &str, result: &T, since: &str) {
    let def = result_def_for(method).expect("known method");
    check_since(def, result, since);
}

fn num(f: f64) -> Number {
    Number::from_f64(f).expect("finite")
}

fn obj(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

fn meta() -> Option<Meta> {
    Some(Meta::new().with_progress_token(RequestId::string("p-1")))
}

fn icon() -> Icon {
    Icon {
        mime_type: Some("image/png".into()),
        sizes: Some(vec!["48x48".into(), "any".into()]),
        theme: Some(IconTheme::Dark),
        ..Icon::new("https://example.com/icon.png")
    }
}

fn annotations() -> Annotations {
    Annotations {
        audience: Some(vec![Role::User, Role::Assistant]),
        priority: Some(num(0.5)),
        last_modified: Some("2025-01-12T15:00:58Z".into()),
        extra: JsonObject::new(),
    }
}

fn implementation() -> Implementation {
    Implementation {
        description: Some("An MCP implementation".into()),
        icons: Some(vec![icon()]),
        website_url: Some("https://example.invalid".into()),
        ..Implementation::new("switchboard", "0.1.0").with_title("Switchboard")
    }
}

fn client_capabilities() -> ClientCapabilities {
    ClientCapabilities {
        experimental: Some(OrderedMap::new().with("x.example/feature", obj(json!({"on": true})))),
        roots: Some(RootsCapability {
            list_changed: Some(true),
            ..Default::default()
        }),
        sampling: Some(SamplingCapability {
            context: Some(EmptyObject::default()),
            tools: Some(EmptyObject::default()),
            ..Default::default()
        }),
        elicitation: Some(ElicitationCapability {
            form: Some(EmptyObject::default()),
            url: Some(EmptyObject::default()),
            ..Default::default()
        }),
        tasks: Some(ClientTasksCapability {
            list: Some(EmptyObject::default()),
            cancel: Some(EmptyObject::default()),
            requests: Some(ClientTaskRequests {
                sampling: Some(SamplingTaskRequests {
                    create_message: Some(EmptyObject::default()),
                    ..Default::default()
                }),
                elicitation: Some(ElicitationTaskRequests {
                    create: Some(EmptyObject::default()),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        }),
        extra: JsonObject::new(),
    }
}

fn server_capabilities() -> ServerCapabilities {
    ServerCapabilities {
        experimental: Some(OrderedMap::new().with("x.example/feature", JsonObject::new())),
        logging: Some(EmptyObject::default()),
        completions: Some(EmptyObject::default()),
        prompts: Some(PromptsCapability {
            list_changed: Some(true),
            ..Default::default()
        }),
        resources: Some(ResourcesCapability {
            subscribe: Some(true),
            list_changed: Some(true),
            ..Default::default()
        }),
        tools: Some(ToolsCapability {
            list_changed: Some(false),
            ..Default::default()
        }),
        tasks: Some(ServerTasksCapability {
            list: Some(EmptyObject::default()),
            cancel: Some(EmptyObject::default()),
            requests: Some(ServerTaskRequests {
                tools: Some(ToolsTaskRequests {
                    call: Some(EmptyObject::default()),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        }),
        extra: JsonObject::new(),
    }
}

fn resource() -> Resource {
    Resource {
        title: Some("Main".into()),
        annotations: Some(annotations()),
        size: Some(1024),
        icons: Some(vec![icon()]),
        meta: Some(Meta::new()),
        ..Resource::new("file:///project/src/main.rs", "main.rs")
            .with_mime_type("text/x-rust")
            .with_description("Entry point")
    }
}

fn text_contents() -> TextResourceContents {
    TextResourceContents {
        mime_type: Some("text/plain".into()),
        ..TextResourceContents::new("file:///a.txt", "A")
    }
}

fn blob_contents() -> BlobResourceContents {
    BlobResourceContents {
        mime_type: Some("image/png".into()),
        ..BlobResourceContents::new("file:///a.png", "iVBORw0KGgo=")
    }
}

fn text() -> TextContent {
    TextContent {
        annotations: Some(annotations()),
        meta: Some(Meta::new()),
        ..TextContent::new("hello")
    }
}

fn image() -> ImageContent {
    ImageContent {
        annotations: Some(annotations()),
        ..ImageContent::new("iVBORw0KGgo=", "image/png")
    }
}

fn audio() -> AudioContent {
    AudioContent {
        annotations: Some(annotations()),
        ..AudioContent::new("UklGRiQ=", "audio/wav")
    }
}

fn embedded() -> EmbeddedResource {
    EmbeddedResource {
        annotations: Some(annotations()),
        ..EmbeddedResource::new(text_contents().into())
    }
}

fn tool() -> Tool {
    Tool {
        icons: Some(vec![icon()]),
        meta: Some(Meta::new()),
        ..Tool::new(
            "get_weather",
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                   "properties": {"location": {"type": "string"}}, "required": ["location"]}),
        )
        .with_title("Weather")
        .with_description("Current weather")
        .with_output_schema(
            json!({"type": "object", "properties": {"t": {"type": "number"}}, "required": ["t"]}),
        )
        .with_annotations(ToolAnnotations {
            title: Some("W".into()),
            read_only_hint: Some(true),
            destructive_hint: Some(false),
            idempotent_hint: Some(true),
            open_world_hint: Some(false),
            extra: JsonObject::new(),
        })
        .with_task_support(TaskSupport::Optional)
    }
}

fn task() -> Task {
    Task {
        status_message: Some("Waiting for the user".into()),
        poll_interval: Some(2000),
        ..Task::new(
            "tsk_9b1e",
            TaskStatus::InputRequired,
            "2026-01-10T08:00:00Z",
            Some(120_000),
        )
    }
}

fn string_schema() -> StringSchema {
    StringSchema {
        title: Some("Email".into()),
        description: Some("Your email".into()),
        min_length: Some(3),
        max_length: Some(50),
        format: Some("email".into()),
        default: Some("a@b.c".into()),
        ..Default::default()
    }
}

fn number_schema() -> NumberSchema {
    NumberSchema {
        r#type: NumberType::Integer,
        title: Some("Age".into()),
        minimum: Some(18.into()),
        maximum: Some(num(150.5)),
        default: Some(30.into()),
        ..Default::default()
    }
}

fn boolean_schema() -> BooleanSchema {
    BooleanSchema {
        title: Some("Subscribe".into()),
        default: Some(false),
        ..Default::default()
    }
}

fn legacy_enum() -> LegacyTitledEnumSchema {
    LegacyTitledEnumSchema {
        title: Some("Level".into()),
        r#enum: vec!["a".into(), "b".into()],
        enum_names: Some(vec!["A".into(), "B".into()]),
        default: Some("a".into()),
        ..Default::default()
    }
}

fn untitled_single() -> UntitledSingleSelectEnumSchema {
    UntitledSingleSelectEnumSchema {
        r#enum: vec!["Red".into(), "Green".into()],
        default: Some("Red".into()),
        ..Default::default()
    }
}

fn titled_single() -> TitledSingleSelectEnumSchema {
    TitledSingleSelectEnumSchema {
        title: Some("Color".into()),
        one_of: vec![
            TitledEnumOption::new("#F00", "Red"),
            TitledEnumOption::new("#0F0", "Green"),
        ],
        default: Some("#F00".into()),
        ..Default::default()
    }
}

fn untitled_multi() -> UntitledMultiSelectEnumSchema {
    UntitledMultiSelectEnumSchema {
        min_items: Some(1),
        max_items: Some(2),
        items: UntitledEnumItems {
            r#enum: vec!["Red".into(), "Green".into()],
            ..Default::default()
        },
        default: Some(vec!["Red".into()]),
        ..Default::default()
    }
}

fn titled_multi() -> TitledMultiSelectEnumSchema {
    TitledMultiSelectEnumSchema {
        description: Some("Pick colors".into()),
        items: TitledEnumItems {
            any_of: vec![TitledEnumOption::new("#F00", "Red")],
            ..Default::default()
        },
        default: Some(vec!["#F00".into()]),
        ..Default::default()
    }
}

fn base_types() {
    check(
        "EmptyResult",
        &EmptyResult {
            meta: Some(Meta::new()),
            ..Default::default()
        },
    );
    check("Result", &EmptyResult::default());
    check_since(
        "RequestParams",
        &RequestParams {
            meta: meta(),
            ..Default::default()
        },
        "2025-11-25",
    );
    check_since(
        "NotificationParams",
        &NotificationParams {
            meta: Some(Meta::new()),
            ..Default::default()
        },
        "2025-11-25",
    );
    check_since(
        "PaginatedRequestParams",
        &PaginatedRequestParams::with_cursor("c1"),
        "2025-11-25",
    );
    check(
        "PaginatedResult",
        &PaginatedResult {
            next_cursor: Some("c2".into()),
            ..Default::default()
        },
    );
    check("RequestId", &RequestId::int(7));
    check("ProgressToken", &RequestId::string("p"));
    check("Cursor", &"opaque".to_owned());
    check_since("Error", &ErrorObject::invalid_params("bad"), "2025-11-25");
    check_request(
        "ping",
        &PingRequestParams {
            meta: meta(),
            ..Default::default()
        },
        REVISIONS[0],
    );
    check_notification(
        "notifications/initialized",
        &InitializedNotificationParams::default(),
        REVISIONS[0],
    );
}

fn lifecycle_types() {
    check("Implementation", &implementation());
    check_since(
        "BaseMetadata",
        &BaseMetadata {
            name: "n".into(),
            title: Some("T".into()),
            extra: JsonObject::new(),
        },
        "2025-06-18",
    );
    check_since("Icons", &implementation(), "2025-11-25");
    check("ClientCapabilities", &client_capabilities());
    check("ServerCapabilities", &server_capabilities());
    let init = InitializeRequestParams {
        meta: meta(),
        ..InitializeRequestParams::new("2025-11-25", client_capabilities(), implementation())
    };
    check_since("InitializeRequestParams", &init, "2025-11-25");
    check_request("initialize", &init, REVISIONS[0]);
    let result = InitializeResult::new(
        switchboard_types::ProtocolVersion::LATEST,
        server_capabilities(),
        implementation(),
    )
    .with_instructions("Use the tools.");
    check_result("initialize", &result, REVISIONS[0]);
    let cancelled =
        CancelledNotificationParams::new(RequestId::string("123"), Some("User requested".into()));
    check_since("CancelledNotificationParams", &cancelled, "2025-11-25");
    check_notification("notifications/cancelled", &cancelled, REVISIONS[0]);
    let progress = ProgressNotificationParams::new(RequestId::string("tok"), num(0.5))
        .with_total(1)
        .with_message("Half way");
    check_since("ProgressNotificationParams", &progress, "2025-11-25");
    check_notification("notifications/progress", &progress, REVISIONS[0]);
}

fn content_types() {
    check("Role", &Role::Assistant);
    check_since("Annotations", &annotations(), "2025-03-26");
    check("Annotated", &resource());
    check_since("Icon", &icon(), "2025-11-25");
    check("TextContent", &text());
    check("ImageContent", &image());
    check_since("AudioContent", &audio(), "2025-03-26");
    check_since("ResourceLink", &ResourceLink::new(resource()), "2025-06-18");
    check("EmbeddedResource", &embedded());
    check(
        "EmbeddedResource",
        &EmbeddedResource::new(blob_contents().into()),
    );
    check("TextResourceContents", &text_contents());
    check("BlobResourceContents", &blob_contents());
    check("ResourceContents", &ResourceContents::from(blob_contents()));
    for block in [
        ContentBlock::from(text()),
        image().into(),
        audio().into(),
        ContentBlock::resource_link(resource()),
        embedded().into(),
    ] {
        check_since("ContentBlock", &block, "2025-06-18");
    }
}

fn resource_types() {
    check("Resource", &resource());
    let template = ResourceTemplate {
        title: Some("Files".into()),
        description: Some("Any file".into()),
        mime_type: Some("text/plain".into()),
        annotations: Some(annotations()),
        icons: Some(vec![icon()]),
        ..ResourceTemplate::new("file:///{path}", "files")
    };
    check("ResourceTemplate", &template);
    let list = ListResourcesResult {
        resources: vec![resource()],
        next_cursor: Some("n".into()),
        ..Default::default()
    };
    check_result("resources/list", &list, REVISIONS[0]);
    check_request(
        "resources/list",
        &PaginatedRequestParams::with_cursor("c"),
        REVISIONS[0],
    );
    let templates = ListResourceTemplatesResult {
        resource_templates: vec![template],
        ..Default::default()
    };
    check_result("resources/templates/list", &templates, REVISIONS[0]);
    check_request(
        "resources/templates/list",
        &ListResourceTemplatesRequestParams::default(),
        REVISIONS[0],
    );
    let read = ReadResourceRequestParams {
        meta: meta(),
        ..ResourceRequestParams::new("file:///a.txt")
    };
    check_since("ResourceRequestParams", &read, "2025-11-25");
    check_since("ReadResourceRequestParams", &read, "2025-11-25");
    check_since("SubscribeRequestParams", &read, "2025-11-25");
    check_since("UnsubscribeRequestParams", &read, "2025-11-25");
    check_request("resources/read", &read, REVISIONS[0]);
    check_request("resources/subscribe", &read, REVISIONS[0]);
    check_request("resources/unsubscribe", &read, REVISIONS[0]);
    let contents = ReadResourceResult::new(vec![text_contents().into(), blob_contents().into()]);
    check_result("resources/read", &contents, REVISIONS[0]);
    let updated = ResourceUpdatedNotificationParams::new("file:///a.txt");
    check_since("ResourceUpdatedNotificationParams", &updated, "2025-11-25");
    check_notification("notifications/resources/updated", &updated, REVISIONS[0]);
    check_notification(
        "notifications/resources/list_changed",
        &NotificationParams::default(),
        REVISIONS[0],
    );
}

fn sf_tool_types() {
    check("Tool", &tool());
    check(
        "Tool",
        &Tool::new(
            "no_params",
            json!({"type": "object", "additionalProperties": false}),
        ),
    );
    check_since("ToolAnnotations", &tool().annotations, "2025-03-26");
    check_since(
        "ToolExecution",
        &ToolExecution {
            task_support: Some(TaskSupport::Required),
            ..Default::default()
        },
        "2025-11-25",
    );
    check_result(
        "tools/list",
        &ListToolsResult::new(vec![tool()]),
        REVISIONS[0],
    );
    check_request(
        "tools/list",
        &ListToolsRequestParams::default(),
        REVISIONS[0],
    );
    let call = CallToolRequestParams {
        task: Some(TaskMetadata {
            ttl: Some(60_000),
            ..Default::default()
        }),
        meta: meta(),
        ..CallToolRequestParams::new("get_weather").with_arguments(json!({"location": "NYC"}))
    };
    check_since("CallToolRequestParams", &call, "2025-11-25");
    check_request("tools/call", &call, REVISIONS[0]);
    // Text, image and embedded resources fit every revision; audio and links need newer ones.
    let basic = CallToolResult::new(vec![text().into(), image().into(), embedded().into()]);
    check_result("tools/call", &basic, REVISIONS[0]);
    check_result(
        "tools/call",
        &CallToolResult::error("Invalid date"),
        REVISIONS[0],
    );
    let rich = CallToolResult {
        content: vec![
            text().into(),
            audio().into(),
            ContentBlock::resource_link(resource()),
        ],
        meta: Some(Meta::new().with_related_task("t1")),
        ..CallToolResult::structured(json!({"t": 22.5}))
    };
    check_result("tools/call", &rich, "2025-06-18");
    check_notification(
        "notifications/tools/list_changed",
        &NotificationParams::default(),
        REVISIONS[0],
    );
}

fn prompt_types() {
    let argument = PromptArgument {
        title: Some("Code".into()),
        description: Some("The code".into()),
        required: Some(true),
        ..PromptArgument::new("code")
    };
    check("PromptArgument", &argument);
    let prompt = Prompt {
        title: Some("Code review".into()),
        description: Some("Review code".into()),
        arguments: Some(vec![argument]),
        icons: Some(vec![icon()]),
        ..Prompt::new("code_review")
    };
    check("Prompt", &prompt);
    check_result(
        "prompts/list",
        &ListPromptsResult {
            prompts: vec![prompt],
            ..Default::default()
        },
        REVISIONS[0],
    );
    check_request(
        "prompts/list",
        &ListPromptsRequestParams::default(),
        REVISIONS[0],
    );
    let get = GetPromptRequestParams {
        arguments: Some(OrderedMap::new().with("code", "x = 1".to_owned())),
        ..GetPromptRequestParams::new("code_review")
    };
    check_since("GetPromptRequestParams", &get, "2025-11-25");
    check_request("prompts/get", &get, REVISIONS[0]);
    check("PromptMessage", &PromptMessage::user_text("Review this"));
    check(
        "PromptMessage",
        &PromptMessage::new(Role::Assistant, embedded().into()),
    );
    check_since(
        "PromptMessage",
        &PromptMessage::new(Role::User, ContentBlock::resource_link(resource())),
        "2025-06-18",
    );
    let result = GetPromptResult {
        description: Some("Code review prompt".into()),
        messages: vec![
            PromptMessage::user_text("Review"),
            PromptMessage::new(Role::User, image().into()),
        ],
        ..Default::default()
    };
    check_result("prompts/get", &result, REVISIONS[0]);
    check_notification(
        "notifications/prompts/list_changed",
        &NotificationParams::default(),
        REVISIONS[0],
    );
}

fn sa_sampling_types() {
    let tool_use = ToolUseContent {
        r#type: ToolUseTag,
        id: "call_1".into(),
        name: "get_weather".into(),
        input: obj(json!({"city": "Paris"})),
        meta: Some(Meta::new()),
        extra: JsonObject::new(),
    };
    let tool_result = ToolResultContent {
        r#type: ToolResultTag,
        tool_use_id: "call_1".into(),
        content: vec![ContentBlock::text("18C")],
        structured_content: Some(json!({"c": 18})),
        is_error: Some(false),
        meta: None,
        extra: JsonObject::new(),
    };
    check_since("ToolUseContent", &tool_use, "2025-11-25");
    check_since("ToolResultContent", &tool_result, "2025-11-25");
    check_since(
        "SamplingMessageContentBlock",
        &SamplingMessageContentBlock::ToolUse(tool_use.clone()),
        "2025-11-25",
    );
    let prefs = ModelPreferences {
        hints: Some(vec![ModelHint {
            name: Some("claude-3-sonnet".into()),
            ..Default::default()
        }]),
        cost_priority: Some(num(0.3)),
        speed_priority: Some(1.into()),
        intelligence_priority: Some(num(0.5)),
        extra: JsonObject::new(),
    };
    check("ModelPreferences", &prefs);
    check(
        "ModelHint",
        &ModelHint {
            name: Some("claude".into()),
            ..Default::default()
        },
    );
    check_since(
        "ToolChoice",
        &ToolChoice {
            mode: Some(ToolChoiceMode::Required),
            ..Default::default()
        },
        "2025-11-25",
    );
    let basic_messages = vec![
        SamplingMessage::user_text("What is the weather?"),
        SamplingMessage::new(Role::User, SamplingMessageContentBlock::Image(image())),
    ];
    for m in &basic_messages {
        check("SamplingMessage", m);
    }
    let basic = CreateMessageRequestParams {
        model_preferences: Some(prefs.clone()),
        system_prompt: Some("Be brief.".into()),
        include_context: Some(IncludeContext::ThisServer),
        temperature: Some(num(0.7)),
        stop_sequences: Some(vec!["\n\n".into()]),
        metadata: Some(obj(json!({"provider": "x"}))),
        ..CreateMessageRequestParams::new(basic_messages, 100)
    };
    check_request("sampling/createMessage", &basic, REVISIONS[0]);
    let loop_messages = vec![
        SamplingMessage::user_text("Weather in Paris?"),
        SamplingMessage::new(
            Role::Assistant,
            vec![SamplingMessageContentBlock::ToolUse(tool_use.clone())],
        ),
        SamplingMessage::new(
            Role::User,
            vec![SamplingMessageContentBlock::ToolResult(tool_result)],
        ),
    ];
    check_since("SamplingMessage", &loop_messages[1], "2025-11-25");
    let rich = CreateMessageRequestParams {
        tools: Some(vec![tool()]),
        tool_choice: Some(ToolChoice {
            mode: Some(ToolChoiceMode::Auto),
            ..Default::default()
        }),
        task: Some(TaskMetadata::default()),
        meta: meta(),
        ..CreateMessageRequestParams {
            messages: loop_messages,
            ..basic
        }
    };
    check_since("CreateMessageRequestParams", &rich, "2025-11-25");
    check_request("sampling/createMessage", &rich, "2025-11-25");
    let answer = CreateMessageResult {
        stop_reason: Some(CreateMessageResult::STOP_END_TURN.into()),
        ..CreateMessageResult::new(
            "claude-3-sonnet",
            SamplingMessageContentBlock::text("Paris is sunny."),
        )
    };
    check_result("sampling/createMessage", &answer, REVISIONS[0]);
    let tool_call = CreateMessageResult {
        stop_reason: Some(CreateMessageResult::STOP_TOOL_USE.into()),
        ..CreateMessageResult::new(
            "claude-3-sonnet",
            vec![SamplingMessageContentBlock::ToolUse(tool_use)],
        )
    };
    check_result("sampling/createMessage", &tool_call, "2025-11-25");
}

fn el_elicitation_types() {
    check_since("StringSchema", &string_schema(), "2025-06-18");
    check_since("NumberSchema", &number_schema(), "2025-06-18");
    check_since("BooleanSchema", &boolean_schema(), "2025-06-18");
    check_since(
        "EnumSchema",
        &EnumSchema::LegacyTitled(legacy_enum()),
        "2025-06-18",
    );
    check_since("LegacyTitledEnumSchema", &legacy_enum(), "2025-11-25");
    check_since(
        "UntitledSingleSelectEnumSchema",
        &untitled_single(),
        "2025-11-25",
    );
    check_since(
        "TitledSingleSelectEnumSchema",
        &titled_single(),
        "2025-11-25",
    );
    check_since(
        "UntitledMultiSelectEnumSchema",
        &untitled_multi(),
        "2025-11-25",
    );
    check_since("TitledMultiSelectEnumSchema", &titled_multi(), "2025-11-25");
    check_since(
        "SingleSelectEnumSchema",
        &SingleSelectEnumSchema::Titled(titled_single()),
        "2025-11-25",
    );
    check_since(
        "MultiSelectEnumSchema",
        &MultiSelectEnumSchema::Titled(titled_multi()),
        "2025-11-25",
    );
    check_since(
        "EnumSchema",
        &EnumSchema::MultiSelect(MultiSelectEnumSchema::Untitled(untitled_multi())),
        "2025-11-25",
    );
    check_since(
        "PrimitiveSchemaDefinition",
        &PrimitiveSchemaDefinition::from(string_schema()),
        "2025-06-18",
    );
    // 2025-06-18 forms: string, number, boolean and the legacy enum only.
    let basic_schema = RequestedSchema::default()
        .with_required_property("email", string_schema())
        .with_property("age", number_schema())
        .with_property("ok", boolean_schema())
        .with_property("level", EnumSchema::LegacyTitled(legacy_enum()));
    let basic = ElicitRequestFormParams::new("Contact info?", basic_schema.clone());
    check_request("elicitation/create", &basic, "2025-06-18");
    let rich_schema = RequestedSchema {
        schema: Some("https://json-schema.org/draft/2020-12/schema".into()),
        ..basic_schema
    }
    .with_property(
        "color",
        EnumSchema::SingleSelect(SingleSelectEnumSchema::Untitled(untitled_single())),
    )
    .with_property(
        "tint",
        EnumSchema::SingleSelect(SingleSelectEnumSchema::Titled(titled_single())),
    )
    .with_property(
        "colors",
        EnumSchema::MultiSelect(MultiSelectEnumSchema::Untitled(untitled_multi())),
    )
    .with_property(
        "tints",
        EnumSchema::MultiSelect(MultiSelectEnumSchema::Titled(titled_multi())),
    );
    let form = ElicitRequestFormParams {
        mode: Some(FormModeTag),
        task: Some(TaskMetadata {
            ttl: Some(1000),
            ..Default::default()
        }),
        meta: meta(),
        ..ElicitRequestFormParams::new("Contact info?", rich_schema)
    };
    check_since("ElicitRequestFormParams", &form, "2025-11-25");
    check_since(
        "ElicitRequestParams",
        &ElicitRequestParams::from(form.clone()),
        "2025-11-25",
    );
    check_request("elicitation/create", &form, "2025-11-25");
    let url = ElicitRequestURLParams::new(
        "Link your CRM account",
        "el-3f9c",
        "https://mcp.example.com/link?e=el-3f9c",
    );
    check_since("ElicitRequestURLParams", &url, "2025-11-25");
    check_request("elicitation/create", &url, "2025-11-25");
    let content: OrderedMap<ElicitContentValue> = [
        ("name", ElicitContentValue::String("octocat".into())),
        ("age", ElicitContentValue::Number(30.into())),
        ("ok", ElicitContentValue::Bool(true)),
    ]
    .into_iter()
    .collect();
    check_result(
        "elicitation/create",
        &ElicitResult::accept(content.clone()),
        "2025-06-18",
    );
    check_result(
        "elicitation/create",
        &ElicitResult::new(ElicitAction::Decline),
        "2025-06-18",
    );
    let multi = ElicitResult::accept(content.with(
        "colors",
        ElicitContentValue::StringArray(vec!["Red".into()]),
    ));
    check_result("elicitation/create", &multi, "2025-11-25");
    check_notification(
        "notifications/elicitation/complete",
        &ElicitationCompleteNotificationParams::new("el-3f9c"),
        "2025-11-25",
    );
    let error =
        URLElicitationRequiredErrorData::new(vec![url]).into_error("Link the CRM account first.");
    let frame = json!({"jsonrpc": "2.0", "id": 7, "error": to_value(&error)});
    check_since("URLElicitationRequiredError", &frame, "2025-11-25");
    Schemas::get("2025-11-25")
        .validate_frame(&frame, None)
        .unwrap_or_else(|e| panic!("{e}"));
}

fn ro_roots_types() {
    let root = Root {
        meta: Some(Meta::new()),
        ..Root::new("file:///home/user/project").with_name("Project")
    };
    check("Root", &root);
    check_result(
        "roots/list",
        &ListRootsResult::new(vec![root, Root::new("file:///tmp")]),
        REVISIONS[0],
    );
    check_request(
        "roots/list",
        &ListRootsRequestParams::default(),
        REVISIONS[0],
    );
    check_notification(
        "notifications/roots/list_changed",
        &RootsListChangedNotificationParams::default(),
        REVISIONS[0],
    );
}

fn logging_types() {
    for level in LoggingLevel::ALL {
        check("LoggingLevel", &level);
    }
    let set = SetLevelRequestParams::new(LoggingLevel::Warning);
    check_since("SetLevelRequestParams", &set, "2025-11-25");
    check_request("logging/setLevel", &set, REVISIONS[0]);
    check_result("logging/setLevel", &EmptyResult::default(), REVISIONS[0]);
    let message = LoggingMessageNotificationParams {
        logger: Some("database".into()),
        ..LoggingMessageNotificationParams::new(
            LoggingLevel::Error,
            json!({"error": "Connection failed"}),
        )
    };
    check_since("LoggingMessageNotificationParams", &message, "2025-11-25");
    check_notification("notifications/message", &message, REVISIONS[0]);
}

fn completion_types() {
    let prompt_ref = PromptReference {
        title: Some("Review".into()),
        ..PromptReference::new("code_review")
    };
    check("PromptReference", &prompt_ref);
    check_since(
        "ResourceTemplateReference",
        &ResourceTemplateReference::new("file:///{path}"),
        "2025-06-18",
    );
    check(
        "ResourceReference",
        &ResourceReference::new("file:///{path}"),
    );
    let complete = CompleteRequestParams {
        context: Some(CompleteContext {
            arguments: Some(OrderedMap::new().with("language", "python".to_owned())),
            ..Default::default()
        }),
        ..CompleteRequestParams::new(Reference::Prompt(prompt_ref), "framework", "fla")
    };
    check_since("CompleteRequestParams", &complete, "2025-11-25");
    check_request("completion/complete", &complete, REVISIONS[0]);
    let by_resource = CompleteRequestParams::new(
        Reference::Resource(ResourceTemplateReference::new("file:///{p}")),
        "p",
        "sr",
    );
    check_request("completion/complete", &by_resource, REVISIONS[0]);
    let result = CompleteResult {
        completion: Completion {
            values: vec!["flask".into()],
            total: Some(10),
            has_more: Some(true),
            ..Default::default()
        },
        ..Default::default()
    };
    check_result("completion/complete", &result, REVISIONS[0]);
}

fn tk_task_types() {
    check_since("TaskStatus", &TaskStatus::Cancelled, "2025-11-25");
    check_since(
        "TaskMetadata",
        &TaskMetadata {
            ttl: Some(1),
            ..Default::default()
        },
        "2025-11-25",
    );
    check_since(
        "RelatedTaskMetadata",
        &Meta::new().with_related_task("t1").related_task(),
        "2025-11-25",
    );
    check_since(
        "TaskAugmentedRequestParams",
        &TaskAugmentedRequestParams {
            task: Some(TaskMetadata::default()),
            ..Default::default()
        },
        "2025-11-25",
    );
    check_since("Task", &task(), "2025-11-25");
    check_since(
        "Task",
        &Task::new("t2", TaskStatus::Working, "2026-01-10T08:00:00Z", None),
        "2025-11-25",
    );
    let mut created = CreateTaskResult::new(task());
    created
        .meta
        .get_or_insert_with(Meta::new)
        .set_model_immediate_response("Started.");
    check_since("CreateTaskResult", &created, "2025-11-25");
    let get = GetTaskRequestParams::new("tsk_9b1e");
    check_request("tasks/get", &get, "2025-11-25");
    check_request("tasks/result", &get, "2025-11-25");
    check_request("tasks/cancel", &get, "2025-11-25");
    check_request(
        "tasks/list",
        &ListTasksRequestParams::default(),
        "2025-11-25",
    );
    check_result(
        "tasks/get",
        &GetTaskResult {
            meta: Some(Meta::new()),
            ..task().into()
        },
        "2025-11-25",
    );
    let cancelled = Task {
        status: TaskStatus::Cancelled,
        ..task()
    };
    check_result(
        "tasks/cancel",
        &CancelTaskResult::from(cancelled),
        "2025-11-25",
    );
    check_result(
        "tasks/list",
        &ListTasksResult {
            tasks: vec![task()],
            next_cursor: Some("c".into()),
            ..Default::default()
        },
        "2025-11-25",
    );
    let payload =
        GetTaskPayloadResult::wrap(&CallToolResult::text("done"), "tsk_9b1e").expect("wrap");
    check_since("GetTaskPayloadResult", &payload, "2025-11-25");
    let status = TaskStatusNotificationParams::from(task());
    check_since("TaskStatusNotificationParams", &status, "2025-11-25");
    check_notification("notifications/tasks/status", &status, "2025-11-25");
}

/// One test per group of types, named `<group>_validate`, plus the list the coverage test runs.
macro_rules! groups {
    ($($group:ident => $test:ident),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                $group();
            }
        )*

        const GROUPS: &[fn()] = &[$($group),*];
    };
}

groups! {
    base_types => base_types_validate,
    lifecycle_types => lifecycle_types_validate,
    content_types => content_types_validate,
    resource_types => resource_types_validate,
    sf_tool_types => sf_tool_types_validate,
    prompt_types => prompt_types_validate,
    sa_sampling_types => sa_sampling_types_validate,
    el_elicitation_types => el_elicitation_types_validate,
    ro_roots_types => ro_roots_types_validate,
    logging_types => logging_types_validate,
    completion_types => completion_types_validate,
    tk_task_types => tk_task_types_validate,
}

/// Schema types with no Rust mirror of their own: the JSON-RPC envelope (in `jsonrpc`), the
/// message unions, and abstract bases that carry no method.
const NOT_MIRRORED: &str = "JSONRPCMessage JSONRPCRequest JSONRPCNotification JSONRPCResponse JSONRPCError \
    JSONRPCErrorResponse JSONRPCResultResponse JSONRPCBatchRequest JSONRPCBatchResponse \
    Request Notification PaginatedRequest ClientRequest ServerRequest ClientNotification \
    ServerNotification ClientResult ServerResult";

#[test]
fn every_schema_type_is_covered() {
    COVERED.with(|c| c.borrow_mut().clear());
    for group in GROUPS {
        group();
    }
    let covered = COVERED.with(|c| c.borrow().clone());
    let mut missing = BTreeSet::new();
    for rev in REVISIONS {
        let defs = switchboard_test_support::Schemas::get(rev).defs();
        for name in defs.keys() {
            if !covered.contains(name) && !NOT_MIRRORED.split_whitespace().any(|n| n == name) {
                missing.insert(format!("{rev}:{name}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "schema types never validated: {missing:?}"
    );
}

/// The validator bites: newer shapes fail older revisions, which is why some checks start later.
#[test]
fn older_revisions_reject_newer_shapes() {
    let link = to_value(&CallToolResult::new(vec![ContentBlock::resource_link(
        resource(),
    )]));
    assert!(
        Schemas::get("2025-03-26")
            .validate_def("CallToolResult", &link)
            .is_err()
    );
    let many = to_value(&SamplingMessage::new(
        Role::User,
        vec![SamplingMessageContentBlock::text("hi")],
    ));
    assert!(
        Schemas::get("2025-06-18")
            .validate_def("SamplingMessage", &many)
            .is_err()
    );
    let bad_task = json!({"taskId": "t", "status": "paused", "createdAt": "a", "lastUpdatedAt": "b", "ttl": null});
    assert!(
        Schemas::get("2025-11-25")
            .validate_def("Task", &bad_task)
            .is_err()
    );
}
