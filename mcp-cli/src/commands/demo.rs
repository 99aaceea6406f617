//! `mcp demo`: the walk-through of the README, with three built-in servers
//! (notes, files, github; all exposing `search`) and no configuration or
//! network. Each server is this very program run as `mcp __serve-demo NAME`,
//! so nothing else needs to be built.
//!
//! It shows three negotiations, the merged namespace, the `search` collision
//! resolved by prefixing, the bare `search` refused as ambiguous, a routed
//! call, then a server killed and the call to it failing fast.

use std::time::{Duration, Instant};

use mcp_hub::{
    Authority, CollisionPolicy, Discovery, HubEvent, RestartPolicy, RetryPolicy, RouteTarget,
    ServerSpec,
};
use mcp_transport::{StdioConfig, StdioConnector};
use serde_json::{Map, Value, json};

use crate::commands::Context;
use crate::commands::inspect::era_name;
use crate::commands::tools::{Outcome, namespace_table, servers_table, shared_names, start_all};
use crate::error::{CliError, hub_chain};
use crate::output::{self, Paint, render_content};

/// The demo servers, in registration order.
const SERVERS: [&str; 3] = ["notes", "files", "github"];
/// The server the demo kills.
const VICTIM: &str = "files";

/// Serves demo `name` on stdin/stdout (the hidden `__serve-demo`); returns
/// the fake server's exit code.
pub(crate) async fn serve(name: &str) -> Result<i32, CliError> {
    let script = mcp_testkit::demo::by_name(name).ok_or_else(|| CliError::UnknownDemo {
        name: name.to_owned(),
    })?;
    let (read, write) = mcp_server::stdio();
    Ok(mcp_testkit::FakeServer::new(script)
        .serve(read, write)
        .await)
}

fn step(out: &mut String, paint: Paint, n: u32, title: &str) {
    out.push_str(&format!("\n{}\n", paint.bold(&format!("{n}. {title}"))));
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("   {l}\n")).collect()
}

pub(crate) async fn run(ctx: &Context) -> Result<(), CliError> {
    let exe = std::env::current_exe().map_err(CliError::NoSelfPath)?;
    let exe = exe.to_string_lossy().into_owned();
    let mut specs = Vec::new();
    for name in SERVERS {
        let connector =
            StdioConnector::new(StdioConfig::new(exe.clone()).args(["__serve-demo", name]));
        specs.push(
            ServerSpec::new(name, connector)
                .restart(RestartPolicy::Never)
                .retry(RetryPolicy::none())
                .discovery(Discovery::Eager),
        );
    }
    let paint = ctx.ui.out();
    output::print(&format!(
        "{}\n{}\n",
        paint.bold("mcp demo: three built-in servers, no configuration, no network"),
        paint.dim("(each is this program run as `mcp __serve-demo NAME` over stdio)")
    ))?;

    let mut started = start_all(
        ctx,
        specs,
        Authority::unrestricted(),
        CollisionPolicy::Prefix,
        false,
        None,
    )
    .await?;
    let hub = &started.hub;
    let mut out = String::new();

    step(
        &mut out,
        paint,
        1,
        "Three servers start in parallel; each negotiates its own protocol era",
    );
    out.push_str(&indent(&servers_table(&started.outcomes, &[])));
    for (name, outcome) in &started.outcomes {
        let how = match outcome {
            Outcome::Ready { era, version, .. } if era_name(*era) == "modern" => {
                format!("answered the {version} probe (`server/discover`): no handshake needed")
            }
            Outcome::Ready { version, .. } => format!(
                "did not speak 2026-07-28, so the client fell back to `initialize` and they agreed on {version}"
            ),
            Outcome::Failed(e) => format!("failed: {e}"),
            Outcome::Misconfigured(e) => format!("failed: {e}"),
        };
        out.push_str(&format!("   {} {how}\n", paint.cyan(&format!("{name:<7}"))));
    }
    let namespace = hub.namespace();
    step(
        &mut out,
        paint,
        2,
        "The merged namespace (collision policy: prefix)",
    );
    out.push_str(&indent(&namespace_table(&namespace)));

    let shared = shared_names(&namespace);
    step(
        &mut out,
        paint,
        3,
        "The `search` collision, resolved by prefixing",
    );
    for (name, candidates) in &shared {
        out.push_str(&format!(
            "   `{name}` is offered by {} servers, so each is exposed qualified: {}\n",
            candidates.len(),
            candidates.join(", ")
        ));
    }
    output::print(&out)?;
    out.clear();

    step(
        &mut out,
        paint,
        4,
        "Calling the bare name `search` is refused as ambiguous",
    );
    let mut query = Map::new();
    query.insert("query".into(), json!("search"));
    match hub.call("search", query.clone()).await {
        Err(e) => out.push_str(&format!("   {} {e}\n", paint.red("refused:"))),
        Ok(_) => out.push_str("   (unexpectedly answered)\n"),
    }

    step(
        &mut out,
        paint,
        5,
        "A routed call: `github/search` goes to server github, tool `search`",
    );
    let route = namespace.route("github/search").map_err(CliError::Hub)?;
    out.push_str(&format!(
        "   {} github/search {}\n",
        paint.dim("call"),
        Value::Object(query.clone())
    ));
    let began = Instant::now();
    let result = hub.call("github/search", query.clone()).await?;
    let target = match &route.target {
        RouteTarget::Tool(local) => format!("tool `{local}`"),
        RouteTarget::Helper(helper) => format!("helper `{}`", helper.local_name()),
        _ => "a target".to_owned(),
    };
    out.push_str(&format!(
        "   {} server {}, {target} ({} ms)\n",
        paint.green("routed to"),
        route.server,
        began.elapsed().as_millis()
    ));
    out.push_str(&indent(&render_content(&result.content, paint)));
    output::print(&out)?;
    out.clear();

    step(
        &mut out,
        paint,
        6,
        &format!("Server {VICTIM} is killed; a call to it fails fast"),
    );
    let killed = hub.kill_server(VICTIM)?;
    out.push_str(&format!(
        "   {} {VICTIM} ({})\n",
        paint.dim("sent SIGKILL to"),
        if killed {
            "its process group"
        } else {
            "nothing to kill"
        }
    ));
    // Wait (bounded) until the hub has seen the death.
    if let Some(events) = &mut started.events {
        let _ = tokio::time::timeout(Duration::from_secs(3), async {
            while let Some(event) = events.next().await {
                if let HubEvent::Failed { server, error } = event
                    && server.as_str() == VICTIM
                {
                    out.push_str(&format!(
                        "   {} {}\n",
                        paint.dim("the hub noticed:"),
                        hub_chain(&error).join(": ")
                    ));
                    break;
                }
            }
        })
        .await;
    }
    let began = Instant::now();
    let call = hub.call(&format!("{VICTIM}/search"), query).await;
    let elapsed = began.elapsed().as_millis();
    match call {
        Err(e) => out.push_str(&format!(
            "   {} {e} (in {elapsed} ms)\n",
            paint.red(&format!("{VICTIM}/search failed:"))
        )),
        Ok(_) => out.push_str("   (unexpectedly answered)\n"),
    }
    out.push_str(&format!(
        "\n{}\n",
        paint.dim("Next: `mcp add NAME -- COMMAND ARGS…` (or `--url URL`), then `mcp tools`.")
    ));
    output::print(&out)?;
    started.hub.shutdown().await;
    Ok(())
}
