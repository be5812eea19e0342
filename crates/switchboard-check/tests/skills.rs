//! The skills rules (`SK-*`, docs/SKILLS.md) of `switchboard check`: a true skills server passes
//! them all; one whose manifest lies about a digest or a frontmatter fails exactly that rule; a
//! server without the extension gets none.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;
use support::in_process;
use switchboard_check::{Report, Verdict};
use switchboard_server::Server;
use switchboard_skills::verify::digest;
use switchboard_skills::wire::{
    GetSkill, GetSkillResult, ListSkills, ListSkillsResult, SKILLS_EXTENSION,
};
use switchboard_skills::{Skill, SkillFiles, SkillResource, SkillSet, SkillSource, SkillsExt};
use switchboard_types::Implementation;
use switchboard_types::content::{Resource, ResourceContents, TextResourceContents};
use switchboard_types::resources::ReadResourceResult;

const SKILL_MD: &str = "---\nname: notes\ndescription: Keep notes\n---\nBody\n";

fn sk(report: &Report) -> Vec<(&'static str, &'static str, Verdict)> {
    report
        .results()
        .iter()
        .filter(|r| r.tag.starts_with("SK-"))
        .map(|r| (r.tag, r.name, r.outcome))
        .collect()
}

#[tokio::test]
async fn sk_1_to_sk_8_a_true_skills_server_passes_every_skills_rule() {
    let set = SkillSet::new().with(
        SkillSource::new("notes")
            .file("SKILL.md", SKILL_MD)
            .file("templates/note.md", "# Title\n"),
    );
    let server = Server::builder(Implementation::new("s", "1"))
        .skills(&set)
        .build()
        .unwrap();
    let report = switchboard_check::run(&in_process(server)).await.unwrap();
    let rules = sk(&report);
    assert_eq!(rules.len(), 8, "{report}");
    assert!(
        rules.iter().all(|(_, _, v)| *v == Verdict::Pass),
        "{report}"
    );
    for tag in ["SK-1", "SK-2", "SK-3", "SK-4", "SK-6", "SK-8"] {
        assert!(rules.iter().any(|(t, _, _)| *t == tag), "{tag}: {report}");
    }
}

/// A server whose entry says `entry_md` while it serves `served_md` for `SKILL.md`.
fn liar(entry_md: &'static str, served_md: &'static str, frontmatter: serde_json::Value) -> Server {
    let skill = Skill {
        uri: "skill://notes/SKILL.md".into(),
        frontmatter: frontmatter.as_object().unwrap().clone(),
        resources: SkillFiles::Listed(vec![SkillResource {
            uri: "skill://notes/SKILL.md".into(),
            digest: digest(entry_md.as_bytes()),
            size: entry_md.len() as u64,
        }]),
    };
    let (list, get) = (skill.clone(), skill);
    Server::builder(Implementation::new("liar", "1"))
        .extension(SKILLS_EXTENSION, json!({}))
        .resource(
            Resource::new("skill://notes/SKILL.md", "notes"),
            move |r| async move {
                Ok(ReadResourceResult::new(vec![ResourceContents::Text(
                    TextResourceContents::new(r.uri, served_md),
                )]))
            },
        )
        .request::<ListSkills, _, _>(move |_, _| {
            let skills = vec![list.clone()];
            async move {
                Ok(ListSkillsResult {
                    skills,
                    next_cursor: None,
                    ttl_ms: Some(0),
                    cache_scope: Some("private".into()),
                })
            }
        })
        .request::<GetSkill, _, _>(move |p, _| {
            let skill = get.clone();
            async move {
                if p.uri == skill.uri {
                    Ok(GetSkillResult {
                        skill,
                        ttl_ms: Some(0),
                        cache_scope: Some("private".into()),
                    })
                } else {
                    Err(switchboard_types::ErrorObject::invalid_params(
                        "no such skill",
                    ))
                }
            }
        })
        .build()
        .unwrap()
}

