//! The notes example's skill (SEP-2640), over stdio: `keep-notes` is listed with true digests,
//! pulls to disk byte for byte as `examples/skills/keep-notes/`, and passes `switchboard
//! check`'s skills rules.

use std::path::{Path, PathBuf};

use switchboard::client::{Client, EraMode};
use switchboard::skills::Skills;
use switchboard::transport::{ChildCommand, ChildTransport};
use switchboard::types::lifecycle::Implementation;

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("switchboard-notes-skill-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("notes")).unwrap();
    dir
}

fn source(rel: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("skills/keep-notes")
            .join(rel),
    )
    .unwrap()
}

#[tokio::test]
async fn sk_4_the_notes_skill_is_listed_and_pulled_verified() {
    let dir = temp("pull");
    for era in [EraMode::Legacy, EraMode::Auto] {
        let child =
            ChildTransport::spawn(ChildCommand::new(env!("CARGO_BIN_EXE_notes")).arg(dir.join("notes"))).unwrap();
        let s = Client::builder(Implementation::new("notes-skill-test", "1"))
            .era(era)
            .build()
            .connect(child)
            .await
            .unwrap();
        let skills = Skills::new(&s);
        assert_eq!(skills.declared(), Some(true));
        let listed = skills.list().await.unwrap();
        assert_eq!(listed.len(), 1);
        let skill = &listed[0];
        assert_eq!(skill.uri, "skill://keep-notes/SKILL.md");
        assert_eq!(skill.name(), Some("keep-notes"));
        assert_eq!(skill.files().unwrap().len(), 2);
        let loaded = skills.load(skill).await.unwrap();
        assert!(loaded.text.contains("search_notes"));
        let out = dir.join(format!("pulled-{era:?}"));
        skills.pull(skill, &out).await.unwrap();
        assert_eq!(std::fs::read(out.join("SKILL.md")).unwrap(), source("SKILL.md"));
        assert_eq!(
            std::fs::read(out.join("templates/note.md")).unwrap(),
            source("templates/note.md")
        );
        s.close();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn sk_1_to_sk_8_the_notes_server_passes_the_skills_rules() {
    let dir = temp("check");
    let command = format!("{} {}", env!("CARGO_BIN_EXE_notes"), dir.join("notes").display());
    let report = switchboard_check::run(&switchboard_check::Target::stdio(command))
        .await
        .unwrap();
    let rules: Vec<_> = report.results().iter().filter(|r| r.tag.starts_with("SK-")).collect();
    assert_eq!(rules.len(), 8, "{report}");
    assert!(
        rules.iter().all(|r| r.outcome == switchboard_check::Verdict::Pass),
        "{report}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
