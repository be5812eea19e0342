//! The JSON-RPC 2.0 envelope, told apart by structure (SPEC-NOTES §2.1), never by a type tag.
//!
//! * `method` and an `id` key: a request. `"id": null` is an invalid request (`[JR-4]`), never a
//!   notification.
//! * `method` and no `id` key at all: a notification (`[JR-10]`).
//! * `result` xor `error`, with an `id`: a response (`[JR-7]`).
//!
//! Decoding reads the envelope once and keeps `params` / `result` as raw JSON text, so a frame is
//! parsed once and its params only when a handler asks for them. Applies to both sides.

use std::fmt;

use serde::de::{Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::error::ErrorObject;
use crate::id::RequestId;

/// The only accepted value of the `jsonrpc` member.
pub const JSONRPC_VERSION: &str = "2.0";

/// Entries read from one batch (a JSON array). A longer batch is refused whole, before any entry
/// is decoded, with one -32600 without id (`data.reason: "batch_too_large"`); over Streamable
/// HTTP that is a 400. Batches exist only in 2025-03-26 (`[JR-12]`) and no client sends more
/// than a handful at once; without the bound what one frame costs grows with its entries, not
/// its bytes: a 4 MB array of `1` is two million entries, each answered with its own error
/// (258 MB of answer and 1.6 GiB of server memory, measured before the bound).
pub const MAX_BATCH_ENTRIES: usize = 1024;

/// Raw JSON text kept unparsed (params, results).
pub type RawJson = Box<RawValue>;

/// A request: it demands exactly one response with the same id.
#[derive(Debug, Clone)]
pub struct Request {
    /// The id, echoed by the response with the same type and value.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The params object, unparsed.
    pub params: Option<RawJson>,
}

/// A notification: fire-and-forget, never answered (`[JR-11]`).
#[derive(Debug, Clone)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// The params object, unparsed.
    pub params: Option<RawJson>,
}

/// A response: the id of the request it answers, and a result or an error.
#[derive(Debug, Clone)]
pub struct Response {
    /// The id; `None` only for an error whose request id could not be read.
    pub id: Option<RequestId>,
    /// `Ok(result)` or `Err(error)`.
    pub outcome: Result<RawJson, ErrorObject>,
}

/// One JSON-RPC message.
#[derive(Debug, Clone)]
pub enum Message {
    /// A request.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A response (result or error).
    Response(Response),
}

/// The structural kind of a message, for logs and hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessageKind {
    /// A request.
    Request,
    /// A notification.
    Notification,
    /// A successful response.
    Result,
    /// An error response.
    Error,
}

impl MessageKind {
    /// A lowercase name: `request`, `notification`, `result` or `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            MessageKind::Request => "request",
            MessageKind::Notification => "notification",
            MessageKind::Result => "result",
            MessageKind::Error => "error",
        }
    }
}

impl fmt::Display for MessageKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

fn raw_eq(a: &Option<RawJson>, b: &Option<RawJson>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.get() == b.get(),
        (None, None) => true,
        _ => false,
    }
}

impl PartialEq for Request {
    fn eq(&self, o: &Self) -> bool {
        self.id == o.id && self.method == o.method && raw_eq(&self.params, &o.params)
    }
}

impl PartialEq for Notification {
    fn eq(&self, o: &Self) -> bool {
        self.method == o.method && raw_eq(&self.params, &o.params)
    }
}

impl PartialEq for Response {
    fn eq(&self, o: &Self) -> bool {
        self.id == o.id
            && match (&self.outcome, &o.outcome) {
                (Ok(a), Ok(b)) => a.get() == b.get(),
                (Err(a), Err(b)) => a == b,
                _ => false,
            }
    }
}

impl PartialEq for Message {
    fn eq(&self, o: &Self) -> bool {
        match (self, o) {
            (Message::Request(a), Message::Request(b)) => a == b,
            (Message::Notification(a), Message::Notification(b)) => a == b,
            (Message::Response(a), Message::Response(b)) => a == b,
            _ => false,
        }
    }
}

/// Serializes any value to raw JSON text.
///
/// # Errors
/// When `serde_json` cannot serialize the value (a map with non-string keys, a failing `Serialize`).
pub fn to_raw<T: Serialize + ?Sized>(value: &T) -> Result<RawJson, serde_json::Error> {
    serde_json::value::to_raw_value(value)
}

