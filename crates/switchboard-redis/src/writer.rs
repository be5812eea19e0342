//! The store's ordered writer: the event writes of every session of this node (an event on its
//! way to the client, the requests kept with a stream) go into one queue, and one task sends
//! what has gathered there as one pipeline, then waits for its replies before sending the next.
//! Concurrent calls share a round trip, and a caller waits for room in the queue, never for
//! Redis.
//!
//! # The guarantee kept
//! A write queued here before the client is told of it (the event, the stream it belongs to)
//! is ordered ahead of everything this node reads or removes afterwards: those wait until the
//! writes queued before them are answered ([`Queue::settled`]), and Redis runs one connection's
//! commands in order. A client resuming on another node is relayed to this one while it is
//! announced, so its replay is this node's read. Another node reads the store itself only once
//! this node is gone: after a graceful leave, which waits for the queue first
//! (`RedisCluster::leave`), nothing is lost; a node that dies loses what it had queued and Redis
//! had not run yet, the few milliseconds before its death, as a write that failed was lost
//! before (the event then still went to the client, with a warning). A write Redis refuses is
//! logged, at most once a second.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use redis::Script;
use redis::aio::ConnectionManager;
use tokio::sync::{Notify, Semaphore, watch};

/// The connection, shared with the writer's task.
pub(crate) struct Link {
    conn: ConnectionManager,
    round_trips: AtomicU64,
    response_timeout: Duration,
}

impl Link {
    pub(crate) fn new(conn: ConnectionManager, response_timeout: Duration) -> Link {
        Link {
            conn,
            round_trips: AtomicU64::new(0),
            response_timeout,
        }
    }

    pub(crate) fn round_trips(&self) -> u64 {
        self.round_trips.load(Ordering::Relaxed)
    }

    /// The connection, counting one round trip.
    pub(crate) fn conn(&self) -> ConnectionManager {
        self.round_trips.fetch_add(1, Ordering::Relaxed);
        self.conn.clone()
    }
}

/// Whether a failed command may succeed on a new connection (Redis restarted, the connection
/// broke): the multiplexed connection reconnects after such a failure, and the command is
/// sent once more. A command that timed out is not sent again: Redis may have run it (a script
/// that appends must not append twice), and the caller's wait is bounded by one timeout.
pub(crate) fn retryable(e: &redis::RedisError) -> bool {
    !e.is_timeout() && (e.is_io_error() || e.is_connection_dropped() || e.is_connection_refusal())
}

/// Bounds one attempt by the configured response timeout, whatever the connection is doing
/// (waiting for an answer, or reconnecting while Redis does not answer).
pub(crate) async fn bounded<T>(
    link: &Link,
    attempt: impl std::future::Future<Output = redis::RedisResult<T>>,
) -> redis::RedisResult<T> {
    let limit = link.response_timeout;
    match tokio::time::timeout(limit, attempt).await {
        Ok(r) => r,
        Err(_) => Err(redis::RedisError::from(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("no answer from Redis within {limit:?} (response_timeout)"),
        ))),
    }
}

/// The most writes one pipeline carries.
pub(crate) const BATCH_MAX_WRITES: usize = 128;
/// The most bytes (of data, plus [`WRITE_OVERHEAD_BYTES`] each) one pipeline carries; a single
/// write over it goes alone.
pub(crate) const BATCH_MAX_BYTES: usize = 1024 * 1024;
/// The most bytes (as in a batch) queued and not yet answered: a caller past it waits for room.
pub(crate) const QUEUE_MAX_BYTES: usize = 16 * 1024 * 1024;
/// What a write costs beyond its data in the bounds above.
pub(crate) const WRITE_OVERHEAD_BYTES: usize = 64;

/// One write: a script run by its hash (loaded again when Redis has forgotten it).
pub(crate) struct Write {
    pub(crate) cmd: redis::Cmd,
    pub(crate) script: &'static LazyLock<Script>,
    /// Its cost in the bounds: data bytes plus [`WRITE_OVERHEAD_BYTES`].
    pub(crate) bytes: usize,
}

impl Write {
    /// `EVALSHA` of `script` with `keys`; the arguments are added by the caller.
    pub(crate) fn script(
        script: &'static LazyLock<Script>,
        keys: &[&str],
        data_bytes: usize,
    ) -> Write {
        let mut cmd = redis::cmd("EVALSHA");
        cmd.arg(script.get_hash()).arg(keys.len());
        for k in keys {
            cmd.arg(*k);
        }
        Write {
            cmd,
            script,
            bytes: data_bytes.saturating_add(WRITE_OVERHEAD_BYTES),
        }
    }
}

struct State {
    queue: VecDeque<Write>,
    /// Writes queued so far.
    queued: u64,
    closed: bool,
}

