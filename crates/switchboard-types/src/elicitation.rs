//! Elicitation: `elicitation/create` in form and URL mode, `notifications/elicitation/complete`
//! and the −32042 URL-elicitation-required error data (SPEC-NOTES §10.1).
//!
//! Server → client (2025-06-18+; URL mode 2025-11-25). A request without `mode` is form mode
//! (`[EL-1]`). The requested schema is a flat object of primitive property schemas; a property
//! schema this crate cannot classify is kept whole in [`PrimitiveSchemaDefinition::Unknown`].

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Number, Value};

use crate::error::{ErrorCode, ErrorObject};
use crate::meta::{JsonObject, Meta, OrderedMap, from_value, str_member, wire_tag};
use crate::tasks::TaskMetadata;

wire_tag!(
    /// The `"mode": "form"` tag.
    FormModeTag = "form"
);
wire_tag!(
    /// The `"mode": "url"` tag.
    UrlModeTag = "url"
);
wire_tag!(
    /// The `"type": "object"` tag of a requested schema.
    ObjectTag = "object"
);
wire_tag!(
    /// The `"type": "string"` tag.
    StringTag = "string"
);
wire_tag!(
    /// The `"type": "boolean"` tag.
    BooleanTag = "boolean"
);
wire_tag!(
    /// The `"type": "array"` tag.
    ArrayTag = "array"
);

/// Params of `elicitation/create` (`ElicitRequestParams`): form or URL mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ElicitRequestParams {
    /// Form mode (`mode` absent or `"form"`, `[EL-1]`).
    Form(ElicitRequestFormParams),
    /// URL mode (`mode: "url"`, 2025-11-25).
    Url(ElicitRequestURLParams),
}

impl ElicitRequestParams {
    /// The message shown to the user.
    pub fn message(&self) -> &str {
        match self {
            ElicitRequestParams::Form(f) => &f.message,
            ElicitRequestParams::Url(u) => &u.message,
        }
    }

    /// The task request, if any.
    pub fn task(&self) -> Option<&TaskMetadata> {
        match self {
            ElicitRequestParams::Form(f) => f.task.as_ref(),
            ElicitRequestParams::Url(u) => u.task.as_ref(),
        }
    }
}

impl From<ElicitRequestFormParams> for ElicitRequestParams {
    fn from(p: ElicitRequestFormParams) -> Self {
        ElicitRequestParams::Form(p)
    }
}

impl From<ElicitRequestURLParams> for ElicitRequestParams {
    fn from(p: ElicitRequestURLParams) -> Self {
        ElicitRequestParams::Url(p)
    }
}

impl<'de> Deserialize<'de> for ElicitRequestParams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        if !v.is_object() {
            return Err(serde::de::Error::custom(
                "elicitation params must be a JSON object",
            ));
        }
        match v.get("mode") {
            None => Ok(ElicitRequestParams::Form(from_value(v)?)),
            Some(Value::String(m)) if m == FormModeTag::VALUE => {
                Ok(ElicitRequestParams::Form(from_value(v)?))
            }
            Some(Value::String(m)) if m == UrlModeTag::VALUE => {
                Ok(ElicitRequestParams::Url(from_value(v)?))
            }
            Some(other) => Err(serde::de::Error::custom(format_args!(
                "unknown elicitation mode {other}"
            ))),
        }
    }
}

/// Form-mode params (`ElicitRequestFormParams`; the only shape in 2025-06-18).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestFormParams {
    /// `"form"`, or absent (2025-11-25 made it explicit; absent still means form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<FormModeTag>,
    /// What is being asked and why.
    pub message: String,
    /// The fields to fill in.
    pub requested_schema: RequestedSchema,
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

