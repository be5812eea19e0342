//! The server card (SEP-2127, an experimental extension; the draft of
//! `modelcontextprotocol/experimental-ext-server-card`): a static JSON document that says what a
//! remote server is and how to connect to it (identity, its Streamable HTTP endpoint, the
//! protocol revisions it serves), read by a client before it connects. Built from the server's
//! own metadata; the Streamable HTTP transport serves it (`HttpConfig::with_server_card`).
//!
//! As the draft says, a card does not enumerate primitives (tools, prompts, resources: the
//! protocol's list operations do) nor capabilities; so a public card never shows what a
//! server's listings would show only to an authorized client.

use serde_json::{Value, json};

use crate::server::Server;

/// The `$schema` a server card names (SEP-2127's draft: the `v1` family).
pub const SERVER_CARD_SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";

/// Longest card `description` (the schema's `maxLength`); a longer one is cut.
const SERVER_CARD_DESCRIPTION_CHARS: usize = 100;

/// Whether `name` is a card (and registry) name: reverse DNS, exactly one `/`
/// (`io.github.user/weather`), 3 to 200 characters.
pub fn is_server_card_name(name: &str) -> bool {
    let Some((ns, n)) = name.split_once('/') else {
        return false;
    };
    (3..=200).contains(&name.len())
        && !ns.is_empty()
        && !n.is_empty()
        && ns
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-')
}

impl Server {
    /// The server card, named by `serverInfo.name` when that is a card name (reverse DNS with
    /// one `/`, see [`is_server_card_name`]) and `local/NAME` otherwise (the name's other
    /// characters as `-`); [`Server::server_card_named`] names it explicitly.
    pub fn server_card(&self, endpoint_url: Option<&str>) -> Value {
        let name = &self.inner.info.name;
        if is_server_card_name(name) {
            return self.server_card_named(name, endpoint_url);
        }
        let local: String = name
            .chars()
            .take(190)
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        let local = if local.is_empty() {
            "server".into()
        } else {
            local
        };
        self.server_card_named(&format!("local/{local}"), endpoint_url)
    }

    /// The server card under the card name `name` (reverse DNS with one `/`, e.g.
    /// `io.github.user/weather`, the registry's name for the server): `serverInfo`'s version,
    /// title, description (else the instructions, else the title, cut to
    /// 100 characters), website and icons, and the endpoint as a
    /// `streamable-http` remote (when `endpoint_url` is given) with the protocol revisions
    /// served.
    pub fn server_card_named(&self, name: &str, endpoint_url: Option<&str>) -> Value {
        let inner = &self.inner;
        let info = &inner.info;
        let description = info
            .description
            .as_deref()
            .or(inner.instructions.as_deref())
            .or(info.title.as_deref())
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map_or_else(
                || format!("MCP server {} {}", info.name, info.version),
                str::to_owned,
            );
        let description: String = description
            .chars()
            .take(SERVER_CARD_DESCRIPTION_CHARS)
            .collect();
        let mut card = json!({
            "$schema": SERVER_CARD_SCHEMA,
            "name": name,
            "version": info.version,
            "description": description,
        });
        if let Some(t) = &info.title {
            card["title"] = json!(t);
        }
        if let Some(u) = &info.website_url {
            card["websiteUrl"] = json!(u);
        }
        if let Some(i) = &info.icons {
            card["icons"] = json!(i);
        }
        if let Some(url) = endpoint_url {
            let versions: Vec<&str> = inner
                .versions
                .iter()
                .chain(inner.modern_versions.iter())
                .map(|v| v.as_str())
                .collect();
            card["remotes"] = json!([{
                "type": "streamable-http",
                "url": url,
                "supportedProtocolVersions": versions,
            }]);
        }
        card
    }
}
