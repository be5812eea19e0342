//! The Streamable HTTP headers a 2026-07-28 request carries besides its body (`[D26-57]`..
//! `[D26-66]`), checked against the body by the server role (the transport hands them over
//! without reading the body): `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and the
//! `Mcp-Param-*` headers a tool's `x-mcp-header` annotations designate. A disagreement, a missing
//! header or a malformed value is -32020 (`[D26-58]`).

use serde_json::Value;
use switchboard_types::ErrorObject;

use switchboard_types::modern::header_mismatch;

/// `MCP-Protocol-Version`, lower-cased as HTTP header names are compared.
pub(crate) const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// `Mcp-Method`.
pub(crate) const METHOD: &str = "mcp-method";
/// `Mcp-Name`.
pub(crate) const NAME: &str = "mcp-name";
/// The prefix of `Mcp-Param-{X}`.
pub(crate) const PARAM_PREFIX: &str = "mcp-param-";

/// The `Mcp-*` headers of one HTTP request: lower-cased names, values as sent (`None` for a
/// value that is not visible ASCII), and the names sent more than once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpFacts {
    headers: Vec<(String, Option<String>)>,
    repeated: Vec<String>,
}

impl HttpFacts {
    /// Facts from `(name, value)` pairs (every value of a repeated header: each name names one
    /// value, so a repeated one is refused when checked); only `mcp-*` names are kept.
    pub fn new(pairs: impl IntoIterator<Item = (String, Option<String>)>) -> Self {
        let mut facts = HttpFacts::default();
        for (name, value) in pairs {
            let name = name.to_ascii_lowercase();
            if !name.starts_with("mcp-") {
                continue;
            }
            if facts.headers.iter().any(|(n, _)| *n == name) {
                if !facts.repeated.contains(&name) {
                    facts.repeated.push(name);
                }
            } else {
                facts.headers.push((name, value));
            }
        }
        facts
    }

    /// The value of `name` (lower case), trimmed of surrounding whitespace (`[D26-59]`).
    ///
    /// # Errors
    /// -32020 for a value with characters a header may not carry, or a header sent more than
    /// once (an intermediary may read another copy than this check: finding 8 of issue 25).
    fn get(&self, name: &str) -> Result<Option<&str>, ErrorObject> {
        if self.repeated.iter().any(|n| n == name) {
            return Err(header_mismatch(
                format!("header {name} is sent more than once"),
                name,
            ));
        }
        match self.headers.iter().find(|(n, _)| n == name) {
            None => Ok(None),
            Some((_, Some(v))) => Ok(Some(v.trim_matches([' ', '\t']))),
            Some((_, None)) => Err(header_mismatch(
                format!("header {name} carries invalid characters"),
                name,
            )),
        }
    }

    /// Checks `MCP-Protocol-Version` and `Mcp-Method` against the body (`[D26-57]`, `[D26-58]`).
    ///
    /// # Errors
    /// -32020 naming the header.
    pub(crate) fn check_envelope(&self, version: &str, method: &str) -> Result<(), ErrorObject> {
        match self.get(PROTOCOL_VERSION)? {
            None => {
                return Err(header_mismatch(
                    "the MCP-Protocol-Version header is required",
                    PROTOCOL_VERSION,
                ));
            }
            Some(v) if v != version => {
                return Err(header_mismatch(
                    format!(
                        "the MCP-Protocol-Version header ({}) does not match the body's protocol version ({})",
                        switchboard_types::error::echo(v),
                        switchboard_types::error::echo(version)
                    ),
                    PROTOCOL_VERSION,
                ));
            }
            Some(_) => {}
        }
        match self.get(METHOD)? {
            None => Err(header_mismatch("the Mcp-Method header is required", METHOD)),
            Some(m) if m != method => Err(header_mismatch(
                format!(
                    "the Mcp-Method header ({}) does not match the body's method",
                    switchboard_types::error::echo(m)
                ),
                METHOD,
            )),
            Some(_) => Ok(()),
        }
    }

    /// Checks `Mcp-Name` against the body's name-bearing member, for the methods that have one.
    ///
    /// # Errors
    /// -32020 when the header is missing, malformed or different.
    pub(crate) fn check_name<'a>(
        &self,
        method: &str,
        body_member: impl FnOnce(&'static str) -> Option<std::borrow::Cow<'a, str>>,
    ) -> Result<(), ErrorObject> {
        let Some(member) = switchboard_types::http_headers::name_field(method) else {
            return Ok(());
        };
        let Some(body) = body_member(member) else {
            // The body is malformed; its own check reports it (-32602).
            return Ok(());
        };
        let Some(header) = self.get(NAME)? else {
            return Err(header_mismatch(
                format!("the Mcp-Name header is required for {method}"),
                NAME,
            ));
        };
        if decode(header, NAME)? != body {
            return Err(header_mismatch(
                format!("the Mcp-Name header does not match params.{member}"),
                NAME,
            ));
        }
        Ok(())
    }

