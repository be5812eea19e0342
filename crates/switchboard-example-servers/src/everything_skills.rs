//! The example skills (the skills extension, SEP-2640) that `switchboard serve --skills`
//! publishes: two skills defined in code, one under an organizational prefix, each with a
//! subdirectory, so every check of the conformance suite's skills scenarios has something to
//! look at. They are not part of the everything server's contract (its resource list is pinned
//! by the interop clients), hence a flag.

use switchboard::skills::{SkillSet, SkillSource};

/// The skills `switchboard serve --skills [DIR]` publishes: none without the flag, these
/// example skills with no `DIR`, else the folder `DIR` (a skill it cannot serve is logged and
/// left out).
///
/// # Errors
/// The folder cannot be read (the message names it as `--skills DIR`).
pub fn from_flag(dir: Option<Option<&std::path::Path>>) -> std::io::Result<Option<SkillSet>> {
    let Some(dir) = dir else {
        return Ok(None);
    };
    let Some(dir) = dir else {
        return Ok(Some(skills()));
    };
    let set = SkillSet::from_dir(dir)
        .map_err(|e| std::io::Error::new(e.kind(), format!("--skills {}: {e}", dir.display())))?;
    for why in set.skipped() {
        tracing::warn!("skill not served: {why}");
    }
    Ok(Some(set))
}

/// The skills the everything server publishes.
pub fn skills() -> SkillSet {
    SkillSet::new()
        .with(
            SkillSource::new("acme/billing/refunds")
                .file(
                    "SKILL.md",
                    "---\nname: refunds\ndescription: Process customer refund requests per company policy\nlicense: Apache-2.0\nmetadata:\n  version: \"1.0\"\n---\n\n# Refunds\n\nCheck the order, then answer with the matching template from `templates/`.\n",
                )
                .file("templates/approved.md", "Your refund of {amount} is on its way.\n")
                .file("templates/declined.md", "We cannot refund this order: {reason}.\n"),
        )
        .with(
            SkillSource::new("test-skill")
                .file(
                    "SKILL.md",
                    "---\nname: test-skill\ndescription: A skill for testing skills clients\n---\n\n# Test skill\n\nRead `references/GUIDE.md` first.\n",
                )
                .file("references/GUIDE.md", "# Guide\n\nEverything you need.\n")
                .file("references/forms/FORM.md", "Name: ____\n"),
        )
}
