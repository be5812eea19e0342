//! The `notes` example, run as a child process over stdio and driven by our client: its tools,
//! resources, prompt and notifications, and the URIs and titles that must not leave its
//! directory.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;
use switchboard::client::{Client, ClientSession, EraMode};
use switchboard::transport::{ChildCommand, ChildTransport};
use switchboard::types::content::{ContentBlock, ResourceContents};
use switchboard::types::lifecycle::Implementation;

const WAIT: Duration = Duration::from_secs(10);

/// A fresh directory for one test (removed when dropped), with `notes/` inside it and a
/// `secret.md` beside `notes/`, outside the server's reach.
struct Dirs {
    root: PathBuf,
}

impl Dirs {
    fn new(name: &str) -> Dirs {
        let root = std::env::temp_dir().join(format!("switchboard-notes-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("notes")).unwrap();
        std::fs::write(root.join("secret.md"), "TOP SECRET").unwrap();
        Dirs { root }
    }

    fn notes(&self) -> PathBuf {
        self.root.join("notes")
    }
}

impl Drop for Dirs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

async fn connect(dir: &Path) -> ClientSession {
    let child = ChildTransport::spawn(ChildCommand::new(env!("CARGO_BIN_EXE_notes")).arg(dir)).unwrap();
    Client::builder(Implementation::new("notes-test", "1"))
        .era(EraMode::Legacy)
        .build()
        .connect(child)
        .await
        .unwrap()
}

fn text_of(r: &switchboard::types::resources::ReadResourceResult) -> &str {
    match &r.contents[0] {
        ResourceContents::Text(t) => &t.text,
        ResourceContents::Blob(_) => panic!("a note is text"),
    }
}

#[tokio::test]
async fn notes_are_added_searched_listed_read_and_summarized() {
    let dirs = Dirs::new("basics");
    std::fs::write(dirs.notes().join("groceries.md"), "# Groceries\n\nmilk, eggs").unwrap();
    let s = connect(&dirs.notes()).await;

    let tools = s.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["add_note", "search_notes"]);
    assert_eq!(tools[0].input_schema["required"], json!(["title", "body"]));

    let added = s
        .call_tool("add_note", json!({"title": "Trip to Lyon", "body": "Book the train."}))
        .await
        .unwrap();
    assert!(!added.is_error(), "{added:?}");
    assert_eq!(
        std::fs::read_to_string(dirs.notes().join("Trip to Lyon.md")).unwrap(),
        "Book the train."
    );

    let found = s.call_tool("search_notes", json!({"query": "TRAIN"})).await.unwrap();
    assert_eq!(found.structured_content, Some(json!({"notes": ["Trip to Lyon"]})));
    let found = s.call_tool("search_notes", json!({"query": "groc"})).await.unwrap();
    assert_eq!(found.structured_content, Some(json!({"notes": ["groceries"]})));

    let mut resources = s.list_resources().await.unwrap();
    resources.retain(|r| r.uri.starts_with("note://"));
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris, ["note://groceries", "note://Trip%20to%20Lyon"]);
    assert!(
        resources
            .iter()
            .all(|r| r.mime_type.as_deref() == Some("text/markdown"))
    );
    let templates = s.list_resource_templates().await.unwrap();
    assert_eq!(templates[0].uri_template, "note://{title}");

    let read = s.read_resource("note://Trip%20to%20Lyon").await.unwrap();
    assert_eq!(text_of(&read), "Book the train.");
    assert_eq!(read.contents[0].mime_type(), Some("text/markdown"));
    let missing = s.read_resource("note://nothing").await.unwrap_err();
    assert!(missing.to_string().contains("-32002"), "{missing}");

