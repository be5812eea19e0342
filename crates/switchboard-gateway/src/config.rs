//! The gateway's configuration: the upstreams, each with its name (the prefix), its kind (a
//! stdio command or a Streamable HTTP URL), its era, and the bounds ([`Limits`]). Read from
//! TOML by [`GatewayConfig::from_toml`]; a mistake is a [`ConfigError`] naming the line and
//! the key.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde::Deserialize;
use switchboard_client::{Client, ClientError, ClientSession, EraMode, ParseEraModeError};
use toml::Spanned;

use crate::policy::{MAX_POLICY_RULES, Policy};

/// Default bound on the number of upstreams of one gateway.
pub(crate) const DEFAULT_MAX_UPSTREAMS: usize = 64;
/// Default bound on the items of one kind (tools, prompts, resources, templates) taken from one
/// upstream.
pub(crate) const DEFAULT_MAX_ITEMS: usize = 1000;

/// Default bound on the upstream sessions of their own the gateway's clients hold, per upstream.
pub(crate) const DEFAULT_MAX_AFFINITY_SESSIONS: usize = 64;

/// Connects a client to an upstream of the library user's own making (an in-process server, a
/// transport the configuration file cannot name). Called again on each restart.
pub type Connector =
    Arc<dyn Fn(Client) -> BoxFuture<'static, Result<ClientSession, ClientError>> + Send + Sync>;

/// Where an HTTP upstream's bearer token is read, at each connection (so a rotated file is
/// read again on reconnecting). The token is sent to that upstream only and never logged.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenSource {
    /// An environment variable.
    Env(String),
    /// A file (its first line, trimmed).
    File(PathBuf),
    /// An OAuth 2.1 access token the gateway gets for itself with the client-credentials grant
    /// (the upstream's authorization server is found from its protected-resource metadata; the
    /// token is fetched again when the upstream refuses it). Needs the crate's `oauth` feature.
    ClientCredentials(ClientCredentials),
}

/// The gateway's own OAuth client registration at an upstream's authorization server, for the
/// client-credentials grant. The secret is read at each connection and sent only to that
/// authorization server; the token only to that upstream.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientCredentials {
    /// The client id registered for the gateway.
    pub client_id: String,
    /// Where the client secret is read (an environment variable or a file).
    pub secret: Box<TokenSource>,
    /// The scopes asked for (space-separated), if any.
    pub scope: Option<String>,
}

impl ClientCredentials {
    /// Client `client_id` with its secret read from `secret`.
    pub fn new(client_id: impl Into<String>, secret: TokenSource) -> Self {
        ClientCredentials {
            client_id: client_id.into(),
            secret: Box::new(secret),
            scope: None,
        }
    }
}

/// How an upstream is reached.
#[derive(Clone)]
#[non_exhaustive]
pub enum UpstreamKind {
    /// A command run as a child process (through `sh -c`), spoken to over its stdin and stdout;
    /// restarted when it exits.
    Stdio(String),
    /// A Streamable HTTP endpoint (falling back to HTTP+SSE), with an optional bearer token.
    Http {
        /// The MCP endpoint.
        url: String,
        /// The bearer token's source, if any.
        token: Option<TokenSource>,
    },
    /// The library user's connector.
    Custom(Connector),
}

impl std::fmt::Debug for UpstreamKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UpstreamKind::Stdio(cmd) => f.debug_tuple("Stdio").field(cmd).finish(),
            UpstreamKind::Http { url, token } => f
                .debug_struct("Http")
                .field("url", url)
                .field("token", token)
                .finish(),
            UpstreamKind::Custom(_) => f.write_str("Custom"),
        }
    }
}

/// One upstream server.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct UpstreamConfig {
    /// The upstream's name: the prefix of its tools and prompts (with the separator) and of its
    /// resource URIs; `""` mounts it without a prefix.
    pub name: String,
    /// How it is reached.
    pub kind: UpstreamKind,
    /// Which era the gateway's client speaks to it.
    pub era: EraMode,
    /// Whether a gateway client that can be asked for sampling, elicitation or roots (or asked
    /// for log lines) gets upstream sessions of its own (default `true`; the TOML key
    /// `client_sessions = "own"`). With `false` (`"shared"`) every client's calls share the
    /// gateway's session: the upstream's run-time state (tools it adds, subscriptions) is one
    /// for all, but it cannot ask any client anything (its requests are refused, never
    /// misrouted). A stdio upstream's own sessions are processes of their own.
    pub own_sessions: bool,
}

