//! The official example instances of revision 2026-07-28
//! (`shared/spec/schema/2026-07-28/examples/<TypeName>/*.json`), read into our 2025-11-25 types
//! and written back unchanged.
//!
//! Every folder is accounted for: either its type maps to one of ours (full JSON-RPC messages
//! map to their params type), or it is listed in [`SKIPPED_TYPES`] (2026-only names), and single
//! files that use 2026-only shapes are listed in [`SKIPPED_FILES`]. 2026 members that 2025-11-25
//! lacks but that do not change a shape (`resultType`, `ttlMs`, `cacheScope`, `extensions`, the
//! `io.modelcontextprotocol/*` request `_meta` keys) are simply kept in `extra` / `_meta`, and
//! those examples must round-trip.

use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use switchboard_types::capabilities::*;
use switchboard_types::completion::*;
use switchboard_types::content::*;
use switchboard_types::elicitation::*;
use switchboard_types::lifecycle::*;
use switchboard_types::logging::*;
use switchboard_types::meta::*;
use switchboard_types::methods;
use switchboard_types::prompts::*;
use switchboard_types::resources::*;
use switchboard_types::roots::*;
use switchboard_types::sampling::*;
use switchboard_types::tools::*;

/// Folders whose type exists only in 2026-07-28, with the reason.
const SKIPPED_TYPES: [(&str, &str); 25] = [
    (
        "CallToolResultResponse",
        "2026-only: a whole response wrapper type",
    ),
    (
        "CompleteResultResponse",
        "2026-only: a whole response wrapper type",
    ),
    (
        "GetPromptResultResponse",
        "2026-only: a whole response wrapper type",
    ),
    (
        "ListPromptsResultResponse",
        "2026-only: a whole response wrapper type",
    ),
    (
        "ListResourceTemplatesResultResponse",
        "2026-only: a whole response wrapper type",
    ),
    (
        "ListResourcesResultResponse",
        "2026-only: a whole response wrapper type",
    ),
    (
        "ListToolsResultResponse",
        "2026-only: a whole response wrapper type",
    ),
    (
        "ReadResourceResultResponse",
        "2026-only: a whole response wrapper type",
    ),
    (
        "DiscoverRequest",
        "2026-only: server/discover replaces initialize",
    ),
    (
        "DiscoverResult",
        "2026-only: server/discover replaces initialize",
    ),
    (
        "DiscoverResultResponse",
        "2026-only: server/discover replaces initialize",
    ),
    ("InputRequests", "2026-only: multi round-trip requests"),
    ("InputResponses", "2026-only: multi round-trip requests"),
    (
        "InputRequiredResult",
        "2026-only: multi round-trip requests",
    ),
    (
        "SubscriptionsAcknowledgedNotification",
        "2026-only: subscriptions/listen",
    ),
    (
        "SubscriptionsListenRequest",
        "2026-only: subscriptions/listen",
    ),
    (
        "SubscriptionsListenResult",
        "2026-only: subscriptions/listen",
    ),
    (
        "SubscriptionsListenResultResponse",
        "2026-only: subscriptions/listen",
    ),
    (
        "HeaderMismatchError",
        "2026-only: named error-response types and codes",
    ),
    ("InternalError", "2026-only: named error-response types"),
    (
        "InvalidParamsError",
        "2026-only: named error-response types",
    ),
    (
        "MethodNotFoundError",
        "2026-only: named error-response types",
    ),
    (
        "MissingRequiredClientCapabilityError",
        "2026-only: named error-response types and codes",
    ),
    ("ParseError", "2026-only: named error-response types"),
    (
        "UnsupportedProtocolVersionError",
        "2026-only: named error-response types and codes",
    ),
];

/// Single examples that use a 2026-only shape of a type 2025-11-25 also has, with the reason.
/// (`structuredContent` of any JSON type is read since the types carry both revisions; a
/// dual-era server leaves a non-object value out of its 2025 answers.)
const SKIPPED_FILES: [(&str, &str); 1] = [(
    "ElicitRequestURLParams/elicit-sensitive-data.json",
    "2026 removed elicitationId, which 2025-11-25 requires",
)];

fn rt<T: DeserializeOwned + Serialize>(v: &Value) -> Result<Value, String> {
    let t: T = serde_json::from_value(v.clone()).map_err(|e| format!("read: {e}"))?;
    serde_json::to_value(&t).map_err(|e| format!("write: {e}"))
}

