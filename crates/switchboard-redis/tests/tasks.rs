//! The Redis task store against a real `redis-server`: the status machine, owner scoping,
//! paging, bounds, a result awaited on another node, and a task whose node is gone.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::value::RawValue;
use switchboard_redis::{RedisCluster, RedisConfig, RedisStore, RedisTaskStore};
use switchboard_tasks::{Outcome, Owner, TaskError, TaskLimits, TaskStore};
use switchboard_test_support::redis_server::RedisServer;
use switchboard_types::ErrorObject;
use switchboard_types::tasks::TaskStatus;

async fn tasks(
    redis: &RedisServer,
    node: &str,
    limits: TaskLimits,
) -> (Arc<RedisCluster>, RedisTaskStore) {
    let store = RedisStore::connect(&redis.url(), RedisConfig::default())
        .await
        .unwrap();
    // The node announces itself, as a serving node does (else its tasks read as lost).
    let cluster = RedisCluster::join(
        store.clone(),
        Some(node.to_owned()),
        "http://127.0.0.1:1/mcp",
    )
    .await
    .unwrap();
    let t = RedisTaskStore::new(store, node, limits);
    (cluster, t)
}

fn result(text: &str) -> Outcome {
    Outcome::Result(Arc::from(RawValue::from_string(text.to_owned()).unwrap()))
}

