//! Per-server bounds: concurrency with a bounded wait queue, and the size of
//! results handed on.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::HubError;
use crate::config::CallLimits;
use crate::namespace::name::ServerName;

/// At most `max_concurrent` requests run; up to `max_queued` wait, each for
/// at most `queue_timeout`.
#[derive(Debug)]
pub(crate) struct Limiter {
    running: Arc<Semaphore>,
    waiting: AtomicUsize,
    limits: CallLimits,
}

/// Holds one running slot until dropped.
#[derive(Debug)]
pub(crate) struct Slot {
    _permit: OwnedSemaphorePermit,
}

impl Limiter {
    pub(crate) fn new(limits: CallLimits) -> Self {
        Self {
            running: Arc::new(Semaphore::new(limits.max_concurrent)),
            waiting: AtomicUsize::new(0),
            limits,
        }
    }

    /// Takes a slot, waiting in the queue when all are busy.
    pub(crate) async fn acquire(&self, server: &ServerName) -> Result<Slot, HubError> {
        if let Ok(permit) = Arc::clone(&self.running).try_acquire_owned() {
            return Ok(Slot { _permit: permit });
        }
        let queued = self.waiting.fetch_add(1, Ordering::AcqRel);
        let _leave = LeaveQueue(&self.waiting);
        if queued >= self.limits.max_queued {
            return Err(HubError::QueueFull {
                server: server.clone(),
                limit: self.limits.max_queued,
            });
        }
        let wait = Arc::clone(&self.running).acquire_owned();
        match tokio::time::timeout(self.limits.queue_timeout, wait).await {
            Ok(Ok(permit)) => Ok(Slot { _permit: permit }),
            // The semaphore is never closed while the limiter lives.
            Ok(Err(_)) => Err(HubError::ShuttingDown),
            Err(_) => Err(HubError::QueueTimeout {
                server: server.clone(),
                after: self.limits.queue_timeout,
            }),
        }
    }

    /// Requests waiting now.
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Acquire)
    }
}

struct LeaveQueue<'a>(&'a AtomicUsize);

impl Drop for LeaveQueue<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Refuses `value` when its JSON is larger than `limit` bytes. The value is
/// measured by serialising into a counter: nothing is copied.
pub(crate) fn check_content<T: Serialize>(
    server: &ServerName,
    value: &T,
    limit: usize,
) -> Result<(), HubError> {
    // Serialising our own decoded types cannot fail; if it ever did, the
    // count would be unknown, so treat it as over the limit.
    let size = mcp_types::json_len(value).unwrap_or(usize::MAX);
    if size > limit {
        return Err(HubError::ContentTooLarge {
            server: server.clone(),
            size,
            limit,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn name() -> ServerName {
        ServerName::new("s").unwrap()
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_waits_its_turn_then_is_refused() {
        let limiter = Arc::new(Limiter::new(CallLimits {
            max_concurrent: 1,
            max_queued: 1,
            queue_timeout: Duration::from_secs(5),
        }));
        let first = limiter.acquire(&name()).await.unwrap();
        let l2 = Arc::clone(&limiter);
        let waiter = tokio::spawn(async move { l2.acquire(&name()).await.map(|_| ()) });
        tokio::task::yield_now().await;
        assert_eq!(limiter.waiting(), 1);
        // Queue full: refused at once.
        assert!(matches!(
            limiter.acquire(&name()).await,
            Err(HubError::QueueFull { limit: 1, .. })
        ));
        drop(first);
        waiter.await.unwrap().unwrap();
        assert_eq!(limiter.waiting(), 0);
        // A waiter past its bound is refused.
        let _held = limiter.acquire(&name()).await.unwrap();
        let err = limiter.acquire(&name()).await.unwrap_err();
        assert!(matches!(err, HubError::QueueTimeout { .. }), "{err}");
        assert_eq!(limiter.waiting(), 0);
    }

    #[test]
    fn content_over_the_limit_is_refused_whole() {
        let small = serde_json::json!({"text": "x".repeat(100)});
        assert!(check_content(&name(), &small, 1024).is_ok());
        let big = serde_json::json!({"text": "x".repeat(2000)});
        match check_content(&name(), &big, 1024) {
            Err(HubError::ContentTooLarge { size, limit, .. }) => {
                assert_eq!(limit, 1024);
                assert_eq!(size, serde_json::to_vec(&big).unwrap().len());
            }
            other => panic!("{other:?}"),
        }
    }
}
