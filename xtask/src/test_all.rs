//! `cargo xtask test`: everything CI checks, with one closing count.
//!
//! Runs, in order: `cargo fmt --check`, `cargo clippy --all-targets -D warnings`
//! (and clippy of the lean builds: `mcp-cli`, `mcp-session` and `mcp-client`
//! without default features), the install of the npm packages and the
//! Python venv that tests drive, `cargo test --workspace`, `cargo xtask conformance` and `cargo xtask
//! interop`; each `cargo test` case, conformance scenario and interop check counts as one check, and fmt and clippy
//! count as one check each (`--no-lint`, `--no-conformance`, `--no-interop` skip parts). The last line is
//! `N passed, N failed`.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::Context;

#[derive(Default)]
struct Tally {
    passed: u64,
    failed: u64,
}

impl Tally {
    /// Counts a suite's (passed, failed); a suite that could not run at all
    /// is one failure.
    fn add(&mut self, what: &str, result: anyhow::Result<(u64, u64)>) {
        match result {
            Ok((passed, failed)) => {
                self.passed += passed;
                self.failed += failed;
            }
            Err(e) => {
                eprintln!("== {what} could not run: {e:#}");
                self.failed += 1;
            }
        }
    }
}

pub(crate) fn run(root: &Path, args: &[String]) -> anyhow::Result<()> {
    let quick = args.iter().any(|a| a == "--no-lint");
    let mut tally = Tally::default();
    if !quick {
        step(root, "fmt", &["fmt", "--all", "--", "--check"], &mut tally)?;
        step(
            root,
            "clippy",
            &[
                "clippy",
                "--workspace",
                "--all-targets",
                "--quiet",
                "--",
                "-D",
                "warnings",
            ],
            &mut tally,
        )?;
        // Lean builds lint clean too: `mcp` without the demo and the
        // conformance client (so without the testkit), and stdio-only hosts
        // (no `http`, no `validation`; `cargo xtask tidy` checks that their
        // dependency trees hold no HTTP, TLS or jsonschema).
        for package in ["mcp-cli", "mcp-session", "mcp-client"] {
            step(
                root,
                &format!("clippy ({package} without default features)"),
                &[
                    "clippy",
                    "-p",
                    package,
                    "--no-default-features",
                    "--quiet",
                    "--",
                    "-D",
                    "warnings",
                ],
                &mut tally,
            )?;
        }
    }
    // Tests that drive real programs find them where these put them: the
    // npm packages under interop/node_modules (GitHub's OpenAPI document,
    // the reference servers) and the Python venv under target/interop-venv
    // (a FastAPI app).
    eprintln!("== test tools (npm packages, python venv)");
    if let Err(e) = crate::node::ensure_tools(root).and_then(|_| crate::interop::ensure_venv(root))
    {
        eprintln!("== test tools could not be installed: {e:#}");
        tally.failed += 1;
    }
    cargo_test(root, &mut tally)?;
    eprintln!("== examples (mcp-client)");
    tally.add("the examples", crate::examples::run(root));
    if !args.iter().any(|a| a == "--no-conformance") {
        eprintln!("== cargo xtask conformance");
        tally.add("conformance", crate::conformance::run(root, &[]));
    }
    if !args.iter().any(|a| a == "--no-interop") {
        eprintln!("== cargo xtask interop");
        tally.add("interop", crate::interop::run(root));
    }
    // The summary is the very last line printed; the exit code carries failure.
    println!("{} passed, {} failed", tally.passed, tally.failed);
    if tally.failed > 0 {
        std::process::exit(1);
    }
    Ok(())
}

fn step(root: &Path, name: &str, args: &[&str], tally: &mut Tally) -> anyhow::Result<()> {
    eprintln!("== {name}");
    let status = Command::new(cargo())
        .args(args)
        .current_dir(root)
        .status()
        .with_context(|| format!("running cargo {name}"))?;
    if status.success() {
        tally.passed += 1;
    } else {
        eprintln!("== {name}: FAILED");
        tally.failed += 1;
    }
    Ok(())
}

fn cargo_test(root: &Path, tally: &mut Tally) -> anyhow::Result<()> {
    eprintln!("== cargo test --workspace");
    let mut child = Command::new(cargo())
        .args(["test", "--workspace", "--no-fail-fast"])
        .current_dir(root)
        .stdout(Stdio::piped())
        .spawn()
        .context("running cargo test")?;
    let stdout = child.stdout.take().context("cargo test stdout")?;
    let mut saw_result = false;
    for line in BufReader::new(stdout).lines() {
        let line = line?;
        println!("{line}");
        if let Some((p, f)) = parse_result_line(&line) {
            tally.passed += p;
            tally.failed += f;
            saw_result = true;
        }
    }
    let status = child.wait()?;
    if !status.success() && tally.failed == 0 {
        // A build failure or a crashed test binary: count it, never pass quietly.
        eprintln!(
            "== cargo test exited with {status} without a failing test: counted as a failure"
        );
        tally.failed += 1;
    }
    anyhow::ensure!(saw_result, "cargo test ran no test");
    Ok(())
}

/// Reads `test result: ok. 12 passed; 0 failed; …`.
fn parse_result_line(line: &str) -> Option<(u64, u64)> {
    let rest = line.trim().strip_prefix("test result: ")?;
    let mut passed = None;
    let mut failed = None;
    for part in rest.split(';') {
        let part = part
            .trim()
            .trim_start_matches("ok. ")
            .trim_start_matches("FAILED. ");
        let mut words = part.split_whitespace();
        let n = words.next().and_then(|w| w.parse::<u64>().ok());
        match (n, words.next()) {
            (Some(n), Some("passed")) => passed = Some(n),
            (Some(n), Some("failed")) => failed = Some(n),
            _ => {}
        }
    }
    Some((passed?, failed?))
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

#[cfg(test)]
mod tests {
    use super::parse_result_line;

    #[test]
    fn parses_cargo_test_summaries() {
        assert_eq!(
            parse_result_line(
                "test result: ok. 12 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s"
            ),
            Some((12, 0))
        );
        assert_eq!(
            parse_result_line("test result: FAILED. 3 passed; 2 failed; 0 ignored"),
            Some((3, 2))
        );
        assert_eq!(parse_result_line("running 3 tests"), None);
    }
}
