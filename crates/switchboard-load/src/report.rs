//! The numbers of a run, and how they are printed: a readable block, or one JSON object whose
//! field names are stable (scripts and the benchmark pages read them).

use serde_json::{Value, json};

use crate::procfs::Samples;
use crate::wire::Outcome;

/// Answers counted by kind. `transport` counts calls that got no usable answer: a closed pipe or
/// connection, an HTTP status other than success, a body with no response for the call.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Counts {
    /// Results without `isError`.
    pub(crate) ok: u64,
    /// Results with `isError: true`.
    pub(crate) tool: u64,
    /// JSON-RPC error responses.
    pub(crate) rpc: u64,
    /// Results asking for client input (2026-07-28 `input_required`): no answer to the call.
    pub(crate) input: u64,
    /// Calls without a usable answer.
    pub(crate) transport: u64,
    /// Results without what the run expects (text size, number of items).
    pub(crate) mismatch: u64,
}

impl Counts {
    /// Counts one answer.
    pub(crate) fn add(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Ok => self.ok += 1,
            Outcome::ToolError => self.tool += 1,
            Outcome::RpcError => self.rpc += 1,
            Outcome::InputRequired => self.input += 1,
            Outcome::Mismatch => self.mismatch += 1,
        }
    }

    /// Adds another tally to this one.
    pub(crate) fn merge(&mut self, other: Counts) {
        self.ok += other.ok;
        self.tool += other.tool;
        self.rpc += other.rpc;
        self.input += other.input;
        self.transport += other.transport;
        self.mismatch += other.mismatch;
    }

    /// Every call that ended, well or not.
    pub(crate) fn calls(&self) -> u64 {
        self.ok + self.errors()
    }

    /// Every call that did not end in a plain result.
    pub(crate) fn errors(&self) -> u64 {
        self.tool + self.rpc + self.input + self.transport + self.mismatch
    }
}

/// Latency percentiles from all samples (microseconds), by nearest rank.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Percentiles {
    pub(crate) p50: u32,
    pub(crate) p90: u32,
    pub(crate) p99: u32,
    pub(crate) p999: u32,
    pub(crate) max: u32,
    pub(crate) mean: f64,
}

impl Percentiles {
    /// Sorts `samples` and reads the percentiles; `None` when there are none.
    pub(crate) fn of(samples: &mut [u32]) -> Option<Self> {
        if samples.is_empty() {
            return None;
        }
        samples.sort_unstable();
        let sum: u64 = samples.iter().map(|&s| u64::from(s)).sum();
        Some(Self {
            p50: rank(samples, 0.5),
            p90: rank(samples, 0.9),
            p99: rank(samples, 0.99),
            p999: rank(samples, 0.999),
            max: samples[samples.len() - 1],
            mean: sum as f64 / samples.len() as f64,
        })
    }
}

/// The nearest-rank percentile of sorted, non-empty `sorted`.
fn rank<T: Copy>(sorted: &[T], p: f64) -> T {
    let n = sorted.len();
    let idx = ((p * n as f64).ceil() as usize).clamp(1, n) - 1;
    sorted[idx]
}

/// Median and 90th percentile of `values` (sorted in place).
pub(crate) fn median_p90(values: &mut [f64]) -> Option<(f64, f64)> {
    if values.is_empty() {
        return None;
    }
    values.sort_unstable_by(f64::total_cmp);
    Some((rank(values, 0.5), rank(values, 0.9)))
}

/// Everything a run measured; a field a mode does not measure stays `None` (JSON `null`).
#[derive(Debug, Default)]
pub(crate) struct Report {
    pub(crate) mode: &'static str,
    pub(crate) transport: &'static str,
    /// The protocol revision the run spoke.
    pub(crate) protocol: &'static str,
    pub(crate) target: String,
    pub(crate) warmup: Option<u64>,
    pub(crate) in_flight: Option<u64>,
    pub(crate) one_session: bool,
    pub(crate) counts: Counts,
    pub(crate) seconds: Option<f64>,
    pub(crate) latency: Option<Percentiles>,
    pub(crate) pid: Option<u32>,
    pub(crate) cpu_us: Option<u64>,
    /// CPU time this generator spent over the same window (all its threads).
    pub(crate) client_cpu_us: Option<u64>,
    pub(crate) peak_rss_kib: Option<u64>,
    pub(crate) sessions: Option<u64>,
    pub(crate) rss_before_kib: Option<u64>,
    pub(crate) rss_after_open_kib: Option<u64>,
    pub(crate) rss_after_delete_kib: Option<u64>,
    /// Sessions mode: per round, the sessions opened and the server's RSS after opening and
    /// after deleting (the first round is also the fields above).
    pub(crate) rounds: Vec<Round>,
    /// The server's RSS read at intervals (`--rss-every-ms`).
    pub(crate) rss: Option<Samples>,
    /// Whether the server's memory grew past `--max-rss-growth-kib`.
    pub(crate) over_bound: bool,
    pub(crate) cold_start_ms: Option<(f64, f64)>,
    pub(crate) repetitions: Option<u64>,
    /// List mode: pages and items read over the measured lists.
    pub(crate) pages: Option<u64>,
    pub(crate) items: Option<u64>,
    pub(crate) timed_out: bool,
    pub(crate) notes: Vec<String>,
}

