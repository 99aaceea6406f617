//! `mcp watch`: the configured servers held through the hub, restarted with
//! back-off, and everything that happens to them printed as it happens (one
//! JSON object a line with `--json`): status, restarts, changed tool lists
//! held for review, subscribed resources, log messages, progress of reads.
//!
//! Commands come on standard input, one a line: `adopt SERVER GENERATION`,
//! `discard SERVER GENERATION`, `quit`. Ctrl-C (or `quit`) shuts the servers
//! down and ends with exit code 0.

use std::collections::HashSet;
use std::io::{BufRead, Read, Write};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use mcp_hub::{
    Adoption, Backoff, Discovery, HandlerError, Hub, HubError, HubEvent, HubEvents, Mechanism,
    Reason, ResourceEvent, ResourceHandler, RestartPolicy, ShutdownReport, SubscriptionSpec,
};
use mcp_types::ResourceContents;
use mcp_types::text::escape_line;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::args::WatchArgs;
use crate::commands::inspect::era_name;
use crate::commands::tools::{note_text, policy_of};
use crate::commands::{Context, interruptible};
use crate::config::{self, ServerEntry};
use crate::confirm::ConfirmCalls;
use crate::connect::{self, Origin};
use crate::error::{CliError, Exit, hub_chain, hub_error_json};
use crate::output::{Paint, one_line, to_json};

/// Longest command line read from standard input; a longer one is refused.
const MAX_COMMAND_BYTES: usize = 1024;
/// Resource contents waiting to be printed (the handler waits beyond it).
const RESOURCE_QUEUE: usize = 64;
/// Characters of a server's text shown on one human line.
const SHOWN_CHARS: usize = 300;

pub(crate) async fn run(ctx: &Context, args: WatchArgs) -> Result<Exit, CliError> {
    let config = config::load(ctx.config.as_deref(), ctx.prompt())?;
    let entries: Vec<&ServerEntry> = if args.servers.is_empty() {
        config.servers.iter().filter(|e| !e.disabled).collect()
    } else {
        let mut picked = Vec::with_capacity(args.servers.len());
        for name in &args.servers {
            let entry = config.server(name)?;
            if !picked.iter().any(|e: &&ServerEntry| e.name == entry.name) {
                picked.push(entry);
            }
        }
        picked
    };
    if entries.is_empty() {
        return Err(CliError::NothingToWatch { file: config.file });
    }
    let wanted = wanted_subscriptions(&entries, &args.resources)?;
    let origin = Origin {
        file: &config.file,
        command_line: false,
        variables: config.variables.as_ref(),
    };
    let level = args.log_level;
    let adoption = if args.adopt {
        Adoption::Automatic
    } else {
        Adoption::Review
    };
    let mut hub_config = connect::hub_config(policy_of(args.policy), false);
    // Nothing is waited for: every start shows as it happens.
    hub_config.start_wait = Some(Duration::ZERO);
    let mut builder = Hub::builder(hub_config)
        .authority(connect::authority(entries.iter().copied()))
        .principal(ctx.principal());
    // Nobody here answers a question: marked calls need `--yes`.
    if let Some(hook) = ConfirmCalls::for_entries(entries.iter().copied(), ctx.yeses.clone()) {
        builder = builder.approval(hook);
    }
    for entry in &entries {
        // Unlike the one-shot commands, a watched server comes back.
        let spec = connect::spec(origin, entry, ctx.start_options(), Discovery::Eager)?
            .restart(RestartPolicy::Backoff(Backoff::default()))
            .adoption(adoption)
            .log_level(level);
        builder = builder.server(spec);
    }
    let hub = interruptible(async { Ok(builder.start().await?) }).await?;
    let printer = Printer {
        json: args.json,
        paint: ctx.ui.out(),
        closed: std::cell::Cell::new(false),
    };
    let result = match hub.take_events() {
        Some(events) => follow(&hub, events, &printer, wanted).await,
        None => Ok(()),
    };
    let report = hub.shutdown().await;
    printer.ended(&report)?;
    result.map(|()| Exit::Ok)
}

