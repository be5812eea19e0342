//! # switchboard-test-support
//!
//! Shared test helpers (`publish = false`).
//!
//! | item | role |
//! |---|---|
//! | [`shared_dir`] | finds the project's `shared/` folder (beside the checkout, or `SWITCHBOARD_SHARED_DIR`) |
//! | [`Schemas`] | the official `schema.json` of one revision, compiled; validates a type or a whole frame |
//! | [`result_def_for`] | which schema type answers which method |
//! | [`redis_server`] | a real `redis-server` on a free 127.0.0.1 port (stop, restart with its data, a password) |
//! | `dpop` | (feature `oauth`) DPoP proofs made by hand: an ES256 key, its JWK and thumbprint, proofs whose every part a test may forge |
//! | `issuer` | (feature `oauth`) a test OAuth issuer: keys, metadata and JWKS on 127.0.0.1, access tokens and hostile tokens |
//! | `server` | (feature `server`) the test server the HTTP crates share (`echo`, `chatty`, `slow`, `sample`), each tool's handler public |
//! | `logs` | (feature `logs`) counting the bytes logged on the test's thread, for tests that bound the log a peer can cause |
//! | `wait` | (feature `wait`) waiting for an event: a bounded poll of a condition with a generous deadline, instead of a fixed sleep |
//!
//! The schemas are read from `../shared/spec/schema/<version>/schema.json` and never copied into the repo.

#[cfg(feature = "oauth")]
pub mod dpop;
#[cfg(feature = "oauth")]
pub mod issuer;
#[cfg(feature = "logs")]
pub mod logs;
pub mod redis_server;
#[cfg(feature = "server")]
pub mod server;
#[cfg(feature = "wait")]
pub mod wait;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Value, json};
use switchboard_types::catalogue::{self, CallTool, CreateMessage, Elicit, Method};
use switchboard_types::methods;

/// The `shared/` folder: `$SWITCHBOARD_SHARED_DIR`, or `shared/` beside the workspace root.
///
/// # Panics
/// When neither exists: a test that needs the schemas must fail loudly, never skip.
pub fn shared_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("SWITCHBOARD_SHARED_DIR") {
        return PathBuf::from(dir);
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    // crates/switchboard-test-support -> workspace root -> its parent.
    let root = manifest
        .parent()
        .and_then(Path::parent)
        .expect("workspace root");
    let candidate = root
        .parent()
        .expect("parent of the workspace")
        .join("shared");
    assert!(
        candidate.join("spec/schema").is_dir(),
        "shared/spec/schema not found at {} (set SWITCHBOARD_SHARED_DIR)",
        candidate.display()
    );
    candidate
}

/// The schema type of the result that answers `method` (from the method catalogue), or `None`
/// for a method the catalogue does not know.
pub fn result_def_for(method: &str) -> Option<&'static str> {
    catalogue::request(method).and_then(|s| s.result_type)
}

/// The official JSON Schema of one protocol revision, with compiled validators per type.
pub struct Schemas {
    version: String,
    doc: Value,
    defs_key: &'static str,
    by_method: HashMap<String, String>,
    compiled: Mutex<HashMap<String, Arc<jsonschema::Validator>>>,
}

impl std::fmt::Debug for Schemas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Schemas")
            .field("version", &self.version)
            .finish()
    }
}