#[tokio::test]
async fn tk9_tk10_the_status_machine_and_owner_scoping() {
    let redis = RedisServer::start();
    let (_cluster, t) = tasks(&redis, "n1", TaskLimits::default()).await;
    let alice = Owner::new("session-key-alice");
    let bob = Owner::new("session-key-bob");
    let task = t.create(&alice, Some(60_000)).await.unwrap();
    assert_eq!(task.status, TaskStatus::Working);
    assert_eq!(task.ttl, Some(60_000));
    assert!(task.task_id.starts_with("tsk_"));
    assert_eq!(
        t.get(&bob, &task.task_id).await.unwrap_err(),
        TaskError::NotFound
    );
    let t2 = t
        .set_status(
            &task.task_id,
            TaskStatus::InputRequired,
            Some("asking".into()),
        )
        .await
        .unwrap();
    assert_eq!(t2.status, TaskStatus::InputRequired);
    assert_eq!(t2.status_message.as_deref(), Some("asking"));
    t.set_status(&task.task_id, TaskStatus::Working, None)
        .await
        .unwrap();
    let done = t
        .finish(&task.task_id, result(r#"{"content":[]}"#), false)
        .await
        .unwrap();
    assert_eq!(done.status, TaskStatus::Completed);
    let (got, outcome) = t.result(&alice, &task.task_id).await.unwrap();
    assert_eq!(got.status, TaskStatus::Completed);
    assert_eq!(outcome, result(r#"{"content":[]}"#));
    assert!(matches!(
        t.finish(&task.task_id, result("{}"), false).await,
        Err(TaskError::IllegalTransition { .. })
    ));
    assert_eq!(
        t.cancel(&alice, &task.task_id).await.unwrap_err(),
        TaskError::Terminal {
            status: TaskStatus::Completed
        }
    );
    assert_eq!(
        t.cancel(&bob, &task.task_id).await.unwrap_err(),
        TaskError::NotFound
    );
    // An error outcome fails the task and is kept as the error.
    let failing = t.create(&alice, None).await.unwrap();
    let err = ErrorObject::internal("boom");
    let f = t
        .finish(&failing.task_id, Outcome::Error(err.clone()), true)
        .await
        .unwrap();
    assert_eq!(f.status, TaskStatus::Failed);
    assert_eq!(
        t.result(&alice, &failing.task_id).await.unwrap().1,
        Outcome::Error(err)
    );
}

#[tokio::test]
async fn tk19_a_cancelled_task_stays_cancelled() {
    let redis = RedisServer::start();
    let (_cluster, t) = tasks(&redis, "n1", TaskLimits::default()).await;
    let owner = Owner::new("o");
    let task = t.create(&owner, None).await.unwrap();
    let c = t.cancel(&owner, &task.task_id).await.unwrap();
    assert_eq!(c.status, TaskStatus::Cancelled);
    let after = t.finish(&task.task_id, result("{}"), false).await.unwrap();
    assert_eq!(after.status, TaskStatus::Cancelled);
    assert_eq!(
        t.result(&owner, &task.task_id).await.unwrap().1,
        Outcome::Cancelled
    );
}

#[tokio::test]
async fn tk18_list_pages_every_task_of_the_owner_oldest_first() {
    let redis = RedisServer::start();
    let (_cluster, t) = tasks(&redis, "n1", TaskLimits::default()).await;
    let owner = Owner::new("o");
    let other = Owner::new("other");
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(t.create(&owner, None).await.unwrap().task_id);
    }
    t.create(&other, None).await.unwrap();
    let (first, cursor) = t.list(&owner, None, 2).await.unwrap();
    let (second, cursor2) = t.list(&owner, cursor.as_deref(), 2).await.unwrap();
    let (third, end) = t.list(&owner, cursor2.as_deref(), 2).await.unwrap();
    let listed: Vec<String> = first
        .iter()
        .chain(&second)
        .chain(&third)
        .map(|t| t.task_id.clone())
        .collect();
    assert_eq!(listed, ids);
    assert_eq!(end, None);
    assert_eq!(
        t.list(&owner, Some("bogus"), 2).await.unwrap_err(),
        TaskError::InvalidCursor
    );
}

#[tokio::test]
async fn task_bounds_are_crossed_in_count_and_bytes() {
    let redis = RedisServer::start();
    let limits = TaskLimits::default()
        .with_max_tasks(3)
        .with_max_tasks_per_owner(2)
        .with_max_result_bytes(64);
    let (_cluster, t) = tasks(&redis, "n1", limits).await;
    let a = Owner::new("a");
    let b = Owner::new("b");
    t.create(&a, None).await.unwrap();
    let big = t.create(&a, None).await.unwrap();
    assert!(matches!(
        t.create(&a, None).await,
        Err(TaskError::Full {
            what: "tasks per requestor",
            limit: 2
        })
    ));
    t.create(&b, None).await.unwrap();
    assert!(matches!(
        t.create(&b, None).await,
        Err(TaskError::Full {
            what: "tasks",
            limit: 3
        })
    ));
    // A result over the bytes bound fails its task with -32603 instead.
    let text = format!(r#"{{"text":"{}"}}"#, "x".repeat(100));
    let f = t.finish(&big.task_id, result(&text), false).await.unwrap();
    assert_eq!(f.status, TaskStatus::Failed);
    match t.result(&a, &big.task_id).await.unwrap().1 {
        Outcome::Error(e) => assert!(e.message.contains("too large"), "{e:?}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_result_finished_on_one_node_reaches_a_waiter_on_another() {
    let redis = RedisServer::start();
    let (_c1, n1) = tasks(&redis, "n1", TaskLimits::default()).await;
    let (_c2, _) = tasks(&redis, "n2", TaskLimits::default()).await;
    // n2's store on a connection of its own: its round trips are the waiter's reads alone.
    let own = RedisStore::connect(&redis.url(), RedisConfig::default())
        .await
        .unwrap();
    let n2 = RedisTaskStore::new(own.clone(), "n2", TaskLimits::default());
    let owner = Owner::new("session-key-s");
    let task = n1.create(&owner, None).await.unwrap();
    let id = task.task_id.clone();
    let before = own.round_trips();
    let waiter = tokio::spawn({
        let owner = owner.clone();
        async move { n2.result(&owner, &id).await }
    });
    // The waiter has read the task unfinished (twice: it is polling) before n1 finishes it.
    switchboard_test_support::wait::until("the waiter on n2 is polling", || {
        own.round_trips() >= before + 2
    })
    .await;
    n1.finish(&task.task_id, result(r#"{"ok":true}"#), false)
        .await
        .unwrap();
    let (done, outcome) = tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(outcome, result(r#"{"ok":true}"#));
}

#[tokio::test]
async fn a_task_whose_node_is_gone_reads_failed_saying_so() {
    let redis = RedisServer::start();
    let store = RedisStore::connect(&redis.url(), RedisConfig::default())
        .await
        .unwrap();
    let owner = Owner::new("o");
    // Node "gone" created it and never announced itself (or stopped doing so).
    let gone = RedisTaskStore::new(store.clone(), "gone", TaskLimits::default());
    let task = gone.create(&owner, None).await.unwrap();
    let (_cluster, reader) = tasks(&redis, "n2", TaskLimits::default()).await;
    let read = reader.get(&owner, &task.task_id).await.unwrap();
    assert_eq!(read.status, TaskStatus::Failed);
    match reader.result(&owner, &task.task_id).await.unwrap().1 {
        Outcome::Error(e) => {
            assert_eq!(e.data.unwrap()["reason"], "task_node_gone");
        }
        other => panic!("{other:?}"),
    }
    // A live node's task stays working.
    let live = reader.create(&owner, None).await.unwrap();
    assert_eq!(
        reader.get(&owner, &live.task_id).await.unwrap().status,
        TaskStatus::Working
    );
    let keys = redis.raw(&["KEYS", "*"]);
    assert!(
        !keys.contains(&task.task_id),
        "a key names a task id: {keys}"
    );
}

/// `[TK-20]`: a running task's status message changes on its own (its status kept); a
/// finished task's does not.
#[tokio::test]
async fn tk20_a_running_tasks_message_changes_alone() {
    let redis = RedisServer::start();
    let (_cluster, t) = tasks(&redis, "n1", TaskLimits::default()).await;
    let alice = Owner::new("session-key-alice");
    let task = t.create(&alice, None).await.unwrap();
    let m = t
        .set_message(&task.task_id, Some("halfway".into()))
        .await
        .unwrap();
    assert_eq!(m.status, TaskStatus::Working);
    assert_eq!(m.status_message.as_deref(), Some("halfway"));
    let got = t.get(&alice, &task.task_id).await.unwrap();
    assert_eq!(got.status_message.as_deref(), Some("halfway"));
    t.finish(&task.task_id, result("{}"), false).await.unwrap();
    assert_eq!(
        t.set_message(&task.task_id, None).await.unwrap_err(),
        TaskError::Terminal {
            status: TaskStatus::Completed
        }
    );
}
