//! Publishing skills from a server: [`SkillSet`] holds what is served and [`SkillsExt::skills`]
//! puts it on a `ServerBuilder`, in a few lines:
//!
//! ```no_run
//! use switchboard_server::Server;
//! use switchboard_skills::{SkillSet, SkillsExt};
//! use switchboard_types::Implementation;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let skills = SkillSet::from_dir("skills")?;
//! let server = Server::builder(Implementation::new("acme", "1.0")).skills(&skills).build()?;
//! let _watch = skills.watch(&server)?; // digests and listings follow the folder
//! # Ok(()) }
//! ```
//!
//! Server side. What a built server then has: the extension declared with `directoryRead`
//! (both eras: `initialize` and `server/discover`), the `resources` capability, `skills/list`
//! and `skills/get` (`-32602` for a URI that is no served skill), `resources/directory/read`
//! over every directory of every skill (`-32602` for anything else), each `SKILL.md` listed in
//! `resources/list` (name and description from its frontmatter, `text/markdown`) and every file
//! readable through the template `skill://{+path}`. A URI is served only if it is exactly one
//! the catalogue made: a `..` segment, written or percent-encoded, or any other spelling names
//! nothing and is refused with `-32602`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use base64::Engine as _;
use serde_json::json;
use switchboard_server::{
    Context, ResourceRead, Server, ServerBuilder, WeakServer, resource_not_found,
    resource_not_found_modern,
};
use switchboard_types::content::{
    BlobResourceContents, Resource, ResourceContents, TextResourceContents,
};
use switchboard_types::resources::{ReadResourceResult, ResourceTemplate};
use switchboard_types::{ErrorCode, ErrorObject};

use crate::catalog::{self, Catalog, SkillSource};
use crate::wire::{
    DIRECTORY_READ, GetSkill, GetSkillResult, ListSkills, ListSkillsResult, MARKDOWN,
    ReadDirectory, ReadDirectoryResult, SKILL_SCHEME, SKILLS_EXTENSION, Skill,
};

/// The template every skill file is read through.
pub(crate) const SKILL_TEMPLATE: &str = "skill://{+path}";
/// Entries per `skills/list` page, children per `resources/directory/read` page.
pub(crate) const PAGE_SIZE: usize = 50;

/// The skills a server serves: from a folder (rescanned when it changes, see
/// [`SkillSet::watch`]) and from code. Cheap to clone; every clone is the same set.
#[derive(Clone)]
pub struct SkillSet {
    inner: Arc<Inner>,
}

struct Inner {
    root: Option<PathBuf>,
    code: Mutex<Vec<SkillSource>>,
    catalog: RwLock<Arc<Catalog>>,
    server: OnceLock<WeakServer>,
    page_size: usize,
}

impl std::fmt::Debug for SkillSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillSet")
            .field("root", &self.inner.root)
            .field("skills", &self.catalog().skills.len())
            .finish()
    }
}

impl Default for SkillSet {
    fn default() -> Self {
        Self::new()
    }
}

impl SkillSet {
    /// An empty set, for skills defined in code ([`SkillSet::with`]).
    pub fn new() -> Self {
        Self::make(None, PAGE_SIZE)
    }

    /// The skills of the folder `dir`, scanned now: each directory holding a `SKILL.md` is a
    /// skill whose path is the directory's, relative to `dir`. A directory that is not a valid
    /// skill is left out and said in [`SkillSet::skipped`].
    ///
    /// # Errors
    /// `dir` is not a readable directory.
    pub fn from_dir(dir: impl AsRef<Path>) -> std::io::Result<Self> {
        let root = std::fs::canonicalize(dir.as_ref())?;
        if !std::fs::metadata(&root)?.is_dir() {
            return Err(std::io::Error::other(format!(
                "{} is not a directory",
                root.display()
            )));
        }
        Ok(Self::make(Some(root), PAGE_SIZE))
    }

    fn make(root: Option<PathBuf>, page_size: usize) -> Self {
        let catalog = catalog::build(root.as_deref(), &[]);
        SkillSet {
            inner: Arc::new(Inner {
                root,
                code: Mutex::default(),
                catalog: RwLock::new(Arc::new(catalog)),
                server: OnceLock::new(),
                page_size,
            }),
        }
    }

    /// Adds a skill defined in code (replacing one at the same path) and rebuilds the catalog.
    #[must_use]
    pub fn with(self, skill: SkillSource) -> Self {
        self.add(skill);
        self
    }

    /// Adds (or replaces) a skill defined in code at run time; an attached server lists it at
    /// once.
    pub fn add(&self, skill: SkillSource) {
        if let Ok(mut code) = self.inner.code.lock() {
            code.retain(|s| s.path() != skill.path());
            code.push(skill);
        }
        self.rescan();
    }

