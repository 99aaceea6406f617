//! `tools/call`: one task per call (or a task of the tasks feature),
//! running the tool's [`Behavior`].

mod canned;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::behavior::Behavior;
use crate::input::{self, Step};
use crate::request::{Ctx, declares_tasks_extension, tasks_extension_required};
// Kept at this path for code written against the earlier layout.
pub(crate) use crate::request::{Era, complete};
use crate::server::{GARBAGE_LINE, Shared};
use crate::specs::{InputRequest, InputSpec, ListKind, ListenEnd, TaskSupport};
use crate::state::log_rank;
use crate::{listen, tasks, wire};

/// The `inputRequests` key used by `ask_client`.
const ASK_KEY: &str = "ask";

/// How a call runs, given the tool's task support and the request.
enum Mode {
    Plain,
    Task,
    Refuse(i64, String, Option<Value>),
}

fn mode(shared: &Shared, era: Era, name: &str, params: &Value, support: TaskSupport) -> Mode {
    match era {
        Era::Legacy if shared.legacy_tasks_enabled() => {
            let asked = params.get("task").is_some_and(Value::is_object);
            match (asked, support) {
                (true, TaskSupport::Forbidden) => Mode::Refuse(
                    wire::METHOD_NOT_FOUND,
                    format!("Method not found: tool {name} does not support task-augmented calls"),
                    None,
                ),
                (false, TaskSupport::Required) => Mode::Refuse(
                    wire::METHOD_NOT_FOUND,
                    format!("Method not found: tool {name} must be called as a task"),
                    None,
                ),
                (true, _) => Mode::Task,
                (false, _) => Mode::Plain,
            }
        }
        // Before 2025-11-25 a `task` param is an unknown field: ignored.
        Era::Legacy => Mode::Plain,
        Era::Modern => match (support, declares_tasks_extension(params)) {
            (TaskSupport::Required, false) => Mode::Refuse(
                wire::MISSING_CLIENT_CAPABILITY,
                "Missing required client capability".into(),
                Some(tasks_extension_required()),
            ),
            (TaskSupport::Forbidden, _) | (TaskSupport::Optional, false) => Mode::Plain,
            (_, true) => Mode::Task,
        },
    }
}

/// Starts a `tools/call`: refusals are answered at once, the call itself
/// runs on its own task (or, for `hang`, is only remembered), or as a task
/// of the tasks feature.
pub(crate) async fn start(shared: &Arc<Shared>, id: &Value, era: Era, params: Value) {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        let reply = wire::error(
            id,
            wire::INVALID_PARAMS,
            "Invalid params: tools/call needs a string name",
            None,
        );
        return shared.send(&reply).await;
    };
    let changes = shared.state().changes(ListKind::Tools);
    let Some(tool) = shared.script.visible_tool(name, changes) else {
        let message = format!("Unknown tool: {name}");
        return shared
            .send(&wire::error(id, wire::INVALID_PARAMS, &message, None))
            .await;
    };
    let behavior = tool.behavior.clone();
    match mode(shared, era, name, &params, tool.effective_task_support()) {
        Mode::Refuse(code, message, data) => {
            return shared.send(&wire::error(id, code, &message, data)).await;
        }
        Mode::Task => {
            if let Behavior::Ask(spec) = &behavior
                && spec.before_task
            {
                return input_then_task(shared, id, era, params, spec).await;
            }
            return tasks::create(shared, id, era, params, behavior).await;
        }
        Mode::Plain => {}
    }
    if behavior == Behavior::Hang {
        if shared.hang(id).is_err() {
            shared.send(&busy(shared, id)).await;
        }
        return;
    }
    let ctx = Ctx::new(shared, id, era, params);
    shared.spawn_or_refuse(id, run(ctx, behavior)).await;
}

/// [`InputSpec::before_task`]: the rounds as `input_required` results of
/// the call, then a task reporting the answers.
async fn input_then_task(
    shared: &Arc<Shared>,
    id: &Value,
    era: Era,
    params: Value,
    spec: &InputSpec,
) {
    let ctx = Ctx::new(shared, id, era, params.clone());
    let target = format!("tools/call:{}", tool_name(&ctx));
    if let Step::Done(answers) = input::step_modern(&ctx, spec, &target).await {
        let report = input::report(&answers);
        tasks::create(
            shared,
            id,
            era,
            params,
            Behavior::Structured { value: report },
        )
        .await;
    }
}

