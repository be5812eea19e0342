//! [`Queue`]: a bounded, multi-producer single-consumer async queue whose storage grows on demand
//! and is given back when a burst has drained.
//!
//! An idle session must cost little (DESIGN-NOTES 6): a `tokio::sync::mpsc` channel allocates its
//! first block of 32 slots up front (about 2.5 KiB for an outbound frame), in every session, used
//! or not. This queue allocates nothing until the first push, keeps a few slots while items
//! keep coming, returns a grown buffer once it is empty again, and holds no storage at all
//! while its consumer waits on it empty (an idle session). One uncontended lock per push and
//! per pop; [`Queue::drain_into`] takes a whole batch under one lock.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Mutex;

use tokio::sync::Notify;

/// Capacity kept once the queue is empty again; more is given back.
const KEEP_CAPACITY: usize = 16;

/// Why a push failed; the item is handed back.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum PushError<T> {
    /// The queue holds its bound of items.
    Full(T),
    /// The queue was closed.
    Closed(T),
}

/// A bounded MPSC queue (see the module docs).
pub struct Queue<T> {
    state: Mutex<State<T>>,
    /// Signalled when an item arrives or the queue closes (one consumer).
    readable: Notify,
    /// Signalled when room appears or the queue closes.
    writable: Notify,
    bound: usize,
}

struct State<T> {
    items: VecDeque<T>,
    closed: bool,
}

impl<T> fmt::Debug for Queue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Queue")
            .field("len", &self.len())
            .field("bound", &self.bound)
            .finish()
    }
}

impl<T> Queue<T> {
    /// An empty queue holding at most `bound` items (at least 1). Allocates nothing.
    pub fn new(bound: usize) -> Self {
        Queue {
            state: Mutex::new(State {
                items: VecDeque::new(),
                closed: false,
            }),
            readable: Notify::new(),
            writable: Notify::new(),
            bound: bound.max(1),
        }
    }

    /// How many items wait.
    pub fn len(&self) -> usize {
        self.state.lock().map(|s| s.items.len()).unwrap_or(0)
    }

    /// Whether no item waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Pushes without waiting (the engine's outbound queue; other users wait with
    /// [`Queue::push`]).
    ///
    /// # Errors
    /// [`PushError::Full`] at the bound, [`PushError::Closed`] after [`Queue::close`].
    pub(crate) fn try_push(&self, item: T) -> Result<(), PushError<T>> {
        {
            let Ok(mut s) = self.state.lock() else {
                return Err(PushError::Closed(item));
            };
            if s.closed {
                return Err(PushError::Closed(item));
            }
            if s.items.len() >= self.bound {
                return Err(PushError::Full(item));
            }
            s.items.push_back(item);
        }
        self.readable.notify_one();
        Ok(())
    }

    /// Pushes, waiting for room while the queue is full.
    ///
    /// # Errors
    /// The item back when the queue is (or gets) closed.
    pub async fn push(&self, mut item: T) -> Result<(), T> {
        loop {
            let room = self.writable.notified();
            match self.try_push(item) {
                Ok(()) => return Ok(()),
                Err(PushError::Closed(back)) => return Err(back),
                Err(PushError::Full(back)) => item = back,
            }
            room.await;
        }
    }

    /// Pops without waiting.
    pub fn try_pop(&self) -> Option<T> {
        let item = {
            let mut s = self.state.lock().ok()?;
            let item = s.items.pop_front();
            Self::give_back(&mut s);
            item
        };
        if item.is_some() {
            self.writable.notify_one();
        }
        item
    }

    /// The next item, waiting for one; `None` once the queue is closed and empty.
    pub async fn pop(&self) -> Option<T> {
        loop {
            let arrived = self.readable.notified();
            {
                let mut s = self.state.lock().ok()?;
                if let Some(item) = s.items.pop_front() {
                    Self::give_back(&mut s);
                    drop(s);
                    self.writable.notify_one();
                    return Some(item);
                }
                if s.closed {
                    return None;
                }
                Self::release(&mut s);
            }
            arrived.await;
        }
    }

    /// Waits for at least one item, then moves up to `max` waiting items (at least 1) into `out`
    /// under one lock; returns how many, 0 once the queue is closed and empty.
    pub async fn pop_into(&self, out: &mut Vec<T>, max: usize) -> usize {
        loop {
            let arrived = self.readable.notified();
            let n = self.drain_into(out, max.max(1));
            if n > 0 || self.is_closed() {
                return n;
            }
            if let Ok(mut s) = self.state.lock() {
                Self::release(&mut s);
            }
            arrived.await;
        }
    }

    /// Moves up to `max` waiting items into `out`, under one lock; returns how many.
    pub fn drain_into(&self, out: &mut Vec<T>, max: usize) -> usize {
        let n = {
            let Ok(mut s) = self.state.lock() else {
                return 0;
            };
            let n = s.items.len().min(max);
            out.extend(s.items.drain(..n));
            Self::give_back(&mut s);
            n
        };
        for _ in 0..n {
            self.writable.notify_one();
        }
        n
    }

    /// Closes the queue: pushes fail from now on; what waits can still be popped. Wakes every
    /// waiter.
    pub fn close(&self) {
        if let Ok(mut s) = self.state.lock() {
            s.closed = true;
        }
        self.readable.notify_one();
        self.writable.notify_waiters();
    }

