//! Bounded reading of HTTP bodies: a whole JSON body, or an event stream one
//! event at a time.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use mcp_codec::{CodecError, SseDecoder, SseEvent};
use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, HeaderMap};

use crate::http::lean::LeanBody;
use crate::spare::{SPARES, SpareBuffers};

/// An answer to one exchange, from reqwest or from the plain-http fast path
/// (`lean`): its status, its headers and its body, read piece by piece.
#[derive(Debug)]
pub(crate) struct Reply(Inner);

#[derive(Debug)]
enum Inner {
    Reqwest(reqwest::Response),
    Lean {
        head: hyper::http::response::Parts,
        body: LeanBody,
    },
}

impl Reply {
    pub(crate) fn reqwest(response: reqwest::Response) -> Self {
        Self(Inner::Reqwest(response))
    }

    pub(crate) fn lean(head: hyper::http::response::Parts, body: LeanBody) -> Self {
        Self(Inner::Lean { head, body })
    }

    pub(crate) fn status(&self) -> StatusCode {
        match &self.0 {
            Inner::Reqwest(r) => r.status(),
            Inner::Lean { head, .. } => head.status,
        }
    }

    pub(crate) fn headers(&self) -> &HeaderMap {
        match &self.0 {
            Inner::Reqwest(r) => r.headers(),
            Inner::Lean { head, .. } => &head.headers,
        }
    }

    /// The body's length, when the head gave it.
    pub(crate) fn content_length(&self) -> Option<u64> {
        match &self.0 {
            Inner::Reqwest(r) => r.content_length(),
            Inner::Lean { body, .. } => body.exact_len(),
        }
    }

    /// The next piece of the body; `Ok(None)` at its end, `Err` when the
    /// connection broke.
    pub(crate) async fn chunk(&mut self) -> Result<Option<Bytes>, ()> {
        match &mut self.0 {
            Inner::Reqwest(r) => r.chunk().await.map_err(|_| ()),
            Inner::Lean { body, .. } => body.chunk().await.map_err(|_| ()),
        }
    }

    /// Nothing more of this body is wanted: a fast-path connection reads
    /// the rest briefly in the background and serves again when the body
    /// ends; reqwest's is dropped now.
    pub(crate) fn finish(self) {
        if let Inner::Lean { body, .. } = self.0 {
            body.finish();
        }
    }
}

/// Why a body could not be read whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyError {
    /// Over the bound.
    TooLarge,
    /// No bytes for longer than the time-out.
    TimedOut,
    /// The connection broke.
    Network,
}

/// What the response's `Content-Type` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyKind {
    Json,
    EventStream,
    /// Anything else (or nothing).
    Other,
}

pub(crate) fn body_kind(response: &Reply) -> BodyKind {
    let Some(value) = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return BodyKind::Other;
    };
    kind_of(value)
}

/// The kind a `Content-Type` value names (its essence, without case).
fn kind_of(value: &str) -> BodyKind {
    // Compared without case and without a lowercased copy.
    let essence = value.split(';').next().unwrap_or_default().trim();
    let ends_with = |suffix: &str| {
        essence.len() >= suffix.len()
            && essence.as_bytes()[essence.len() - suffix.len()..]
                .eq_ignore_ascii_case(suffix.as_bytes())
    };
    if essence.eq_ignore_ascii_case("text/event-stream") {
        BodyKind::EventStream
    } else if essence.eq_ignore_ascii_case("application/json") || ends_with("+json") {
        BodyKind::Json
    } else {
        BodyKind::Other
    }
}