/// The empty object `{}`, the result of `ping` and other empty results.
pub fn empty_object() -> RawJson {
    RawValue::from_string("{}".to_owned()).unwrap_or_else(|_| unreachable_raw())
}

fn unreachable_raw() -> RawJson {
    // `{}` is valid JSON; this branch cannot be taken, but no panic is allowed in the library.
    serde_json::value::to_raw_value(&serde_json::Map::new()).unwrap_or_default()
}

impl Request {
    /// A request with params serialized from `params`.
    ///
    /// # Errors
    /// When `params` cannot be serialized.
    pub fn new<P: Serialize + ?Sized>(
        id: impl Into<RequestId>,
        method: impl Into<String>,
        params: Option<&P>,
    ) -> Result<Self, serde_json::Error> {
        Ok(Request {
            id: id.into(),
            method: method.into(),
            params: params.map(to_raw).transpose()?,
        })
    }
}

impl Notification {
    /// A notification with params serialized from `params`.
    ///
    /// # Errors
    /// When `params` cannot be serialized.
    pub fn new<P: Serialize + ?Sized>(
        method: impl Into<String>,
        params: Option<&P>,
    ) -> Result<Self, serde_json::Error> {
        Ok(Notification {
            method: method.into(),
            params: params.map(to_raw).transpose()?,
        })
    }
}

impl Response {
    /// A successful response.
    pub fn result(id: RequestId, result: RawJson) -> Self {
        Response {
            id: Some(id),
            outcome: Ok(result),
        }
    }

    /// An error response; `id` is `None` when the request id could not be read.
    pub fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        Response {
            id,
            outcome: Err(error),
        }
    }
}

impl Message {
    /// The structural kind.
    pub fn kind(&self) -> MessageKind {
        match self {
            Message::Request(_) => MessageKind::Request,
            Message::Notification(_) => MessageKind::Notification,
            Message::Response(Response { outcome: Ok(_), .. }) => MessageKind::Result,
            Message::Response(Response {
                outcome: Err(_), ..
            }) => MessageKind::Error,
        }
    }

    /// The id of a request or response.
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            Message::Request(r) => Some(&r.id),
            Message::Notification(_) => None,
            Message::Response(r) => r.id.as_ref(),
        }
    }

    /// The method of a request or notification.
    pub fn method(&self) -> Option<&str> {
        match self {
            Message::Request(r) => Some(&r.method),
            Message::Notification(n) => Some(&n.method),
            Message::Response(_) => None,
        }
    }

    /// Serializes the message as compact JSON (one line: no raw newline can appear, `[ST-1]`).
    /// Members come in the order `jsonrpc`, `id`, `method`, `params` / `result` / `error`.
    pub fn to_json(&self) -> String {
        let out = match self {
            Message::Request(r) => Wire {
                jsonrpc: JSONRPC_VERSION,
                id: Some(&r.id),
                method: Some(&r.method),
                params: r.params.as_deref(),
                result: None,
                error: None,
            },
            Message::Notification(n) => Wire {
                jsonrpc: JSONRPC_VERSION,
                id: None,
                method: Some(&n.method),
                params: n.params.as_deref(),
                result: None,
                error: None,
            },
            Message::Response(r) => Wire {
                jsonrpc: JSONRPC_VERSION,
                id: r.id.as_ref(),
                method: None,
                params: None,
                result: r.outcome.as_ref().ok().map(|b| &**b),
                error: r.outcome.as_ref().err(),
            },
        };
        // Serializing borrowed strings, raw JSON and an error object with a `Value` cannot fail.
        serde_json::to_string(&out).unwrap_or_default()
    }

    /// Decodes one frame that holds a single message (not a batch).
    ///
    /// # Errors
    /// A [`DecodeError`] carrying the JSON-RPC error to answer with, when the frame should be answered.
    #[allow(clippy::result_large_err)] // the error is the cold path and carries the wire answer
    pub fn decode(text: &str) -> Result<Message, DecodeError> {
        match Frame::decode(text)? {
            Frame::Single(m) => m,
            Frame::Batch(_) => Err(DecodeError::invalid(
                None,
                "batch where a single message was expected",
                "batch_not_allowed",
            )),
        }
    }
}

/// Serializes a batch of messages as one JSON array.
pub fn batch_to_json(messages: &[Message]) -> String {
    let mut out = String::with_capacity(64 * messages.len() + 2);
    out.push('[');
    for (i, m) in messages.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&m.to_json());
    }
    out.push(']');
    out
}

