//! `cargo xtask conformance`, server half: the official suite's server
//! scenarios against the gateway (`mcp serve --http`) fronting a testkit
//! server that provides what those scenarios call (the fixture,
//! `xtask/conformance-server-fixture.json`), ratcheted by
//! `xtask/conformance-server-expected-failures.yml`.
//!
//! Runs the frozen requirement sets 2025-11-25 and 2026-07-28 (each at its
//! own wire: the stateful handshake, then stateless requests; the sets also
//! run their not-scored scenarios: extensions, pending ones) and the Skills
//! extension scenarios, which neither set names. A scenario passes in a set
//! when none of its checks is a FAILURE or WARNING. The ratchet file is in
//! the suite's own format (`server:` then `- scenario` or
//! `- scenario:check-id`, each with a `# reason`): an entry excuses that
//! scenario (or that one check) in every set; a failure not listed fails
//! the run, and so does a listed one that never fails (a stale entry).
//! `--direct` runs the suite against the fixture itself (over the
//! testkit's HTTP mode), to tell a fixture problem from a gateway one; the
//! ratchet applies to the gateway only. Last line:
//! `server conformance: N passed, N failed`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::node;

/// The testkit script the scenarios are run against.
const FIXTURE: &str = "xtask/conformance-server-fixture.json";
/// The ratchet.
const EXPECTED: &str = "xtask/conformance-server-expected-failures.yml";
/// The requirement sets, each run whole.
const SETS: &[&str] = &["2025-11-25", "2026-07-28"];
/// Server scenarios in neither set (the Skills extension), run one by one.
const EXTRA_SCENARIOS: &[&str] = &[
    "sep-2640-skills-directory",
    "sep-2640-skills-enumeration",
    "sep-2640-skills-manifest",
];
/// How long a started server may take to say where it listens.
const START_LIMIT: Duration = Duration::from_secs(60);

/// One scenario's outcome in one run.
#[derive(Clone, Debug, Default)]
struct Outcome {
    passed_checks: usize,
    /// The ids of the checks that failed (FAILURE or WARNING), with the
    /// first message of each.
    failed: BTreeMap<String, String>,
}

impl Outcome {
    /// No check failed and at least one of the scenario's own passed (a
    /// scenario whose checks were all skipped or informational proved
    /// nothing; the suite's `wire-schema-*` checks of whatever crossed the
    /// wire do not count for it).
    fn passed(&self) -> bool {
        self.failed.is_empty() && self.passed_checks > 0
    }
}

/// What the ratchet excuses: whole scenarios and single checks, with reasons.
#[derive(Debug, Default)]
struct Expected {
    scenarios: BTreeMap<String, String>,
    checks: BTreeMap<(String, String), String>,
}

