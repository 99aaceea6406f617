//! `mcp prompt`: one prompt, rendered with its arguments.
//!
//! Before anything is sent, the prompt is looked up in the server's
//! listing: an argument it does not declare is refused, a required one
//! that is missing too (exit 1, as `mcp call` does by the tool's schema),
//! and a name it does not list is refused with the closest names.

use std::collections::{BTreeMap, BTreeSet};

use mcp_hub::{Discovery, Hub};
use mcp_types::Prompt;
use mcp_types::text::{escape_content, escape_line};
use serde_json::{Value, json};

use crate::args::PromptArgs;
use crate::coerce;
use crate::commands::{Context, Target, resolve, split_server, with_server};
use crate::error::{ArgumentProblem, CliError};
use crate::output::{self, render_content, to_json};
use crate::suggest;

/// Pages of the prompt listing read to find a prompt; past them it is sent
/// unchecked.
const MAX_LISTING_PAGES: usize = 100;

/// The arguments of `--args` (a JSON object of strings), `--arg k=v` and
/// the `k=v` words after the prompt's name (`pairs`).
fn arguments(args: &PromptArgs, pairs: &[String]) -> Result<BTreeMap<String, String>, CliError> {
    let argument = |name: &str, problem| CliError::Argument {
        name: name.to_owned(),
        problem,
    };
    let mut arguments = BTreeMap::new();
    if let Some(value) = &args.args_json {
        let text = coerce::args_text(value)?;
        let object = match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(argument("--args", ArgumentProblem::ArgsNotObject)),
            Err(_) => return Err(argument("--args", ArgumentProblem::NotJson)),
        };
        for (key, value) in object {
            let Value::String(value) = value else {
                return Err(argument(&key, ArgumentProblem::PromptValueNotString));
            };
            arguments.insert(key, value);
        }
    }
    for pair in args.args.iter().chain(pairs) {
        let (key, value) = pair
            .split_once('=')
            .filter(|(k, _)| !k.is_empty())
            .ok_or_else(|| argument(pair, ArgumentProblem::NotPromptPair))?;
        if arguments.insert(key.to_owned(), value.to_owned()).is_some() {
            return Err(argument(key, ArgumentProblem::Duplicate));
        }
    }
    Ok(arguments)
}

/// What the listing says of the prompt asked for.
enum Listed {
    Found(Prompt),
    /// Not listed: the names the server lists.
    Missing(Vec<String>),
    /// The listing could not be read whole (an error, or more pages than
    /// we read): the server decides.
    Unknown,
}

/// Looks `name` up in the server's prompt listing, page by page.
async fn find(hub: &Hub, server: &str, name: &str) -> Listed {
    let facade = hub.facade();
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = BTreeSet::new();
    for _ in 0..MAX_LISTING_PAGES {
        let Ok(page) = facade.list_prompts(server, cursor.as_deref()).await else {
            return Listed::Unknown;
        };
        for prompt in page.items {
            if prompt.name == name {
                return Listed::Found(prompt);
            }
            names.push(prompt.name);
        }
        match page.next_cursor {
            // A cursor seen before would go round in circles.
            Some(next) if seen.insert(next.clone()) => cursor = Some(next),
            Some(_) => return Listed::Unknown,
            None => return Listed::Missing(names),
        }
    }
    Listed::Unknown
}

/// Refuses arguments the prompt does not declare and required ones that
/// are missing, before anything is sent.
fn check(prompt: &Prompt, arguments: &BTreeMap<String, String>) -> Result<(), CliError> {
    let declared = prompt.arguments.iter().flatten();
    let known: Vec<String> = declared.clone().map(|a| a.name.clone()).collect();
    if let Some(unknown) = arguments.keys().find(|k| !known.contains(k)) {
        return Err(CliError::Argument {
            name: unknown.clone(),
            problem: ArgumentProblem::UnknownPromptArgument {
                known: known.iter().map(|k| escape_line(k).into_owned()).collect(),
            },
        });
    }
    if let Some(missing) = declared
        .filter(|a| a.required == Some(true))
        .find(|a| !arguments.contains_key(&a.name))
    {
        return Err(CliError::Argument {
            name: escape_line(&missing.name).into_owned(),
            problem: ArgumentProblem::MissingPromptArgument,
        });
    }
    Ok(())
}

/// Whether the configuration lets `prompt` through (else the hub refuses
/// it as denied, and a missing listing entry says nothing).
fn allowed(ctx: &Context, target: &Target, prompt: &str) -> bool {
    let entry = &target.entry;
    let listed = entry
        .allow
        .as_ref()
        .and_then(|a| a.prompts.as_ref())
        .is_none_or(|p| p.contains(prompt));
    let granted = entry
        .permission
        .as_ref()
        .is_none_or(|p| ctx.grants.contains(p));
    listed && granted
}

pub(crate) async fn run(ctx: &Context, args: PromptArgs) -> Result<(), CliError> {
    let (server, rest) = split_server(&args.words, &args.target);
    let target = resolve(ctx, "prompt", server, &args.target)?;
    let (prompt, pairs) = rest.split_first().ok_or(CliError::MissingWord {
        what: "prompt NAME",
    })?;
    let prompt = prompt.clone();
    let arguments = arguments(&args, pairs)?;
    let name = target.name().to_owned();
    let (asked, sent) = (prompt.clone(), arguments.clone());
    let checked = allowed(ctx, &target, &prompt);
    let result = with_server(ctx, &target, Discovery::Lazy, |hub| async move {
        if checked {
            match find(&hub, &name, &asked).await {
                Listed::Found(definition) => check(&definition, &sent)?,
                Listed::Missing(names) => {
                    return Err(CliError::UnknownPrompt {
                        suggestions: suggest::closest(&asked, names.iter().map(String::as_str)),
                        listed: names.len(),
                        server: name,
                        name: asked,
                    });
                }
                Listed::Unknown => {}
            }
        }
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
