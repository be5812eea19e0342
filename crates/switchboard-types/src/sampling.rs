//! Sampling: `sampling/createMessage` (SPEC-NOTES §10.2), with the 2025-11-25 tool loop
//! (`tools`, `toolChoice`, `tool_use` / `tool_result` blocks, content arrays).
//!
//! Server → client. A message's `content` is one block or (2025-11-25) an array of blocks:
//! [`OneOrMany`] keeps whichever form was received.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Number, Value};

use crate::content::{AudioContent, ContentBlock, ImageContent, Role, TextContent, tag_of};
use crate::content::{AudioTag, ImageTag, TextTag};
use crate::meta::{JsonObject, Meta, from_value, wire_tag};
use crate::tasks::TaskMetadata;
use crate::tools::Tool;

wire_tag!(
    /// The `"type": "tool_use"` tag.
    ToolUseTag = "tool_use"
);
wire_tag!(
    /// The `"type": "tool_result"` tag.
    ToolResultTag = "tool_result"
);

/// A tool call made by the model (`ToolUseContent`, 2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUseContent {
    /// Always `"tool_use"`.
    pub r#type: ToolUseTag,
    /// Id that the matching `tool_result` answers (`[SA-3]`).
    pub id: String,
    /// The tool.
    pub name: String,
    /// The arguments.
    pub input: JsonObject,
    /// Metadata (clients should keep it when sending the block again).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The result of a tool call, sent back in a user message (`ToolResultContent`, 2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultContent {
    /// Always `"tool_result"`.
    pub r#type: ToolResultTag,
    /// The `id` of the `tool_use` this answers.
    pub tool_use_id: String,
    /// Unstructured result.
    pub content: Vec<ContentBlock>,
    /// Structured result: any JSON value in revision 2026-07-28, an object before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<serde_json::Value>,
    /// Whether the tool call failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A block of a sampling message (`SamplingMessageContentBlock`): text, image, audio, and
/// (2025-11-25) tool use and tool result. No resource links or embedded resources.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SamplingMessageContentBlock {
    /// `"type": "text"`.
    Text(TextContent),
    /// `"type": "image"`.
    Image(ImageContent),
    /// `"type": "audio"` (2025-03-26+).
    Audio(AudioContent),
    /// `"type": "tool_use"` (2025-11-25).
    ToolUse(ToolUseContent),
    /// `"type": "tool_result"` (2025-11-25).
    ToolResult(ToolResultContent),
    /// A block whose `type` this crate does not know, kept as received.
    Unknown(Value),
}

/// Short name for [`SamplingMessageContentBlock`].
pub type SamplingContent = SamplingMessageContentBlock;

impl SamplingMessageContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        SamplingMessageContentBlock::Text(TextContent::new(text))
    }

    /// The `type` tag of this block.
    pub fn type_name(&self) -> Option<&str> {
        match self {
            Self::Text(_) => Some(TextTag::VALUE),
            Self::Image(_) => Some(ImageTag::VALUE),
            Self::Audio(_) => Some(AudioTag::VALUE),
            Self::ToolUse(_) => Some(ToolUseTag::VALUE),
            Self::ToolResult(_) => Some(ToolResultTag::VALUE),
            Self::Unknown(v) => v.get("type").and_then(Value::as_str),
        }
    }
}

impl<'de> Deserialize<'de> for SamplingMessageContentBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Ok(match tag_of::<D::Error>(&v, "a sampling content block")? {
            TextTag::VALUE => Self::Text(from_value(v)?),
            ImageTag::VALUE => Self::Image(from_value(v)?),
            AudioTag::VALUE => Self::Audio(from_value(v)?),
            ToolUseTag::VALUE => Self::ToolUse(from_value(v)?),
            ToolResultTag::VALUE => Self::ToolResult(from_value(v)?),
            _ => Self::Unknown(v),
        })
    }
}

/// One value or an array of values, written back in the form it was read.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum OneOrMany<T> {
    /// A single value (the only form before 2025-11-25).
    One(T),
    /// An array (2025-11-25).
    Many(Vec<T>),
}

impl<T> OneOrMany<T> {
    /// The values as a slice, whichever the form.
    pub fn as_slice(&self) -> &[T] {
        match self {
            OneOrMany::One(v) => std::slice::from_ref(v),
            OneOrMany::Many(v) => v,
        }
    }

    /// The values as a vector.
    pub fn into_vec(self) -> Vec<T> {
        match self {
            OneOrMany::One(v) => vec![v],
            OneOrMany::Many(v) => v,
        }
    }
}

impl<T> From<T> for OneOrMany<T> {
    fn from(v: T) -> Self {
        OneOrMany::One(v)
    }
}

impl<T> From<Vec<T>> for OneOrMany<T> {
    fn from(v: Vec<T>) -> Self {
        OneOrMany::Many(v)
    }
}

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for OneOrMany<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        if v.is_array() {
            Ok(OneOrMany::Many(from_value(v)?))
        } else {
            Ok(OneOrMany::One(from_value(v)?))
        }
    }
}

