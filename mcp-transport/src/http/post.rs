//! One POST of Streamable HTTP: send a frame, deliver what the reply holds,
//! resume a broken reply stream (legacy era), and report a request that will
//! get no answer through HTTP.

use std::sync::Arc;

use bytes::Bytes;
use mcp_codec::CodecError;
use reqwest::header::{HeaderMap, HeaderValue};
use reqwest::{Method, StatusCode};
use tokio::sync::oneshot;

use crate::TransportError;
use crate::connection::{FrameKind, Inbound, OutboundFrame, RequestFailure};
use crate::http::body::{BodyError, BodyKind, Reply, SseReader, SseStep, body_kind, read_bounded};
use crate::http::client::{
    ACCEPT_BOTH, ACCEPT_SSE, Exchange, LAST_EVENT_ID, SESSION_HEADER, SendError, VERSION_HEADER,
    push_header, push_known, www_authenticate,
};
use crate::http::envelope::{self, Shape};
use crate::http::streamable::{Streamable, is_modern};

/// Sends one frame and delivers its outcome. `sent` is fired (or dropped)
/// once the server has answered the POST's head: the driver holds later
/// frames back until then, so a notification is never overtaken.
pub(crate) async fn run(
    shared: Arc<Streamable>,
    frame: OutboundFrame,
    sent: Option<oneshot::Sender<()>>,
) {
    let modern = is_modern(&frame);
    let sent_session = if modern { None } else { shared.session_id() };
    let post = Post {
        shared: &shared,
        request: match frame.kind {
            FrameKind::Request { id } => Some(id),
            _ => None,
        },
        modern,
        sent_session,
        frame: &frame,
        sent: std::sync::Mutex::new(sent),
    };
    post.run().await;
}

struct Post<'a> {
    shared: &'a Arc<Streamable>,
    /// The id, when the frame is a request.
    request: Option<i64>,
    modern: bool,
    /// The session id this POST carried.
    sent_session: Option<HeaderValue>,
    frame: &'a OutboundFrame,
    /// The ordering gate of the driver, for notifications and responses.
    sent: std::sync::Mutex<Option<oneshot::Sender<()>>>,
}

