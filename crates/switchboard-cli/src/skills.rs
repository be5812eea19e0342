//! `switchboard skills`: the skills extension (SEP-2640) from the command line.
//!
//! `skills pull (--stdio CMD | --url URL) NAME DIR` finds the skill NAME (a name from the
//! listing, or the URI of its `SKILL.md`), reads every file of it, verifies each against the
//! entry (size, digest; the `SKILL.md`'s frontmatter field by field) and writes the skill to the
//! new directory DIR: through a temporary directory beside it, renamed only once everything
//! passed, so a refused skill leaves nothing behind. Exit 0 when written, 1 when refused or not
//! found, 2 when the server cannot be reached.

use switchboard::client::ClientSession;
use switchboard::skills::Skills;

/// `switchboard skills`'s subcommands.
#[derive(Debug, Clone, clap::Subcommand)]
pub(crate) enum SkillsCommand {
    /// Write a verified skill to a new directory: `skills pull --stdio CMD NAME DIR`.
    Pull(PullArgs),
}

/// `switchboard skills pull`'s flags.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct PullArgs {
    #[command(flatten)]
    server: crate::ServerArgs,
    /// The skill: its name as listed, or the URI of its SKILL.md.
    name: String,
    /// The directory to create (it must not exist).
    dir: std::path::PathBuf,
    #[command(flatten)]
    era: crate::EraArg,
}

/// Runs the subcommand; the exit code.
pub(crate) async fn run(command: &SkillsCommand) -> i32 {
    let SkillsCommand::Pull(a) = command;
    let client = crate::client("switchboard-skills").era(a.era.era).build();
    let session = match a.server.connect(client, Default::default()).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("switchboard skills pull: {e:#}");
            return 2;
        }
    };
    let pulled = pull(&session, a).await;
    session.close();
    match pulled {
        Ok(written) => {
            for path in &written {
                println!("{}", a.dir.join(path).display());
            }
            let (n, dir) = (written.len(), a.dir.display());
            eprintln!("switchboard skills pull: {n} files verified and written to {dir}");
            0
        }
        Err(e) => {
            eprintln!("switchboard skills pull: {e}; nothing written");
            1
        }
    }
}

async fn pull(
    session: &ClientSession,
    a: &PullArgs,
) -> Result<Vec<std::path::PathBuf>, switchboard::skills::SkillError> {
    let skills = Skills::new(session);
    let skill = skills.find(&a.name).await?;
    skills.pull(&skill, &a.dir).await
}
