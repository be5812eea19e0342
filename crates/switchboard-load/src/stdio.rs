//! The stdio side: a server spawned as `sh -c "exec CMD"` in its own process group, spoken to in
//! newline-delimited frames.
//!
//! Calls: after the handshake (none in the 2026-07-28 era, whose first call decides the era of
//! the connection), this task writes request frames, K in flight (a semaphore holds the window), and a
//! reader task matches answers to send times by id (ids are dense, so the send times are a
//! vector, not a map). Server requests are answered (`ping` with `{}`), notifications skipped.
//! Every process spawned is registered until it is reaped, so that an interrupted run can still
//! kill its group.

use std::collections::HashSet;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex};

use anyhow::{Context as _, bail};
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWriteExt as _, BufWriter};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::{Mutex, Semaphore, TryAcquireError, watch};
use tokio::time::{Duration, Instant, timeout_at};

use crate::list::ListPlan;
use crate::procfs;
use crate::report::{Counts, Percentiles, Report, median_p90};
use crate::wire::{self, Era, INIT_ID, Incoming};
use crate::{CallPlan, Target};

/// The longest line accepted from the server.
const MAX_LINE: usize = 64 << 20;

/// A send time that is not (or no longer) waiting for an answer.
const IDLE: u64 = u64::MAX;

/// Process groups spawned and not yet reaped.
static GROUPS: StdMutex<Option<HashSet<u32>>> = StdMutex::new(None);

/// Kills every process group this program spawned and has not reaped (on interrupt or error).
pub(crate) fn kill_all() {
    let groups: Vec<u32> = GROUPS
        .lock()
        .map(|mut g| g.take().unwrap_or_default().into_iter().collect())
        .unwrap_or_default();
    for pgid in groups {
        kill_group(pgid);
    }
}

