//! `mcp playground`: every enabled configured server held through the hub
//! as `mcp watch` holds them (restarted with back-off, changed tool lists
//! held for review, log messages at `info`), and `mcp-playground`'s page
//! over them on 127.0.0.1. The URL printed (and opened, unless `--no-open`)
//! carries a one-time code; Ctrl-C ends it and shuts the servers down. The
//! servers' questions (elicitation, sampling) are asked on the page.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use mcp_hub::{Adoption, Backoff, Discovery, Hub, RestartPolicy};
use mcp_playground::{Playground, PlaygroundConfig, QuestionKind, Questions};
use mcp_types::LoggingLevel;

use crate::args::PlaygroundArgs;
use crate::commands::tools::policy_of;
use crate::commands::{Context, interruptible};
use crate::config::{self, ServerEntry};
use crate::confirm::ConfirmCalls;
use crate::connect::{self, Origin};
use crate::error::{CliError, Exit};
use crate::output;

pub(crate) async fn run(ctx: &Context, args: PlaygroundArgs) -> Result<Exit, CliError> {
    let config = config::load(ctx.config.as_deref(), ctx.prompt())?;
    let entries: Vec<&ServerEntry> = config.servers.iter().filter(|e| !e.disabled).collect();
    let origin = Origin {
        file: &config.file,
        command_line: false,
        variables: config.variables.as_ref(),
    };
    let mut hub_config = connect::hub_config(policy_of(args.policy), false);
    // Nothing is waited for: the page shows each server as it comes.
    hub_config.start_wait = Some(Duration::ZERO);
    let mut builder = Hub::builder(hub_config)
        .authority(connect::authority(entries.iter().copied()))
        .principal(ctx.principal());
    // Nobody here answers a question: marked calls need `--yes`.
    if let Some(hook) = ConfirmCalls::for_entries(entries.iter().copied(), ctx.yeses.clone()) {
        builder = builder.approval(hook);
    }
    // The servers' questions wait for the page; the terminal says so (the
    // page may be closed, or behind other windows).
    let paint = ctx.ui.err();
    let gate = std::sync::Mutex::new(Gate::default());
    let questions = Questions::new().on_asked(move |asked| {
        // A server that asks and withdraws in a loop cannot flood the
        // terminal: a line a second at most, the rest counted.
        let admitted = gate
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .admit(std::time::Instant::now());
        let Some(unsaid) = admitted else {
            return;
        };
        let what = match asked.kind {
            QuestionKind::Form => "a form to fill in",
            QuestionKind::Url => "a page to open",
            QuestionKind::Sampling => "a reply in the model's place",
            _ => "an answer",
        };
        let more = if unsaid > 0 {
            format!("; {unsaid} more asked since the last line")
        } else {
            String::new()
        };
        eprintln!(
            "{} server `{}` asks for {what}: answer it on the page ({} waiting{more})",
            paint.yellow("question:"),
            mcp_types::text::escape_line(&asked.server),
            asked.waiting,
        );
    });
    for entry in &entries {
        let mut spec = connect::spec(origin, entry, ctx.start_options(), Discovery::Eager)?
            .restart(RestartPolicy::Backoff(Backoff::default()))
            .adoption(Adoption::Review)
            .log_level(LoggingLevel::Info);
        let asks = questions.handler(&entry.name);
        spec.session.handlers = std::mem::take(&mut spec.session.handlers)
            .elicitation(asks.clone())
            .sampling(asks);
        builder = builder.server(spec);
    }
    let hub = Arc::new(interruptible(async { Ok(builder.start().await?) }).await?);
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port.unwrap_or(0)));
    let served = serve(ctx, &args, Arc::clone(&hub), address, questions).await;
    let report = hub.shutdown().await;
    tracing::info!(elapsed = ?report.elapsed, forced = report.forced.len(), "servers shut down");
    served.map(|()| Exit::Ok)
}

async fn serve(
    ctx: &Context,
    args: &PlaygroundArgs,
    hub: Arc<Hub>,
    address: SocketAddr,
    questions: Questions,
) -> Result<(), CliError> {
    let playground = Playground::bind(hub, address, PlaygroundConfig::default())
        .await
        .map_err(CliError::Playground)?
        .answering(questions);
    let url = playground.launch_url();
    let paint = ctx.ui.out();
    // The URL goes to this terminal only, never to a log: its code opens
    // the page once.
    output::print(&format!(
        "{} {}\n  {url}\n{}\n",
        paint.bold("mcp playground:"),
        playground.origin(),
        paint.dim(
            "(the link works once: it opens a session for one browser; Ctrl-C ends the playground)"
        )
    ))?;
    if !args.no_open
        && let Err(problem) = open_browser(&url)
    {
        eprintln!(
            "{} could not open a browser ({problem}): open the link above yourself",
            ctx.ui.err().yellow("warning:")
        );
    }
    playground
        .serve(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(CliError::Playground)
}

/// At most one line a second about the questions asked.
#[derive(Debug, Default)]
struct Gate {
    last: Option<std::time::Instant>,
    unsaid: u64,
}

impl Gate {
    /// `Some(questions not said since the last line)` when a line may be
    /// printed at `now`; `None` (and one more counted) otherwise.
    fn admit(&mut self, now: std::time::Instant) -> Option<u64> {
        if self
            .last
            .is_some_and(|last| now.saturating_duration_since(last) < Duration::from_secs(1))
        {
            self.unsaid += 1;
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.unsaid))
    }
}

/// Hands `url` to the desktop's opener (`open` on macOS, `xdg-open`
/// elsewhere). Never through a shell; its output is not ours to show.
fn open_browser(url: &str) -> Result<(), std::io::Error> {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let mut child = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    // Reaped on a thread of its own: the opener may outlive the wait.
    std::thread::spawn(move || child.wait());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn question_lines_come_at_most_once_a_second_and_count_the_rest() {
        let mut gate = Gate::default();
        let start = std::time::Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        assert_eq!(gate.admit(at(0)), Some(0));
        assert_eq!(gate.admit(at(10)), None);
        assert_eq!(gate.admit(at(999)), None);
        assert_eq!(gate.admit(at(1000)), Some(2));
        assert_eq!(gate.admit(at(2500)), Some(0));
    }
}
