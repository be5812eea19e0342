//! `notes DIR [--http ADDR]`: an MCP server over a directory of Markdown notes, written with the
//! attribute macros.
//!
//! * Tools: `add_note {title, body}` writes `DIR/<title>.md`; `search_notes {query}` names the
//!   notes whose title or text contains the query.
//! * Resources: every note is `note://<title>` (`text/markdown`), listed, and readable through the
//!   template `note://{title}`. A client subscribed to a note gets
//!   `notifications/resources/updated` when its file changes on disk, whoever changed it; a file
//!   that appears or goes away sends `notifications/resources/list_changed` (the directory is
//!   watched with the `notify` crate).
//! * Prompt: `summarize_notes` embeds every note and asks for a summary.
//! * MCP App: `ui://notes/list`, an HTML view of the notes (`notes_app.html`) whose script calls
//!   `search_notes` through its host; `search_notes` links to it, so a host with the extension
//!   renders its results there, and one without gets the same tool as plain text.
//! * Skill (the skills extension, SEP-2640): `keep-notes`, how to keep notes with this server
//!   (`skill://keep-notes/SKILL.md` and the template `skill://keep-notes/templates/note.md`,
//!   from `examples/skills/keep-notes/`), listed by `skills/list` with its digests.
//!
//! No URI or title reaches outside DIR: a title is one file name (no separators, no leading dot,
//! at most `MAX_TITLE_CHARS` characters), and a note whose real path (symlinks resolved) is not
//! in DIR is refused. That check is not trusted alone, since a link may be swapped in after it:
//! a note is read through a file opened first and then proven to be the directory's own entry
//! (same device and inode as the entry, which is no link), and written to a new file in DIR
//! that is then renamed over the title (a rename replaces a link, never writes through it).
//! Notes are read and written up to `MAX_NOTE_BYTES`.
//!
//! Served over stdio, or over Streamable HTTP at `http://ADDR/mcp` with `--http ADDR`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use schemars::JsonSchema;
use serde::Serialize;
use switchboard::server::UriTemplate;
use switchboard::server::{Json, Server, WeakServer, resource_not_found};
use switchboard::types::content::{ContentBlock, Resource, ResourceContents, Role, TextResourceContents};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::prompts::PromptMessage;
use switchboard::types::resources::ReadResourceResult;
use switchboard::types::{ErrorCode, ErrorObject};
use tokio::io::AsyncReadExt;

/// The longest title, in characters.
const MAX_TITLE_CHARS: usize = 100;
/// The largest note read or written, in bytes.
const MAX_NOTE_BYTES: u64 = 256 * 1024;
/// The most notes listed, searched or summarized.
const MAX_NOTES: usize = 1_000;
/// The notes app view, and its document.
const NOTES_VIEW: &str = "ui://notes/list";
const NOTES_HTML: &str = include_str!("notes_app.html");
/// The URI template of a note.
const NOTE_URI: &str = "note://{title}";
const MARKDOWN: &str = "text/markdown";

/// The notes directory and what the server has listed of it.
struct Notes {
    /// The directory, canonical (symlinks resolved), so that a note's real path can be checked
    /// against it.
    dir: PathBuf,
    /// The notes listed as resources.
    listed: Mutex<BTreeSet<String>>,
    /// The server, once built: for listing a new note at once.
    server: OnceLock<WeakServer>,
    template: UriTemplate,
}

/// Why a note cannot be used.
#[derive(Debug)]
enum NoteError {
    BadTitle(String),
    Outside,
    TooLarge,
    NotFound,
    Io(std::io::Error),
}

impl std::fmt::Display for NoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoteError::BadTitle(why) => write!(f, "invalid title: {why}"),
            NoteError::Outside => f.write_str("the note's file is outside the notes directory"),
            NoteError::TooLarge => write!(f, "the note is larger than {MAX_NOTE_BYTES} bytes"),
            NoteError::NotFound => f.write_str("no such note"),
            NoteError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl From<std::io::Error> for NoteError {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::NotFound {
            NoteError::NotFound
        } else {
            NoteError::Io(e)
        }
    }
}

/// `title` if it names one file in the directory: not empty, not too long, no path separator or
/// control character, no leading dot (`.`, `..`, hidden files).
fn check_title(title: &str) -> Result<&str, NoteError> {
    let bad = |why: &str| Err(NoteError::BadTitle(why.to_owned()));
    if title.trim().is_empty() {
        return bad("empty");
    }
    if title.chars().count() > MAX_TITLE_CHARS {
        return bad("longer than 100 characters");
    }
    if title.contains(['/', '\\']) {
        return bad("a title cannot contain a path separator");
    }
    if title.chars().any(char::is_control) {
        return bad("a title cannot contain control characters");
    }
    if title.starts_with('.') {
        return bad("a title cannot start with a dot");
    }
    Ok(title)
}

