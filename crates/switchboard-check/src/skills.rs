//! The skills extension's rules (SEP-2640; the `SK` tags of docs/SKILLS.md), on the shared
//! 2025 connection, for a server that declares `io.modelcontextprotocol/skills` (nothing is
//! reported for one that does not): the declaration (`SK-1`), `skills/list` and `skills/get`
//! (`SK-2`), every entry valid (`SK-3`), every digest and size true and every `SKILL.md`'s
//! frontmatter the entry's (`SK-4`, `SK-8`), `resources/directory/read` (`SK-6`).

use base64::Engine as _;
use serde_json::{Value, json};
use switchboard_skills::verify;
use switchboard_skills::wire::{
    DIRECTORY_MIME, GetSkillResult, ListSkillsResult, SKILLS_EXTENSION, Skill,
};
use switchboard_types::methods;

use crate::Results;
use crate::conn::{Conn, Got};
use crate::verdict::{expect_code, fail, pass, show, skip};

/// The most `skills/list` pages followed.
const MAX_PAGES: usize = 20;
/// The most files read back to check their digests, over every skill.
pub(crate) const MAX_CHECKED_FILES: usize = 200;

fn result_of<T: serde::de::DeserializeOwned>(g: &Got) -> Result<T, String> {
    match g {
        Got::Frame(v) if v.get("result").is_some() => {
            serde_json::from_value(v["result"].clone()).map_err(|e| format!("{e}: {}", show(g)))
        }
        _ => Err(show(g)),
    }
}

pub(crate) async fn all(c: &mut Conn, caps: &Value, out: &mut Results) {
    let Some(settings) = caps.get("extensions").and_then(|e| e.get(SKILLS_EXTENSION)) else {
        return;
    };
    let declared_ok = settings.is_object() && caps.get("resources").is_some_and(Value::is_object);
    out.push(if declared_ok {
        pass(
            "SK-1",
            "the skills extension is declared with its settings object and resources",
            settings.to_string(),
        )
    } else {
        fail(
            "SK-1",
            "the skills extension is declared with its settings object and resources",
            format!(
                "extensions[{SKILLS_EXTENSION}] = {settings}, resources = {}",
                caps.get("resources").unwrap_or(&Value::Null)
            ),
        )
    });
    let mut skills: Vec<Skill> = Vec::new();
    let mut cursor: Option<String> = None;
    for page in 0..MAX_PAGES {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let got = c
            .request(
                json!(format!("sk-list-{page}")),
                methods::SKILLS_LIST,
                Some(params),
            )
            .await;
        match result_of::<ListSkillsResult>(&got) {
            Ok(r) => {
                skills.extend(r.skills);
                match r.next_cursor {
                    Some(next) if !next.is_empty() => cursor = Some(next),
                    _ => {
                        cursor = None;
                        break;
                    }
                }
            }
            Err(why) => {
                out.push(fail("SK-2", "skills/list answers the skills served", why));
                return;
            }
        }
    }
    if cursor.is_some() {
        out.push(fail(
            "SK-2",
            "skills/list answers the skills served",
            format!("still a nextCursor after {MAX_PAGES} pages"),
        ));
        return;
    }
    out.push(pass(
        "SK-2",
        "skills/list answers the skills served",
        format!("{} entries", skills.len()),
    ));
    let unknown = c
        .request(
            json!("sk-get-unknown"),
            methods::SKILLS_GET,
            Some(json!({"uri": "skill://switchboard-check-no-such-skill/SKILL.md"})),
        )
        .await;
    out.push(expect_code(
        "SK-2",
        "skills/get of a skill not served is -32602",
        &unknown,
        -32602,
    ));
    let Some(first) = skills.first().cloned() else {
        out.push(skip(
            "SK-3",
            "every skill entry is valid",
            "the listing is empty",
        ));
        return;
    };
    let got = c
        .request(
            json!("sk-get"),
            methods::SKILLS_GET,
            Some(json!({"uri": first.uri})),
        )
        .await;
    out.push(match result_of::<GetSkillResult>(&got) {
        Ok(r) if r.skill == first => pass(
            "SK-2",
            "skills/get answers the listed entry",
            first.uri.clone(),
        ),
        Ok(_) => fail(
            "SK-2",
            "skills/get answers the listed entry",
            format!("{}: differs from the listing", first.uri),
        ),
        Err(why) => fail("SK-2", "skills/get answers the listed entry", why),
    });
    let problems: Vec<String> = skills
        .iter()
        .filter_map(|s| {
            verify::check_entry(s)
                .err()
                .map(|e| format!("{}: {e}", s.uri))
        })
        .collect();
    out.push(if problems.is_empty() {
        pass(
            "SK-3",
            "every skill entry is valid",
            format!("{} entries", skills.len()),
        )
    } else {
        fail("SK-3", "every skill entry is valid", problems.join("; "))
    });
    digests(c, &skills, out).await;
    directory(c, settings, &first, out).await;
}

