//! `rmcp-client`: the benchmark's client side on the official Rust SDK (`rmcp`). It connects as
//! rmcp's documentation shows (`().serve(TokioChildProcess::new(command))` for a command,
//! `().serve(StreamableHttpClientTransport::from_uri(url))` for Streamable HTTP, on reqwest),
//! makes `tools/call add` {a: 1, b: 2} K at a time on that one session (K tasks sharing the
//! running service), on a current-thread runtime, and prints one JSON object with the fields
//! `switchboard-load --json` uses for the same figures. A call counts as an error unless its
//! answer is a result whose text is `3`.
//!
//! Usage: `rmcp-client (--stdio CMD | --url URL) [-n N] [-k K] [--warmup W] [--max-seconds T]`

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::{ConfigureCommandExt as _, StreamableHttpClientTransport, TokioChildProcess};

type Session = Arc<RunningService<RoleClient, ()>>;

struct Args {
    stdio: Option<String>,
    url: Option<String>,
    n: u64,
    k: usize,
    warmup: Option<u64>,
    max_seconds: f64,
}

fn usage() -> ! {
    eprintln!(
        "usage: rmcp-client (--stdio CMD | --url URL) [-n N] [-k K] [--warmup W] [--max-seconds T]"
    );
    std::process::exit(2)
}

fn parse() -> Args {
    let mut a = Args {
        stdio: None,
        url: None,
        n: 10_000,
        k: 1,
        warmup: None,
        max_seconds: 60.0,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| usage());
        match flag.as_str() {
            "--stdio" => a.stdio = Some(value),
            "--url" => a.url = Some(value),
            "-n" => a.n = value.parse().unwrap_or_else(|_| usage()),
            "-k" => a.k = value.parse().unwrap_or_else(|_| usage()),
            "--warmup" => a.warmup = Some(value.parse().unwrap_or_else(|_| usage())),
            "--max-seconds" => a.max_seconds = value.parse().unwrap_or_else(|_| usage()),
            _ => usage(),
        }
    }
    if a.stdio.is_some() == a.url.is_some()
        || a.n == 0
        || !(1..=10_000).contains(&a.k)
        || !(a.max_seconds > 0.0 && a.max_seconds <= 86_400.0)
    {
        usage();
    }
    a
}

/// User + system CPU of this process, in µs (`/proc/self/stat`, clock ticks of 10 ms).
fn cpu_us() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(ticks * 10_000)
}

#[derive(Default)]
struct Tally {
    samples: Vec<u32>,
    errors: u64,
    first_error: Option<String>,
}

/// One call; `Ok` only for a result whose text is `3`.
async fn call(session: &Session) -> Result<(), String> {
    let mut args = serde_json::Map::new();
    args.insert("a".into(), 1.into());
    args.insert("b".into(), 2.into());
    let r = session
        .call_tool(CallToolRequestParams::new("add").with_arguments(args))
        .await
        .map_err(|e| e.to_string())?;
    let text = r
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.as_str());
    if r.is_error != Some(true) && text == Some("3") {
        Ok(())
    } else {
        Err("the answer is not the text 3".into())
    }
}

async fn phase(session: &Session, k: usize, count: u64, record: bool) -> Tally {
    let taken = Arc::new(AtomicU64::new(0));
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..k {
        let (session, taken) = (session.clone(), taken.clone());
        workers.spawn(async move {
            let mut t = Tally::default();
            while taken.fetch_add(1, Ordering::Relaxed) < count {
                let start = Instant::now();
                let r = call(&session).await;
                let us = u32::try_from(start.elapsed().as_micros()).unwrap_or(u32::MAX);
                if record {
                    t.samples.push(us);
                }
                if let Err(e) = r {
                    t.errors += u64::from(record);
                    t.first_error.get_or_insert(e);
                }
            }
            t
        });
    }
    let mut all = Tally::default();
    while let Some(t) = workers.join_next().await {
        let t = t.unwrap_or_else(|e| Tally {
            errors: 1,
            first_error: Some(format!("a worker failed: {e}")),
            ..Tally::default()
        });
        all.samples.extend(t.samples);
        all.errors += t.errors;
        all.first_error = all.first_error.or(t.first_error);
    }
    all
}

fn rank(sorted: &[u32], p: f64) -> Option<u32> {
    let i = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1));
    sorted.get(i - 1).copied()
}

async fn run(a: &Args) -> Result<serde_json::Value, String> {
    let (session, transport, target): (Session, &str, String) = match (&a.stdio, &a.url) {
        (Some(cmd), _) => {
            let command = tokio::process::Command::new("sh").configure(|c| {
                c.arg("-c").arg(format!("exec {cmd}"));
            });
            let child = TokioChildProcess::new(command).map_err(|e| format!("spawn: {e}"))?;
            let s = ().serve(child).await.map_err(|e| e.to_string())?;
            (Arc::new(s), "stdio", cmd.clone())
        }
        (None, Some(url)) => {
            let t = StreamableHttpClientTransport::from_uri(url.as_str());
            let s = ().serve(t).await.map_err(|e| e.to_string())?;
            (Arc::new(s), "http", url.clone())
        }
        (None, None) => usage(),
    };
    let warmup = a.warmup.unwrap_or((a.n / 10).min(1000));
    let measured = tokio::time::timeout(Duration::from_secs_f64(a.max_seconds), async {
        phase(&session, a.k, warmup, false).await;
        let cpu0 = cpu_us();
        let t0 = Instant::now();
        let tally = phase(&session, a.k, a.n, true).await;
        (tally, t0.elapsed().as_secs_f64(), cpu0.zip(cpu_us()))
    })
    .await;
    if let Ok(s) = Arc::try_unwrap(session) {
        let _ = tokio::time::timeout(Duration::from_secs(2), s.cancel()).await;
    }
    let Ok((mut tally, seconds, cpu)) = measured else {
        return Ok(serde_json::json!({
            "mode": "calls", "client": "rmcp", "transport": transport, "target": target,
            "calls": 0, "in_flight": a.k, "errors": 0, "timed_out": true,
            "notes": ["stopped at --max-seconds"],
        }));
    };
    tally.samples.sort_unstable();
    let calls = tally.samples.len() as u64;
    let mean = tally.samples.iter().map(|&s| f64::from(s)).sum::<f64>() / calls.max(1) as f64;
    Ok(serde_json::json!({
        "mode": "calls",
        "client": "rmcp",
        "transport": transport,
        "target": target,
        "calls": calls,
        "in_flight": a.k,
        "warmup": warmup,
        "seconds": seconds,
        "calls_per_sec": (seconds > 0.0).then(|| calls as f64 / seconds),
        "p50_us": rank(&tally.samples, 0.50),
        "p90_us": rank(&tally.samples, 0.90),
        "p99_us": rank(&tally.samples, 0.99),
        "max_us": tally.samples.last(),
        "mean_us": mean,
        "errors": tally.errors,
        "client_cpu_us_per_call": cpu.map(|(a, b)| b.saturating_sub(a) as f64 / calls.max(1) as f64),
        "timed_out": false,
        "notes": tally.first_error.map(|e| vec![format!("first error: {e}")]).unwrap_or_default(),
    }))
}

fn main() {
    let a = parse();
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("rmcp-client: {e}");
            std::process::exit(2);
        }
    };
    match rt.block_on(run(&a)) {
        Ok(report) => {
            let timed_out = report["timed_out"] == true;
            println!("{report}");
            std::process::exit(i32::from(timed_out));
        }
        Err(e) => {
            eprintln!("rmcp-client: {e}");
            std::process::exit(2);
        }
    }
}
