//! Server-Sent Events, as used by the MCP HTTP transports.
//!
//! [`SseDecoder`] follows the "interpreting an event stream" rules of the
//! WHATWG HTML standard (§9.2.6), with one deliberate difference: a field
//! that is not valid UTF-8 is an error ([`CodecError::InvalidUtf8`]) rather
//! than being replaced with U+FFFD, because MCP events carry JSON, and
//! silently altered JSON is worse than a reported, skipped event.

mod encoder;
mod line_splitter;
#[cfg(test)]
mod tests;

use std::time::Duration;

use bytes::BytesMut;

pub use self::encoder::SseEncoder;
use self::line_splitter::{Line, LineSplitter};
use crate::{CodecError, DEFAULT_MAX_FRAME};

/// One dispatched Server-Sent Event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event` field; `None` (or empty) means the default type, `"message"`.
    pub event: Option<String>,
    /// The `data` lines of the event, joined with `\n`.
    pub data: String,
    /// The `id` field as seen in this event; `None` if the event had no
    /// (valid) `id` line. See [`SseDecoder::last_event_id`] for the value
    /// that persists across events.
    pub id: Option<String>,
    /// The `retry` field of this event, in milliseconds, if it had a valid one.
    pub retry: Option<u64>,
}

impl SseEvent {
    /// A default-typed event with `data` and no id or retry.
    pub fn new(data: impl Into<String>) -> Self {
        Self {
            data: data.into(),
            ..Self::default()
        }
    }

    /// The event type, `"message"` unless the `event` field said otherwise.
    pub fn event_type(&self) -> &str {
        match self.event.as_deref() {
            None | Some("") => "message",
            Some(event) => event,
        }
    }
}

/// Splits a byte stream into [`SseEvent`]s, bounded in size.
///
/// The bound ([`DEFAULT_MAX_FRAME`] by default) applies to every single line
/// (field name included) and to the accumulated data of one event. Going over
/// it yields [`CodecError::FrameTooLarge`] once; the decoder then skips to the
/// end of that event (its blank line) and carries on with the next one. An
/// invalid UTF-8 field is handled the same way with [`CodecError::InvalidUtf8`].
///
/// A skipped event is never dispatched and its `id` does not become the last
/// event id; a `retry` read before the problem keeps its effect, since the
/// standard applies `retry` as soon as its line is read.
///
/// ```
/// use bytes::BytesMut;
/// use mcp_codec::SseDecoder;
///
/// let mut decoder = SseDecoder::new();
/// let mut buf = BytesMut::from(&b"id: 7\ndata: {\"a\":\r\ndata: 1}\r\n"[..]);
/// assert_eq!(decoder.decode(&mut buf).unwrap(), None); // no blank line yet
/// buf.extend_from_slice(b"\r\n");
/// let event = decoder.decode(&mut buf).unwrap().unwrap();
/// assert_eq!(event.data, "{\"a\":\n1}");
/// assert_eq!(event.event_type(), "message");
/// assert_eq!(decoder.last_event_id(), Some("7"));
/// ```
#[derive(Debug, Clone)]
pub struct SseDecoder {
    lines: LineSplitter,
    max_event: usize,
    pending: PendingEvent,
    /// After an error: ignore lines up to the blank line ending this event.
    skipping_event: bool,
    /// The standard's "last event ID string": the id of the latest event
    /// that ended, kept until another id replaces it.
    last_event_id: String,
    /// The reconnection time in milliseconds, from the latest valid `retry`.
    retry: Option<u64>,
}

/// The buffers of the event being read.
#[derive(Debug, Clone, Default)]
struct PendingEvent {
    /// Each `data` line's value followed by `\n`; empty if there was no
    /// `data` line.
    data: String,
    /// Empty means the default type.
    event: String,
    id: Option<String>,
    retry: Option<u64>,
}

impl SseDecoder {
    /// A decoder bounded to [`DEFAULT_MAX_FRAME`] bytes per line and per event.
    pub fn new() -> Self {
        Self::with_max_event(DEFAULT_MAX_FRAME)
    }

    /// A decoder bounded to `max` bytes per line and per event's data.
    pub fn with_max_event(max: usize) -> Self {
        Self {
            lines: LineSplitter::new(max),
            max_event: max,
            pending: PendingEvent::default(),
            skipping_event: false,
            last_event_id: String::new(),
            retry: None,
        }
    }

    /// The bound, in bytes, on one line and on one event's data.
    pub fn max_event(&self) -> usize {
        self.max_event
    }

    /// The id to resume from (the `Last-Event-ID` header): the latest `id`
    /// of an event that ended, even one with no data. `None` before any id,
    /// or after an empty `id` reset it.
    pub fn last_event_id(&self) -> Option<&str> {
        Some(self.last_event_id.as_str()).filter(|id| !id.is_empty())
    }

    /// The reconnection delay from the latest valid `retry` field, if any.
    pub fn retry(&self) -> Option<Duration> {
        self.retry.map(Duration::from_millis)
    }

