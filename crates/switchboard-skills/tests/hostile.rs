//! Hostile servers against our client: a manifest that lies about a file's digest, its size or
//! the frontmatter is refused with a typed error, and nothing unverified is returned or written;
//! a manifest naming paths outside the skill is refused before anything is read; an oversized
//! manifest is refused before anything is read.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use switchboard_client::{Client, ClientSession, EraMode};
use switchboard_jsonrpc::memory::pair;
use switchboard_skills::verify::{EntryError, Mismatch, digest};
use switchboard_skills::wire::MAX_SKILL_FILE_BYTES;
use switchboard_skills::{SkillError, Skills};
use switchboard_types::{Implementation, methods};

const SKILL_MD: &str = "---\nname: pdf-processing\ndescription: Extract PDFs\n---\n\nSkill body.\n";
const FORMS: &str = "Supporting content.\n";
const URI: &str = "skill://pdf-processing/SKILL.md";
const FORMS_URI: &str = "skill://pdf-processing/references/FORMS.md";

/// A scripted server in the legacy era, in process: each request (a frame with an id) is
/// answered with the result `answer` gives for its method and the whole frame.
fn scripted(
    mut answer: impl FnMut(&str, &Value) -> Value + Send + 'static,
) -> switchboard_jsonrpc::memory::MemoryTransport {
    let (ours, mut theirs) = pair();
    tokio::spawn(async move {
        while let Some(text) = theirs.recv_text().await {
            let f: Value = serde_json::from_str(&text).unwrap();
            let Some(id) = f.get("id").cloned() else {
                continue;
            };
            let result = answer(f["method"].as_str().unwrap_or_default(), &f);
            let reply = json!({"jsonrpc": "2.0", "id": id, "result": result});
            if theirs.send_text(reply.to_string()).await.is_err() {
                return;
            }
        }
    });
    ours
}

/// The `initialize` result of a server named `name`, declaring the skills extension or not.
fn initialized(name: &str, skills: bool) -> Value {
    let mut caps = json!({"resources": {}});
    if skills {
        caps["extensions"] = json!({"io.modelcontextprotocol/skills": {}});
    }
    json!({"protocolVersion": "2025-11-25", "serverInfo": {"name": name, "version": "1"}, "capabilities": caps})
}

