//! The modern era (revision 2026-07-28): what the second front door of the same server works
//! with. The front door itself, which runs the server's route table, is the engine's
//! (`service::front`); nothing here reaches the engine, the handlers or the sessions.
//!
//! A connection's era is decided by what opens it (`era::ConnEra`, `[D26-120]`): `initialize`
//! opens a 2025-era session; a request whose `_meta` carries the protocol version opens a
//! modern connection, on which every request stands alone (`[D26-5]`). A Streamable HTTP
//! request routed to the modern era arrives on a connection of its own that is modern from the
//! start, with its `Mcp-*` headers ([`HttpFacts`]).
//!
//! Each modern request climbs the validation ladder (`[D26-12]`): envelope (-32602, `params`),
//! headers (-32020, `headers`), version (-32022), method (-32601, also for the methods this
//! revision removed); then the same handlers as in a 2025 session run, with a context that
//! answers their requests for client input from the request's `inputResponses` and `seal`ed
//! `requestState` (`mrtr`); what they return gets the members this revision adds (`finish`:
//! `resultType`, `_meta.serverInfo`, caching hints on cacheable results). `listen` keeps the
//! `subscriptions/listen` streams; `hub` and `tasks` are the tasks extension.
//!
//! Modules depend one way: `finish`, `headers`, `listen`, `params`, `seal` ← `hub` ← `mrtr` ←
//! `tasks`.

pub(crate) mod finish;
pub(crate) mod headers;
pub(crate) mod hub;
pub(crate) mod listen;
pub(crate) mod mrtr;
pub(crate) mod params;
pub(crate) mod seal;
pub(crate) mod tasks;

use switchboard_types::ServerCapabilities;
use switchboard_types::modern::{self as wire, CacheHints};

pub use headers::HttpFacts;
pub(crate) use mrtr::{Asked, ModernCall};

/// The server's capabilities as this revision has them: no `tasks`, the tasks extension
/// instead when tools may run as tasks (`[D26-137]`).
pub(crate) fn capabilities(caps: &ServerCapabilities) -> ServerCapabilities {
    let mut modern = caps.clone();
    modern.tasks = None;
    tasks::advertise(&mut modern, tasks::offered(caps));
    modern
}

/// The cache hints a server puts on its cacheable results unless a handler set its own.
pub(crate) const DEFAULT_CACHE_HINTS: CacheHints = CacheHints {
    ttl_ms: 0,
    cache_scope: wire::CacheScope::Private,
};

/// What a handler's ask found, for the context (see [`mrtr`]).
pub(crate) async fn ask<R: serde::de::DeserializeOwned>(
    call: &ModernCall,
    key: Option<&str>,
    request: wire::InputRequest,
) -> Option<R> {
    if call.task.is_running() {
        return tasks::ask(call, key, request).await;
    }
    match call.ask::<R>(key, request) {
        Asked::Answer(r) => Some(r),
        // The front door drops this future once the handler's poll ends.
        Asked::Suspend => std::future::pending().await,
        Asked::NotHere => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;
    use switchboard_types::Implementation;
    use switchboard_types::tools::{CallToolResult, TaskSupport, Tool};

    use serde_json::Value;
    use switchboard_types::methods;

    /// A listed tool carries only members of the 2026-07-28 `Tool`: 2025's `execution` stays in
    /// 2025 sessions.
    #[tokio::test]
    async fn modern_tools_list_drops_the_2025_execution_member() {
        let server = crate::Server::builder(Implementation::new("listing", "1"))
            .tool(
                Tool::new("maybe_task", json!({"type": "object"}))
                    .with_task_support(TaskSupport::Optional),
                |_| async { Ok(CallToolResult::text("done")) },
            )
            .build()
            .unwrap();
        let (ours, mut theirs) = switchboard_jsonrpc::memory::pair();
        server.serve(ours).unwrap();
        let list = json!({"jsonrpc": "2.0", "id": 1, "method": methods::TOOLS_LIST,
            "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}}});
        theirs.send_text(list.to_string()).await.unwrap();
        let reply: Value = serde_json::from_str(&theirs.recv_text().await.unwrap()).unwrap();
        let tool = &reply["result"]["tools"][0];
        assert_eq!(tool["name"], "maybe_task", "{reply}");
        assert!(tool.get("execution").is_none(), "{reply}");
        assert_eq!(reply["result"]["resultType"], "complete");
    }
}
