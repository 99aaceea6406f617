//! `cargo xtask bench [ARGS…]`: our client in the peer benchmark of
//! `../shared/bench/peers`, side by side with the official Rust, TypeScript
//! and Python SDK clients and a no-SDK "limit" client, in one run.
//!
//! Builds `mcp-hub`'s `bench_client` example in release mode (the
//! workspace's release profile is the one the harness builds its peers with:
//! thin LTO, one codegen unit) and runs the
//! harness's `run.sh` with `MCP_BENCH_OURS` pointing at it; every argument is
//! passed to the harness (e.g. `--reps 3 --workloads seq,conc,list`). The
//! harness prints the tables (medians and ratios to the limit client).
//! Benchmarks are measurements, not tests: nothing here asserts a time.
//!
//! `cargo xtask bench --http [OPTIONS]` runs the Streamable HTTP benchmark
//! of `bench/http/` instead (see `bench/http.rs` and `bench/http/README.md`),
//! and `cargo xtask bench --flood [OPTIONS]` the flood benchmark (one server
//! flooding the hub with log messages next to quiet ones; `bench/flood.rs`).

mod flood;
mod http;

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};

pub(crate) fn run(root: &Path, args: &[String]) -> anyhow::Result<()> {
    if args.iter().any(|a| a == "--http") {
        return http::run(root, args);
    }
    if args.iter().any(|a| a == "--flood") {
        return flood::run(root, args);
    }
    let status = Command::new(crate::cargo())
        .current_dir(root)
        .args([
            "build",
            "--release",
            "-p",
            "mcp-hub",
            "--example",
            "bench_client",
        ])
        .status()
        .context("building the bench client")?;
    if !status.success() {
        bail!("building the bench client failed");
    }
    let client = root.join("target/release/examples/bench_client");
    let peers = std::env::var_os("MCP_PEERS_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/bench/peers"));
    let script = peers.join("run.sh");
    if !script.exists() {
        bail!(
            "the peer harness is not at {} (set MCP_PEERS_DIR)",
            peers.display()
        );
    }
    let status = Command::new("bash")
        .arg(&script)
        .args(args)
        .env("MCP_BENCH_OURS", &client)
        .status()
        .context("running the peer harness")?;
    if !status.success() {
        bail!("the peer harness failed");
    }
    Ok(())
}