/// A process of ours, killed (by its own id) when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Returns (passed, failed) scenario runs after printing the table.
pub(crate) fn run(root: &Path, args: &[String]) -> anyhow::Result<(u64, u64)> {
    let only: Option<&str> = args
        .iter()
        .position(|a| a == "--scenario")
        .and_then(|i| args.get(i + 1))
        .map(String::as_str);
    let direct = args.iter().any(|a| a == "--direct");
    let tools = node::ensure_tools(root)?;
    let testkit = crate::test_built_executable(root, "mcp-testkit-server")
        .context("building the testkit server")?;
    let out = root.join("target/conformance-server");
    let _ = fs::remove_dir_all(&out);
    fs::create_dir_all(&out)?;
    let fixture = root.join(FIXTURE);
    let (_server, url) = if direct {
        start_fixture(&testkit, &fixture)?
    } else {
        let mcp = crate::test_built_executable(root, "mcp").context("building the mcp binary")?;
        start_gateway(&mcp, &testkit, &fixture, &out)?
    };
    eprintln!("== server conformance against {url}");

    let runs: Vec<(String, Vec<String>)> = match only {
        // An extension scenario is on no spec version's timeline.
        Some(s) if EXTRA_SCENARIOS.contains(&s) => vec![(
            "extension".to_owned(),
            vec![
                "--scenario".into(),
                s.into(),
                "--suite".into(),
                "all".into(),
            ],
        )],
        Some(s) => SETS
            .iter()
            .map(|set| {
                (
                    (*set).to_owned(),
                    vec![
                        "--scenario".into(),
                        s.into(),
                        "--spec-version".into(),
                        (*set).into(),
                    ],
                )
            })
            .collect(),
        None => {
            let mut runs: Vec<(String, Vec<String>)> = SETS
                .iter()
                .map(|set| {
                    (
                        (*set).to_owned(),
                        vec!["--requirements".into(), (*set).into()],
                    )
                })
                .collect();
            for s in EXTRA_SCENARIOS {
                runs.push((
                    "extension".to_owned(),
                    vec![
                        "--scenario".into(),
                        (*s).into(),
                        "--suite".into(),
                        "all".into(),
                    ],
                ));
            }
            runs
        }
    };
    // (set, scenario) → outcome
    let mut outcomes: BTreeMap<(String, String), Outcome> = BTreeMap::new();
    for (n, (label, selection)) in runs.iter().enumerate() {
        let dir = out.join(format!("{n}-{label}"));
        eprintln!("== server conformance: {label} {}", selection.join(" "));
        // The suite exits non-zero when anything failed; the checks decide.
        let _ = Command::new(&tools.npx)
            .current_dir(&tools.dir)
            .env("PATH", &tools.path)
            .args(["--prefix", "."])
            .args(["conformance", "server", "--url", &url])
            .args(selection)
            .arg("-o")
            .arg(&dir)
            .args(["--timeout", "60000"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .context("running the conformance suite")?;
        for (scenario, outcome) in read_results(&dir)? {
            outcomes.insert((label.clone(), scenario), outcome);
        }
    }
    if outcomes.is_empty() {
        bail!("the conformance suite produced no server results (see target/conformance-server)");
    }
    let expected = if direct {
        Expected::default()
    } else {
        read_expected(&root.join(EXPECTED))?
    };
    Ok(report(&outcomes, &expected, only.is_some() || direct))
}

/// The fixture served by the testkit itself over Streamable HTTP (event
/// stream replies, so a call's notifications travel with it).
fn start_fixture(testkit: &Path, fixture: &Path) -> anyhow::Result<(Running, String)> {
    let mut cmd = Command::new(testkit);
    cmd.args(["--http", "--sse", "--script"]).arg(fixture);
    start_printing_url(cmd)
}

/// `mcp serve --http` on a free loopback port, with the fixture as its one
/// server (stdio). The scenarios call fixed names: a lone server's tools
/// keep their bare names under the default `prefix` policy, and `--adopt`
/// serves a changed tool list at once (the scenarios change it and expect
/// to hear so).
fn start_gateway(
    mcp: &Path,
    testkit: &Path,
    fixture: &Path,
    scratch: &Path,
) -> anyhow::Result<(Running, String)> {
    let config = scratch.join("config.json");
    let server = json!({"command": testkit, "args": ["--script", fixture]});
    fs::write(
        &config,
        json!({"mcpServers": {"fixture": server}}).to_string(),
    )?;
    let mut cmd = Command::new(mcp);
    // Streams of calls still running after 1 s are closed and resumed
    // (SEP-1699 polling): the fixture's `test_reconnection` takes 1.5 s.
    cmd.args([
        "serve",
        "--http",
        "127.0.0.1:0",
        "--adopt",
        "--sse-poll",
        "1000",
    ])
    .arg("--config")
    .arg(&config);
    start_printing_url(cmd)
}

/// Starts `cmd` and waits for the first `http://` URL on its stdout or
/// stderr (bounded by [`START_LIMIT`]).
fn start_printing_url(mut cmd: Command) -> anyhow::Result<(Running, String)> {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {cmd:?}"))?;
    let (tx, rx) = mpsc::channel::<String>();
    let stdout = child.stdout.take().context("its stdout")?;
    let stderr = child.stderr.take().context("its stderr")?;
    let running = Running(child);
    for stream in [
        Box::new(stdout) as Box<dyn std::io::Read + Send>,
        Box::new(stderr),
    ] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                if let Some(url) = url_in(&line) {
                    let _ = tx.send(url);
                }
            }
        });
    }
    let url = rx
        .recv_timeout(START_LIMIT)
        .context("the server printed no http:// URL")?;
    Ok((running, url))
}

