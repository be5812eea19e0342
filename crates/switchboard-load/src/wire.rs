//! The wire, both transports: pre-serialized request frames and a cheap reading of replies.
//!
//! Nothing here knows an SDK type. A request is JSON text built once and split around its id, so
//! that a call costs one copy and the digits of the id. A reply is read with borrowed raw values:
//! only the top-level keys, the id and (for results) the `isError` member are looked at.

use std::collections::HashMap;

use serde_json::value::RawValue;

/// The protocol revision offered in `initialize`.
pub(crate) const PROTOCOL_VERSION: &str = "2025-11-25";

/// The modern revision: no `initialize`, the version and the client's capabilities in the
/// `_meta` of every request, and (over HTTP) the method and the tool name mirrored in headers.
pub(crate) const MODERN_VERSION: &str = "2026-07-28";

/// The method every measured request calls.
pub(crate) const TOOLS_CALL: &str = "tools/call";

/// The method listing tools, a page at a time (`--mode list --list tools`).
pub(crate) const TOOLS_LIST: &str = "tools/list";

/// The method listing resources, a page at a time (`--mode list --list resources`).
pub(crate) const RESOURCES_LIST: &str = "resources/list";

/// The `_meta` key of the revision a request speaks.
const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// The `_meta` key of the client capabilities a request declares.
const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// The protocol era a run speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// 2025-11-25: `initialize` and `notifications/initialized` first, sessions over HTTP.
    Handshake,
    /// 2026-07-28: every request stands alone, with the per-request `_meta` envelope.
    Modern,
}

impl Era {
    /// The era of a protocol revision this tool speaks, if it is one.
    pub(crate) fn of_version(version: &str) -> Option<Self> {
        match version {
            PROTOCOL_VERSION => Some(Self::Handshake),
            MODERN_VERSION => Some(Self::Modern),
            _ => None,
        }
    }

    /// The revision's name.
    pub(crate) fn version(self) -> &'static str {
        match self {
            Self::Handshake => PROTOCOL_VERSION,
            Self::Modern => MODERN_VERSION,
        }
    }
}

/// The id of the `initialize` request; calls count up from 1.
pub(crate) const INIT_ID: u64 = 0;

/// The `notifications/initialized` frame (no trailing newline).
pub(crate) const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// The `initialize` request frame (no trailing newline).
pub(crate) fn initialize_frame() -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{INIT_ID},"method":"initialize","params":{{"protocolVersion":"{PROTOCOL_VERSION}","capabilities":{{}},"clientInfo":{{"name":"switchboard-load","version":"{}"}}}}}}"#,
        env!("CARGO_PKG_VERSION")
    )
}

/// A `tools/call` request split around its id: `prefix ++ id ++ suffix`.
#[derive(Debug, Clone)]
pub(crate) struct CallTemplate {
    prefix: Vec<u8>,
    suffix: Vec<u8>,
    era: Era,
    tool: String,
    /// The size every answer's text must have, when the run checks it.
    expect_text_bytes: Option<usize>,
}

impl CallTemplate {
    /// The template for calling `tool` with `arguments` (a JSON object) in `era`: a modern
    /// request carries the envelope in `params._meta`, with no optional client capability.
    pub(crate) fn new(tool: &str, arguments: &serde_json::Value, era: Era) -> Self {
        let mut params = serde_json::json!({"name": tool, "arguments": arguments});
        if era == Era::Modern {
            params["_meta"] = serde_json::json!({
                META_PROTOCOL_VERSION: MODERN_VERSION,
                META_CLIENT_CAPABILITIES: {},
            });
        }
        Self {
            prefix: br#"{"jsonrpc":"2.0","id":"#.to_vec(),
            suffix: format!(r#","method":"{TOOLS_CALL}","params":{params}}}"#).into_bytes(),
            era,
            tool: tool.to_owned(),
            expect_text_bytes: None,
        }
    }

    /// The same calls, whose answers must carry text blocks of `bytes` bytes in all.
    pub(crate) fn expecting_text_bytes(mut self, bytes: Option<usize>) -> Self {
        self.expect_text_bytes = bytes;
        self
    }

    /// The outcome of an answer `frame` whose envelope read `outcome`: a plain result whose
    /// text is not the size expected is a mismatch.
    pub(crate) fn judge(&self, outcome: Outcome, frame: &[u8]) -> Outcome {
        match self.expect_text_bytes {
            Some(want) if outcome == Outcome::Ok && text_bytes(frame) != Some(want) => {
                Outcome::Mismatch
            }
            _ => outcome,
        }
    }

    /// The era the frames speak.
    pub(crate) fn era(&self) -> Era {
        self.era
    }

    /// The `Mcp-Name` header value of these calls: the tool name as it is, or in the
    /// `=?base64?…?=` form when the name cannot travel as a plain header value.
    pub(crate) fn name_header(&self) -> String {
        mcp_header_value(&self.tool)
    }

    /// Appends the frame for request `id` to `out` (no trailing newline).
    pub(crate) fn write(&self, id: u64, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.prefix);
        push_u64(id, out);
        out.extend_from_slice(&self.suffix);
    }

