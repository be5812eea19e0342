//! `WWW-Authenticate` challenges (RFC 9110 §11.6.1, RFC 6750 §3): the resource server writes a
//! [`BearerChallenge`] on 401 and 403 `[AU-22]`, the client parses it `[AU-6]` to find the
//! protected-resource metadata `[AU-5]` and the scopes to ask for `[AU-7]`.

use std::fmt::Write as _;

/// A parse failure of a `WWW-Authenticate` value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChallengeError {
    /// The value breaks the header grammar at the byte offset given.
    #[error("malformed WWW-Authenticate value at byte {0}")]
    Malformed(usize),
}

/// One challenge of a `WWW-Authenticate` value: a scheme and its parameters (names lower-cased,
/// values unquoted), or a token68.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Challenge {
    /// The scheme, as written (`Bearer`); compare it case-insensitively.
    pub scheme: String,
    /// The parameters in order, names lower-cased.
    pub params: Vec<(String, String)>,
    /// A token68 in place of parameters, if the challenge has one.
    pub token68: Option<String>,
}

impl Challenge {
    /// The value of parameter `name` (lower-case), the first if repeated.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A Bearer challenge (RFC 6750 §3 with RFC 9728 §5.1's `resource_metadata`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BearerChallenge {
    /// `realm`.
    pub realm: Option<String>,
    /// `resource_metadata`: the URL of the protected-resource metadata (RFC 9728 §5.1).
    pub resource_metadata: Option<String>,
    /// `scope`: the scopes the request needs, space-separated.
    pub scope: Option<String>,
    /// `error`: `invalid_request`, `invalid_token` or `insufficient_scope`.
    pub error: Option<String>,
    /// `error_description`: text for people.
    pub error_description: Option<String>,
    /// `error_uri`.
    pub error_uri: Option<String>,
}

impl BearerChallenge {
    /// The header value: `Bearer` and the parameters present, each quoted.
    pub fn to_header_value(&self) -> String {
        let mut out = String::from("Bearer");
        let mut first = true;
        let fields = [
            ("realm", &self.realm),
            ("resource_metadata", &self.resource_metadata),
            ("scope", &self.scope),
            ("error", &self.error),
            ("error_description", &self.error_description),
            ("error_uri", &self.error_uri),
        ];
        for (name, value) in fields {
            let Some(value) = value else { continue };
            out.push_str(if first { " " } else { ", " });
            first = false;
            let _ = write!(out, "{name}=\"");
            for c in value.chars() {
                // Quoted-string: backslash escapes quote and backslash; control characters,
                // which no header may carry, are dropped.
                match c {
                    '"' | '\\' => {
                        out.push('\\');
                        out.push(c);
                    }
                    c if c.is_control() => {}
                    c => out.push(c),
                }
            }
            out.push('"');
        }
        out
    }

    /// The first Bearer challenge of a `WWW-Authenticate` value, if it has one.
    pub fn from_header_value(value: &str) -> Result<Option<Self>, ChallengeError> {
        Ok(parse_challenges(value)?
            .into_iter()
            .find(|c| c.scheme.eq_ignore_ascii_case("bearer"))
            .map(|c| Self::from_challenge(&c)))
    }

    /// The Bearer fields of a parsed challenge.
    pub fn from_challenge(c: &Challenge) -> Self {
        let get = |n: &str| c.param(n).map(str::to_owned);
        Self {
            realm: get("realm"),
            resource_metadata: get("resource_metadata"),
            scope: get("scope"),
            error: get("error"),
            error_description: get("error_description"),
            error_uri: get("error_uri"),
        }
    }
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn is_token68_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~+/".contains(&b)
}

struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && (self.s[self.i] == b' ' || self.s[self.i] == b'\t') {
            self.i += 1;
        }
    }
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn token(&mut self) -> Option<&str> {
        let start = self.i;
        while self.i < self.s.len() && is_tchar(self.s[self.i]) {
            self.i += 1;
        }
        (self.i > start).then(|| std::str::from_utf8(&self.s[start..self.i]).unwrap_or(""))
    }
    fn quoted(&mut self) -> Result<String, ChallengeError> {
        // The opening quote is at self.i.
        self.i += 1;
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => return Err(ChallengeError::Malformed(self.i)),
                Some(b'"') => {
                    self.i += 1;
                    return String::from_utf8(out).map_err(|_| ChallengeError::Malformed(self.i));
                }
                Some(b'\\') => {
                    self.i += 1;
                    let Some(c) = self.peek() else {
                        return Err(ChallengeError::Malformed(self.i));
                    };
                    out.push(c);
                    self.i += 1;
                }
                Some(c) => {
                    out.push(c);
                    self.i += 1;
                }
            }
        }
    }
    /// Skips commas and white space; whether any comma was seen.
    fn commas(&mut self) -> bool {
        let mut seen = false;
        loop {
            self.ws();
            if self.peek() == Some(b',') {
                self.i += 1;
                seen = true;
            } else {
                return seen;
            }
        }
    }
}