/// The `--resource` values as (server, URI): `SERVER=URI` when the part
/// before the first `=` is a watched server, else the URI of the one
/// watched server.
fn wanted_subscriptions(
    entries: &[&ServerEntry],
    values: &[String],
) -> Result<Vec<(String, String)>, CliError> {
    let mut wanted: Vec<(String, String)> = Vec::with_capacity(values.len());
    for value in values {
        let named = value
            .split_once('=')
            .filter(|(server, _)| entries.iter().any(|e| e.name == *server));
        let (server, uri) = match (named, entries) {
            (Some((server, uri)), _) => (server.to_owned(), uri.to_owned()),
            (None, [only]) => (only.name.clone(), value.clone()),
            (None, _) => {
                return Err(CliError::ResourceFlag {
                    value: escape_line(value).into_owned(),
                    problem: "several servers are watched: name the server as SERVER=URI",
                });
            }
        };
        if uri.is_empty() || uri.len() > mcp_hub::MAX_SUBSCRIPTION_URI_BYTES {
            return Err(CliError::ResourceFlag {
                value: escape_line(&one_line(value, 80)).into_owned(),
                problem: "the URI must be 1 byte to 8 KiB",
            });
        }
        if !wanted.contains(&(server.clone(), uri.clone())) {
            wanted.push((server, uri));
        }
    }
    Ok(wanted)
}

/// Hands subscribed contents to the printing loop.
#[derive(Debug)]
struct Forward(mpsc::Sender<ResourceEvent>);

impl ResourceHandler for Forward {
    fn handle(&self, event: ResourceEvent) -> BoxFuture<'_, Result<(), HandlerError>> {
        Box::pin(async move {
            self.0
                .send(event)
                .await
                .map_err(|_| HandlerError::internal("the watch is ending"))
        })
    }
}

/// One line of standard input, or why it was refused.
type CommandLine = Result<String, &'static str>;

/// Reads commands from standard input on a thread of its own (a blocked
/// read must not hold the exit), until end of input.
fn read_commands() -> mpsc::Receiver<CommandLine> {
    let (tx, rx) = mpsc::channel(16);
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        loop {
            let mut line = Vec::new();
            let read = (&mut input)
                .take(MAX_COMMAND_BYTES as u64 + 1)
                .read_until(b'\n', &mut line);
            let sent = match read {
                Ok(0) | Err(_) => return,
                Ok(_) if line.len() > MAX_COMMAND_BYTES => {
                    // Skip the rest of the over-long line.
                    let mut rest = Vec::new();
                    let _ = input.read_until(b'\n', &mut rest);
                    tx.blocking_send(Err("a command is at most 1024 bytes"))
                }
                Ok(_) => match String::from_utf8(line) {
                    Ok(text) => tx.blocking_send(Ok(text.trim().to_owned())),
                    Err(_) => tx.blocking_send(Err("a command is UTF-8 text")),
                },
            };
            if sent.is_err() {
                return;
            }
        }
    });
    rx
}

type Subscribing<'a> = FuturesUnordered<BoxFuture<'a, (String, String, Result<(), HubError>)>>;

