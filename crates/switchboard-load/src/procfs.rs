//! What the server process costs, read from `/proc/<pid>` (Linux): CPU time and memory.
//!
//! These read one pid, not its children. A reading that fails (no such process, not Linux) is
//! `None` and the report shows it as missing rather than as zero.

use std::sync::OnceLock;

/// CPU time (user + system) of `pid` so far, in microseconds.
pub(crate) fn cpu_us(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let ticks = parse_stat_ticks(&stat)?;
    Some(ticks.saturating_mul(1_000_000) / clock_ticks_per_sec())
}

/// `utime + stime` from the text of `/proc/<pid>/stat`. The command name (field 2) is in
/// parentheses and may hold spaces or parentheses, so the fields are counted after the last `)`:
/// there, field 3 (state) is the first, and fields 14 and 15 are the 12th and 13th.
fn parse_stat_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime + stime)
}

/// A `Vm*` line of `/proc/<pid>/status` in KiB: `VmHWM` (peak resident set) or `VmRSS` (now).
pub(crate) fn status_kib(pid: u32, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    parse_status_kib(&status, key)
}

fn parse_status_kib(status: &str, key: &str) -> Option<u64> {
    status.lines().find_map(|line| {
        let value = line.strip_prefix(key)?.strip_prefix(':')?;
        value.trim().strip_suffix("kB")?.trim().parse().ok()
    })
}

/// The kernel's clock ticks per second (`getconf CLK_TCK`, asked once; 100 if that fails).
fn clock_ticks_per_sec() -> u64 {
    static TCK: OnceLock<u64> = OnceLock::new();
    *TCK.get_or_init(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.trim().parse().ok())
            .filter(|&t| t > 0)
            .unwrap_or(100)
    })
}

/// The most RSS samples one run keeps (a day at one a second); later ones are not kept.
const MAX_SAMPLES: usize = 100_000;

/// The server's resident set read at intervals by a task of its own, for soak runs: samples of
/// `VmRSS` with their time, and a baseline marked when the measured window starts (after the
/// warm-up), against which growth is judged.
#[derive(Debug)]
pub(crate) struct RssSampler {
    state: std::sync::Arc<std::sync::Mutex<Samples>>,
    task: tokio::task::JoinHandle<()>,
}

/// What a sampler has read.
#[derive(Debug, Default, Clone)]
pub(crate) struct Samples {
    /// `(seconds since the sampler started, VmRSS in KiB)`, in time order.
    pub(crate) points: Vec<(f64, u64)>,
    /// The index in `points` of the baseline, once marked.
    pub(crate) baseline: Option<usize>,
}

impl Samples {
    /// The RSS at the baseline.
    pub(crate) fn baseline_kib(&self) -> Option<u64> {
        self.points.get(self.baseline?).map(|p| p.1)
    }

    /// The highest RSS read after the baseline, minus the baseline (negative when it shrank).
    pub(crate) fn growth_kib(&self) -> Option<i64> {
        let b = self.baseline?;
        let base = self.points.get(b)?.1;
        let max = self.points[b..].iter().map(|p| p.1).max()?;
        Some(max as i64 - base as i64)
    }

    /// The last RSS read.
    pub(crate) fn last_kib(&self) -> Option<u64> {
        self.points.last().map(|p| p.1)
    }
}

impl RssSampler {
    /// Starts reading `VmRSS` of `pid` every `every` (at once, then at each tick).
    pub(crate) fn start(pid: u32, every: std::time::Duration) -> Self {
        let state = std::sync::Arc::new(std::sync::Mutex::new(Samples::default()));
        let begun = tokio::time::Instant::now();
        let st = state.clone();
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(kib) = status_kib(pid, "VmRSS") else {
                    return;
                };
                if let Ok(mut s) = st.lock()
                    && s.points.len() < MAX_SAMPLES
                {
                    s.points.push((begun.elapsed().as_secs_f64(), kib));
                }
            }
        });
        Self { state, task }
    }

    /// Reads the RSS now and makes it the baseline (the measured window starts).
    pub(crate) fn mark_baseline(&self, pid: u32) {
        let kib = status_kib(pid, "VmRSS");
        if let (Some(kib), Ok(mut s)) = (kib, self.state.lock()) {
            let t = s.points.last().map_or(0.0, |p| p.0);
            s.points.push((t, kib));
            s.baseline = Some(s.points.len() - 1);
        }
    }

    /// Reads the RSS a last time and stops.
    pub(crate) fn finish(self, pid: u32) -> Samples {
        self.task.abort();
        let mut s = self.state.lock().map(|s| s.clone()).unwrap_or_default();
        if let Some(kib) = status_kib(pid, "VmRSS") {
            let t = s.points.last().map_or(0.0, |p| p.0);
            s.points.push((t, kib));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_after_the_name() {
        let stat = "4242 (my (odd) srv) S 1 4242 4242 0 -1 4194304 100 0 0 0 17 5 0 0 20 0 1 0";
        assert_eq!(parse_stat_ticks(stat), Some(22));
        assert_eq!(parse_stat_ticks("garbage"), None);
    }

    #[test]
    fn status_lines_in_kib() {
        let status = "Name:\tx\nVmHWM:\t   12345 kB\nVmRSS:\t    999 kB\n";
        assert_eq!(parse_status_kib(status, "VmHWM"), Some(12345));
        assert_eq!(parse_status_kib(status, "VmRSS"), Some(999));
        assert_eq!(parse_status_kib(status, "VmSwap"), None);
    }

    #[test]
    fn growth_is_the_highest_reading_after_the_baseline() {
        let mut s = Samples {
            points: vec![(0.0, 900), (1.0, 1000), (2.0, 1100), (3.0, 1050)],
            baseline: None,
        };
        assert_eq!(s.growth_kib(), None, "no baseline, no growth");
        s.baseline = Some(1);
        assert_eq!(s.baseline_kib(), Some(1000));
        assert_eq!(s.growth_kib(), Some(100));
        assert_eq!(s.last_kib(), Some(1050));
        s.baseline = Some(2);
        assert_eq!(s.growth_kib(), Some(0));
    }

    #[test]
    fn reads_this_process() {
        let me = std::process::id();
        assert!(status_kib(me, "VmHWM").is_some_and(|k| k > 0));
        assert!(cpu_us(me).is_some());
    }
}