impl ElicitRequestFormParams {
    /// Form params (without an explicit `mode`, which every revision reads as form).
    pub fn new(message: impl Into<String>, requested_schema: RequestedSchema) -> Self {
        ElicitRequestFormParams {
            mode: None,
            message: message.into(),
            requested_schema,
            task: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// URL-mode params (`ElicitRequestURLParams`, 2025-11-25): for steps that must not pass through
/// the client, such as third-party OAuth or entering an API key (`[EL-2]`, `[EL-6]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestURLParams {
    /// Always `"url"`.
    pub mode: UrlModeTag,
    /// Why the user should open the URL.
    pub message: String,
    /// Server-unique id, echoed by `notifications/elicitation/complete`.
    pub elicitation_id: String,
    /// The URL to open (`[EL-5]`).
    pub url: String,
    /// Present to run the request as a task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ElicitRequestURLParams {
    /// URL-mode params.
    pub fn new(
        message: impl Into<String>,
        elicitation_id: impl Into<String>,
        url: impl Into<String>,
    ) -> Self {
        ElicitRequestURLParams {
            mode: UrlModeTag,
            message: message.into(),
            elicitation_id: elicitation_id.into(),
            url: url.into(),
            task: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// Why [`url`](Self::url) is no URL a client may offer to open, or `None` when it is one
    /// (`[EL-5]`, SECURITY-NOTES `[SEC-URL-2]`, `[SEC-URL-4]`): an absolute `https` or `http`
    /// URL with a host, made only of the characters RFC 3986 allows (so no spaces, quotes,
    /// backticks, angle brackets, backslashes or control characters), every `%` starting an
    /// escape.
    pub fn url_problem(&self) -> Option<&'static str> {
        let url = self.url.as_str();
        let Some((scheme, rest)) = url.split_once(':') else {
            return Some("not an absolute URL");
        };
        if !scheme.eq_ignore_ascii_case("https") && !scheme.eq_ignore_ascii_case("http") {
            return Some("only https and http URLs are opened");
        }
        let Some(authority) = rest.strip_prefix("//") else {
            return Some("no host");
        };
        let host = authority.split(['/', '?', '#']).next().unwrap_or_default();
        if host.rsplit('@').next().is_none_or(str::is_empty) {
            return Some("no host");
        }
        let bytes = url.as_bytes();
        for (i, &b) in bytes.iter().enumerate() {
            let allowed = b.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=%".contains(&b);
            if !allowed {
                return Some("a character RFC 3986 does not allow in a URL");
            }
            if b == b'%'
                && !(bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                    && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
            {
                return Some("a '%' that starts no escape");
            }
        }
        None
    }
}

/// The `requestedSchema` of a form: a flat object of primitive properties.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestedSchema {
    /// The JSON Schema dialect, if not 2020-12.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Always `"object"`.
    pub r#type: ObjectTag,
    /// The fields, in display order.
    pub properties: OrderedMap<PrimitiveSchemaDefinition>,
    /// Names of the required fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl RequestedSchema {
    /// Adds a field.
    pub fn with_property(
        mut self,
        name: impl Into<String>,
        schema: impl Into<PrimitiveSchemaDefinition>,
    ) -> Self {
        self.properties.insert(name, schema.into());
        self
    }

    /// Adds a required field.
    pub fn with_required_property(
        self,
        name: impl Into<String>,
        schema: impl Into<PrimitiveSchemaDefinition>,
    ) -> Self {
        let name = name.into();
        let mut s = self.with_property(name.clone(), schema);
        s.required.get_or_insert_with(Vec::new).push(name);
        s
    }
}

/// A property schema of a form (`PrimitiveSchemaDefinition`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum PrimitiveSchemaDefinition {
    /// `type: "string"` without `enum` / `oneOf`.
    String(StringSchema),
    /// `type: "number" | "integer"`.
    Number(NumberSchema),
    /// `type: "boolean"`.
    Boolean(BooleanSchema),
    /// An enumeration (single or multi select, titled or not, or the legacy form).
    Enum(EnumSchema),
    /// A property schema this crate cannot classify, kept as received.
    Unknown(Value),
}

/// An enumeration schema (`EnumSchema`, 2025-11-25; 2025-06-18 had only the legacy form).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum EnumSchema {
    /// Pick one.
    SingleSelect(SingleSelectEnumSchema),
    /// Pick several.
    MultiSelect(MultiSelectEnumSchema),
    /// `enum` plus `enumNames` (deprecated).
    LegacyTitled(LegacyTitledEnumSchema),
}

/// Single-select enumeration (`SingleSelectEnumSchema`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SingleSelectEnumSchema {
    /// Plain `enum` values.
    Untitled(UntitledSingleSelectEnumSchema),
    /// `oneOf` of `{const, title}`.
    Titled(TitledSingleSelectEnumSchema),
}

