//! The extension's wire types (SEP-2640, `specification/stable/skills.mdx`): the [`Skill`] entry
//! with its frontmatter and manifest, the three methods' params and results, and their marker
//! types for `ServerBuilder::request` and `ClientSession::request`.
//!
//! Applies to both sides.

use serde::{Deserialize, Serialize};
use switchboard_types::catalogue::{Method, RequestMethod};
use switchboard_types::content::Resource;
use switchboard_types::meta::JsonObject;
use switchboard_types::methods;

/// The extension's identifier, the key under `capabilities.extensions`.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";
/// The extension's one setting: the server implements `resources/directory/read`.
#[cfg_attr(not(any(feature = "server", feature = "client")), allow(dead_code))]
pub(crate) const DIRECTORY_READ: &str = "directoryRead";
/// The file every skill has at its root.
pub(crate) const SKILL_MD: &str = "SKILL.md";
/// The URI scheme skills are served under.
#[cfg_attr(not(feature = "server"), allow(dead_code))]
pub(crate) const SKILL_SCHEME: &str = "skill://";
/// The MIME type of a `SKILL.md`.
#[cfg_attr(not(feature = "server"), allow(dead_code))]
pub(crate) const MARKDOWN: &str = "text/markdown";
/// The MIME type of a directory resource.
pub const DIRECTORY_MIME: &str = "inode/directory";
/// Limits every host accepts: at most this many files per skill (`SKILL.md` included).
pub const MAX_SKILL_RESOURCES: usize = 512;
/// Limits every host accepts: at most this many bytes over a skill's files (16 MiB).
pub const MAX_SKILL_TOTAL_BYTES: u64 = 16 * 1024 * 1024;
/// Our bound on one skill file, served or pulled (4 MiB): a larger file is not served, and a
/// manifest naming one is refused before anything is read.
pub const MAX_SKILL_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// One file of a skill: its URI, the SHA-256 digest and the length of its raw bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillResource {
    /// The file's resource URI.
    pub uri: String,
    /// `sha256:` and 64 lowercase hex digits.
    pub digest: String,
    /// The length in bytes of the raw content the digest covers.
    pub size: u64,
}

/// A skill's files: the complete manifest, or `"dynamic"` when the server publishes no stable
/// digests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillFiles {
    /// Every file of the skill, each once, `SKILL.md` included.
    Listed(Vec<SkillResource>),
    /// `"dynamic"`: generated content, no integrity.
    Dynamic,
}

impl Serialize for SkillFiles {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SkillFiles::Listed(files) => files.serialize(s),
            SkillFiles::Dynamic => s.serialize_str("dynamic"),
        }
    }
}

impl<'de> Deserialize<'de> for SkillFiles {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Listed(Vec<SkillResource>),
            Word(String),
        }
        match Raw::deserialize(d)? {
            Raw::Listed(files) => Ok(SkillFiles::Listed(files)),
            Raw::Word(w) if w == "dynamic" => Ok(SkillFiles::Dynamic),
            Raw::Word(w) => Err(serde::de::Error::custom(format!(
                "resources must be an array or \"dynamic\", not {w:?}"
            ))),
        }
    }
}

/// The entry of one skill, the same from `skills/list` and `skills/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skill {
    /// The URI of the skill's `SKILL.md`.
    pub uri: String,
    /// The `SKILL.md` YAML frontmatter, verbatim, as a JSON object.
    pub frontmatter: JsonObject,
    /// The skill's files.
    pub resources: SkillFiles,
}

impl Skill {
    /// `frontmatter.name`, if it is a string.
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name").and_then(|v| v.as_str())
    }

    /// `frontmatter.description`, if it is a string.
    pub fn description(&self) -> Option<&str> {
        self.frontmatter.get("description").and_then(|v| v.as_str())
    }

    /// The manifest, unless the skill is dynamic.
    pub fn files(&self) -> Option<&[SkillResource]> {
        match &self.resources {
            SkillFiles::Listed(files) => Some(files),
            SkillFiles::Dynamic => None,
        }
    }

    /// The manifest entry of `uri`.
    pub fn file(&self, uri: &str) -> Option<&SkillResource> {
        self.files()?.iter().find(|f| f.uri == uri)
    }
}

/// `skills/list` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListSkillsParams {
    /// The cursor of the page wanted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// `skills/list` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSkillsResult {
    /// The entries of this page.
    pub skills: Vec<Skill>,
    /// The next page's cursor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// The caching hint (required from 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// `public` or `private`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<String>,
}

/// `skills/get` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetSkillParams {
    /// The URI of the skill's `SKILL.md`.
    pub uri: String,
}

/// `skills/get` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetSkillResult {
    /// The entry.
    pub skill: Skill,
    /// The caching hint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// `public` or `private`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<String>,
}

