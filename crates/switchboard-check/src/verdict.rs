//! How a check states its outcome: the constructors of a [`CheckResult`] (pass, fail, skip),
//! and what the checks read of an answer to state it (its error code, a short showing of it).
//! Shared by the 2025 checks and the 2026-07-28 ones, below both.

use serde_json::Value;

use crate::conn::Got;
use crate::{CheckResult, Verdict};

fn result(tag: &'static str, name: &'static str, outcome: Verdict, detail: String) -> CheckResult {
    CheckResult {
        tag,
        name,
        outcome,
        detail,
    }
}

/// The rule held.
pub(crate) fn pass(
    tag: &'static str,
    name: &'static str,
    detail: impl Into<String>,
) -> CheckResult {
    result(tag, name, Verdict::Pass, detail.into())
}

/// The rule was broken.
pub(crate) fn fail(
    tag: &'static str,
    name: &'static str,
    detail: impl Into<String>,
) -> CheckResult {
    result(tag, name, Verdict::Fail, detail.into())
}

/// The rule could not apply (never a pass).
pub(crate) fn skip(
    tag: &'static str,
    name: &'static str,
    detail: impl Into<String>,
) -> CheckResult {
    result(tag, name, Verdict::Skip, detail.into())
}

pub(crate) fn show(g: &Got) -> String {
    match g {
        Got::Frame(v) => {
            let s = v.to_string();
            if s.len() > 200 {
                let mut end = 200;
                while !s.is_char_boundary(end) {
                    end -= 1;
                }
                format!("{}…", &s[..end])
            } else {
                s
            }
        }
        Got::Timeout => "no answer (timeout)".into(),
        Got::Closed(why) => format!("connection closed ({why})"),
    }
}

pub(crate) fn error_code(g: &Got) -> Option<i64> {
    match g {
        Got::Frame(v) => v
            .get("error")
            .and_then(|e| e.get("code"))
            .and_then(Value::as_i64),
        _ => None,
    }
}

pub(crate) fn expect_code(
    tag: &'static str,
    name: &'static str,
    g: &Got,
    code: i64,
) -> CheckResult {
    match error_code(g) {
        Some(c) if c == code => pass(tag, name, format!("error {c}")),
        _ => fail(tag, name, format!("expected error {code}, got {}", show(g))),
    }
}
