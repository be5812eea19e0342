//! The Redis store against a real `redis-server` (started on a free 127.0.0.1 port).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use switchboard_http::{
    Claim, Cluster, EventId, EventStore, EventStoreError, Location, SessionRecord, SessionStore,
    SessionStoreError, StoredEvent,
};
use switchboard_redis::{RedisCluster, RedisConfig, RedisStore, RedisStoreError};
use switchboard_test_support::redis_server::RedisServer;
use switchboard_test_support::wait;

fn record(id: &str, snapshot: Option<&str>) -> SessionRecord {
    SessionRecord {
        id: Arc::from(id),
        snapshot: snapshot.map(Arc::from),
        owner: Some(Arc::from("https://issuer|alice")),
        node: Some(Arc::from("n1")),
    }
}

fn event(stream: u64, seq: u64, data: &str) -> StoredEvent {
    StoredEvent {
        id: EventId::new(stream, seq),
        data: Arc::from(data),
    }
}

async fn store(redis: &RedisServer, config: RedisConfig) -> RedisStore {
    RedisStore::connect(&redis.url(), config).await.unwrap()
}

#[tokio::test]
async fn records_round_trip_and_the_session_bound_holds() {
    let redis = RedisServer::start();
    let config = RedisConfig {
        max_sessions: 2,
        ..RedisConfig::default()
    };
    let s = store(&redis, config).await;
    s.create(record("a", Some(r#"{"clientInfo":{}}"#)))
        .await
        .unwrap();
    s.create(record("b", None)).await.unwrap();
    assert_eq!(
        s.create(record("c", None)).await,
        Err(SessionStoreError::Full { limit: 2 })
    );
    // Replacing a record already kept is not a new session.
    s.create(record("a", Some("{}"))).await.unwrap();
    let a = s.load("a").await.unwrap().unwrap();
    assert_eq!(a, record("a", Some("{}")));
    assert_eq!(s.load("b").await.unwrap().unwrap().snapshot, None);
    assert_eq!(s.load("zz").await.unwrap(), None);
    s.remove("a").await;
    assert_eq!(s.load("a").await.unwrap(), None);
    s.create(record("c", None)).await.unwrap();
    assert!(s.round_trips() >= 7);
}

#[tokio::test]
async fn no_key_names_a_session_id() {
    let redis = RedisServer::start();
    let s = store(&redis, RedisConfig::default()).await;
    let secret = "4f1d2a9c0b7e45d88f3a6c1e2d9b7a55";
    s.create(record(secret, Some("{}"))).await.unwrap();
    s.append(secret, event(1, 1, "{}")).await.unwrap();
    let keys = redis.raw(&["KEYS", "*"]);
    assert!(keys.contains("switchboard:s:"), "{keys}");
    assert!(!keys.contains(secret), "a key names the session id: {keys}");
}

#[tokio::test]
async fn a_claim_moves_a_session_only_from_the_node_expected() {
    let redis = RedisServer::start();
    let s = store(&redis, RedisConfig::default()).await;
    s.create(record("s", None)).await.unwrap();
    match s.claim("s", Some("n3"), "n2").await.unwrap() {
        Claim::Lost(r) => assert_eq!(r.node.as_deref(), Some("n1")),
        other => panic!("{other:?}"),
    }
    match s.claim("s", Some("n1"), "n2").await.unwrap() {
        Claim::Won(r) => {
            assert_eq!(r.node.as_deref(), Some("n2"));
            assert_eq!(r.owner.as_deref(), Some("https://issuer|alice"));
        }
        other => panic!("{other:?}"),
    }
    // Claiming again from the same node wins (two requests taking it over at once).
    assert!(matches!(
        s.claim("s", Some("n1"), "n2").await.unwrap(),
        Claim::Won(_)
    ));
    assert_eq!(s.claim("nope", None, "n2").await.unwrap(), Claim::Gone);
    // The node that lost it ends its stale copy: the record n2 serves stays.
    s.remove_served_by("s", Some("n1")).await;
    assert!(s.load("s").await.unwrap().is_some());
    s.remove_served_by("s", Some("n2")).await;
    assert!(s.load("s").await.unwrap().is_none());
}

#[tokio::test]
async fn records_expire_unless_kept_alive() {
    let redis = RedisServer::start();
    let config = RedisConfig {
        session_ttl: Duration::from_millis(600),
        ..RedisConfig::default()
    };
    let s = store(&redis, config).await;
    s.create(record("kept", None)).await.unwrap();
    s.create(record("dropped", None)).await.unwrap();
    s.append("kept", event(1, 1, "x")).await.unwrap();
    for _ in 0..4 {
        // Not a wait: keep-alives spread past the TTL (time passing is the scenario).
        tokio::time::sleep(Duration::from_millis(300)).await;
        s.keep_alive(&[Arc::from("kept")]).await;
    }
    assert!(s.load("kept").await.unwrap().is_some());
    assert_eq!(
        s.replay_after("kept", EventId::new(1, 0), 10)
            .await
            .unwrap()
            .len(),
        1
    );
    assert_eq!(s.load("dropped").await.unwrap(), None);
}

#[tokio::test]
async fn events_replay_in_order_per_stream_a_page_at_a_time() {
    let redis = RedisServer::start();
    let s = store(&redis, RedisConfig::default()).await;
    // Out of order, as two routes finishing in the other order append them.
    for seq in [2, 1, 3, 5, 4] {
        s.append("s", event(1, seq, &format!(r#"{{"n":{seq}}}"#)))
            .await
            .unwrap();
    }
    s.append("s", event(2, 1, "other stream")).await.unwrap();
    let page = s.replay_after("s", EventId::new(1, 1), 2).await.unwrap();
    let ids: Vec<u64> = page.iter().map(|e| e.id.seq).collect();
    assert_eq!(ids, [2, 3]);
    assert_eq!(&*page[0].data, r#"{"n":2}"#);
    let rest = s.replay_after("s", EventId::new(1, 3), 10).await.unwrap();
    assert_eq!(rest.iter().map(|e| e.id.seq).collect::<Vec<_>>(), [4, 5]);
    assert!(rest.iter().all(|e| e.id.stream == 1));
    assert_eq!(
        s.replay_after("s", EventId::new(7, 0), 10).await,
        Err(EventStoreError::UnknownStream { stream: 7 })
    );
    // Data with colons and newlines survives.
    s.append("s", event(3, 1, "a:b:\nc")).await.unwrap();
    let got = s.replay_after("s", EventId::new(3, 0), 1).await.unwrap();
    assert_eq!(&*got[0].data, "a:b:\nc");
    s.remove_session("s").await;
    assert!(matches!(
        s.replay_after("s", EventId::new(1, 0), 10).await,
        Err(EventStoreError::UnknownStream { .. })
    ));
    let keys = redis.raw(&["KEYS", "*"]);
    assert!(!keys.contains(":e:"), "events left behind: {keys}");
}

#[tokio::test]
async fn event_bounds_are_crossed_by_count_and_by_bytes() {
    let redis = RedisServer::start();
    let config = RedisConfig {
        events_per_stream: 3,
        stream_bytes: 400,
        streams_per_session: 2,
        session_bytes: 600,
        ..RedisConfig::default()
    };
    let s = store(&redis, config).await;
    // Count: the oldest of a stream go first.
    for seq in 1..=5 {
        s.append("s", event(1, seq, "x")).await.unwrap();
    }
    let kept = s.replay_after("s", EventId::new(1, 0), 10).await.unwrap();
    assert_eq!(kept.iter().map(|e| e.id.seq).collect::<Vec<_>>(), [3, 4, 5]);
    // Bytes per stream: two events of 100 + 64 overhead fit in 400, a third does not.
    let big = "y".repeat(100);
    for seq in 1..=3 {
        s.append("t", event(1, seq, &big)).await.unwrap();
    }
    let kept = s.replay_after("t", EventId::new(1, 0), 10).await.unwrap();
    assert_eq!(kept.iter().map(|e| e.id.seq).collect::<Vec<_>>(), [2, 3]);
    // An event over the stream bound alone is not kept at all.
    s.append("t", event(1, 4, &"z".repeat(500))).await.unwrap();
    let kept = s.replay_after("t", EventId::new(1, 0), 10).await.unwrap();
    assert_eq!(kept.len(), 2);
    // Streams per session: a third stream evicts the oldest.
    s.append("u", event(10, 1, "a")).await.unwrap();
    s.append("u", event(9, 1, "b")).await.unwrap();
    s.append("u", event(11, 1, "c")).await.unwrap();
    assert!(s.replay_after("u", EventId::new(9, 0), 10).await.is_err());
    assert!(s.replay_after("u", EventId::new(10, 0), 10).await.is_ok());
    assert!(s.replay_after("u", EventId::new(11, 0), 10).await.is_ok());
    // Bytes per session: 600 holds three events of 100 (+64) across streams, not four.
    s.append("v", event(1, 1, &big)).await.unwrap();
    s.append("v", event(2, 1, &big)).await.unwrap();
    s.append("v", event(2, 2, &big)).await.unwrap();
    s.append("v", event(3, 1, &big)).await.unwrap();
    assert!(s.replay_after("v", EventId::new(1, 0), 10).await.is_err());
    assert_eq!(
        s.replay_after("v", EventId::new(3, 0), 10)
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn a_node_refuses_a_store_it_cannot_authenticate_to() {
    let redis = RedisServer::start_with_password("s3cret-pass");
    let err = RedisStore::connect(&redis.url_without_password(), RedisConfig::default())
        .await
        .unwrap_err();
    assert!(matches!(err, RedisStoreError::Unreachable { .. }), "{err}");
    assert!(
        err.to_string().contains("NOAUTH") || err.to_string().contains("uthentication"),
        "{err}"
    );
    let wrong = format!("redis://:wrong@127.0.0.1:{}/0", redis.port());
    let err = RedisStore::connect(&wrong, RedisConfig::default())
        .await
        .unwrap_err();
    assert!(
        !err.to_string().contains("wrong"),
        "the password is echoed: {err}"
    );
    let s = store(&redis, RedisConfig::default()).await;
    s.create(record("a", None)).await.unwrap();
    assert!(s.load("a").await.unwrap().is_some());
    assert!(matches!(
        RedisStore::connect("http://127.0.0.1:1", RedisConfig::default()).await,
        Err(RedisStoreError::Url(_))
    ));
}

#[tokio::test]
async fn nodes_find_each_other_and_a_silent_node_is_an_orphan() {
    let redis = RedisServer::start();
    let config = RedisConfig {
        node_ttl: Duration::from_millis(900),
        ..RedisConfig::default()
    };
    let s = store(&redis, config).await;
    let n1 = RedisCluster::join(s.clone(), Some("n1".into()), "http://127.0.0.1:1/mcp")
        .await
        .unwrap();
    let n2 = RedisCluster::join(s.clone(), Some("n2".into()), "http://127.0.0.1:2/mcp")
        .await
        .unwrap();
    assert_eq!(n2.locate("nope").await.unwrap(), Location::Unknown);
    s.create(record("s", None)).await.unwrap();
    assert_eq!(n1.locate("s").await.unwrap(), Location::Here);
    assert_eq!(
        n2.locate("s").await.unwrap(),
        Location::Remote {
            node: Arc::from("n1"),
            url: Arc::from("http://127.0.0.1:1/mcp")
        }
    );
    // The announcement is renewed while the node runs (three times its life here).
    // Not a wait: the node runs three announcement lives (time passing is the scenario).
    tokio::time::sleep(Duration::from_millis(2700)).await;
    assert!(matches!(
        n2.locate("s").await.unwrap(),
        Location::Remote { .. }
    ));
    n1.leave().await;
    assert_eq!(
        n2.locate("s").await.unwrap(),
        Location::Orphan {
            node: Some(Arc::from("n1"))
        }
    );
    let mut unserved = record("u", None);
    unserved.node = None;
    s.create(unserved).await.unwrap();
    assert_eq!(
        n2.locate("u").await.unwrap(),
        Location::Orphan { node: None }
    );
}

#[tokio::test]
async fn the_store_reconnects_after_redis_restarts_and_keeps_what_it_had() {
    let mut redis = RedisServer::start();
    let s = store(&redis, RedisConfig::default()).await;
    s.create(record("a", Some("{}"))).await.unwrap();
    s.append("a", event(1, 1, "e1")).await.unwrap();
    redis.restart();
    // The first commands may fail while the connection is re-established; then it serves.
    let serving = wait::Deadline::new("the store serving after the restart");
    let loaded = loop {
        if let Ok(r) = s.load("a").await {
            break r;
        }
        serving.tick().await;
    };
    assert_eq!(loaded, Some(record("a", Some("{}"))));
    let events = s.replay_after("a", EventId::new(1, 0), 10).await.unwrap();
    assert_eq!(&*events[0].data, "e1");
    s.append("a", event(1, 2, "e2")).await.unwrap();
}

#[tokio::test]
async fn a_command_redis_does_not_answer_fails_after_the_response_timeout() {
    let redis = RedisServer::start();
    let config = RedisConfig {
        response_timeout: Duration::from_millis(200),
        ..RedisConfig::default()
    };
    let s = store(&redis, config).await;
    s.create(record("a", Some("{}"))).await.unwrap();
    // Redis holds every client's commands for 4 s: the store must not wait that long. (The
    // pausing connection's own QUIT waits out the pause too, hence the thread.)
    let port = redis.port();
    let pauser = std::thread::spawn(move || {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        std::io::Write::write_all(
            &mut s,
            b"*4\r\n$6\r\nCLIENT\r\n$5\r\nPAUSE\r\n$4\r\n4000\r\n$3\r\nALL\r\n",
        )
        .unwrap();
        let mut ok = [0u8; 5];
        std::io::Read::read_exact(&mut s, &mut ok).unwrap();
        ok
    });
    // Redis said OK to the pause: it is in effect.
    assert_eq!(&pauser.join().unwrap(), b"+OK\r\n");
    let started = std::time::Instant::now();
    let failed = s.load("a").await;
    let waited = started.elapsed();
    assert!(
        matches!(failed, Err(SessionStoreError::Backend(_))),
        "{failed:?}"
    );
    assert!(
        waited < Duration::from_millis(3000),
        "the command waited {waited:?}, past the pause's end rather than the timeout"
    );
    // Once Redis answers again, so does the store, with what it kept.
    let answering = wait::Deadline::new("Redis answering again");
    let loaded = loop {
        if let Ok(r) = s.load("a").await {
            break r;
        }
        answering.tick().await;
    };
    assert_eq!(loaded, Some(record("a", Some("{}"))));
}

/// Issue 30: the events a node appends are queued on its ordered writer and the call returns
/// at once; concurrent appends share pipelines (at most 128 writes each), a read through the
/// same store waits for the writes queued before it, and once the node has left the cluster
/// another node replays every event it appended.
#[tokio::test]
async fn queued_events_share_round_trips_and_are_replayed_by_the_other_node_once_it_left() {
    let redis = RedisServer::start();
    let a = store(&redis, RedisConfig::default()).await;
    let b = store(&redis, RedisConfig::default()).await;
    let node_a = RedisCluster::join(a.clone(), Some("a".into()), "http://127.0.0.1:1/mcp")
        .await
        .unwrap();
    a.flush().await;
    let before = a.round_trips();
    // 200 appends, one session, one stream: more than one pipeline's 128. Each returns once
    // queued, so they go in a few pipelines, not one round trip each.
    for seq in 1..=200u64 {
        a.append("s", event(1, seq, &format!("e{seq}")))
            .await
            .unwrap();
    }
    // Read through the same store at once: it waits for the writes queued before it.
    let page = a.replay_after("s", EventId::new(1, 0), 300).await.unwrap();
    let seqs: Vec<u64> = page.iter().map(|e| e.id.seq).collect();
    assert_eq!(seqs, (1..=200).collect::<Vec<_>>());
    let trips = a.round_trips() - before;
    // Two pipelines at least (the count bound), and far fewer than one per event (the read
    // is one more).
    assert!(
        (3..=12).contains(&trips),
        "{trips} round trips for 200 events and a read"
    );
    // Each pipeline is one run of the batch script (the read is a script of its own, and
    // `join` ran none).
    let scripts = evalsha_calls(&redis);
    assert!(
        (3..=12).contains(&scripts),
        "{scripts} script runs for 200 events and a read"
    );
    // More appends, then the node leaves: the other node finds them all.
    for seq in 201..=210 {
        a.append("s", event(1, seq, "late")).await.unwrap();
    }
    node_a.leave().await;
    let page = b
        .replay_after("s", EventId::new(1, 200), 300)
        .await
        .unwrap();
    assert_eq!(
        page.iter().map(|e| e.id.seq).collect::<Vec<_>>(),
        (201..=210).collect::<Vec<_>>()
    );
    // The requests kept with a stream are ordered the same way.
    a.keep_requests("s", 2, r#"{"jsonrpc":"2.0","id":1}"#)
        .await
        .unwrap();
    assert_eq!(
        a.kept_requests("s", 2).await.unwrap().as_deref(),
        Some(r#"{"jsonrpc":"2.0","id":1}"#)
    );
}

/// The streams bound evicts the session's oldest stream through its order set (no scan of
/// every stream), and a session whose order set is missing (written before it existed) still
/// loses its oldest stream.
#[tokio::test]
async fn the_streams_bound_evicts_the_oldest_stream_with_or_without_the_order_set() {
    let redis = RedisServer::start();
    let config = RedisConfig {
        streams_per_session: 256,
        ..RedisConfig::default()
    };
    let s = store(&redis, config).await;
    for stream in 1..=300u64 {
        s.append("s", event(stream, 1, "x")).await.unwrap();
    }
    assert!(s.replay_after("s", EventId::new(44, 0), 10).await.is_err());
    assert!(s.replay_after("s", EventId::new(45, 0), 10).await.is_ok());
    assert!(s.replay_after("s", EventId::new(300, 0), 10).await.is_ok());
    // Numbers past 2^53 keep their order (compared as padded text, not as Lua numbers).
    let small = RedisConfig {
        streams_per_session: 2,
        ..RedisConfig::default()
    };
    let t = store(&redis, small).await;
    let huge = u64::MAX - 1;
    t.append("t", event(huge, 1, "a")).await.unwrap();
    t.append("t", event(9_007_199_254_740_993, 1, "b"))
        .await
        .unwrap();
    t.append("t", event(u64::MAX, 1, "c")).await.unwrap();
    assert!(
        t.replay_after("t", EventId::new(9_007_199_254_740_993, 0), 10)
            .await
            .is_err()
    );
    assert!(t.replay_after("t", EventId::new(huge, 0), 10).await.is_ok());
    // Without the order set, the scan finds the oldest.
    t.append("u", event(5, 1, "a")).await.unwrap();
    t.append("u", event(6, 1, "b")).await.unwrap();
    t.flush().await;
    let keys = redis.raw(&["KEYS", "switchboard:eo:*"]);
    for key in keys
        .split_whitespace()
        .filter(|k| k.starts_with("switchboard:eo:"))
    {
        redis.raw(&["DEL", key]);
    }
    t.append("u", event(7, 1, "c")).await.unwrap();
    assert!(t.replay_after("u", EventId::new(5, 0), 10).await.is_err());
    assert!(t.replay_after("u", EventId::new(6, 0), 10).await.is_ok());
    assert!(t.replay_after("u", EventId::new(7, 0), 10).await.is_ok());
}

/// How many `EVALSHA` Redis has run so far (`INFO commandstats`).
fn evalsha_calls(redis: &RedisServer) -> u64 {
    let info = redis.raw(&["INFO", "commandstats"]);
    info.lines()
        .find_map(|l| l.strip_prefix("cmdstat_evalsha:calls="))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap())
}

/// Issue 30: the writes of a pipeline run in one script, each on its own: one Redis refuses
/// (its stream's key holds a string) does not stop the writes queued with it.
#[tokio::test]
async fn a_write_redis_refuses_does_not_stop_the_others_of_its_batch() {
    let redis = RedisServer::start();
    let s = store(&redis, RedisConfig::default()).await;
    s.append("bad", event(1, 1, "x")).await.unwrap();
    s.flush().await;
    let keys = redis.raw(&["KEYS", "switchboard:e:*:1"]);
    let key = keys
        .split_whitespace()
        .find(|k| k.starts_with("switchboard:e:"))
        .expect("the bad session's stream key")
        .to_owned();
    redis.raw(&["DEL", &key]);
    redis.raw(&["SET", &key, "not a sorted set"]);
    let scripts = evalsha_calls(&redis);
    for seq in 1..=100u64 {
        s.append("bad", event(1, seq + 1, "refused")).await.unwrap();
        s.append("good", event(1, seq, &format!("e{seq}")))
            .await
            .unwrap();
    }
    s.flush().await;
    // Fewer script runs than writes: some batches held both sessions' writes.
    let runs = evalsha_calls(&redis) - scripts;
    assert!(runs < 200, "{runs} script runs for 200 writes");
    let page = s
        .replay_after("good", EventId::new(1, 0), 300)
        .await
        .unwrap();
    assert_eq!(
        page.iter().map(|e| e.id.seq).collect::<Vec<_>>(),
        (1..=100).collect::<Vec<_>>()
    );
    assert!(redis.raw(&["GET", &key]).contains("not a sorted set"));
}