/// Multi-select enumeration (`MultiSelectEnumSchema`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum MultiSelectEnumSchema {
    /// `items.enum` values.
    Untitled(UntitledMultiSelectEnumSchema),
    /// `items.anyOf` of `{const, title}`.
    Titled(TitledMultiSelectEnumSchema),
}

/// A string field (`StringSchema`). The prose's `pattern` is not in the schema; it is kept in
/// `extra` if sent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StringSchema {
    /// Always `"string"`.
    pub r#type: StringTag,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// Maximum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// `"email"`, `"uri"`, `"date"` or `"date-time"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// Pre-filled value (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `number` or `integer`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NumberType {
    /// Any number.
    #[default]
    Number,
    /// Whole numbers only.
    Integer,
}

/// A number field (`NumberSchema`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NumberSchema {
    /// `"number"` or `"integer"`.
    pub r#type: NumberType,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<Number>,
    /// Maximum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<Number>,
    /// Pre-filled value (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Number>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A boolean field (`BooleanSchema`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BooleanSchema {
    /// Always `"boolean"`.
    pub r#type: BooleanTag,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Pre-filled value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A titled choice: `{const, title}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledEnumOption {
    /// The value.
    pub r#const: String,
    /// Its label.
    pub title: String,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl TitledEnumOption {
    /// A choice `value` labelled `title`.
    pub fn new(value: impl Into<String>, title: impl Into<String>) -> Self {
        TitledEnumOption {
            r#const: value.into(),
            title: title.into(),
            extra: JsonObject::new(),
        }
    }
}