/// One round of the sessions mode.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Round {
    /// Sessions opened.
    pub(crate) opened: u64,
    /// The server's RSS once they were open.
    pub(crate) after_open: Option<u64>,
    /// The server's RSS once they were deleted.
    pub(crate) after_delete: Option<u64>,
}

impl Report {
    /// This run as one round of the sessions mode.
    pub(crate) fn round(&self) -> Round {
        Round {
            opened: self.sessions.unwrap_or(0),
            after_open: self.rss_after_open_kib,
            after_delete: self.rss_after_delete_kib,
        }
    }

    /// The growth judged against `--max-rss-growth-kib`: in sessions mode, the last round after
    /// DELETE against the first; otherwise the highest reading after the baseline.
    pub(crate) fn growth_kib(&self) -> Option<i64> {
        match self.mode {
            "sessions" => self.growth_after_first_round_kib(),
            _ => self.rss.as_ref()?.growth_kib(),
        }
    }

    /// Sets `over_bound` (with a note) when the growth exceeds `bound`, or cannot be measured.
    pub(crate) fn judge_growth(&mut self, bound: Option<u64>) {
        let Some(bound) = bound else { return };
        match self.growth_kib() {
            Some(g) if g > bound as i64 => {
                self.over_bound = true;
                self.notes.push(format!(
                    "the server's memory grew by {g} KiB, over the bound of {bound} KiB"
                ));
            }
            Some(_) => {}
            None => {
                self.over_bound = true;
                self.notes.push(format!(
                    "the growth of the server's memory could not be measured against the bound of {bound} KiB"
                ));
            }
        }
    }

    fn per_sec(&self, n: u64) -> Option<f64> {
        self.seconds.filter(|&s| s > 0.0).map(|s| n as f64 / s)
    }

    /// Calls (list mode: whole lists) per second.
    fn calls_per_sec(&self) -> Option<f64> {
        matches!(self.mode, "calls" | "list")
            .then(|| self.per_sec(self.counts.calls()))
            .flatten()
    }

    /// RSS after the last round's DELETE minus after the first's: what later rounds of the
    /// same sessions leave behind (0 when memory is reused).
    fn growth_after_first_round_kib(&self) -> Option<i64> {
        let first = self.rounds.first()?.after_delete?;
        let last = self.rounds.last()?.after_delete?;
        (self.rounds.len() > 1).then(|| last as i64 - first as i64)
    }

    fn sessions_per_sec(&self) -> Option<f64> {
        matches!(self.mode, "sessions" | "churn")
            .then(|| self.per_sec(self.sessions.unwrap_or(0)))
            .flatten()
    }

    fn cpu_us_per_unit(&self) -> Option<f64> {
        let units = match self.mode {
            "sessions" | "churn" => self.sessions?,
            _ => self.counts.calls(),
        };
        (units > 0).then(|| self.cpu_us.map(|c| c as f64 / units as f64))?
    }

    fn client_cpu_us_per_call(&self) -> Option<f64> {
        let calls = self.counts.calls();
        (matches!(self.mode, "calls" | "list") && calls > 0)
            .then(|| self.client_cpu_us.map(|c| c as f64 / calls as f64))?
    }

    /// List mode: pages (or items) per measured list.
    fn per_list(&self, v: Option<u64>) -> Option<f64> {
        let lists = self.counts.calls();
        (lists > 0).then(|| v.map(|v| v as f64 / lists as f64))?
    }

