//! `switchboard`: the command-line toolkit. Argument parsing and printing; the behaviour lives in
//! the libraries (the roles, the transports and their relays, the inspector, the example
//! servers).

mod call;
mod check;
mod demo;
mod fuzz;
mod oauth;
mod record;
mod serve;
mod trace;
mod ui;

use clap::{Parser, Subcommand};

/// The process's allocator: jemalloc with a background thread, which hands the pages a burst
/// (of sessions, of large frames) freed back to the operating system within a second or two,
/// where the C library's allocator keeps them for the life of the process. The libraries stay
/// allocator-neutral; this is the binary's choice (feature `jemalloc`, on by default).
#[cfg(feature = "jemalloc")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Switchboard: an MCP stack and toolkit.
#[derive(Debug, Parser)]
#[command(
    name = "switchboard",
    version,
    about,
    after_help = "Exit codes: 0 success; 1 a finding (a JSON-RPC error from call, a failed check, a \
fuzz problem, a trace violation); 2 a usage, I/O or connection error (the message says what to \
try next).\nColours only on a terminal, and never with NO_COLOR set. RUST_LOG=debug shows what \
the libraries log."
)]
struct Cli {
    /// No progress lines and none of the CLI's own INFO messages (warnings and errors stay).
    #[arg(long, short, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve an example server: over stdio (the default; frames on stdout, logs on stderr), or
    /// over Streamable HTTP with --http.
    Serve {
        /// Serve over this process's stdin and stdout (the default).
        #[arg(long)]
        stdio: bool,
        /// Serve Streamable HTTP on ADDR instead (endpoint /mcp; 127.0.0.1:8080 when no ADDR is
        /// given). Host and Origin must name loopback (or ADDR's own IP); port 0 picks a port.
        #[arg(
            long,
            value_name = "ADDR",
            num_args = 0..=1,
            default_missing_value = "127.0.0.1:8080",
            conflicts_with = "stdio"
        )]
        http: Option<std::net::SocketAddr>,
        /// With --http: answer each POSTed request with one application/json body instead of
        /// an SSE stream.
        #[arg(long, requires = "http")]
        json_response: bool,
        /// With --http: no sessions. Every POST is served on its own (no Mcp-Session-Id; GET and
        /// DELETE get 405); the client is anonymous, so the server sends it no request.
        #[arg(long, requires = "http")]
        stateless: bool,
        /// With --http: end a session after this many seconds without a request or an open
        /// stream (default 1800).
        #[arg(long, value_name = "SECS", requires = "http", value_parser = parse_seconds)]
        idle_timeout: Option<std::time::Duration>,
        /// With --http: the most sessions open at once; past it, initialize gets 503 (default
        /// 10000).
        #[arg(long, value_name = "N", requires = "http", value_parser = clap::value_parser!(u32).range(1..))]
        max_sessions: Option<u32>,
        /// With --http: act as an OAuth 2.1 resource server for tokens of this issuer (an
        /// authorization server publishing RFC 8414 or OpenID metadata with a jwks_uri; https,
        /// or http on loopback). Every request then needs a bearer token whose audience is this
        /// server; the example's scopes apply (everything: mcp:basic, and mcp:write for
        /// test_scoped_write). Metadata at /.well-known/oauth-protected-resource/mcp.
        #[arg(long, value_name = "ISSUER_URL", requires = "http")]
        auth_issuer: Option<String>,
        /// With --auth-issuer: the audience tokens must name, this server's canonical URL
        /// (default: http://ADDR/mcp with the address served).
        #[arg(long, value_name = "URL", requires = "auth_issuer")]
        auth_audience: Option<String>,
        /// With --http: keep sessions and SSE event history in this Redis
        /// (redis://[:PASSWORD@]HOST:PORT[/DB]), shared with every other node given the same
        /// store: behind a load balancer, a session's requests reach the node serving it, and
        /// another node takes it over if that one dies.
        #[arg(
            long,
            value_name = "REDIS_URL",
            requires = "http",
            conflicts_with = "stateless"
        )]
        store: Option<String>,
        /// With --store: the URL the other nodes reach this node's endpoint at (default:
        /// http://ADDR/mcp with the address served; give it when binding 0.0.0.0).
        #[arg(long, value_name = "URL", requires = "store")]
        advertise: Option<String>,
        /// With --store: this node's id among the nodes (default: random).
        #[arg(long, value_name = "ID", requires = "store")]
        node_id: Option<String>,
        /// Which example server to run.
        #[arg(long, value_enum, default_value = "everything")]
        example: switchboard_example_servers::Example,
        /// With --example bench: register this many further tools (`tool_0` …), each adding
        /// two numbers as `add` does.
        #[arg(long, value_name = "N", default_value_t = 0)]
        tools: usize,
        /// With --example bench: register this many resources (`bench://resource/0` …), each
        /// a short text.
        #[arg(long, value_name = "N", default_value_t = 0)]
        resources: usize,
        /// With --example bench: items per page of tools/list and resources/list (default 100).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        page_size: Option<u32>,
        /// Runtime worker threads (1: a single-threaded runtime). Default: 1 for stdio (one
        /// session), one per core for --http.
        #[arg(long, value_name = "N")]
        threads: Option<usize>,
        /// The largest frame accepted, in bytes.
        #[arg(long, default_value_t = switchboard::jsonrpc::config::DEFAULT_MAX_FRAME_BYTES)]
        max_frame_bytes: usize,
    },
    /// Explain an MCP session frame by frame: kind, primitive, phase, capability, links, violations.
    ///
    /// FILE is a recording (JSONL with direction and frame), a transcript (`->` / `<-` before
    /// each frame) or bare JSONL frames; `-` reads standard input. Exit 1 when a violation is found.
    Trace {
        /// The session to explain.
        file: String,
        /// One JSON object per frame, then a summary line.
        #[arg(long)]
        json: bool,
    },
    /// Send one request to a server and print the JSON result (exit 0); a JSON-RPC error goes to
    /// stderr (exit 1); a connection failure exits 2.
    ///
    /// Examples: `switchboard call --stdio "node server.js" tools/call add a=1 b=2`,
    /// `switchboard call --stdio "switchboard serve" resources/read test://static-text`,
    /// `switchboard call --url http://127.0.0.1:8080/mcp tools/list`.
    Call {
        #[command(flatten)]
        server: ServerArgs,
        /// The method, e.g. tools/call, tools/list, resources/read, prompts/get.
        method: String,
        /// The tool or prompt name, or the resource URI.
        target: Option<String>,
        /// Arguments as key=value (values parse as JSON when they can).
        pairs: Vec<String>,
        /// Raw params (a JSON object), merged over the rest.
        #[arg(long)]
        params: Option<String>,
        /// Answer sampling requests with this result (JSON); declined otherwise.
        #[arg(long)]
        sampling_response: Option<String>,
        /// Answer elicitation requests with this result (JSON); declined otherwise.
        #[arg(long)]
        elicitation_response: Option<String>,
        /// Offer these roots (a JSON array of {uri, name?}); no roots capability otherwise.
        #[arg(long)]
        roots: Option<String>,
        /// With tools/call: run the call as a task. 2025-11-25: the status is shown on stderr as
        /// it changes, then the result is printed as a plain call's; Ctrl-C cancels the task.
        /// 2026-07-28: the tasks extension is declared and the server decides; a task is
        /// followed to its end and its result printed.
        #[arg(long)]
        task: bool,
        /// With --task: the retention to ask for, in milliseconds.
        #[arg(long, value_name = "MS", requires = "task")]
        ttl: Option<u64>,
        /// Which era to speak: `legacy` (the 2025 handshake; the default, as a probe changes
        /// what an inspected server sees and some old stdio servers stall on one), `auto`
        /// (probe with server/discover, fall back to initialize), or `2026-07-28` (modern only).
        #[arg(long, value_name = "ERA", default_value = "legacy", value_parser = parse_era)]
        era: switchboard::client::EraMode,
        #[command(flatten)]
        oauth: Box<OAuthFlags>,
    },
    /// A transparent recording proxy between any client and any server: every frame relayed
    /// unchanged and recorded as a JSONL line (ts_ms, direction, transport, session, frame).
    ///
    /// `--stdio CMD`: be the stdio server to whoever launched this, relaying to CMD.
    ///
    /// `--listen ADDR --url URL`: a Streamable HTTP reverse proxy (endpoint /mcp) to URL.
    ///
    /// `--listen ADDR --stdio CMD`: expose the stdio server CMD over Streamable HTTP (/mcp).
    ///
    /// `--url URL`: expose the remote HTTP server URL to a stdio host.
    Record {
        /// The recording (JSONL: ts_ms, direction, transport, session, frame).
        #[arg(short, long)]
        output: String,
        /// The server command to spawn and relay to (one per HTTP session with --listen).
        #[arg(
            long,
            value_name = "CMD ARGS",
            required_unless_present = "url",
            conflicts_with = "url"
        )]
        stdio: Option<String>,
        /// The upstream MCP endpoint (Streamable HTTP, or legacy HTTP+SSE without --listen).
        #[arg(long, value_name = "URL")]
        url: Option<String>,
        /// Serve HTTP clients on ADDR (IP:PORT, or just PORT for 127.0.0.1; 127.0.0.1:8080 when
        /// no ADDR is given), endpoint /mcp. Binds exactly the address given.
        #[arg(
            long,
            value_name = "ADDR",
            num_args = 0..=1,
            default_missing_value = "127.0.0.1:8080",
            value_parser = record::parse_listen
        )]
        listen: Option<std::net::SocketAddr>,
    },
    /// Check any server against the spec (handshake, envelope, errors, gates, pagination,
    /// robustness); one line per check with the tag of the rule it checks. Exit 1 when a check
    /// fails.
    ///
    /// With --url, the Streamable HTTP rules too, as raw HTTP: session ids (HT-18/19/20),
    /// 202 for notifications (HT-7), Accept (HT-5), reply types (HT-9), MCP-Protocol-Version
    /// (HT-23), Origin (HT-3), GET (HT-13), DELETE, malformed and oversized bodies, batches.
    /// Colour only when stdout is a terminal (NO_COLOR turns it off); a progress line on stderr
    /// when that is a terminal.
    Check {
        #[command(flatten)]
        server: ServerArgs,
        /// Results as JSON lines ({tag, name, outcome, detail}), then {passed, failed, skipped}.
        #[arg(long)]
        json: bool,
        /// Seconds to wait for each answer.
        #[arg(long, default_value_t = 5)]
        timeout: u64,
    },
    /// Fuzz any server with reproducible hostile sessions: the lifecycle out of order, ids of
    /// every kind, cancellations racing answers, malformed, non-UTF-8, split, oversized and
    /// deeply nested frames, batches under each revision, wrong params for every known method;
    /// with --url also lying headers and bodies, bogus session ids, hostile Last-Event-ID and
    /// MCP-Protocol-Version.
    ///
    /// Each case's answers are checked (the right error code, the HTTP status), nothing may hang
    /// past the timeout, and the server must still answer ping and still run. Each problem is
    /// printed with what was sent and the --seed that replays it. The last line is
    /// `N cases, M problems`; exit 1 when there is a problem.
    Fuzz {
        #[command(flatten)]
        server: ServerArgs,
        /// How many cases.
        #[arg(long, default_value_t = switchboard_check::fuzz::DEFAULT_CASES)]
        cases: u64,
        /// The seed: the same seed gives the same cases (a random one when not given; printed).
        #[arg(long)]
        seed: Option<u64>,
        /// One JSON object per case ({case, seed, family, outcome, input, problems}), then
        /// {cases, problems, skipped, seed}.
        #[arg(long)]
        json: bool,
        /// Seconds to wait for each answer.
        #[arg(long, default_value_t = 5)]
        timeout: u64,
    },
    /// Print a completion script for SHELL on stdout, e.g.
    /// `switchboard completions bash > ~/.local/share/bash-completion/completions/switchboard`,
    /// `switchboard completions zsh > ~/.zfunc/_switchboard`,
    /// `switchboard completions fish > ~/.config/fish/completions/switchboard.fish`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Run two full MCP sessions against the example servers, in memory by default, and print
    /// every frame with what the inspector says of it.
    Demo {
        /// Print only the raw frames, one JSON object per line, with no annotations.
        #[arg(long)]
        raw: bool,
        /// Where the servers run: in memory, or in a child process of this binary over stdio or
        /// Streamable HTTP (127.0.0.1).
        #[arg(long, value_enum, default_value = "memory")]
        transport: demo::Wire,
    },
}

