//! Where the demo's servers run. The client side of the demo is the same everywhere; only the
//! transport handed to `Client::connect` changes, so the demo shows the same sessions on any wire.

use std::future::Future;

use switchboard::client::{Client, ClientSession};
use switchboard::jsonrpc::{SessionConfig, memory};
use switchboard::server::Server;

use super::server::add_subtract;
use super::trace::DemoError;
use crate::Example;

/// Starts the demo's servers and connects the demo's client to them.
pub trait Host {
    /// The server side of one session: kept for the session, ended on drop.
    type Server: HostedServer;

    /// Starts `example`'s server (with the default session configuration) and connects `client`
    /// to it.
    fn connect(
        &self,
        example: Example,
        client: &Client,
    ) -> impl Future<Output = Result<(ClientSession, Self::Server), DemoError>>;
}

/// A running demo server, as far as the demo needs to act on it.
pub trait HostedServer {
    /// The operator's action of part one: register `subtract` on the running demo server.
    fn add_subtract(&self) -> impl Future<Output = Result<(), DemoError>>;
}

/// Both ends in this process, over the in-memory pair (JSON text, serialized and parsed).
#[derive(Debug, Clone, Copy, Default)]
pub struct InMemory;

impl Host for InMemory {
    type Server = Server;

    async fn connect(
        &self,
        example: Example,
        client: &Client,
    ) -> Result<(ClientSession, Server), DemoError> {
        let server = crate::build(example, SessionConfig::default()).map_err(DemoError::Server)?;
        let (client_end, server_end) = memory::pair();
        server.serve(server_end).map_err(DemoError::Server)?;
        let session = client
            .connect(client_end)
            .await
            .map_err(DemoError::Client)?;
        Ok((session, server))
    }
}

impl HostedServer for Server {
    async fn add_subtract(&self) -> Result<(), DemoError> {
        add_subtract(self).map_err(DemoError::Server)
    }
}