/// The answer to a call refused because too many are in flight.
pub(crate) fn busy(shared: &Shared, id: &Value) -> Value {
    let message = format!(
        "Internal error: more than {} calls in flight",
        shared.script.max_in_flight
    );
    wire::error(id, wire::INTERNAL_ERROR, &message, None)
}

/// Runs one behaviour to its answer (or forever, for `hang`).
pub(crate) async fn run(ctx: Ctx, behavior: Behavior) {
    match behavior {
        Behavior::Echo => match ctx.arguments().get("text").and_then(Value::as_str) {
            Some(text) => ctx.reply(wire::text_result(text)).await,
            None => {
                ctx.invalid_params("Invalid params: echo needs a string \"text\"")
                    .await;
            }
        },
        Behavior::Add => add(&ctx).await,
        Behavior::Sleep { ms, progress_steps } => sleep(&ctx, ms, progress_steps).await,
        // `start` never spawns a hanging plain call; a hanging task hangs.
        Behavior::Hang => std::future::pending().await,
        Behavior::Crash { code } => {
            ctx.shared.exit(code).await;
            // `serve` ends and aborts this task; never answer.
            std::future::pending::<()>().await;
        }
        Behavior::Garbage => {
            ctx.shared.send_line(GARBAGE_LINE.as_bytes().to_vec()).await;
            ctx.reply(wire::text_result("ok")).await;
        }
        Behavior::Oversized { bytes } => oversized(&ctx, bytes).await,
        Behavior::Error {
            code,
            message,
            data,
        } => ctx.reply_error(code, &message, data).await,
        Behavior::ToolError { text } => {
            ctx.reply(json!({"content": [wire::text_block(text)], "isError": true}))
                .await;
        }
        Behavior::Structured { value } => {
            let text = value.to_string();
            ctx.reply(json!({"content": [wire::text_block(text)], "structuredContent": value}))
                .await;
        }
        Behavior::Notify => notify(&ctx).await,
        Behavior::AskClient { method, params } => ask_client(&ctx, method, params).await,
        Behavior::WrongId => {
            let wrong = match &ctx.id {
                Value::Number(n) => json!(n.as_i64().map_or(-1, |n| -n - 1)),
                other => json!(format!("{}#wrong", other.as_str().unwrap_or_default())),
            };
            let body = complete(&ctx.shared, ctx.era, wire::text_result("wrong id"));
            ctx.shared.send(&wire::result(&wrong, body)).await;
            ctx.reply(wire::text_result("ok")).await;
        }
        Behavior::Blob { kb } => {
            let len = usize::try_from(kb.saturating_mul(1024)).unwrap_or(usize::MAX);
            let text: String = "0123456789abcdef".chars().cycle().take(len).collect();
            ctx.reply(wire::text_result(text)).await;
        }
        Behavior::Log {
            level,
            message,
            logger,
        } => {
            let sent = emit_log(&ctx, &level, message, logger.as_deref()).await;
            let text = if sent { "logged" } else { "log suppressed" };
            ctx.reply(wire::text_result(text)).await;
        }
        Behavior::FloodLogs { count } => {
            flood_logs(&ctx, count).await;
            ctx.reply(wire::text_result(format!("flooded {count}")))
                .await;
        }
        Behavior::TouchResource { uri } => {
            listen::resource_updated(&ctx.shared, ctx.era, &uri).await;
            ctx.reply(wire::text_result(format!("touched {uri}"))).await;
        }
        Behavior::ChangeList { list } => {
            ctx.shared.state().bump(list);
            listen::list_changed(&ctx.shared, ctx.era, list).await;
            let name = match list {
                ListKind::Tools => "tools",
                ListKind::Prompts => "prompts",
                ListKind::Resources => "resources",
            };
            ctx.reply(wire::text_result(format!("changed {name}")))
                .await;
        }
        Behavior::EndListen { how, code } => {
            if how == ListenEnd::Exit {
                ctx.shared.exit(code).await;
                std::future::pending::<()>().await;
            }
            let ended = listen::end_all(&ctx.shared, how).await;
            ctx.reply(wire::text_result(format!("ended {ended} subscriptions")))
                .await;
        }
        Behavior::Ask(spec) => ask(&ctx, &spec).await,
        Behavior::ElicitationComplete { elicitation_id } => {
            let note = wire::notification(
                "notifications/elicitation/complete",
                json!({"elicitationId": elicitation_id}),
            );
            ctx.shared.send(&note).await;
            ctx.reply(wire::text_result(format!("completed {elicitation_id}")))
                .await;
        }
        Behavior::Text { text } => ctx.reply(wire::text_result(fill(&ctx, text))).await,
        Behavior::TextAfter { argument, text } => text_after(&ctx, &argument, text).await,
        Behavior::TextWithProgress { text, steps } => {
            sleep_steps(&ctx, 0, steps).await;
            ctx.reply(wire::text_result(fill(&ctx, text))).await;
        }
        Behavior::Content {
            content,
            is_error,
            logs,
        } => {
            for log in logs {
                emit_log(&ctx, &log.level, log.message, None).await;
            }
            let mut result = json!({"content": content});
            if is_error {
                result["isError"] = true.into();
            }
            ctx.reply(result).await;
        }
        Behavior::Search { items } => canned::search(&ctx, &items).await,
        Behavior::Lookup { key, entries } => canned::lookup(&ctx, &key, &entries).await,
    }
}

