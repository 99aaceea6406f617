//! The legacy HTTP+SSE transport (protocol 2024-11-05).
//!
//! `connect` opens the event stream with a GET to the server URL and waits
//! for the `endpoint` event; its data is resolved against the server URL and
//! must stay on the same origin (the credential is only for that origin).
//! Every frame is then POSTed to that endpoint, and everything the server
//! says comes back on the one event stream. When that stream ends, the
//! connection has ended.
//!
//! ```text
//! GET url ──► event: endpoint ──► POST endpoint (each frame; 2xx = accepted)
//!     └──► event: message … ──► inbound ──► stream ends ──► Inbound::Closed
//! ```

use std::sync::Arc;
use tracing::Instrument as _;

use reqwest::Method;
use reqwest::header::HeaderMap;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;
use url::Url;

use crate::connection::{
    BoxFuture, CloseReason, Connection, Connector, ExitInfo, FrameKind, FrameSender, Inbound,
    OutboundFrame, RequestFailure,
};
use crate::http::body::{BodyKind, Reply, SseReader, SseStep, body_kind, read_bounded};
use crate::http::client::{ACCEPT_BOTH, ACCEPT_SSE, Exchange, HttpClient, www_authenticate};
use crate::http::config::{HttpConfig, endpoint_key};
use crate::http::control::{DriverSignals, HttpControl, stopped};
use crate::http::envelope;
use crate::http::post::message_headers;
use crate::http::streamable::wait_gate;
use crate::{DEFAULT_QUEUE_FRAMES, TransportError};

/// Opens legacy HTTP+SSE connections (the 2024-11-05 transport).
#[derive(Debug, Clone)]
pub struct SseConnector {
    config: Arc<HttpConfig>,
}

impl SseConnector {
    /// A connector for this config; `config.url` is the SSE endpoint.
    pub fn new(config: HttpConfig) -> Self {
        Self::from_shared(Arc::new(config))
    }

    pub(crate) fn from_shared(config: Arc<HttpConfig>) -> Self {
        Self { config }
    }

    /// The config connections are opened with.
    pub fn config(&self) -> &HttpConfig {
        &self.config
    }

    /// Opens the event stream and waits (at most `connect_timeout`) for the
    /// `endpoint` event. Needs a tokio runtime.
    pub async fn open(&self) -> Result<Connection, TransportError> {
        let http = HttpClient::connect(Arc::clone(&self.config)).await?;
        let exchange = Exchange {
            method: Method::GET,
            url: &http.base,
            accept: ACCEPT_SSE,
            body: None,
            headers: HeaderMap::new(),
        };
        let mut response = http
            .send(&exchange)
            .await
            .map_err(|e| e.into_transport_error())?;
        let status = response.status();
        if !status.is_success() {
            return Err(TransportError::SseStatus {
                status: status.as_u16(),
                www_authenticate: www_authenticate(response.headers()),
            });
        }
        if body_kind(&response) != BodyKind::EventStream {
            return Err(TransportError::NotEventStream);
        }
        let mut reader = SseReader::new(self.config.max_body);
        let endpoint = tokio::time::timeout(
            self.config.connect_timeout,
            wait_for_endpoint(&mut reader, &mut response),
        )
        .await
        .map_err(|_| TransportError::NoEndpointEvent { timed_out: true })??;
        let endpoint = resolve_endpoint(&http.base, &endpoint)?;

        let (out_tx, out_rx) = mpsc::channel(DEFAULT_QUEUE_FRAMES);
        let (in_tx, in_rx) = mpsc::channel(DEFAULT_QUEUE_FRAMES);
        let (control, signals) = HttpControl::new(self.config.shutdown_timeout);
        let shared = Arc::new(LegacyShared {
            http,
            endpoint,
            inbound: in_tx,
        });
        tokio::spawn(drive(shared, out_rx, signals, reader, response).in_current_span());
        Ok(Connection {
            outbound: FrameSender::new(out_tx, self.config.max_body),
            inbound: in_rx,
            control: Box::new(control),
        })
    }
}

impl Connector for SseConnector {
    fn connect(&self) -> BoxFuture<'_, Result<Connection, TransportError>> {
        Box::pin(self.open())
    }

    fn is_stdio(&self) -> bool {
        false
    }

    fn cache_key(&self) -> Option<String> {
        Some(format!("http+sse {}", endpoint_key(&self.config.url)))
    }
}

async fn wait_for_endpoint(
    reader: &mut SseReader,
    response: &mut Reply,
) -> Result<String, TransportError> {
    loop {
        match reader.next(response, None).await {
            SseStep::Named(event) if event.event_type() == "endpoint" => return Ok(event.data),
            SseStep::Named(_) | SseStep::Message(_) | SseStep::Rejected(_) => {
                tracing::debug!("ignoring an SSE event before `endpoint`");
            }
            SseStep::End | SseStep::Broken | SseStep::TimedOut => {
                return Err(TransportError::NoEndpointEvent { timed_out: false });
            }
        }
    }
}

/// Resolves the `endpoint` event's data against the server URL; only the
/// same origin is accepted.
pub(crate) fn resolve_endpoint(base: &Url, data: &str) -> Result<Url, TransportError> {
    let endpoint = base
        .join(data.trim())
        .map_err(|_| TransportError::BadEndpoint)?;
    if endpoint.origin() != base.origin() {
        return Err(TransportError::BadEndpoint);
    }
    Ok(endpoint)
}

#[derive(Debug)]
struct LegacyShared {
    http: HttpClient,
    endpoint: Url,
    inbound: mpsc::Sender<Inbound>,
}

