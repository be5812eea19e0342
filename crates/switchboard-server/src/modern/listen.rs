//! `subscriptions/listen` (`[D26-67]`..`[D26-76]`): the server's open listen streams and the
//! change events they carry. A listen is a request whose handler first sends the
//! acknowledgement (the subset of the filter this server honours), then one notification per
//! matching event, each tagged with the listen's id, until the client goes away (the request
//! is cancelled: its future is dropped and the stream unregistered) or the server closes it
//! (the listen is then answered with its result).
//!
//! Task notifications are per subject: a stream is opened under the owner its listen request
//! would create tasks under (`tasks::owner_of`: the authenticated subject when the
//! transport authorized the request), and carries `notifications/tasks` only for tasks of that
//! owner, so naming another subject's task id in `taskIds` yields nothing (`[SEC-TK-1]`,
//! `[SEC-SH-10]`). List and resource changes concern every client alike.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use switchboard_tasks::Owner;
use switchboard_types::ServerCapabilities;
use switchboard_types::modern::SubscriptionFilter;
use tokio::sync::mpsc;

/// Default bound on listen streams open at once on one server.
pub(crate) const DEFAULT_MAX_LISTENERS: usize = 1024;
/// Events queued per listen stream; beyond, events for that stream are dropped (a list change
/// says only "fetch again", so the next one covers a dropped one).
pub(crate) const LISTENER_QUEUE: usize = 64;

/// A change a listen stream may carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Event {
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// `notifications/resources/updated` for this URI.
    ResourceUpdated(String),
    /// `notifications/tasks` for the task of this owner with this id, with its `DetailedTask`
    /// as JSON text.
    Task(Owner, String, String),
}

impl Event {
    /// Whether a stream opened by `owner` with filter `f` carries this event.
    fn wanted_by(&self, f: &SubscriptionFilter, owner: &Owner) -> bool {
        match self {
            Event::ToolsListChanged => f.tools_list_changed == Some(true),
            Event::PromptsListChanged => f.prompts_list_changed == Some(true),
            Event::ResourcesListChanged => f.resources_list_changed == Some(true),
            Event::ResourceUpdated(uri) => f
                .resource_subscriptions
                .as_ref()
                .is_some_and(|s| s.iter().any(|u| u == uri)),
            Event::Task(of, id, _) => {
                of == owner
                    && f.extra
                        .get(TASK_IDS)
                        .and_then(serde_json::Value::as_array)
                        .is_some_and(|ids| ids.iter().any(|i| i.as_str() == Some(id)))
            }
        }
    }
}

/// The listen-filter member of the tasks extension: the task ids to follow.
const TASK_IDS: &str = "taskIds";

/// The part of `asked` this server honours (`[D26-68]`): the types its capabilities declare,
/// and the task ids when it offers the tasks extension (`tasks`).
pub(crate) fn agreed(
    asked: &SubscriptionFilter,
    caps: &ServerCapabilities,
    tasks: bool,
) -> SubscriptionFilter {
    let yes = |asked: Option<bool>, offered: bool| (asked == Some(true) && offered).then_some(true);
    let list_changed = |b: Option<bool>| b == Some(true);
    SubscriptionFilter {
        tools_list_changed: yes(
            asked.tools_list_changed,
            caps.tools
                .as_ref()
                .is_some_and(|t| list_changed(t.list_changed)),
        ),
        prompts_list_changed: yes(
            asked.prompts_list_changed,
            caps.prompts
                .as_ref()
                .is_some_and(|p| list_changed(p.list_changed)),
        ),
        resources_list_changed: yes(
            asked.resources_list_changed,
            caps.resources
                .as_ref()
                .is_some_and(|r| list_changed(r.list_changed)),
        ),
        resource_subscriptions: asked
            .resource_subscriptions
            .clone()
            .filter(|_| caps.supports_resource_subscribe()),
        extra: asked
            .extra
            .get(TASK_IDS)
            .filter(|ids| ids.is_array() && tasks)
            .map(|ids| std::iter::once((TASK_IDS.to_owned(), ids.clone())).collect())
            .unwrap_or_default(),
    }
}

/// The open listen streams of one server.
#[derive(Debug)]
pub(crate) struct Listeners {
    open: Mutex<HashMap<u64, Stream>>,
    next: AtomicU64,
    max: usize,
}

/// What the server keeps of one open stream: its filter, whose it is, its queue.
#[derive(Debug)]
struct Stream {
    filter: SubscriptionFilter,
    owner: Owner,
    tx: mpsc::Sender<Event>,
}

/// One open listen stream; unregistered when dropped.
pub(crate) struct Listening {
    listeners: Arc<Listeners>,
    key: u64,
    pub(crate) events: mpsc::Receiver<Event>,
}

impl Drop for Listening {
    fn drop(&mut self) {
        if let Ok(mut open) = self.listeners.open.lock() {
            open.remove(&self.key);
        }
    }
}

