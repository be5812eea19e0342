//! Tidy checks on the source tree: method names are written once, in the catalogue.

use std::path::{Path, PathBuf};

use switchboard::types::catalogue::CATALOGUE;

/// At most this many MCP method-name literals in the crates' sources outside
/// `switchboard-types` (the load generator keeps its own: it uses none of our crates).
const MAX_METHOD_LITERALS: usize = 25;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every `"method"` literal naming a catalogue method in `crates/*/src` outside the types crate.
fn method_literals(crates: &Path) -> Vec<String> {
    let names: Vec<String> = CATALOGUE
        .iter()
        .map(|s| format!("\"{}\"", s.name))
        .collect();
    let mut found = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(crates)
        .expect("crates/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| !p.ends_with("switchboard-types"))
        .collect();
    dirs.sort();
    for dir in dirs {
        let mut files = Vec::new();
        rust_files(&dir.join("src"), &mut files);
        for f in files {
            let text = std::fs::read_to_string(&f).expect("source");
            for (n, line) in text.lines().enumerate() {
                for name in &names {
                    if line.matches(name.as_str()).count() > 0 {
                        found.push(format!("{}:{}: {name}", f.display(), n + 1));
                    }
                }
            }
        }
    }
    found
}

#[test]
fn method_names_live_in_the_catalogue() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates");
    let found = method_literals(&crates);
    assert!(
        found.len() <= MAX_METHOD_LITERALS,
        "{} method-name literals outside switchboard-types (at most {MAX_METHOD_LITERALS}); use \
         switchboard_types::methods or the catalogue's marker types:\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn the_literal_counter_sees_literals() {
    let dir = std::env::temp_dir().join(format!("sb-tidy-{}", std::process::id()));
    let src = dir.join("switchboard-x/src");
    std::fs::create_dir_all(&src).expect("dir");
    std::fs::write(
        src.join("lib.rs"),
        "const A: &str = \"tools/call\"; // \"ping\"\n",
    )
    .expect("write");
    let found = method_literals(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(found.len(), 2, "{found:?}");
}
