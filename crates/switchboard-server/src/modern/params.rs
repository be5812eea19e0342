//! What the modern front door reads of a request's params, in one pass over their text.
//!
//! The front door needs a handful of members (the envelope in `_meta`, the target the request
//! names, the state and answers of an earlier round); the handler parses the params for itself.
//! So the params are read once, member by member, keeping those few as raw JSON text and
//! skipping the rest without building anything, with the rule of a JSON object read into a map
//! (a key given twice counts with its last value).

use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, Mutex};

use serde::Deserializer;
use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use switchboard_types::modern::{EnvelopeError, RequestEnvelope};

/// The longest `_meta` text [`EnvelopeCache`] keeps.
const MAX_CACHED_META_BYTES: usize = 1024;

/// The members of a request's params the front door reads, each as raw JSON text.
#[derive(Debug, Default)]
pub(crate) struct FrontParams<'a> {
    /// `_meta`: the envelope.
    pub(crate) meta: Option<&'a RawValue>,
    /// `name`: what `tools/call` and `prompts/get` name.
    pub(crate) name: Option<&'a RawValue>,
    /// `uri`: what `resources/read` names.
    pub(crate) uri: Option<&'a RawValue>,
    /// `taskId`: what the tasks extension's methods name.
    pub(crate) task_id: Option<&'a RawValue>,
    /// `protocolVersion`: what a 2025 client's `initialize` offers.
    pub(crate) protocol_version: Option<&'a RawValue>,
    /// `requestState`: the sealed state of an earlier round.
    pub(crate) request_state: Option<&'a RawValue>,
    /// `inputResponses`: this round's answers.
    pub(crate) input_responses: Option<&'a RawValue>,
}

impl<'a> FrontParams<'a> {
    /// Reads the params text `text`; `None` when it is not a JSON object.
    pub(crate) fn read(text: &'a str) -> Option<Self> {
        let mut de = serde_json::Deserializer::from_str(text);
        let params = (&mut de).deserialize_map(FrontVisitor).ok()?;
        de.end().ok()?;
        Some(params)
    }

    /// The member `key` of the params (one of those read) as raw text.
    pub(crate) fn member(&self, key: &str) -> Option<&'a RawValue> {
        match key {
            "_meta" => self.meta,
            "name" => self.name,
            "uri" => self.uri,
            "taskId" => self.task_id,
            "protocolVersion" => self.protocol_version,
            "requestState" => self.request_state,
            "inputResponses" => self.input_responses,
            _ => None,
        }
    }

    /// The member `key` when it is a string (as `Value::as_str` reads it).
    pub(crate) fn str_member(&self, key: &str) -> Option<Cow<'a, str>> {
        self.member(key).and_then(as_str)
    }

    /// What an MRTR-capable request names as its target (the state is bound to it): `name`
    /// when the params have that member, else `uri`; empty when it is not a string.
    pub(crate) fn target(&self) -> String {
        self.name
            .or(self.uri)
            .and_then(as_str)
            .unwrap_or_default()
            .into_owned()
    }
}

/// A raw JSON value when it is a string.
pub(crate) fn as_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    let text = raw.get();
    if !text.starts_with('"') {
        return None;
    }
    match serde_json::from_str::<&str>(text) {
        Ok(s) => Some(Cow::Borrowed(s)),
        // A string with escapes cannot be borrowed.
        Err(_) => serde_json::from_str::<String>(text).ok().map(Cow::Owned),
    }
}

/// A raw JSON value when it is an object.
pub(crate) fn as_object(raw: &RawValue) -> Option<Map<String, Value>> {
    if !raw.get().starts_with('{') {
        return None;
    }
    serde_json::from_str(raw.get()).ok()
}

/// The envelope read last, by the text of its `_meta`. A client sends the same `_meta` with
/// each request, and the envelope is a function of that text alone, so the same text is not read
/// again. One entry of at most [`MAX_CACHED_META_BYTES`], taken only when no other request holds
/// it (a request never waits for another).
#[derive(Debug, Default)]
pub(crate) struct EnvelopeCache(Mutex<Option<(Box<str>, Arc<RequestEnvelope>)>>);

