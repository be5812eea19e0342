//! What a case is: where it starts, what it sends, and what may come back. Cases are plain data
//! made by `generate` from a seed and run by `run`; nothing here does IO.

use std::fmt::Write as _;

/// Where a case starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Start {
    /// A new connection with nothing sent yet (stdio: a new process; HTTP: no session).
    Fresh,
    /// An initialized session, `initialize` having offered `version`. With `exact`, the case
    /// applies only when the server agreed to that version (it is skipped otherwise).
    Ready {
        /// The version offered.
        version: &'static str,
        /// Whether the case depends on the server agreeing to it.
        exact: bool,
    },
}

/// A request id as sent: its JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SentId(pub(crate) String);

impl SentId {
    /// The id of this JSON value.
    pub(crate) fn of(v: &serde_json::Value) -> SentId {
        SentId(v.to_string())
    }
}

/// What may answer one frame.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    /// Nothing: a notification or a response (JR-11).
    Silence,
    /// A result.
    Result,
    /// An error with one of these codes.
    Error(&'static [i64]),
    /// A result, or an error with one of these codes.
    ResultOr(&'static [i64]),
    /// A result or an error with any code: the spec leaves the choice to the server.
    Any,
    /// Anything or nothing (a request cancelled as soon as it was sent).
    Maybe,
    /// Nothing, or an error with one of these codes; never a result.
    NoResult(&'static [i64]),
    /// Invalid params of a method of capability `cap`: -32602 when the server declares `cap`;
    /// -32601 or -32602 when it does not (the capability gate may come first).
    InvalidParams {
        /// The capability key (`tools`, `resources`, ...).
        cap: &'static str,
    },
    /// The same, where a tool may also report the bad arguments as an `isError` result.
    InvalidToolArguments,
    /// An `initialize` offering a version the server cannot speak: a result with another
    /// version (a counter-offer, LC-8), or -32602.
    CounterOffer {
        /// The version offered.
        offered: String,
    },
    /// Two requests with the same id in flight (JR-5): one or two answers, each a result or
    /// -32600.
    Collision,
    /// A batch under a revision without batches: no entry gets a result, and at least one
    /// -32600 comes back (for an entry, for the whole batch, or as HTTP 400).
    BatchRefused(Vec<SentId>),
}

/// What may answer one frame: the frame's id, the answer, and the rule checked.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Expect {
    /// The request id as sent, when the frame carries a readable one.
    pub(crate) id: Option<SentId>,
    /// What may answer it.
    pub(crate) answer: Answer,
    /// Codes that an error without an id (null or absent) may carry in place of the answer: a
    /// receiver that could not read the frame answers that way. Empty: not allowed.
    pub(crate) unidentified: &'static [i64],
    /// The spec rule (SPEC-NOTES tag) the expectation checks.
    pub(crate) rule: &'static str,
}

impl Expect {
    /// A frame answered as `answer`, found by `id`.
    pub(crate) fn id(id: &serde_json::Value, answer: Answer, rule: &'static str) -> Expect {
        Expect {
            id: Some(SentId::of(id)),
            answer,
            unidentified: &[],
            rule,
        }
    }

    /// A frame whose id cannot be read: answered by an error without id, with one of `codes`.
    pub(crate) fn unreadable(codes: &'static [i64], rule: &'static str) -> Expect {
        Expect {
            id: None,
            answer: Answer::Silence,
            unidentified: codes,
            rule,
        }
    }

    /// A notification or a response: nothing answers it.
    pub(crate) fn silence(rule: &'static str) -> Expect {
        Expect {
            id: None,
            answer: Answer::Silence,
            unidentified: &[],
            rule,
        }
    }

    /// The same, allowing an error without id with one of `codes` instead of the answer.
    pub(crate) fn or_unidentified(mut self, codes: &'static [i64]) -> Expect {
        self.unidentified = codes;
        self
    }

    /// Whether this frame must be answered (by its id or, where allowed, without one).
    pub(crate) fn required(&self) -> bool {
        match self.answer {
            Answer::Silence => self.id.is_none() && !self.unidentified.is_empty(),
            Answer::Maybe | Answer::NoResult(_) => false,
            _ => true,
        }
    }
}

/// A header of a hand-written HTTP request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Header {
    /// What a correct client sends (the session's id, the negotiated version, both media types).
    Default,
    /// Not sent.
    Omit,
    /// This value, byte for byte.
    Value(Vec<u8>),
}

