//! # switchboard-skills
//!
//! The skills extension (`io.modelcontextprotocol/skills`, SEP-2640, final since 2026-09-13):
//! a server publishes Agent Skills (a directory per skill: `SKILL.md` and its files), each file
//! an ordinary resource under `skill://`, enumerated by `skills/list` and `skills/get` with the
//! skill's frontmatter verbatim and a manifest of every file's size and SHA-256 digest; a
//! client loads a skill's files lazily and verifies each against the manifest.
//!
//! | module | side | role |
//! |---|---|---|
//! | [`wire`] | both | the [`Skill`] entry, the three methods' params, results and marker types, the limits |
//! | [`verify`] | both | digests, frontmatter (YAML → JSON), skill names, paths inside a skill, entry checks |
//! | `serve` (feature `server`) | server | [`SkillSet`] (a folder, watched, and skills from code) and [`SkillsExt::skills`] on `ServerBuilder` |
//! | `client` (feature `client`) | client | [`Skills`]: list, get, find, load, read, read a directory, pull to disk; [`SkillError`] |
//!
//! The method names are in `switchboard_types::methods` (`SKILLS_LIST`, `SKILLS_GET`,
//! `RESOURCES_DIRECTORY_READ`), so `switchboard trace` and `check` know them.

pub mod verify;
pub mod wire;

#[cfg(feature = "server")]
mod catalog;
#[cfg(feature = "client")]
mod client;
#[cfg(feature = "server")]
mod serve;

#[cfg(feature = "server")]
pub use catalog::SkillSource;
#[cfg(feature = "client")]
pub use client::{LoadedSkill, SkillError, Skills};
#[cfg(feature = "server")]
pub use serve::{SkillSet, SkillWatch, SkillsExt};
pub use wire::{SKILLS_EXTENSION, Skill, SkillFiles, SkillResource};
