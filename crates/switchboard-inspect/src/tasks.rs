//! Task frames (2025-11-25): links from `tasks/get`, `tasks/result` and `tasks/cancel` to the
//! call that created the task, and the TK rules a trace can judge (`[TK-9]`, `[TK-10]`,
//! `[TK-11]`, `[TK-21]`). State is bounded: at most [`MAX_TASKS`] tasks are remembered.

use std::collections::{HashMap, VecDeque};

use serde_json::Value;
use switchboard_types::meta::RELATED_TASK_KEY;
use switchboard_types::methods;

use crate::violation::Violation;

/// How many tasks a trace remembers (the oldest is forgotten first).
pub(crate) const MAX_TASKS: usize = 4096;

struct Tracked {
    created_by: usize,
    status: String,
}

/// The tasks seen in a session.
#[derive(Default)]
pub(crate) struct TaskTracker {
    tasks: HashMap<String, Tracked>,
    order: VecDeque<String>,
}

fn is_terminal(status: &str) -> bool {
    matches!(status, "completed" | "failed" | "cancelled")
}

/// `[TK-11]`: every task object carries both times.
fn check_times(task: &Value, out: &mut Vec<Violation>) {
    if task.get("createdAt").is_none() || task.get("lastUpdatedAt").is_none() {
        out.push(Violation {
            tag: "TK-11",
            reason: "a task without createdAt or lastUpdatedAt".into(),
        });
    }
}

impl TaskTracker {
    /// The index of the call that created task `id`, if it was seen.
    pub(crate) fn created_by(&self, id: &str) -> Option<usize> {
        self.tasks.get(id).map(|t| t.created_by)
    }

    fn remember(&mut self, id: &str, created_by: usize, status: &str) {
        if self.tasks.contains_key(id) {
            return;
        }
        if self.tasks.len() >= MAX_TASKS
            && let Some(old) = self.order.pop_front()
        {
            self.tasks.remove(&old);
        }
        self.order.push_back(id.to_owned());
        self.tasks.insert(
            id.to_owned(),
            Tracked {
                created_by,
                status: status.to_owned(),
            },
        );
    }

    /// A task object seen in a result or a notification: `[TK-11]`, and `[TK-10]` (a terminal
    /// task never changes).
    pub(crate) fn observe_task(&mut self, task: &Value, out: &mut Vec<Violation>) {
        check_times(task, out);
        let (Some(id), Some(status)) = (
            task.get("taskId").and_then(Value::as_str),
            task.get("status").and_then(Value::as_str),
        ) else {
            return;
        };
        if let Some(t) = self.tasks.get_mut(id) {
            if is_terminal(&t.status) && t.status != status {
                out.push(Violation {
                    tag: "TK-10",
                    reason: format!("task {id} went from {} to {status}", t.status),
                });
            }
            t.status = status.to_owned();
        }
    }

    /// The result of a request: a `CreateTaskResult` (`{task}`) records the task and must start
    /// in `working` (`[TK-9]`); task objects of `tasks/get`, `tasks/cancel` and `tasks/list`
    /// are observed; a `tasks/result` answer carries the related-task `_meta` (`[TK-21]`).
    pub(crate) fn response(
        &mut self,
        method: &str,
        request_index: usize,
        task_id: Option<&str>,
        result: &Value,
        out: &mut Vec<Violation>,
    ) {
        if let Some(task) = result.get("task").filter(|t| t.is_object()) {
            check_times(task, out);
            let status = task.get("status").and_then(Value::as_str).unwrap_or("");
            if status != "working" {
                out.push(Violation {
                    tag: "TK-9",
                    reason: format!("a new task in {status:?}, not working"),
                });
            }
            if let Some(id) = task.get("taskId").and_then(Value::as_str) {
                self.remember(id, request_index, status);
            }
            return;
        }
        match method {
            methods::TASKS_GET | methods::TASKS_CANCEL => self.observe_task(result, out),
            methods::TASKS_LIST => {
                for t in result
                    .get("tasks")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    self.observe_task(t, out);
                }
            }
            methods::TASKS_RESULT => {
                let related = result
                    .get("_meta")
                    .and_then(|m| m.get(RELATED_TASK_KEY))
                    .and_then(|r| r.get("taskId"))
                    .and_then(Value::as_str);
                if related.is_none() || (task_id.is_some() && related != task_id) {
                    out.push(Violation {
                        tag: "TK-21",
                        reason: "a tasks/result answer without its related-task _meta".into(),
                    });
                }
            }
            _ => {}
        }
    }
}
