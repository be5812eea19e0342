//! Request/response round trip through two engines over the in-memory transport (JSON text
//! serialized and parsed on each hop), with 1 and 32 requests in flight.

use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use switchboard_jsonrpc::memory;
use switchboard_jsonrpc::{
    BoxFuture, HandlerResult, NullService, Peer, RequestContext, RequestOptions, Service,
    SessionConfig, spawn,
};
use switchboard_types::{Notification, Request};

struct Echo;

impl Service for Echo {
    fn call(&self, req: Request, _cx: RequestContext) -> BoxFuture<HandlerResult> {
        let params = req.params;
        Box::pin(async move { Ok(params.unwrap_or_else(switchboard_types::jsonrpc::empty_object)) })
    }

    fn notify(&self, _n: Notification, _p: &Peer) {}
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let client = rt.block_on(async {
        let (a, b) = memory::pair();
        let _server = spawn(a, Arc::new(Echo), SessionConfig::default());
        spawn(b, Arc::new(NullService), SessionConfig::default())
    });
    let params = serde_json::value::to_raw_value(
        &serde_json::json!({"name": "add", "arguments": {"x": 2, "y": 3}}),
    )
    .expect("params");
    let mut group = c.benchmark_group("engine_roundtrip_memory");
    for in_flight in [1usize, 32] {
        group.throughput(Throughput::Elements(in_flight as u64));
        group.bench_with_input(
            BenchmarkId::from_parameter(in_flight),
            &in_flight,
            |b, &n| {
                b.to_async(&rt).iter(|| {
                    let client = client.clone();
                    let params = params.clone();
                    async move {
                        let calls = (0..n).map(|_| {
                            client.request(
                                "tools/call",
                                Some(params.clone()),
                                RequestOptions::default(),
                            )
                        });
                        for r in futures::future::join_all(calls).await {
                            r.expect("answer");
                        }
                    }
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
