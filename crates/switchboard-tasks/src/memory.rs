//! [`InMemoryTaskStore`]: the default task store, bounded by tasks, tasks per owner, result
//! bytes and retention. Either role.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use switchboard_types::tasks::{Task, TaskStatus};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::store::{Outcome, Owner, StoreFuture, TaskError, TaskPage, TaskStore, new_task_id};
use crate::time::iso8601;

/// The bounds of an [`InMemoryTaskStore`] (SPEC-NOTES §9.10: cap tasks per requestor and the
/// retention; clean up promptly).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskLimits {
    /// Tasks kept at once, all owners together (default 10,000).
    pub max_tasks: usize,
    /// Tasks kept at once for one owner (default 1,000).
    pub max_tasks_per_owner: usize,
    /// Bytes of results and errors kept at once (default 64 MiB). A result that does not fit
    /// fails its task with -32603 instead.
    pub max_result_bytes: usize,
    /// Retention when the requestor asks for none (default one hour).
    pub default_ttl_ms: u64,
    /// The longest retention granted (default 24 hours); longer requests are cut to it.
    pub max_ttl_ms: u64,
    /// The polling interval suggested to requestors (default one second).
    pub poll_interval_ms: u64,
}

impl Default for TaskLimits {
    fn default() -> Self {
        TaskLimits {
            max_tasks: 10_000,
            max_tasks_per_owner: 1_000,
            max_result_bytes: 64 << 20,
            default_ttl_ms: 3_600_000,
            max_ttl_ms: 86_400_000,
            poll_interval_ms: 1_000,
        }
    }
}

impl TaskLimits {
    /// Sets [`max_tasks`](TaskLimits::max_tasks).
    pub fn with_max_tasks(mut self, n: usize) -> Self {
        self.max_tasks = n.max(1);
        self
    }

    /// Sets [`max_tasks_per_owner`](TaskLimits::max_tasks_per_owner).
    pub fn with_max_tasks_per_owner(mut self, n: usize) -> Self {
        self.max_tasks_per_owner = n.max(1);
        self
    }

    /// Sets [`max_result_bytes`](TaskLimits::max_result_bytes).
    pub fn with_max_result_bytes(mut self, n: usize) -> Self {
        self.max_result_bytes = n;
        self
    }

    /// Sets the default and the longest retention, in milliseconds.
    pub fn with_ttl(mut self, default_ms: u64, max_ms: u64) -> Self {
        self.max_ttl_ms = max_ms.max(1);
        self.default_ttl_ms = default_ms.clamp(1, self.max_ttl_ms);
        self
    }

    /// Sets [`poll_interval_ms`](TaskLimits::poll_interval_ms).
    pub fn with_poll_interval(mut self, ms: u64) -> Self {
        self.poll_interval_ms = ms;
        self
    }
}

struct Entry {
    owner: Owner,
    seq: u64,
    task: Task,
    outcome: Option<Outcome>,
    expires: Instant,
    /// Becomes `true` when the task is terminal; dropped when the task is forgotten.
    done: watch::Sender<bool>,
}

#[derive(Default)]
struct Inner {
    tasks: HashMap<String, Entry>,
    /// Each owner's tasks by creation order, for listing and the per-owner bound.
    by_owner: HashMap<Owner, BTreeMap<u64, String>>,
    /// Expiry order, for prompt clean-up.
    expiry: BTreeMap<(Instant, u64), String>,
    bytes: usize,
    next_seq: u64,
}

impl Inner {
    fn forget(&mut self, id: &str) {
        if let Some(e) = self.tasks.remove(id) {
            self.bytes -= e.outcome.as_ref().map_or(0, Outcome::size);
            self.expiry.remove(&(e.expires, e.seq));
            if let Some(mine) = self.by_owner.get_mut(&e.owner) {
                mine.remove(&e.seq);
                if mine.is_empty() {
                    self.by_owner.remove(&e.owner);
                }
            }
        }
    }

    /// Forgets every task whose retention has passed (`[TK-12]`).
    fn sweep(&mut self, now: Instant) {
        while let Some((&(at, _), _)) = self.expiry.first_key_value() {
            if at > now {
                break;
            }
            if let Some((_, id)) = self.expiry.pop_first() {
                self.forget(&id);
            }
        }
    }

    fn owned(&mut self, owner: &Owner, id: &str) -> Result<&mut Entry, TaskError> {
        match self.tasks.get_mut(id) {
            Some(e) if &e.owner == owner => Ok(e),
            _ => Err(TaskError::NotFound),
        }
    }
}

/// The default [`TaskStore`]: tasks in this process's memory, bounded by [`TaskLimits`].
/// Expired tasks are forgotten on the next operation.
pub struct InMemoryTaskStore {
    limits: TaskLimits,
    inner: Mutex<Inner>,
}

impl fmt::Debug for InMemoryTaskStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InMemoryTaskStore")
            .field("limits", &self.limits)
            .field("tasks", &self.len())
            .finish()
    }
}

