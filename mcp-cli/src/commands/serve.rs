//! `mcp serve --stdio`: every configured server behind one hub, served as
//! one MCP server on standard input and output (the gateway, `mcp-gateway`);
//! `mcp serve --http ADDR`: the same hub served over Streamable HTTP to any
//! number of hosts (loopback unless TLS and a bearer token are given).
//! The hub is built as `mcp tools` builds it (policy, aliases, the
//! configuration as the authority, `--grant`, `max_content_bytes`), with
//! restarts on like `mcp watch`, and changed tool lists held for review
//! unless `--adopt`. Standard output is the host's channel: nothing else is
//! written there; what the operator should know goes to the logs (stderr).
//!
//! `mcp serve --control SOCKET pending|adopt SERVER GENERATION|discard
//! SERVER GENERATION` reviews a running gateway started with that socket.

use std::time::Duration;

use mcp_gateway::{Gateway, GatewayConfig, GatewayError, HostApproval, HostLink, control, http};
use mcp_hub::{Adoption, Backoff, Discovery, Hub, RestartPolicy};
use mcp_types::text::escape_line;

use crate::args::ServeArgs;
use crate::commands::Context;
use crate::commands::tools::policy_of;
use crate::config::{self, ServerEntry};
use crate::confirm::Marked;
use crate::connect::{self, Origin, StartOptions};
use crate::error::{CliError, Exit};
use crate::output;

pub(crate) async fn run(ctx: &Context, args: ServeArgs) -> Result<Exit, CliError> {
    if args.stdio || args.http.is_some() {
        serve(ctx, args).await
    } else {
        match (&args.control, args.command.is_empty()) {
            (Some(socket), false) => review(socket, &args.command).await,
            _ => Err(CliError::ServeHow),
        }
    }
}

/// The HTTP endpoint of `--http`, bound before any server starts (an
/// exposure refused, a TLS file or an address in use fail at once).
async fn endpoint(args: &ServeArgs) -> Result<Option<http::HttpServer>, CliError> {
    let Some(addr) = args.http else {
        return Ok(None);
    };
    let mut settings = http::HttpConfig::default();
    if let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) {
        settings = settings.tls(cert, key);
    }
    if let Some(variable) = &args.token_env {
        let token = std::env::var(variable)
            .ok()
            .and_then(http::BearerToken::new)
            .ok_or_else(|| CliError::ServeToken {
                variable: variable.clone(),
            })?;
        settings = settings.bearer(token);
    }
    for origin in &args.allow_origin {
        settings = settings.allow_origin(origin);
    }
    if let Some(connections) = args.peer_connections {
        settings = settings.max_connections_per_peer(usize::from(connections));
    }
    settings = settings.busy_poll(Duration::from_micros(args.busy_poll));
    if let Some(ms) = args.sse_poll {
        let retry = settings.resume.retry;
        settings = settings.sse_polling(Duration::from_millis(ms), retry);
    }
    http::check_exposure(&addr, &settings)
        .map_err(|e| CliError::Gateway(GatewayError::Endpoint(e)))?;
    let endpoint = http::HttpServer::bind(addr, settings)
        .await
        .map_err(|e| CliError::Gateway(GatewayError::Endpoint(e)))?;
    Ok(Some(endpoint))
}

