//! Case generation: a seed in, one hostile case out, the same on every machine. The families
//! here speak JSON-RPC frames, over stdio lines or HTTP POST bodies alike; `generate_http` adds
//! the Streamable HTTP ones. Each frame carries what the spec lets the server answer.

use serde_json::{Value, json};
use switchboard_types::methods;

use super::build::{
    LATEST, PROMPT, TOOL, URI, Wire, fresh, init_params, new_id, notification, ping, ready, request,
};
use super::case::{Answer, Case, Expect, SentId, Step};
use super::judge::ANY_CODE;
use super::rng::Rng;
use super::{generate_frames, generate_http};

/// Makes one case of a family.
type Generator = fn(&mut Rng, Wire) -> Case;

/// The families over stdio, with their weights.
const STDIO: [(u32, Generator); 7] = [
    (14, lifecycle),
    (14, ids),
    (12, cancellation),
    (24, generate_frames::frames),
    (10, generate_frames::batches),
    (20, params),
    (6, notifications),
];

/// The families over HTTP, with their weights: the same, and the HTTP ones.
const HTTP: [(u32, Generator); 8] = [
    (8, lifecycle),
    (10, ids),
    (8, cancellation),
    (14, generate_frames::frames),
    (8, generate_frames::batches),
    (12, params),
    (4, notifications),
    (36, generate_http::case),
];

/// The case of this seed over this wire.
pub(crate) fn case(seed: u64, wire: Wire) -> Case {
    let mut r = Rng::new(seed);
    let table: &[(u32, Generator)] = match wire {
        Wire::Stdio => &STDIO,
        Wire::Http => &HTTP,
    };
    let weights: Vec<u32> = table.iter().map(|(w, _)| *w).collect();
    let generate = table[r.weighted(&weights)].1;
    generate(&mut r, wire)
}

/// A correct `initialize` that must succeed.
fn initialize(r: &mut Rng, rule: &'static str) -> Step {
    let id = new_id(r);
    Step::frame(
        request(&id, methods::INITIALIZE, Some(init_params(LATEST))),
        vec![Expect::id(&id, Answer::Result, rule)],
    )
}

fn initialized() -> Step {
    Step::frame(
        notification(methods::NOTIFICATIONS_INITIALIZED, None),
        vec![Expect::silence("JR-11")],
    )
}

/// A request the server may know, with plausible params (tools, resources, prompts ...);
/// `ping` too when `ping_too`.
fn some_request(r: &mut Rng, id: &Value, ping_too: bool) -> String {
    let (method, params) = match r.below(if ping_too { 7 } else { 6 }) {
        0 => (methods::TOOLS_LIST, None),
        1 => (methods::RESOURCES_LIST, None),
        2 => (methods::PROMPTS_LIST, None),
        3 => (
            methods::TOOLS_CALL,
            Some(json!({"name": "fz_no_such_tool", "arguments": {}})),
        ),
        4 => (methods::LOGGING_SET_LEVEL, Some(json!({"level": "info"}))),
        5 => (methods::RESOURCES_READ, Some(json!({"uri": URI}))),
        _ => (methods::PING, None),
    };
    request(id, method, params)
}

