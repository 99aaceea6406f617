//! Retries of transient failures, for requests that may be repeated.

use std::future::Future;

use mcp_session::SessionError;
use mcp_transport::TransportError;
use mcp_types::error_codes;

use crate::config::RetryPolicy;
use crate::servers::backoff::{Jitter, delay};

/// Jitter fraction of retry delays.
const RETRY_JITTER: f64 = 0.5;

/// Whether `error` may go away by itself: a transport failure (a reset
/// connection; for HTTP later also a 5xx) or the server's `-32603` internal
/// error. A dead server is not transient here: its requests fail at once and
/// are never replayed; the restart loop brings it back. Running out of file
/// descriptors is not transient either.
pub(crate) fn is_transient(error: &SessionError) -> bool {
    match error {
        SessionError::Transport(TransportError::TooManyOpenFiles { .. }) => false,
        SessionError::Transport(_) => true,
        SessionError::Server { code, .. } => *code == error_codes::INTERNAL_ERROR,
        _ => false,
    }
}

/// Whether a request may be repeated at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Repeatable {
    /// Lists, reads, `prompts/get`, `ping`.
    Idempotent,
    /// A tool call the host opted in for.
    OptedIn,
    /// A tool call without opt-in: exactly one attempt.
    Once,
}

/// Runs `op` up to the policy's attempt count while it fails transiently.
pub(crate) async fn with_retry<T, F, Fut>(
    policy: &RetryPolicy,
    repeatable: Repeatable,
    jitter: &Jitter,
    mut op: F,
) -> Result<T, SessionError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, SessionError>>,
{
    let attempts = match repeatable {
        Repeatable::Once => 1,
        Repeatable::Idempotent | Repeatable::OptedIn => policy.max_attempts.max(1),
    };
    let mut attempt = 1;
    loop {
        match op().await {
            Err(e) if attempt < attempts && is_transient(&e) => {
                let wait = delay(
                    policy.initial,
                    policy.max,
                    RETRY_JITTER,
                    attempt,
                    jitter.unit(),
                );
                tracing::debug!(attempt, ?wait, "transient failure; retrying");
                tokio::time::sleep(wait).await;
                attempt += 1;
            }
            result => return result,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    fn internal_error() -> SessionError {
        SessionError::Server {
            method: "tools/list".into(),
            code: error_codes::INTERNAL_ERROR,
            error: Box::new(mcp_types::ErrorObject::new(
                error_codes::INTERNAL_ERROR,
                "boom",
            )),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn idempotent_requests_are_retried_tool_calls_only_with_consent() {
        let policy = RetryPolicy::default();
        let jitter = Jitter::new(Some(1));
        for (repeatable, expected) in [
            (Repeatable::Idempotent, 3),
            (Repeatable::OptedIn, 3),
            (Repeatable::Once, 1),
        ] {
            let calls = AtomicU32::new(0);
            let r: Result<(), _> = with_retry(&policy, repeatable, &jitter, || {
                calls.fetch_add(1, Ordering::SeqCst);
                async { Err(internal_error()) }
            })
            .await;
            assert!(r.is_err());
            assert_eq!(calls.load(Ordering::SeqCst), expected, "{repeatable:?}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn permanent_and_dead_failures_are_not_retried() {
        let policy = RetryPolicy::default();
        let jitter = Jitter::new(Some(1));
        let calls = AtomicU32::new(0);
        let r: Result<(), _> = with_retry(&policy, Repeatable::Idempotent, &jitter, || {
            calls.fetch_add(1, Ordering::SeqCst);
            async {
                Err(SessionError::Dead(
                    mcp_transport::ExitInfo::without_process(
                        mcp_transport::CloseReason::EndOfStream,
                    ),
                ))
            }
        })
        .await;
        assert!(r.is_err());
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        // A transient failure followed by success returns the success.
        let calls = AtomicU32::new(0);
        let r = with_retry(&policy, Repeatable::Idempotent, &jitter, || {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            async move {
                if n == 0 {
                    Err(SessionError::Transport(TransportError::Closed))
                } else {
                    Ok(n)
                }
            }
        })
        .await;
        assert_eq!(r.unwrap(), 1);
    }
}