/// The queue of writes and the count of those answered.
pub(crate) struct Queue {
    state: Mutex<State>,
    /// The sender's wake-up: a write was queued, or the queue closed.
    work: Notify,
    /// Room in the queue, in bytes ([`QUEUE_MAX_BYTES`]).
    room: Semaphore,
    room_max: usize,
    batch_writes: usize,
    batch_bytes: usize,
    /// Writes answered (or failed) so far.
    answered: watch::Sender<u64>,
    /// When a failed write was last logged.
    warned: Mutex<Option<Instant>>,
}

impl Queue {
    pub(crate) fn new(room_max: usize, batch_writes: usize, batch_bytes: usize) -> Queue {
        Queue {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                queued: 0,
                closed: false,
            }),
            work: Notify::new(),
            room: Semaphore::new(room_max),
            room_max,
            batch_writes: batch_writes.max(1),
            batch_bytes,
            answered: watch::channel(0).0,
            warned: Mutex::new(None),
        }
    }

    /// A write's share of the queue's room (one over the whole room takes all of it).
    fn share(&self, bytes: usize) -> u32 {
        u32::try_from(bytes.min(self.room_max)).unwrap_or(u32::MAX)
    }

    /// Queues `w` after every write queued before it; waits only while the queue is full.
    pub(crate) async fn push(&self, w: Write) {
        if let Ok(permit) = self.room.acquire_many(self.share(w.bytes)).await {
            permit.forget();
        }
        if let Ok(mut s) = self.state.lock() {
            s.queue.push_back(w);
            s.queued += 1;
        }
        self.work.notify_one();
    }

    /// Waits until every write queued so far is answered (or failed).
    pub(crate) async fn settled(&self) {
        let target = self.state.lock().map(|s| s.queued).unwrap_or(0);
        let mut rx = self.answered.subscribe();
        let _ = rx.wait_for(|n| *n >= target).await;
    }

    /// The next batch: writes from the front, at most `batch_writes` of them and
    /// `batch_bytes` in all (the first always, whatever its size).
    fn take(&self) -> (Vec<Write>, bool) {
        let Ok(mut s) = self.state.lock() else {
            return (Vec::new(), true);
        };
        let mut batch = Vec::new();
        let mut bytes = 0usize;
        while let Some(next) = s.queue.front() {
            if batch.len() == self.batch_writes
                || (!batch.is_empty() && bytes.saturating_add(next.bytes) > self.batch_bytes)
            {
                break;
            }
            bytes = bytes.saturating_add(next.bytes);
            if let Some(w) = s.queue.pop_front() {
                batch.push(w);
            }
        }
        (batch, s.closed)
    }

    /// Notes `batch` answered: its room back, its count in `answered`.
    fn answered(&self, batch: &[Write]) {
        let room: usize = batch.iter().map(|w| self.share(w.bytes) as usize).sum();
        self.room.add_permits(room);
        let n = batch.len() as u64;
        self.answered.send_modify(|a| *a += n);
    }

    /// No more writes: the sender ends once the queue is empty.
    pub(crate) fn close(&self) {
        if let Ok(mut s) = self.state.lock() {
            s.closed = true;
        }
        self.work.notify_one();
    }

    fn warn(&self, what: &str, error: &str) {
        let Ok(mut last) = self.warned.lock() else {
            return;
        };
        if last.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
            *last = Some(Instant::now());
            tracing::warn!(error = %error, "{what}");
        }
    }
}

/// The sender: one pipeline at a time, until the queue is closed and empty.
pub(crate) async fn send(queue: Arc<Queue>, link: Arc<Link>) {
    loop {
        let (batch, closed) = queue.take();
        if batch.is_empty() {
            if closed {
                return;
            }
            queue.work.notified().await;
            continue;
        }
        let mut batch = batch;
        run(&queue, &link, &mut batch).await;
        queue.answered(&batch);
    }
}

