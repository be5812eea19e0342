//! One frame of JSON text through `Frame::decode`, as the engine reads every frame a transport
//! hands it, then through the typed params and results of the catalogue's methods, as the
//! method table and the client read them.
//!
//! Input: the frame text (bytes that are not UTF-8 never reach the decoder: the transports
//! refuse them first). Checked:
//! * an undecodable frame is -32700 or -32600, never anything else;
//! * a batch is never empty;
//! * a decoded message re-encodes (`to_json`) to text that decodes to the same message;
//! * the params of a request or notification the catalogue knows, when they read as the
//!   method's params type, and a result, when it reads as one of the result types, are written
//!   back to JSON that reads again to the same JSON (writing is a fixed point after one read).

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use switchboard_types::catalogue::{self as c, NotificationMethod, RequestMethod};
use switchboard_types::jsonrpc::{DecodeError, Frame, Message};
use switchboard_types::{ErrorCode, ErrorObject};

/// The entry function.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Frame::decode(text) {
        Err(e) => check_error(&e),
        Ok(Frame::Single(one)) => check(one),
        Ok(Frame::Batch(items)) => {
            assert!(!items.is_empty(), "an empty batch decoded");
            items.into_iter().for_each(check);
        }
    }
}

fn check_error(e: &DecodeError) {
    assert!(
        e.error.code == ErrorCode::PARSE_ERROR || e.error.code == ErrorCode::INVALID_REQUEST,
        "decode error with code {}",
        e.error.code.0
    );
    serde_json::to_string(&e.error).expect("an error object serializes");
}

fn check(one: Result<Message, DecodeError>) {
    let message = match one {
        Ok(m) => m,
        Err(e) => return check_error(&e),
    };
    let text = message.to_json();
    let again = Message::decode(&text).unwrap_or_else(|e| {
        panic!(
            "re-encoded message does not decode ({}): {text}",
            e.error.message
        )
    });
    assert_eq!(again, message, "re-encoded message differs: {text}");
    match &message {
        Message::Request(r) => params_by_method(&r.method, raw(r.params.as_deref())),
        Message::Notification(n) => params_by_method(&n.method, raw(n.params.as_deref())),
        Message::Response(r) => match &r.outcome {
            Ok(result) => every_result(result.get()),
            Err(error) => fixed_point::<ErrorObject>(
                &serde_json::to_string(error).expect("an error object serializes"),
            ),
        },
    }
}

/// Params text, `{}` when absent (as the method table reads them).
fn raw(params: Option<&serde_json::value::RawValue>) -> &str {
    params.map_or("{}", |p| p.get())
}

/// Reads `text` as `T`; when it reads, writes it, reads that and writes it again: the two
/// writings must be equal.
fn fixed_point<T: Serialize + DeserializeOwned>(text: &str) {
    let Ok(first) = serde_json::from_str::<T>(text) else {
        return;
    };
    let name = std::any::type_name::<T>();
    let written = serde_json::to_value(&first)
        .unwrap_or_else(|e| panic!("{name} read from {text} does not serialize: {e}"));
    let second: T = serde_json::from_value(written.clone())
        .unwrap_or_else(|e| panic!("{name} does not read back what it wrote ({e}): {written}"));
    let rewritten: Value = serde_json::to_value(&second).expect("serializes a second time");
    assert_eq!(
        rewritten, written,
        "{name} changed on a second round trip, from {text}"
    );
}

/// The params of a method the catalogue knows, read as that method's params type.
fn params_by_method(method: &str, text: &str) {
    c::visit(method, &mut Params(text));
}

/// Reads params text as the visited method's params type.
struct Params<'a>(&'a str);

impl c::MethodVisitor for Params<'_> {
    fn request<M: RequestMethod>(&mut self) {
        fixed_point::<M::Params>(self.0);
    }
    fn notification<M: NotificationMethod>(&mut self) {
        fixed_point::<M::Params>(self.0);
    }
}

/// A result, read as every result type of the catalogue (a response does not say its method).
fn every_result(text: &str) {
    c::visit_all(&mut Results(text));
}

/// Reads result text as the visited request's result type.
struct Results<'a>(&'a str);

impl c::MethodVisitor for Results<'_> {
    fn request<M: RequestMethod>(&mut self) {
        fixed_point::<M::Result>(self.0);
    }
    fn notification<M: NotificationMethod>(&mut self) {}
}
