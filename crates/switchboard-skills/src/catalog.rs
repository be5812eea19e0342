//! What a server serves, computed once per change: every skill's entry (frontmatter and
//! manifest with digests and sizes), every file's bytes by URI, and every directory's children.
//!
//! Server side. Skills come from a folder (one directory per skill, holding `SKILL.md`; a
//! directory with a `SKILL.md` inside another skill is a nested skill, and its files belong to
//! both) and from code ([`SkillSource`]). Files are read once into memory, so what is served is
//! always the bytes the digests were computed over: a change on disk is served only after the
//! next scan, with its new digest.
//!
//! Nothing outside the folder is read: symbolic links are not followed (a link is skipped, file
//! or directory), names starting with a dot are skipped, and a file larger than
//! [`MAX_SKILL_FILE_BYTES`] keeps its skill from being served (it is read through a bounded
//! reader too, so a file that grows during the scan cannot get past the bound).

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use switchboard_types::content::Resource;

use crate::verify::{self, encode_segment};
use crate::wire::{
    DIRECTORY_MIME, MARKDOWN, MAX_SKILL_FILE_BYTES, MAX_SKILL_RESOURCES, MAX_SKILL_TOTAL_BYTES,
    SKILL_MD, SKILL_SCHEME, Skill, SkillFiles, SkillResource,
};

/// The most directory entries one scan visits, and the deepest it goes.
pub(crate) const MAX_SCAN_ENTRIES: usize = 100_000;
/// The deepest directory a scan enters, below the folder.
pub(crate) const MAX_SCAN_DEPTH: usize = 32;

/// A skill defined in code: its skill path (`git-workflow`, `acme/billing/refunds`) and its
/// files by relative path (`SKILL.md`, `templates/invoice.md`).
#[derive(Debug, Clone)]
pub struct SkillSource {
    path: String,
    files: BTreeMap<String, Arc<[u8]>>,
}

impl SkillSource {
    /// A skill at `path` (its last segment is the skill's name), with no files yet.
    pub fn new(path: impl Into<String>) -> Self {
        SkillSource {
            path: path.into(),
            files: BTreeMap::new(),
        }
    }

    /// Adds (or replaces) the file at the relative `path`, `/`-separated.
    pub fn file(mut self, path: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        self.files.insert(path.into(), Arc::from(bytes.into()));
        self
    }

    /// The skill path.
    pub fn path(&self) -> &str {
        &self.path
    }
}

/// One file as served.
#[derive(Debug, Clone)]
pub(crate) struct ServedFile {
    pub(crate) bytes: Arc<[u8]>,
    pub(crate) mime: &'static str,
}

/// Everything served, at one moment.
#[derive(Debug, Default)]
pub(crate) struct Catalog {
    /// Entries in skill-path order.
    pub(crate) skills: Vec<Skill>,
    /// A `SKILL.md` URI → its index in `skills`.
    pub(crate) by_uri: HashMap<String, usize>,
    /// Every file by URI.
    pub(crate) files: HashMap<String, ServedFile>,
    /// Every directory by URI → its children by URI.
    pub(crate) dirs: HashMap<String, BTreeMap<String, Resource>>,
    /// Why some skills are not served.
    pub(crate) skipped: Vec<String>,
}

/// A file found on disk or given in code: relative segments from the folder, and its bytes.
type Found = (Vec<String>, Arc<[u8]>);

/// Builds the catalog from a folder (if any) and the code-defined skills.
pub(crate) fn build(root: Option<&Path>, code: &[SkillSource]) -> Catalog {
    build_with(root, code, MAX_SCAN_ENTRIES)
}

