//! Newline-delimited frames, as used by the MCP stdio transport.
//!
//! One frame per line, terminated by `\n` (a `\r` just before it is accepted
//! and removed too). Blank lines between frames are skipped. A UTF-8 byte
//! order mark at the very start of the stream is ignored, as RFC 8259 §8.1
//! allows a parser to: a program whose console encoding writes one would
//! otherwise lose its first message (often the answer to `initialize`).

use std::collections::VecDeque;

use bytes::{Buf, Bytes, BytesMut};

use crate::{CodecError, DEFAULT_MAX_FRAME};

/// Bytes kept of each end of a skipped line.
pub const EDGE_BYTES: usize = 256;

/// Skipped-line ends kept until taken (older ones are dropped).
const MAX_EDGES: usize = 4;

/// One end of a line that was too long and was skipped, at most
/// [`EDGE_BYTES`]: its first bytes, as soon as the line is known to be too
/// long, and its last bytes (line ending removed), once its end arrives. A
/// line that never ends has no `End`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkippedEdge {
    /// The first bytes of the skipped line.
    Start(Bytes),
    /// The last bytes of the skipped line.
    End(Bytes),
}

#[cfg(test)]
mod tests;

/// Splits a byte stream into newline-terminated frames, bounded in size.
///
/// ```
/// use bytes::BytesMut;
/// use mcp_codec::LineDecoder;
///
/// let mut decoder = LineDecoder::new();
/// let mut buf = BytesMut::from(&b"{\"a\":1}\r\n\n{\"b\""[..]);
/// assert_eq!(decoder.decode(&mut buf).unwrap().as_deref(), Some(&b"{\"a\":1}"[..]));
/// assert_eq!(decoder.decode(&mut buf).unwrap(), None); // `{"b"` is incomplete
/// buf.extend_from_slice(b":2}\n");
/// assert_eq!(decoder.decode(&mut buf).unwrap().as_deref(), Some(&b"{\"b\":2}"[..]));
/// ```
#[derive(Debug, Clone)]
pub struct LineDecoder {
    max_frame: usize,
    /// How far into the buffer we have already looked for `\n` without
    /// finding one, so that a partial line is never scanned twice.
    next_index: usize,
    /// Set after an oversized line was reported: bytes are dropped until the
    /// next `\n`, which ends that line.
    discarding: bool,
    /// The last bytes dropped of the line being skipped.
    tail: Vec<u8>,
    /// Ends of skipped lines not taken yet.
    edges: VecDeque<SkippedEdge>,
    /// No line has been returned or skipped yet: a byte order mark may
    /// still open the stream.
    at_start: bool,
}

/// The UTF-8 byte order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

impl LineDecoder {
    /// A decoder bounded to [`DEFAULT_MAX_FRAME`] bytes per frame.
    pub fn new() -> Self {
        Self::with_max_frame(DEFAULT_MAX_FRAME)
    }

    /// A decoder bounded to `max` bytes per frame (line ending not counted).
    pub fn with_max_frame(max: usize) -> Self {
        Self {
            max_frame: max,
            next_index: 0,
            discarding: false,
            tail: Vec::new(),
            edges: VecDeque::new(),
            at_start: true,
        }
    }

    /// Drops a byte order mark opening the stream (once; see the module
    /// docs).
    fn strip_bom(&mut self, line: &mut Bytes) {
        if std::mem::take(&mut self.at_start) && line.starts_with(BOM) {
            line.advance(BOM.len());
        }
    }

    /// The next end of a skipped line, oldest first (see [`SkippedEdge`]).
    /// After [`decode`](Self::decode) reports [`CodecError::FrameTooLarge`]
    /// the line's `Start` is here; its `End` once a later call has seen the
    /// line's newline (take edges before handling the frame that call
    /// returns, to keep them in stream order). At most a few are kept.
    pub fn take_skipped_edge(&mut self) -> Option<SkippedEdge> {
        self.edges.pop_front()
    }

    fn push_edge(&mut self, edge: SkippedEdge) {
        if self.edges.len() >= MAX_EDGES {
            self.edges.pop_front();
        }
        self.edges.push_back(edge);
    }

    /// Keeps the last bytes of what is dropped of a skipped line: one more
    /// than an edge, for a `\r` that may turn out to end the line.
    fn keep_tail(&mut self, dropped: &[u8]) {
        let from = dropped.len().saturating_sub(EDGE_BYTES + 1);
        self.tail.extend_from_slice(&dropped[from..]);
        let excess = self.tail.len().saturating_sub(EDGE_BYTES + 1);
        self.tail.drain(..excess);
    }