async fn add(ctx: &Ctx) {
    let args = ctx.arguments();
    let (Some(a), Some(b)) = (args.get("a"), args.get("b")) else {
        return ctx
            .invalid_params("Invalid params: add needs numbers \"a\" and \"b\"")
            .await;
    };
    let sum = match (a.as_i64(), b.as_i64()) {
        (Some(a), Some(b)) if a.checked_add(b).is_some() => json!(a + b),
        _ => match (a.as_f64(), b.as_f64()) {
            (Some(a), Some(b)) => json!(a + b),
            _ => {
                return ctx
                    .invalid_params("Invalid params: add needs numbers \"a\" and \"b\"")
                    .await;
            }
        },
    };
    ctx.reply(json!({
        "content": [wire::text_block(sum.to_string())],
        "structuredContent": {"sum": sum},
    }))
    .await;
}

/// `text` with each `{name}` replaced by the argument `name`.
fn fill(ctx: &Ctx, text: String) -> String {
    let mut out = text;
    for (name, value) in ctx.arguments() {
        let value = value
            .as_str()
            .map_or_else(|| value.to_string(), str::to_owned);
        out = out.replace(&format!("{{{name}}}"), &value);
    }
    out
}

/// [`Behavior::TextAfter`]: waits the seconds the argument says, then
/// answers the text.
async fn text_after(ctx: &Ctx, argument: &str, text: String) {
    let seconds = match ctx.arguments().get(argument) {
        None => 0.0,
        Some(value) => match value.as_f64() {
            Some(s) if s >= 0.0 => s.min(crate::behavior::MAX_WAIT_SECONDS),
            _ => {
                let message = format!("Invalid params: `{argument}` must be a non-negative number");
                return ctx.invalid_params(&message).await;
            }
        },
    };
    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    ctx.reply(wire::text_result(fill(ctx, text))).await;
}

async fn sleep(ctx: &Ctx, ms: u64, steps: u32) {
    sleep_steps(ctx, ms, steps).await;
    ctx.reply(wire::text_result(format!("slept {ms} ms"))).await;
}

/// Waits `ms`, sending `steps` evenly spaced progress notifications when
/// the request asked for progress.
async fn sleep_steps(ctx: &Ctx, ms: u64, steps: u32) {
    let token = ctx.meta().and_then(|m| m.get("progressToken")).cloned();
    match token {
        Some(token) if steps > 0 => {
            let interval = ms / u64::from(steps);
            for step in 1..=steps {
                tokio::time::sleep(Duration::from_millis(interval)).await;
                let params = json!({
                    "progressToken": token,
                    "progress": step,
                    "total": steps,
                    "message": format!("step {step} of {steps}"),
                });
                ctx.shared
                    .send(&wire::notification("notifications/progress", params))
                    .await;
            }
            let rest = ms - interval * u64::from(steps);
            tokio::time::sleep(Duration::from_millis(rest)).await;
        }
        _ => tokio::time::sleep(Duration::from_millis(ms)).await,
    }
}

async fn oversized(ctx: &Ctx, bytes: u64) {
    let mut frame = wire::result(
        &ctx.id,
        complete(&ctx.shared, ctx.era, wire::text_result("")),
    );
    let base = frame.to_string().len() as u64;
    let pad = usize::try_from(bytes.saturating_sub(base)).unwrap_or(usize::MAX);
    if let Some(text) = frame.pointer_mut("/result/content/0/text") {
        // `x` needs no escaping, so the line grows by exactly `pad` bytes.
        *text = Value::String("x".repeat(pad));
    }
    ctx.shared.send(&frame).await;
}

