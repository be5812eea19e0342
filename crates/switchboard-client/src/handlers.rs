//! Client side: the handlers a client installs for the server's requests (`sampling/createMessage`,
//! `elicitation/create`, `roots/list`), its callbacks for server notifications
//! (`notifications/message`, `notifications/elicitation/complete`), and the capabilities they
//! declare. `answer` runs them, for a 2025 server's request (routed by `router`) or an input
//! request.
//!
//! Handlers are async closures returning `Result<result type, ErrorObject>`; an `Err` is sent as
//! the wire error, and a panic becomes -32603 (the engine catches it; the session lives on).

use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use switchboard_jsonrpc::{BoxFuture, RequestContext};
use switchboard_types::ErrorObject;
use switchboard_types::capabilities::{ClientCapabilities, ElicitationCapability, RootsCapability};
use switchboard_types::elicitation::{
    ElicitRequestParams, ElicitResult, ElicitationCompleteNotificationParams,
};
use switchboard_types::logging::LoggingMessageNotificationParams;
use switchboard_types::meta::EmptyObject;
use switchboard_types::roots::Root;
use switchboard_types::sampling::{CreateMessageRequestParams, CreateMessageResult};

/// What a request handler returns: the typed result, or the wire error to answer with.
pub type HandlerFuture<R> = BoxFuture<Result<R, ErrorObject>>;

pub(crate) type SamplingFn = Arc<
    dyn Fn(CreateMessageRequestParams, RequestContext) -> HandlerFuture<CreateMessageResult>
        + Send
        + Sync,
>;
pub(crate) type ElicitationFn =
    Arc<dyn Fn(ElicitRequestParams, RequestContext) -> HandlerFuture<ElicitResult> + Send + Sync>;
pub(crate) type RootsFn = Arc<dyn Fn(RequestContext) -> HandlerFuture<Vec<Root>> + Send + Sync>;
pub(crate) type LogFn = Arc<dyn Fn(LoggingMessageNotificationParams) + Send + Sync>;
pub(crate) type ElicitationCompleteFn =
    Arc<dyn Fn(ElicitationCompleteNotificationParams) + Send + Sync>;

/// Boxes an async closure of one argument plus the request context.
pub(crate) fn boxed<P, R, F, Fut>(
    f: F,
) -> Arc<dyn Fn(P, RequestContext) -> HandlerFuture<R> + Send + Sync>
where
    F: Fn(P, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, ErrorObject>> + Send + 'static,
    P: 'static,
    R: 'static,
{
    Arc::new(move |p, cx| Box::pin(f(p, cx)))
}

/// Which elicitation modes a client with an elicitation handler declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ElicitationModes {
    pub(crate) form: bool,
    pub(crate) url: bool,
}

/// Everything installed on the builder for the server's requests and notifications.
#[derive(Clone)]
pub(crate) struct Handlers {
    pub(crate) sampling: Option<SamplingFn>,
    pub(crate) elicitation: Option<ElicitationFn>,
    pub(crate) elicitation_modes: ElicitationModes,
    pub(crate) roots_provider: Option<RootsFn>,
    /// `Some` when the builder was given a root list.
    pub(crate) roots: Option<Vec<Root>>,
    pub(crate) on_log: Option<LogFn>,
    pub(crate) on_elicitation_complete: Option<ElicitationCompleteFn>,
}

impl Default for Handlers {
    fn default() -> Self {
        Handlers {
            sampling: None,
            elicitation: None,
            elicitation_modes: ElicitationModes {
                form: true,
                url: false,
            },
            roots_provider: None,
            roots: None,
            on_log: None,
            on_elicitation_complete: None,
        }
    }
}

impl fmt::Debug for Handlers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handlers")
            .field("sampling", &self.sampling.is_some())
            .field("elicitation", &self.elicitation.is_some())
            .field("elicitation_modes", &self.elicitation_modes)
            .field("roots_provider", &self.roots_provider.is_some())
            .field("roots", &self.roots)
            .field("on_log", &self.on_log.is_some())
            .field(
                "on_elicitation_complete",
                &self.on_elicitation_complete.is_some(),
            )
            .finish()
    }
}

