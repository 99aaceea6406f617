//! Era negotiation: sends the probe and follows the verdict of the era
//! decision table (`protocol/era.rs`, synchronous, with the table in its
//! docs): ask once more, start a stdio server again, `initialize`, go on
//! without a handshake, or fail.
//!
//! Legacy means `initialize` offering 2025-11-25 with no session id and no
//! 2026 version header; over HTTP, if that `initialize` fails with 400, 404 or
//! 405 and no modern error body, the connector's fallback (legacy HTTP+SSE)
//! is tried. The verdict is remembered per endpoint in the
//! [`EraCache`](crate::EraCache) the host gave (`SessionConfig::era_cache`;
//! HTTP only: a local process may be a different program next time). The era
//! is fixed for the life of the connection.

use std::sync::{Arc, Mutex};

use mcp_types::{DiscoverResult, Era, ProtocolVersion};

use crate::SessionError;
use crate::config::Negotiation;
use crate::protocol::era::{
    ProbeVerdict, asks_for_retry, judge_probe, may_speak_other_era, offers_modern, wants_fallback,
};
use crate::session::{Failed, Link, Ready, Session, Spawned, modern_request_meta};

/// What the probe told us, once retries are done.
enum Verdict {
    Modern(Box<DiscoverResult>),
    Legacy,
    /// The server exited on the probe: start it again, then go legacy.
    Respawn,
}

/// The era the host's cache remembers for this endpoint.
fn remembered(session: &Session<Spawned>) -> Option<Era> {
    let cache = session.link.config.era_cache.as_ref()?;
    cache.get(&session.link.connector.cache_key()?)
}

/// Remembers the era in the host's cache.
fn remember(session: &Session<Ready>) {
    let (Some(cache), Some(key)) = (
        session.link.config.era_cache.as_ref(),
        session.link.connector.cache_key(),
    ) else {
        return;
    };
    cache.insert(key, session.era());
}

impl Session<Spawned> {
    /// Modern era: `server/discover` at 2026-07-28.
    pub async fn discover(self) -> Result<Session<Ready>, Failed<Spawned>> {
        discover(self).await
    }

    /// Negotiates the era as `mode` says; see [`crate::Negotiation`].
    pub async fn negotiate(self, mode: Negotiation) -> Result<Session<Ready>, Failed<Spawned>> {
        negotiate(self, mode).await
    }
}

async fn negotiate(
    session: Session<Spawned>,
    mode: Negotiation,
) -> Result<Session<Ready>, Failed<Spawned>> {
    let ready = match mode {
        Negotiation::Legacy => legacy(session).await,
        Negotiation::Modern => discover(session).await,
        Negotiation::Auto => match remembered(&session) {
            Some(era) => Box::pin(as_remembered(session, era)).await,
            None => probed(session).await,
        },
    }?;
    remember(&ready);
    Ok(ready)
}

/// The handshake of the era remembered for the endpoint. A server answering
/// it as a server of the other era would (a new release, a rollback) is
/// forgotten and probed afresh at once; one that failed in a way that says
/// nothing of its era (unreachable, 5xx) keeps its verdict.
async fn as_remembered(
    session: Session<Spawned>,
    era: Era,
) -> Result<Session<Ready>, Failed<Spawned>> {
    // Taken now: after a fallback the session is another endpoint's.
    let cache = session.link.config.era_cache.clone();
    let key = session.link.connector.cache_key();
    let forget = || {
        if let (Some(cache), Some(key)) = (&cache, &key) {
            cache.remove(key);
        }
    };
    let attempt = match era {
        Era::Legacy => legacy(session).await,
        _ => discover(session).await,
    };
    let failure = match attempt {
        Ok(ready) => return Ok(ready),
        Err(failed) => failed,
    };
    let error = match &failure {
        Failed::Recoverable(e, _) | Failed::Dead(e, _) => e,
    };
    if !may_speak_other_era(error) {
        return Err(failure);
    }
    forget();
    match failure {
        // Still the remembered endpoint's connection: ask it now.
        Failed::Recoverable(e, session) if !matches!(e, SessionError::FallbackFailed { .. }) => {
            tracing::info!(
                error = %e,
                remembered = ?era,
                "the server did not answer in the protocol era it spoke before: probing it again"
            );
            probed(session).await
        }
        // The next connection probes.
        failure => Err(failure),
    }
}

/// Probes the server's era, then does what the verdict says.
async fn probed(session: Session<Spawned>) -> Result<Session<Ready>, Failed<Spawned>> {
    let (session, verdict) = probe(session).await?;
    match verdict {
        Verdict::Modern(result) => into_modern(session, *result).await,
        Verdict::Legacy => legacy(session).await,
        Verdict::Respawn => {
            let session = respawn(session).await?;
            legacy(session).await
        }
    }
}

