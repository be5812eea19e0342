//! A tool's `inputSchema` or `outputSchema` and its compiled validator. Server side only.
//!
//! Compiling a schema validates it against its meta-schema first, and the first compile in a
//! process builds the meta-schema's own validator: most of a server's start-up work. A schema
//! written only with the keywords [`plainly_valid`] knows, each with a value of the type the
//! 2020-12 meta-schema asks for, is valid and compiles: its compile is left for later (the
//! first call that needs it, or [`warm`] on a thread of its own), so that the server answers
//! `initialize` without waiting for it. Any other schema is compiled at registration, so that a
//! schema that may be invalid is still refused there, as it always was.

use std::sync::{Arc, OnceLock};

use serde_json::Value;

/// A schema and its validator, compiled at registration or when first needed.
pub(crate) struct Schema {
    /// The schema, kept for a compile still to come.
    source: Value,
    /// The validator, or why the schema does not compile.
    validator: OnceLock<Result<jsonschema::Validator, String>>,
}

impl Schema {
    /// The schema `source`, compiled now unless it is plainly valid.
    ///
    /// # Errors
    /// Why the schema does not compile (a schema that is not plainly valid only).
    pub(crate) fn new(source: Value) -> Result<Self, String> {
        let validator = OnceLock::new();
        if !plainly_valid(&source) {
            let compiled = jsonschema::validator_for(&source).map_err(|e| e.to_string())?;
            let _ = validator.set(Ok(compiled));
        }
        Ok(Schema { source, validator })
    }

    /// The validator, compiled on the first use when registration left it for later.
    ///
    /// # Errors
    /// Why the schema does not compile (never for a plainly valid schema).
    pub(crate) fn validator(&self) -> Result<&jsonschema::Validator, &str> {
        self.validator
            .get_or_init(|| jsonschema::validator_for(&self.source).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(String::as_str)
    }

    /// Whether the compile is still to come.
    pub(crate) fn pending(&self) -> bool {
        self.validator.get().is_none()
    }
}

/// Compiles the `schemas` whose compile registration left for later, on a thread of their own,
/// so that the first calls do not wait for it (a call that comes first compiles its own).
pub(crate) fn warm(schemas: Vec<Arc<Schema>>) {
    if schemas.is_empty() {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("switchboard-schemas".into())
        .spawn(move || {
            for s in &schemas {
                let _ = s.validator();
            }
        });
    if let Err(e) = spawned {
        tracing::debug!(error = %e, "tool schemas will be compiled on their first use");
    }
}

/// The JSON Schema type names (`simpleTypes` of the meta-schema).
const TYPES: [&str; 7] = [
    "array", "boolean", "integer", "null", "number", "object", "string",
];

/// Whether `schema` is valid against the 2020-12 meta-schema and compiles, judged without the
/// meta-schema: only the keywords below, each with a value of the type the meta-schema asks
/// for (a `$schema`, a `$ref`, a `pattern` or any other keyword makes it not plainly valid).
pub(crate) fn plainly_valid(schema: &Value) -> bool {
    let map = match schema {
        Value::Bool(_) => return true,
        Value::Object(map) => map,
        _ => return false,
    };
    map.iter().all(|(key, value)| match key.as_str() {
        "type" => match value {
            Value::String(t) => TYPES.contains(&t.as_str()),
            Value::Array(ts) => {
                !ts.is_empty()
                    && unique_strings(ts)
                    && ts
                        .iter()
                        .all(|t| t.as_str().is_some_and(|t| TYPES.contains(&t)))
            }
            _ => false,
        },
        "properties" => value
            .as_object()
            .is_some_and(|props| props.values().all(plainly_valid)),
        "items" | "additionalProperties" | "not" => plainly_valid(value),
        "anyOf" | "oneOf" | "allOf" => value
            .as_array()
            .is_some_and(|all| !all.is_empty() && all.iter().all(plainly_valid)),
        "required" => value
            .as_array()
            .is_some_and(|names| names.iter().all(Value::is_string) && unique_strings(names)),
        "enum" | "examples" => value.is_array(),
        "const" | "default" => true,
        "title" | "description" | "format" | "$comment" => value.is_string(),
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => value.is_number(),
        "multipleOf" => value.as_f64().is_some_and(|m| m > 0.0),
        "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties" | "maxProperties" => {
            value.is_u64()
        }
        "uniqueItems" | "readOnly" | "writeOnly" | "deprecated" => value.is_boolean(),
        _ => false,
    })
}

/// Whether the strings among `values` are all different.
fn unique_strings(values: &[Value]) -> bool {
    let mut seen: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
    let n = seen.len();
    seen.sort_unstable();
    seen.dedup();
    seen.len() == n
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    /// Every schema judged plainly valid is valid against the meta-schema and compiles; the
    /// others are judged by the compile at registration.
    #[test]
    fn a_plainly_valid_schema_is_valid_and_compiles() {
        let plain = [
            json!({"type": "object"}),
            json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}),
            json!({"type": ["string", "null"], "description": "d", "title": "t", "default": null}),
            json!({"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "integer", "format": "int64", "minimum": 0}, "minItems": 1, "uniqueItems": true}}, "additionalProperties": false}),
            json!({"anyOf": [{"type": "string", "maxLength": 3}, {"enum": [1, "x", null]}], "examples": [1]}),
            json!({"oneOf": [true, {"const": 3}], "not": {"type": "boolean"}, "multipleOf": 0.5}),
            json!({"$comment": "c", "readOnly": true, "deprecated": false, "maxProperties": 2}),
            json!(true),
            json!({}),
        ];
        for s in plain {
            assert!(plainly_valid(&s), "{s}");
            assert!(jsonschema::meta::is_valid(&s), "{s}");
            assert!(jsonschema::validator_for(&s).is_ok(), "{s}");
        }
        let not_plain = [
            json!({"type": "strnig"}),
            json!({"type": []}),
            json!({"type": ["string", "string"]}),
            json!({"type": 5}),
            json!({"required": ["a", "a"]}),
            json!({"required": [1]}),
            json!({"properties": {"a": 1}}),
            json!({"anyOf": []}),
            json!({"minLength": -1}),
            json!({"minLength": 1.5}),
            json!({"multipleOf": 0}),
            json!({"pattern": "("}),
            json!({"$ref": "#/$defs/x"}),
            json!({"$schema": "http://json-schema.org/draft-07/schema#"}),
            json!({"nullable": true}),
            json!({"description": 3}),
            json!(3),
        ];
        for s in not_plain {
            assert!(!plainly_valid(&s), "{s}");
        }
    }

    /// A plainly valid schema is compiled when first needed; another is compiled at once, and
    /// an invalid one is refused at once.
    #[test]
    fn the_compile_of_a_plainly_valid_schema_waits_for_its_first_use() {
        let lazy = Schema::new(json!({"type": "object"})).unwrap();
        assert!(lazy.pending());
        assert!(lazy.validator().unwrap().is_valid(&json!({})));
        assert!(!lazy.pending());
        let eager =
            Schema::new(json!({"type": "object", "properties": {"s": {"pattern": "^a"}}})).unwrap();
        assert!(!eager.pending());
        assert!(Schema::new(json!({"type": "strnig"})).is_err());
        assert!(Schema::new(json!({"pattern": "("})).is_err());
    }
}
