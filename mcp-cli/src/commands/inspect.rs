//! `mcp inspect`: who the server is and one page of what it offers.

use mcp_hub::{Discovery, Hub, Page, ServerInfo};
use mcp_types::text::{escape_content, escape_line};
use mcp_types::{Era, Prompt, Resource, ResourceTemplate, Tool};
use serde_json::{Map, Value, json};

use crate::args::{Catalog, InspectArgs};
use crate::commands::{Context, resolve, with_server};
use crate::error::CliError;
use crate::output::{self, Paint, one_line, table, to_json};

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
        section(
            &mut out,
            "Tools",
            page,
            paint,
            |t| {
                vec![
                    t.name.clone(),
                    one_line(t.description.as_deref().unwrap_or(""), 70),
                ]
            },
            &["name", "description"],
            server,
            "tools",
        );
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
    out.push('\n');
    let count = if page.next_cursor.is_some() {
        format!("{} on this page", page.items.len())
    } else {
        page.items.len().to_string()
    };
    out.push_str(&format!("{} ({count})\n", paint.bold(title)));
    if page.items.is_empty() {
        out.push_str(&paint.dim("  (none)\n"));
    } else {
        out.push_str(&table(headers, page.items.iter().map(row).collect()));
    }
    if let Some(cursor) = &page.next_cursor {
        out.push_str(&paint.dim(&format!(
            "next page: mcp inspect {server} --catalog {catalog} --cursor {}\n",
            escape_line(cursor)
        )));
    }
}
