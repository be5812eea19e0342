//! Distribution documents for a server, read from the running server through a client session
//! (feature `pack`): an [MCPB bundle](https://github.com/modelcontextprotocol/mcpb) (a zip with
//! `manifest.json` and the server binary, installed by a host such as Claude Desktop in one
//! click) and a registry `server.json` (the MCP Registry's description of where a server is and
//! how to start it).
//!
//! [`Description::read`] lists what the server offers (its identity, tools and prompts, at most
//! [`MAX_PACKED_ITEMS`] of them); [`manifest`] and [`write_bundle`] build the bundle from it and a
//! [`BundleSpec`] (the binary, its arguments, what the user configures at install time);
//! [`server_json`] writes the registry document.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde_json::{Map, Value, json};
use sha2::{Digest as _, Sha256};
use switchboard_types::lifecycle::Implementation;
use switchboard_types::prompts::Prompt;
use switchboard_types::tools::Tool;

use crate::{ClientError, ClientSession};

/// The most tools and prompts (together) written into a manifest: a server listing more is
/// refused with [`PackError::TooManyItems`] rather than packed into a manifest no host shows.
pub const MAX_PACKED_ITEMS: usize = 1_000;

/// The default for [`BundleSpec::max_binary_bytes`]: 512 MiB.
pub const DEFAULT_MAX_BINARY_BYTES: u64 = 512 * 1024 * 1024;

/// The MCPB manifest version written (`manifest_version`), the newest the official CLI's
/// `latest` schema accepts.
const MANIFEST_VERSION: &str = "0.3";

/// The registry schema a [`server_json`] document names in `$schema` (and is tested against).
pub const SERVER_JSON_SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json";

/// The registry's limit on `description`, in characters.
const SERVER_JSON_DESCRIPTION_CHARS: usize = 100;

/// Why a bundle or a document could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PackError {
    /// Listing the server failed.
    #[error("cannot list the server: {0}")]
    Client(#[from] ClientError),
    /// The server lists more tools and prompts than [`MAX_PACKED_ITEMS`].
    #[error("the server lists {count} tools and prompts, more than the {max} a manifest holds")]
    TooManyItems {
        /// Tools and prompts listed.
        count: usize,
        /// The bound.
        max: usize,
    },
    /// The binary is larger than [`BundleSpec::max_binary_bytes`].
    #[error("the binary is {bytes} bytes, more than the {max} allowed in a bundle")]
    BinaryTooLarge {
        /// The binary's size.
        bytes: u64,
        /// The bound.
        max: u64,
    },
    /// A value given is not usable (a user input, a name).
    #[error("{0}")]
    Invalid(String),
    /// Reading the binary or writing the bundle failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// What a running server says of itself: identity, instructions, tools and prompts.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Description {
    /// The server's `serverInfo`.
    pub server_info: Implementation,
    /// The server's instructions, if any.
    pub instructions: Option<String>,
    /// Every tool listed.
    pub tools: Vec<Tool>,
    /// Every prompt listed.
    pub prompts: Vec<Prompt>,
    /// Whether the server may change its tools at run time (`tools.listChanged`).
    pub tools_change: bool,
    /// Whether the server may change its prompts at run time (`prompts.listChanged`).
    pub prompts_change: bool,
}

impl Description {
    /// Lists the server's tools and prompts (those it declares), every page; more than
    /// [`MAX_PACKED_ITEMS`] together is [`PackError::TooManyItems`].
    pub async fn read(session: &ClientSession) -> Result<Self, PackError> {
        let negotiated = session.negotiated();
        let caps = &negotiated.capabilities;
        let tools = match caps.tools {
            Some(_) => session.list_tools().await?,
            None => Vec::new(),
        };
        let prompts = match caps.prompts {
            Some(_) => session.list_prompts().await?,
            None => Vec::new(),
        };
        let described = Description {
            server_info: negotiated.server_info.clone(),
            instructions: negotiated.instructions.clone(),
            tools_change: caps
                .tools
                .as_ref()
                .and_then(|t| t.list_changed)
                .unwrap_or(false),
            prompts_change: caps
                .prompts
                .as_ref()
                .and_then(|p| p.list_changed)
                .unwrap_or(false),
            tools,
            prompts,
        };
        described.check_count()?;
        Ok(described)
    }

