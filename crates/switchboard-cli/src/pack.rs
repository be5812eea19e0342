//! `switchboard pack`: connects to the server, reads what it lists, and writes an MCPB bundle
//! or a registry `server.json` (the behaviour is `switchboard::client::pack`).

use std::path::PathBuf;

use anyhow::Context as _;
use switchboard::client::pack::{
    self, BundleSpec, Description, Location, PlatformBinary, UserInput,
};

/// `switchboard pack` arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct PackArgs {
    #[command(flatten)]
    server: crate::ServerArgs,
    /// The file written: the bundle (`.mcpb`), or with --server-json the registry document.
    #[arg(long, short = 'o', value_name = "FILE")]
    output: PathBuf,
    /// The server binary put in the bundle; by default the first word of --stdio.
    #[arg(long, value_name = "PATH")]
    binary: Option<PathBuf>,
    /// The server binary built for another platform, packed beside this one's (repeatable):
    /// PLATFORM=PATH, PLATFORM darwin, win32 or linux.
    #[arg(long = "platform", value_name = "PLATFORM=PATH")]
    platforms: Vec<PlatformBinary>,
    /// An argument the bundled server is always started with (repeatable, in order).
    #[arg(long = "arg", value_name = "VALUE", allow_hyphen_values = true)]
    args: Vec<String>,
    /// An argument the user gives at install time, after the --arg ones (repeatable):
    /// NAME[:TYPE], TYPE string (default), number, boolean, directory, file or secret.
    #[arg(long = "user-arg", value_name = "NAME[:TYPE]")]
    user_args: Vec<UserInput>,
    /// An environment variable the user gives at install time (repeatable): VAR[:TYPE].
    #[arg(long = "user-env", value_name = "VAR[:TYPE]")]
    user_env: Vec<UserInput>,
    /// The author's name (MCPB requires one); the server's name by default.
    #[arg(long)]
    author: Option<String>,
    /// What the server does; the server's own description, title or instructions by default.
    #[arg(long)]
    description: Option<String>,
    /// The source repository URL.
    #[arg(long, value_name = "URL")]
    repository: Option<String>,
    /// Write the registry's server.json instead of a bundle.
    #[arg(long)]
    server_json: bool,
    /// With --server-json: the registry name, reverse DNS and one `/` (io.github.user/notes).
    #[arg(long, value_name = "NAME", requires = "server_json")]
    registry_name: Option<String>,
    /// With --server-json and --stdio: the bundle (made by pack) whose SHA-256 is published.
    #[arg(long, value_name = "FILE.mcpb", requires = "server_json")]
    bundle: Option<PathBuf>,
    /// With --server-json and --stdio: where the bundle is downloaded from (a release asset).
    #[arg(long, value_name = "URL", requires = "server_json")]
    bundle_url: Option<String>,
}

/// Runs `pack`; the summary line is for stderr.
pub(crate) async fn run(a: PackArgs) -> anyhow::Result<String> {
    let client = crate::client("switchboard-pack").build();
    let session = a.server.connect(client, Default::default()).await?;
    let described = Description::read(&session).await;
    session.close();
    let described = described?;
    let binary = match (&a.binary, &a.server.stdio) {
        (Some(b), _) => Some(b.clone()),
        (None, Some(cmd)) => cmd.split_whitespace().next().map(PathBuf::from),
        (None, None) => None,
    };
    let mut spec = binary.map(BundleSpec::new);
    if let Some(spec) = spec.as_mut() {
        spec.args = a.args.clone();
        spec.user_args = a.user_args.clone();
        spec.user_env = a.user_env.clone();
        spec.author = a.author.clone();
        spec.description = a.description.clone();
        spec.repository = a.repository.clone();
        spec.platforms = a.platforms.clone();
    }
    if a.server_json {
        let location = match (&a.server.url, &a.bundle, &a.bundle_url) {
            (_, Some(bundle), Some(url)) => Location::bundle_file(url, bundle)
                .with_context(|| format!("cannot read `{}`", bundle.display()))?,
            (Some(url), None, None) => Location::Remote(url.clone()),
            _ => anyhow::bail!(
                "--server-json needs --bundle FILE.mcpb and --bundle-url URL (a bundle), or --url \
                 alone (a remote server)\nhint: make the bundle first: switchboard pack --stdio CMD -o FILE.mcpb"
            ),
        };
        let registry_name = a
            .registry_name
            .clone()
            .unwrap_or_else(|| format!("io.github.unknown/{}", described.server_info.name));
        let doc = pack::server_json(&described, &registry_name, spec.as_ref(), &location)?;
        pack::write_server_json(&doc, &a.output)?;
        return Ok(format!(
            "wrote {} ({registry_name} {})\n",
            a.output.display(),
            described.server_info.version
        ));
    }
    let spec = spec.context(
        "a bundle needs the server binary\nhint: with --url, name it with --binary PATH",
    )?;
    let written = pack::write_bundle(&described, &spec, &a.output)?;
    Ok(format!(
        "wrote {} ({} bytes, sha256 {}): {} {}, {} tools, {} prompts\n",
        a.output.display(),
        written.bytes,
        written.sha256,
        described.server_info.name,
        described.server_info.version,
        described.tools.len(),
        described.prompts.len()
    ))
}