/// The title of a file in the directory, if it is a note (`<title>.md` with a valid title).
fn title_of(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let title = name.strip_suffix(".md")?;
    check_title(title).ok().map(str::to_owned)
}

/// The file of a note in `dir` (canonical): its title checked, and an existing file (a symlink
/// included) refused when its real path is not in `dir`.
fn note_path(dir: &Path, title: &str) -> Result<PathBuf, NoteError> {
    let path = dir.join(format!("{}.md", check_title(title)?));
    match path.canonicalize() {
        Ok(real) if real.parent() != Some(dir) => Err(NoteError::Outside),
        Ok(_) => Ok(path),
        // A dangling symlink is refused as well: writing would create its target.
        Err(_) if path.symlink_metadata().is_ok() => Err(NoteError::Outside),
        Err(_) => Ok(path),
    }
}

/// Opens the note at `path` for reading, and proves the file opened is the directory's entry
/// itself: a regular file, not a link, with the device and inode of what was opened. A link
/// swapped in after [`note_path`]'s check (or between the open and this proof) is refused.
async fn open_note(path: &Path) -> Result<tokio::fs::File, NoteError> {
    let file = tokio::fs::File::open(path).await?;
    let opened = file.metadata().await?;
    let entry = tokio::fs::symlink_metadata(path).await?;
    if !entry.file_type().is_file() || !same_file(&opened, &entry) {
        return Err(NoteError::Outside);
    }
    Ok(file)
}

/// Whether two metadata describe one file (device and inode; on other systems, trusting the
/// entry's check).
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        a.dev() == b.dev() && a.ino() == b.ino()
    }
    #[cfg(not(unix))]
    {
        a.is_file() && b.is_file()
    }
}

/// Writes `body` as the note at `path` (in `dir`): to a new file in the directory, created
/// exclusively (never through a link), renamed over `path` (replacing whatever entry is there,
/// a link included, without following it).
async fn write_note(dir: &Path, path: &Path, body: String) -> Result<(), NoteError> {
    use tokio::io::AsyncWriteExt as _;
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".note-{}-{n}.tmp", std::process::id()));
    let mut file = tokio::fs::OpenOptions::new().write(true).create_new(true).open(&tmp).await?;
    let written = async {
        file.write_all(body.as_bytes()).await?;
        file.sync_all().await?;
        drop(file);
        tokio::fs::rename(&tmp, path).await
    }
    .await;
    if written.is_err() {
        let _ = tokio::fs::remove_file(&tmp).await;
    }
    Ok(written?)
}

/// A note's text, bounded in size.
async fn read_note(dir: &Path, title: &str) -> Result<String, NoteError> {
    let file = open_note(&note_path(dir, title)?).await?;
    if file.metadata().await?.len() > MAX_NOTE_BYTES {
        return Err(NoteError::TooLarge);
    }
    let mut text = String::new();
    file.take(MAX_NOTE_BYTES + 1).read_to_string(&mut text).await?;
    if text.len() as u64 > MAX_NOTE_BYTES {
        return Err(NoteError::TooLarge);
    }
    Ok(text)
}

/// A note as the contents of `uri`; a missing note is -32002, a refused one -32602.
async fn note_contents(dir: &Path, title: &str, uri: &str) -> Result<ReadResourceResult, ErrorObject> {
    let text = read_note(dir, title).await.map_err(|e| rpc_error(e, uri))?;
    let mut contents = TextResourceContents::new(uri, text);
    contents.mime_type = Some(MARKDOWN.to_owned());
    Ok(ReadResourceResult::new(vec![ResourceContents::Text(contents)]))
}

fn rpc_error(e: NoteError, uri: &str) -> ErrorObject {
    match e {
        NoteError::NotFound => resource_not_found(uri),
        other => ErrorObject::new(ErrorCode::INVALID_PARAMS, other.to_string()),
    }
}

/// Matches in a search.
#[derive(Serialize, JsonSchema)]
struct Matches {
    /// The titles of the matching notes, in order.
    notes: Vec<String>,
}

impl Notes {
    fn open(dir: &Path) -> std::io::Result<Notes> {
        let dir = dir.canonicalize()?;
        if !dir.is_dir() {
            return Err(std::io::Error::other(format!("{} is not a directory", dir.display())));
        }
        Ok(Notes {
            dir,
            listed: Mutex::default(),
            server: OnceLock::new(),
            template: UriTemplate::parse(NOTE_URI).map_err(std::io::Error::other)?,
        })
    }

    /// The URI of a note (the title percent-encoded).
    fn uri(&self, title: &str) -> String {
        self.template.expand(&[("title".to_owned(), title.to_owned())].into())
    }

