//! The paginated lists: `tools/list`, `prompts/list`, `resources/list`,
//! `resources/templates/list` and (2025-11-25) `tasks/list`.
//!
//! Cursors are `page-<n>`. Only `tools/list` honours the script's
//! `cyclic_cursor` and `endless_pages` misbehaviours.

use serde_json::{Map, Value, json};

use crate::request::{Era, cacheable, complete};
use crate::server::Shared;
use crate::specs::{ListKind, TaskSupport, visible};
use crate::wire;

/// The cursor that restarts a cyclic listing.
const CYCLIC_CURSOR: &str = "again";

/// `tools/list`: the tools visible after the tool list's changes. At
/// 2025-11-25 a tool that can run as a task is listed with
/// `execution.taskSupport` (unless its JSON has its own `execution`).
pub(crate) async fn tools(shared: &Shared, id: &Value, era: Era, params: &Value) {
    let script = &shared.script;
    let changes = shared.state().changes(ListKind::Tools);
    let tasks_listed = era == Era::Legacy && shared.legacy_tasks_enabled();
    let declared = match era {
        Era::Legacy => shared.state().client_capabilities.clone(),
        Era::Modern => crate::request::declared_capabilities(params).cloned(),
    };
    let tools = script
        .tools
        .iter()
        .filter(|t| visible(t.appear_at_change, t.vanish_at_change, changes))
        .filter(|t| {
            t.needs_client.as_ref().is_none_or(|needed| {
                declared
                    .as_ref()
                    .is_some_and(|caps| caps.contains_key(needed.as_str()))
            })
        })
        .map(|t| {
            let mut tool = t.tool.clone();
            if tasks_listed
                && let Some(support) = t.task_support
                && support != TaskSupport::Forbidden
                && !tool.contains_key("execution")
            {
                tool.insert("execution".into(), json!({"taskSupport": support.as_str()}));
            }
            Value::Object(tool)
        })
        .collect();
    send_page(shared, id, era, params, "tools", tools, true).await;
}

/// `prompts/list`.
pub(crate) async fn prompts(shared: &Shared, id: &Value, era: Era, params: &Value) {
    let changes = shared.state().changes(ListKind::Prompts);
    let prompts = shared
        .script
        .prompts
        .iter()
        .filter(|p| visible(p.appear_at_change, p.vanish_at_change, changes))
        .map(|p| Value::Object(p.prompt.clone()))
        .collect();
    send_page(shared, id, era, params, "prompts", prompts, false).await;
}

/// `resources/list`.
pub(crate) async fn resources(shared: &Shared, id: &Value, era: Era, params: &Value) {
    let changes = shared.state().changes(ListKind::Resources);
    let resources = shared
        .script
        .resources
        .iter()
        .filter(|r| visible(r.appear_at_change, r.vanish_at_change, changes))
        .map(|r| Value::Object(r.resource.clone()))
        .collect();
    send_page(shared, id, era, params, "resources", resources, false).await;
}

/// `resources/templates/list`.
pub(crate) async fn templates(shared: &Shared, id: &Value, era: Era, params: &Value) {
    let changes = shared.state().changes(ListKind::Resources);
    let templates = shared
        .script
        .resource_templates
        .iter()
        .filter(|t| visible(t.appear_at_change, t.vanish_at_change, changes))
        .map(|t| Value::Object(t.template.clone()))
        .collect();
    send_page(
        shared,
        id,
        era,
        params,
        "resourceTemplates",
        templates,
        false,
    )
    .await;
}

/// Answers one page of `items` under `field`, or `-32602` for an unknown
/// cursor. `misbehave`: apply `cyclic_cursor` / `endless_pages`. Modern
/// results carry the cache hints (`tasks/list` never is modern).
pub(crate) async fn send_page(
    shared: &Shared,
    id: &Value,
    era: Era,
    params: &Value,
    field: &str,
    items: Vec<Value>,
    misbehave: bool,
) {
    let script = &shared.script;
    let cyclic = misbehave && script.cyclic_cursor;
    let endless = misbehave && script.endless_pages;
    let page_size = script.page_size.unwrap_or(usize::MAX);
    let page_index = match params.get("cursor") {
        None | Some(Value::Null) => Some(0),
        Some(Value::String(c)) if cyclic && c == CYCLIC_CURSOR => Some(0),
        Some(Value::String(c)) => c
            .strip_prefix("page-")
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|n| endless || n.saturating_mul(page_size) < items.len()),
        Some(_) => None,
    };
    let Some(page_index) = page_index else {
        let reply = wire::error(
            id,
            wire::INVALID_PARAMS,
            "Invalid params: unknown cursor",
            None,
        );
        return shared.send(&reply).await;
    };
    let start = page_index.saturating_mul(page_size).min(items.len());
    let end = start.saturating_add(page_size).min(items.len());
    let next = if cyclic {
        Some(CYCLIC_CURSOR.to_owned())
    } else if endless || end < items.len() {
        Some(format!("page-{}", page_index + 1))
    } else {
        None
    };
    let page: Vec<Value> = items.into_iter().skip(start).take(end - start).collect();
    let mut body = Map::new();
    body.insert(field.into(), page.into());
    if let Some(next) = next {
        body.insert("nextCursor".into(), next.into());
    }
    let body = if field == "tasks" {
        complete(shared, era, Value::Object(body))
    } else {
        cacheable(shared, era, Value::Object(body))
    };
    shared.send(&wire::result(id, body)).await;
}
