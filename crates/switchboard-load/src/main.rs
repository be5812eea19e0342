//! `switchboard-load`: a load generator for any MCP server, speaking raw JSON-RPC.
//!
//! It uses none of our SDK crates: requests are JSON text written once and replies are read as raw
//! JSON, so that it measures every server the same way.
//!
//! - `wire`: pre-serialized request frames, reply classification, the SSE event scanner.
//! - `stdio`: a spawned server (process group), the windowed call loop, cold start.
//! - `http`: Streamable HTTP over keep-alive HTTP/1.1 connections, calls and sessions.
//! - `list`: whole lists (`tools/list`, `resources/list`) read page after page.
//! - `procfs`: CPU time and RSS of a pid.
//! - `report`: the numbers, printed as a block or as one JSON object.
//!
//! Exit codes: 0 the run completed, 1 it stopped at `--max-seconds` or was interrupted (the
//! partial numbers are still printed), 2 usage or setup error (no target, spawn or connect
//! failed, no answer to `initialize`), 3 the run completed but the server's memory grew past
//! `--max-rss-growth-kib`.

mod http;
mod list;
mod procfs;
mod report;
mod stdio;
mod wire;

use anyhow::{Context as _, bail};
use clap::{ArgGroup, Parser, ValueEnum};
use tokio::time::{Duration, Instant};

use crate::report::Report;
use crate::wire::{CallTemplate, Era};

/// Load an MCP server with `tools/call` (raw JSON-RPC over stdio or Streamable HTTP) and report
/// calls/s, latency percentiles, server CPU per call and peak RSS; or measure memory per
/// session (HTTP) or cold start (stdio).
#[derive(Debug, Parser)]
#[command(name = "switchboard-load", version, about)]
#[command(group(ArgGroup::new("target").required(true).args(["stdio", "url"])))]
struct Cli {
    /// Spawn this server command (`sh -c "exec CMD"`) and speak over its stdin/stdout.
    #[arg(long, value_name = "CMD ARGS")]
    stdio: Option<String>,
    /// Speak Streamable HTTP to this endpoint (http:// only).
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// What to measure.
    #[arg(long, value_enum, default_value_t = Mode::Calls)]
    mode: Mode,
    /// Measured calls (calls mode; default 10000), whole lists (list mode; default 100) or
    /// repetitions (cold-start; default 20).
    #[arg(short = 'n', long = "calls", value_name = "N")]
    n: Option<u64>,
    /// Requests in flight: a window of K on the stdio pipe; K connections over HTTP.
    #[arg(short = 'k', long = "in-flight", value_name = "K", default_value_t = 1)]
    k: usize,
    /// HTTP: all K connections share ONE session (default: a session per connection).
    #[arg(long)]
    one_session: bool,
    /// Sessions mode: how many sessions to open.
    #[arg(long, value_name = "S", default_value_t = 100)]
    sessions: u64,
    /// Sessions mode: open and delete the S sessions this many times; the report gives the
    /// server's RSS after each round and the growth of the last against the first.
    #[arg(long, value_name = "R", default_value_t = 1)]
    rounds: u64,
    /// Read CPU time and memory of this pid (default: the spawned stdio server).
    #[arg(long)]
    pid: Option<u32>,
    /// Calls before the measured window (default: N/10, at most 1000).
    #[arg(long, value_name = "W")]
    warmup: Option<u64>,
    /// Print one JSON object instead of the readable block.
    #[arg(long)]
    json: bool,
    /// Hard bound on the run; measuring stops here (cleanup takes at most a few seconds more).
    #[arg(long, value_name = "T", default_value_t = 60.0)]
    max_seconds: f64,
    /// The protocol revision to speak. 2025-11-25: `initialize` and `notifications/initialized`
    /// first (a session per connection over HTTP). 2026-07-28: no handshake and no session;
    /// every call carries the revision and empty client capabilities in `params._meta`, and over
    /// HTTP the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers (calls mode only).
    #[arg(long, value_name = "VERSION", default_value = wire::PROTOCOL_VERSION,
          value_parser = [wire::PROTOCOL_VERSION, wire::MODERN_VERSION])]
    protocol: String,
    /// The tool to call.
    #[arg(long, default_value = "add")]
    tool: String,
    /// The tool's arguments (a JSON object).
    #[arg(long, value_name = "JSON", default_value = r#"{"a":1,"b":2}"#)]
    arguments: String,
    /// Add a member `pad` of this many bytes of text to the arguments (a large request that
    /// every `add` server accepts: the tool reads `a` and `b` only).
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    pad_bytes: usize,
    /// Count an answer as an error (a mismatch) unless the text blocks of its content hold
    /// exactly this many bytes in all (a large answer that must really arrive).
    #[arg(long, value_name = "BYTES")]
    expect_text_bytes: Option<usize>,
    /// List mode: what to list.
    #[arg(long, value_enum, default_value_t = ListArg::Tools)]
    list: ListArg,
    /// List mode: count a list as an error (a mismatch) unless its pages hold exactly this many
    /// items in all.
    #[arg(long, value_name = "N")]
    expect_items: Option<u64>,
    /// Read the server's RSS (`VmRSS`) this often, in milliseconds, and report every reading:
    /// calls mode (stdio, or HTTP with --pid) and churn mode. The baseline is the reading when
    /// the measured window starts (after the warm-up).
    #[arg(long, value_name = "MS")]
    rss_every_ms: Option<u64>,
    /// Exit 3 when the server's memory grew by more than this many KiB: in calls and churn
    /// modes the highest reading after the baseline minus the baseline (needs --rss-every-ms);
    /// in sessions mode the RSS after the last round's DELETE minus after the first round's.
    #[arg(long, value_name = "KIB")]
    max_rss_growth_kib: Option<u64>,
    /// Sessions and churn modes: each session also makes one tools/call before it is deleted
    /// (sessions) or abandoned (churn).
    #[arg(long)]
    call: bool,
    /// Churn mode: sessions opened per second, in all.
    #[arg(long, value_name = "R", default_value_t = 100.0)]
    rate: f64,
    /// HTTP calls mode: send `Authorization: Bearer TOKEN` with every request (better given
    /// in the environment than on the command line, where other users can read it).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "SWITCHBOARD_LOAD_BEARER",
        hide_env_values = true,
        requires = "url",
        conflicts_with = "dpop_proofs"
    )]
    bearer: Option<String>,
    /// HTTP calls mode: a DPoP-bound token on the first line of FILE, then one proof a line
    /// (each `POST` to the URL, each `jti` new): every request sends `Authorization: DPoP
    /// TOKEN` and the next proof. The run fails when the proofs run out.
    #[arg(long, value_name = "FILE", requires = "url")]
    dpop_proofs: Option<std::path::PathBuf>,
    /// Runtime threads for the generator (1: a single-threaded runtime, leaving the other cores
    /// to the server).
    #[arg(long, default_value_t = 1)]
    threads: usize,
}