fn verdict(report: &Report, tag: &str) -> Vec<Verdict> {
    report
        .results()
        .iter()
        .filter(|r| r.tag == tag)
        .map(|r| r.outcome)
        .collect()
}

#[tokio::test]
async fn sk_4_a_lying_digest_fails_the_digest_rule() {
    let fm = json!({"name": "notes", "description": "Keep notes"});
    let report = switchboard_check::run(&in_process(liar(
        SKILL_MD,
        "---\nname: notes\ndescription: Keep notes\n---\nEvil\n",
        fm,
    )))
    .await
    .unwrap();
    assert_eq!(verdict(&report, "SK-4"), [Verdict::Fail], "{report}");
    assert_eq!(verdict(&report, "SK-3"), [Verdict::Pass], "{report}");
    // directoryRead is not declared: that rule is a skip, never a pass.
    assert_eq!(verdict(&report, "SK-6"), [Verdict::Skip], "{report}");
}

#[tokio::test]
async fn sk_8_a_lying_frontmatter_fails_the_frontmatter_rule() {
    let fm = json!({"name": "notes", "description": "Something else"});
    let report = switchboard_check::run(&in_process(liar(SKILL_MD, SKILL_MD, fm)))
        .await
        .unwrap();
    assert_eq!(verdict(&report, "SK-4"), [Verdict::Pass], "{report}");
    assert_eq!(verdict(&report, "SK-8"), [Verdict::Fail], "{report}");
}

#[tokio::test]
async fn sk_3_an_entry_named_unlike_its_uri_fails_the_entry_rule() {
    let fm = json!({"name": "other", "description": "Keep notes"});
    let report = switchboard_check::run(&in_process(liar(SKILL_MD, SKILL_MD, fm)))
        .await
        .unwrap();
    assert_eq!(verdict(&report, "SK-3"), [Verdict::Fail], "{report}");
}

#[tokio::test]
async fn a_server_without_the_extension_gets_no_skills_rule() {
    let server = Server::builder(Implementation::new("plain", "1"))
        .enable_resources()
        .build()
        .unwrap();
    let report = switchboard_check::run(&in_process(server)).await.unwrap();
    assert!(sk(&report).is_empty(), "{report}");
}

#[tokio::test]
async fn sk_2_a_listing_that_never_ends_fails_after_twenty_pages() {
    let server = Server::builder(Implementation::new("endless", "1"))
        .extension(SKILLS_EXTENSION, json!({}))
        .enable_resources()
        .request::<ListSkills, _, _>(|_, _| async {
            Ok(ListSkillsResult {
                skills: vec![],
                next_cursor: Some("again".into()),
                ttl_ms: Some(0),
                cache_scope: Some("private".into()),
            })
        })
        .build()
        .unwrap();
    let report = switchboard_check::run(&in_process(server)).await.unwrap();
    let list = report
        .get("skills/list answers the skills served")
        .expect("ran");
    assert_eq!(list.outcome, Verdict::Fail, "{report}");
    assert!(list.detail.contains("after 20 pages"), "{report}");
}

#[tokio::test]
async fn sk_4_at_most_two_hundred_files_are_read_back() {
    let source = (1..=200).fold(
        SkillSource::new("notes").file("SKILL.md", SKILL_MD),
        |s, i| s.file(format!("f{i}.md"), "x"),
    );
    let set = SkillSet::new().with(source);
    let server = Server::builder(Implementation::new("s", "1"))
        .skills(&set)
        .build()
        .unwrap();
    let report = switchboard_check::run(&in_process(server)).await.unwrap();
    let digests = report
        .get("every listed file has the size and digest its entry says")
        .expect("ran");
    assert_eq!(digests.outcome, Verdict::Pass, "{report}");
    assert_eq!(
        digests.detail, "200 files read back",
        "201 listed, 200 read"
    );
}
