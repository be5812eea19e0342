//! Scope sets (RFC 6749 §3.3): space-separated, case-sensitive, order-free tokens.

use std::collections::BTreeSet;
use std::fmt;

/// A set of OAuth scopes. Kept sorted, so its string form is stable.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScopeSet(BTreeSet<String>);

impl ScopeSet {
    /// The empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses a `scope` value: tokens separated by spaces. Empty tokens are skipped.
    pub fn parse(value: &str) -> Self {
        Self(
            value
                .split(' ')
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
        )
    }

    /// Whether the set holds `scope`.
    pub fn contains(&self, scope: &str) -> bool {
        self.0.contains(scope)
    }

    /// Whether every scope of `other` is in this set.
    pub fn covers(&self, other: &ScopeSet) -> bool {
        other.0.is_subset(&self.0)
    }

    /// The scopes of `other` this set lacks.
    pub fn missing(&self, other: &ScopeSet) -> ScopeSet {
        Self(other.0.difference(&self.0).cloned().collect())
    }

    /// The union of both sets (what a client asks for on step-up).
    pub fn union(&self, other: &ScopeSet) -> ScopeSet {
        Self(self.0.union(&other.0).cloned().collect())
    }

    /// Adds one scope.
    pub fn insert(&mut self, scope: impl Into<String>) {
        self.0.insert(scope.into());
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The scopes, in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }
}

impl fmt::Display for ScopeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for s in &self.0 {
            if !first {
                f.write_str(" ")?;
            }
            f.write_str(s)?;
            first = false;
        }
        Ok(())
    }
}

impl<S: Into<String>> FromIterator<S> for ScopeSet {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        Self(
            iter.into_iter()
                .map(Into::into)
                .filter(|s: &String| !s.is_empty())
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_skips_empty_tokens_and_prints_sorted() {
        let s = ScopeSet::parse("  mcp:write mcp:basic  mcp:write");
        assert_eq!(s.to_string(), "mcp:basic mcp:write");
        assert!(s.contains("mcp:basic"));
        assert!(!s.contains("MCP:BASIC"), "scopes are case-sensitive");
    }

    #[test]
    fn covers_missing_and_union() {
        let have = ScopeSet::parse("a b");
        let need = ScopeSet::parse("b c");
        assert!(!have.covers(&need));
        assert_eq!(have.missing(&need).to_string(), "c");
        assert_eq!(have.union(&need).to_string(), "a b c");
        assert!(have.union(&need).covers(&need));
        assert!(have.covers(&ScopeSet::new()));
    }
}
