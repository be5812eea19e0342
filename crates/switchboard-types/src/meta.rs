//! `_meta` maps, their reserved keys (SPEC-NOTES §1.3, §11.9), and the small JSON building blocks
//! every other module shares: [`JsonObject`], [`EmptyObject`], [`OrderedMap`] and the base
//! params/result shapes ([`RequestParams`], [`NotificationParams`], [`EmptyResult`]).
//!
//! Applies to both sides. `_meta` may appear on request params, notification params, results and
//! most objects; this crate keeps it as an open map and never assumes anything about the values
//! under reserved keys (`[SF-12]`).

use std::fmt;
use std::ops::{Deref, DerefMut};

use serde::de::{self, DeserializeOwned, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::id::ProgressToken;

/// A JSON object with arbitrary members (member order is kept).
pub type JsonObject = Map<String, Value>;

/// An opaque pagination cursor.
pub type Cursor = String;

/// `_meta` key (no prefix) under which a request asks for progress notifications (§8.3).
pub const PROGRESS_TOKEN_KEY: &str = "progressToken";
/// `_meta` key marking a request, notification or result as part of a task (`[TK-13]`).
pub const RELATED_TASK_KEY: &str = "io.modelcontextprotocol/related-task";
/// `_meta` key of a `CreateTaskResult` for `tools/call`: a provisional string for the model.
pub const MODEL_IMMEDIATE_RESPONSE_KEY: &str = "io.modelcontextprotocol/model-immediate-response";

/// A `_meta` map: an open JSON object with helpers for the protocol's reserved keys.
///
/// Dereferences to the underlying [`JsonObject`], so `get`, `insert` and iteration work directly.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Meta(pub JsonObject);

impl Meta {
    /// An empty `_meta` map.
    pub fn new() -> Self {
        Meta(JsonObject::new())
    }

    /// The `progressToken`, when present and a string or an integer.
    pub fn progress_token(&self) -> Option<ProgressToken> {
        self.0
            .get(PROGRESS_TOKEN_KEY)
            .and_then(ProgressToken::from_value)
    }

    /// Sets the `progressToken`.
    pub fn set_progress_token(&mut self, token: ProgressToken) {
        self.0
            .insert(PROGRESS_TOKEN_KEY.to_owned(), token.to_value());
    }

    /// Builder form of [`Meta::set_progress_token`].
    pub fn with_progress_token(mut self, token: ProgressToken) -> Self {
        self.set_progress_token(token);
        self
    }

    /// The related-task metadata (`io.modelcontextprotocol/related-task`), when present and well formed.
    pub fn related_task(&self) -> Option<RelatedTaskMetadata> {
        let v = self.0.get(RELATED_TASK_KEY)?;
        serde_json::from_value(v.clone()).ok()
    }

    /// Sets the related-task metadata to `{"taskId": task_id}`.
    pub fn set_related_task(&mut self, task_id: impl Into<String>) {
        let mut obj = JsonObject::new();
        obj.insert("taskId".to_owned(), Value::String(task_id.into()));
        self.0
            .insert(RELATED_TASK_KEY.to_owned(), Value::Object(obj));
    }

    /// Builder form of [`Meta::set_related_task`].
    pub fn with_related_task(mut self, task_id: impl Into<String>) -> Self {
        self.set_related_task(task_id);
        self
    }

    /// The `io.modelcontextprotocol/model-immediate-response` string, when present.
    pub fn model_immediate_response(&self) -> Option<&str> {
        self.0
            .get(MODEL_IMMEDIATE_RESPONSE_KEY)
            .and_then(Value::as_str)
    }

    /// Sets the `io.modelcontextprotocol/model-immediate-response` string.
    pub fn set_model_immediate_response(&mut self, text: impl Into<String>) {
        self.0.insert(
            MODEL_IMMEDIATE_RESPONSE_KEY.to_owned(),
            Value::String(text.into()),
        );
    }

    /// Consumes the wrapper and returns the map.
    pub fn into_inner(self) -> JsonObject {
        self.0
    }
}

impl Deref for Meta {
    type Target = JsonObject;

    fn deref(&self) -> &JsonObject {
        &self.0
    }
}

impl DerefMut for Meta {
    fn deref_mut(&mut self) -> &mut JsonObject {
        &mut self.0
    }
}

impl From<JsonObject> for Meta {
    fn from(map: JsonObject) -> Self {
        Meta(map)
    }
}

/// Whether `key` is a well-formed `_meta` key (`[SF-13]`): an optional prefix of dot-separated
/// labels followed by `/`, then a name that is empty or starts and ends with an alphanumeric
/// character and has only alphanumerics, `-`, `_` and `.` in between.
pub fn is_valid_meta_key(key: &str) -> bool {
    let (prefix, name) = match key.rfind('/') {
        Some(i) => (Some(&key[..i]), &key[i + 1..]),
        None => (None, key),
    };
    if let Some(prefix) = prefix {
        let label_ok = |l: &str| {
            let b = l.as_bytes();
            match (b.first(), b.last()) {
                (Some(f), Some(z)) => {
                    f.is_ascii_alphabetic()
                        && z.is_ascii_alphanumeric()
                        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
                }
                _ => false,
            }
        };
        if !prefix.split('.').all(label_ok) {
            return false;
        }
    }
    let b = name.as_bytes();
    match (b.first(), b.last()) {
        (None, None) => true,
        (Some(f), Some(z)) => {
            f.is_ascii_alphanumeric()
                && z.is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// Whether `key` uses a prefix reserved for MCP (`[SF-13]`): one whose second label is
/// `modelcontextprotocol` or `mcp`, e.g. `io.modelcontextprotocol/` or `dev.mcp/`.
pub fn is_reserved_meta_key(key: &str) -> bool {
    match key.rfind('/') {
        Some(i) => matches!(
            key[..i].split('.').nth(1),
            Some("modelcontextprotocol" | "mcp")
        ),
        None => false,
    }
}

/// A presence object: `{}` on the wire, meaning "supported, with no sub-features".
///
/// Unknown members are kept in `extra`, so `{}` stays `{}` and `{"x":1}` stays `{"x":1}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EmptyObject {
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Base request params (`RequestParams`): only `_meta`. Used as-is by `ping` and `roots/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestParams {
    /// Request metadata, e.g. `progressToken`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Params of `ping`.
pub type PingRequestParams = RequestParams;

/// Base notification params (`NotificationParams`): only `_meta`. Used as-is by
/// `notifications/initialized` and the `list_changed` notifications.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NotificationParams {
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Params of `notifications/initialized`.
pub type InitializedNotificationParams = NotificationParams;

/// A result with no defined members (`EmptyResult`, and the base `Result`): the answer to `ping`,
/// `resources/subscribe`, `resources/unsubscribe` and `logging/setLevel`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EmptyResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Params of a paginated list request (`PaginatedRequestParams`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaginatedRequestParams {
    /// The opaque cursor from a previous `nextCursor`; absent for the first page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl PaginatedRequestParams {
    /// Params asking for the page after `cursor`.
    pub fn with_cursor(cursor: impl Into<Cursor>) -> Self {
        PaginatedRequestParams {
            cursor: Some(cursor.into()),
            ..Default::default()
        }
    }
}

/// The base of a paginated result (`PaginatedResult`): `nextCursor` and `_meta`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaginatedResult {
    /// The cursor of the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A JSON object whose member values have one type `V`, keeping member order as received.
///
/// Used where order can matter to a user interface (form fields) and for string maps such as
/// prompt arguments. Lookups are linear; these maps are small.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderedMap<V>(pub Vec<(String, V)>);

impl<V> Default for OrderedMap<V> {
    fn default() -> Self {
        OrderedMap(Vec::new())
    }
}

impl<V> OrderedMap<V> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&V> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Inserts or replaces `key`, keeping the position of an existing key. Returns the old value.
    pub fn insert(&mut self, key: impl Into<String>, value: V) -> Option<V> {
        let key = key.into();
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some((_, slot)) => Some(std::mem::replace(slot, value)),
            None => {
                self.0.push((key, value));
                None
            }
        }
    }

    /// Builder form of [`OrderedMap::insert`].
    pub fn with(mut self, key: impl Into<String>, value: V) -> Self {
        self.insert(key, value);
        self
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The members in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The keys in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.as_str())
    }

    /// The number of members.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the map has no members.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<K: Into<String>, V> FromIterator<(K, V)> for OrderedMap<V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut map = OrderedMap::new();
        for (k, v) in iter {
            map.insert(k, v);
        }
        map
    }
}

impl<V: Serialize> Serialize for OrderedMap<V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for OrderedMap<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MapVisitor<V>(std::marker::PhantomData<V>);

        impl<'de, V: Deserialize<'de>> Visitor<'de> for MapVisitor<V> {
            type Value = OrderedMap<V>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut map = OrderedMap::new();
                while let Some((k, v)) = access.next_entry::<String, V>()? {
                    map.insert(k, v);
                }
                Ok(map)
            }
        }

        d.deserialize_map(MapVisitor(std::marker::PhantomData))
    }
}

/// Deserializes `T` from an owned JSON value, mapping the error into the caller's error type.
pub(crate) fn from_value<T: DeserializeOwned, E: de::Error>(v: Value) -> Result<T, E> {
    serde_json::from_value(v).map_err(E::custom)
}

/// Reads a JSON object's string member `key`, for tag dispatch in hand-written deserializers.
pub(crate) fn str_member<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// Defines a zero-sized marker for a constant string member such as `"type": "text"`.
///
/// It serializes as the string and refuses any other string when deserialized, in the spirit of
/// a `"jsonrpc": "2.0"` marker: the tag is checked, and it never has to be spelled by hand.
macro_rules! wire_tag {
    ($(#[$doc:meta])* $name:ident = $value:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name;

        impl $name {
            #[doc = concat!("The wire string, `\"", $value, "\"`.")]
            pub const VALUE: &'static str = $value;
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($value)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                if s == $value {
                    Ok($name)
                } else {
                    Err(<D::Error as serde::de::Error>::invalid_value(
                        serde::de::Unexpected::Str(&s),
                        &concat!("\"", $value, "\""),
                    ))
                }
            }
        }
    };
}
pub(crate) use wire_tag;