impl Post<'_> {
    async fn run(&self) {
        // A request of the established legacy session after the server ended
        // that session: it would only be refused for lacking the id. Only
        // the session's new `initialize` (sent with no version) goes out.
        if self.request.is_some()
            && !self.modern
            && self.frame.protocol_version.is_some()
            && self.shared.session_expired()
        {
            self.open_gate();
            return self.fail(RequestFailure::SessionExpired).await;
        }
        let headers = match message_headers(self.frame, self.sent_session.as_ref()) {
            Ok(headers) => headers,
            Err(e) => return self.send_failed(e).await,
        };
        let exchange = Exchange {
            method: Method::POST,
            url: &self.shared.http.base,
            accept: ACCEPT_BOTH,
            body: Some(self.frame.bytes.clone()),
            headers,
        };
        let sent = self.shared.http.send(&exchange).await;
        let mut response = match sent {
            Ok(response) => response,
            Err(e) => {
                self.open_gate();
                return self.send_failed(e).await;
            }
        };
        // What the status says about the session is recorded before the
        // gate lets the next frame go: a frame sent after a notification that
        // met an expired session must see the session as expired.
        let status = response.status();
        if status.is_success() && !self.modern {
            if let Some(id) = response.headers().get(SESSION_HEADER) {
                self.shared.capture_session(id);
            }
            if let Some(version) = self.frame.protocol_version {
                self.shared.legacy_success(version);
            }
        }
        let (expired, refusal) = match &self.sent_session {
            Some(_) if !status.is_success() => {
                self.shared.session_unknown(status, &mut response).await
            }
            _ => (false, None),
        };
        let forgotten = expired
            && self
                .sent_session
                .as_ref()
                .is_some_and(|sent| self.shared.forget_session(sent));
        self.open_gate();
        if expired {
            if forgotten && self.request.is_none() {
                // No request of ours fails with the news: the session is
                // told, so it can start a new server session now.
                self.shared.deliver(Inbound::SessionExpired).await;
            }
            return self.fail(RequestFailure::SessionExpired).await;
        }
        if !status.is_success() {
            return self.refused(status, &mut response, refusal).await;
        }
        let Some(id) = self.request else {
            // 2xx (202, usually) to a notification or response: delivered.
            return;
        };
        match body_kind(&response) {
            BodyKind::EventStream => self.reply_stream(id, response).await,
            kind => self.reply_body(id, kind, status, &mut response).await,
        }
    }

    /// A non-2xx status: the request gets no answer through HTTP. `body`
    /// when it was read already.
    async fn refused(&self, status: StatusCode, response: &mut Reply, body: Option<Bytes>) {
        let challenge = matches!(status.as_u16(), 401 | 403)
            .then(|| www_authenticate(response.headers()))
            .flatten();
        let config = &self.shared.http.config;
        let body = match body {
            Some(body) => Some(body),
            None => read_bounded(response, config.max_body, config.response_timeout)
                .await
                .ok(),
        };
        let error = body.as_deref().and_then(envelope::error_object);
        match self.request {
            Some(_) => {
                self.fail(RequestFailure::Status {
                    status: status.as_u16(),
                    error,
                    www_authenticate: challenge,
                })
                .await
            }
            None => tracing::warn!(
                status = status.as_u16(),
                method = self.frame.method.as_deref().unwrap_or("?"),
                "the server refused a message"
            ),
        }
    }

    /// A 2xx reply with a JSON body (or no body, or some other body).
    async fn reply_body(&self, id: i64, kind: BodyKind, status: StatusCode, response: &mut Reply) {
        let config = &self.shared.http.config;
        let body = match read_bounded(response, config.max_body, config.response_timeout).await {
            Ok(body) => body,
            Err(e) => return self.body_failed(e).await,
        };
        if body.iter().all(u8::is_ascii_whitespace) {
            return self.no_answer(status, None).await;
        }
        match envelope::shape(&body) {
            Shape::Answer(answer) => {
                self.shared.deliver(Inbound::Frame(body)).await;
                if answer != id {
                    self.no_answer(status, None).await;
                }
            }
            Shape::StrayError(error) => {
                // An error for no id in the reply to our request is the
                // server's answer to it.
                self.fail(RequestFailure::Status {
                    status: status.as_u16(),
                    error: Some(error),
                    www_authenticate: None,
                })
                .await;
            }
            Shape::Other => {
                if kind == BodyKind::Json {
                    self.shared.deliver(Inbound::Frame(body)).await;
                }
                self.no_answer(status, None).await;
            }
        }
    }

    /// A 2xx reply that did not answer the request. In an established legacy
    /// session the answer may still come on the GET stream; otherwise it never
    /// will.
    async fn no_answer(&self, status: StatusCode, error: Option<Bytes>) {
        let may_come_later = !self.modern && self.frame.protocol_version.is_some();
        if may_come_later {
            tracing::debug!(
                status = status.as_u16(),
                "reply without the answer; it may come on the GET stream"
            );
        } else {
            self.fail(RequestFailure::Status {
                status: status.as_u16(),
                error,
                www_authenticate: None,
            })
            .await;
        }
    }

    async fn body_failed(&self, error: BodyError) {
        let failure = match error {
            BodyError::TooLarge => {
                let limit = self.shared.http.config.max_body;
                let codec = CodecError::FrameTooLarge { limit };
                self.shared
                    .deliver(Inbound::FrameError(TransportError::Codec(codec)))
                    .await;
                RequestFailure::TooLarge { limit }
            }
            BodyError::TimedOut => RequestFailure::TimedOut,
            BodyError::Network => RequestFailure::Network,
        };
        self.fail(failure).await;
    }

    /// Reads an event-stream reply until the answer; resumes it when it
    /// ends or breaks first (legacy era, with an event id to resume from).
    ///
    /// A stream the server ended cleanly is a poll (SEP-1699: a server may
    /// close it at will once it has sent an event id, and the client comes
    /// back after `retry`), however many in a row: the request's deadline
    /// bounds them. Only resumes that fail (a broken connection, a refused
    /// or failed `GET`) count towards `max_resume_attempts`.
    async fn reply_stream(&self, id: i64, first: Reply) {
        let config = &self.shared.http.config;
        let mut reader = SseReader::new(config.max_body);
        let mut response = first;
        let mut attempts = 0u32;
        loop {
            let mut ended_cleanly = false;
            loop {
                match reader
                    .next(&mut response, Some(config.response_timeout))
                    .await
                {
                    SseStep::Message(bytes) => {
                        let answered = envelope::shape(&bytes) == Shape::Answer(id);
                        self.shared.deliver(Inbound::Frame(bytes)).await;
                        if answered {
                            // What follows the answer is not wanted; its
                            // connection may serve again once it ends.
                            response.finish();
                            return;
                        }
                        attempts = 0;
                    }
                    SseStep::Named(event) => {
                        tracing::debug!(event = event.event_type(), "ignoring an SSE event");
                    }
                    SseStep::Rejected(e) => {
                        self.shared
                            .deliver(Inbound::FrameError(TransportError::Codec(e)))
                            .await;
                    }
                    SseStep::End => {
                        ended_cleanly = true;
                        break;
                    }
                    SseStep::Broken => break,
                    SseStep::TimedOut => return self.fail(RequestFailure::TimedOut).await,
                }
            }
            if reader.oversized {
                // Resuming would replay the same oversized event.
                let limit = config.max_body;
                return self.fail(RequestFailure::TooLarge { limit }).await;
            }
            if self.modern || reader.last_event_id().is_none() {
                return self.fail(RequestFailure::StreamBroken).await;
            }
            if ended_cleanly {
                attempts = 0;
            }
            // Boxed: resuming is rare, and its exchange would make every
            // POST's future larger.
            match Box::pin(self.resume(&mut reader, &mut attempts)).await {
                Some(next) => response = next,
                None => return,
            }
        }
    }

    /// Waits the server's `retry` time, then asks for the rest of the stream
    /// with `Last-Event-ID`. `None` when the request has been failed.
    async fn resume(&self, reader: &mut SseReader, attempts: &mut u32) -> Option<Reply> {
        let config = &self.shared.http.config;
        loop {
            if *attempts >= config.max_resume_attempts {
                self.fail(RequestFailure::StreamBroken).await;
                return None;
            }
            *attempts += 1;
            tokio::time::sleep(reconnect_wait(reader, config)).await;
            let session = self.shared.session_id();
            let mut headers = match message_headers(self.frame, session.as_ref()) {
                Ok(headers) => headers,
                Err(e) => {
                    self.send_failed(e).await;
                    return None;
                }
            };
            if let Some(last) = reader.last_event_id()
                && let Err(e) = push_header(&mut headers, LAST_EVENT_ID, last)
            {
                self.send_failed(e).await;
                return None;
            }
            let exchange = Exchange {
                method: Method::GET,
                url: &self.shared.http.base,
                accept: ACCEPT_SSE,
                body: None,
                headers,
            };
            match self.shared.http.send(&exchange).await {
                Err(SendError::InvalidHeader(name)) => {
                    self.fail(RequestFailure::InvalidHeader { name }).await;
                    return None;
                }
                Err(_) => continue,
                Ok(mut response) => {
                    let status = response.status();
                    if status.is_success() && body_kind(&response) == BodyKind::EventStream {
                        return Some(response);
                    }
                    let unknown = match &session {
                        Some(_) => self.shared.session_unknown(status, &mut response).await.0,
                        None => false,
                    };
                    let failure = match &session {
                        Some(sent) if unknown => {
                            self.shared.forget_session(sent);
                            RequestFailure::SessionExpired
                        }
                        _ => RequestFailure::StreamBroken,
                    };
                    self.fail(failure).await;
                    return None;
                }
            }
        }
    }

    fn open_gate(&self) {
        let gate = self.sent.lock().ok().and_then(|mut g| g.take());
        if let Some(gate) = gate {
            let _ = gate.send(());
        }
    }

    async fn send_failed(&self, error: SendError) {
        let failure = error.failure();
        // Not a `FrameError` even for a credential failure: no frame was
        // refused, and the session counts those as protocol violations.
        error.log_reason();
        match self.request {
            Some(_) => self.fail(failure).await,
            None => tracing::warn!(%failure, "a message could not be sent"),
        }
    }

    async fn fail(&self, failure: RequestFailure) {
        if let Some(id) = self.request {
            self.shared
                .deliver(Inbound::RequestFailed { id, failure })
                .await;
        }
    }
}

