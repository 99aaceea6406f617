//! `mcp tools`: every configured server started in parallel (a live status
//! line each), then the merged namespace under a collision policy.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use mcp_hub::{
    ApprovalHook, Authority, CollisionPolicy, Discovery, Hub, HubError, HubEvent, HubEvents,
    Namespace, NamespaceNote, ServerSpec, anthropic_tools, openai_tools,
};
use mcp_types::text::escape_line;
use mcp_types::{Era, ProtocolVersion};
use serde_json::{Value, json};

use crate::args::{Format, Policy, ToolsArgs};
use crate::commands::inspect::era_name;
use crate::commands::{Context, interruptible};
use crate::config::{self, ServerEntry};
use crate::confirm::ConfirmCalls;
use crate::connect::{self, Origin};
use crate::error::{CliError, Exit, TheirWords, hub_chain, hub_error_json, render_report};
use crate::output::{self, Paint, one_line, table, to_json};
use crate::progress::StatusLines;

/// How one server's start ended.
#[derive(Clone, Debug)]
pub(crate) enum Outcome {
    Ready {
        era: Era,
        version: ProtocolVersion,
        tools: Option<usize>,
    },
    Failed(Arc<HubError>),
    /// Its entry could not be used (an unset `${VAR}`, a directory that
    /// does not exist …), so it was not started; the other servers were.
    Misconfigured(Arc<CliError>),
}

impl Outcome {
    /// Why it failed, in our words (outer first), when it did.
    pub(crate) fn failure_chain(&self) -> Option<Vec<String>> {
        match self {
            Outcome::Ready { .. } => None,
            Outcome::Failed(error) => Some(hub_chain(error)),
            Outcome::Misconfigured(error) => Some(error.chain()),
        }
    }

    /// Why it failed, on one line: the innermost causes, which say most
    /// (outer ones name the server).
    pub(crate) fn failure_line(&self, max: usize) -> Option<String> {
        if let Outcome::Misconfigured(error) = self
            && let CliError::Config { location, problem } = &**error
        {
            // The file is the configuration's own; the place and the
            // problem say it all.
            return Some(one_line(&format!("at `{}`: {problem}", location.path), max));
        }
        let chain = self.failure_chain()?;
        let from = match self {
            Outcome::Failed(_) => chain.len().saturating_sub(2),
            _ => 0,
        };
        Some(one_line(&chain[from..].join(": "), max))
    }

    /// The exit code its failure has, when it failed.
    pub(crate) fn failure_exit(&self) -> Option<Exit> {
        match self {
            Outcome::Ready { .. } => None,
            Outcome::Failed(error) => Some(Exit::of(error.cause())),
            Outcome::Misconfigured(error) => Some(error.exit()),
        }
    }

    /// The `--json` form of its failure (`ERROR`), when it failed.
    fn failure_json(&self) -> Option<Value> {
        match self {
            Outcome::Ready { .. } => None,
            Outcome::Failed(error) => Some(hub_error_json(error)),
            Outcome::Misconfigured(error) => Some(error.to_json()["error"].clone()),
        }
    }
}

/// A server the `reject` policy refused: its tool that collides and the
/// earlier server that has it.
#[derive(Clone, Debug)]
pub(crate) struct Refusal {
    pub(crate) server: String,
    pub(crate) tool: String,
    pub(crate) existing: String,
}

impl Refusal {
    /// Every server the namespace refused.
    pub(crate) fn of(namespace: &Namespace) -> Vec<Refusal> {
        namespace
            .notes()
            .iter()
            .filter_map(|note| match note {
                NamespaceNote::Refused {
                    server,
                    tool,
                    existing,
                } => Some(Refusal {
                    server: server.to_string(),
                    tool: tool.clone(),
                    existing: existing.to_string(),
                }),
                _ => None,
            })
            .collect()
    }

    /// Why, in words (the tool's name is the server's, escaped).
    pub(crate) fn reason(&self) -> String {
        format!(
            "refused by the reject policy: its tool `{}` collides with {}",
            escape_line(&self.tool),
            self.existing
        )
    }
}

/// What `mcp tools` and `mcp demo` print from.
pub(crate) struct Started {
    pub(crate) hub: Hub,
    pub(crate) outcomes: Vec<(String, Outcome)>,
    /// The hub's events after the start (the demo follows them).
    #[cfg_attr(not(feature = "demo"), allow(dead_code))]
    pub(crate) events: Option<HubEvents>,
}

