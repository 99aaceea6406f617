//! The demo behaviours over canned data: `search` and `lookup`.

use serde_json::{Map, Value, json};

use crate::request::Ctx;
use crate::wire;

pub(super) async fn search(ctx: &Ctx, items: &[Value]) {
    let Some(query) = ctx.arguments().get("query").and_then(Value::as_str) else {
        return ctx
            .invalid_params("Invalid params: search needs a string \"query\"")
            .await;
    };
    let limit = ctx
        .arguments()
        .get("limit")
        .and_then(Value::as_u64)
        .map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX));
    let needle = query.to_lowercase();
    let hits: Vec<&Value> = items
        .iter()
        .filter(|item| {
            item.as_object().is_some_and(|fields| {
                fields
                    .values()
                    .filter_map(Value::as_str)
                    .any(|s| s.to_lowercase().contains(&needle))
            })
        })
        .take(limit)
        .collect();
    let content: Vec<Value> = if hits.is_empty() {
        vec![wire::text_block(format!("No results for \"{query}\"."))]
    } else {
        hits.iter()
            .map(|item| wire::text_block(summary(item)))
            .collect()
    };
    ctx.reply(json!({"content": content, "structuredContent": {"results": hits}}))
        .await;
}

pub(super) async fn lookup(ctx: &Ctx, key: &str, entries: &Map<String, Value>) {
    let Some(wanted) = ctx.arguments().get(key).and_then(Value::as_str) else {
        let message = format!("Invalid params: needs a string \"{key}\"");
        return ctx.invalid_params(&message).await;
    };
    match entries.get(wanted) {
        Some(Value::String(text)) => ctx.reply(wire::text_result(text.clone())).await,
        Some(other) => ctx.reply(wire::text_result(other.to_string())).await,
        None => {
            let text = format!("Not found: {key} \"{wanted}\"");
            ctx.reply(json!({"content": [wire::text_block(text)], "isError": true}))
                .await;
        }
    }
}

/// One line for a search hit: its title-like field, then its text-like field.
fn summary(item: &Value) -> String {
    let field = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| item.get(*n).and_then(Value::as_str))
    };
    match (
        field(&["title", "name", "path", "id"]),
        field(&["snippet", "text", "body", "summary", "state"]),
    ) {
        (Some(title), Some(text)) => format!("{title}: {text}"),
        (Some(title), None) => title.to_owned(),
        _ => item.to_string(),
    }
}
