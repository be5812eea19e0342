//! Shared by the inspector's tests: a transcript traced, and the violation tags of a report.
#![allow(dead_code, clippy::unwrap_used, unreachable_pub)]

use switchboard_inspect::{Inspector, parse_input};

/// An inspector that has observed every frame of `text` (the transcript format).
pub fn trace(text: &str) -> Inspector {
    let mut i = Inspector::new();
    for f in parse_input(text).unwrap() {
        i.observe(f.direction, &f.text, f.at_ms);
    }
    i
}

/// The tags of the violations of report `index`.
pub fn tags(i: &Inspector, index: usize) -> Vec<&'static str> {
    i.reports()[index]
        .violations
        .iter()
        .map(|v| v.tag)
        .collect()
}
