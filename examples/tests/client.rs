//! The `client` example against the `notes` example: over stdio (the client starts the server)
//! and over Streamable HTTP (the server started first, with `--http`).
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// A fresh notes directory for one test, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let dir = std::env::temp_dir().join(format!("switchboard-client-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn client(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_client")).args(args).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn the_client_lists_and_calls_the_notes_tools_over_stdio() {
    let dir = Dir::new("stdio");
    let notes = env!("CARGO_BIN_EXE_notes");
    let d = dir.0.to_str().unwrap();

    let listed = client(&["--", notes, d]);
    assert!(listed.status.success(), "{listed:?}");
    let text = stdout(&listed);
    assert!(text.starts_with("add_note: Writes a note"), "{text}");
    assert!(text.contains("\nsearch_notes: Names the notes"), "{text}");

    let added = client(&["add_note", r#"{"title": "hello", "body": "world"}"#, "--", notes, d]);
    assert!(added.status.success(), "{added:?}");
    assert!(stdout(&added).ends_with("saved note://hello\n"), "{}", stdout(&added));
    assert_eq!(std::fs::read_to_string(dir.0.join("hello.md")).unwrap(), "world");

    // A tool error is the exit status 1, with the tool's message.
    let refused = client(&["add_note", r#"{"title": "../escape", "body": "x"}"#, "--", notes, d]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(stdout(&refused).contains("invalid title"), "{}", stdout(&refused));
}

#[test]
fn the_client_calls_the_notes_server_over_http() {
    let dir = Dir::new("http");
    std::fs::write(dir.0.join("hello.md"), "world").unwrap();
    let mut server = Command::new(env!("CARGO_BIN_EXE_notes"))
        .arg(&dir.0)
        .args(["--http", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(server.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("{line}"))
        .to_owned();

    let found = client(&["--url", &url, "search_notes", r#"{"query": "WORLD"}"#]);
    let _ = server.kill();
    let _ = server.wait();
    assert!(found.status.success(), "{found:?}");
    assert!(
        stdout(&found).ends_with("{\"notes\":[\"hello\"]}\n"),
        "{}",
        stdout(&found)
    );
}

/// A server in this process, over Streamable HTTP: a tool that asks the client for a sample and
/// a confirmation with progress on the way, and one that runs until it is cancelled.
mod asking {
    use std::sync::atomic::{AtomicBool, Ordering};

    use switchboard::http::{HttpConfig, StreamableHttpService};
    use switchboard::server::{Context, Server};
    use switchboard::types::elicitation::{ElicitRequestFormParams, RequestedSchema};
    use switchboard::types::lifecycle::Implementation;
    use switchboard::types::sampling::{CreateMessageRequestParams, SamplingMessage, SamplingMessageContentBlock};

    /// Set when the `wait` tool's future is dropped (the call was cancelled).
    pub static WAIT_DROPPED: AtomicBool = AtomicBool::new(false);

    /// Asks the model, then the user.
    #[switchboard::tool]
    async fn interview(cx: &Context) -> Result<String, String> {
        let _ = cx.progress(1.0, Some(2.0), Some("asking the model")).await;
        let sample = CreateMessageRequestParams::new(vec![SamplingMessage::user_text("Say hi")], 10);
        let answer = cx.create_message(sample).await.map_err(|e| e.to_string())?;
        let said = match answer.content.as_slice().first() {
            Some(SamplingMessageContentBlock::Text(t)) => t.text.clone(),
            _ => String::new(),
        };
        let _ = cx.progress(2.0, Some(2.0), Some("asking the user")).await;
        let form = ElicitRequestFormParams::new("Go on?", RequestedSchema::default());
        let confirmed = cx.elicit(form).await.map_err(|e| e.to_string())?;
        Ok(format!("model said: {said} / user: {:?}", confirmed.action))
    }

    struct Dropped;

    impl Drop for Dropped {
        fn drop(&mut self) {
            WAIT_DROPPED.store(true, Ordering::SeqCst);
        }
    }

    /// Runs until cancelled.
    #[switchboard::tool]
    async fn wait(cx: &Context) -> String {
        let _guard = Dropped;
        let _ = cx.progress(1.0, None, Some("waiting")).await;
        std::future::pending::<()>().await;
        String::new()
    }

    /// Serves the two tools; returns the endpoint's URL.
    pub async fn serve() -> String {
        let server = Server::builder(Implementation::new("asking", "1"))
            .register(interview)
            .register(wait)
            .build()
            .unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let local = listener.local_addr().unwrap();
        let service = StreamableHttpService::new(
            switchboard::server_http::session_factory(&server),
            HttpConfig::for_bind_address(local),
        );
        tokio::spawn(switchboard::http::serve(listener, service));
        format!("http://{local}/mcp")
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_client_answers_sampling_and_elicitation_and_shows_progress() {
    let url = asking::serve().await;
    let run = |yes: bool| {
        let url = url.clone();
        tokio::task::spawn_blocking(move || {
            let mut args = vec!["interview", "--url", &url];
            if yes {
                args.insert(0, "--yes");
            }
            client(&args)
        })
    };
    let declined = run(false).await.unwrap();
    assert!(declined.status.success(), "{declined:?}");
    assert_eq!(
        stdout(&declined),
        "interview: Asks the model, then the user.\nwait: Runs until cancelled.\nmodel said: This client has no model; here is a fixed answer. / user: Decline\n"
    );
    let stderr = String::from_utf8_lossy(&declined.stderr);
    assert!(stderr.contains("sampling request: [{\"role\":\"user\""), "{stderr}");
    assert!(stderr.contains("elicitation request: Go on? -> decline"), "{stderr}");
    assert!(stderr.contains("progress: 1/2 asking the model"), "{stderr}");
    let accepted = run(true).await.unwrap();
    assert!(stdout(&accepted).ends_with("user: Accept\n"), "{}", stdout(&accepted));
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_cancels_the_call() {
    use std::sync::atomic::Ordering;
    let url = asking::serve().await;
    let outcome = tokio::task::spawn_blocking(move || {
        let mut child = Command::new(env!("CARGO_BIN_EXE_client"))
            .args(["wait", "--url", &url])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        while !line.starts_with("progress:") {
            line.clear();
            assert_ne!(
                stderr.read_line(&mut line).unwrap(),
                0,
                "the client ended before the tool reported progress"
            );
        }
        let status = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
        (child.wait().unwrap(), rest)
    })
    .await
    .unwrap();
    assert_eq!(outcome.0.code(), Some(1), "{outcome:?}");
    assert!(outcome.1.contains("ancel"), "{}", outcome.1);
    let dropped = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        while !asking::WAIT_DROPPED.load(Ordering::SeqCst) {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(dropped.is_ok(), "the server's handler was not cancelled");
}
