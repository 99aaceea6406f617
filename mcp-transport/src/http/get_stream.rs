//! The standalone GET stream of the legacy era of Streamable HTTP: server
//! requests and notifications not tied to one of our requests.
//!
//! Opened once per server session after the first successful POST that
//! carried a legacy protocol version. `405 Method Not Allowed` (and any other
//! 4xx refusal) means there is no such stream: the task ends quietly. When
//! the stream ends or breaks it is opened again after the server's `retry`
//! time (with `Last-Event-ID` when events had ids); after
//! `max_resume_attempts` consecutive attempts that delivered nothing, the
//! task gives up, except while a stream that was open cannot reach its
//! server at all, or meets a 5xx (it is restarting, say): then it goes on
//! trying, the wait doubling up to a minute, so the session hears the server
//! again once it is back. A stream the server ended cleanly after telling
//! its `retry` time is a poll (SEP-1699), and one that stayed open
//! [`HEALTHY_STREAM_WAITS`] reconnection waits before it was cut (a proxy's
//! idle timeout) was no failure either: neither is a fruitless attempt, so
//! the stream is kept however long the server stays quiet. A stream that
//! was open and is lost anyway (refused when opened again, given up on) is
//! said once as a warning and opened again by the next successful request
//! (at most once a minute). When the stream is
//! opened again, an answer that the server does not know the session (see
//! [`Streamable::session_unknown`]) means it forgot it (it restarted, say):
//! the id is forgotten and the session is told
//! ([`Inbound::SessionExpired`]), so it starts a new one at once rather
//! than on its next request.

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode};
use tokio::sync::oneshot;

use crate::TransportError;
use crate::connection::Inbound;
use crate::http::body::{BodyKind, SseReader, SseStep, body_kind};
use crate::http::client::{
    ACCEPT_SSE, Exchange, LAST_EVENT_ID, SESSION_HEADER, VERSION_HEADER, push_header, push_known,
};
use crate::http::streamable::Streamable;

/// How long the session's next frame waits for the GET stream's head (see
/// [`run`]'s `ready`): a server that holds the head back delays the session
/// by at most this, once.
pub(crate) const HEAD_WAIT: Duration = Duration::from_secs(1);

/// The longest wait between attempts to reopen a stream whose server cannot
/// be reached.
const AWAY_WAIT_CAP: Duration = Duration::from_secs(60);

/// How many reconnection waits ([`HttpConfig::default_retry`]) a stream
/// must have stayed open for its end not to count as a fruitless attempt
/// (10 s by default): one that a proxy's idle timeout cuts is opened again
/// for as long as that goes on.
///
/// [`HttpConfig::default_retry`]: crate::HttpConfig::default_retry
const HEALTHY_STREAM_WAITS: u32 = 10;

