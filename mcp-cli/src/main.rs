//! The `mcp` command: inspect, call and debug MCP servers.
//!
//! The CLI holds no protocol logic of its own: everything goes through the
//! library crates (`mcp-hub` for servers and the namespace, `mcp-session`
//! and `mcp-transport` below it). This crate maps configuration to their
//! settings, and results to tables, JSON and exit codes (see `error.rs` and
//! the README).
#![forbid(unsafe_code)]

mod args;
mod coerce;
mod commands;
mod config;
mod confirm;
#[cfg(feature = "conformance-client")]
mod conformance;
mod connect;
mod error;
mod output;
mod progress;
mod questions;
mod safe_write;
mod suggest;

use std::process::ExitCode;

use clap::Parser;
use clap::error::ErrorKind;

use crate::args::{Cli, Command};
use crate::commands::Context;
use crate::error::{CliError, Exit};
use crate::output::Ui;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // Help and version are not errors; every usage error is 1.
            return match e.kind() {
                ErrorKind::DisplayHelp
                | ErrorKind::DisplayVersion
                | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => ExitCode::SUCCESS,
                _ => ExitCode::from(Exit::Usage.code()),
            };
        }
    };
    let ui = Ui::detect(cli.verbose);
    init_logging(cli.verbose, ui.err_color);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcp: cannot start the async runtime: {e}");
            return ExitCode::from(Exit::Usage.code());
        }
    };
    // The commands that run one operation a person waits for answer their
    // servers' questions at a terminal.
    let one_operation = matches!(
        cli.command,
        Command::Call(_) | Command::Read(_) | Command::Prompt(_)
    );
    let ctx = Context {
        config: cli.config.clone(),
        ui,
        grants: cli.grant.clone(),
        yeses: confirm::Yeses::default(),
        // The listings declare the same, since a server may list the tools
        // that ask only to a client that can answer.
        answers_questions: ui.interactive
            && (one_operation || matches!(cli.command, Command::Tools(_) | Command::Inspect(_))),
    };
    // Whether a terminal would have let this command answer the servers'
    // questions it now could not (for the error's hint).
    let a_terminal_would_ask = !ui.interactive && one_operation;
    let json = wants_json(&cli.command);
    let one_off_url = one_off_url(&cli.command).map(str::to_owned);
    let result = runtime.block_on(run(&ctx, cli.command));
    // Servers are shut down by now; anything left (a stuck blocking read of
    // stdin in `__serve-demo`) must not hold the exit.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    match result {
        Ok(exit) => ExitCode::from(exit.code()),
        Err(e) => {
            if json {
                let _ = output::print_json(&e.to_json());
            }
            eprint!(
                "{}",
                e.report(
                    ui.err(),
                    ui.verbose > 0,
                    one_off_url.as_deref(),
                    a_terminal_would_ask
                )
            );
            ExitCode::from(e.exit().code())
        }
    }
}

/// Whether the command prints JSON (so that errors do too).
fn wants_json(command: &Command) -> bool {
    match command {
        Command::Inspect(a) => a.json,
        Command::Call(a) => a.json,
        Command::Read(a) => a.json,
        Command::Prompt(a) => a.json,
        Command::Tools(a) => a.format != args::Format::Table,
        Command::Watch(a) => a.json,
        Command::Skills(a) => a.json,
        Command::Skill(a) => a.json,
        Command::List(a) => a.json,
        Command::Get(a) => a.json,
        _ => false,
    }
}

/// The `--url` of a server the command names on the command line (the
/// sign-in hint of its errors names it).
fn one_off_url(command: &Command) -> Option<&str> {
    let target = match command {
        Command::Inspect(a) => &a.target,
        Command::Call(a) => &a.target,
        Command::Read(a) => &a.target,
        Command::Prompt(a) => &a.target,
        Command::Skills(a) => &a.target,
        Command::Skill(a) => &a.target,
        _ => return None,
    };
    target.url.as_deref()
}

async fn run(ctx: &Context, command: Command) -> Result<Exit, CliError> {
    let ok = |()| Exit::Ok;
    match command {
        Command::Inspect(args) => commands::inspect::run(ctx, args).await.map(ok),
        Command::Call(args) => commands::call::run(ctx, args).await,
        Command::Read(args) => commands::read::run(ctx, args).await.map(ok),
        Command::Prompt(args) => commands::prompt::run(ctx, args).await.map(ok),
        Command::Tools(args) => commands::tools::run(ctx, args).await,
        Command::Watch(args) => commands::watch::run(ctx, args).await,
        Command::Skills(args) => commands::skills::list(ctx, args).await.map(ok),
        Command::Skill(args) => commands::skills::load(ctx, args).await.map(ok),
        Command::List(args) => commands::servers::list(ctx, &args).map(ok),
        Command::Get(args) => commands::servers::get(ctx, &args).map(ok),
        Command::Add(args) => commands::add::run(ctx, &args).map(ok),
        Command::Remove(args) => commands::servers::remove(ctx, &args).map(ok),
        Command::Trust(args) => commands::trust::run(ctx, &args).map(ok),
        Command::Login(args) => commands::auth::login(ctx, &args).await.map(ok),
        Command::Logout(args) => commands::auth::logout(ctx, &args).await.map(ok),
        #[cfg(feature = "playground")]
        Command::Playground(args) => commands::playground::run(ctx, args).await,
        Command::Serve(args) => commands::serve::run(ctx, args).await,
        #[cfg(feature = "demo")]
        Command::Demo(_) => commands::interruptible(commands::demo::run(ctx))
            .await
            .map(ok),
        #[cfg(feature = "conformance-client")]
        Command::ConformanceClient { url } => conformance::run(&url)
            .await
            .map(ok)
            .map_err(CliError::Conformance),
        #[cfg(feature = "demo")]
        Command::ServeDemo { name } => {
            let code = commands::demo::serve(&name).await?;
            Ok(if code == 0 {
                Exit::Ok
            } else {
                Exit::Unreachable
            })
        }
    }
}

/// Logs go to stderr: `warn` by default, `-v` info, `-vv` debug, `-vvv`
/// trace; `RUST_LOG` wins. With `-v` the servers' stderr lines are logged
/// too (target `mcp_transport::stderr`).
fn init_logging(verbose: u8, color: bool) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(color)
        .try_init();
}
