//! `cargo xtask bench --flood [OPTIONS]`: what one server flooding the hub
//! with log messages costs the other servers (issue 29, item 4).
//!
//! Builds `mcp-hub`'s `flood_bench` example and the testkit server in
//! release mode and runs the example with the testkit server (its default
//! script, `echo` among its tools) as the quiet servers; the options go to
//! the example (`--quiet N`, `--inflight K`, `--secs S`, `--reps R`,
//! `--logged`; see `mcp-hub/examples/flood_bench.rs`), and
//! `--quiet-server PATH` runs another program as the quiet servers (the
//! peer harness's raw server, say). It prints the quiet servers' calls/s
//! and p99 latency with the flooder idle and flooding, and the ratio. A
//! measurement, not a test: nothing here asserts a time.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};

pub(crate) fn run(root: &Path, args: &[String]) -> anyhow::Result<()> {
    let mut rest: Vec<String> = Vec::new();
    let mut quiet_server = None;
    let mut it = args.iter().filter(|a| *a != "--flood");
    while let Some(a) = it.next() {
        if a == "--quiet-server" {
            quiet_server = Some(it.next().context("--quiet-server needs a path")?.clone());
        } else {
            rest.push(a.clone());
        }
    }
    let status = Command::new(crate::cargo())
        .current_dir(root)
        .args([
            "build",
            "--release",
            "-p",
            "mcp-hub",
            "--example",
            "flood_bench",
            "-p",
            "mcp-testkit",
            "--bin",
            "mcp-testkit-server",
        ])
        .status()
        .context("building the flood benchmark")?;
    if !status.success() {
        bail!("building the flood benchmark failed");
    }
    let quiet = quiet_server.unwrap_or_else(|| {
        root.join("target/release/mcp-testkit-server")
            .display()
            .to_string()
    });
    let status = Command::new(root.join("target/release/examples/flood_bench"))
        .arg(&quiet)
        .args(&rest)
        .status()
        .context("running the flood benchmark")?;
    if !status.success() {
        bail!("the flood benchmark failed");
    }
    Ok(())
}
