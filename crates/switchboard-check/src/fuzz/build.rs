//! The building blocks every family of cases is written with: the placeholders filled at run
//! time, the wire a case travels on, and the frames and starts of a case. Below the families
//! (`generate`, `generate_frames`, `generate_http`) and the runner.

use serde_json::{Value, json};
use switchboard_types::methods;

use super::case::{Answer, Case, Expect, Start, Step};
use super::rng::Rng;

/// The newest revision, offered by default.
pub(crate) const LATEST: &str = "2025-11-25";
/// The one revision with batches.
pub(crate) const BATCH_VERSION: &str = "2025-03-26";
/// Revisions without batches.
pub(crate) const NO_BATCH_VERSIONS: [&str; 2] = ["2025-06-18", "2025-11-25"];
/// Stands for the name of a tool the server lists (a made-up one when it lists none).
pub(crate) const TOOL: &str = "@@tool@@";
/// Stands for the name of a prompt the server lists.
pub(crate) const PROMPT: &str = "@@prompt@@";
/// Stands for the URI of a resource the server lists.
pub(crate) const URI: &str = "@@uri@@";

/// How the cases reach the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    /// Lines on a child's stdin and stdout.
    Stdio,
    /// Streamable HTTP.
    Http,
}

/// A case on an initialized session of any version.
pub(crate) fn ready(family: &str, steps: Vec<Step>) -> Case {
    Case {
        family: family.to_owned(),
        start: Start::Ready {
            version: LATEST,
            exact: false,
        },
        steps,
        needs_session: false,
    }
}

/// A case on an initialized session of exactly `version`.
pub(crate) fn on_version(version: &'static str, family: &str, steps: Vec<Step>) -> Case {
    Case {
        start: Start::Ready {
            version,
            exact: true,
        },
        ..ready(family, steps)
    }
}

/// A case on a new connection.
pub(crate) fn fresh(family: &str, steps: Vec<Step>) -> Case {
    Case {
        start: Start::Fresh,
        // Over HTTP the lifecycle is the session's: a stateless server has none to test.
        needs_session: true,
        ..ready(family, steps)
    }
}

/// A new id no other case uses: `"fz-" + 8 letters`.
pub(crate) fn new_id(r: &mut Rng) -> Value {
    json!(format!("fz-{}", r.word(8)))
}

/// A request's text.
pub(crate) fn request(id: &Value, method: &str, params: Option<Value>) -> String {
    let mut m = json!({"jsonrpc": "2.0", "id": id, "method": method});
    if let Some(p) = params {
        m["params"] = p;
    }
    m.to_string()
}

/// A notification's text.
pub(crate) fn notification(method: &str, params: Option<Value>) -> String {
    let mut m = json!({"jsonrpc": "2.0", "method": method});
    if let Some(p) = params {
        m["params"] = p;
    }
    m.to_string()
}

/// A ping with this id, which must be answered with a result.
pub(crate) fn ping(id: &Value, rule: &'static str) -> Step {
    Step::frame(
        request(id, methods::PING, None),
        vec![Expect::id(id, Answer::Result, rule)],
    )
}

/// A request whose params hold one string member `pad` of `n` bytes, written directly (a
/// serializer would copy megabytes).
pub(crate) fn padded(id: &Value, method: &str, n: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{"pad":"{}"}}}}"#,
        "x".repeat(n)
    )
}

/// Correct `initialize` params offering `version`.
pub(crate) fn init_params(version: &str) -> Value {
    json!({"protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "switchboard-fuzz", "version": env!("CARGO_PKG_VERSION")}})
}