impl Serialize for Message {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let raw = RawValue::from_string(self.to_json()).map_err(serde::ser::Error::custom)?;
        raw.serialize(s)
    }
}

#[derive(Serialize)]
struct Wire<'a> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a RequestId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a ErrorObject>,
}

/// Why a frame or message could not be decoded, and how to answer it.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeError {
    /// The error to send back (-32700 or -32600).
    pub error: ErrorObject,
    /// The id of the offending request, when it could be read.
    pub id: Option<RequestId>,
    /// Whether the frame deserves an answer: false for broken notifications and responses
    /// (`[JR-11]`: a notification is never answered, not even with an error).
    pub answerable: bool,
}

impl DecodeError {
    fn invalid(id: Option<RequestId>, message: &str, reason: &str) -> Self {
        DecodeError {
            error: ErrorObject::invalid_request(message, reason),
            id,
            answerable: true,
        }
    }

    fn silent(message: &str, reason: &str) -> Self {
        DecodeError {
            error: ErrorObject::invalid_request(message, reason),
            id: None,
            answerable: false,
        }
    }

    /// The error response to send, when the frame deserves one.
    pub fn to_response(&self) -> Option<Message> {
        self.answerable
            .then(|| Message::Response(Response::error(self.id.clone(), self.error.clone())))
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.error)
    }
}

impl std::error::Error for DecodeError {}

/// A decoded frame: one message, or a batch (a JSON array) whose entries decode one by one.
#[derive(Debug)]
pub enum Frame {
    /// A single message.
    Single(Result<Message, DecodeError>),
    /// A JSON array of messages (JSON-RPC batch; allowed only in 2025-03-26, `[JR-12]`).
    Batch(Vec<Result<Message, DecodeError>>),
}

/// The envelope as read from the wire, members kept raw so that nothing is parsed twice.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

/// A batch's entries as raw JSON: the first [`MAX_BATCH_ENTRIES`] kept, any more only checked as
/// JSON and counted (so a text that is not JSON is still -32700, and memory stays bounded).
struct BatchItems<'a> {
    items: Vec<&'a RawValue>,
    total: usize,
}

impl<'de> Deserialize<'de> for BatchItems<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = BatchItems<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON array")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::new();
                while items.len() < MAX_BATCH_ENTRIES {
                    match seq.next_element::<&'de RawValue>()? {
                        Some(item) => items.push(item),
                        None => {
                            let total = items.len();
                            return Ok(BatchItems { items, total });
                        }
                    }
                }
                let mut total = items.len();
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    total += 1;
                }
                Ok(BatchItems { items, total })
            }
        }
        d.deserialize_seq(Entries)
    }
}

/// Deserializes a member that is present (even as `null`) to `Some`. Absence comes from `default`.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

fn first_byte(raw: &RawValue) -> u8 {
    raw.get().as_bytes().first().copied().unwrap_or(b' ')
}

fn parse_id(raw: &RawValue) -> Option<RequestId> {
    match first_byte(raw) {
        b'"' | b'-' | b'0'..=b'9' => serde_json::from_str(raw.get()).ok(),
        _ => None,
    }
}

fn boxed(raw: &RawValue) -> RawJson {
    raw.to_owned()
}

impl Frame {
    /// Decodes one frame of JSON text.
    ///
    /// # Errors
    /// -32700 (no id) when the text is not JSON, -32600 when it is JSON but not a message or batch.
    #[allow(clippy::result_large_err)] // the error is the cold path and carries the wire answer
    pub fn decode(text: &str) -> Result<Frame, DecodeError> {
        let trimmed = text.trim_start();
        if trimmed.starts_with('[') {
            let batch: BatchItems<'_> = serde_json::from_str(text).map_err(|e| DecodeError {
                error: ErrorObject::parse_error(e),
                id: None,
                answerable: true,
            })?;
            if batch.total > MAX_BATCH_ENTRIES {
                let message = format!(
                    "batch of {} entries: at most {MAX_BATCH_ENTRIES} are accepted",
                    batch.total
                );
                return Err(DecodeError::invalid(None, &message, "batch_too_large"));
            }
            if batch.items.is_empty() {
                return Err(DecodeError::invalid(None, "empty batch", "empty_batch"));
            }
            return Ok(Frame::Batch(
                batch.items.into_iter().map(decode_one).collect(),
            ));
        }
        // The common case in one pass: an object whose envelope reads. Every member is checked
        // as JSON on the way (the envelope's kept raw, the others skipped), so such a text is
        // valid JSON and this is what the checks below would conclude.
        if trimmed.starts_with('{')
            && let Ok(env) = serde_json::from_str::<Envelope<'_>>(text)
        {
            return Ok(Frame::Single(classify(env)));
        }
        decode_single(text)
    }
}

