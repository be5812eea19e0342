//! Completion providers for `completion/complete` (SPEC-NOTES §8.5), keyed by reference and
//! argument name. Results carry at most 100 values, with `total` and `hasMore`.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

/// At most this many values are returned (spec).
pub(crate) const MAX_COMPLETION_VALUES: usize = 100;

/// What a completion provider gets.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CompletionQuery {
    /// The partial value being typed.
    pub value: String,
    /// Arguments already resolved (`context.arguments`, 2025-06-18+).
    pub context: BTreeMap<String, String>,
}

/// A provider: all matches for a query, in relevance order (truncation is done for it).
pub type CompletionProvider = Arc<dyn Fn(&CompletionQuery) -> Vec<String> + Send + Sync>;

/// Which reference a provider completes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CompletionTarget {
    /// An argument of a prompt, by prompt name.
    Prompt(String),
    /// A variable of a resource template, by `uriTemplate`.
    ResourceTemplate(String),
}

/// The completion providers of a server.
#[derive(Clone, Default)]
pub(crate) struct CompletionRegistry {
    providers: HashMap<(CompletionTarget, String), CompletionProvider>,
}

impl fmt::Debug for CompletionRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompletionRegistry")
            .field("providers", &self.providers.len())
            .finish()
    }
}

impl CompletionRegistry {
    /// Registers a provider for `argument` of `target` (replacing an earlier one).
    pub(crate) fn insert(
        &mut self,
        target: CompletionTarget,
        argument: impl Into<String>,
        provider: CompletionProvider,
    ) {
        self.providers.insert((target, argument.into()), provider);
    }

    /// Whether no provider is registered.
    pub(crate) fn is_empty(&self) -> bool {
        self.providers.is_empty()
    }

    /// Completes; `None` when no provider covers this target and argument.
    pub(crate) fn complete(
        &self,
        target: CompletionTarget,
        argument: &str,
        query: &CompletionQuery,
    ) -> Option<(Vec<String>, usize)> {
        let provider = self.providers.get(&(target, argument.to_owned()))?;
        let mut all = provider(query);
        let total = all.len();
        all.truncate(MAX_COMPLETION_VALUES);
        Some((all, total))
    }
}

/// A provider over a fixed list: case-sensitive prefix match, in list order.
pub fn prefix_matches<I, S>(candidates: I) -> CompletionProvider
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let list: Vec<String> = candidates.into_iter().map(Into::into).collect();
    Arc::new(move |q| {
        list.iter()
            .filter(|c| c.starts_with(&q.value))
            .cloned()
            .collect()
    })
}
