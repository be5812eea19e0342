//! What the stdio relay (`switchboard record --stdio`) adds per frame, with a tap that does what
//! the CLI's recording does: one JSON line per frame, written to a real file and flushed.
//!
//! | bench | one iteration |
//! |---|---|
//! | `stdio/direct` | one frame line written to a pipe and read back |
//! | `stdio/via_record` | the same through the tapped stdio relay (1 frame tapped) |
//!
//! The overhead per frame is `via_record - direct`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use switchboard_transport::relay_lines;
use switchboard_transport::{FrameTap, TappedFrame};
use switchboard_types::Direction;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// One JSON line per frame, flushed: the work of `switchboard record`'s tap.
struct FileTap(Mutex<std::io::BufWriter<std::fs::File>>);

impl FrameTap for FileTap {
    fn frame(&self, f: TappedFrame<'_>) {
        let line = serde_json::json!({"ts_ms": 0.0, "direction": f.direction, "transport": "stdio", "session": f.session, "frame": f.text});
        let mut w = self.0.lock().unwrap();
        writeln!(w, "{line}").unwrap();
        w.flush().unwrap();
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = std::env::temp_dir().join(format!("sb-relay-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut group = c.benchmark_group("record");
    group
        .measurement_time(Duration::from_secs(4))
        .warm_up_time(Duration::from_secs(1));
    let frame = br#"{"jsonrpc":"2.0","id":1,"method":"x/call","params":{"name":"add","arguments":{"a":1,"b":2}}}
"#;
    // Direct: a frame through one pipe.
    let (mut w, r) = tokio::io::duplex(64 * 1024);
    let mut r = BufReader::new(r);
    let mut line = Vec::new();
    group.bench_function("stdio/direct", |b| {
        b.iter(|| {
            line.clear();
            rt.block_on(async {
                w.write_all(frame).await.unwrap();
                w.flush().await.unwrap();
                r.read_until(b'\n', &mut line).await.unwrap();
            });
        });
    });
    // Through the relay: pipe, relay (tapped), pipe.
    let (mut w, relay_in) = tokio::io::duplex(64 * 1024);
    let (relay_out, r) = tokio::io::duplex(64 * 1024);
    let file = std::fs::File::create(dir.join("stdio.jsonl")).unwrap();
    let tap: Arc<dyn FrameTap> = Arc::new(FileTap(Mutex::new(std::io::BufWriter::new(file))));
    rt.spawn(
        async move { relay_lines(relay_in, relay_out, Direction::ClientToServer, &*tap).await },
    );
    let mut r = BufReader::new(r);
    group.bench_function("stdio/via_record", |b| {
        b.iter(|| {
            line.clear();
            rt.block_on(async {
                w.write_all(frame).await.unwrap();
                w.flush().await.unwrap();
                r.read_until(b'\n', &mut line).await.unwrap();
            });
        });
    });
    group.finish();
    std::fs::remove_dir_all(&dir).ok();
}

criterion_group!(benches, bench);
criterion_main!(benches);