    /// A note's text (see [`read_note`]).
    async fn read(&self, title: &str) -> Result<String, NoteError> {
        read_note(&self.dir, title).await
    }

    /// The titles of the notes on disk, sorted, at most `MAX_NOTES`; none outside the directory.
    fn titles(&self) -> std::io::Result<Vec<String>> {
        let mut titles: Vec<String> = std::fs::read_dir(&self.dir)?
            .filter_map(|e| e.ok())
            .filter_map(|e| title_of(&e.path()))
            .collect();
        // A symlink whose target is outside the directory is not a note.
        titles.retain(|t| note_path(&self.dir, t).is_ok());
        titles.sort();
        titles.truncate(MAX_NOTES);
        Ok(titles)
    }

    /// Brings the listed resources in line with the disk for `title`: a new note is listed
    /// (`notifications/resources/list_changed`), a changed one reported to its subscribers
    /// (`notifications/resources/updated`), a removed one unlisted.
    fn sync(&self, title: &str) {
        let Some(server) = self.server.get().and_then(WeakServer::upgrade) else {
            return;
        };
        let uri = self.uri(title);
        let exists = note_path(&self.dir, title).is_ok_and(|p| p.is_file());
        let Ok(mut listed) = self.listed.lock() else { return };
        match (exists, listed.contains(title)) {
            (true, false) if listed.len() < MAX_NOTES => {
                listed.insert(title.to_owned());
                let (dir, owned) = (self.dir.clone(), title.to_owned());
                let resource = Resource::new(&uri, title).with_mime_type(MARKDOWN);
                let _ = server.add_resource(resource, move |read| {
                    let (dir, title) = (dir.clone(), owned.clone());
                    async move { note_contents(&dir, &title, &read.uri).await }
                });
            }
            (true, true) => {
                server.resource_updated(&uri);
            }
            (false, true) => {
                listed.remove(title);
                let _ = server.remove_resource(&uri);
                server.resource_updated(&uri);
            }
            _ => {}
        }
    }
}

#[switchboard::handlers]
impl Notes {
    /// Writes a note to the notes directory as `<title>.md`, replacing a note of that title.
    #[tool]
    async fn add_note(
        &self,
        /// The note's title: its file name without `.md` (no `/`, no leading dot).
        title: String,
        /// The note's Markdown text.
        body: String,
    ) -> Result<String, NoteError> {
        if body.len() as u64 > MAX_NOTE_BYTES {
            return Err(NoteError::TooLarge);
        }
        let path = note_path(&self.dir, &title)?;
        write_note(&self.dir, &path, body).await?;
        // Listed at once (the watcher's event for this write then finds it listed).
        self.sync(&title);
        Ok(format!("saved {}", self.uri(&title)))
    }

    /// Names the notes whose title or text contains `query` (ignoring case).
    #[tool(app = "ui://notes/list")]
    async fn search_notes(
        &self,
        /// The text to look for.
        query: String,
    ) -> Result<Json<Matches>, NoteError> {
        let query = query.to_lowercase();
        let mut notes = Vec::new();
        for title in self.titles()? {
            let hit = title.to_lowercase().contains(&query)
                || self
                    .read(&title)
                    .await
                    .is_ok_and(|text| text.to_lowercase().contains(&query));
            if hit {
                notes.push(title);
            }
        }
        Ok(Json(Matches { notes }))
    }

    /// A note, as Markdown.
    #[resource("note://{title}", mime_type = "text/markdown")]
    async fn note(&self, title: String) -> Result<String, ErrorObject> {
        self.read(&title).await.map_err(|e| rpc_error(e, &self.uri(&title)))
    }

    /// Asks for a summary of every note; the notes are embedded in the prompt.
    #[prompt]
    async fn summarize_notes(&self) -> Result<Vec<PromptMessage>, NoteError> {
        let mut messages = vec![PromptMessage::user_text(
            "Summarize these notes in a few sentences, naming each one's title.",
        )];
        for title in self.titles()? {
            let Ok(text) = self.read(&title).await else { continue };
            let mut contents = TextResourceContents::new(self.uri(&title), text);
            contents.mime_type = Some(MARKDOWN.to_owned());
            let block = ContentBlock::embedded(ResourceContents::Text(contents));
            messages.push(PromptMessage::new(Role::User, block));
        }
        Ok(messages)
    }
}

