//! Starting a new server session when a legacy Streamable HTTP server forgot
//! ours, and recovering a request an HTTP transport lost, when that is safe.
//!
//! - The server forgot our session (it restarted, say): it answered
//!   something that carried `Mcp-Session-Id` with `404`, or with `400` and
//!   an error naming the session (the transport tells which,
//!   [`RequestFailure::SessionExpired`]). A new one is established once
//!   however many noticed — `initialize` without a session id, asking for
//!   the version agreed last, then `initialized` — and:
//!   - what the server says of itself is taken from its answer: a server
//!     back as a new release may speak another legacy version (followed in
//!     it), offer other capabilities, describe itself anew; a version we do
//!     not know or of the 2026 era, or a `-32022` refusal, ends the
//!     connection (see the server replaced below);
//!   - every subscription of the session ends with
//!     [`SubscriptionEnd::SessionExpired`] (the new server session has
//!     none of them: its holder subscribes again);
//!   - every listing stops being fresh ([`Session::is_fresh`]);
//!   - the host is told with [`SessionEvent::Reestablished`], which is never
//!     dropped for a full queue (it is held, like `list_changed`);
//!   - a request that met the refusal is retried once, unless it was a
//!     `tools/call`: a tool call is never replayed (it may have run), it
//!     fails with [`SessionError::NotReplayed`].
//!
//!   When no request meets the refusal (the GET stream or a notification did,
//!   [`Inbound::SessionExpired`](mcp_transport::Inbound::SessionExpired)),
//!   the session starts the new one itself, so a host that only listens
//!   goes on hearing the server; one that fails (the server is not ready
//!   yet) is tried again until it works or the session ends. Those unprompted
//!   attempts are spaced out (see [`Expiry::unprompted_delay`]): a server
//!   that forgets every session at once, or keeps failing, costs one
//!   `initialize` a minute, not a loop.
//! - The server was replaced by a release that no longer speaks the
//!   connection's version or era (a release serving 2026-07-28 only, a
//!   rollback to a legacy-only one): a request over HTTP answered `-32022`
//!   (legacy: any; 2026: listing no modern version), or a 2026 request
//!   answered as a legacy server answers and a `server/discover` (at most
//!   once a minute) judged legacy, ends the connection with
//!   [`CloseReason::ProtocolChanged`]: every later request fails saying so,
//!   and the host is told [`SessionEvent::Closed`], so it connects again
//!   and negotiates anew (a hub restarts the server). Before, every
//!   request failed for the connection's life.
//! - The transport lost the GET stream of a legacy session
//!   ([`Inbound::StreamLost`](mcp_transport::Inbound::StreamLost)): one
//!   `ping` tells which of the cases above it is, or reopens the stream
//!   when the server answers it.
//! - A reply stream that broke before its answer and could not be resumed
//!   (always so in 2026, where streams are not resumable): the request is
//!   sent again once, with a new id, unless it is a `tools/call`.

use mcp_types::notifications::Initialized;
use mcp_types::requests::{CallTool, Discover, Initialize, Ping};
use mcp_types::{InitializeParams, Notification as _, Request as _};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant};

use mcp_transport::{CloseReason, RequestFailure};
use mcp_types::{Era, ProtocolVersion};
use tracing::Instrument as _;

use crate::SessionError;
use crate::driver::{RequestOptions, Shared};
use crate::params::Params;
use crate::protocol::era::{AfterFailure, ProbeVerdict, after_failure, judge_probe};
use crate::protocol::{RawResult, RequestTiming};
use crate::session::{Ready, ServerFacts, Session, modern_request_meta};
#[cfg(doc)]
use crate::{SessionEvent, SubscriptionEnd};

/// Unprompted renewals closer together than this are a streak, spaced out
/// more and more.
const STREAK_WINDOW: Duration = Duration::from_secs(60);
/// The wait before the second renewal of a streak; doubled for each later
/// one, up to [`STREAK_WINDOW`].
const STREAK_FIRST_WAIT: Duration = Duration::from_secs(1);

