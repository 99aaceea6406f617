//! Subscriptions (2026-07-28): `subscriptions/listen` opens a notification stream
//! for the kinds named in a [`SubscriptionFilter`]; the server first confirms with
//! `notifications/subscriptions/acknowledged`, and every notification on the
//! stream carries the listen request's id in `_meta`
//! (`io.modelcontextprotocol/subscriptionId`).

use crate::input_required::ResultType;
use crate::meta::Meta;
use crate::open_struct::open_struct;

open_struct! {
    /// Which notifications a subscription delivers. Omitted = not wanted.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct SubscriptionFilter {
        /// `notifications/tools/list_changed`.
        opt tools_list_changed: bool = "toolsListChanged",
        /// `notifications/prompts/list_changed`.
        opt prompts_list_changed: bool = "promptsListChanged",
        /// `notifications/resources/list_changed`.
        opt resources_list_changed: bool = "resourcesListChanged",
        /// `notifications/resources/updated` for these URIs.
        opt resource_subscriptions: Vec<String> = "resourceSubscriptions",
        /// Tasks extension: `notifications/tasks` for these task ids.
        opt task_ids: Vec<String> = "taskIds",
    }
}

open_struct! {
    /// Params of `subscriptions/listen`.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct SubscriptionsListenParams {
        /// What to deliver.
        req notifications: SubscriptionFilter = "notifications",
        /// Request metadata (required in 2026-07-28).
        opt meta: Meta = "_meta",
    }
}

open_struct! {
    /// Result of `subscriptions/listen`: sent when the server ends the stream
    /// gracefully; `_meta` carries the subscription id.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct SubscriptionsListenResult {
        /// The result's kind.
        opt result_type: ResultType = "resultType",
        /// Result metadata (with `io.modelcontextprotocol/subscriptionId`).
        opt meta: Meta = "_meta",
    }
}

open_struct! {
    /// Params of `notifications/subscriptions/acknowledged`: the part of the filter
    /// the server agreed to honour.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct SubscriptionsAcknowledgedParams {
        /// The honoured filter.
        req notifications: SubscriptionFilter = "notifications",
        /// Notification metadata (with the subscription id).
        opt meta: Meta = "_meta",
    }
}
