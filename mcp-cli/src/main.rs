//! The `mcp` command: inspect, call and debug MCP servers.
//!
//! The CLI holds no protocol logic of its own: everything goes through the
//! library crates (`mcp-session`, `mcp-hub`, `mcp-transport`).
#![forbid(unsafe_code)]

mod conformance;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Inspect, call and debug MCP servers.
#[derive(Debug, Parser)]
#[command(name = "mcp", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Drives the official conformance suite's scenarios (used by `cargo xtask
    /// conformance`; reads MCP_CONFORMANCE_* variables).
    #[command(hide = true)]
    ConformanceClient {
        /// The scenario server's URL (the suite appends it).
        url: String,
    },
}

fn main() -> ExitCode {
    init_logging();
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcp: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::ConformanceClient { url } => conformance::run(&url).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp: {e:#}");
            ExitCode::from(4)
        }
    }
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
