//! The commands, and what the single-server ones share: finding the server
//! (configured or one-off), starting it, Ctrl-C, shutting it down.

pub(crate) mod add;
pub(crate) mod auth;
pub(crate) mod call;
#[cfg(feature = "demo")]
pub(crate) mod demo;
pub(crate) mod inspect;
#[cfg(feature = "playground")]
pub(crate) mod playground;
pub(crate) mod prompt;
pub(crate) mod read;
pub(crate) mod serve;
pub(crate) mod servers;
pub(crate) mod skills;
pub(crate) mod tools;
pub(crate) mod trust;
pub(crate) mod watch;

use std::collections::BTreeSet;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use mcp_hub::{Discovery, Hub, Principal};

use crate::args::{OneOff, RemoteTransport};
use crate::config::secrets::check_variable_name;
use crate::config::{self, Prompt, ServerEntry, is_variable_name};
use crate::connect::{self, Origin, StartOptions};
use crate::error::{AddRefusal, CliError};
use crate::output::Ui;
use crate::progress::Activity;

/// What every command gets.
#[derive(Clone, Debug)]
pub(crate) struct Context {
    pub(crate) config: Option<PathBuf>,
    pub(crate) ui: Ui,
    /// Permissions granted with `--grant` (checked against the servers'
    /// `permission` and `tool_permissions` tags).
    pub(crate) grants: Vec<String>,
    /// Yeses to the calls the configuration marks with `confirm`.
    pub(crate) yeses: crate::confirm::Yeses,
    /// A person at the terminal answers the servers' questions
    /// (elicitation, sampling), for `call`, `read` and `prompt`.
    pub(crate) answers_questions: bool,
}

impl Context {
    /// Who the hub acts for: the CLI with the `--grant`ed permissions.
    pub(crate) fn principal(&self) -> Principal {
        connect::principal(&self.grants)
    }

    pub(crate) fn start_options(&self) -> StartOptions {
        StartOptions {
            verbose: self.ui.verbose > 0,
            cwd_root: true,
            questions: self.answers_questions,
        }
    }

    /// Whether an unapproved project file may be asked about (only with a
    /// person at a terminal).
    pub(crate) fn prompt(&self) -> Prompt {
        if self.ui.interactive {
            Prompt::Ask
        } else {
            Prompt::Refuse
        }
    }
}

/// The one server a command talks to.
#[derive(Debug)]
pub(crate) struct Target {
    pub(crate) entry: ServerEntry,
    pub(crate) file: PathBuf,
    pub(crate) command_line: bool,
    /// The variables `${VAR}` may read (`None`: any).
    pub(crate) variables: Option<BTreeSet<String>>,
}

impl Target {
    pub(crate) fn origin(&self) -> Origin<'_> {
        Origin {
            file: &self.file,
            command_line: self.command_line,
            variables: self.variables.as_ref(),
        }
    }

    pub(crate) fn name(&self) -> &str {
        &self.entry.name
    }
}

/// The target named `server` in the configuration, or the one-off server of
/// the command line (never both).
pub(crate) fn resolve(
    ctx: &Context,
    what: &'static str,
    server: Option<&str>,
    one_off: &OneOff,
) -> Result<Target, CliError> {
    match (server, one_off.is_given()) {
        (Some(_), true) => Err(CliError::ServerAndOneOff { what }),
        (None, false) => Err(CliError::NoServerGiven),
        (Some(name), false) => {
            if let Some(flag) = one_off.detail_flag() {
                return Err(CliError::OneOffFlag { flag });
            }
            let config = config::load(ctx.config.as_deref(), ctx.prompt())?;
            let entry = config.server(name)?.clone();
            Ok(Target {
                entry,
                file: config.file,
                command_line: false,
                variables: config.variables,
            })
        }
        (None, true) => Ok(Target {
            entry: one_off_entry(one_off)?.with_roots(&one_off.roots),
            file: PathBuf::from("(command line)"),
            command_line: true,
            variables: None,
        }),
    }
}

