//! The readable table of `switchboard trace`.

use std::fmt::Write;

use crate::annotate::FrameReport;
use crate::summary::Summary;

/// One line per frame: index, arrow, kind, id, method, primitive / phase, links, violations.
pub fn table(reports: &[FrameReport]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>4}  {:<3} {:<12} {:<8} {:<34} {:<12} {:<14} {:<8} violations",
        "#", "dir", "kind", "id", "method", "primitive", "phase", "refers"
    );
    for r in reports {
        let arrow = match r.direction {
            crate::Direction::ClientToServer => "->",
            crate::Direction::ServerToClient => "<-",
        };
        let id =
            r.id.as_ref()
                .map(|v| v.to_string())
                .unwrap_or_else(|| "-".into());
        let refers = r
            .refers_to
            .map(|i| format!("#{i}"))
            .unwrap_or_else(|| "-".into());
        let violations = r
            .violations
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ");
        let phase = format!("{:?}", r.phase).to_lowercase();
        let _ = writeln!(
            out,
            "{:>4}  {:<3} {:<12} {:<8} {:<34} {:<12} {:<14} {:<8} {}",
            r.index,
            arrow,
            r.kind.as_str(),
            id,
            r.method.as_deref().unwrap_or("-"),
            r.primitive.unwrap_or("-"),
            phase,
            refers,
            if violations.is_empty() {
                "ok".into()
            } else {
                violations
            },
        );
    }
    out
}

/// The summary block.
pub fn summary(s: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "frames: {}   violations: {}   lifecycle share: {:.2}",
        s.frames, s.violations, s.lifecycle_share
    );
    let kinds: Vec<String> = s.kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
    let _ = writeln!(out, "kinds: {}", kinds.join(", "));
    let prims: Vec<String> = s
        .primitives
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    let _ = writeln!(out, "primitives: {}", prims.join(", "));
    if !s.unanswered.is_empty() {
        let u: Vec<String> = s.unanswered.iter().map(|i| format!("#{i}")).collect();
        let _ = writeln!(out, "requests without responses: {}", u.join(", "));
    }
    for (m, l) in &s.latency {
        let _ = writeln!(
            out,
            "latency {m}: n={} p50={:.2}ms max={:.2}ms",
            l.count, l.p50_ms, l.max_ms
        );
    }
    out
}