impl Listeners {
    pub(crate) fn new(max: usize) -> Self {
        Listeners {
            open: Mutex::default(),
            next: AtomicU64::new(1),
            max,
        }
    }

    /// Opens a stream for `filter` on behalf of `owner`; `None` at the bound.
    pub(crate) fn open(
        self: &Arc<Self>,
        filter: SubscriptionFilter,
        owner: Owner,
    ) -> Option<Listening> {
        let mut open = self.open.lock().ok()?;
        if open.len() >= self.max {
            return None;
        }
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::channel(LISTENER_QUEUE);
        open.insert(key, Stream { filter, owner, tx });
        Some(Listening {
            listeners: self.clone(),
            key,
            events: rx,
        })
    }

    /// Hands `event` to every stream that asked for it; returns how many took it.
    pub(crate) fn publish(&self, event: &Event) -> usize {
        let Ok(open) = self.open.lock() else {
            return 0;
        };
        open.values()
            .filter(|s| event.wanted_by(&s.filter, &s.owner))
            .filter(|s| s.tx.try_send(event.clone()).is_ok())
            .count()
    }

    /// Ends every stream: each listen is answered with its result.
    pub(crate) fn close_all(&self) {
        if let Ok(mut open) = self.open.lock() {
            open.clear();
        }
    }

    /// How many streams are open.
    pub(crate) fn count(&self) -> usize {
        self.open.lock().map(|o| o.len()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn d26_68_d26_69_only_what_was_asked_and_is_offered() {
        let caps: ServerCapabilities = serde_json::from_value(
            serde_json::json!({"tools": {"listChanged": true}, "resources": {}}),
        )
        .unwrap();
        let asked = SubscriptionFilter {
            tools_list_changed: Some(true),
            prompts_list_changed: Some(true),
            resource_subscriptions: Some(vec!["a://x".into()]),
            ..Default::default()
        };
        let agreed = agreed(&asked, &caps, false);
        assert_eq!(agreed.tools_list_changed, Some(true));
        assert_eq!(agreed.prompts_list_changed, None, "no prompts");
        assert_eq!(
            agreed.resource_subscriptions, None,
            "no resources.subscribe"
        );
        let l = Arc::new(Listeners::new(1));
        let mut s = l.open(agreed, Owner::new("modern")).unwrap();
        assert!(
            l.open(SubscriptionFilter::default(), Owner::new("modern"))
                .is_none(),
            "bound"
        );
        assert_eq!(l.publish(&Event::PromptsListChanged), 0);
        assert_eq!(l.publish(&Event::ToolsListChanged), 1);
        assert_eq!(s.events.try_recv().unwrap(), Event::ToolsListChanged);
        drop(s);
        assert_eq!(l.count(), 0);
    }

    #[test]
    fn a_stream_that_does_not_read_loses_events_not_memory() {
        let l = Arc::new(Listeners::new(4));
        let _s = l.open(
            SubscriptionFilter {
                tools_list_changed: Some(true),
                ..Default::default()
            },
            Owner::new("modern"),
        );
        let taken: usize = (0..LISTENER_QUEUE * 3)
            .map(|_| l.publish(&Event::ToolsListChanged))
            .sum();
        assert_eq!(taken, LISTENER_QUEUE);
    }

    #[test]
    fn sec_tk_1_task_notifications_reach_only_their_owner() {
        let follow = |ids: &[&str]| SubscriptionFilter {
            tools_list_changed: Some(true),
            extra: std::iter::once((TASK_IDS.to_owned(), serde_json::json!(ids))).collect(),
            ..Default::default()
        };
        let alice = Owner::new("modern|http://as|alice");
        let bob = Owner::new("modern|http://as|bob");
        let l = Arc::new(Listeners::new(4));
        let mut a = l.open(follow(&["t-a"]), alice.clone()).unwrap();
        // Bob names alice's task id: he still hears nothing of it.
        let mut b = l.open(follow(&["t-a", "t-b"]), bob.clone()).unwrap();
        let of_alice = Event::Task(alice.clone(), "t-a".into(), "{}".into());
        assert_eq!(l.publish(&of_alice), 1);
        assert_eq!(a.events.try_recv().unwrap(), of_alice);
        assert!(b.events.try_recv().is_err(), "another subject's task");
        let of_bob = Event::Task(bob.clone(), "t-b".into(), "{}".into());
        assert_eq!(l.publish(&of_bob), 1);
        assert_eq!(b.events.try_recv().unwrap(), of_bob);
        // A task of bob's that has the id alice follows reaches bob, who follows it too, and
        // not alice.
        let bobs_t_a = Event::Task(bob, "t-a".into(), "{}".into());
        assert_eq!(l.publish(&bobs_t_a), 1);
        assert_eq!(b.events.try_recv().unwrap(), bobs_t_a);
        assert!(a.events.try_recv().is_err());
        // List changes are for everyone.
        assert_eq!(l.publish(&Event::ToolsListChanged), 2);
    }
}