impl UpstreamConfig {
    /// An upstream named `name`, reached as `kind`, in the era the client settles (`auto`).
    pub fn new(name: impl Into<String>, kind: UpstreamKind) -> Self {
        UpstreamConfig {
            name: name.into(),
            kind,
            era: EraMode::Auto,
            own_sessions: true,
        }
    }

    /// The era the gateway's client speaks to this upstream.
    pub fn with_era(mut self, era: EraMode) -> Self {
        self.era = era;
        self
    }

    /// Whether clients that can be asked for input get sessions of their own (see
    /// [`UpstreamConfig::own_sessions`]).
    pub fn with_own_sessions(mut self, own: bool) -> Self {
        self.own_sessions = own;
        self
    }
}

/// The gateway's bounds; each default is on without configuration.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Limits {
    /// Upstreams of one gateway (default 64); more is a configuration error.
    pub max_upstreams: usize,
    /// Items of one kind (tools, prompts, resources, templates) taken from one upstream
    /// (default 1,000); those past it are left out, with a warning.
    pub max_items: usize,
    /// A forwarded call, get or read (default 60 s); past it the call is an `isError` result
    /// (a JSON-RPC error for a get or read) naming the upstream, and the upstream is told
    /// `notifications/cancelled`.
    pub call_timeout: Duration,
    /// Connecting to an upstream and listing what it serves (default 30 s); past it the attempt
    /// fails and is retried after the backoff.
    pub connect_timeout: Duration,
    /// The first restart delay (default 100 ms); it doubles with each failed attempt.
    pub backoff_initial: Duration,
    /// The longest restart delay (default 30 s).
    pub backoff_max: Duration,
    /// A connection that lived this long resets the backoff to its first delay (default 60 s).
    pub backoff_reset_after: Duration,
    /// Upstream sessions of their own for the gateway's clients that can be asked for
    /// sampling, elicitation or roots, or asked for log lines, per upstream (default 64);
    /// past it a client's calls share the gateway's session, where the upstream cannot ask it.
    /// Each such session keeps at most 256 of the upstream's log lines waiting for its client
    /// (the oldest dropped past it).
    pub max_affinity_sessions: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_upstreams: DEFAULT_MAX_UPSTREAMS,
            max_items: DEFAULT_MAX_ITEMS,
            call_timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(30),
            backoff_initial: Duration::from_millis(100),
            backoff_max: Duration::from_secs(30),
            backoff_reset_after: Duration::from_secs(60),
            max_affinity_sessions: DEFAULT_MAX_AFFINITY_SESSIONS,
        }
    }
}

impl Limits {
    /// The delay before restart attempt `attempt` (0 for the first restart): the initial delay
    /// doubled per attempt, never past `backoff_max`.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.min(31));
        self.backoff_initial
            .saturating_mul(factor)
            .min(self.backoff_max)
    }
}