impl EnvelopeCache {
    /// The envelope in `meta` (the params' `_meta` member, as raw text).
    ///
    /// # Errors
    /// As [`RequestEnvelope::from_meta`]; `NoMeta` when `meta` is absent or not an object.
    pub(crate) fn read(
        &self,
        meta: Option<&RawValue>,
    ) -> Result<Arc<RequestEnvelope>, EnvelopeError> {
        let meta = meta.ok_or(EnvelopeError::NoMeta)?;
        if let Ok(last) = self.0.try_lock()
            && let Some((text, envelope)) = last.as_ref()
            && **text == *meta.get()
        {
            return Ok(envelope.clone());
        }
        let map = as_object(meta).ok_or(EnvelopeError::NoMeta)?;
        let envelope = Arc::new(RequestEnvelope::from_meta(&map)?);
        if meta.get().len() <= MAX_CACHED_META_BYTES
            && let Ok(mut last) = self.0.try_lock()
        {
            *last = Some((meta.get().into(), envelope.clone()));
        }
        Ok(envelope)
    }
}

/// The member names read; every other key is skipped.
enum Key {
    Meta,
    Name,
    Uri,
    TaskId,
    ProtocolVersion,
    RequestState,
    InputResponses,
    Other,
}

impl Key {
    fn of(s: &str) -> Key {
        match s {
            "_meta" => Key::Meta,
            "name" => Key::Name,
            "uri" => Key::Uri,
            "taskId" => Key::TaskId,
            "protocolVersion" => Key::ProtocolVersion,
            "requestState" => Key::RequestState,
            "inputResponses" => Key::InputResponses,
            _ => Key::Other,
        }
    }
}

impl<'de> de::Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key, E> {
                Ok(Key::of(s))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

struct FrontVisitor;

impl<'de> Visitor<'de> for FrontVisitor {
    type Value = FrontParams<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a params object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FrontParams<'de>, A::Error> {
        let mut p = FrontParams::default();
        while let Some(key) = map.next_key::<Key>()? {
            let slot = match key {
                Key::Meta => &mut p.meta,
                Key::Name => &mut p.name,
                Key::Uri => &mut p.uri,
                Key::TaskId => &mut p.task_id,
                Key::ProtocolVersion => &mut p.protocol_version,
                Key::RequestState => &mut p.request_state,
                Key::InputResponses => &mut p.input_responses,
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            // A key given twice counts with its last value, as in a map.
            *slot = Some(map.next_value::<&'de RawValue>()?);
        }
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Each member as a map read from the same text has it.
    #[test]
    fn members_read_as_a_map_reads_them() {
        let texts = [
            r#"{"name":"add","arguments":{"a":1},"_meta":{"k":1}}"#,
            r#"{"name":"a","name":"b"}"#,
            r#"{"n\u0061me":"esc\"aped","uri":7}"#,
            r#"{"uri":"file:///x","requestState":"s","inputResponses":{"a":{}}}"#,
            r#"{"name":null,"uri":"u"}"#,
            r#"{ "taskId" : "t" , "protocolVersion" : "2025-11-25" }"#,
            r#"{}"#,
        ];
        for text in texts {
            let p = FrontParams::read(text).unwrap();
            let map: Map<String, Value> = serde_json::from_str(text).unwrap();
            for key in [
                "_meta",
                "name",
                "uri",
                "taskId",
                "protocolVersion",
                "requestState",
                "inputResponses",
            ] {
                let ours = p
                    .member(key)
                    .map(|r| serde_json::from_str::<Value>(r.get()).unwrap());
                assert_eq!(ours.as_ref(), map.get(key), "{text} {key}");
                assert_eq!(
                    p.str_member(key).as_deref(),
                    map.get(key).and_then(Value::as_str),
                    "{text} {key}"
                );
            }
            let target = map
                .get("name")
                .or_else(|| map.get("uri"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            assert_eq!(p.target(), target, "{text}");
        }
        assert!(FrontParams::read("[1]").is_none());
        assert!(FrontParams::read("[]").is_none());
    }

    /// The cache gives what reading gives, errors included, whatever came before.
    #[test]
    fn the_envelope_cache_reads_as_reading_does() {
        let cache = EnvelopeCache::default();
        let metas = [
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}}}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":7}"#,
            r#"null"#,
            r#"[]"#,
        ];
        for _ in 0..2 {
            for meta in metas.iter().chain(metas.iter().rev()) {
                let raw: &RawValue = serde_json::from_str(meta).unwrap();
                let direct = match as_object(raw) {
                    Some(m) => RequestEnvelope::from_meta(&m),
                    None => Err(EnvelopeError::NoMeta),
                };
                assert_eq!(
                    cache.read(Some(raw)).map(|e| (*e).clone()),
                    direct,
                    "{meta}"
                );
            }
        }
        assert_eq!(cache.read(None), Err(EnvelopeError::NoMeta));
    }
}
