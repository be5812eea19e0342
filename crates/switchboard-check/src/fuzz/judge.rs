//! Judging what came back against what a case's frames allow: every answer matched to the frame
//! it answers (by id, or without one where the frame could not be read), every frame's answer of
//! the right kind and code, and nothing left over (an answer to a notification, an id changed).

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::Problem;
use super::case::{Answer, Expect, SentId};

/// Error codes: any code will do.
pub(crate) const ANY_CODE: &[i64] = &[i64::MIN];

/// Whether `code` is one of `codes`.
fn code_ok(codes: &[i64], code: i64) -> bool {
    codes == ANY_CODE || codes.contains(&code)
}

/// `-32600 or -32700`, `any code`.
fn codes_text(codes: &[i64]) -> String {
    if codes == ANY_CODE {
        return "any code".into();
    }
    let all: Vec<String> = codes.iter().map(i64::to_string).collect();
    all.join(" or ")
}

/// One message received from the server.
#[derive(Debug, Clone)]
pub(crate) struct Rx {
    /// The message.
    pub(crate) value: Value,
    /// The id's JSON text; `None` when absent or null.
    pub(crate) id: Option<String>,
}

#[derive(Deserialize)]
struct IdOnly<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
}

impl Rx {
    /// Reads one message from its JSON text (the id kept as written, so that large numbers
    /// compare exactly).
    pub(crate) fn parse(text: &str) -> Option<Rx> {
        let value: Value = serde_json::from_str(text).ok()?;
        let id = serde_json::from_str::<IdOnly<'_>>(text)
            .ok()
            .and_then(|e| e.id.map(|r| r.get().to_owned()))
            .filter(|raw| raw != "null");
        Some(Rx { value, id })
    }

    /// The messages of a JSON text that may be a batch (an array).
    pub(crate) fn parse_all(text: &str) -> Option<Vec<Rx>> {
        match serde_json::from_str::<Vec<&RawValue>>(text) {
            Ok(items) => items.iter().map(|r| Rx::parse(r.get())).collect(),
            Err(_) => Rx::parse(text).map(|rx| vec![rx]),
        }
    }

    fn is_response(&self) -> bool {
        self.value.get("method").is_none()
    }

    fn error_code(&self) -> Option<i64> {
        self.value.pointer("/error/code").and_then(Value::as_i64)
    }

    fn is_result(&self) -> bool {
        self.value.get("result").is_some()
    }

    /// The message in short, for a problem's text.
    pub(crate) fn brief(&self) -> String {
        let text = self.value.to_string();
        if text.chars().count() > 200 {
            let cut: String = text.chars().take(200).collect();
            format!("{cut}…")
        } else {
            text
        }
    }
}

/// What a response that is not well formed breaks (JR-1, JR-7, JR-8), if anything.
pub(crate) fn shape_problem(rx: &Rx) -> Option<Problem> {
    let v = &rx.value;
    if !v.is_object() {
        return Some(Problem::new(
            "JR-1",
            format!("not a JSON-RPC message: {}", rx.brief()),
        ));
    }
    if v.get("jsonrpc") != Some(&Value::from("2.0")) {
        return Some(Problem::new(
            "JR-1",
            format!("a message without \"jsonrpc\": \"2.0\": {}", rx.brief()),
        ));
    }
    if !rx.is_response() {
        return None;
    }
    match (v.get("result"), v.get("error")) {
        (Some(_), Some(_)) | (None, None) => Some(Problem::new(
            "JR-7",
            format!(
                "a response must carry exactly one of result and error: {}",
                rx.brief()
            ),
        )),
        (None, Some(e)) if !e.get("code").is_some_and(|c| c.is_i64()) => Some(Problem::new(
            "JR-8",
            format!("an error code must be an integer: {}", rx.brief()),
        )),
        (None, Some(e)) if !e.get("message").is_some_and(Value::is_string) => Some(Problem::new(
            "JR-8",
            format!("an error needs a message string: {}", rx.brief()),
        )),
        _ => None,
    }
}