    /// The frame for request `id` as a fresh buffer.
    pub(crate) fn frame(&self, id: u64) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.prefix.len() + self.suffix.len() + 20);
        self.write(id, &mut out);
        out
    }
}

/// A string as an `Mcp-Name` (or `Mcp-Param-*`) header value: as it is when it is printable
/// ASCII without surrounding spaces, otherwise (or when it already looks like the wrapper)
/// `=?base64?<Base64 of its UTF-8>?=`.
pub(crate) fn mcp_header_value(s: &str) -> String {
    let wrapped = s.starts_with("=?base64?") && s.ends_with("?=");
    let plain = !s.is_empty()
        && s.bytes().all(|b| (0x20..0x7f).contains(&b))
        && !s.starts_with(' ')
        && !s.ends_with(' ')
        && !wrapped;
    if plain {
        s.to_owned()
    } else {
        format!("=?base64?{}?=", base64(s.as_bytes()))
    }
}

/// Standard Base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Appends the decimal digits of `n`.
fn push_u64(mut n: u64, out: &mut Vec<u8>) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// How a response ended, as the load report counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// A result without `isError: true`.
    Ok,
    /// A result with `isError: true` (the tool failed).
    ToolError,
    /// A JSON-RPC error object.
    RpcError,
    /// A 2026-07-28 result asking for client input (`"resultType": "input_required"`): the
    /// tool did not answer.
    InputRequired,
    /// A result that does not carry what the run expects: text of another size than
    /// `--expect-text-bytes`, or a list with another number of items than `--expect-items`.
    Mismatch,
}

/// One incoming frame, classified by structure.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Incoming<'a> {
    /// A response; `id` is `None` unless it is a non-negative integer (the only ids we send).
    Response {
        /// The id, when it is one of ours.
        id: Option<u64>,
        /// Result, tool error or protocol error.
        outcome: Outcome,
    },
    /// A request from the server (it has a `method` and an `id`).
    Request {
        /// The id, as raw JSON text, to echo in the answer.
        id: &'a str,
        /// Whether the method is `ping`.
        ping: bool,
    },
    /// A notification, or anything else that needs no answer.
    Other,
}

type Envelope<'a> = HashMap<&'a str, &'a RawValue>;

/// Classifies one frame. Malformed text is `Other`: the caller counts what it expected and did
/// not get, not what it could not read.
pub(crate) fn classify(frame: &[u8]) -> Incoming<'_> {
    let Ok(env) = serde_json::from_slice::<Envelope<'_>>(frame) else {
        return Incoming::Other;
    };
    let id = env.get("id").copied();
    if let Some(method) = env.get("method") {
        return match id {
            Some(id) => Incoming::Request {
                id: id.get(),
                ping: method.get() == r#""ping""#,
            },
            None => Incoming::Other,
        };
    }
    let outcome = if env.contains_key("error") {
        Outcome::RpcError
    } else if let Some(result) = env.get("result") {
        result_outcome(result)
    } else {
        return Incoming::Other;
    };
    Incoming::Response {
        id: id.and_then(|raw| raw.get().parse::<u64>().ok()),
        outcome,
    }
}