/// A message in a sampling conversation (`SamplingMessage`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// One block or (2025-11-25) several.
    pub content: OneOrMany<SamplingMessageContentBlock>,
    /// Metadata (2025-11-25).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl SamplingMessage {
    /// A message from `role` with `content`.
    pub fn new(role: Role, content: impl Into<OneOrMany<SamplingMessageContentBlock>>) -> Self {
        SamplingMessage {
            role,
            content: content.into(),
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// A user message with one text block.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self::new(Role::User, SamplingMessageContentBlock::text(text))
    }

    /// An assistant message with one text block.
    pub fn assistant_text(text: impl Into<String>) -> Self {
        Self::new(Role::Assistant, SamplingMessageContentBlock::text(text))
    }
}

/// A model name hint (`ModelHint`): a substring of model names, considered in order (`[SA-1]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelHint {
    /// A (partial) model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The server's model preferences (`ModelPreferences`); all advisory. Priorities are 0..1.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    /// Name hints, first match wins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// How much cost matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_priority: Option<Number>,
    /// How much speed matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_priority: Option<Number>,
    /// How much capability matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intelligence_priority: Option<Number>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Which context to include (`CreateMessageRequestParams.includeContext`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IncludeContext {
    /// No context (the default).
    #[default]
    None,
    /// Context from this server (soft-deprecated in 2025-11-25).
    ThisServer,
    /// Context from all servers (soft-deprecated in 2025-11-25).
    AllServers,
}

/// How the model may use tools (`ToolChoice.mode`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolChoiceMode {
    /// The model decides (the default).
    #[default]
    Auto,
    /// At least one tool call.
    Required,
    /// No tool calls.
    None,
}

/// Tool-use policy for a sampling request (`ToolChoice`, 2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolChoice {
    /// The mode; absent means `auto`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Params of `sampling/createMessage` (`CreateMessageRequestParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageRequestParams {
    /// The conversation.
    pub messages: Vec<SamplingMessage>,
    /// Model preferences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// A system prompt the client may change or drop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Context to include.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<Number>,
    /// The most tokens to generate.
    pub max_tokens: u64,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata, passed on as-is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// Tools the model may call (2025-11-25; needs `sampling.tools`, `[CP-5]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// Tool-use policy (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Present to run the request as a task (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl CreateMessageRequestParams {
    /// A request for at most `max_tokens` tokens continuing `messages`.
    pub fn new(messages: Vec<SamplingMessage>, max_tokens: u64) -> Self {
        CreateMessageRequestParams {
            messages,
            model_preferences: None,
            system_prompt: None,
            include_context: None,
            temperature: None,
            max_tokens,
            stop_sequences: None,
            metadata: None,
            tools: None,
            tool_choice: None,
            task: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// Result of `sampling/createMessage` (`CreateMessageResult`): a sampling message plus the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Normally `assistant`.
    pub role: Role,
    /// One block or (2025-11-25) several.
    pub content: OneOrMany<SamplingMessageContentBlock>,
    /// The model that produced it.
    pub model: String,
    /// Why generation stopped: see the `STOP_*` constants; an open string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl CreateMessageResult {
    /// `stopReason` for a natural end of turn.
    pub const STOP_END_TURN: &'static str = "endTurn";
    /// `stopReason` when a stop sequence was hit.
    pub const STOP_STOP_SEQUENCE: &'static str = "stopSequence";
    /// `stopReason` when `maxTokens` was reached.
    pub const STOP_MAX_TOKENS: &'static str = "maxTokens";
    /// `stopReason` when the model wants to call tools (2025-11-25).
    pub const STOP_TOOL_USE: &'static str = "toolUse";

    /// An assistant result with `content` from `model`.
    pub fn new(
        model: impl Into<String>,
        content: impl Into<OneOrMany<SamplingMessageContentBlock>>,
    ) -> Self {
        CreateMessageResult {
            role: Role::Assistant,
            content: content.into(),
            model: model.into(),
            stop_reason: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn content_keeps_single_or_array_form() {
        let one = json!({"role": "user", "content": {"type": "text", "text": "hi"}});
        let many = json!({"role": "user", "content": [{"type": "text", "text": "hi"}]});
        for v in [one, many] {
            let m: SamplingMessage = serde_json::from_value(v.clone()).expect("message");
            assert_eq!(m.content.as_slice().len(), 1);
            assert_eq!(serde_json::to_value(&m).expect("json"), v);
        }
    }

    #[test]
    fn unknown_sampling_block_is_kept() {
        let v = json!({"type": "thinking", "text": "hmm"});
        let b: SamplingMessageContentBlock = serde_json::from_value(v.clone()).expect("block");
        assert_eq!(b.type_name(), Some("thinking"));
        assert_eq!(serde_json::to_value(&b).expect("json"), v);
    }
}