impl Schemas {
    /// Loads (once per process) the schema of `version`, e.g. `"2025-11-25"`.
    ///
    /// # Panics
    /// When the file is missing or not JSON.
    pub fn get(version: &str) -> &'static Schemas {
        static ALL: OnceLock<Mutex<HashMap<String, &'static Schemas>>> = OnceLock::new();
        let mut all = ALL
            .get_or_init(Default::default)
            .lock()
            .expect("schema cache");
        if let Some(s) = all.get(version) {
            return s;
        }
        let loaded: &'static Schemas = Box::leak(Box::new(Schemas::load(version)));
        all.insert(version.to_owned(), loaded);
        loaded
    }

    fn load(version: &str) -> Schemas {
        let path = shared_dir()
            .join("spec/schema")
            .join(version)
            .join("schema.json");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        let doc: Value = serde_json::from_str(&text).expect("schema.json is JSON");
        let defs_key = if doc.get("$defs").is_some() {
            "$defs"
        } else {
            "definitions"
        };
        let mut by_method = HashMap::new();
        if let Some(defs) = doc[defs_key].as_object() {
            for (name, def) in defs {
                if let Some(m) = def
                    .pointer("/properties/method/const")
                    .and_then(Value::as_str)
                {
                    by_method.insert(m.to_owned(), name.clone());
                }
            }
        }
        Schemas {
            version: version.to_owned(),
            doc,
            defs_key,
            by_method,
            compiled: Mutex::new(HashMap::new()),
        }
    }

    /// The revision this schema describes.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Every type the schema defines, by name (`$defs`, or `definitions` in older revisions).
    ///
    /// # Panics
    /// When the schema has neither.
    pub fn defs(&self) -> &serde_json::Map<String, Value> {
        self.doc[self.defs_key]
            .as_object()
            .expect("the schema's defs")
    }

    /// Whether the schema defines a type called `def`.
    pub fn has_def(&self, def: &str) -> bool {
        self.doc[self.defs_key].get(def).is_some()
    }

    /// The schema type of the request or notification named `method` (e.g. `CallToolRequest`).
    pub fn def_for_method(&self, method: &str) -> Option<&str> {
        self.by_method.get(method).map(String::as_str)
    }

    fn validator(&self, def: &str) -> Arc<jsonschema::Validator> {
        let mut cache = self.compiled.lock().expect("validator cache");
        if let Some(v) = cache.get(def) {
            return v.clone();
        }
        assert!(
            self.has_def(def),
            "schema {} has no type {def}",
            self.version
        );
        let mut root = self.doc.clone();
        let obj = root.as_object_mut().expect("schema is an object");
        obj.insert("$ref".into(), json!(format!("#/{}/{def}", self.defs_key)));
        let v = Arc::new(jsonschema::validator_for(&root).expect("schema compiles"));
        cache.insert(def.to_owned(), v.clone());
        v
    }

    /// Validates `instance` against the type `def`.
    ///
    /// # Errors
    /// Every violation, one line each, with its instance path.
    pub fn validate_def(&self, def: &str, instance: &Value) -> Result<(), String> {
        let v = self.validator(def);
        let errors: Vec<String> = v
            .iter_errors(instance)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "{} {def}: {}\ninstance: {instance}",
                self.version,
                errors.join("; ")
            ))
        }
    }

    /// Validates one JSON-RPC frame as precisely as the schema allows: the envelope against
    /// `JSONRPCMessage`, a request or notification against its method's own type, and a result
    /// against the type that answers `answering` (the method of the request it answers).
    ///
    /// # Errors
    /// Every violation found, or a frame whose method the schema does not define.
    ///
    /// Extensions are validated as the official conformance suite validates them: the schema
    /// of a revision describes its core protocol only, so a message of an extension the
    /// revision knows of (the 2026-07-28 tasks extension: its methods, its notification, a
    /// result whose `resultType` is `task`, an answer to one of its requests) is checked as a
    /// JSON-RPC message only.
    pub fn validate_frame(&self, frame: &Value, answering: Option<&str>) -> Result<(), String> {
        self.validate_def("JSONRPCMessage", frame)?;
        let modern = self.has_def("InputRequiredResult");
        let extension = |method: &str| modern && methods::TASKS_EXTENSION_METHODS.contains(&method);
        if let Some(method) = frame.get("method").and_then(Value::as_str) {
            if self.def_for_method(method).is_none() && extension(method) {
                return Ok(());
            }
            let def = self
                .def_for_method(method)
                .ok_or_else(|| format!("{}: no schema type for method {method}", self.version))?;
            // Older schemas describe only `method` and `params`; 2025-11-25 includes the envelope.
            // No schema forbids extra members, so the whole frame is validated in both cases.
            return self.validate_def(def, frame);
        }
        if let (Some(result), Some(method)) = (frame.get("result"), answering) {
            if modern
                && (extension(method)
                    || result.get("resultType").and_then(Value::as_str) == Some("task"))
            {
                return Ok(());
            }
            if result.get("resultType").and_then(Value::as_str) == Some("input_required")
                && self.has_def("InputRequiredResult")
            {
                return self.validate_def("InputRequiredResult", result);
            }
            if let Some(def) = result_def_for(method) {
                // A task-augmented request (tools/call, sampling/createMessage,
                // elicitation/create) is answered by a CreateTaskResult.
                let augmentable = [CallTool::NAME, CreateMessage::NAME, Elicit::NAME];
                if augmentable.contains(&method)
                    && result.get("task").is_some()
                    && self.has_def("CreateTaskResult")
                {
                    return self.validate_def("CreateTaskResult", result);
                }
                return self.validate_def(def, result);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_types::methods;

    #[test]
    fn every_revision_loads_and_knows_its_methods() {
        for v in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
            let s = Schemas::get(v);
            assert_eq!(
                s.def_for_method(methods::TOOLS_CALL),
                Some("CallToolRequest"),
                "{v}"
            );
            assert_eq!(
                s.def_for_method(methods::NOTIFICATIONS_INITIALIZED),
                Some("InitializedNotification")
            );
        }
    }

    #[test]
    fn a_bad_frame_is_rejected() {
        let s = Schemas::get("2025-11-25");
        let bad = json!({"jsonrpc":"2.0","id":1,"method":methods::TOOLS_CALL,"params":{}});
        assert!(
            s.validate_frame(&bad, None).is_err(),
            "tools/call without name must fail"
        );
        let good =
            json!({"jsonrpc":"2.0","id":1,"method":methods::TOOLS_CALL,"params":{"name":"add"}});
        assert_eq!(s.validate_frame(&good, None), Ok(()));
        let bad_result = json!({"jsonrpc":"2.0","id":1,"result":{"content":"5"}});
        assert!(
            s.validate_frame(&bad_result, Some(methods::TOOLS_CALL))
                .is_err()
        );
    }
}
