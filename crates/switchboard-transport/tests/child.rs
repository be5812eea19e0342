//! The child-process transport against real children (`sh`, `cat`, `sleep`): frames through a
//! `cat` loopback, exit status on a child's death, shutdown escalation (spec §3.5), reaping,
//! stderr forwarding.
#![cfg(unix)]
#![allow(clippy::unwrap_used)]

mod support;

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use support::Echo;
use switchboard_jsonrpc::{
    FrameSink, FrameSource, NullService, OutboundFrame, RequestError, RequestOptions,
    SessionConfig, Transport, TransportError, spawn,
};
use switchboard_test_support::wait;
use switchboard_transport::{ChildCommand, ChildHandle, ChildTransport};
use switchboard_types::MessageKind;

const GRACE: Duration = Duration::from_millis(300);

fn sh(script: &str) -> ChildCommand {
    ChildCommand::new("sh").arg("-c").arg(script)
}

/// A shell that ignores SIGTERM, spawned with `grace`, returned once it says (on stderr) that
/// its trap is installed, so that no signal can come before it.
async fn trapping_sigterm(grace: Option<Duration>) -> ChildTransport {
    let ready = Arc::new(AtomicBool::new(false));
    let seen = ready.clone();
    let mut command = sh(r#"trap "" TERM; echo trapped >&2; sleep 30"#).on_stderr(move |l| {
        if l == "trapped" {
            seen.store(true, Ordering::SeqCst);
        }
    });
    if let Some(g) = grace {
        command = command.shutdown_grace(g);
    }
    let transport = ChildTransport::spawn(command).unwrap();
    switchboard_test_support::wait::until("the shell's trap installed", || {
        ready.load(Ordering::SeqCst)
    })
    .await;
    transport
}

fn frame(text: &str) -> OutboundFrame {
    OutboundFrame {
        text: text.to_owned(),
        kind: MessageKind::Request,
        id: None,
        related: None,
        headers: Vec::new(),
        cancels: None,
    }
}

/// The child is reaped (its `/proc` entry is gone) and no live process is left in its group
/// within 2 s.
async fn assert_gone(pid: u32) {
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "child {pid} was not reaped"
    );
    group_empties(pid, Duration::from_secs(2)).await;
}

/// Processes (not zombies) whose process group is `pgid`, from `/proc/<pid>/stat`.
fn live_members_of_group(pgid: u32) -> Vec<u32> {
    let mut live = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // "pid (comm) state ppid pgrp ...": comm may hold spaces, so split after the last ')'.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() > 2 && fields[0] != "Z" && fields[2] == pgid.to_string() {
            live.push(pid);
        }
    }
    live
}

async fn shutdown_timed(
    handle: &ChildHandle,
    grace: Duration,
) -> (std::process::ExitStatus, Duration) {
    let started = Instant::now();
    let status = tokio::time::timeout(Duration::from_secs(10), handle.shutdown(grace))
        .await
        .expect("shutdown within 10 s")
        .unwrap();
    (status, started.elapsed())
}

