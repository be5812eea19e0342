//! A skills peer on the official Rust SDK (rmcp 3.11, feature `skills-fs`), for
//! interop/rmcp-skills.sh:
//!
//! * `rmcp-skills-peer serve DIR`: a stdio server publishing the skills of DIR with rmcp's own
//!   `SkillCatalog` (skills/list, skills/get, resources/directory/read, skill:// reads).
//! * `rmcp-skills-peer client CMD ARGS...`: rmcp's client against the stdio server CMD: lists
//!   every skill, checks each entry with rmcp's `Skill::validate`, gets it with `skills/get`,
//!   reads every file and verifies it with rmcp's `SkillResource::verify` (size and digest),
//!   reads each skill's root directory. Prints one JSON summary line; exit 1 on any failure.

use std::sync::Arc;

use rmcp::handler::server::skill_catalog::SkillCatalog;
use rmcp::model::*;
use rmcp::service::RequestContext;
use rmcp::transport::TokioChildProcess;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

#[derive(Clone)]
struct Server {
    skills: Arc<SkillCatalog>,
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_resources()
                .enable_skills_with_directory_read()
                .build(),
        )
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        Ok(self.skills.list_skills())
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        self.skills.get_skill(&request.uri)
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        self.skills.read_resource_directory(&request.uri)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(self.skills.resources()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.skills
            .read_resource(&request.uri)
            .map(Into::into)
            .ok_or_else(|| ErrorData::resource_not_found(request.uri, None))
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("serve") if args.len() == 2 => serve(&args[1]).await,
        Some("client") if args.len() >= 2 => client(&args[1], &args[2..]).await,
        _ => anyhow::bail!("usage: rmcp-skills-peer serve DIR | client CMD ARGS..."),
    }
}

async fn serve(dir: &str) -> anyhow::Result<()> {
    let skills = Arc::new(SkillCatalog::from_dir(dir)?);
    let running = Server { skills }
        .serve((tokio::io::stdin(), tokio::io::stdout()))
        .await?;
    running.waiting().await?;
    Ok(())
}

async fn client(cmd: &str, args: &[String]) -> anyhow::Result<()> {
    let mut command = tokio::process::Command::new(cmd);
    command.args(args);
    let client = ().serve(TokioChildProcess::new(command)?).await?;
    let mut report = serde_json::Map::new();
    let skills = client.list_all_skills().await?;
    anyhow::ensure!(!skills.is_empty(), "the server lists no skill");
    let mut files = 0usize;
    for skill in &skills {
        skill
            .validate()
            .map_err(|e| anyhow::anyhow!("{}: invalid entry: {e}", skill.uri))?;
        let got = client
            .get_skill(GetSkillRequestParams::new(skill.uri.clone()))
            .await?;
        anyhow::ensure!(&got.skill == skill, "{}: skills/get differs from skills/list", skill.uri);
        let SkillResources::Files(manifest) = &skill.resources else {
            anyhow::bail!("{}: dynamic", skill.uri);
        };
        for entry in manifest {
            let read = client
                .read_resource(ReadResourceRequestParams::new(entry.uri.clone()))
                .await?;
            let bytes = match read.contents.first() {
                Some(ResourceContents::TextResourceContents { text, .. }) => text.clone().into_bytes(),
                Some(ResourceContents::BlobResourceContents { blob, .. }) => {
                    use base64::Engine as _;
                    base64::engine::general_purpose::STANDARD.decode(blob)?
                }
                _ => anyhow::bail!("{}: no contents", entry.uri),
            };
            entry
                .verify(&bytes)
                .map_err(|e| anyhow::anyhow!("{}: {e}", entry.uri))?;
            files += 1;
        }
        let root = skill.uri.trim_end_matches("/SKILL.md");
        let dir = client
            .read_resource_directory(ReadResourceDirectoryRequestParams::new(root))
            .await?;
        anyhow::ensure!(!dir.resources.is_empty(), "{root}: an empty directory read");
    }
    report.insert(
        "skills".into(),
        serde_json::json!(skills.iter().map(|s| s.uri.clone()).collect::<Vec<_>>()),
    );
    report.insert("filesVerified".into(), files.into());
    println!("{}", serde_json::Value::Object(report));
    client.cancel().await?;
    Ok(())
}