/// A scripted server: `skills/list` answers `entry`, `resources/read` answers `files[uri]`;
/// every URI read is recorded.
fn server(
    entry: Value,
    files: Vec<(&'static str, String)>,
) -> (
    switchboard_jsonrpc::memory::MemoryTransport,
    Arc<Mutex<Vec<String>>>,
) {
    let reads: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = reads.clone();
    let ours = scripted(move |method, f| {
        if method == methods::INITIALIZE {
            initialized("liar", true)
        } else if method == methods::SKILLS_LIST {
            json!({"skills": [entry.clone()], "ttlMs": 0, "cacheScope": "private"})
        } else if method == methods::SKILLS_GET {
            json!({"skill": entry.clone(), "ttlMs": 0, "cacheScope": "private"})
        } else if method == methods::RESOURCES_READ {
            let uri = f["params"]["uri"].as_str().unwrap().to_owned();
            log.lock().unwrap().push(uri.clone());
            let text = files
                .iter()
                .find(|(u, _)| *u == uri)
                .map(|(_, t)| t.clone())
                .unwrap_or_default();
            json!({"contents": [{"uri": uri, "mimeType": "text/markdown", "text": text}]})
        } else {
            json!({})
        }
    });
    (ours, reads)
}

fn entry(skill_md: &str, frontmatter: Value, extra: Vec<Value>) -> Value {
    let mut resources = vec![
        json!({"uri": URI, "digest": digest(skill_md.as_bytes()), "size": skill_md.len()}),
        json!({"uri": FORMS_URI, "digest": digest(FORMS.as_bytes()), "size": FORMS.len()}),
    ];
    resources.extend(extra);
    json!({"uri": URI, "frontmatter": frontmatter, "resources": resources})
}

fn frontmatter() -> Value {
    json!({"name": "pdf-processing", "description": "Extract PDFs"})
}

async fn connect(transport: switchboard_jsonrpc::memory::MemoryTransport) -> ClientSession {
    Client::builder(Implementation::new("t", "1"))
        .era(EraMode::Legacy)
        .build()
        .connect(transport)
        .await
        .unwrap()
}

fn out_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sb-skills-hostile-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Pulling must fail and leave the output directory empty (no destination, no temporary).
async fn pull_refused(session: &ClientSession, tag: &str) -> SkillError {
    let skills = Skills::new(session);
    let skill = skills.find("pdf-processing").await.unwrap();
    let out = out_dir(tag);
    let err = skills
        .pull(&skill, &out.join("pdf-processing"))
        .await
        .unwrap_err();
    assert_eq!(
        std::fs::read_dir(&out).unwrap().count(),
        0,
        "{tag}: nothing left behind"
    );
    err
}

#[tokio::test]
async fn sk_7_a_lying_digest_is_refused() {
    let served = SKILL_MD.replace("Skill body.", "Evil body!!");
    let (t, reads) = server(
        entry(SKILL_MD, frontmatter(), vec![]),
        vec![(URI, served), (FORMS_URI, FORMS.into())],
    );
    let session = connect(t).await;
    let skills = Skills::new(&session);
    let skill = skills.list().await.unwrap().remove(0);
    assert!(reads.lock().unwrap().is_empty(), "listing reads nothing");
    let err = skills.load(&skill).await.unwrap_err();
    assert!(
        matches!(err, SkillError::Mismatch(Mismatch::Digest { .. })),
        "{err}"
    );
    assert!(err.to_string().contains("verification failed"), "{err}");
    assert!(matches!(
        pull_refused(&session, "digest").await,
        SkillError::Mismatch(Mismatch::Digest { .. })
    ));
}

#[tokio::test]
async fn sk_7_a_lying_size_is_refused() {
    let served = format!("{SKILL_MD}extra bytes the entry did not account for\n");
    let (t, _) = server(
        entry(SKILL_MD, frontmatter(), vec![]),
        vec![(URI, served), (FORMS_URI, FORMS.into())],
    );
    let session = connect(t).await;
    let skills = Skills::new(&session);
    let skill = skills.list().await.unwrap().remove(0);
    let err = skills.load(&skill).await.unwrap_err();
    assert!(
        matches!(err, SkillError::Mismatch(Mismatch::Size { .. })),
        "{err}"
    );
    assert!(matches!(
        pull_refused(&session, "size").await,
        SkillError::Mismatch(Mismatch::Size { .. })
    ));
}

#[tokio::test]
async fn sk_8_a_lying_frontmatter_is_refused() {
    // The digest and size are true for what is served; only the frontmatter differs.
    let served = SKILL_MD.replace(
        "description: Extract PDFs",
        "description: Exfiltrate credentials",
    );
    let (t, reads) = server(
        entry(&served, frontmatter(), vec![]),
        vec![(URI, served.clone()), (FORMS_URI, FORMS.into())],
    );
    let session = connect(t).await;
    let skills = Skills::new(&session);
    let skill = skills.list().await.unwrap().remove(0);
    let err = skills.load(&skill).await.unwrap_err();
    let SkillError::FrontmatterMismatch { fields, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(fields, &["description".to_owned()]);
    assert!(matches!(
        pull_refused(&session, "frontmatter").await,
        SkillError::FrontmatterMismatch { .. }
    ));
    assert!(
        !reads.lock().unwrap().contains(&FORMS_URI.to_owned()),
        "nothing read past the refusal"
    );
}

#[tokio::test]
async fn sk_7_an_unlisted_file_is_a_verification_failure() {
    let (t, reads) = server(
        entry(SKILL_MD, frontmatter(), vec![]),
        vec![(URI, SKILL_MD.into())],
    );
    let session = connect(t).await;
    let skills = Skills::new(&session);
    let skill = skills.list().await.unwrap().remove(0);
    let err = skills
        .read(&skill, "skill://pdf-processing/references/credit-note.md")
        .await
        .unwrap_err();
    assert!(matches!(err, SkillError::Unlisted(_)), "{err}");
    assert!(
        reads.lock().unwrap().is_empty(),
        "an unlisted file is not even read"
    );
}

#[tokio::test]
async fn sk_10_a_manifest_pointing_outside_the_skill_is_refused_before_any_read() {
    for (tag, uri) in [
        ("dotdot", "skill://pdf-processing/../../../etc/passwd"),
        ("encoded", "skill://pdf-processing/%2e%2e/%2e%2e/etc/passwd"),
        ("other-skill", "skill://other/SKILL.md"),
        ("backslash", "skill://pdf-processing/..%5C..%5Cwin.ini"),
    ] {
        let extra = vec![json!({"uri": uri, "digest": digest(b"x"), "size": 1})];
        let (t, reads) = server(
            entry(SKILL_MD, frontmatter(), extra),
            vec![(URI, SKILL_MD.into()), (FORMS_URI, FORMS.into())],
        );
        let session = connect(t).await;
        let err = pull_refused(&session, tag).await;
        assert!(
            matches!(err, SkillError::Entry(EntryError::Path(_))),
            "{tag}: {err}"
        );
        assert!(
            reads.lock().unwrap().is_empty(),
            "{tag}: refused before any read"
        );
    }
}

#[tokio::test]
async fn sk_5_an_oversized_or_dynamic_manifest_is_refused_before_any_read() {
    let big = vec![
        json!({"uri": "skill://pdf-processing/big.bin", "digest": digest(b"x"), "size": MAX_SKILL_FILE_BYTES + 1}),
    ];
    let (t, reads) = server(entry(SKILL_MD, frontmatter(), big), vec![]);
    let session = connect(t).await;
    let err = pull_refused(&session, "oversized").await;
    assert!(
        matches!(err, SkillError::Entry(EntryError::FileTooLarge { .. })),
        "{err}"
    );
    assert!(reads.lock().unwrap().is_empty());

    let dynamic = json!({"uri": URI, "frontmatter": frontmatter(), "resources": "dynamic"});
    let (t, reads) = server(dynamic, vec![(URI, SKILL_MD.into())]);
    let session = connect(t).await;
    let err = pull_refused(&session, "dynamic").await;
    assert!(matches!(err, SkillError::Dynamic(_)), "{err}");
    assert!(reads.lock().unwrap().is_empty());
}

#[tokio::test]
async fn sk_1_a_server_without_the_extension_is_not_asked() {
    let ours = scripted(|_, _| initialized("plain", false));
    let session = connect(ours).await;
    assert!(matches!(
        Skills::new(&session).list().await,
        Err(SkillError::NotDeclared)
    ));
}

#[tokio::test]
async fn sk_9_listing_getting_and_finding_read_no_file() {
    let (t, reads) = server(
        entry(SKILL_MD, frontmatter(), vec![]),
        vec![(URI, SKILL_MD.into()), (FORMS_URI, FORMS.into())],
    );
    let session = connect(t).await;
    let skills = Skills::new(&session);
    let listed = skills.list().await.unwrap();
    let got = skills.get(URI).await.unwrap();
    let found = skills.find("pdf-processing").await.unwrap();
    assert_eq!((&listed[0], &got), (&found, &found));
    assert!(
        reads.lock().unwrap().is_empty(),
        "no file is read before a skill is loaded"
    );
    // Loading reads SKILL.md only; a supporting file is read when asked for.
    skills.load(&found).await.unwrap();
    assert_eq!(*reads.lock().unwrap(), [URI.to_owned()]);
    skills.read(&found, FORMS_URI).await.unwrap();
    assert_eq!(
        *reads.lock().unwrap(),
        [URI.to_owned(), FORMS_URI.to_owned()]
    );
}

#[tokio::test]
async fn a_listing_that_never_ends_is_cut_at_max_list_pages() {
    let pages = Arc::new(Mutex::new(0usize));
    let seen = pages.clone();
    let ours = scripted(move |method, _| {
        if method == methods::INITIALIZE {
            initialized("endless", true)
        } else {
            *seen.lock().unwrap() += 1;
            json!({"skills": [], "nextCursor": "again"})
        }
    });
    let session = connect(ours).await;
    assert!(matches!(
        Skills::new(&session).list().await,
        Err(SkillError::TooManyPages)
    ));
    assert_eq!(*pages.lock().unwrap(), 100, "the crate's MAX_LIST_PAGES");
}
