//! # switchboard-fuzz-targets
//!
//! The entry functions of the coverage-guided fuzz targets. Each takes arbitrary bytes, drives
//! one path of the stack that reads hostile input, and panics only when an invariant breaks (a
//! crash of the code under test, or a property checked here). The same functions run in two
//! places:
//!
//! * the `fuzz/` workspace wraps each in libFuzzer (`fuzz/run.sh`), outside the main build;
//! * `tests/replay.rs` replays every seed of `fuzz/corpus/<target>/` and every crash file of
//!   `fuzz/regressions/<target>/` through them inside `cargo test`.
//!
//! | target | what it reads | what it checks besides "no panic" |
//! |---|---|---|
//! | [`ndjson`] | a stdio byte stream (`codec::ndjson`) | frames equal a plain model of the framing, however the bytes are split; the buffer stays bounded |
//! | [`sse`] | a `text/event-stream` body (`codec::sse`) | events equal a plain model of the WHATWG rules, however the bytes are split; the bound holds; `encode` round-trips |
//! | [`sse_load`] | the same, through `switchboard-load`'s own event scanner | the same events as `codec::sse`, however the bytes are split |
//! | [`frame`] | one frame of JSON text (`Frame::decode`) | only -32700 / -32600 errors; a decoded message re-encodes to itself; typed params and results read back what they wrote |
//! | [`http`] | a sequence of HTTP requests to the Streamable HTTP service (the everything server behind it) | no 500; every JSON body and every SSE event is JSON |
//! | [`inspect`] | a `switchboard trace` input (`parse_input`, `Inspector::observe`) | every frame gets one report; the summary counts them |
//! | [`uri_template`] | a template and a URI (`UriTemplate::parse`, `matches`) | a match names every variable, once, with a value |
//! | [`pagination`] | a hostile cursor (`Paginator::page`) | a cursor is accepted only when it points where an issued one does |
//!
//! Every target is listed in [`TARGETS`], by the name `fuzz/run.sh` and the corpus folders use.

pub mod frame;
pub mod http;
pub mod inspect;
pub mod ndjson;
pub mod pagination;
pub mod sse;
pub mod sse_load;
pub mod uri_template;

mod input;

/// One fuzz target: its name (the folder of its corpus) and its entry function.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    /// The name: `fuzz/corpus/<name>`, `fuzz/regressions/<name>`, the binary `fuzz/run.sh` builds.
    pub name: &'static str,
    /// The entry function: any bytes; panics only on a broken invariant.
    pub run: fn(&[u8]),
}

/// Every target, in the order `fuzz/run.sh` runs them.
pub const TARGETS: &[Target] = &[
    Target {
        name: "ndjson",
        run: ndjson::run,
    },
    Target {
        name: "sse",
        run: sse::run,
    },
    Target {
        name: "sse_load",
        run: sse_load::run,
    },
    Target {
        name: "frame",
        run: frame::run,
    },
    Target {
        name: "http",
        run: http::run,
    },
    Target {
        name: "inspect",
        run: inspect::run,
    },
    Target {
        name: "uri_template",
        run: uri_template::run,
    },
    Target {
        name: "pagination",
        run: pagination::run,
    },
];

/// The target called `name`.
pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}