/// A full request or notification frame: round-trip its `params` (if any) as `P`, and check
/// that the method is one we name.
fn frame<P: DeserializeOwned + Serialize>(v: &Value, method: &str) -> Result<Value, String> {
    if v.get("method").and_then(Value::as_str) != Some(method) || !methods::is_known(method) {
        return Err(format!("method is not {method}"));
    }
    let mut out = v.clone();
    if let Some(params) = v.get("params") {
        out["params"] = rt::<P>(params)?;
    }
    Ok(out)
}

/// Reads `v` as the type named `name` and writes it back; `None` for a name we do not map.
fn round_trip(name: &str, v: &Value) -> Option<Result<Value, String>> {
    Some(match name {
        "AudioContent" => rt::<AudioContent>(v),
        "BlobResourceContents" => rt::<BlobResourceContents>(v),
        "BooleanSchema" => rt::<BooleanSchema>(v),
        "CallToolRequestParams" => rt::<CallToolRequestParams>(v),
        "CallToolResult" => rt::<CallToolResult>(v),
        "CancelledNotificationParams" => rt::<CancelledNotificationParams>(v),
        "ClientCapabilities" => rt::<ClientCapabilities>(v),
        "CompleteRequestParams" => rt::<CompleteRequestParams>(v),
        "CompleteResult" => rt::<CompleteResult>(v),
        "CreateMessageRequestParams" => rt::<CreateMessageRequestParams>(v),
        "CreateMessageResult" => rt::<CreateMessageResult>(v),
        "ElicitRequestFormParams" => rt::<ElicitRequestFormParams>(v),
        "ElicitRequestURLParams" => rt::<ElicitRequestURLParams>(v),
        "ElicitResult" => rt::<ElicitResult>(v),
        "EmbeddedResource" => rt::<EmbeddedResource>(v),
        "GetPromptRequestParams" => rt::<GetPromptRequestParams>(v),
        "GetPromptResult" => rt::<GetPromptResult>(v),
        "ImageContent" => rt::<ImageContent>(v),
        "ListPromptsResult" => rt::<ListPromptsResult>(v),
        "ListResourceTemplatesResult" => rt::<ListResourceTemplatesResult>(v),
        "ListResourcesResult" => rt::<ListResourcesResult>(v),
        "ListRootsResult" => rt::<ListRootsResult>(v),
        "ListToolsResult" => rt::<ListToolsResult>(v),
        "LoggingMessageNotificationParams" => rt::<LoggingMessageNotificationParams>(v),
        "ModelPreferences" => rt::<ModelPreferences>(v),
        "NumberSchema" => rt::<NumberSchema>(v),
        "PaginatedRequestParams" => rt::<PaginatedRequestParams>(v),
        "ProgressNotificationParams" => rt::<ProgressNotificationParams>(v),
        "ReadResourceResult" => rt::<ReadResourceResult>(v),
        "Resource" => rt::<Resource>(v),
        "ResourceLink" => rt::<ResourceLink>(v),
        "ResourceUpdatedNotificationParams" => rt::<ResourceUpdatedNotificationParams>(v),
        "Root" => rt::<Root>(v),
        "SamplingMessage" => rt::<SamplingMessage>(v),
        "ServerCapabilities" => rt::<ServerCapabilities>(v),
        "StringSchema" => rt::<StringSchema>(v),
        "TextContent" => rt::<TextContent>(v),
        "TextResourceContents" => rt::<TextResourceContents>(v),
        "TitledMultiSelectEnumSchema" => rt::<TitledMultiSelectEnumSchema>(v),
        "TitledSingleSelectEnumSchema" => rt::<TitledSingleSelectEnumSchema>(v),
        "Tool" => rt::<Tool>(v),
        "ToolResultContent" => rt::<ToolResultContent>(v),
        "ToolUseContent" => rt::<ToolUseContent>(v),
        "UntitledMultiSelectEnumSchema" => rt::<UntitledMultiSelectEnumSchema>(v),
        "UntitledSingleSelectEnumSchema" => rt::<UntitledSingleSelectEnumSchema>(v),
        "CallToolRequest" => frame::<CallToolRequestParams>(v, methods::TOOLS_CALL),
        "CancelledNotification" => {
            frame::<CancelledNotificationParams>(v, methods::NOTIFICATIONS_CANCELLED)
        }
        "CompleteRequest" => frame::<CompleteRequestParams>(v, methods::COMPLETION_COMPLETE),
        "CreateMessageRequest" => {
            frame::<CreateMessageRequestParams>(v, methods::SAMPLING_CREATE_MESSAGE)
        }
        "ElicitRequest" => frame::<ElicitRequestParams>(v, methods::ELICITATION_CREATE),
        "GetPromptRequest" => frame::<GetPromptRequestParams>(v, methods::PROMPTS_GET),
        "ListPromptsRequest" => frame::<ListPromptsRequestParams>(v, methods::PROMPTS_LIST),
        "ListResourceTemplatesRequest" => {
            frame::<ListResourceTemplatesRequestParams>(v, methods::RESOURCES_TEMPLATES_LIST)
        }
        "ListResourcesRequest" => frame::<ListResourcesRequestParams>(v, methods::RESOURCES_LIST),
        "ListRootsRequest" => frame::<ListRootsRequestParams>(v, methods::ROOTS_LIST),
        "ListToolsRequest" => frame::<ListToolsRequestParams>(v, methods::TOOLS_LIST),
        "LoggingMessageNotification" => {
            frame::<LoggingMessageNotificationParams>(v, methods::NOTIFICATIONS_MESSAGE)
        }
        "ProgressNotification" => {
            frame::<ProgressNotificationParams>(v, methods::NOTIFICATIONS_PROGRESS)
        }
        "PromptListChangedNotification" => {
            frame::<NotificationParams>(v, methods::NOTIFICATIONS_PROMPTS_LIST_CHANGED)
        }
        "ReadResourceRequest" => frame::<ReadResourceRequestParams>(v, methods::RESOURCES_READ),
        "ResourceListChangedNotification" => {
            frame::<NotificationParams>(v, methods::NOTIFICATIONS_RESOURCES_LIST_CHANGED)
        }
        "ResourceUpdatedNotification" => {
            frame::<ResourceUpdatedNotificationParams>(v, methods::NOTIFICATIONS_RESOURCES_UPDATED)
        }
        "ToolListChangedNotification" => {
            frame::<NotificationParams>(v, methods::NOTIFICATIONS_TOOLS_LIST_CHANGED)
        }
        _ => return None,
    })
}