/// Decodes a frame that is not a batch: the JSON checked first, then classified (invalid JSON
/// is -32700, valid JSON that is not an object is -32600).
#[allow(clippy::result_large_err)] // the error is the cold path and carries the wire answer
fn decode_single(text: &str) -> Result<Frame, DecodeError> {
    match serde_json::from_str::<&RawValue>(text) {
        Err(e) => Err(DecodeError {
            error: ErrorObject::parse_error(e),
            id: None,
            answerable: true,
        }),
        Ok(raw) => Ok(Frame::Single(decode_one(raw))),
    }
}

/// Classifies one JSON value as a message, structurally.
#[allow(clippy::result_large_err)] // the error is the cold path and carries the wire answer
fn decode_one(raw: &RawValue) -> Result<Message, DecodeError> {
    if first_byte(raw) != b'{' {
        return Err(DecodeError::invalid(
            None,
            "a JSON-RPC message must be a JSON object",
            "not_an_object",
        ));
    }
    let env: Envelope<'_> = serde_json::from_str(raw.get()).map_err(|_| {
        DecodeError::invalid(None, "malformed JSON-RPC envelope", "malformed_envelope")
    })?;
    classify(env)
}

/// Classifies a JSON object's envelope as a message.
#[allow(clippy::result_large_err)] // the error is the cold path and carries the wire answer
fn classify(env: Envelope<'_>) -> Result<Message, DecodeError> {
    let version_ok = env.jsonrpc.is_some_and(|v| v.get() == "\"2.0\"");

    if let Some(method) = env.method {
        let method: String = match serde_json::from_str::<String>(method.get()) {
            Ok(m) => m,
            Err(_) => {
                let id = env.id.and_then(parse_id);
                return match env.id {
                    Some(_) => Err(DecodeError::invalid(
                        id,
                        "method must be a string",
                        "method_not_string",
                    )),
                    None => Err(DecodeError::silent(
                        "method must be a string",
                        "method_not_string",
                    )),
                };
            }
        };
        if let Some(p) = env.params
            && !matches!(first_byte(p), b'{' | b'[')
        {
            let id = env.id.and_then(parse_id);
            return match env.id {
                Some(_) => Err(DecodeError::invalid(
                    id,
                    "params must be an object",
                    "params_not_structured",
                )),
                None => Err(DecodeError::silent(
                    "params must be an object",
                    "params_not_structured",
                )),
            };
        }
        let params = env.params.map(boxed);
        return match env.id {
            // No `id` key at all: a notification. A broken one is dropped, never answered.
            None => {
                if !version_ok {
                    return Err(DecodeError::silent(
                        "jsonrpc must be \"2.0\"",
                        "bad_jsonrpc_version",
                    ));
                }
                if env.result.is_some() || env.error.is_some() {
                    return Err(DecodeError::silent(
                        "a notification carries no result or error",
                        "mixed_shape",
                    ));
                }
                Ok(Message::Notification(Notification { method, params }))
            }
            Some(raw_id) => {
                let Some(id) = parse_id(raw_id) else {
                    let why = if raw_id.get() == "null" {
                        ("request id must not be null", "null_id")
                    } else {
                        ("request id must be a string or an integer", "bad_id_type")
                    };
                    return Err(DecodeError::invalid(None, why.0, why.1));
                };
                if !version_ok {
                    return Err(DecodeError::invalid(
                        Some(id),
                        "jsonrpc must be \"2.0\"",
                        "bad_jsonrpc_version",
                    ));
                }
                if env.result.is_some() || env.error.is_some() {
                    return Err(DecodeError::invalid(
                        Some(id),
                        "a request carries no result or error",
                        "mixed_shape",
                    ));
                }
                Ok(Message::Request(Request { id, method, params }))
            }
        };
    }

    let id = env.id.and_then(parse_id);
    match (env.result, env.error) {
        (Some(result), None) => {
            if !version_ok {
                return Err(DecodeError::silent(
                    "jsonrpc must be \"2.0\"",
                    "bad_jsonrpc_version",
                ));
            }
            let Some(id) = id else {
                return Err(DecodeError::silent(
                    "a result must carry the request id",
                    "bad_response_id",
                ));
            };
            Ok(Message::Response(Response {
                id: Some(id),
                outcome: Ok(boxed(result)),
            }))
        }
        (None, Some(error)) => {
            if !version_ok {
                return Err(DecodeError::silent(
                    "jsonrpc must be \"2.0\"",
                    "bad_jsonrpc_version",
                ));
            }
            let error: ErrorObject = serde_json::from_str(error.get())
                .map_err(|_| DecodeError::silent("malformed error object", "bad_error_object"))?;
            // An error may come without an id (or with a null one) when the request was unreadable.
            if env
                .id
                .is_some_and(|raw| raw.get() != "null" && id.is_none())
            {
                return Err(DecodeError::silent(
                    "response id must be a string or an integer",
                    "bad_response_id",
                ));
            }
            Ok(Message::Response(Response {
                id,
                outcome: Err(error),
            }))
        }
        (Some(_), Some(_)) => Err(DecodeError::silent(
            "a response carries result or error, not both",
            "result_and_error",
        )),
        // Neither a method nor a result/error: not a message. Answer it if an id can be read.
        (None, None) => Err(DecodeError::invalid(
            id,
            "not a JSON-RPC request, notification or response",
            "no_method",
        )),
    }
}

