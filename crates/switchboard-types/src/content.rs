//! Content blocks, annotations, icons and resource contents (SPEC-NOTES §11.1, §11.2, §11.8).
//!
//! Applies to both sides. [`ContentBlock`] is the union used in tool results, prompt messages and
//! tool-result blocks; a block with a `type` this crate does not know is kept whole in
//! [`ContentBlock::Unknown`] instead of failing the message.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Number, Value};

use crate::meta::{JsonObject, Meta, from_value, str_member, wire_tag};

/// The sender or recipient of a message (`Role`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user (or the host on the user's behalf).
    User,
    /// The model.
    Assistant,
}

/// Hints to the client about how to use or show an object (`Annotations`, 2025-03-26+; in
/// 2024-11-05 the same member lived on the `Annotated` base).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the object is meant for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (least) to 1 (effectively required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<Number>,
    /// ISO 8601 time of the last change (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The theme an icon is designed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IconTheme {
    /// For a light background.
    Light,
    /// For a dark background.
    Dark,
}

/// An icon for display (`Icon`, 2025-11-25). Consumers accept only `https:` and `data:` sources
/// (`[SF-11]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// An `https:` or `data:` URI.
    pub src: String,
    /// The MIME type, when the URI does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `"48x48"` or `"any"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// The theme the icon is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<IconTheme>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Icon {
    /// An icon with only a source.
    pub fn new(src: impl Into<String>) -> Self {
        Icon {
            src: src.into(),
            mime_type: None,
            sizes: None,
            theme: None,
            extra: JsonObject::new(),
        }
    }
}

/// The `name` / `title` pair shared by named things (`BaseMetadata`, 2025-06-18+).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BaseMetadata {
    /// Programmatic identifier.
    pub name: String,
    /// Display name (2025-06-18+); show it in preference to `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

wire_tag!(
    /// The `"type": "text"` tag.
    TextTag = "text"
);
wire_tag!(
    /// The `"type": "image"` tag.
    ImageTag = "image"
);
wire_tag!(
    /// The `"type": "audio"` tag.
    AudioTag = "audio"
);
wire_tag!(
    /// The `"type": "resource_link"` tag.
    ResourceLinkTag = "resource_link"
);
wire_tag!(
    /// The `"type": "resource"` tag (embedded resource).
    ResourceTag = "resource"
);

/// Text (`TextContent`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    /// Always `"text"`.
    pub r#type: TextTag,
    /// The text.
    pub text: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl TextContent {
    /// A text block.
    pub fn new(text: impl Into<String>) -> Self {
        TextContent {
            r#type: TextTag,
            text: text.into(),
            annotations: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// An image (`ImageContent`): base64 data and a MIME type (`[SF-1]`, `[SF-2]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Always `"image"`.
    pub r#type: ImageTag,
    /// Base64-encoded image data.
    pub data: String,
    /// The image MIME type.
    pub mime_type: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ImageContent {
    /// An image block from base64 `data`.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ImageContent {
            r#type: ImageTag,
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// Audio (`AudioContent`, 2025-03-26+): base64 data and a MIME type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AudioContent {
    /// Always `"audio"`.
    pub r#type: AudioTag,
    /// Base64-encoded audio data.
    pub data: String,
    /// The audio MIME type.
    pub mime_type: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl AudioContent {
    /// An audio block from base64 `data`.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        AudioContent {
            r#type: AudioTag,
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// A link to a resource (`ResourceLink`, 2025-06-18+): every [`Resource`] member plus the tag.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceLink {
    /// Always `"resource_link"`.
    pub r#type: ResourceLinkTag,
    /// The linked resource (its unknown members are kept in its own `extra`).
    #[serde(flatten)]
    pub resource: Resource,
}

impl ResourceLink {
    /// A link to `resource`.
    pub fn new(resource: Resource) -> Self {
        ResourceLink {
            r#type: ResourceLinkTag,
            resource,
        }
    }
}

/// A resource embedded in a message (`EmbeddedResource`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// Always `"resource"`.
    pub r#type: ResourceTag,
    /// The contents.
    pub resource: ResourceContents,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl EmbeddedResource {
    /// An embedded resource block.
    pub fn new(resource: ResourceContents) -> Self {
        EmbeddedResource {
            r#type: ResourceTag,
            resource,
            annotations: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// A content block (`ContentBlock`): text, image, audio, resource link or embedded resource.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ContentBlock {
    /// `"type": "text"`.
    Text(TextContent),
    /// `"type": "image"`.
    Image(ImageContent),
    /// `"type": "audio"` (2025-03-26+).
    Audio(AudioContent),
    /// `"type": "resource_link"` (2025-06-18+).
    ResourceLink(ResourceLink),
    /// `"type": "resource"`.
    Resource(EmbeddedResource),
    /// A block whose `type` this crate does not know, kept as received.
    Unknown(Value),
}

/// The common name for a content block: `Content::text("hi")`.
pub type Content = ContentBlock;

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent::new(text))
    }

    /// An image block from base64 `data`.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Image(ImageContent::new(data, mime_type))
    }

    /// An audio block from base64 `data`.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Audio(AudioContent::new(data, mime_type))
    }

    /// A resource-link block.
    pub fn resource_link(resource: Resource) -> Self {
        ContentBlock::ResourceLink(ResourceLink::new(resource))
    }

    /// An embedded-resource block.
    pub fn embedded(resource: ResourceContents) -> Self {
        ContentBlock::Resource(EmbeddedResource::new(resource))
    }

    /// The `type` tag of this block.
    pub fn type_name(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(_) => Some(TextTag::VALUE),
            ContentBlock::Image(_) => Some(ImageTag::VALUE),
            ContentBlock::Audio(_) => Some(AudioTag::VALUE),
            ContentBlock::ResourceLink(_) => Some(ResourceLinkTag::VALUE),
            ContentBlock::Resource(_) => Some(ResourceTag::VALUE),
            ContentBlock::Unknown(v) => str_member(v, "type"),
        }
    }

    /// The text, when this is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

impl From<TextContent> for ContentBlock {
    fn from(c: TextContent) -> Self {
        ContentBlock::Text(c)
    }
}

impl From<ImageContent> for ContentBlock {
    fn from(c: ImageContent) -> Self {
        ContentBlock::Image(c)
    }
}

impl From<AudioContent> for ContentBlock {
    fn from(c: AudioContent) -> Self {
        ContentBlock::Audio(c)
    }
}

impl From<ResourceLink> for ContentBlock {
    fn from(c: ResourceLink) -> Self {
        ContentBlock::ResourceLink(c)
    }
}

impl From<EmbeddedResource> for ContentBlock {
    fn from(c: EmbeddedResource) -> Self {
        ContentBlock::Resource(c)
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        let tag = tag_of::<D::Error>(&v, "a content block")?;
        Ok(match tag {
            TextTag::VALUE => ContentBlock::Text(from_value(v)?),
            ImageTag::VALUE => ContentBlock::Image(from_value(v)?),
            AudioTag::VALUE => ContentBlock::Audio(from_value(v)?),
            ResourceLinkTag::VALUE => ContentBlock::ResourceLink(from_value(v)?),
            ResourceTag::VALUE => ContentBlock::Resource(from_value(v)?),
            _ => ContentBlock::Unknown(v),
        })
    }
}

/// The string `type` member of an object, or an error naming `what` was expected.
pub(crate) fn tag_of<'v, E: serde::de::Error>(v: &'v Value, what: &str) -> Result<&'v str, E> {
    if !v.is_object() {
        return Err(E::custom(format_args!("{what} must be a JSON object")));
    }
    str_member(v, "type")
        .ok_or_else(|| E::custom(format_args!("{what} needs a string `type` member")))
}

