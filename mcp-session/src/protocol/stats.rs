//! Counters of one connection.

/// What happened on a connection, for diagnostics and tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProtocolStats {
    /// Frames received, well-formed or not.
    pub frames_received: u64,
    /// Requests sent.
    pub requests_sent: u64,
    /// Answers (results or errors) matched to a pending request.
    pub responses_received: u64,
    /// Requests that ran out of time.
    pub timeouts: u64,
    /// Requests the caller cancelled.
    pub cancelled: u64,
    /// Answers that arrived after their request had been given up.
    pub late_responses: u64,
    /// Progress notifications for no pending request.
    pub stray_progress: u64,
    /// Protocol violations by the server (malformed frames, unknown ids …).
    pub violations: u64,
    /// Requests refused because the in-flight bound was reached.
    pub refused_in_flight: u64,
    /// Log messages dropped unparsed because the host does not want them
    /// (`NotificationIntake::discard_log_messages`).
    pub log_messages_discarded: u64,
    /// Log messages and progress notifications dropped unparsed because the
    /// server went over its `NotificationBudget`.
    pub notifications_over_budget: u64,
    /// `list_changed` notifications merged into one already waiting because
    /// the host's event queue was full (never lost: one per kind waits).
    pub list_changed_coalesced: u64,
}
