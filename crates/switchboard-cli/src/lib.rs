//! # switchboard-cli
//!
//! The library behind the `switchboard` binary, so that tests run exactly what the CLI runs.
//!
//! | module | role |
//! |---|---|
//! | [`call`] | `switchboard call`: one request to any server, the result as JSON |
//! | [`check`] | `switchboard check`: the checks of `switchboard-check`, printed (progress, colour) |
//! | [`demo`] | the embedded default server and the worked session `switchboard demo` prints |
//! | [`demo_more`] | part two of the demo: the rest of the protocol against the everything server |
//! | [`demo_wire`] | where the demo's servers run: in memory, or a child process over stdio or HTTP |
//! | [`everything`] | the everything server (EVERYTHING-SERVER.md) |
//! | [`examples`] | the servers `switchboard serve --example` runs |
//! | [`record`] | `switchboard record`: a transparent recording proxy |
//! | [`trace`] | `switchboard trace`: the inspector over a file |

pub mod call;
pub mod check;
pub mod demo;
pub mod demo_more;
pub mod demo_wire;
pub mod everything;
pub mod examples;
pub mod record;
pub mod trace;
