//! The README's complete server is this crate's `readme_server` binary, word for word; here it
//! is run and driven by our own client over stdio. The README's check of a server in a test is
//! this crate's `tests/readme_check.rs`, word for word (cargo runs it as a test of its own).
#![allow(clippy::unwrap_used)]

use serde_json::json;
use switchboard::client::{Client, EraMode};
use switchboard::transport::{ChildCommand, ChildTransport};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::tools::CallToolResult;

const SOURCE: &str = include_str!("../src/bin/readme_server.rs");
const CHECK_SOURCE: &str = include_str!("readme_check.rs");
const EXTENSION_SOURCE: &str = include_str!("readme_extension.rs");
const MIDDLEWARE_SOURCE: &str = include_str!("readme_middleware.rs");
const APPS_SOURCE: &str = include_str!("readme_apps.rs");
const SKILLS_SOURCE: &str = include_str!("readme_skills.rs");

#[test]
fn the_readme_shows_the_example_word_for_word_in_at_most_15_lines() {
    let readme = include_str!("../../README.md");
    assert!(readme.contains(&format!("```rust\n{SOURCE}```")), "README.md must contain src/bin/readme_server.rs verbatim");
    let code_lines = SOURCE.lines().filter(|l| !l.trim().is_empty()).count();
    assert!(code_lines <= 15, "{code_lines} lines");
}

#[test]
fn the_readme_shows_the_check_test_word_for_word() {
    let readme = include_str!("../../README.md");
    assert!(readme.contains(&format!("```rust\n{CHECK_SOURCE}```")), "README.md must contain tests/readme_check.rs verbatim");
}

#[test]
fn the_readme_shows_the_extension_method_word_for_word() {
    let readme = include_str!("../../README.md");
    assert!(readme.contains(&format!("```rust\n{EXTENSION_SOURCE}```")), "README.md must contain tests/readme_extension.rs verbatim");
}

#[test]
fn the_readme_shows_the_apps_example_word_for_word() {
    let readme = include_str!("../../README.md");
    assert!(readme.contains(&format!("```rust\n{APPS_SOURCE}```")), "README.md must contain tests/readme_apps.rs verbatim");
}

#[test]
fn the_readme_shows_the_middleware_example_word_for_word() {
    let readme = include_str!("../../README.md");
    assert!(readme.contains(&format!("```rust\n{MIDDLEWARE_SOURCE}```")), "README.md must contain tests/readme_middleware.rs verbatim");
}

#[test]
fn the_readme_shows_the_skills_example_word_for_word() {
    let readme = include_str!("../../README.md");
    assert!(readme.contains(&format!("```rust\n{SKILLS_SOURCE}```")), "README.md must contain tests/readme_skills.rs verbatim");
}

#[tokio::test]
async fn the_readme_server_runs_and_answers() {
    let child = ChildTransport::spawn(ChildCommand::new(env!("CARGO_BIN_EXE_readme_server"))).unwrap();
    let session = Client::builder(Implementation::new("readme-test", "1")).era(EraMode::Legacy).build().connect(child).await.unwrap();
    assert_eq!(session.negotiated().server_info.name, "calc");
    let tools = session.list_tools().await.unwrap();
    assert_eq!(tools[0].name, "add");
    assert_eq!(tools[0].input_schema["required"], json!(["a", "b"]));
    let r = session.call_tool("add", json!({"a": 2, "b": 3})).await.unwrap();
    assert_eq!(r, CallToolResult::text("5"));
    let bad = session.call_tool("add", json!({"a": "two", "b": 3})).await.unwrap();
    assert!(bad.is_error(), "invalid arguments are an isError result in 2025-11-25");
    session.close();
}