    fn bytes_per_session(&self) -> Option<i64> {
        let (before, after, s) = (
            self.rss_before_kib?,
            self.rss_after_open_kib?,
            self.sessions?,
        );
        (s > 0).then(|| (after as i64 - before as i64) * 1024 / s as i64)
    }

    /// The one-object JSON form.
    pub(crate) fn to_json(&self) -> Value {
        let l = self.latency;
        let (cs_median, cs_p90) = self.cold_start_ms.unzip();
        let mut out = json!({
            "mode": self.mode,
            "transport": self.transport,
            "protocol": self.protocol,
            "target": self.target,
            "calls": matches!(self.mode, "calls" | "list").then_some(self.counts.calls()),
            "in_flight": self.in_flight,
            "one_session": self.one_session,
            "warmup": self.warmup,
            "seconds": self.seconds,
            "calls_per_sec": self.calls_per_sec(),
            "p50_us": l.map(|l| l.p50),
            "p90_us": l.map(|l| l.p90),
            "p99_us": l.map(|l| l.p99),
            "p999_us": l.map(|l| l.p999),
            "max_us": l.map(|l| l.max),
            "mean_us": l.map(|l| l.mean),
            "errors": self.counts.errors(),
            "errors_rpc": self.counts.rpc,
            "errors_tool": self.counts.tool,
            "errors_transport": self.counts.transport,
            "errors_input_required": self.counts.input,
            "errors_mismatch": self.counts.mismatch,
            "pid": self.pid,
            "cpu_us_per_call": matches!(self.mode, "calls" | "list").then(|| self.cpu_us_per_unit()).flatten(),
            "cpu_us_per_session": (self.mode == "sessions").then(|| self.cpu_us_per_unit()).flatten(),
            "client_cpu_us_per_call": self.client_cpu_us_per_call(),
            "peak_rss_kib": self.peak_rss_kib,
            "sessions": self.sessions,
            "rss_before_kib": self.rss_before_kib,
            "rss_after_open_kib": self.rss_after_open_kib,
            "rss_after_delete_kib": self.rss_after_delete_kib,
            "rounds": self.rounds.iter().map(|r| serde_json::json!({"sessions": r.opened, "rss_after_open_kib": r.after_open, "rss_after_delete_kib": r.after_delete})).collect::<Vec<_>>(),
            "growth_after_first_round_kib": self.growth_after_first_round_kib(),
            "bytes_per_session": self.bytes_per_session(),
            "sessions_per_sec": self.sessions_per_sec(),
            "cold_start_ms_median": cs_median,
            "cold_start_ms_p90": cs_p90,
            "repetitions": self.repetitions,
            "timed_out": self.timed_out,
            "notes": self.notes,
        });
        let rss = self.rss.as_ref();
        let extra = json!({
            "rss_samples": rss.map(|r| r.points.iter().map(|&(t, k)| json!([(t * 1000.0).round() / 1000.0, k])).collect::<Vec<_>>()),
            "rss_baseline_kib": rss.and_then(Samples::baseline_kib),
            "rss_last_kib": rss.and_then(Samples::last_kib),
            "rss_growth_kib": self.growth_kib(),
            "over_bound": self.over_bound,
            "pages_per_list": self.per_list(self.pages),
            "items_per_list": self.per_list(self.items),
        });
        if let (Some(obj), Value::Object(more)) = (out.as_object_mut(), extra) {
            obj.extend(more);
        }
        out
    }

