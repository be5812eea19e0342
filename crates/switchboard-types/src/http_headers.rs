//! Revision 2026-07-28 on Streamable HTTP: the request headers mirrored from the body
//! (SPEC-2026-NOTES §14.2, SEP-2243): `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, and the
//! `Mcp-Param-{X}` headers a tool asks for with `"x-mcp-header": "X"` on a property of its
//! `inputSchema`.
//!
//! Applies to both sides: a client computes the headers of a request from its body
//! ([`request_headers`]) and drops tools whose annotations break the rules
//! ([`param_headers`], `[D26-64]`, `[D26-65]`); a server reads the same annotations and
//! decodes values with [`decode_value`] to compare them with the body (`[D26-63]`). Values are
//! encoded by [`encode_text`] (`[D26-66]`): plain when they are safe header text, otherwise the
//! Base64 sentinel `=?base64?…?=`.

use serde_json::{Map, Value};

use crate::methods;

/// The revision of the request (`[D26-57]`), on every POST.
pub const MCP_PROTOCOL_VERSION: &str = "MCP-Protocol-Version";
/// The request's method, on every request POST.
pub const MCP_METHOD: &str = "Mcp-Method";
/// The request's target: a tool or prompt name, a resource URI, a task id.
pub const MCP_NAME: &str = "Mcp-Name";
/// The prefix of the headers mirrored from annotated tool arguments.
pub const MCP_PARAM_PREFIX: &str = "Mcp-Param-";
/// The `inputSchema` property keyword that asks for a `Mcp-Param-*` header.
pub const X_MCP_HEADER: &str = "x-mcp-header";

const SENTINEL_START: &str = "=?base64?";
const SENTINEL_END: &str = "?=";

/// One annotated property of a tool's `inputSchema`: where its value is in `arguments`, and the
/// header name suffix (`Mcp-Param-{header}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamHeader {
    /// The property names from the root of `arguments` to the value.
    pub path: Vec<String>,
    /// The `x-mcp-header` value.
    pub header: String,
}

/// Why a tool's `x-mcp-header` annotations are invalid (`[D26-64]`); such a tool is left out of
/// an HTTP client's view of `tools/list` (`[D26-65]`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidAnnotation {
    /// The annotation is not a string, or is empty.
    #[error("x-mcp-header on {property:?} is empty or not a string")]
    Empty {
        /// The annotated property.
        property: String,
    },
    /// The annotation is not an RFC 9110 token (spaces, colons, control or non-ASCII characters).
    #[error("x-mcp-header {header:?} on {property:?} is not an HTTP token")]
    Charset {
        /// The annotated property.
        property: String,
        /// The annotation, cut to 64 characters.
        header: String,
    },
    /// Two properties carry the same annotation, compared case-insensitively.
    #[error("x-mcp-header {header:?} appears twice (names are case-insensitive)")]
    Duplicate {
        /// The repeated annotation.
        header: String,
    },
    /// The annotated property is not a `string`, `integer` or `boolean`.
    #[error("x-mcp-header on {property:?}, whose type is not string, integer or boolean")]
    NotPrimitive {
        /// The annotated property.
        property: String,
    },
    /// The annotation is not on a property reachable from the root through `properties` alone.
    #[error("x-mcp-header at {at}, which is not a property reached through properties alone")]
    Unreachable {
        /// The JSON pointer of the annotation.
        at: String,
    },
}

/// The annotated properties of a tool's `inputSchema`, checked against `[D26-64]`.
///
/// # Errors
/// The first rule broken.
pub fn param_headers(
    input_schema: &Map<String, Value>,
) -> Result<Vec<ParamHeader>, InvalidAnnotation> {
    let mut found = Vec::new();
    collect(input_schema, &mut Vec::new(), &mut found)?;
    let mut seen = std::collections::HashSet::new();
    for p in &found {
        if !seen.insert(p.header.to_ascii_lowercase()) {
            return Err(InvalidAnnotation::Duplicate {
                header: p.header.clone(),
            });
        }
    }
    Ok(found)
}

