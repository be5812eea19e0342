//! # switchboard-check
//!
//! Conformance and robustness checks against any MCP server, each named by its SPEC-NOTES tag:
//! the library behind `switchboard check`, for a server's own test suite. It speaks to the
//! server as a careless or hostile client would: raw JSON-RPC frames (malformed ones included)
//! over stdio, Streamable HTTP or a transport in the same process, and hand-written HTTP requests
//! for the Streamable HTTP rules. It judges only what comes back, so it checks servers written
//! with any SDK. [`fuzz`] goes further: seeded hostile sessions, every answer judged, and after
//! each case the proof that the server still lives (`switchboard fuzz`).
//!
//! ```no_run
//! use switchboard_check::Target;
//!
//! # async fn doc() -> Result<(), switchboard_check::CheckError> {
//! let report = switchboard_check::run(&Target::stdio("node dist/server.js")).await?;
//! assert_eq!(report.failed(), 0, "{report}");
//! # Ok(())
//! # }
//! ```
//!
//! A server built in the test itself is reached with [`Target::in_process`] (the README's
//! "Check your own server" section has the whole test); [`Checker`] sets the timeout and
//! watches results as they come.
//!
//! # Targets
//! | [`Target`] | each connection | checks |
//! |---|---|---|
//! | [`Target::stdio`] | the command, spawned with `sh -c`, over its stdin/stdout | the shared checks |
//! | [`Target::http`] | a Streamable HTTP session | the shared checks, then the Streamable HTTP rules |
//! | [`Target::in_process`] | a transport the closure makes (the in-memory pair to a server in the test) | the shared checks |
//!
//! # The checks
//! * **Shared** (every target; fresh connections where the handshake is the subject): `ping`
//!   before and after `initialize` (`UT-1`), a request before `initialize` (`LC-1`), version
//!   negotiation (`LC-7`, `LC-8`), the `initialize` result (`LC-3`), ids of each type kept
//!   exactly (`JR-6`), unknown methods, malformed JSON, null ids, a wrong `jsonrpc` (`JR`,
//!   `JR-4`, `JR-1`), notifications never answered (`JR-11`), methods of undeclared capabilities
//!   (`CP-1`), tool schemas and unknown tools (`SF-6`, `SF`), bad params (`JR`), forged cursors
//!   (`UT-12`), a 20 MiB frame (`ST`); for a server that declares the skills extension
//!   (SEP-2640), its rules (`SK-1` to `SK-8`, docs/SKILLS.md): the declaration, `skills/list`
//!   and `skills/get`, valid entries, every digest, size and frontmatter true,
//!   `resources/directory/read`.
//! * **Streamable HTTP** ([`Target::http`] only; one hand-written request per probe): session ids
//!   (`HT-18`, `HT-19`, `HT-20`), reply types (`HT-9`), 202 for notifications and responses
//!   (`HT-7`), `Accept` (`HT-5`), `MCP-Protocol-Version` (`HT-23`), `Origin` (`HT-3`), the GET
//!   stream (`HT-13`), malformed bodies and batches (`HT-6`, `JR-12`), an oversized body, DELETE.
//!
//! * **Revision 2026-07-28** (every target, when `server/discover` answers it; on one
//!   connection whose first request is `server/discover`): the discover result and its cache
//!   hints (`D26-24`, `D26-90`), the `_meta` envelope refused when missing (`D26-9`), an
//!   unsupported revision (`D26-27`), `clientInfo` optional (`D26-11`), unknown methods
//!   (`D26-60`), null ids (`D26-2`), capabilities matching what is served (`D26-26`), tool
//!   schemas, unknown tools and a stable tool list (`D26-97`, `SF`, `D26-96`), unknown resources
//!   (`D26-98`), `resultType` on every result (`D26-19`), and nothing unasked (`D26-1`,
//!   `D26-84`). A server that refuses `initialize` but speaks 2026-07-28 gets these checks only
//!   (the 2025 ones are one skip); a 2025-only server gets a skip for them.
//!
//! * **MCP Apps** (every target, on a connection declaring `io.modelcontextprotocol/ui`; tagged
//!   as in docs/APPS.md): the extension declared (`AP-9`), tools' links well-formed (`AP-5`),
//!   every linked or listed view readable (`AP-6`) with a `ui://` URI (`AP-1`), the app MIME
//!   type (`AP-2`), an HTML document (`AP-3`), a well-formed `_meta.ui` whose CSP sources are
//!   origins (`AP-4`), a declared CSP (`AP-10`, a skip when absent). A server without apps gets
//!   one skip.
//!
//! Where the spec leaves the server a choice (JSON or SSE answers, a GET stream or 405, sessions
//! or none), either passes and the detail names the one taken; a rule that cannot apply (the
//! session rules on a stateless server) is a skip, never a pass.
//!
//! # Layout
//! | module | role |
//! |---|---|
//! | [`target`] | [`Target`]: how each connection is made; [`Connector`] for in-process servers |
//! | [`report`] | [`CheckResult`], [`Verdict`], [`Report`]: text and JSON-lines forms |
//! | [`fuzz`] | the protocol-state fuzzer behind `switchboard fuzz`: seeded hostile sessions |
//! | `conn` | a raw connection: frames as text, no engine between |
//! | `checks` | the shared checks, and which eras run |
//! | `modern` | the checks of revision 2026-07-28 |
//! | `http_rules` | the Streamable HTTP rules as raw HTTP |
//! | `apps` | the MCP Apps checks |
//! | `security` | the security probes of [`Checker::security`]: one per advisory class and rule |