/// Parses a `WWW-Authenticate` value into its challenges (several may share one value,
/// separated by commas). Parameter names are lower-cased; quoted values are unescaped.
pub fn parse_challenges(value: &str) -> Result<Vec<Challenge>, ChallengeError> {
    let mut c = Cursor {
        s: value.as_bytes(),
        i: 0,
    };
    let mut out: Vec<Challenge> = Vec::new();
    c.commas();
    while c.i < c.s.len() {
        let Some(scheme) = c.token() else {
            return Err(ChallengeError::Malformed(c.i));
        };
        let mut ch = Challenge {
            scheme: scheme.to_owned(),
            ..Challenge::default()
        };
        c.ws();
        // A token68 is a run of token68 characters and trailing '=' not followed by a value.
        let save = c.i;
        let mut j = c.i;
        while j < c.s.len() && is_token68_char(c.s[j]) {
            j += 1;
        }
        let run_end = j;
        while j < c.s.len() && c.s[j] == b'=' {
            j += 1;
        }
        let mut k = j;
        while k < c.s.len() && (c.s[k] == b' ' || c.s[k] == b'\t') {
            k += 1;
        }
        // A token68 (`Negotiate abc==`) ends the challenge: it is followed by a comma or the end.
        if run_end > save && (k == c.s.len() || c.s[k] == b',') {
            ch.token68 = Some(String::from_utf8_lossy(&c.s[save..j]).into_owned());
            c.i = j;
            c.commas();
            out.push(ch);
            continue;
        }
        // Otherwise parameters: name = value, separated by commas, until a token not followed
        // by '=' (the next challenge's scheme) or the end.
        loop {
            c.ws();
            let before = c.i;
            let Some(name) = c.token() else { break };
            let name = name.to_ascii_lowercase();
            c.ws();
            if c.peek() != Some(b'=') {
                // The next challenge begins here.
                c.i = before;
                break;
            }
            c.i += 1;
            c.ws();
            let value = match c.peek() {
                Some(b'"') => c.quoted()?,
                _ => match c.token() {
                    Some(t) => t.to_owned(),
                    None => return Err(ChallengeError::Malformed(c.i)),
                },
            };
            ch.params.push((name, value));
            if !c.commas() {
                c.ws();
                if c.i < c.s.len() {
                    return Err(ChallengeError::Malformed(c.i));
                }
                break;
            }
        }
        out.push(ch);
        c.commas();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_reads_back_a_bearer_challenge() {
        let ch = BearerChallenge {
            resource_metadata: Some(
                "http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp".into(),
            ),
            scope: Some("mcp:basic mcp:write".into()),
            error: Some("insufficient_scope".into()),
            error_description: Some("needs \"mcp:write\"".into()),
            ..BearerChallenge::default()
        };
        let v = ch.to_header_value();
        assert!(
            v.starts_with("Bearer resource_metadata=\"http://127.0.0.1:1/"),
            "{v}"
        );
        assert_eq!(BearerChallenge::from_header_value(&v).unwrap(), Some(ch));
    }

    #[test]
    fn reads_several_challenges_and_token_values() {
        let v = r#"Basic realm="x", Bearer realm=api, scope="a b", error=invalid_token, Negotiate abc=="#;
        let all = parse_challenges(v).unwrap();
        assert_eq!(all.len(), 3, "{all:?}");
        assert_eq!(all[0].scheme, "Basic");
        assert_eq!(all[1].param("realm"), Some("api"));
        assert_eq!(all[1].param("scope"), Some("a b"));
        assert_eq!(all[2].token68.as_deref(), Some("abc=="));
        let b = BearerChallenge::from_header_value(v).unwrap().unwrap();
        assert_eq!(b.error.as_deref(), Some("invalid_token"));
    }

    #[test]
    fn a_bare_scheme_and_case_insensitive_names() {
        let b = BearerChallenge::from_header_value("bearer")
            .unwrap()
            .unwrap();
        assert_eq!(b, BearerChallenge::default());
        let b = BearerChallenge::from_header_value("Bearer SCOPE=\"x\"")
            .unwrap()
            .unwrap();
        assert_eq!(b.scope.as_deref(), Some("x"));
        assert_eq!(
            BearerChallenge::from_header_value("Basic realm=\"a\"").unwrap(),
            None
        );
    }

    #[test]
    fn malformed_values_are_errors_not_panics() {
        for bad in [
            "Bearer scope=\"open",
            "Bearer scope=\"a\" junk",
            "Bearer a=b c=d",
            "=x",
            "Bearer scope=\"a\\",
        ] {
            assert!(parse_challenges(bad).is_err(), "{bad}");
        }
    }
}
