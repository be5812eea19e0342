//! The host configurations in the README are valid JSON, and each names a server the way that
//! host expects (`mcpServers` for Claude Desktop and Cursor, `servers` with a `type` for VS Code).
#![allow(clippy::unwrap_used, clippy::expect_used)]

fn json_blocks(readme: &str) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    let mut rest = readme;
    while let Some(start) = rest.find("```json\n") {
        let body = &rest[start + "```json\n".len()..];
        let end = body.find("```").expect("a closed block");
        out.push(
            serde_json::from_str(&body[..end])
                .unwrap_or_else(|e| panic!("invalid JSON in the README: {e}\n{}", &body[..end])),
        );
        rest = &body[end..];
    }
    out
}

#[test]
fn the_readme_host_configurations_are_valid_json() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).expect("README.md");
    let blocks = json_blocks(&readme);
    let desktop = blocks
        .iter()
        .find(|b| b.get("mcpServers").is_some())
        .expect("a Claude Desktop block");
    for (name, server) in desktop["mcpServers"].as_object().unwrap() {
        assert!(server["command"].is_string(), "{name}");
    }
    assert_eq!(desktop["mcpServers"]["switchboard"]["args"][0], "serve");
    let vscode = blocks
        .iter()
        .find(|b| b.get("servers").is_some())
        .expect("a VS Code block");
    for (name, server) in vscode["servers"].as_object().unwrap() {
        match server["type"].as_str() {
            Some("stdio") => assert!(server["command"].is_string(), "{name}"),
            Some("http") => assert!(server["url"].as_str().unwrap().ends_with("/mcp"), "{name}"),
            other => panic!("{name}: type {other:?}"),
        }
    }
}
