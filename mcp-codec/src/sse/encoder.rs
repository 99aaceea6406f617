//! Writing events, for test servers and fakes.

use bytes::BytesMut;

use super::SseEvent;
use crate::CodecError;

/// Writes [`SseEvent`]s in the event stream format.
///
/// Whatever it writes, [`SseDecoder`](super::SseDecoder) reads back as the
/// same event, except that line endings inside `data` (CRLF, CR or LF) all
/// come back as `\n`, and an `event` of `Some("")` comes back as `None`.
///
/// ```
/// use bytes::BytesMut;
/// use mcp_codec::{SseEncoder, SseEvent};
///
/// let mut dst = BytesMut::new();
/// let event = SseEvent { id: Some("1".into()), ..SseEvent::new("a\nb") };
/// SseEncoder.encode(&event, &mut dst).unwrap();
/// assert_eq!(&dst[..], b"id: 1\ndata: a\ndata: b\n\n");
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct SseEncoder;

impl SseEncoder {
    /// An encoder (it has no state).
    pub fn new() -> Self {
        Self
    }

    /// Appends `event`, ended by a blank line, to `dst`.
    ///
    /// Refuses, leaving `dst` untouched, an `event` or `id` containing CR or
    /// LF ([`CodecError::NewlineInFrame`]) or an `id` containing U+0000
    /// ([`CodecError::NulInEventId`]), since a receiver would misread both.
    pub fn encode(&self, event: &SseEvent, dst: &mut BytesMut) -> Result<(), CodecError> {
        if let Some(event_type) = &event.event {
            check_single_line(event_type)?;
        }
        if let Some(id) = &event.id {
            check_single_line(id)?;
            if id.contains('\0') {
                return Err(CodecError::NulInEventId);
            }
        }

        dst.reserve(event.data.len() + 64);
        if let Some(event_type) = &event.event {
            put_field(dst, "event", event_type);
        }
        if let Some(id) = &event.id {
            put_field(dst, "id", id);
        }
        if let Some(retry) = event.retry {
            put_field(dst, "retry", &retry.to_string());
        }
        let mut rest = event.data.as_str();
        loop {
            match memchr::memchr2(b'\n', b'\r', rest.as_bytes()) {
                Some(end) => {
                    put_field(dst, "data", &rest[..end]);
                    let ending = if rest[end..].starts_with("\r\n") {
                        2
                    } else {
                        1
                    };
                    rest = &rest[end + ending..];
                }
                None => {
                    put_field(dst, "data", rest);
                    break;
                }
            }
        }
        dst.extend_from_slice(b"\n");
        Ok(())
    }

    /// Appends a comment line (`: comment`), which receivers ignore; servers
    /// send them to keep idle connections open.
    pub fn encode_comment(&self, comment: &str, dst: &mut BytesMut) -> Result<(), CodecError> {
        check_single_line(comment)?;
        put_field(dst, "", comment);
        Ok(())
    }
}

fn check_single_line(value: &str) -> Result<(), CodecError> {
    match memchr::memchr2(b'\n', b'\r', value.as_bytes()) {
        Some(_) => Err(CodecError::NewlineInFrame),
        None => Ok(()),
    }
}

/// `name: value\n`. The space after the colon is always written, so that a
/// value starting with a space survives the one space a reader strips.
fn put_field(dst: &mut BytesMut, name: &str, value: &str) {
    dst.extend_from_slice(name.as_bytes());
    dst.extend_from_slice(b": ");
    dst.extend_from_slice(value.as_bytes());
    dst.extend_from_slice(b"\n");
}

#[cfg(feature = "tokio-util")]
mod tokio_codec {
    use bytes::BytesMut;
    use tokio_util::codec::Encoder;

    use super::SseEncoder;
    use crate::{CodecError, SseEvent};

    impl Encoder<&SseEvent> for SseEncoder {
        type Error = CodecError;

        fn encode(&mut self, event: &SseEvent, dst: &mut BytesMut) -> Result<(), CodecError> {
            SseEncoder::encode(self, event, dst)
        }
    }

    impl Encoder<SseEvent> for SseEncoder {
        type Error = CodecError;

        fn encode(&mut self, event: SseEvent, dst: &mut BytesMut) -> Result<(), CodecError> {
            SseEncoder::encode(self, &event, dst)
        }
    }
}
