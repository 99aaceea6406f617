//! The one error type of this crate.

use std::io;

/// Everything that can go wrong while framing or unframing.
///
/// Decoding errors are not sticky: after returning one, a decoder has already
/// arranged to skip the offending frame or event and the next call carries on
/// with the following one (see the crate docs on resynchronisation).
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CodecError {
    /// An incoming line or SSE event (or an outgoing frame) exceeded the size bound.
    #[error("frame exceeds the limit of {limit} bytes")]
    FrameTooLarge {
        /// The bound that was exceeded, in bytes.
        limit: usize,
    },
    /// A frame or SSE field to be encoded contains a raw `\n` or `\r`, which
    /// would split it on the wire.
    #[error("frame contains a raw newline or carriage return")]
    NewlineInFrame,
    /// An SSE event id to be encoded contains U+0000, which receivers ignore.
    #[error("SSE event id contains a NUL character")]
    NulInEventId,
    /// An incoming SSE field (`data`, `event` or `id`) is not valid UTF-8; the
    /// whole event is skipped.
    #[error("SSE event contains invalid UTF-8")]
    InvalidUtf8,
    /// The byte source failed. Only produced through the `From<io::Error>`
    /// conversion that `tokio_util::codec` requires; the kind is kept (not the
    /// error itself) so that this type stays `Clone` and `Eq`.
    #[error("I/O error: {kind}")]
    Io {
        /// What kind of I/O failure happened.
        kind: io::ErrorKind,
    },
}

impl From<io::Error> for CodecError {
    fn from(error: io::Error) -> Self {
        Self::Io { kind: error.kind() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_error_keeps_its_kind() {
        let error = CodecError::from(io::Error::new(io::ErrorKind::BrokenPipe, "gone"));
        assert_eq!(
            error,
            CodecError::Io {
                kind: io::ErrorKind::BrokenPipe
            }
        );
        assert_eq!(error.to_string(), "I/O error: broken pipe");
    }

    #[test]
    fn frame_too_large_names_the_limit() {
        let error = CodecError::FrameTooLarge { limit: 10 };
        assert_eq!(error.to_string(), "frame exceeds the limit of 10 bytes");
    }
}
