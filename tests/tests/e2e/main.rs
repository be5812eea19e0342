//! The cross-crate end-to-end tests, one binary: a module per theme (the module keeps the name of
//! the test file it was, so `cargo test -p switchboard-tests --test e2e tasks_races::` runs one).
//!
//! Every test here may share the process with the others: none sets a global tracing subscriber
//! (the log-counting tests scope theirs to their thread with `set_default` on a current-thread
//! runtime), changes the environment, or counts processes.

mod apps;
mod auth;
mod capabilities;
mod client_calls;
mod client_e2e;
mod client_everything;
mod client_handlers;
mod client_hostile;
mod client_lists;
mod client_modern;
mod client_modern_tasks;
mod client_options;
mod client_router;
mod client_structured;
mod client_subscriptions;
mod client_support;
mod everything;
mod golden;
mod hostile;
mod lifecycle;
mod middleware;
mod modern;
mod modern_tasks;
mod module_graph;
mod one_path;
mod router;
mod security_rules;
mod server_features;
mod structured_any;
mod tasks;
mod tasks_client;
mod tasks_races;
mod tasks_wire;
mod tidy;
mod tools;
mod worked_trace;
