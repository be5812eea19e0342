//! The skills extension's client scenarios (SEP-2640; run without a spec version, so the suite's
//! mock answers both `initialize` and `server/discover`): the host's side of lazy retrieval and
//! verification, on `switchboard-skills`.
//!
//! | scenario | what this client does |
//! |---|---|
//! | `sep-2640-client-no-prefetch` | lists the skills (entries only) and reads no file |
//! | `sep-2640-client-verify-digest`, `-verify-size`, `-verify-frontmatter` | lists the skills and loads the first: reads its `SKILL.md`, verifies size, digest and frontmatter against the entry, and only then reads the supporting files (each verified too). A verification failure is the refusal the scenario looks for: the skill is not loaded, nothing more is read, and the scenario's work is done |

use switchboard_client::{Client, EraMode};
use switchboard_http_client::{HttpClientConfig, HttpClientTransport};
use switchboard_skills::{SkillError, Skills};

use crate::{Outcome, finish, identity};

pub(crate) async fn run(scenario: &str, url: &str) -> Outcome {
    let transport = HttpClientTransport::connect(url, HttpClientConfig::default())
        .map_err(|e| e.to_string())?;
    let session = Client::builder(identity())
        .era(EraMode::Auto)
        .build()
        .connect(transport)
        .await
        .map_err(|e| format!("connect failed: {e}"))?;
    let outcome = match scenario {
        "sep-2640-client-no-prefetch" => list_only(&session).await,
        "sep-2640-client-verify-digest"
        | "sep-2640-client-verify-size"
        | "sep-2640-client-verify-frontmatter" => load_first(&session).await,
        other => Err(format!(
            "scenario {other:?} is not supported by this client"
        )),
    };
    finish(session).await;
    outcome
}

/// Lists the skills and stops: nothing is read before a skill is loaded.
async fn list_only(session: &switchboard_client::ClientSession) -> Outcome {
    let skills = Skills::new(session)
        .list()
        .await
        .map_err(|e| e.to_string())?;
    tracing::info!(skills = skills.len(), "skills listed; no file read");
    Ok(())
}

/// Loads the first listed skill, then reads its supporting files; a verification failure ends
/// the load (and is what the scenario expects of a tampered skill).
async fn load_first(session: &switchboard_client::ClientSession) -> Outcome {
    let skills = Skills::new(session);
    let listed = skills.list().await.map_err(|e| e.to_string())?;
    let skill = listed.first().ok_or("the server lists no skill")?;
    match skills.load(skill).await {
        Ok(loaded) => {
            tracing::info!(uri = %skill.uri, "SKILL.md verified; reading the supporting files");
            for file in skill.files().unwrap_or_default() {
                if file.uri != loaded.skill.uri {
                    skills
                        .read(skill, &file.uri)
                        .await
                        .map_err(|e| e.to_string())?;
                }
            }
            Ok(())
        }
        Err(
            e @ (SkillError::Mismatch(_)
            | SkillError::FrontmatterMismatch { .. }
            | SkillError::Frontmatter { .. }),
        ) => {
            tracing::warn!(uri = %skill.uri, "skill refused, not loaded: {e}");
            Ok(())
        }
        Err(e) => Err(e.to_string()),
    }
}