    /// The readable block.
    pub(crate) fn to_text(&self) -> String {
        let mut out = format!(
            "switchboard-load: {} over {}, protocol {} ({})\n",
            self.mode, self.transport, self.protocol, self.target
        );
        let mut line = |k: &str, v: String| out.push_str(&format!("  {k:<11} {v}\n"));
        let secs = self.seconds.map_or("-".into(), |s| format!("{s:.3} s"));
        match self.mode {
            "calls" => {
                let session = if self.one_session {
                    ", one session"
                } else {
                    ""
                };
                line(
                    "calls",
                    format!(
                        "{} in {secs} ({} in flight{session}, warmup {})",
                        self.counts.calls(),
                        self.in_flight.unwrap_or(1),
                        self.warmup.unwrap_or(0)
                    ),
                );
                line(
                    "throughput",
                    opt(self.calls_per_sec(), |r| format!("{r:.0} calls/s")),
                );
                line(
                    "latency",
                    self.latency.map_or("-".into(), |l| {
                        format!(
                            "p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  mean {}",
                            us(f64::from(l.p50)),
                            us(f64::from(l.p90)),
                            us(f64::from(l.p99)),
                            us(f64::from(l.p999)),
                            us(f64::from(l.max)),
                            us(l.mean)
                        )
                    }),
                );
            }
            "list" => {
                line(
                    "lists",
                    format!(
                        "{} in {secs} (warmup {}), {} pages and {} items each",
                        self.counts.calls(),
                        self.warmup.unwrap_or(0),
                        opt(self.per_list(self.pages), |v| format!("{v:.1}")),
                        opt(self.per_list(self.items), |v| format!("{v:.0}"))
                    ),
                );
                line(
                    "throughput",
                    opt(self.calls_per_sec(), |r| format!("{r:.1} lists/s")),
                );
                line(
                    "latency",
                    self.latency.map_or("-".into(), |l| {
                        format!(
                            "p50 {}  p99 {}  max {} (a whole list)",
                            us(f64::from(l.p50)),
                            us(f64::from(l.p99)),
                            us(f64::from(l.max))
                        )
                    }),
                );
            }
            "sessions" => {
                line(
                    "sessions",
                    format!("{} opened in {secs}", self.sessions.unwrap_or(0)),
                );
                line(
                    "open rate",
                    opt(self.sessions_per_sec(), |r| format!("{r:.0} sessions/s")),
                );
                line(
                    "server rss",
                    format!(
                        "before {}, after open {}, after DELETE {}",
                        opt(self.rss_before_kib, kib),
                        opt(self.rss_after_open_kib, kib),
                        opt(self.rss_after_delete_kib, kib)
                    ),
                );
                line(
                    "per session",
                    opt(self.bytes_per_session(), |b| format!("{b} bytes")),
                );
                for (i, r) in self.rounds.iter().enumerate().skip(1) {
                    line(
                        &format!("round {}", i + 1),
                        format!(
                            "{} opened, after open {}, after DELETE {}",
                            r.opened,
                            opt(r.after_open, kib),
                            opt(r.after_delete, kib)
                        ),
                    );
                }
                if let Some(g) = self.growth_after_first_round_kib() {
                    line(
                        "growth",
                        format!("{g} KiB after DELETE, last round against the first"),
                    );
                }
            }
            "churn" => {
                line(
                    "sessions",
                    format!(
                        "{} opened and abandoned in {secs} (warmup {})",
                        self.sessions.unwrap_or(0),
                        self.warmup.unwrap_or(0)
                    ),
                );
                line(
                    "open rate",
                    opt(self.sessions_per_sec(), |r| format!("{r:.0} sessions/s")),
                );
            }
            _ => {
                let (m, p) = self.cold_start_ms.unzip();
                line(
                    "cold start",
                    format!(
                        "median {} ms, p90 {} ms over {} runs (spawn to initialize response)",
                        opt(m, |v| format!("{v:.2}")),
                        opt(p, |v| format!("{v:.2}")),
                        self.repetitions.unwrap_or(0)
                    ),
                );
            }
        }
        let c = self.counts;
        line(
            "errors",
            format!(
                "{} (json-rpc {}, isError {}, input_required {}, transport {}, mismatch {})",
                c.errors(),
                c.rpc,
                c.tool,
                c.input,
                c.transport,
                c.mismatch
            ),
        );
        if self.mode == "cold-start" {
            line(
                "server",
                format!(
                    "peak rss {} at the initialize answer",
                    opt(self.peak_rss_kib, kib)
                ),
            );
        } else if self.pid.is_some() || self.peak_rss_kib.is_some() {
            let per = match self.mode {
                "sessions" | "churn" => "session",
                "list" => "list",
                _ => "call",
            };
            line(
                "server",
                format!(
                    "pid {}, cpu {} per {per}, peak rss {}",
                    opt(self.pid, |p| p.to_string()),
                    opt(self.cpu_us_per_unit(), us),
                    opt(self.peak_rss_kib, kib)
                ),
            );
        }
        if let Some(c) = self.client_cpu_us_per_call() {
            let per = if self.mode == "list" { "list" } else { "call" };
            line(
                "generator",
                format!("cpu {} per {per} (this process)", us(c)),
            );
        }
        if let Some(r) = &self.rss {
            line(
                "rss",
                format!(
                    "baseline {}, growth {} KiB (highest reading after it), last {}; {} readings",
                    opt(r.baseline_kib(), kib),
                    opt(r.growth_kib(), |g| g.to_string()),
                    opt(r.last_kib(), kib),
                    r.points.len()
                ),
            );
        }
        if self.timed_out {
            line(
                "stopped",
                "at --max-seconds (or interrupted) before the run was complete".into(),
            );
        }
        for n in &self.notes {
            line("note", n.clone());
        }
        out
    }
}

