//! The members revision 2026-07-28 adds to every result (`resultType`, `_meta.serverInfo`, the
//! caching hints of cacheable results), written into a handler's result text.
//!
//! The rule is that of a JSON object edited in place: the result is read as an object, each
//! member this revision adds is inserted unless the handler set it (a new member goes last, one
//! already there keeps its place and value), and the object is written back compactly.
//! [`ResultMembers::finish`] does exactly that for any result. Almost every result is text our
//! own serializer wrote: compact, without escapes that could be written another way, integers
//! only, no key twice. Reading such a text and writing it back gives the same bytes, so for it
//! the members are spliced into the text instead ([`Splice`]), which gives the same answer
//! without building and writing a JSON tree per request. Any other text takes the general way.

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use switchboard_jsonrpc::HandlerResult;
use switchboard_types::jsonrpc::to_raw;
use switchboard_types::methods;
use switchboard_types::modern::{CacheHints, ResultType, SERVER_INFO_KEY};
use switchboard_types::tools::CallToolResult;
use switchboard_types::{ErrorObject, Implementation};

/// The `resultType` member of a complete result, as written when a handler did not set one.
const RESULT_TYPE_COMPLETE: &str = r#""resultType":"complete""#;

/// An object with more members than this is left to the general way (the splice looks for a
/// repeated key by comparing each key with the earlier ones of its object).
const MAX_SPLICED_MEMBERS: usize = 64;

/// An integer with more digits than this is left to the general way (every shorter one reads
/// back as the same `i64` or `u64` and is written the same).
const MAX_SPLICED_DIGITS: usize = 18;

/// What the server adds to its modern results, computed once when it is built.
#[derive(Debug)]
pub(crate) struct ResultMembers {
    /// `_meta` holding `serverInfo` (`[D26-19]` results SHOULD identify the server).
    server_info: Map<String, Value>,
    /// The members of `server_info` as JSON text (`"key":value`), in its order.
    server_info_text: Vec<(String, String)>,
    /// The `_meta` member of a result that has none, as JSON text.
    meta_text: String,
    /// The value of that member (`None` if it cannot be read back, which cannot happen).
    meta_value: Option<Box<RawValue>>,
    /// How [`ResultMembers::written`] ends a result: `resultType` complete, `_meta`, the brace.
    written_tail: String,
    /// The `ttlMs` member, as JSON text.
    ttl_text: String,
    /// The `cacheScope` member, as JSON text (`None` if it cannot be written).
    cache_scope_text: Option<String>,
    /// The caching hints put on cacheable results unless a handler set its own.
    cache: CacheHints,
    /// `cache.cache_scope` as a JSON value (`None` if it cannot be written).
    cache_scope: Option<Value>,
}

