//! Watching sources for a change by polling: each watched path (a file, or a directory walked
//! recursively, skipping `target` and hidden entries) is read as (path, modified time, length)
//! at most [`MAX_WATCHED_FILES`] files; a change is reported once the snapshot has held still
//! for the debounce (an editor's save, a `git checkout`, is one change).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The most files one watcher looks at; past it the rest are not watched (a warning says so).
pub(crate) const MAX_WATCHED_FILES: usize = 10_000;

/// The most debounce rounds waited for the sources to hold still; past it the change is
/// reported anyway (a file written without end does not stall the loop).
pub(crate) const MAX_DEBOUNCE_ROUNDS: u32 = 20;

/// What was seen of the watched files.
pub(crate) type Snapshot = BTreeMap<PathBuf, (Option<SystemTime>, u64)>;

/// Polls `paths`.
pub(crate) struct Watcher {
    paths: Vec<PathBuf>,
    poll: Duration,
    debounce: Duration,
    last: Snapshot,
    warned: bool,
}

impl Watcher {
    /// A watcher of `paths` (a path that does not exist yet is watched for its appearance),
    /// looking every `poll`; a change is reported once nothing changed for `debounce`.
    pub(crate) fn new(paths: Vec<PathBuf>, poll: Duration, debounce: Duration) -> Self {
        let mut w = Watcher {
            paths,
            poll,
            debounce,
            last: Snapshot::new(),
            warned: false,
        };
        w.last = w.snapshot();
        w
    }

    /// How many files are watched.
    pub(crate) fn watched(&self) -> usize {
        self.last.len()
    }

    fn snapshot(&mut self) -> Snapshot {
        let mut seen = Snapshot::new();
        let mut full = false;
        for p in &self.paths {
            walk(p, &mut seen, &mut full);
        }
        if full && !self.warned {
            self.warned = true;
            tracing::warn!(
                max = MAX_WATCHED_FILES,
                "more files than the watcher looks at; the rest are not watched (name narrower --watch paths)"
            );
        }
        seen
    }

    /// Waits for the next change; returns the paths that changed (added, removed, modified).
    pub(crate) async fn changed(&mut self) -> Vec<PathBuf> {
        loop {
            tokio::time::sleep(self.poll).await;
            let now = self.snapshot();
            if now == self.last {
                continue;
            }
            // Held still for the debounce, or the bound on waiting for it.
            let mut settled = now;
            for _ in 0..MAX_DEBOUNCE_ROUNDS {
                tokio::time::sleep(self.debounce).await;
                let again = self.snapshot();
                if again == settled {
                    break;
                }
                settled = again;
            }
            let changed = differences(&self.last, &settled);
            self.last = settled;
            return changed;
        }
    }
}

/// The paths whose entry differs between `a` and `b`.
fn differences(a: &Snapshot, b: &Snapshot) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = a
        .iter()
        .filter(|(p, v)| b.get(*p) != Some(v))
        .map(|(p, _)| p.clone())
        .collect();
    out.extend(b.keys().filter(|p| !a.contains_key(*p)).cloned());
    out.sort();
    out.dedup();
    out
}

/// Whether a directory entry is skipped: build output and hidden entries (`.git`).
fn skipped(name: &std::ffi::OsStr) -> bool {
    name == "target" || name.to_string_lossy().starts_with('.')
}

fn walk(path: &Path, seen: &mut Snapshot, full: &mut bool) {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    if meta.is_dir() {
        let Ok(entries) = std::fs::read_dir(path) else {
            return;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            if *full {
                return;
            }
            if !skipped(&e.file_name()) {
                walk(&e.path(), seen, full);
            }
        }
    } else if seen.len() >= MAX_WATCHED_FILES {
        *full = true;
    } else {
        seen.insert(path.to_owned(), (meta.modified().ok(), meta.len()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_and_hidden_entries_are_not_watched_and_the_count_is_bounded() {
        let dir = std::env::temp_dir().join(format!("sb-dev-watch-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for d in ["src", "target/debug", ".git"] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        std::fs::write(dir.join("src/main.rs"), "fn main() {}").unwrap();
        std::fs::write(dir.join("target/debug/x"), "bin").unwrap();
        std::fs::write(dir.join(".git/HEAD"), "ref").unwrap();
        let w = Watcher::new(vec![dir.clone()], Duration::ZERO, Duration::ZERO);
        assert_eq!(w.watched(), 1);
        // One more file than the bound: the bound holds.
        for i in 0..=MAX_WATCHED_FILES {
            std::fs::write(dir.join(format!("src/f{i}")), "").unwrap();
        }
        let w = Watcher::new(vec![dir.clone()], Duration::ZERO, Duration::ZERO);
        assert_eq!(w.watched(), MAX_WATCHED_FILES);
        assert!(w.warned);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_change_is_reported_with_the_paths_that_changed() {
        let dir = std::env::temp_dir().join(format!("sb-dev-change-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a"), "1").unwrap();
        let mut w = Watcher::new(
            vec![dir.clone(), dir.join("missing")],
            Duration::from_millis(5),
            Duration::from_millis(5),
        );
        let file = dir.join("a");
        let writer = std::thread::spawn(move || std::fs::write(file, "22").unwrap());
        let changed = tokio::time::timeout(Duration::from_secs(20), w.changed())
            .await
            .expect("seen");
        writer.join().unwrap();
        assert_eq!(changed, [dir.join("a")]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn sources_that_never_hold_still_are_reported_after_the_debounce_bound() {
        let dir = std::env::temp_dir().join(format!("sb-dev-restless-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut w = Watcher::new(
            vec![dir.clone()],
            Duration::from_millis(1),
            Duration::from_millis(20),
        );
        // A writer that changes the file every millisecond until told to stop: the sources
        // never hold still for the debounce, and the change is reported anyway.
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = {
            let (stop, file) = (stop.clone(), dir.join("busy"));
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    n += 1;
                    std::fs::write(&file, "x".repeat(n % 4096)).unwrap();
                    std::thread::sleep(Duration::from_millis(1));
                }
            })
        };
        let changed = tokio::time::timeout(Duration::from_secs(20), w.changed()).await;
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        writer.join().unwrap();
        assert_eq!(
            changed.expect("reported within the bound"),
            [dir.join("busy")]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
