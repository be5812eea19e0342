//! `serde-add`: the upper limit for stdio. A hand-written MCP server with no SDK and no async
//! runtime: newline-delimited JSON read from stdin with blocking reads, each frame handled by
//! `bench_peers::handle` (serde_json, borrowed raw values), answers written to a buffered stdout
//! that is flushed whenever no further input is already buffered (so K requests in flight are
//! answered with few writes).

use std::io::{BufRead as _, BufReader, BufWriter, Write as _};

fn main() -> std::io::Result<()> {
    let stdin = std::io::stdin().lock();
    let mut input = BufReader::with_capacity(64 << 10, stdin);
    let mut out = BufWriter::with_capacity(64 << 10, std::io::stdout().lock());
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        let frame = line.strip_suffix(b"\n").unwrap_or(&line);
        let frame = frame.strip_suffix(b"\r").unwrap_or(frame);
        if frame.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if let (_, Some(answer)) = bench_peers::handle(frame) {
            out.write_all(answer.as_bytes())?;
            out.write_all(b"\n")?;
        }
        if input.buffer().is_empty() {
            out.flush()?;
        }
    }
    out.flush()
}
