//! Subscription routing: which subscription a server notification belongs
//! to, and what it means for it. No IO: the core holds the routes and emits
//! [`CoreEvent::Subscription`](super::CoreEvent::Subscription); the driver
//! only puts each event in its subscription's queue.
//!
//! - 2026-07-28: a notification belongs to the subscription whose
//!   `subscriptions/listen` request id it carries in
//!   `_meta["io.modelcontextprotocol/subscriptionId"]`, and to no other; an
//!   untagged one belongs to none.
//! - Legacy: every unsolicited notification the filter asks for.

use mcp_types::Notification as _;
use mcp_types::notifications::{
    PromptListChanged, ResourceListChanged, ResourceUpdated, SubscriptionsAcknowledged,
    Task as TaskNotification, ToolListChanged,
};
use mcp_types::{SubscriptionFilter, SubscriptionsAcknowledgedParams};
use serde_json::Value;

/// Which listing a notification invalidates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ListKind {
    /// `tools/list`.
    Tools,
    /// `resources/list` and `resources/templates/list`.
    Resources,
    /// `prompts/list`.
    Prompts,
}

impl ListKind {
    /// The kind a `notifications/*/list_changed` method invalidates.
    pub fn from_notification(method: &str) -> Option<Self> {
        [
            (ToolListChanged::METHOD, ListKind::Tools),
            (ResourceListChanged::METHOD, ListKind::Resources),
            (PromptListChanged::METHOD, ListKind::Prompts),
        ]
        .into_iter()
        .find_map(|(name, kind)| (name == method).then_some(kind))
    }
}

/// Subscriptions open at once on one session.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 64;

/// What a subscription delivers.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum SubscriptionEvent {
    /// 2026: the server confirmed the stream. `accepted` is what it agreed to
    /// honour; `refused` is what was asked for and left out.
    Acknowledged {
        /// What the server will send.
        accepted: SubscriptionFilter,
        /// What it will not.
        refused: SubscriptionFilter,
    },
    /// The tool list changed.
    ToolsListChanged,
    /// The prompt list changed.
    PromptsListChanged,
    /// The resource list changed.
    ResourcesListChanged,
    /// A subscribed resource changed.
    ResourceUpdated {
        /// Its URI.
        uri: String,
    },
    /// 2026, tasks extension: a task the stream asked about (`taskIds`)
    /// changed (`notifications/tasks`); the task as the server sent it.
    Task(Box<mcp_types::Task>),
    /// The stream ended; nothing follows.
    Ended(SubscriptionEnd),
}

/// How a subscription ended.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SubscriptionEnd {
    /// The server closed it with a result.
    Graceful,
    /// The connection ended under it.
    Abrupt,
    /// Legacy Streamable HTTP: the server forgot the session the
    /// subscription was made on (it restarted, say). The session went on
    /// with a new server session, which knows nothing of this subscription:
    /// subscribe again (and read again what may have changed meanwhile).
    SessionExpired,
    /// The server refused or broke it (an error answer to the listen request).
    Failed {
        /// The JSON-RPC code, when the server sent one.
        code: Option<i64>,
    },
}

/// One subscription's route.
#[derive(Debug)]
struct Route {
    key: u64,
    /// 2026: `Some`, with the listen request's id once it is sent.
    listen: Option<Option<i64>>,
    filter: SubscriptionFilter,
}

/// The routes of one session's subscriptions (bounded).
#[derive(Debug, Default)]
pub(crate) struct Routes {
    routes: Vec<Route>,
}

/// Why a route was not added.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TooManySubscriptions;

impl Routes {
    /// Adds the route of subscription `key` (2026 when `modern`).
    pub(crate) fn add(
        &mut self,
        key: u64,
        filter: SubscriptionFilter,
        modern: bool,
    ) -> Result<(), TooManySubscriptions> {
        if self.routes.len() >= MAX_SUBSCRIPTIONS {
            return Err(TooManySubscriptions);
        }
        self.routes.push(Route {
            key,
            listen: modern.then_some(None),
            filter,
        });
        Ok(())
    }

    /// Forgets subscription `key`.
    pub(crate) fn remove(&mut self, key: u64) {
        self.routes.retain(|r| r.key != key);
    }

    /// Subscription `key`'s listen request got `id` (before it is sent, so
    /// that the first tagged notification finds it).
    pub(crate) fn listening(&mut self, key: u64, id: i64) {
        if let Some(route) = self.routes.iter_mut().find(|r| r.key == key) {
            route.listen = Some(Some(id));
        }
    }

