//! `mcp call`: one tool call, its arguments read by the tool's schema,
//! progress on stderr while it runs.

use std::time::Duration;

use mcp_hub::{CallOptions, Discovery};
use mcp_types::CallToolResult;
use mcp_types::text::{escape_content, escape_line};
use serde_json::json;
use tokio::sync::mpsc;

use crate::args::CallArgs;
use crate::coerce;
use crate::commands::{Context, resolve, split_server, with_server};
use crate::error::{CliError, Exit};
use crate::output::{self, Paint, render_content, to_json};
use crate::progress::{Activity, show_progress};

/// Progress notifications waiting to be shown.
const PROGRESS_QUEUE: usize = 64;

pub(crate) async fn run(ctx: &Context, args: CallArgs) -> Result<Exit, CliError> {
    let (server, rest) = split_server(&args.words, &args.target);
    let target = resolve(ctx, "call", server, &args.target)?;
    let (tool, pairs) = rest
        .split_first()
        .ok_or(CliError::MissingWord { what: "TOOL" })?;
    let name = target.name().to_owned();
    let tool_name = tool.clone();
    let pairs = pairs.to_vec();
    let args_json = args.args.clone();
    let timeout = args.timeout.map(Duration::from_secs);
    let ui = ctx.ui;
    let result = with_server(ctx, &target, Discovery::Eager, |hub| async move {
        let schema = hub
            .active_snapshot(&name)?
            .and_then(|s| s.get(&tool_name).map(|t| t.input_schema.to_value()))
            .and_then(Result::ok);
        let arguments = coerce::arguments(schema.as_ref(), args_json.as_deref(), &pairs)?;
        let (tx, rx) = mpsc::channel(PROGRESS_QUEUE);
        let activity = Activity::start(&ui, &format!("calling {tool_name}…"));
        let mut options = CallOptions::new().progress(tx);
        options.timeout = timeout;
        let facade = hub.facade();
        let call = async move {
            let result = facade
                .call_tool_with(&name, &tool_name, arguments, &options)
                .await;
            // The options hold the progress sender: dropping them closes the
            // channel, which ends the progress display.
            drop(options);
            result
        };
        let (result, ()) = tokio::join!(call, show_progress(rx, &activity));
        activity.finish();
        Ok(result?)
    })
    .await?;
    let exit = if result.failed() {
        Exit::ToolError
    } else {
        Exit::Ok
    };
    if args.json {
        output::print_json(&json!({
            "server": target.name(),
            "tool": tool,
            "isError": result.failed(),
            "result": to_json(&result),
        }))?;
    } else if result.failed() {
        eprint!("{}", tool_error(tool, &result, ctx.ui.err()));
    } else {
        output::print(&human(&result, ctx.ui.out()))?;
    }
    Ok(exit)
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