    /// A description from parts (a server known without connecting, tests).
    pub fn new(server_info: Implementation, tools: Vec<Tool>, prompts: Vec<Prompt>) -> Self {
        Description {
            server_info,
            instructions: None,
            tools,
            prompts,
            tools_change: false,
            prompts_change: false,
        }
    }

    fn check_count(&self) -> Result<(), PackError> {
        let count = self.tools.len() + self.prompts.len();
        if count > MAX_PACKED_ITEMS {
            return Err(PackError::TooManyItems {
                count,
                max: MAX_PACKED_ITEMS,
            });
        }
        Ok(())
    }

    /// One line saying what the server does: the given text, else the server's description,
    /// title, first line of instructions, or its name.
    fn summary(&self, given: Option<&str>) -> String {
        let info = &self.server_info;
        given
            .map(str::to_owned)
            .or_else(|| info.description.clone())
            .or_else(|| {
                self.instructions
                    .as_deref()
                    .and_then(|i| i.lines().find(|l| !l.trim().is_empty()))
                    .map(|l| l.trim().to_owned())
            })
            .or_else(|| info.title.as_ref().map(|t| format!("{t} (MCP server)")))
            .unwrap_or_else(|| format!("The {} MCP server", info.name))
    }
}

/// A value the user gives when installing a bundle: a command-line argument or an environment
/// variable of the server. Written `NAME[:TYPE]`, TYPE one of `string` (the default), `number`,
/// `boolean`, `directory`, `file`, or `secret` (a string the host keeps hidden).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UserInput {
    /// The argument's label or the variable's name.
    pub name: String,
    /// The MCPB `user_config` type.
    pub kind: String,
    /// Whether the host hides the value.
    pub sensitive: bool,
}

impl FromStr for UserInput {
    type Err = PackError;

    fn from_str(s: &str) -> Result<Self, PackError> {
        let (name, kind) = s.split_once(':').unwrap_or((s, "string"));
        let valid_name = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid_name {
            return Err(PackError::Invalid(format!(
                "`{s}`: a user input is NAME[:TYPE], NAME letters, digits, `_` and `-`"
            )));
        }
        let (kind, sensitive) = match kind {
            "string" | "number" | "boolean" | "directory" | "file" => (kind, false),
            "secret" => ("string", true),
            other => {
                return Err(PackError::Invalid(format!(
                    "`{other}` is not a user input type: string, number, boolean, directory, file or secret"
                )));
            }
        };
        Ok(UserInput {
            name: name.to_owned(),
            kind: kind.to_owned(),
            sensitive,
        })
    }
}

impl UserInput {
    /// The `user_config` key: the name in lower case, `-` as `_`.
    fn key(&self) -> String {
        self.name.to_ascii_lowercase().replace('-', "_")
    }
}

/// The platforms a bundle can name (MCPB's `compatibility.platforms`).
const PLATFORMS: [&str; 3] = ["darwin", "win32", "linux"];

/// The server binary built for another platform, packed beside this platform's
/// ([`BundleSpec::platforms`]); written `PLATFORM=PATH`, PLATFORM one of `darwin`, `win32`,
/// `linux`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PlatformBinary {
    /// The platform, in MCPB's words.
    pub platform: String,
    /// The binary built for it.
    pub binary: PathBuf,
}

impl std::str::FromStr for PlatformBinary {
    type Err = PackError;

    fn from_str(s: &str) -> Result<Self, PackError> {
        let (platform, path) = s.split_once('=').ok_or_else(|| {
            PackError::Invalid(format!(
                "`{s}` is not PLATFORM=PATH (PLATFORM darwin, win32 or linux)"
            ))
        })?;
        if !PLATFORMS.contains(&platform) || path.is_empty() {
            return Err(PackError::Invalid(format!(
                "`{s}`: the platform is one of darwin, win32, linux, followed by =PATH"
            )));
        }
        Ok(PlatformBinary {
            platform: platform.to_owned(),
            binary: PathBuf::from(path),
        })
    }
}