/// Single select from plain values (`UntitledSingleSelectEnumSchema`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UntitledSingleSelectEnumSchema {
    /// Always `"string"`.
    pub r#type: StringTag,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The choices.
    pub r#enum: Vec<String>,
    /// Pre-selected value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Single select from titled values (`TitledSingleSelectEnumSchema`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledSingleSelectEnumSchema {
    /// Always `"string"`.
    pub r#type: StringTag,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The choices.
    pub one_of: Vec<TitledEnumOption>,
    /// Pre-selected value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `items` of an untitled multi select: `{type: "string", enum}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UntitledEnumItems {
    /// Always `"string"`.
    pub r#type: StringTag,
    /// The choices.
    pub r#enum: Vec<String>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `items` of a titled multi select: `{anyOf: [{const, title}]}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledEnumItems {
    /// The choices.
    pub any_of: Vec<TitledEnumOption>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Multi select from plain values (`UntitledMultiSelectEnumSchema`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UntitledMultiSelectEnumSchema {
    /// Always `"array"`.
    pub r#type: ArrayTag,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Fewest choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Most choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The choices.
    pub items: UntitledEnumItems,
    /// Pre-selected values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Multi select from titled values (`TitledMultiSelectEnumSchema`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledMultiSelectEnumSchema {
    /// Always `"array"`.
    pub r#type: ArrayTag,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Fewest choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Most choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The choices.
    pub items: TitledEnumItems,
    /// Pre-selected values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The deprecated titled enumeration: `enum` with parallel `enumNames` (`LegacyTitledEnumSchema`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LegacyTitledEnumSchema {
    /// Always `"string"`.
    pub r#type: StringTag,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The choices.
    pub r#enum: Vec<String>,
    /// Labels, parallel to `enum`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enum_names: Option<Vec<String>>,
    /// Pre-selected value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Which concrete property schema a JSON value is, by `type` and the enum keywords.
enum SchemaKind {
    String,
    Number,
    Boolean,
    UntitledSingle,
    TitledSingle,
    Legacy,
    UntitledMulti,
    TitledMulti,
    Unknown,
}

fn classify(v: &Value) -> SchemaKind {
    match str_member(v, "type") {
        Some("string") if v.get("oneOf").is_some() => SchemaKind::TitledSingle,
        Some("string") if v.get("enum").is_some() && v.get("enumNames").is_some() => {
            SchemaKind::Legacy
        }
        Some("string") if v.get("enum").is_some() => SchemaKind::UntitledSingle,
        Some("string") => SchemaKind::String,
        Some("number" | "integer") => SchemaKind::Number,
        Some("boolean") => SchemaKind::Boolean,
        Some("array") => match v.get("items") {
            Some(items) if items.get("anyOf").is_some() => SchemaKind::TitledMulti,
            Some(items) if items.get("enum").is_some() => SchemaKind::UntitledMulti,
            _ => SchemaKind::Unknown,
        },
        _ => SchemaKind::Unknown,
    }
}

fn enum_schema<E: serde::de::Error>(kind: &SchemaKind, v: Value) -> Result<Option<EnumSchema>, E> {
    Ok(Some(match kind {
        SchemaKind::UntitledSingle => {
            EnumSchema::SingleSelect(SingleSelectEnumSchema::Untitled(from_value(v)?))
        }
        SchemaKind::TitledSingle => {
            EnumSchema::SingleSelect(SingleSelectEnumSchema::Titled(from_value(v)?))
        }
        SchemaKind::UntitledMulti => {
            EnumSchema::MultiSelect(MultiSelectEnumSchema::Untitled(from_value(v)?))
        }
        SchemaKind::TitledMulti => {
            EnumSchema::MultiSelect(MultiSelectEnumSchema::Titled(from_value(v)?))
        }
        SchemaKind::Legacy => EnumSchema::LegacyTitled(from_value(v)?),
        _ => return Ok(None),
    }))
}

impl<'de> Deserialize<'de> for PrimitiveSchemaDefinition {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        if !v.is_object() {
            return Err(serde::de::Error::custom(
                "a property schema must be a JSON object",
            ));
        }
        let kind = classify(&v);
        Ok(match kind {
            SchemaKind::String => PrimitiveSchemaDefinition::String(from_value(v)?),
            SchemaKind::Number => PrimitiveSchemaDefinition::Number(from_value(v)?),
            SchemaKind::Boolean => PrimitiveSchemaDefinition::Boolean(from_value(v)?),
            SchemaKind::Unknown => PrimitiveSchemaDefinition::Unknown(v),
            _ => match enum_schema::<D::Error>(&kind, v)? {
                Some(e) => PrimitiveSchemaDefinition::Enum(e),
                None => return Err(serde::de::Error::custom("unclassified enum schema")),
            },
        })
    }
}

impl<'de> Deserialize<'de> for EnumSchema {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        enum_schema::<D::Error>(&classify(&v), v)?
            .ok_or_else(|| serde::de::Error::custom("not an enum schema"))
    }
}

impl<'de> Deserialize<'de> for SingleSelectEnumSchema {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match EnumSchema::deserialize(d)? {
            EnumSchema::SingleSelect(s) => Ok(s),
            _ => Err(serde::de::Error::custom("not a single-select enum schema")),
        }
    }
}

impl<'de> Deserialize<'de> for MultiSelectEnumSchema {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match EnumSchema::deserialize(d)? {
            EnumSchema::MultiSelect(m) => Ok(m),
            _ => Err(serde::de::Error::custom("not a multi-select enum schema")),
        }
    }
}

impl From<StringSchema> for PrimitiveSchemaDefinition {
    fn from(s: StringSchema) -> Self {
        PrimitiveSchemaDefinition::String(s)
    }
}