    /// Removes the skill defined in code at `path`; whether there was one.
    pub fn remove(&self, path: &str) -> bool {
        let removed = self.inner.code.lock().is_ok_and(|mut code| {
            let before = code.len();
            code.retain(|s| s.path() != path);
            code.len() != before
        });
        if removed {
            self.rescan();
        }
        removed
    }

    /// The entries served now, in skill-path order.
    pub fn skills(&self) -> Vec<Skill> {
        self.catalog().skills.clone()
    }

    /// Why the skills not served were left out (one line each).
    pub fn skipped(&self) -> Vec<String> {
        self.catalog().skipped.clone()
    }

    /// Reads the folder and the code-defined skills again, computes every digest, swaps the
    /// catalogue in one step, and brings an attached server's resource list in step (changed
    /// files get `notifications/resources/updated`, a changed list `list_changed`).
    pub fn rescan(&self) {
        let code = self
            .inner
            .code
            .lock()
            .map(|c| c.clone())
            .unwrap_or_default();
        let next = Arc::new(catalog::build(self.inner.root.as_deref(), &code));
        for why in &next.skipped {
            tracing::warn!(target: "switchboard::skills", "skill not served: {why}");
        }
        let previous = match self.inner.catalog.write() {
            Ok(mut slot) => std::mem::replace(&mut *slot, next.clone()),
            Err(_) => return,
        };
        if let Some(server) = self.inner.server.get().and_then(WeakServer::upgrade) {
            self.sync(&server, &previous, &next);
        }
    }

    /// Serves changes to `server`: the list of `SKILL.md` resources and updates to files.
    /// [`SkillSet::watch`] attaches too; attach by hand when skills change only in code.
    pub fn attach(&self, server: &Server) {
        let _ = self.inner.server.set(server.downgrade());
    }

    /// Attaches to `server` and watches the folder: every change is followed by a
    /// [`SkillSet::rescan`] (changes that arrive together are taken in one). Watching stops when
    /// the returned handle is dropped.
    ///
    /// # Errors
    /// The set has no folder, or the watcher could not start.
    pub fn watch(&self, server: &Server) -> notify::Result<SkillWatch> {
        use notify::Watcher;
        self.attach(server);
        let Some(root) = self.inner.root.clone() else {
            return Err(notify::Error::generic(
                "this skill set has no folder to watch",
            ));
        };
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                if event.is_ok() {
                    let _ = tx.send(());
                }
            })?;
        watcher.watch(&root, notify::RecursiveMode::Recursive)?;
        let set = self.clone();
        std::thread::Builder::new()
            .name("skills-watch".into())
            .spawn(move || {
                // Ends when the watcher (the sender's owner) is dropped.
                while rx.recv().is_ok() {
                    while rx.try_recv().is_ok() {}
                    set.rescan();
                }
            })
            .map_err(|e| notify::Error::generic(&e.to_string()))?;
        Ok(SkillWatch { _watcher: watcher })
    }

    fn catalog(&self) -> Arc<Catalog> {
        self.inner
            .catalog
            .read()
            .map(|c| c.clone())
            .unwrap_or_default()
    }

    fn sync(&self, server: &Server, previous: &Catalog, next: &Catalog) {
        let listed =
            |c: &Catalog| -> Vec<Resource> { c.skills.iter().map(skill_md_resource).collect() };
        let (old, new) = (listed(previous), listed(next));
        for r in old.iter().filter(|r| !new.contains(r)) {
            let _ = server.remove_resource(&r.uri);
        }
        for r in new.iter().filter(|r| !old.contains(r)) {
            let set = self.clone();
            let _ = server.add_resource(r.clone(), move |read| {
                let set = set.clone();
                async move { set.read(&read.uri, &read.cx) }
            });
        }
        for (uri, file) in &next.files {
            if previous
                .files
                .get(uri)
                .is_some_and(|old| old.bytes != file.bytes)
            {
                server.resource_updated(uri);
            }
        }
    }

    /// `resources/read` of a skill file.
    fn read(&self, uri: &str, cx: &Context) -> Result<ReadResourceResult, ErrorObject> {
        let catalog = self.catalog();
        let Some(file) = catalog.files.get(uri) else {
            return Err(not_found(uri, cx));
        };
        let contents = match std::str::from_utf8(&file.bytes) {
            Ok(text) => {
                let mut c = TextResourceContents::new(uri, text);
                c.mime_type = Some(file.mime.to_owned());
                ResourceContents::Text(c)
            }
            Err(_) => {
                let mut c = BlobResourceContents::new(
                    uri,
                    base64::engine::general_purpose::STANDARD.encode(&file.bytes),
                );
                c.mime_type = Some(file.mime.to_owned());
                ResourceContents::Blob(c)
            }
        };
        Ok(ReadResourceResult::new(vec![contents]))
    }

    fn list(&self, cursor: Option<&str>) -> Result<ListSkillsResult, ErrorObject> {
        let catalog = self.catalog();
        let (page, next) = page(&catalog.skills, cursor, self.inner.page_size)?;
        Ok(ListSkillsResult {
            skills: page.to_vec(),
            next_cursor: next,
            ttl_ms: Some(0),
            cache_scope: Some("private".into()),
        })
    }

    fn get(&self, uri: &str) -> Result<GetSkillResult, ErrorObject> {
        let catalog = self.catalog();
        let skill = catalog
            .by_uri
            .get(uri)
            .and_then(|i| catalog.skills.get(*i))
            .ok_or_else(|| {
                invalid(format!(
                    "No skill is served at {}",
                    switchboard_types::error::echo(uri)
                ))
            })?;
        Ok(GetSkillResult {
            skill: skill.clone(),
            ttl_ms: Some(0),
            cache_scope: Some("private".into()),
        })
    }

    fn directory(
        &self,
        uri: &str,
        cursor: Option<&str>,
    ) -> Result<ReadDirectoryResult, ErrorObject> {
        let catalog = self.catalog();
        let Some(children) = catalog.dirs.get(uri) else {
            let uri = switchboard_types::error::echo(uri);
            return Err(invalid(if catalog.files.contains_key(uri.as_ref()) {
                format!("{uri} is not a directory resource")
            } else {
                format!("No directory resource at {uri}")
            }));
        };
        let children: Vec<Resource> = children.values().cloned().collect();
        let (page, next) = page(&children, cursor, self.inner.page_size)?;
        Ok(ReadDirectoryResult {
            resources: page.to_vec(),
            next_cursor: next,
        })
    }
}