/// Prints events until Ctrl-C or `quit`.
async fn follow(
    hub: &Hub,
    mut events: HubEvents,
    printer: &Printer,
    wanted: Vec<(String, String)>,
) -> Result<(), CliError> {
    let (resources_tx, mut resources) = mpsc::channel(RESOURCE_QUEUE);
    let handler: Arc<dyn ResourceHandler> = Arc::new(Forward(resources_tx));
    let mut subscribed: HashSet<(String, String)> = HashSet::new();
    let mut subscribing: Subscribing<'_> = FuturesUnordered::new();
    let mut commands = Some(read_commands());
    // A server's first listing is adopted before it is ready; its `ready`
    // line says as much, so that adoption is not shown.
    let mut ready: HashSet<String> = HashSet::new();
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    while !printer.closed.get() {
        tokio::select! {
            // In this order: what the hub reported (a read's log and
            // progress) before the contents that read produced.
            biased;
            _ = &mut ctrl_c => return Ok(()),
            event = events.next() => {
                let Some(event) = event else { return Ok(()) };
                // A server that is ready (again) gets the subscriptions it
                // does not hold yet; once made, the hub makes them again
                // after a restart by itself.
                if let HubEvent::Ready { server, .. } = &event {
                    for (s, uri) in &wanted {
                        let key = (s.clone(), uri.clone());
                        if s == server.as_str() && subscribed.insert(key) {
                            let spec = SubscriptionSpec::new(s, uri, Mechanism::ByEra, Arc::clone(&handler));
                            let (s, uri) = (s.clone(), uri.clone());
                            subscribing.push(Box::pin(async move {
                                (s, uri, hub.subscribe(spec).await)
                            }));
                        }
                    }
                }
                match &event {
                    HubEvent::Ready { server, .. } => {
                        ready.insert(server.to_string());
                    }
                    HubEvent::SnapshotAdopted { server, .. } if !ready.contains(server.as_str()) => {
                        continue;
                    }
                    _ => {}
                }
                printer.event(&event)?;
            }
            Some(resource) = resources.recv() => printer.resource(&resource)?,
            Some((server, uri, result)) = subscribing.next(), if !subscribing.is_empty() => {
                match result {
                    Ok(()) => printer.subscribed(&server, &uri)?,
                    Err(error) => {
                        // Tried again when the server is ready again.
                        subscribed.remove(&(server.clone(), uri.clone()));
                        printer.subscription_failed(&server, &uri, &error)?;
                    }
                }
            }
            line = recv(&mut commands), if commands.is_some() => match line {
                None => commands = None,
                Some(Ok(line)) if matches!(line.as_str(), "quit" | "exit") => return Ok(()),
                Some(Ok(line)) if line.is_empty() => {}
                Some(Ok(line)) => command(hub, printer, &line)?,
                Some(Err(problem)) => printer.command_refused(problem),
            },
        }
    }
    Ok(())
}

