//! Sans-IO bounded framing for MCP.
//!
//! Two framings, each a decoder and an encoder:
//!
//! - [`LineDecoder`] / [`LineEncoder`]: newline-delimited frames, as on the
//!   stdio transport (one JSON-RPC message per line).
//! - [`SseDecoder`] / [`SseEncoder`]: Server-Sent Events, as on the HTTP
//!   transports.
//!
//! # IO contract
//!
//! This crate does no IO, spawns nothing and never blocks: the caller reads
//! bytes from wherever it likes, appends them to a [`bytes::BytesMut`], and
//! calls `decode` on it until it returns `Ok(None)` ("need more bytes"); at the
//! end of input it calls `decode_eof` the same way. Each decoder remembers how
//! far it has looked, so it must always be given the same buffer, with new
//! bytes only appended. Decoded frames are [`bytes::Bytes`] split off that
//! buffer (no copy). The framing knows nothing of JSON or MCP methods and the
//! crate uses no serde: frames are bytes, events are strings. The one look
//! inside a frame is [`peek_notification`]: a scan of a JSON-RPC envelope
//! that tells a notification's method without parsing the frame, so a
//! session can drop one nobody wants cheaply (it names no method itself). (Who caused a codec error
//! is the transport's call: `TransportError::cause`.)
//!
//! With the `tokio-util` feature, the decoders and encoders also implement
//! `tokio_util::codec::{Decoder, Encoder}`, for use with `FramedRead` /
//! `FramedWrite`. Note that such a stream yields `None` right after an error,
//! and when polled again it reads more input *before* decoding frames already
//! buffered; a transport that must not stall there drives the decoder
//! directly, calling `decode` again after an error.
//!
//! # Bounds and resynchronisation
//!
//! Every decoder is bounded by default, to [`DEFAULT_MAX_FRAME`] bytes per
//! frame (per line and per event's data for SSE); there is no unbounded mode.
//! A peer that sends more gets one [`CodecError::FrameTooLarge`], after which
//! the decoder skips the rest of the oversized frame (to the next newline,
//! or for SSE to the blank line ending the event) and carries on with the
//! next one: one bad message does not end the stream. While skipping, the
//! decoder drops bytes from the buffer as they arrive, so the buffer never
//! holds much more than one frame's bound. Encoders refuse (rather than
//! truncate) what they cannot frame faithfully.
//!
//! A skipped line leaves its two ends behind ([`LineDecoder::take_skipped_edge`],
//! at most [`EDGE_BYTES`] each): enough for a caller that knows the format to
//! tell which message it was (a JSON-RPC id sits near one end) without the
//! decoder keeping the line.
#![forbid(unsafe_code)]

mod error;
mod line;
mod peek;
mod sse;

pub use crate::error::CodecError;
pub use crate::line::{EDGE_BYTES, LineDecoder, LineEncoder, SkippedEdge};
pub use crate::peek::{MAX_PEEK_DEPTH, peek_notification, peek_response};
pub use crate::sse::{SseDecoder, SseEncoder, SseEvent};

/// The default bound on one frame or SSE event: 16 MiB.
pub const DEFAULT_MAX_FRAME: usize = 16 * 1024 * 1024;
