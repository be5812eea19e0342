//! The gateway's upstreams as the front sees them: which upstream a tool name, prompt name or
//! URI belongs to (by what it last listed, else by its prefix), whether that upstream is up,
//! down, or was removed from the configuration.

use std::collections::HashSet;
use std::sync::{Arc, RwLock};

use switchboard_client::CancellationToken;

use crate::config::UpstreamConfig;
use crate::mirror::{Kind, Link, Mirror, Owners};
use crate::names;

/// Where a restart's outcome is sent: `Ok` once the new session serves, else why not.
pub(crate) type RestartReply = tokio::sync::oneshot::Sender<Result<(), String>>;

/// One configured upstream: its mirror and the token that stops its supervisor.
pub(crate) struct Entry {
    pub(crate) mirror: Arc<Mirror>,
    pub(crate) stop: CancellationToken,
    pub(crate) config: UpstreamConfig,
    /// Asks its supervisor for a restart in place ([`crate::Gateway::restart`]).
    pub(crate) restart: tokio::sync::mpsc::Sender<RestartReply>,
}

impl Entry {
    pub(crate) fn name(&self) -> &str {
        &self.mirror.link.name
    }
}

/// Where an item's upstream stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum State {
    /// Connected.
    Up,
    /// Configured, not connected (starting, or restarting after it went down).
    Down,
    /// Removed from the configuration by a reload.
    Departed,
}

/// The upstream an item belongs to.
#[derive(Debug, Clone)]
pub(crate) struct Owner {
    pub(crate) name: String,
    pub(crate) state: State,
}

impl Owner {
    /// The `isError` text (or error message) for a use of an item whose upstream is not up;
    /// `None` when it is up.
    pub(crate) fn unavailable(&self) -> Option<String> {
        match self.state {
            State::Up => None,
            State::Down => Some(format!(
                "upstream `{}` is down (the gateway is connecting to it again); try again later",
                self.name
            )),
            State::Departed => Some(format!(
                "upstream `{}` was removed from the gateway's configuration",
                self.name
            )),
        }
    }
}

/// The configured upstreams, and the names of those a reload removed.
pub(crate) struct Registry {
    pub(crate) separator: String,
    /// Which upstream last listed each key (every mirror keeps its own keys in it).
    pub(crate) owners: Arc<Owners>,
    entries: RwLock<Vec<Entry>>,
    departed: RwLock<HashSet<String>>,
}

impl Registry {
    pub(crate) fn new(separator: String) -> Self {
        Registry {
            separator,
            owners: Arc::default(),
            entries: RwLock::default(),
            departed: RwLock::default(),
        }
    }

    /// Adds an upstream (no longer departed).
    pub(crate) fn add(&self, entry: Entry) {
        if let Ok(mut d) = self.departed.write() {
            d.remove(entry.name());
        }
        if let Ok(mut e) = self.entries.write() {
            e.push(entry);
        }
    }

    /// Removes upstream `name`: its supervisor is stopped (which takes its items out of the
    /// lists) and its name is remembered as departed.
    pub(crate) fn remove(&self, name: &str) -> bool {
        let Ok(mut entries) = self.entries.write() else {
            return false;
        };
        let Some(i) = entries.iter().position(|e| e.name() == name) else {
            return false;
        };
        let entry = entries.remove(i);
        entry.stop.cancel();
        entry.mirror.retire();
        if let Ok(mut d) = self.departed.write() {
            d.insert(name.to_owned());
        }
        true
    }

    /// The configured upstreams' names.
    pub(crate) fn names(&self) -> Vec<String> {
        self.entries
            .read()
            .map(|e| e.iter().map(|e| e.name().to_owned()).collect())
            .unwrap_or_default()
    }

    /// The configuration of upstream `name`.
    pub(crate) fn config_of(&self, name: &str) -> Option<UpstreamConfig> {
        let entries = self.entries.read().ok()?;
        entries
            .iter()
            .find(|e| e.name() == name)
            .map(|e| e.config.clone())
    }

    /// Where restarts of upstream `name` are asked for.
    pub(crate) fn restarter(&self, name: &str) -> Option<tokio::sync::mpsc::Sender<RestartReply>> {
        let entries = self.entries.read().ok()?;
        entries
            .iter()
            .find(|e| e.name() == name)
            .map(|e| e.restart.clone())
    }

    /// The mirror of upstream `name`.
    pub(crate) fn mirror(&self, name: &str) -> Option<Arc<Mirror>> {
        let entries = self.entries.read().ok()?;
        entries
            .iter()
            .find(|e| e.name() == name)
            .map(|e| e.mirror.clone())
    }

    /// Every configured upstream's mirror, in configuration order.
    pub(crate) fn mirrors(&self) -> Vec<Arc<Mirror>> {
        self.entries
            .read()
            .map(|e| e.iter().map(|e| e.mirror.clone()).collect())
            .unwrap_or_default()
    }

    /// Stops every upstream.
    pub(crate) fn stop_all(&self) {
        if let Ok(entries) = self.entries.read() {
            for e in entries.iter() {
                e.stop.cancel();
            }
        }
    }

    /// The upstream `key` (a tool or prompt name, a resource URI or URI template) of `kind`
    /// belongs to: the one whose last listing had it, else the one whose prefix it carries
    /// (the longest such), configured or departed. `None`: no upstream's (or one mounted
    /// without a prefix that never listed it).
    pub(crate) fn owner(&self, kind: Kind, key: &str) -> Option<Owner> {
        let state = |l: &Link| if l.is_up() { State::Up } else { State::Down };
        let owner = |l: &Link| Owner {
            name: l.name.clone(),
            state: state(l),
        };
        let entries = self.entries.read().ok()?;
        let listed = self.owners.with(kind, key, |links| match links {
            [] => None,
            [only] => Some(owner(only)),
            // Upstreams mounted without a prefix listing the same name: the first configured.
            many => entries
                .iter()
                .find(|e| many.iter().any(|l| Arc::ptr_eq(l, &e.mirror.link)))
                .map(|e| owner(&e.mirror.link)),
        });
        if listed.is_some() {
            return listed;
        }
        let carries = |name: &str| {
            !name.is_empty()
                && match kind {
                    Kind::Tools | Kind::Prompts => key
                        .strip_prefix(name)
                        .is_some_and(|rest| rest.starts_with(&self.separator)),
                    Kind::Resources | Kind::Templates => names::upstream_uri(name, key).is_some(),
                }
        };
        let configured = entries
            .iter()
            .filter(|e| carries(e.name()))
            .max_by_key(|e| e.name().len())
            .map(|e| owner(&e.mirror.link));
        if configured.is_some() {
            return configured;
        }
        let departed = self.departed.read().ok()?;
        departed
            .iter()
            .filter(|n| carries(n))
            .max_by_key(|n| n.len())
            .map(|n| Owner {
                name: n.clone(),
                state: State::Departed,
            })
    }
}