mod apps;
mod checks;
mod conn;
pub mod fuzz;
mod http_rules;
mod modern;
pub mod report;
mod security;
mod skills;
pub mod target;
mod verdict;

use std::time::Duration;

pub use report::{CheckResult, Report, Verdict};
pub use target::{Connector, Target};

/// How long each check waits for an answer unless told otherwise (a spawned server's first
/// answer gets ten seconds more, for its start-up).
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// About how many results the shared checks give (the capability gates vary).
const SHARED_ESTIMATE: usize = 21;

/// Why the checks could not run at all (a server that runs but breaks rules gives a [`Report`]
/// with failures instead).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CheckError {
    /// The server command could not be started.
    #[error("cannot start `{command}`: {reason}")]
    Spawn {
        /// The command.
        command: String,
        /// What went wrong.
        reason: String,
    },
    /// The endpoint could not be used (an invalid URL, no HTTP client).
    #[error("cannot reach `{url}`: {reason}")]
    Connect {
        /// The endpoint.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// The in-process connector gave no transport.
    #[error("cannot connect in process: {reason}")]
    InProcess {
        /// The connector's error.
        reason: String,
    },
    /// The server never completed the handshake, so the checks past it cannot run.
    #[error("the server did not complete the handshake")]
    Handshake,
    /// An option of the run is unusable (an issuer key that is no private key in PEM).
    #[error("{reason}")]
    Options {
        /// What is wrong.
        reason: String,
    },
    /// The server did not complete a first handshake, so there is nothing to fuzz.
    #[error("the server did not complete a handshake: {reason}")]
    NoHandshake {
        /// What happened instead.
        reason: String,
    },
}

/// Runs every check against `target` with the defaults (5 s per answer).
///
/// # Errors
/// The server could not be started or reached, or never completed a handshake.
pub async fn run(target: &Target) -> Result<Report, CheckError> {
    Checker::new(target.clone()).run().await
}

/// A run of the checks, configured: the target, the timeout, an observer of each result.
///
/// ```no_run
/// use std::time::Duration;
/// use switchboard_check::{Checker, Target};
///
/// # async fn doc() -> Result<(), switchboard_check::CheckError> {
/// let report = Checker::new(Target::http("http://127.0.0.1:8080/mcp"))
///     .with_timeout(Duration::from_secs(2))
///     .on_result(|r| eprintln!("{r}"))
///     .run()
///     .await?;
/// print!("{}", report.to_json_lines());
/// # Ok(())
/// # }
/// ```
pub struct Checker {
    target: Target,
    timeout: Duration,
    observer: Option<Observer>,
    /// `Some`: only the security probes run, with these options.
    security: Option<SecurityOptions>,
}

/// What [`Checker::security`] runs with.
#[derive(Debug, Default, Clone)]
struct SecurityOptions {
    /// The issuer's private key (PEM), the issuer and the key id.
    issuer_key: Option<(String, String, Option<String>)>,
    input_tool: Option<String>,
}

/// Called with each result as it comes.
type Observer = Box<dyn FnMut(&CheckResult) + Send>;

