//! Newline-delimited JSON decoding of a typical `tools/call` frame (about 200 bytes), many frames
//! per buffer: all in one buffer, and arriving in 8 KiB reads as from a pipe. Plus encoding.

use bytes::BytesMut;
use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use switchboard_transport::NdjsonDecoder;
use switchboard_transport::codec::ndjson;

/// A typical `tools/call` request, padded to exactly 200 bytes.
fn tools_call_frame() -> String {
    let head = r#"{"jsonrpc":"2.0","id":1042,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Amsterdam","units":"metric","days":3},"_meta":{"progressToken":"p-1042","note":""#;
    let tail = r#""}}}"#;
    let pad = 200 - head.len() - tail.len();
    format!("{head}{}{tail}", "x".repeat(pad))
}

fn input(frames: usize) -> Vec<u8> {
    let frame = tools_call_frame();
    assert_eq!(frame.len(), 200);
    let mut buf = BytesMut::new();
    for _ in 0..frames {
        ndjson::encode(&frame, &mut buf);
    }
    buf.to_vec()
}

fn decode_all(decoder: &mut NdjsonDecoder, buf: &mut BytesMut) -> usize {
    let mut n = 0;
    while let Ok(Some(frame)) = decoder.decode(buf) {
        n += 1;
        std::hint::black_box(frame);
    }
    n
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("ndjson_decode_200B");
    for frames in [1usize, 100, 1000] {
        let bytes = input(frames);
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_with_input(
            BenchmarkId::new("one_buffer", frames),
            &bytes,
            |b, bytes| {
                b.iter_batched_ref(
                    || BytesMut::from(&bytes[..]),
                    |buf| {
                        let n = decode_all(&mut NdjsonDecoder::default(), buf);
                        assert_eq!(n, frames);
                    },
                    BatchSize::SmallInput,
                )
            },
        );
        group.bench_with_input(
            BenchmarkId::new("8KiB_reads", frames),
            &bytes,
            |b, bytes| {
                b.iter(|| {
                    let mut decoder = NdjsonDecoder::default();
                    let mut buf = BytesMut::with_capacity(16 * 1024);
                    let mut n = 0;
                    for chunk in bytes.chunks(8 * 1024) {
                        buf.extend_from_slice(chunk);
                        n += decode_all(&mut decoder, &mut buf);
                    }
                    assert_eq!(n, frames);
                })
            },
        );
    }
    group.finish();

    let frame = tools_call_frame();
    let mut group = c.benchmark_group("ndjson_encode_200B");
    group.throughput(Throughput::Bytes(201));
    group.bench_function("one_frame", |b| {
        let mut buf = BytesMut::with_capacity(256);
        b.iter(|| {
            buf.clear();
            ndjson::encode(std::hint::black_box(&frame), &mut buf);
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