/// The server `call`, `check` and `fuzz` talk to: exactly one of a command to spawn or an endpoint.
#[derive(Debug, clap::Args)]
struct ServerArgs {
    /// Spawn this server command and talk to it over stdio.
    #[arg(
        long,
        value_name = "CMD ARGS",
        required_unless_present = "url",
        conflicts_with = "url"
    )]
    stdio: Option<String>,
    /// Talk to the server at this MCP endpoint over Streamable HTTP (`call` also falls back to
    /// the legacy HTTP+SSE transport).
    #[arg(long, value_name = "URL")]
    url: Option<String>,
}

/// The OAuth flags of `call`.
#[derive(Debug, clap::Args)]
struct OAuthFlags {
    /// Authorize with OAuth 2.1 when the server asks (HTTP only): discovery from its 401,
    /// PKCE, the system browser for consent and a redirect listener on 127.0.0.1. Tokens are
    /// kept (mode 0600) in $XDG_STATE_HOME/switchboard/oauth-tokens.json and refreshed.
    #[arg(long, conflicts_with = "oauth_headless", requires = "url")]
    oauth: bool,
    /// Like --oauth, without a browser: the authorization URL is fetched and its redirects
    /// followed with a cookie jar (for authorization servers that approve without a person).
    #[arg(long, requires = "url")]
    oauth_headless: bool,
    /// Like --oauth, for a machine acting for itself: tokens come from the client-credentials
    /// grant, with no user and no browser. Needs --client-id and its --client-secret or
    /// --private-key.
    #[arg(
        long,
        requires = "url",
        requires = "client_id",
        conflicts_with_all = ["oauth", "oauth_headless", "client_metadata_url"]
    )]
    oauth_client_credentials: bool,
    /// A client id registered with the authorization server beforehand (else the client
    /// uses --client-metadata-url, or registers itself dynamically, RFC 7591, where the server
    /// allows it).
    #[arg(long, value_name = "ID")]
    client_id: Option<String>,
    /// The secret of --client-id (a confidential client).
    #[arg(long, value_name = "SECRET", requires = "client_id")]
    client_secret: Option<String>,
    /// Authenticate --client-id at the token endpoint with a JWT it signs with this PEM private
    /// key (PKCS#8, or SEC1 for EC and PKCS#1 for RSA keys) instead of a secret:
    /// private_key_jwt, RFC 7523. The authorization server must know the public key.
    #[arg(
        long,
        value_name = "FILE",
        requires = "client_id",
        conflicts_with = "client_secret"
    )]
    private_key: Option<std::path::PathBuf>,
    /// The JWS algorithm of --private-key: ES256 (the default), ES384, RS256, RS384, RS512,
    /// PS256, PS384, PS512 or EdDSA.
    #[arg(long, value_name = "ALG", requires = "private_key")]
    private_key_alg: Option<String>,
    /// The URL of this client's metadata document (https, with a path), used as its client id
    /// where the authorization server accepts client ID metadata documents, instead of
    /// registering dynamically.
    #[arg(long, value_name = "URL")]
    client_metadata_url: Option<String>,
    /// The scopes to ask for first (space-separated), instead of the server's.
    #[arg(long, value_name = "SCOPES")]
    scope: Option<String>,
    /// Allow OAuth metadata, endpoints and redirects on loopback hosts, over http too (for
    /// development: by default only public https URLs are fetched).
    #[arg(long)]
    oauth_allow_loopback: bool,
    /// Where to keep the tokens (instead of $XDG_STATE_HOME/switchboard/oauth-tokens.json).
    #[arg(long, value_name = "PATH")]
    oauth_token_file: Option<std::path::PathBuf>,
}

