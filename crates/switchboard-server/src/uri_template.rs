//! RFC 6570 URI templates, level 1 (`{var}`), plus the reserved (`{+var}`) form: expansion, and
//! matching a concrete URI back to its variables.

use std::collections::BTreeMap;

/// One piece of a parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    /// A variable; `reserved` (`{+var}`) may match `/` and expands without escaping reserved chars.
    Var {
        name: String,
        reserved: bool,
    },
}

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
}

/// A template that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid URI template {template:?}: {reason}")]
pub struct TemplateError {
    /// The template.
    pub template: String,
    /// What is wrong.
    pub reason: &'static str,
}

impl UriTemplate {
    /// Parses a template such as `test://template/{id}/data`.
    ///
    /// # Errors
    /// Unbalanced braces, an empty or malformed variable name, or two adjacent variables (which
    /// could not be matched unambiguously).
    pub fn parse(template: &str) -> Result<Self, TemplateError> {
        let err = |reason| TemplateError {
            template: template.to_owned(),
            reason,
        };
        let mut parts = Vec::new();
        let mut rest = template;
        while !rest.is_empty() {
            match rest.find('{') {
                Some(0) => {
                    let close = rest.find('}').ok_or_else(|| err("unclosed '{'"))?;
                    let inner = &rest[1..close];
                    let (reserved, name) = match inner.strip_prefix('+') {
                        Some(n) => (true, n),
                        None => (false, inner),
                    };
                    if name.is_empty()
                        || !name
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
                    {
                        return Err(err("variable names are letters, digits, '_' and '.'"));
                    }
                    if matches!(parts.last(), Some(Part::Var { .. })) {
                        return Err(err("two variables must be separated by a literal"));
                    }
                    parts.push(Part::Var {
                        name: name.to_owned(),
                        reserved,
                    });
                    rest = &rest[close + 1..];
                }
                Some(i) => {
                    if rest[..i].contains('}') {
                        return Err(err("unmatched '}'"));
                    }
                    parts.push(Part::Literal(rest[..i].to_owned()));
                    rest = &rest[i..];
                }
                None => {
                    if rest.contains('}') {
                        return Err(err("unmatched '}'"));
                    }
                    parts.push(Part::Literal(rest.to_owned()));
                    rest = "";
                }
            }
        }
        Ok(UriTemplate {
            source: template.to_owned(),
            parts,
        })
    }

    /// The template text.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The variable names, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Var { name, .. } => Some(name.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// Expands the template; a missing variable expands to the empty string (RFC 6570 §3.2.1).
    pub fn expand(&self, vars: &BTreeMap<String, String>) -> String {
        let mut out = String::new();
        for p in &self.parts {
            match p {
                Part::Literal(l) => out.push_str(l),
                Part::Var { name, reserved } => {
                    if let Some(v) = vars.get(name) {
                        encode_into(&mut out, v, *reserved);
                    }
                }
            }
        }
        out
    }

    /// Matches a concrete URI; returns the (percent-decoded) variables, or `None`.
    /// A simple variable matches one or more characters other than `/`, `?` and `#`.
    pub fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let mut vars = BTreeMap::new();
        let mut rest = uri;
        let mut i = 0;
        while i < self.parts.len() {
            match &self.parts[i] {
                Part::Literal(l) => rest = rest.strip_prefix(l.as_str())?,
                Part::Var { name, reserved } => {
                    let stop = |c: char| !reserved && matches!(c, '/' | '?' | '#');
                    let limit = rest.find(stop).unwrap_or(rest.len());
                    let end = match self.parts.get(i + 1) {
                        // The value ends where the next literal starts: its first occurrence,
                        // which must start within the characters the variable may match (the
                        // literal itself may hold stop characters, `{id}.json/raw`).
                        Some(Part::Literal(next)) => {
                            rest.find(next.as_str()).filter(|start| *start <= limit)?
                        }
                        _ => limit,
                    };
                    if end == 0 {
                        return None;
                    }
                    vars.insert(name.clone(), percent_decode(&rest[..end])?);
                    rest = &rest[end..];
                }
            }
            i += 1;
        }
        rest.is_empty().then_some(vars)
    }
}

