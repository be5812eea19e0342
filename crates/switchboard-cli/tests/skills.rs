//! `switchboard serve --skills [DIR]`, `switchboard call ... skills/list` and `switchboard
//! skills pull` end to end over stdio: a folder published and pulled byte for byte, the example
//! skills, a missing skill and an existing destination refused with nothing written.

mod common;

use std::path::{Path, PathBuf};

use common::bin;

fn temp(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sb-cli-skills-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    dir
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
    std::fs::write(path, text).expect("write");
}

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = bin().args(args).output().expect("runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn sk_10_serve_skills_dir_and_skills_pull_round_trip_a_folder() {
    let base = temp("pull");
    let skills = base.join("skills");
    write(
        &skills.join("git-workflow/SKILL.md"),
        "---\nname: git-workflow\ndescription: Branch and commit our way\n---\nRebase first.\n",
    );
    write(
        &skills.join("git-workflow/templates/commit.txt"),
        "area: what now works\n",
    );
    let server = format!(
        "{} serve --skills {}",
        env!("CARGO_BIN_EXE_switchboard"),
        skills.display()
    );
    let (code, stdout, stderr) = run(&["call", "--stdio", &server, "skills/list"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains("\"uri\": \"skill://git-workflow/SKILL.md\""),
        "{stdout}"
    );
    let dest = base.join("out");
    let dest_arg = dest.display().to_string();
    let (code, stdout, stderr) = run(&[
        "skills",
        "pull",
        "--stdio",
        &server,
        "git-workflow",
        &dest_arg,
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        stdout.lines().count(),
        2,
        "one line per file written: {stdout}"
    );
    for rel in ["SKILL.md", "templates/commit.txt"] {
        assert_eq!(
            std::fs::read(dest.join(rel)).expect("pulled"),
            std::fs::read(skills.join("git-workflow").join(rel)).expect("source"),
            "{rel}"
        );
    }
    // Pulled again: the destination exists, exit 1, nothing changed or left beside it.
    let (code, _, stderr) = run(&[
        "skills",
        "pull",
        "--stdio",
        &server,
        "git-workflow",
        &dest_arg,
    ]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("exists already"), "{stderr}");
    // A skill the server does not have: exit 1, nothing written.
    let missing = base.join("missing").display().to_string();
    let (code, _, stderr) = run(&["skills", "pull", "--stdio", &server, "nope", &missing]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("no skill named \"nope\""), "{stderr}");
    let left: Vec<_> = std::fs::read_dir(&base)
        .expect("base")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left.len(), 2, "skills/ and out/ only: {left:?}");
    std::fs::remove_dir_all(&base).expect("clean");
}

#[test]
fn sk_1_serve_skills_publishes_the_example_skills_and_plain_serve_none() {
    let with = format!("{} serve --skills", env!("CARGO_BIN_EXE_switchboard"));
    let (code, stdout, stderr) = run(&[
        "call",
        "--stdio",
        &with,
        "skills/get",
        "skill://test-skill/SKILL.md",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("\"name\": \"test-skill\""), "{stdout}");
    let without = format!("{} serve", env!("CARGO_BIN_EXE_switchboard"));
    let (code, _, _) = run(&["call", "--stdio", &without, "skills/list"]);
    assert_eq!(code, Some(1), "no skills route without --skills: -32601");
}