/// The measurements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// N tools/call with K in flight: calls/s, latency, server CPU per call, peak RSS.
    Calls,
    /// HTTP: open S sessions, DELETE them: memory per session, open rate, memory after DELETE.
    Sessions,
    /// stdio: spawn → initialize answered, N times: median and p90.
    ColdStart,
    /// Read a whole list (`--list tools` or `resources`) N times, one request in flight, page
    /// after page following `nextCursor`: lists/s, latency of a whole list, pages and items per
    /// list.
    List,
    /// HTTP: open S sessions at --rate a second and abandon them (no DELETE); the server's RSS
    /// is read along the way, so that idle sessions are seen to be reaped (run the server with
    /// a short idle timeout and a session bound below S: a session refused is an error).
    Churn,
}

/// What the list mode lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ListArg {
    /// `tools/list`.
    Tools,
    /// `resources/list`.
    Resources,
}

/// Where the server is.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    /// A command to spawn.
    Stdio(String),
    /// A Streamable HTTP endpoint.
    Http(String),
}

/// A calls run, validated.
#[derive(Debug)]
pub(crate) struct CallPlan {
    pub(crate) target: Target,
    pub(crate) template: CallTemplate,
    pub(crate) n: u64,
    pub(crate) warmup: u64,
    pub(crate) k: usize,
    pub(crate) one_session: bool,
    pub(crate) pid: Option<u32>,
    /// How often to read the server's RSS, if at all.
    pub(crate) rss_every: Option<Duration>,
    /// HTTP: the credentials each request carries.
    pub(crate) auth: Option<std::sync::Arc<http::Auth>>,
}