    /// The skipped line ended: its `End` edge.
    fn end_skip(&mut self) {
        let mut tail = std::mem::take(&mut self.tail);
        tail.truncate(strip_carriage_return(&tail).len());
        let excess = tail.len().saturating_sub(EDGE_BYTES);
        tail.drain(..excess);
        self.push_edge(SkippedEdge::End(Bytes::from(tail)));
    }

    /// Both edges of a whole line that is too long.
    fn skip_whole(&mut self, line: &[u8]) {
        let start = Bytes::copy_from_slice(&line[..line.len().min(EDGE_BYTES)]);
        self.push_edge(SkippedEdge::Start(start));
        self.tail.clear();
        self.keep_tail(line);
        self.end_skip();
    }

    /// The largest frame, in bytes, this decoder accepts.
    pub fn max_frame(&self) -> usize {
        self.max_frame
    }

    /// Takes the next complete frame out of `buf`, without its `\n` or `\r\n`.
    ///
    /// Empty and whitespace-only lines (space, tab, CR) are skipped.
    /// `Ok(None)` means more bytes are needed; append them to `buf` and call
    /// again.
    ///
    /// A line longer than [`max_frame`](Self::max_frame) yields
    /// [`CodecError::FrameTooLarge`] once, as soon as that is certain; the
    /// decoder then drops bytes up to and including the next `\n`, across
    /// calls and as they arrive, and carries on with the following line.
    /// Whenever it returns `Ok(None)`, `buf` holds at most `max_frame + 1`
    /// bytes.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
        loop {
            if self.discarding {
                match memchr::memchr(b'\n', buf) {
                    Some(newline) => {
                        self.keep_tail(&buf[..newline]);
                        buf.advance(newline + 1);
                        self.discarding = false;
                        self.end_skip();
                    }
                    None => {
                        self.keep_tail(buf);
                        buf.clear();
                        return Ok(None);
                    }
                }
            }

            // A frame of `max_frame` bytes may be followed by "\r\n", so the
            // newline can sit at most at index `max_frame + 1`.
            let window_end = buf.len().min(self.max_frame.saturating_add(2));
            // A buffer shorter than what we scanned is not the one we were
            // given before (a misuse); rescan it rather than panic.
            let start = if self.next_index <= window_end {
                self.next_index
            } else {
                0
            };
            let Some(offset) = memchr::memchr(b'\n', &buf[start..window_end]) else {
                if self.certainly_too_long(buf) {
                    // The window holds no newline; what lies beyond it is
                    // searched by the discarding step of the next call.
                    let start = Bytes::copy_from_slice(&buf[..window_end.min(EDGE_BYTES)]);
                    self.push_edge(SkippedEdge::Start(start));
                    self.tail.clear();
                    self.keep_tail(&buf[..window_end]);
                    buf.advance(window_end);
                    self.next_index = 0;
                    self.discarding = true;
                    self.at_start = false;
                    return Err(self.too_large());
                }
                self.next_index = window_end;
                return Ok(None);
            };

            let newline = start + offset;
            self.next_index = 0;
            let mut line = buf.split_to(newline + 1).freeze();
            line.truncate(strip_carriage_return(&line[..newline]).len());
            self.strip_bom(&mut line);
            if line.len() > self.max_frame {
                self.skip_whole(&line);
                return Err(self.too_large());
            }
            if !is_blank(&line) {
                return Ok(Some(line));
            }
        }
    }

    /// Like [`decode`](Self::decode), for when the input has ended: once no
    /// complete line is left, returns the final unterminated line, if any
    /// (same bound and blank-line rules), and leaves `buf` empty.
    pub fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
        if let Some(frame) = self.decode(buf)? {
            return Ok(Some(frame));
        }
        self.next_index = 0;
        if std::mem::take(&mut self.discarding) {
            // The rest of an oversized line that was already reported.
            self.keep_tail(buf);
            buf.clear();
            self.end_skip();
            return Ok(None);
        }
        let mut line = buf.split().freeze();
        line.truncate(strip_carriage_return(&line).len());
        self.strip_bom(&mut line);
        if line.len() > self.max_frame {
            self.skip_whole(&line);
            return Err(self.too_large());
        }
        Ok((!is_blank(&line)).then_some(line))
    }

    /// Whether `buf`, which has no `\n` within the window, already holds
    /// more than a frame can be. A buffer of exactly `max_frame + 1` bytes
    /// ending in `\r` may still be a full frame whose `\n` is on its way.
    fn certainly_too_long(&self, buf: &[u8]) -> bool {
        match buf.len().checked_sub(self.max_frame) {
            None | Some(0) => false,
            Some(1) => buf.last() != Some(&b'\r'),
            Some(_) => true,
        }
    }

    fn too_large(&self) -> CodecError {
        CodecError::FrameTooLarge {
            limit: self.max_frame,
        }
    }
}

