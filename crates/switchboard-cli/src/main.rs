//! `switchboard`: the command-line toolkit. Argument parsing and printing; the behaviour lives in
//! the libraries (the roles, the transports and their relays, the inspector, the example
//! servers).

mod call;
mod check;
mod cluster;
mod demo;
mod dev;
mod fuzz;
mod gateway;
mod otel;
mod pack;
mod record;
mod serve;
mod skills;
mod trace;
mod ui;

use clap::{Parser, Subcommand};
use switchboard::client::ClientSession;

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
    Serve(serve::ServeArgs),
    /// Explain an MCP session frame by frame: kind, primitive, phase, capability, links, violations.
    ///
    /// FILE is a recording (JSONL with direction and frame), a transcript (`->` / `<-` before
    /// each frame) or bare JSONL frames; `-` reads standard input. Exit 1 when a violation is found.
    Trace(trace::TraceArgs),
    /// Send one request to a server and print the JSON result (exit 0); a JSON-RPC error goes to
    /// stderr (exit 1); a connection failure exits 2.
    ///
    /// Examples: `switchboard call --stdio "node server.js" tools/call add a=1 b=2`,
    /// `switchboard call --stdio "switchboard serve" resources/read test://static-text`,
    /// `switchboard call --url http://127.0.0.1:8080/mcp tools/list`.
    Call(Box<call::CallArgs>),
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
    Record(record::RecordArgs),
    /// Check any server against the spec (handshake, envelope, errors, gates, pagination,
    /// robustness); one line per check with the tag of the rule it checks. Exit 1 when a check
    /// fails.
    ///
    /// With --url, the Streamable HTTP rules too, as raw HTTP: session ids (HT-18/19/20),
    /// 202 for notifications (HT-7), Accept (HT-5), reply types (HT-9), MCP-Protocol-Version
    /// (HT-23), Origin (HT-3), GET (HT-13), DELETE, malformed and oversized bodies, batches.
    /// Colour only when stdout is a terminal (NO_COLOR turns it off); a progress line on stderr
    /// when that is a terminal.
    Check(check::CheckArgs),
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
    Fuzz(fuzz::FuzzArgs),
    /// Print a completion script for SHELL on stdout, e.g.
    /// `switchboard completions bash > ~/.local/share/bash-completion/completions/switchboard`,
    /// `switchboard completions zsh > ~/.zfunc/_switchboard`,
    /// `switchboard completions fish > ~/.config/fish/completions/switchboard.fish`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Serve many MCP servers as one: the upstreams CONFIG names (stdio commands, restarted when
    /// they exit; Streamable HTTP URLs), each under its prefix (`calc` + tool `add` is
    /// `calc_add`; resource URIs get the name after the scheme: `test://calc/...`), over stdio
    /// (the default) or Streamable HTTP with --http ADDR.
    ///
    /// An upstream that is down is left out of the lists (a log line on stderr) and comes back
    /// with list_changed; a call it cannot answer is an isError result naming it.
    Gateway(gateway::GatewayArgs),
    /// Run two full MCP sessions against the example servers, in memory by default, and print
    /// every frame with what the inspector says of it.
    Demo(demo::DemoArgs),
    /// The skills extension (SEP-2640): `skills pull (--stdio CMD | --url URL) NAME DIR` writes
    /// the skill NAME, every file verified against its entry (size, digest, frontmatter), to the
    /// new directory DIR, atomically: a refused skill leaves nothing. List skills with
    /// `switchboard call ... skills/list`.
    #[command(subcommand)]
    Skills(skills::SkillsCommand),
    /// Package a binary server for hosts: an MCPB bundle (`-o FILE.mcpb`: manifest.json with
    /// the tools and prompts read from the running server, and the binary), or with
    /// --server-json the MCP Registry's server.json.
    ///
    /// Example: `switchboard pack --stdio "target/release/notes /tmp/notes" --user-arg
    /// notes_dir:directory -o notes.mcpb`.
    Pack(pack::PackArgs),
    /// Develop a server: run CMD behind one front (stdio, or --http) that a host connects to
    /// once; on each change of the watched sources, build, and only if the build succeeds
    /// restart the server in place and send the host list_changed for what changed. Frames on
    /// stderr as `trace` annotates them; --ui ADDR serves them live in the browser.
    ///
    /// Example: `switchboard dev -- cargo run -p my-server`.
    Dev(dev::DevArgs),
}

/// The server `call`, `check`, `fuzz` and `record` talk to: exactly one of a command to spawn
/// or an endpoint (`record` words the help its own way).
#[derive(Debug, Clone, clap::Args)]
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

impl ServerArgs {
    /// The server to check or fuzz (clap lets through exactly one of --stdio and --url).
    fn target(&self) -> switchboard::check::Target {
        match (&self.url, &self.stdio) {
            (Some(url), _) => switchboard::check::Target::Http(url.clone()),
            (None, cmd) => switchboard::check::Target::Stdio(cmd.clone().unwrap_or_default()),
        }
    }

