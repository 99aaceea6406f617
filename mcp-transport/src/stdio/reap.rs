//! Waiting for a child without a descriptor of its own.
//!
//! tokio's `Child` opens a pidfd for every child on Linux: one more open
//! descriptor per server for as long as it runs. Here every waiter listens
//! for `SIGCHLD` instead (tokio's signal driver: a few descriptors for the
//! whole process) and asks the kernel about its own child, without blocking,
//! each time one arrives. A child's exit wakes every waiter once; exits are
//! rare, and a `waitpid(WNOHANG)` costs about a microsecond.
//!
//! A waiter dropped before its child was reaped (its runtime shut down)
//! leaves the child here; every later spawn reaps what has exited since, so
//! no zombie piles up.

use std::process::{Child, ExitStatus};
use std::sync::Mutex;

use tokio::signal::unix::{SignalKind, signal};

/// Children whose waiter went away before they exited.
static ORPHANS: Mutex<Vec<Child>> = Mutex::new(Vec::new());

/// Reaps every orphan that has exited (never waits).
pub(crate) fn reap_orphans() {
    let mut orphans = ORPHANS.lock().unwrap_or_else(|p| p.into_inner());
    // An error (the child was reaped elsewhere) leaves nothing to wait for.
    orphans.retain_mut(|child| matches!(child.try_wait(), Ok(None)));
}

/// Holds a child until it is reaped; an unreaped child goes to the orphans.
struct Waited(Option<Child>);

impl Drop for Waited {
    fn drop(&mut self) {
        if let Some(child) = self.0.take() {
            ORPHANS
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(child);
        }
    }
}

/// Waits for `child` to exit and reaps it. `None` when its status cannot be
/// had (it was reaped by someone else).
pub(crate) async fn wait(child: Child) -> Option<ExitStatus> {
    let mut held = Waited(Some(child));
    // Listen before the first look: an exit between the look and the wait
    // is then a signal the listener has seen.
    let mut sigchld = match signal(SignalKind::child()) {
        Ok(listener) => listener,
        Err(_) => {
            // No signal driver (a runtime without IO): wait on a blocking
            // thread instead.
            let mut child = held.0.take()?;
            return tokio::task::spawn_blocking(move || child.wait().ok())
                .await
                .ok()
                .flatten();
        }
    };
    loop {
        let child = held.0.as_mut()?;
        match child.try_wait() {
            Ok(Some(status)) => {
                held.0 = None;
                return Some(status);
            }
            Ok(None) => {}
            Err(_) => {
                held.0 = None;
                return None;
            }
        }
        // `None`: the signal driver is gone (the runtime is shutting down);
        // the child stays with the orphans.
        sigchld.recv().await?;
    }
}