impl ResultMembers {
    pub(crate) fn new(info: &Implementation, cache: CacheHints) -> Self {
        let mut server_info = Map::new();
        if let Ok(v) = serde_json::to_value(info) {
            server_info.insert(SERVER_INFO_KEY.into(), v);
        }
        let server_info_text: Vec<(String, String)> = server_info
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), member_text(k, v)?)))
            .collect();
        let inner: Vec<&str> = server_info_text.iter().map(|(_, t)| t.as_str()).collect();
        let meta_text = format!("\"_meta\":{{{}}}", inner.join(","));
        let meta_value = RawValue::from_string(format!("{{{}}}", inner.join(","))).ok();
        let written_tail = format!("{RESULT_TYPE_COMPLETE},{meta_text}}}");
        let cache_scope = serde_json::to_value(cache.cache_scope).ok();
        ResultMembers {
            server_info,
            server_info_text,
            meta_text,
            meta_value,
            written_tail,
            ttl_text: format!("\"ttlMs\":{}", cache.ttl_ms),
            cache_scope_text: cache_scope
                .as_ref()
                .and_then(|v| member_text("cacheScope", v)),
            cache,
            cache_scope,
        }
    }

    /// `_meta` holding `serverInfo`.
    pub(crate) fn server_info(&self) -> Map<String, Value> {
        self.server_info.clone()
    }

    /// A handler's result with the members this revision adds: `resultType` (complete unless
    /// set), `_meta.serverInfo`, and the caching hints on the results that carry them; and
    /// without the members it removed: a listed tool's `execution` (2025-11-25 only; the tasks
    /// extension decides per request whether a call becomes a task).
    pub(crate) fn finish(&self, method: &str, raw: &str) -> HandlerResult {
        if method != methods::TOOLS_LIST
            && let Some(splice) = Splice::read(raw)
        {
            let text = self.spliced(method, raw, &splice);
            return serde_json::value::RawValue::from_string(text)
                .map_err(|e| ErrorObject::internal(e.to_string()));
        }
        self.rewritten(method, raw)
    }

    /// `result` written with the members this revision adds to a result of a method without
    /// caching hints, as [`ResultMembers::finish`] would write them into `result`'s own text;
    /// `None` when it cannot be told in one pass that they would (the caller then writes the
    /// result and finishes it).
    ///
    /// The members go last, after `result`'s own: what the splice does when the result has
    /// neither `resultType` nor `_meta`. The result's own members in the text written are then
    /// checked as the splice checks a result: when they read back to the same bytes, with no
    /// key twice and neither of those two keys, `result`'s own text is one the splice takes and
    /// the splice would have written exactly this.
    ///
    /// `plain` says that `result` writes no key twice and neither of the two members (a
    /// `CallToolResult` of text blocks with no `_meta`, annotations or unknown members, say):
    /// reading its text into a map and writing it back then gives the same bytes (serde_json
    /// writes strings, numbers and literals the one way it reads them back), so the check is
    /// not needed.
    pub(crate) fn written<T: Serialize>(
        &self,
        method: &str,
        result: &T,
        plain: bool,
    ) -> Option<Box<RawValue>> {
        if switchboard_types::catalogue::is_cacheable(method) || method == methods::TOOLS_LIST {
            return None;
        }
        let meta = self.meta_value.as_deref()?;
        let text = to_raw(&Completed {
            result,
            result_type: ResultType::Complete.as_str(),
            meta,
        })
        .ok()?;
        if plain {
            return Some(text);
        }
        // The result's own members, up to where the two added ones start.
        let head = text.get().strip_suffix(self.written_tail.as_str())?;
        let own = Splice::read_head(head)?;
        (!own.has("resultType") && own.meta.is_none()).then_some(text)
    }

    /// The general way: the result read as a JSON object, edited, written back.
    fn rewritten(&self, method: &str, raw: &str) -> HandlerResult {
        let mut map: Map<String, Value> = serde_json::from_str(raw)
            .map_err(|e| ErrorObject::internal(format!("result is not an object: {e}")))?;
        if method == methods::TOOLS_LIST
            && let Some(Value::Array(tools)) = map.get_mut("tools")
        {
            for tool in tools.iter_mut().filter_map(Value::as_object_mut) {
                tool.remove("execution");
            }
        }
        map.entry("resultType")
            .or_insert_with(|| Value::String(ResultType::Complete.as_str().into()));
        if let Value::Object(meta) = map
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()))
        {
            for (k, v) in &self.server_info {
                meta.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        if switchboard_types::catalogue::is_cacheable(method) {
            map.entry("ttlMs").or_insert(self.cache.ttl_ms.into());
            if let Some(scope) = &self.cache_scope {
                map.entry("cacheScope").or_insert_with(|| scope.clone());
            }
        }
        to_raw(&map).map_err(|e| ErrorObject::internal(e.to_string()))
    }

    /// The fast way: the same members written into the text where the general way puts them.
    fn spliced(&self, method: &str, raw: &str, at: &Splice<'_>) -> String {
        let mut out = String::with_capacity(raw.len() + 128);
        // The result up to its closing brace, with the server's `_meta` members added to the
        // handler's `_meta` object when it has one.
        let body = &raw[..raw.len() - 1];
        match at.meta {
            Some(Meta::Object { end, ref keys }) => {
                out.push_str(&body[..end]);
                let mut first = keys.is_empty();
                for (k, text) in &self.server_info_text {
                    if !keys.contains(&k.as_str()) {
                        push_member(&mut out, &mut first, text);
                    }
                }
                out.push_str(&body[end..]);
            }
            _ => out.push_str(body),
        }
        let mut first = at.top_keys.is_empty();
        if !at.has("resultType") {
            push_member(&mut out, &mut first, RESULT_TYPE_COMPLETE);
        }
        if at.meta.is_none() {
            push_member(&mut out, &mut first, &self.meta_text);
        }
        if switchboard_types::catalogue::is_cacheable(method) {
            if !at.has("ttlMs") {
                push_member(&mut out, &mut first, &self.ttl_text);
            }
            if let Some(text) = &self.cache_scope_text
                && !at.has("cacheScope")
            {
                push_member(&mut out, &mut first, text);
            }
        }
        out.push('}');
        out
    }
}