async fn recv(commands: &mut Option<mpsc::Receiver<CommandLine>>) -> Option<CommandLine> {
    match commands {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

/// `adopt SERVER GENERATION` / `discard SERVER GENERATION`.
fn command(hub: &Hub, printer: &Printer, line: &str) -> Result<(), CliError> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let (verb, server, generation) = match words.as_slice() {
        [verb @ ("adopt" | "discard"), server, generation] => match generation.parse::<u64>() {
            Ok(g) => (*verb, *server, g),
            Err(_) => {
                printer.command_refused("the generation is a number");
                return Ok(());
            }
        },
        _ => {
            printer.command_refused(
                "commands are `adopt SERVER GENERATION`, `discard SERVER GENERATION` and `quit`",
            );
            return Ok(());
        }
    };
    let outcome = if verb == "adopt" {
        // The hub reports the adoption (and the new namespace) as events.
        hub.adopt(server, generation).map(drop)
    } else {
        hub.discard(server, generation)
    };
    match outcome {
        Ok(()) if verb == "discard" => printer.discarded(server, generation),
        Ok(()) => Ok(()),
        Err(error) => {
            printer.command_failed(&error);
            Ok(())
        }
    }
}

/// Prints lines: human (a time, the server, what happened) or one JSON
/// object each.
struct Printer {
    json: bool,
    paint: Paint,
    /// Standard output went away (`mcp watch | head`): the watch ends.
    closed: std::cell::Cell<bool>,
}

impl Printer {
    /// One line: `fields` gain `time` and `event`; `human` is what follows
    /// the time and the server on a terminal (already escaped).
    fn line(
        &self,
        event: &str,
        server: Option<&str>,
        human: &str,
        fields: Value,
    ) -> Result<(), CliError> {
        let now = SystemTime::now();
        if self.json {
            let mut object = json!({"time": rfc3339(now), "event": event});
            if let Some(server) = server {
                object["server"] = json!(server);
            }
            if let (Value::Object(out), Value::Object(more)) = (&mut object, fields) {
                out.extend(more);
            }
            let mut text = serde_json::to_string(&object).unwrap_or_else(|_| "null".into());
            text.push('\n');
            self.write(&text)
        } else {
            let time = self.paint.dim(&clock(now));
            let server = format!("{:<12}", server.unwrap_or("-"));
            self.write(&format!("{time} {} {human}\n", self.paint.bold(&server)))
        }
    }

    /// Writes one line; a reader that went away ends the watch rather
    /// than leaving it printing into nothing.
    fn write(&self, text: &str) -> Result<(), CliError> {
        let mut out = std::io::stdout().lock();
        match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed.set(true);
                Ok(())
            }
            Err(e) => Err(CliError::Output(e)),
        }
    }

    fn event(&self, event: &HubEvent) -> Result<(), CliError> {
        let p = self.paint;
        match event {
            HubEvent::Starting { server, attempt } => {
                let human = if *attempt == 0 {
                    "starting".to_owned()
                } else {
                    format!("starting (restart {attempt})")
                };
                self.line(
                    "starting",
                    Some(server.as_str()),
                    &human,
                    json!({"attempt": attempt}),
                )
            }
            HubEvent::Ready {
                server,
                era,
                version,
                tools,
            } => {
                let human = format!(
                    "{} {} ({} era){}",
                    p.green("ready"),
                    escape_line(version.as_str()),
                    era_name(*era),
                    crate::output::tool_count(*tools)
                );
                let fields = json!({"era": era_name(*era), "protocolVersion": version.as_str(), "tools": tools});
                self.line("ready", Some(server.as_str()), &human, fields)
            }
            HubEvent::Failed { server, error } => {
                let chain = hub_chain(error);
                let human = format!(
                    "{} {}",
                    p.red("failed:"),
                    chain[chain.len().saturating_sub(2)..].join(": ")
                );
                self.line(
                    "failed",
                    Some(server.as_str()),
                    &human,
                    json!({"error": hub_error_json(error)}),
                )
            }
            HubEvent::Restarting {
                server,
                attempt,
                delay,
            } => {
                let at = SystemTime::now() + *delay;
                let human = format!(
                    "restarting at {} (attempt {attempt}, in {:.1} s)",
                    clock(at),
                    delay.as_secs_f64()
                );
                let fields =
                    json!({"attempt": attempt, "at": rfc3339(at), "delayMs": millis(*delay)});
                self.line("restarting", Some(server.as_str()), &human, fields)
            }
            HubEvent::RepeatedFailures {
                server,
                consecutive,
            } => {
                let human = format!(
                    "{} it failed {consecutive} times in a row; it is restarted with back-off (at most 30 s apart)",
                    p.yellow("notice:")
                );
                self.line(
                    "repeated_failures",
                    Some(server.as_str()),
                    &human,
                    json!({"consecutive": consecutive}),
                )
            }
            HubEvent::Stopped { server } => {
                self.line("stopped", Some(server.as_str()), "stopped", json!({}))
            }
            HubEvent::SessionReestablished { server } => {
                let human = format!(
                    "{} the server had forgotten our session (did it restart?); a new one is established and its tools listed again",
                    p.yellow("notice:")
                );
                self.line(
                    "session_reestablished",
                    Some(server.as_str()),
                    &human,
                    json!({}),
                )
            }
            HubEvent::SnapshotPending {
                server,
                generation,
                diff,
            } => {
                let adopt = format!("adopt {server} {generation}");
                let discard = format!("discard {server} {generation}");
                let human = format!(
                    "{} {}; held for review: type `{adopt}` to use it, or `{discard}`",
                    p.yellow("tools changed:"),
                    diff_text(diff)
                );
                let fields = json!({
                    "generation": generation, "added": diff.added, "removed": diff.removed,
                    "changed": diff.changed, "adopt": adopt, "discard": discard,
                });
                self.line("review", Some(server.as_str()), &human, fields)
            }
            HubEvent::SnapshotAdopted {
                server,
                generation,
                diff,
            } => {
                let human = format!(
                    "tools adopted (generation {generation}): {}",
                    diff_text(diff)
                );
                let fields = json!({
                    "generation": generation, "added": diff.added, "removed": diff.removed,
                    "changed": diff.changed,
                });
                self.line("adopted", Some(server.as_str()), &human, fields)
            }
            HubEvent::Namespace {
                generation,
                tools,
                notes,
            } => {
                let notes: Vec<String> = notes.iter().map(note_text).collect();
                let mut human = format!("namespace {generation}: {tools} tools exposed");
                for note in &notes {
                    human.push_str(&format!("; {} {note}", p.yellow("note:")));
                }
                let fields = json!({"generation": generation, "tools": tools, "notes": notes});
                self.line("namespace", None, &human, fields)
            }
            HubEvent::NamespaceRefused { error } => {
                let human = format!(
                    "{} {}",
                    p.red("namespace refused:"),
                    hub_chain(error).join(": ")
                );
                self.line(
                    "namespace_refused",
                    None,
                    &human,
                    json!({"error": hub_error_json(error)}),
                )
            }
            HubEvent::ServerLog {
                server,
                level,
                logger,
                data,
                bytes,
            } => {
                let shown = match data {
                    Some(Value::String(text)) => shorten(text),
                    Some(other) => shorten(&other.to_string()),
                    None => format!(
                        "(a message of {bytes} bytes, over the {} KiB shown; not kept)",
                        mcp_hub::MAX_LOG_EVENT_BYTES / 1024
                    ),
                };
                let logger_text = logger
                    .as_deref()
                    .map(|l| format!(" [{}]", escape_line(&one_line(l, 60))))
                    .unwrap_or_default();
                let human = format!(
                    "{}{logger_text}: {shown}",
                    p.cyan(&format!("log {}", level.as_str()))
                );
                let fields = json!({"level": level.as_str(), "logger": logger, "data": data, "bytes": bytes});
                self.line("log", Some(server.as_str()), &human, fields)
            }
            HubEvent::SubscriptionProgress {
                server,
                uri,
                progress,
                total,
                message,
            } => {
                let amount = match total {
                    Some(total) => format!("{progress}/{total}"),
                    None => format!("{progress}"),
                };
                let message_text = message
                    .as_deref()
                    .map(|m| format!(" {}", shorten(m)))
                    .unwrap_or_default();
                let human = format!("progress reading {}: {amount}{message_text}", shorten(uri));
                let fields =
                    json!({"uri": uri, "progress": progress, "total": total, "message": message});
                self.line("progress", Some(server.as_str()), &human, fields)
            }
            HubEvent::SubscriptionReconnecting {
                server,
                uri,
                attempt,
                delay,
            } => {
                let human = format!(
                    "subscription to {} ended; subscribing again in {:.1} s (attempt {attempt})",
                    shorten(uri),
                    delay.as_secs_f64()
                );
                let fields = json!({"uri": uri, "attempt": attempt, "delayMs": millis(*delay)});
                self.line("resubscribing", Some(server.as_str()), &human, fields)
            }
            HubEvent::SubscriptionReadFailed {
                server,
                uri,
                reason,
                error,
            } => {
                let human = format!(
                    "{} {} ({}): {}",
                    p.red("reading failed:"),
                    shorten(uri),
                    reason_name(*reason),
                    hub_chain(error).join(": ")
                );
                let fields = json!({"uri": uri, "reason": reason_name(*reason), "error": hub_error_json(error)});
                self.line("read_failed", Some(server.as_str()), &human, fields)
            }
            // Calls are the user's own (none here); handler failures cannot
            // happen to a channel that the loop drains.
            _ => Ok(()),
        }
    }

    fn resource(&self, event: &ResourceEvent) -> Result<(), CliError> {
        let shown: Vec<String> = event.contents.iter().map(contents_text).collect();
        let human = format!(
            "{} {} ({}): {}",
            self.paint.cyan("resource"),
            shorten(&event.uri),
            reason_name(event.reason),
            shown.join(" | ")
        );
        let fields = json!({
            "uri": event.uri, "reason": reason_name(event.reason),
            "contents": to_json(&event.contents),
        });
        self.line("resource", Some(event.server.as_str()), &human, fields)
    }

    fn subscribed(&self, server: &str, uri: &str) -> Result<(), CliError> {
        let human = format!("subscribed to {}", shorten(uri));
        self.line("subscribed", Some(server), &human, json!({"uri": uri}))
    }

    fn subscription_failed(
        &self,
        server: &str,
        uri: &str,
        error: &HubError,
    ) -> Result<(), CliError> {
        let human = format!(
            "{} {}: {}; tried again when the server is ready again",
            self.paint.red("subscribing failed:"),
            shorten(uri),
            hub_chain(error).join(": ")
        );
        let fields = json!({"uri": uri, "error": hub_error_json(error)});
        self.line("subscription_failed", Some(server), &human, fields)
    }

    fn discarded(&self, server: &str, generation: u64) -> Result<(), CliError> {
        let human = format!("tools of generation {generation} discarded; the active ones stay");
        self.line(
            "discarded",
            Some(server),
            &human,
            json!({"generation": generation}),
        )
    }

    /// A refused command goes to stderr: it is the user's, not an event.
    fn command_refused(&self, problem: &str) {
        eprintln!("mcp watch: {problem}");
    }

    fn command_failed(&self, error: &HubError) {
        eprintln!("mcp watch: {}", hub_chain(error).join(": "));
    }

    fn ended(&self, report: &ShutdownReport) -> Result<(), CliError> {
        let forced: Vec<&str> = report.forced.iter().map(|s| s.as_str()).collect();
        let human = if forced.is_empty() {
            format!("servers shut down in {:.1} s", report.elapsed.as_secs_f64())
        } else {
            format!("servers shut down; killed {}", forced.join(", "))
        };
        let fields = json!({"elapsedMs": millis(report.elapsed), "forced": forced});
        self.line("shutdown", None, &human, fields)
    }
}