impl Default for LineDecoder {
    fn default() -> Self {
        Self::new()
    }
}

/// Writes frames as newline-terminated lines, refusing frames that would not
/// come back out of a [`LineDecoder`] unchanged.
#[derive(Debug, Clone)]
pub struct LineEncoder {
    max_frame: usize,
}

impl LineEncoder {
    /// An encoder bounded to [`DEFAULT_MAX_FRAME`] bytes per frame.
    pub fn new() -> Self {
        Self::with_max_frame(DEFAULT_MAX_FRAME)
    }

    /// An encoder bounded to `max` bytes per frame (the `\n` not counted).
    pub fn with_max_frame(max: usize) -> Self {
        Self { max_frame: max }
    }

    /// The largest frame, in bytes, this encoder writes.
    pub fn max_frame(&self) -> usize {
        self.max_frame
    }

    /// Appends `frame` and a `\n` to `dst`.
    ///
    /// Refuses, leaving `dst` untouched, a frame longer than
    /// [`max_frame`](Self::max_frame) ([`CodecError::FrameTooLarge`]) or one
    /// containing a raw `\n` or `\r` ([`CodecError::NewlineInFrame`]).
    /// Serialised JSON never contains either: they are escaped in strings.
    pub fn encode(&self, frame: &[u8], dst: &mut BytesMut) -> Result<(), CodecError> {
        self.check(frame)?;
        dst.reserve(frame.len() + 1);
        dst.extend_from_slice(frame);
        dst.extend_from_slice(b"\n");
        Ok(())
    }
}

impl LineEncoder {
    /// [`encode`](Self::encode) for a frame that is valid JSON: a raw `\n`
    /// or `\r` in it can only be whitespace between tokens (JSON strings
    /// escape both), so each becomes a space instead of refusing the frame.
    /// Raw JSON kept verbatim (a schema written over several lines, inside a
    /// `RawValue`) then still travels as one line.
    pub fn encode_json(&self, frame: &[u8], dst: &mut BytesMut) -> Result<(), CodecError> {
        match self.encode(frame, dst) {
            Err(CodecError::NewlineInFrame) => {
                let flat: Vec<u8> = frame
                    .iter()
                    .map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b })
                    .collect();
                self.encode(&flat, dst)
            }
            other => other,
        }
    }

    /// Whether [`encode`](Self::encode) would accept `frame`, without writing
    /// it: lets a sender refuse a frame before queueing it.
    pub fn check(&self, frame: &[u8]) -> Result<(), CodecError> {
        if frame.len() > self.max_frame {
            return Err(CodecError::FrameTooLarge {
                limit: self.max_frame,
            });
        }
        if memchr::memchr2(b'\n', b'\r', frame).is_some() {
            return Err(CodecError::NewlineInFrame);
        }
        Ok(())
    }
}

impl Default for LineEncoder {
    fn default() -> Self {
        Self::new()
    }
}

fn strip_carriage_return(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// JSON's insignificant whitespace (a `\n` cannot occur inside a line).
fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|byte| matches!(byte, b' ' | b'\t' | b'\r'))
}

#[cfg(feature = "tokio-util")]
mod tokio_codec {
    use bytes::{Bytes, BytesMut};
    use tokio_util::codec::{Decoder, Encoder};

    use super::{LineDecoder, LineEncoder};
    use crate::CodecError;

    impl Decoder for LineDecoder {
        type Item = Bytes;
        type Error = CodecError;

        fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
            LineDecoder::decode(self, buf)
        }

        fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, CodecError> {
            LineDecoder::decode_eof(self, buf)
        }
    }

    impl Encoder<&[u8]> for LineEncoder {
        type Error = CodecError;

        fn encode(&mut self, frame: &[u8], dst: &mut BytesMut) -> Result<(), CodecError> {
            LineEncoder::encode(self, frame, dst)
        }
    }

    impl Encoder<Bytes> for LineEncoder {
        type Error = CodecError;

        fn encode(&mut self, frame: Bytes, dst: &mut BytesMut) -> Result<(), CodecError> {
            LineEncoder::encode(self, &frame, dst)
        }
    }
}
