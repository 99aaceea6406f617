//! The open-file descriptor limit: every stdio server costs this process
//! three descriptors (its stdin, stdout and stderr pipes), or two once 40 %
//! of the soft limit is in use (stdin and stdout on one socket pair), so a
//! limit of 1024 stops a hub at a little over 400 servers. At
//! start the hub raises the soft limit toward the hard one, as far as the
//! kernel allows.

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

use crate::error::LimitValue;

/// The soft and hard open-file limits before and after the hub's raise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DescriptorLimit {
    /// Soft limit before.
    pub soft_before: LimitValue,
    /// Soft limit after.
    pub soft_after: LimitValue,
    /// The hard limit.
    pub hard: LimitValue,
}

/// Where the raise stops when the hard limit is unlimited (Linux's default
/// `fs.nr_open`).
const UNLIMITED_TARGET: u64 = 1 << 20;

/// The current soft and hard limits.
pub(crate) fn current() -> (LimitValue, LimitValue) {
    let limit = getrlimit(Resource::Nofile);
    (LimitValue(limit.current), LimitValue(limit.maximum))
}

/// Raises the soft limit toward the hard one. Failures leave the limit as it
/// was (a later spawn failing then says the limit is the reason).
pub(crate) fn raise() -> DescriptorLimit {
    let before = getrlimit(Resource::Nofile);
    let target = before.maximum.unwrap_or(UNLIMITED_TARGET);
    let already = match before.current {
        None => true,
        Some(soft) => soft >= target,
    };
    if !already {
        // Try the hard limit, then smaller steps: the kernel may cap the
        // soft limit below an unlimited hard limit (`fs.nr_open`).
        let mut wanted = target;
        while wanted > before.current.unwrap_or(0) {
            let attempt = Rlimit {
                current: Some(wanted),
                maximum: before.maximum,
            };
            if setrlimit(Resource::Nofile, attempt).is_ok() {
                break;
            }
            wanted /= 2;
        }
    }
    let after = getrlimit(Resource::Nofile);
    if after.current != before.current {
        tracing::debug!(
            before = ?before.current,
            after = ?after.current,
            "raised the open file limit"
        );
    }
    DescriptorLimit {
        soft_before: LimitValue(before.current),
        soft_after: LimitValue(after.current),
        hard: LimitValue(after.maximum),
    }
}