/// How the bundled server is started, and what the bundle says of it beyond what the server
/// lists.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BundleSpec {
    /// The server binary put in the bundle (under `server/`).
    pub binary: PathBuf,
    /// Arguments always passed, before those of `user_args`.
    pub args: Vec<String>,
    /// Arguments the user gives at install time, in order, after `args`.
    pub user_args: Vec<UserInput>,
    /// Environment variables the user gives at install time.
    pub user_env: Vec<UserInput>,
    /// The author (`author.name`, required by MCPB); the server's name when not given.
    pub author: Option<String>,
    /// What the server does; the server's own description (or title, instructions) when not
    /// given.
    pub description: Option<String>,
    /// The source repository URL.
    pub repository: Option<String>,
    /// The largest binary packed, each (default [`DEFAULT_MAX_BINARY_BYTES`]).
    pub max_binary_bytes: u64,
    /// Binaries built for other platforms. Empty: the bundle holds `binary` as `server/NAME`
    /// for this platform alone. Otherwise each binary is `server/PLATFORM/NAME` (`binary`
    /// under this platform's name), the manifest names every platform in
    /// `compatibility.platforms` and starts each one's binary through
    /// `mcp_config.platform_overrides`.
    pub platforms: Vec<PlatformBinary>,
}

impl BundleSpec {
    /// A bundle of `binary`, started with no arguments.
    pub fn new(binary: impl Into<PathBuf>) -> Self {
        BundleSpec {
            binary: binary.into(),
            args: Vec::new(),
            user_args: Vec::new(),
            user_env: Vec::new(),
            author: None,
            description: None,
            repository: None,
            max_binary_bytes: DEFAULT_MAX_BINARY_BYTES,
            platforms: Vec::new(),
        }
    }

    /// Every binary packed and its path in the bundle, this platform's first; with
    /// `platforms`, at most one per platform.
    fn packed(&self) -> Result<Vec<(Option<String>, PathBuf, String)>, PackError> {
        let name = |b: &Path| {
            b.file_name()
                .and_then(|n| n.to_str())
                .map(str::to_owned)
                .ok_or_else(|| PackError::Invalid(format!("`{}` names no file", b.display())))
        };
        if self.platforms.is_empty() {
            let entry = format!("server/{}", name(&self.binary)?);
            return Ok(vec![(None, self.binary.clone(), entry)]);
        }
        let this = this_platform().ok_or_else(|| {
            PackError::Invalid("this platform is not one MCPB names (darwin, win32, linux)".into())
        })?;
        let mut out = vec![(Some(this.to_owned()), self.binary.clone())];
        for p in &self.platforms {
            if out
                .iter()
                .any(|(q, _)| q.as_deref() == Some(p.platform.as_str()))
            {
                return Err(PackError::Invalid(format!(
                    "two binaries for {} (this machine's is `{}`)",
                    p.platform,
                    self.binary.display()
                )));
            }
            out.push((Some(p.platform.clone()), p.binary.clone()));
        }
        out.into_iter()
            .map(|(p, b)| {
                let entry = format!("server/{}/{}", p.as_deref().unwrap_or_default(), name(&b)?);
                Ok((p, b, entry))
            })
            .collect()
    }
}

/// The platform this process runs on, in MCPB's words (`darwin`, `win32`, `linux`): a native
/// binary runs where it was built.
fn this_platform() -> Option<&'static str> {
    match std::env::consts::OS {
        "macos" => Some("darwin"),
        "windows" => Some("win32"),
        "linux" => Some("linux"),
        _ => None,
    }
}

