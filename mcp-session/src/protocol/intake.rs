//! Which notifications are worth parsing: the cheap door in front of
//! [`super::ProtocolCore::handle_frame`].
//!
//! A server can send notifications far faster than anyone reads them (a
//! debug logger in a loop: half a million a second). Parsing each one costs
//! more than the server spent writing it, so the core decides on the
//! method alone, found by [`mcp_codec::peek_notification`] without parsing
//! the frame:
//!
//! - a log message (`notifications/message`) the host does not want
//!   ([`NotificationIntake::discard_log_messages`]) is dropped and counted
//!   ([`crate::ProtocolStats::log_messages_discarded`]);
//! - log messages and progress notifications beyond the server's
//!   [`NotificationBudget`] are dropped and counted
//!   ([`crate::ProtocolStats::notifications_over_budget`]); log messages and
//!   progress have separate buckets, so a log flood never takes a call's
//!   progress;
//! - everything else is parsed as always: responses and server requests are
//!   never dropped, nor are `list_changed` notifications (they carry state:
//!   the driver coalesces them when the host's queue is full, never loses
//!   them), resource updates, acknowledgements or cancellations.
//!
//! Nothing is queued on the way: a dropped frame is gone at once.

use mcp_types::Notification as _;
use mcp_types::notifications::{LoggingMessage, Progress};
use std::time::{Duration, Instant};

/// How many log messages, and separately how many progress notifications,
/// a server may send: a token bucket each, `burst` deep, refilled at
/// `per_second`. Beyond it they are dropped unparsed and counted.
///
/// The default (20 000 a second, 20 000 at once) is far above what a
/// working server sends; a server flooding its host stays within it only
/// as far as the host can afford.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct NotificationBudget {
    /// Refill rate, per second (0: never refilled).
    pub per_second: u32,
    /// Bucket depth: how many may arrive at once.
    pub burst: u32,
}

impl NotificationBudget {
    /// The default budget.
    pub const DEFAULT: NotificationBudget = NotificationBudget {
        per_second: 20_000,
        burst: 20_000,
    };

    /// `burst` at once, refilled at `per_second`.
    pub fn new(per_second: u32, burst: u32) -> Self {
        Self { per_second, burst }
    }

    /// No budget: nothing is dropped for its rate.
    pub fn unlimited() -> Self {
        Self {
            per_second: u32::MAX,
            burst: u32::MAX,
        }
    }

    fn is_unlimited(&self) -> bool {
        self.per_second == u32::MAX && self.burst == u32::MAX
    }
}

impl Default for NotificationBudget {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The intake settings the session gives its core.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct NotificationIntake {
    /// Drop every log message unparsed (nobody listens to them).
    pub discard_log_messages: bool,
    /// The server's budget.
    pub budget: NotificationBudget,
}

impl NotificationIntake {
    /// Settings with this budget, log messages kept.
    pub fn new(budget: NotificationBudget, discard_log_messages: bool) -> Self {
        Self {
            discard_log_messages,
            budget,
        }
    }
}

/// What to do with a notification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Admit {
    /// Parse and handle it.
    Parse,
    /// A log message nobody wants.
    Discard,
    /// Over the budget.
    OverBudget,
}

/// One token bucket.
#[derive(Debug)]
struct Bucket {
    tokens: f64,
    refilled: Option<Instant>,
}

impl Bucket {
    fn take(&mut self, now: Instant, budget: NotificationBudget) -> bool {
        let burst = f64::from(budget.burst);
        match self.refilled {
            None => self.tokens = burst,
            Some(then) => {
                let elapsed = now.saturating_duration_since(then).as_secs_f64();
                self.tokens = (self.tokens + elapsed * f64::from(budget.per_second)).min(burst);
            }
        }
        self.refilled = Some(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// How often, at most, the core reports drops while they go on.
pub(crate) const DROP_REPORT_EVERY: Duration = Duration::from_secs(1);

/// The intake state of one connection.
#[derive(Debug)]
pub(crate) struct Intake {
    settings: NotificationIntake,
    logs: Bucket,
    progress: Bucket,
    /// When drops were last reported.
    reported: Option<Instant>,
}

impl Intake {
    pub(crate) fn new(settings: NotificationIntake) -> Self {
        Self {
            settings,
            logs: Bucket {
                tokens: 0.0,
                refilled: None,
            },
            progress: Bucket {
                tokens: 0.0,
                refilled: None,
            },
            reported: None,
        }
    }

    /// Decides on a notification by its method.
    pub(crate) fn admit(&mut self, now: Instant, method: &str) -> Admit {
        let budget = self.settings.budget;
        let bucket = if method == LoggingMessage::METHOD {
            if self.settings.discard_log_messages {
                return Admit::Discard;
            }
            &mut self.logs
        } else if method == Progress::METHOD {
            &mut self.progress
        } else {
            return Admit::Parse;
        };
        if budget.is_unlimited() || bucket.take(now, budget) {
            Admit::Parse
        } else {
            Admit::OverBudget
        }
    }

    /// Whether a drop now should be reported (the first, then at most once
    /// per [`DROP_REPORT_EVERY`]).
    pub(crate) fn report_due(&mut self, now: Instant) -> bool {
        let due = self
            .reported
            .is_none_or(|then| now.saturating_duration_since(then) >= DROP_REPORT_EVERY);
        if due {
            self.reported = Some(now);
        }
        due
    }
}

#[cfg(test)]
mod tests;