/// [`build`] visiting at most `max_entries` directory entries.
fn build_with(root: Option<&Path>, code: &[SkillSource], max_entries: usize) -> Catalog {
    let mut skipped = Vec::new();
    // Skill directories (relative segments) → their files (relative to the skill).
    let mut skills: BTreeMap<Vec<String>, Vec<Found>> = BTreeMap::new();
    if let Some(root) = root {
        let mut found = Vec::new();
        let mut too_large = Vec::new();
        let mut budget = max_entries;
        walk(
            root,
            &mut Vec::new(),
            &mut found,
            &mut too_large,
            &mut budget,
            &mut skipped,
        );
        for (segments, _) in found
            .iter()
            .filter(|(s, _)| s.last().is_some_and(|n| n == SKILL_MD))
        {
            let dir = segments[..segments.len() - 1].to_vec();
            if dir.is_empty() {
                skipped.push(
                    "a SKILL.md at the folder's root is not a skill (a skill is a directory)"
                        .into(),
                );
                continue;
            }
            if let Some(big) = too_large
                .iter()
                .find(|p: &&Vec<String>| p.starts_with(&dir))
            {
                skipped.push(format!(
                    "{}: {} is larger than {MAX_SKILL_FILE_BYTES} bytes",
                    dir.join("/"),
                    big.join("/")
                ));
                continue;
            }
            let files = found
                .iter()
                .filter(|(s, _)| s.len() > dir.len() && s.starts_with(&dir))
                .map(|(s, b)| (s[dir.len()..].to_vec(), b.clone()))
                .collect();
            skills.insert(dir, files);
        }
    }
    for source in code {
        match code_skill(source) {
            Ok((dir, files)) => {
                if skills.insert(dir, files).is_some() {
                    skipped.push(format!(
                        "{}: defined in code and in the folder; the code wins",
                        source.path
                    ));
                }
            }
            Err(why) => skipped.push(format!("{}: {why}", source.path)),
        }
    }
    let mut catalog = Catalog::default();
    for (dir, files) in skills {
        match assemble(&dir, files, &mut catalog) {
            Ok(()) => {}
            Err(why) => skipped.push(format!("{}: {why}", dir.join("/"))),
        }
    }
    catalog.skipped = skipped;
    catalog
}

fn code_skill(source: &SkillSource) -> Result<SkillFound, String> {
    let dir: Vec<String> = source.path.split('/').map(str::to_owned).collect();
    if dir.iter().any(|s| !plain(s)) {
        return Err("the skill path has a segment that is not a plain name".into());
    }
    let mut files = Vec::new();
    for (path, bytes) in &source.files {
        let segments: Vec<String> = path.split('/').map(str::to_owned).collect();
        if segments.iter().any(|s| !plain(s)) {
            return Err(format!("{path} is not a plain relative path"));
        }
        if bytes.len() as u64 > MAX_SKILL_FILE_BYTES {
            return Err(format!(
                "{path} is larger than {MAX_SKILL_FILE_BYTES} bytes"
            ));
        }
        files.push((segments, bytes.clone()));
    }
    Ok((dir, files))
}

/// A skill's directory segments and its files.
type SkillFound = (Vec<String>, Vec<Found>);

fn plain(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && !s.contains(['\\', '\0'])
        && !s.chars().any(char::is_control)
}