pub(crate) fn policy_of(policy: Policy) -> CollisionPolicy {
    match policy {
        Policy::Prefix => CollisionPolicy::Prefix,
        Policy::Reject => CollisionPolicy::Reject,
        Policy::First => CollisionPolicy::First,
    }
}

fn policy_name(policy: Policy) -> &'static str {
    match policy {
        Policy::Prefix => "prefix",
        Policy::Reject => "reject",
        Policy::First => "first",
    }
}

/// Starts `specs` in parallel under `authority` and `policy`, acting for
/// the context's principal (`--grant`), showing a live line per server, and
/// waits until each is ready or has failed.
pub(crate) async fn start_all(
    ctx: &Context,
    specs: Vec<ServerSpec>,
    authority: Authority,
    policy: CollisionPolicy,
    provider_safe: bool,
    approval: Option<Arc<dyn ApprovalHook>>,
) -> Result<Started, CliError> {
    let mut config = connect::hub_config(policy, provider_safe);
    // The builder returns at once; readiness is followed through events so
    // that each server's line is live.
    config.start_wait = Some(Duration::ZERO);
    let names: Vec<String> = specs.iter().map(|s| s.name.to_string()).collect();
    let mut builder = Hub::builder(config);
    for spec in specs {
        builder = builder.server(spec);
    }
    builder = builder.authority(authority).principal(ctx.principal());
    if let Some(hook) = approval {
        builder = builder.approval(hook);
    }
    let lines = StatusLines::new(&ctx.ui, &names);
    let hub = interruptible(async { Ok(builder.start().await?) }).await?;
    let mut outcomes: BTreeMap<String, Outcome> = BTreeMap::new();
    let mut events = hub.take_events();
    if let Some(events) = &mut events {
        let waited = interruptible(async {
            while outcomes.len() < names.len() {
                let Some(event) = events.next().await else {
                    break;
                };
                match event {
                    HubEvent::Ready {
                        server,
                        era,
                        version,
                        tools,
                    } => {
                        tracing::info!(server = %server, version = ?version.as_str(), "server ready");
                        lines.set(
                            server.as_str(),
                            format!(
                                "ready  {} ({} era){}",
                                escape_line(version.as_str()),
                                era_name(era),
                                crate::output::tool_count(tools)
                            ),
                            true,
                        );
                        outcomes.insert(
                            server.to_string(),
                            Outcome::Ready {
                                era,
                                version,
                                tools,
                            },
                        );
                    }
                    HubEvent::Failed { server, error } => {
                        tracing::info!(server = %server, error = %error, "server failed");
                        lines.set(server.as_str(), "failed".to_owned(), true);
                        outcomes
                            .entry(server.to_string())
                            .or_insert(Outcome::Failed(error));
                    }
                    _ => {}
                }
            }
            Ok(())
        })
        .await;
        if let Err(e) = waited {
            lines.clear();
            hub.shutdown().await;
            return Err(e);
        }
    }
    lines.clear();
    let outcomes = names
        .into_iter()
        .filter_map(|n| outcomes.remove(&n).map(|o| (n, o)))
        .collect();
    Ok(Started {
        hub,
        outcomes,
        events,
    })
}

/// Every configured server that is not disabled, started with
/// [`start_all`] (what `mcp tools` and `mcp call NAME` work on), with their
/// entries. A server whose entry cannot be used (an unset `${VAR}`, a
/// missing directory) is not started and is [`Outcome::Misconfigured`];
/// the others start all the same. Outcomes are in file order.
pub(crate) async fn start_configured(
    ctx: &Context,
    policy: CollisionPolicy,
    provider_safe: bool,
) -> Result<(Started, Vec<ServerEntry>), CliError> {
    let config = config::load(ctx.config.as_deref(), ctx.prompt())?;
    let entries: Vec<ServerEntry> = config
        .servers
        .iter()
        .filter(|e| !e.disabled)
        .cloned()
        .collect();
    let origin = Origin {
        file: &config.file,
        command_line: false,
        variables: config.variables.as_ref(),
    };
    let mut specs = Vec::with_capacity(entries.len());
    let mut misconfigured: BTreeMap<String, Arc<CliError>> = BTreeMap::new();
    for entry in &entries {
        match connect::spec(origin, entry, ctx.start_options(), Discovery::Eager) {
            Ok(spec) => specs.push(spec),
            Err(error) => {
                misconfigured.insert(entry.name.clone(), Arc::new(error));
            }
        }
    }
    // The authority names exactly the servers that are registered.
    let registered = || {
        entries
            .iter()
            .filter(|e| !misconfigured.contains_key(&e.name))
    };
    let authority = connect::authority(registered());
    let approval = ConfirmCalls::for_entries(registered(), ctx.yeses.clone());
    let mut started = start_all(ctx, specs, authority, policy, provider_safe, approval).await?;
    let mut outcomes: BTreeMap<String, Outcome> = started.outcomes.drain(..).collect();
    started.outcomes = entries
        .iter()
        .filter_map(|e| {
            let outcome = match misconfigured.remove(&e.name) {
                Some(error) => Outcome::Misconfigured(error),
                None => outcomes.remove(&e.name)?,
            };
            Some((e.name.clone(), outcome))
        })
        .collect();
    Ok((started, entries))
}

