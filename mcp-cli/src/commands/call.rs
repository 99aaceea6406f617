//! `mcp call`: one tool call, its arguments read by the tool's schema,
//! progress on stderr while it runs.
//!
//! Two forms, told apart by the words: `SERVER TOOL …` starts that server
//! only and calls its tool (with `--url` or `-- COMMAND`: `TOOL …` of that
//! server); `NAME …`, a name `mcp tools` shows (a bare unique name,
//! `server/tool` or an alias), starts every configured server and goes
//! through the hub's merged namespace under `--policy`. The second word
//! decides: when it is not a `key=value` / `key:=JSON` pair, the first is a
//! server.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use mcp_hub::{CallOptions, Discovery, HubError, Namespace};
use mcp_session::SessionError;
use mcp_types::CallToolResult;
use mcp_types::text::{Untrusted, escape_content, escape_line};
use serde_json::json;
use tokio::sync::mpsc;

use crate::args::CallArgs;
use crate::coerce;
use crate::commands::tools::{policy_of, start_configured};
use crate::commands::{Context, resolve, then_shut_down, with_server};
use crate::config::ServerEntry;
use crate::error::{CliError, Exit};
use crate::output::{self, Paint, render_content, to_json};
use crate::progress::{Activity, show_progress};
use crate::suggest;

/// Progress notifications waiting to be shown.
const PROGRESS_QUEUE: usize = 64;

/// Which form the words are.
#[derive(Debug, PartialEq, Eq)]
enum Form<'a> {
    /// `SERVER TOOL …`, or `TOOL …` of a one-off server (`server: None`).
    OnServer {
        server: Option<&'a str>,
        tool: Option<&'a str>,
        pairs: &'a [String],
    },
    /// `NAME …`: a name of the merged namespace.
    Merged { name: &'a str, pairs: &'a [String] },
}

fn form<'a>(words: &'a [String], one_off: bool) -> Form<'a> {
    match words {
        _ if one_off => Form::OnServer {
            server: None,
            tool: words.first().map(String::as_str),
            pairs: words.get(1..).unwrap_or_default(),
        },
        [server, tool, pairs @ ..] if !coerce::is_pair(tool) => Form::OnServer {
            server: Some(server),
            tool: Some(tool),
            pairs,
        },
        [name, pairs @ ..] => Form::Merged { name, pairs },
        // (clap requires a word.)
        [] => Form::OnServer {
            server: None,
            tool: None,
            pairs: &[],
        },
    }
}

/// What was called, for the output.
struct Called {
    server: String,
    tool: String,
    /// The name given, in the merged form.
    name: Option<String>,
}

pub(crate) async fn run(ctx: &Context, args: CallArgs) -> Result<Exit, CliError> {
    // Read before anything starts: a file or standard input that cannot be
    // read costs no server.
    let args_json = args.args.as_deref().map(coerce::args_text).transpose()?;
    let (called, result) = match form(&args.words, args.target.is_given()) {
        Form::OnServer {
            server,
            tool,
            pairs,
        } => on_server(ctx, &args, args_json, server, tool, pairs).await?,
        Form::Merged { name, pairs } => merged(ctx, &args, args_json, name, pairs).await?,
    };
    report(ctx, args.json, &called, &result)
}

/// `SERVER TOOL …`: that server only.
async fn on_server(
    ctx: &Context,
    args: &CallArgs,
    args_json: Option<String>,
    server: Option<&str>,
    tool: Option<&str>,
    pairs: &[String],
) -> Result<(Called, CallToolResult), CliError> {
    let target = resolve(ctx, "call", server, &args.target)?;
    let tool = tool.ok_or(CliError::MissingWord { what: "TOOL" })?;
    let name = target.name().to_owned();
    let tool_name = tool.to_owned();
    let pairs = pairs.to_vec();
    let timeout = args.timeout.map(Duration::from_secs);
    let ui = ctx.ui;
    let confirm = &target.entry.confirm;
    let result = with_server(ctx, &target, Discovery::Eager, |hub| async move {
        let schema = hub
            .active_snapshot(&name)?
            .and_then(|s| s.get(&tool_name).map(|t| t.input_schema.to_value()))
            .and_then(Result::ok);
        let arguments = coerce::arguments(schema.as_ref(), args_json.as_deref(), &pairs)?;
        let marked = confirm.covers(&tool_name);
        confirmed(ctx, args.yes, marked, &name, &tool_name, &arguments).await?;
        let tool_name = &tool_name;
        let mut attempt = 0;
        let called = with_progress(&ui, tool_name, timeout, |options| {
            // A call made again after pages were opened is the same call
            // the person said yes to.
            attempt += 1;
            if attempt > 1 && marked {
                ctx.yeses.grant_once(&name, tool_name);
            }
            let hub = Arc::clone(&hub);
            let name = name.clone();
            let arguments = arguments.clone();
            async move {
                hub.facade()
                    .call_tool_with(&name, tool_name, arguments, &options)
                    .await
            }
        })
        .await;
        match called {
            Err(CliError::Hub(error)) if is_unknown_tool(&error) => {
                // The server's own names of the tools it exposes to us.
                let namespace = hub.namespace();
                let names = namespace
                    .tools()
                    .iter()
                    .filter(|t| !t.is_helper() && t.server().as_str() == name)
                    .map(|t| t.tool().name.as_str());
                Err(CliError::UnknownTool {
                    suggestions: suggest::closest(tool_name, names),
                    error: Box::new(error),
                    failed: Vec::new(),
                })
            }
            other => other,
        }
    })
    .await?;
    let called = Called {
        server: target.name().to_owned(),
        tool: tool.to_owned(),
        name: None,
    };
    Ok((called, result))
}