/// The bundle's `manifest.json` for a binary server (MCPB manifest version 0.3).
pub fn manifest(desc: &Description, spec: &BundleSpec) -> Result<Value, PackError> {
    desc.check_count()?;
    let info = &desc.server_info;
    let packed = spec.packed()?;
    let entry = packed[0].2.clone();
    let mut args: Vec<Value> = spec.args.iter().map(|a| json!(a)).collect();
    let mut user_config = Map::new();
    for input in &spec.user_args {
        args.push(json!(format!("${{user_config.{}}}", input.key())));
        user_config.insert(
            input.key(),
            user_entry(input, &format!("The server's argument `{}`.", input.name)),
        );
    }
    let mut env = Map::new();
    for input in &spec.user_env {
        env.insert(
            input.name.clone(),
            json!(format!("${{user_config.{}}}", input.key())),
        );
        user_config.insert(
            input.key(),
            user_entry(
                input,
                &format!("The server's environment variable {}.", input.name),
            ),
        );
    }
    let mut mcp_config = json!({
        "command": format!("${{__dirname}}/{entry}"),
        "args": args,
    });
    if packed.len() > 1 {
        let overrides: Map<String, Value> = packed
            .iter()
            .filter_map(|(p, _, entry)| {
                let command = json!({ "command": format!("${{__dirname}}/{entry}") });
                p.clone().map(|p| (p, command))
            })
            .collect();
        mcp_config["platform_overrides"] = Value::Object(overrides);
    }
    if !env.is_empty() {
        mcp_config["env"] = Value::Object(env);
    }
    let mut m = json!({
        "manifest_version": MANIFEST_VERSION,
        "name": info.name,
        "version": info.version,
        "description": desc.summary(spec.description.as_deref()),
        "author": { "name": spec.author.clone().unwrap_or_else(|| info.name.clone()) },
        "server": {
            "type": "binary",
            "entry_point": entry,
            "mcp_config": mcp_config,
        },
        "tools": desc.tools.iter().map(|t| {
            let mut o = json!({ "name": t.name });
            if let Some(d) = &t.description { o["description"] = json!(d); }
            o
        }).collect::<Vec<_>>(),
        "tools_generated": desc.tools_change,
        "prompts": desc.prompts.iter().map(prompt_entry).collect::<Vec<_>>(),
        "prompts_generated": desc.prompts_change,
    });
    if let Some(title) = &info.title {
        m["display_name"] = json!(title);
    }
    if let Some(instructions) = &desc.instructions {
        m["long_description"] = json!(instructions);
    }
    if let Some(url) = &info.website_url {
        m["homepage"] = json!(url);
    }
    if let Some(url) = &spec.repository {
        m["repository"] = json!({ "type": "git", "url": url });
    }
    let platforms: Vec<&str> = match packed.as_slice() {
        [(None, _, _)] => this_platform().into_iter().collect(),
        _ => packed.iter().filter_map(|(p, _, _)| p.as_deref()).collect(),
    };
    if !platforms.is_empty() {
        m["compatibility"] = json!({ "platforms": platforms });
    }
    if !user_config.is_empty() {
        m["user_config"] = Value::Object(user_config);
    }
    Ok(m)
}

fn user_entry(input: &UserInput, description: &str) -> Value {
    let mut e = json!({
        "type": input.kind,
        "title": input.name,
        "description": description,
        "required": true,
    });
    if input.sensitive {
        e["sensitive"] = json!(true);
    }
    e
}

/// A prompt in MCPB's words. MCPB wants the prompt's `text`; a server's prompt is made when it
/// is asked for (with its arguments, from live data), so the text written is what the server
/// says the prompt does (its description, else its title or name).
fn prompt_entry(p: &Prompt) -> Value {
    let text = p
        .description
        .clone()
        .or_else(|| p.title.clone())
        .unwrap_or_else(|| p.name.clone());
    let mut o = json!({ "name": p.name, "text": text });
    if let Some(d) = &p.description {
        o["description"] = json!(d);
    }
    if let Some(args) = &p.arguments {
        o["arguments"] = json!(args.iter().map(|a| a.name.clone()).collect::<Vec<_>>());
    }
    o
}

/// What [`write_bundle`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Written {
    /// The bundle's size in bytes.
    pub bytes: u64,
    /// The bundle's SHA-256, lower-case hex (the registry's `fileSha256`).
    pub sha256: String,
}