    /// Connects `client` to the server: over Streamable HTTP with `http`, or to the command
    /// spawned through `sh`.
    ///
    /// # Errors
    /// The URL is refused, the command cannot start, or the handshake fails.
    async fn connect(
        &self,
        client: switchboard::client::Client,
        http: switchboard::http_client::HttpClientConfig,
    ) -> anyhow::Result<ClientSession> {
        use anyhow::Context as _;
        let (name, session) = match (&self.url, self.stdio.as_deref()) {
            (Some(url), _) => {
                let t = switchboard::http_client::HttpClientTransport::connect(url, http)
                    .with_context(|| format!("cannot reach `{url}`"))?;
                (url.as_str(), client.connect(t).await)
            }
            (None, cmd) => {
                let cmd = cmd.unwrap_or_default();
                let command = switchboard::transport::ChildCommand::new("sh")
                    .args(["-c", &format!("exec {cmd}")]);
                let child = switchboard::transport::ChildTransport::spawn(command)
                    .with_context(|| format!("cannot start `{cmd}`"))?;
                (cmd, client.connect(child).await)
            }
        };
        session.with_context(|| format!("cannot initialize `{name}`"))
    }
}

/// A client named `name`, at this binary's version.
fn client(name: &str) -> switchboard::client::ClientBuilder {
    let info = switchboard::types::lifecycle::Implementation::new(name, env!("CARGO_PKG_VERSION"));
    switchboard::client::Client::builder(info)
}

/// `--era` of `call` and `skills pull`.
#[derive(Debug, Clone, clap::Args)]
struct EraArg {
    /// Which era to speak: `legacy` (the 2025 handshake; the default, as a probe changes
    /// what an inspected server sees and some old stdio servers stall on one), `auto`
    /// (probe with server/discover, fall back to initialize), or `2026-07-28` (modern only).
    #[arg(long, value_name = "ERA", default_value = "legacy")]
    era: switchboard::client::EraMode,
}

/// `--timeout` of `check` and `fuzz`.
#[derive(Debug, Clone, clap::Args)]
struct TimeoutArg {
    /// Seconds to wait for each answer.
    #[arg(long, default_value_t = 5)]
    timeout: u64,
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

/// Prints a command's report on stdout and exits with its code.
fn exit_with((text, code): (String, i32)) -> anyhow::Result<()> {
    write_stdout(&text)?;
    std::process::exit(code)
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
        && target != switchboard::transport::LOG_TARGET
}

/// Logs go to stderr (stdout carries only frames when serving stdio). RUST_LOG sets the filter;
/// without it, the CLI's own messages show from INFO (`listening on ...`), everything else from
/// WARN; with `children` (`dev`: the server's panics and logs are the developer's) a child
/// server's stderr lines from INFO too.
fn init_logging(children: bool) {
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
                    let child = children && m.target() == switchboard::transport::LOG_TARGET;
                    let least = if own_target(m.target()) || child {
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
    init_logging(matches!(cli.command, Command::Dev(_)));
    // A stdio server is one session: a single-threaded runtime avoids cross-thread wake-ups on
    // every frame (a gateway's too: its upstreams' frames are relayed on the same thread).
    // Everything else (HTTP with many sessions, the tools) uses the thread pool.
    let threads = match &cli.command {
        Command::Serve(args) => args
            .threads
            .unwrap_or(if args.http.is_none() { 1 } else { 0 }),
        Command::Gateway(args) if args.http.is_none() => 1,
        _ => 0,
    };
    let mut rt = match threads {
        1 => tokio::runtime::Builder::new_current_thread(),
        _ => tokio::runtime::Builder::new_multi_thread(),
    };
    if threads > 1 {
        rt.worker_threads(threads);
    }
    let rt = rt.enable_all().build()?;
    match cli.command {
        Command::Serve(args) => rt.block_on(serve::run(args))?,
        Command::Call(args) => {
            let outcome = rt.block_on(call::run(&args));
            eprint!("{}", outcome.stderr);
            write_stdout(&outcome.stdout)?;
            std::process::exit(outcome.code);
        }
        Command::Record(args) => std::process::exit(rt.block_on(record::run(args))?),
        Command::Check(args) => exit_with(rt.block_on(check::run(&args))?)?,
        Command::Fuzz(args) => exit_with(rt.block_on(fuzz::run(&args))?)?,
        Command::Trace(args) => std::process::exit(trace::run(&args)?),
        Command::Skills(command) => std::process::exit(rt.block_on(skills::run(&command))),
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
        Command::Demo(args) => write_stdout(&rt.block_on(demo::run(&args))?)?,
        Command::Gateway(args) => rt.block_on(gateway::run(args))?,
        Command::Pack(args) => eprint!("{}", rt.block_on(pack::run(args))?),
        Command::Dev(args) => rt.block_on(dev::run(args))?,
    }
    Ok(())
}