pub(crate) async fn run(ctx: &Context, args: ToolsArgs) -> Result<Exit, CliError> {
    let provider_safe = matches!(args.format, Format::Anthropic | Format::Openai);
    let (started, entries) = start_configured(ctx, policy_of(args.policy), provider_safe).await?;
    let namespace = started.hub.namespace();
    let hidden = hidden_by_permission(&entries, &ctx.grants, &started);
    let printed = print(ctx, &args, &started, &namespace, &hidden);
    started.hub.shutdown().await;
    printed?;
    // The first server (in file order) that failed decides: 2 for one
    // that could not be started or reached, 1 for an entry that could not
    // be used.
    let first_failure = started.outcomes.iter().find_map(|(_, o)| o.failure_exit());
    Ok(first_failure.unwrap_or(Exit::Ok))
}

/// A server, or one of its tools, hidden because the principal lacks the
/// permission the configuration tags it with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Hidden {
    pub(crate) server: String,
    /// `None`: the whole server (its `permission`).
    pub(crate) tool: Option<String>,
    pub(crate) permission: String,
}

impl Hidden {
    /// The note shown: who is hidden, and the flag that shows it.
    pub(crate) fn message(&self) -> String {
        let permission = escape_line(&self.permission);
        match &self.tool {
            None => format!(
                "server {} needs permission `{permission}`: its tools are hidden (show them with --grant {permission})",
                self.server
            ),
            Some(tool) => format!(
                "tool `{}` of server {} needs permission `{permission}`: it is hidden (show it with --grant {permission})",
                escape_line(tool),
                self.server
            ),
        }
    }
}

/// What the permission tags of `entries` hide from a principal granted
/// `grants`: each ready server whose `permission` is not granted, else each
/// tool it lists (and its allow-list lets through) whose
/// `tool_permissions` tag is not granted.
pub(crate) fn hidden_by_permission(
    entries: &[ServerEntry],
    grants: &[String],
    started: &Started,
) -> Vec<Hidden> {
    let granted = |p: &str| grants.iter().any(|g| g == p);
    let mut hidden = Vec::new();
    for (name, outcome) in &started.outcomes {
        let Outcome::Ready { .. } = outcome else {
            continue;
        };
        let Some(entry) = entries.iter().find(|e| &e.name == name) else {
            continue;
        };
        if let Some(permission) = entry.permission.as_ref().filter(|p| !granted(p)) {
            hidden.push(Hidden {
                server: name.clone(),
                tool: None,
                permission: permission.clone(),
            });
            continue;
        }
        let Ok(Some(snapshot)) = started.hub.active_snapshot(name) else {
            continue;
        };
        let allowed = |tool: &str| {
            entry
                .allow
                .as_ref()
                .and_then(|a| a.tools.as_ref())
                .is_none_or(|t| t.contains(tool))
        };
        for (tool, permission) in &entry.tool_permissions {
            if !granted(permission) && allowed(tool) && snapshot.get(tool).is_some() {
                hidden.push(Hidden {
                    server: name.clone(),
                    tool: Some(tool.clone()),
                    permission: permission.clone(),
                });
            }
        }
    }
    hidden
}

