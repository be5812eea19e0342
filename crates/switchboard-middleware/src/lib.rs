//! # switchboard-middleware
//!
//! Built-in [`Layer`](switchboard_jsonrpc::Layer)s for both MCP roles, each bounded and each
//! answering with an error the caller can read (never dropping a request):
//!
//! | layer | what it does | over its bound |
//! |---|---|---|
//! | [`Timeout`] | ends a request that runs too long (its handler's future is dropped) | a tool call: an `isError` result; any other request: -32603, `reason: "timeout"` |
//! | [`ConcurrencyLimit`] | requests handled at once, per session, per subject or in all | -32000, `reason: "concurrency_limited"` |
//! | [`RateLimit`] | requests per interval (token bucket), per session, per subject or in all | -32000, `reason: "rate_limited"`, `retryAfterMs` |
//! | [`ResultSizeLimit`] | bytes of one result | a tool call: an `isError` result; any other request: -32603, `reason: "result_too_large"` |
//! | [`Audit`] | one JSON line per request: time, subject, session, method, target, outcome, duration | lines queued past its bound are dropped and counted |
//!
//! Apply any of them to every method or to a [`Scope`](switchboard_jsonrpc::Scope) (one tool,
//! all tools, one method) with `ServerBuilder::layer_for` / `ClientBuilder::layer_for`. Keyed
//! state (per session, per subject) is bounded by count ([`MAX_KEYS`]); idle keys are forgotten
//! first.
//!
//! # Layout
//! | module | role |
//! |---|---|
//! | `answer` | the errors and `isError` results the layers answer with |
//! | `keyed` | [`Per`]: what a limit is kept per; the bounded map of per-key state |
//! | `limit` | [`ConcurrencyLimit`], [`RateLimit`] |
//! | `timeout` | [`Timeout`] |
//! | `size` | [`ResultSizeLimit`] |
//! | `audit` | [`Audit`] and its bounded writer |

mod answer;
mod audit;
mod keyed;
mod limit;
mod size;
mod timeout;

pub use audit::{Audit, AuditStats, MAX_AUDIT_FIELD_CHARS, MAX_AUDIT_QUEUE};
pub use keyed::{MAX_KEYS, Per};
pub use limit::{ConcurrencyLimit, RateLimit};
pub use size::ResultSizeLimit;
pub use timeout::Timeout;