/// A sessions or churn run, validated.
#[derive(Debug)]
pub(crate) struct SessionPlan {
    pub(crate) url: String,
    pub(crate) sessions: u64,
    pub(crate) k: usize,
    pub(crate) pid: Option<u32>,
    /// Each session also makes this call.
    pub(crate) call: Option<CallTemplate>,
    /// Churn: sessions opened per second, and sessions opened before the baseline.
    pub(crate) rate: f64,
    pub(crate) warmup: u64,
    pub(crate) rss_every: Option<Duration>,
}

/// The most calls or sessions one run accepts (latencies and send times are kept per call).
const MAX_COUNT: u64 = 50_000_000;

/// The largest `--dpop-proofs` file: 64 MiB (about 100,000 proofs).
const MAX_PROOFS_FILE_BYTES: u64 = 64 << 20;

/// `--bearer` or `--dpop-proofs`, read.
fn auth(cli: &Cli) -> anyhow::Result<Option<http::Auth>> {
    if let Some(token) = &cli.bearer {
        return http::Auth::bearer(token).map(Some);
    }
    let Some(path) = &cli.dpop_proofs else {
        return Ok(None);
    };
    let named = || format!("--dpop-proofs {}", path.display());
    let file = std::fs::File::open(path).with_context(named)?;
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut std::io::Read::take(file, MAX_PROOFS_FILE_BYTES + 1),
        &mut text,
    )
    .with_context(named)?;
    if text.len() as u64 > MAX_PROOFS_FILE_BYTES {
        bail!("{} is over {MAX_PROOFS_FILE_BYTES} bytes", named());
    }
    http::Auth::dpop(&text).with_context(named).map(Some)
}

/// The largest `--pad-bytes`: 16 MiB, the default frame bound of a Switchboard server.
const MAX_PAD_BYTES: usize = 16 << 20;

fn main() {
    let cli = Cli::parse();
    let code = match start(&cli) {
        Ok(report) => {
            let text = if cli.json {
                format!("{}\n", report.to_json())
            } else {
                report.to_text()
            };
            print(&text);
            if report.timed_out {
                1
            } else if report.over_bound {
                3
            } else {
                0
            }
        }
        Err(e) => {
            eprintln!("switchboard-load: {e:#}");
            2
        }
    };
    stdio::kill_all();
    std::process::exit(code);
}

/// Writes to stdout; a closed pipe is not an error.
fn print(text: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

fn start(cli: &Cli) -> anyhow::Result<Report> {
    if !(cli.max_seconds > 0.0 && cli.max_seconds <= 86_400.0) {
        bail!("--max-seconds must be in (0, 86400]");
    }
    if cli.k == 0 || cli.k > 10_000 {
        bail!("-k must be in 1..=10000");
    }
    if cli.threads == 0 || cli.threads > 64 {
        bail!("--threads must be in 1..=64");
    }
    if cli
        .rss_every_ms
        .is_some_and(|ms| !(10..=3_600_000).contains(&ms))
    {
        bail!("--rss-every-ms must be in 10..=3600000");
    }
    if !(cli.rate > 0.0 && cli.rate <= 1_000_000.0) {
        bail!("--rate must be in (0, 1000000]");
    }
    let rt = if cli.threads == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(cli.threads)
            .enable_all()
            .build()?
    };
    let deadline = Instant::now() + Duration::from_secs_f64(cli.max_seconds);
    rt.block_on(async {
        tokio::select! {
            r = run(cli, deadline) => r.map(|mut report| {
                report.judge_growth(cli.max_rss_growth_kib);
                report
            }),
            _ = tokio::signal::ctrl_c() => {
                stdio::kill_all();
                eprintln!("switchboard-load: interrupted");
                std::process::exit(1);
            }
        }
    })
}

