//! The store's ordered writer: the event writes of every session of this node (an event on its
//! way to the client, the requests kept with a stream) go into one queue, and one task sends
//! what has gathered there as one pipeline, then waits for its reply before sending the next.
//! A pipeline is one `EVALSHA` of the batch script (`batch`), which runs its writes in queue
//! order. Concurrent calls share a round trip and a script invocation, and a caller waits for
//! room in the queue, never for Redis.
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
//! logged, at most once a second; the writes after it in its batch still run.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use redis::aio::ConnectionManager;
use tokio::sync::{Notify, Semaphore, watch};

use crate::batch::WRITES;

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

/// One write: an operation of the batch script (`batch`), its keys and its arguments. The
/// writes of one pipeline go as one `EVALSHA` of that script, in queue order.
pub(crate) struct Write {
    op: &'static str,
    keys: Vec<String>,
    args: Vec<Vec<u8>>,
    /// Its cost in the bounds: data bytes plus [`WRITE_OVERHEAD_BYTES`].
    pub(crate) bytes: usize,
}

impl Write {
    /// Operation `op` of the batch script on `keys`; the arguments are added by the caller
    /// ([`Write::arg`]).
    pub(crate) fn new(op: &'static str, keys: &[&str], data_bytes: usize) -> Write {
        Write {
            op,
            keys: keys.iter().map(|k| (*k).to_owned()).collect(),
            args: Vec::new(),
            bytes: data_bytes.saturating_add(WRITE_OVERHEAD_BYTES),
        }
    }

    /// Adds an argument (one or more, as `redis` writes `a`).
    pub(crate) fn arg<T: redis::ToRedisArgs>(&mut self, a: T) -> &mut Write {
        self.args.extend(a.to_redis_args());
        self
    }
}

/// The batch script's command for `batch`: its keys in order, then per write its operation,
/// its counts of keys and arguments, its arguments.
fn pack(batch: &[Write]) -> redis::Cmd {
    let mut cmd = redis::cmd("EVALSHA");
    cmd.arg(WRITES.get_hash())
        .arg(batch.iter().map(|w| w.keys.len()).sum::<usize>());
    for w in batch {
        for k in &w.keys {
            cmd.arg(k.as_str());
        }
    }
    for w in batch {
        cmd.arg(w.op).arg(w.keys.len()).arg(w.args.len());
        for a in &w.args {
            cmd.arg(&a[..]);
        }
    }
    cmd
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
        run(&queue, &link, &batch).await;
        queue.answered(&batch);
    }
}

/// Sends one batch as one `EVALSHA` of the batch script (once more after a broken
/// connection, as every command; once more after loading the script when Redis had forgotten
/// it, restarted), and logs the writes that failed: all of them when the command did, else each
/// write whose own commands Redis refused (the others still ran).
async fn run(queue: &Queue, link: &Link, batch: &[Write]) {
    let cmd = pack(batch);
    let result = match attempt(link, &cmd).await {
        Err(e) if retryable(&e) => attempt(link, &cmd).await,
        r => r,
    };
    let result = match result {
        Err(e) if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) => {
            let _ = bounded(link, WRITES.load_async(&mut link.conn())).await;
            attempt(link, &cmd).await
        }
        r => r,
    };
    let (failed, first) = match result {
        Err(e) => (batch.len(), logged(&e.to_string())),
        Ok(v) => failures(&v, batch.len()),
    };
    if failed > 0 {
        queue.warn(
            "events not stored in Redis; they cannot be replayed",
            &format!("{failed} of {} writes failed: {first}", batch.len()),
        );
    }
}

/// The most of an error's text a warning shows (the rest is cut, with an ellipsis).
const MAX_LOGGED_ERROR_BYTES: usize = 512;

/// `error` as a warning shows it: at most [`MAX_LOGGED_ERROR_BYTES`].
fn logged(error: &str) -> String {
    switchboard_types::error::clip(error, MAX_LOGGED_ERROR_BYTES).into_owned()
}

/// The writes the batch script's answer says failed (an entry that is not 1 or 0, or none at
/// all), and the first one's error.
fn failures(answer: &redis::Value, writes: usize) -> (usize, String) {
    let redis::Value::Array(entries) = answer else {
        return (writes, logged(&format!("unexpected answer {answer:?}")));
    };
    let mut failed = 0;
    let mut first = None;
    for e in entries.iter().take(writes) {
        if !matches!(e, redis::Value::Int(_)) {
            failed += 1;
            first.get_or_insert_with(|| match e {
                redis::Value::BulkString(b) => logged(&String::from_utf8_lossy(b)),
                other => logged(&format!("{other:?}")),
            });
        }
    }
    let missing = writes.saturating_sub(entries.len());
    if missing > 0 {
        failed += missing;
        first.get_or_insert_with(|| format!("{missing} writes without an answer"));
    }
    (failed, first.unwrap_or_default())
}

async fn attempt(link: &Link, cmd: &redis::Cmd) -> redis::RedisResult<redis::Value> {
    bounded(link, cmd.query_async(&mut link.conn())).await
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

    fn write(data_bytes: usize) -> Write {
        Write::new("noop", &["k"], data_bytes)
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

    #[test]
    fn the_writes_a_batch_answer_says_failed_are_counted_with_the_first_error() {
        use redis::Value;
        let answer = Value::Array(vec![
            Value::Int(1),
            Value::BulkString(b"WRONGTYPE first".to_vec()),
            Value::Int(0),
            Value::BulkString(b"WRONGTYPE second".to_vec()),
        ]);
        assert_eq!(failures(&answer, 4), (2, "WRONGTYPE first".to_owned()));
        assert_eq!(
            failures(&answer, 5).0,
            3,
            "a write without an answer failed"
        );
        assert_eq!(
            failures(&Value::Array(vec![Value::Int(1)]), 1),
            (0, String::new())
        );
        assert_eq!(failures(&Value::Nil, 3).0, 3);
    }

    #[test]
    fn what_is_logged_of_a_failed_write_is_bounded() {
        use redis::Value;
        let long = "é".repeat(MAX_LOGGED_ERROR_BYTES);
        let answer = Value::Array(vec![Value::BulkString(long.clone().into_bytes())]);
        let (failed, first) = failures(&answer, 1);
        assert_eq!(failed, 1);
        assert!(first.len() <= MAX_LOGGED_ERROR_BYTES + '…'.len_utf8());
        assert!(first.ends_with('…') && long.starts_with(first.trim_end_matches('…')));
        let odd = Value::Array(vec![Value::Array(vec![Value::Int(7); 1000])]);
        assert!(failures(&odd, 1).1.len() <= MAX_LOGGED_ERROR_BYTES + '…'.len_utf8());
        assert!(logged(&"x".repeat(100_000)).len() <= MAX_LOGGED_ERROR_BYTES + 3);
        assert_eq!(logged("WRONGTYPE"), "WRONGTYPE");
    }
}