/// Adds one skill (its directory segments and its files) to the catalog, or says why not.
fn assemble(dir: &[String], mut files: Vec<Found>, catalog: &mut Catalog) -> Result<(), String> {
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let name = dir.last().ok_or("an empty skill path")?;
    let skill_md = files
        .iter()
        .find(|(s, _)| s.len() == 1 && s[0] == SKILL_MD)
        .ok_or("no SKILL.md")?;
    let text = std::str::from_utf8(&skill_md.1).map_err(|_| "SKILL.md is not UTF-8")?;
    let frontmatter = verify::frontmatter(text).map_err(|e| e.to_string())?;
    if frontmatter.get("name").and_then(|v| v.as_str()) != Some(name.as_str()) {
        return Err(format!(
            "the frontmatter's name is not {name:?}, the directory's name"
        ));
    }
    if !verify::is_skill_name(name) {
        return Err(format!("{name:?} breaks the Agent Skills naming rules"));
    }
    if files.len() > MAX_SKILL_RESOURCES {
        return Err(format!(
            "{} files, more than {MAX_SKILL_RESOURCES}",
            files.len()
        ));
    }
    let total: u64 = files.iter().map(|(_, b)| b.len() as u64).sum();
    if total > MAX_SKILL_TOTAL_BYTES {
        return Err(format!("{total} bytes, more than {MAX_SKILL_TOTAL_BYTES}"));
    }
    let root = format!(
        "{SKILL_SCHEME}{}",
        dir.iter()
            .map(|s| encode_segment(s))
            .collect::<Vec<_>>()
            .join("/")
    );
    let uri_of = |segments: &[String]| {
        let mut u = root.clone();
        for s in segments {
            u.push('/');
            u.push_str(&encode_segment(s));
        }
        u
    };
    let skill_uri = uri_of(&[SKILL_MD.to_owned()]);
    let mut manifest = Vec::with_capacity(files.len());
    catalog.dirs.entry(root.clone()).or_default();
    for (segments, bytes) in &files {
        let uri = uri_of(segments);
        let mime = mime_of(segments.last().map_or("", String::as_str), bytes);
        manifest.push(SkillResource {
            uri: uri.clone(),
            digest: verify::digest(bytes),
            size: bytes.len() as u64,
        });
        // The directories from the skill's root down to the file, each a child of the last.
        let mut parent = root.clone();
        for i in 0..segments.len() - 1 {
            let child = uri_of(&segments[..=i]);
            catalog
                .dirs
                .entry(parent.clone())
                .or_default()
                .entry(child.clone())
                .or_insert_with(|| {
                    Resource::new(child.clone(), segments[i].clone()).with_mime_type(DIRECTORY_MIME)
                });
            catalog.dirs.entry(child.clone()).or_default();
            parent = child;
        }
        let mut file =
            Resource::new(uri.clone(), segments[segments.len() - 1].clone()).with_mime_type(mime);
        file.size = Some(bytes.len() as u64);
        catalog
            .dirs
            .entry(parent)
            .or_default()
            .insert(uri.clone(), file);
        catalog.files.insert(
            uri,
            ServedFile {
                bytes: bytes.clone(),
                mime,
            },
        );
    }
    catalog
        .by_uri
        .insert(skill_uri.clone(), catalog.skills.len());
    catalog.skills.push(Skill {
        uri: skill_uri,
        frontmatter,
        resources: SkillFiles::Listed(manifest),
    });
    Ok(())
}

/// Collects the regular files under `dir` (bounded depth and count; links and dot-names
/// skipped), with the paths of those too large to read.
fn walk(
    dir: &Path,
    at: &mut Vec<String>,
    found: &mut Vec<Found>,
    too_large: &mut Vec<Vec<String>>,
    budget: &mut usize,
    skipped: &mut Vec<String>,
) {
    if at.len() > MAX_SCAN_DEPTH {
        skipped.push(format!(
            "{}: deeper than {MAX_SCAN_DEPTH} directories",
            at.join("/")
        ));
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        if *budget == 0 {
            skipped.push("the scan stopped: the folder has more entries than it reads".to_owned());
            return;
        }
        *budget -= 1;
        let Some(name) = e.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if name.starts_with('.') || !plain(&name) {
            continue;
        }
        // `DirEntry::file_type` does not follow links: a link is neither a file nor a directory here.
        let Ok(kind) = e.file_type() else {
            continue;
        };
        at.push(name);
        if kind.is_symlink() {
            skipped.push(format!("{}: a symbolic link, not followed", at.join("/")));
        } else if kind.is_dir() {
            walk(&e.path(), at, found, too_large, budget, skipped);
        } else if kind.is_file() {
            match read_bounded(&e.path()) {
                Ok(Some(bytes)) => found.push((at.clone(), Arc::from(bytes))),
                Ok(None) => too_large.push(at.clone()),
                Err(_) => skipped.push(format!("{}: unreadable", at.join("/"))),
            }
        }
        at.pop();
    }
}

