//! A skills server (a folder and code) and our client, in memory, in both eras: the extension
//! declared, entries with true digests, lazy verified reads, directory reads, traversal refused,
//! the file bound, links not followed, the watch keeping digests in step, pull.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use switchboard_client::{Client, ClientSession, EraMode, RequestOptions};
use switchboard_server::Server;
use switchboard_skills::verify::digest;
use switchboard_skills::wire::{MAX_SKILL_FILE_BYTES, SKILLS_EXTENSION};
use switchboard_skills::{SkillFiles, SkillSet, SkillSource, Skills, SkillsExt};
use switchboard_test_support::wait;
use switchboard_types::{Implementation, ProtocolVersion, methods};

/// Entries per `skills/list` page (the crate's `PAGE_SIZE`).
const PAGE_SIZE: usize = 50;

const REFUNDS: &str = "---\nname: refunds\ndescription: Process refunds per policy\nlicense: Apache-2.0\nmetadata:\n  version: \"1.2\"\n---\n\n# Refunds\n\nPick a template from `templates/`.\n";

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sb-skills-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(path: &Path, bytes: impl AsRef<[u8]>) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// A folder with `acme/billing/refunds` (a template directory with a subdirectory) and
/// `git-workflow`.
fn folder(tag: &str) -> PathBuf {
    let dir = temp_dir(tag);
    write(&dir.join("acme/billing/refunds/SKILL.md"), REFUNDS);
    write(
        &dir.join("acme/billing/refunds/templates/email.md"),
        "Dear customer,\n",
    );
    write(
        &dir.join("acme/billing/refunds/templates/regional/eu.md"),
        "EU rules\n",
    );
    write(
        &dir.join("acme/billing/refunds/logo.bin"),
        [0u8, 159, 146, 150],
    );
    write(
        &dir.join("git-workflow/SKILL.md"),
        "---\nname: git-workflow\ndescription: Branch and commit the team's way\n---\nUse topic branches.\n",
    );
    dir
}

async fn connect(server: &Server, era: EraMode) -> ClientSession {
    let (ours, theirs) = switchboard_jsonrpc::memory::pair();
    server.serve(theirs).unwrap();
    Client::builder(Implementation::new("t", "1"))
        .era(era)
        .build()
        .connect(ours)
        .await
        .unwrap()
}

fn eras() -> [EraMode; 2] {
    [EraMode::Legacy, EraMode::Pin(ProtocolVersion::V2026_07_28)]
}

fn server(set: &SkillSet) -> Server {
    Server::builder(Implementation::new("skills", "1"))
        .skills(set)
        .build()
        .unwrap()
}

#[tokio::test]
async fn sk_1_the_extension_is_declared_in_both_eras_with_resources() {
    let set = SkillSet::from_dir(folder("declare")).unwrap();
    let server = server(&set);
    for era in eras() {
        let session = connect(&server, era).await;
        let caps = session.server_capabilities();
        assert_eq!(
            caps.extra["extensions"][SKILLS_EXTENSION],
            json!({"directoryRead": true}),
            "{era:?}"
        );
        assert!(caps.resources.is_some(), "{era:?}: resources declared too");
        assert_eq!(Skills::new(&session).declared(), Some(true));
    }
}

#[tokio::test]
async fn sk_3_sk_4_sk_11_entries_carry_verbatim_frontmatter_and_true_digests() {
    let dir = folder("entries");
    let set = SkillSet::from_dir(&dir).unwrap();
    assert!(set.skipped().is_empty(), "{:?}", set.skipped());
    let server = server(&set);
    for era in eras() {
        let session = connect(&server, era).await;
        let skills = Skills::new(&session);
        let listed = skills.list().await.unwrap();
        let uris: Vec<&str> = listed.iter().map(|s| s.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "skill://acme/billing/refunds/SKILL.md",
                "skill://git-workflow/SKILL.md"
            ]
        );
        let refunds = &listed[0];
        assert_eq!(
            Value::Object(refunds.frontmatter.clone()),
            json!({"name": "refunds", "description": "Process refunds per policy",
                "license": "Apache-2.0", "metadata": {"version": "1.2"}})
        );
        let SkillFiles::Listed(files) = &refunds.resources else {
            panic!("listed")
        };
        assert_eq!(files.len(), 4, "complete, SKILL.md included");
        for f in files {
            let rel = f.uri.strip_prefix("skill://").unwrap();
            let bytes = std::fs::read(dir.join(rel)).unwrap();
            assert_eq!(f.digest, digest(&bytes), "{}", f.uri);
            assert_eq!(f.size, bytes.len() as u64, "{}", f.uri);
        }
        // skills/get answers the same entry; an unknown URI is -32602.
        assert_eq!(&skills.get(&refunds.uri).await.unwrap(), refunds);
        let err = skills.get("skill://nope/SKILL.md").await.unwrap_err();
        assert!(err.to_string().contains("No skill is served"), "{err}");
        // Every file reads back verified, the binary one as a blob.
        let loaded = skills.load(refunds).await.unwrap();
        assert!(loaded.text.contains("# Refunds"));
        let logo = skills
            .read(refunds, "skill://acme/billing/refunds/logo.bin")
            .await
            .unwrap();
        assert_eq!(logo, [0u8, 159, 146, 150]);
        // SKILL.md is listed as a resource with the frontmatter's name and description.
        let resources = session.list_resources().await.unwrap();
        let md = resources
            .iter()
            .find(|r| r.uri == refunds.uri)
            .expect("listed");
        assert_eq!(md.name, "refunds");
        assert_eq!(
            md.description.as_deref(),
            Some("Process refunds per policy")
        );
        assert_eq!(md.mime_type.as_deref(), Some("text/markdown"));
    }
}