/// The entry of a server given on the command line, its flags checked.
/// Nothing refused here is echoed back: a `--header` or `-e` value may be
/// a secret, and a token may stand where a variable's name belongs.
fn one_off_entry(one_off: &OneOff) -> Result<ServerEntry, CliError> {
    let refused = |flag: &'static str, refusal: AddRefusal| CliError::FlagRefused { flag, refusal };
    let variable = |flag: &'static str, name: &str| {
        check_variable_name(name).map_err(|problem| refused(flag, problem.into()))
    };
    if let Some(var) = &one_off.token_env {
        variable("--token-env", var)?;
    }
    for name in &one_off.env_inherit {
        variable("--env-inherit", name)?;
    }
    let mut env = Vec::with_capacity(one_off.env.len());
    for pair in &one_off.env {
        let (name, value) = name_value(pair).ok_or(refused("--env", AddRefusal::NotNameValue))?;
        if !is_variable_name(name) {
            return Err(refused("--env", AddRefusal::NotAVariableName));
        }
        env.push((name.to_owned(), value.to_owned()));
    }
    let mut headers = Vec::with_capacity(one_off.headers.len());
    for pair in &one_off.headers {
        let (name, value) =
            name_value(pair).ok_or(refused("--header", AddRefusal::NotNameValue))?;
        if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
            return Err(refused("--header", AddRefusal::InvalidHeaderName));
        }
        headers.push((name.to_owned(), value.to_owned()));
    }
    Ok(match &one_off.url {
        Some(url) => ServerEntry::one_off_remote(
            url,
            one_off.transport.unwrap_or(RemoteTransport::Http),
            one_off.token_env.as_deref(),
            headers,
        ),
        None => ServerEntry::one_off_stdio(
            &one_off.command,
            env,
            one_off.env_inherit.clone(),
            one_off.cwd.clone(),
        ),
    })
}

/// `NAME=VALUE` split at its first `=`, the name not empty.
fn name_value(pair: &str) -> Option<(&str, &str)> {
    pair.split_once('=').filter(|(name, _)| !name.is_empty())
}

/// Splits positional words into the server name (when not one-off) and the
/// rest.
pub(crate) fn split_server<'a>(
    words: &'a [String],
    one_off: &OneOff,
) -> (Option<&'a str>, &'a [String]) {
    if one_off.is_given() {
        (None, words)
    } else {
        match words.split_first() {
            Some((server, rest)) => (Some(server.as_str()), rest),
            None => (None, words),
        }
    }
}

/// Runs `fut` unless Ctrl-C comes first (then the future is dropped, which
/// cancels its request: the server is sent `notifications/cancelled`).
pub(crate) async fn interruptible<T>(
    fut: impl Future<Output = Result<T, CliError>>,
) -> Result<T, CliError> {
    tokio::select! {
        result = fut => result,
        _ = tokio::signal::ctrl_c() => Err(CliError::Interrupted),
    }
}

/// Starts the target, runs `op` on it, and shuts it down whatever happened.
pub(crate) async fn with_server<T, F, Fut>(
    ctx: &Context,
    target: &Target,
    discovery: Discovery,
    op: F,
) -> Result<T, CliError>
where
    F: FnOnce(Arc<Hub>) -> Fut,
    Fut: Future<Output = Result<T, CliError>>,
{
    let activity = Activity::start(&ctx.ui, &format!("starting {}…", target.name()));
    let started = interruptible(connect::start_one(
        target.origin(),
        &target.entry,
        ctx.start_options(),
        discovery,
        ctx.principal(),
        ctx.yeses.clone(),
    ))
    .await;
    activity.finish();
    let hub = Arc::new(started?);
    if let Ok(status) = hub.status(target.name())
        && let Some(info) = &status.info
    {
        tracing::info!(
            server = target.name(),
            version = ?info.version.as_str(),
            implementation = ?info.implementation.name,
            "server ready"
        );
    }
    then_shut_down(&hub, op(Arc::clone(&hub))).await
}

/// Runs `fut` on the servers of `hub` unless Ctrl-C comes first, then shuts
/// them down whatever happened.
pub(crate) async fn then_shut_down<T>(
    hub: &Hub,
    fut: impl Future<Output = Result<T, CliError>>,
) -> Result<T, CliError> {
    let result = interruptible(fut).await;
    if matches!(result, Err(CliError::Interrupted)) {
        // Let the session's driver write the cancellation before the
        // server's input is closed.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let report = hub.shutdown().await;
    tracing::info!(elapsed = ?report.elapsed, forced = report.forced.len(), "servers shut down");
    result
}
