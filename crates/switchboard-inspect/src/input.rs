//! Reading sessions to trace: recordings (JSONL objects with `direction` and `frame`),
//! transcripts (`->` / `<-`, `→` / `←`, `>` / `<` before each frame) and bare JSONL frames
//! (direction inferred from the method).

use serde_json::Value;
use switchboard_types::catalogue::{self, Sender};

use crate::annotate::Direction;

/// One frame read from an input, with its direction and time.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceInput {
    /// The direction.
    pub direction: Direction,
    /// The raw frame text.
    pub text: String,
    /// Milliseconds since the first frame, when the input has timestamps.
    pub at_ms: Option<f64>,
}

/// An input that could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct InputError {
    /// The 1-based line.
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

/// Methods only a server sends, from the catalogue (extension methods included).
fn server_sent(method: &str) -> bool {
    catalogue::describe(method).is_some_and(|spec| spec.sender == Sender::Server)
}

fn timestamp_ms(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
}

/// Parses a whole input. Blank lines and lines starting with `#` are skipped.
///
/// # Errors
/// A line that is neither a recording entry, a transcript line nor a JSON frame.
pub fn parse_input(text: &str) -> Result<Vec<TraceInput>, InputError> {
    let mut out = Vec::new();
    let mut first_ts: Option<f64> = None;
    // For bare frames: requests seen per direction, so responses take the opposite direction.
    let mut ids: Vec<(Direction, Value)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let err = |reason: &str| InputError {
            line: i + 1,
            reason: reason.to_owned(),
        };
        let arrows: [(&str, Direction); 6] = [
            ("->", Direction::ClientToServer),
            ("<-", Direction::ServerToClient),
            ("→", Direction::ClientToServer),
            ("←", Direction::ServerToClient),
            (">", Direction::ClientToServer),
            ("<", Direction::ServerToClient),
        ];
        if let Some((dir, rest)) = arrows
            .iter()
            .find_map(|(a, d)| line.strip_prefix(a).map(|r| (*d, r.trim())))
        {
            out.push(TraceInput {
                direction: dir,
                text: rest.to_owned(),
                at_ms: None,
            });
            continue;
        }
        let v: Value = serde_json::from_str(line)
            .map_err(|e| err(&format!("not JSON and no direction arrow: {e}")))?;
        // A recording entry: {"direction": "c2s"|"s2c", "frame": "<raw text>", "ts": ms?}.
        if let (Some(d), Some(frame)) = (v.get("direction").and_then(Value::as_str), v.get("frame"))
        {
            let direction = match d {
                "c2s" => Direction::ClientToServer,
                "s2c" => Direction::ServerToClient,
                _ => return Err(err("direction must be c2s or s2c")),
            };
            let text = match frame {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let at_ms = v
                .get("ts_ms")
                .or_else(|| v.get("ts"))
                .and_then(timestamp_ms)
                .map(|t| {
                    let base = *first_ts.get_or_insert(t);
                    t - base
                });
            out.push(TraceInput {
                direction,
                text,
                at_ms,
            });
            continue;
        }
        // A bare frame: infer the direction.
        let direction = match (v.get("method").and_then(Value::as_str), v.get("id")) {
            (Some(m), id) => {
                let d = if server_sent(m) {
                    Direction::ServerToClient
                } else {
                    Direction::ClientToServer
                };
                if let Some(id) = id {
                    ids.push((d, id.clone()));
                }
                d
            }
            (None, Some(id)) => ids
                .iter()
                .rev()
                .find(|(_, i)| i == id)
                .map(|(d, _)| d.reverse())
                .unwrap_or(Direction::ServerToClient),
            (None, None) => Direction::ServerToClient,
        };
        out.push(TraceInput {
            direction,
            text: line.to_owned(),
            at_ms: None,
        });
    }
    Ok(out)
}