#[tokio::test]
async fn sk_2_results_carry_caching_hints_and_get_no_cursor() {
    // (`resultType` is read and taken out by the client; the conformance runs check it on the wire.)
    let set = SkillSet::from_dir(folder("hints")).unwrap();
    let server = server(&set);
    let session = connect(&server, EraMode::Pin(ProtocolVersion::V2026_07_28)).await;
    let list: Value = session
        .request(methods::SKILLS_LIST, json!({}), RequestOptions::default())
        .await
        .unwrap();
    assert_eq!(list["ttlMs"], 0);
    assert_eq!(list["cacheScope"], "private");
    let get: Value = session
        .request(
            methods::SKILLS_GET,
            json!({"uri": "skill://git-workflow/SKILL.md"}),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    assert!(get.get("nextCursor").is_none());
    assert!(get["ttlMs"].is_u64() && get["cacheScope"].is_string());
}

#[tokio::test]
async fn sk_6_directory_read_lists_direct_children() {
    let set = SkillSet::from_dir(folder("dirs")).unwrap();
    let server = server(&set);
    for era in eras() {
        let session = connect(&server, era).await;
        let skills = Skills::new(&session);
        let root = skills
            .read_directory("skill://acme/billing/refunds", None)
            .await
            .unwrap();
        let children: Vec<(&str, Option<&str>)> = root
            .resources
            .iter()
            .map(|r| (r.uri.as_str(), r.mime_type.as_deref()))
            .collect();
        assert_eq!(
            children,
            [
                (
                    "skill://acme/billing/refunds/SKILL.md",
                    Some("text/markdown")
                ),
                (
                    "skill://acme/billing/refunds/logo.bin",
                    Some("application/octet-stream")
                ),
                (
                    "skill://acme/billing/refunds/templates",
                    Some("inode/directory")
                ),
            ]
        );
        let sub = skills
            .read_directory("skill://acme/billing/refunds/templates", None)
            .await
            .unwrap();
        assert_eq!(sub.resources.len(), 2);
        // A file is not a directory; neither is an unknown URI: -32602.
        for uri in [
            "skill://acme/billing/refunds/SKILL.md",
            "skill://acme/nothing",
        ] {
            let e = skills.read_directory(uri, None).await.unwrap_err();
            let switchboard_skills::SkillError::Client(c) = e else {
                panic!("{e}")
            };
            assert_eq!(
                c.code(),
                Some(switchboard_types::ErrorCode::INVALID_PARAMS),
                "{uri}"
            );
        }
    }
}

#[tokio::test]
async fn sk_10_skill_uris_cannot_step_out_of_the_catalogue() {
    let dir = folder("traversal");
    write(&dir.join("secret.txt"), "outside every skill");
    let set = SkillSet::from_dir(&dir).unwrap();
    let server = server(&set);
    for era in eras() {
        let session = connect(&server, era).await;
        for uri in [
            "skill://git-workflow/../secret.txt",
            "skill://git-workflow/%2e%2e/secret.txt",
            "skill://git-workflow/%2E%2E%2Fsecret.txt",
            "skill://acme/billing/refunds/templates/../../../../secret.txt",
            "skill://git-workflow/..%5c..%5csecret.txt",
            "skill://secret.txt",
            "skill:///etc/passwd",
            "skill://git-workflow/./SKILL.md",
        ] {
            let e = session.read_resource(uri).await.unwrap_err();
            assert!(e.is_resource_not_found(), "{era:?} {uri}: {e}");
            let e: Result<Value, _> = session
                .request(
                    methods::RESOURCES_DIRECTORY_READ,
                    json!({"uri": uri}),
                    RequestOptions::default(),
                )
                .await;
            assert!(e.is_err(), "{era:?} {uri}");
        }
    }
}

#[tokio::test]
async fn sk_5_skill_files_are_bounded_at_max_skill_file_bytes() {
    let dir = temp_dir("bound");
    let skill = |name: &str| format!("---\nname: {name}\ndescription: d\n---\n");
    write(&dir.join("at-bound/SKILL.md"), skill("at-bound"));
    write(
        &dir.join("at-bound/big.bin"),
        vec![7u8; MAX_SKILL_FILE_BYTES as usize],
    );
    write(&dir.join("past-bound/SKILL.md"), skill("past-bound"));
    write(
        &dir.join("past-bound/big.bin"),
        vec![7u8; MAX_SKILL_FILE_BYTES as usize + 1],
    );
    let set = SkillSet::from_dir(&dir).unwrap();
    let names: Vec<String> = set
        .skills()
        .iter()
        .map(|s| s.name().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["at-bound"]);
    assert!(
        set.skipped().iter().any(|s| s.contains("past-bound")),
        "{:?}",
        set.skipped()
    );
    // In code the same bound holds.
    let code = SkillSet::new().with(
        SkillSource::new("too-big")
            .file("SKILL.md", skill("too-big"))
            .file("x", vec![0u8; MAX_SKILL_FILE_BYTES as usize + 1]),
    );
    assert!(code.skills().is_empty());
}

#[cfg(unix)]
#[tokio::test]
async fn sk_10_symbolic_links_are_not_followed_out_of_the_folder() {
    let outside = temp_dir("outside");
    write(&outside.join("passwd"), "root:x:0:0");
    write(
        &outside.join("evil/SKILL.md"),
        "---\nname: evil\ndescription: d\n---\n",
    );
    let dir = folder("links");
    std::os::unix::fs::symlink(outside.join("passwd"), dir.join("git-workflow/passwd")).unwrap();
    std::os::unix::fs::symlink(outside.join("evil"), dir.join("evil")).unwrap();
    let set = SkillSet::from_dir(&dir).unwrap();
    let skills = set.skills();
    assert_eq!(skills.len(), 2, "the linked skill is not served");
    let git = skills
        .iter()
        .find(|s| s.name() == Some("git-workflow"))
        .unwrap();
    assert_eq!(
        git.files().unwrap().len(),
        1,
        "the linked file is not in the manifest"
    );
    assert_eq!(
        set.skipped()
            .iter()
            .filter(|s| s.contains("symbolic link"))
            .count(),
        2
    );
}

#[tokio::test]
async fn sk_3_invalid_skills_are_left_out_and_said() {
    let dir = temp_dir("invalid");
    write(
        &dir.join("wrong-name/SKILL.md"),
        "---\nname: other\ndescription: d\n---\n",
    );
    write(
        &dir.join("Bad_Name/SKILL.md"),
        "---\nname: Bad_Name\ndescription: d\n---\n",
    );
    write(&dir.join("no-front/SKILL.md"), "# nothing\n");
    write(
        &dir.join("fine/SKILL.md"),
        "---\nname: fine\ndescription: d\n---\n",
    );
    let set = SkillSet::from_dir(&dir).unwrap();
    assert_eq!(set.skills().len(), 1);
    assert_eq!(set.skipped().len(), 3, "{:?}", set.skipped());
}

#[tokio::test]
async fn sk_4_digests_follow_the_watched_folder() {
    let dir = folder("watch");
    let set = SkillSet::from_dir(&dir).unwrap();
    let server = server(&set);
    let _watch = set.watch(&server).unwrap();
    let session = connect(&server, EraMode::Legacy).await;
    let skills = Skills::new(&session);
    let before = skills.get("skill://git-workflow/SKILL.md").await.unwrap();
    // A changed file: the entry's digest and size change, and what is served matches it.
    let text = "---\nname: git-workflow\ndescription: Branch and commit the team's way\n---\nRebase first.\n";
    write(&dir.join("git-workflow/SKILL.md"), text);
    let want = digest(text.as_bytes());
    wait::until("the new digest is served", || {
        set.skills().iter().any(|s| {
            s.file("skill://git-workflow/SKILL.md")
                .is_some_and(|f| f.digest == want)
        })
    })
    .await;
    let after = skills.get("skill://git-workflow/SKILL.md").await.unwrap();
    assert_ne!(before, after);
    assert_eq!(skills.load(&after).await.unwrap().text, text);
    // The old entry now fails verification: the content is not what it described.
    assert!(matches!(
        skills.load(&before).await,
        Err(switchboard_skills::SkillError::Mismatch(_))
    ));
    // A new skill appears in the listing and in resources/list.
    write(
        &dir.join("new-one/SKILL.md"),
        "---\nname: new-one\ndescription: d\n---\n",
    );
    wait::until("the new skill is listed", || set.skills().len() == 3).await;
    let resources = session.list_resources().await.unwrap();
    assert!(
        resources
            .iter()
            .any(|r| r.uri == "skill://new-one/SKILL.md")
    );
    // A removed skill goes.
    std::fs::remove_dir_all(dir.join("new-one")).unwrap();
    wait::until("the removed skill is gone", || set.skills().len() == 2).await;
    assert!(skills.get("skill://new-one/SKILL.md").await.is_err());
}

#[tokio::test]
async fn sk_2_skills_from_code_are_served_and_changed_at_run_time() {
    let set = SkillSet::new().with(
        SkillSource::new("notes")
            .file(
                "SKILL.md",
                "---\nname: notes\ndescription: Keep notes\n---\nBody\n",
            )
            .file("templates/note.md", "# Title\n"),
    );
    let server = server(&set);
    set.attach(&server);
    let session = connect(&server, EraMode::Pin(ProtocolVersion::V2026_07_28)).await;
    let skills = Skills::new(&session);
    let notes = skills.find("notes").await.unwrap();
    assert_eq!(notes.files().unwrap().len(), 2);
    assert_eq!(
        skills
            .read(&notes, "skill://notes/templates/note.md")
            .await
            .unwrap(),
        b"# Title\n"
    );
    set.add(SkillSource::new("more").file("SKILL.md", "---\nname: more\ndescription: d\n---\n"));
    assert!(
        session
            .list_resources()
            .await
            .unwrap()
            .iter()
            .any(|r| r.uri == "skill://more/SKILL.md")
    );
    assert!(set.remove("more"));
    assert!(skills.find("more").await.is_err());
}

#[tokio::test]
async fn sk_10_pull_writes_the_verified_skill_and_refuses_an_existing_directory() {
    let set = SkillSet::from_dir(folder("pull-src")).unwrap();
    let server = server(&set);
    let session = connect(&server, EraMode::Legacy).await;
    let skills = Skills::new(&session);
    let refunds = skills.find("refunds").await.unwrap();
    let out = temp_dir("pull-out");
    let dest = out.join("refunds");
    let written = skills.pull(&refunds, &dest).await.unwrap();
    assert_eq!(written.len(), 4);
    assert_eq!(
        std::fs::read_to_string(dest.join("SKILL.md")).unwrap(),
        REFUNDS
    );
    assert_eq!(
        std::fs::read(dest.join("templates/regional/eu.md")).unwrap(),
        b"EU rules\n"
    );
    let again = skills.pull(&refunds, &dest).await.unwrap_err();
    assert!(matches!(again, switchboard_skills::SkillError::Exists(_)));
    // Nothing but the destination was left behind.
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1);
    // A symlink planted at the destination, even a dangling one, is refused, not followed.
    let planted = out.join("planted");
    std::os::unix::fs::symlink(out.join("elsewhere"), &planted).unwrap();
    let through = skills.pull(&refunds, &planted).await.unwrap_err();
    assert!(matches!(through, switchboard_skills::SkillError::Exists(_)));
    assert!(
        !out.join("elsewhere").exists(),
        "nothing written through the link"
    );
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 2);
}

