//! `switchboard_client::pack::server_json` against the MCP Registry's published schema
//! (vendored in `tests/registry/`, see its README): a bundle's document and a remote server's
//! validate, formats included, and the schema refuses what the registry refuses (so the
//! validation is not a no-op).

use serde_json::{Value, json};
use switchboard_client::pack::{
    BundleSpec, Description, Location, SERVER_JSON_SCHEMA, server_json,
};
use switchboard_types::lifecycle::Implementation;
use switchboard_types::prompts::Prompt;
use switchboard_types::tools::Tool;

fn validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(include_str!("registry/server.schema.json"))
        .expect("the vendored schema is JSON");
    assert_eq!(
        schema["$id"], SERVER_JSON_SCHEMA,
        "documents name the schema they are checked against"
    );
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the schema compiles")
}

fn errors(v: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    v.iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

fn notes() -> Description {
    let mut info = Implementation::new("notes", "0.1.0");
    info.description =
        Some("Markdown notes in a directory: add, search, read, summarize. ".repeat(3));
    let tools = ["add_note", "search_notes"]
        .map(|n| Tool::new(n, Value::Null))
        .to_vec();
    Description::new(info, tools, vec![Prompt::new("summarize_notes")])
}

fn bundle_spec() -> BundleSpec {
    let mut spec = BundleSpec::new("/tmp/notes");
    spec.args = vec!["--quiet".into()];
    spec.user_args = vec!["notes_dir:directory".parse().expect("input")];
    spec.user_env = vec!["NOTES_TOKEN:secret".parse().expect("input")];
    spec.repository = Some("https://github.com/switchboard-mcp/switchboard".into());
    spec
}

#[test]
fn a_bundles_server_json_is_valid_against_the_registry_schema() {
    let v = validator();
    let location = Location::Bundle {
        url: "https://github.com/switchboard-mcp/switchboard/releases/download/v0.1.0/notes.mcpb"
            .into(),
        sha256: "ab".repeat(32),
    };
    let doc = server_json(
        &notes(),
        "io.github.switchboard-mcp/notes",
        Some(&bundle_spec()),
        &location,
    )
    .expect("document");
    assert_eq!(errors(&v, &doc), Vec::<String>::new(), "{doc:#}");
    assert_eq!(doc["$schema"], SERVER_JSON_SCHEMA);
    assert_eq!(
        doc["description"].as_str().map(|d| d.chars().count()),
        Some(100),
        "cut to the registry's 100"
    );
    let package = &doc["packages"][0];
    assert_eq!(package["registryType"], "mcpb");
    assert_eq!(package["packageArguments"][1]["valueHint"], "notes_dir");
    assert_eq!(package["packageArguments"][1]["format"], "filepath");
    assert_eq!(package["environmentVariables"][0]["isSecret"], true);
    assert_eq!(doc["repository"]["source"], "github");

    // What the registry refuses, the schema refuses: a bundle without its hash, a long description.
    let mut no_hash = doc.clone();
    no_hash["packages"][0]
        .as_object_mut()
        .expect("object")
        .remove("fileSha256");
    assert!(
        !errors(&v, &no_hash).is_empty(),
        "an mcpb package without fileSha256 is refused"
    );
    let mut long = doc.clone();
    long["description"] = json!("x".repeat(101));
    assert!(
        !errors(&v, &long).is_empty(),
        "a 101-character description is refused"
    );
    let mut bad_name = doc;
    bad_name["name"] = json!("notes");
    assert!(
        !errors(&v, &bad_name).is_empty(),
        "a name without a namespace is refused"
    );
}

#[test]
fn a_remote_servers_server_json_is_valid_against_the_registry_schema() {
    let v = validator();
    let doc = server_json(
        &notes(),
        "io.github.switchboard-mcp/notes-remote",
        None,
        &Location::Remote("https://notes.example.com/mcp".into()),
    )
    .expect("document");
    assert_eq!(errors(&v, &doc), Vec::<String>::new(), "{doc:#}");
    assert_eq!(
        doc["remotes"],
        json!([{ "type": "streamable-http", "url": "https://notes.example.com/mcp" }])
    );
    assert!(doc.get("packages").is_none());
}