/// What a gateway serves.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct GatewayConfig {
    /// The upstreams, in the order their items are listed.
    pub upstreams: Vec<UpstreamConfig>,
    /// Between an upstream's name and an item's name (default `_`: `calc` + `add` is
    /// `calc_add`, FastMCP's convention).
    pub separator: String,
    /// The bounds.
    pub limits: Limits,
    /// Who may use which upstreams and tools (default: everyone, everything); at most 1,000
    /// rules.
    pub policy: Policy,
    /// Where one JSON line per client request is appended (the middleware's audit log);
    /// `None`: no audit log.
    pub audit_log: Option<PathBuf>,
    /// Items per page of the gateway's list methods (default: the server's, 100).
    pub page_size: Option<usize>,
    /// The key every node of one gateway deployment shares (derived from the deployment
    /// secret): pagination cursors are signed under it, so that a next page may reach any node
    /// (`ServerBuilder::shared_key`); `None`: a random key per process.
    pub shared_key: Option<[u8; 32]>,
    /// Serve a `search_tools` tool: a query returns the matching tools' names and schemas (at
    /// most 50 per answer), for clients that cannot hold hundreds of tools.
    pub search_tools: bool,
    /// Sees every frame of every client session of the gateway's server, both ways (a live
    /// view of the traffic: `switchboard dev`); `None`: no hook.
    pub frame_hook: Option<switchboard_jsonrpc::FrameHook>,
    /// Answer `initialize` and `server/discover` with the one upstream's `serverInfo` and
    /// `instructions` (those of the session it is connected to when the client arrives)
    /// instead of the gateway's: a gateway standing in for one server (`switchboard dev`).
    /// With no upstream connected, or more than one, the gateway's own. Default `false`.
    pub pass_server_info: bool,
}

impl Default for GatewayConfig {
    fn default() -> Self {
        GatewayConfig {
            upstreams: Vec::new(),
            separator: "_".into(),
            limits: Limits::default(),
            policy: Policy::default(),
            audit_log: None,
            page_size: None,
            shared_key: None,
            search_tools: false,
            frame_hook: None,
            pass_server_info: false,
        }
    }
}

