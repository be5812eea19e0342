//! What the binary's end-to-end tests share: the binary, free ports, and children that serve
//! on 127.0.0.1 and are killed when dropped.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The `switchboard` binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_switchboard"))
}

/// Runs the binary with `args`; returns its exit code, stdout and stderr.
pub fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = bin().args(args).output().expect("runs");
    (
        out.status.code(),
        String::from_utf8(out.stdout).expect("utf-8"),
        String::from_utf8(out.stderr).expect("utf-8"),
    )
}

/// A port that was free a moment ago on 127.0.0.1.
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// A child process serving `url`, killed when dropped.
pub struct Served {
    pub child: Child,
    pub url: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Spawns `cmd` (stdin closed, stdout and stderr piped) and waits, 30 s at most, for `marker`
/// on either; `url` is what it serves.
pub fn start(mut cmd: Command, marker: &'static str, url: String) -> Served {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    let (tx, rx) = std::sync::mpsc::channel();
    for out in [
        Box::new(child.stderr.take().unwrap()) as Box<dyn std::io::Read + Send>,
        Box::new(child.stdout.take().unwrap()),
    ] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if line.contains(marker) {
                    let _ = tx.send(());
                }
            }
        });
    }
    let served = Served { child, url };
    rx.recv_timeout(Duration::from_secs(30))
        .unwrap_or_else(|_| panic!("{marker:?} never printed by {cmd:?}"));
    served
}

/// `switchboard serve --http` (the everything server, `extra` flags added) on a free port.
pub fn serve_http(extra: &[&str]) -> Served {
    let addr = format!("127.0.0.1:{}", free_port());
    let mut cmd = bin();
    cmd.args(["serve", "--http", &addr]).args(extra);
    start(cmd, "listening on", format!("http://{addr}/mcp"))
}
