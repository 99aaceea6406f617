//! Notification method markers: one uninhabited type per notification method of
//! every version, each implementing [`Notification`] and its direction markers.

use crate::cancel::CancelledParams;
use crate::common::NotificationParams;
use crate::elicitation::ElicitationCompleteParams;
use crate::logging::LoggingMessageParams;
use crate::progress::ProgressParams;
use crate::resources::ResourceUpdatedParams;
use crate::subscriptions::SubscriptionsAcknowledgedParams;
use crate::tasks::TaskStatusParams;
use crate::traits::{ClientNotification, Notification, ServerNotification};

macro_rules! notifications {
    ($(
        $(#[$doc:meta])*
        $name:ident = $method:literal, $params:ty, optional: $opt:literal, [$($dir:ident),*];
    )*) => {
        $(
            $(#[$doc])*
            #[derive(Debug)]
            pub enum $name {}

            impl Notification for $name {
                const METHOD: &'static str = $method;
                const PARAMS_OPTIONAL: bool = $opt;
                type Params = $params;
            }

            $( impl $dir for $name {} )*
        )*
    };
}

notifications! {
    /// `notifications/initialized` (legacy): the handshake is done.
    Initialized = "notifications/initialized", NotificationParams, optional: true, [ClientNotification];
    /// `notifications/cancelled` (either direction).
    Cancelled = "notifications/cancelled", CancelledParams, optional: false, [ClientNotification, ServerNotification];
    /// `notifications/progress` (either direction).
    Progress = "notifications/progress", ProgressParams, optional: false, [ClientNotification, ServerNotification];
    /// `notifications/roots/list_changed` (legacy).
    RootsListChanged = "notifications/roots/list_changed", NotificationParams, optional: true, [ClientNotification];
    /// `notifications/message`: a log message.
    LoggingMessage = "notifications/message", LoggingMessageParams, optional: false, [ServerNotification];
    /// `notifications/resources/updated`.
    ResourceUpdated = "notifications/resources/updated", ResourceUpdatedParams, optional: false, [ServerNotification];
    /// `notifications/resources/list_changed`.
    ResourceListChanged = "notifications/resources/list_changed", NotificationParams, optional: true, [ServerNotification];
    /// `notifications/tools/list_changed`.
    ToolListChanged = "notifications/tools/list_changed", NotificationParams, optional: true, [ServerNotification];
    /// `notifications/prompts/list_changed`.
    PromptListChanged = "notifications/prompts/list_changed", NotificationParams, optional: true, [ServerNotification];
    /// `notifications/elicitation/complete` (2025-11-25).
    ElicitationComplete = "notifications/elicitation/complete", ElicitationCompleteParams, optional: false, [ServerNotification];
    /// `notifications/tasks/status` (2025-11-25, either direction).
    TaskStatus = "notifications/tasks/status", TaskStatusParams, optional: false, [ClientNotification, ServerNotification];
    /// `notifications/tasks` (tasks extension).
    Task = "notifications/tasks", TaskStatusParams, optional: false, [ServerNotification];
    /// `notifications/subscriptions/acknowledged` (2026-07-28).
    SubscriptionsAcknowledged = "notifications/subscriptions/acknowledged", SubscriptionsAcknowledgedParams, optional: false, [ServerNotification];
}