#[cfg(test)]
mod decode_tests {
    use super::*;

    /// The one-pass read of a frame concludes what checking the JSON first concludes.
    #[test]
    fn one_pass_decoding_agrees_with_checking_first() {
        let texts = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add"}}"#,
            r#"  {"jsonrpc":"2.0","id":"a","method":"m"}  "#,
            r#"{"jsonrpc":"2.0","method":"n","params":[1]}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":5}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","result":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","x":1,"x":2}"#,
            r#"{"jsonrpc":"2.0","i\u0064":1,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","\ud800":1,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","x":"\ud800"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","x":"\q"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m"} x"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m"}{}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","x":01}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","x":[1,]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m""#,
            r#"{}"#,
            r#"{"#,
            r#""text""#,
            r#"5"#,
            r#"null"#,
            r#""#,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"x\":\"\u{1}\"}",
        ];
        for text in texts {
            let one_pass = format!("{:?}", Frame::decode(text));
            let checked = format!("{:?}", decode_single(text));
            assert_eq!(one_pass, checked, "{text}");
        }
    }

    fn batch_of(entries: usize, entry: &str) -> String {
        format!("[{}]", vec![entry; entries].join(","))
    }

    fn refusal(text: &str) -> (i64, Option<String>, Option<RequestId>) {
        let Err(e) = Frame::decode(text) else {
            panic!("decoded: {}", &text[..text.len().min(80)])
        };
        let reason = e
            .error
            .data
            .as_ref()
            .and_then(|d| d.get("reason"))
            .and_then(|r| r.as_str())
            .map(str::to_owned);
        (e.error.code.0, reason, e.id)
    }

    /// `[JR-12]` batches are served up to MAX_BATCH_ENTRIES entries; one more refuses the whole
    /// frame with one -32600 without id, and two million (a 4 MB array of `1`) cost no more.
    #[test]
    fn jr_12_a_batch_over_the_entry_bound_is_refused_whole() {
        let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        match Frame::decode(&batch_of(MAX_BATCH_ENTRIES, ping)) {
            Ok(Frame::Batch(items)) => assert_eq!(items.len(), MAX_BATCH_ENTRIES),
            other => panic!("{other:?}"),
        }
        for text in [
            batch_of(MAX_BATCH_ENTRIES + 1, ping),
            batch_of(2_000_000, "1"),
        ] {
            let (code, reason, id) = refusal(&text);
            assert_eq!(
                (code, reason.as_deref(), id),
                (-32600, Some("batch_too_large"), None)
            );
        }
        let Err(e) = Frame::decode(&batch_of(2_000_000, "1")) else {
            unreachable!()
        };
        assert!(
            e.error.message.contains("2000000 entries"),
            "{}",
            e.error.message
        );
        // Past the bound the rest is still read as JSON: what is not JSON stays -32700.
        let broken = format!("{},}}]", &batch_of(MAX_BATCH_ENTRIES + 5, "1")[..]);
        assert_eq!(refusal(&broken).0, -32700);
        let unclosed = format!("[{}", vec!["1"; MAX_BATCH_ENTRIES + 5].join(","));
        assert_eq!(refusal(&unclosed).0, -32700);
    }
}