impl std::fmt::Debug for Checker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checker")
            .field("target", &self.target)
            .field("timeout", &self.timeout)
            .field("observer", &self.observer.is_some())
            .field("security", &self.security.is_some())
            .finish()
    }
}

impl Checker {
    /// The checks against `target`, with 5 s per answer.
    pub fn new(target: Target) -> Checker {
        Checker {
            target,
            timeout: DEFAULT_TIMEOUT,
            observer: None,
            security: None,
        }
    }

    /// Runs the security probes instead of the conformance checks (`switchboard check
    /// --security`): one named probe (`security/dns-rebinding/origin`, …) per advisory class and
    /// per SECURITY-NOTES rule observable on the wire, each with its rule tag; a probe that
    /// cannot be observed on the target is a skip with the reason. They call no tool unless
    /// [`with_input_tool`](Self::with_input_tool) names one. docs/SECURITY-check.md lists them.
    pub fn security(mut self) -> Checker {
        self.security.get_or_insert_with(SecurityOptions::default);
        self
    }

    /// With [`security`](Self::security): mint access tokens signed with `key_pem` (the private
    /// key, PEM, of an issuer the server trusts; EC P-256, RSA or Ed25519) naming `issuer` and
    /// the key id `kid`, for the probes of audience, issuer, expiry and session binding. For
    /// testing one's own deployment.
    pub fn with_issuer_key(mut self, key_pem: &str, issuer: &str, kid: Option<&str>) -> Checker {
        self.security
            .get_or_insert_with(SecurityOptions::default)
            .issuer_key = Some((
            key_pem.to_owned(),
            issuer.to_owned(),
            kid.map(str::to_owned),
        ));
        self
    }

    /// With [`security`](Self::security): the tool of a 2026-07-28 server that answers
    /// `input_required`, for the requestState probes (called with empty arguments).
    pub fn with_input_tool(mut self, name: &str) -> Checker {
        self.security
            .get_or_insert_with(SecurityOptions::default)
            .input_tool = Some(name.to_owned());
        self
    }

    /// How long each check waits for an answer.
    pub fn with_timeout(mut self, timeout: Duration) -> Checker {
        self.timeout = timeout;
        self
    }

    /// Calls `observer` with each result as soon as it is known (for a progress display).
    pub fn on_result(mut self, observer: impl FnMut(&CheckResult) + Send + 'static) -> Checker {
        self.observer = Some(Box::new(observer));
        self
    }

    /// About how many results the run gives (the capability gates vary with the server).
    pub fn estimated_total(&self) -> usize {
        if self.security.is_some() {
            return security::COUNT;
        }
        match self.target {
            Target::Http(_) => SHARED_ESTIMATE + modern::COUNT + apps::COUNT + http_rules::COUNT,
            Target::Stdio(_) | Target::InProcess(_) => {
                SHARED_ESTIMATE + modern::COUNT + apps::COUNT
            }
        }
    }

    /// Runs every check: the shared ones, then, over HTTP, the Streamable HTTP rules.
    ///
    /// # Errors
    /// The server could not be started or reached, or never completed a handshake.
    pub async fn run(self) -> Result<Report, CheckError> {
        let mut results = Results {
            items: Vec::new(),
            observer: self.observer,
        };
        if let Some(opts) = self.security {
            let minter = match opts.issuer_key {
                Some((pem, issuer, kid)) => Some(
                    security::Minter::new(&pem, &issuer, kid.as_deref())
                        .map_err(|reason| CheckError::Options { reason })?,
                ),
                None => None,
            };
            let opts = security::Options {
                minter,
                input_tool: opts.input_tool,
            };
            security::all(&self.target, self.timeout, &opts, &mut results).await?;
            return Ok(Report::from(results.items));
        }
        let legacy = checks::all(&self.target, self.timeout, &mut results).await?;
        if let (Target::Http(url), true) = (&self.target, legacy) {
            http_rules::all(url, self.timeout, &mut results).await;
        }
        Ok(Report::from(results.items))
    }
}

/// The results so far; each is shown to the observer as it is pushed.
pub(crate) struct Results {
    items: Vec<CheckResult>,
    observer: Option<Observer>,
}

impl Results {
    pub(crate) fn push(&mut self, r: CheckResult) {
        if let Some(observe) = &mut self.observer {
            observe(&r);
        }
        self.items.push(r);
    }
}
