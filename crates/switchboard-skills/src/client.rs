//! Using skills from any server that has them: list and get entries, load a skill and read its
//! files lazily, each verified against the entry (size, digest; a `SKILL.md`'s frontmatter
//! field by field), and pull a verified skill to disk.
//!
//! Client side. Nothing is fetched ahead of need: [`Skills::list`] and [`Skills::get`] read
//! entries only; [`Skills::load`] reads `SKILL.md`; [`Skills::read`] one listed file; only
//! [`Skills::pull`] reads every file of the skill it was asked for. Content that fails
//! verification is never returned: the call fails with a [`SkillError`] naming why.
//!
//! ```no_run
//! # async fn f(session: &switchboard_client::ClientSession) -> Result<(), switchboard_skills::SkillError> {
//! use switchboard_skills::Skills;
//! let skills = Skills::new(session);
//! for skill in skills.list().await? {
//!     println!("{} — {}", skill.uri, skill.description().unwrap_or_default());
//! }
//! let skill = skills.find("git-workflow").await?;
//! let loaded = skills.load(&skill).await?; // SKILL.md, verified
//! println!("{}", loaded.text);
//! skills.pull(&skill, std::path::Path::new("./git-workflow")).await?;
//! # Ok(()) }
//! ```

use std::path::{Path, PathBuf};

use base64::Engine as _;
use switchboard_client::{ClientError, ClientSession, RequestOptions};
use switchboard_types::catalogue::RequestMethod;
use switchboard_types::content::ResourceContents;
use switchboard_types::meta::JsonObject;

use crate::verify::{self, EntryError, FrontmatterError, Mismatch, PathError};
use crate::wire::{
    GetSkill, GetSkillParams, ListSkills, ListSkillsParams, ReadDirectory, ReadDirectoryParams,
    ReadDirectoryResult, SKILL_MD, SKILLS_EXTENSION, Skill, SkillFiles,
};

/// The most `skills/list` pages one [`Skills::list`] follows.
pub(crate) const MAX_LIST_PAGES: usize = 100;

