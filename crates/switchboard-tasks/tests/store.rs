//! The in-memory task store: the status machine (TK-9, TK-10, TK-14, TK-19), results (TK-15,
//! TK-16), owners (TK-18, TK-23), ids (TK-8, TK-24), retention (TK-12) and every bound.
#![allow(clippy::unwrap_used)]

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::value::RawValue;
use switchboard_tasks::{InMemoryTaskStore, Outcome, Owner, TaskError, TaskLimits, TaskStore};
use switchboard_test_support::wait;
use switchboard_types::tasks::TaskStatus;
use switchboard_types::{ErrorCode, ErrorObject};

fn raw(text: &str) -> Arc<RawValue> {
    Arc::from(RawValue::from_string(text.to_owned()).unwrap())
}

fn alice() -> Owner {
    Owner::new("session-a")
}

#[tokio::test]
async fn tk_9_tk_11_a_task_starts_working_with_times_ttl_and_poll_interval() {
    let s = InMemoryTaskStore::default();
    let t = s.create(&alice(), Some(5_000)).await.unwrap();
    assert_eq!(t.status, TaskStatus::Working);
    assert_eq!(t.ttl, Some(5_000));
    assert_eq!(t.poll_interval, Some(1_000));
    assert!(
        t.created_at.ends_with('Z') && t.created_at.len() == 24,
        "{}",
        t.created_at
    );
    assert_eq!(t.created_at, t.last_updated_at);
    let json = serde_json::to_value(&t).unwrap();
    assert!(json.get("createdAt").is_some() && json.get("lastUpdatedAt").is_some());
}

#[tokio::test]
async fn tk_8_tk_24_ids_are_unique_and_unguessable() {
    let s = InMemoryTaskStore::default();
    let mut ids = HashSet::new();
    for _ in 0..500 {
        let t = s.create(&alice(), None).await.unwrap();
        assert_eq!(
            t.task_id.len(),
            4 + 32,
            "128 random bits in hex: {}",
            t.task_id
        );
        assert!(ids.insert(t.task_id));
    }
}

