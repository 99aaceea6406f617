//! Line framing throughput: many frames in one input, fed to the decoder in
//! 64 KiB chunks as a pipe read would deliver them, against a bare `memchr`
//! scan of the same input as the reference ceiling.

use std::hint::black_box;

use bytes::BytesMut;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use mcp_codec::LineDecoder;

/// Total input per iteration; large enough to hold several 1 MiB frames.
const INPUT_SIZE: usize = 8 * 1024 * 1024;
/// What one `read` on a pipe typically returns at most.
const CHUNK_SIZE: usize = 64 * 1024;

/// Frames of `frame_size` bytes (JSON-looking, no newline) each followed by "\n".
fn input_with_frames(frame_size: usize) -> (Vec<u8>, usize) {
    let mut frame = br#"{"jsonrpc":"2.0","id":1,"result":{"text":""#.to_vec();
    frame.resize(frame_size - 3, b'a');
    frame.extend_from_slice(br#""}}"#);
    let count = INPUT_SIZE / (frame_size + 1);
    let mut input = Vec::with_capacity(count * (frame_size + 1));
    for _ in 0..count {
        input.extend_from_slice(&frame);
        input.push(b'\n');
    }
    (input, count)
}

fn line_framing(c: &mut Criterion) {
    let mut group = c.benchmark_group("line_framing");
    for (label, frame_size) in [("1KiB", 1024), ("1MiB", 1024 * 1024)] {
        let (input, count) = input_with_frames(frame_size);
        group.throughput(Throughput::Bytes(input.len() as u64));

        group.bench_with_input(
            BenchmarkId::new("LineDecoder", label),
            &input,
            |b, input| {
                b.iter(|| {
                    let mut decoder = LineDecoder::new();
                    let mut buf = BytesMut::with_capacity(CHUNK_SIZE);
                    let mut frames = 0;
                    for chunk in input.chunks(CHUNK_SIZE) {
                        buf.extend_from_slice(chunk);
                        while let Some(frame) =
                            decoder.decode(&mut buf).expect("frames fit the bound")
                        {
                            black_box(frame);
                            frames += 1;
                        }
                    }
                    assert_eq!(frames, count);
                });
            },
        );

        group.bench_with_input(
            BenchmarkId::new("memchr_scan", label),
            &input,
            |b, input| {
                b.iter(|| {
                    let newlines = memchr::memchr_iter(b'\n', black_box(input)).count();
                    assert_eq!(newlines, count);
                });
            },
        );
    }
    group.finish();
}

criterion_group!(benches, line_framing);
criterion_main!(benches);