#[tokio::test]
async fn sk_2_skills_list_pages_at_page_size_and_refuses_a_forged_cursor() {
    let set = (0..=PAGE_SIZE).fold(SkillSet::new(), |set, i| {
        let name = format!("s{i:03}");
        set.with(SkillSource::new(name.clone()).file(
            "SKILL.md",
            format!("---\nname: {name}\ndescription: d\n---\n"),
        ))
    });
    let server = server(&set);
    let session = connect(&server, EraMode::Legacy).await;
    let first: Value = session
        .request(methods::SKILLS_LIST, json!({}), RequestOptions::default())
        .await
        .unwrap();
    assert_eq!(first["skills"].as_array().unwrap().len(), PAGE_SIZE);
    let cursor = first["nextCursor"]
        .as_str()
        .expect("a second page")
        .to_owned();
    let second: Value = session
        .request(
            methods::SKILLS_LIST,
            json!({"cursor": cursor}),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(second["skills"].as_array().unwrap().len(), 1);
    assert!(second.get("nextCursor").is_none());
    assert_eq!(
        Skills::new(&session).list().await.unwrap().len(),
        PAGE_SIZE + 1
    );
    let forged: Result<Value, _> = session
        .request(
            methods::SKILLS_LIST,
            json!({"cursor": "999999"}),
            RequestOptions::default(),
        )
        .await;
    assert_eq!(
        forged.unwrap_err().code(),
        Some(switchboard_types::ErrorCode::INVALID_PARAMS)
    );
}