/// Sends SIGKILL to the group `pgid` (the `kill` program: signalling a group needs no unsafe).
fn kill_group(pgid: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-s", "KILL", "--", &format!("-{pgid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// A spawned server.
struct Server {
    child: Child,
    pid: u32,
    stdin: BufWriter<ChildStdin>,
    stdout: ChildStdout,
    lines: LineBuf,
}

impl Server {
    /// Spawns `sh -c "exec CMD"` as the leader of a new process group; stderr is discarded.
    fn spawn(cmd: &str) -> anyhow::Result<Self> {
        let mut child = tokio::process::Command::new("sh")
            .arg("-c")
            .arg(format!("exec {cmd}"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("spawning `{cmd}`"))?;
        let pid = child.id().context("the spawned server has no pid")?;
        if let Ok(mut g) = GROUPS.lock() {
            g.get_or_insert_with(HashSet::new).insert(pid);
        }
        let stdin = BufWriter::with_capacity(64 << 10, child.stdin.take().context("no stdin")?);
        let stdout = child.stdout.take().context("no stdout")?;
        Ok(Self {
            child,
            pid,
            stdin,
            stdout,
            lines: LineBuf::default(),
        })
    }

    /// Sends `initialize` and waits for its answer, answering server requests meanwhile.
    async fn initialize(&mut self) -> anyhow::Result<()> {
        let mut init = wire::initialize_frame().into_bytes();
        init.push(b'\n');
        self.stdin.write_all(&init).await?;
        self.stdin.flush().await?;
        loop {
            while let Some(line) = self.lines.pop_line() {
                match wire::classify(line) {
                    Incoming::Response {
                        id: Some(INIT_ID),
                        outcome,
                    } => {
                        if outcome == wire::Outcome::RpcError {
                            bail!("initialize failed: {}", String::from_utf8_lossy(line));
                        }
                        return Ok(());
                    }
                    Incoming::Request { id, ping } => answer(&mut self.stdin, id, ping).await?,
                    _ => {}
                }
            }
            if self.lines.fill(&mut self.stdout).await? {
                bail!("the server closed its stdout before answering initialize");
            }
        }
    }

    /// Sends `notifications/initialized`.
    async fn initialized(&mut self) -> anyhow::Result<()> {
        self.stdin.write_all(wire::INITIALIZED.as_bytes()).await?;
        self.stdin.write_all(b"\n").await?;
        Ok(self.stdin.flush().await?)
    }
}

impl crate::list::Exchange for Server {
    async fn exchange(
        &mut self,
        id: u64,
        mut frame: Vec<u8>,
    ) -> anyhow::Result<(wire::Outcome, bytes::Bytes)> {
        frame.push(b'\n');
        self.stdin.write_all(&frame).await?;
        self.stdin.flush().await?;
        loop {
            while let Some(line) = self.lines.pop_line() {
                match wire::classify(line) {
                    Incoming::Response {
                        id: Some(got),
                        outcome,
                    } if got == id => {
                        return Ok((outcome, bytes::Bytes::copy_from_slice(line)));
                    }
                    Incoming::Request { id, ping } => answer(&mut self.stdin, id, ping).await?,
                    _ => {}
                }
            }
            if self.lines.fill(&mut self.stdout).await? {
                bail!("the server closed its stdout before answering request {id}");
            }
        }
    }
}

/// Answers a request the server sent (a `ping`, or anything else refused).
async fn answer<W: tokio::io::AsyncWrite + Unpin>(
    stdin: &mut W,
    id: &str,
    ping: bool,
) -> anyhow::Result<()> {
    let mut a = wire::answer(id, ping);
    a.push(b'\n');
    stdin.write_all(&a).await?;
    Ok(stdin.flush().await?)
}

/// The list mode over stdio: one server, the handshake, then whole lists one after another.
pub(crate) async fn run_list(plan: &ListPlan, deadline: Instant) -> anyhow::Result<Report> {
    let Target::Stdio(cmd) = &plan.target else {
        bail!("not a stdio target")
    };
    let mut server = Server::spawn(cmd)?;
    let pid = plan.pid.unwrap_or(server.pid);
    let mut report = Report {
        mode: "list",
        transport: "stdio",
        protocol: Era::Handshake.version(),
        target: cmd.clone(),
        warmup: Some(plan.warmup),
        in_flight: Some(1),
        pid: Some(pid),
        ..Report::default()
    };
    let ready = timeout_at(deadline, async {
        server.initialize().await?;
        server.initialized().await
    })
    .await;
    let ready = match ready {
        Ok(r) => r,
        Err(_) => Err(anyhow::anyhow!(
            "no answer to initialize before --max-seconds"
        )),
    };
    if ready.is_ok() {
        crate::list::measure(&mut server, plan, Some(pid), deadline, &mut report).await;
    }
    let Server {
        child,
        stdin,
        pid: leader,
        ..
    } = server;
    shutdown(child, leader, Some(stdin)).await;
    ready.map(|()| report)
}

/// Ends a server: stdin closed, a short grace, then SIGKILL to its whole group (which also
/// takes any grandchild), then the leader is reaped.
async fn shutdown(mut child: Child, pid: u32, stdin: Option<BufWriter<ChildStdin>>) {
    drop(stdin);
    let _ = tokio::time::timeout(Duration::from_millis(100), child.wait()).await;
    kill_group(pid);
    let _ = child.start_kill();
    let _ = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
    if let Ok(mut g) = GROUPS.lock() {
        g.get_or_insert_with(HashSet::new).remove(&pid);
    }
}

/// A line splitter over a growing buffer (no copy per line).
#[derive(Debug, Default)]
struct LineBuf {
    buf: Vec<u8>,
    start: usize,
}

impl LineBuf {
    /// The next complete line, without its `\n` (and `\r`).
    fn pop_line(&mut self) -> Option<&[u8]> {
        let i = memchr::memchr(b'\n', &self.buf[self.start..])?;
        let line = &self.buf[self.start..self.start + i];
        self.start += i + 1;
        Some(line.strip_suffix(b"\r").unwrap_or(line))
    }

    /// Reads more; `true` at end of stream.
    async fn fill<R: AsyncRead + Unpin>(&mut self, r: &mut R) -> anyhow::Result<bool> {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        if self.buf.len() > MAX_LINE {
            bail!("a line from the server exceeds {MAX_LINE} bytes");
        }
        self.buf.reserve(64 << 10);
        Ok(r.read_buf(&mut self.buf).await? == 0)
    }
}

/// What the reader task hands back.
struct ReaderOut {
    counts: Counts,
    samples: Vec<u32>,
    closed: Option<String>,
}

/// Shared between the writer (this task) and the reader task.
struct Window {
    base: Instant,
    /// Send time per id (ns since `base`), `IDLE` when not in flight.
    sent_at: Vec<AtomicU64>,
    /// One permit per free slot of the window; closed when the server's stdout ends.
    permits: Semaphore,
    /// Answers with an id above this are measured; the rest are warmup.
    warmup: u64,
}

/// The calls mode over stdio.
pub(crate) async fn run_calls(plan: &CallPlan, deadline: Instant) -> anyhow::Result<Report> {
    let Target::Stdio(cmd) = &plan.target else {
        bail!("not a stdio target")
    };
    let mut server = Server::spawn(cmd)?;
    let pid = plan.pid.unwrap_or(server.pid);
    let era = plan.template.era();
    let ready = timeout_at(deadline, async {
        // A modern run has no handshake: its first call decides the era of the connection.
        if era == Era::Modern {
            return Ok(());
        }
        server.initialize().await?;
        server.initialized().await
    })
    .await;
    let mut report = Report {
        mode: "calls",
        transport: "stdio",
        protocol: era.version(),
        target: cmd.clone(),
        warmup: Some(plan.warmup),
        in_flight: Some(plan.k as u64),
        pid: Some(pid),
        ..Report::default()
    };
    let Server {
        child,
        stdin,
        stdout,
        lines,
        pid: leader,
        ..
    } = server;
    match ready {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            shutdown(child, leader, Some(stdin)).await;
            return Err(e);
        }
        Err(_) => {
            shutdown(child, leader, Some(stdin)).await;
            bail!("no answer to initialize before --max-seconds");
        }
    }
    let total = plan.warmup + plan.n;
    let window = Arc::new(Window {
        base: Instant::now(),
        sent_at: (0..=total).map(|_| AtomicU64::new(IDLE)).collect(),
        permits: Semaphore::new(plan.k),
        warmup: plan.warmup,
    });
    let stdin = Arc::new(Mutex::new(stdin));
    let (stop_tx, stop_rx) = watch::channel(false);
    let reader = tokio::spawn(read_loop(
        stdout,
        lines,
        window.clone(),
        stdin.clone(),
        plan.template.clone(),
        plan.n,
        stop_rx,
    ));

    let sampler = plan
        .rss_every
        .map(|every| procfs::RssSampler::start(pid, every));
    let written = write_loop(plan, &window, &stdin, pid, sampler.as_ref(), deadline).await;
    let ((cpu0, self0), t0, mut timed_out) = match written {
        Ok(w) => w,
        Err(e) => {
            report
                .notes
                .push(format!("writing to the server failed: {e:#}"));
            ((None, None), None, false)
        }
    };
    // Every answer back (all permits free again), or the deadline.
    if !timed_out {
        timed_out = timeout_at(deadline, window.permits.acquire_many(plan.k as u32))
            .await
            .is_err();
    }
    let t1 = Instant::now();
    report.cpu_us = cpu0
        .zip(procfs::cpu_us(pid))
        .map(|(a, b)| b.saturating_sub(a));
    report.client_cpu_us = self0
        .zip(procfs::cpu_us(std::process::id()))
        .map(|(a, b)| b.saturating_sub(a));
    report.peak_rss_kib = procfs::status_kib(pid, "VmHWM");
    report.rss = sampler.map(|s| s.finish(pid));
    let _ = stop_tx.send(true);
    let out = reader.await.context("the reader task failed")?;
    let stdin = Arc::try_unwrap(stdin).map(Mutex::into_inner).ok();
    shutdown(child, leader, stdin).await;

    report.seconds = t0.map(|t0| (t1 - t0).as_secs_f64());
    report.counts = out.counts;
    let mut samples = out.samples;
    report.latency = Percentiles::of(&mut samples);
    report.timed_out = timed_out;
    if let Some(why) = out.closed {
        // Calls still in flight when the server went away got no answer.
        let lost = window.sent_at[1..]
            .iter()
            .filter(|s| s.load(Ordering::Relaxed) != IDLE)
            .count();
        report.counts.transport += lost as u64;
        report.notes.push(why);
    }
    Ok(report)
}

/// The CPU readings (server, this process) at the start of the measured window.
type CpuMark = (Option<u64>, Option<u64>);

/// Writes `warmup + n` calls, never more than K unanswered. Returns the CPU readings and the
/// clock at the start of the measured window, and whether the deadline cut it short. The
/// sampler's baseline is marked when the measured window starts.
async fn write_loop(
    plan: &CallPlan,
    window: &Window,
    stdin: &Mutex<BufWriter<ChildStdin>>,
    pid: u32,
    sampler: Option<&procfs::RssSampler>,
    deadline: Instant,
) -> anyhow::Result<(CpuMark, Option<Instant>, bool)> {
    let total = plan.warmup + plan.n;
    let mut frame = Vec::with_capacity(256);
    let (mut cpu0, mut t0) = ((None, None), None);
    for id in 1..=total {
        if id == plan.warmup + 1 {
            // The measured window starts once the warmup is fully answered.
            stdin.lock().await.flush().await?;
            match timeout_at(deadline, window.permits.acquire_many(plan.k as u32)).await {
                Err(_) => return Ok((cpu0, t0, true)),
                Ok(Err(_)) => break,
                Ok(Ok(all)) => drop(all),
            }
            if let Some(s) = sampler {
                s.mark_baseline(pid);
            }
            cpu0 = (procfs::cpu_us(pid), procfs::cpu_us(std::process::id()));
            t0 = Some(Instant::now());
        }
        if Instant::now() >= deadline {
            return Ok((cpu0, t0, true));
        }
        let permit = match window.permits.try_acquire() {
            Ok(p) => p,
            Err(TryAcquireError::Closed) => break,
            Err(TryAcquireError::NoPermits) => {
                stdin.lock().await.flush().await?;
                match timeout_at(deadline, window.permits.acquire()).await {
                    Err(_) => return Ok((cpu0, t0, true)),
                    Ok(Err(_)) => break,
                    Ok(Ok(p)) => p,
                }
            }
        };
        permit.forget();
        frame.clear();
        plan.template.write(id, &mut frame);
        frame.push(b'\n');
        let sent = window.base.elapsed().as_nanos() as u64;
        window.sent_at[id as usize].store(sent, Ordering::Release);
        stdin.lock().await.write_all(&frame).await?;
    }
    stdin.lock().await.flush().await?;
    Ok((cpu0, t0, false))
}

/// Reads answers until told to stop or the server's stdout ends.
async fn read_loop(
    mut stdout: ChildStdout,
    mut lines: LineBuf,
    window: Arc<Window>,
    stdin: Arc<Mutex<BufWriter<ChildStdin>>>,
    template: wire::CallTemplate,
    n: u64,
    mut stop: watch::Receiver<bool>,
) -> ReaderOut {
    let mut out = ReaderOut {
        counts: Counts::default(),
        samples: Vec::with_capacity(n as usize),
        closed: None,
    };
    loop {
        while let Some(line) = lines.pop_line() {
            match wire::classify(line) {
                Incoming::Response {
                    id: Some(id),
                    outcome,
                } => {
                    let Some(slot) = window.sent_at.get(id as usize) else {
                        continue;
                    };
                    let sent = slot.swap(IDLE, Ordering::Acquire);
                    if sent == IDLE {
                        continue; // Not ours, or answered twice.
                    }
                    if id > window.warmup {
                        let now = window.base.elapsed().as_nanos() as u64;
                        let us = now.saturating_sub(sent) / 1000;
                        out.samples.push(u32::try_from(us).unwrap_or(u32::MAX));
                        out.counts.add(template.judge(outcome, line));
                    }
                    window.permits.add_permits(1);
                }
                Incoming::Request { id, ping } => {
                    // Answered from a task, so that reading never waits on the writer.
                    let mut a = wire::answer(id, ping);
                    a.push(b'\n');
                    let stdin = stdin.clone();
                    tokio::spawn(async move {
                        let mut w = stdin.lock().await;
                        let _ = w.write_all(&a).await;
                        let _ = w.flush().await;
                    });
                }
                _ => {}
            }
        }
        tokio::select! {
            biased;
            _ = stop.changed() => break,
            r = lines.fill(&mut stdout) => match r {
                Ok(false) => {}
                Ok(true) => {
                    out.closed = Some("the server closed its stdout".into());
                    break;
                }
                Err(e) => {
                    out.closed = Some(format!("reading the server's stdout failed: {e:#}"));
                    break;
                }
            },
        }
    }
    if out.closed.is_some() {
        window.permits.close();
    }
    out
}

/// The cold-start mode: `reps` times, spawn → `initialize` answered, each server killed before
/// the next one starts.
pub(crate) async fn run_cold_start(
    cmd: &str,
    reps: u64,
    deadline: Instant,
) -> anyhow::Result<Report> {
    let mut times = Vec::with_capacity(reps as usize);
    let mut report = Report {
        mode: "cold-start",
        transport: "stdio",
        protocol: wire::PROTOCOL_VERSION,
        target: cmd.to_owned(),
        ..Report::default()
    };
    for _ in 0..reps {
        if Instant::now() >= deadline {
            report.timed_out = true;
            break;
        }
        let t = Instant::now();
        let mut server = Server::spawn(cmd)?;
        let r = timeout_at(deadline, server.initialize()).await;
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        report.peak_rss_kib = report
            .peak_rss_kib
            .max(procfs::status_kib(server.pid, "VmHWM"));
        shutdown(server.child, server.pid, Some(server.stdin)).await;
        match r {
            Ok(Ok(())) => times.push(ms),
            Ok(Err(e)) => {
                report.counts.transport += 1;
                report.notes.push(format!("{e:#}"));
            }
            Err(_) => report.timed_out = true,
        }
    }
    report.counts.ok = times.len() as u64;
    report.repetitions = Some(times.len() as u64);
    report.cold_start_ms = median_p90(&mut times);
    report.notes.dedup();
    Ok(report)
}
