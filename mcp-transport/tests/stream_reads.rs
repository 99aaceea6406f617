//! The stream pumps' reader sizes its reads from what came before (between
//! frames after a read that found the stream drained, 8 KiB through a
//! per-thread scratch buffer with what came copied out; 64 KiB straight into
//! its buffer otherwise), lets go of a drained buffer after a large frame,
//! and moves a frame that passes 256 KiB into a kept buffer, copying out
//! what follows it.
//! Whatever the sizes, every frame must arrive whole and in order: frames
//! from a few bytes to most of a mebibyte, written in pieces from one byte to
//! several frames at once, with the reader drained between pieces so that
//! each read sees only what one piece brought.

use std::time::Duration;

use mcp_transport::{Inbound, memory_pair};
use tokio::io::AsyncWriteExt as _;

/// A small deterministic generator, so a failure can be replayed by seed.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % below
    }
}

/// Frame sizes around every threshold of the reader (8 KiB, 32 KiB, 64 KiB,
/// the kept buffers' 256 KiB; 2 KiB was one of a reverted rule, kept as a
/// size), a large one, and small ones in between.
fn frame_len(rng: &mut Lcg) -> usize {
    const EDGES: [usize; 11] = [
        2048, 8192, 16_384, 32_768, 65_536, 70_000, 262_144, 300_000, 900_000, 100, 1,
    ];
    match rng.next(4) {
        0 => {
            let edge = EDGES[rng.next(EDGES.len())];
            (edge + rng.next(5)).saturating_sub(2).max(1)
        }
        _ => 1 + rng.next(300),
    }
}

fn frame(index: usize, len: usize) -> Vec<u8> {
    let mut line: Vec<u8> = format!("{index}:").into_bytes();
    line.extend((0..len).map(|i| b'a' + (i % 26) as u8));
    line
}

#[tokio::test]
async fn frames_arrive_whole_whatever_the_read_sizes() {
    for seed in 1..=6u64 {
        let mut rng = Lcg(seed);
        let frames: Vec<Vec<u8>> = (0..120).map(|i| frame(i, frame_len(&mut rng))).collect();
        let mut wire = Vec::new();
        for f in &frames {
            wire.extend_from_slice(f);
            wire.push(b'\n');
        }
        let (mut conn, mut server) = memory_pair(1 << 20);
        let mut received = Vec::new();
        let mut at = 0;
        let mut complete = 0;
        while at < wire.len() {
            let piece = match rng.next(3) {
                0 => 1 + rng.next(16),
                1 => 1 + rng.next(4096),
                _ => 1 + rng.next(100_000),
            };
            let end = (at + piece).min(wire.len());
            server.output.write_all(&wire[at..end]).await.unwrap();
            server.output.flush().await.unwrap();
            complete += wire[at..end].iter().filter(|&&b| b == b'\n').count();
            at = end;
            // Take every frame this piece completed before the next piece
            // goes out, so the reader's next read sees that piece alone.
            while received.len() < complete {
                match tokio::time::timeout(Duration::from_secs(10), conn.inbound.recv()).await {
                    Ok(Some(Inbound::Frame(f))) => received.push(f),
                    other => panic!("seed {seed}: expected a frame, got {other:?}"),
                }
            }
        }
        assert_eq!(received.len(), frames.len(), "seed {seed}");
        for (i, (got, want)) in received.iter().zip(&frames).enumerate() {
            assert!(
                got[..] == want[..],
                "seed {seed}: frame {i} differs ({} bytes, want {})",
                got.len(),
                want.len()
            );
        }
    }
}