impl Handlers {
    /// The capabilities the installed handlers declare; `explicit` members win (`[CP-2]`).
    pub(crate) fn effective_capabilities(
        &self,
        explicit: &ClientCapabilities,
    ) -> ClientCapabilities {
        let mut caps = explicit.clone();
        if caps.sampling.is_none() && self.sampling.is_some() {
            caps.sampling = Some(Default::default());
        }
        if caps.elicitation.is_none() && self.elicitation.is_some() {
            let ElicitationModes { form, url } = self.elicitation_modes;
            // `{}` alone means form only (`[CP-4]`), and is the only shape 2025-06-18 knows.
            caps.elicitation = Some(if url {
                ElicitationCapability {
                    form: form.then(EmptyObject::default),
                    url: Some(EmptyObject::default()),
                    ..Default::default()
                }
            } else {
                ElicitationCapability::default()
            });
        }
        if caps.roots.is_none() && (self.roots_provider.is_some() || self.roots.is_some()) {
            caps.roots = Some(RootsCapability {
                list_changed: Some(true),
                ..Default::default()
            });
        }
        caps
    }
}

/// URL-mode elicitation ids the server may still complete (`[EL-9]`: others are ignored).
#[derive(Debug, Default)]
pub(crate) struct PendingElicitations {
    order: VecDeque<String>,
    ids: HashSet<String>,
    bytes: usize,
}

/// How many URL elicitation ids are remembered; the oldest is forgotten first.
const MAX_PENDING_ELICITATIONS: usize = 256;

/// How many bytes of URL elicitation ids are remembered in all; the oldest is forgotten first,
/// and an id longer than this is not remembered (its completion notice is ignored).
const MAX_PENDING_ELICITATION_BYTES: usize = 64 * 1024;

impl PendingElicitations {
    pub(crate) fn insert(&mut self, id: String) {
        if self.ids.contains(&id) || id.len() > MAX_PENDING_ELICITATION_BYTES {
            return;
        }
        while self.order.len() == MAX_PENDING_ELICITATIONS
            || self.bytes + id.len() > MAX_PENDING_ELICITATION_BYTES
        {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            self.bytes -= old.len();
            self.ids.remove(&old);
        }
        self.bytes += id.len();
        self.ids.insert(id.clone());
        self.order.push_back(id);
    }

    /// Forgets `id`; whether it was pending.
    pub(crate) fn remove(&mut self, id: &str) -> bool {
        if self.ids.remove(id) {
            self.order.retain(|i| i != id);
            self.bytes -= id.len();
            true
        } else {
            false
        }
    }
}

/// Runs a user callback; a panic is logged, never allowed to end the session loop.
pub(crate) fn run_callback(what: &str, f: impl FnOnce()) {
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err() {
        tracing::error!(callback = what, "client callback panicked");
    }
}

/// The first root that is not a `file://` URI (`[RO-1]`) or climbs out with a `..` segment
/// (`[RO-3]`, `[SEC-RES-1]`), and why.
pub(crate) fn refused_root(roots: &[Root]) -> Option<(&Root, &'static str)> {
    roots.iter().find_map(|r| {
        let Some(path) = r.uri.strip_prefix("file://") else {
            return Some((r, "not a file:// URI"));
        };
        let path = path.split(['?', '#']).next().unwrap_or_default();
        path.split('/')
            .any(|seg| seg == ".." || seg.eq_ignore_ascii_case("%2e%2e"))
            .then_some((r, "a '..' path segment (path traversal)"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn el_9_pending_url_elicitations_are_bounded_by_count_and_bytes() {
        let mut p = PendingElicitations::default();
        for i in 0..=MAX_PENDING_ELICITATIONS {
            p.insert(format!("e{i}"));
        }
        assert_eq!(p.order.len(), MAX_PENDING_ELICITATIONS);
        assert!(!p.remove("e0"), "the oldest is forgotten");
        assert!(p.remove("e1"));
        assert!(!p.remove("e1"), "a completion is taken once");
        // By bytes: a few long ids push the short ones out, and the total stays under the bound.
        let long = |c: char| c.to_string().repeat(MAX_PENDING_ELICITATION_BYTES / 4);
        for c in ['a', 'b', 'c', 'd', 'f'] {
            p.insert(long(c));
        }
        assert!(p.bytes <= MAX_PENDING_ELICITATION_BYTES, "{}", p.bytes);
        assert!(!p.remove(&long('a')), "the oldest long id went");
        assert!(p.remove(&long('f')));
        // An id over the whole bound is never kept; what was kept stays.
        p.insert("x".repeat(MAX_PENDING_ELICITATION_BYTES + 1));
        assert!(!p.remove(&"x".repeat(MAX_PENDING_ELICITATION_BYTES + 1)));
        assert!(p.remove(&long('d')));
        assert_eq!(p.bytes, p.order.iter().map(String::len).sum::<usize>());
    }
}