/// Whether `result` writes no key twice and neither `resultType` nor `_meta`: no `_meta` or
/// unknown members of its own, and text blocks only, without annotations, `_meta` or unknown
/// members (its structured content is a JSON value, whose objects have each key once). See
/// [`ResultMembers::written`].
pub(crate) fn plain(result: &CallToolResult) -> bool {
    result.meta.is_none()
        && result.extra.is_empty()
        && result.content.iter().all(|block| {
            matches!(block, switchboard_types::content::ContentBlock::Text(t)
                if t.annotations.is_none() && t.meta.is_none() && t.extra.is_empty())
        })
}

/// A result followed by `resultType` complete and the server's `_meta` (see
/// [`ResultMembers::written`]).
#[derive(Serialize)]
struct Completed<'a, T> {
    #[serde(flatten)]
    result: &'a T,
    #[serde(rename = "resultType")]
    result_type: &'a str,
    #[serde(rename = "_meta")]
    meta: &'a RawValue,
}

/// `"key":value` as compact JSON text.
fn member_text(key: &str, value: &Value) -> Option<String> {
    let key = serde_json::to_string(key).ok()?;
    let value = serde_json::to_string(value).ok()?;
    Some(format!("{key}:{value}"))
}

fn push_member(out: &mut String, first: &mut bool, member: &str) {
    if !*first {
        out.push(',');
    }
    *first = false;
    out.push_str(member);
}

/// The handler's `_meta` member, as the splice found it.
#[derive(Debug, PartialEq)]
enum Meta<'a> {
    /// An object: where its closing brace is, and its keys.
    Object { end: usize, keys: Vec<&'a str> },
    /// Anything else (left as it is).
    Other,
}

/// Where the members go in a result text that reads back to the same bytes.
#[derive(Debug)]
struct Splice<'a> {
    /// The result's own keys.
    top_keys: Vec<&'a str>,
    /// Its `_meta` member, if it has one.
    meta: Option<Meta<'a>>,
}

/// One open container while reading.
struct Open {
    /// Whether it is an object (else an array).
    object: bool,
    /// Where its keys start in the key stack.
    keys_from: usize,
    /// Whether it is the value of the result's `_meta`.
    meta: bool,
}

impl<'a> Splice<'a> {
    fn has(&self, key: &str) -> bool {
        self.top_keys.contains(&key)
    }

