//! The namespace in the formats LLM APIs take, and a model's tool call back
//! to its route.
//!
//! Providers accept only `[A-Za-z0-9_-]{1,64}` function names, so export
//! names each tool by its [`crate::Namespace::provider_names`]: its exposed
//! name (the bare name where the policy exposes one) when that is
//! provider-safe, else the namespace's stable provider-safe alias for it
//! (`notes/search` → `notes_search`; see [`crate::Namespace`]). Any hub
//! exports as it is; [`ToolCall::route`] and [`crate::Hub::call`] take the
//! alias the model calls back with. [`HubError::NotProviderSafe`] remains
//! only for a name that has no provider-safe form (its alias would collide
//! even with a 16-digit hash).

use serde_json::{Map, Value, json};

use crate::HubError;
use crate::namespace::safe_names::is_provider_safe;
use crate::namespace::{ExposedTool, Namespace, Route};

/// Largest `arguments` string of an OpenAI tool call that is parsed.
pub const MAX_TOOL_CALL_ARGUMENT_BYTES: usize = 16 * 1024 * 1024;

/// Each tool with the name a provider is given.
fn checked(namespace: &Namespace) -> Result<Vec<(&ExposedTool, &str)>, HubError> {
    let mut out = Vec::with_capacity(namespace.tools().len());
    for (tool, name) in namespace.tools().iter().zip(namespace.provider_names()) {
        if !is_provider_safe(name) {
            return Err(HubError::NotProviderSafe {
                name: tool.name().to_owned(),
            });
        }
        out.push((tool, name));
    }
    Ok(out)
}

fn schema(tool: &ExposedTool) -> Value {
    // The server's schema, kept as sent; a schema that does not parse (the
    // session already accepted it as JSON) degrades to "any object".
    tool.tool()
        .input_schema
        .to_value()
        .unwrap_or_else(|_| json!({"type": "object"}))
}

fn description(tool: &ExposedTool) -> Value {
    match &tool.tool().description {
        Some(d) => Value::String(d.clone()),
        None => Value::String(String::new()),
    }
}

/// Anthropic Messages API `tools`: `[{"name", "description",
/// "input_schema"}]`.
pub fn anthropic_tools(namespace: &Namespace) -> Result<Value, HubError> {
    let tools = checked(namespace)?;
    Ok(Value::Array(
        tools
            .iter()
            .map(|&(t, name)| {
                json!({
                    "name": name,
                    "description": description(t),
                    "input_schema": schema(t),
                })
            })
            .collect(),
    ))
}

/// OpenAI function tools: `[{"type": "function", "function": {"name",
/// "description", "parameters"}}]`.
pub fn openai_tools(namespace: &Namespace) -> Result<Value, HubError> {
    let tools = checked(namespace)?;
    Ok(Value::Array(
        tools
            .iter()
            .map(|&(t, name)| {
                json!({
                    "type": "function",
                    "function": {
                        "name": name,
                        "description": description(t),
                        "parameters": schema(t),
                    },
                })
            })
            .collect(),
    ))
}

/// A model's request to call a tool.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// The provider's id of the call (to answer it), if given.
    pub id: Option<String>,
    /// The name the model used (the exported, provider-safe one).
    pub name: String,
    /// The arguments.
    pub arguments: Map<String, Value>,
}

impl ToolCall {
    /// Reads an Anthropic `tool_use` content block:
    /// `{"type": "tool_use", "id", "name", "input": {...}}`.
    pub fn from_anthropic(block: &Value) -> Result<Self, HubError> {
        let bad = |problem| HubError::MalformedToolCall {
            format: "anthropic",
            problem,
        };
        if block.get("type").and_then(Value::as_str) != Some("tool_use") {
            return Err(bad("`type` is not `tool_use`"));
        }
        let name = block
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("`name` is missing"))?;
        let arguments = match block.get("input") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(_) => return Err(bad("`input` is not an object")),
        };
        Ok(Self {
            id: block.get("id").and_then(Value::as_str).map(str::to_owned),
            name: name.to_owned(),
            arguments,
        })
    }

    /// Reads an OpenAI tool call:
    /// `{"id", "type": "function", "function": {"name", "arguments": "<JSON text>"}}`.
    pub fn from_openai(call: &Value) -> Result<Self, HubError> {
        let bad = |problem| HubError::MalformedToolCall {
            format: "openai",
            problem,
        };
        if let Some(kind) = call.get("type").and_then(Value::as_str)
            && kind != "function"
        {
            return Err(bad("`type` is not `function`"));
        }
        let function = call
            .get("function")
            .ok_or_else(|| bad("`function` is missing"))?;
        let name = function
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("`function.name` is missing"))?;
        let arguments = match function.get("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::String(text)) if text.trim().is_empty() => Map::new(),
            Some(Value::String(text)) => {
                if text.len() > MAX_TOOL_CALL_ARGUMENT_BYTES {
                    return Err(bad("`function.arguments` is larger than 16 MiB"));
                }
                match serde_json::from_str(text) {
                    Ok(Value::Object(m)) => m,
                    Ok(_) => return Err(bad("`function.arguments` is not a JSON object")),
                    Err(_) => return Err(bad("`function.arguments` is not valid JSON")),
                }
            }
            Some(Value::Object(m)) => m.clone(),
            Some(_) => return Err(bad("`function.arguments` is not a JSON string")),
        };
        Ok(Self {
            id: call.get("id").and_then(Value::as_str).map(str::to_owned),
            name: name.to_owned(),
            arguments,
        })
    }

    /// Where the call goes in `namespace`.
    pub fn route(&self, namespace: &Namespace) -> Result<Route, HubError> {
        namespace.route(&self.name)
    }
}