/// The file's bytes, or `None` past [`MAX_SKILL_FILE_BYTES`] (read through a bounded reader,
/// after a check of its length). Opened without following a final symbolic link where the
/// platform allows, so a link swapped in after the directory listing is not read through.
fn read_bounded(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    let meta = std::fs::symlink_metadata(path)?;
    if !meta.file_type().is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if meta.len() > MAX_SKILL_FILE_BYTES {
        return Ok(None);
    }
    let file = std::fs::File::open(path)?;
    let opened = file.metadata()?;
    if !same_file(&meta, &opened) {
        return Err(std::io::Error::other("the file changed under the scan"));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_SKILL_FILE_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_SKILL_FILE_BYTES {
        return Ok(None);
    }
    Ok(Some(bytes))
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    b.is_file()
}

/// The MIME type of a skill file, from its extension (UTF-8 text without a known one is
/// `text/plain`, anything else `application/octet-stream`).
pub(crate) fn mime_of(name: &str, bytes: &[u8]) -> &'static str {
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("md" | "markdown") => MARKDOWN,
        Some("txt") => "text/plain",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("py") => "text/x-python",
        Some("sh") => "text/x-shellscript",
        Some("js" | "mjs") => "text/javascript",
        Some("ts") => "text/x-typescript",
        Some("html" | "htm") => "text/html",
        Some("csv") => "text/csv",
        Some("xml") => "application/xml",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("svg") => "image/svg+xml",
        Some("pdf") => "application/pdf",
        _ if std::str::from_utf8(bytes).is_ok() => "text/plain",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(tag: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("sb-skills-catalog-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn skill(dir: &Path, name: &str) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(
            dir.join(SKILL_MD),
            format!("---\nname: {name}\ndescription: d\n---\n"),
        )
        .unwrap();
    }

    #[test]
    fn the_scan_stops_at_its_entry_budget() {
        let root = temp("budget");
        for name in ["a", "b", "c"] {
            skill(&root.join(name), name);
        }
        // Each skill is two entries (its directory and its SKILL.md): 6 is enough, 5 is not.
        let all = build_with(Some(&root), &[], 6);
        assert_eq!(all.skills.len(), 3);
        assert!(all.skipped.is_empty(), "{:?}", all.skipped);
        let cut = build_with(Some(&root), &[], 5);
        assert_eq!(cut.skills.len(), 2);
        assert!(
            cut.skipped.iter().any(|s| s.contains("scan stopped")),
            "{:?}",
            cut.skipped
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn the_scan_stops_at_its_depth() {
        let root = temp("depth");
        let mut at = root.clone();
        // The deepest directory read is MAX_SCAN_DEPTH segments below the folder.
        for _ in 0..MAX_SCAN_DEPTH - 1 {
            at = at.join("d");
        }
        skill(&at.join("deep"), "deep");
        let mut too_deep = at.clone();
        too_deep.push("e");
        skill(&too_deep.join("deeper"), "deeper");
        let catalog = build(Some(&root), &[]);
        let names: Vec<_> = catalog.skills.iter().filter_map(|s| s.name()).collect();
        assert_eq!(names, ["deep"]);
        assert!(
            catalog.skipped.iter().any(|s| s.contains("deeper than")),
            "{:?}",
            catalog.skipped
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_skill_over_the_hosts_limits_is_not_served() {
        let md = "---\nname: many\ndescription: d\n---\n";
        let at_limit = (1..MAX_SKILL_RESOURCES)
            .fold(SkillSource::new("many").file(SKILL_MD, md), |s, i| {
                s.file(format!("f{i}"), "x")
            });
        assert_eq!(build(None, std::slice::from_ref(&at_limit)).skills.len(), 1);
        let over = at_limit.file("one-more", "x");
        let c = build(None, &[over]);
        assert!(
            c.skills.is_empty() && c.skipped[0].contains("more than 512"),
            "{:?}",
            c.skipped
        );
        let big = vec![0u8; MAX_SKILL_FILE_BYTES as usize];
        let rest = (MAX_SKILL_TOTAL_BYTES - 3 * MAX_SKILL_FILE_BYTES) as usize - md.len();
        let heavy = (0..3)
            .fold(SkillSource::new("many").file(SKILL_MD, md), |s, i| {
                s.file(format!("b{i}"), big.clone())
            })
            .file("rest", vec![0u8; rest]);
        assert_eq!(
            build(None, std::slice::from_ref(&heavy)).skills.len(),
            1,
            "exactly 16 MiB"
        );
        let c = build(None, &[heavy.file("b4", vec![0u8; 1])]);
        assert!(
            c.skills.is_empty() && c.skipped[0].contains("bytes, more than"),
            "{:?}",
            c.skipped
        );
    }
}