fn opt<T>(v: Option<T>, f: impl FnOnce(T) -> String) -> String {
    v.map_or_else(|| "-".to_owned(), f)
}

fn us(v: f64) -> String {
    if v >= 1000.0 {
        format!("{:.2} ms", v / 1000.0)
    } else {
        format!("{v:.1} µs")
    }
}

fn kib(v: u64) -> String {
    format!("{:.1} MiB", v as f64 / 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank() {
        let mut s: Vec<u32> = (1..=1000).rev().collect();
        let p = Percentiles::of(&mut s).unwrap();
        assert_eq!(
            (p.p50, p.p90, p.p99, p.p999, p.max),
            (500, 900, 990, 999, 1000)
        );
        assert!(Percentiles::of(&mut []).is_none());
        assert_eq!(median_p90(&mut [3.0, 1.0, 2.0]), Some((2.0, 3.0)));
    }

    #[test]
    fn json_fields_are_stable() {
        let r = Report {
            mode: "calls",
            transport: "stdio",
            ..Report::default()
        };
        let v = r.to_json();
        for k in [
            "mode",
            "transport",
            "protocol",
            "calls",
            "in_flight",
            "seconds",
            "calls_per_sec",
            "p50_us",
            "p99_us",
            "p999_us",
            "errors",
            "cpu_us_per_call",
            "peak_rss_kib",
            "sessions",
            "rss_before_kib",
            "rss_after_open_kib",
            "rss_after_delete_kib",
            "rounds",
            "growth_after_first_round_kib",
            "bytes_per_session",
            "sessions_per_sec",
            "cold_start_ms_median",
            "cold_start_ms_p90",
        ] {
            assert!(v.get(k).is_some(), "{k}");
        }
    }

    #[test]
    fn lists_report_their_rate_pages_and_items() {
        let r = Report {
            mode: "list",
            counts: Counts {
                ok: 3,
                mismatch: 1,
                ..Counts::default()
            },
            seconds: Some(2.0),
            pages: Some(40),
            items: Some(4_000),
            ..Report::default()
        };
        let j = r.to_json();
        assert_eq!(j["calls"], 4);
        assert_eq!(j["calls_per_sec"], 2.0);
        assert_eq!(j["errors"], 1);
        assert_eq!(j["errors_mismatch"], 1);
        assert_eq!(j["pages_per_list"], 10.0);
        assert_eq!(j["items_per_list"], 1000.0);
        let text = r.to_text();
        assert!(text.contains("2.0 lists/s"), "{text}");
        assert!(text.contains("10.0 pages and 1000 items each"), "{text}");
    }

    #[test]
    fn growth_compares_the_last_round_with_the_first_after_delete() {
        let mut r = Report {
            mode: "sessions",
            ..Report::default()
        };
        let round = |o, d| Round {
            opened: 1,
            after_open: Some(o),
            after_delete: d,
        };
        r.rounds.push(round(900, Some(500)));
        assert_eq!(
            r.growth_after_first_round_kib(),
            None,
            "one round: no growth"
        );
        r.rounds.push(round(950, Some(520)));
        r.rounds.push(round(940, Some(490)));
        assert_eq!(r.growth_after_first_round_kib(), Some(-10));
        r.judge_growth(Some(0));
        assert!(!r.over_bound, "shrinking is within any bound");
        r.rounds.push(round(1000, None));
        assert_eq!(r.growth_after_first_round_kib(), None, "not measured");
        r.judge_growth(Some(1 << 20));
        assert!(r.over_bound, "a bound that cannot be judged fails");
    }

    #[test]
    fn growth_over_the_bound_is_flagged() {
        let mut r = Report {
            mode: "calls",
            rss: Some(Samples {
                points: vec![(0.0, 1000), (1.0, 1000), (2.0, 1600)],
                baseline: Some(1),
            }),
            ..Report::default()
        };
        r.judge_growth(None);
        assert!(!r.over_bound, "no bound, nothing judged");
        r.judge_growth(Some(600));
        assert!(!r.over_bound);
        r.judge_growth(Some(599));
        assert!(r.over_bound);
        assert_eq!(r.to_json()["rss_growth_kib"], 600);
    }
}