/// Watches the directory: each file event brings the listing in line for that note.
fn watch(notes: &Arc<Notes>) -> notify::Result<notify::RecommendedWatcher> {
    use notify::Watcher;
    let (tx, mut rx) = tokio::sync::mpsc::channel::<PathBuf>(1024);
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        // The watcher's own thread: a full queue waits rather than losing a change.
        for path in event.map(|e| e.paths).unwrap_or_default() {
            let _ = tx.blocking_send(path);
        }
    })?;
    watcher.watch(&notes.dir, notify::RecursiveMode::NonRecursive)?;
    let notes = Arc::clone(notes);
    tokio::spawn(async move {
        while let Some(path) = rx.recv().await {
            if path.parent() != Some(notes.dir.as_path()) {
                continue;
            }
            if let Some(title) = title_of(&path) {
                notes.sync(&title);
            }
        }
    });
    Ok(watcher)
}

/// The app view: talks to its host only (no external origin), drawn with a border.
fn notes_view() -> switchboard::server::AppView {
    use switchboard::types::apps::{UiCsp, UiResourceMeta};
    let meta = UiResourceMeta { csp: Some(UiCsp::none()), prefers_border: Some(true), ..Default::default() };
    switchboard::server::AppView::new(NOTES_VIEW, NOTES_HTML)
        .title("Notes")
        .description("The notes, searchable")
        .meta(meta)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (mut dir, mut http) = (None, None);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--http" => http = Some(args.next().ok_or("--http needs an address, e.g. 127.0.0.1:8080")?),
            _ if dir.is_none() && !arg.starts_with('-') => dir = Some(PathBuf::from(arg)),
            _ => return Err(format!("usage: notes DIR [--http ADDR] (unexpected {arg:?})").into()),
        }
    }
    let dir = dir.ok_or("usage: notes DIR [--http ADDR]")?;
    let notes = Arc::new(Notes::open(&dir).map_err(|e| format!("{}: {e}", dir.display()))?);
    let skill = keep_notes_skill();
    let server = Server::builder(Implementation::new("notes", env!("CARGO_PKG_VERSION")))
        .register(notes.clone())
        .app(notes_view())
        .skills(&skill)
        .build()?;
    let _ = notes.server.set(server.downgrade());
    let _watcher = watch(&notes)?;
    for title in notes.titles()? {
        notes.sync(&title);
    }
    match http {
        Some(addr) => {
            use switchboard::http::{HttpConfig, StreamableHttpService};
            let listener = tokio::net::TcpListener::bind(&addr).await?;
            let local = listener.local_addr()?;
            let service = StreamableHttpService::new(
                switchboard::server_http::session_factory(&server),
                HttpConfig::for_bind_address(local),
            );
            eprintln!("listening on http://{local}/mcp");
            switchboard::http::serve(listener, service).await?;
        }
        None => {
            server
                .serve(switchboard::transport::StdioTransport::stdio())?
                .closed()
                .await
        }
    }
    Ok(())
}

// --- The skill "how to keep notes" (SEP-2640) ---

use switchboard::skills::{SkillSet, SkillSource, SkillsExt};

/// `keep-notes`: its SKILL.md and its template, compiled in from `examples/skills/keep-notes/`.
fn keep_notes_skill() -> SkillSet {
    SkillSet::new().with(
        SkillSource::new("keep-notes")
            .file("SKILL.md", include_str!("../../skills/keep-notes/SKILL.md"))
            .file("templates/note.md", include_str!("../../skills/keep-notes/templates/note.md")),
    )
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A directory with a note `a.md` and a file outside it, `secret`.
    fn setup(name: &str) -> (PathBuf, PathBuf, PathBuf) {
        let base = std::env::temp_dir().join(format!("sb-notes-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let dir = base.join("notes");
        std::fs::create_dir_all(&dir).unwrap();
        let secret = base.join("secret");
        std::fs::write(&secret, "outside").unwrap();
        (base, dir.canonicalize().unwrap(), secret)
    }

    /// Issue 25, finding 11: a link swapped in after the check is neither read nor written
    /// through (the check passed on the regular file that was there; the use finds the link).
    #[tokio::test]
    async fn finding_11_a_link_swapped_in_after_the_check_is_not_followed() {
        let (base, dir, secret) = setup("swap");
        let note = dir.join("a.md");
        std::fs::write(&note, "inside").unwrap();
        let checked = note_path(&dir, "a").unwrap();
        // The attacker's swap, after the check.
        std::fs::remove_file(&note).unwrap();
        std::os::unix::fs::symlink(&secret, &note).unwrap();
        assert!(matches!(open_note(&checked).await, Err(NoteError::Outside)));
        write_note(&dir, &checked, "overwritten".into()).await.unwrap();
        assert_eq!(std::fs::read_to_string(&secret).unwrap(), "outside", "the target is untouched");
        assert!(std::fs::symlink_metadata(&note).unwrap().file_type().is_file(), "the link was replaced");
        assert_eq!(read_note(&dir, "a").await.unwrap(), "overwritten");
        // Only the note is left in the directory: no temporary file behind.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(&base).unwrap();
    }
}
