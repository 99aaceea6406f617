//! `mcp inspect`: who the server is and one page of what it offers.

use mcp_hub::{Discovery, Hub, Page, ServerInfo};
use mcp_types::text::{escape_content, escape_line};
use mcp_types::{Era, Prompt, Resource, ResourceTemplate, Tool};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::args::{Catalog, InspectArgs};
use crate::commands::{Context, resolve, with_server};
use crate::config::OrderedObject;
use crate::error::CliError;
use crate::output::{self, Paint, one_line, rows, table, to_json};

/// One page of each catalogue asked for.
struct Catalogs {
    tools: Option<Page<Tool>>,
    resources: Option<Page<Resource>>,
    templates: Option<Page<ResourceTemplate>>,
    prompts: Option<Page<Prompt>>,
}

pub(crate) async fn run(ctx: &Context, args: InspectArgs) -> Result<(), CliError> {
    let target = resolve(ctx, "inspect", args.server.as_deref(), &args.target)?;
    let name = target.name().to_owned();
    let cursor = args.cursor.clone();
    let only = args.catalog;
    let (info, catalogs) = with_server(ctx, &target, Discovery::Lazy, |hub| async move {
        let status = hub.facade().inspect(&name).await?;
        let catalogs = fetch(&hub, &name, only, cursor.as_deref()).await?;
        // A ready server always has its description.
        let info = status
            .info
            .ok_or(CliError::Hub(mcp_hub::HubError::UnknownServer {
                name: name.clone(),
            }))?;
        Ok((info, catalogs))
    })
    .await?;
    if args.json {
        output::print_json(&as_json(target.name(), &info, &catalogs))
    } else {
        output::print(&human(target.name(), &info, &catalogs, ctx.ui.out()))
    }
}

async fn fetch(
    hub: &Hub,
    server: &str,
    only: Option<Catalog>,
    cursor: Option<&str>,
) -> Result<Catalogs, CliError> {
    let want = |c: Catalog| only.is_none() || only == Some(c);
    let facade = hub.facade();
    Ok(Catalogs {
        tools: match want(Catalog::Tools) {
            true => Some(facade.list_tools(server, cursor).await?),
            false => None,
        },
        resources: match want(Catalog::Resources) {
            true => Some(facade.list_resources(server, cursor).await?),
            false => None,
        },
        templates: match want(Catalog::ResourceTemplates) {
            true => Some(facade.list_resource_templates(server, cursor).await?),
            false => None,
        },
        prompts: match want(Catalog::Prompts) {
            true => Some(facade.list_prompts(server, cursor).await?),
            false => None,
        },
    })
}

pub(crate) fn era_name(era: Era) -> &'static str {
    match era {
        Era::Legacy => "legacy",
        _ => "modern",
    }
}

fn as_json(server: &str, info: &ServerInfo, c: &Catalogs) -> Value {
    let mut out = Map::new();
    out.insert("server".into(), json!(server));
    out.insert("era".into(), json!(era_name(info.era)));
    out.insert("protocolVersion".into(), json!(info.version.as_str()));
    out.insert("serverInfo".into(), to_json(&info.implementation));
    out.insert("capabilities".into(), to_json(&info.capabilities));
    out.insert("instructions".into(), json!(info.instructions));
    if let Some(p) = &c.tools {
        out.insert("tools".into(), to_json(p));
    }
    if let Some(p) = &c.resources {
        out.insert("resources".into(), to_json(p));
    }
    if let Some(p) = &c.templates {
        out.insert("resourceTemplates".into(), to_json(p));
    }
    if let Some(p) = &c.prompts {
        out.insert("prompts".into(), to_json(p));
    }
    Value::Object(out)
}

