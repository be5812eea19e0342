//! [`RedisTaskStore`]: the tasks of every node's sessions in the same Redis, so that a node
//! taking a session over answers `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel`
//! for the tasks created before.
//!
//! A task's work runs on the node that created it. When that node is gone (its announcement
//! expired or was withdrawn) while the task is not finished, the next read marks the task
//! `failed` with an error saying so: the requestor learns that the work was lost instead of
//! polling a task that will never end.
//!
//! | key | type | holds |
//! |---|---|---|
//! | `P:t:H` | hash | one task (`H`: a SHA-256 prefix of its id): owner (hashed), status, times, ttl, the node running it, the outcome |
//! | `P:to:O` | sorted set | an owner's tasks by creation order (`O`: the owner, hashed) |
//! | `P:tasks` | sorted set | every task by expiry (the bound on tasks in all) |
//! | `P:tseq` | string | the creation counter |

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use redis::Script;
use serde_json::value::RawValue;
use switchboard_tasks::store::StoreFuture;
use switchboard_tasks::time::iso8601;
use switchboard_tasks::{
    Outcome, Owner, TaskError, TaskLimits, TaskPage, TaskStore, new_task_id, result_too_large,
};
use switchboard_types::ErrorObject;
use switchboard_types::tasks::{Task, TaskStatus};

use crate::connection::{RedisStore, Run, hashed, now_ms};

/// Tasks in Redis, run by this node (`node`, the id it announces as one of a cluster).
#[derive(Debug, Clone)]
pub struct RedisTaskStore {
    store: RedisStore,
    node: String,
    limits: TaskLimits,
}

const CREATE: &str = r"
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[5])
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[8]) then return 'tasks' end
for _, h in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  if redis.call('EXISTS', ARGV[11] .. h) == 0 then redis.call('ZREM', KEYS[2], h) end
end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[9]) then return 'owner' end
local seq = redis.call('INCR', KEYS[4])
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'o', ARGV[2], 's', 'working', 'c', ARGV[4], 'u', ARGV[4],
  'ttl', ARGV[6], 'p', ARGV[7], 'n', ARGV[10])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('ZADD', KEYS[2], seq, ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[12])
redis.call('ZADD', KEYS[3], tonumber(ARGV[5]) + tonumber(ARGV[6]), ARGV[3])
return 'ok'
";

/// Reads a task (owner-scoped unless ARGV[1] is empty), failing it first when the node running
/// it is gone. ARGV: owner, node key prefix, now, message, error JSON.
const GET: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return {'none', {}} end
if ARGV[1] ~= '' and redis.call('HGET', KEYS[1], 'o') ~= ARGV[1] then return {'none', {}} end
local s = redis.call('HGET', KEYS[1], 's')
if s == 'working' or s == 'input_required' then
  local n = redis.call('HGET', KEYS[1], 'n')
  if n and n ~= '' and redis.call('EXISTS', ARGV[2] .. n) == 0 then
    redis.call('HSET', KEYS[1], 's', 'failed', 'm', ARGV[4], 'u', ARGV[3], 'k', 'e', 'v', ARGV[5])
  end
end
return {'ok', redis.call('HGETALL', KEYS[1])}
";

/// ARGV: status, message (empty: none), now.
const SET_STATUS: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return {'none', {}} end
local s = redis.call('HGET', KEYS[1], 's')
if s ~= 'working' and s ~= 'input_required' then return {'illegal:' .. s, {}} end
redis.call('HSET', KEYS[1], 's', ARGV[1], 'u', ARGV[3])
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'm', ARGV[2]) else redis.call('HDEL', KEYS[1], 'm') end
return {'ok', redis.call('HGETALL', KEYS[1])}
";

/// ARGV: message ('' for none), now.
const SET_MESSAGE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return {'none', {}} end
local s = redis.call('HGET', KEYS[1], 's')
if s ~= 'working' and s ~= 'input_required' then return {'terminal:' .. s, {}} end
redis.call('HSET', KEYS[1], 'u', ARGV[2])
if ARGV[1] ~= '' then redis.call('HSET', KEYS[1], 'm', ARGV[1]) else redis.call('HDEL', KEYS[1], 'm') end
return {'ok', redis.call('HGETALL', KEYS[1])}
";

/// ARGV: outcome kind (r, e), outcome text, status (completed, failed), now.
const FINISH: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return {'none', {}} end
local s = redis.call('HGET', KEYS[1], 's')
if s == 'cancelled' then return {'ok', redis.call('HGETALL', KEYS[1])} end
if s ~= 'working' and s ~= 'input_required' then return {'illegal:' .. s, {}} end
redis.call('HSET', KEYS[1], 's', ARGV[3], 'u', ARGV[4], 'k', ARGV[1], 'v', ARGV[2])
redis.call('HDEL', KEYS[1], 'm')
return {'ok', redis.call('HGETALL', KEYS[1])}
";

