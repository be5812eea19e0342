//! Namespacing: an upstream's tool and prompt names under its prefix (`calc` + `_` + `add` =
//! `calc_add`, FastMCP's convention), and its resource URIs and templates rewritten both ways
//! (`test://static` of `files` is `test://files/static`; `urn:x` is `urn:files/x`). An upstream
//! named `""` is mounted as it is.

/// The longest tool name the spec allows.
pub(crate) const MAX_TOOL_NAME: usize = 128;

/// Whether `c` may appear in a tool name (the spec's rule: `A-Z a-z 0-9 _ - .`).
pub(crate) fn tool_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

/// The gateway's name for item `name` of upstream `upstream`; `None` when the result breaks the
/// tool-name rules (too long, or a character outside the alphabet).
pub(crate) fn prefixed_name(upstream: &str, separator: &str, name: &str) -> Option<String> {
    let full = if upstream.is_empty() {
        name.to_owned()
    } else {
        format!("{upstream}{separator}{name}")
    };
    let ok = !name.is_empty() && full.len() <= MAX_TOOL_NAME && full.chars().all(tool_name_char);
    ok.then_some(full)
}

/// The gateway's URI (or URI template) for an upstream's: the upstream's name and `/` put after
/// the scheme's `://` (or its `:` when there is no authority). `None` for text without a
/// scheme (nothing to put the name after).
pub(crate) fn prefixed_uri(upstream: &str, uri: &str) -> Option<String> {
    if upstream.is_empty() {
        return Some(uri.to_owned());
    }
    let (scheme, rest, sep) = split_scheme(uri)?;
    Some(format!("{scheme}{sep}{upstream}/{rest}"))
}

/// The upstream's URI for a gateway URI of upstream `upstream`; `None` when the URI is not one
/// of that upstream's.
pub(crate) fn upstream_uri(upstream: &str, uri: &str) -> Option<String> {
    if upstream.is_empty() {
        return Some(uri.to_owned());
    }
    let (scheme, rest, sep) = split_scheme(uri)?;
    let rest = rest.strip_prefix(upstream)?.strip_prefix('/')?;
    Some(format!("{scheme}{sep}{rest}"))
}

/// `scheme`, what follows the scheme's separator, and that separator (`://` or `:`). A scheme
/// is a letter then letters, digits, `+`, `-` or `.` (RFC 3986).
fn split_scheme(uri: &str) -> Option<(&str, &str, &'static str)> {
    let colon = uri.find(':')?;
    let scheme = &uri[..colon];
    let mut chars = scheme.chars();
    let first = chars.next()?;
    if !first.is_ascii_alphabetic()
        || !chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return None;
    }
    let after = &uri[colon + 1..];
    match after.strip_prefix("//") {
        Some(rest) => Some((scheme, rest, "://")),
        None => Some((scheme, after, ":")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_take_the_prefix_and_separator_and_stay_within_the_rules() {
        assert_eq!(
            prefixed_name("calc", "_", "add").as_deref(),
            Some("calc_add")
        );
        assert_eq!(
            prefixed_name("calc", ".", "add").as_deref(),
            Some("calc.add")
        );
        assert_eq!(prefixed_name("", "_", "add").as_deref(), Some("add"));
        // A name the rules refuse (a space, a slash, too long) is not served.
        assert_eq!(prefixed_name("calc", "_", "two words"), None);
        assert_eq!(prefixed_name("calc", "_", "a/b"), None);
        assert_eq!(prefixed_name("calc", "_", ""), None);
        // `calc_` is 5 characters: 128 in all is the most a name may have.
        assert!(prefixed_name("calc", "_", &"x".repeat(MAX_TOOL_NAME - 5)).is_some());
        assert_eq!(
            prefixed_name("calc", "_", &"x".repeat(MAX_TOOL_NAME - 4)),
            None
        );
    }

    #[test]
    fn uris_are_rewritten_both_ways() {
        for (up, gw) in [
            ("test://static-text", "test://files/static-text"),
            ("file:///etc/hosts", "file://files//etc/hosts"),
            ("urn:isbn:123", "urn:files/isbn:123"),
            (
                "test://template/{id}/data",
                "test://files/template/{id}/data",
            ),
        ] {
            assert_eq!(prefixed_uri("files", up).as_deref(), Some(gw));
            assert_eq!(upstream_uri("files", gw).as_deref(), Some(up));
        }
        // Another upstream's URI, or one of no upstream, is not this one's.
        assert_eq!(upstream_uri("files", "test://calc/x"), None);
        assert_eq!(upstream_uri("files", "test://filesx/x"), None);
        assert_eq!(upstream_uri("files", "no scheme"), None);
        assert_eq!(prefixed_uri("files", "{+path}"), None);
        // Mounted without a prefix: unchanged.
        assert_eq!(prefixed_uri("", "test://a").as_deref(), Some("test://a"));
        assert_eq!(upstream_uri("", "test://a").as_deref(), Some("test://a"));
    }
}
