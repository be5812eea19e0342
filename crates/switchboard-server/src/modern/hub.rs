//! The state of the tasks extension (2026-07-28) that a request and its server share: a
//! request's [`TaskSlot`] (whether it may become a task, the task it runs as), and the server's
//! [`TaskHub`] (the store, the work running here and its outstanding input requests, the listen
//! streams told of task changes). The extension's behaviour is [`super::tasks`].

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Map, Value};
use switchboard_tasks::{Owner, TaskStore};
use switchboard_types::modern::InputRequest;
use tokio::sync::oneshot;
use tokio::task::AbortHandle;

use super::finish::ResultMembers;
use super::listen::Listeners;

/// The owner of every task a modern request creates (see the module docs).
pub(crate) const MODERN_OWNER: &str = "modern";

/// How a call may become a task, decided before its handler runs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plan {
    /// The tool requires a task: a result reached in the foreground is kept in one too.
    pub(crate) required: bool,
}

/// The task side of one modern request (part of its [`ModernCall`]).
#[derive(Debug, Default)]
pub(crate) struct TaskSlot {
    pub(crate) plan: OnceLock<Plan>,
    pub(crate) running: OnceLock<Arc<Running>>,
    /// Whose task it would be ([`owner_of`] the request); [`MODERN_OWNER`] when unset.
    pub(crate) owner: OnceLock<Owner>,
    /// Set by [`Context::defer_task`](crate::Context::defer_task): the handler's waits do not
    /// make the call a task, only [`Context::run_as_task`](crate::Context::run_as_task) does.
    pub(crate) deferred: AtomicBool,
}

impl TaskSlot {
    /// Whether the request would become a task if its handler waits now.
    pub(crate) fn may_start(&self) -> bool {
        self.plan.get().is_some() && self.running.get().is_none()
    }

    /// Whether the request becomes a task if its handler waits now (it may start, and its
    /// handler did not defer that to `run_as_task`).
    pub(crate) fn starts_on_wait(&self) -> bool {
        self.may_start() && !self.deferred.load(Ordering::Acquire)
    }

    /// Whether the request runs as a task now.
    pub(crate) fn is_running(&self) -> bool {
        self.running.get().is_some()
    }

    pub(crate) fn running(&self) -> Option<&Arc<Running>> {
        self.running.get()
    }

    /// Sets whose task this request would create (once).
    pub(crate) fn set_owner(&self, owner: Owner) {
        let _ = self.owner.set(owner);
    }

    pub(crate) fn owner(&self) -> Owner {
        self.owner
            .get()
            .cloned()
            .unwrap_or_else(|| Owner::new(MODERN_OWNER))
    }
}

/// What the modern tasks need of their server: the task store, the work running here, the
/// listen streams told of task changes, and the members this revision adds to results.
#[derive(Debug)]
pub(crate) struct TaskHub {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) work: ModernTasks,
    pub(crate) listeners: Arc<Listeners>,
    pub(crate) results: Arc<ResultMembers>,
}

/// A task whose work runs in this process.
pub(crate) struct Running {
    pub(crate) id: String,
    pub(crate) owner: Owner,
    pub(crate) server: Arc<TaskHub>,
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running").field("id", &self.id).finish()
    }
}

/// What a running task asked the client for and has not had answered yet.
#[derive(Debug, Default)]
pub(crate) struct Inputs {
    pub(crate) outstanding: BTreeMap<String, (InputRequest, oneshot::Sender<Value>)>,
    /// Every key handed out in the task's lifetime (`[D26-138]`: never reused).
    pub(crate) issued: HashSet<String>,
}

/// The modern tasks whose work runs in this process: their outstanding input requests and the
/// handles that stop their work.
#[derive(Debug, Default)]
pub(crate) struct ModernTasks {
    pub(crate) inputs: Mutex<HashMap<String, Inputs>>,
    pub(crate) work: Mutex<HashMap<String, AbortHandle>>,
}

impl ModernTasks {
    pub(crate) fn forget(&self, id: &str) {
        if let Ok(mut i) = self.inputs.lock() {
            i.remove(id);
        }
        if let Ok(mut w) = self.work.lock() {
            w.remove(id);
        }
    }

    pub(crate) fn stop(&self, id: &str) {
        if let Some(work) = self.work.lock().ok().and_then(|mut w| w.remove(id)) {
            work.abort();
        }
        if let Ok(mut i) = self.inputs.lock() {
            i.remove(id);
        }
    }

    /// The outstanding input requests of task `id`, as wire values.
    pub(crate) fn requests(&self, id: &str) -> Map<String, Value> {
        let Ok(inputs) = self.inputs.lock() else {
            return Map::new();
        };
        inputs
            .get(id)
            .map(|i| {
                i.outstanding
                    .iter()
                    .filter_map(|(k, (r, _))| Some((k.clone(), serde_json::to_value(r).ok()?)))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Hands each answer to the ask waiting under its key; unknown or answered keys are
    /// ignored (`[D26-139]`). Returns whether an answer was taken, and whether nothing is
    /// outstanding any more.
    pub(crate) fn answer(&self, id: &str, responses: &Map<String, Value>) -> (bool, bool) {
        let Ok(mut inputs) = self.inputs.lock() else {
            return (false, false);
        };
        let Some(task) = inputs.get_mut(id) else {
            return (false, false);
        };
        let mut any = false;
        for (key, value) in responses {
            if let Some((_, tx)) = task.outstanding.remove(key) {
                any = true;
                let _ = tx.send(value.clone());
            }
        }
        (any, task.outstanding.is_empty())
    }
}
