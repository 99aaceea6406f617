//! Server-pushed notifications: 2026-07-28 `subscriptions/listen` streams
//! and the legacy era's unsolicited notifications, behind one set of
//! helpers the behaviours call.

use serde_json::{Map, Value, json};

use crate::request::{Era, declares_tasks_extension, decorate, tasks_extension_required};
use crate::server::Shared;
use crate::specs::{ListKind, ListenEnd};
use crate::state::Listen;
use crate::wire;

/// `subscriptions/listen` (2026-07-28): acknowledges the part of the filter
/// the server honours, then keeps the stream open until the client cancels
/// it or [`end_all`] ends it.
///
/// Honoured: `toolsListChanged`; `promptsListChanged` when the script has
/// prompts; `resourcesListChanged` and `resourceSubscriptions` (every
/// string, as given) when it has resources; `taskIds` naming known tasks
/// (the tasks extension; asking for `taskIds` without declaring it is
/// `-32021`). Anything else is left out of the acknowledgement.
pub(crate) async fn listen(shared: &Shared, id: &Value, params: &Value) {
    let script = &shared.script;
    let Some(filter) = params.get("notifications").and_then(Value::as_object) else {
        let message = "Invalid params: subscriptions/listen needs a notifications object";
        let reply = wire::error(id, wire::INVALID_PARAMS, message, None);
        return shared.send(&reply).await;
    };
    let mut accepted = Map::new();
    for kind in [ListKind::Tools, ListKind::Prompts, ListKind::Resources] {
        let supported = match kind {
            ListKind::Tools => true,
            ListKind::Prompts => script.has_prompts(),
            ListKind::Resources => script.has_resources(),
        };
        let field = kind.filter_field();
        if supported && filter.get(field) == Some(&Value::Bool(true)) {
            accepted.insert(field.into(), true.into());
        }
    }
    if script.has_resources()
        && let Some(Value::Array(uris)) = filter.get("resourceSubscriptions")
    {
        let uris: Vec<Value> = uris.iter().filter(|u| u.is_string()).cloned().collect();
        accepted.insert("resourceSubscriptions".into(), uris.into());
    }
    if let Some(task_ids) = filter.get("taskIds") {
        if !declares_tasks_extension(params) {
            let reply = wire::error(
                id,
                wire::MISSING_CLIENT_CAPABILITY,
                "Missing required client capability",
                Some(tasks_extension_required()),
            );
            return shared.send(&reply).await;
        }
        let known: Vec<Value> = {
            let tasks = shared.tasks();
            task_ids
                .as_array()
                .into_iter()
                .flatten()
                .filter(|t| t.as_str().is_some_and(|t| tasks.contains(t)))
                .cloned()
                .collect()
        };
        accepted.insert("taskIds".into(), known.into());
    }
    let key = wire::id_key(id);
    let refusal = {
        let state = shared.state();
        if state.listens.iter().any(|l| l.key == key) {
            Some((
                wire::INVALID_REQUEST,
                "Invalid Request: a subscription with this id is open".to_owned(),
            ))
        } else if state.listens.len() >= script.max_subscriptions {
            let message = format!(
                "Internal error: more than {} open subscriptions",
                script.max_subscriptions
            );
            Some((wire::INTERNAL_ERROR, message))
        } else {
            None
        }
    };
    if let Some((code, message)) = refusal {
        return shared.send(&wire::error(id, code, &message, None)).await;
    }
    let ack = json!({
        "_meta": {wire::META_SUBSCRIPTION_ID: id},
        "notifications": accepted,
    });
    // Acknowledged before it is registered: nothing for this subscription
    // can be sent ahead of its acknowledgement.
    shared
        .send(&wire::notification(
            "notifications/subscriptions/acknowledged",
            ack,
        ))
        .await;
    shared.state().listens.push(Listen {
        id: id.clone(),
        key,
        accepted,
    });
}

/// Sends `method` with `params` on every open listen stream `wanted` picks,
/// each copy carrying its `subscriptionId`; returns how many went out.
pub(crate) async fn deliver<F>(
    shared: &Shared,
    method: &str,
    params: Map<String, Value>,
    wanted: F,
) -> usize
where
    F: Fn(&Listen) -> bool,
{
    let ids: Vec<Value> = shared
        .state()
        .listens
        .iter()
        .filter(|l| wanted(l))
        .map(|l| l.id.clone())
        .collect();
    for id in &ids {
        let mut params = params.clone();
        let meta = params.entry("_meta").or_insert_with(|| json!({}));
        meta[wire::META_SUBSCRIPTION_ID] = id.clone();
        shared
            .send(&wire::notification(method, Value::Object(params)))
            .await;
    }
    ids.len()
}

/// Says `kind` changed: legacy unsolicited, modern on the listen streams
/// that asked. Returns how many notifications went out.
pub(crate) async fn list_changed(shared: &Shared, era: Era, kind: ListKind) -> usize {
    match era {
        Era::Legacy => {
            shared
                .send(&wire::notification(kind.notification(), json!({})))
                .await;
            1
        }
        Era::Modern => {
            deliver(shared, kind.notification(), Map::new(), |l| {
                l.wants_list(kind)
            })
            .await
        }
    }
}

/// Says resource `uri` changed, to whoever subscribed to it: legacy
/// `resources/subscribe`, modern `resourceSubscriptions`.
pub(crate) async fn resource_updated(shared: &Shared, era: Era, uri: &str) -> usize {
    let mut params = Map::new();
    params.insert("uri".into(), uri.into());
    match era {
        Era::Legacy => {
            if !shared.state().resource_subscriptions.contains(uri) {
                return 0;
            }
            shared
                .send(&wire::notification(
                    "notifications/resources/updated",
                    Value::Object(params),
                ))
                .await;
            1
        }
        Era::Modern => {
            deliver(shared, "notifications/resources/updated", params, |l| {
                l.wants_resource(uri)
            })
            .await
        }
    }
}

/// Ends every open listen stream (not `exit`, which the caller does);
/// returns how many there were.
pub(crate) async fn end_all(shared: &Shared, how: ListenEnd) -> usize {
    let listens = std::mem::take(&mut shared.state().listens);
    if how == ListenEnd::Graceful {
        for listen in &listens {
            let body = json!({"_meta": {wire::META_SUBSCRIPTION_ID: listen.id}});
            let body = decorate(shared, Era::Modern, body, "complete");
            shared.send(&wire::result(&listen.id, body)).await;
        }
    }
    listens.len()
}
