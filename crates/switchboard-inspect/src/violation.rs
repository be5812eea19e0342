//! [`Violation`]: one rule a frame breaks, named by its spec tag.

use std::fmt;

use serde::Serialize;

/// One rule broken by a frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// The SPEC-NOTES tag, e.g. `JR-10`.
    pub tag: &'static str,
    /// A short reason.
    pub reason: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}", self.tag, self.reason)
    }
}
