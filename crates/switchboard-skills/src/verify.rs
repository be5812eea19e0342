//! What both sides check: a file's digest, a `SKILL.md`'s frontmatter, a skill name, where a
//! file URI sits in its skill, and whether an entry is one a host may load.
//!
//! Applies to both sides: the server computes digests and renders frontmatter with these; the
//! client and `switchboard check` hold a served entry to them.

use serde_json::Value;
use sha2::{Digest, Sha256};
use switchboard_types::meta::JsonObject;

use crate::wire::{
    MAX_SKILL_FILE_BYTES, MAX_SKILL_RESOURCES, MAX_SKILL_TOTAL_BYTES, SKILL_MD, Skill, SkillFiles,
};

/// `sha256:` and the 64 lowercase hex digits of the SHA-256 of `bytes`.
pub fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(71);
    out.push_str("sha256:");
    for b in hash {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// Whether `s` is a digest as the extension writes it (`sha256:` + 64 lowercase hex digits).
pub(crate) fn is_digest(s: &str) -> bool {
    s.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// Why a `SKILL.md` has no usable frontmatter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrontmatterError {
    /// The file does not begin with a `---` line closed by another.
    #[error("SKILL.md does not begin with a --- delimited YAML frontmatter block")]
    Missing,
    /// The block is not YAML, or not a mapping with string keys.
    #[error("the frontmatter is not a YAML mapping: {0}")]
    NotYaml(String),
    /// `name` or `description` is missing, empty or not a string.
    #[error("the frontmatter has no non-empty {0}")]
    Required(&'static str),
}

/// The YAML frontmatter of a `SKILL.md`, rendered as a JSON object: every field the author
/// wrote (`name` and `description` are required). A byte-order mark before the block is
/// allowed; the block opens with `---` on the first line and closes at the next line that is
/// `---` (trailing spaces allowed).
///
/// # Errors
/// No block, a block that is not a YAML mapping, or no `name` / `description`.
pub fn frontmatter(text: &str) -> Result<JsonObject, FrontmatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\r\n")
        .or_else(|| text.strip_prefix("---\n"))
        .ok_or(FrontmatterError::Missing)?;
    let mut yaml_end = None;
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare.trim_end_matches([' ', '\t']) == "---" && bare.starts_with("---") {
            yaml_end = Some(at);
            break;
        }
        at += line.len();
    }
    let yaml = &rest[..yaml_end.ok_or(FrontmatterError::Missing)?];
    let value: Value = if yaml.trim().is_empty() {
        Value::Object(JsonObject::new())
    } else {
        yaml_serde::from_str(yaml).map_err(|e| FrontmatterError::NotYaml(e.to_string()))?
    };
    let Value::Object(map) = value else {
        return Err(FrontmatterError::NotYaml("not a mapping".into()));
    };
    for field in ["name", "description"] {
        if map
            .get(field)
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            return Err(FrontmatterError::Required(field));
        }
    }
    Ok(map)
}

/// The fields where two frontmatter objects differ (a field absent on one side counts as
/// `null`), in order; empty when they are identical in content.
pub fn frontmatter_differences(file: &JsonObject, entry: &JsonObject) -> Vec<String> {
    let mut keys: Vec<&String> = file.keys().chain(entry.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| file.get(*k).unwrap_or(&Value::Null) != entry.get(*k).unwrap_or(&Value::Null))
        .cloned()
        .collect()
}

/// The Agent Skills naming rules: 1 to 64 characters, lowercase ASCII letters, digits and
/// hyphens, no hyphen first, last or twice in a row.
pub(crate) fn is_skill_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// The skill root of a `SKILL.md` URI (the URI without `/SKILL.md`), and the skill's name as
/// the URI says it (the segment before `SKILL.md`).
pub fn skill_root(uri: &str) -> Option<(&str, &str)> {
    let root = uri.strip_suffix(SKILL_MD)?.strip_suffix('/')?;
    let after_scheme = root.find("://").map_or(root, |i| &root[i + 3..]);
    let name = after_scheme.rsplit('/').next().filter(|n| !n.is_empty())?;
    Some((root, name))
}

