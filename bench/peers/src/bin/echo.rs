//! `echo`: the raw pipe limit for stdio. Not an MCP server: for every input line that carries an
//! `"id":`, it writes back one fixed response line (a `tools/call` result whose text is "3") with
//! that id copied in; lines without an id (notifications) get nothing. The id is found by a byte
//! search, not by parsing JSON, so this measures the pipe, the line framing and the load tool —
//! what is left of a stdio round trip when the server does no work. (A plain echo would send the
//! request itself back, which no client counts as a response.) The same fixed line also answers
//! `initialize`: the load tool only needs a non-error response with id 0 there.

use std::io::{BufRead as _, BufReader, BufWriter, Write as _};

const PREFIX: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
const SUFFIX: &[u8] = br#","result":{"content":[{"type":"text","text":"3"}]}}"#;

/// The raw id after the first `"id":` of the line (up to `,` or `}`), trimmed.
fn find_id(line: &[u8]) -> Option<&[u8]> {
    let at = memchr::memmem::find(line, br#""id":"#)? + 5;
    let rest = &line[at..];
    let end = memchr::memchr2(b',', b'}', rest)?;
    Some(rest[..end].trim_ascii())
}

fn main() -> std::io::Result<()> {
    let mut input = BufReader::with_capacity(64 << 10, std::io::stdin().lock());
    let mut out = BufWriter::with_capacity(64 << 10, std::io::stdout().lock());
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        if let Some(id) = find_id(&line) {
            out.write_all(PREFIX)?;
            out.write_all(id)?;
            out.write_all(SUFFIX)?;
            out.write_all(b"\n")?;
        }
        if input.buffer().is_empty() {
            out.flush()?;
        }
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_the_id() {
        let l = br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{}}"#;
        assert_eq!(super::find_id(l), Some(&b"42"[..]));
        assert_eq!(super::find_id(br#"{"method":"x"}"#), None);
    }
}