/// `tools (listChanged), resources (subscribe, listChanged), logging`.
pub(crate) fn capability_words(capabilities: &Value) -> String {
    let Some(map) = capabilities.as_object() else {
        return String::new();
    };
    let words: Vec<String> = map
        .iter()
        .map(|(name, value)| {
            let flags: Vec<&str> = value
                .as_object()
                .map(|o| {
                    o.iter()
                        .filter(|(_, v)| **v == Value::Bool(true))
                        .map(|(k, _)| k.as_str())
                        .collect()
                })
                .unwrap_or_default();
            // Capability names are the server's.
            let shown = if flags.is_empty() {
                name.clone()
            } else {
                format!("{name} ({})", flags.join(", "))
            };
            escape_line(&shown).into_owned()
        })
        .collect();
    if words.is_empty() {
        "(none)".to_owned()
    } else {
        words.join(", ")
    }
}

fn human(server: &str, info: &ServerInfo, c: &Catalogs, paint: Paint) -> String {
    let implementation = &info.implementation;
    let mut out = String::new();
    let field = |out: &mut String, label: &str, value: &str| {
        out.push_str(&format!(
            "{} {value}\n",
            paint.bold(&format!("{label:<13}"))
        ));
    };
    field(
        &mut out,
        "server",
        &format!(
            "{server} ({} {})",
            escape_line(&implementation.name),
            escape_line(&implementation.version)
        ),
    );
    field(
        &mut out,
        "protocol",
        &format!(
            "{} ({} era)",
            escape_line(info.version.as_str()),
            era_name(info.era)
        ),
    );
    field(
        &mut out,
        "capabilities",
        &capability_words(&to_json(&info.capabilities)),
    );
    if let Some(instructions) = &info.instructions {
        out.push_str(&format!(
            "{} {}\n",
            paint.bold(&format!("{:<13}", "instructions")),
            paint.dim("(the server's words)")
        ));
        for line in escape_content(instructions).lines() {
            out.push_str(&format!("  {line}\n"));
        }
    }
    if let Some(page) = &c.tools {
        tools_section(&mut out, page, paint, server);
    }
    if let Some(page) = &c.resources {
        section(
            &mut out,
            "Resources",
            page,
            paint,
            |r| {
                vec![
                    r.uri.clone(),
                    r.name.clone(),
                    r.mime_type.clone().unwrap_or_default(),
                ]
            },
            &["uri", "name", "type"],
            server,
            "resources",
        );
    }
    if let Some(page) = &c.templates {
        section(
            &mut out,
            "Resource templates",
            page,
            paint,
            |t| {
                vec![
                    t.uri_template.clone(),
                    t.name.clone(),
                    t.mime_type.clone().unwrap_or_default(),
                ]
            },
            &["uri template", "name", "type"],
            server,
            "resource-templates",
        );
    }
    if let Some(page) = &c.prompts {
        section(
            &mut out,
            "Prompts",
            page,
            paint,
            |p| {
                let arguments: Vec<String> = p
                    .arguments
                    .iter()
                    .flatten()
                    .map(|a| {
                        if a.required == Some(true) {
                            a.name.clone()
                        } else {
                            format!("[{}]", a.name)
                        }
                    })
                    .collect();
                vec![
                    p.name.clone(),
                    arguments.join(" "),
                    one_line(p.description.as_deref().unwrap_or(""), 60),
                ]
            },
            &["name", "arguments", "description"],
            server,
            "prompts",
        );
    }
    out
}

/// Parameters shown per tool; the rest are counted (`--json` has them).
const MAX_PARAMETERS: usize = 50;

/// The tools of one page: each with its description, its parameters (name,
/// type, required or optional, description) and its annotations.
fn tools_section(out: &mut String, page: &Page<Tool>, paint: Paint, server: &str) {
    section_title(out, "Tools", page, paint);
    for tool in &page.items {
        let description = one_line(tool.description.as_deref().unwrap_or(""), 100);
        let line = format!(
            "{}  {}",
            paint.bold(&escape_line(&tool.name)),
            escape_line(&description)
        );
        out.push_str(line.trim_end());
        out.push('\n');
        out.push_str(&parameters(tool.input_schema.as_str()));
        if let Some(annotations) = &tool.annotations
            && let Some(words) = annotation_words(&to_json(annotations))
        {
            out.push_str(&format!(
                "  {} {}\n",
                paint.dim("annotations (the server's hints):"),
                escape_line(&words)
            ));
        }
    }
    next_page(out, page, paint, server, "tools");
}