    /// The subscriptions one notification belongs to, with what it means for
    /// each.
    pub(crate) fn route(
        &self,
        method: &str,
        params: Option<&[u8]>,
    ) -> Vec<(u64, SubscriptionEvent)> {
        if self.routes.is_empty() {
            return Vec::new();
        }
        let params: Option<Value> = params.and_then(|p| serde_json::from_slice(p).ok());
        let tagged = params
            .as_ref()
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(mcp_types::meta_keys::SUBSCRIPTION_ID))
            .and_then(Value::as_i64);
        let mut out = Vec::new();
        for route in &self.routes {
            let mine = match (route.listen, tagged) {
                (Some(Some(id)), Some(tag)) => id == tag,
                // 2026 notifications belong to a subscription only when
                // tagged with its listen request's id.
                (Some(_), _) => false,
                // Legacy: every matching unsolicited notification.
                (None, _) => true,
            };
            if !mine {
                continue;
            }
            if let Some(event) = classify(
                &route.filter,
                route.listen.is_some(),
                method,
                params.as_ref(),
            ) {
                out.push((route.key, event));
            }
        }
        out
    }

    /// The connection ended: what legacy subscriptions are told (2026 ones
    /// learn it from their listen request failing).
    pub(crate) fn closed(&self) -> Vec<(u64, SubscriptionEvent)> {
        self.routes
            .iter()
            .filter(|r| r.listen.is_none())
            .map(|r| (r.key, SubscriptionEvent::Ended(SubscriptionEnd::Abrupt)))
            .collect()
    }

    /// The server forgot the session: the legacy subscriptions end, and no
    /// later notification is routed to them (2026 streams are not tied to a
    /// session).
    pub(crate) fn expired(&mut self) -> Vec<(u64, SubscriptionEvent)> {
        let mut ended = Vec::new();
        self.routes.retain(|r| {
            if r.listen.is_some() {
                return true;
            }
            ended.push((
                r.key,
                SubscriptionEvent::Ended(SubscriptionEnd::SessionExpired),
            ));
            false
        });
        ended
    }
}

fn classify(
    filter: &SubscriptionFilter,
    modern: bool,
    method: &str,
    params: Option<&Value>,
) -> Option<SubscriptionEvent> {
    let on = |flag: Option<bool>| flag == Some(true);
    match method {
        m if m == SubscriptionsAcknowledged::METHOD && modern => {
            let ack: SubscriptionsAcknowledgedParams =
                serde_json::from_value(params?.clone()).ok()?;
            let accepted = ack.notifications;
            let refused = difference(filter, &accepted);
            Some(SubscriptionEvent::Acknowledged { accepted, refused })
        }
        m if m == ToolListChanged::METHOD && on(filter.tools_list_changed) => {
            Some(SubscriptionEvent::ToolsListChanged)
        }
        m if m == PromptListChanged::METHOD && on(filter.prompts_list_changed) => {
            Some(SubscriptionEvent::PromptsListChanged)
        }
        m if m == ResourceListChanged::METHOD && on(filter.resources_list_changed) => {
            Some(SubscriptionEvent::ResourcesListChanged)
        }
        m if m == ResourceUpdated::METHOD => {
            let uri = params?.get("uri")?.as_str()?.to_owned();
            let wanted = filter
                .resource_subscriptions
                .as_ref()
                .is_some_and(|uris| uris.contains(&uri));
            wanted.then_some(SubscriptionEvent::ResourceUpdated { uri })
        }
        m if m == TaskNotification::METHOD && modern => {
            let task: mcp_types::Task = serde_json::from_value(params?.clone()).ok()?;
            let wanted = filter
                .task_ids
                .as_ref()
                .is_some_and(|ids| ids.contains(&task.task_id));
            wanted.then(|| SubscriptionEvent::Task(Box::new(task)))
        }
        _ => None,
    }
}

