//! Completion: `completion/complete` and its references (SPEC-NOTES §8.5).
//!
//! Client → server. A reference names a prompt (`ref/prompt`) or a resource template
//! (`ref/resource`); a reference of an unknown `type` is kept whole in [`Reference::Unknown`].

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::content::tag_of;
use crate::meta::{JsonObject, Meta, OrderedMap, from_value, wire_tag};

wire_tag!(
    /// The `"type": "ref/prompt"` tag.
    PromptRefTag = "ref/prompt"
);
wire_tag!(
    /// The `"type": "ref/resource"` tag.
    ResourceRefTag = "ref/resource"
);

/// A reference to a prompt (`PromptReference`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptReference {
    /// Always `"ref/prompt"`.
    pub r#type: PromptRefTag,
    /// The prompt name.
    pub name: String,
    /// Display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl PromptReference {
    /// A reference to prompt `name`.
    pub fn new(name: impl Into<String>) -> Self {
        PromptReference {
            r#type: PromptRefTag,
            name: name.into(),
            title: None,
            extra: JsonObject::new(),
        }
    }
}

/// A reference to a resource or resource template (`ResourceTemplateReference`; called
/// `ResourceReference` before 2025-06-18, same wire shape).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplateReference {
    /// Always `"ref/resource"`.
    pub r#type: ResourceRefTag,
    /// The URI or URI template.
    pub uri: String,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ResourceTemplateReference {
    /// A reference to `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        ResourceTemplateReference {
            r#type: ResourceRefTag,
            uri: uri.into(),
            extra: JsonObject::new(),
        }
    }
}

/// The 2024-11-05 / 2025-03-26 name of [`ResourceTemplateReference`].
pub type ResourceReference = ResourceTemplateReference;

/// What a completion request is about (`PromptReference | ResourceTemplateReference`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Reference {
    /// `"type": "ref/prompt"`.
    Prompt(PromptReference),
    /// `"type": "ref/resource"`.
    Resource(ResourceTemplateReference),
    /// A reference whose `type` this crate does not know, kept as received.
    Unknown(Value),
}

impl<'de> Deserialize<'de> for Reference {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Ok(match tag_of::<D::Error>(&v, "a completion reference")? {
            PromptRefTag::VALUE => Reference::Prompt(from_value(v)?),
            ResourceRefTag::VALUE => Reference::Resource(from_value(v)?),
            _ => Reference::Unknown(v),
        })
    }
}

/// The argument being completed (`CompleteRequestParams.argument`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteArgument {
    /// The argument name.
    pub name: String,
    /// What has been typed so far.
    pub value: String,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Context for a completion (`CompleteRequestParams.context`, 2025-06-18+).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteContext {
    /// Arguments already resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<OrderedMap<String>>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Params of `completion/complete` (`CompleteRequestParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteRequestParams {
    /// The prompt or resource template.
    pub r#ref: Reference,
    /// The argument being completed.
    pub argument: CompleteArgument,
    /// Already-resolved arguments (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompleteContext>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl CompleteRequestParams {
    /// Params completing argument `name` (typed so far: `value`) of `reference`.
    pub fn new(reference: Reference, name: impl Into<String>, value: impl Into<String>) -> Self {
        CompleteRequestParams {
            r#ref: reference,
            argument: CompleteArgument {
                name: name.into(),
                value: value.into(),
                extra: JsonObject::new(),
            },
            context: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// The completion values (`CompleteResult.completion`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// At most 100 values.
    pub values: Vec<String>,
    /// The total number of matches, which may exceed `values.len()`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more matches exist than were returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Result of `completion/complete` (`CompleteResult`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteResult {
    /// The completion values.
    pub completion: Completion,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl CompleteResult {
    /// A result with `values` (the caller keeps them to at most 100).
    pub fn new(values: Vec<String>) -> Self {
        CompleteResult {
            completion: Completion {
                values,
                ..Default::default()
            },
            ..Default::default()
        }
    }
}