/// The top-level parameters of an input schema (its text, as the server
/// sent it), one aligned row each, in the schema's order.
fn parameters(schema_text: &str) -> String {
    let schema: Value = serde_json::from_str(schema_text).unwrap_or(Value::Null);
    // Read again keeping the order of the properties as written.
    let properties: Vec<(String, Value)> =
        serde_json::from_str::<OrderedObject<Box<RawValue>>>(schema_text)
            .ok()
            .and_then(|top| top.0.into_iter().find(|(k, _)| k == "properties"))
            .and_then(|(_, raw)| serde_json::from_str::<OrderedObject<Value>>(raw.get()).ok())
            .map(|p| p.0)
            .unwrap_or_default();
    if properties.is_empty() {
        let other = ["$ref", "oneOf", "anyOf", "allOf", "additionalProperties"]
            .iter()
            .any(|k| schema.get(k).is_some_and(|v| v != &Value::Bool(false)));
        return if other {
            "  (parameters: see the inputSchema with --json)\n".to_owned()
        } else {
            "  (no parameters)\n".to_owned()
        };
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let rows_shown = properties
        .iter()
        .take(MAX_PARAMETERS)
        .map(|(name, property)| {
            let mut description = one_line(
                property
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or(""),
                60,
            );
            if let Some(default) = property.get("default") {
                let default = one_line(&default.to_string(), 30);
                description = if description.is_empty() {
                    format!("(default {default})")
                } else {
                    format!("{description} (default {default})")
                };
            }
            vec![
                name.clone(),
                type_words(property),
                if required.contains(&name.as_str()) {
                    "required"
                } else {
                    "optional"
                }
                .to_owned(),
                description,
            ]
        })
        .collect();
    let mut text = rows(rows_shown, 2);
    if properties.len() > MAX_PARAMETERS {
        text.push_str(&format!(
            "  … and {} more parameters (see --json)\n",
            properties.len() - MAX_PARAMETERS
        ));
    }
    text
}

/// A property's type in a few words: its `type` (or types), `array of T`,
/// the values of an `enum` or `const`, else `any`.
fn type_words(property: &Value) -> String {
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        let listed: Vec<String> = values.iter().map(Value::to_string).collect();
        return one_line(&listed.join("|"), 60);
    }
    if let Some(value) = property.get("const") {
        return one_line(&value.to_string(), 60);
    }
    let types: Vec<&str> = match property.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if types.is_empty() {
        return "any".to_owned();
    }
    let words: Vec<String> = types
        .iter()
        .map(
            |t| match (*t, property.get("items").and_then(|i| i.get("type"))) {
                ("array", Some(Value::String(item))) => format!("array of {item}"),
                (t, _) => t.to_owned(),
            },
        )
        .collect();
    one_line(&words.join(" or "), 60)
}

/// The annotation hints MCP defines, in the order they are shown.
const KNOWN_ANNOTATIONS: [&str; 5] = [
    "title",
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
];