fn encode_into(out: &mut String, value: &str, reserved: bool) {
    for b in value.bytes() {
        let c = b as char;
        let keep = c.is_ascii_alphanumeric()
            || matches!(c, '-' | '.' | '_' | '~')
            || (reserved
                && matches!(
                    c,
                    ':' | '/'
                        | '?'
                        | '#'
                        | '['
                        | ']'
                        | '@'
                        | '!'
                        | '$'
                        | '&'
                        | '\''
                        | '('
                        | ')'
                        | '*'
                        | '+'
                        | ','
                        | ';'
                        | '='
                ));
        if keep {
            out.push(c);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            // Exactly two hex digits (`from_str_radix` alone would take a sign: `%+F`).
            let hex = s
                .get(i + 1..i + 3)
                .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn expands_and_matches_level_1() {
        let t = UriTemplate::parse("test://template/{id}/data").unwrap();
        assert_eq!(t.variables().collect::<Vec<_>>(), vec!["id"]);
        assert_eq!(
            t.expand(&vars(&[("id", "123")])),
            "test://template/123/data"
        );
        assert_eq!(
            t.matches("test://template/123/data"),
            Some(vars(&[("id", "123")]))
        );
        assert_eq!(
            t.matches("test://template/a%20b/data"),
            Some(vars(&[("id", "a b")]))
        );
        assert_eq!(
            t.expand(&vars(&[("id", "a b/c")])),
            "test://template/a%20b%2Fc/data"
        );
        for miss in [
            "test://template//data",
            "test://template/1/2/data",
            "test://template/1/datax",
            "other://x",
        ] {
            assert_eq!(t.matches(miss), None, "{miss}");
        }
    }

    #[test]
    fn several_variables_and_reserved_expansion() {
        let t = UriTemplate::parse("file:///{+path}").unwrap();
        assert_eq!(
            t.matches("file:///a/b/c.txt"),
            Some(vars(&[("path", "a/b/c.txt")]))
        );
        assert_eq!(t.expand(&vars(&[("path", "a/b c")])), "file:///a/b%20c");
        let t = UriTemplate::parse("db://{schema}.{table}/rows").unwrap();
        assert_eq!(
            t.matches("db://main.users/rows"),
            Some(vars(&[("schema", "main"), ("table", "users")]))
        );
    }

    #[test]
    fn a_literal_holding_a_stop_character_follows_a_variable() {
        let t = UriTemplate::parse("api://items/{id}.json/raw").unwrap();
        assert_eq!(
            t.matches("api://items/5.json/raw"),
            Some(vars(&[("id", "5")]))
        );
        assert_eq!(t.matches("api://items/5/x.json/raw"), None);
        let t = UriTemplate::parse("test://template/{id}0000/data").unwrap();
        let uri = t.expand(&vars(&[("id", "v")]));
        assert_eq!(t.matches(&uri), Some(vars(&[("id", "v")])));
        let t = UriTemplate::parse("x://{a}/{b}").unwrap();
        assert_eq!(t.matches("x://1/2"), Some(vars(&[("a", "1"), ("b", "2")])));
    }

    #[test]
    fn percent_escapes_are_two_hex_digits() {
        let t = UriTemplate::parse("x://{a}").unwrap();
        assert_eq!(t.matches("x://%41%e2%82%ac"), Some(vars(&[("a", "A€")])));
        for bad in ["x://%+F", "x://%-1", "x://%4", "x://%zz", "x://%"] {
            assert_eq!(t.matches(bad), None, "{bad}");
        }
    }

    #[test]
    fn malformed_templates_are_refused() {
        for bad in ["x/{", "x/}", "x/{}", "x/{a}{b}", "x/{a b}"] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad}");
        }
    }
}
