//! Runnable examples for Switchboard (`publish = false`).
//!
//! | binary | shows |
//! |---|---|
//! | `readme_server` | the README's complete server: one typed tool over stdio |
//!
//! `tests/readme_check.rs` is the README's check of a server built in a test (every check of
//! `switchboard-check`, in memory).