    /// Whether [`Queue::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.state.lock().map(|s| s.closed).unwrap_or(true)
    }

    /// After a burst: an empty queue keeps only a little capacity.
    /// Frees the storage of an empty queue: its consumer is about to wait, so the session is
    /// quiet and its next item may be long in coming.
    fn release(s: &mut State<T>) {
        if s.items.is_empty() && s.items.capacity() > 0 {
            s.items = VecDeque::new();
        }
    }

    fn give_back(s: &mut State<T>) {
        if s.items.is_empty() && s.items.capacity() > KEEP_CAPACITY {
            s.items.shrink_to(KEEP_CAPACITY);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn items_come_out_in_order_and_the_bound_holds() {
        let q = Queue::new(2);
        q.try_push(1).unwrap();
        q.try_push(2).unwrap();
        assert_eq!(q.try_push(3), Err(PushError::Full(3)));
        assert_eq!(q.pop().await, Some(1));
        q.try_push(3).unwrap();
        let mut out = Vec::new();
        assert_eq!(q.drain_into(&mut out, 10), 2);
        assert_eq!(out, [2, 3]);
        assert!(q.try_pop().is_none());
    }

    #[tokio::test]
    async fn a_full_queue_makes_push_wait_until_room_appears() {
        let q = Arc::new(Queue::new(1));
        q.try_push(0).unwrap();
        let q2 = q.clone();
        let waiting = tokio::spawn(async move { q2.push(1).await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "push waits while full");
        assert_eq!(q.pop().await, Some(0));
        tokio::time::timeout(Duration::from_secs(2), waiting)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(q.pop().await, Some(1));
    }

    #[tokio::test]
    async fn pop_waits_for_an_item_and_ends_after_close() {
        let q = Arc::new(Queue::<u8>::new(4));
        let q2 = q.clone();
        let popper = tokio::spawn(async move { (q2.pop().await, q2.pop().await) });
        tokio::time::sleep(Duration::from_millis(20)).await;
        q.try_push(7).unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
        q.close();
        let got = tokio::time::timeout(Duration::from_secs(2), popper)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(got, (Some(7), None));
        assert_eq!(q.try_push(1), Err(PushError::Closed(1)));
    }

    #[tokio::test]
    async fn close_wakes_a_waiting_pusher_with_its_item() {
        let q = Arc::new(Queue::new(1));
        q.try_push(0).unwrap();
        let q2 = q.clone();
        let waiting = tokio::spawn(async move { q2.push(1).await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        q.close();
        let r = tokio::time::timeout(Duration::from_secs(2), waiting)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(r, Err(1));
    }

    #[tokio::test]
    async fn pop_into_waits_for_one_then_takes_what_is_there_up_to_max() {
        let q = Arc::new(Queue::new(10));
        let q2 = q.clone();
        let waiter = tokio::spawn(async move {
            let mut out = Vec::new();
            let n = q2.pop_into(&mut out, 2).await;
            (n, out)
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiter.is_finished(), "nothing queued yet");
        for i in 0..3 {
            q.try_push(i).unwrap();
        }
        let (n, out) = waiter.await.unwrap();
        assert_eq!((n, out), (2, vec![0, 1]));
        q.close();
        let mut out = Vec::new();
        assert_eq!(
            q.pop_into(&mut out, 8).await,
            1,
            "what was queued before close"
        );
        assert_eq!(q.pop_into(&mut out, 8).await, 0, "closed and empty");
    }

    #[test]
    fn an_empty_queue_allocates_nothing_and_gives_a_burst_back() {
        let q = Queue::new(1000);
        assert_eq!(q.state.lock().unwrap().items.capacity(), 0);
        for i in 0..500 {
            q.try_push(i).unwrap();
        }
        let mut out = Vec::new();
        q.drain_into(&mut out, 1000);
        assert!(q.state.lock().unwrap().items.capacity() <= KEEP_CAPACITY);
    }

    #[tokio::test]
    async fn a_consumer_waiting_on_an_empty_queue_leaves_it_no_storage() {
        let q = Arc::new(Queue::new(1000));
        q.try_push(1).unwrap();
        assert!(q.state.lock().unwrap().items.capacity() > 0);
        let q2 = q.clone();
        let waiter = tokio::spawn(async move {
            let mut out = Vec::new();
            let first = q2.pop_into(&mut out, 8).await;
            let second = q2.pop().await;
            (first, second)
        });
        while q.state.lock().unwrap().items.capacity() > 0 {
            tokio::task::yield_now().await;
        }
        q.try_push(2).unwrap();
        assert_eq!(waiter.await.unwrap(), (1, Some(2)));
    }

    #[tokio::test]
    async fn many_producers_one_consumer_lose_nothing() {
        let q = Arc::new(Queue::new(8));
        let producers: Vec<_> = (0..4)
            .map(|p| {
                let q = q.clone();
                tokio::spawn(async move {
                    for i in 0..500 {
                        q.push(p * 1000 + i).await.unwrap();
                    }
                })
            })
            .collect();
        let mut seen = Vec::new();
        while seen.len() < 2000 {
            seen.push(
                tokio::time::timeout(Duration::from_secs(5), q.pop())
                    .await
                    .unwrap()
                    .unwrap(),
            );
        }
        for p in producers {
            p.await.unwrap();
        }
        seen.sort_unstable();
        let want: Vec<i32> = (0..4)
            .flat_map(|p| (0..500).map(move |i| p * 1000 + i))
            .collect();
        assert_eq!(seen, want);
    }
}
