//! Protocol revisions and what each one has: the one seam where version-specific wire behaviour
//! is decided (SPEC-NOTES §3.3, §12).
//!
//! Roles never compare version strings; they ask [`ProtocolVersion::supports`] for a [`Feature`].
//! Two eras: the legacy era (revisions 2024-11-05 to 2025-11-25, negotiated by `initialize`, a
//! session per connection) and the modern era (2026-07-28 on: no handshake, each request names
//! its revision in `_meta`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A protocol revision this crate knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProtocolVersion {
    /// 2024-11-05, the baseline.
    V2024_11_05,
    /// 2025-03-26: Streamable HTTP, batching, audio, tool annotations, completions capability.
    V2025_03_26,
    /// 2025-06-18: elicitation, structured tool output, resource links, titles; batching removed.
    V2025_06_18,
    /// 2025-11-25: tasks, URL elicitation, icons, sampling with tools.
    V2025_11_25,
    /// 2026-07-28, the first of the modern era (no handshake; per-request `_meta`, `server/discover`).
    V2026_07_28,
}

/// A revision-dependent feature of the protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Feature {
    /// The `initialize` / `notifications/initialized` handshake and a stateful session.
    Handshake,
    /// JSON-RPC batches (JSON arrays) on the wire (2025-03-26 only).
    Batching,
    /// `completions` server capability (2025-03-26+).
    CompletionsCapability,
    /// Audio content blocks (2025-03-26+).
    AudioContent,
    /// Tool annotations (2025-03-26+).
    ToolAnnotations,
    /// Progress `message` field (2025-03-26+).
    ProgressMessage,
    /// `elicitation/create` (2025-06-18+).
    Elicitation,
    /// `structuredContent` and `outputSchema` (2025-06-18+).
    StructuredContent,
    /// `resource_link` content blocks (2025-06-18+).
    ResourceLinks,
    /// `title` on named things, `_meta` on more types (2025-06-18+).
    Titles,
    /// `context.arguments` in completion requests (2025-06-18+).
    CompletionContext,
    /// The `MCP-Protocol-Version` HTTP header (2025-06-18+).
    ProtocolVersionHeader,
    /// Tasks (2025-11-25, experimental).
    Tasks,
    /// URL-mode elicitation and `notifications/elicitation/complete` (2025-11-25).
    UrlElicitation,
    /// Icons on tools, resources, prompts and implementations (2025-11-25).
    Icons,
    /// `tools` / `toolChoice` in sampling requests (2025-11-25).
    SamplingTools,
    /// An error response may omit `id` (2025-11-25 schema).
    ErrorWithoutId,
    /// Tool input validation errors are `isError` results, not -32602 (2025-11-25, SEP-1303).
    ToolInputErrorsAsResults,
}

impl ProtocolVersion {
    /// Every known revision, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// The revisions of the legacy era, newest first: the order `initialize` negotiates in.
    pub const SUPPORTED: [ProtocolVersion; 4] = [
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2024_11_05,
    ];

    /// The revisions of the modern era (per-request `_meta`), newest first.
    pub const MODERN: [ProtocolVersion; 1] = [ProtocolVersion::V2026_07_28];

    /// The newest revision `initialize` negotiates.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The date string, e.g. `"2025-11-25"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// Parses a date string; `None` for a revision this crate does not know.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// Whether this is a revision of the legacy era (negotiated by `initialize`).
    pub fn is_supported(self) -> bool {
        Self::SUPPORTED.contains(&self)
    }

    /// Whether this is a modern revision (no handshake; each request carries its `_meta`).
    pub fn is_modern(self) -> bool {
        Self::MODERN.contains(&self)
    }

    /// Whether this revision has `feature`.
    pub fn supports(self, feature: Feature) -> bool {
        use ProtocolVersion::*;
        let at_least = |v: ProtocolVersion| self >= v;
        match feature {
            Feature::Handshake => self <= V2025_11_25,
            Feature::Batching => self == V2025_03_26,
            Feature::CompletionsCapability
            | Feature::AudioContent
            | Feature::ToolAnnotations
            | Feature::ProgressMessage => at_least(V2025_03_26),
            Feature::Elicitation
            | Feature::StructuredContent
            | Feature::ResourceLinks
            | Feature::Titles
            | Feature::CompletionContext
            | Feature::ProtocolVersionHeader => at_least(V2025_06_18),
            Feature::Tasks => self == V2025_11_25,
            Feature::UrlElicitation => self == V2025_11_25,
            Feature::Icons
            | Feature::SamplingTools
            | Feature::ErrorWithoutId
            | Feature::ToolInputErrorsAsResults => at_least(V2025_11_25),
        }
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A version string this crate does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown protocol version {0:?}")]
pub struct UnknownVersion(pub String);

impl FromStr for ProtocolVersion {
    type Err = UnknownVersion;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s).ok_or_else(|| UnknownVersion(s.to_owned()))
    }
}

impl Serialize for ProtocolVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProtocolVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::parse(&s).ok_or_else(|| serde::de::Error::custom(UnknownVersion(s)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_and_order_by_date() {
        for v in ProtocolVersion::ALL {
            assert_eq!(ProtocolVersion::parse(v.as_str()), Some(v));
        }
        assert!(ProtocolVersion::V2024_11_05 < ProtocolVersion::V2025_11_25);
        assert_eq!(ProtocolVersion::parse("2025-13-01"), None);
    }

    #[test]
    fn jr_12_batching_only_in_2025_03_26() {
        let with: Vec<_> = ProtocolVersion::ALL
            .into_iter()
            .filter(|v| v.supports(Feature::Batching))
            .collect();
        assert_eq!(with, vec![ProtocolVersion::V2025_03_26]);
    }

    #[test]
    fn stateless_2026_has_no_handshake() {
        assert!(!ProtocolVersion::V2026_07_28.supports(Feature::Handshake));
        assert!(!ProtocolVersion::V2026_07_28.is_supported());
        assert!(ProtocolVersion::V2026_07_28.is_modern());
        assert!(
            ProtocolVersion::SUPPORTED
                .iter()
                .all(|v| v.supports(Feature::Handshake))
        );
    }
}
