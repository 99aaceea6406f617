//! A bounded ring of the last bytes a child wrote to stderr.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// How much of a child's stderr is kept by default: the last 64 KiB.
pub const DEFAULT_STDERR_TAIL_BYTES: usize = 64 * 1024;

/// The last bytes a server wrote to its stderr, bounded.
///
/// Cloning shares the same ring. Older bytes are dropped as new ones arrive; the
/// ring never grows past its capacity. [`StderrTail::dropped`] says how many bytes
/// were dropped, so a reader can tell the tail is not the whole output.
#[derive(Clone, Debug)]
pub struct StderrTail {
    inner: Arc<Mutex<Ring>>,
}

#[derive(Debug)]
struct Ring {
    bytes: VecDeque<u8>,
    capacity: usize,
    dropped: u64,
}

impl StderrTail {
    /// An empty ring keeping at most `capacity` bytes.
    pub fn new(capacity: usize) -> Self {
        Self {
            inner: Arc::new(Mutex::new(Ring {
                // Grown on the first write: most servers say nothing on
                // stderr, and a hub may hold hundreds of them.
                bytes: VecDeque::new(),
                capacity,
                dropped: 0,
            })),
        }
    }

    /// Appends bytes, dropping the oldest ones beyond the capacity.
    pub fn push(&self, data: &[u8]) {
        let mut ring = self.lock();
        let cap = ring.capacity;
        if data.len() >= cap {
            let skipped = ring.bytes.len() + (data.len() - cap);
            ring.dropped += skipped as u64;
            ring.bytes.clear();
            ring.bytes.extend(&data[data.len() - cap..]);
            return;
        }
        let overflow = (ring.bytes.len() + data.len()).saturating_sub(cap);
        ring.bytes.drain(..overflow);
        ring.dropped += overflow as u64;
        ring.bytes.extend(data);
    }

    /// The kept bytes as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        let ring = self.lock();
        let (a, b) = ring.bytes.as_slices();
        let mut all = Vec::with_capacity(a.len() + b.len());
        all.extend_from_slice(a);
        all.extend_from_slice(b);
        String::from_utf8_lossy(&all).into_owned()
    }

    /// How many older bytes were dropped to stay within the capacity.
    pub fn dropped(&self) -> u64 {
        self.lock().dropped
    }

    /// The capacity in bytes.
    pub fn capacity(&self) -> usize {
        self.lock().capacity
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Ring> {
        // A poisoned ring only means a pusher panicked mid-append; the bytes are
        // still valid diagnostics, so keep using them.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_the_tail() {
        let tail = StderrTail::new(8);
        tail.push(b"hello ");
        tail.push(b"world");
        assert_eq!(tail.text(), "lo world");
        assert_eq!(tail.dropped(), 3);
        tail.push(b"0123456789abc");
        assert_eq!(tail.text(), "56789abc");
        assert_eq!(tail.dropped(), 3 + 8 + 5);
    }
}
