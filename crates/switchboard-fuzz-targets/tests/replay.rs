//! Every fuzz target as a plain regression test: each seed of `fuzz/corpus/<target>/` and each
//! crash file of `fuzz/regressions/<target>/` goes through the target's entry function, the one
//! libFuzzer calls. A panic anywhere, in the entry function or in a task it started, fails the
//! test and names the file. The official 2026-07-28 example messages (read from `shared/`, never
//! copied) go through `frame` as well.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::Once;

use switchboard_fuzz_targets::{TARGETS, target};

thread_local! {
    /// Set by the panic hook when the current thread panics (a task of a current-thread
    /// runtime runs on the thread that drives it, and its panic never reaches the caller).
    static PANICKED: Cell<bool> = const { Cell::new(false) };
}

fn hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICKED.with(|p| p.set(true));
            default(info);
        }));
    });
}

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The files of `dir`, sorted; none when the folder does not exist.
fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

/// Runs `files` through `name`'s entry function; every panic is reported with its file.
fn replay(name: &str, files: &[PathBuf]) {
    hook();
    let run = target(name).expect("a target of that name").run;
    let mut failed = Vec::new();
    for file in files {
        let data = std::fs::read(file).expect("a readable corpus file");
        PANICKED.with(|p| p.set(false));
        let outcome = std::panic::catch_unwind(|| run(&data));
        if outcome.is_err() || PANICKED.with(Cell::get) {
            failed.push(file.display().to_string());
        }
    }
    assert!(
        failed.is_empty(),
        "{name}: {} input(s) failed: {failed:#?}",
        failed.len()
    );
}

fn corpus_and_regressions(name: &str) {
    let seeds = files(&fuzz_dir().join("corpus").join(name));
    assert!(!seeds.is_empty(), "fuzz/corpus/{name}/ holds no seed");
    let mut all = seeds;
    all.extend(files(&fuzz_dir().join("regressions").join(name)));
    replay(name, &all);
}

#[test]
fn ndjson() {
    corpus_and_regressions("ndjson");
}

#[test]
fn sse() {
    corpus_and_regressions("sse");
}

#[test]
fn sse_load() {
    corpus_and_regressions("sse_load");
}

#[test]
fn frame() {
    corpus_and_regressions("frame");
}

#[test]
fn frame_official_examples() {
    let root = switchboard_test_support::shared_dir().join("spec/schema/2026-07-28/examples");
    let mut examples = Vec::new();
    for dir in files_and_dirs(&root) {
        examples.extend(files(&dir));
    }
    assert!(
        examples.len() > 50,
        "the official examples under {}",
        root.display()
    );
    replay("frame", &examples);
}

#[test]
fn http() {
    corpus_and_regressions("http");
}

#[test]
fn inspect() {
    corpus_and_regressions("inspect");
}

#[test]
fn uri_template() {
    corpus_and_regressions("uri_template");
}

#[test]
fn pagination() {
    corpus_and_regressions("pagination");
}

/// Every target has a test above, and every folder of `fuzz/corpus` and `fuzz/regressions`
/// names a target.
#[test]
fn every_target_is_replayed() {
    let tested = [
        "ndjson",
        "sse",
        "sse_load",
        "frame",
        "http",
        "inspect",
        "uri_template",
        "pagination",
    ];
    let names: Vec<&str> = TARGETS.iter().map(|t| t.name).collect();
    assert_eq!(names, tested, "a target without its replay test");
    for sub in ["corpus", "regressions"] {
        for dir in files_and_dirs(&fuzz_dir().join(sub)) {
            let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            assert!(target(name).is_some(), "fuzz/{sub}/{name} names no target");
        }
    }
}

fn files_and_dirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    out
}
