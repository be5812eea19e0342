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
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct FrontParams<'a> {
    /// `_meta`: the envelope.
    pub(crate) meta: Option<&'a str>,
    /// `name`: what `tools/call` and `prompts/get` name.
    pub(crate) name: Option<&'a str>,
    /// `uri`: what `resources/read` names.
    pub(crate) uri: Option<&'a str>,
    /// `taskId`: what the tasks extension's methods name.
    pub(crate) task_id: Option<&'a str>,
    /// `protocolVersion`: what a 2025 client's `initialize` offers.
    pub(crate) protocol_version: Option<&'a str>,
    /// `requestState`: the sealed state of an earlier round.
    pub(crate) request_state: Option<&'a str>,
    /// `inputResponses`: this round's answers.
    pub(crate) input_responses: Option<&'a str>,
}

impl<'a> FrontParams<'a> {
    /// Reads the params `params`; `None` when they are not a JSON object.
    pub(crate) fn read(params: &'a RawValue) -> Option<Self> {
        let text = params.get();
        match scan(text) {
            Scanned::Params(p) => Some(p),
            Scanned::NotObject => None,
            Scanned::Escaped => Self::parse(text),
        }
    }

    /// Reads `text` with `serde_json`, for what [`scan`] leaves to it.
    fn parse(text: &'a str) -> Option<Self> {
        let mut de = serde_json::Deserializer::from_str(text);
        let params = (&mut de).deserialize_map(FrontVisitor).ok()?;
        de.end().ok()?;
        Some(params)
    }

    /// Where member `key` is kept; `None` for a member not read.
    fn slot(&mut self, key: Key) -> Option<&mut Option<&'a str>> {
        Some(match key {
            Key::Meta => &mut self.meta,
            Key::Name => &mut self.name,
            Key::Uri => &mut self.uri,
            Key::TaskId => &mut self.task_id,
            Key::ProtocolVersion => &mut self.protocol_version,
            Key::RequestState => &mut self.request_state,
            Key::InputResponses => &mut self.input_responses,
            Key::Other => return None,
        })
    }

    /// The member `key` of the params (one of those read) as raw text.
    pub(crate) fn member(&self, key: &str) -> Option<&'a str> {
        let mut members = *self;
        members.slot(Key::of(key)).and_then(|slot| *slot)
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

/// The text of a JSON value when it is a string.
pub(crate) fn as_str(text: &str) -> Option<Cow<'_, str>> {
    if !text.starts_with('"') {
        return None;
    }
    // A string without an escape is its text between the quotes.
    if let Some(inner) = text[1..].strip_suffix('"')
        && !inner.contains(['\\', '"'])
    {
        return Some(Cow::Borrowed(inner));
    }
    match serde_json::from_str::<&str>(text) {
        Ok(s) => Some(Cow::Borrowed(s)),
        // A string with escapes cannot be borrowed.
        Err(_) => serde_json::from_str::<String>(text).ok().map(Cow::Owned),
    }
}

/// The text of a JSON value when it is an object.
pub(crate) fn as_object(text: &str) -> Option<Map<String, Value>> {
    if !text.starts_with('{') {
        return None;
    }
    serde_json::from_str(text).ok()
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
    pub(crate) fn read(&self, meta: Option<&str>) -> Result<Arc<RequestEnvelope>, EnvelopeError> {
        let meta = meta.ok_or(EnvelopeError::NoMeta)?;
        if let Ok(last) = self.0.try_lock()
            && let Some((text, envelope)) = last.as_ref()
            && **text == *meta
        {
            return Ok(envelope.clone());
        }
        let map = as_object(meta).ok_or(EnvelopeError::NoMeta)?;
        let envelope = Arc::new(RequestEnvelope::from_meta(&map)?);
        if meta.len() <= MAX_CACHED_META_BYTES
            && let Ok(mut last) = self.0.try_lock()
        {
            *last = Some((meta.into(), envelope.clone()));
        }
        Ok(envelope)
    }
}

/// What [`scan`] found.
enum Scanned<'a> {
    Params(FrontParams<'a>),
    NotObject,
    /// A key with an escape (or text the scan does not expect): read it with `serde_json`.
    Escaped,
}