/// The first `http://…` word of `line`.
fn url_in(line: &str) -> Option<String> {
    let start = line.find("http://")?;
    let url: String = line[start..]
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != '"' && *c != '\'' && *c != ')')
        .collect();
    Some(url.trim_end_matches(['.', ',']).to_owned())
}

/// Every `checks.json` under `dir`, by scenario name.
fn read_results(dir: &Path) -> anyhow::Result<BTreeMap<String, Outcome>> {
    Ok(crate::conformance::checks_under(dir)?
        .into_iter()
        .map(|(folder, checks)| (scenario_name(&folder), summarise(&checks)))
        .collect())
}

/// `server-tools-list-2026-12-01T23-38-17-964Z` → `tools-list`: the suite
/// names a server scenario's folder `server-<scenario>-<timestamp>`.
fn scenario_name(folder: &str) -> String {
    let name = crate::conformance::strip_timestamp(folder);
    name.strip_prefix("server-").unwrap_or(&name).to_owned()
}

fn summarise(checks: &Value) -> Outcome {
    let mut outcome = Outcome::default();
    for check in checks.as_array().into_iter().flatten() {
        let id = check.get("id").and_then(Value::as_str).unwrap_or("?");
        match check.get("status").and_then(Value::as_str) {
            Some("SUCCESS") if !id.starts_with("wire-schema-") => outcome.passed_checks += 1,
            Some("FAILURE" | "WARNING") => {
                let msg = check
                    .get("errorMessage")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .replace('\n', " ");
                outcome.failed.entry(id.to_owned()).or_insert(msg);
            }
            _ => {}
        }
    }
    outcome
}

/// Reads the suite-format ratchet: `server:` then `  - name  # reason`.
fn read_expected(path: &Path) -> anyhow::Result<Expected> {
    let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    parse_expected(&text).map_err(|(n, why)| anyhow::anyhow!("{}:{n}: {why}", path.display()))
}

fn parse_expected(text: &str) -> Result<Expected, (usize, &'static str)> {
    let mut expected = Expected::default();
    let mut in_server = false;
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if !line.starts_with(' ') {
            in_server = trimmed == "server:";
            continue;
        }
        if !in_server {
            continue;
        }
        let Some(entry) = trimmed.strip_prefix("- ") else {
            return Err((n + 1, "expected `- scenario  # reason`"));
        };
        let Some((name, reason)) = entry.split_once('#') else {
            return Err((n + 1, "an expected failure needs a reason after `#`"));
        };
        let (name, reason) = (name.trim(), reason.trim().to_owned());
        if reason.is_empty() {
            return Err((n + 1, "empty reason"));
        }
        match name.split_once(':') {
            Some((scenario, check)) => {
                expected
                    .checks
                    .insert((scenario.to_owned(), check.to_owned()), reason);
            }
            None => {
                expected.scenarios.insert(name.to_owned(), reason);
            }
        }
    }
    Ok(expected)
}