/// How a result object ended: `"resultType": "input_required"` asks for input, `"isError":
/// true` is a tool error, anything else (a missing `resultType` too) is a plain result.
fn result_outcome(result: &RawValue) -> Outcome {
    let Ok(r) = serde_json::from_str::<Envelope<'_>>(result.get()) else {
        return Outcome::Ok;
    };
    if r.get("resultType")
        .is_some_and(|v| v.get() == r#""input_required""#)
    {
        Outcome::InputRequired
    } else if r.get("isError").is_some_and(|v| v.get() == "true") {
        Outcome::ToolError
    } else {
        Outcome::Ok
    }
}

/// The bytes of text in a response's `result.content` (the sum over its text blocks), if it is
/// a response with a content array.
pub(crate) fn text_bytes(frame: &[u8]) -> Option<usize> {
    let env: Envelope<'_> = serde_json::from_slice(frame).ok()?;
    let result: Envelope<'_> = serde_json::from_str(env.get("result")?.get()).ok()?;
    let blocks: Vec<Envelope<'_>> = serde_json::from_str(result.get("content")?.get()).ok()?;
    let mut total = 0;
    for text in blocks.iter().filter_map(|b| b.get("text")) {
        let raw = text.get();
        // A string without escapes is its raw text between the quotes; only one with escapes
        // is decoded.
        total += match raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
            Some(inner) if !inner.contains('\\') => inner.len(),
            _ => serde_json::from_str::<String>(raw).ok()?.len(),
        };
    }
    Some(total)
}

/// What a list can be asked for, and the member of the result holding its items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListKind {
    /// `tools/list`, items in `tools`.
    Tools,
    /// `resources/list`, items in `resources`.
    Resources,
}

impl ListKind {
    /// The method asking for a page.
    pub(crate) fn method(self) -> &'static str {
        match self {
            Self::Tools => TOOLS_LIST,
            Self::Resources => RESOURCES_LIST,
        }
    }

    /// The request frame for one page: the first (no cursor) or the one `cursor` names.
    pub(crate) fn frame(self, id: u64, cursor: Option<&str>) -> Vec<u8> {
        let params = match cursor {
            Some(c) => serde_json::json!({ "cursor": c }),
            None => serde_json::json!({}),
        };
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{}","params":{params}}}"#,
            self.method()
        )
        .into_bytes()
    }

    /// One page of an answer: how many items it holds and the cursor of the next page, if it
    /// is a result with the items array.
    pub(crate) fn page(self, frame: &[u8]) -> Option<(usize, Option<String>)> {
        let env: Envelope<'_> = serde_json::from_slice(frame).ok()?;
        let result: Envelope<'_> = serde_json::from_str(env.get("result")?.get()).ok()?;
        let key = match self {
            Self::Tools => "tools",
            Self::Resources => "resources",
        };
        let items: Vec<&RawValue> = serde_json::from_str(result.get(key)?.get()).ok()?;
        let next = match result.get("nextCursor") {
            Some(raw) => serde_json::from_str::<Option<String>>(raw.get()).ok()?,
            None => None,
        };
        Some((items.len(), next))
    }
}

/// The answer to a server's request: `{}` for `ping`, method-not-found for anything else (so
/// that a server waiting on it is not left hanging).
pub(crate) fn answer(id: &str, ping: bool) -> Vec<u8> {
    if ping {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#).into_bytes()
    } else {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32601,"message":"switchboard-load answers only ping"}}}}"#
        )
        .into_bytes()
    }
}

/// The `protocolVersion` of an `initialize` response, if it has one.
pub(crate) fn negotiated_version(response: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(response).ok()?;
    Some(
        v.get("result")?
            .get("protocolVersion")?
            .as_str()?
            .to_owned(),
    )
}

/// An incremental reader of a `text/event-stream` body: feed it bytes, take the `data` of each
/// complete event. Only `data` fields matter here; `id`, `event`, `retry` and comments are
/// skipped, and so are events without data (priming events). Lines end with LF or CRLF.
#[derive(Debug, Default)]
pub(crate) struct SseScanner {
    buf: Vec<u8>,
    start: usize,
    data: Vec<u8>,
    has_data: bool,
}

impl SseScanner {
    /// Appends body bytes.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes held for an event not yet complete.
    pub(crate) fn pending(&self) -> usize {
        self.buf.len() - self.start + self.data.len()
    }

