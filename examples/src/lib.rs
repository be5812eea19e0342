//! Runnable examples for Switchboard (`publish = false`).
//!
//! | example | shows | facade features it needs |
//! |---|---|---|
//! | `readme_server` (binary) | the README's complete server: one typed tool over stdio | `server`, `stdio` |
//! | `tests/readme_check.rs` | the README's check of a server built in a test (every check of `switchboard-check`, in memory) | `server` |
//!
//! This crate builds the facade with every feature on; the column says which of them each
//! example uses, for a project that turns the defaults off. The test driving `readme_server`
//! (`tests/readme.rs`) uses `client` and `stdio`.