/// The renewal state of one connection (in its [`Shared`]).
#[derive(Debug, Default)]
pub(crate) struct Expiry {
    /// Serialises renewals.
    lock: tokio::sync::Mutex<()>,
    /// Bumped by every renewal: a request that saw the session expire under
    /// generation `g` renews only if nobody did since.
    generation: AtomicU64,
    /// What a renewal sends; set once a legacy session is ready (a session
    /// without it never renews).
    renewal: OnceLock<Renewal>,
    /// Unprompted renewals in a row, and when the last one was asked for.
    streak: Mutex<(u32, Option<Instant>)>,
    /// When a failed 2026 request last made us ask `server/discover`
    /// whether the server still speaks 2026 (at most once a
    /// [`STREAK_WINDOW`]).
    probed: Mutex<Option<Instant>>,
}

/// The `initialize` a renewal sends (asking for the version agreed last),
/// and where the server's answer goes.
#[derive(Debug)]
pub(crate) struct Renewal {
    pub(crate) params: InitializeParams,
    /// The session's [`ServerFacts`], replaced by each renewal's answer.
    pub(crate) facts: Arc<RwLock<Arc<ServerFacts>>>,
    pub(crate) timeout: Duration,
}

impl Expiry {
    /// Makes the session renewable: `renewal` is what it sends again.
    pub(crate) fn arm(&self, renewal: Renewal) {
        let _ = self.renewal.set(renewal);
    }

    /// How long an unprompted renewal asked for now waits: nothing for the
    /// first; then, while they keep coming less than [`STREAK_WINDOW`]
    /// apart, 1 s, 2 s, 4 s … up to that window. `None` for a session that
    /// does not renew.
    fn unprompted_delay(&self) -> Option<Duration> {
        self.renewal.get()?;
        let mut streak = self.streak.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let (count, last) = &mut *streak;
        *count = match last {
            Some(at) if now.duration_since(*at) < STREAK_WINDOW => count.saturating_add(1),
            _ => 1,
        };
        *last = Some(now);
        Some(match *count {
            1 => Duration::ZERO,
            n => STREAK_FIRST_WAIT
                .saturating_mul(1 << (n - 2).min(16))
                .min(STREAK_WINDOW),
        })
    }

    /// Whether a failed 2026 request may ask the server's era now (once a
    /// [`STREAK_WINDOW`]: a server answering every request `400` costs one
    /// `server/discover` a minute); takes the turn when it may.
    fn may_probe(&self) -> bool {
        let mut probed = self.probed.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        if probed.is_some_and(|at| now.duration_since(at) < STREAK_WINDOW) {
            return false;
        }
        *probed = Some(now);
        true
    }
}

impl Shared {
    /// Sends a request of the session's own (not a host's: a renewal's
    /// `initialize`, a `ping`) with `version` as its version header.
    async fn own_request<R: mcp_types::Request>(
        self: &Arc<Self>,
        params: &R::Params,
        timing: RequestTiming,
        version: Option<&'static str>,
    ) -> Result<RawResult, SessionError> {
        let method: Arc<str> = Arc::from(R::METHOD);
        let options = RequestOptions {
            timing,
            protocol_version: version,
            ..RequestOptions::default()
        };
        self.call(&method, Params::encode(params, false)?, None, options)
            .await
    }

    /// Ends a connection whose server no longer speaks its protocol
    /// version (`error` is how it said so), so that its holder connects
    /// again and negotiates anew (a hub restarts the server).
    pub(crate) fn protocol_changed(&self, error: &SessionError) {
        if self.abandon(CloseReason::ProtocolChanged) {
            tracing::warn!(
                error = %error,
                "the server no longer speaks the protocol version this connection was made in (a new release?): the connection ends, a new one negotiates again"
            );
        }
    }

    /// The transport lost the GET stream of a legacy HTTP session (the
    /// server refused it when it was opened again, or it could not be):
    /// one `ping`, in the background, finds out where the server stands.
    /// Answered, the transport opens the stream again; a forgotten session
    /// is started again; a version the server no longer speaks ends the
    /// connection. So a host that only listens is not left deaf by a server
    /// that changed under it.
    pub(crate) fn stream_lost(self: &Arc<Self>) {
        let Some(renewal) = self.expiry.renewal.get() else {
            return;
        };
        let timeout = renewal.timeout;
        let weak = Arc::downgrade(self);
        tokio::spawn(
            async move {
                let Some(shared) = weak.upgrade() else { return };
                let timing = RequestTiming {
                    timeout,
                    ..RequestTiming::default()
                };
                let version = shared.protocol_version();
                let params = Default::default();
                match shared.own_request::<Ping>(&params, timing, version).await {
                    Ok(_) => {}
                    Err(SessionError::Http {
                        failure: RequestFailure::SessionExpired,
                        ..
                    }) => shared.renew_unprompted(),
                    Err(e) if after_failure(Era::Legacy, &e) == AfterFailure::VersionGone => {
                        shared.protocol_changed(&e);
                    }
                    Err(e) => {
                        tracing::debug!(error = %e, "the ping after losing the GET stream failed")
                    }
                }
            }
            .in_current_span(),
        );
    }