/// Writes the bundle to `out`: `manifest.json` (see [`manifest`]) and the binary as
/// `server/<name>` (executable; no directory entries, which the official `mcpb unpack` cannot
/// take). The zip carries no timestamps of its own (all 1980-01-01), so
/// the same inputs make the same bytes.
pub fn write_bundle(
    desc: &Description,
    spec: &BundleSpec,
    out: &Path,
) -> Result<Written, PackError> {
    let manifest = manifest(desc, spec)?;
    let packed = spec.packed()?;
    for (_, binary, _) in &packed {
        let bytes = std::fs::metadata(binary)
            .map_err(|e| std::io::Error::new(e.kind(), format!("`{}`: {e}", binary.display())))?
            .len();
        if bytes > spec.max_binary_bytes {
            return Err(PackError::BinaryTooLarge {
                bytes,
                max: spec.max_binary_bytes,
            });
        }
    }
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let text = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .unix_permissions(0o644);
    let exe = text.unix_permissions(0o755);
    let manifest_text = serde_json::to_string_pretty(&manifest).map_err(std::io::Error::other)?;
    zip.start_file("manifest.json", text).map_err(zip_error)?;
    zip.write_all(manifest_text.as_bytes())?;
    for (_, binary, entry) in &packed {
        zip.start_file(entry.as_str(), exe).map_err(zip_error)?;
        zip.write_all(&std::fs::read(binary)?)?;
    }
    let written = zip.finish().map_err(zip_error)?.into_inner();
    replace_file(out, &written)
        .map_err(|e| std::io::Error::new(e.kind(), format!("`{}`: {e}", out.display())))?;
    Ok(Written {
        bytes: written.len() as u64,
        sha256: hex(&Sha256::digest(&written)),
    })
}

/// Writes a [`server_json`] document to `out` (pretty-printed, a final newline) the way
/// [`write_bundle`] writes a bundle: atomically, a symlink planted at `out` replaced, never
/// written through.
pub fn write_server_json(doc: &Value, out: &Path) -> Result<(), PackError> {
    let text = serde_json::to_string_pretty(doc).map_err(std::io::Error::other)? + "\n";
    replace_file(out, text.as_bytes())
        .map_err(|e| std::io::Error::new(e.kind(), format!("`{}`: {e}", out.display())))?;
    Ok(())
}