fn examples_dir() -> std::path::PathBuf {
    switchboard_test_support::shared_dir().join("spec/schema/2026-07-28/examples")
}

fn sorted_entries(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .collect();
    out.sort();
    out
}

#[test]
fn official_2026_examples_round_trip_through_2025_11_25_types() {
    let mut checked = 0;
    let mut failures = Vec::new();
    let mut skipped_seen = Vec::new();
    for folder in sorted_entries(&examples_dir()) {
        let name = folder
            .file_name()
            .and_then(|n| n.to_str())
            .expect("folder name")
            .to_owned();
        if SKIPPED_TYPES.iter().any(|(n, _)| *n == name) {
            continue;
        }
        for file in sorted_entries(&folder) {
            let rel = format!(
                "{name}/{}",
                file.file_name()
                    .and_then(|n| n.to_str())
                    .expect("file name")
            );
            let text = std::fs::read_to_string(&file).expect("example");
            let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{rel}: {e}"));
            let Some(result) = round_trip(&name, &v) else {
                failures.push(format!("{rel}: type {name} is neither mapped nor skipped"));
                continue;
            };
            if let Some((_, why)) = SKIPPED_FILES.iter().find(|(f, _)| *f == rel) {
                // A skipped file must really not fit 2025-11-25, or the skip is stale.
                assert!(
                    result.as_ref().map_or(true, |back| *back != v),
                    "{rel} round-trips; drop its skip ({why})"
                );
                skipped_seen.push(rel);
                continue;
            }
            match result {
                Ok(back) if back == v => checked += 1,
                Ok(back) => failures.push(format!("{rel}: changed\n  in:  {v}\n  out: {back}")),
                Err(e) => failures.push(format!("{rel}: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(
        skipped_seen.len(),
        SKIPPED_FILES.len(),
        "a skipped file is missing: {skipped_seen:?}"
    );
    assert!(checked >= 90, "only {checked} examples checked");
}

#[test]
fn skipped_types_are_really_2026_only() {
    let schema = switchboard_test_support::Schemas::get("2025-11-25");
    for (name, why) in SKIPPED_TYPES {
        assert!(
            !schema.has_def(name),
            "{name} exists in 2025-11-25, so it must not be skipped ({why})"
        );
        assert!(
            examples_dir().join(name).is_dir(),
            "{name} has no example folder"
        );
    }
}

#[test]
fn el_1_example_with_explicit_form_mode() {
    let path = examples_dir().join("ElicitRequestFormParams/elicit-single-field.json");
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("example")).expect("json");
    let p: ElicitRequestParams = serde_json::from_value(v).expect("params");
    assert!(matches!(p, ElicitRequestParams::Form(_)));
}
