//! The families of malformed frames and of batches: JSON that is not JSON, not UTF-8, not a
//! request; frames split across writes, run together, oversized or 100,000 levels deep; the
//! envelope wrong in one member; batches under each revision (SPEC-NOTES §2.1, §2.2, §5).

use serde_json::{Value, json};
use switchboard_types::methods;

use super::build::{
    BATCH_VERSION, NO_BATCH_VERSIONS, TOOL, Wire, new_id, on_version, padded, ready, request,
};
use super::case::{Answer, Case, Expect, SentId, Step};
use super::judge::ANY_CODE;
use super::rng::Rng;

/// Frames that are not what they should be: malformed, not UTF-8, split, oversized, deep.
pub(crate) fn frames(r: &mut Rng, wire: Wire) -> Case {
    let id = new_id(r);
    let ping_text = request(&id, methods::PING, None);
    let variants = if wire == Wire::Stdio { 15 } else { 11 };
    match r.below(variants) {
        0 | 1 => {
            let text = match r.below(9) {
                0 => ping_text[..r.range(1, ping_text.len() as u64 - 1) as usize].to_owned(),
                1 => format!("{ping_text}x"),
                2 => format!("{ping_text}}}"),
                3 => r#"{"jsonrpc":"2.0",,"id":1,"method":"ping"}"#.to_owned(),
                4 => r#"{'jsonrpc':'2.0','id':1,'method':'ping'}"#.to_owned(),
                5 => ping_text.replace("}", ",}"),
                6 => "nul".to_owned(),
                7 => r#"{"jsonrpc":"2.0","id":"unterminated,"method":"ping"}"#.to_owned(),
                _ => format!(
                    "@{}",
                    (0..r.range(1, 200))
                        .map(|_| char::from(r.range(0x21, 0x7e) as u8))
                        .collect::<String>()
                ),
            };
            ready(
                "frame/malformed-json",
                vec![Step::frame(text, vec![Expect::unreadable(&[-32700], "JR")])],
            )
        }
        2 => {
            let text = (*r.pick(&["42", "\"ping\"", "true", "null", "-0.5"])).to_owned();
            ready(
                "frame/not-an-object",
                vec![Step::frame(text, vec![Expect::unreadable(&[-32600], "JR")])],
            )
        }
        3 => {
            // JR-2: every message is UTF-8; anything else is not JSON text (-32700).
            let bads: [&[u8]; 6] = [
                b"\xff",
                b"\xc0\xaf",
                b"\xed\xa0\x80",
                b"\x80",
                b"\xe6\x97",
                b"\xf8\x88\x80\x80\x80",
            ];
            let bad = bads[r.below(bads.len())];
            let mut text = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"{}","params":{{"s":"a"#,
                methods::PING
            )
            .into_bytes();
            text.extend_from_slice(bad);
            text.extend_from_slice(b"b\"}}");
            ready(
                "frame/not-utf-8",
                vec![Step::frame(
                    text,
                    vec![
                        Expect::id(&id, Answer::Error(&[-32700]), "JR-2")
                            .or_unidentified(&[-32700]),
                    ],
                )],
            )
        }
        4 => {
            // A byte-order mark and a lone surrogate escape: RFC 8259 lets a parser accept or
            // refuse both; the server must answer one way or the other and live.
            let (family, text) = if r.chance(50) {
                ("frame/byte-order-mark", format!("\u{feff}{ping_text}"))
            } else {
                (
                    "frame/lone-surrogate",
                    format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"method":"{}","params":{{"s":"\ud800x"}}}}"#,
                        methods::PING
                    ),
                )
            };
            ready(
                family,
                vec![Step::frame(
                    text,
                    vec![Expect::id(&id, Answer::Any, "JR-2").or_unidentified(&[-32700])],
                )],
            )
        }
        5 => {
            let n = *r.pick(&[
                64 << 10,
                256 << 10,
                1 << 20,
                1 << 20,
                4 << 20,
                9 << 20,
                17 << 20,
            ]);
            let text = padded(&id, methods::PING, n);
            ready(
                "frame/oversized",
                vec![Step::frame(
                    text,
                    vec![Expect::id(&id, Answer::Maybe, "ST").or_unidentified(ANY_CODE)],
                )],
            )
        }
        6 => {
            let depth = *r.pick(&[100, 1_000, 10_000, 100_000]);
            let nested = if r.chance(50) {
                format!("{}{}", "[".repeat(depth), "]".repeat(depth))
            } else {
                format!("{}1{}", r#"{"a":"#.repeat(depth), "}".repeat(depth))
            };
            let (method, prefix) = if r.chance(70) {
                (methods::PING, String::new())
            } else {
                (methods::TOOLS_CALL, format!(r#""name":"{TOOL}","#))
            };
            let text = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{prefix}"arguments":{nested}}}}}"#
            );
            ready(
                "frame/deep-nesting",
                vec![Step::frame(
                    text,
                    vec![Expect::id(&id, Answer::Any, "ST").or_unidentified(&[-32700, -32600])],
                )],
            )
        }
        7 => {
            let wide = if r.chance(50) {
                let n = r.range(10_000, 300_000) as usize;
                format!("[{}0]", "0,".repeat(n - 1))
            } else {
                let n = r.range(1_000, 50_000);
                let members: Vec<String> = (0..n).map(|i| format!(r#""k{i}":{i}"#)).collect();
                format!("{{{}}}", members.join(","))
            };
            let text = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"{}","params":{{"wide":{wide}}}}}"#,
                methods::PING
            );
            ready(
                "frame/wide",
                vec![Step::frame(text, vec![Expect::id(&id, Answer::Any, "ST")])],
            )
        }
        8 => {
            let method = match r.below(8) {
                0 => "PING".to_owned(),
                1 => "Ping".to_owned(),
                2 => format!("{} ", methods::PING),
                3 => format!("{}\u{0}", methods::PING),
                4 => methods::TOOLS_LIST.to_uppercase(),
                5 => format!("{}/", methods::TOOLS_LIST),
                6 => format!("fz/{}", r.word(12)),
                _ => "m".repeat(r.range(10_000, 1_000_000) as usize),
            };
            // A long name is written as it is (serializing it would only copy it).
            ready(
                "frame/unknown-method",
                vec![Step::frame(
                    format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"method":{}}}"#,
                        json!(method)
                    ),
                    vec![Expect::id(&id, Answer::Error(&[-32601]), "JR")],
                )],
            )
        }
        9 => envelope(r, &id),
        10 => {
            if r.chance(50) {
                // The method written with JSON escapes is the same string.
                let text = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"p\u0069ng"}}"#);
                ready(
                    "frame/escaped-method",
                    vec![Step::frame(
                        text,
                        vec![Expect::id(&id, Answer::Result, "JR-1")],
                    )],
                )
            } else {
                // Duplicate keys: RFC 8259 leaves the outcome open; the server must live.
                let other = new_id(r);
                let text = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"id":{other},"method":"{}"}}"#,
                    methods::PING
                );
                ready(
                    "frame/duplicate-keys",
                    vec![Step::frame(
                        text,
                        vec![
                            Expect::id(&id, Answer::Maybe, "JR").or_unidentified(ANY_CODE),
                            Expect::id(&other, Answer::Maybe, "JR"),
                        ],
                    )],
                )
            }
        }
        11 => {
            // ST-1: a reader must not assume one read is one line.
            let bytes = format!("{ping_text}\n").into_bytes();
            let pieces = r.range(2, 6) as usize;
            let mut cuts: Vec<usize> = (1..pieces)
                .map(|_| r.range(1, bytes.len() as u64 - 1) as usize)
                .collect();
            cuts.sort_unstable();
            cuts.dedup();
            let mut parts = Vec::new();
            let mut from = 0;
            for c in cuts {
                parts.push(bytes[from..c].to_vec());
                from = c;
            }
            parts.push(bytes[from..].to_vec());
            ready(
                "frame/split",
                vec![Step::Send {
                    parts,
                    pause_ms: r.range(5, 80),
                    expects: vec![Expect::id(&id, Answer::Result, "ST-1")],
                    http_lenient: false,
                }],
            )
        }
        12 => {
            let n = r.range(2, 20);
            let ids: Vec<Value> = (0..n).map(|_| new_id(r)).collect();
            let text: String = ids
                .iter()
                .map(|i| format!("{}\n", request(i, methods::PING, None)))
                .collect();
            ready(
                "frame/coalesced",
                vec![Step::Send {
                    parts: vec![text.into_bytes()],
                    pause_ms: 0,
                    expects: ids
                        .iter()
                        .map(|i| Expect::id(i, Answer::Result, "ST-1"))
                        .collect(),
                    http_lenient: false,
                }],
            )
        }
        13 => {
            // SPEC-NOTES §5 (rec.): a trailing CR is JSON whitespace; the frame is whole.
            let text = format!("{ping_text}\r\n");
            ready(
                "frame/crlf",
                vec![Step::Send {
                    parts: vec![text.into_bytes()],
                    pause_ms: 0,
                    expects: vec![Expect::id(&id, Answer::Result, "ST-1")],
                    http_lenient: false,
                }],
            )
        }
        _ => {
            let blank = (*r.pick(&["\n", "   \n", "\t\n", "\n\n\n", "\r\n"])).to_owned();
            let lenient = Expect {
                id: None,
                answer: Answer::Maybe,
                unidentified: &[-32700, -32600],
                rule: "ST-1",
            };
            ready(
                "frame/blank-lines",
                vec![Step::Send {
                    parts: vec![format!("{blank}{ping_text}\n").into_bytes()],
                    pause_ms: 0,
                    expects: vec![lenient, Expect::id(&id, Answer::Result, "ST-1")],
                    http_lenient: false,
                }],
            )
        }
    }
}

