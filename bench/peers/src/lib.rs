//! The hand-written limits share this: a minimal MCP server for two tools, `add` and `blob`,
//! with no SDK. A frame is parsed once with borrowed raw values (only the envelope, and for `tools/call`
//! the name and the two numbers); an answer is formatted straight into text.
//!
//! It answers `initialize` (echoing a known protocol revision, else the latest), `ping`,
//! `tools/list`, `tools/call` of `add` ({a: number, b: number} → one text block with the sum)
//! and of `blob` ({bytes: integer} → one text block of that many `x`), and method-not-found for
//! anything else. Notifications and responses get no answer.

use serde::Deserialize;
use serde_json::value::RawValue;

/// The revisions this server accepts in `initialize`; anything else gets the latest.
const VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<&'a str>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct InitParams<'a> {
    #[serde(rename = "protocolVersion", borrow)]
    protocol_version: Option<&'a str>,
}

#[derive(Deserialize)]
struct CallParams<'a> {
    #[serde(borrow)]
    name: &'a str,
    #[serde(default)]
    arguments: Option<Args>,
}

/// The arguments of either tool, read in one pass (a large `pad` member is skipped once).
#[derive(Deserialize, Default)]
struct Args {
    a: Option<f64>,
    b: Option<f64>,
    bytes: Option<u64>,
}

/// The largest answer `blob` writes: 16 MiB.
const MAX_BLOB_BYTES: u64 = 16 << 20;

/// What one inbound frame is.
#[derive(Debug, PartialEq, Eq)]
pub enum Kind {
    /// `initialize` (the HTTP server opens a session on it).
    Initialize,
    /// Any other request.
    Request,
    /// A notification or a response: nothing to answer (HTTP 202).
    NoAnswer,
    /// Not a JSON-RPC message we can read: answered with a parse error.
    Invalid,
}

/// Handles one frame: what it was, and the answer text (no trailing newline) if it needs one.
pub fn handle(frame: &[u8]) -> (Kind, Option<String>) {
    let Ok(env) = serde_json::from_slice::<Envelope<'_>>(frame) else {
        return (Kind::Invalid, Some(error("null", -32700, "Parse error")));
    };
    let (Some(method), Some(id)) = (env.method, env.id) else {
        return (Kind::NoAnswer, None);
    };
    let id = id.get();
    let params = env.params.map_or("{}", RawValue::get);
    match method {
        "tools/call" => (Kind::Request, Some(call(id, params))),
        "initialize" => {
            let asked = serde_json::from_str::<InitParams<'_>>(params)
                .ok()
                .and_then(|p| p.protocol_version);
            let version = asked
                .filter(|v| VERSIONS.contains(v))
                .unwrap_or(VERSIONS[0]);
            (
                Kind::Initialize,
                Some(format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":"{version}","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"bench-hand-written-add","version":"0.1.0"}}}}}}"#
                )),
            )
        }
        "ping" => (
            Kind::Request,
            Some(format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)),
        ),
        "tools/list" => (
            Kind::Request,
            Some(format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{{"name":"add","description":"Add two numbers","inputSchema":{{"type":"object","properties":{{"a":{{"type":"number"}},"b":{{"type":"number"}}}},"required":["a","b"]}}}},{{"name":"blob","description":"Return a text block of this many bytes","inputSchema":{{"type":"object","properties":{{"bytes":{{"type":"integer","minimum":0}}}},"required":["bytes"]}}}}]}}}}"#
            )),
        ),
        _ => (Kind::Request, Some(error(id, -32601, "Method not found"))),
    }
}

/// `tools/call`: `add` with two numbers, else an error.
fn call(id: &str, params: &str) -> String {
    let Ok(p) = serde_json::from_str::<CallParams<'_>>(params) else {
        return error(id, -32602, "Invalid params");
    };
    let args = p.arguments.unwrap_or_default();
    match p.name {
        "add" => add(id, args),
        "blob" => blob(id, args),
        _ => error(id, -32602, "Unknown tool"),
    }
}

/// `add`: the sum of two numbers as text, else a tool error.
fn add(id: &str, args: Args) -> String {
    match args {
        Args {
            a: Some(a),
            b: Some(b),
            ..
        } => {
            // f64's Display writes 3 for 3.0, as the other servers do.
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{}"}}]}}}}"#,
                a + b
            )
        }
        _ => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"a and b must be numbers"}}],"isError":true}}}}"#
        ),
    }
}

/// `blob`: one text block of `bytes` ASCII `x`, else a tool error.
fn blob(id: &str, args: Args) -> String {
    match args.bytes {
        Some(n) if n <= MAX_BLOB_BYTES => {
            let head = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":""#
            );
            let tail = r#""}]}}"#;
            let mut out = String::with_capacity(head.len() + n as usize + tail.len());
            out.push_str(&head);
            out.extend(std::iter::repeat_n('x', n as usize));
            out.push_str(tail);
            out
        }
        _ => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"bytes must be an integer of at most {MAX_BLOB_BYTES}"}}],"isError":true}}}}"#
        ),
    }
}

fn error(id: &str, code: i32, message: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":"{message}"}}}}"#)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_the_frames() {
        let (k, a) = handle(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2.5}}}"#);
        assert_eq!(k, Kind::Request);
        assert_eq!(
            a.unwrap(),
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"3.5"}]}}"#
        );
        let (_, a) = handle(br#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}"#);
        assert!(
            a.unwrap()
                .contains(r#""id":"x","result":{"content":[{"type":"text","text":"3"}]}"#)
        );
        let (k, a) = handle(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}"#);
        assert_eq!(k, Kind::Initialize);
        assert!(a.unwrap().contains(r#""protocolVersion":"2025-06-18""#));
        let (k, a) = handle(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert_eq!((k, a), (Kind::NoAnswer, None));
        let (k, _) = handle(b"nope");
        assert_eq!(k, Kind::Invalid);
        let (_, a) = handle(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"blob","arguments":{"bytes":5}}}"#);
        assert_eq!(
            a.unwrap(),
            r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"xxxxx"}]}}"#
        );
        let (_, a) = handle(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sub","arguments":{}}}"#);
        assert!(a.unwrap().contains("-32602"));
    }
}