/// The contents of a text resource (`TextResourceContents`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextResourceContents {
    /// The resource URI.
    pub uri: String,
    /// The MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text.
    pub text: String,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl TextResourceContents {
    /// Text contents of `uri`.
    pub fn new(uri: impl Into<String>, text: impl Into<String>) -> Self {
        TextResourceContents {
            uri: uri.into(),
            mime_type: None,
            text: text.into(),
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// The contents of a binary resource (`BlobResourceContents`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobResourceContents {
    /// The resource URI.
    pub uri: String,
    /// The MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Base64-encoded bytes.
    pub blob: String,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl BlobResourceContents {
    /// Binary contents of `uri` from base64 `blob`.
    pub fn new(uri: impl Into<String>, blob: impl Into<String>) -> Self {
        BlobResourceContents {
            uri: uri.into(),
            mime_type: None,
            blob: blob.into(),
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// Resource contents (`TextResourceContents | BlobResourceContents`; the schema's
/// `ResourceContents` is their common base). Told apart by the `text` or `blob` member.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Text contents.
    Text(TextResourceContents),
    /// Binary contents.
    Blob(BlobResourceContents),
}

impl ResourceContents {
    /// The resource URI.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text(t) => &t.uri,
            ResourceContents::Blob(b) => &b.uri,
        }
    }

    /// The MIME type, if known.
    pub fn mime_type(&self) -> Option<&str> {
        match self {
            ResourceContents::Text(t) => t.mime_type.as_deref(),
            ResourceContents::Blob(b) => b.mime_type.as_deref(),
        }
    }
}

impl From<TextResourceContents> for ResourceContents {
    fn from(c: TextResourceContents) -> Self {
        ResourceContents::Text(c)
    }
}

impl From<BlobResourceContents> for ResourceContents {
    fn from(c: BlobResourceContents) -> Self {
        ResourceContents::Blob(c)
    }
}

impl<'de> Deserialize<'de> for ResourceContents {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        if v.get("blob").is_some() && v.get("text").is_none() {
            Ok(ResourceContents::Blob(from_value(v)?))
        } else if v.get("text").is_some() {
            Ok(ResourceContents::Text(from_value(v)?))
        } else {
            Err(serde::de::Error::custom(
                "resource contents need a `text` or a `blob` member",
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_block_type_is_kept() {
        let text = r#"{"type":"hologram","frames":3}"#;
        let block: ContentBlock = serde_json::from_str(text).expect("block");
        assert!(matches!(block, ContentBlock::Unknown(_)));
        assert_eq!(block.type_name(), Some("hologram"));
        assert_eq!(serde_json::to_string(&block).expect("json"), text);
    }

    #[test]
    fn a_block_needs_a_type() {
        assert!(serde_json::from_str::<ContentBlock>(r#"{"text":"x"}"#).is_err());
        assert!(serde_json::from_str::<ContentBlock>(r#""x""#).is_err());
        assert!(serde_json::from_str::<ContentBlock>(r#"{"type":"text"}"#).is_err());
    }

    #[test]
    fn content_text_constructor() {
        let v = serde_json::to_value(Content::text("hi")).expect("json");
        assert_eq!(v, serde_json::json!({"type":"text","text":"hi"}));
    }
}

/// A resource the server can read (`Resource`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// The resource URI (`[SF-3]`, `[SF-4]`).
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Size of the raw content in bytes, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Icons (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Resource {
    /// A resource with a URI and a name.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Resource {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            annotations: None,
            size: None,
            icons: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// Sets the MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}