/// Runs the GET stream. `ready` is sent (or dropped) once the first attempt
/// has its answer's head, failed, or took longer than [`HEAD_WAIT`].
/// `resumed`: the stream of this session had been open and was lost; this
/// is a request's new try.
pub(crate) async fn run(shared: Arc<Streamable>, ready: oneshot::Sender<()>, resumed: bool) {
    let mut ready = Some(ready);
    let config = &shared.http.config;
    let mut reader = SseReader::new(config.max_body);
    // Consecutive attempts that delivered no message.
    let mut fruitless = 0u32;
    let mut first = true;
    // Whether the stream was ever open: losing it then is worth a warning
    // (the session stops hearing the server), unlike a server without one.
    let mut was_open = resumed;
    let healthy = config.default_retry.saturating_mul(HEALTHY_STREAM_WAITS);
    // Consecutive attempts that reached no server (refused, reset, timed
    // out): one that was open is then away (restarting, say), and is tried
    // again, less and less often, rather than given up on.
    let mut unreachable = 0u32;
    loop {
        if !std::mem::take(&mut first) {
            let mut wait = crate::http::post::reconnect_wait(&reader, config);
            if was_open && unreachable >= config.max_resume_attempts {
                let doublings = (unreachable - config.max_resume_attempts + 1).min(16);
                wait = wait.saturating_mul(1 << doublings).min(AWAY_WAIT_CAP);
            }
            tokio::time::sleep(wait).await;
        }
        if was_open && unreachable > 0 && unreachable == config.max_resume_attempts {
            tracing::warn!(
                attempts = unreachable,
                "the server cannot be reached (is it restarting?): its event stream is tried again, less and less often (up to a minute apart)"
            );
        }
        if fruitless >= config.max_resume_attempts && !(was_open && unreachable > 0) {
            if was_open {
                lost(
                    &shared,
                    resumed,
                    format!(
                        "the server's event stream could not be opened again ({fruitless} attempts): {UNTIL}"
                    ),
                )
                .await;
            } else {
                tracing::debug!("giving up on the GET stream");
            }
            return;
        }
        fruitless += 1;
        let mut headers = HeaderMap::new();
        let session = shared.session_id();
        if let Some(id) = &session {
            push_known(&mut headers, SESSION_HEADER, id.clone());
        }
        if let Some(version) = shared.legacy_version()
            && push_header(&mut headers, VERSION_HEADER, version).is_err()
        {
            return;
        }
        if let Some(last) = reader.last_event_id()
            && push_header(&mut headers, LAST_EVENT_ID, last).is_err()
        {
            return;
        }
        let exchange = Exchange {
            method: Method::GET,
            url: &shared.http.base,
            accept: ACCEPT_SSE,
            body: None,
            headers,
        };
        let send = shared.http.send(&exchange);
        tokio::pin!(send);
        let sent = match ready.take() {
            Some(ready) => match tokio::time::timeout(HEAD_WAIT, &mut send).await {
                Ok(sent) => {
                    let _ = ready.send(());
                    sent
                }
                Err(_) => {
                    drop(ready);
                    send.await
                }
            },
            None => send.await,
        };
        let mut response = match sent {
            // A 5xx is the server's front saying it cannot now (a deploy, a
            // proxy without its upstream): like no answer, tried again.
            Ok(response) if !response.status().is_server_error() => {
                unreachable = 0;
                response
            }
            Ok(response) => {
                tracing::debug!(
                    status = response.status().as_u16(),
                    "the GET stream met a server error"
                );
                unreachable = unreachable.saturating_add(1);
                continue;
            }
            Err(_) => {
                unreachable = unreachable.saturating_add(1);
                continue;
            }
        };
        let status = response.status();
        if status == StatusCode::METHOD_NOT_ALLOWED {
            if was_open {
                lost(
                    &shared,
                    resumed,
                    format!("the server no longer offers its event stream (405): {UNTIL}"),
                )
                .await;
            } else {
                tracing::debug!("the server offers no GET stream");
            }
            return;
        }
        if !status.is_success() || body_kind(&response) != BodyKind::EventStream {
            // Only a stream that was open: some servers answer a GET they
            // do not offer with 404 or 400.
            let expired = match &session {
                Some(id) if was_open && shared.session_unknown(status, &mut response).await.0 => {
                    shared.forget_session_from_stream(id)
                }
                _ => false,
            };
            if expired {
                // The session starts a new server session (and a new GET
                // stream follows it); it says so.
                tracing::debug!("the server no longer knows this session");
                shared.deliver(Inbound::SessionExpired).await;
            } else if was_open {
                lost(
                    &shared,
                    resumed,
                    format!(
                        "the server refused its event stream when it was opened again (HTTP {}): {UNTIL}",
                        status.as_u16()
                    ),
                )
                .await;
            } else {
                tracing::debug!(
                    status = status.as_u16(),
                    "the server refused the GET stream"
                );
            }
            return;
        }
        was_open = true;
        let opened = std::time::Instant::now();
        loop {
            match reader.next(&mut response, None).await {
                SseStep::Message(bytes) => {
                    fruitless = 0;
                    shared.deliver(Inbound::Frame(bytes)).await;
                }
                SseStep::Named(event) => {
                    tracing::debug!(event = event.event_type(), "ignoring an SSE event");
                }
                SseStep::Rejected(e) => {
                    shared
                        .deliver(Inbound::FrameError(TransportError::Codec(e)))
                        .await;
                }
                SseStep::End if reader.retry().is_some() => {
                    fruitless = 0;
                    break;
                }
                SseStep::End | SseStep::Broken | SseStep::TimedOut => break,
            }
        }
        if opened.elapsed() >= healthy {
            // A stream that stayed open a while and was cut (a proxy's
            // idle timeout) was not a fruitless attempt.
            fruitless = 0;
        }
    }
}

/// What losing the stream means for the session.
const UNTIL: &str = "its notifications and requests stop reaching us until a request of ours succeeds (then it is opened again, at most once a minute)";

/// The stream that was open is lost: said once as a warning (again only
/// at debug level when a request's new try fails too), marked so the next
/// successful request opens it again, and told to the session
/// ([`Inbound::StreamLost`]), which may make that request.
async fn lost(shared: &Streamable, resumed: bool, why: String) {
    if resumed {
        tracing::debug!("{why}");
    } else {
        tracing::warn!("{why}");
    }
    shared.get_stream_lost();
    shared.deliver(Inbound::StreamLost).await;
}