fn lifecycle(r: &mut Rng, _wire: Wire) -> Case {
    match r.below(9) {
        0 => {
            // LC-1: nothing but ping before initialize; SPEC-NOTES §3.2 (rec.) refuses the rest.
            let id = new_id(r);
            let early = some_request(r, &id, false);
            fresh(
                "lifecycle/request-before-initialize",
                vec![
                    Step::lenient_frame(
                        early,
                        vec![Expect::id(&id, Answer::Error(ANY_CODE), "LC-1")],
                    ),
                    Step::Await,
                    initialize(r, "LC-1"),
                    Step::Await,
                    initialized(),
                ],
            )
        }
        1 => {
            let params = match r.below(5) {
                0 => (methods::NOTIFICATIONS_INITIALIZED, None),
                1 => (
                    methods::NOTIFICATIONS_CANCELLED,
                    Some(json!({"requestId": new_id(r)})),
                ),
                2 => (
                    methods::NOTIFICATIONS_PROGRESS,
                    Some(json!({"progressToken": new_id(r), "progress": 1})),
                ),
                3 => (methods::NOTIFICATIONS_ROOTS_LIST_CHANGED, None),
                _ => (
                    methods::NOTIFICATIONS_MESSAGE,
                    Some(json!({"level": "info", "data": "x"})),
                ),
            };
            fresh(
                "lifecycle/notification-before-initialize",
                vec![
                    Step::lenient_frame(
                        notification(params.0, params.1),
                        vec![Expect::silence("JR-11")],
                    ),
                    initialize(r, "LC-1"),
                    Step::Await,
                    initialized(),
                ],
            )
        }
        2 => {
            // A second initialize: the spec gives it no answer of its own; the session must live.
            let again = new_id(r);
            fresh(
                "lifecycle/double-initialize",
                vec![
                    initialize(r, "LC-1"),
                    Step::Await,
                    initialized(),
                    Step::lenient_frame(
                        request(&again, methods::INITIALIZE, Some(init_params(LATEST))),
                        vec![Expect::id(&again, Answer::Any, "LC-1")],
                    ),
                ],
            )
        }
        3 => fresh(
            "lifecycle/initialized-twice",
            vec![
                initialize(r, "LC-1"),
                Step::Await,
                initialized(),
                initialized(),
            ],
        ),
        4 => {
            // SPEC-NOTES §3.2: a request between the initialize answer and `initialized` may be
            // served or refused.
            let id = new_id(r);
            let early = some_request(r, &id, true);
            fresh(
                "lifecycle/request-before-initialized",
                vec![
                    initialize(r, "LC-1"),
                    Step::Await,
                    Step::frame(early, vec![Expect::id(&id, Answer::Any, "LC-4")]),
                    Step::Await,
                    initialized(),
                ],
            )
        }
        5 => {
            let id = new_id(r);
            let mut params = init_params(LATEST);
            let variant = r.below(9);
            match variant {
                0 => params["protocolVersion"] = json!(20251125),
                1 => params["protocolVersion"] = Value::Null,
                2 => params["protocolVersion"] = json!([LATEST]),
                3 => params["capabilities"] = json!("all"),
                4 => params["capabilities"] = json!([]),
                5 => {
                    params.as_object_mut().map(|o| o.remove("clientInfo"));
                }
                6 => params["clientInfo"] = json!("fuzz"),
                7 => params = json!([LATEST]),
                _ => params = json!({}),
            }
            fresh(
                "lifecycle/initialize-with-bad-params",
                vec![
                    Step::frame(
                        request(&id, methods::INITIALIZE, Some(params)),
                        vec![Expect::id(&id, Answer::Error(&[-32602]), "LC-2")],
                    ),
                    Step::Await,
                    initialize(r, "LC-1"),
                    Step::Await,
                    initialized(),
                ],
            )
        }
        6 => {
            let offered = match r.below(6) {
                0 => String::new(),
                1 => "1999-01-01".into(),
                2 => "2025-13-45".into(),
                3 => "DRAFT-2026-v1".into(),
                4 => format!("{LATEST} "),
                _ => "9".repeat(r.range(100, 5000) as usize),
            };
            let id = new_id(r);
            let mut params = init_params(LATEST);
            params["protocolVersion"] = json!(offered);
            fresh(
                "lifecycle/unknown-version",
                vec![
                    Step::frame(
                        request(&id, methods::INITIALIZE, Some(params)),
                        vec![Expect::id(&id, Answer::CounterOffer { offered }, "LC-8")],
                    ),
                    Step::Await,
                    initialized(),
                ],
            )
        }
        7 => {
            // UT-8: a client must not cancel initialize; the server must cope when one does.
            let id = new_id(r);
            fresh(
                "lifecycle/cancel-initialize",
                vec![
                    Step::frame(
                        request(&id, methods::INITIALIZE, Some(init_params(LATEST))),
                        vec![Expect::id(&id, Answer::Maybe, "UT-8")],
                    ),
                    Step::frame(
                        notification(
                            methods::NOTIFICATIONS_CANCELLED,
                            Some(json!({"requestId": id, "reason": "fuzz"})),
                        ),
                        vec![Expect::silence("JR-11")],
                    ),
                ],
            )
        }
        _ => {
            // UT-1: ping may come before initialize.
            let id = new_id(r);
            fresh(
                "lifecycle/ping-before-initialize",
                vec![
                    Step::lenient_frame(
                        request(&id, methods::PING, None),
                        vec![Expect::id(&id, Answer::Result, "UT-1")],
                    ),
                    Step::Await,
                    initialize(r, "LC-1"),
                    Step::Await,
                    initialized(),
                ],
            )
        }
    }
}