/// How the body of a hand-written HTTP request is framed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Framing {
    /// A true `Content-Length`.
    Exact,
    /// This `Content-Length` text, whatever the body's length; the request then closes its
    /// writing side, so that a body shorter than declared ends.
    Declared(String),
    /// `Transfer-Encoding: chunked`, the body in this many chunks with a pause between.
    Chunked {
        /// How many chunks.
        pieces: usize,
        /// Milliseconds between chunks.
        pause_ms: u64,
        /// Whether the chunk sizes are written wrong (not hexadecimal).
        broken: bool,
    },
    /// Both a `Content-Length` and `Transfer-Encoding: chunked` (RFC 9112 §6.3).
    Both,
}

/// What the status of a hand-written HTTP request may be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HttpWant {
    /// One of these statuses.
    Status(&'static [u16]),
    /// Served (2xx, its answers matched against the expectations) or refused (4xx).
    ServedOrRefused,
    /// Refused (4xx), or the connection closed without an answer.
    RefusedOrClosed,
    /// Anything but a server error (501 is allowed for an unknown method) or a hang.
    NotBroken,
    /// Served: 2xx, its answers matched against the expectations.
    Served,
}

/// One hand-written HTTP request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HttpProbe {
    /// The HTTP method.
    pub(crate) method: &'static str,
    /// `Accept`.
    pub(crate) accept: Header,
    /// `Content-Type` (sent only with a body by default).
    pub(crate) content_type: Header,
    /// `MCP-Session-Id`.
    pub(crate) session: Header,
    /// `MCP-Protocol-Version`.
    pub(crate) version: Header,
    /// Further headers.
    pub(crate) extra: Vec<(String, Vec<u8>)>,
    /// The body.
    pub(crate) body: Vec<u8>,
    /// How the body is framed.
    pub(crate) framing: Framing,
    /// The statuses allowed.
    pub(crate) want: HttpWant,
    /// What answers a served request.
    pub(crate) expects: Vec<Expect>,
    /// The rule the status checks.
    pub(crate) rule: &'static str,
}

impl HttpProbe {
    /// A POST of `body` with every header right.
    pub(crate) fn post(body: Vec<u8>, want: HttpWant, rule: &'static str) -> HttpProbe {
        HttpProbe {
            method: "POST",
            accept: Header::Default,
            content_type: Header::Default,
            session: Header::Default,
            version: Header::Default,
            extra: Vec::new(),
            body,
            framing: Framing::Exact,
            want,
            expects: Vec::new(),
            rule,
        }
    }

    /// A request without a body.
    pub(crate) fn bodiless(method: &'static str, want: HttpWant, rule: &'static str) -> HttpProbe {
        HttpProbe::post(Vec::new(), want, rule).with_method(method)
    }

    fn with_method(mut self, method: &'static str) -> HttpProbe {
        self.method = method;
        self
    }

    /// The same, expecting these answers when served.
    pub(crate) fn expecting(mut self, expects: Vec<Expect>) -> HttpProbe {
        self.expects = expects;
        self
    }
}

/// What a case does, in order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    /// Frames to the server. Over stdio the parts are written as they are, with a pause
    /// between; over HTTP their concatenation is one POST body in the session.
    Send {
        /// The bytes, in the writes they go in.
        parts: Vec<Vec<u8>>,
        /// Milliseconds between parts.
        pause_ms: u64,
        /// What may answer the frames.
        expects: Vec<Expect>,
        /// Over HTTP, judge the POST by its status only (its answers are not matched): for a
        /// frame whose HTTP answer the spec leaves open.
        http_lenient: bool,
    },
    /// Wait until every answer due so far has come (or the timeout).
    Await,
    /// A hand-written HTTP request (HTTP targets only).
    Http(HttpProbe),
}

impl Step {
    /// One frame, written whole and followed by a newline over stdio.
    pub(crate) fn frame(text: impl Into<Vec<u8>>, expects: Vec<Expect>) -> Step {
        let mut bytes = text.into();
        bytes.push(b'\n');
        Step::Send {
            parts: vec![bytes],
            pause_ms: 0,
            expects,
            http_lenient: false,
        }
    }