/// `NAME …`: every configured server, the merged namespace.
async fn merged(
    ctx: &Context,
    args: &CallArgs,
    args_json: Option<String>,
    name: &str,
    pairs: &[String],
) -> Result<(Called, CallToolResult), CliError> {
    let (started, entries) = start_configured(ctx, policy_of(args.policy), false).await?;
    let failed: Vec<String> = started
        .outcomes
        .iter()
        .filter_map(|(server, outcome)| {
            let why = outcome.failure_line(200)?;
            eprint!("{}", not_started(server, &why, ctx.ui.err()));
            Some(server.clone())
        })
        .collect();
    let hub = &started.hub;
    let call = async {
        let namespace = hub.namespace();
        let exposed = namespace
            .resolve(name)
            .map_err(|e| not_exposed(e, name, &entries, &failed, &namespace))?;
        let schema = exposed.tool().input_schema.to_value().ok();
        let arguments = coerce::arguments(schema.as_ref(), args_json.as_deref(), pairs)?;
        let called = Called {
            server: exposed.server().to_string(),
            tool: exposed.tool().name.clone(),
            name: Some(name.to_owned()),
        };
        let marked = entries
            .iter()
            .any(|e| e.name == called.server && e.confirm.covers(&called.tool));
        confirmed(
            ctx,
            args.yes,
            marked,
            &called.server,
            &called.tool,
            &arguments,
        )
        .await?;
        let timeout = args.timeout.map(Duration::from_secs);
        let mut attempt = 0;
        let result = with_progress(&ctx.ui, name, timeout, |options| {
            // Made again after pages were opened: the same call said yes to.
            attempt += 1;
            if attempt > 1 && marked {
                ctx.yeses.grant_once(&called.server, &called.tool);
            }
            let arguments = arguments.clone();
            async move { hub.call_with(name, arguments, &options).await }
        })
        .await?;
        Ok((called, result))
    };
    then_shut_down(hub, call).await
}

/// Characters of a call's arguments shown in the question.
const SHOWN_ARGUMENT_CHARS: usize = 1024;

/// The yes a call of a tool the configuration marks with `confirm` needs,
/// before anything is sent: `--yes`, or the answer at a terminal; without
/// either the call is refused. The yes is handed to the hub's hook
/// ([`crate::confirm::ConfirmCalls`]) for this one call.
async fn confirmed(
    ctx: &Context,
    yes: bool,
    marked: bool,
    server: &str,
    tool: &str,
    arguments: &serde_json::Map<String, serde_json::Value>,
) -> Result<(), CliError> {
    if !marked {
        return Ok(());
    }
    let said = yes || (ctx.ui.interactive && ask_at_terminal(server, tool, arguments).await);
    if !said {
        return Err(CliError::NotConfirmed {
            server: server.to_owned(),
            tool: tool.to_owned(),
        });
    }
    ctx.yeses.grant_once(server, tool);
    Ok(())
}

/// Asks at the terminal (stderr, an answer on stdin): only `y` or `yes`
/// says yes.
async fn ask_at_terminal(
    server: &str,
    tool: &str,
    arguments: &serde_json::Map<String, serde_json::Value>,
) -> bool {
    let shown = serde_json::to_string(arguments).unwrap_or_default();
    let question = format!(
        "Call `{}` on `{}` with {}? [y/N] ",
        Untrusted::new(tool),
        Untrusted::new(server),
        Untrusted::bounded(&shown, SHOWN_ARGUMENT_CHARS),
    );
    tokio::task::spawn_blocking(move || {
        crate::config::trust::ask(
            &question,
            &mut std::io::stdin().lock(),
            &mut std::io::stderr(),
        )
        .unwrap_or(false)
    })
    .await
    .unwrap_or(false)
}

/// The error for a name the namespace does not resolve: a configured
/// server's name alone misses its tool; an unknown name says which servers
/// did not start (their tools are missing, not absent) and the exposed
/// names closest to it.
fn not_exposed(
    error: HubError,
    name: &str,
    entries: &[ServerEntry],
    failed: &[String],
    namespace: &Namespace,
) -> CliError {
    match error {
        HubError::UnknownTool { .. } if entries.iter().any(|e| e.name == name) => {
            CliError::MissingWord { what: "TOOL" }
        }
        error @ HubError::UnknownTool { .. } => CliError::UnknownTool {
            error: Box::new(error),
            failed: failed.to_vec(),
            suggestions: suggest::closest(name, namespace.tools().iter().map(|t| t.name())),
        },
        error => CliError::Hub(error),
    }
}