fn print(
    ctx: &Context,
    args: &ToolsArgs,
    started: &Started,
    namespace: &Namespace,
    hidden: &[Hidden],
) -> Result<(), CliError> {
    // Failures go to stderr in every format, labelled by server.
    for (name, outcome) in &started.outcomes {
        let Some(causes) = outcome.failure_chain() else {
            continue;
        };
        let theirs = match outcome {
            Outcome::Failed(error) => TheirWords::of(error),
            _ => TheirWords::default(),
        };
        let what = match outcome {
            Outcome::Misconfigured(_) => "was not started",
            _ => "did not start",
        };
        let mut chain = vec![format!("server `{name}` {what}")];
        chain.extend(causes);
        eprint!(
            "{}",
            render_report(&chain, theirs, ctx.ui.err(), ctx.ui.verbose > 0)
        );
    }
    let refused = Refusal::of(namespace);
    match args.format {
        Format::Table => output::print(&human(started, namespace, &refused, hidden, ctx.ui.out())),
        Format::Json => output::print_json(&as_json(
            policy_name(args.policy),
            started,
            namespace,
            &refused,
            hidden,
        )),
        Format::Anthropic => {
            output::print_json(&anthropic_tools(namespace).map_err(CliError::Export)?)
        }
        Format::Openai => output::print_json(&openai_tools(namespace).map_err(CliError::Export)?),
    }
}

/// Bare names several servers share (refused as ambiguous under `prefix`),
/// with the names to use instead.
pub(crate) fn shared_names(namespace: &Namespace) -> Vec<(String, Vec<String>)> {
    let mut by_local: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for tool in namespace.tools().iter().filter(|t| !t.is_helper()) {
        by_local
            .entry(tool.tool().name.as_str())
            .or_default()
            .push(tool.name());
    }
    by_local
        .into_iter()
        .filter(|(local, exposed)| exposed.len() > 1 && namespace.resolve(local).is_err())
        .map(|(local, exposed)| {
            (
                local.to_owned(),
                exposed.into_iter().map(str::to_owned).collect(),
            )
        })
        .collect()
}

/// One row per server: its status (`ready`, `refused` by the `reject`
/// policy, or `failed`), protocol and tools, and why when it is not ready.
pub(crate) fn servers_table(outcomes: &[(String, Outcome)], refused: &[Refusal]) -> String {
    let refusal = |name: &str| refused.iter().find(|r| r.server == name);
    let any_reason = outcomes
        .iter()
        .any(|(name, o)| o.failure_chain().is_some() || refusal(name).is_some());
    let rows = outcomes
        .iter()
        .map(|(name, outcome)| {
            let mut row = match outcome {
                Outcome::Ready {
                    era,
                    version,
                    tools,
                } => vec![
                    name.clone(),
                    if refusal(name).is_some() {
                        "refused"
                    } else {
                        "ready"
                    }
                    .to_owned(),
                    format!("{version} ({})", era_name(*era)),
                    tools.map(|t| t.to_string()).unwrap_or_default(),
                ],
                Outcome::Failed(_) | Outcome::Misconfigured(_) => {
                    vec![
                        name.clone(),
                        "failed".to_owned(),
                        "-".to_owned(),
                        "-".to_owned(),
                    ]
                }
            };
            if any_reason {
                row.push(match (outcome.failure_line(90), refusal(name)) {
                    (Some(why), _) => why,
                    (None, Some(refusal)) => refusal.reason(),
                    (None, None) => String::new(),
                });
            }
            row
        })
        .collect();
    let headers: &[&str] = if any_reason {
        &["server", "status", "protocol", "tools", "reason"]
    } else {
        &["server", "status", "protocol", "tools"]
    };
    table(headers, rows)
}

pub(crate) fn namespace_table(namespace: &Namespace) -> String {
    let with_aliases = namespace.tools().iter().any(|t| !t.aliases().is_empty());
    let rows = namespace
        .tools()
        .iter()
        .map(|t| {
            let mut row = vec![t.name().to_owned()];
            if with_aliases {
                row.push(t.aliases().join(", "));
            }
            row.push(t.server().to_string());
            row.push(one_line(t.tool().description.as_deref().unwrap_or(""), 60));
            row
        })
        .collect();
    let headers: &[&str] = if with_aliases {
        &["name", "also", "server", "description"]
    } else {
        &["name", "server", "description"]
    };
    table(headers, rows)
}