/// Whether a received id is exactly the id sent: the same value, and for numbers the same digits.
pub(crate) fn same_exact(sent: &SentId, got: &str) -> bool {
    let (Ok(a), Ok(b)) = (
        serde_json::from_str::<Value>(&sent.0),
        serde_json::from_str::<Value>(got),
    ) else {
        return sent.0 == got;
    };
    match (&a, &b) {
        (Value::Number(_), Value::Number(_)) => sent.0.trim() == got.trim(),
        _ => a == b,
    }
}

/// Whether a received id is the id sent once its JSON type is ignored (`"7"` for `7`).
fn same_loose(sent: &SentId, got: &str) -> bool {
    sent.0.trim_matches('"') == got.trim_matches('"')
}

/// What the server has declared, for the expectations that depend on it.
pub(crate) trait Declared {
    /// Whether the server declared capability `cap`.
    fn declares(&self, cap: &str) -> bool;
}

/// The judging of one case's answers.
struct Judging<'a> {
    pool: Vec<Option<&'a Rx>>,
    problems: Vec<Problem>,
    waited: &'a str,
    /// Every id the expectations name: an answer with one of them exactly is never taken for
    /// another id with its type changed.
    ids: Vec<&'a SentId>,
}

impl<'a> Judging<'a> {
    /// Takes every response whose id is exactly `id`, and those whose id is `id` with its type
    /// changed (reported).
    fn take_by_id(&mut self, id: &SentId) -> Vec<&'a Rx> {
        let mut got = Vec::new();
        for slot in &mut self.pool {
            let Some(rx) = *slot else { continue };
            let Some(raw) = &rx.id else { continue };
            if !rx.is_response() {
                continue;
            }
            if same_exact(id, raw) {
                got.push(rx);
                *slot = None;
            } else if same_loose(id, raw) && !self.ids.iter().any(|other| same_exact(other, raw)) {
                self.problems.push(Problem::new(
                    "JR-6",
                    format!("the answer to id {} came with id {raw}", id.0),
                ));
                // Still the answer, judged as one.
                got.push(rx);
                *slot = None;
            }
        }
        got
    }

    /// Takes the first error without an id whose code is one of `codes`.
    fn take_anonymous(&mut self, codes: &[i64]) -> Option<&'a Rx> {
        for slot in &mut self.pool {
            let Some(rx) = *slot else { continue };
            if rx.id.is_none()
                && rx.is_response()
                && rx.error_code().is_some_and(|c| code_ok(codes, c))
            {
                *slot = None;
                return Some(rx);
            }
        }
        None
    }

    /// The first error without an id still untaken, whatever its code.
    fn peek_anonymous(&self) -> Option<&'a Rx> {
        self.pool
            .iter()
            .flatten()
            .find(|rx| rx.id.is_none() && rx.is_response())
            .copied()
    }

    fn problem(&mut self, rule: &'static str, what: String) {
        self.problems.push(Problem::new(rule, what));
    }

    /// Judges the answers found for one expectation with an id.
    fn judge_answers(&mut self, e: &Expect, id: &SentId, got: &[&'a Rx], declared: &dyn Declared) {
        let rule = e.rule;
        let what = |rx: &Rx| rx.brief();
        match &e.answer {
            Answer::Silence => {
                for rx in got {
                    self.problem(
                        "JR-11",
                        format!("a message that needs no answer was answered: {}", what(rx)),
                    );
                }
                return;
            }
            Answer::Maybe => {
                if got.len() > 1 {
                    self.problem(rule, format!("id {} answered {} times", id.0, got.len()));
                }
                return;
            }
            Answer::Collision => {
                match got.len() {
                    0 => {
                        let got = match self.take_anonymous(ANY_CODE) {
                            Some(rx) => format!("an error without id: {}", rx.brief()),
                            None => format!("no answer ({})", self.waited),
                        };
                        self.problem(
                            "JR-5",
                            format!(
                                "expected an answer to the requests with id {}, got {got}",
                                id.0
                            ),
                        );
                    }
                    1 | 2 => {}
                    n => self.problem("JR-5", format!("id {} answered {n} times", id.0)),
                }
                for rx in got {
                    if !rx.is_result() && rx.error_code() != Some(-32600) {
                        self.problem(
                            "JR-5",
                            format!("a reused id got neither a result nor -32600: {}", what(rx)),
                        );
                    }
                }
                return;
            }
            Answer::BatchRefused(_) => return,
            _ => {}
        }
        let Some(first) = got.first() else {
            if let Answer::NoResult(_) = e.answer {
                return;
            }
            if !e.unidentified.is_empty() && self.take_anonymous(e.unidentified).is_some() {
                return;
            }
            // An error without id in its place is the server's answer to the frame, wrong.
            let got = match self.take_anonymous(ANY_CODE) {
                Some(rx) => format!("an error without id: {}", what(rx)),
                None => format!("no answer ({})", self.waited),
            };
            self.problem(
                rule,
                format!(
                    "expected {} for id {}, got {got}",
                    expected(&e.answer, declared),
                    id.0,
                ),
            );
            return;
        };
        if got.len() > 1 {
            self.problem(rule, format!("id {} answered {} times", id.0, got.len()));
        }
        if !fits(&e.answer, first, declared) {
            self.problem(
                rule,
                format!(
                    "expected {}, got {}",
                    expected(&e.answer, declared),
                    what(first)
                ),
            );
        }
    }
}

