//! [`Summary`]: what a whole session looked like.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::annotate::{Inspector, Phase};

/// Latency of one method, in milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Latency {
    /// Answered requests measured.
    pub count: usize,
    /// Median.
    pub p50_ms: f64,
    /// Slowest.
    pub max_ms: f64,
}

/// Counts and measures over a session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// Frames seen.
    pub frames: usize,
    /// Frames per kind.
    pub kinds: BTreeMap<&'static str, usize>,
    /// Frames per primitive.
    pub primitives: BTreeMap<&'static str, usize>,
    /// Indices of requests that got no answer.
    pub unanswered: Vec<usize>,
    /// Latency per method (when the input has timestamps).
    pub latency: BTreeMap<String, Latency>,
    /// Violations found, in all.
    pub violations: usize,
    /// The share of frames in the initialization and shutdown phases.
    pub lifecycle_share: f64,
}

impl Inspector {
    /// The summary of everything observed so far.
    pub fn summary(&self) -> Summary {
        let mut kinds = BTreeMap::new();
        let mut primitives = BTreeMap::new();
        let mut lifecycle = 0;
        let mut violations = 0;
        for r in self.reports() {
            *kinds.entry(r.kind.as_str()).or_insert(0) += 1;
            if let Some(p) = r.primitive {
                *primitives.entry(p).or_insert(0) += 1;
            }
            if r.phase != Phase::Operation {
                lifecycle += 1;
            }
            violations += r.violations.len();
        }
        let latency = self
            .latencies
            .iter()
            .map(|(m, v)| {
                let mut v = v.clone();
                v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
                let p50 = v.get(v.len() / 2).copied().unwrap_or(0.0);
                let max = v.last().copied().unwrap_or(0.0);
                (
                    m.clone(),
                    Latency {
                        count: v.len(),
                        p50_ms: p50,
                        max_ms: max,
                    },
                )
            })
            .collect();
        let frames = self.reports().len();
        Summary {
            frames,
            kinds,
            primitives,
            unanswered: self.unanswered(),
            latency,
            violations,
            lifecycle_share: if frames == 0 {
                0.0
            } else {
                lifecycle as f64 / frames as f64
            },
        }
    }
}
