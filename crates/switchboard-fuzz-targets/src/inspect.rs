//! The inspector's input, as `switchboard trace FILE` reads it: `parse_input` (recordings,
//! arrow transcripts, bare frames), then `Inspector::observe` on every frame, the summary, the
//! JSON lines and the table. Input that `parse_input` refuses is still observed line by line,
//! as an application's frame hook would hand arbitrary frame text to the inspector.
//!
//! Checked: one report per observed frame, numbered in order; the summary counts every frame
//! and every violation; the reports and the summary serialize and render.

use switchboard_inspect::{Direction, Inspector, parse_input, render};

/// The entry function.
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let frames: Vec<(Direction, String, Option<f64>)> = match parse_input(&text) {
        Ok(frames) => frames
            .into_iter()
            .map(|f| (f.direction, f.text, f.at_ms))
            .collect(),
        Err(e) => {
            assert!(e.line >= 1, "an input error names line {}", e.line);
            text.lines()
                .enumerate()
                .map(|(i, line)| {
                    let d = if i % 2 == 0 {
                        Direction::ClientToServer
                    } else {
                        Direction::ServerToClient
                    };
                    (d, line.to_owned(), None)
                })
                .collect()
        }
    };
    let mut inspector = Inspector::new();
    for (i, (direction, text, at_ms)) in frames.iter().enumerate() {
        let report = inspector.observe(*direction, text, *at_ms);
        assert_eq!(report.index, i, "report numbering");
    }
    inspector.shutdown();
    let summary = inspector.summary();
    let reports = inspector.reports();
    assert_eq!(reports.len(), frames.len(), "one report per frame");
    assert_eq!(
        summary.frames,
        frames.len(),
        "the summary counts every frame"
    );
    let violations: usize = reports.iter().map(|r| r.violations.len()).sum();
    assert_eq!(
        summary.violations, violations,
        "the summary counts every violation"
    );
    for r in reports {
        serde_json::to_string(r).expect("a report serializes");
    }
    serde_json::to_string(&serde_json::json!({ "summary": summary })).expect("summary serializes");
    render::table(reports);
    render::summary(&summary);
    inspector.unanswered();
}