#[tokio::test]
async fn tk_10_only_legal_transitions_and_a_terminal_task_never_changes() {
    let s = InMemoryTaskStore::default();
    let t = s.create(&alice(), None).await.unwrap();
    let id = t.task_id.as_str();
    let t = s
        .set_status(id, TaskStatus::InputRequired, Some("needs a name".into()))
        .await
        .unwrap();
    assert_eq!(t.status, TaskStatus::InputRequired);
    assert_eq!(t.status_message.as_deref(), Some("needs a name"));
    assert!(matches!(
        s.set_status(id, TaskStatus::InputRequired, None).await,
        Err(TaskError::IllegalTransition { .. })
    ));
    s.set_status(id, TaskStatus::Working, None).await.unwrap();
    assert!(
        matches!(
            s.set_status(id, TaskStatus::Completed, None).await,
            Err(TaskError::IllegalTransition { .. })
        ),
        "terminal statuses come from finish or cancel"
    );
    let t = s
        .finish(id, Outcome::Result(raw(r#"{"content":[]}"#)), false)
        .await
        .unwrap();
    assert_eq!(t.status, TaskStatus::Completed);
    assert!(matches!(
        s.set_status(id, TaskStatus::Working, None).await,
        Err(TaskError::IllegalTransition { .. })
    ));
    assert!(matches!(
        s.finish(id, Outcome::Result(raw("{}")), false).await,
        Err(TaskError::IllegalTransition { .. })
    ));
    assert_eq!(
        s.get(&alice(), id).await.unwrap().status,
        TaskStatus::Completed
    );
}

#[tokio::test]
async fn failed_covers_errors_and_is_error_results() {
    let s = InMemoryTaskStore::default();
    let a = s.create(&alice(), None).await.unwrap();
    let err = ErrorObject::new(ErrorCode::INVALID_PARAMS, "bad");
    let t = s
        .finish(&a.task_id, Outcome::Error(err.clone()), false)
        .await
        .unwrap();
    assert_eq!(
        (t.status, t.status_message.as_deref()),
        (TaskStatus::Failed, Some("bad"))
    );
    let (_, outcome) = s.result(&alice(), &a.task_id).await.unwrap();
    assert_eq!(outcome, Outcome::Error(err), "TK-15: the same error");
    let b = s.create(&alice(), None).await.unwrap();
    let t = s
        .finish(
            &b.task_id,
            Outcome::Result(raw(r#"{"content":[],"isError":true}"#)),
            true,
        )
        .await
        .unwrap();
    assert_eq!(t.status, TaskStatus::Failed);
}

#[tokio::test]
async fn tk_14_tk_19_cancel_is_final_and_a_terminal_task_cannot_be_cancelled() {
    let s = InMemoryTaskStore::default();
    let t = s.create(&alice(), None).await.unwrap();
    let id = t.task_id.as_str();
    let waiter = {
        let s = Arc::new(s);
        let s2 = s.clone();
        let id = id.to_owned();
        let wid = id.clone();
        let h = tokio::spawn(async move { s2.result(&alice(), &wid).await });
        tokio::task::yield_now().await;
        let t = s.cancel(&alice(), id.as_ref()).await.unwrap();
        assert_eq!(
            t.status,
            TaskStatus::Cancelled,
            "cancelled before the reply"
        );
        let late = s
            .finish(id.as_ref(), Outcome::Result(raw("{}")), false)
            .await
            .unwrap();
        assert_eq!(
            late.status,
            TaskStatus::Cancelled,
            "work finishing later changes nothing"
        );
        let e = s.cancel(&alice(), id.as_ref()).await.unwrap_err();
        assert!(matches!(
            e,
            TaskError::Terminal {
                status: TaskStatus::Cancelled
            }
        ));
        assert_eq!(
            e.to_error_object().code,
            ErrorCode::INVALID_PARAMS,
            "TK-14: -32602"
        );
        h
    };
    let (task, outcome) = waiter.await.unwrap().unwrap();
    assert_eq!(
        (task.status, outcome),
        (TaskStatus::Cancelled, Outcome::Cancelled)
    );
}

#[tokio::test]
async fn tk_16_result_waits_until_the_task_is_terminal() {
    let s = Arc::new(InMemoryTaskStore::default());
    let t = s.create(&alice(), None).await.unwrap();
    let (s2, id) = (s.clone(), t.task_id.clone());
    let waiter = wait::spawn_polled(async move { s2.result(&alice(), &id).await }).await;
    assert!(!waiter.is_finished(), "still working: result blocks");
    s.finish(
        &t.task_id,
        Outcome::Result(raw(r#"{"content":[{"type":"text","text":"5"}]}"#)),
        false,
    )
    .await
    .unwrap();
    let (task, outcome) = waiter.await.unwrap().unwrap();
    assert_eq!(task.status, TaskStatus::Completed);
    assert_eq!(
        outcome,
        Outcome::Result(raw(r#"{"content":[{"type":"text","text":"5"}]}"#))
    );
    // Asked again: the same answer (a result requested twice).
    let (_, again) = s.result(&alice(), &t.task_id).await.unwrap();
    assert_eq!(again, outcome);
}

#[tokio::test]
async fn tk_23_another_owner_never_sees_the_task() {
    let s = InMemoryTaskStore::default();
    let t = s.create(&alice(), None).await.unwrap();
    let bob = Owner::new("session-b");
    assert_eq!(s.get(&bob, &t.task_id).await, Err(TaskError::NotFound));
    assert_eq!(s.cancel(&bob, &t.task_id).await, Err(TaskError::NotFound));
    assert_eq!(
        s.result(&bob, &t.task_id).await.unwrap_err(),
        TaskError::NotFound
    );
    assert!(s.list(&bob, None, 10).await.unwrap().0.is_empty());
    assert_eq!(
        s.get(&alice(), "tsk_unknown").await,
        Err(TaskError::NotFound)
    );
    assert_eq!(
        TaskError::NotFound.to_error_object().code,
        ErrorCode::INVALID_PARAMS,
        "unknown task: -32602"
    );
}

#[tokio::test]
async fn tk_18_list_pages_through_every_task_of_the_owner() {
    let s = InMemoryTaskStore::default();
    let mut made = Vec::new();
    for _ in 0..7 {
        made.push(s.create(&alice(), None).await.unwrap().task_id);
    }
    s.create(&Owner::new("other"), None).await.unwrap();
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let (page, next) = s.list(&alice(), cursor.as_deref(), 3).await.unwrap();
        assert!(page.len() <= 3);
        seen.extend(page.into_iter().map(|t| t.task_id));
        match next {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    assert_eq!(seen, made, "oldest first, each once, only the owner's");
    assert_eq!(
        s.list(&alice(), Some("not-a-cursor"), 3).await,
        Err(TaskError::InvalidCursor)
    );
}

#[tokio::test(start_paused = true)]
async fn tk_12_ttl_is_clamped_and_an_expired_task_is_forgotten() {
    let s = Arc::new(InMemoryTaskStore::new(
        TaskLimits::default().with_ttl(1_000, 60_000),
    ));
    let t = s.create(&alice(), Some(10_000_000)).await.unwrap();
    assert_eq!(
        t.ttl,
        Some(60_000),
        "longer than allowed: cut, and reported"
    );
    let d = s.create(&alice(), None).await.unwrap();
    assert_eq!(d.ttl, Some(1_000), "none asked: the default");
    let (s2, id) = (s.clone(), d.task_id.clone());
    let waiter = tokio::spawn(async move { s2.result(&alice(), &id).await });
    tokio::time::advance(Duration::from_millis(1_001)).await;
    assert_eq!(
        waiter.await.unwrap().unwrap_err(),
        TaskError::NotFound,
        "expired while waited on"
    );
    assert_eq!(s.get(&alice(), &d.task_id).await, Err(TaskError::NotFound));
    assert!(
        s.get(&alice(), &t.task_id).await.is_ok(),
        "the longer one is still kept"
    );
    tokio::time::advance(Duration::from_millis(60_000)).await;
    assert_eq!(s.get(&alice(), &t.task_id).await, Err(TaskError::NotFound));
    assert!(s.is_empty());
}

#[tokio::test]
async fn every_bound_is_enforced() {
    let limits = TaskLimits::default()
        .with_max_tasks(5)
        .with_max_tasks_per_owner(3)
        .with_max_result_bytes(100);
    let s = InMemoryTaskStore::new(limits);
    for _ in 0..3 {
        s.create(&alice(), None).await.unwrap();
    }
    let e = s.create(&alice(), None).await.unwrap_err();
    assert!(
        matches!(
            e,
            TaskError::Full {
                what: "tasks per requestor",
                limit: 3
            }
        ),
        "{e}"
    );
    let bob = Owner::new("b");
    s.create(&bob, None).await.unwrap();
    let big = s.create(&bob, None).await.unwrap();
    let e = s.create(&Owner::new("c"), None).await.unwrap_err();
    assert!(
        matches!(
            e,
            TaskError::Full {
                what: "tasks",
                limit: 5
            }
        ),
        "{e}"
    );
    // A result larger than the byte budget fails its task with -32603, and nothing is kept.
    let text = format!("{{\"t\":\"{}\"}}", "x".repeat(200));
    let t = s
        .finish(&big.task_id, Outcome::Result(raw(&text)), false)
        .await
        .unwrap();
    assert_eq!(t.status, TaskStatus::Failed);
    let (_, outcome) = s.result(&bob, &big.task_id).await.unwrap();
    let Outcome::Error(e) = outcome else {
        panic!("an error outcome")
    };
    assert_eq!(e.code, ErrorCode::INTERNAL_ERROR);
    assert!(s.result_bytes() < 100, "{}", s.result_bytes());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_tasks_lose_nothing() {
    let s = Arc::new(InMemoryTaskStore::default());
    let mut handles = Vec::new();
    for i in 0..1_000u32 {
        let s = s.clone();
        handles.push(tokio::spawn(async move {
            let owner = Owner::new(format!("o{}", i % 10));
            let t = s.create(&owner, None).await.unwrap();
            let (s2, id, o2) = (s.clone(), t.task_id.clone(), owner.clone());
            let waiter = tokio::spawn(async move { s2.result(&o2, &id).await });
            s.finish(
                &t.task_id,
                Outcome::Result(raw(&format!("{{\"n\":{i}}}"))),
                false,
            )
            .await
            .unwrap();
            let (_, outcome) = waiter.await.unwrap().unwrap();
            assert_eq!(outcome, Outcome::Result(raw(&format!("{{\"n\":{i}}}"))));
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
    assert_eq!(s.len(), 1_000);
}

/// `[TK-20]`: a running task's status message changes on its own (its status kept, its
/// `lastUpdatedAt` moved); a finished task's does not.
#[tokio::test]
async fn tk_20_a_running_tasks_message_changes_alone_and_a_finished_ones_does_not() {
    let s = InMemoryTaskStore::default();
    let t = s.create(&alice(), None).await.unwrap();
    let id = t.task_id.as_str();
    let m = s.set_message(id, Some("halfway".into())).await.unwrap();
    assert_eq!(m.status, TaskStatus::Working);
    assert_eq!(m.status_message.as_deref(), Some("halfway"));
    assert_eq!(
        s.get(&alice(), id).await.unwrap().status_message.as_deref(),
        Some("halfway")
    );
    s.set_status(id, TaskStatus::InputRequired, Some("asking".into()))
        .await
        .unwrap();
    let m = s.set_message(id, None).await.unwrap();
    assert_eq!(m.status, TaskStatus::InputRequired);
    assert_eq!(m.status_message, None);
    s.finish(id, Outcome::Result(raw("{}")), false)
        .await
        .unwrap();
    assert_eq!(
        s.set_message(id, Some("late".into())).await.unwrap_err(),
        TaskError::Terminal {
            status: TaskStatus::Completed
        }
    );
    assert!(matches!(
        s.set_message("no-such-task", None).await,
        Err(TaskError::NotFound)
    ));
}