/// ARGV: owner, now.
const CANCEL: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return {'none', {}} end
if redis.call('HGET', KEYS[1], 'o') ~= ARGV[1] then return {'none', {}} end
local s = redis.call('HGET', KEYS[1], 's')
if s ~= 'working' and s ~= 'input_required' then return {'terminal:' .. s, {}} end
redis.call('HSET', KEYS[1], 's', 'cancelled', 'u', ARGV[2], 'k', 'c')
redis.call('HDEL', KEYS[1], 'm')
return {'ok', redis.call('HGETALL', KEYS[1])}
";

/// KEYS: the owner's set. ARGV: after (creation number), page, task key prefix.
/// Returns {seq, fields} pairs, at most page + 1.
const LIST: &str = r"
local out = {}
local rows = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf', 'WITHSCORES')
local i = 1
while i < #rows and #out <= tonumber(ARGV[2]) do
  local h, seq = rows[i], rows[i + 1]
  if redis.call('EXISTS', ARGV[3] .. h) == 1 then
    table.insert(out, {seq, redis.call('HGETALL', ARGV[3] .. h)})
  else
    redis.call('ZREM', KEYS[1], h)
  end
  i = i + 2
end
return out
";

fn backend(e: &redis::RedisError) -> TaskError {
    TaskError::Backend(format!("redis: {e}"))
}

fn status_of(s: &str) -> Option<TaskStatus> {
    Some(match s {
        "working" => TaskStatus::Working,
        "input_required" => TaskStatus::InputRequired,
        "completed" => TaskStatus::Completed,
        "failed" => TaskStatus::Failed,
        "cancelled" => TaskStatus::Cancelled,
        _ => return None,
    })
}

/// A task and its outcome (if it has one) from its hash's fields.
fn task_of(fields: Vec<(String, String)>) -> Result<(Task, Option<Outcome>), TaskError> {
    let get = |k: &str| fields.iter().find(|(f, _)| f == k).map(|(_, v)| v.as_str());
    let bad = || TaskError::Backend("a task record in Redis is malformed".into());
    let status = get("s").and_then(status_of).ok_or_else(bad)?;
    let mut task = Task::new(
        get("id").ok_or_else(bad)?,
        status,
        get("c").unwrap_or_default(),
        get("ttl").and_then(|t| t.parse().ok()),
    );
    task.last_updated_at = get("u").unwrap_or_default().to_owned();
    task.status_message = get("m").map(str::to_owned);
    task.poll_interval = get("p").and_then(|p| p.parse().ok());
    let outcome = match (get("k"), get("v")) {
        (Some("c"), _) => Some(Outcome::Cancelled),
        (Some("r"), Some(v)) => Some(Outcome::Result(
            RawValue::from_string(v.to_owned())
                .map(Arc::from)
                .map_err(|_| bad())?,
        )),
        (Some("e"), Some(v)) => Some(Outcome::Error(
            serde_json::from_str::<ErrorObject>(v).map_err(|_| bad())?,
        )),
        _ => None,
    };
    Ok((task, outcome))
}

/// A script's answer: its status word and the task's fields.
fn answer(status: &str, fields: Vec<(String, String)>) -> Result<Task, TaskError> {
    match status {
        "ok" => task_of(fields).map(|(t, _)| t),
        "none" => Err(TaskError::NotFound),
        other => {
            let (kind, s) = other.split_once(':').unwrap_or((other, ""));
            let status = status_of(s).ok_or(TaskError::NotFound)?;
            Err(if kind == "terminal" {
                TaskError::Terminal { status }
            } else {
                TaskError::IllegalTransition {
                    from: status,
                    to: TaskStatus::Completed,
                }
            })
        }
    }
}

impl RedisTaskStore {
    /// Tasks in `store`'s Redis, run by node `node` (the id its [`crate::RedisCluster`]
    /// announces), with `limits` (as [`switchboard_tasks::InMemoryTaskStore`]'s).
    pub fn new(store: RedisStore, node: impl Into<String>, limits: TaskLimits) -> Self {
        RedisTaskStore {
            store,
            node: node.into(),
            limits,
        }
    }

    fn task_key(&self, id: &str) -> String {
        self.store.key(&["t", &hashed(id)])
    }