fn report(
    outcomes: &BTreeMap<(String, String), Outcome>,
    expected: &Expected,
    partial: bool,
) -> (u64, u64) {
    let (mut passed, mut failed, mut excused) = (0u64, 0u64, 0u64);
    // Ratchet entries that excused a failure somewhere.
    let mut used_scenarios: BTreeSet<&str> = BTreeSet::new();
    let mut used_checks: BTreeSet<(&str, &str)> = BTreeSet::new();
    println!(
        "{:<11} {:<46} {:>5} {:>5}  verdict / first failure",
        "set", "server scenario", "pass", "fail"
    );
    for ((set, scenario), o) in outcomes {
        let verdict = if o.passed() {
            passed += 1;
            "ok".to_owned()
        } else if let Some(reason) = expected.scenarios.get(scenario) {
            used_scenarios.insert(scenario);
            excused += 1;
            format!("expected failure ({reason})")
        } else {
            let unexcused: Vec<(&String, &String)> = o
                .failed
                .iter()
                .filter(|(id, _)| {
                    !expected
                        .checks
                        .contains_key(&(scenario.clone(), (*id).clone()))
                })
                .collect();
            for id in o.failed.keys() {
                if let Some(((s, c), _)) = expected
                    .checks
                    .get_key_value(&(scenario.clone(), id.clone()))
                {
                    used_checks.insert((s.as_str(), c.as_str()));
                }
            }
            match unexcused.first() {
                None if !o.failed.is_empty() => {
                    excused += 1;
                    let reasons: BTreeSet<&str> = o
                        .failed
                        .keys()
                        .filter_map(|id| expected.checks.get(&(scenario.clone(), id.clone())))
                        .map(String::as_str)
                        .collect();
                    let reasons: Vec<&str> = reasons.into_iter().collect();
                    format!("expected failure ({})", reasons.join("; "))
                }
                Some((id, msg)) => {
                    failed += 1;
                    let mut line = format!("FAILED {id}: {msg}");
                    line.truncate(140);
                    line
                }
                None => {
                    failed += 1;
                    "FAILED no check passed (all skipped or informational)".to_owned()
                }
            }
        };
        println!(
            "{set:<11} {scenario:<46} {:>5} {:>5}  {verdict}",
            o.passed_checks,
            o.failed.len()
        );
    }
    if !partial {
        for name in expected.scenarios.keys() {
            if !used_scenarios.contains(name.as_str()) {
                failed += 1;
                println!(
                    "{:<11} {name:<46} {:>5} {:>5}  STALE expected failure: it never failed",
                    "-", "-", "-"
                );
            }
        }
        for (scenario, check) in expected.checks.keys() {
            if !used_checks.contains(&(scenario.as_str(), check.as_str())) {
                failed += 1;
                println!(
                    "{:<11} {:<46} {:>5} {:>5}  STALE expected failure: the check never failed",
                    "-",
                    format!("{scenario}:{check}"),
                    "-",
                    "-"
                );
            }
        }
    }
    println!("({excused} expected failures, each with its reason in {EXPECTED})");
    println!("server conformance: {passed} passed, {failed} failed");
    (passed, failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_folders_name_their_scenario() {
        assert_eq!(
            scenario_name("server-tools-list-2026-12-01T23-38-17-964Z"),
            "tools-list"
        );
        assert_eq!(
            scenario_name("server-server-initialize-2026-12-01T23-38-17-964Z"),
            "server-initialize"
        );
    }

    #[test]
    fn urls_are_found_in_a_line() {
        assert_eq!(
            url_in("listening on http://127.0.0.1:4000/mcp (loopback)").as_deref(),
            Some("http://127.0.0.1:4000/mcp")
        );
        assert_eq!(url_in("nothing here"), None);
    }

    #[test]
    fn the_ratchet_reads_scenarios_and_checks_with_reasons() {
        let text = "# header\nserver:\n  - caching  # no hints\n  - server-stateless:sep-2575-x  # one check\nclient:\n  - other # not ours\n";
        let e = parse_expected(text).unwrap();
        assert_eq!(e.scenarios.len(), 1);
        assert!(
            e.checks
                .contains_key(&("server-stateless".into(), "sep-2575-x".into()))
        );
        assert!(parse_expected("server:\n  - caching\n").is_err());
        assert!(parse_expected("server:\n  - caching  #   \n").is_err());
    }

    #[test]
    fn checks_excuse_only_themselves_and_stale_entries_fail() {
        let mut outcomes = BTreeMap::new();
        let failing = |ids: &[&str]| Outcome {
            passed_checks: 1,
            failed: ids
                .iter()
                .map(|i| ((*i).to_owned(), "m".to_owned()))
                .collect(),
        };
        outcomes.insert(("a".into(), "ok".into()), failing(&[]));
        outcomes.insert(("a".into(), "nothing-ran".into()), Outcome::default());
        outcomes.insert(("a".into(), "one-check".into()), failing(&["x"]));
        outcomes.insert(("a".into(), "two-checks".into()), failing(&["x", "y"]));
        outcomes.insert(("a".into(), "whole".into()), failing(&["z"]));
        let e = parse_expected(
            "server:\n  - one-check:x # r\n  - two-checks:x # r\n  - whole # r\n  - gone # r\n",
        )
        .unwrap();
        // ok passes; one-check and whole are excused; two-checks fails on y,
        // nothing-ran proved nothing; `gone` is stale.
        assert_eq!(report(&outcomes, &e, false), (1, 3));
    }
}
