//! Project automation, run as `cargo xtask <task>`.
//!
//! - `test`: what CI runs: fmt, clippy, every test, the examples; ends with
//!   `N passed, N failed`.
//! - `examples`: runs `mcp-client`'s examples against the testkit's servers.
//! - `conformance`: the official suite against our client, and its server
//!   scenarios against `mcp serve --http` fronting a testkit fixture; each
//!   half with a ratchet.
//! - `bench`: our client in the peer benchmark, beside the official SDKs;
//!   `bench --http` the same over Streamable HTTP; `bench --flood` one
//!   hub's quiet servers beside one that floods it with log messages.
//! - `interop`: our client against real reference servers (npm, PyPI), and
//!   the SDK hosts of `gateway` in front of `mcp serve --stdio`.
//! - `gateway [--bench [N]]`: `mcp serve --stdio` behind hosts on the
//!   official TypeScript, Python and Rust SDKs; with `--bench`, a call
//!   through the gateway against a direct one, from the same clients.
//! - `tidy`: repository rules that no compiler checks (dependency direction,
//!   sans-IO modules free of tokio, crate docs, no `todo!`, stdio-only
//!   builds free of HTTP, TLS and jsonschema); also runs as a
//!   `#[test]` so `cargo test` enforces it.
//! - `spec`: downloads the official MCP schemas and examples at a pinned commit
//!   into `MCP_SPEC_DIR` (default `../shared/mcp-spec`) and checks their SHA-256.
#![forbid(unsafe_code)]

mod bench;
mod conformance;
mod conformance_server;
mod examples;
mod gateway;
mod interop;
mod node;
mod spec;
mod test_all;
mod tidy;

use std::path::PathBuf;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let task = args.next().unwrap_or_default();
    let rest: Vec<String> = args.collect();
    match task.as_str() {
        "tidy" => {
            let problems = tidy::check(&workspace_root());
            for p in &problems {
                eprintln!("tidy: {p}");
            }
            anyhow::ensure!(problems.is_empty(), "{} tidy problem(s)", problems.len());
            eprintln!("tidy: ok");
            Ok(())
        }
        "spec" => spec::run(&workspace_root(), &rest),
        "test" => test_all::run(&workspace_root(), &rest),
        "bench" => bench::run(&workspace_root(), &rest),
        "interop" => {
            let (_, failed) = interop::run(&workspace_root())?;
            if failed > 0 {
                std::process::exit(1);
            }
            Ok(())
        }
        "gateway" if rest.iter().any(|a| a == "--bench") => {
            gateway::bench(&workspace_root(), &rest)
        }
        "gateway" => {
            let (_, failed) = gateway::run(&workspace_root())?;
            if failed > 0 {
                std::process::exit(1);
            }
            Ok(())
        }
        "examples" => {
            let (_, failed) = examples::run(&workspace_root())?;
            if failed > 0 {
                std::process::exit(1);
            }
            Ok(())
        }
        "conformance" => {
            let (_, failed) = conformance::run(&workspace_root(), &rest)?;
            if failed > 0 {
                std::process::exit(1);
            }
            Ok(())
        }
        _ => {
            eprintln!(
                "usage: cargo xtask <test [--no-lint] | examples | conformance [--client | --server [--direct]] [--scenario S] | interop | gateway [--bench [N]] | bench [HARNESS ARGS | --http … | --flood …] | tidy | spec [--dir DIR] [--verify-only]>"
            );
            anyhow::bail!("unknown task `{task}`")
        }
    }
}

/// The cargo that runs us (or `cargo`).
pub(crate) fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// The workspace root: the parent of this crate's folder.
pub(crate) fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(PathBuf::from).unwrap_or(manifest)
}

/// Builds (or finds already built) the workspace's executables exactly as
/// `cargo test --workspace` builds them, and returns the path of the binary or
/// example called `name`.
///
/// Asking `cargo build -p <crate>` instead would resolve a different feature
/// set (no dev-dependencies, no other members) and compile a second copy of
/// most dependencies: a second gigabyte-scale tree on a CI disk, and minutes.
pub(crate) fn test_built_executable(root: &std::path::Path, name: &str) -> anyhow::Result<PathBuf> {
    use anyhow::Context as _;
    let output = std::process::Command::new(cargo())
        .current_dir(root)
        .args([
            "test",
            "--workspace",
            "--no-run",
            "--quiet",
            "--message-format=json-render-diagnostics",
        ])
        .stderr(std::process::Stdio::inherit())
        .output()
        .context("running cargo test --no-run")?;
    anyhow::ensure!(output.status.success(), "building the workspace failed");
    for line in output.stdout.split(|b| *b == b'\n') {
        let Ok(msg) = serde_json::from_slice::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" || msg["profile"]["test"] != false {
            continue;
        }
        let kinds = msg["target"]["kind"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let runnable = kinds.iter().any(|k| k == "bin" || k == "example");
        if runnable
            && msg["target"]["name"] == name
            && let Some(path) = msg["executable"].as_str()
        {
            return Ok(PathBuf::from(path));
        }
    }
    anyhow::bail!("cargo test --no-run built no executable called `{name}`")
}