async fn legacy(session: Session<Spawned>) -> Result<Session<Ready>, Failed<Spawned>> {
    let initialized = match session.initialize().await {
        Ok(initialized) => initialized,
        Err(Failed::Recoverable(e, session)) if wants_fallback(&e) => {
            let Some(fallback) = session.link.connector.fallback() else {
                return Err(Failed::Recoverable(e, session));
            };
            let config = Arc::clone(&session.link.config);
            let dead = session.close().await;
            // Both attempts are named in the error: the fallback's words
            // alone would blame an endpoint the host never gave.
            let both = |fallback| SessionError::FallbackFailed {
                first: Box::new(e),
                fallback: Box::new(fallback),
            };
            let link = match Link::open(fallback, config).await {
                Ok(link) => link,
                Err(second) => return Err(Failed::Dead(both(second), dead)),
            };
            let session = Session {
                link,
                state: spawned(),
            };
            match session.initialize().await {
                Ok(initialized) => initialized,
                Err(Failed::Recoverable(second, s)) => {
                    return Err(Failed::Recoverable(both(second), s));
                }
                Err(Failed::Dead(second, dead)) => return Err(Failed::Dead(both(second), dead)),
            }
        }
        Err(failed) => return Err(failed),
    };
    initialized.ready().await.map_err(|failed| match failed {
        Failed::Dead(e, dead) => Failed::Dead(e, dead),
        // `ready` only fails by losing the connection; a recoverable failure
        // there would still leave an initialized server that never heard
        // `initialized`, which no caller can resume from `Spawned`.
        Failed::Recoverable(e, s) => Failed::Recoverable(e, s.into_phase(spawned())),
    })
}

pub(crate) async fn discover(session: Session<Spawned>) -> Result<Session<Ready>, Failed<Spawned>> {
    let meta = modern_request_meta(&session.link.config);
    let timing = session.link.timing(session.link.config.request_timeout);
    let mut retried = false;
    loop {
        let result = session
            .link
            .request::<mcp_types::requests::Discover>(&Default::default(), Some(&meta), timing)
            .await;
        match result {
            Ok(result) => return into_modern(session, result).await,
            Err(e) if e.is_dead() => return Err(session.fail(e).await),
            // `-32022` naming a version we speak: the spec's retry, once.
            Err(e) if !retried && asks_for_retry(&e) => retried = true,
            Err(e) => return Err(Failed::Recoverable(e, session)),
        }
    }
}

/// Sends the probe and reads the verdict. At most one retry (on `-32022`
/// naming a modern version we speak).
async fn probe(session: Session<Spawned>) -> Result<(Session<Spawned>, Verdict), Failed<Spawned>> {
    let meta = modern_request_meta(&session.link.config);
    // The probe is never cancelled: a legacy server must not see a
    // notification before `initialize`, and a late answer is recognised as
    // late by the core.
    let timing = crate::protocol::RequestTiming {
        cancellable: false,
        reset_on_progress: false,
        timeout: session.link.config.probe_timeout,
        open_ended: false,
    };
    for _attempt in 0..2 {
        let answer = session
            .link
            .request::<mcp_types::requests::Discover>(&Default::default(), Some(&meta), timing)
            .await;
        let verdict = match judge_probe(answer, session.link.connector.is_stdio()) {
            ProbeVerdict::Modern(result) => Verdict::Modern(result),
            ProbeVerdict::Legacy => Verdict::Legacy,
            ProbeVerdict::Respawn => Verdict::Respawn,
            ProbeVerdict::Retry => continue,
            ProbeVerdict::Fail(e) => return Err(Failed::Recoverable(e, session)),
        };
        return Ok((session, verdict));
    }
    Ok((session, Verdict::Legacy))
}

async fn respawn(session: Session<Spawned>) -> Result<Session<Spawned>, Failed<Spawned>> {
    let connector = Arc::clone(&session.link.connector);
    let config = Arc::clone(&session.link.config);
    // The old connection is gone already; collect its child.
    let dead = session.close().await;
    match Link::open(connector, config).await {
        Ok(link) => Ok(Session {
            link,
            state: spawned(),
        }),
        Err(e) => Err(Failed::Dead(e, dead)),
    }
}

async fn into_modern(
    session: Session<Spawned>,
    result: DiscoverResult,
) -> Result<Session<Ready>, Failed<Spawned>> {
    if !offers_modern(&result.supported_versions) {
        let offered = result.supported_versions.join(", ");
        return Err(session
            .fail(SessionError::UnsupportedVersion { offered })
            .await);
    }
    let meta = modern_request_meta(&session.link.config);
    let server_info = result
        .server_info()
        .ok()
        .flatten()
        .unwrap_or_else(|| mcp_types::Implementation::new("unknown", "unknown"));
    session
        .link
        .shared
        .set_protocol_version(ProtocolVersion::V2026_07_28.as_str());
    let ready = Ready {
        era: Era::Modern,
        facts: crate::session::ServerFacts::shared(
            ProtocolVersion::V2026_07_28,
            server_info,
            result.capabilities.clone(),
            result.instructions.as_deref(),
        ),
        request_meta: Some(std::sync::RwLock::new(Arc::new(meta))),
        catalog: Mutex::new(None),
    };
    Ok(session.into_phase(ready))
}

fn spawned() -> Spawned {
    crate::session::spawned_phase()
}