    /// The transport says the server forgot our session and no request of
    /// ours met it: starts the new one in the background (spaced out, see
    /// [`Expiry::unprompted_delay`]).
    pub(crate) fn renew_unprompted(self: &Arc<Self>) {
        let Some(delay) = self.expiry.unprompted_delay() else {
            return;
        };
        let seen = self.expiry.generation.load(Ordering::Acquire);
        let weak = Arc::downgrade(self);
        tokio::spawn(
            async move {
                let mut delay = delay;
                let mut warned = false;
                loop {
                    if !delay.is_zero() {
                        tracing::debug!(?delay, "waiting before starting a new session");
                        tokio::time::sleep(delay).await;
                    }
                    // A session the host dropped meanwhile needs nothing.
                    let Some(shared) = weak.upgrade() else { return };
                    let error = match shared.renew(seen).await {
                        Ok(()) => return,
                        Err(e) if e.is_dead() => return,
                        Err(e) => e,
                    };
                    if after_failure(Era::Legacy, &error) == AfterFailure::VersionGone {
                        // A version we cannot speak on this connection:
                        // asking again will not help, a new one will.
                        shared.protocol_changed(&error);
                        return;
                    }
                    // Not ready yet (a deploy, say): tried again, spaced
                    // like renewals, so a host that only listens is not left
                    // deaf; a request meanwhile tries at once.
                    if !std::mem::replace(&mut warned, true) {
                        tracing::warn!(
                            error = %error,
                            "the server no longer knows this session (did it restart?) and a new one could not be started yet: trying again"
                        );
                    }
                    let Some(next) = shared.expiry.unprompted_delay() else {
                        return;
                    };
                    delay = next.max(STREAK_FIRST_WAIT);
                }
            }
            .in_current_span(),
        );
    }

    /// Establishes a new server session, once per expiry however many
    /// callers noticed it (`seen` is the generation they saw it under).
    pub(crate) async fn renew(self: &Arc<Self>, seen: u64) -> Result<(), SessionError> {
        let Some(renewal) = self.expiry.renewal.get() else {
            return Err(SessionError::InvalidSetting {
                setting: "session",
                problem: "only a legacy-era session over HTTP has a server session to renew",
            });
        };
        let _guard = self.expiry.lock.lock().await;
        if self.expiry.generation.load(Ordering::Acquire) != seen {
            // Someone else already established the new one.
            return Ok(());
        }
        // The subscriptions were made on the session the server forgot.
        self.end_subscriptions_on_expiry();
        let agreed = renewal
            .facts
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .version;
        let mut params = renewal.params.clone();
        params.protocol_version = agreed.as_str().to_owned();
        let timing = RequestTiming {
            timeout: renewal.timeout,
            cancellable: false,
            ..RequestTiming::default()
        };
        // `initialize` never carries a version header.
        let raw = self
            .own_request::<Initialize>(&params, timing, None)
            .await?;
        let result: mcp_types::InitializeResult =
            raw.decode_json()
                .map_err(|source| SessionError::BadResult {
                    method: Initialize::METHOD.to_owned(),
                    source,
                })?;
        // The server may have come back as a new release that no longer
        // speaks the version agreed: any legacy version we know will do (the
        // era is fixed for the connection).
        let Some(version) = ProtocolVersion::parse(&result.protocol_version)
            .filter(|v| v.era() == mcp_types::Era::Legacy)
        else {
            return Err(SessionError::UnsupportedVersion {
                offered: result.protocol_version,
            });
        };
        if version != agreed {
            tracing::info!(
                from = agreed.as_str(),
                to = version.as_str(),
                "the new server session speaks another protocol version"
            );
            self.set_protocol_version(version.as_str());
        }
        *renewal.facts.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(ServerFacts {
            version,
            server_info: Arc::new(result.server_info),
            capabilities: Arc::new(result.capabilities),
            instructions: result.instructions.map(Arc::from),
        });
        self.notify(Initialized::METHOD, None).await?;
        self.expiry.generation.fetch_add(1, Ordering::AcqRel);
        self.reestablished();
        tracing::info!(
            "the server no longer knew this session (did it restart?): a new one is established"
        );
        Ok(())
    }
}

