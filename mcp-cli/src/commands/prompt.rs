//! `mcp prompt`: one prompt, rendered with its arguments.

use std::collections::BTreeMap;

use mcp_hub::Discovery;
use mcp_types::text::{escape_content, escape_line};
use serde_json::json;

use crate::args::PromptArgs;
use crate::commands::{Context, resolve, split_server, with_server};
use crate::error::{ArgumentProblem, CliError};
use crate::output::{self, render_content, to_json};

pub(crate) async fn run(ctx: &Context, args: PromptArgs) -> Result<(), CliError> {
    let (server, rest) = split_server(&args.words, &args.target);
    let target = resolve(ctx, "prompt", server, &args.target)?;
    let prompt = rest.first().cloned().ok_or(CliError::MissingWord {
        what: "prompt NAME",
    })?;
    let mut arguments = BTreeMap::new();
    for pair in &args.args {
        let (key, value) = pair
            .split_once('=')
            .filter(|(k, _)| !k.is_empty())
            .ok_or_else(|| CliError::Argument {
                name: pair.clone(),
                problem: ArgumentProblem::NotKeyValue,
            })?;
        if arguments.insert(key.to_owned(), value.to_owned()).is_some() {
            return Err(CliError::Argument {
                name: key.to_owned(),
                problem: ArgumentProblem::Duplicate,
            });
        }
    }
    let name = target.name().to_owned();
    let (asked, sent) = (prompt.clone(), arguments.clone());
    let result = with_server(ctx, &target, Discovery::Lazy, |hub| async move {
        Ok(hub.facade().get_prompt(&name, &asked, sent).await?)
    })
    .await?;
    if args.json {
        return output::print_json(&json!({
            "server": target.name(),
            "prompt": prompt,
            "arguments": arguments,
            "result": to_json(&result),
        }));
    }
    let paint = ctx.ui.out();
    let mut out = String::new();
    if let Some(description) = &result.description {
        out.push_str(&paint.dim(&escape_content(description)));
        out.push_str("\n\n");
    }
    for message in &result.messages {
        let role = serde_json::to_value(message.role)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        out.push_str(&paint.bold(&format!("{}:", escape_line(&role))));
        out.push('\n');
        for line in render_content(std::slice::from_ref(&message.content), paint).lines() {
            out.push_str(&format!("  {line}\n"));
        }
    }
    output::print(&out)
}