async fn serve(ctx: &Context, args: ServeArgs) -> Result<Exit, CliError> {
    let endpoint = endpoint(&args).await?;
    let config = config::load(ctx.config.as_deref(), ctx.prompt())?;
    let origin = Origin {
        file: &config.file,
        command_line: false,
        variables: config.variables.as_ref(),
    };
    let mut gateway_config = GatewayConfig::default()
        .roots_from_http_hosts(args.http_roots)
        .busy_poll(Duration::from_micros(args.busy_poll));
    if let Some(socket) = &args.control {
        gateway_config = gateway_config.control(socket);
    }
    let link = HostLink::new(&gateway_config);
    let adoption = if args.adopt {
        Adoption::Automatic
    } else {
        Adoption::Review
    };
    let mut builder = Hub::builder(connect::hub_config(
        policy_of(args.policy),
        args.provider_safe_names,
    ));
    let mut started: Vec<&ServerEntry> = Vec::new();
    for entry in config.servers.iter().filter(|e| !e.disabled) {
        // An entry that cannot be used is left out (as `mcp tools` does);
        // the others are served.
        // No working-directory root: the host's roots are passed on.
        let options = StartOptions {
            cwd_root: false,
            ..ctx.start_options()
        };
        match connect::spec(origin, entry, options, Discovery::Eager) {
            Ok(spec) => {
                let spec = spec
                    .restart(RestartPolicy::Backoff(Backoff::default()))
                    .adoption(adoption)
                    .log_level(args.log_level);
                builder = builder.server(link.attach(spec));
                started.push(entry);
            }
            Err(error) => tracing::warn!(
                server = %entry.name,
                error = %error.chain().join(": "),
                "the server is left out"
            ),
        }
    }
    // The authority names exactly the servers registered.
    let mut builder = builder
        .authority(connect::authority(started.iter().copied()))
        .principal(ctx.principal());
    // Marked calls are put to the host's user.
    let marked = Marked::of(started.iter().copied());
    if !marked.is_empty() {
        let hook = HostApproval::new(link.clone(), move |server, tool| {
            marked.covers(server, tool)
        });
        builder = builder.approval(std::sync::Arc::new(hook));
    }
    let hub = builder.start().await?;
    for name in hub.servers() {
        match hub.status(name.as_str()) {
            Ok(status) => tracing::info!(server = %name, status = %status.kind, "server"),
            Err(e) => tracing::warn!(server = %name, error = %e, "server"),
        }
    }
    let gateway = Gateway::new(hub, link, gateway_config).map_err(CliError::Gateway)?;
    if let Some(endpoint) = endpoint {
        // The operator's terminal, never a token: the URL hosts connect to.
        eprintln!(
            "mcp serve: serving MCP (Streamable HTTP) on {}",
            endpoint.url()
        );
        gateway
            .serve_http(endpoint, terminated())
            .await
            .map_err(CliError::Gateway)?;
        tracing::info!("stopped by a signal");
        return Ok(Exit::Ok);
    }
    // The host ends the gateway by closing its input; a signal ends it too
    // (the servers are shut down either way: dropping the hub kills them).
    tokio::select! {
        served = gateway.serve_stdio() => served.map_err(CliError::Gateway)?,
        () = terminated() => tracing::info!("stopped by a signal"),
    }
    Ok(Exit::Ok)
}

/// Resolves on Ctrl-C or SIGTERM.
async fn terminated() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = term => {}
    }
}

/// One review command to a running gateway; its answer on stdout.
async fn review(socket: &std::path::Path, words: &[String]) -> Result<Exit, CliError> {
    let command = words.join(" ");
    let lines = tokio::time::timeout(Duration::from_secs(30), control::send(socket, &command))
        .await
        .map_err(|_| CliError::Interrupted)?
        .map_err(CliError::Gateway)?;
    let mut out = String::new();
    if words.first().map(String::as_str) == Some("pending") {
        if lines.is_empty() {
            out.push_str("no changed tool list waits for review\n");
        }
        for line in &lines {
            out.push_str(&pending_line(line));
        }
    } else {
        out.push_str("ok\n");
    }
    output::print(&out).map(|()| Exit::Ok)
}

/// One pending change as a line: `SERVER generation N: +added -removed
/// ~changed` (the tool names are the server's: escaped).
fn pending_line(json: &str) -> String {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(json) else {
        return format!("{}\n", escape_line(json));
    };
    let names = |key: &str, mark: char| -> Vec<String> {
        value[key]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|n| n.as_str())
                    .map(|n| format!("{mark}{}", escape_line(n)))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut changes = names("added", '+');
    changes.extend(names("removed", '-'));
    changes.extend(names("changed", '~'));
    format!(
        "{} generation {}: {}\n",
        escape_line(value["server"].as_str().unwrap_or("?")),
        value["generation"],
        changes.join(" ")
    )
}