/// A tool's annotations in words (`title "Add", read-only, idempotent`):
/// the hints MCP defines first, in its order, then any other key as
/// `key=value`. `None` when there are none.
fn annotation_words(annotations: &Value) -> Option<String> {
    let map = annotations.as_object()?;
    let known = KNOWN_ANNOTATIONS
        .iter()
        .filter_map(|key| map.get(*key).map(|value| (*key, value)));
    let others = map
        .iter()
        .filter(|(key, _)| !KNOWN_ANNOTATIONS.contains(&key.as_str()))
        .map(|(key, value)| (key.as_str(), value));
    let words: Vec<String> = known
        .chain(others)
        .map(|(key, value)| match (key, value) {
            ("readOnlyHint", Value::Bool(true)) => "read-only".to_owned(),
            ("readOnlyHint", Value::Bool(false)) => "may modify".to_owned(),
            ("destructiveHint", Value::Bool(true)) => "destructive".to_owned(),
            ("destructiveHint", Value::Bool(false)) => "not destructive".to_owned(),
            ("idempotentHint", Value::Bool(true)) => "idempotent".to_owned(),
            ("idempotentHint", Value::Bool(false)) => "not idempotent".to_owned(),
            ("openWorldHint", Value::Bool(true)) => "open world".to_owned(),
            ("openWorldHint", Value::Bool(false)) => "closed world".to_owned(),
            ("title", Value::String(title)) => format!("title {}", Value::String(title.clone())),
            (key, value) => format!("{key}={}", one_line(&value.to_string(), 60)),
        })
        .collect();
    (!words.is_empty()).then(|| words.join(", "))
}

/// `Tools (3)` or `Tools (3 on this page)`.
fn section_title<T>(out: &mut String, title: &str, page: &Page<T>, paint: Paint) {
    out.push('\n');
    let count = if page.next_cursor.is_some() {
        format!("{} on this page", page.items.len())
    } else {
        page.items.len().to_string()
    };
    out.push_str(&format!("{} ({count})\n", paint.bold(title)));
    if page.items.is_empty() {
        out.push_str(&paint.dim("  (none)\n"));
    }
}

/// The command that shows the next page, when there is one.
fn next_page<T>(out: &mut String, page: &Page<T>, paint: Paint, server: &str, catalog: &str) {
    if let Some(cursor) = &page.next_cursor {
        out.push_str(&paint.dim(&format!(
            "next page: mcp inspect {server} --catalog {catalog} --cursor {}\n",
            escape_line(cursor)
        )));
    }
}

#[allow(clippy::too_many_arguments)]
fn section<T>(
    out: &mut String,
    title: &str,
    page: &Page<T>,
    paint: Paint,
    row: impl Fn(&T) -> Vec<String>,
    headers: &[&str],
    server: &str,
    catalog: &str,
) {
    section_title(out, title, page, paint);
    if !page.items.is_empty() {
        out.push_str(&table(headers, page.items.iter().map(row).collect()));
    }
    next_page(out, page, paint, server, catalog);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_keep_the_schemas_order_and_are_bounded() {
        let text = parameters(
            r#"{"type": "object", "required": ["zeta"],
                "properties": {"zeta": {"type": ["string", "null"], "description": "Last\nline"},
                               "alpha": {"enum": [1, "two"]}, "mid": {}}}"#,
        );
        assert_eq!(
            text,
            "  zeta   string or null  required  Last…\n  alpha  1|\"two\"         optional\n  mid    any             optional\n"
        );
        assert_eq!(parameters(r#"{"type": "object"}"#), "  (no parameters)\n");
        assert_eq!(
            parameters(r##"{"$ref": "#/defs/a"}"##),
            "  (parameters: see the inputSchema with --json)\n"
        );
        let many: serde_json::Map<String, Value> = (0..60)
            .map(|i| (format!("p{i:02}"), json!({"type": "string"})))
            .collect();
        let text = parameters(&json!({"properties": many}).to_string());
        assert_eq!(text.lines().count(), MAX_PARAMETERS + 1);
        assert!(
            text.ends_with("  … and 10 more parameters (see --json)\n"),
            "{text}"
        );
    }

    #[test]
    fn annotations_read_as_words_known_hints_first() {
        let words = annotation_words(&json!({
            "x-vendor": {"a": 1}, "openWorldHint": true, "destructiveHint": false,
            "title": "T", "idempotentHint": true, "readOnlyHint": false
        }));
        assert_eq!(
            words.as_deref(),
            Some(
                "title \"T\", may modify, not destructive, idempotent, open world, x-vendor={\"a\":1}"
            )
        );
        assert_eq!(annotation_words(&json!({})), None);
    }
}
