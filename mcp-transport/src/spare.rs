//! Buffers of large messages, kept for the next large message: a stdio
//! frame, an HTTP JSON body that came in pieces, an SSE event and its data.
//!
//! Why: glibc's malloc gives the top of its heap back to the system once
//! more than about twice its largest freed block is free there. The buffer
//! of a 1 MiB message, freed next to the 1 MiB text decoded from it, went
//! back after every call, and the next call touched fresh pages: page faults
//! were a third of the client's time on 1 MiB results. Whether that happened
//! depended on what the process had allocated before (over stdio, one
//! smaller read after the first answer was enough to turn it on: 11× the
//! page faults). Only messages of [`SpareBuffers::LARGE`] bytes or more use
//! kept buffers, and what is kept is bounded for the whole process: at most
//! [`SpareBuffers::COUNT`] buffers of at most [`SpareBuffers::CAPACITY`]
//! bytes each.

use std::sync::Mutex;

use bytes::{Bytes, BytesMut};

/// The buffers every connection of the process shares.
pub(crate) static SPARES: SpareBuffers = SpareBuffers::new();

/// A bounded set of empty buffers.
#[derive(Debug)]
pub(crate) struct SpareBuffers(Mutex<Vec<Vec<u8>>>);

impl SpareBuffers {
    /// How many buffers are kept.
    pub(crate) const COUNT: usize = 2;
    /// The size from which a message is read into a kept buffer.
    pub(crate) const LARGE: usize = 256 * 1024;
    /// The largest buffer kept, in bytes of capacity.
    pub(crate) const CAPACITY: usize = 4 << 20;

    pub(crate) const fn new() -> Self {
        Self(Mutex::new(Vec::new()))
    }

    /// An empty buffer: a kept one when there is one.
    pub(crate) fn take(&self) -> Vec<u8> {
        self.0
            .lock()
            .ok()
            .and_then(|mut spares| spares.pop())
            .unwrap_or_default()
    }

    /// Keeps `buffer` for a later large message, if its size is between
    /// [`Self::LARGE`] and [`Self::CAPACITY`] and there is room; frees it
    /// otherwise.
    pub(crate) fn give_back(&self, mut buffer: Vec<u8>) {
        if !(Self::LARGE..=Self::CAPACITY).contains(&buffer.capacity()) {
            return;
        }
        buffer.clear();
        if let Ok(mut spares) = self.0.lock()
            && spares.len() < Self::COUNT
        {
            spares.push(buffer);
        }
    }

    /// A kept buffer (or a new one) holding a copy of `partial`, the start
    /// of a large message, with room for `more` bytes after it. Made
    /// through `Bytes`, which `BytesMut` takes without a copy.
    pub(crate) fn continue_in(&self, partial: &[u8], more: usize) -> BytesMut {
        let mut spare = self.take();
        spare.reserve(partial.len() + more);
        spare.extend_from_slice(partial);
        BytesMut::from(Bytes::from(spare))
    }

    /// `buffer` as `Bytes` that give it back here when the last of them
    /// drops.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn share(&'static self, buffer: Vec<u8>) -> Bytes {
        // Through `Bytes`, which `BytesMut` takes without a copy.
        self.share_mut(BytesMut::from(Bytes::from(buffer)))
    }

    /// `frame` as `Bytes` that give its memory back here when the last of
    /// them drops. `frame` is the only owner of its memory (a frame split
    /// off a kept buffer that nothing else holds any more), so all of that
    /// memory comes back, not only the frame's part.
    pub(crate) fn share_mut(&'static self, frame: BytesMut) -> Bytes {
        Bytes::from_owner(Spare {
            buffer: frame,
            home: self,
        })
    }
}

/// A large message, owned by its `Bytes`.
struct Spare {
    buffer: BytesMut,
    home: &'static SpareBuffers,
}

impl AsRef<[u8]> for Spare {
    fn as_ref(&self) -> &[u8] {
        &self.buffer
    }
}

impl Drop for Spare {
    fn drop(&mut self) {
        let mut buffer = std::mem::take(&mut self.buffer);
        // Emptied first, so taking its memory back as a `Vec` moves nothing.
        buffer.clear();
        self.home.give_back(Vec::from(buffer));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_joined_body_gives_its_buffer_back_when_its_last_bytes_drop() {
        static POOL: SpareBuffers = SpareBuffers::new();
        let mut buffer = POOL.take();
        assert_eq!(buffer.capacity(), 0, "nothing is kept at first");
        buffer.resize(SpareBuffers::LARGE, 7);
        let (address, capacity) = (buffer.as_ptr(), buffer.capacity());
        let body = POOL.share(buffer);
        assert_eq!(body.len(), SpareBuffers::LARGE);
        let part = body.slice(10..20);
        drop(body);
        assert_eq!(
            POOL.take().capacity(),
            0,
            "a slice still holds the buffer, so it is not handed out"
        );
        assert_eq!(&part[..], &[7; 10][..]);
        drop(part);
        let again = POOL.take();
        assert!(again.is_empty());
        assert_eq!((again.as_ptr(), again.capacity()), (address, capacity));
        assert_eq!(POOL.take().capacity(), 0, "one buffer was kept, and taken");
    }

    #[test]
    fn spare_buffers_are_bounded_in_count_and_size() {
        static POOL: SpareBuffers = SpareBuffers::new();
        POOL.give_back(Vec::with_capacity(SpareBuffers::CAPACITY + 1));
        POOL.give_back(Vec::with_capacity(SpareBuffers::LARGE - 1));
        assert_eq!(
            POOL.take().capacity(),
            0,
            "buffers too large or too small are freed"
        );
        for _ in 0..SpareBuffers::COUNT + 1 {
            drop(POOL.share(vec![1; SpareBuffers::CAPACITY]));
        }
        let kept: Vec<_> = std::iter::from_fn(|| Some(POOL.take()))
            .take_while(|b| b.capacity() > 0)
            .collect();
        assert_eq!(kept.len(), SpareBuffers::COUNT);
        assert!(kept.iter().all(|b| b.capacity() == SpareBuffers::CAPACITY));
    }

    #[test]
    fn a_frame_split_off_a_kept_buffer_gives_the_whole_buffer_back() {
        static POOL: SpareBuffers = SpareBuffers::new();
        let mut buffer = BytesMut::from(Bytes::from(vec![0u8; 0]));
        buffer.reserve(SpareBuffers::LARGE);
        buffer.extend_from_slice(&[5; 1000]);
        let address = buffer.as_ptr();
        let frame = buffer.split_to(600).freeze();
        drop(buffer);
        let frame = POOL.share_mut(frame.try_into_mut().expect("the only owner"));
        assert_eq!(&frame[..], &[5; 600][..]);
        assert_eq!(frame.as_ptr(), address, "no copy");
        drop(frame);
        let again = POOL.take();
        assert!(again.is_empty());
        assert_eq!(again.as_ptr(), address);
        assert!(again.capacity() >= SpareBuffers::LARGE);
    }
}