/// A configuration the gateway refuses, with where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file is not TOML of the expected shape (the message names the line, column and key).
    #[error("{0}")]
    Syntax(String),
    /// A value the gateway refuses.
    #[error("line {line}: `{key}`: {message}")]
    Invalid {
        /// The 1-based line of the value.
        line: usize,
        /// The key.
        key: String,
        /// Why.
        message: String,
    },
    /// A configuration that breaks a rule without a line (built in code).
    #[error("{0}")]
    Rule(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    separator: Option<Spanned<String>>,
    #[serde(default)]
    max_upstreams: Option<Spanned<usize>>,
    #[serde(default)]
    max_items: Option<Spanned<usize>>,
    #[serde(default)]
    call_timeout_secs: Option<Spanned<f64>>,
    #[serde(default)]
    upstream: Vec<Spanned<FileUpstream>>,
    #[serde(default)]
    policy: Option<Spanned<Policy>>,
    #[serde(default)]
    audit_log: Option<String>,
    #[serde(default)]
    search_tools: Option<bool>,
    #[serde(default)]
    page_size: Option<Spanned<usize>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileUpstream {
    name: Spanned<String>,
    #[serde(default)]
    stdio: Option<Spanned<String>>,
    #[serde(default)]
    url: Option<Spanned<String>>,
    #[serde(default)]
    era: Option<Spanned<String>>,
    #[serde(default)]
    bearer_token_env: Option<Spanned<String>>,
    #[serde(default)]
    bearer_token_file: Option<Spanned<String>>,
    #[serde(default)]
    oauth_client_id: Option<Spanned<String>>,
    #[serde(default)]
    oauth_client_secret_env: Option<Spanned<String>>,
    #[serde(default)]
    oauth_client_secret_file: Option<Spanned<String>>,
    #[serde(default)]
    oauth_scope: Option<Spanned<String>>,
    #[serde(default)]
    client_sessions: Option<Spanned<String>>,
}

/// The 1-based line of byte `offset` of `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

impl GatewayConfig {
    /// Reads a configuration file's text:
    ///
    /// ```toml
    /// separator = "_"                      # optional
    /// [[upstream]]
    /// name = "files"                       # the prefix; "" mounts it without one
    /// stdio = "notes /srv/notes"           # a command, or:
    /// # url = "https://host/mcp"
    /// # bearer_token_env = "FILES_TOKEN"   # or bearer_token_file = "/run/secrets/files"
    /// # or OAuth client credentials (the gateway's own registration):
    /// # oauth_client_id = "gateway"
    /// # oauth_client_secret_env = "FILES_SECRET"   # or oauth_client_secret_file = "..."
    /// # oauth_scope = "mcp:tools"                  # optional
    /// era = "auto"                         # or "legacy", or "2026-07-28"
    /// client_sessions = "own"              # or "shared" (see UpstreamConfig::own_sessions)
    /// ```
    ///
    /// and optionally `audit_log = "/var/log/gateway.audit"`, `search_tools = true`,
    /// `page_size = 50`, and a
    /// `[policy]` table with `default` and `[[policy.rule]]` entries (see [`Policy`]).
    ///
    /// # Errors
    /// A [`ConfigError`] naming the line and key of the first mistake.
    pub fn from_toml(text: &str) -> Result<GatewayConfig, ConfigError> {
        let file: File = toml::from_str(text).map_err(|e| ConfigError::Syntax(e.to_string()))?;
        let invalid =
            |span: std::ops::Range<usize>, key: &str, message: String| ConfigError::Invalid {
                line: line_of(text, span.start),
                key: key.to_owned(),
                message,
            };
        let mut config = GatewayConfig::default();
        if let Some(sep) = file.separator {
            config.separator = sep.get_ref().clone();
            check_separator(&config.separator).map_err(|m| invalid(sep.span(), "separator", m))?;
        }
        if let Some(n) = file.max_upstreams {
            if *n.get_ref() == 0 {
                return Err(invalid(
                    n.span(),
                    "max_upstreams",
                    "must be at least 1".into(),
                ));
            }
            config.limits.max_upstreams = *n.get_ref();
        }
        if let Some(n) = file.max_items {
            if *n.get_ref() == 0 {
                return Err(invalid(n.span(), "max_items", "must be at least 1".into()));
            }
            config.limits.max_items = *n.get_ref();
        }
        if let Some(t) = file.call_timeout_secs {
            let secs = *t.get_ref();
            if !(secs > 0.0 && secs <= 86_400.0) {
                return Err(invalid(
                    t.span(),
                    "call_timeout_secs",
                    "must be a number of seconds above 0, at most 86400".into(),
                ));
            }
            config.limits.call_timeout = Duration::from_secs_f64(secs);
        }
        if let Some(policy) = file.policy {
            if policy.get_ref().rules.len() > MAX_POLICY_RULES {
                return Err(invalid(
                    policy.span(),
                    "policy",
                    format!("more than {MAX_POLICY_RULES} rules"),
                ));
            }
            config.policy = policy.into_inner();
        }
        config.audit_log = file.audit_log.map(PathBuf::from);
        config.search_tools = file.search_tools.unwrap_or(false);
        if let Some(n) = file.page_size {
            if *n.get_ref() == 0 {
                return Err(invalid(n.span(), "page_size", "must be at least 1".into()));
            }
            config.page_size = Some(*n.get_ref());
        }
        for entry in file.upstream {
            let span = entry.span();
            let up = entry.into_inner();
            let name = up.name.get_ref().clone();
            check_name(&name).map_err(|m| invalid(up.name.span(), "name", m))?;
            let kind = match (up.stdio, up.url) {
                (Some(cmd), None) => {
                    if cmd.get_ref().trim().is_empty() {
                        return Err(invalid(cmd.span(), "stdio", "the command is empty".into()));
                    }
                    if let Some(t) = up
                        .bearer_token_env
                        .as_ref()
                        .or(up.bearer_token_file.as_ref())
                        .or(up.oauth_client_id.as_ref())
                    {
                        return Err(invalid(
                            t.span(),
                            "bearer_token_*",
                            "a bearer token goes with `url`, not `stdio`".into(),
                        ));
                    }
                    UpstreamKind::Stdio(cmd.into_inner())
                }
                (None, Some(url)) => {
                    let text_url = url.get_ref();
                    if !(text_url.starts_with("http://") || text_url.starts_with("https://")) {
                        return Err(invalid(
                            url.span(),
                            "url",
                            format!("{text_url:?} is not an http:// or https:// URL"),
                        ));
                    }
                    let token = match (up.bearer_token_env, up.bearer_token_file) {
                        (Some(_), Some(f)) => {
                            return Err(invalid(
                                f.span(),
                                "bearer_token_file",
                                "give bearer_token_env or bearer_token_file, not both".into(),
                            ));
                        }
                        (Some(v), None) => Some(TokenSource::Env(v.into_inner())),
                        (None, Some(f)) => Some(TokenSource::File(f.into_inner().into())),
                        (None, None) => None,
                    };
                    let secret = match (up.oauth_client_secret_env, up.oauth_client_secret_file) {
                        (Some(_), Some(f)) => {
                            return Err(invalid(
                                f.span(),
                                "oauth_client_secret_file",
                                "give oauth_client_secret_env or oauth_client_secret_file, not both"
                                    .into(),
                            ));
                        }
                        (Some(v), None) => Some((v.span(), TokenSource::Env(v.into_inner()))),
                        (None, Some(f)) => {
                            Some((f.span(), TokenSource::File(f.into_inner().into())))
                        }
                        (None, None) => None,
                    };
                    let token = match (up.oauth_client_id, secret, token) {
                        (None, None, token) => {
                            if let Some(scope) = up.oauth_scope {
                                return Err(invalid(
                                    scope.span(),
                                    "oauth_scope",
                                    "oauth_scope goes with oauth_client_id".into(),
                                ));
                            }
                            token
                        }
                        (Some(id), Some((_, secret)), None) => {
                            let mut cc = ClientCredentials::new(id.into_inner(), secret);
                            cc.scope = up.oauth_scope.map(Spanned::into_inner);
                            Some(TokenSource::ClientCredentials(cc))
                        }
                        (Some(id), None, _) => {
                            return Err(invalid(
                                id.span(),
                                "oauth_client_id",
                                "oauth_client_id needs oauth_client_secret_env or oauth_client_secret_file"
                                    .into(),
                            ));
                        }
                        (None, Some((span, _)), _) => {
                            return Err(invalid(
                                span,
                                "oauth_client_secret_*",
                                "a client secret goes with oauth_client_id".into(),
                            ));
                        }
                        (Some(id), Some(_), Some(_)) => {
                            return Err(invalid(
                                id.span(),
                                "oauth_client_id",
                                "give a bearer token or OAuth client credentials, not both".into(),
                            ));
                        }
                    };
                    UpstreamKind::Http {
                        url: url.into_inner(),
                        token,
                    }
                }
                (Some(_), Some(url)) => {
                    return Err(invalid(
                        url.span(),
                        "url",
                        format!("upstream {name:?} has both `stdio` and `url`; give one"),
                    ));
                }
                (None, None) => {
                    return Err(invalid(
                        span,
                        "upstream",
                        format!(
                            "upstream {name:?} needs `stdio = \"CMD ARGS\"` or `url = \"http://...\"`"
                        ),
                    ));
                }
            };
            let era = match &up.era {
                None => EraMode::Auto,
                Some(e) => (e.get_ref().parse())
                    .map_err(|m: ParseEraModeError| invalid(e.span(), "era", m.to_string()))?,
            };
            if config.upstreams.iter().any(|u| u.name == name) {
                return Err(invalid(
                    up.name.span(),
                    "name",
                    format!("upstream {name:?} is named twice"),
                ));
            }
            let own_sessions = match &up.client_sessions {
                None => true,
                Some(v) => match v.get_ref().as_str() {
                    "own" => true,
                    "shared" => false,
                    other => {
                        return Err(invalid(
                            v.span(),
                            "client_sessions",
                            format!("{other:?} is not \"own\" or \"shared\""),
                        ));
                    }
                },
            };
            config.upstreams.push(UpstreamConfig {
                name,
                kind,
                era,
                own_sessions,
            });
            if config.upstreams.len() > config.limits.max_upstreams {
                return Err(invalid(
                    span,
                    "upstream",
                    format!(
                        "more than {} upstreams (max_upstreams)",
                        config.limits.max_upstreams
                    ),
                ));
            }
        }
        Ok(config)
    }

    /// Checks what [`GatewayConfig::from_toml`] checks, for a configuration built in code.
    ///
    /// # Errors
    /// The first rule broken.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_separator(&self.separator)
            .map_err(|m| ConfigError::Rule(format!("separator: {m}")))?;
        if self.upstreams.len() > self.limits.max_upstreams {
            return Err(ConfigError::Rule(format!(
                "{} upstreams: at most {} (max_upstreams)",
                self.upstreams.len(),
                self.limits.max_upstreams
            )));
        }
        if self.policy.rules.len() > MAX_POLICY_RULES {
            return Err(ConfigError::Rule(format!(
                "{} policy rules: at most {MAX_POLICY_RULES}",
                self.policy.rules.len()
            )));
        }
        let mut seen = std::collections::HashSet::new();
        for u in &self.upstreams {
            check_name(&u.name)
                .map_err(|m| ConfigError::Rule(format!("name {:?}: {m}", u.name)))?;
            if !seen.insert(u.name.as_str()) {
                return Err(ConfigError::Rule(format!(
                    "upstream {:?} is named twice",
                    u.name
                )));
            }
        }
        Ok(())
    }
}