/// Why a file URI cannot be a path inside its skill.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    /// The URI is not under the skill's root.
    #[error("{0} is not inside the skill's directory")]
    Outside(String),
    /// A segment is empty, `.` or `..` (written as is or percent-encoded), or holds a
    /// backslash, a NUL or a control character.
    #[error("{0} has a path segment that is not a plain name")]
    BadSegment(String),
    /// A percent escape that is not two hex digits or decodes to something that is not UTF-8.
    #[error("{0} has a malformed percent escape")]
    BadEscape(String),
}

/// The path of `uri` relative to the skill `root` (as from [`skill_root`]), as its decoded
/// segments: each one a plain file or directory name. Refuses anything that could step out of
/// the skill's directory when joined to a local path.
///
/// # Errors
/// The URI is not under `root`, or a segment is not a plain name.
pub fn relative_path(root: &str, uri: &str) -> Result<Vec<String>, PathError> {
    let rest = uri
        .strip_prefix(root)
        .and_then(|r| r.strip_prefix('/'))
        .ok_or_else(|| PathError::Outside(uri.to_owned()))?;
    if rest.contains(['?', '#']) {
        return Err(PathError::BadSegment(uri.to_owned()));
    }
    rest.split('/')
        .map(|seg| {
            let decoded =
                percent_decode(seg).ok_or_else(|| PathError::BadEscape(uri.to_owned()))?;
            let plain = !decoded.is_empty()
                && decoded != "."
                && decoded != ".."
                && !decoded.contains(['/', '\\', '\0'])
                && !decoded.chars().any(char::is_control);
            if plain {
                Ok(decoded)
            } else {
                Err(PathError::BadSegment(uri.to_owned()))
            }
        })
        .collect()
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            if !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
                return None;
            }
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A path segment written into a URI: unreserved characters kept, everything else
/// percent-encoded.
#[cfg_attr(not(feature = "server"), allow(dead_code))]
pub(crate) fn encode_segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Why an entry cannot be loaded (its shape, before any file is read).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EntryError {
    /// The entry's URI is not a `SKILL.md` URI.
    #[error("{0} is not the URI of a SKILL.md")]
    NotSkillMd(String),
    /// `frontmatter.name` is missing or differs from the URI's final skill-path segment.
    #[error(
        "the skill at {uri} is named {name:?} in its frontmatter, not {segment:?} as its URI says"
    )]
    NameMismatch {
        /// The entry's URI.
        uri: String,
        /// `frontmatter.name`.
        name: Option<String>,
        /// The final skill-path segment.
        segment: String,
    },
    /// The name breaks the Agent Skills naming rules.
    #[error("{0:?} is not a valid skill name (1-64 lowercase letters, digits, single hyphens)")]
    BadName(String),
    /// `frontmatter.description` is missing or empty.
    #[error("the skill at {0} has no description")]
    NoDescription(String),
    /// The manifest has no entry for `SKILL.md` itself.
    #[error("the manifest of {0} does not list its SKILL.md")]
    Incomplete(String),
    /// A manifest URI appears twice.
    #[error("the manifest lists {0} twice")]
    Duplicate(String),
    /// A manifest URI is outside the skill's directory.
    #[error(transparent)]
    Path(#[from] PathError),
    /// A digest is not `sha256:` + 64 lowercase hex digits.
    #[error("the digest of {0} is not sha256:<64 lowercase hex>")]
    BadDigest(String),
    /// More files than [`MAX_SKILL_RESOURCES`].
    #[error("the skill has {0} files, more than the {MAX_SKILL_RESOURCES} every host accepts")]
    TooManyFiles(usize),
    /// More bytes than [`MAX_SKILL_TOTAL_BYTES`].
    #[error(
        "the skill's files add up to {0} bytes, more than the {MAX_SKILL_TOTAL_BYTES} every host accepts"
    )]
    TooLarge(u64),
    /// One file larger than [`MAX_SKILL_FILE_BYTES`].
    #[error("{uri} is {size} bytes, more than the {MAX_SKILL_FILE_BYTES} allowed for one file")]
    FileTooLarge {
        /// The file.
        uri: String,
        /// Its size as listed.
        size: u64,
    },
}

