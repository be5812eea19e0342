//! What per-key state is kept per, and the bounded map that keeps it.

use std::collections::HashMap;
use std::sync::Arc;

use switchboard_jsonrpc::Facts;

/// Most keys a per-session or per-subject layer keeps state for. Past it, keys with no request
/// in flight are forgotten (oldest use first); when every key is busy, a request with a new key
/// is refused as over the limit.
pub const MAX_KEYS: usize = 10_000;

/// What a limit is kept per.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Per {
    /// One limit for everything this side handles.
    All,
    /// Per session: the session id, else the connection (a stdio connection), else (a
    /// 2026-07-28 request, which has no session) the subject, else one shared key.
    Session,
    /// Per authorization subject; requests without one share one key.
    Subject,
}

impl Per {
    /// The key of a message with these facts.
    pub(crate) fn key(self, facts: &Facts) -> Arc<str> {
        match self {
            Per::All => Arc::from(""),
            Per::Session => match (&facts.session_id, facts.connection, &facts.subject) {
                (Some(id), _, _) => Arc::from(format!("s:{id}")),
                (None, Some(c), _) if facts.protocol_version.is_none_or(|v| !v.is_modern()) => {
                    Arc::from(format!("c:{c}"))
                }
                (_, _, Some(sub)) => Arc::from(format!("u:{sub}")),
                _ => Arc::from("-"),
            },
            Per::Subject => match &facts.subject {
                Some(sub) => Arc::from(format!("u:{sub}")),
                None => Arc::from("-"),
            },
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Per::All => "all",
            Per::Session => "session",
            Per::Subject => "subject",
        }
    }
}

/// Per-key state, at most `max` keys; `idle` says which entries may be forgotten.
pub(crate) struct KeyedMap<V> {
    map: HashMap<Arc<str>, (u64, V)>,
    tick: u64,
    max: usize,
}

impl<V> KeyedMap<V> {
    pub(crate) fn new(max: usize) -> Self {
        KeyedMap {
            map: HashMap::new(),
            tick: 0,
            max: max.max(1),
        }
    }

    /// The entry for `key`, made with `new` when absent. `None` when the map is full and no
    /// entry is `idle`.
    pub(crate) fn entry(
        &mut self,
        key: &Arc<str>,
        new: impl FnOnce() -> V,
        idle: impl Fn(&V) -> bool,
    ) -> Option<&mut V> {
        self.tick += 1;
        let tick = self.tick;
        if !self.map.contains_key(key) {
            if self.map.len() >= self.max {
                let oldest = self
                    .map
                    .iter()
                    .filter(|(_, (_, v))| idle(v))
                    .min_by_key(|(_, (t, _))| *t)
                    .map(|(k, _)| k.clone())?;
                self.map.remove(&oldest);
            }
            self.map.insert(key.clone(), (tick, new()));
        }
        let slot = self.map.get_mut(key)?;
        slot.0 = tick;
        Some(&mut slot.1)
    }

    pub(crate) fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        self.map.get_mut(key).map(|(_, v)| v)
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_types::ProtocolVersion;

    fn caller(f: Facts, sub: &str) -> Facts {
        f.with_caller(Some(Arc::from(sub)), None, Arc::from(Vec::new()))
    }

    #[test]
    fn a_subject_limit_keys_by_subject_across_sessions_and_anonymous_callers_share_one() {
        let a1 = caller(Facts::new("server").with_session_id("s1"), "alice");
        let a2 = caller(Facts::new("server").with_session_id("s2"), "alice");
        let b = caller(Facts::new("server").with_session_id("s1"), "bob");
        assert_eq!(Per::Subject.key(&a1), Per::Subject.key(&a2));
        assert_ne!(Per::Subject.key(&a1), Per::Subject.key(&b));
        let anon1 = Facts::new("server").with_connection(1);
        let anon2 = Facts::new("server").with_connection(2);
        assert_eq!(Per::Subject.key(&anon1), Per::Subject.key(&anon2));
    }

    #[test]
    fn a_session_limit_keys_by_session_then_connection_then_subject_for_modern_requests() {
        let s1 = caller(Facts::new("server").with_session_id("s1"), "alice");
        let s2 = caller(Facts::new("server").with_session_id("s2"), "alice");
        assert_ne!(Per::Session.key(&s1), Per::Session.key(&s2));
        let c1 = Facts::new("server").with_connection(1);
        let c2 = Facts::new("server").with_connection(2);
        assert_ne!(
            Per::Session.key(&c1),
            Per::Session.key(&c2),
            "stdio connections"
        );
        // 2026-07-28: each request is a connection of its own; the subject is the session.
        let m = |c, sub| {
            caller(
                Facts::new("server")
                    .with_connection(c)
                    .with_protocol_version(Some(ProtocolVersion::V2026_07_28)),
                sub,
            )
        };
        assert_eq!(
            Per::Session.key(&m(1, "alice")),
            Per::Session.key(&m(2, "alice"))
        );
        assert_ne!(
            Per::Session.key(&m(1, "alice")),
            Per::Session.key(&m(1, "bob"))
        );
        assert_eq!(Per::All.key(&s1), Per::All.key(&c2));
    }

    #[test]
    fn a_full_map_forgets_the_oldest_idle_key_and_refuses_when_all_are_busy() {
        let mut m: KeyedMap<u32> = KeyedMap::new(2);
        let (a, b, c) = (Arc::from("a"), Arc::from("b"), Arc::from("c"));
        *m.entry(&a, || 0, |v| *v == 0).unwrap() = 1; // busy
        m.entry(&b, || 0, |v| *v == 0).unwrap(); // idle
        assert!(
            m.entry(&c, || 0, |v| *v == 0).is_some(),
            "b forgotten for c"
        );
        assert_eq!(m.len(), 2);
        assert!(m.get_mut("b").is_none());
        *m.get_mut("c").unwrap() = 1;
        assert!(m.entry(&b, || 0, |v| *v == 0).is_none(), "every key busy");
    }
}
