//! Multi round-trip requests (`[D26-34]`..`[D26-41]`): how the same handler code that sends
//! server-to-client requests in a 2025 session asks for client input in 2026-07-28.
//!
//! A modern request runs its handler with an [`InputRound`]: the answers the client sent with
//! this round (`inputResponses`) plus those carried over in the sealed `requestState`. When the
//! handler asks for input (`Context::elicit`, `create_message`, `list_roots`), the round looks the
//! key up; an answer that is there and reads as the expected result is returned at once. One
//! that is not there is recorded and the ask never completes: [`Suspendable`] notices after the
//! handler's poll, drops the handler, and the request is answered `input_required` with every
//! input asked for in that poll and a new sealed state holding the answers used so far. The
//! client retries; the handler runs again from the start and this time gets further.
//!
//! An ask the request's capabilities do not cover is not sent (`[D26-41]`): the request is
//! answered -32021 naming the capability (`[D26-15]`).

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll, Waker};

use serde::de::DeserializeOwned;
use serde_json::Value;
use switchboard_types::ClientCapabilities;
use switchboard_types::modern::{InputRequest, RequestEnvelope};

use crate::policy::AllowList;

/// What one round of a modern request knows and asked for.
#[derive(Debug, Default)]
pub(crate) struct InputRound {
    /// Answers by key: carried over in the state, then this round's (which win).
    answers: BTreeMap<String, Value>,
    /// Keys the handler read an answer for, in this run.
    used: BTreeSet<String>,
    /// Inputs asked for and not answered, by key.
    asked: BTreeMap<String, InputRequest>,
    /// Capabilities an ask needed that the request did not declare.
    missing: Option<Box<ClientCapabilities>>,
    /// How many inputs of each method were asked without a key, for the generated keys.
    unnamed: BTreeMap<&'static str, usize>,
    /// The waker of the request's front door, woken when an ask is recorded.
    waker: Option<Waker>,
}

/// The modern facts of one request, shared by its front door and its handler's context.
#[derive(Debug)]
pub(crate) struct ModernCall {
    /// The request's envelope.
    pub(crate) envelope: Arc<RequestEnvelope>,
    /// Whether the method may answer `input_required` (`[D26-34]`).
    pub(crate) may_require_input: bool,
    /// The tools this request's client may see and call (the server's policy, applied to the
    /// client this request names).
    pub(crate) allow: AllowList,
    pub(crate) round: Mutex<InputRound>,
    /// Whether and how the request may become a task (the tasks extension).
    pub(crate) task: super::hub::TaskSlot,
    /// Set when the handler's result was written with the members this revision adds
    /// ([`super::finish::ResultMembers::written`]): the front door does not add them again.
    pub(crate) written: AtomicBool,
}

/// What an ask found.
pub(crate) enum Asked<R> {
    /// The answer.
    Answer(R),
    /// None yet: the ask is recorded and the handler must wait (forever: it will be dropped).
    Suspend,
    /// The method cannot ask for input: the handler gets an error.
    NotHere,
}

impl ModernCall {
    pub(crate) fn new(
        envelope: Arc<RequestEnvelope>,
        may_require_input: bool,
        answers: BTreeMap<String, Value>,
        allow: AllowList,
    ) -> Self {
        ModernCall {
            envelope,
            may_require_input,
            allow,
            round: Mutex::new(InputRound {
                answers,
                ..InputRound::default()
            }),
            task: super::hub::TaskSlot::default(),
            written: AtomicBool::new(false),
        }
    }

    /// The capabilities this request declared.
    pub(crate) fn capabilities(&self) -> &ClientCapabilities {
        &self.envelope.client_capabilities
    }

    /// Looks up the answer to `request` under `key` (a generated one when `None`).
    pub(crate) fn ask<R: DeserializeOwned>(
        &self,
        key: Option<&str>,
        request: InputRequest,
    ) -> Asked<R> {
        let Ok(mut round) = self.round.lock() else {
            return Asked::NotHere;
        };
        if !request.allowed_by(self.capabilities()) {
            let needed = request.required_capability();
            round.missing.get_or_insert_with(|| Box::new(needed));
            wake(&mut round);
            return Asked::Suspend;
        }
        if !self.may_require_input {
            return Asked::NotHere;
        }
        let key = match key {
            Some(k) => k.to_owned(),
            None => {
                let n = round.unnamed.entry(request.method()).or_insert(0);
                *n += 1;
                format!("{}-{n}", request.method().replace('/', "-"))
            }
        };
        if let Some(answer) = round.answers.get(&key) {
            // An answer of the wrong shape is asked for again (`[D26-40]`: the server may ask
            // again on a later round), never passed on to the handler.
            if let Ok(r) = serde_json::from_value::<R>(answer.clone()) {
                round.used.insert(key);
                return Asked::Answer(r);
            }
        }
        round.asked.insert(key, request);
        wake(&mut round);
        Asked::Suspend
    }