impl Default for InMemoryTaskStore {
    fn default() -> Self {
        InMemoryTaskStore::new(TaskLimits::default())
    }
}

fn now_iso() -> String {
    iso8601(SystemTime::now())
}

fn touch(task: &mut Task, status: TaskStatus, message: Option<String>) {
    task.status = status;
    task.status_message = message;
    task.last_updated_at = now_iso();
}

impl InMemoryTaskStore {
    /// An empty store with these bounds.
    pub fn new(limits: TaskLimits) -> Self {
        InMemoryTaskStore {
            limits,
            inner: Mutex::default(),
        }
    }

    /// The bounds.
    pub fn limits(&self) -> &TaskLimits {
        &self.limits
    }

    /// How many tasks are kept (expired ones included until the next operation).
    pub fn len(&self) -> usize {
        self.lock().tasks.len()
    }

    /// Whether no task is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of results and errors kept.
    pub fn result_bytes(&self) -> usize {
        self.lock().bytes
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while the lock was held leaves consistent maps (no operation panics midway).
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn create_now(&self, owner: &Owner, ttl: Option<u64>) -> Result<Task, TaskError> {
        let id = new_task_id()?;
        let ttl = ttl
            .unwrap_or(self.limits.default_ttl_ms)
            .clamp(1, self.limits.max_ttl_ms);
        let now = Instant::now();
        let mut inner = self.lock();
        inner.sweep(now);
        if inner.tasks.len() >= self.limits.max_tasks {
            return Err(TaskError::Full {
                what: "tasks",
                limit: self.limits.max_tasks,
            });
        }
        if inner.by_owner.get(owner).map_or(0, BTreeMap::len) >= self.limits.max_tasks_per_owner {
            return Err(TaskError::Full {
                what: "tasks per requestor",
                limit: self.limits.max_tasks_per_owner,
            });
        }
        let seq = inner.next_seq;
        inner.next_seq += 1;
        let mut task = Task::new(id.clone(), TaskStatus::Working, now_iso(), Some(ttl));
        task.poll_interval = Some(self.limits.poll_interval_ms);
        let expires = now + Duration::from_millis(ttl);
        inner.expiry.insert((expires, seq), id.clone());
        inner
            .by_owner
            .entry(owner.clone())
            .or_default()
            .insert(seq, id.clone());
        inner.tasks.insert(
            id,
            Entry {
                owner: owner.clone(),
                seq,
                task: task.clone(),
                outcome: None,
                expires,
                done: watch::channel(false).0,
            },
        );
        Ok(task)
    }

    fn get_now(&self, owner: &Owner, id: &str) -> Result<Task, TaskError> {
        let mut inner = self.lock();
        inner.sweep(Instant::now());
        inner.owned(owner, id).map(|e| e.task.clone())
    }

    fn set_status_now(
        &self,
        id: &str,
        status: TaskStatus,
        message: Option<String>,
    ) -> Result<Task, TaskError> {
        let mut inner = self.lock();
        inner.sweep(Instant::now());
        let e = inner.tasks.get_mut(id).ok_or(TaskError::NotFound)?;
        let from = e.task.status;
        if status.is_terminal() || !from.can_transition_to(status) {
            return Err(TaskError::IllegalTransition { from, to: status });
        }
        touch(&mut e.task, status, message);
        Ok(e.task.clone())
    }

    fn set_message_now(&self, id: &str, message: Option<String>) -> Result<Task, TaskError> {
        let mut inner = self.lock();
        inner.sweep(Instant::now());
        let e = inner.tasks.get_mut(id).ok_or(TaskError::NotFound)?;
        let status = e.task.status;
        if status.is_terminal() {
            return Err(TaskError::Terminal { status });
        }
        touch(&mut e.task, status, message);
        Ok(e.task.clone())
    }

    fn finish_now(&self, id: &str, outcome: Outcome, failed: bool) -> Result<Task, TaskError> {
        let mut inner = self.lock();
        inner.sweep(Instant::now());
        let budget = self.limits.max_result_bytes.saturating_sub(inner.bytes);
        let e = inner.tasks.get_mut(id).ok_or(TaskError::NotFound)?;
        let from = e.task.status;
        if from == TaskStatus::Cancelled {
            return Ok(e.task.clone());
        }
        let (mut outcome, mut failed) = (outcome, failed);
        if matches!(outcome, Outcome::Cancelled) {
            return Err(TaskError::IllegalTransition {
                from,
                to: TaskStatus::Cancelled,
            });
        }
        if outcome.size() > budget {
            outcome = Outcome::Error(crate::store::result_too_large(self.limits.max_result_bytes));
            failed = true;
        }
        let to = if failed || matches!(outcome, Outcome::Error(_)) {
            TaskStatus::Failed
        } else {
            TaskStatus::Completed
        };
        if !from.can_transition_to(to) {
            return Err(TaskError::IllegalTransition { from, to });
        }
        let message = match &outcome {
            Outcome::Error(err) => Some(err.message.clone()),
            _ => None,
        };
        touch(&mut e.task, to, message);
        let size = outcome.size();
        e.outcome = Some(outcome);
        e.done.send_replace(true);
        let task = e.task.clone();
        inner.bytes += size;
        Ok(task)
    }

    fn cancel_now(&self, owner: &Owner, id: &str) -> Result<Task, TaskError> {
        let mut inner = self.lock();
        inner.sweep(Instant::now());
        let e = inner.owned(owner, id)?;
        if e.task.status.is_terminal() {
            return Err(TaskError::Terminal {
                status: e.task.status,
            });
        }
        touch(
            &mut e.task,
            TaskStatus::Cancelled,
            Some("cancelled by the requestor".into()),
        );
        e.outcome = Some(Outcome::Cancelled);
        e.done.send_replace(true);
        Ok(e.task.clone())
    }

    fn list_now(
        &self,
        owner: &Owner,
        cursor: Option<&str>,
        page: usize,
    ) -> Result<TaskPage, TaskError> {
        let from = match cursor {
            None => 0,
            Some(c) => u64::from_str_radix(c, 16).map_err(|_| TaskError::InvalidCursor)?,
        };
        let mut inner = self.lock();
        inner.sweep(Instant::now());
        let Some(mine) = inner.by_owner.get(owner) else {
            return Ok((Vec::new(), None));
        };
        let page = page.max(1);
        let mut items = Vec::new();
        let mut next = None;
        for (seq, id) in mine.range(from..) {
            if items.len() == page {
                next = Some(format!("{seq:x}"));
                break;
            }
            if let Some(e) = inner.tasks.get(id) {
                items.push(e.task.clone());
            }
        }
        Ok((items, next))
    }

    async fn result_now(&self, owner: &Owner, id: &str) -> Result<(Task, Outcome), TaskError> {
        let (mut done, expires) = {
            let mut inner = self.lock();
            inner.sweep(Instant::now());
            let e = inner.owned(owner, id)?;
            (e.done.subscribe(), e.expires)
        };
        // Waits for the terminal status, at most until the task's retention ends; a task
        // forgotten meanwhile drops the sender.
        match tokio::time::timeout_at(expires, done.wait_for(|d| *d)).await {
            Ok(Ok(_)) => {}
            Ok(Err(_)) => return Err(TaskError::NotFound),
            Err(_) => {
                self.lock().sweep(Instant::now());
                return Err(TaskError::NotFound);
            }
        }
        let mut inner = self.lock();
        let e = inner.owned(owner, id)?;
        let outcome = e.outcome.clone().ok_or(TaskError::NotFound)?;
        Ok((e.task.clone(), outcome))
    }
}

impl TaskStore for InMemoryTaskStore {
    fn create<'a>(
        &'a self,
        owner: &'a Owner,
        ttl: Option<u64>,
    ) -> StoreFuture<'a, Result<Task, TaskError>> {
        Box::pin(std::future::ready(self.create_now(owner, ttl)))
    }

    fn get<'a>(
        &'a self,
        owner: &'a Owner,
        id: &'a str,
    ) -> StoreFuture<'a, Result<Task, TaskError>> {
        Box::pin(std::future::ready(self.get_now(owner, id)))
    }

    fn set_status<'a>(
        &'a self,
        id: &'a str,
        status: TaskStatus,
        message: Option<String>,
    ) -> StoreFuture<'a, Result<Task, TaskError>> {
        Box::pin(std::future::ready(self.set_status_now(id, status, message)))
    }

    fn set_message<'a>(
        &'a self,
        id: &'a str,
        message: Option<String>,
    ) -> StoreFuture<'a, Result<Task, TaskError>> {
        Box::pin(std::future::ready(self.set_message_now(id, message)))
    }

    fn finish<'a>(
        &'a self,
        id: &'a str,
        outcome: Outcome,
        failed: bool,
    ) -> StoreFuture<'a, Result<Task, TaskError>> {
        Box::pin(std::future::ready(self.finish_now(id, outcome, failed)))
    }

    fn cancel<'a>(
        &'a self,
        owner: &'a Owner,
        id: &'a str,
    ) -> StoreFuture<'a, Result<Task, TaskError>> {
        Box::pin(std::future::ready(self.cancel_now(owner, id)))
    }

    fn list<'a>(
        &'a self,
        owner: &'a Owner,
        cursor: Option<&'a str>,
        page: usize,
    ) -> StoreFuture<'a, Result<TaskPage, TaskError>> {
        Box::pin(std::future::ready(self.list_now(owner, cursor, page)))
    }

    fn result<'a>(
        &'a self,
        owner: &'a Owner,
        id: &'a str,
    ) -> StoreFuture<'a, Result<(Task, Outcome), TaskError>> {
        Box::pin(self.result_now(owner, id))
    }
}