async fn run(cli: &Cli, deadline: Instant) -> anyhow::Result<Report> {
    let target = match (&cli.stdio, &cli.url) {
        (Some(cmd), None) => Target::Stdio(cmd.clone()),
        (None, Some(url)) => Target::Http(url.clone()),
        _ => bail!("give exactly one of --stdio CMD or --url URL"),
    };
    let era =
        Era::of_version(&cli.protocol).context("--protocol: not a revision this tool speaks")?;
    if era == Era::Modern && cli.mode != Mode::Calls {
        bail!(
            "--protocol {}: only --mode calls (the other modes measure sessions or the initialize handshake)",
            cli.protocol
        );
    }
    if era == Era::Modern && cli.one_session {
        bail!(
            "--one-session: the {} revision has no sessions",
            cli.protocol
        );
    }
    if (cli.bearer.is_some() || cli.dpop_proofs.is_some()) && cli.mode != Mode::Calls {
        bail!("--bearer and --dpop-proofs apply to the calls mode");
    }
    match cli.mode {
        Mode::Calls => {
            let n = cli.n.unwrap_or(10_000);
            if n == 0 || n > MAX_COUNT {
                bail!("-n must be in 1..={MAX_COUNT}");
            }
            let warmup = cli.warmup.unwrap_or((n / 10).min(1000));
            if warmup > MAX_COUNT {
                bail!("--warmup must be at most {MAX_COUNT}");
            }
            let mut arguments: serde_json::Value =
                serde_json::from_str(&cli.arguments).context("--arguments is not JSON")?;
            let Some(members) = arguments.as_object_mut() else {
                bail!("--arguments must be a JSON object");
            };
            if cli.pad_bytes > MAX_PAD_BYTES {
                bail!("--pad-bytes must be at most {MAX_PAD_BYTES}");
            }
            if cli.pad_bytes > 0 {
                members.insert("pad".into(), "x".repeat(cli.pad_bytes).into());
            }
            let plan = CallPlan {
                template: CallTemplate::new(&cli.tool, &arguments, era)
                    .expecting_text_bytes(cli.expect_text_bytes),
                target,
                n,
                warmup,
                k: cli.k,
                one_session: cli.one_session,
                pid: cli.pid,
                rss_every: cli.rss_every_ms.map(Duration::from_millis),
                auth: auth(cli)?.map(std::sync::Arc::new),
            };
            match plan.target {
                Target::Stdio(_) => stdio::run_calls(&plan, deadline).await,
                Target::Http(_) => http::run_calls(&plan, deadline).await,
            }
        }
        Mode::Sessions | Mode::Churn => {
            let Target::Http(url) = target else {
                bail!("--mode sessions and --mode churn need --url")
            };
            if cli.sessions == 0 || cli.sessions > MAX_COUNT {
                bail!("--sessions must be in 1..={MAX_COUNT}");
            }
            if cli.rounds == 0 || cli.rounds > 100 {
                bail!("--rounds must be in 1..=100");
            }
            let call = if cli.call {
                let arguments: serde_json::Value =
                    serde_json::from_str(&cli.arguments).context("--arguments is not JSON")?;
                Some(CallTemplate::new(&cli.tool, &arguments, era))
            } else {
                None
            };
            let plan = SessionPlan {
                url,
                sessions: cli.sessions,
                k: cli.k,
                pid: cli.pid,
                call,
                rate: cli.rate,
                warmup: cli.warmup.unwrap_or(cli.sessions / 10).min(cli.sessions),
                rss_every: cli.rss_every_ms.map(Duration::from_millis),
            };
            if cli.mode == Mode::Churn {
                return http::run_churn(&plan, deadline).await;
            }
            let mut first = http::run_sessions(&plan, deadline).await?;
            first.rounds.push(first.round());
            for _ in 1..cli.rounds {
                let r = http::run_sessions(&plan, deadline).await?;
                first.rounds.push(r.round());
                first.notes.extend(r.notes);
                first.counts.transport += r.counts.transport;
                first.timed_out |= r.timed_out;
                first.peak_rss_kib = first.peak_rss_kib.max(r.peak_rss_kib);
            }
            Ok(first)
        }
        Mode::List => {
            let n = cli.n.unwrap_or(100);
            if n == 0 || n > MAX_COUNT {
                bail!("-n must be in 1..={MAX_COUNT}");
            }
            if cli.k != 1 {
                bail!("--mode list keeps one request in flight (-k 1)");
            }
            let plan = list::ListPlan {
                target,
                kind: match cli.list {
                    ListArg::Tools => wire::ListKind::Tools,
                    ListArg::Resources => wire::ListKind::Resources,
                },
                n,
                warmup: cli.warmup.unwrap_or((n / 10).min(100)),
                expect_items: cli.expect_items,
                pid: cli.pid,
            };
            match plan.target {
                Target::Stdio(_) => stdio::run_list(&plan, deadline).await,
                Target::Http(_) => http::run_list(&plan, deadline).await,
            }
        }
        Mode::ColdStart => {
            let Target::Stdio(cmd) = target else {
                bail!("--mode cold-start needs --stdio")
            };
            let reps = cli.n.unwrap_or(20);
            if reps == 0 || reps > 100_000 {
                bail!("-n (repetitions) must be in 1..=100000");
            }
            stdio::run_cold_start(&cmd, reps, deadline).await
        }
    }
}