/// Sends one batch as a pipeline (once more after a broken connection, as every command), and
/// once more the writes of scripts Redis had forgotten (restarted), after loading them.
async fn run(queue: &Queue, link: &Link, batch: &mut [Write]) {
    let mut p = redis::pipe();
    p.ignore_errors();
    for w in batch.iter_mut() {
        p.add_command(std::mem::replace(&mut w.cmd, redis::Cmd::new()));
    }
    let results = match attempt(link, &p).await {
        Err(e) if retryable(&e) => attempt(link, &p).await,
        r => r,
    };
    let results = match results {
        Ok(r) => r,
        Err(e) => {
            queue.warn(
                "events not stored in Redis; they cannot be replayed",
                &e.to_string(),
            );
            return;
        }
    };
    let no_script = |r: &redis::RedisResult<redis::Value>| matches!(r, Err(e) if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript));
    let forgotten: Vec<usize> = (0..results.len())
        .filter(|&i| no_script(&results[i]))
        .collect();
    let mut failed = results.iter().filter(|r| r.is_err()).count() - forgotten.len();
    if !forgotten.is_empty() {
        let mut scripts: Vec<&'static LazyLock<Script>> = Vec::new();
        for &i in &forgotten {
            if let Some(w) = batch.get(i)
                && !scripts.iter().any(|s| std::ptr::eq(*s, w.script))
            {
                scripts.push(w.script);
            }
        }
        for s in scripts {
            let _ = bounded(link, s.load_async(&mut link.conn())).await;
        }
        let cmds: Vec<&redis::Cmd> = p.cmd_iter().collect();
        let mut again = redis::pipe();
        again.ignore_errors();
        for &i in &forgotten {
            if let Some(c) = cmds.get(i) {
                again.add_command((*c).clone());
            }
        }
        match attempt(link, &again).await {
            Ok(r) => failed += r.iter().filter(|r| r.is_err()).count(),
            Err(_) => failed += forgotten.len(),
        }
    }
    if failed > 0 {
        queue.warn(
            "events not stored in Redis; they cannot be replayed",
            &format!("{failed} of {} writes failed", batch.len()),
        );
    }
}

async fn attempt(
    link: &Link,
    p: &redis::Pipeline,
) -> redis::RedisResult<Vec<redis::RedisResult<redis::Value>>> {
    bounded(link, p.query_async(&mut link.conn())).await
}

/// How long [`Queue::settled`] may wait: a little over the response timeout the sender's
/// pipeline is bounded by (twice, with its one retry).
pub(crate) fn settle_limit(response_timeout: Duration) -> Duration {
    response_timeout
        .saturating_mul(3)
        .saturating_add(Duration::from_secs(1))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    static NOOP: LazyLock<Script> = LazyLock::new(|| Script::new("return 1"));

    fn write(data_bytes: usize) -> Write {
        Write::script(&NOOP, &["k"], data_bytes)
    }

    #[tokio::test]
    async fn a_batch_is_bounded_by_its_count_of_writes() {
        let q = Queue::new(1 << 20, 3, 1 << 20);
        for _ in 0..7 {
            q.push(write(1)).await;
        }
        let sizes: Vec<usize> = (0..4).map(|_| q.take().0.len()).collect();
        assert_eq!(sizes, [3, 3, 1, 0]);
    }

    #[tokio::test]
    async fn a_batch_is_bounded_by_its_bytes_and_a_write_over_it_goes_alone() {
        // 100 bytes of data cost 164: two fit in 400, a third does not.
        let q = Queue::new(1 << 20, 100, 400);
        for d in [100, 100, 100, 1000, 10] {
            q.push(write(d)).await;
        }
        let sizes: Vec<usize> = (0..4).map(|_| q.take().0.len()).collect();
        assert_eq!(sizes, [2, 1, 1, 1]);
    }

    #[tokio::test]
    async fn a_full_queue_makes_the_next_write_wait_for_room() {
        // Room for two writes of 100 bytes (164 each), not three.
        let q = Arc::new(Queue::new(400, 100, 1 << 20));
        q.push(write(100)).await;
        q.push(write(100)).await;
        let third = tokio::spawn({
            let q = q.clone();
            async move { q.push(write(100)).await }
        });
        // The third runs up to its wait for room (one thread: yielding lets it run).
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        let (batch, _) = q.take();
        assert_eq!(batch.len(), 2, "the third write was queued past the room");
        assert!(!third.is_finished());
        q.answered(&batch);
        third.await.unwrap();
        let (batch, _) = q.take();
        assert_eq!(batch.len(), 1);
        q.answered(&batch);
        // A write larger than the whole room takes all of it, and still goes.
        q.push(write(10_000)).await;
        assert_eq!(q.take().0.len(), 1);
    }

    #[tokio::test]
    async fn settled_waits_for_the_writes_queued_before_it_only() {
        let q = Arc::new(Queue::new(1 << 20, 100, 1 << 20));
        q.push(write(1)).await;
        let settled = tokio::spawn({
            let q = q.clone();
            async move { q.settled().await }
        });
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        // A write queued after the wait began is not waited for.
        q.push(write(1)).await;
        let (batch, _) = q.take();
        assert_eq!(batch.len(), 2);
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert!(
            !settled.is_finished(),
            "settled before its write was answered"
        );
        q.answered(&batch[..1]);
        tokio::time::timeout(Duration::from_secs(30), settled)
            .await
            .expect("settled waited for a write queued after it")
            .unwrap();
    }
}