    /// Reads `text` (valid JSON) if it is an object that reads back to the same bytes: no
    /// whitespace between tokens, no escape in any string, integers only and in their shortest
    /// form, no key twice in an object. `None` for anything else.
    fn read(text: &'a str) -> Option<Splice<'a>> {
        if !text.ends_with('}') {
            return None;
        }
        Self::scan(text, false)
    }

    /// Reads `head` as [`Splice::read`] reads a text, `head` being the start of one up to a
    /// place where a member may begin (after the opening brace or a comma).
    fn read_head(head: &'a str) -> Option<Splice<'a>> {
        if !(head.ends_with(',') || head == "{") {
            return None;
        }
        Self::scan(head, true)
    }

    /// The reading of [`Splice::read`] and [`Splice::read_head`]: with `open_end`, the text may
    /// end inside the object (and must).
    fn scan(text: &'a str, open_end: bool) -> Option<Splice<'a>> {
        let b = text.as_bytes();
        if b.first() != Some(&b'{') || b.contains(&b'\\') {
            return None;
        }
        let mut open: Vec<Open> = Vec::new();
        let mut keys: Vec<&'a str> = Vec::new();
        let mut meta: Option<Meta<'a>> = None;
        // The last top-level key read was `_meta` and its value is next.
        let mut meta_next = false;
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                c @ (b'{' | b'[') => {
                    let is_meta = meta_next && c == b'{' && open.len() == 1;
                    meta_next = false;
                    open.push(Open {
                        object: c == b'{',
                        keys_from: keys.len(),
                        meta: is_meta,
                    });
                    i += 1;
                }
                b'}' | b']' => {
                    let closed = open.pop()?;
                    if closed.meta {
                        meta = Some(Meta::Object {
                            end: i,
                            keys: keys[closed.keys_from..].to_vec(),
                        });
                    }
                    if open.is_empty() {
                        // The object must end the text.
                        return (i + 1 == b.len() && !open_end).then(|| Splice {
                            top_keys: keys[closed.keys_from..].to_vec(),
                            meta,
                        });
                    }
                    keys.truncate(closed.keys_from);
                    i += 1;
                }
                b',' | b':' => i += 1,
                b'"' => {
                    let len = b[i + 1..].iter().position(|&c| c == b'"')?;
                    let s = &text[i + 1..i + 1 + len];
                    i += len + 2;
                    let top = open.last()?;
                    let is_key = top.object && b.get(i) == Some(&b':');
                    if is_key {
                        let own = &keys[top.keys_from..];
                        if own.len() >= MAX_SPLICED_MEMBERS || own.contains(&s) {
                            return None;
                        }
                        keys.push(s);
                        if open.len() == 1 && s == "_meta" {
                            meta_next = true;
                            meta = Some(Meta::Other);
                        }
                    } else {
                        meta_next = false;
                    }
                }
                b't' | b'n' => {
                    meta_next = false;
                    i += 4;
                }
                b'f' => {
                    meta_next = false;
                    i += 5;
                }
                b'-' | b'0'..=b'9' => {
                    meta_next = false;
                    let len = b[i..]
                        .iter()
                        .position(|c| !matches!(c, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                        .unwrap_or(b.len() - i);
                    let digits = text[i..i + len]
                        .strip_prefix('-')
                        .unwrap_or(&text[i..i + len]);
                    let shortest = !digits.is_empty()
                        && digits.len() <= MAX_SPLICED_DIGITS
                        && digits.bytes().all(|c| c.is_ascii_digit())
                        && ((digits == "0" && len == 1) || !digits.starts_with('0'));
                    if !shortest {
                        return None;
                    }
                    i += len;
                }
                _ => return None,
            }
        }
        match open.as_slice() {
            [top] if open_end && top.object => Some(Splice {
                top_keys: keys[top.keys_from..].to_vec(),
                meta,
            }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use switchboard_types::modern::CacheScope;

    fn members() -> ResultMembers {
        ResultMembers::new(
            &Implementation::new("srv", "1.0"),
            CacheHints {
                ttl_ms: 5,
                cache_scope: CacheScope::Private,
            },
        )
    }

    /// Both ways give the same bytes (or the same error) for `raw` under `method`.
    fn same(m: &ResultMembers, method: &str, raw: &str) {
        let general = m.rewritten(method, raw).map(|r| r.get().to_owned());
        let fast = m.finish(method, raw).map(|r| r.get().to_owned());
        assert_eq!(
            fast.as_ref().map_err(|e| e.message.clone()),
            general.as_ref().map_err(|e| e.message.clone()),
            "{method} {raw}"
        );
    }

    #[test]
    fn the_splice_writes_what_the_general_way_writes() {
        let m = members();
        let cases = [
            r#"{}"#,
            r#"{"content":[{"type":"text","text":"3"}]}"#,
            r#"{"content":[],"resultType":"input_required"}"#,
            r#"{"_meta":{}}"#,
            r#"{"_meta":{"a":1},"x":2}"#,
            r#"{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"h"}}}"#,
            r#"{"_meta":null,"resultType":"complete"}"#,
            r#"{"_meta":[1,{"_meta":{}}],"b":{"_meta":{}}}"#,
            r#"{"a":{"b":[1,-2,0,-0,10,true,false,null,"s"]}}"#,
            r#"{"a":1.0}"#,
            r#"{"a":1e3}"#,
            r#"{"a":-0}"#,
            r#"{"a":007}"#,
            r#"{"a":12345678901234567890}"#,
            r#"{"a":-123456789012345678}"#,
            r#"{"a":"x\"y"}"#,
            r#"{"a":"\u0041"}"#,
            r#"{"a":"\/"}"#,
            r#"{ "a" : 1 }"#,
            r#"{"a":1,"a":2}"#,
            r#"{"a":{"b":1,"b":[]}}"#,
            r#"{"a":[{"b":1},{"b":1}]}"#,
            r#"{"ttlMs":9}"#,
            r#"{"cacheScope":"public","_meta":{"k":"v"}}"#,
            r#"[1]"#,
            r#""text""#,
            r#"{"é":"ü","":""}"#,
        ];
        for raw in cases {
            for method in [
                methods::TOOLS_CALL,
                methods::RESOURCES_READ,
                methods::SERVER_DISCOVER,
                methods::TOOLS_LIST,
            ] {
                same(&m, method, raw);
            }
        }
    }

    /// A result written with the members is what finishing its own text gives, or is not
    /// written that way at all.
    #[test]
    fn a_result_written_with_the_members_is_the_finished_result() {
        let m = members();
        let structured = |v: Value| {
            let mut r = CallToolResult::text("x");
            r.structured_content = Some(v);
            r
        };
        let extra = |k: &str, v: Value| {
            let mut r = CallToolResult::text("3");
            r.extra.insert(k.into(), v);
            r
        };
        let mut with_meta = CallToolResult::text("3");
        with_meta.meta = Some(switchboard_types::Meta(
            serde_json::from_str(r#"{"k":1}"#).unwrap(),
        ));
        let mut nested = serde_json::to_value(CallToolResult::text("3")).unwrap();
        nested["content"][0]["x"] = Value::from(1);
        let mut nested_twice = CallToolResult::text("3");
        if let switchboard_types::content::ContentBlock::Text(t) = &mut nested_twice.content[0] {
            t.extra.insert("text".into(), Value::from(1));
        }
        let results = [
            (CallToolResult::text("3"), true),
            (nested_twice, false),
            (CallToolResult::default(), true),
            (CallToolResult::error("no \"quotes\"\n"), false),
            (CallToolResult::text("é\u{1}\t\\/<>"), false),
            (
                structured(serde_json::json!({"f": 1.5, "g": [1e300, -0.0, 2.5e-8], "s": "\n"})),
                false,
            ),
            (structured(serde_json::json!({"n": [1, -2]})), true),
            (structured(serde_json::json!({"f": 1.5})), false),
            (with_meta, false),
            (extra("resultType", Value::from("input_required")), false),
            (extra("_meta", serde_json::json!({"a": 1})), false),
            (extra("content", Value::from(1)), false),
            (extra("other", Value::from(1)), true),
            (serde_json::from_value(nested).unwrap(), true),
        ];
        for (result, expected) in results {
            let own = to_raw(&result).unwrap();
            let finished = m.finish(methods::TOOLS_CALL, own.get()).unwrap();
            let written = m.written(methods::TOOLS_CALL, &result, false);
            assert_eq!(written.is_some(), expected, "{own}");
            if let Some(w) = written {
                assert_eq!(w.get(), finished.get(), "{own}");
            }
            // What the tool call vouches for is written without the check, and is the same.
            if plain(&result) {
                let w = m.written(methods::TOOLS_CALL, &result, true).unwrap();
                assert_eq!(w.get(), finished.get(), "{own}");
            }
            // Methods whose results carry more members are finished the general way.
            for method in [methods::TOOLS_LIST, methods::RESOURCES_READ] {
                assert!(m.written(method, &result, false).is_none());
                assert!(m.written(method, &result, true).is_none());
            }
        }
    }

    #[test]
    fn the_splice_takes_the_texts_our_serializer_writes() {
        assert!(Splice::read(r#"{"content":[{"type":"text","text":"3"}]}"#).is_some());
        assert!(Splice::read(r#"{"a":1.5}"#).is_none());
        assert!(Splice::read(r#"{"a":"\n"}"#).is_none());
        assert!(Splice::read(r#"{"a":1,"a":1}"#).is_none());
    }

    /// Random results, many of them just off what the splice takes: both ways always agree.
    #[test]
    fn random_results_agree() {
        let m = members();
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        fn value(next: &mut impl FnMut(u64) -> u64, depth: u32, out: &mut String) {
            let atoms = [
                "0",
                "-0",
                "7",
                "-12",
                "1.5",
                "2e2",
                "00",
                "true",
                "false",
                "null",
                "\"s\"",
                "\"\\n\"",
                "\"\"",
                "123456789012345678901",
            ];
            let keys = [
                "a",
                "b",
                "_meta",
                "resultType",
                "ttlMs",
                "cacheScope",
                SERVER_INFO_KEY,
            ];
            match if depth > 3 { 0 } else { next(4) } {
                0 => out.push_str(atoms[next(atoms.len() as u64) as usize]),
                1 => {
                    out.push('[');
                    for i in 0..next(4) {
                        if i > 0 {
                            out.push(',');
                        }
                        value(next, depth + 1, out);
                    }
                    out.push(']');
                }
                _ => {
                    out.push('{');
                    for i in 0..next(5) {
                        if i > 0 {
                            out.push_str(if next(20) == 0 { " , " } else { "," });
                        }
                        out.push_str(&format!("\"{}\":", keys[next(keys.len() as u64) as usize]));
                        value(next, depth + 1, out);
                    }
                    out.push('}');
                }
            }
        }
        let mut spliced = 0;
        for _ in 0..20_000 {
            let mut raw = String::from("{");
            for i in 0..next(5) {
                if i > 0 {
                    out_comma(&mut raw);
                }
                let keys = ["content", "_meta", "resultType", "ttlMs", "x", "cacheScope"];
                raw.push_str(&format!("\"{}\":", keys[next(keys.len() as u64) as usize]));
                value(&mut next, 1, &mut raw);
            }
            raw.push('}');
            spliced += usize::from(Splice::read(&raw).is_some());
            for method in [methods::TOOLS_CALL, methods::RESOURCES_READ] {
                same(&m, method, &raw);
            }
        }
        // Both ways are exercised.
        assert!((2_000..18_000).contains(&spliced), "{spliced}");
    }

    fn out_comma(raw: &mut String) {
        raw.push(',');
    }
}
