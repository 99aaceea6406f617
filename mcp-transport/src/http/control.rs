//! The control handle of both HTTP transports: asks the connection's driver
//! task to stop and waits for its report.

use std::time::Duration;

use tokio::sync::watch;

use crate::connection::{BoxFuture, CloseReason, Control, ExitInfo};

/// What the driver task is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    Running,
    /// Finish politely: end the server's session (`DELETE`), then close.
    Shutdown,
    /// Stop at once.
    Kill,
}

/// The handles the driver keeps.
#[derive(Debug)]
pub(crate) struct DriverSignals {
    pub(crate) stop: watch::Receiver<Stop>,
    pub(crate) done: watch::Sender<Option<ExitInfo>>,
}

/// A [`Control`] for a connection served by one driver task.
#[derive(Debug)]
pub(crate) struct HttpControl {
    stop: watch::Sender<Stop>,
    done: watch::Receiver<Option<ExitInfo>>,
    /// How long `shutdown` waits for the driver before reporting anyway.
    wait: Duration,
}

impl HttpControl {
    pub(crate) fn new(wait: Duration) -> (Self, DriverSignals) {
        let (stop_tx, stop_rx) = watch::channel(Stop::Running);
        let (done_tx, done_rx) = watch::channel(None);
        (
            Self {
                stop: stop_tx,
                done: done_rx,
                wait,
            },
            DriverSignals {
                stop: stop_rx,
                done: done_tx,
            },
        )
    }
}

impl Control for HttpControl {
    fn shutdown(&self) -> BoxFuture<'_, ExitInfo> {
        Box::pin(async move {
            self.stop.send_if_modified(|s| {
                let change = *s == Stop::Running;
                if change {
                    *s = Stop::Shutdown;
                }
                change
            });
            let mut done = self.done.clone();
            let reported = tokio::time::timeout(self.wait, done.wait_for(Option::is_some))
                .await
                .ok()
                .and_then(|r| r.ok().and_then(|info| info.clone()));
            reported.unwrap_or_else(|| {
                // The driver did not report in time: make sure it stops.
                self.kill();
                ExitInfo::without_process(CloseReason::Shutdown)
            })
        })
    }

    fn kill(&self) {
        self.stop.send_if_modified(|s| {
            let change = *s != Stop::Kill;
            *s = Stop::Kill;
            change
        });
    }

    fn stderr_tail(&self) -> Option<String> {
        None
    }
}

impl Drop for HttpControl {
    fn drop(&mut self) {
        // Synchronous: the driver sees the signal and stops its tasks.
        self.kill();
    }
}

/// Waits until the driver is asked to stop; returns how.
pub(crate) async fn stopped(stop: &mut watch::Receiver<Stop>) -> Stop {
    match stop.wait_for(|s| *s != Stop::Running).await {
        Ok(s) => *s,
        // The control handle is gone without a word: stop at once.
        Err(_) => Stop::Kill,
    }
}