/// Writes to stdout; a closed pipe (`| head`) ends the program quietly instead of panicking.
fn write_stdout(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        other => Ok(other?),
    }
}

fn main() {
    // Exit codes: 0 success, 1 a failure found (trace violations, check failures), 2 usage,
    // I/O or connection errors.
    if let Err(e) = run() {
        eprint!("{}", ui::with_hint(format!("switchboard: {e:#}")));
        std::process::exit(2);
    }
}

/// Whether `target` is one of this binary's own log targets (`switchboard`, `switchboard::record`
/// ...): not a library's, and not a child server's stderr, which the child-process transport
/// logs under its own target.
fn own_target(target: &str) -> bool {
    (target == "switchboard" || target.starts_with("switchboard::"))
        && target != switchboard::transport::child::LOG_TARGET
}

/// Logs go to stderr (stdout carries only frames when serving stdio). RUST_LOG sets the filter;
/// without it, the CLI's own messages show from INFO (`listening on ...`), everything else from
/// WARN.
fn init_logging() {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(ui::colour_on_stderr());
    let own_least = if ui::quiet() {
        tracing::Level::WARN
    } else {
        tracing::Level::INFO
    };
    let registry = tracing_subscriber::registry();
    match tracing_subscriber::EnvFilter::try_from_default_env() {
        Ok(filter) => registry.with(fmt.with_filter(filter)).init(),
        Err(_) => registry
            .with(
                fmt.with_filter(tracing_subscriber::filter::filter_fn(move |m| {
                    let least = if own_target(m.target()) {
                        own_least
                    } else if m.target().starts_with("switchboard_http_client") {
                        // The commands report a failed connection themselves, with advice.
                        tracing::Level::ERROR
                    } else {
                        tracing::Level::WARN
                    };
                    *m.level() <= least
                })),
            )
            .init(),
    }
}