/// Reads a whole body, at most `limit` bytes, waiting at most `idle` for each
/// chunk.
///
/// A body that comes in one piece is returned as that piece (no copy); one
/// that comes in pieces is joined, a large one in a buffer that is kept for
/// the next large body when the returned `Bytes` drop (see [`SPARES`]).
pub(crate) async fn read_bounded(
    response: &mut Reply,
    limit: usize,
    idle: Duration,
) -> Result<Bytes, BodyError> {
    let announced = response.content_length();
    if announced.is_some_and(|len| len > limit as u64) {
        return Err(BodyError::TooLarge);
    }
    let mut first: Option<Bytes> = None;
    let mut body = Vec::new();
    // Whether `body` is a kept buffer: a small body never holds one, so a
    // small message a host keeps (a notification's params are slices of
    // their body) never keeps megabytes alive.
    let mut kept = false;
    loop {
        match tokio::time::timeout(idle, response.chunk()).await {
            Err(_) => return Err(BodyError::TimedOut),
            Ok(Err(())) => return Err(BodyError::Network),
            Ok(Ok(None)) => {
                return Ok(match first {
                    Some(only) if body.is_empty() => only,
                    _ if kept => SPARES.share(body),
                    _ => Bytes::from(body),
                });
            }
            Ok(Ok(Some(chunk))) => {
                let held = first.as_ref().map_or(0, Bytes::len) + body.len();
                if held + chunk.len() > limit {
                    return Err(BodyError::TooLarge);
                }
                if held == 0 {
                    first = Some(chunk);
                    continue;
                }
                let large = announced.map_or(held + chunk.len(), |len| len as usize);
                if !kept && large >= SpareBuffers::LARGE {
                    // Grown as it fills, not reserved at the announced
                    // length: one fresh region of a large body's size cost
                    // more in page faults than the copies of growing
                    // (measured on a 1 MiB body).
                    let mut spare = SPARES.take();
                    spare.extend_from_slice(&body);
                    body = spare;
                    kept = true;
                }
                if let Some(first) = first.take() {
                    body.extend_from_slice(&first);
                }
                body.extend_from_slice(&chunk);
            }
        }
    }
}

/// One step of reading an event stream.
#[derive(Debug)]
pub(crate) enum SseStep {
    /// A `message` event with a JSON-RPC message in its data.
    Message(Bytes),
    /// Another named event (the legacy `endpoint` event, say).
    Named(SseEvent),
    /// An event was rejected (over the bound, invalid UTF-8) and skipped.
    Rejected(CodecError),
    /// The stream ended cleanly.
    End,
    /// The connection broke mid-stream.
    Broken,
    /// Nothing arrived within the idle time-out.
    TimedOut,
}

/// Reads events from one logical stream across reconnections: the decoder
/// keeps the last event id and the `retry` value when a new response
/// continues the stream.
#[derive(Debug)]
pub(crate) struct SseReader {
    decoder: SseDecoder,
    buf: BytesMut,
    /// `buf` is a kept buffer (see [`SPARES`]): a large event is being read.
    /// It goes back once drained (when the event is dispatched, or at the
    /// next bytes), or when the reader drops.
    kept: bool,
    /// An event of this stream was rejected as too large.
    pub(crate) oversized: bool,
}

impl Drop for SseReader {
    fn drop(&mut self) {
        self.give_back_kept();
    }
}

impl SseReader {
    pub(crate) fn new(max_event: usize) -> Self {
        Self {
            decoder: SseDecoder::with_max_event(max_event),
            buf: BytesMut::new(),
            kept: false,
            oversized: false,
        }
    }

    /// Appends `bytes`. An event that grows large continues in a kept
    /// buffer, and its data is decoded into another one (both given back
    /// for the next large event: see [`SPARES`]).
    fn append(&mut self, bytes: Bytes) {
        if self.buf.is_empty() {
            self.release_drained();
            // Usually a whole event or more: taken as it is when it is the
            // only owner of its memory.
            self.buf = BytesMut::from(bytes);
            return;
        }
        if !self.kept && self.buf.len() + bytes.len() >= SpareBuffers::LARGE {
            self.buf = SPARES.continue_in(&self.buf, bytes.len());
            self.kept = true;
            let data = SPARES.take();
            if data.capacity() > 0 {
                // Empty, so valid UTF-8.
                self.decoder
                    .offer_data_buffer(String::from_utf8(data).unwrap_or_default());
            }
        }
        self.buf.extend_from_slice(&bytes);
    }

