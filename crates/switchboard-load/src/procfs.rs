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
    fn reads_this_process() {
        let me = std::process::id();
        assert!(status_kib(me, "VmHWM").is_some_and(|k| k > 0));
        assert!(cpu_us(me).is_some());
    }
}