/// Whether `rx` is an answer `answer` allows.
fn fits(answer: &Answer, rx: &Rx, declared: &dyn Declared) -> bool {
    let code = rx.error_code();
    match answer {
        Answer::Result => rx.is_result(),
        Answer::Error(codes) | Answer::NoResult(codes) => code.is_some_and(|c| code_ok(codes, c)),
        Answer::ResultOr(codes) => rx.is_result() || code.is_some_and(|c| code_ok(codes, c)),
        Answer::Any | Answer::Maybe => true,
        Answer::InvalidParams { cap } => {
            code == Some(-32602) || (!declared.declares(cap) && code == Some(-32601))
        }
        Answer::InvalidToolArguments => {
            code == Some(-32602)
                || (!declared.declares("tools") && code == Some(-32601))
                || rx.value.pointer("/result/isError") == Some(&Value::Bool(true))
        }
        Answer::CounterOffer { offered } => {
            code == Some(-32602)
                || rx
                    .value
                    .pointer("/result/protocolVersion")
                    .and_then(Value::as_str)
                    .is_some_and(|v| v != offered)
        }
        Answer::Silence | Answer::Collision | Answer::BatchRefused(_) => false,
    }
}

/// What `answer` asks for, in words.
pub(crate) fn expected(answer: &Answer, declared: &dyn Declared) -> String {
    match answer {
        Answer::Silence => "no answer".into(),
        Answer::Result => "a result".into(),
        Answer::Error(codes) => format!("error {}", codes_text(codes)),
        Answer::ResultOr(codes) => format!("a result or error {}", codes_text(codes)),
        Answer::Any | Answer::Maybe => "an answer".into(),
        Answer::NoResult(codes) => format!("no answer or error {}", codes_text(codes)),
        Answer::InvalidParams { cap } if declared.declares(cap) => "error -32602".into(),
        Answer::InvalidParams { cap } => {
            format!("error -32602 (or -32601: no {cap} capability declared)")
        }
        Answer::InvalidToolArguments => "error -32602 (or an isError result)".into(),
        Answer::CounterOffer { offered } => {
            format!("a result offering a version other than {offered:?} (LC-8), or error -32602")
        }
        Answer::Collision => "one or two answers".into(),
        Answer::BatchRefused(_) => "error -32600".into(),
    }
}