/// Checks an entry's shape: a `SKILL.md` URI whose final segment is the frontmatter's valid
/// name, a description, and (for a listed manifest) `SKILL.md` listed, every file once, inside
/// the skill, with a well-formed digest, within the limits.
///
/// # Errors
/// The first problem found.
pub fn check_entry(skill: &Skill) -> Result<(), EntryError> {
    let (root, segment) =
        skill_root(&skill.uri).ok_or_else(|| EntryError::NotSkillMd(skill.uri.clone()))?;
    if skill.name() != Some(segment) {
        return Err(EntryError::NameMismatch {
            uri: skill.uri.clone(),
            name: skill.name().map(str::to_owned),
            segment: segment.to_owned(),
        });
    }
    if !is_skill_name(segment) {
        return Err(EntryError::BadName(segment.to_owned()));
    }
    if skill.description().is_none_or(str::is_empty) {
        return Err(EntryError::NoDescription(skill.uri.clone()));
    }
    let SkillFiles::Listed(files) = &skill.resources else {
        return Ok(());
    };
    if files.len() > MAX_SKILL_RESOURCES {
        return Err(EntryError::TooManyFiles(files.len()));
    }
    let mut seen = std::collections::HashSet::new();
    let mut total: u64 = 0;
    for f in files {
        if !seen.insert(f.uri.as_str()) {
            return Err(EntryError::Duplicate(f.uri.clone()));
        }
        relative_path(root, &f.uri)?;
        if !is_digest(&f.digest) {
            return Err(EntryError::BadDigest(f.uri.clone()));
        }
        if f.size > MAX_SKILL_FILE_BYTES {
            return Err(EntryError::FileTooLarge {
                uri: f.uri.clone(),
                size: f.size,
            });
        }
        total = total.saturating_add(f.size);
    }
    if total > MAX_SKILL_TOTAL_BYTES {
        return Err(EntryError::TooLarge(total));
    }
    if !seen.contains(skill.uri.as_str()) {
        return Err(EntryError::Incomplete(skill.uri.clone()));
    }
    Ok(())
}

/// Why fetched bytes are not the file the entry describes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Mismatch {
    /// The byte length differs from the entry's `size`.
    #[error("{uri} is {got} bytes, the manifest says {expected}")]
    Size {
        /// The file.
        uri: String,
        /// The manifest's size.
        expected: u64,
        /// The bytes received.
        got: u64,
    },
    /// The SHA-256 differs from the entry's `digest`.
    #[error("{uri} hashes to {got}, the manifest says {expected}")]
    Digest {
        /// The file.
        uri: String,
        /// The manifest's digest.
        expected: String,
        /// The digest of the bytes received.
        got: String,
    },
}