/// Walks `schema` (the root or a property reached through `properties`): annotations of the
/// properties are collected; an annotation anywhere else is refused.
fn collect(
    schema: &Map<String, Value>,
    path: &mut Vec<String>,
    found: &mut Vec<ParamHeader>,
) -> Result<(), InvalidAnnotation> {
    for (key, value) in schema {
        if key == "properties" {
            let Value::Object(props) = value else {
                continue;
            };
            for (name, prop) in props {
                let Value::Object(prop) = prop else { continue };
                path.push(name.clone());
                if let Some(annotation) = prop.get(X_MCP_HEADER) {
                    found.push(check(annotation, prop, path)?);
                }
                collect(prop, path, found)?;
                path.pop();
            }
        } else if key != X_MCP_HEADER
            && let Some(at) = stray(value)
        {
            return Err(InvalidAnnotation::Unreachable {
                at: format!("{}/{key}{at}", pointer(path)),
            });
        }
    }
    Ok(())
}

/// Where an annotation hides inside `value` (a subschema reached by another keyword).
fn stray(value: &Value) -> Option<String> {
    match value {
        Value::Object(m) => {
            if m.contains_key(X_MCP_HEADER) {
                return Some(String::new());
            }
            m.iter()
                .find_map(|(k, v)| stray(v).map(|at| format!("/{k}{at}")))
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| stray(v).map(|at| format!("/{i}{at}"))),
        _ => None,
    }
}

fn pointer(path: &[String]) -> String {
    path.iter().map(|p| format!("/properties/{p}")).collect()
}

fn check(
    annotation: &Value,
    prop: &Map<String, Value>,
    path: &[String],
) -> Result<ParamHeader, InvalidAnnotation> {
    let property = path.join(".");
    let header = match annotation {
        Value::String(s) if !s.is_empty() => s,
        _ => return Err(InvalidAnnotation::Empty { property }),
    };
    if !header.bytes().all(is_tchar) {
        return Err(InvalidAnnotation::Charset {
            property,
            header: header.chars().take(64).collect(),
        });
    }
    let primitive = matches!(
        prop.get("type"),
        Some(Value::String(t)) if matches!(t.as_str(), "string" | "integer" | "boolean")
    );
    if !primitive {
        return Err(InvalidAnnotation::NotPrimitive { property });
    }
    Ok(ParamHeader {
        path: path.to_vec(),
        header: header.clone(),
    })
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// The header text of an argument value (`[D26-66]`): a string as itself (or Base64-wrapped, see
/// [`encode_text`]), an integer in decimal, a boolean as `true` / `false`; `None` for `null`
/// (the header is left out, `[D26-62]`) and for values no header may carry.
pub fn encode_value(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(encode_text(s)),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Some(i.to_string())
            } else if let Some(u) = n.as_u64() {
                Some(u.to_string())
            } else {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15)
                    .map(|f| format!("{f:.0}"))
            }
        }
        _ => None,
    }
}

/// Header text for `s`: itself when it is visible ASCII and spaces with no space at either end,
/// otherwise `=?base64?<Base64 of its UTF-8>?=` (also when it looks like the sentinel itself).
pub fn encode_text(s: &str) -> String {
    let unsafe_char = s.bytes().any(|b| !(0x20..=0x7e).contains(&b));
    let padded = s.starts_with(' ') || s.ends_with(' ');
    if unsafe_char || padded || is_sentinel(s) {
        format!(
            "{SENTINEL_START}{}{SENTINEL_END}",
            base64_encode(s.as_bytes())
        )
    } else {
        s.to_owned()
    }
}

fn is_sentinel(s: &str) -> bool {
    s.len() >= SENTINEL_START.len() + SENTINEL_END.len()
        && s.starts_with(SENTINEL_START)
        && s.ends_with(SENTINEL_END)
}

/// Why a header value cannot be decoded (`[D26-63]`: -32020).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The Base64 inside the sentinel is not canonical (alphabet or padding).
    #[error("invalid Base64 in a =?base64?...?= header value")]
    Base64,
    /// The decoded bytes are not UTF-8.
    #[error("the Base64 header value is not UTF-8")]
    Utf8,
}