/// The least wait before reconnecting, whatever `retry` the server asked
/// for: a server that ends every stream at once with `retry: 0` is polled
/// at most this often, not in a busy loop.
const MIN_RECONNECT_WAIT: std::time::Duration = std::time::Duration::from_millis(10);

/// How long to wait before reconnecting a stream: the server's `retry`
/// (never less than [`MIN_RECONNECT_WAIT`]), else the configured default.
pub(crate) fn reconnect_wait(
    reader: &SseReader,
    config: &crate::http::config::HttpConfig,
) -> std::time::Duration {
    reader
        .retry()
        .map_or(config.default_retry, |retry| retry.max(MIN_RECONNECT_WAIT))
}

/// The headers of one message: session id, protocol version, and the
/// per-message headers the session computed (checked here: an illegal one
/// fails the message, it is never sent).
pub(crate) fn message_headers(
    frame: &OutboundFrame,
    session: Option<&HeaderValue>,
) -> Result<HeaderMap, SendError> {
    let mut headers = HeaderMap::with_capacity(2 + frame.headers.len());
    if let Some(id) = session {
        push_known(&mut headers, SESSION_HEADER, id.clone());
    }
    if let Some(version) = frame.protocol_version {
        // A version is one of the session's own constants: taken without a
        // copy when it is header text (always, in practice).
        if version
            .bytes()
            .all(|b| b == b'\t' || (b' '..=b'~').contains(&b))
        {
            push_known(
                &mut headers,
                VERSION_HEADER,
                HeaderValue::from_static(version),
            );
        } else {
            push_header(&mut headers, VERSION_HEADER, version)?;
        }
    }
    for (name, value) in &frame.headers {
        push_header(&mut headers, name, value)?;
    }
    Ok(headers)
}