/// The value under `_meta["io.modelcontextprotocol/related-task"]` (`RelatedTaskMetadata`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RelatedTaskMetadata {
    /// The task this message belongs to.
    pub task_id: String,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::RequestId;

    #[test]
    fn progress_token_keeps_its_type() {
        let meta: Meta = serde_json::from_str(r#"{"progressToken":"7","x":1}"#).expect("meta");
        assert_eq!(meta.progress_token(), Some(RequestId::string("7")));
        let meta = Meta::new().with_progress_token(RequestId::int(7));
        assert_eq!(
            serde_json::to_string(&meta).expect("json"),
            r#"{"progressToken":7}"#
        );
    }

    #[test]
    fn sf_13_meta_key_format() {
        for ok in [
            "progressToken",
            "io.modelcontextprotocol/related-task",
            "com.example/x.y_z",
            "a/",
            "",
        ] {
            assert!(is_valid_meta_key(ok), "{ok}");
        }
        for bad in [
            "-x",
            "x-",
            "1io.example/x",
            "io..x/y",
            "io.example-/x",
            "io/_x",
        ] {
            assert!(!is_valid_meta_key(bad), "{bad}");
        }
        assert!(is_reserved_meta_key("io.modelcontextprotocol/related-task"));
        assert!(is_reserved_meta_key("dev.mcp/x"));
        assert!(!is_reserved_meta_key("com.example.mcp/x"));
        assert!(!is_reserved_meta_key("progressToken"));
    }

    #[test]
    fn ordered_map_keeps_order() {
        let m: OrderedMap<u8> = serde_json::from_str(r#"{"z":1,"a":2}"#).expect("map");
        assert_eq!(m.keys().collect::<Vec<_>>(), ["z", "a"]);
        assert_eq!(serde_json::to_string(&m).expect("json"), r#"{"z":1,"a":2}"#);
    }
}