/// Whether two configurations of an upstream reach it the same way (a connector is the same
/// only as the same `Arc`).
pub(crate) fn same_upstream(a: &UpstreamConfig, b: &UpstreamConfig) -> bool {
    let kind = match (&a.kind, &b.kind) {
        (UpstreamKind::Stdio(x), UpstreamKind::Stdio(y)) => x == y,
        (UpstreamKind::Http { url: u1, token: t1 }, UpstreamKind::Http { url: u2, token: t2 }) => {
            u1 == u2 && t1 == t2
        }
        (UpstreamKind::Custom(x), UpstreamKind::Custom(y)) => Arc::ptr_eq(x, y),
        _ => false,
    };
    kind && a.name == b.name && a.era == b.era && a.own_sessions == b.own_sessions
}

/// An upstream name: at most 64 characters of the tool-name alphabet (`A-Z a-z 0-9 _ - .`);
/// empty mounts without a prefix.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    if name.len() > 64 {
        return Err(format!("{} characters: at most 64", name.len()));
    }
    if let Some(c) = name.chars().find(|c| !crate::names::tool_name_char(*c)) {
        return Err(format!(
            "{c:?} is not allowed: names use A-Z, a-z, 0-9, `_`, `-` and `.` (they prefix tool names)"
        ));
    }
    Ok(())
}

