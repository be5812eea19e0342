//! Runnable examples for Switchboard (`publish = false`).
//!
//! | binary | shows |
//! |---|---|
//! | `readme_server` | the README's complete server: one typed tool over stdio |