/// Sends `notifications/message` if the era's log level lets `level`
/// through; returns whether it was sent.
pub(crate) async fn emit_log(ctx: &Ctx, level: &str, data: Value, logger: Option<&str>) -> bool {
    // Script validation refuses unknown levels; treat one as the lowest.
    let rank = log_rank(level).unwrap_or(0);
    let threshold = match ctx.era {
        // No `logging/setLevel` yet: the server's own choice is to send everything.
        Era::Legacy => ctx.shared.state().log_level.unwrap_or(0),
        Era::Modern => {
            // The router refuses unknown levels before a call starts.
            let requested = ctx
                .meta()
                .and_then(|m| m.get(wire::META_LOG_LEVEL))
                .and_then(Value::as_str)
                .and_then(log_rank);
            match requested {
                Some(threshold) => threshold,
                None => return false,
            }
        }
    };
    if rank < threshold {
        return false;
    }
    let mut params = json!({"level": level, "data": data});
    if let Some(logger) = logger {
        params["logger"] = logger.into();
    }
    ctx.shared
        .send(&wire::notification("notifications/message", params))
        .await;
    true
}

/// Log lines per write of [`Behavior::FloodLogs`].
const FLOOD_BATCH: u64 = 64;

/// Writes `count` log messages (0: without end) in batches of
/// [`FLOOD_BATCH`] lines.
async fn flood_logs(ctx: &Ctx, count: u64) {
    let line = wire::notification(
        "notifications/message",
        json!({"level": "info", "logger": "flood", "data": "a flooding server's log message"}),
    )
    .to_string();
    let batch = |n: u64| {
        let mut out = Vec::with_capacity(n as usize * (line.len() + 1));
        for i in 0..n {
            if i > 0 {
                out.push(b'\n');
            }
            out.extend_from_slice(line.as_bytes());
        }
        out
    };
    let full = batch(FLOOD_BATCH);
    let mut left = count;
    loop {
        if count == 0 {
            if ctx.shared.output_closed() {
                return;
            }
            ctx.shared.send_line(full.clone()).await;
            continue;
        }
        if left == 0 {
            return;
        }
        let n = left.min(FLOOD_BATCH);
        let lines = if n == FLOOD_BATCH {
            full.clone()
        } else {
            batch(n)
        };
        ctx.shared.send_line(lines).await;
        left -= n;
    }
}

async fn notify(ctx: &Ctx) {
    emit_log(
        ctx,
        "info",
        json!("notify tool called"),
        Some("mcp-testkit"),
    )
    .await;
    listen::list_changed(&ctx.shared, ctx.era, ListKind::Tools).await;
    ctx.reply(wire::text_result("notified")).await;
}

/// `ask_client`: one request keyed `ask`, reported in its original shape.
async fn ask_client(ctx: &Ctx, method: String, params: Value) {
    let request = InputRequest { method, params };
    if ctx.era == Era::Legacy {
        let answer = input::ask_one(ctx, &request).await;
        let body = match answer {
            Ok(result) => wire::text_result(result.to_string()),
            Err(failure) if failure.get("error").is_some() => {
                json!({"content": [wire::text_block(failure.to_string())], "isError": true})
            }
            Err(_) => {
                let text = format!(
                    "mcp-testkit: the client did not answer {} within {} ms",
                    request.method, ctx.shared.script.ask_timeout_ms
                );
                json!({"content": [wire::text_block(text)], "isError": true})
            }
        };
        return ctx.reply(body).await;
    }
    let spec = InputSpec::one(ASK_KEY, request);
    let target = format!("tools/call:{}", tool_name(ctx));
    if let Step::Done(answers) = input::gather(ctx, &spec, &target).await {
        let answer = answers
            .rounds
            .first()
            .and_then(|round| round.get(ASK_KEY))
            .cloned()
            .unwrap_or_default();
        ctx.reply(wire::text_result(answer.to_string())).await;
    }
}

/// `ask`: every round of `spec`, reported as `{"rounds": [...]}`.
async fn ask(ctx: &Ctx, spec: &InputSpec) {
    let target = format!("tools/call:{}", tool_name(ctx));
    if let Step::Done(answers) = input::gather(ctx, spec, &target).await {
        let report = input::report(&answers);
        let mut body = json!({
            "content": [wire::text_block(report.to_string())],
            "structuredContent": report,
        });
        if answers.failed {
            body["isError"] = true.into();
        }
        ctx.reply(body).await;
    }
}

fn tool_name(ctx: &Ctx) -> &str {
    ctx.params
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}