/// An id value of every kind; the frame that carries it, and what may answer it.
fn ids(r: &mut Rng, wire: Wire) -> Case {
    match r.below(6) {
        0 | 1 => {
            // JR-6: every string and every integer id comes back exactly.
            let raw = match r.below(12) {
                0 => "\"\"".to_owned(),
                1 => json!(" ").to_string(),
                2 => json!("日本語 ✓ \u{1F600}").to_string(),
                3 => json!("\u{0}\u{1f}\"\\/").to_string(),
                4 => json!("x".repeat(r.range(1_000, 20_000) as usize)).to_string(),
                5 => "0".into(),
                6 => "-1".into(),
                7 => format!("-{}", r.range(2, 1 << 40)),
                8 => i64::MAX.to_string(),
                9 => i64::MIN.to_string(),
                10 => "9007199254740993".into(),
                _ => r.range(1, 1 << 52).to_string(),
            };
            let id: Value = serde_json::from_str(&raw).unwrap_or(Value::Null);
            let text = format!(
                r#"{{"jsonrpc":"2.0","id":{raw},"method":"{}"}}"#,
                methods::PING
            );
            ready(
                "id/kept-exactly",
                vec![Step::frame(
                    text,
                    vec![Expect::id(&id, Answer::Result, "JR-6")],
                )],
            )
        }
        2 => {
            // Integers past 64 bits: kept exactly, or refused as an id the server cannot hold.
            let raw = *r.pick(&[
                "9223372036854775808",
                "18446744073709551615",
                "18446744073709551616",
                "-9223372036854775809",
                "123456789012345678901234567890",
            ]);
            let text = format!(
                r#"{{"jsonrpc":"2.0","id":{raw},"method":"{}"}}"#,
                methods::PING
            );
            ready(
                "id/beyond-64-bits",
                vec![Step::frame(
                    text,
                    vec![Expect {
                        id: Some(SentId(raw.to_owned())),
                        answer: Answer::ResultOr(&[-32600]),
                        unidentified: &[-32600],
                        rule: "JR-6",
                    }],
                )],
            )
        }
        3 => {
            // JR-3/JR-4: an id is a string or an integer, never null.
            let (raw, codes, rule): (String, &'static [i64], _) = match r.below(11) {
                0 => ("null".into(), &[-32600], "JR-4"),
                1 => ("1.5".into(), &[-32600], "JR-3"),
                2 => ("-0.25".into(), &[-32600], "JR-3"),
                3 => ("1e-7".into(), &[-32600], "JR-3"),
                4 => ("true".into(), &[-32600], "JR-3"),
                5 => ("{}".into(), &[-32600], "JR-3"),
                6 => (r#"{"id":1}"#.into(), &[-32600], "JR-3"),
                7 => ("[]".into(), &[-32600], "JR-3"),
                8 => ("[1,\"a\"]".into(), &[-32600], "JR-3"),
                9 => ("1e400".into(), &[-32600, -32700], "JR-3"),
                _ => {
                    let depth = r.range(20, 200) as usize;
                    (
                        format!("{}{}", "[".repeat(depth), "]".repeat(depth)),
                        &[-32600, -32700],
                        "JR-3",
                    )
                }
            };
            let text = format!(
                r#"{{"jsonrpc":"2.0","id":{raw},"method":"{}"}}"#,
                methods::PING
            );
            ready(
                "id/invalid",
                vec![Step::frame(
                    text,
                    vec![Expect {
                        id: (raw != "null").then(|| SentId(raw.clone())),
                        answer: Answer::Error(codes),
                        unidentified: codes,
                        rule,
                    }],
                )],
            )
        }
        4 => {
            // JR-5: a client must not reuse an id; a server must survive one that does.
            let id = if r.chance(50) {
                new_id(r)
            } else {
                json!(r.range(1, 1 << 31))
            };
            let one = request(&id, methods::PING, None);
            let collide = Expect::id(&id, Answer::Collision, "JR-5");
            let steps = match wire {
                Wire::Stdio => vec![Step::Send {
                    parts: vec![format!("{one}\n{one}\n").into_bytes()],
                    pause_ms: 0,
                    expects: vec![collide],
                    http_lenient: false,
                }],
                Wire::Http => vec![
                    Step::frame(one.clone(), vec![collide]),
                    Step::frame(one, vec![Expect::id(&id, Answer::Maybe, "JR-5")]),
                ],
            };
            if r.chance(50) {
                ready("id/collision", steps)
            } else {
                // The same id again once the first is answered.
                ready(
                    "id/reused-after-answer",
                    vec![
                        ping(&id, "JR-6"),
                        Step::Await,
                        Step::frame(
                            request(&id, methods::PING, None),
                            vec![Expect::id(&id, Answer::ResultOr(&[-32600]), "JR-5")],
                        ),
                    ],
                )
            }
        }
        _ => {
            // JR-6: "7" and 7 are different ids, both in flight at once.
            let n = r.range(1, 1 << 40);
            let (s, i) = (json!(n.to_string()), json!(n));
            ready(
                "id/string-and-integer",
                vec![
                    Step::frame(
                        request(&s, methods::PING, None),
                        vec![Expect::id(&s, Answer::Result, "JR-6")],
                    ),
                    Step::frame(
                        request(&i, methods::PING, None),
                        vec![Expect::id(&i, Answer::Result, "JR-6")],
                    ),
                ],
            )
        }
    }
}

/// A value of a random hostile kind (for ids of cancellations, tokens, junk params).
fn junk(r: &mut Rng) -> Value {
    match r.below(9) {
        0 => Value::Null,
        1 => json!(-1),
        2 => json!(1.5),
        3 => json!(true),
        4 => json!({}),
        5 => json!([1, [2, [3]]]),
        6 => json!("x".repeat(r.range(1_000, 100_000) as usize)),
        7 => json!(u64::MAX),
        _ => new_id(r),
    }
}

fn cancel(id: &Value) -> Step {
    Step::frame(
        notification(
            methods::NOTIFICATIONS_CANCELLED,
            Some(json!({"requestId": id, "reason": "fuzz"})),
        ),
        vec![Expect::silence("JR-11")],
    )
}

fn cancellation(r: &mut Rng, _wire: Wire) -> Case {
    let id = new_id(r);
    match r.below(8) {
        0 | 1 => {
            // UT-4: a cancellation may cross the answer; either way the session goes on.
            let req = some_request(r, &id, true);
            ready(
                "cancel/at-once",
                vec![
                    Step::frame(req, vec![Expect::id(&id, Answer::Maybe, "UT-4")]),
                    cancel(&id),
                ],
            )
        }
        2 => ready(
            "cancel/unknown-id",
            // UT-2: a cancellation of an unknown id SHOULD be ignored, and is never answered.
            vec![cancel(&junk(r))],
        ),
        3 => {
            let params = match r.below(5) {
                0 => None,
                1 => Some(json!("x")),
                2 => Some(json!([id])),
                3 => Some(json!({})),
                _ => Some(json!({"requestId": id, "reason": {"not": ["a", "string"]}})),
            };
            ready(
                "cancel/malformed",
                vec![Step::frame(
                    notification(methods::NOTIFICATIONS_CANCELLED, params),
                    vec![Expect::silence("JR-11")],
                )],
            )
        }
        4 => ready(
            "cancel/after-answer",
            vec![ping(&id, "UT-1"), Step::Await, cancel(&id)],
        ),
        5 => {
            let req = some_request(r, &id, true);
            ready(
                "cancel/twice",
                vec![
                    Step::frame(req, vec![Expect::id(&id, Answer::Maybe, "UT-4")]),
                    cancel(&id),
                    cancel(&id),
                ],
            )
        }
        6 => {
            let params = json!({"progressToken": junk(r), "progress": junk(r), "total": junk(r)});
            ready(
                "cancel/unknown-progress",
                vec![Step::frame(
                    notification(methods::NOTIFICATIONS_PROGRESS, Some(params)),
                    vec![Expect::silence("JR-11")],
                )],
            )
        }
        _ => {
            // A response to a request the server never sent is not answered (JR-11); one that
            // carries both result and error is malformed (JR-7): ignored or refused with -32600.
            let (text, expect) = match r.below(3) {
                0 => (
                    json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string(),
                    Expect::silence("JR-11"),
                ),
                1 => (
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -1, "message": "no"}})
                        .to_string(),
                    Expect::silence("JR-11"),
                ),
                _ => (
                    json!({"jsonrpc": "2.0", "id": id, "result": {},
                        "error": {"code": -1, "message": "both"}})
                    .to_string(),
                    Expect::id(&id, Answer::NoResult(&[-32600]), "JR-7").or_unidentified(&[-32600]),
                ),
            };
            ready(
                "cancel/unsolicited-response",
                vec![Step::frame(text, vec![expect])],
            )
        }
    }
}