pub(crate) fn note_text(note: &NamespaceNote) -> String {
    match note {
        NamespaceNote::Shadowed {
            server,
            tool,
            kept_by,
        } => format!(
            "`{}` of {server} is reachable only qualified: {kept_by} keeps the bare name",
            escape_line(tool)
        ),
        NamespaceNote::Refused {
            server,
            tool,
            existing,
        } => format!(
            "server {server} is refused: its tool `{}` collides with {existing}",
            escape_line(tool)
        ),
        NamespaceNote::NameConflict { name, servers } => {
            let servers: Vec<String> = servers.iter().map(ToString::to_string).collect();
            format!(
                "`{}` is claimed by {}; neither is exposed under it",
                escape_line(name),
                servers.join(" and ")
            )
        }
        NamespaceNote::Reserved {
            server,
            tool,
            owner,
        } => format!(
            "`{}` of {server} is reachable only as `{server}/{}`: names under `{owner}/` belong to {owner}",
            escape_line(tool),
            escape_line(tool)
        ),
        NamespaceNote::HelperSkipped { server, helper } => format!(
            "helper `{}` of {server} is left out: a real tool has its name",
            escape_line(helper.local_name())
        ),
        other => format!("{other:?}"),
    }
}

fn human(
    started: &Started,
    namespace: &Namespace,
    refused: &[Refusal],
    hidden: &[Hidden],
    paint: Paint,
) -> String {
    let mut out = servers_table(&started.outcomes, refused);
    out.push('\n');
    if namespace.tools().is_empty() {
        out.push_str(&paint.dim("(no tools)\n"));
    } else {
        out.push_str(&namespace_table(namespace));
    }
    let shared = shared_names(namespace);
    let notes = namespace.notes();
    if !shared.is_empty() || !notes.is_empty() || !hidden.is_empty() {
        out.push('\n');
    }
    for (name, candidates) in shared {
        out.push_str(&format!(
            "{} `{}` is offered by several servers; call it as {}\n",
            paint.yellow("note:"),
            escape_line(&name),
            escape_line(&candidates.join(", "))
        ));
    }
    for note in notes {
        out.push_str(&format!("{} {}\n", paint.yellow("note:"), note_text(note)));
    }
    for h in hidden {
        out.push_str(&format!("{} {}\n", paint.yellow("note:"), h.message()));
    }
    out
}

fn as_json(
    policy: &str,
    started: &Started,
    namespace: &Namespace,
    refused: &[Refusal],
    hidden: &[Hidden],
) -> Value {
    let servers: Vec<Value> = started
        .outcomes
        .iter()
        .map(|(name, outcome)| match outcome {
            Outcome::Ready {
                era,
                version,
                tools,
            } => {
                let mut server = json!({
                    "name": name, "status": "ready", "era": era_name(*era),
                    "protocolVersion": version.as_str(), "tools": tools,
                });
                if let Some(refusal) = refused.iter().find(|r| &r.server == name) {
                    server["status"] = json!("refused");
                    server["reason"] = json!(refusal.reason());
                    server["tool"] = json!(refusal.tool);
                    server["collidesWith"] = json!(refusal.existing);
                }
                server
            }
            failed => json!({
                "name": name, "status": "failed", "error": failed.failure_json(),
            }),
        })
        .collect();
    let tools: Vec<Value> = namespace
        .tools()
        .iter()
        .map(|t| {
            let def = t.tool();
            json!({
                "name": t.name(),
                "aliases": t.aliases(),
                "server": t.server().as_str(),
                "tool": def.name,
                "helper": t.is_helper(),
                "title": def.title,
                "description": def.description,
                "inputSchema": def.input_schema.to_value().unwrap_or(Value::Null),
                "annotations": def.annotations.as_ref().map(to_json),
            })
        })
        .collect();
    let ambiguous: Vec<Value> = shared_names(namespace)
        .into_iter()
        .map(|(name, candidates)| json!({"name": name, "candidates": candidates}))
        .collect();
    let notes: Vec<Value> = namespace
        .notes()
        .iter()
        .map(|n| json!({"message": note_text(n)}))
        .chain(hidden.iter().map(|h| {
            let mut note = json!({
                "message": h.message(),
                "server": h.server,
                "permission": h.permission,
            });
            if let Some(tool) = &h.tool {
                note["tool"] = json!(tool);
            }
            note
        }))
        .collect();
    json!({
        "policy": policy,
        "servers": servers,
        "tools": tools,
        "ambiguous": ambiguous,
        "notes": notes,
    })
}