    /// Gives the kept buffer back once nothing is left in it, so that a
    /// stream that goes quiet after a large event does not hold it.
    fn release_drained(&mut self) {
        if self.buf.is_empty() {
            self.give_back_kept();
        }
    }

    /// Gives the kept buffer, if `buf` is one, back to [`SPARES`].
    fn give_back_kept(&mut self) {
        if std::mem::take(&mut self.kept) {
            SPARES.give_back(Vec::from(std::mem::take(&mut self.buf)));
        }
    }

    /// The id to send as `Last-Event-ID` when resuming.
    pub(crate) fn last_event_id(&self) -> Option<&str> {
        self.decoder.last_event_id()
    }

    /// The server's `retry` value, if it sent one.
    pub(crate) fn retry(&self) -> Option<Duration> {
        self.decoder.retry()
    }

    /// The next step from `response`; `idle` bounds the wait for bytes.
    /// Empty events (keep-alives, "priming" events that only set an id) are
    /// consumed silently.
    pub(crate) async fn next(&mut self, response: &mut Reply, idle: Option<Duration>) -> SseStep {
        loop {
            match self.decoder.decode(&mut self.buf) {
                Ok(Some(event)) => {
                    self.release_drained();
                    if let Some(step) = classify(event) {
                        return step;
                    }
                    continue;
                }
                Ok(None) => {}
                Err(e) => {
                    if matches!(e, CodecError::FrameTooLarge { .. }) {
                        self.oversized = true;
                    }
                    return SseStep::Rejected(e);
                }
            }
            let chunk = match idle {
                Some(idle) => match tokio::time::timeout(idle, response.chunk()).await {
                    Ok(chunk) => chunk,
                    Err(_) => return SseStep::TimedOut,
                },
                None => response.chunk().await,
            };
            match chunk {
                Ok(Some(bytes)) => self.append(bytes),
                Ok(None) => return self.finish(SseStep::End),
                Err(_) => return self.finish(SseStep::Broken),
            }
        }
    }

    /// The stream ended: complete events still buffered are lost (the standard
    /// drops an unterminated event), and the decoder is readied for the next
    /// response of the same stream.
    fn finish(&mut self, step: SseStep) -> SseStep {
        while let Ok(Some(_)) = self.decoder.decode_eof(&mut self.buf) {}
        self.buf.clear();
        step
    }
}

fn classify(event: SseEvent) -> Option<SseStep> {
    match event.event_type() {
        "message" if event.data.trim().is_empty() => None,
        // The data of a large event goes back to the kept buffers once the
        // message is done with.
        "message" if event.data.len() >= SpareBuffers::LARGE => {
            Some(SseStep::Message(SPARES.share(event.data.into_bytes())))
        }
        "message" => Some(SseStep::Message(Bytes::from(event.data))),
        _ => Some(SseStep::Named(event)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_are_read_by_their_essence_without_case() {
        for (value, kind) in [
            ("text/event-stream", BodyKind::EventStream),
            ("Text/Event-Stream; charset=utf-8", BodyKind::EventStream),
            ("application/json", BodyKind::Json),
            (" APPLICATION/JSON ;charset=UTF-8", BodyKind::Json),
            ("application/problem+json", BodyKind::Json),
            ("application/vnd.x+JSON; q=1", BodyKind::Json),
            ("+json", BodyKind::Json),
            ("json", BodyKind::Other),
            ("text/event-streams", BodyKind::Other),
            ("text/html", BodyKind::Other),
            ("", BodyKind::Other),
            ("é+json", BodyKind::Json),
            ("ée", BodyKind::Other),
        ] {
            assert_eq!(kind_of(value), kind, "{value:?}");
        }
    }
}