impl LegacyShared {
    async fn deliver(&self, event: Inbound) {
        let _ = self.inbound.send(event).await;
    }
}

async fn drive(
    shared: Arc<LegacyShared>,
    mut outbound: mpsc::Receiver<OutboundFrame>,
    signals: DriverSignals,
    reader: SseReader,
    response: Reply,
) {
    let DriverSignals { mut stop, done } = signals;
    let (ended_tx, mut ended_rx) = oneshot::channel();
    let stream = tokio::spawn(
        read_stream(Arc::clone(&shared), reader, response, ended_tx).in_current_span(),
    );
    let max_in_flight = shared.http.config.max_in_flight.max(1);
    let mut tasks = JoinSet::new();
    let mut gate: Option<oneshot::Receiver<()>> = None;
    let reason = loop {
        tokio::select! {
            biased;
            // Legacy HTTP+SSE has no session to end: shutdown and kill
            // both just close the stream.
            _ = stopped(&mut stop) => break CloseReason::Shutdown,
            reason = &mut ended_rx => break reason.unwrap_or(CloseReason::EndOfStream),
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            _ = wait_gate(&mut gate), if gate.is_some() => gate = None,
            frame = outbound.recv(), if gate.is_none() && tasks.len() < max_in_flight => {
                let Some(frame) = frame else { break CloseReason::Shutdown };
                // Every POST here is answered at once (202): keep them in
                // order, as the single stream of answers expects.
                let (tx, rx) = oneshot::channel();
                gate = Some(rx);
                tasks.spawn(post(Arc::clone(&shared), frame, tx).in_current_span());
            }
        }
    };
    stream.abort();
    let _ = stream.await;
    tasks.abort_all();
    while tasks.join_next().await.is_some() {}
    let info = ExitInfo::without_process(reason);
    let wait = shared.http.config.shutdown_timeout;
    let _ = tokio::time::timeout(wait, shared.deliver(Inbound::Closed(info.clone()))).await;
    let _ = done.send(Some(info));
}

async fn read_stream(
    shared: Arc<LegacyShared>,
    mut reader: SseReader,
    mut response: Reply,
    ended: oneshot::Sender<CloseReason>,
) {
    let reason = loop {
        match reader.next(&mut response, None).await {
            SseStep::Message(bytes) => shared.deliver(Inbound::Frame(bytes)).await,
            SseStep::Named(event) => {
                tracing::debug!(event = event.event_type(), "ignoring an SSE event");
            }
            SseStep::Rejected(e) => {
                shared
                    .deliver(Inbound::FrameError(TransportError::Codec(e)))
                    .await;
            }
            SseStep::End | SseStep::TimedOut => break CloseReason::EndOfStream,
            SseStep::Broken => break CloseReason::ReadFailed(std::io::ErrorKind::ConnectionReset),
        }
    };
    let _ = ended.send(reason);
}

/// POSTs one frame to the endpoint; the answer comes on the event stream.
async fn post(shared: Arc<LegacyShared>, frame: OutboundFrame, sent: oneshot::Sender<()>) {
    let request = match frame.kind {
        FrameKind::Request { id } => Some(id),
        _ => None,
    };
    let fail = |failure: RequestFailure| {
        let shared = Arc::clone(&shared);
        async move {
            match request {
                Some(id) => shared.deliver(Inbound::RequestFailed { id, failure }).await,
                None => tracing::warn!(%failure, "a message could not be delivered"),
            }
        }
    };
    let headers = match message_headers(&frame, None) {
        Ok(headers) => headers,
        Err(e) => {
            drop(sent);
            return fail(e.failure()).await;
        }
    };
    let exchange = Exchange {
        method: Method::POST,
        url: &shared.endpoint,
        accept: ACCEPT_BOTH,
        body: Some(frame.bytes.clone()),
        headers,
    };
    let result = shared.http.send(&exchange).await;
    let _ = sent.send(());
    let mut response = match result {
        Ok(response) => response,
        Err(e) => {
            e.log_reason();
            return fail(e.failure()).await;
        }
    };
    let status = response.status();
    if status.is_success() {
        return;
    }
    let challenge = matches!(status.as_u16(), 401 | 403)
        .then(|| www_authenticate(response.headers()))
        .flatten();
    let config = &shared.http.config;
    let body = read_bounded(&mut response, config.max_body, config.response_timeout)
        .await
        .ok();
    let error = body.as_deref().and_then(envelope::error_object);
    fail(RequestFailure::Status {
        status: status.as_u16(),
        error,
        www_authenticate: challenge,
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_resolve_on_the_same_origin_only() {
        let base = Url::parse("http://127.0.0.1:8080/sse").unwrap();
        assert_eq!(
            resolve_endpoint(&base, "/messages?sessionId=abc")
                .unwrap()
                .as_str(),
            "http://127.0.0.1:8080/messages?sessionId=abc"
        );
        assert_eq!(
            resolve_endpoint(&base, "messages").unwrap().as_str(),
            "http://127.0.0.1:8080/messages"
        );
        assert!(matches!(
            resolve_endpoint(&base, "http://evil.example/messages"),
            Err(TransportError::BadEndpoint)
        ));
        assert!(matches!(
            resolve_endpoint(&base, "http://127.0.0.1:9999/messages"),
            Err(TransportError::BadEndpoint)
        ));
        assert!(matches!(
            resolve_endpoint(&base, "https://127.0.0.1:8080/messages"),
            Err(TransportError::BadEndpoint)
        ));
    }
}