/// What was asked for and not acknowledged.
fn difference(asked: &SubscriptionFilter, got: &SubscriptionFilter) -> SubscriptionFilter {
    let lost =
        |a: Option<bool>, g: Option<bool>| (a == Some(true) && g != Some(true)).then_some(true);
    // The names asked for that the acknowledgement left out; `None` for none.
    let left_out = |asked: &Option<Vec<String>>, got: &Option<Vec<String>>| {
        let out: Vec<String> = asked
            .iter()
            .flatten()
            .filter(|a| !got.iter().flatten().any(|g| g == *a))
            .cloned()
            .collect();
        (!out.is_empty()).then_some(out)
    };
    SubscriptionFilter {
        tools_list_changed: lost(asked.tools_list_changed, got.tools_list_changed),
        prompts_list_changed: lost(asked.prompts_list_changed, got.prompts_list_changed),
        resources_list_changed: lost(asked.resources_list_changed, got.resources_list_changed),
        resource_subscriptions: left_out(
            &asked.resource_subscriptions,
            &got.resource_subscriptions,
        ),
        task_ids: left_out(&asked.task_ids, &got.task_ids),
        ..SubscriptionFilter::default()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn filter(v: Value) -> SubscriptionFilter {
        serde_json::from_value(v).unwrap()
    }

    fn bytes(v: Value) -> Vec<u8> {
        serde_json::to_vec(&v).unwrap()
    }

    #[test]
    fn tagged_notifications_go_to_their_listen_stream_only() {
        let mut routes = Routes::default();
        let tools = filter(json!({"toolsListChanged": true}));
        routes.add(1, tools.clone(), true).unwrap();
        routes.add(2, tools.clone(), true).unwrap();
        routes.add(3, tools, false).unwrap();
        let changed = |tag: Option<i64>| {
            let mut params = json!({});
            if let Some(tag) = tag {
                params["_meta"] = json!({mcp_types::meta_keys::SUBSCRIPTION_ID: tag});
            }
            bytes(params)
        };
        // Before its listen request has an id, a 2026 stream gets nothing.
        let got = routes.route("notifications/tools/list_changed", Some(&changed(Some(7))));
        assert_eq!(got, [(3, SubscriptionEvent::ToolsListChanged)]);
        routes.listening(1, 7);
        routes.listening(2, 8);
        let got = routes.route("notifications/tools/list_changed", Some(&changed(Some(7))));
        assert_eq!(
            got,
            [
                (1, SubscriptionEvent::ToolsListChanged),
                (3, SubscriptionEvent::ToolsListChanged)
            ]
        );
        // Untagged: legacy routes only.
        let got = routes.route("notifications/tools/list_changed", Some(&changed(None)));
        assert_eq!(got, [(3, SubscriptionEvent::ToolsListChanged)]);
        routes.remove(3);
        assert!(
            routes
                .route("notifications/tools/list_changed", None)
                .is_empty()
        );
    }

    #[test]
    fn a_task_state_goes_to_the_stream_that_asked_for_its_id() {
        let mut routes = Routes::default();
        routes
            .add(1, filter(json!({"taskIds": ["t-1", "t-2"]})), true)
            .unwrap();
        routes.listening(1, 9);
        let ack = bytes(json!({
            "notifications": {"taskIds": ["t-1"]},
            "_meta": {mcp_types::meta_keys::SUBSCRIPTION_ID: 9}
        }));
        let got = routes.route("notifications/subscriptions/acknowledged", Some(&ack));
        let [(1, SubscriptionEvent::Acknowledged { refused, .. })] = got.as_slice() else {
            panic!("{got:?}");
        };
        assert_eq!(refused.task_ids, Some(vec!["t-2".to_owned()]));
        let state = |id: &str| {
            bytes(json!({
                "taskId": id, "status": "working", "createdAt": "2026-01-01T00:00:00Z",
                "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttlMs": null,
                "_meta": {mcp_types::meta_keys::SUBSCRIPTION_ID: 9}
            }))
        };
        let got = routes.route("notifications/tasks", Some(&state("t-1")));
        let [(1, SubscriptionEvent::Task(task))] = got.as_slice() else {
            panic!("{got:?}");
        };
        assert_eq!(task.task_id, "t-1");
        // Another task, or a state that is not a task: nothing.
        assert!(
            routes
                .route("notifications/tasks", Some(&state("t-9")))
                .is_empty()
        );
        let broken =
            bytes(json!({"taskId": "t-1", "_meta": {mcp_types::meta_keys::SUBSCRIPTION_ID: 9}}));
        assert!(
            routes
                .route("notifications/tasks", Some(&broken))
                .is_empty()
        );
    }

    #[test]
    fn acknowledgements_resources_and_the_end() {
        let mut routes = Routes::default();
        let asked =
            filter(json!({"toolsListChanged": true, "resourceSubscriptions": ["a://1", "a://2"]}));
        routes.add(1, asked, true).unwrap();
        routes.listening(1, 5);
        let ack = bytes(json!({
            "notifications": {"resourceSubscriptions": ["a://1"]},
            "_meta": {mcp_types::meta_keys::SUBSCRIPTION_ID: 5}
        }));
        let got = routes.route("notifications/subscriptions/acknowledged", Some(&ack));
        assert_eq!(
            got,
            [(
                1,
                SubscriptionEvent::Acknowledged {
                    accepted: filter(json!({"resourceSubscriptions": ["a://1"]})),
                    refused: filter(
                        json!({"toolsListChanged": true, "resourceSubscriptions": ["a://2"]})
                    ),
                }
            )]
        );
        let updated = |uri: &str| {
            bytes(json!({"uri": uri, "_meta": {mcp_types::meta_keys::SUBSCRIPTION_ID: 5}}))
        };
        assert_eq!(
            routes.route("notifications/resources/updated", Some(&updated("a://2"))),
            [(
                1,
                SubscriptionEvent::ResourceUpdated {
                    uri: "a://2".into()
                }
            )]
        );
        assert!(
            routes
                .route("notifications/resources/updated", Some(&updated("a://9")))
                .is_empty()
        );
        routes
            .add(2, filter(json!({"promptsListChanged": true})), false)
            .unwrap();
        assert_eq!(
            routes.closed(),
            [(2, SubscriptionEvent::Ended(SubscriptionEnd::Abrupt))]
        );
    }

    #[test]
    fn routes_are_bounded() {
        let mut routes = Routes::default();
        for key in 0..MAX_SUBSCRIPTIONS as u64 {
            routes
                .add(key, SubscriptionFilter::default(), false)
                .unwrap();
        }
        assert_eq!(
            routes.add(99, SubscriptionFilter::default(), false),
            Err(TooManySubscriptions)
        );
    }
}