/// `added a, b; removed c; changed d` (names escaped).
fn diff_text(diff: &mcp_hub::SnapshotDiff) -> String {
    let mut parts = Vec::new();
    for (label, names) in [
        ("added", &diff.added),
        ("removed", &diff.removed),
        ("changed", &diff.changed),
    ] {
        if !names.is_empty() {
            parts.push(format!("{label} {}", shorten(&names.join(", "))));
        }
    }
    if parts.is_empty() {
        "no difference".to_owned()
    } else {
        parts.join("; ")
    }
}

fn contents_text(contents: &ResourceContents) -> String {
    match contents {
        ResourceContents::Text(t) => shorten(&t.text),
        ResourceContents::Blob(b) => format!(
            "[blob {}, {} bytes of base64]",
            escape_line(&one_line(b.mime_type.as_deref().unwrap_or("(no type)"), 60)),
            b.blob.len()
        ),
        other => format!(
            "[contents of {} in a form this client does not know]",
            shorten(other.uri())
        ),
    }
}

/// A server's text on one line: escaped, at most [`SHOWN_CHARS`], with its
/// full size named when cut (`--json` has all of it).
fn shorten(text: &str) -> String {
    let chars = text.chars().count();
    let single = !text.contains(['\n', '\r']);
    if chars <= SHOWN_CHARS && single {
        return escape_line(text).into_owned();
    }
    let head: String = text.chars().take(SHOWN_CHARS).collect();
    format!(
        "{}… ({} bytes; --json shows all)",
        escape_line(&head),
        text.len()
    )
}

