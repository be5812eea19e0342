//! Running the build command: `sh -c CMD`, its standard error joined to its output (one pipe, in
//! order), and
//! the last [`MAX_BUILD_OUTPUT`] bytes kept (a build that prints without end holds no more),
//! killed past its timeout.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};

/// The most bytes of a build's output kept (its end: where compilers put the errors).
pub(crate) const MAX_BUILD_OUTPUT: usize = 64 * 1024;

/// How a build ended.
#[derive(Debug)]
pub(crate) struct Built {
    /// Exit status 0.
    pub(crate) ok: bool,
    /// How it ended, in words (`exit status: 101`, `timed out after 600s`).
    pub(crate) status: String,
    /// The end of its output (stdout and stderr as they came), at most [`MAX_BUILD_OUTPUT`].
    pub(crate) output: String,
    /// Whether earlier output was dropped.
    pub(crate) cut: bool,
}

/// The last `MAX_BUILD_OUTPUT` bytes.
#[derive(Default)]
struct Tail {
    bytes: std::collections::VecDeque<u8>,
    cut: bool,
}

impl Tail {
    fn push(&mut self, chunk: &[u8]) {
        self.bytes.extend(chunk);
        let over = self.bytes.len().saturating_sub(MAX_BUILD_OUTPUT);
        if over > 0 {
            self.bytes.drain(..over);
            self.cut = true;
        }
    }
}

async fn pump(mut from: impl AsyncRead + Unpin, into: &std::sync::Mutex<Tail>) {
    let mut buf = [0u8; 8192];
    while let Ok(n) = from.read(&mut buf).await {
        if n == 0 {
            break;
        }
        if let Ok(mut t) = into.lock() {
            t.push(&buf[..n]);
        }
    }
}

/// Runs `command` through `sh -c` in the current directory, at most `timeout`.
pub(crate) async fn run(command: &str, timeout: Duration) -> Built {
    let child = tokio::process::Command::new("sh")
        // Its stderr into the same pipe as its stdout, so that the output keeps its order.
        .args(["-c", &format!("exec 2>&1\n{command}")])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            return Built {
                ok: false,
                status: format!("cannot start `sh -c {command}`: {e}"),
                output: String::new(),
                cut: false,
            };
        }
    };
    let tail = std::sync::Mutex::new(Tail::default());
    let (out, err) = (child.stdout.take(), child.stderr.take());
    let read = async {
        tokio::join!(
            async {
                if let Some(o) = out {
                    pump(o, &tail).await;
                }
            },
            async {
                if let Some(e) = err {
                    pump(e, &tail).await;
                }
            }
        );
        child.wait().await
    };
    let (ok, status) = match tokio::time::timeout(timeout, read).await {
        Ok(Ok(s)) => (s.success(), s.to_string()),
        Ok(Err(e)) => (false, format!("cannot wait for it: {e}")),
        Err(_) => (false, format!("timed out after {timeout:?}")),
    };
    let _ = child.start_kill();
    let tail = tail.into_inner().unwrap_or_default();
    let bytes: Vec<u8> = tail.bytes.into_iter().collect();
    Built {
        ok,
        status,
        output: String::from_utf8_lossy(&bytes).into_owned(),
        cut: tail.cut,
    }
}

/// The build command `dev` derives from a server command when none is given: `cargo run ARGS
/// [-- SERVER ARGS]` builds with `cargo build ARGS`; anything else has none (the server is only
/// restarted).
pub(crate) fn derived(server: &str) -> Option<String> {
    let words: Vec<&str> = server.split_whitespace().collect();
    if words.len() < 2 || words[0] != "cargo" || words[1] != "run" {
        return None;
    }
    let args: Vec<&str> = words[2..]
        .iter()
        .take_while(|w| **w != "--")
        .copied()
        .collect();
    Some(
        ["cargo", "build"]
            .iter()
            .chain(args.iter())
            .copied()
            .collect::<Vec<_>>()
            .join(" "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_run_derives_cargo_build_with_its_own_arguments() {
        assert_eq!(
            derived("cargo run -p my-server --release -- --port 3").as_deref(),
            Some("cargo build -p my-server --release")
        );
        assert_eq!(derived("cargo run").as_deref(), Some("cargo build"));
        assert_eq!(derived("./target/debug/my-server"), None);
        assert_eq!(derived("cargo test"), None);
    }

    #[tokio::test]
    async fn a_build_keeps_the_end_of_its_output_within_the_bound() {
        // Twice the bound, then a last line: only the end is kept, marked as cut.
        let cmd = format!(
            "head -c {} /dev/zero | tr '\\0' x; echo; echo the-error >&2; exit 3",
            2 * MAX_BUILD_OUTPUT
        );
        let b = run(&cmd, Duration::from_secs(60)).await;
        assert!(!b.ok);
        assert!(b.status.contains('3'), "{}", b.status);
        assert!(b.cut);
        assert_eq!(b.output.len(), MAX_BUILD_OUTPUT);
        assert!(
            b.output.trim_end().ends_with("the-error"),
            "{:?}",
            &b.output[b.output.len() - 40..]
        );
        let ok = run("true", Duration::from_secs(60)).await;
        assert!(ok.ok && !ok.cut && ok.output.is_empty());
    }

    #[tokio::test]
    async fn a_build_past_its_timeout_is_stopped() {
        let b = run("echo started; exec sleep 30", Duration::from_millis(200)).await;
        assert!(!b.ok);
        assert!(b.status.contains("timed out"), "{}", b.status);
    }
}