/// The kind of a params member, for the wrong values given it.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// A string.
    Str,
    /// An object.
    Obj,
    /// One of these strings.
    Enum,
    /// An object of strings.
    StrMap,
}

/// A member of a method's params: its path (`ref/type`), kind, and whether it is required.
type Member = (&'static str, Kind, bool);

/// Known methods: name, capability, correct params, and their members.
fn known_methods() -> Vec<(&'static str, &'static str, Value, Vec<Member>)> {
    let cursor: Vec<Member> = vec![("cursor", Kind::Str, false)];
    vec![
        (
            methods::TOOLS_CALL,
            "tools",
            json!({"name": TOOL, "arguments": {}}),
            vec![("name", Kind::Str, true), ("arguments", Kind::Obj, false)],
        ),
        (methods::TOOLS_LIST, "tools", json!({}), cursor.clone()),
        (
            methods::RESOURCES_LIST,
            "resources",
            json!({}),
            cursor.clone(),
        ),
        (
            methods::RESOURCES_TEMPLATES_LIST,
            "resources",
            json!({}),
            cursor.clone(),
        ),
        (methods::PROMPTS_LIST, "prompts", json!({}), cursor),
        (
            methods::RESOURCES_READ,
            "resources",
            json!({"uri": URI}),
            vec![("uri", Kind::Str, true)],
        ),
        (
            methods::RESOURCES_SUBSCRIBE,
            "resources.subscribe",
            json!({"uri": URI}),
            vec![("uri", Kind::Str, true)],
        ),
        (
            methods::PROMPTS_GET,
            "prompts",
            json!({"name": PROMPT, "arguments": {}}),
            vec![
                ("name", Kind::Str, true),
                ("arguments", Kind::StrMap, false),
            ],
        ),
        (
            methods::COMPLETION_COMPLETE,
            "completions",
            json!({"ref": {"type": "ref/prompt", "name": PROMPT},
                "argument": {"name": "a", "value": ""}}),
            vec![
                ("ref", Kind::Obj, true),
                ("ref/type", Kind::Enum, true),
                ("argument", Kind::Obj, true),
                ("argument/name", Kind::Str, true),
                ("argument/value", Kind::Str, true),
            ],
        ),
        (
            methods::LOGGING_SET_LEVEL,
            "logging",
            json!({"level": "info"}),
            vec![("level", Kind::Enum, true)],
        ),
    ]
}

/// Sets the member at `path` (`argument/value`), making the objects on the way.
fn set_member(params: &mut Value, path: &str, value: Value) {
    let mut at = params;
    let mut names = path.split('/').peekable();
    while let Some(name) = names.next() {
        if !at.is_object() {
            *at = json!({});
        }
        let Some(o) = at.as_object_mut() else { return };
        if names.peek().is_none() {
            o.insert(name.to_owned(), value);
            return;
        }
        at = o.entry(name).or_insert_with(|| json!({}));
    }
}

/// A value of the wrong type for `kind` (`null` only where the member is required).
fn wrong_value(r: &mut Rng, kind: Kind, required: bool) -> Value {
    let mut choices = match kind {
        Kind::Str => vec![
            json!(5),
            json!(-1.5),
            json!(true),
            json!([]),
            json!(["x"]),
            json!({}),
            json!({"x": "y"}),
        ],
        Kind::Obj => vec![json!("x"), json!(5), json!(false), json!([]), json!([{}])],
        Kind::Enum => vec![json!(5), json!(""), json!("LOUD"), json!("Info"), json!([])],
        Kind::StrMap => vec![
            json!("x"),
            json!([]),
            json!({"a": 5}),
            json!({"a": null}),
            json!({"a": {"b": "c"}}),
        ],
    };
    if required {
        choices.push(Value::Null);
    }
    r.pick(&choices).clone()
}

/// Params of a known method with one member wrong (or missing): -32602 (SPEC-NOTES §2.3).
fn params(r: &mut Rng, _wire: Wire) -> Case {
    let table = known_methods();
    let (method, cap, mut params, members) = table[r.below(table.len())].clone();
    let id = new_id(r);
    let (path, kind, required) = members[r.below(members.len())];
    let (family, answer) = if method == methods::TOOLS_CALL && path == "arguments" {
        ("params/wrong-tool-arguments", Answer::InvalidToolArguments)
    } else {
        ("params/wrong-type", Answer::InvalidParams { cap })
    };
    let pointer = format!("/{path}");
    if required && r.chance(20) {
        if let Some((parent, leaf)) = pointer.rsplit_once('/') {
            // The pointer "" is the whole params object.
            if let Some(Value::Object(o)) = params.pointer_mut(parent) {
                o.remove(leaf);
            }
        }
        let text = request(&id, method, Some(params));
        return ready(
            "params/missing-member",
            vec![Step::frame(text, vec![Expect::id(&id, answer, "JR")])],
        );
    }
    if r.chance(8) {
        let text = request(&id, method, Some(json!([params])));
        return ready(
            "params/positional",
            vec![Step::frame(
                text,
                vec![Expect::id(
                    &id,
                    Answer::Error(&[-32602, -32600, -32601]),
                    "JR",
                )],
            )],
        );
    }
    let wrong = wrong_value(r, kind, required);
    set_member(&mut params, path, wrong);
    ready(
        family,
        vec![Step::frame(
            request(&id, method, Some(params)),
            vec![Expect::id(&id, answer, "JR")],
        )],
    )
}

/// Notifications with wrong params, or sent the wrong way: never answered (JR-11).
fn notifications(r: &mut Rng, _wire: Wire) -> Case {
    let (method, params) = match r.below(6) {
        0 => (methods::NOTIFICATIONS_INITIALIZED.to_owned(), Some(junk(r))),
        1 => (
            methods::NOTIFICATIONS_ROOTS_LIST_CHANGED.to_owned(),
            Some(json!({"x": junk(r)})),
        ),
        2 => (
            methods::NOTIFICATIONS_MESSAGE.to_owned(),
            Some(json!({"level": "emergency", "data": junk(r)})),
        ),
        3 => (methods::NOTIFICATIONS_TOOLS_LIST_CHANGED.to_owned(), None),
        4 => {
            let method = format!("notifications/fz_{}", r.word(8));
            let n = r.range(1, 1 << 20) as usize;
            let pad = "x".repeat(n);
            let text =
                format!(r#"{{"jsonrpc":"2.0","method":"{method}","params":{{"pad":"{pad}"}}}}"#);
            return ready(
                "notification/ignored",
                vec![Step::frame(text, vec![Expect::silence("JR-11")])],
            );
        }
        _ => ("m".repeat(r.range(1_000, 100_000) as usize), None),
    };
    ready(
        "notification/ignored",
        vec![Step::frame(
            notification(&method, params),
            vec![Expect::silence("JR-11")],
        )],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_case() {
        for seed in 0..300 {
            for wire in [Wire::Stdio, Wire::Http] {
                assert_eq!(case(seed, wire), case(seed, wire));
            }
        }
    }

    #[test]
    fn every_family_comes_up() {
        let mut families = std::collections::BTreeSet::new();
        for seed in 0..3_000 {
            families.insert(case(seed, Wire::Stdio).family);
            families.insert(case(seed, Wire::Http).family);
        }
        for f in [
            "lifecycle/double-initialize",
            "id/beyond-64-bits",
            "cancel/at-once",
            "frame/not-utf-8",
            "frame/split",
            "frame/deep-nesting",
            "batch/served",
            "batch/refused",
            "params/wrong-type",
            "notification/ignored",
            "http/session-id",
            "http/content-length",
            "http/last-event-id",
        ] {
            assert!(families.contains(f), "{f} never generated: {families:?}");
        }
    }

    #[test]
    fn members_are_set_where_absent() {
        let mut p = json!({});
        set_member(&mut p, "cursor", json!(5));
        set_member(&mut p, "argument/value", json!(true));
        assert_eq!(p, json!({"cursor": 5, "argument": {"value": true}}));
    }

    #[test]
    fn stdio_only_families_stay_off_http() {
        for seed in 0..2_000 {
            let c = case(seed, Wire::Http);
            assert!(
                ![
                    "frame/split",
                    "frame/coalesced",
                    "frame/crlf",
                    "frame/blank-lines"
                ]
                .contains(&c.family.as_str()),
                "{}",
                c.family
            );
            let c = case(seed, Wire::Stdio);
            assert!(
                !c.steps.iter().any(|s| matches!(s, Step::Http(_))),
                "{}",
                c.family
            );
        }
    }
}