/// Reads the files back (up to [`MAX_CHECKED_FILES`]): each one's size and digest, and each
/// `SKILL.md`'s frontmatter.
async fn digests(c: &mut Conn, skills: &[Skill], out: &mut Results) {
    let mut checked = 0usize;
    let mut bad = Vec::new();
    let mut frontmatter_bad = Vec::new();
    let mut frontmatters = 0usize;
    'skills: for skill in skills {
        let Some(files) = skill.files() else { continue };
        for f in files {
            if checked == MAX_CHECKED_FILES {
                break 'skills;
            }
            checked += 1;
            let got = c
                .request(
                    json!(format!("sk-read-{checked}")),
                    methods::RESOURCES_READ,
                    Some(json!({"uri": f.uri})),
                )
                .await;
            let Some(bytes) = bytes_of(&got, &f.uri) else {
                bad.push(format!("{}: unreadable: {}", f.uri, show(&got)));
                continue;
            };
            if let Err(e) = verify::check_bytes(f, &bytes) {
                bad.push(e.to_string());
                continue;
            }
            if f.uri == skill.uri {
                frontmatters += 1;
                let text = String::from_utf8_lossy(&bytes);
                match verify::frontmatter(&text) {
                    Ok(fm) => {
                        let diff = verify::frontmatter_differences(&fm, &skill.frontmatter);
                        if !diff.is_empty() {
                            frontmatter_bad.push(format!(
                                "{}: differs in {}",
                                skill.uri,
                                diff.join(", ")
                            ));
                        }
                    }
                    Err(e) => frontmatter_bad.push(format!("{}: {e}", skill.uri)),
                }
            }
        }
    }
    out.push(if bad.is_empty() {
        pass(
            "SK-4",
            "every listed file has the size and digest its entry says",
            format!("{checked} files read back"),
        )
    } else {
        fail(
            "SK-4",
            "every listed file has the size and digest its entry says",
            bad.join("; "),
        )
    });
    out.push(if frontmatters == 0 {
        skip(
            "SK-8",
            "every SKILL.md has the frontmatter of its entry",
            "no SKILL.md read (dynamic skills only)",
        )
    } else if frontmatter_bad.is_empty() {
        pass(
            "SK-8",
            "every SKILL.md has the frontmatter of its entry",
            format!("{frontmatters} SKILL.md compared field by field"),
        )
    } else {
        fail(
            "SK-8",
            "every SKILL.md has the frontmatter of its entry",
            frontmatter_bad.join("; "),
        )
    });
}

/// The raw bytes of a `resources/read` answer for `uri`.
fn bytes_of(g: &Got, uri: &str) -> Option<Vec<u8>> {
    let Got::Frame(v) = g else { return None };
    let contents = v.get("result")?.get("contents")?.as_array()?;
    let c = contents
        .iter()
        .find(|c| c.get("uri").and_then(Value::as_str) == Some(uri))
        .or(contents.first())?;
    if let Some(text) = c.get("text").and_then(Value::as_str) {
        return Some(text.as_bytes().to_vec());
    }
    base64::engine::general_purpose::STANDARD
        .decode(c.get("blob")?.as_str()?)
        .ok()
}

async fn directory(c: &mut Conn, settings: &Value, first: &Skill, out: &mut Results) {
    const NAME: &str = "resources/directory/read lists a skill's directory and refuses a file";
    if settings.get("directoryRead") != Some(&Value::Bool(true)) {
        out.push(skip("SK-6", NAME, "directoryRead not declared"));
        return;
    }
    let Some((root, _)) = verify::skill_root(&first.uri) else {
        out.push(skip("SK-6", NAME, "the first entry has no SKILL.md URI"));
        return;
    };
    let got = c
        .request(
            json!("sk-dir"),
            methods::RESOURCES_DIRECTORY_READ,
            Some(json!({"uri": root})),
        )
        .await;
    let children = match &got {
        Got::Frame(v) => v
            .get("result")
            .and_then(|r| r.get("resources"))
            .and_then(Value::as_array)
            .cloned(),
        _ => None,
    };
    let Some(children) = children else {
        out.push(fail("SK-6", NAME, format!("{root}: {}", show(&got))));
        return;
    };
    let has_skill_md = children
        .iter()
        .any(|r| r.get("uri").and_then(Value::as_str) == Some(first.uri.as_str()));
    let dirs_typed = children.iter().all(|r| {
        let uri = r.get("uri").and_then(Value::as_str).unwrap_or_default();
        let is_dir = first
            .files()
            .is_some_and(|f| f.iter().any(|f| f.uri.starts_with(&format!("{uri}/"))));
        !is_dir || r.get("mimeType").and_then(Value::as_str) == Some(DIRECTORY_MIME)
    });
    if !has_skill_md || !dirs_typed {
        out.push(fail(
            "SK-6",
            NAME,
            format!("{root}: children {}", Value::Array(children)),
        ));
        return;
    }
    let file = c
        .request(
            json!("sk-dir-file"),
            methods::RESOURCES_DIRECTORY_READ,
            Some(json!({"uri": first.uri})),
        )
        .await;
    out.push(expect_code("SK-6", NAME, &file, -32602));
}