/// Checks bytes against their manifest entry: the size first (a different length fails without
/// hashing), then the digest.
///
/// # Errors
/// The size or the digest differs.
pub fn check_bytes(entry: &crate::wire::SkillResource, bytes: &[u8]) -> Result<(), Mismatch> {
    let got = bytes.len() as u64;
    if got != entry.size {
        return Err(Mismatch::Size {
            uri: entry.uri.clone(),
            expected: entry.size,
            got,
        });
    }
    let got = digest(bytes);
    if got != entry.digest {
        return Err(Mismatch::Digest {
            uri: entry.uri.clone(),
            expected: entry.digest.clone(),
            got,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sk_4_digests_are_sha256_in_lowercase_hex() {
        assert_eq!(
            digest(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(is_digest(&digest(b"")));
        assert!(!is_digest(&digest(b"").to_uppercase()));
        assert!(!is_digest("sha256:abc"));
        assert!(!is_digest(
            "md5:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        ));
    }

    #[test]
    fn sk_3_frontmatter_is_every_field_verbatim() {
        let text = "---\nname: pdf-processing\ndescription: Extract PDFs\nlicense: Apache-2.0\nmetadata:\n  version: \"2.1\"\nallowed-tools: [Read, Bash]\n---\n\n# Body\n";
        let fm = frontmatter(text).unwrap();
        assert_eq!(
            Value::Object(fm),
            json!({"name": "pdf-processing", "description": "Extract PDFs", "license": "Apache-2.0",
                "metadata": {"version": "2.1"}, "allowed-tools": ["Read", "Bash"]})
        );
        // A byte-order mark and CRLF lines, a closing line with trailing spaces.
        let crlf = "\u{feff}---\r\nname: a\r\ndescription: b\r\n---  \r\nbody";
        assert_eq!(frontmatter(crlf).unwrap().len(), 2);
    }

    #[test]
    fn sk_3_frontmatter_needs_the_block_a_mapping_a_name_and_a_description() {
        assert_eq!(frontmatter("# no block\n"), Err(FrontmatterError::Missing));
        assert_eq!(
            frontmatter("---\nname: a\n"),
            Err(FrontmatterError::Missing)
        );
        assert!(matches!(
            frontmatter("---\n- a\n---\n"),
            Err(FrontmatterError::NotYaml(_))
        ));
        assert!(matches!(
            frontmatter("---\nname: [\n---\n"),
            Err(FrontmatterError::NotYaml(_))
        ));
        assert_eq!(
            frontmatter("---\nname: a\n---\n"),
            Err(FrontmatterError::Required("description"))
        );
        assert_eq!(
            frontmatter("---\nname: ''\ndescription: d\n---\n"),
            Err(FrontmatterError::Required("name"))
        );
    }

    #[test]
    fn sk_8_frontmatter_differences_name_each_field() {
        let a = json!({"name": "a", "description": "x"});
        let b = json!({"name": "a", "description": "y", "license": "MIT"});
        let diff = frontmatter_differences(a.as_object().unwrap(), b.as_object().unwrap());
        assert_eq!(diff, vec!["description".to_owned(), "license".to_owned()]);
        assert!(frontmatter_differences(a.as_object().unwrap(), a.as_object().unwrap()).is_empty());
    }

    #[test]
    fn sk_3_names_follow_the_agent_skills_rules() {
        for ok in ["a", "git-workflow", "pdf2", &"a".repeat(64)] {
            assert!(is_skill_name(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", "a--b", "A", "a_b", "a.b", &"a".repeat(65)] {
            assert!(!is_skill_name(bad), "{bad}");
        }
    }

    #[test]
    fn sk_10_paths_stay_inside_the_skill() {
        let root = "skill://acme/refunds";
        assert_eq!(
            relative_path(root, "skill://acme/refunds/templates/a%20b.md").unwrap(),
            vec!["templates".to_owned(), "a b.md".to_owned()]
        );
        for bad in [
            "skill://acme/refunds/../x",
            "skill://acme/refunds/%2e%2e/x",
            "skill://acme/refunds/%2E%2E/%2E%2E/etc/passwd",
            "skill://acme/refunds/a/./b",
            "skill://acme/refunds/a//b",
            "skill://acme/refunds/a%2fb",
            "skill://acme/refunds/a%5c..%5cb",
            "skill://acme/refunds/a%00",
            "skill://acme/refunds/a?x=1",
        ] {
            assert!(
                matches!(relative_path(root, bad), Err(PathError::BadSegment(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            relative_path(root, "skill://acme/refunds/%zz"),
            Err(PathError::BadEscape(_))
        ));
        assert!(matches!(
            relative_path(root, "skill://acme/refundsX/a"),
            Err(PathError::Outside(_))
        ));
        assert!(matches!(
            relative_path(root, "skill://other/a"),
            Err(PathError::Outside(_))
        ));
    }

    fn entry(files: Value) -> Skill {
        serde_json::from_value(json!({
            "uri": "skill://acme/refunds/SKILL.md",
            "frontmatter": {"name": "refunds", "description": "d"},
            "resources": files,
        }))
        .unwrap()
    }

    #[test]
    fn sk_4_sk_5_entries_are_complete_inside_and_bounded() {
        let d = digest(b"x");
        let ok = entry(json!([{"uri": "skill://acme/refunds/SKILL.md", "digest": d, "size": 1}]));
        assert_eq!(check_entry(&ok), Ok(()));
        let missing = entry(json!([{"uri": "skill://acme/refunds/a.md", "digest": d, "size": 1}]));
        assert!(matches!(
            check_entry(&missing),
            Err(EntryError::Incomplete(_))
        ));
        let outside = entry(
            json!([{"uri": "skill://acme/refunds/SKILL.md", "digest": d, "size": 1},
            {"uri": "skill://acme/refunds/../../etc/passwd", "digest": d, "size": 1}]),
        );
        assert!(matches!(check_entry(&outside), Err(EntryError::Path(_))));
        let twice = entry(
            json!([{"uri": "skill://acme/refunds/SKILL.md", "digest": d, "size": 1},
            {"uri": "skill://acme/refunds/SKILL.md", "digest": d, "size": 1}]),
        );
        assert!(matches!(check_entry(&twice), Err(EntryError::Duplicate(_))));
        let upper = entry(
            json!([{"uri": "skill://acme/refunds/SKILL.md", "digest": d.to_uppercase(), "size": 1}]),
        );
        assert!(matches!(check_entry(&upper), Err(EntryError::BadDigest(_))));
        let big = entry(
            json!([{"uri": "skill://acme/refunds/SKILL.md", "digest": d, "size": MAX_SKILL_FILE_BYTES + 1}]),
        );
        assert!(matches!(
            check_entry(&big),
            Err(EntryError::FileTooLarge { .. })
        ));
        let at_bound = entry(
            json!([{"uri": "skill://acme/refunds/SKILL.md", "digest": d, "size": MAX_SKILL_FILE_BYTES}]),
        );
        assert_eq!(check_entry(&at_bound), Ok(()));
        let many: Vec<Value> = (0..=MAX_SKILL_RESOURCES)
            .map(|i| json!({"uri": format!("skill://acme/refunds/{i}"), "digest": d, "size": 1}))
            .collect();
        assert!(matches!(
            check_entry(&entry(json!(many))),
            Err(EntryError::TooManyFiles(513))
        ));
        let heavy: Vec<Value> = std::iter::once(json!({"uri": "skill://acme/refunds/SKILL.md", "digest": d, "size": 1}))
            .chain((0..4).map(|i| json!({"uri": format!("skill://acme/refunds/{i}"), "digest": d, "size": MAX_SKILL_FILE_BYTES})))
            .collect();
        assert!(matches!(
            check_entry(&entry(json!(heavy))),
            Err(EntryError::TooLarge(_))
        ));
    }

    #[test]
    fn sk_3_the_uri_names_the_skill() {
        let mut e = entry(json!("dynamic"));
        assert_eq!(check_entry(&e), Ok(()));
        e.frontmatter.insert("name".into(), json!("chargebacks"));
        assert!(matches!(
            check_entry(&e),
            Err(EntryError::NameMismatch { .. })
        ));
        e.uri = "skill://acme/refunds/README.md".into();
        assert!(matches!(check_entry(&e), Err(EntryError::NotSkillMd(_))));
    }

    #[test]
    fn sk_7_size_is_checked_before_the_digest() {
        let entry = crate::wire::SkillResource {
            uri: "skill://a/SKILL.md".into(),
            digest: digest(b"abc"),
            size: 3,
        };
        assert_eq!(check_bytes(&entry, b"abc"), Ok(()));
        assert!(matches!(
            check_bytes(&entry, b"abcd"),
            Err(Mismatch::Size { got: 4, .. })
        ));
        assert!(matches!(
            check_bytes(&entry, b"abd"),
            Err(Mismatch::Digest { .. })
        ));
    }
}