impl Session<Ready> {
    /// Runs `attempt`; on an expired server session establishes a new one
    /// and, for anything but `tools/call`, runs `attempt` once more.
    pub(crate) async fn with_expiry<T, F, Fut>(
        &self,
        method: &str,
        attempt: F,
    ) -> Result<T, SessionError>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T, SessionError>>,
    {
        let outcome = self.renewing(method, attempt).await;
        if let Err(e) = &outcome {
            // Boxed: the rare path must not grow every request's future.
            Box::pin(self.after_failure(e)).await;
        }
        outcome
    }

    /// [`Session::with_expiry`] but for what the failure says of the
    /// server's era.
    async fn renewing<T, F, Fut>(&self, method: &str, attempt: F) -> Result<T, SessionError>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T, SessionError>>,
    {
        let generation = self.link.shared.expiry.generation.load(Ordering::Acquire);
        match attempt().await {
            Err(SessionError::Http {
                failure: RequestFailure::SessionExpired,
                ..
            }) => {
                // Boxed: the rare path must not grow every request's future.
                Box::pin(self.link.shared.renew(generation)).await?;
                if method == CallTool::METHOD {
                    return Err(SessionError::NotReplayed {
                        method: method.to_owned(),
                    });
                }
                Box::pin(attempt()).await
            }
            Err(SessionError::Http {
                failure: RequestFailure::StreamBroken,
                ..
            }) if method != CallTool::METHOD => Box::pin(attempt()).await,
            other => other,
        }
    }

    /// Over HTTP, a failed request may show the server was replaced by a
    /// release that no longer speaks this connection's version or era: the
    /// connection then ends ([`CloseReason::ProtocolChanged`]), so that its
    /// holder connects again (a hub restarts the server) and negotiates
    /// anew. A 2026 request answered as a legacy server would answer is
    /// followed by a `server/discover` (at most once a minute) to tell.
    async fn after_failure(&self, error: &SessionError) {
        if self.link.connector.is_stdio() {
            // A local process keeps its protocol for its life.
            return;
        }
        match after_failure(self.era(), error) {
            AfterFailure::Nothing => {}
            AfterFailure::VersionGone => self.link.shared.protocol_changed(error),
            AfterFailure::Probe if self.link.shared.expiry.may_probe() => {
                let meta = modern_request_meta(&self.link.config);
                let timing = RequestTiming {
                    timeout: self.link.config.probe_timeout,
                    cancellable: false,
                    ..RequestTiming::default()
                };
                let answer = self
                    .link
                    .request::<Discover>(&Default::default(), Some(&meta), timing)
                    .await;
                if let ProbeVerdict::Legacy = judge_probe(answer, false) {
                    self.link.shared.protocol_changed(error);
                }
            }
            AfterFailure::Probe => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn armed() -> Expiry {
        let expiry = Expiry::default();
        expiry.arm(Renewal {
            params: InitializeParams::default(),
            facts: ServerFacts::shared(
                ProtocolVersion::V2025_11_25,
                mcp_types::Implementation::new("s", "1"),
                mcp_types::ServerCapabilities::default(),
                None,
            ),
            timeout: Duration::from_secs(1),
        });
        expiry
    }

    #[test]
    fn unprompted_renewals_in_a_row_are_spaced_out_up_to_a_minute() {
        assert_eq!(Expiry::default().unprompted_delay(), None, "not armed");
        let expiry = armed();
        let delays: Vec<u64> = (0..10)
            .map(|_| expiry.unprompted_delay().unwrap().as_secs())
            .collect();
        assert_eq!(delays, [0, 1, 2, 4, 8, 16, 32, 60, 60, 60]);
        // A streak ends once a minute passes without one.
        let past = Instant::now().checked_sub(STREAK_WINDOW);
        expiry.streak.lock().unwrap().1 = past;
        assert_eq!(expiry.unprompted_delay(), Some(Duration::ZERO));
    }
}
