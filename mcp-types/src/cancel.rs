//! Cancellation: `notifications/cancelled`.

use crate::jsonrpc::RequestId;
use crate::meta::Meta;
use crate::open_struct::open_struct;

open_struct! {
    /// Params of `notifications/cancelled`.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct CancelledParams {
        /// The request to cancel (required except in 2025-11-25, where task
        /// cancellation uses `tasks/cancel` instead).
        opt request_id: RequestId = "requestId",
        /// Why (our prose or the peer's).
        opt reason: String = "reason",
        /// Notification metadata.
        opt meta: Meta = "_meta",
    }
}

impl CancelledParams {
    /// Params cancelling `id`.
    pub fn new(id: RequestId, reason: Option<String>) -> Self {
        CancelledParams {
            request_id: Some(id),
            reason,
            ..Default::default()
        }
    }
}