/// What judging a segment gave.
#[derive(Debug, Default)]
pub(crate) struct Judged {
    /// The rules broken.
    pub(crate) problems: Vec<Problem>,
    /// Errors without id that may still come (for frames the server may answer that way, or
    /// not at all): the codes each may carry. A later segment on the same connection takes them.
    pub(crate) may_come: Vec<&'static [i64]>,
}

/// Judges a case's answers: `pool` is every response that came (late answers of earlier cases
/// taken out), `waited` says in words what a missing answer waited for (`waited 5 s`, or the
/// HTTP answer that lacked it), and `late` the errors without id that earlier segments allowed
/// and that may come now.
pub(crate) fn judge(
    expects: &[Expect],
    pool: &[Rx],
    declared: &dyn Declared,
    waited: &str,
    late: &[&'static [i64]],
) -> Judged {
    let mut j = Judging {
        pool: pool.iter().map(Some).collect(),
        problems: Vec::new(),
        waited,
        ids: expects.iter().filter_map(|e| e.id.as_ref()).collect(),
    };
    // Frames whose id cannot be read need an error without id; they take theirs first.
    for e in expects
        .iter()
        .filter(|e| e.id.is_none() && e.required() && !matches!(e.answer, Answer::BatchRefused(_)))
    {
        if j.take_anonymous(e.unidentified).is_none() {
            let text = match j.take_anonymous(ANY_CODE) {
                Some(rx) => format!(
                    "expected error {}, got {}",
                    codes_text(e.unidentified),
                    rx.brief()
                ),
                None => format!(
                    "expected error {}, got no answer ({waited})",
                    codes_text(e.unidentified)
                ),
            };
            j.problem(e.rule, text);
        }
    }
    let mut answered = vec![false; expects.len()];
    for (i, e) in expects.iter().enumerate() {
        if let Some(id) = &e.id {
            let got = j.take_by_id(id);
            answered[i] = !got.is_empty();
            j.judge_answers(e, id, &got, declared);
        }
    }
    for e in expects {
        if let Answer::BatchRefused(ids) = &e.answer {
            judge_batch_refused(&mut j, e.rule, ids);
        }
    }
    // Frames that may be answered without an id take what is left, if anything; what they do
    // not find may still come.
    let mut may_come = Vec::new();
    for (i, e) in expects.iter().enumerate() {
        if !e.unidentified.is_empty()
            && !e.required()
            && !answered[i]
            && j.take_anonymous(e.unidentified).is_none()
        {
            may_come.push(e.unidentified);
        }
    }
    for codes in late {
        if j.take_anonymous(codes).is_none() {
            may_come.push(codes);
        }
    }
    for rx in j.pool.iter().flatten().copied().collect::<Vec<_>>() {
        match &rx.id {
            None if rx.is_response() => j.problem(
                "JR-11",
                format!(
                    "an error without id that answers no frame sent (a notification answered?): {}",
                    rx.brief()
                ),
            ),
            Some(raw) if rx.is_response() => j.problem(
                "JR-6",
                format!(
                    "an answer to id {raw}, which this case never sent: {}",
                    rx.brief()
                ),
            ),
            _ => {}
        }
    }
    Judged {
        problems: j.problems,
        may_come,
    }
}

fn judge_batch_refused(j: &mut Judging<'_>, rule: &'static str, ids: &[SentId]) {
    let mut refused = false;
    for id in ids {
        for rx in j.take_by_id(id) {
            if rx.is_result() {
                j.problem(
                    rule,
                    format!(
                        "the batch was served although the negotiated revision has no batches: {}",
                        rx.brief()
                    ),
                );
            } else if rx.error_code() == Some(-32600) {
                refused = true;
            } else {
                j.problem(rule, format!("expected error -32600, got {}", rx.brief()));
            }
        }
    }
    while j.take_anonymous(&[-32600]).is_some() {
        refused = true;
    }
    if !refused {
        let got = match j.peek_anonymous() {
            Some(rx) => rx.brief(),
            None => format!("no -32600 ({})", j.waited),
        };
        j.problem(
            rule,
            format!(
                "a batch under a revision without batches must be refused with -32600; got {got}"
            ),
        );
    }
}

/// Whether every answer the expectations require is in `pool` (the wait can end).
pub(crate) fn complete(expects: &[Expect], pool: &[Rx]) -> bool {
    let anonymous = pool
        .iter()
        .filter(|rx| rx.id.is_none() && rx.is_response())
        .count();
    let mut anonymous_needed = 0;
    for e in expects.iter().filter(|e| e.required()) {
        match (&e.id, &e.answer) {
            (_, Answer::BatchRefused(ids)) => {
                let by_id = ids.iter().any(|id| {
                    pool.iter()
                        .any(|rx| rx.id.as_deref().is_some_and(|raw| same_exact(id, raw)))
                });
                if !by_id {
                    anonymous_needed += 1;
                }
            }
            (Some(id), _) => {
                let answered = pool.iter().any(|rx| {
                    rx.is_response()
                        && rx
                            .id
                            .as_deref()
                            .is_some_and(|raw| same_exact(id, raw) || same_loose(id, raw))
                });
                if !answered {
                    if e.unidentified.is_empty() {
                        return false;
                    }
                    anonymous_needed += 1;
                }
            }
            (None, _) => anonymous_needed += 1,
        }
    }
    anonymous >= anonymous_needed
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    struct Caps(&'static [&'static str]);

    impl Declared for Caps {
        fn declares(&self, cap: &str) -> bool {
            self.0.contains(&cap)
        }
    }

    fn rx(v: Value) -> Rx {
        Rx::parse(&v.to_string()).unwrap_or_else(|| panic!("{v}"))
    }

    fn run(expects: &[Expect], pool: &[Rx]) -> Vec<String> {
        judge(expects, pool, &Caps(&["tools"]), "waited 1 s", &[])
            .problems
            .into_iter()
            .map(|p| format!("[{}] {}", p.rule, p.what))
            .collect()
    }

    #[test]
    fn large_ids_compare_by_their_digits() {
        let sent = SentId("18446744073709551617".into());
        assert!(same_exact(&sent, "18446744073709551617"));
        assert!(!same_exact(&sent, "18446744073709551616"));
        assert!(!same_exact(&sent, "\"18446744073709551617\""));
        assert!(same_exact(&SentId("\"é\"".into()), "\"\\u00e9\""));
        let parsed = Rx::parse(r#"{"jsonrpc":"2.0","id":18446744073709551617,"result":{}}"#);
        assert_eq!(
            parsed.and_then(|r| r.id).as_deref(),
            Some("18446744073709551617")
        );
    }

    #[test]
    fn a_right_answer_passes_and_a_wrong_code_is_named() {
        let e = [Expect::id(&json!(1), Answer::Error(&[-32602]), "JR")];
        let good =
            rx(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "x"}}));
        assert!(run(&e, &[good]).is_empty());
        let bad = rx(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "x"}}));
        let p = run(&e, &[bad]);
        assert_eq!(p.len(), 1);
        assert!(p[0].contains("expected error -32602"), "{p:?}");
    }

    #[test]
    fn an_id_whose_type_changed_is_jr_6() {
        let e = [Expect::id(&json!(7), Answer::Result, "JR-6")];
        let p = run(
            &e,
            &[rx(json!({"jsonrpc": "2.0", "id": "7", "result": {}}))],
        );
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].starts_with("[JR-6] the answer to id 7 came with id \"7\""),
            "{p:?}"
        );
    }

    #[test]
    fn unreadable_frames_take_errors_without_id_and_leftovers_are_reported() {
        let e = [Expect::unreadable(&[-32700], "JR")];
        let parse_error =
            rx(json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "x"}}));
        assert!(run(&e, std::slice::from_ref(&parse_error)).is_empty());
        assert_eq!(run(&e, &[]).len(), 1);
        let p = run(&[Expect::silence("JR-11")], &[parse_error]);
        assert!(p[0].starts_with("[JR-11]"), "{p:?}");
    }

    #[test]
    fn a_string_id_and_an_integer_id_with_the_same_digits_are_told_apart() {
        let e = [
            Expect::id(&json!("7"), Answer::Result, "JR-6"),
            Expect::id(&json!(7), Answer::Result, "JR-6"),
        ];
        let pool = [
            rx(json!({"jsonrpc": "2.0", "id": 7, "result": {}})),
            rx(json!({"jsonrpc": "2.0", "id": "7", "result": {}})),
        ];
        assert!(run(&e, &pool).is_empty(), "{:?}", run(&e, &pool));
    }

    #[test]
    fn an_error_without_id_allowed_earlier_may_come_later() {
        let e = [Expect::id(&json!(1), Answer::Maybe, "JR").or_unidentified(ANY_CODE)];
        let judged = judge(&e, &[], &Caps(&[]), "", &[]);
        assert_eq!(judged.may_come, vec![ANY_CODE]);
        let late = rx(json!({"jsonrpc": "2.0", "error": {"code": -32600, "message": "x"}}));
        let judged = judge(&[], &[late], &Caps(&[]), "", &judged.may_come);
        assert!(judged.problems.is_empty(), "{:?}", judged.problems);
        assert!(judged.may_come.is_empty());
    }

    #[test]
    fn invalid_params_depend_on_the_declared_capability() {
        let e = [Expect::id(
            &json!("p"),
            Answer::InvalidParams { cap: "prompts" },
            "JR",
        )];
        let not_found =
            rx(json!({"jsonrpc": "2.0", "id": "p", "error": {"code": -32601, "message": "x"}}));
        assert!(run(&e, std::slice::from_ref(&not_found)).is_empty());
        let e = [Expect::id(
            &json!("p"),
            Answer::InvalidParams { cap: "tools" },
            "JR",
        )];
        assert_eq!(run(&e, &[not_found]).len(), 1);
    }

    #[test]
    fn a_refused_batch_needs_a_minus_32600_and_no_result() {
        let ids = vec![SentId::of(&json!("a")), SentId::of(&json!("b"))];
        let e = [Expect {
            id: None,
            answer: Answer::BatchRefused(ids),
            unidentified: &[-32600],
            rule: "HT-6",
        }];
        let whole =
            rx(json!({"jsonrpc": "2.0", "error": {"code": -32600, "message": "no batches"}}));
        assert!(run(&e, &[whole]).is_empty());
        let served = rx(json!({"jsonrpc": "2.0", "id": "a", "result": {}}));
        assert_eq!(run(&e, &[served]).len(), 2);
        assert!(!complete(&e, &[]));
    }

    #[test]
    fn completeness_waits_for_every_required_answer() {
        let e = [
            Expect::id(&json!(1), Answer::Result, "UT-1"),
            Expect::id(&json!(2), Answer::Maybe, "UT-4"),
            Expect::unreadable(&[-32700], "JR"),
        ];
        let one = rx(json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
        let anon = rx(json!({"jsonrpc": "2.0", "error": {"code": -32700, "message": "x"}}));
        assert!(!complete(&e, std::slice::from_ref(&one)));
        assert!(complete(&e, &[one, anon]));
    }

    #[test]
    fn malformed_responses_are_named() {
        let both = rx(
            json!({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "x"}}),
        );
        assert_eq!(shape_problem(&both).map(|p| p.rule), Some("JR-7"));
        let float = rx(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": 1.5, "message": "x"}}));
        assert_eq!(shape_problem(&float).map(|p| p.rule), Some("JR-8"));
        let ok = rx(json!({"jsonrpc": "2.0", "method": "notifications/message"}));
        assert!(shape_problem(&ok).is_none());
    }
}