    fn owner_hash(owner: &Owner) -> String {
        hashed(owner.as_str())
    }

    fn now() -> String {
        iso8601(SystemTime::now())
    }

    /// Reads task `id` (of `owner`, or of anyone when `None`), failing it first if the node
    /// running it is gone.
    async fn read(
        &self,
        owner: Option<&Owner>,
        id: &str,
    ) -> Result<(Task, Option<Outcome>), TaskError> {
        let lost = ErrorObject::internal(
            "the server node running this task stopped before it finished; run it again",
        )
        .with_data(serde_json::json!({"reason": "task_node_gone"}));
        let (status, fields): (String, Vec<(String, String)>) = Script::new(GET)
            .key(self.task_key(id))
            .arg(owner.map(Self::owner_hash).unwrap_or_default())
            .arg(format!("{}:", self.store.key(&["node"])))
            .arg(Self::now())
            .arg("the server node running this task stopped")
            .arg(serde_json::to_string(&lost).unwrap_or_default())
            .run(&self.store)
            .await
            .map_err(|e| backend(&e))?;
        if status != "ok" {
            return Err(TaskError::NotFound);
        }
        task_of(fields)
    }
}

impl TaskStore for RedisTaskStore {
    fn create<'a>(
        &'a self,
        owner: &'a Owner,
        ttl: Option<u64>,
    ) -> StoreFuture<'a, Result<Task, TaskError>> {
        Box::pin(async move {
            let id = new_task_id()?;
            let l = &self.limits;
            let ttl = ttl.unwrap_or(l.default_ttl_ms).clamp(1, l.max_ttl_ms);
            let now = Self::now();
            let status: String = Script::new(CREATE)
                .key(self.task_key(&id))
                .key(self.store.key(&["to", &Self::owner_hash(owner)]))
                .key(self.store.key(&["tasks"]))
                .key(self.store.key(&["tseq"]))
                .arg(&id)
                .arg(Self::owner_hash(owner))
                .arg(hashed(&id))
                .arg(&now)
                .arg(now_ms())
                .arg(ttl)
                .arg(l.poll_interval_ms)
                .arg(l.max_tasks)
                .arg(l.max_tasks_per_owner)
                .arg(&self.node)
                .arg(format!("{}:", self.store.key(&["t"])))
                .arg(l.max_ttl_ms)
                .run(&self.store)
                .await
                .map_err(|e| backend(&e))?;
            match status.as_str() {
                "ok" => {}
                "owner" => {
                    return Err(TaskError::Full {
                        what: "tasks per requestor",
                        limit: l.max_tasks_per_owner,
                    });
                }
                _ => {
                    return Err(TaskError::Full {
                        what: "tasks",
                        limit: l.max_tasks,
                    });
                }
            }
            let mut task = Task::new(id, TaskStatus::Working, now, Some(ttl));
            task.poll_interval = Some(l.poll_interval_ms);
            Ok(task)
        })
    }

    fn get<'a>(
        &'a self,
        owner: &'a Owner,
        id: &'a str,
    ) -> StoreFuture<'a, Result<Task, TaskError>> {
        Box::pin(async move { self.read(Some(owner), id).await.map(|(t, _)| t) })
    }

    fn set_status<'a>(
        &'a self,
        id: &'a str,
        status: TaskStatus,
        message: Option<String>,
    ) -> StoreFuture<'a, Result<Task, TaskError>> {
        Box::pin(async move {
            if !matches!(status, TaskStatus::Working | TaskStatus::InputRequired) {
                let (t, _) = self.read(None, id).await?;
                return Err(TaskError::IllegalTransition {
                    from: t.status,
                    to: status,
                });
            }
            let (word, fields): (String, Vec<(String, String)>) = Script::new(SET_STATUS)
                .key(self.task_key(id))
                .arg(status.as_str())
                .arg(message.unwrap_or_default())
                .arg(Self::now())
                .run(&self.store)
                .await
                .map_err(|e| backend(&e))?;
            answer(&word, fields).map_err(|e| match e {
                TaskError::IllegalTransition { from, .. } => {
                    TaskError::IllegalTransition { from, to: status }
                }
                other => other,
            })
        })
    }

    fn set_message<'a>(
        &'a self,
        id: &'a str,
        message: Option<String>,
    ) -> StoreFuture<'a, Result<Task, TaskError>> {
        Box::pin(async move {
            let (word, fields): (String, Vec<(String, String)>) = Script::new(SET_MESSAGE)
                .key(self.task_key(id))
                .arg(message.unwrap_or_default())
                .arg(Self::now())
                .run(&self.store)
                .await
                .map_err(|e| backend(&e))?;
            answer(&word, fields)
        })
    }

    fn finish<'a>(
        &'a self,
        id: &'a str,
        outcome: Outcome,
        failed: bool,
    ) -> StoreFuture<'a, Result<Task, TaskError>> {
        Box::pin(async move {
            let (kind, text, failed) = match outcome {
                _ if outcome.size() > self.limits.max_result_bytes => (
                    "e",
                    serde_json::to_string(&result_too_large(self.limits.max_result_bytes))
                        .unwrap_or_default(),
                    true,
                ),
                Outcome::Result(r) => ("r", r.get().to_owned(), failed),
                Outcome::Error(e) => ("e", serde_json::to_string(&e).unwrap_or_default(), true),
                Outcome::Cancelled => return self.cancel_any(id).await,
            };
            let (word, fields): (String, Vec<(String, String)>) = Script::new(FINISH)
                .key(self.task_key(id))
                .arg(kind)
                .arg(text)
                .arg(if failed { "failed" } else { "completed" })
                .arg(Self::now())
                .run(&self.store)
                .await
                .map_err(|e| backend(&e))?;
            answer(&word, fields)
        })
    }

    fn cancel<'a>(
        &'a self,
        owner: &'a Owner,
        id: &'a str,
    ) -> StoreFuture<'a, Result<Task, TaskError>> {
        Box::pin(async move {
            let (word, fields): (String, Vec<(String, String)>) = Script::new(CANCEL)
                .key(self.task_key(id))
                .arg(Self::owner_hash(owner))
                .arg(Self::now())
                .run(&self.store)
                .await
                .map_err(|e| backend(&e))?;
            answer(&word, fields)
        })
    }

    fn list<'a>(
        &'a self,
        owner: &'a Owner,
        cursor: Option<&'a str>,
        page: usize,
    ) -> StoreFuture<'a, Result<TaskPage, TaskError>> {
        Box::pin(async move {
            let after: u64 = match cursor {
                None => 0,
                Some(c) => c
                    .strip_prefix("t")
                    .and_then(|n| n.parse().ok())
                    .ok_or(TaskError::InvalidCursor)?,
            };
            let page = page.max(1);
            let rows: Vec<(String, Vec<(String, String)>)> = Script::new(LIST)
                .key(self.store.key(&["to", &Self::owner_hash(owner)]))
                .arg(after)
                .arg(page)
                .arg(format!("{}:", self.store.key(&["t"])))
                .run(&self.store)
                .await
                .map_err(|e| backend(&e))?;
            let more = rows.len() > page;
            let mut tasks = Vec::with_capacity(page);
            let mut last = after;
            for (seq, fields) in rows.into_iter().take(page) {
                last = seq.parse::<f64>().map(|s| s as u64).unwrap_or(last);
                tasks.push(task_of(fields)?.0);
            }
            Ok((tasks, more.then(|| format!("t{last}"))))
        })
    }

    fn result<'a>(
        &'a self,
        owner: &'a Owner,
        id: &'a str,
    ) -> StoreFuture<'a, Result<(Task, Outcome), TaskError>> {
        Box::pin(async move {
            // Polled: the work may run on another node. From 50 ms up to 1 s between reads.
            let mut wait = Duration::from_millis(50);
            loop {
                let (task, outcome) = self.read(Some(owner), id).await?;
                if let (true, Some(outcome)) = (is_terminal(task.status), outcome) {
                    return Ok((task, outcome));
                }
                tokio::time::sleep(wait).await;
                wait = (wait * 3 / 2).min(Duration::from_secs(1));
            }
        })
    }
}

fn is_terminal(s: TaskStatus) -> bool {
    matches!(
        s,
        TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
    )
}

impl RedisTaskStore {
    /// Cancels `id` whoever owns it (the work reported itself cancelled).
    async fn cancel_any(&self, id: &str) -> Result<Task, TaskError> {
        let (task, _) = self.read(None, id).await?;
        if is_terminal(task.status) {
            return Ok(task);
        }
        let fields: Vec<(String, String)> = redis::cmd("HGETALL")
            .arg(self.task_key(id))
            .run(&self.store)
            .await
            .map_err(|e| backend(&e))?;
        let owner = fields
            .iter()
            .find(|(k, _)| k == "o")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        let (word, fields): (String, Vec<(String, String)>) = Script::new(CANCEL)
            .key(self.task_key(id))
            .arg(owner)
            .arg(Self::now())
            .run(&self.store)
            .await
            .map_err(|e| backend(&e))?;
        answer(&word, fields)
    }
}
