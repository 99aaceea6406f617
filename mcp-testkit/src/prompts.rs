//! `prompts/get` (rendering scripted messages, optionally asking the
//! client first) and `completion/complete`.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::input::{self, Step};
use crate::request::{Ctx, Era, complete};
use crate::server::Shared;
use crate::specs::{CompletionSpec, ListKind, PromptSpec, visible};
use crate::wire;

/// Most values in one completion result (the spec's bound).
const MAX_COMPLETION_VALUES: usize = 100;

/// `prompts/get`: unknown prompt or a missing required argument is `-32602`
/// (`data.missing` names the missing arguments).
pub(crate) async fn get(shared: &Arc<Shared>, id: &Value, era: Era, params: Value) {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return invalid(
            shared,
            id,
            "Invalid params: prompts/get needs a string name",
            None,
        )
        .await;
    };
    let changes = shared.state().changes(ListKind::Prompts);
    let Some(prompt) = shared.script.prompts.iter().find(|p| {
        p.name() == Some(name) && visible(p.appear_at_change, p.vanish_at_change, changes)
    }) else {
        let message = format!("Invalid params: unknown prompt {name}");
        return invalid(shared, id, &message, None).await;
    };
    let empty = Map::new();
    let arguments = params
        .get("arguments")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let missing: Vec<&str> = prompt
        .required_arguments()
        .into_iter()
        .filter(|a| !arguments.contains_key(*a))
        .collect();
    if !missing.is_empty() {
        let message = format!(
            "Invalid params: missing required arguments: {}",
            missing.join(", ")
        );
        return invalid(shared, id, &message, Some(json!({"missing": missing}))).await;
    }
    let mut body = Map::new();
    if let Some(description) = prompt.prompt.get("description") {
        body.insert("description".into(), description.clone());
    }
    body.insert("messages".into(), render(prompt, arguments).into());
    let Some(input) = prompt.input.clone() else {
        let body = complete(shared, era, Value::Object(body));
        return shared.send(&wire::result(id, body)).await;
    };
    let target = format!("prompts/get:{name}");
    let ctx = Ctx::new(shared, id, era, params.clone());
    let run = async move {
        if let Step::Done(answers) = input::gather(&ctx, &input, &target).await {
            body.insert(
                "_meta".into(),
                json!({wire::META_INPUT_RESPONSES: input::report(&answers)}),
            );
            ctx.send_result(complete(&ctx.shared, ctx.era, Value::Object(body)))
                .await;
        }
    };
    shared.spawn_or_refuse(id, run).await;
}

/// The prompt's messages with `{argument}` replaced in every string.
fn render(prompt: &PromptSpec, arguments: &Map<String, Value>) -> Vec<Value> {
    if prompt.messages.is_empty() {
        let text = format!(
            "Prompt {} with arguments {}",
            prompt.name().unwrap_or_default(),
            Value::Object(arguments.clone())
        );
        return vec![json!({"role": "user", "content": {"type": "text", "text": text}})];
    }
    prompt
        .messages
        .iter()
        .map(|m| substitute(m, arguments))
        .collect()
}

fn substitute(value: &Value, arguments: &Map<String, Value>) -> Value {
    match value {
        Value::String(text) => {
            let mut out = text.clone();
            for (name, value) in arguments {
                let value = value
                    .as_str()
                    .map_or_else(|| value.to_string(), str::to_owned);
                out = out.replace(&format!("{{{name}}}"), &value);
            }
            Value::String(out)
        }
        Value::Array(items) => items.iter().map(|v| substitute(v, arguments)).collect(),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), substitute(v, arguments)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `completion/complete` for a prompt argument (`ref/prompt`) or a resource
/// template variable (`ref/resource`, by exact `uriTemplate`); see
/// [`CompletionSpec`] for how values are picked.
pub(crate) async fn complete_argument(shared: &Shared, id: &Value, era: Era, params: &Value) {
    let script = &shared.script;
    let reference = params.get("ref");
    let argument = params
        .get("argument")
        .and_then(|a| Some((a.get("name")?.as_str()?, a.get("value")?.as_str()?)));
    let Some((name, typed)) = argument else {
        let message = "Invalid params: completion/complete needs argument {name, value}";
        return invalid(shared, id, message, None).await;
    };
    let kind = reference
        .and_then(|r| r.get("type"))
        .and_then(Value::as_str);
    let specs: &[CompletionSpec] = match kind {
        Some("ref/prompt") => {
            let wanted = reference
                .and_then(|r| r.get("name"))
                .and_then(Value::as_str);
            match script
                .prompts
                .iter()
                .find(|p| p.name().is_some() && p.name() == wanted)
            {
                Some(prompt) => &prompt.completions,
                None => return invalid(shared, id, "Invalid params: unknown prompt", None).await,
            }
        }
        Some("ref/resource") => {
            let wanted = reference.and_then(|r| r.get("uri")).and_then(Value::as_str);
            match script
                .resource_templates
                .iter()
                .find(|t| t.uri_template().is_some() && t.uri_template() == wanted)
            {
                Some(template) => &template.completions,
                None => {
                    let message = "Invalid params: unknown resource template";
                    return invalid(shared, id, message, None).await;
                }
            }
        }
        _ => {
            let message = "Invalid params: ref must be ref/prompt or ref/resource";
            return invalid(shared, id, message, None).await;
        }
    };
    let context = params
        .pointer("/context/arguments")
        .and_then(Value::as_object);
    let applies = |spec: &&CompletionSpec| {
        spec.argument == name
            && spec.context.iter().all(|(k, v)| {
                context.and_then(|c| c.get(k)).and_then(Value::as_str) == Some(v.as_str())
            })
    };
    let matching: Vec<&String> = specs
        .iter()
        .find(applies)
        .map(|spec| {
            spec.values
                .iter()
                .filter(|v| v.starts_with(typed))
                .collect()
        })
        .unwrap_or_default();
    let total = matching.len();
    let values: Vec<&String> = matching.into_iter().take(MAX_COMPLETION_VALUES).collect();
    let body = json!({"completion": {
        "values": values,
        "total": total,
        "hasMore": total > MAX_COMPLETION_VALUES,
    }});
    shared
        .send(&wire::result(id, complete(shared, era, body)))
        .await;
}

async fn invalid(shared: &Shared, id: &Value, message: &str, data: Option<Value>) {
    shared
        .send(&wire::error(id, wire::INVALID_PARAMS, message, data))
        .await;
}
