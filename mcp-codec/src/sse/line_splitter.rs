//! The lowest layer of the SSE decoder: bytes to lines.

use bytes::{Buf, BytesMut};

/// The UTF-8 byte order mark, which a stream may start with (once).
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One step of [`LineSplitter::next_line`].
#[derive(Debug)]
pub(super) enum Line {
    /// A whole line, without its line ending.
    Complete(BytesMut),
    /// The current line has grown past the bound. It is being dropped; the
    /// next line returned is the one after it.
    TooLong,
}

/// Cuts an event stream into lines ended by CRLF, LF or CR.
///
/// A CR is taken as a line ending at once, and an LF right after it (maybe
/// in the next chunk) is then swallowed, so "\r" + "\n" fed in two calls is
/// one ending, as it is when fed whole.
#[derive(Debug, Clone)]
pub(super) struct LineSplitter {
    max_line: usize,
    /// How far into the buffer we already looked for a line ending.
    next_index: usize,
    /// The last line ended with CR: an LF at the start of the buffer belongs
    /// to that ending.
    after_cr: bool,
    /// Whether the start of the stream was checked for a BOM.
    bom_checked: bool,
    /// Dropping the rest of a line that was reported as [`Line::TooLong`].
    discarding_line: bool,
}

impl LineSplitter {
    pub(super) fn new(max_line: usize) -> Self {
        Self {
            max_line,
            next_index: 0,
            after_cr: false,
            bom_checked: false,
            discarding_line: false,
        }
    }

    /// Forgets everything about the current stream, ready for a new one.
    pub(super) fn reset(&mut self) {
        *self = Self::new(self.max_line);
    }

    /// The next line taken out of `buf`, or `None` if more bytes are needed.
    /// Never leaves more than `max_line + 1` bytes of a partial line in `buf`.
    pub(super) fn next_line(&mut self, buf: &mut BytesMut) -> Option<Line> {
        loop {
            if !self.bom_checked {
                if buf.len() < BOM.len() && BOM.starts_with(buf) {
                    return None; // Could still become a BOM.
                }
                if buf.starts_with(BOM) {
                    buf.advance(BOM.len());
                }
                self.bom_checked = true;
            }

            if self.after_cr {
                let &first = buf.first()?;
                if first == b'\n' {
                    buf.advance(1);
                }
                self.after_cr = false;
            }

            if self.discarding_line {
                let Some(end) = memchr::memchr2(b'\n', b'\r', buf) else {
                    buf.clear();
                    return None;
                };
                self.after_cr = buf[end] == b'\r';
                buf.advance(end + 1);
                self.discarding_line = false;
                continue;
            }

            let window_end = buf.len().min(self.max_line.saturating_add(1));
            // A buffer shorter than what we scanned is not the one we were
            // given before (a misuse); rescan it rather than panic.
            let start = if self.next_index <= window_end {
                self.next_index
            } else {
                0
            };
            let Some(offset) = memchr::memchr2(b'\n', b'\r', &buf[start..window_end]) else {
                if buf.len() > self.max_line {
                    // The window holds no line ending; what lies beyond it
                    // is searched by the discarding step of the next call.
                    buf.advance(window_end);
                    self.next_index = 0;
                    self.discarding_line = true;
                    return Some(Line::TooLong);
                }
                self.next_index = window_end;
                return None;
            };
            let end = start + offset;
            self.next_index = 0;
            self.after_cr = buf[end] == b'\r';
            let line = buf.split_to(end);
            buf.advance(1);
            return Some(Line::Complete(line));
        }
    }
}