    /// The same, judged only by its HTTP status over HTTP.
    pub(crate) fn lenient_frame(text: impl Into<Vec<u8>>, expects: Vec<Expect>) -> Step {
        match Step::frame(text, expects) {
            Step::Send {
                parts,
                pause_ms,
                expects,
                ..
            } => Step::Send {
                parts,
                pause_ms,
                expects,
                http_lenient: true,
            },
            other => other,
        }
    }
}

/// One generated case.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Case {
    /// The family and variant, e.g. `id/float`.
    pub(crate) family: String,
    /// Where it starts.
    pub(crate) start: Start,
    /// What it does.
    pub(crate) steps: Vec<Step>,
    /// Whether it needs a server that issues session ids (it is skipped on a stateless one).
    pub(crate) needs_session: bool,
}

/// The longest text shown of one frame or request.
const SHOWN: usize = 240;

/// Bytes as text for a person: UTF-8 where they are, `\xNN` where not, control characters
/// escaped, cut at [`SHOWN`] characters with the full length noted.
pub(crate) fn show_bytes(bytes: &[u8]) -> String {
    let mut out = String::new();
    let mut shown = 0;
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if shown >= SHOWN {
                break;
            }
            match c {
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                c if c.is_control() => {
                    let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
                }
                c => out.push(c),
            }
            shown += 1;
        }
        for b in chunk.invalid() {
            if shown >= SHOWN {
                break;
            }
            let _ = write!(out, "\\x{b:02x}");
            shown += 1;
        }
    }
    if shown >= SHOWN {
        let _ = write!(out, "… ({} bytes)", bytes.len());
    }
    out
}

impl Case {
    /// What the case sends, one line per step, for a person (long frames cut).
    pub(crate) fn describe(&self) -> String {
        let mut lines = Vec::new();
        for step in &self.steps {
            match step {
                Step::Send {
                    parts, pause_ms, ..
                } => {
                    let whole: Vec<u8> = parts.concat();
                    let mut text = show_bytes(whole.strip_suffix(b"\n").unwrap_or(&whole));
                    if parts.len() > 1 {
                        let _ = write!(text, " (in {} writes, {pause_ms} ms apart)", parts.len());
                    }
                    lines.push(text);
                }
                Step::Await => {}
                Step::Http(p) => lines.push(describe_probe(p)),
            }
        }
        lines.join("\n")
    }
}

fn describe_probe(p: &HttpProbe) -> String {
    let mut s = p.method.to_owned();
    let header = |s: &mut String, name: &str, h: &Header| match h {
        Header::Default => {}
        Header::Omit => {
            let _ = write!(s, " [no {name}]");
        }
        Header::Value(v) => {
            let _ = write!(s, " {name}: {}", show_bytes(v));
        }
    };
    header(&mut s, "Accept", &p.accept);
    header(&mut s, "Content-Type", &p.content_type);
    header(&mut s, "MCP-Session-Id", &p.session);
    header(&mut s, "MCP-Protocol-Version", &p.version);
    for (name, value) in &p.extra {
        let _ = write!(s, " {name}: {}", show_bytes(value));
    }
    match &p.framing {
        Framing::Exact => {}
        Framing::Declared(n) => {
            let _ = write!(
                s,
                " Content-Length: {n} (body {} bytes, then EOF)",
                p.body.len()
            );
        }
        Framing::Chunked {
            pieces,
            pause_ms,
            broken,
        } => {
            let _ = write!(
                s,
                " chunked in {pieces} pieces {pause_ms} ms apart{}",
                if *broken { " with bad sizes" } else { "" }
            );
        }
        Framing::Both => s.push_str(" Content-Length and Transfer-Encoding: chunked"),
    }
    if !p.body.is_empty() {
        let _ = write!(s, " body: {}", show_bytes(&p.body));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_shown_escaped_and_cut() {
        assert_eq!(show_bytes(b"a\xffb\n"), "a\\xffb\\n");
        assert_eq!(show_bytes("é\u{1}".as_bytes()), "é\\u{1}");
        let long = vec![b'x'; 1000];
        let shown = show_bytes(&long);
        assert!(shown.ends_with("… (1000 bytes)"), "{shown}");
        assert!(shown.len() < 300);
    }

    #[test]
    fn which_expectations_need_an_answer() {
        let id = serde_json::json!(1);
        assert!(Expect::id(&id, Answer::Result, "JR").required());
        assert!(!Expect::id(&id, Answer::Maybe, "JR").required());
        assert!(!Expect::silence("JR-11").required());
        assert!(Expect::unreadable(&[-32700], "JR").required());
    }
}