fn run() -> anyhow::Result<()> {
    let cli = Cli::parse();
    ui::set_quiet(cli.quiet);
    init_logging();
    // A stdio server is one session: a single-threaded runtime avoids cross-thread wake-ups on
    // every frame. Everything else (HTTP with many sessions, the tools) uses the thread pool.
    let threads = match &cli.command {
        Command::Serve {
            threads: Some(n), ..
        } => *n,
        Command::Serve { http: None, .. } => 1,
        _ => 0,
    };
    let rt = match threads {
        1 => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?,
        0 => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?,
        n => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(n)
            .enable_all()
            .build()?,
    };
    match cli.command {
        Command::Serve {
            stdio: _,
            example,
            max_frame_bytes,
            http,
            json_response,
            stateless,
            idle_timeout,
            max_sessions,
            auth_issuer,
            auth_audience,
            store,
            advertise,
            node_id,
            tools,
            resources,
            page_size,
            threads: _,
        } => {
            rt.block_on(serve::run(serve::ServeArgs {
                auth_issuer,
                auth_audience,
                store,
                advertise,
                node_id,
                example,
                http,
                json_response,
                stateless,
                idle_timeout,
                max_sessions: max_sessions.map(|n| n as usize),
                max_frame_bytes,
                lists: switchboard_example_servers::bench::BenchLists {
                    tools,
                    resources,
                    page_size: page_size.map(|n| n as usize),
                },
            }))?;
        }
        Command::Call {
            server: ServerArgs { stdio, url },
            method,
            target,
            pairs,
            params,
            sampling_response,
            elicitation_response,
            roots,
            task,
            ttl,
            era,
            oauth,
        } => {
            let OAuthFlags {
                oauth,
                oauth_headless,
                oauth_client_credentials,
                client_id,
                client_secret,
                private_key,
                private_key_alg,
                client_metadata_url,
                scope,
                oauth_allow_loopback,
                oauth_token_file,
            } = *oauth;
            let args = call::CallArgs {
                stdio,
                url,
                method,
                target,
                pairs,
                params,
                sampling_response,
                elicitation_response,
                roots,
                task: task.then_some(call::TaskArgs { ttl }),
                era,
                oauth: oauth::OAuthArgs {
                    browser: oauth,
                    headless: oauth_headless,
                    client_credentials: oauth_client_credentials,
                    client_id,
                    client_secret,
                    private_key,
                    private_key_alg,
                    client_metadata_url,
                    scope,
                    allow_loopback: oauth_allow_loopback,
                    token_file: oauth_token_file,
                },
            };
            let outcome = rt.block_on(call::run(&args));
            eprint!("{}", outcome.stderr);
            write_stdout(&outcome.stdout)?;
            std::process::exit(outcome.code);
        }
        Command::Record {
            output,
            stdio,
            url,
            listen,
        } => {
            let args = record::RecordArgs {
                output,
                stdio,
                url,
                listen,
            };
            let code = rt.block_on(record::run(args))?;
            std::process::exit(code);
        }
        Command::Check {
            server: ServerArgs { stdio, url },
            json,
            timeout,
        } => {
            let target = match (stdio, url) {
                (_, Some(url)) => switchboard_check::Target::Http(url),
                (Some(cmd), None) => switchboard_check::Target::Stdio(cmd),
                (None, None) => anyhow::bail!(
                    "give the server: --stdio \"CMD ARGS\" to spawn it, or --url http://HOST:PORT/mcp"
                ),
            };
            let results =
                rt.block_on(check::run(target, std::time::Duration::from_secs(timeout)))?;
            let (text, code) = check::report(&results, json);
            write_stdout(&text)?;
            std::process::exit(code);
        }
        Command::Fuzz {
            server: ServerArgs { stdio, url },
            cases,
            seed,
            json,
            timeout,
        } => {
            let target = match (stdio, url) {
                (_, Some(url)) => switchboard_check::Target::Http(url),
                (Some(cmd), None) => switchboard_check::Target::Stdio(cmd),
                (None, None) => anyhow::bail!(
                    "give the server: --stdio \"CMD ARGS\" to spawn it, or --url http://HOST:PORT/mcp"
                ),
            };
            let args = fuzz::FuzzArgs {
                target,
                cases,
                seed,
                json,
                timeout,
            };
            let report = rt.block_on(fuzz::run(args))?;
            let (text, code) = fuzz::summary(&report, json);
            write_stdout(&text)?;
            std::process::exit(code);
        }
        Command::Trace { file, json } => {
            let code = trace::run(&file, json)?;
            std::process::exit(code);
        }
        Command::Completions { shell } => {
            let mut text = Vec::new();
            clap_complete::generate(
                shell,
                &mut <Cli as clap::CommandFactory>::command(),
                "switchboard",
                &mut text,
            );
            write_stdout(&String::from_utf8_lossy(&text))?;
        }
        Command::Demo { raw, transport } => {
            let text = rt.block_on(demo::run(transport, raw))?;
            write_stdout(&text)?;
        }
    }
    Ok(())
}

/// A positive number of seconds (fractions allowed), as a duration.
fn parse_seconds(text: &str) -> Result<std::time::Duration, String> {
    let secs: f64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if !(secs > 0.0 && secs <= 1e9) {
        return Err(format!("{text} is not a positive number of seconds"));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

/// `--era`: `legacy`, `auto`, or a modern revision to pin.
fn parse_era(s: &str) -> Result<switchboard::client::EraMode, String> {
    use switchboard::client::EraMode;
    use switchboard::types::ProtocolVersion;
    match s {
        "legacy" => Ok(EraMode::Legacy),
        "auto" => Ok(EraMode::Auto),
        other => match ProtocolVersion::parse(other) {
            Some(v) if v.is_modern() => Ok(EraMode::Pin(v)),
            _ => Err(format!(
                "{other:?} is not an era: use legacy, auto or 2026-07-28"
            )),
        },
    }
}
