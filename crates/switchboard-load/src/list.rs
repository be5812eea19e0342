//! The list mode: read a whole list (`tools/list` or `resources/list`), page after page following
//! `nextCursor`, N times, one request in flight. The unit is one whole list: its rate and the
//! latency from the first page's request to the last page's answer; the report also gives the
//! pages and items per list. A list with another number of items than `--expect-items` is a
//! mismatch (an error).

use bytes::Bytes;
use tokio::time::{Instant, timeout_at};

use crate::Target;
use crate::procfs;
use crate::report::{Counts, Percentiles, Report};
use crate::wire::{ListKind, Outcome};

/// A list run, validated.
#[derive(Debug)]
pub(crate) struct ListPlan {
    pub(crate) target: Target,
    pub(crate) kind: ListKind,
    /// Whole lists measured.
    pub(crate) n: u64,
    /// Whole lists read before the measured window.
    pub(crate) warmup: u64,
    /// The items every list must hold, when checked.
    pub(crate) expect_items: Option<u64>,
    pub(crate) pid: Option<u32>,
}

/// One request and its answer, on a connection already set up.
pub(crate) trait Exchange {
    /// Sends `frame` (request `id`) and returns the outcome and the text of its answer.
    async fn exchange(&mut self, id: u64, frame: Vec<u8>) -> anyhow::Result<(Outcome, Bytes)>;
}

/// What one list cost.
struct Listed {
    outcome: Outcome,
    pages: u64,
    items: u64,
}

/// Reads one whole list, page after page; request ids count up from `*id`.
async fn read_list<E: Exchange>(
    ex: &mut E,
    kind: ListKind,
    id: &mut u64,
    expect: Option<u64>,
) -> anyhow::Result<Listed> {
    let mut cursor: Option<String> = None;
    let mut listed = Listed {
        outcome: Outcome::Ok,
        pages: 0,
        items: 0,
    };
    loop {
        *id += 1;
        let (outcome, text) = ex.exchange(*id, kind.frame(*id, cursor.as_deref())).await?;
        listed.pages += 1;
        if outcome != Outcome::Ok {
            listed.outcome = outcome;
            return Ok(listed);
        }
        let Some((items, next)) = kind.page(&text) else {
            listed.outcome = Outcome::Mismatch;
            return Ok(listed);
        };
        listed.items += items as u64;
        match next {
            // A cursor that names the page just read would loop forever.
            Some(c) if cursor.as_deref() != Some(c.as_str()) => cursor = Some(c),
            Some(_) => {
                listed.outcome = Outcome::Mismatch;
                return Ok(listed);
            }
            None => break,
        }
    }
    if expect.is_some_and(|want| want != listed.items) {
        listed.outcome = Outcome::Mismatch;
    }
    Ok(listed)
}

/// Reads `plan.warmup` lists, then measures `plan.n`; fills the counts, timings, pages and
/// items of `report` (the server's CPU and RSS when `pid` is known). Stops at `deadline`.
pub(crate) async fn measure<E: Exchange>(
    ex: &mut E,
    plan: &ListPlan,
    pid: Option<u32>,
    deadline: Instant,
    report: &mut Report,
) {
    let mut id = 0u64;
    let mut counts = Counts::default();
    let mut samples = Vec::with_capacity(plan.n as usize);
    let (mut pages, mut items) = (0u64, 0u64);
    let mut marks = None;
    for i in 0..plan.warmup + plan.n {
        let record = i >= plan.warmup;
        if record && marks.is_none() {
            marks = Some((
                pid.and_then(procfs::cpu_us),
                procfs::cpu_us(std::process::id()),
                Instant::now(),
            ));
        }
        let t = Instant::now();
        let r = timeout_at(
            deadline,
            read_list(ex, plan.kind, &mut id, plan.expect_items),
        )
        .await;
        let us = u32::try_from(t.elapsed().as_micros()).unwrap_or(u32::MAX);
        match r {
            Err(_) => {
                report.timed_out = true;
                break;
            }
            Ok(Err(e)) => {
                counts.transport += u64::from(record);
                report.notes.push(format!("a list failed: {e:#}"));
                break;
            }
            Ok(Ok(l)) => {
                if record {
                    samples.push(us);
                    counts.add(l.outcome);
                    pages += l.pages;
                    items += l.items;
                }
                if l.outcome != Outcome::Ok && report.notes.is_empty() {
                    report.notes.push(format!(
                        "a list ended {:?} after {} page(s) and {} item(s)",
                        l.outcome, l.pages, l.items
                    ));
                }
            }
        }
    }
    if let Some((cpu0, self0, t0)) = marks {
        report.seconds = Some(t0.elapsed().as_secs_f64());
        report.cpu_us = cpu0
            .zip(pid.and_then(procfs::cpu_us))
            .map(|(a, b)| b.saturating_sub(a));
        report.client_cpu_us = self0
            .zip(procfs::cpu_us(std::process::id()))
            .map(|(a, b)| b.saturating_sub(a));
    }
    report.peak_rss_kib = pid.and_then(|p| procfs::status_kib(p, "VmHWM"));
    report.counts = counts;
    report.latency = Percentiles::of(&mut samples);
    report.pages = Some(pages);
    report.items = Some(items);
}