/// Keeps a folder watched ([`SkillSet::watch`]); dropping it stops watching.
pub struct SkillWatch {
    _watcher: notify::RecommendedWatcher,
}

impl std::fmt::Debug for SkillWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillWatch").finish_non_exhaustive()
    }
}

fn invalid(message: String) -> ErrorObject {
    ErrorObject::new(ErrorCode::INVALID_PARAMS, message)
}

fn not_found(uri: &str, cx: &Context) -> ErrorObject {
    if cx.is_modern() {
        resource_not_found_modern(uri)
    } else {
        resource_not_found(uri)
    }
}

/// One page of `items` from `cursor` (the index of its first item, as decimal text).
fn page<'a, T>(
    items: &'a [T],
    cursor: Option<&str>,
    size: usize,
) -> Result<(&'a [T], Option<String>), ErrorObject> {
    let start = match cursor {
        None => 0,
        Some(c) => c
            .parse::<usize>()
            .ok()
            .filter(|s| *s <= items.len())
            .ok_or_else(|| invalid("Invalid params: unknown cursor".into()))?,
    };
    let end = (start + size).min(items.len());
    let next = (end < items.len()).then(|| end.to_string());
    Ok((&items[start..end], next))
}

fn skill_md_resource(skill: &Skill) -> Resource {
    let mut r =
        Resource::new(skill.uri.clone(), skill.name().unwrap_or_default()).with_mime_type(MARKDOWN);
    if let Some(d) = skill.description() {
        r = r.with_description(d);
    }
    r
}

/// Publishing a [`SkillSet`] on a server.
pub trait SkillsExt {
    /// Declares the skills extension (`directoryRead: true`) and `resources`, routes
    /// `skills/list`, `skills/get` and `resources/directory/read`, lists each `SKILL.md` and
    /// serves every file through `skill://{+path}`.
    #[must_use]
    fn skills(self, set: &SkillSet) -> Self;
}

impl SkillsExt for ServerBuilder {
    fn skills(self, set: &SkillSet) -> Self {
        let mut b = self
            .extension(SKILLS_EXTENSION, json!({ DIRECTORY_READ: true }))
            .enable_resources();
        for skill in &set.catalog().skills {
            let s = set.clone();
            b = b.resource(skill_md_resource(skill), move |read: ResourceRead| {
                let s = s.clone();
                async move { s.read(&read.uri, &read.cx) }
            });
        }
        let (list, get, dir, files) = (set.clone(), set.clone(), set.clone(), set.clone());
        let mut template = ResourceTemplate::new(SKILL_TEMPLATE, "skill-files");
        template.description =
            Some("Every file of every skill this server serves (SEP-2640).".into());
        b.request::<ListSkills, _, _>(move |p, _cx| {
            let r = list.list(p.cursor.as_deref());
            async move { r }
        })
        .request::<GetSkill, _, _>(move |p, _cx| {
            let r = get.get(&p.uri);
            async move { r }
        })
        .request::<ReadDirectory, _, _>(move |p, _cx| {
            let r = dir.directory(&p.uri, p.cursor.as_deref());
            async move { r }
        })
        .resource_template(template, move |read: ResourceRead| {
            let s = files.clone();
            async move {
                if !read.uri.starts_with(SKILL_SCHEME) {
                    return Err(not_found(&read.uri, &read.cx));
                }
                s.read(&read.uri, &read.cx)
            }
        })
    }
}