    /// What the handler asked for when it stopped: the missing capability first.
    pub(crate) fn outcome(&self) -> Option<Stopped> {
        let mut round = self.round.lock().ok()?;
        if let Some(missing) = round.missing.take() {
            return Some(Stopped::MissingCapability(missing));
        }
        if round.asked.is_empty() {
            return None;
        }
        let asked = std::mem::take(&mut round.asked);
        let used = std::mem::take(&mut round.used);
        let carried = used
            .into_iter()
            .filter_map(|k| round.answers.get(&k).map(|v| (k, v.clone())))
            .collect();
        Some(Stopped::InputRequired { asked, carried })
    }

    fn set_waker(&self, waker: &Waker) {
        if let Ok(mut round) = self.round.lock()
            && !round.waker.as_ref().is_some_and(|w| w.will_wake(waker))
        {
            round.waker = Some(waker.clone());
        }
    }
}

fn wake(round: &mut InputRound) {
    if let Some(w) = round.waker.take() {
        w.wake();
    }
}

/// Why a handler was stopped before it finished.
#[derive(Debug)]
pub(crate) enum Stopped {
    /// It asked for input the client must provide first.
    InputRequired {
        /// The inputs asked for.
        asked: BTreeMap<String, InputRequest>,
        /// The answers it used, to carry over in the new state.
        carried: BTreeMap<String, Value>,
    },
    /// It asked for input the request's capabilities do not cover.
    MissingCapability(Box<ClientCapabilities>),
    /// It waits for something else while it may become a task: the rest runs as one.
    Working,
}

/// A handler's future that ends early when the handler waits for input it asked for.
pub(crate) struct Suspendable<F> {
    fut: Pin<Box<F>>,
    call: Arc<ModernCall>,
}

impl<F> Suspendable<F> {
    pub(crate) fn new(fut: F, call: Arc<ModernCall>) -> Self {
        Suspendable {
            fut: Box::pin(fut),
            call,
        }
    }

    /// The handler's future, to run on after [`Stopped::Working`].
    pub(crate) fn into_inner(self) -> Pin<Box<F>> {
        self.fut
    }
}

impl<F: Future> Future for Suspendable<F> {
    type Output = Result<F::Output, Stopped>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        self.call.set_waker(cx.waker());
        if let Poll::Ready(out) = self.fut.as_mut().poll(cx) {
            // Finished: what it asked for and did not wait on does not matter.
            return Poll::Ready(Ok(out));
        }
        // Every ask made during this poll is recorded now (a join of several asks records all).
        match self.call.outcome() {
            Some(stopped) => Poll::Ready(Err(stopped)),
            None if self.call.task.starts_on_wait() => Poll::Ready(Err(Stopped::Working)),
            None => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use switchboard_types::roots::ListRootsResult;

    fn call(caps: serde_json::Value, answers: serde_json::Value) -> Arc<ModernCall> {
        let caps: ClientCapabilities = serde_json::from_value(caps).unwrap();
        let answers: BTreeMap<String, Value> = serde_json::from_value(answers).unwrap();
        Arc::new(ModernCall::new(
            Arc::new(RequestEnvelope::new("2026-07-28", caps)),
            true,
            answers,
            AllowList::All,
        ))
    }

    async fn roots(call: &ModernCall, key: &str) -> Option<ListRootsResult> {
        match call.ask::<ListRootsResult>(Some(key), InputRequest::ListRoots(Default::default())) {
            Asked::Answer(r) => Some(r),
            Asked::Suspend => std::future::pending().await,
            Asked::NotHere => None,
        }
    }

    #[tokio::test]
    async fn d26_41_an_undeclared_capability_stops_the_handler_with_it() {
        let c = call(serde_json::json!({}), serde_json::json!({}));
        let out = Suspendable::new(roots(&c, "r"), c.clone()).await;
        match out {
            Err(Stopped::MissingCapability(m)) => assert!(m.roots.is_some()),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn asks_made_together_are_asked_together_and_answers_carry_over() {
        let c = call(
            serde_json::json!({"roots": {}}),
            serde_json::json!({"a": {"roots": []}}),
        );
        let both = async { tokio::join!(roots(&c, "a"), roots(&c, "b")) };
        match Suspendable::new(both, c.clone()).await {
            Err(Stopped::InputRequired { asked, carried }) => {
                assert_eq!(asked.keys().collect::<Vec<_>>(), ["b"]);
                assert_eq!(carried.keys().collect::<Vec<_>>(), ["a"]);
            }
            other => panic!("{other:?}"),
        }
        let c = call(
            serde_json::json!({"roots": {}}),
            serde_json::json!({"a": {"roots": []}, "b": {"roots": [{"uri": "file:///x"}]}}),
        );
        let both = async { tokio::join!(roots(&c, "a"), roots(&c, "b")) };
        let (a, b) = Suspendable::new(both, c.clone()).await.unwrap();
        assert!(a.unwrap().roots.is_empty());
        assert_eq!(b.unwrap().roots.len(), 1);
    }

    #[tokio::test]
    async fn an_answer_of_the_wrong_shape_is_asked_again() {
        let c = call(
            serde_json::json!({"roots": {}}),
            serde_json::json!({"a": 12345}),
        );
        match Suspendable::new(roots(&c, "a"), c.clone()).await {
            Err(Stopped::InputRequired { asked, carried }) => {
                assert!(asked.contains_key("a"));
                assert!(carried.is_empty());
            }
            other => panic!("{other:?}"),
        }
    }
}
