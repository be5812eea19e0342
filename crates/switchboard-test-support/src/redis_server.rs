//! A real `redis-server` (Debian's package) on a free 127.0.0.1 port, for tests.
//!
//! Never a mock: tests of the Redis store run against the server itself. A machine without
//! `redis-server` fails the test with what to install (`scripts/install-peers.sh` installs it);
//! it never skips. The server keeps its data in an append-only file in a temporary folder, so
//! [`RedisServer::restart`] brings back what it had acknowledged.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `redis-server`, stopped when dropped.
#[derive(Debug)]
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
    password: Option<String>,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("no free port on 127.0.0.1: {e}"))
}

impl RedisServer {
    /// Starts a server without a password.
    pub fn start() -> RedisServer {
        Self::launch(None)
    }

    /// Starts a server that requires `password` (`requirepass`).
    pub fn start_with_password(password: &str) -> RedisServer {
        Self::launch(Some(password.to_owned()))
    }

    fn launch(password: Option<String>) -> RedisServer {
        let port = free_port();
        let dir =
            std::env::temp_dir().join(format!("switchboard-redis-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        let mut server = RedisServer {
            child: None,
            port,
            dir,
            password,
        };
        server.spawn();
        server
    }

    fn spawn(&mut self) {
        let mut cmd = Command::new("redis-server");
        cmd.args(["--bind", "127.0.0.1", "--port", &self.port.to_string()])
            .args([
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
            ])
            .arg("--dir")
            .arg(&self.dir)
            .args(["--protected-mode", "yes", "--loglevel", "warning"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        if let Some(p) = &self.password {
            cmd.args(["--requirepass", p]);
        }
        let child = cmd.spawn().unwrap_or_else(|e| {
            panic!(
                "cannot start redis-server ({e}): install Debian's redis-server \
                 (scripts/install-peers.sh does)"
            )
        });
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if self.ping() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!(
            "redis-server on 127.0.0.1:{} did not answer PING within 20 s",
            self.port
        );
    }

    /// Whether the server answers PING (with the password when it has one).
    pub fn ping(&self) -> bool {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
        let mut out = String::new();
        if let Some(p) = &self.password {
            out.push_str(&format!("AUTH {p}\r\n"));
        }
        out.push_str("PING\r\n");
        if s.write_all(out.as_bytes()).is_err() {
            return false;
        }
        let mut reader = BufReader::new(s);
        let mut line = String::new();
        if self.password.is_some() {
            if reader.read_line(&mut line).is_err() || !line.starts_with("+OK") {
                return false;
            }
            line.clear();
        }
        reader.read_line(&mut line).is_ok() && line.starts_with("+PONG")
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://[:PASSWORD@]127.0.0.1:PORT/0`.
    pub fn url(&self) -> String {
        match &self.password {
            Some(p) => format!("redis://:{p}@127.0.0.1:{}/0", self.port),
            None => format!("redis://127.0.0.1:{}/0", self.port),
        }
    }

    /// The URL without the password (to check that a node refuses it).
    pub fn url_without_password(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// Stops the server (SIGTERM: it writes its append-only file and exits).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops the server and starts it again on the same port with the same data.
    pub fn restart(&mut self) {
        self.stop();
        self.spawn();
    }

    /// Runs one command with `redis-cli`-free RESP and returns the raw reply text (for
    /// tests that inspect keys).
    pub fn raw(&self, args: &[&str]) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", self.port))
            .unwrap_or_else(|e| panic!("redis on {}: {e}", self.port));
        let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
        let mut out = String::new();
        let mut push = |parts: &[&str]| {
            out.push_str(&format!("*{}\r\n", parts.len()));
            for a in parts {
                out.push_str(&format!("${}\r\n{a}\r\n", a.len()));
            }
        };
        if let Some(p) = &self.password {
            push(&["AUTH", p]);
        }
        push(args);
        push(&["QUIT"]);
        let _ = s.write_all(out.as_bytes());
        let mut text = Vec::new();
        let _ = s.read_to_end(&mut text);
        String::from_utf8_lossy(&text).into_owned()
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