/// The text a header value stands for: the sentinel's Base64 decoded (strictly), anything else
/// as it is (a value without the full wrapper is a literal). Surrounding whitespace is not part
/// of a header value (`[D26-59]`) and is removed first.
///
/// # Errors
/// A sentinel whose Base64 or UTF-8 is invalid.
pub fn decode_value(header: &str) -> Result<String, DecodeError> {
    let v = header.trim_matches([' ', '\t']);
    if !is_sentinel(v) {
        return Ok(v.to_owned());
    }
    let inner = &v[SENTINEL_START.len()..v.len() - SENTINEL_END.len()];
    let bytes = base64_decode(inner).ok_or(DecodeError::Base64)?;
    String::from_utf8(bytes).map_err(|_| DecodeError::Utf8)
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard Base64 with padding (RFC 4648 §4).
pub fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let sextet = |shift: u32| char::from(ALPHABET[((n >> shift) & 63) as usize]);
        out.push(sextet(18));
        out.push(sextet(12));
        out.push(if chunk.len() > 1 { sextet(6) } else { '=' });
        out.push(if chunk.len() > 2 { sextet(0) } else { '=' });
    }
    out
}

/// Strict standard Base64: the length a multiple of 4, padding only at the end, and no
/// non-zero bits in the padding (so every text has one encoding).
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let value = |c: u8| ALPHABET.iter().position(|&a| a == c).map(|p| p as u32);
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    let quads = bytes.chunks(4).count();
    for (i, quad) in bytes.chunks(4).enumerate() {
        let pad = quad.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && i + 1 != quads) {
            return None;
        }
        let mut n = 0u32;
        for &c in &quad[..4 - pad] {
            n = (n << 6) | value(c)?;
        }
        n <<= 6 * pad as u32;
        let decoded = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        let keep = 3 - pad;
        if decoded[keep..].iter().any(|&b| b != 0) {
            return None;
        }
        out.extend_from_slice(&decoded[..keep]);
    }
    Some(out)
}

/// The body field mirrored into `Mcp-Name` for `method`, if any: the catalogue's
/// [`MethodSpec::name_field`](crate::catalogue::MethodSpec::name_field) (`name` for `tools/call`
/// and `prompts/get`, `uri` for `resources/read`), and `taskId` for the tasks extension's
/// methods, which the catalogue does not list in 2026-07-28.
pub fn name_field(method: &str) -> Option<&'static str> {
    match method {
        methods::TASKS_GET | methods::TASKS_UPDATE | methods::TASKS_CANCEL => Some("taskId"),
        _ => crate::catalogue::request(method).and_then(|s| s.name_field()),
    }
}

