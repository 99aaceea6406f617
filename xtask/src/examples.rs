//! `cargo xtask test`'s examples step: runs each of `mcp-client`'s examples
//! against the testkit's weather and demo servers and checks what it prints.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context as _;

/// How long one example may run.
const DEADLINE: Duration = Duration::from_secs(60);

/// Runs every example; returns (passed, failed).
pub(crate) fn run(root: &Path) -> anyhow::Result<(u64, u64)> {
    let server = crate::test_built_executable(root, "mcp-testkit-server")?;
    let server = server.display().to_string();
    let mut passed = 0;
    let mut failed = 0;
    let mut tally = |name: &str, result: anyhow::Result<()>| match result {
        Ok(()) => {
            eprintln!("example {name}: ok");
            passed += 1;
        }
        Err(e) => {
            eprintln!("example {name}: FAILED: {e:#}");
            failed += 1;
        }
    };
    let stdio = example(root, "stdio").and_then(|bin| {
        let out = output(Command::new(bin).args([&server, "--demo", "weather"]))?;
        expect(
            &out,
            &[
                "tool: forecast",
                "progress: 1",
                "progress: 3",
                "forecast: Sunny in Paris, 21 °C.",
                "prompt: 1 message(s)",
            ],
        )
    });
    tally("stdio", stdio);
    let http = example(root, "http_sampling").and_then(|bin| {
        let mut server = Command::new(&server)
            .args(["--demo", "weather", "--http"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .context("starting the testkit's HTTP server")?;
        let url = first_line(&mut server);
        let out = url.and_then(|url| output(Command::new(bin).arg(url.trim())));
        // Closing its stdin stops the server.
        drop(server.stdin.take());
        let _ = server.wait();
        expect(
            &out?,
            &["era: Modern", "summary:", "demo-model", "read 1 message(s)"],
        )
    });
    tally("http_sampling", http);
    let hub = example(root, "hub").and_then(|bin| {
        let out = output(Command::new(bin).arg(&server))?;
        expect(
            &out,
            &[
                "tool: search",
                "tool: read",
                "search: ",
                "Release checklist",
                "not allowed: files/search",
            ],
        )
    });
    tally("hub", hub);
    Ok((passed, failed))
}

fn example(root: &Path, name: &str) -> anyhow::Result<PathBuf> {
    crate::test_built_executable(root, name)
}

/// The first line the child prints (its URL).
fn first_line(child: &mut Child) -> anyhow::Result<String> {
    let stdout = child.stdout.take().context("no stdout")?;
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .context("reading the server's URL")?;
    anyhow::ensure!(line.starts_with("http://"), "the server printed {line:?}");
    Ok(line)
}

/// Runs `command` to its end (within the deadline); its stdout when it
/// succeeded.
fn output(command: &mut Command) -> anyhow::Result<String> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting the example")?;
    let began = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if began.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            anyhow::bail!("still running after {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut out = String::new();
    let mut err = String::new();
    if let Some(mut s) = child.stdout.take() {
        s.read_to_string(&mut out)?;
    }
    if let Some(mut s) = child.stderr.take() {
        s.read_to_string(&mut err)?;
    }
    anyhow::ensure!(status.success(), "exited with {status}: {}", err.trim());
    Ok(out)
}

fn expect(out: &str, wanted: &[&str]) -> anyhow::Result<()> {
    for w in wanted {
        anyhow::ensure!(out.contains(w), "no `{w}` in its output:\n{out}");
    }
    Ok(())
}