impl From<NumberSchema> for PrimitiveSchemaDefinition {
    fn from(s: NumberSchema) -> Self {
        PrimitiveSchemaDefinition::Number(s)
    }
}

impl From<BooleanSchema> for PrimitiveSchemaDefinition {
    fn from(s: BooleanSchema) -> Self {
        PrimitiveSchemaDefinition::Boolean(s)
    }
}

impl From<EnumSchema> for PrimitiveSchemaDefinition {
    fn from(s: EnumSchema) -> Self {
        PrimitiveSchemaDefinition::Enum(s)
    }
}

/// The user's answer to an elicitation (`ElicitResult.action`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted (form) or agreed to open the URL (URL mode).
    Accept,
    /// Explicitly said no.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

/// One submitted form value: a string, number, boolean, or (2025-11-25) a list of strings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ElicitContentValue {
    /// A boolean.
    Bool(bool),
    /// A number (kept exactly as sent).
    Number(Number),
    /// A string.
    String(String),
    /// Several strings (multi select).
    StringArray(Vec<String>),
}

/// Result of `elicitation/create` (`ElicitResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// Submitted values; only for an accepted form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<OrderedMap<ElicitContentValue>>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ElicitResult {
    /// A result with `action` and no content.
    pub fn new(action: ElicitAction) -> Self {
        ElicitResult {
            action,
            content: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// An accepted form with `content`.
    pub fn accept(content: OrderedMap<ElicitContentValue>) -> Self {
        ElicitResult {
            content: Some(content),
            ..Self::new(ElicitAction::Accept)
        }
    }
}

/// Params of `notifications/elicitation/complete` (`ElicitationCompleteNotification`, 2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCompleteNotificationParams {
    /// The original `elicitationId` (`[EL-8]`).
    pub elicitation_id: String,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ElicitationCompleteNotificationParams {
    /// Params for `elicitation_id`.
    pub fn new(elicitation_id: impl Into<String>) -> Self {
        ElicitationCompleteNotificationParams {
            elicitation_id: elicitation_id.into(),
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// The `data` of a −32042 error (`URLElicitationRequiredError`, §10.1.4): the URL elicitations
/// that must finish first, each URL mode with an id (`[EL-10]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct URLElicitationRequiredErrorData {
    /// The required elicitations.
    pub elicitations: Vec<ElicitRequestURLParams>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl URLElicitationRequiredErrorData {
    /// Data listing `elicitations`.
    pub fn new(elicitations: Vec<ElicitRequestURLParams>) -> Self {
        URLElicitationRequiredErrorData {
            elicitations,
            extra: JsonObject::new(),
        }
    }

    /// The wire error: code −32042, `message`, and this data.
    pub fn into_error(self, message: impl Into<String>) -> ErrorObject {
        let data = serde_json::to_value(&self).unwrap_or(Value::Null);
        ErrorObject::new(ErrorCode::URL_ELICITATION_REQUIRED, message).with_data(data)
    }

    /// Reads the data of a −32042 error; `None` for another code or malformed data.
    pub fn from_error(error: &ErrorObject) -> Option<Self> {
        if error.code != ErrorCode::URL_ELICITATION_REQUIRED {
            return None;
        }
        serde_json::from_value(error.data.clone()?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn el_5_sec_url_4_an_elicitation_url_is_an_absolute_http_url() {
        let problem = |url: &str| ElicitRequestURLParams::new("m", "e", url).url_problem();
        for ok in [
            "https://mcp.acme.test/link?e=el-3f9c",
            "HTTPS://example.test",
            "http://127.0.0.1:8080/connect#top",
            "https://[::1]/x?q=a%20b&r=(1)",
        ] {
            assert_eq!(problem(ok), None, "{ok}");
        }
        for bad in [
            "",
            "not a url",
            "/relative/path",
            "javascript:alert(1)",
            "data:text/html,<b>x</b>",
            "file:///etc/passwd",
            "vbscript:msgbox(1)",
            "https:example.test",
            "https://",
            "https://user@/x",
            "https://example.test/a b",
            "https://example.test/`id`",
            "https://example.test/\"x\"",
            "https://example.test/<script>",
            "https://example.test/a\\b",
            "https://example.test/\n",
            "https://example.test/%zz",
            "https://example.test/%4",
            "https://exämple.test/",
        ] {
            assert!(problem(bad).is_some(), "{bad:?} passed");
        }
    }

    #[test]
    fn el_1_elicit_without_mode_is_form() {
        let v = json!({"message": "Name?", "requestedSchema": {"type": "object", "properties": {"n": {"type": "string"}}}});
        let p: ElicitRequestParams = serde_json::from_value(v.clone()).expect("params");
        assert!(matches!(
            p,
            ElicitRequestParams::Form(ElicitRequestFormParams { mode: None, .. })
        ));
        assert_eq!(serde_json::to_value(&p).expect("json"), v);
        let bad = json!({"mode": "telepathy", "message": "x"});
        assert!(serde_json::from_value::<ElicitRequestParams>(bad).is_err());
    }

    #[test]
    fn el_10_url_required_error_round_trips() {
        let data = URLElicitationRequiredErrorData::new(vec![ElicitRequestURLParams::new(
            "Connect your CRM account to continue.",
            "el-3f9c",
            "https://mcp.acme.test/link?e=el-3f9c",
        )]);
        let err = data
            .clone()
            .into_error("User must link the CRM account first.");
        assert_eq!(err.code.0, -32042);
        assert_eq!(
            URLElicitationRequiredErrorData::from_error(&err),
            Some(data)
        );
    }

    #[test]
    fn property_schemas_are_classified() {
        let cases = [
            (json!({"type": "string"}), "string"),
            (json!({"type": "integer", "minimum": 1}), "number"),
            (json!({"type": "boolean"}), "boolean"),
            (json!({"type": "string", "enum": ["a"]}), "untitled-single"),
            (
                json!({"type": "string", "enum": ["a"], "enumNames": ["A"]}),
                "legacy",
            ),
            (
                json!({"type": "string", "oneOf": [{"const": "a", "title": "A"}]}),
                "titled-single",
            ),
            (
                json!({"type": "array", "items": {"type": "string", "enum": ["a"]}}),
                "untitled-multi",
            ),
            (
                json!({"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}}),
                "titled-multi",
            ),
            (json!({"type": "object"}), "unknown"),
        ];
        for (v, want) in cases {
            let p: PrimitiveSchemaDefinition = serde_json::from_value(v.clone()).expect("schema");
            let got = match &p {
                PrimitiveSchemaDefinition::String(_) => "string",
                PrimitiveSchemaDefinition::Number(_) => "number",
                PrimitiveSchemaDefinition::Boolean(_) => "boolean",
                PrimitiveSchemaDefinition::Enum(EnumSchema::SingleSelect(
                    SingleSelectEnumSchema::Untitled(_),
                )) => "untitled-single",
                PrimitiveSchemaDefinition::Enum(EnumSchema::SingleSelect(
                    SingleSelectEnumSchema::Titled(_),
                )) => "titled-single",
                PrimitiveSchemaDefinition::Enum(EnumSchema::MultiSelect(
                    MultiSelectEnumSchema::Untitled(_),
                )) => "untitled-multi",
                PrimitiveSchemaDefinition::Enum(EnumSchema::MultiSelect(
                    MultiSelectEnumSchema::Titled(_),
                )) => "titled-multi",
                PrimitiveSchemaDefinition::Enum(EnumSchema::LegacyTitled(_)) => "legacy",
                PrimitiveSchemaDefinition::Unknown(_) => "unknown",
            };
            assert_eq!(got, want, "{v}");
            assert_eq!(serde_json::to_value(&p).expect("json"), v);
        }
    }
}