    let prompt = s
        .get_prompt("summarize_notes", Vec::<(String, String)>::new())
        .await
        .unwrap();
    assert_eq!(prompt.messages.len(), 3, "the instruction, then each note");
    let embedded: Vec<String> = prompt.messages[1..]
        .iter()
        .map(|m| match &m.content {
            ContentBlock::Resource(r) => r.resource.uri().to_owned(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(embedded, ["note://Trip%20to%20Lyon", "note://groceries"]);
    s.close();
}

#[tokio::test]
async fn a_change_on_disk_notifies_subscribers_and_a_new_file_the_listing() {
    let dirs = Dirs::new("watch");
    std::fs::write(dirs.notes().join("todo.md"), "- one").unwrap();
    let s = connect(&dirs.notes()).await;
    let notes = |r: &[switchboard::types::resources::Resource]| r.iter().filter(|r| r.uri.starts_with("note://")).count();
    assert_eq!(notes(&s.list_resources().await.unwrap()), 1);

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    s.subscribe("note://todo", move |p| {
        let _ = tx.send(p.uri);
    })
    .await
    .unwrap();
    // Someone else edits the file.
    std::fs::write(dirs.notes().join("todo.md"), "- one\n- two").unwrap();
    let uri = tokio::time::timeout(WAIT, rx.recv())
        .await
        .expect("resources/updated")
        .unwrap();
    assert_eq!(uri, "note://todo");
    assert_eq!(text_of(&s.read_resource("note://todo").await.unwrap()), "- one\n- two");

    // Someone else adds a note: the listing changes. The client re-lists by itself on
    // `notifications/resources/list_changed` (nothing here lists again), so the new note in
    // its cache is the notification's doing; `resources_changed` waits for a change the cache
    // does not yet show, so the cache is looked at first (the re-list may be done already).
    std::fs::write(dirs.notes().join("ideas.md"), "fly").unwrap();
    let has_ideas = |r: &[switchboard::types::resources::Resource]| r.iter().any(|r| r.uri == "note://ideas");
    let listed = tokio::time::timeout(WAIT, async {
        loop {
            if let Some(resources) = s.cached_resources().filter(|r| has_ideas(r)) {
                return resources;
            }
            if let Ok(resources) = tokio::time::timeout(Duration::from_millis(200), s.resources_changed()).await {
                let resources = resources.unwrap();
                if has_ideas(&resources) {
                    return resources;
                }
            }
        }
    })
    .await
    .expect("resources/list_changed");
    assert_eq!(notes(&listed), 2);
    s.close();
}

#[tokio::test]
async fn sf_4_sec_res_1_no_uri_or_title_reaches_outside_the_directory() {
    let dirs = Dirs::new("hostile");
    let outside = dirs.root.join("secret.md");
    std::os::unix::fs::symlink(&outside, dirs.notes().join("link.md")).unwrap();
    std::os::unix::fs::symlink(dirs.root.join("gone.md"), dirs.notes().join("dangling.md")).unwrap();
    std::fs::write(dirs.notes().join("big.md"), vec![b'x'; 300 * 1024]).unwrap();
    let s = connect(&dirs.notes()).await;

    for uri in [
        "note://../secret",
        "note://..%2Fsecret",
        "note://%2e%2e%2fsecret",
        "note://%2E%2E/secret",
        "note://..",
        "note://%2e%2e",
        "note://%2Froot%2Fsecret",
        "note:///etc/passwd",
        "note://%2Fetc%2Fpasswd",
        "note://..%5Csecret",
        "note://link",
        "note://dangling",
        "note://.hidden",
        "note://a%00b",
        "note://big",
    ] {
        match s.read_resource(uri).await {
            Ok(r) => panic!("{uri} was read: {r:?}"),
            Err(e) => assert!(!e.to_string().contains("TOP SECRET"), "{uri}: {e}"),
        }
    }
    for title in [
        "../secret",
        "..",
        "/tmp/escape",
        "a\\b",
        "link",
        "dangling",
        ".hidden",
        "",
        &"x".repeat(101),
    ] {
        let r = s
            .call_tool("add_note", json!({"title": title, "body": "pwned"}))
            .await
            .unwrap();
        assert!(r.is_error(), "{title:?} was written");
    }
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "TOP SECRET");
    assert!(!dirs.root.join("gone.md").exists());
    let too_big = s
        .call_tool("add_note", json!({"title": "huge", "body": "x".repeat(300 * 1024)}))
        .await
        .unwrap();
    assert!(too_big.is_error());
    // Neither the symlink out nor the oversized note shows up in a search or a summary.
    let found = s.call_tool("search_notes", json!({"query": "secret"})).await.unwrap();
    assert_eq!(found.structured_content, Some(json!({"notes": []})));
    let prompt = s
        .get_prompt("summarize_notes", Vec::<(String, String)>::new())
        .await
        .unwrap();
    assert_eq!(prompt.messages.len(), 1);
    s.close();
}

/// The notes app: a host with the extension sees `search_notes` linked to `ui://notes/list` and
/// reads the view (HTML that calls `search_notes` through its host, no external origin); one
/// without sees the plain tool (docs/APPS.md, `[AP-5]`, `[AP-8]`).
#[tokio::test]
async fn ap_5_ap_8_the_notes_app_is_linked_for_hosts_with_apps_and_plain_for_others() {
    let dirs = Dirs::new("app");
    let child = ChildTransport::spawn(ChildCommand::new(env!("CARGO_BIN_EXE_notes")).arg(dirs.notes())).unwrap();
    let host = Client::builder(Implementation::new("notes-host", "1")).apps().build().connect(child).await.unwrap();
    assert!(host.offers_apps());
    let tools = host.list_tools().await.unwrap();
    let search = tools.iter().find(|t| t.name == "search_notes").unwrap();
    let uri = search.ui().and_then(|ui| ui.resource_uri).expect("linked to the view");
    assert_eq!(uri, "ui://notes/list");
    let view = host.read_app(&uri).await.unwrap();
    assert!(view.html.starts_with("<!doctype html>"), "{}", &view.html[..40]);
    assert!(view.html.contains(r#"name: "search_notes""#), "the view calls search_notes");
    assert_eq!(view.meta.prefers_border, Some(true));
    let csp = view.meta.csp.expect("a declared CSP");
    assert_eq!(csp.connect_domains, Some(vec![]), "no external connection");
    host.close();

    let plain = connect(&dirs.notes()).await;
    let tools = plain.list_tools().await.unwrap();
    assert!(tools.iter().all(|t| t.meta.is_none()), "plain tools: {tools:?}");
}