/// Whether the hub or the session refused a tool name it does not know.
fn is_unknown_tool(error: &HubError) -> bool {
    matches!(
        error,
        HubError::UnknownTool { .. }
            | HubError::Session {
                error: SessionError::UnknownTool { .. },
                ..
            }
    )
}

/// The line said about a server that did not start in the merged form.
fn not_started(server: &str, why: &str, paint: Paint) -> String {
    format!(
        "{} server `{server}` did not start, so its tools are missing: {}\n",
        paint.yellow("warning:"),
        escape_line(why)
    )
}

/// Times a call is tried again after the server asked for pages to be
/// opened first (`-32042`) and the person said they were.
const PAGE_ROUNDS: usize = 3;

/// Runs `call` with a progress sink and `timeout`, showing its progress
/// (a spinner on a terminal, else `progress:` lines on stderr). When the
/// server answers that the user must open pages first (`-32042`: the tool
/// did not run) and a person is at the terminal, the pages are shown and
/// the call is made again once they say they are done.
async fn with_progress<F, Fut>(
    ui: &crate::output::Ui,
    label: &str,
    timeout: Option<Duration>,
    mut call: F,
) -> Result<CallToolResult, CliError>
where
    F: FnMut(CallOptions) -> Fut,
    Fut: Future<Output = Result<CallToolResult, HubError>>,
{
    let mut rounds = 0;
    loop {
        let (tx, rx) = mpsc::channel(PROGRESS_QUEUE);
        let activity = Activity::start(ui, &format!("calling {label}…"));
        let mut options = CallOptions::new().progress(tx);
        options.timeout = timeout;
        // The options hold the progress sender: the call's future owns them,
        // so they are dropped when it ends, which closes the channel and ends
        // the progress display.
        let (result, ()) = tokio::join!(call(options), show_progress(rx, &activity));
        activity.finish();
        let error = match result {
            Ok(result) => return Ok(result),
            Err(error) => error,
        };
        let pages = error
            .url_elicitations()
            .filter(|_| ui.interactive && rounds < PAGE_ROUNDS);
        let server = error.server().map(|s| s.as_str().to_owned());
        let again = match (pages, server) {
            (Some(pages), Some(server)) => crate::questions::opened_pages(&server, pages).await,
            _ => false,
        };
        if !again {
            return Err(error.into());
        }
        rounds += 1;
    }
}

/// Prints the result; exit 5 when the tool reported an error.
fn report(
    ctx: &Context,
    json: bool,
    called: &Called,
    result: &CallToolResult,
) -> Result<Exit, CliError> {
    if json {
        let mut doc = json!({
            "server": called.server,
            "tool": called.tool,
            "isError": result.failed(),
            "result": to_json(result),
        });
        if let Some(name) = &called.name {
            doc["name"] = json!(name);
        }
        output::print_json(&doc)?;
    } else if result.failed() {
        let label = called.name.as_deref().unwrap_or(&called.tool);
        eprint!("{}", tool_error(label, result, ctx.ui.err()));
    } else {
        output::print(&human(result, ctx.ui.out()))?;
    }
    Ok(if result.failed() {
        Exit::ToolError
    } else {
        Exit::Ok
    })
}

fn human(result: &CallToolResult, paint: Paint) -> String {
    let mut out = render_content(&result.content, paint);
    if let Some(structured) = &result.structured_content {
        // Text content usually repeats the structured result; show the
        // structure only when there is nothing else.
        if result.content.is_empty() {
            // JSON escapes C0 controls in strings but not C1 or bidi ones.
            out.push_str(&escape_content(
                &serde_json::to_string_pretty(structured).unwrap_or_default(),
            ));
            out.push('\n');
        }
    }
    out
}

fn tool_error(tool: &str, result: &CallToolResult, paint: Paint) -> String {
    let mut out = format!(
        "{} tool `{}` reported an error {}\n",
        paint.red("mcp:"),
        escape_line(tool),
        paint.dim("(the server's words follow)")
    );
    for line in render_content(&result.content, paint).lines() {
        out.push_str(&format!("  | {line}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn the_words_decide_the_form() {
        let w = words("rich add a=1");
        assert_eq!(
            form(&w, false),
            Form::OnServer {
                server: Some("rich"),
                tool: Some("add"),
                pairs: &w[2..]
            }
        );
        let w = words("rich/add a=1 b:=2");
        assert_eq!(
            form(&w, false),
            Form::Merged {
                name: "rich/add",
                pairs: &w[1..]
            }
        );
        let w = words("add");
        assert_eq!(
            form(&w, false),
            Form::Merged {
                name: "add",
                pairs: &[]
            }
        );
        // A one-off server: the first word is its tool.
        let w = words("add a=1");
        assert_eq!(
            form(&w, true),
            Form::OnServer {
                server: None,
                tool: Some("add"),
                pairs: &w[1..]
            }
        );
        // A second word that is not a pair is a tool (refused later if it
        // is meant as an argument).
        let w = words("rich add a");
        assert!(matches!(form(&w, false), Form::OnServer { .. }));
    }
}
