//! The server card (SEP-2127, an experimental extension): a static JSON description of the
//! server (identity, capabilities, its remote endpoint, the tools, prompts and resources it
//! registered) that a client reads before connecting. Built from the server's own metadata; the
//! Streamable HTTP transport serves it (`HttpConfig::with_server_card`).

use serde_json::{Value, json};

use crate::server::Server;

/// The `$schema` a server card names (SEP-2127's draft).
pub const SERVER_CARD_SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";

impl Server {
    /// The server card: `serverInfo`'s name, version, title, description, website and icons,
    /// the capabilities, the endpoint as a `streamable-http` remote (when `endpoint_url` is
    /// given) with the protocol revisions served, and every registered tool (none with a tool policy,
    /// which decides per client), prompt, resource and resource template. A card is public: a server
    /// whose primitives are not for everyone's eyes does not serve one (it is off by default).
    pub fn server_card(&self, endpoint_url: Option<&str>) -> Value {
        let inner = &self.inner;
        let info = &inner.info;
        let mut card = json!({
            "$schema": SERVER_CARD_SCHEMA,
            "name": info.name,
            "version": info.version,
            "capabilities": inner.capabilities,
        });
        if let Some(t) = &info.title {
            card["title"] = json!(t);
        }
        if let Some(d) = info.description.as_ref().or(inner.instructions.as_ref()) {
            card["description"] = json!(d);
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
        // A tool policy decides per client which tools it sees: the card, read by anyone, lists
        // none then.
        if let (Ok(tools), None) = (inner.tools.read(), &inner.policy) {
            let listed: Vec<_> = tools.iter().map(|t| t.tool.clone()).collect();
            card["tools"] = json!(listed);
        }
        if let Ok(prompts) = inner.prompts.read() {
            card["prompts"] = json!(prompts.list());
        }
        if let Ok(resources) = inner.resources.read() {
            card["resources"] = json!(resources.resources());
            card["resourceTemplates"] = json!(resources.templates());
        }
        card
    }
}