    /// Offers `buffer` for the data of the event being read, so that the
    /// memory of a large event can be used again for the next one (a caller
    /// that sees a large event coming gives back the data of an earlier
    /// one). Taken, emptied, only while no `data` line of the event has been
    /// read and when it holds more than the buffer in hand; dropped
    /// otherwise. What is decoded is the same either way.
    pub fn offer_data_buffer(&mut self, mut buffer: String) {
        if self.pending.data.is_empty() && buffer.capacity() > self.pending.data.capacity() {
            buffer.clear();
            self.pending.data = buffer;
        }
    }

    /// Takes lines out of `buf` until an event is dispatched (`Ok(Some)`) or
    /// more bytes are needed (`Ok(None)`; append them to `buf` and call again).
    ///
    /// Blank-line-terminated blocks with no `data` line dispatch nothing, but
    /// their `id` and `retry` still take effect.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<SseEvent>, CodecError> {
        loop {
            match self.lines.next_line(buf) {
                None => return Ok(None),
                Some(Line::TooLong) if self.skipping_event => {}
                Some(Line::TooLong) => return Err(self.skip_event(self.too_large())),
                Some(Line::Complete(line)) => {
                    if let Some(event) = self.process_line(&line)? {
                        return Ok(Some(event));
                    }
                }
            }
        }
    }

    /// Like [`decode`](Self::decode), for when the stream has ended: returns
    /// the complete events still in `buf`, then drops the incomplete one (as
    /// the standard says) and returns `Ok(None)`, leaving `buf` empty.
    ///
    /// After that the decoder is ready for a new stream (say, after
    /// reconnecting) and still knows [`last_event_id`](Self::last_event_id)
    /// and [`retry`](Self::retry).
    pub fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<SseEvent>, CodecError> {
        if let Some(event) = self.decode(buf)? {
            return Ok(Some(event));
        }
        buf.clear();
        self.lines.reset();
        self.pending = PendingEvent::default();
        self.skipping_event = false;
        Ok(None)
    }

    /// Applies one line to the pending event; a blank line may dispatch it.
    fn process_line(&mut self, line: &[u8]) -> Result<Option<SseEvent>, CodecError> {
        if line.is_empty() {
            if std::mem::take(&mut self.skipping_event) {
                self.pending = PendingEvent::default();
                return Ok(None);
            }
            return Ok(self.dispatch());
        }
        if self.skipping_event || line[0] == b':' {
            return Ok(None); // The rest of a skipped event, or a comment.
        }
        let (name, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match name {
            b"data" => {
                let value = self.utf8(value)?;
                // The final data drops the last `\n`, so this is its length.
                if self.pending.data.len() + value.len() > self.max_event {
                    return Err(self.skip_event(self.too_large()));
                }
                // Room for the value and its `\n` at once: a `\n` pushed
                // after a first line that filled the string exactly would
                // double it (a second copy of a megabyte-long event).
                self.pending.data.reserve(value.len() + 1);
                self.pending.data.push_str(value);
                self.pending.data.push('\n');
            }
            b"event" => self.pending.event = self.utf8(value)?.to_owned(),
            b"id" if !value.contains(&0) => self.pending.id = Some(self.utf8(value)?.to_owned()),
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                // Only digits, so parsing fails only on overflow: ignore that
                // value like any other invalid one.
                if let Some(millis) = std::str::from_utf8(value)
                    .ok()
                    .and_then(|digits| digits.parse().ok())
                {
                    self.retry = Some(millis);
                    self.pending.retry = Some(millis);
                }
            }
            _ => {} // Unknown fields, `id` with NUL and invalid `retry` are ignored.
        }
        Ok(None)
    }

    /// The blank line ending an event: updates the last event id and returns
    /// the event unless it had no data.
    fn dispatch(&mut self) -> Option<SseEvent> {
        let pending = std::mem::take(&mut self.pending);
        if let Some(id) = &pending.id {
            self.last_event_id.clone_from(id);
        }
        let mut data = pending.data;
        // Every data line appended a `\n`; no `\n` at all means no data line.
        data.pop()?;
        Some(SseEvent {
            event: Some(pending.event).filter(|event| !event.is_empty()),
            data,
            id: pending.id,
            retry: pending.retry,
        })
    }

    fn utf8<'a>(&mut self, value: &'a [u8]) -> Result<&'a str, CodecError> {
        std::str::from_utf8(value).map_err(|_| self.skip_event(CodecError::InvalidUtf8))
    }

    /// Drops the pending event and ignores lines until its blank line.
    fn skip_event(&mut self, error: CodecError) -> CodecError {
        self.pending = PendingEvent::default();
        self.skipping_event = true;
        error
    }

    fn too_large(&self) -> CodecError {
        CodecError::FrameTooLarge {
            limit: self.max_event,
        }
    }
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(feature = "tokio-util")]
impl tokio_util::codec::Decoder for SseDecoder {
    type Item = SseEvent;
    type Error = CodecError;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<SseEvent>, CodecError> {
        SseDecoder::decode(self, buf)
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<SseEvent>, CodecError> {
        SseDecoder::decode_eof(self, buf)
    }
}
