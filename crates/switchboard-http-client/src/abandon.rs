//! Requests our own caller gave up on (its timeout passed, it cancelled, its future was dropped):
//! the engine says so through `TransportControl::request_abandoned`, with the request id only.
//! A request POST whose every request was given up stops: its answer (headers, JSON body or SSE
//! stream, resumptions included) is dropped and its slot freed, so that callers who give up can
//! never wedge the `max_concurrent_posts` slots.
//!
//! Each request POST registers its ids while it waits for a slot and until it ends. An id given
//! up before its POST registered it (the frame was still queued in the engine) is remembered in
//! a small bounded list, so that its POST is not even sent; ids are never reused in a session,
//! so a remembered id that never comes only takes its place until pushed out.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use switchboard_types::RequestId;
use tokio_util::sync::CancellationToken;

/// How many ids given up before their POST was registered are remembered.
pub(crate) const EARLY_ABANDONED: usize = 1024;

/// One request POST that can be given up.
#[derive(Debug)]
pub(crate) struct PostWatch {
    /// Cancelled once every request of the POST has been given up.
    pub(crate) given_up: CancellationToken,
    /// Requests of the POST not given up yet.
    left: AtomicUsize,
}

/// The request POSTs in flight by request id, and the ids given up early.
#[derive(Debug, Default)]
pub(crate) struct Abandons {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    by_request: HashMap<RequestId, Arc<PostWatch>>,
    early: VecDeque<RequestId>,
}

impl Abandons {
    /// Registers a request POST carrying `ids`. Its watch is already cancelled when each of its
    /// requests was given up before.
    pub(crate) fn register(&self, ids: &[RequestId]) -> Arc<PostWatch> {
        let watch = Arc::new(PostWatch {
            given_up: CancellationToken::new(),
            left: AtomicUsize::new(0),
        });
        let Ok(mut inner) = self.inner.lock() else {
            return watch;
        };
        let mut left = 0;
        for id in ids {
            if let Some(i) = inner.early.iter().position(|e| e == id) {
                inner.early.remove(i);
            } else {
                inner.by_request.insert(id.clone(), watch.clone());
                left += 1;
            }
        }
        watch.left.store(left, Ordering::Release);
        if left == 0 && !ids.is_empty() {
            watch.given_up.cancel();
        }
        watch
    }

    /// The caller of request `id` gave up on it.
    pub(crate) fn abandon(&self, id: &RequestId) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        match inner.by_request.remove(id) {
            Some(watch) => {
                if watch.left.fetch_sub(1, Ordering::AcqRel) == 1 {
                    watch.given_up.cancel();
                }
            }
            None => {
                if inner.early.len() == EARLY_ABANDONED {
                    inner.early.pop_front();
                }
                inner.early.push_back(id.clone());
            }
        }
    }

    /// The POST of `watch`, carrying `ids`, has ended: its ids are forgotten.
    pub(crate) fn finish(&self, watch: &Arc<PostWatch>, ids: &[RequestId]) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        for id in ids {
            if inner
                .by_request
                .get(id)
                .is_some_and(|w| Arc::ptr_eq(w, watch))
            {
                inner.by_request.remove(id);
            }
        }
    }

    /// Request POSTs registered (ids counted), and ids remembered as given up early.
    #[cfg(test)]
    fn sizes(&self) -> (usize, usize) {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        (inner.by_request.len(), inner.early.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(ns: &[i64]) -> Vec<RequestId> {
        ns.iter().map(|&n| RequestId::int(n)).collect()
    }

    #[test]
    fn a_post_is_given_up_once_all_its_requests_are() {
        let a = Abandons::default();
        let batch = ids(&[1, 2]);
        let w = a.register(&batch);
        a.abandon(&RequestId::int(1));
        assert!(!w.given_up.is_cancelled(), "one of two is still awaited");
        a.abandon(&RequestId::int(2));
        assert!(w.given_up.is_cancelled());
        a.finish(&w, &batch);
        assert_eq!(a.sizes(), (0, 0));
    }

    #[test]
    fn an_id_given_up_before_its_post_stops_it_before_it_is_sent() {
        let a = Abandons::default();
        a.abandon(&RequestId::int(7));
        let w = a.register(&ids(&[7]));
        assert!(w.given_up.is_cancelled());
        assert_eq!(a.sizes(), (0, 0), "the early id is used up");
    }

    #[test]
    fn finished_posts_and_early_ids_are_bounded() {
        let a = Abandons::default();
        for n in 0..10_000 {
            let one = ids(&[n]);
            let w = a.register(&one);
            a.finish(&w, &one);
        }
        assert_eq!(a.sizes(), (0, 0));
        // Answered requests whose callers gave up at the same moment: never matched.
        for n in 0..10_000 {
            a.abandon(&RequestId::int(n));
        }
        assert_eq!(a.sizes(), (0, EARLY_ABANDONED));
    }
}
