//! Client side: the list caches (tools, resources, resource templates, prompts) and their change
//! generations, bumped by `notifications/*/list_changed`. Listing itself is in `listing`.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64};

use switchboard_types::catalogue::{
    ListPrompts, ListResourceTemplates, ListResources, ListTools, Method, PromptListChanged,
    ResourceListChanged, ToolListChanged,
};
use switchboard_types::prompts::Prompt;
use switchboard_types::resources::{Resource, ResourceTemplate};
use switchboard_types::tools::Tool;
use tokio::sync::watch;

use crate::error::ClientError;

/// One of the server's lists the client caches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ListKind {
    /// `tools/list`; changed by `notifications/tools/list_changed`.
    Tools,
    /// `resources/list`; changed by `notifications/resources/list_changed`.
    Resources,
    /// `resources/templates/list`; also changed by `notifications/resources/list_changed`.
    ResourceTemplates,
    /// `prompts/list`; changed by `notifications/prompts/list_changed`.
    Prompts,
}

impl ListKind {
    /// The list method.
    pub const fn method(self) -> &'static str {
        match self {
            ListKind::Tools => ListTools::NAME,
            ListKind::Resources => ListResources::NAME,
            ListKind::ResourceTemplates => ListResourceTemplates::NAME,
            ListKind::Prompts => ListPrompts::NAME,
        }
    }

    /// Whether `notification` is a `list_changed` of one of the cached lists.
    pub(crate) fn changes_a_list(notification: &str) -> bool {
        !Self::changed_by(notification).is_empty()
    }

    /// The lists a `list_changed` notification invalidates.
    pub(crate) fn changed_by(notification: &str) -> &'static [ListKind] {
        if notification == ToolListChanged::NAME {
            &[ListKind::Tools]
        } else if notification == ResourceListChanged::NAME {
            &[ListKind::Resources, ListKind::ResourceTemplates]
        } else if notification == PromptListChanged::NAME {
            &[ListKind::Prompts]
        } else {
            &[]
        }
    }
}

/// The outcome of the latest completed listing, for waiters in auto-refresh mode.
#[derive(Debug, Clone, Default)]
pub(crate) struct Refreshed {
    /// The change generation the cache reflects.
    pub(crate) generation: u64,
    /// The error of the latest failed background refresh, until a listing succeeds.
    pub(crate) error: Option<ClientError>,
}

/// One cached list and its change generation.
pub(crate) struct ListCache<T> {
    /// Bumped by each `list_changed` notification for this list.
    pub(crate) changes: watch::Sender<u64>,
    /// The generation the latest listing started at.
    pub(crate) seen: AtomicU64,
    /// The list and the generation it reflects.
    items: Mutex<Option<(u64, Vec<T>)>>,
    pub(crate) refreshed: watch::Sender<Refreshed>,
    /// A background refresh is running.
    pub(crate) refreshing: AtomicBool,
}

impl<T> Default for ListCache<T> {
    fn default() -> Self {
        ListCache {
            changes: watch::channel(0).0,
            seen: AtomicU64::new(0),
            items: Mutex::new(None),
            refreshed: watch::channel(Refreshed::default()).0,
            refreshing: AtomicBool::new(false),
        }
    }
}

impl<T: Clone> ListCache<T> {
    /// The cached list, if one was listed.
    pub(crate) fn items(&self) -> Option<Vec<T>> {
        self.items
            .lock()
            .ok()
            .and_then(|c| c.as_ref().map(|(_, v)| v.clone()))
    }

    pub(crate) fn generation(&self) -> u64 {
        *self.changes.borrow()
    }

    pub(crate) fn is_populated(&self) -> bool {
        self.items.lock().is_ok_and(|c| c.is_some())
    }

    /// Keeps `items` unless a listing that started later has already been stored.
    pub(crate) fn store(&self, generation: u64, items: Vec<T>) {
        if let Ok(mut c) = self.items.lock()
            && c.as_ref().is_none_or(|(g, _)| *g <= generation)
        {
            *c = Some((generation, items));
        }
        self.refreshed.send_modify(|r| {
            r.generation = r.generation.max(generation);
            r.error = None;
        });
    }
}

/// The cached lists, one per [`ListKind`].
#[derive(Default)]
pub(crate) struct Lists {
    pub(crate) tools: ListCache<Tool>,
    pub(crate) resources: ListCache<Resource>,
    pub(crate) templates: ListCache<ResourceTemplate>,
    pub(crate) prompts: ListCache<Prompt>,
}