fn reason_name(reason: Reason) -> &'static str {
    match reason {
        Reason::Start => "start",
        Reason::Update => "update",
        Reason::Reconnect => "reconnect",
        _ => "other",
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// `HH:MM:SSZ` (UTC).
fn clock(t: SystemTime) -> String {
    rfc3339(t)[11..].to_owned()
}

/// `YYYY-MM-DDTHH:MM:SSZ` (UTC). Written here: one format, and no date
/// crate is otherwise needed.
fn rfc3339(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// The proleptic Gregorian date of `days` since 1970-01-01 (Howard
/// Hinnant's `civil_from_days`, for non-negative days).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339_utc() {
        let at = |secs: u64| rfc3339(UNIX_EPOCH + Duration::from_secs(secs));
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(1_796_142_723), "2026-12-01T16:32:03Z");
        assert_eq!(
            clock(UNIX_EPOCH + Duration::from_secs(1_796_142_723)),
            "16:32:03Z"
        );
    }

    #[test]
    fn server_text_is_escaped_and_cut_by_name() {
        assert_eq!(shorten("plain"), "plain");
        assert_eq!(shorten("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        let long = "x".repeat(400);
        let shown = shorten(&long);
        assert!(
            shown.ends_with("… (400 bytes; --json shows all)"),
            "{shown}"
        );
        assert!(shorten("one\ntwo").contains("(7 bytes"));
    }
}
