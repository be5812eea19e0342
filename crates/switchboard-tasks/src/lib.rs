//! # switchboard-tasks
//!
//! Tasks (revision 2025-11-25, SEP-1686; SPEC-NOTES §9) for both roles: a receiver keeps a task
//! per task-augmented request, the requestor polls it and collects the result later. A server
//! runs tool calls as tasks; a client runs the server's sampling and elicitation requests as
//! tasks. Both keep them in a [`TaskStore`].
//!
//! | module | role |
//! |---|---|
//! | [`store`] | [`TaskStore`]: create, get, status changes, finish, cancel, list, wait for the result |
//! | [`memory`] | [`InMemoryTaskStore`]: the bounded default (tasks, tasks per owner, result bytes, ttl) |
//! | [`serve`] | what a receiver answers to `tasks/*`, related-task `_meta`, [`serve::Running`] work, polling |
//! | [`time`] | ISO 8601 timestamps for `createdAt` / `lastUpdatedAt` |
//!
//! The store knows nothing of the method a task runs: results are kept as raw JSON (or the
//! JSON-RPC error the request raised), so the 2026-07-28 tasks extension (`tasks/get`,
//! `tasks/update`, `tasks/cancel`) can use the same store and status machine.

pub mod memory;
pub mod serve;
pub mod store;
pub mod time;

pub use memory::{InMemoryTaskStore, TaskLimits};
pub use store::{
    Outcome, Owner, StoreFuture, TaskError, TaskPage, TaskStore, new_task_id, result_too_large,
};