/// `resources/directory/read` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadDirectoryParams {
    /// The directory resource's URI (no trailing slash).
    pub uri: String,
    /// The cursor of the page wanted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// `resources/directory/read` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadDirectoryResult {
    /// The directory's direct children; subdirectories have [`DIRECTORY_MIME`].
    pub resources: Vec<Resource>,
    /// The next page's cursor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// Marker of `skills/list`.
#[derive(Debug)]
pub struct ListSkills;
impl Method for ListSkills {
    const NAME: &'static str = methods::SKILLS_LIST;
}
impl RequestMethod for ListSkills {
    type Params = ListSkillsParams;
    type Result = ListSkillsResult;
}

/// Marker of `skills/get`.
#[derive(Debug)]
pub struct GetSkill;
impl Method for GetSkill {
    const NAME: &'static str = methods::SKILLS_GET;
}
impl RequestMethod for GetSkill {
    type Params = GetSkillParams;
    type Result = GetSkillResult;
}

/// Marker of `resources/directory/read`.
#[derive(Debug)]
pub struct ReadDirectory;
impl Method for ReadDirectory {
    const NAME: &'static str = methods::RESOURCES_DIRECTORY_READ;
}
impl RequestMethod for ReadDirectory {
    type Params = ReadDirectoryParams;
    type Result = ReadDirectoryResult;
}

/// What a peer declared under `capabilities.extensions[SKILLS_EXTENSION]`: `None` when the
/// extension is not declared (or its value is not an object), else whether `directoryRead` is.
#[cfg_attr(not(feature = "client"), allow(dead_code))]
pub(crate) fn declared(extra: &JsonObject) -> Option<bool> {
    let settings = extra
        .get("extensions")?
        .get(SKILLS_EXTENSION)?
        .as_object()?;
    Some(
        settings
            .get(DIRECTORY_READ)
            .and_then(|v| v.as_bool())
            .unwrap_or(false),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The catalogue's extension rows describe these markers: same names, this extension, the
    /// list member and result type of the wire types here (issue 28, item 6).
    #[test]
    fn the_catalogue_describes_every_marker_of_this_extension() {
        use switchboard_types::catalogue;
        let rows = [
            (ListSkills::NAME, Some("skills"), "ListSkillsResult"),
            (GetSkill::NAME, None, "GetSkillResult"),
            (
                ReadDirectory::NAME,
                Some("resources"),
                "ReadDirectoryResult",
            ),
        ];
        for (name, list, result) in rows {
            let spec = catalogue::describe(name).unwrap();
            assert_eq!(spec.extension, Some(SKILLS_EXTENSION), "{name}");
            assert_eq!(spec.primitive, catalogue::Primitive::Skills, "{name}");
            assert_eq!((spec.list_member, spec.result_type), (list, Some(result)));
        }
        let listed = serde_json::to_value(ListSkillsResult {
            skills: vec![],
            next_cursor: None,
            ttl_ms: None,
            cache_scope: None,
        })
        .unwrap();
        assert!(listed.get("skills").is_some());
    }

    #[test]
    fn sk_4_resources_are_an_array_or_dynamic_and_nothing_else() {
        let listed: SkillFiles = serde_json::from_value(
            json!([{"uri": "skill://a/SKILL.md", "digest": "sha256:00", "size": 1}]),
        )
        .unwrap();
        assert!(matches!(listed, SkillFiles::Listed(ref f) if f.len() == 1));
        let dynamic: SkillFiles = serde_json::from_value(json!("dynamic")).unwrap();
        assert_eq!(dynamic, SkillFiles::Dynamic);
        assert_eq!(serde_json::to_value(&dynamic).unwrap(), json!("dynamic"));
        assert!(serde_json::from_value::<SkillFiles>(json!("static")).is_err());
        assert!(serde_json::from_value::<SkillFiles>(json!({})).is_err());
        // An entry without resources is invalid (`resources` is required).
        let no_resources = json!({"uri": "skill://a/SKILL.md", "frontmatter": {"name": "a"}});
        assert!(serde_json::from_value::<Skill>(no_resources).is_err());
    }

    #[test]
    fn sk_1_the_declaration_is_an_object_under_extensions() {
        let caps = |v: serde_json::Value| v.as_object().unwrap().clone();
        assert_eq!(declared(&caps(json!({}))), None);
        assert_eq!(
            declared(&caps(json!({"extensions": {SKILLS_EXTENSION: true}}))),
            None
        );
        assert_eq!(
            declared(&caps(json!({"extensions": {SKILLS_EXTENSION: {}}}))),
            Some(false)
        );
        assert_eq!(
            declared(&caps(
                json!({"extensions": {SKILLS_EXTENSION: {"directoryRead": true}}})
            )),
            Some(true)
        );
    }
}