    /// Checks the `Mcp-Param-*` headers a tool's `inputSchema` designates against its arguments
    /// (`[D26-63]`): a designated argument present and not null needs its header with the same
    /// value; a header without its argument disagrees with the body.
    ///
    /// # Errors
    /// -32020 naming the header.
    pub(crate) fn check_params(
        &self,
        schema: &serde_json::Map<String, Value>,
        arguments: &serde_json::Map<String, Value>,
    ) -> Result<(), ErrorObject> {
        // The annotations as every client reads them (root and nested properties, `[D26-64]`);
        // a schema whose annotations break the rules designates none.
        let designated = switchboard_types::http_headers::param_headers(schema).unwrap_or_default();
        for p in designated {
            let header = &p.header;
            let property = p.path.join(".");
            let name = format!("{PARAM_PREFIX}{}", header.to_ascii_lowercase());
            let value = p
                .path
                .split_last()
                .and_then(|(last, parents)| {
                    parents
                        .iter()
                        .try_fold(arguments, |obj, key| obj.get(key)?.as_object())
                        .and_then(|o| o.get(last))
                })
                .filter(|v| !v.is_null());
            let sent = self.get(&name)?;
            match (value, sent) {
                (None, None) => {}
                (Some(_), None) => {
                    return Err(header_mismatch(
                        format!(
                            "the Mcp-Param-{header} header is required: argument {property} is set"
                        ),
                        &name,
                    ));
                }
                (None, Some(_)) => {
                    return Err(header_mismatch(
                        format!(
                            "the Mcp-Param-{header} header is sent but argument {property} is not"
                        ),
                        &name,
                    ));
                }
                (Some(v), Some(h)) => {
                    let h = decode(h, &name)?;
                    if !same_value(v, &h) {
                        return Err(header_mismatch(
                            format!(
                                "the Mcp-Param-{header} header does not match argument {property}"
                            ),
                            &name,
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

/// A header value as text: the Base64 sentinel `=?base64?…?=` decoded strictly, anything else
/// literally (`[D26-63]`, `[D26-66]`; the decoder is the types crate's, which clients encode with).
///
/// # Errors
/// -32020 for invalid Base64 or a decoded value that is not UTF-8.
fn decode(value: &str, header: &str) -> Result<String, ErrorObject> {
    switchboard_types::http_headers::decode_value(value)
        .map_err(|e| header_mismatch(format!("header {header} cannot be decoded: {e}"), header))
}

/// Whether the argument `v` and the header text `h` are the same value: strings exactly,
/// numbers numerically (`42` = `42.0`), booleans as `true` / `false`.
fn same_value(v: &Value, h: &str) -> bool {
    match v {
        Value::String(s) => s == h,
        Value::Bool(b) => h == if *b { "true" } else { "false" },
        Value::Number(n) => h
            .parse::<f64>()
            .ok()
            .zip(n.as_f64())
            .is_some_and(|(a, b)| a == b),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use switchboard_types::ErrorCode;
    use switchboard_types::methods;

    fn facts(pairs: &[(&str, &str)]) -> HttpFacts {
        HttpFacts::new(
            pairs
                .iter()
                .map(|(n, v)| ((*n).to_owned(), Some((*v).to_owned()))),
        )
    }

    /// The body member of params whose `name` is `name`.
    fn named<'a>(name: &'a str) -> impl FnOnce(&'static str) -> Option<std::borrow::Cow<'a, str>> {
        move |member: &'static str| (member == "name").then_some(std::borrow::Cow::Borrowed(name))
    }

    #[test]
    fn d26_58_d26_59_version_method_and_name_match_the_body() {
        let f = facts(&[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", methods::TOOLS_CALL),
            ("mcp-name", "  echo  "),
        ]);
        f.check_envelope("2026-07-28", methods::TOOLS_CALL).unwrap();
        f.check_name(methods::TOOLS_CALL, named("echo")).unwrap();
        let e = f
            .check_envelope("v999.0.0", methods::TOOLS_CALL)
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::HEADER_MISMATCH);
        assert!(f.check_envelope("2026-07-28", methods::TOOLS_LIST).is_err());
        assert!(f.check_name(methods::TOOLS_CALL, named("other")).is_err());
        let upper = facts(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "TOOLS/LIST"),
        ]);
        assert!(
            upper
                .check_envelope("2026-07-28", methods::TOOLS_LIST)
                .is_err(),
            "values are case-sensitive"
        );
        let none = facts(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", methods::TOOLS_CALL),
        ]);
        assert!(none.check_name(methods::TOOLS_CALL, named("echo")).is_err());
    }

    #[test]
    fn d26_64_a_nested_annotated_property_is_checked_as_clients_send_it() {
        let schema = serde_json::json!({"type": "object", "properties": {
            "target": {"type": "object", "properties": {
                "zone": {"type": "string", "x-mcp-header": "Zone"}}}}});
        let schema = schema.as_object().unwrap().clone();
        let args = serde_json::json!({"target": {"zone": "b"}});
        let args = args.as_object().unwrap().clone();
        // The header a client computes for these arguments is accepted.
        let sent = switchboard_types::http_headers::request_headers(
            methods::TOOLS_CALL,
            serde_json::json!({"name": "t", "arguments": args.clone()})
                .as_object()
                .unwrap(),
            "2026-07-28",
            &switchboard_types::http_headers::param_headers(&schema).unwrap(),
        );
        let pairs: Vec<(&str, &str)> = sent
            .iter()
            .filter(|(n, _)| n.starts_with("Mcp-Param-"))
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        assert_eq!(pairs, [("Mcp-Param-Zone", "b")]);
        facts(&pairs).check_params(&schema, &args).unwrap();
        // Missing, or another value: -32020.
        let e = facts(&[]).check_params(&schema, &args).unwrap_err();
        assert_eq!(e.code, ErrorCode::HEADER_MISMATCH);
        let e = facts(&[("mcp-param-zone", "a")])
            .check_params(&schema, &args)
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::HEADER_MISMATCH);
    }

    #[test]
    fn d26_63_param_headers_are_decoded_strictly_and_required_both_ways() {
        let schema = serde_json::json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"}}});
        let schema = schema.as_object().unwrap().clone();
        let args = |v: serde_json::Value| v.as_object().unwrap().clone();
        facts(&[("mcp-param-region", "eu"), ("mcp-param-n", "42")])
            .check_params(
                &schema,
                &args(serde_json::json!({"region": "eu", "n": 42.0})),
            )
            .unwrap();
        facts(&[("mcp-param-region", "=?base64?SGVsbG8=?=")])
            .check_params(&schema, &args(serde_json::json!({"region": "Hello"})))
            .unwrap();
        for (header, body) in [
            ("=?base64?SGVsbG8?=", "Hello"),
            ("=?base64?SGV$bG8=?=", "Hello"),
            ("us", "eu"),
        ] {
            let e = facts(&[("mcp-param-region", header)])
                .check_params(&schema, &args(serde_json::json!({"region": body})))
                .unwrap_err();
            assert_eq!(e.code, ErrorCode::HEADER_MISMATCH, "{header}");
        }
        assert!(
            facts(&[])
                .check_params(&schema, &args(serde_json::json!({"region": "eu"})))
                .is_err()
        );
        facts(&[])
            .check_params(&schema, &args(serde_json::json!({"region": null})))
            .unwrap();
        assert!(
            facts(&[("mcp-param-region", "eu")])
                .check_params(&schema, &args(serde_json::json!({})))
                .is_err()
        );
        assert_eq!(
            decode("SGVsbG8", NAME).unwrap(),
            "SGVsbG8",
            "no sentinel: literal"
        );
    }

    /// Finding 8 of issue 25: of a repeated `Mcp-Method`, `Mcp-Name` or `Mcp-Param-*` header
    /// only the first was compared. A repeated one is refused (-32020), even when every copy
    /// agrees with the body, whatever the case of its name.
    #[test]
    fn finding_8_a_repeated_mcp_header_is_a_header_mismatch() {
        let base = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", methods::TOOLS_CALL),
            ("mcp-name", "echo"),
        ];
        let schema = serde_json::json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}}});
        let schema = schema.as_object().unwrap().clone();
        let args = serde_json::json!({"region": "eu"});
        let args = args.as_object().unwrap().clone();
        let check = |extra: &[(&str, &str)]| {
            let mut pairs: Vec<(&str, &str)> = base.to_vec();
            pairs.push(("mcp-param-region", "eu"));
            pairs.extend_from_slice(extra);
            let f = facts(&pairs);
            f.check_envelope("2026-07-28", methods::TOOLS_CALL)?;
            f.check_name(methods::TOOLS_CALL, named("echo"))?;
            f.check_params(&schema, &args)
        };
        check(&[]).unwrap();
        for extra in [
            ("Mcp-Method", methods::TOOLS_LIST),
            ("mcp-method", methods::TOOLS_CALL),
            ("Mcp-Name", "other"),
            ("mcp-name", "echo"),
            ("Mcp-Param-Region", "us"),
            ("mcp-param-region", "eu"),
            ("MCP-Protocol-Version", "2026-07-28"),
        ] {
            let e = check(&[extra]).unwrap_err();
            assert_eq!(e.code, ErrorCode::HEADER_MISMATCH, "{extra:?}");
        }
    }
}
