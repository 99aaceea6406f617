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
}