/// The JSON-RPC envelope wrong in one member (JR-1: `jsonrpc` is "2.0"; a request has a string
/// `method`; `params` is structured).
fn envelope(r: &mut Rng, id: &Value) -> Case {
    let ping = methods::PING;
    let (text, expect) = match r.below(10) {
        0 => (
            format!(r#"{{"jsonrpc":"1.0","id":{id},"method":"{ping}"}}"#),
            None,
        ),
        1 => (
            format!(r#"{{"jsonrpc":2.0,"id":{id},"method":"{ping}"}}"#),
            None,
        ),
        2 => (format!(r#"{{"id":{id},"method":"{ping}"}}"#), None),
        3 => (
            format!(r#"{{"jsonrpc":null,"id":{id},"method":"{ping}"}}"#),
            None,
        ),
        4 => (format!(r#"{{"jsonrpc":"2.0","id":{id}}}"#), None),
        5 => (format!(r#"{{"jsonrpc":"2.0","id":{id},"method":5}}"#), None),
        6 => (
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":null}}"#),
            None,
        ),
        7 => (
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{ping}","params":"x"}}"#),
            Some(
                Expect::id(id, Answer::Error(&[-32600, -32602]), "JR-1").or_unidentified(&[-32600]),
            ),
        ),
        8 => (
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"{ping}","params":{}}}"#,
                r.range(0, 99)
            ),
            Some(
                Expect::id(id, Answer::Error(&[-32600, -32602]), "JR-1").or_unidentified(&[-32600]),
            ),
        ),
        _ => (
            // Unknown members are allowed everywhere (SPEC-NOTES §2.1).
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{ping}","fz":{{"x":[1]}}}}"#),
            Some(Expect::id(id, Answer::Result, "JR-1")),
        ),
    };
    let expect = expect.unwrap_or_else(|| {
        Expect::id(id, Answer::Error(&[-32600]), "JR-1").or_unidentified(&[-32600])
    });
    ready("frame/envelope", vec![Step::frame(text, vec![expect])])
}

pub(crate) fn batches(r: &mut Rng, wire: Wire) -> Case {
    let (a, b) = (new_id(r), new_id(r));
    let ping_a = json!({"jsonrpc": "2.0", "id": a, "method": methods::PING});
    let ping_b = json!({"jsonrpc": "2.0", "id": b, "method": methods::PING});
    let note = json!({"jsonrpc": "2.0", "method": format!("notifications/fz_{}", r.word(6))});
    let frame = |v: Value, expects| Step::frame(v.to_string(), expects);
    match r.below(8) {
        0 | 1 => {
            // JR-12: under 2025-03-26 a batch is answered, one response per request. Past a
            // few hundred requests a server may refuse entries with an error (its bound on
            // requests in flight); each is still answered.
            let large = r.chance(10);
            let n = if large {
                r.range(100, 1_000)
            } else {
                r.range(1, 10)
            };
            let answer = if large { Answer::Any } else { Answer::Result };
            let ids: Vec<Value> = (0..n).map(|_| new_id(r)).collect();
            let mut items: Vec<Value> = ids
                .iter()
                .map(|i| json!({"jsonrpc": "2.0", "id": i, "method": methods::PING}))
                .collect();
            items.push(note);
            let expects = ids
                .iter()
                .map(|i| Expect::id(i, answer.clone(), "JR-12"))
                .collect();
            on_version(
                BATCH_VERSION,
                "batch/served",
                vec![frame(json!(items), expects)],
            )
        }
        2 => on_version(
            BATCH_VERSION,
            "batch/mixed",
            vec![frame(
                json!([ping_a, {"jsonrpc": "2.0", "id": b}, 5]),
                vec![
                    Expect::id(&a, Answer::Result, "JR-12"),
                    Expect::id(&b, Answer::Error(&[-32600]), "JR-12").or_unidentified(&[-32600]),
                    Expect::unreadable(&[-32600], "JR-12"),
                ],
            )],
        ),
        3 => {
            // JSON-RPC 2.0 §6: an empty array is one invalid request; [1,2,3] is three.
            if r.chance(50) {
                ready(
                    "batch/empty",
                    vec![frame(
                        json!([]),
                        vec![Expect::unreadable(&[-32600], "JR-12")],
                    )],
                )
            } else {
                let n = r.range(1, 5);
                on_version(
                    BATCH_VERSION,
                    "batch/invalid-entries",
                    vec![frame(
                        json!((1..=n).collect::<Vec<u64>>()),
                        // One error per entry; a server that answers the whole with one
                        // -32600 is counted once.
                        (0..n)
                            .map(|i| {
                                let mut e = Expect::unreadable(&[-32600], "JR-12");
                                if i > 0 {
                                    e.answer = Answer::Maybe;
                                }
                                e
                            })
                            .collect(),
                    )],
                )
            }
        }
        4 => {
            let reply = json!({"jsonrpc": "2.0", "id": b, "result": {}});
            let (family, items) = if r.chance(50) {
                ("batch/notifications-only", json!([note, note]))
            } else {
                ("batch/responses-only", json!([reply]))
            };
            on_version(
                BATCH_VERSION,
                family,
                vec![frame(items, vec![Expect::silence("JR-12")])],
            )
        }
        5 => on_version(
            BATCH_VERSION,
            "batch/duplicate-ids",
            vec![frame(
                json!([ping_a, ping_a]),
                vec![Expect::id(&a, Answer::Collision, "JR-5")],
            )],
        ),
        6 => on_version(
            BATCH_VERSION,
            "batch/nested",
            vec![frame(
                json!([[ping_a]]),
                vec![
                    Expect::unreadable(&[-32600], "JR-12"),
                    Expect::id(&a, Answer::NoResult(&[-32600]), "JR-12"),
                ],
            )],
        ),
        _ => {
            // From 2025-06-18 on there are no batches (SPEC-NOTES §2.2): -32600, or HTTP 400.
            let version = *r.pick(&NO_BATCH_VERSIONS);
            let rule = if wire == Wire::Http { "HT-6" } else { "JR-12" };
            on_version(
                version,
                "batch/refused",
                vec![frame(
                    json!([ping_a, ping_b]),
                    vec![Expect {
                        id: None,
                        answer: Answer::BatchRefused(vec![SentId::of(&a), SentId::of(&b)]),
                        unidentified: &[-32600],
                        rule,
                    }],
                )],
            )
        }
    }
}