/// Why a skill could not be listed, loaded, read or pulled.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkillError {
    /// The server did not declare `io.modelcontextprotocol/skills`.
    #[error("the server does not declare the {SKILLS_EXTENSION} extension")]
    NotDeclared,
    /// The server did not declare `directoryRead`.
    #[error("the server does not declare directoryRead")]
    NoDirectoryRead,
    /// No listed skill has this name, and `skills/get` knows no skill at the name's URI.
    #[error("no skill named {0:?}")]
    NotFound(String),
    /// Several listed skills share the name; ask for one by URI.
    #[error("{name:?} names several skills: {}", uris.join(", "))]
    Ambiguous {
        /// The name.
        name: String,
        /// The URIs of the skills that have it.
        uris: Vec<String>,
    },
    /// The entry is not one a host may load (its shape, before anything is read).
    #[error("invalid skill entry: {0}")]
    Entry(#[from] EntryError),
    /// The skill's `resources` is `"dynamic"`: there is nothing to verify its files against.
    #[error("{0} is dynamic: its files have no digests to verify, so it is not loaded")]
    Dynamic(String),
    /// The file is not in the entry's manifest (a read of an unlisted file is a verification
    /// failure).
    #[error("{0} is not listed in the skill's manifest")]
    Unlisted(String),
    /// The bytes received are not those the manifest describes.
    #[error("verification failed: {0}")]
    Mismatch(#[from] Mismatch),
    /// The `SKILL.md` received has no usable frontmatter.
    #[error("verification failed: {uri}: {error}")]
    Frontmatter {
        /// The `SKILL.md`.
        uri: String,
        /// Why.
        error: FrontmatterError,
    },
    /// The `SKILL.md` received has frontmatter other than the entry's.
    #[error("verification failed: the frontmatter of {uri} differs from the entry's in {}", fields.join(", "))]
    FrontmatterMismatch {
        /// The `SKILL.md`.
        uri: String,
        /// The fields that differ.
        fields: Vec<String>,
    },
    /// `resources/read` returned no contents for the URI, or a blob that is not base64.
    #[error("{0}: the server returned no readable contents")]
    NoContents(String),
    /// A manifest URI does not map to a path inside the skill's directory.
    #[error(transparent)]
    Path(#[from] PathError),
    /// The destination exists already.
    #[error("{0} exists already; pull writes a new directory")]
    Exists(PathBuf),
    /// Writing to disk failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The request failed.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// `skills/list` kept returning cursors.
    #[error("skills/list did not end within {MAX_LIST_PAGES} pages")]
    TooManyPages,
}

/// A loaded skill: its entry and its verified `SKILL.md`.
#[derive(Debug, Clone)]
pub struct LoadedSkill {
    /// The entry it was verified against.
    pub skill: Skill,
    /// The text of `SKILL.md`.
    pub text: String,
    /// Its frontmatter (equal to the entry's).
    pub frontmatter: JsonObject,
}

/// The skills of one connected server.
#[derive(Debug, Clone, Copy)]
pub struct Skills<'a> {
    session: &'a ClientSession,
}

impl<'a> Skills<'a> {
    /// The skills of `session`'s server.
    pub fn new(session: &'a ClientSession) -> Self {
        Skills { session }
    }

    /// `None` when the server did not declare the extension, else whether it declared
    /// `directoryRead`.
    pub fn declared(&self) -> Option<bool> {
        crate::wire::declared(&self.session.server_capabilities().extra)
    }

    fn require(&self) -> Result<(), SkillError> {
        self.declared().map(|_| ()).ok_or(SkillError::NotDeclared)
    }

    async fn call<M: RequestMethod>(&self, params: M::Params) -> Result<M::Result, SkillError> {
        Ok(self
            .session
            .request::<M::Params, M::Result>(M::NAME, params, RequestOptions::default())
            .await?)
    }

    /// Every entry, following cursors (entries only: no file is read).
    ///
    /// # Errors
    /// Not declared, a request error, or more than 100 pages.
    pub async fn list(&self) -> Result<Vec<Skill>, SkillError> {
        self.require()?;
        let mut out = Vec::new();
        let mut cursor = None;
        for _ in 0..MAX_LIST_PAGES {
            let page = self.call::<ListSkills>(ListSkillsParams { cursor }).await?;
            out.extend(page.skills);
            match page.next_cursor {
                Some(c) if !c.is_empty() => cursor = Some(c),
                _ => return Ok(out),
            }
        }
        Err(SkillError::TooManyPages)
    }

    /// The entry of the skill whose `SKILL.md` is at `uri` (`skills/get`).
    ///
    /// # Errors
    /// Not declared, or a request error (`-32602`: no skill there).
    pub async fn get(&self, uri: &str) -> Result<Skill, SkillError> {
        self.require()?;
        Ok(self
            .call::<GetSkill>(GetSkillParams {
                uri: uri.to_owned(),
            })
            .await?
            .skill)
    }

    /// The skill named `name_or_uri`: a URI is asked for with `skills/get`; a name is looked up
    /// in the listing (several skills with that name are [`SkillError::Ambiguous`]), and a name
    /// no listed skill has is asked for at `skill://NAME/SKILL.md` (a listing may be partial).
    ///
    /// # Errors
    /// No such skill, several, or a request error.
    pub async fn find(&self, name_or_uri: &str) -> Result<Skill, SkillError> {
        if name_or_uri.contains("://") {
            return self.get(name_or_uri).await;
        }
        let listed: Vec<Skill> = self
            .list()
            .await?
            .into_iter()
            .filter(|s| s.name() == Some(name_or_uri))
            .collect();
        match listed.len() {
            1 => Ok(listed.into_iter().next().expect("one")),
            0 => self
                .get(&format!("skill://{name_or_uri}/{SKILL_MD}"))
                .await
                .map_err(|e| match e {
                    SkillError::Client(_) => SkillError::NotFound(name_or_uri.to_owned()),
                    e => e,
                }),
            _ => Err(SkillError::Ambiguous {
                name: name_or_uri.to_owned(),
                uris: listed.into_iter().map(|s| s.uri).collect(),
            }),
        }
    }

    /// Loads a skill: checks the entry, reads its `SKILL.md`, verifies size and digest, then
    /// compares its frontmatter with the entry's field by field.
    ///
    /// # Errors
    /// An invalid or dynamic entry, a request error, or a verification failure.
    pub async fn load(&self, skill: &Skill) -> Result<LoadedSkill, SkillError> {
        let bytes = self.read(skill, &skill.uri).await?;
        let text = String::from_utf8(bytes).map_err(|_| SkillError::Frontmatter {
            uri: skill.uri.clone(),
            error: FrontmatterError::NotYaml("SKILL.md is not UTF-8".into()),
        })?;
        let frontmatter = verify::frontmatter(&text).map_err(|error| SkillError::Frontmatter {
            uri: skill.uri.clone(),
            error,
        })?;
        let fields = verify::frontmatter_differences(&frontmatter, &skill.frontmatter);
        if !fields.is_empty() {
            return Err(SkillError::FrontmatterMismatch {
                uri: skill.uri.clone(),
                fields,
            });
        }
        Ok(LoadedSkill {
            skill: skill.clone(),
            text,
            frontmatter,
        })
    }

    /// Reads one file of the skill, listed in its manifest, and verifies its size and digest.
    /// A `SKILL.md` read this way is not compared with the frontmatter: [`Skills::load`] does.
    ///
    /// # Errors
    /// An invalid or dynamic entry, an unlisted file, a request error, or a mismatch.
    pub async fn read(&self, skill: &Skill, uri: &str) -> Result<Vec<u8>, SkillError> {
        verify::check_entry(skill)?;
        let SkillFiles::Listed(_) = &skill.resources else {
            return Err(SkillError::Dynamic(skill.uri.clone()));
        };
        let entry = skill
            .file(uri)
            .ok_or_else(|| SkillError::Unlisted(uri.to_owned()))?;
        let bytes = self.fetch(uri).await?;
        verify::check_bytes(entry, &bytes)?;
        Ok(bytes)
    }

    /// `resources/directory/read` of a directory resource (one page).
    ///
    /// # Errors
    /// The server did not declare `directoryRead`, or a request error.
    pub async fn read_directory(
        &self,
        uri: &str,
        cursor: Option<String>,
    ) -> Result<ReadDirectoryResult, SkillError> {
        if self.declared() != Some(true) {
            return Err(SkillError::NoDirectoryRead);
        }
        self.call::<ReadDirectory>(ReadDirectoryParams {
            uri: uri.to_owned(),
            cursor,
        })
        .await
    }

    /// Writes the skill to the new directory `dest`: every file read and verified (the
    /// `SKILL.md` as [`Skills::load`] does) into a temporary directory beside `dest`, which is
    /// renamed to `dest` only when all passed; on any failure it is removed and `dest` never
    /// appears. Returns the files written, relative to `dest`.
    ///
    /// # Errors
    /// `dest` exists, an invalid or dynamic entry, a request error, a verification failure, or
    /// an I/O error.
    pub async fn pull(&self, skill: &Skill, dest: &Path) -> Result<Vec<PathBuf>, SkillError> {
        verify::check_entry(skill)?;
        let Some(files) = skill.files() else {
            return Err(SkillError::Dynamic(skill.uri.clone()));
        };
        if tokio::fs::symlink_metadata(dest).await.is_ok() {
            return Err(SkillError::Exists(dest.to_owned()));
        }
        let (root, _) = verify::skill_root(&skill.uri)
            .ok_or_else(|| EntryError::NotSkillMd(skill.uri.clone()))?;
        // Every path is checked before anything is read or written.
        let mut plan = Vec::with_capacity(files.len());
        for f in files {
            let rel: PathBuf = verify::relative_path(root, &f.uri)?.iter().collect();
            plan.push((f.uri.clone(), rel));
        }
        // The skill is loaded (its SKILL.md verified, frontmatter included) before any other
        // file is read.
        plan.sort_by_key(|(uri, _)| *uri != skill.uri);
        let parent = dest
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = dest
            .file_name()
            .ok_or_else(|| std::io::Error::other("the destination has no file name"))?;
        let mut tag = [0u8; 8];
        getrandom::fill(&mut tag).map_err(|e| std::io::Error::other(e.to_string()))?;
        let tag: String = tag.iter().map(|b| format!("{b:02x}")).collect();
        let tmp = parent.join(format!(".{}.pull-{tag}", name.to_string_lossy()));
        tokio::fs::create_dir(&tmp).await?;
        let written = self.pull_into(skill, &plan, &tmp).await;
        let result = match written {
            Ok(()) => tokio::fs::rename(&tmp, dest)
                .await
                .map_err(SkillError::from),
            Err(e) => Err(e),
        };
        if let Err(e) = result {
            let _ = tokio::fs::remove_dir_all(&tmp).await;
            return Err(e);
        }
        Ok(plan.into_iter().map(|(_, rel)| rel).collect())
    }

    async fn pull_into(
        &self,
        skill: &Skill,
        plan: &[(String, PathBuf)],
        tmp: &Path,
    ) -> Result<(), SkillError> {
        for (uri, rel) in plan {
            let bytes = if *uri == skill.uri {
                self.load(skill).await?.text.into_bytes()
            } else {
                self.read(skill, uri).await?
            };
            let path = tmp.join(rel);
            if let Some(dir) = path.parent() {
                tokio::fs::create_dir_all(dir).await?;
            }
            // A new file each time (create_new): a name cannot be written twice or through a link.
            use tokio::io::AsyncWriteExt as _;
            let mut file = tokio::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
                .await?;
            file.write_all(&bytes).await?;
            file.sync_all().await?;
        }
        Ok(())
    }

    /// The raw bytes of `uri` (`resources/read`: the text's UTF-8 bytes, or the decoded blob).
    async fn fetch(&self, uri: &str) -> Result<Vec<u8>, SkillError> {
        let result = self.session.read_resource(uri).await?;
        let contents = result
            .contents
            .iter()
            .find(|c| contents_uri(c) == uri)
            .or(result.contents.first())
            .ok_or_else(|| SkillError::NoContents(uri.to_owned()))?;
        match contents {
            ResourceContents::Text(t) => Ok(t.text.clone().into_bytes()),
            ResourceContents::Blob(b) => base64::engine::general_purpose::STANDARD
                .decode(b.blob.as_bytes())
                .map_err(|_| SkillError::NoContents(uri.to_owned())),
        }
    }
}

fn contents_uri(c: &ResourceContents) -> &str {
    match c {
        ResourceContents::Text(t) => &t.uri,
        ResourceContents::Blob(b) => &b.uri,
    }
}