/// Reads the members of `text`, the text of a JSON value (valid JSON: a `RawValue`'s), in one
/// pass that only looks for where each member starts and ends. Keys are compared as written,
/// so a key with an escape is left to `serde_json`.
fn scan(text: &str) -> Scanned<'_> {
    let b = text.as_bytes();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return Scanned::NotObject;
    }
    i += 1;
    let mut p = FrontParams::default();
    loop {
        i = skip_ws(b, i);
        match b.get(i) {
            Some(b'}') => return Scanned::Params(p),
            Some(b',') => i += 1,
            Some(b'"') => {
                let Some(len) = b[i + 1..].iter().position(|&c| c == b'"' || c == b'\\') else {
                    return Scanned::Escaped;
                };
                if b[i + 1 + len] != b'"' {
                    return Scanned::Escaped;
                }
                let key = &text[i + 1..i + 1 + len];
                i = skip_ws(b, i + len + 2);
                if b.get(i) != Some(&b':') {
                    return Scanned::Escaped;
                }
                let start = skip_ws(b, i + 1);
                let Some(end) = skip_value(b, start) else {
                    return Scanned::Escaped;
                };
                if let Some(slot) = p.slot(Key::of(key)) {
                    // A key given twice counts with its last value, as in a map.
                    *slot = Some(&text[start..end]);
                }
                i = end;
            }
            _ => return Scanned::Escaped,
        }
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// Where the string starting at `b[i]` (a quote) ends, past its closing quote.
fn skip_string(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    loop {
        match b.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
}

/// Where the value starting at `b[i]` ends.
fn skip_value(b: &[u8], mut i: usize) -> Option<usize> {
    match b.get(i)? {
        b'"' => skip_string(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            loop {
                match b.get(i)? {
                    b'"' => {
                        i = skip_string(b, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            while !matches!(
                b.get(i),
                None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            ) {
                i += 1;
            }
            Some(i)
        }
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
            match p.slot(key) {
                // A key given twice counts with its last value, as in a map.
                Some(slot) => *slot = Some(map.next_value::<&'de RawValue>()?.get()),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
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
            r#"{"a":"}","name":"x","b":"{["}"#,
            r#"{"a":[{"b":"]\"}"},[]],"name":"x","uri":{"c":{"d":[1,{"e":"\\"}]}}}"#,
            r#"{"_meta":{"x":"\"","y":[true,false,null]},"name" : "n" }"#,
            "{\n\t\"x\" :\r -1.5e3 ,\n \"name\":true , \"uri\": 12 }",
            r#"{"x":{},"y":[],"name":[],"taskId":{},"requestState":-0}"#,
            r#"{"name":"a\u0041","uri":"\"q\""}"#,
            r#"{"nam":"a","namee":"b","Name":"c","_meta":"m"}"#,
        ];
        for text in texts {
            let raw: &RawValue = serde_json::from_str(text).unwrap();
            let p = FrontParams::read(raw).unwrap();
            let parsed = FrontParams::parse(text).unwrap();
            // Only a key with an escape is left to serde_json.
            assert_eq!(
                matches!(scan(text), Scanned::Params(_)),
                !text.contains(r"n\u0061me"),
                "{text}"
            );
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
                assert_eq!(p.member(key), parsed.member(key), "{text} {key}");
                let ours = p
                    .member(key)
                    .map(|r| serde_json::from_str::<Value>(r).unwrap());
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
        for text in ["[1]", "[]", "1", "\"s\"", "null"] {
            let raw: &RawValue = serde_json::from_str(text).unwrap();
            assert!(FrontParams::read(raw).is_none());
        }
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
                let direct = match as_object(raw.get()) {
                    Some(m) => RequestEnvelope::from_meta(&m),
                    None => Err(EnvelopeError::NoMeta),
                };
                assert_eq!(
                    cache.read(Some(raw.get())).map(|e| (*e).clone()),
                    direct,
                    "{meta}"
                );
            }
        }
        assert_eq!(cache.read(None), Err(EnvelopeError::NoMeta));
    }
}