/// A separator: 1 to 8 characters of the tool-name alphabet.
fn check_separator(sep: &str) -> Result<(), String> {
    if sep.is_empty() || sep.len() > 8 {
        return Err("must be 1 to 8 characters".into());
    }
    if let Some(c) = sep.chars().find(|c| !crate::names::tool_name_char(*c)) {
        return Err(format!(
            "{c:?} is not allowed: a separator uses A-Z, a-z, 0-9, `_`, `-` and `.`"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_types::ProtocolVersion;

    fn error(text: &str) -> String {
        GatewayConfig::from_toml(text)
            .expect_err("refused")
            .to_string()
    }

    #[test]
    fn a_config_names_each_upstream_its_kind_and_era() {
        let c = GatewayConfig::from_toml(
            r#"
separator = "."
[[upstream]]
name = "calc"
stdio = "switchboard serve --example add"

[[upstream]]
name = ""
url = "https://host/mcp"
era = "2026-07-28"
bearer_token_env = "HOST_TOKEN"

[[upstream]]
name = "old"
url = "http://127.0.0.1:9/mcp"
era = "legacy"
bearer_token_file = "/run/secrets/old"
"#,
        )
        .expect("a config");
        assert_eq!(c.separator, ".");
        assert_eq!(c.upstreams.len(), 3);
        assert!(
            matches!(&c.upstreams[0].kind, UpstreamKind::Stdio(cmd) if cmd == "switchboard serve --example add")
        );
        assert_eq!(c.upstreams[0].era, EraMode::Auto);
        assert!(
            matches!(&c.upstreams[1].kind, UpstreamKind::Http { url, token: Some(TokenSource::Env(v)) } if url == "https://host/mcp" && v == "HOST_TOKEN")
        );
        assert_eq!(
            c.upstreams[1].era,
            EraMode::Pin(ProtocolVersion::V2026_07_28)
        );
        assert!(matches!(
            &c.upstreams[2].kind,
            UpstreamKind::Http {
                token: Some(TokenSource::File(_)),
                ..
            }
        ));
        assert_eq!(c.upstreams[2].era, EraMode::Legacy);
    }

    #[test]
    fn mistakes_name_their_line_and_key() {
        let e = error("[[upstream]]\nname = \"a\"\nstdio = \"x\"\nera = \"2099\"\n");
        assert!(
            e.starts_with("line 4: `era`:") && e.contains("auto, legacy, or 2026-07-28"),
            "{e}"
        );
        let e = error("[[upstream]]\nname = \"a b\"\nstdio = \"x\"\n");
        assert!(e.starts_with("line 2: `name`:"), "{e}");
        let e = error("[[upstream]]\nname = \"a\"\nstdio = \"x\"\nurl = \"http://h/mcp\"\n");
        assert!(
            e.starts_with("line 4: `url`:") && e.contains("give one"),
            "{e}"
        );
        let e = error("[[upstream]]\nname = \"a\"\n");
        assert!(
            e.starts_with("line 1: `upstream`:") && e.contains("needs `stdio"),
            "{e}"
        );
        let e = error("[[upstream]]\nname = \"a\"\nurl = \"ftp://h\"\n");
        assert!(e.starts_with("line 3: `url`:"), "{e}");
        let e = error("[[upstream]]\nname = \"a\"\nstdio = \"x\"\nbearer_token_env = \"T\"\n");
        assert!(
            e.starts_with("line 4:") && e.contains("goes with `url`"),
            "{e}"
        );
        let e = error(
            "[[upstream]]\nname = \"a\"\nstdio = \"x\"\n[[upstream]]\nname = \"a\"\nstdio = \"y\"\n",
        );
        assert!(
            e.starts_with("line 5: `name`:") && e.contains("named twice"),
            "{e}"
        );
        let e = error("[[upstream]]\nname = \"a\"\nstdio = \"x\"\nclient_sessions = \"mine\"\n");
        assert!(e.starts_with("line 4: `client_sessions`:"), "{e}");
        let shared = GatewayConfig::from_toml(
            "[[upstream]]\nname = \"a\"\nstdio = \"x\"\nclient_sessions = \"shared\"\n",
        )
        .expect("a config");
        assert!(!shared.upstreams[0].own_sessions);
        let e = error("separator = \"/\"\n");
        assert!(e.starts_with("line 1: `separator`:"), "{e}");
        // The TOML parser's own messages name the line and the key too.
        let e = error("[[upstream]]\nname = \"a\"\nstdoi = \"x\"\n");
        assert!(e.contains("line 3") && e.contains("stdoi"), "{e}");
        let e = error("[[upstream]]\nname = \"a\nstdio = \"x\"\n");
        assert!(e.contains("line 2"), "{e}");
    }

    /// Bound: the number of upstreams in a file (`max_upstreams`).
    #[test]
    fn a_file_with_more_upstreams_than_max_upstreams_is_refused_at_the_first_too_many() {
        let mut text = String::from("max_upstreams = 2\n");
        for name in ["a", "b", "c"] {
            text.push_str(&format!("[[upstream]]\nname = \"{name}\"\nstdio = \"x\"\n"));
        }
        let e = error(&text);
        assert!(
            e.starts_with("line 8: `upstream`:") && e.contains("more than 2"),
            "{e}"
        );
        text.truncate(text.rfind("[[upstream]]").expect("an entry"));
        assert_eq!(
            GatewayConfig::from_toml(&text)
                .expect("two fit")
                .upstreams
                .len(),
            2
        );
    }

    #[test]
    fn a_policy_audit_log_and_search_tools_are_read_from_the_file() {
        let c = GatewayConfig::from_toml(
            r#"
audit_log = "/var/log/gateway.audit"
search_tools = true
[[upstream]]
name = "calc"
stdio = "x"
[policy]
default = "deny"
[[policy.rule]]
effect = "allow"
scopes = ["calc:use"]
upstreams = ["calc"]
[[policy.rule]]
effect = "deny"
subjects = ["mallory"]
tools = ["calc_*"]
"#,
        )
        .expect("a config");
        assert_eq!(c.audit_log, Some(PathBuf::from("/var/log/gateway.audit")));
        assert!(c.search_tools);
        assert_eq!(c.policy.default, crate::policy::Effect::Deny);
        assert_eq!(c.policy.rules.len(), 2);
        assert_eq!(c.policy.rules[0].scopes, ["calc:use"]);
        assert_eq!(
            c.policy.rules[1].tools.as_deref(),
            Some(&["calc_*".to_owned()][..])
        );
        let e = error("[policy]\n[[policy.rule]]\neffect = \"maybe\"\n");
        assert!(e.contains("line 3") && e.contains("maybe"), "{e}");
        let e = error("[policy]\n[[policy.rule]]\neffect = \"allow\"\nuser = \"x\"\n");
        assert!(e.contains("line 4") && e.contains("user"), "{e}");
    }

    /// Bound: rules of one policy (`MAX_POLICY_RULES`).
    #[test]
    fn a_policy_with_more_than_max_policy_rules_is_refused() {
        let rules = |n: usize| {
            let mut t = String::from("[policy]\n");
            for _ in 0..n {
                t.push_str("[[policy.rule]]\neffect = \"deny\"\n");
            }
            t
        };
        assert_eq!(
            GatewayConfig::from_toml(&rules(MAX_POLICY_RULES))
                .expect("at the bound")
                .policy
                .rules
                .len(),
            MAX_POLICY_RULES
        );
        let e = error(&rules(MAX_POLICY_RULES + 1));
        assert!(
            e.contains("`policy`") && e.contains("more than 1000 rules"),
            "{e}"
        );
        let mut config = GatewayConfig::default();
        config.policy.rules =
            vec![crate::policy::Rule::new(crate::policy::Effect::Deny); MAX_POLICY_RULES + 1];
        assert!(config.validate().is_err());
    }

    /// Bound: the restart backoff, from the first delay to the cap.
    #[test]
    fn the_backoff_doubles_and_stops_at_its_cap() {
        let l = Limits::default();
        assert_eq!(l.backoff(0), Duration::from_millis(100));
        assert_eq!(l.backoff(1), Duration::from_millis(200));
        assert_eq!(l.backoff(8), Duration::from_millis(25_600));
        assert_eq!(l.backoff(9), Duration::from_secs(30));
        assert_eq!(l.backoff(u32::MAX), Duration::from_secs(30));
    }

    #[test]
    fn an_http_upstream_with_oauth_client_credentials_and_its_mistakes() {
        let c = GatewayConfig::from_toml(
            "[[upstream]]\nname = \"web\"\nurl = \"https://host/mcp\"\noauth_client_id = \"gw\"\n\
             oauth_client_secret_file = \"/run/secrets/gw\"\noauth_scope = \"mcp:tools\"\n",
        )
        .expect("a config");
        let UpstreamKind::Http {
            token: Some(TokenSource::ClientCredentials(cc)),
            ..
        } = &c.upstreams[0].kind
        else {
            panic!("client credentials: {:?}", c.upstreams[0].kind);
        };
        assert_eq!(cc.client_id, "gw");
        assert_eq!(*cc.secret, TokenSource::File("/run/secrets/gw".into()));
        assert_eq!(cc.scope.as_deref(), Some("mcp:tools"));
        let up = "[[upstream]]\nname = \"web\"\nurl = \"https://host/mcp\"\n";
        let e = error(&format!("{up}oauth_client_id = \"gw\"\n"));
        assert!(
            e.contains("oauth_client_secret_env or oauth_client_secret_file"),
            "{e}"
        );
        let e = error(&format!("{up}oauth_client_secret_env = \"S\"\n"));
        assert!(e.contains("goes with oauth_client_id"), "{e}");
        let e = error(&format!(
            "{up}oauth_client_id = \"gw\"\noauth_client_secret_env = \"S\"\nbearer_token_env = \"T\"\n"
        ));
        assert!(e.contains("not both"), "{e}");
        let e = error("[[upstream]]\nname = \"a\"\nstdio = \"x\"\noauth_client_id = \"gw\"\n");
        assert!(e.contains("goes with `url`"), "{e}");
    }
}