#[tokio::test]
async fn frames_go_through_a_cat_child_and_come_back() {
    let transport = ChildTransport::spawn(ChildCommand::new("cat")).unwrap();
    let handle = transport.handle().clone();
    let (mut sink, mut source) = transport.split();
    let texts = [r#"{"jsonrpc":"2.0","id":1,"method":"a"}"#, r#"{"s":"é"}"#];
    for t in texts {
        sink.send(frame(t)).await.unwrap();
    }
    for t in texts {
        let got = tokio::time::timeout(Duration::from_secs(5), source.recv())
            .await
            .unwrap();
        assert_eq!(got.unwrap().unwrap(), t);
    }
    sink.close().await.unwrap();
    // `cat` exits on EOF; the source then reports the (clean) exit and ends.
    let end = tokio::time::timeout(Duration::from_secs(5), source.recv())
        .await
        .unwrap();
    match end {
        Some(Err(TransportError::Other(m))) => assert!(m.contains("exit status: 0"), "{m}"),
        other => panic!("expected the exit, got {other:?}"),
    }
    assert!(source.recv().await.is_none());
    let status = handle.wait().await.unwrap();
    assert!(status.success());
    assert_eq!(handle.exit_status(), Some(status));
    assert_gone(handle.pid()).await;
}

#[tokio::test]
async fn an_engine_session_loops_through_cat() {
    let echo = Echo::default();
    let notes = echo.notes.clone();
    let transport = ChildTransport::spawn(ChildCommand::new("cat")).unwrap();
    let handle = transport.handle().clone();
    let peer = spawn(transport, Arc::new(echo), SessionConfig::default());
    let params = serde_json::value::to_raw_value(&serde_json::json!({"x": [1, 2, 3]})).unwrap();
    let got = peer
        .request("echo", Some(params.clone()), RequestOptions::default())
        .await
        .unwrap();
    assert_eq!(got.get(), params.get());
    peer.notify("notifications/hello", Some(&serde_json::json!({})))
        .await
        .unwrap();
    wait::until("the notification came back", || {
        !notes.lock().unwrap().is_empty()
    })
    .await;
    assert_eq!(
        *notes.lock().unwrap(),
        vec!["notifications/hello".to_owned()]
    );
    // Closing the session closes the sink: stdin is closed and `cat` exits by itself.
    peer.close();
    let status = tokio::time::timeout(Duration::from_secs(5), handle.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success());
    assert_gone(handle.pid()).await;
}

#[tokio::test]
async fn a_child_exiting_mid_call_fails_the_pending_request_at_once() {
    let transport = ChildTransport::spawn(sh("read line; exit 3")).unwrap();
    let handle = transport.handle().clone();
    let peer = spawn(
        transport,
        Arc::new(NullService),
        SessionConfig::default().with_request_timeout(Some(Duration::from_secs(60))),
    );
    let started = Instant::now();
    let err = tokio::time::timeout(
        Duration::from_secs(5),
        peer.request("slow", None, RequestOptions::default()),
    )
    .await
    .expect("the call fails at once, not at its timeout")
    .unwrap_err();
    match &err {
        RequestError::ConnectionLost(reason) => {
            assert!(reason.contains("exit status: 3"), "{reason}")
        }
        other => panic!("expected ConnectionLost, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(peer.close_reason().unwrap().contains("exit status: 3"));
    assert_eq!(handle.wait().await.unwrap().code(), Some(3));
    assert_gone(handle.pid()).await;
}

#[tokio::test]
async fn a_child_that_exits_at_once_reports_its_status_on_the_source() {
    let transport = ChildTransport::spawn(sh("exit 3")).unwrap();
    let handle = transport.handle().clone();
    let (_sink, mut source) = transport.split();
    match tokio::time::timeout(Duration::from_secs(5), source.recv())
        .await
        .unwrap()
    {
        Some(Err(e @ TransportError::Other(_))) => {
            assert!(!e.is_recoverable());
            assert!(
                e.to_string()
                    .contains("child process exited: exit status: 3"),
                "{e}"
            );
        }
        other => panic!("expected the exit, got {other:?}"),
    }
    assert!(source.recv().await.is_none());
    assert_eq!(handle.exit_status().unwrap().code(), Some(3));
    assert_gone(handle.pid()).await;
}

#[tokio::test]
async fn frames_written_just_before_exit_are_delivered_first() {
    let script = r#"printf '{"a":1}\n{"b":2}\n{"c":3}'; exit 5"#;
    let transport = ChildTransport::spawn(sh(script)).unwrap();
    let (_sink, mut source) = transport.split();
    let mut got = Vec::new();
    loop {
        match tokio::time::timeout(Duration::from_secs(5), source.recv())
            .await
            .unwrap()
        {
            Some(Ok(t)) => got.push(t),
            Some(Err(e)) => {
                assert!(e.to_string().contains("exit status: 5"), "{e}");
                break;
            }
            None => panic!("the exit is reported before the end"),
        }
    }
    assert_eq!(got, [r#"{"a":1}"#, r#"{"b":2}"#, r#"{"c":3}"#]);
}

#[tokio::test]
async fn shutdown_closes_stdin_first_and_a_well_behaved_child_exits_cleanly() {
    let transport = ChildTransport::spawn(ChildCommand::new("cat")).unwrap();
    let handle = transport.handle().clone();
    let _halves = transport.split();
    let (status, took) = shutdown_timed(&handle, Duration::from_secs(5)).await;
    assert!(status.success(), "{status}");
    assert!(
        took < Duration::from_secs(2),
        "no signal was needed: {took:?}"
    );
    assert_gone(handle.pid()).await;
}

#[tokio::test]
async fn st_shutdown_sigterm_for_a_child_that_ignores_stdin_eof() {
    let transport = ChildTransport::spawn(sh("sleep 30")).unwrap();
    let handle = transport.handle().clone();
    let _halves = transport.split();
    let (status, took) = shutdown_timed(&handle, GRACE).await;
    assert_eq!(status.signal(), Some(15), "{status}");
    assert!(took >= GRACE, "stdin EOF was given its grace: {took:?}");
    assert!(took < GRACE * 2 + Duration::from_secs(1), "{took:?}");
    assert_gone(handle.pid()).await;
}

#[tokio::test]
async fn st_shutdown_sigkill_for_a_child_that_traps_sigterm() {
    let transport = trapping_sigterm(None).await;
    let handle = transport.handle().clone();
    let _halves = transport.split();
    let (status, took) = shutdown_timed(&handle, GRACE).await;
    assert_eq!(status.signal(), Some(9), "{status}");
    assert!(took >= GRACE * 2, "both graces were given: {took:?}");
    // The `sleep` grandchild ignores SIGTERM too (inherited); SIGKILL to the group ends it.
    assert_gone(handle.pid()).await;
}

#[tokio::test]
async fn closing_the_session_shuts_a_stubborn_child_down() {
    let transport = ChildTransport::spawn(sh("sleep 30").shutdown_grace(GRACE)).unwrap();
    let handle = transport.handle().clone();
    let peer = spawn(transport, Arc::new(NullService), SessionConfig::default());
    peer.close();
    let status = tokio::time::timeout(Duration::from_secs(5), handle.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.signal(), Some(15), "{status}");
    assert_gone(handle.pid()).await;
}

#[tokio::test]
async fn dropping_every_handle_still_shuts_the_child_down() {
    let transport = ChildTransport::spawn(sh("sleep 30").shutdown_grace(GRACE)).unwrap();
    let pid = transport.pid();
    drop(transport);
    wait::until(&format!("child {pid} gone"), || {
        !std::path::Path::new(&format!("/proc/{pid}")).exists()
    })
    .await;
    assert_gone(pid).await;
}

#[tokio::test]
async fn shutdown_of_an_exited_child_returns_its_status() {
    let transport = ChildTransport::spawn(sh("exit 7")).unwrap();
    let handle = transport.handle().clone();
    assert_eq!(handle.wait().await.unwrap().code(), Some(7));
    let status = transport.shutdown(GRACE).await.unwrap();
    assert_eq!(status.code(), Some(7));
}

/// Collects what a `tracing` fmt subscriber writes.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn stderr_lines_reach_tracing_and_the_hook() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = lines.clone();
    let script =
        r#"echo "hello from $FOO in $(pwd)" >&2; printf 'crlf line\r\n\nno newline' >&2; cat"#;
    let transport = ChildTransport::spawn(
        sh(script)
            .env("FOO", "the child")
            .cwd("/tmp")
            .on_stderr(move |l| sink.lock().unwrap().push(l.to_owned())),
    )
    .unwrap();
    let handle = transport.handle().clone();
    let pid = handle.pid();
    let _halves = transport.split();
    let status = handle.shutdown(Duration::from_secs(5)).await.unwrap();
    assert!(status.success());
    wait::until("three stderr lines", || lines.lock().unwrap().len() >= 3).await;
    assert_eq!(
        *lines.lock().unwrap(),
        ["hello from the child in /tmp", "crlf line", "no newline"]
    );
    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let event = log
        .lines()
        .find(|l| l.contains("hello from the child in /tmp"))
        .unwrap_or_else(|| panic!("no stderr event in {log:?}"));
    assert!(event.contains("INFO"), "{event}");
    assert!(event.contains("switchboard::child"), "{event}");
    assert!(event.contains(&format!("pid={pid}")), "{event}");
}

#[tokio::test]
async fn a_missing_program_is_an_error_at_spawn() {
    let err =
        ChildTransport::spawn(ChildCommand::new("/nonexistent/switchboard-test")).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
}

#[tokio::test]
async fn a_call_racing_the_childs_exit_still_names_the_exit_status() {
    // The child may be gone before the request is written (broken pipe), while it is written,
    // or after; every way, the caller learns the exit status.
    for script in [
        "exit 3",
        "sleep 0.05; exit 3",
        "head -c 1 >/dev/null; exit 3",
    ] {
        let transport = ChildTransport::spawn(sh(script)).unwrap();
        let handle = transport.handle().clone();
        let peer = spawn(transport, Arc::new(NullService), SessionConfig::default());
        let err = tokio::time::timeout(
            Duration::from_secs(5),
            peer.request("x", None, RequestOptions::default()),
        )
        .await
        .expect("the call fails at once")
        .unwrap_err();
        match &err {
            RequestError::ConnectionLost(reason) => {
                assert!(reason.contains("exit status: 3"), "{script}: {reason}")
            }
            other => panic!("{script}: expected ConnectionLost, got {other:?}"),
        }
        assert_eq!(handle.wait().await.unwrap().code(), Some(3));
    }
}

#[tokio::test]
async fn a_batch_of_frames_goes_through_a_cat_child_in_order() {
    let transport = ChildTransport::spawn(ChildCommand::new("cat")).unwrap();
    let (mut sink, mut source) = transport.split();
    let texts: Vec<String> = (0..40)
        .map(|i| format!(r#"{{"jsonrpc":"2.0","id":{i},"result":{{}}}}"#))
        .collect();
    let mut batch: Vec<OutboundFrame> = texts.iter().map(|t| frame(t)).collect();
    sink.send_batch(&mut batch).await.unwrap();
    assert!(batch.is_empty(), "the batch is consumed");
    for t in &texts {
        let got = tokio::time::timeout(Duration::from_secs(5), source.recv())
            .await
            .unwrap();
        assert_eq!(&got.unwrap().unwrap(), t);
    }
    sink.close().await.unwrap();
}

/// Counts what a `tracing` fmt subscriber writes, at every level.
fn count_logs() -> (Arc<Mutex<usize>>, tracing::subscriber::DefaultGuard) {
    #[derive(Clone)]
    struct Count(Arc<Mutex<usize>>);
    impl Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            *self.0.lock().unwrap() += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let count = Arc::new(Mutex::new(0));
    let writer = Count(count.clone());
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_max_level(tracing::Level::TRACE)
        .finish();
    (count, tracing::subscriber::set_default(subscriber))
}

/// Waits until no process is left in the group `pgid` (zombies aside).
async fn group_empties(pgid: u32, within: Duration) {
    let started = Instant::now();
    wait::until(&format!("group {pgid} empty"), || {
        live_members_of_group(pgid).is_empty()
    })
    .await;
    assert!(
        started.elapsed() < within,
        "group {pgid} emptied after {within:?}"
    );
}

#[tokio::test]
async fn a_grandchild_left_running_by_a_script_that_exits_is_shut_down() {
    let transport =
        ChildTransport::spawn(sh("sleep 30 & sleep 30 & exit 0").shutdown_grace(GRACE)).unwrap();
    let handle = transport.handle().clone();
    let _halves = transport.split();
    assert_eq!(handle.wait().await.unwrap().code(), Some(0));
    // The leader exited normally; the two `sleep`s it left get SIGTERM.
    group_empties(handle.pid(), GRACE + Duration::from_secs(2)).await;
}

#[tokio::test]
async fn a_grandchild_ignoring_sigterm_after_the_leader_exits_gets_sigkill() {
    let script = r#"(trap "" TERM; sleep 30) & sleep 0.1; exit 0"#;
    let transport = ChildTransport::spawn(sh(script).shutdown_grace(GRACE)).unwrap();
    let handle = transport.handle().clone();
    let _halves = transport.split();
    assert_eq!(handle.wait().await.unwrap().code(), Some(0));
    let exited = Instant::now();
    group_empties(handle.pid(), GRACE * 2 + Duration::from_secs(2)).await;
    assert!(exited.elapsed() >= GRACE / 2, "SIGTERM was given its grace");
}

#[tokio::test]
async fn a_child_ignoring_sigterm_is_killed_and_the_pending_call_names_the_exit() {
    let transport = trapping_sigterm(Some(GRACE)).await;
    let handle = transport.handle().clone();
    let peer = spawn(transport, Arc::new(NullService), SessionConfig::default());
    let call = {
        let peer = peer.clone();
        tokio::spawn(async move {
            peer.request("never/answered", None, RequestOptions::default())
                .await
        })
    };
    switchboard_test_support::wait::until("the call pending", || peer.pending_count() == 1).await;
    let (status, took) = shutdown_timed(&handle, GRACE).await;
    assert_eq!(status.signal(), Some(9), "{status}");
    assert!(took >= GRACE * 2, "{took:?}");
    match tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .unwrap()
        .unwrap()
    {
        Err(RequestError::ConnectionLost(why)) => assert!(why.contains("signal"), "{why}"),
        other => panic!("expected the exit status, got {other:?}"),
    }
    assert_gone(handle.pid()).await;
}

#[tokio::test]
async fn a_child_flooding_stdout_with_garbage_and_huge_lines_leaves_the_session_working() {
    let (logged, _guard) = count_logs();
    // A 2 MiB line (over the 64 KiB bound set below), 100,000 lines of garbage, then a loopback.
    let script = "head -c 2097152 /dev/zero | tr '\\0' x; echo; \
                  yes 'garbage, not json' | head -n 100000; exec cat";
    let transport =
        ChildTransport::spawn(sh(script).max_frame_bytes(64 * 1024).shutdown_grace(GRACE)).unwrap();
    let handle = transport.handle().clone();
    let peer = spawn(
        transport,
        Arc::new(Echo::default()),
        SessionConfig::default(),
    );
    // Through `cat`, our request comes back to us, is answered, and the answer comes back.
    let r = peer
        .request(
            "echo",
            Some(
                switchboard_types::jsonrpc::to_raw(&serde_json::json!({"after": "the flood"}))
                    .unwrap(),
            ),
            RequestOptions::default().with_timeout(Duration::from_secs(30)),
        )
        .await
        .unwrap();
    assert_eq!(r.get(), r#"{"after":"the flood"}"#);
    peer.close();
    handle.wait().await.unwrap();
    let bytes = *logged.lock().unwrap();
    assert!(bytes < 64 * 1024, "{bytes} bytes of log for the flood");
}

#[tokio::test]
async fn a_child_flooding_stderr_is_logged_within_its_budget_and_the_hook_sees_every_line() {
    let (logged, _guard) = count_logs();
    let seen = Arc::new(Mutex::new(0usize));
    let counter = seen.clone();
    // 200,000 short lines and one 1 MiB line, then a loopback.
    let script = "yes 'noise on stderr' | head -n 200000 >&2; \
                  head -c 1048576 /dev/zero | tr '\\0' y >&2; echo >&2; exec cat";
    let transport = ChildTransport::spawn(
        sh(script)
            .stderr_lines_per_second(20)
            .shutdown_grace(GRACE)
            .on_stderr(move |_| *counter.lock().unwrap() += 1),
    )
    .unwrap();
    let handle = transport.handle().clone();
    let peer = spawn(
        transport,
        Arc::new(Echo::default()),
        SessionConfig::default(),
    );
    let r = peer
        .request(
            "echo",
            Some(
                switchboard_types::jsonrpc::to_raw(&serde_json::json!({"still": "here"})).unwrap(),
            ),
            RequestOptions::default().with_timeout(Duration::from_secs(30)),
        )
        .await
        .unwrap();
    assert_eq!(r.get(), r#"{"still":"here"}"#);
    peer.close();
    handle.wait().await.unwrap();
    // The 1 MiB line reaches the hook in 64 KiB pieces.
    wait::until("the hook saw every byte", || {
        *seen.lock().unwrap() >= 200_016
    })
    .await;
    let bytes = *logged.lock().unwrap();
    assert!(
        bytes < 64 * 1024,
        "{bytes} bytes of log for the stderr flood"
    );
}
