//! Prompts: registration, listing, and `prompts/get` with argument validation (SPEC-NOTES §11.4).

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use switchboard_jsonrpc::BoxFuture;
use switchboard_types::prompts::{GetPromptResult, Prompt};
use switchboard_types::{ErrorCode, ErrorObject};

use crate::context::Context;
use crate::tool::RegistryError;

/// What a prompt handler gets.
#[derive(Debug)]
#[non_exhaustive]
pub struct PromptGet {
    /// The prompt name.
    pub name: String,
    /// The arguments (every required one is present).
    pub arguments: BTreeMap<String, String>,
    /// The request's context.
    pub cx: Context,
}

/// A boxed prompt handler.
pub(crate) type PromptHandler =
    Arc<dyn Fn(PromptGet) -> BoxFuture<Result<GetPromptResult, ErrorObject>> + Send + Sync>;

#[derive(Clone)]
pub(crate) struct PromptEntry {
    pub(crate) prompt: Prompt,
    pub(crate) handler: PromptHandler,
}

/// The prompts of a server, listed in registration order.
#[derive(Clone, Default)]
pub(crate) struct PromptRegistry {
    order: Vec<String>,
    prompts: HashMap<String, PromptEntry>,
}

impl fmt::Debug for PromptRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PromptRegistry")
            .field("prompts", &self.order)
            .finish()
    }
}

impl PromptRegistry {
    /// Adds a prompt.
    ///
    /// # Errors
    /// A duplicate name.
    pub(crate) fn insert<F, Fut>(&mut self, prompt: Prompt, handler: F) -> Result<(), RegistryError>
    where
        F: Fn(PromptGet) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, ErrorObject>> + Send + 'static,
    {
        if self.prompts.contains_key(&prompt.name) {
            return Err(RegistryError::Duplicate {
                kind: "prompt",
                name: prompt.name,
            });
        }
        self.order.push(prompt.name.clone());
        let handler: PromptHandler = Arc::new(move |g| Box::pin(handler(g)));
        self.prompts
            .insert(prompt.name.clone(), PromptEntry { prompt, handler });
        Ok(())
    }

    /// Removes a prompt.
    ///
    /// # Errors
    /// No prompt has this name.
    pub(crate) fn remove(&mut self, name: &str) -> Result<(), RegistryError> {
        self.prompts
            .remove(name)
            .ok_or_else(|| RegistryError::NotFound {
                kind: "prompt",
                name: name.to_owned(),
            })?;
        self.order.retain(|n| n != name);
        Ok(())
    }

    /// Whether no prompt is registered.
    pub(crate) fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Whether a prompt has this name.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.prompts.contains_key(name)
    }

    /// The prompts, in registration order.
    pub(crate) fn list(&self) -> Vec<Prompt> {
        self.order
            .iter()
            .filter_map(|n| self.prompts.get(n))
            .map(|e| e.prompt.clone())
            .collect()
    }

    pub(crate) fn get(&self, name: &str) -> Option<PromptEntry> {
        self.prompts.get(name).cloned()
    }
}

/// -32602 for an unknown prompt; the name is cut by [`echo`](switchboard_types::error::echo).
pub(crate) fn unknown_prompt(name: &str) -> ErrorObject {
    let name = switchboard_types::error::echo(name);
    ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("Unknown prompt: {name}"))
        .with_data(serde_json::json!({"reason": "unknown_prompt", "prompt": name}))
}

/// Checks that every required argument is present: -32602 naming the missing ones.
pub(crate) fn check_arguments(
    prompt: &Prompt,
    args: &BTreeMap<String, String>,
) -> Result<(), ErrorObject> {
    let missing: Vec<&str> = prompt
        .arguments
        .iter()
        .flatten()
        .filter(|a| a.required == Some(true) && !args.contains_key(&a.name))
        .map(|a| a.name.as_str())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(ErrorObject::new(
        ErrorCode::INVALID_PARAMS,
        format!("Missing required argument(s) for prompt {}: {}", prompt.name, missing.join(", ")),
    )
    .with_data(serde_json::json!({"reason": "missing_arguments", "prompt": prompt.name, "missing": missing})))
}