/// The headers of a modern request POST (`[D26-57]`, `[D26-62]`): `MCP-Protocol-Version`
/// `version`, `Mcp-Method`, `Mcp-Name` where the method has one, and for `tools/call` one
/// `Mcp-Param-{X}` per annotation in `params_headers` whose argument is present and not null.
pub fn request_headers(
    method: &str,
    params: &Map<String, Value>,
    version: &str,
    param_headers: &[ParamHeader],
) -> Vec<(String, String)> {
    let mut out = vec![
        (MCP_PROTOCOL_VERSION.to_owned(), version.to_owned()),
        (MCP_METHOD.to_owned(), method.to_owned()),
    ];
    if let Some(Value::String(name)) = name_field(method).and_then(|f| params.get(f)) {
        out.push((MCP_NAME.to_owned(), encode_text(name)));
    }
    if method == methods::TOOLS_CALL
        && let Some(Value::Object(args)) = params.get("arguments")
    {
        for p in param_headers {
            let leaf = p.path.split_last().and_then(|(last, parents)| {
                parents
                    .iter()
                    .try_fold(args, |obj, key| match obj.get(key) {
                        Some(Value::Object(next)) => Some(next),
                        _ => None,
                    })
                    .and_then(|o| o.get(last))
            });
            if let Some(text) = leaf.and_then(encode_value) {
                out.push((format!("{MCP_PARAM_PREFIX}{}", p.header), text));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    /// `Mcp-Name` mirrors the member the catalogue's target names (and a task's id).
    #[test]
    fn the_name_field_comes_from_the_catalogue_target() {
        use crate::methods as m;
        assert_eq!(name_field(m::TOOLS_CALL), Some("name"));
        assert_eq!(name_field(m::RESOURCES_READ), Some("uri"));
        assert_eq!(name_field(m::TASKS_UPDATE), Some("taskId"));
        assert_eq!(name_field(m::TOOLS_LIST), None);
    }

    fn schema(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn d26_66_values_are_plain_or_base64_wrapped() {
        assert_eq!(encode_value(&json!("us-west1")).unwrap(), "us-west1");
        assert_eq!(encode_value(&json!("us west 1")).unwrap(), "us west 1");
        assert_eq!(encode_value(&json!(42)).unwrap(), "42");
        assert_eq!(encode_value(&json!(false)).unwrap(), "false");
        assert_eq!(encode_value(&json!(null)), None);
        assert_eq!(encode_value(&json!("")).unwrap(), "");
        assert_eq!(
            encode_value(&json!("Hello, 世界")).unwrap(),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(encode_text(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(encode_text("\tindented"), "=?base64?CWluZGVudGVk?=");
        assert_eq!(encode_text("line1\r\nline2"), "=?base64?bGluZTENCmxpbmUy?=");
        assert!(encode_text("=?base64?abc?=").starts_with("=?base64?PT9i"));
        for s in ["Hello, 世界", " x", "=?base64?x?=", "a\u{7f}b", ""] {
            assert_eq!(decode_value(&encode_text(s)).unwrap(), s);
        }
    }

    #[test]
    fn d26_63_base64_is_decoded_strictly() {
        assert_eq!(decode_value("=?base64?SGVsbG8=?=").unwrap(), "Hello");
        assert_eq!(decode_value("=?base64?SGVsbG8?="), Err(DecodeError::Base64));
        assert_eq!(
            decode_value("=?base64?SGV$bG8=?="),
            Err(DecodeError::Base64)
        );
        assert_eq!(
            decode_value("=?base64?SGVsbG9=?="),
            Err(DecodeError::Base64)
        );
        assert_eq!(
            decode_value("=?base64?SGVsbG8="),
            Ok("=?base64?SGVsbG8=".into())
        );
        assert_eq!(decode_value("  mytool  ").unwrap(), "mytool");
    }

    #[test]
    fn d26_64_annotations_are_checked() {
        let ok = schema(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "nested": {"type": "object", "properties": {"b": {"type": "boolean", "x-mcp-header": "B"}}},
            "plain": {"type": "number"}
        }}));
        let found = param_headers(&ok).unwrap();
        assert_eq!(found.len(), 3);
        assert!(
            found
                .iter()
                .any(|p| p.path == ["nested", "b"] && p.header == "B")
        );
        let bad = |prop: Value| {
            param_headers(&schema(
                json!({"type": "object", "properties": {"p": prop}}),
            ))
        };
        assert!(matches!(
            bad(json!({"type": "string", "x-mcp-header": ""})),
            Err(InvalidAnnotation::Empty { .. })
        ));
        for name in ["My Region", "Region:Primary", "Région", "Region\t1"] {
            assert!(
                matches!(
                    bad(json!({"type": "string", "x-mcp-header": name})),
                    Err(InvalidAnnotation::Charset { .. })
                ),
                "{name}"
            );
        }
        for t in ["object", "array", "null", "number"] {
            assert!(
                matches!(
                    bad(json!({"type": t, "x-mcp-header": "X"})),
                    Err(InvalidAnnotation::NotPrimitive { .. })
                ),
                "{t}"
            );
        }
        let dup = schema(json!({"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "MyField"},
            "b": {"type": "string", "x-mcp-header": "myfield"}}}));
        assert!(matches!(
            param_headers(&dup),
            Err(InvalidAnnotation::Duplicate { .. })
        ));
        let hidden = schema(json!({"type": "object", "properties": {
            "a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}));
        assert!(matches!(
            param_headers(&hidden),
            Err(InvalidAnnotation::Unreachable { .. })
        ));
    }

    #[test]
    fn d26_57_d26_62_request_headers_mirror_the_body() {
        let tool = param_headers(&schema(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"}}})))
        .unwrap();
        let params = schema(json!({"name": "t", "arguments": {"region": "eu", "verbose": null}}));
        let h = request_headers(methods::TOOLS_CALL, &params, "2026-07-28", &tool);
        assert_eq!(
            h,
            vec![
                (MCP_PROTOCOL_VERSION.to_owned(), "2026-07-28".to_owned()),
                (MCP_METHOD.to_owned(), "tools/call".to_owned()),
                (MCP_NAME.to_owned(), "t".to_owned()),
                ("Mcp-Param-Region".to_owned(), "eu".to_owned()),
            ]
        );
        let read = schema(json!({"uri": "file:///a b"}));
        let h = request_headers(methods::RESOURCES_READ, &read, "2026-07-28", &[]);
        assert_eq!(h[2].1, "file:///a b");
    }
}