    /// The data of the next complete event, if one is buffered.
    pub(crate) fn next_event(&mut self) -> Option<Vec<u8>> {
        while let Some(i) = memchr::memchr(b'\n', &self.buf[self.start..]) {
            let end = self.start + i;
            let mut line = &self.buf[self.start..end];
            self.start = end + 1;
            if let Some(l) = line.strip_suffix(b"\r") {
                line = l;
            }
            if line.is_empty() {
                // An event with an empty data buffer is not dispatched (priming events).
                if std::mem::take(&mut self.has_data) && !self.data.is_empty() {
                    return Some(std::mem::take(&mut self.data));
                }
                self.data.clear();
                continue;
            }
            let (field, value) = match memchr::memchr(b':', line) {
                Some(c) => (&line[..c], &line[c + 1..]),
                None => (line, &line[line.len()..]),
            };
            if field == b"data" {
                let value = value.strip_prefix(b" ").unwrap_or(value);
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_frames_differ_only_in_the_id() {
        let t = CallTemplate::new("add", &serde_json::json!({"a": 1, "b": 2}), Era::Handshake);
        assert_eq!(
            String::from_utf8(t.frame(0)).unwrap(),
            r#"{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}"#
        );
        let f = String::from_utf8(t.frame(18_446_744_073_709_551_615)).unwrap();
        assert!(f.contains(r#""id":18446744073709551615,"#));
        let v: serde_json::Value = serde_json::from_str(&initialize_frame()).unwrap();
        assert_eq!(v["params"]["protocolVersion"], PROTOCOL_VERSION);
    }

    #[test]
    fn modern_frames_carry_the_envelope_in_meta() {
        let t = CallTemplate::new("add", &serde_json::json!({"a": 1, "b": 2}), Era::Modern);
        assert_eq!(t.era(), Era::Modern);
        assert_eq!(
            String::from_utf8(t.frame(5)).unwrap(),
            concat!(
                r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"#,
                r#""name":"add","arguments":{"a":1,"b":2},"_meta":{"#,
                r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
                r#""io.modelcontextprotocol/clientCapabilities":{}}}}"#
            )
        );
        let v: serde_json::Value = serde_json::from_slice(&t.frame(6)).unwrap();
        assert_eq!(v["id"], 6);
        assert_eq!(v["method"], TOOLS_CALL);
        let meta = &v["params"]["_meta"];
        assert_eq!(meta[META_PROTOCOL_VERSION], MODERN_VERSION);
        assert_eq!(meta[META_CLIENT_CAPABILITIES], serde_json::json!({}));
        assert_eq!(meta.as_object().unwrap().len(), 2);
        assert_eq!(t.name_header(), "add");
        // A handshake-era frame has no `_meta` at all.
        let old = CallTemplate::new("add", &serde_json::json!({}), Era::Handshake);
        let v: serde_json::Value = serde_json::from_slice(&old.frame(1)).unwrap();
        assert!(v["params"].get("_meta").is_none());
        assert_eq!(Era::of_version("2026-07-28"), Some(Era::Modern));
        assert_eq!(Era::of_version("2025-11-25"), Some(Era::Handshake));
        assert_eq!(Era::of_version("2025-06-18"), None);
        assert_eq!(Era::Modern.version(), MODERN_VERSION);
    }

    #[test]
    fn name_headers_are_wrapped_when_they_must_be() {
        assert_eq!(mcp_header_value("get_weather"), "get_weather");
        assert_eq!(mcp_header_value("a b"), "a b");
        assert_eq!(mcp_header_value(" add"), "=?base64?IGFkZA==?=");
        assert_eq!(mcp_header_value("héllo"), "=?base64?aMOpbGxv?=");
        assert_eq!(
            mcp_header_value("=?base64?x?="),
            "=?base64?PT9iYXNlNjQ/eD89?="
        );
        assert_eq!(mcp_header_value("tab\there"), "=?base64?dGFiCWhlcmU=?=");
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foob"), "Zm9vYg==");
    }

    #[test]
    fn classify_reads_envelopes_by_structure() {
        let ok = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"3"}]}}"#;
        let tool = br#"{"result":{"isError":true,"content":[]},"id":8,"jsonrpc":"2.0"}"#;
        let rpc = br#"{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"x"}}"#;
        let named = br#"{"jsonrpc":"2.0","id":"a","result":{}}"#;
        let some = |id, outcome| Incoming::Response { id, outcome };
        assert_eq!(classify(ok), some(Some(7), Outcome::Ok));
        assert_eq!(classify(tool), some(Some(8), Outcome::ToolError));
        assert_eq!(classify(rpc), some(Some(9), Outcome::RpcError));
        assert_eq!(classify(named), some(None, Outcome::Ok));
        let complete =
            br#"{"jsonrpc":"2.0","id":10,"result":{"content":[],"resultType":"complete"}}"#;
        let input = br#"{"jsonrpc":"2.0","id":11,"result":{"resultType":"input_required","inputRequests":{}}}"#;
        let both =
            br#"{"jsonrpc":"2.0","id":12,"result":{"isError":true,"resultType":"complete"}}"#;
        assert_eq!(classify(complete), some(Some(10), Outcome::Ok));
        assert_eq!(classify(input), some(Some(11), Outcome::InputRequired));
        assert_eq!(classify(both), some(Some(12), Outcome::ToolError));
        let ping = br#"{"jsonrpc":"2.0","id":"p1","method":"ping"}"#;
        assert_eq!(
            classify(ping),
            Incoming::Request {
                id: r#""p1""#,
                ping: true
            }
        );
        let note = br#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#;
        assert_eq!(classify(note), Incoming::Other);
        assert_eq!(classify(b"not json"), Incoming::Other);
        assert_eq!(
            answer(r#""p1""#, true),
            br#"{"jsonrpc":"2.0","id":"p1","result":{}}"#
        );
    }

    #[test]
    fn answers_are_judged_by_their_text_size() {
        let t = CallTemplate::new("blob", &serde_json::json!({"bytes": 3}), Era::Handshake)
            .expecting_text_bytes(Some(3));
        let ok = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"xxx"}]}}"#;
        let short =
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"xx"}]}}"#;
        let escaped =
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x\u0078x"}]}}"#;
        assert_eq!(text_bytes(ok), Some(3));
        assert_eq!(text_bytes(escaped), Some(3));
        assert_eq!(t.judge(Outcome::Ok, ok), Outcome::Ok);
        assert_eq!(t.judge(Outcome::Ok, short), Outcome::Mismatch);
        assert_eq!(t.judge(Outcome::Ok, b"{}"), Outcome::Mismatch);
        assert_eq!(t.judge(Outcome::RpcError, b"{}"), Outcome::RpcError);
        let unchecked = CallTemplate::new("add", &serde_json::json!({}), Era::Handshake);
        assert_eq!(unchecked.judge(Outcome::Ok, short), Outcome::Ok);
    }

    #[test]
    fn list_pages_follow_the_cursor() {
        let first = String::from_utf8(ListKind::Tools.frame(4, None)).unwrap();
        assert_eq!(
            first,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}"#
        );
        let next: serde_json::Value =
            serde_json::from_slice(&ListKind::Resources.frame(5, Some("c\"1"))).unwrap();
        assert_eq!(next["method"], RESOURCES_LIST);
        assert_eq!(next["params"]["cursor"], "c\"1");
        let page = br#"{"jsonrpc":"2.0","id":5,"result":{"resources":[{"uri":"a"},{"uri":"b"}],"nextCursor":"n\u0031"}}"#;
        assert_eq!(ListKind::Resources.page(page), Some((2, Some("n1".into()))));
        let last =
            br#"{"jsonrpc":"2.0","id":6,"result":{"tools":[{"name":"a"}],"nextCursor":null}}"#;
        assert_eq!(ListKind::Tools.page(last), Some((1, None)));
        assert_eq!(ListKind::Tools.page(page), None);
    }

    #[test]
    fn sse_events_split_anywhere() {
        let body = b": comment\r\nid: 1\r\ndata:\r\n\r\nevent: message\ndata: {\"a\":\ndata: 1}\n\ndata: x";
        for cut in 0..body.len() {
            let mut s = SseScanner::default();
            let mut got = Vec::new();
            s.feed(&body[..cut]);
            while let Some(e) = s.next_event() {
                got.push(e);
            }
            s.feed(&body[cut..]);
            while let Some(e) = s.next_event() {
                got.push(e);
            }
            assert_eq!(got, vec![b"{\"a\":\n1}".to_vec()], "cut at {cut}");
            assert_eq!(s.pending(), 7, "the unterminated event stays pending");
        }
    }
}