/// Writes `bytes` to `out` atomically: into a new file beside it (created, never opened through
/// a link), synced, then renamed over `out`. A failure leaves `out` as it was, and a symlink
/// planted at `out` is replaced, never written through.
fn replace_file(out: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = out
        .file_name()
        .ok_or_else(|| std::io::Error::other("the output path has no file name"))?;
    let tmp = parent.join(format!(
        ".{}.pack-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, out)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

fn zip_error(e: zip::result::ZipError) -> std::io::Error {
    std::io::Error::other(e)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Where the server described by a [`server_json`] document is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Location {
    /// An MCPB bundle downloaded from `url` (a release asset), of this SHA-256, started over
    /// stdio.
    Bundle {
        /// The bundle's download URL.
        url: String,
        /// The bundle's SHA-256, lower-case hex.
        sha256: String,
    },
    /// A remote server at this Streamable HTTP endpoint.
    Remote(String),
}

impl Location {
    /// The bundle at `path` (made by [`write_bundle`]), downloaded from `url`: its SHA-256 as
    /// [`Written`] reports it.
    ///
    /// # Errors
    /// The bundle cannot be read.
    pub fn bundle_file(url: &str, path: &std::path::Path) -> Result<Location, PackError> {
        let sha256 = hex(&Sha256::digest(std::fs::read(path)?));
        let url = url.to_owned();
        Ok(Location::Bundle { url, sha256 })
    }
}

/// The registry's `server.json` for the server: `name` is the registry name (reverse DNS, one
/// `/`: `io.github.user/weather`); the description is cut to the registry's 100 characters; a
/// bundle's `user_args` and `user_env` become its positional arguments and environment
/// variables (required; secret ones `isSecret`).
pub fn server_json(
    desc: &Description,
    name: &str,
    spec: Option<&BundleSpec>,
    location: &Location,
) -> Result<Value, PackError> {
    let valid_name = name.split_once('/').is_some_and(|(ns, n)| {
        !ns.is_empty()
            && !n.is_empty()
            && !n.contains('/')
            && ns
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-')
    });
    if !valid_name {
        return Err(PackError::Invalid(format!(
            "`{name}` is not a registry name: reverse DNS and one `/`, e.g. io.github.user/weather"
        )));
    }
    let info = &desc.server_info;
    let description: String = desc
        .summary(spec.and_then(|s| s.description.as_deref()))
        .chars()
        .take(SERVER_JSON_DESCRIPTION_CHARS)
        .collect();
    let mut doc = json!({
        "$schema": SERVER_JSON_SCHEMA,
        "name": name,
        "description": description,
        "version": info.version,
    });
    if let Some(title) = &info.title {
        doc["title"] = json!(title);
    }
    if let Some(url) = &info.website_url {
        doc["websiteUrl"] = json!(url);
    }
    if let Some(url) = spec.and_then(|s| s.repository.as_ref()) {
        doc["repository"] = json!({ "url": url, "source": source_of(url) });
    }
    match location {
        Location::Bundle { url, sha256 } => {
            let mut package = json!({
                "registryType": "mcpb",
                "identifier": url,
                "version": info.version,
                "fileSha256": sha256,
                "transport": { "type": "stdio" },
            });
            if let Some(spec) = spec {
                let mut arguments: Vec<Value> = spec
                    .args
                    .iter()
                    .map(|a| json!({ "type": "positional", "value": a }))
                    .collect();
                arguments.extend(spec.user_args.iter().map(|i| {
                    json!({
                        "type": "positional",
                        "valueHint": i.key(),
                        "description": format!("The server's argument `{}`.", i.name),
                        "isRequired": true,
                        "isSecret": i.sensitive,
                        "format": registry_format(i),
                    })
                }));
                if !arguments.is_empty() {
                    package["packageArguments"] = json!(arguments);
                }
                if !spec.user_env.is_empty() {
                    package["environmentVariables"] = json!(
                        spec.user_env
                            .iter()
                            .map(|i| json!({
                                "name": i.name,
                                "description": format!("The server's environment variable {}.", i.name),
                                "isRequired": true,
                                "isSecret": i.sensitive,
                                "format": registry_format(i),
                            }))
                            .collect::<Vec<_>>()
                    );
                }
            }
            doc["packages"] = json!([package]);
        }
        Location::Remote(url) => {
            doc["remotes"] = json!([{ "type": "streamable-http", "url": url }]);
        }
    }
    Ok(doc)
}

/// The registry's input `format` for an MCPB user-config type.
fn registry_format(i: &UserInput) -> &'static str {
    match i.kind.as_str() {
        "number" => "number",
        "boolean" => "boolean",
        "directory" | "file" => "filepath",
        _ => "string",
    }
}

/// The registry's `repository.source` for a URL: the forge's name.
fn source_of(url: &str) -> &'static str {
    if url.contains("github.com") {
        "github"
    } else if url.contains("gitlab.com") {
        "gitlab"
    } else {
        "git"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn described(tools: usize) -> Description {
        let mut info = Implementation::new("notes", "0.1.0");
        info.title = Some("Notes".into());
        let tools = (0..tools)
            .map(|i| {
                let mut t = Tool::new(format!("t{i}"), Value::Null);
                t.description = Some("a tool".into());
                t
            })
            .collect();
        let mut p = Prompt::new("summarize");
        p.description = Some("Summarize".into());
        Description::new(info, tools, vec![p])
    }

    #[test]
    fn user_inputs_parse_name_and_type() {
        let dir: UserInput = "dir:directory".parse().expect("parses");
        assert_eq!(
            (dir.name.as_str(), dir.kind.as_str(), dir.sensitive),
            ("dir", "directory", false)
        );
        let key: UserInput = "API_KEY:secret".parse().expect("parses");
        assert_eq!(
            (key.kind.as_str(), key.sensitive, key.key()),
            ("string", true, "api_key".into())
        );
        assert!("x:colour".parse::<UserInput>().is_err());
        assert!("a b".parse::<UserInput>().is_err());
        assert!(":string".parse::<UserInput>().is_err());
    }

    #[test]
    fn the_manifest_starts_the_bundled_binary_with_the_users_values() {
        let mut spec = BundleSpec::new("/tmp/bin/notes");
        spec.args = vec!["--quiet".into()];
        spec.user_args = vec!["dir:directory".parse().expect("parses")];
        spec.user_env = vec!["API_KEY:secret".parse().expect("parses")];
        let m = manifest(&described(2), &spec).expect("manifest");
        assert_eq!(m["server"]["entry_point"], "server/notes");
        assert_eq!(
            m["server"]["mcp_config"]["command"],
            "${__dirname}/server/notes"
        );
        assert_eq!(
            m["server"]["mcp_config"]["args"],
            json!(["--quiet", "${user_config.dir}"])
        );
        assert_eq!(
            m["server"]["mcp_config"]["env"]["API_KEY"],
            "${user_config.api_key}"
        );
        assert_eq!(m["user_config"]["api_key"]["sensitive"], true);
        assert_eq!(m["user_config"]["dir"]["type"], "directory");
        assert_eq!(m["tools"].as_array().map(Vec::len), Some(2));
        assert_eq!(m["prompts"][0]["text"], "Summarize");
        assert_eq!(m["display_name"], "Notes");
        assert_eq!(m["description"], "Notes (MCP server)");
    }

    #[test]
    fn platform_binaries_parse_and_the_manifest_starts_each_platforms_own() {
        let win: PlatformBinary = "win32=/tmp/win/notes.exe".parse().expect("parses");
        assert_eq!(
            (win.platform.as_str(), win.binary.as_path()),
            ("win32", Path::new("/tmp/win/notes.exe"))
        );
        assert!("beos=/tmp/notes".parse::<PlatformBinary>().is_err());
        assert!("/tmp/notes".parse::<PlatformBinary>().is_err());
        assert!("linux=".parse::<PlatformBinary>().is_err());

        let Some(this) = this_platform() else { return };
        let others: Vec<&str> = PLATFORMS.into_iter().filter(|p| *p != this).collect();
        let mut spec = BundleSpec::new("/tmp/bin/notes");
        spec.args = vec!["--quiet".into()];
        spec.platforms = others
            .iter()
            .map(|p| format!("{p}=/tmp/{p}/notes-{p}").parse().expect("parses"))
            .collect();
        let m = manifest(&described(1), &spec).expect("manifest");
        let mut all = vec![this];
        all.extend(&others);
        assert_eq!(m["compatibility"]["platforms"], json!(all));
        assert_eq!(m["server"]["entry_point"], format!("server/{this}/notes"));
        let config = &m["server"]["mcp_config"];
        assert_eq!(
            config["command"],
            format!("${{__dirname}}/server/{this}/notes")
        );
        assert_eq!(config["args"], json!(["--quiet"]), "one args list for all");
        for p in &others {
            assert_eq!(
                config["platform_overrides"][p],
                json!({ "command": format!("${{__dirname}}/server/{p}/notes-{p}") })
            );
        }
        // A platform named twice (this machine's again) is refused.
        spec.platforms
            .push(format!("{this}=/tmp/again").parse().expect("parses"));
        assert!(matches!(
            manifest(&described(1), &spec),
            Err(PackError::Invalid(e)) if e.contains("two binaries")
        ));
    }

    #[test]
    fn more_items_than_max_packed_items_are_refused() {
        let spec = BundleSpec::new("/tmp/notes");
        // One prompt plus MAX_PACKED_ITEMS - 1 tools is exactly the bound: packed.
        assert!(manifest(&described(MAX_PACKED_ITEMS - 1), &spec).is_ok());
        match manifest(&described(MAX_PACKED_ITEMS), &spec) {
            Err(PackError::TooManyItems { count, max }) => {
                assert_eq!((count, max), (MAX_PACKED_ITEMS + 1, MAX_PACKED_ITEMS))
            }
            other => panic!("expected TooManyItems, got {other:?}"),
        }
    }

    #[test]
    fn a_binary_over_max_binary_bytes_is_refused_and_one_at_it_packed() {
        let dir = std::env::temp_dir().join(format!("sb-pack-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let bin = dir.join("server-bin");
        std::fs::write(&bin, vec![7u8; 4096]).expect("binary");
        let out = dir.join("b.mcpb");
        let mut spec = BundleSpec::new(&bin);
        spec.max_binary_bytes = 4095;
        match write_bundle(&described(1), &spec, &out) {
            Err(PackError::BinaryTooLarge { bytes, max }) => assert_eq!((bytes, max), (4096, 4095)),
            other => panic!("expected BinaryTooLarge, got {other:?}"),
        }
        spec.max_binary_bytes = 4096;
        let written = write_bundle(&described(1), &spec, &out).expect("packed");
        let again = write_bundle(&described(1), &spec, &out).expect("packed again");
        assert_eq!(written, again, "the same inputs make the same bytes");
        let mut zip = zip::ZipArchive::new(std::fs::File::open(&out).expect("open")).expect("zip");
        let names: Vec<String> = zip
            .file_names()
            .filter_map(|n| n.ok().map(|n| n.into_owned()))
            .collect();
        assert!(
            names.contains(&"manifest.json".to_owned())
                && names.contains(&"server/server-bin".to_owned())
        );
        let exe = zip.by_name("server/server-bin").expect("binary entry");
        assert_eq!(exe.unix_mode().map(|m| m & 0o777), Some(0o755));
        assert_eq!(exe.size(), 4096);
        drop(exe);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_planted_at_the_output_is_replaced_never_written_through() {
        let dir = std::env::temp_dir().join(format!("sb-pack-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        let bin = dir.join("server-bin");
        std::fs::write(&bin, vec![7u8; 64]).expect("binary");
        let victim = dir.join("victim.txt");
        std::fs::write(&victim, "keep me").expect("victim");
        let out = dir.join("b.mcpb");
        std::os::unix::fs::symlink(&victim, &out).expect("symlink");
        write_bundle(&described(1), &BundleSpec::new(&bin), &out).expect("packed");
        assert_eq!(std::fs::read_to_string(&victim).expect("victim"), "keep me");
        assert!(!std::fs::symlink_metadata(&out).expect("out").is_symlink());
        // The registry's server.json the same way.
        let doc_out = dir.join("server.json");
        std::os::unix::fs::symlink(&victim, &doc_out).expect("symlink");
        let loc = Location::Remote("https://example.com/mcp".into());
        let doc = server_json(&described(1), "io.github.user/notes", None, &loc).expect("doc");
        write_server_json(&doc, &doc_out).expect("written");
        assert_eq!(std::fs::read_to_string(&victim).expect("victim"), "keep me");
        assert!(
            !std::fs::symlink_metadata(&doc_out)
                .expect("out")
                .is_symlink()
        );
        let back: Value =
            serde_json::from_str(&std::fs::read_to_string(&doc_out).expect("read")).expect("json");
        assert_eq!(back, doc);
        // A failed write (the output's folder is missing) leaves no temporary file behind.
        let missing = dir.join("no-such-dir").join("b.mcpb");
        assert!(write_bundle(&described(1), &BundleSpec::new(&bin), &missing).is_err());
        let left: Vec<_> = std::fs::read_dir(&dir)
            .expect("list")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".pack-"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn registry_names_must_be_reverse_dns_with_one_slash() {
        let loc = Location::Remote("https://example.com/mcp".into());
        assert!(server_json(&described(1), "io.github.user/notes", None, &loc).is_ok());
        for bad in ["notes", "a/b/c", "/notes", "io.github.user/", "io github/x"] {
            assert!(
                server_json(&described(1), bad, None, &loc).is_err(),
                "{bad}"
            );
        }
    }
}
