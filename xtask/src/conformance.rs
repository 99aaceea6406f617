//! `cargo xtask conformance`: the official MCP conformance suite against our
//! client, ratcheted by an expected-failures file.
//!
//! Runs, one after another: the frozen requirement sets 2025-11-25 and
//! 2026-07-28, `sse-retry` on its own (its timing window is tight and the
//! sets run scenarios in parallel on two cores), and the client scenarios in
//! neither set (back-compat and extensions). Results come from each
//! scenario's `checks.json`; a scenario passes when none of its checks is a
//! FAILURE or WARNING. The ratchet: a failing scenario not listed in
//! `xtask/conformance-expected-failures.txt` fails the run, and so does a
//! listed one that passes (a stale entry). Its closing line:
//! `conformance: N passed, N failed`.
//!
//! Then the server half (`conformance_server`): the suite's server scenarios
//! against `mcp serve --http` fronting the testkit fixture, closing with
//! `server conformance: N passed, N failed`. `--client` / `--server` run
//! one half; `--scenario S` names a client scenario (with `--server`, a
//! server one); `--server --direct` runs the server scenarios against the
//! fixture itself.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use serde_json::Value;

use crate::node;

/// Client scenarios outside both requirement sets.
const EXTRA_SCENARIOS: &[&str] = &[
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/enterprise-managed-authorization",
    "auth/dpop",
    "auth/dpop-nonce",
    "auth/wif-jwt-bearer",
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
];

/// One scenario's outcome (merged over runs: the solo `sse-retry` run wins).
#[derive(Clone, Debug)]
struct Outcome {
    passed_checks: usize,
    failed_checks: usize,
    first_failure: Option<String>,
}

impl Outcome {
    fn passed(&self) -> bool {
        self.failed_checks == 0 && self.passed_checks > 0
    }
}

/// Returns (passed, failed) scenario counts of both halves after printing
/// their tables.
pub(crate) fn run(root: &Path, args: &[String]) -> anyhow::Result<(u64, u64)> {
    if args.iter().any(|a| a == "--server" || a == "--direct") {
        return crate::conformance_server::run(root, args);
    }
    let client = run_client(root, args)?;
    if args.iter().any(|a| a == "--client" || a == "--scenario") {
        return Ok(client);
    }
    let server = crate::conformance_server::run(root, &[]).unwrap_or_else(|e| {
        println!("server conformance could not run: {e:#}");
        println!("server conformance: 0 passed, 1 failed");
        (0, 1)
    });
    Ok((client.0 + server.0, client.1 + server.1))
}

/// The client half: returns (passed, failed) after printing its table.
fn run_client(root: &Path, args: &[String]) -> anyhow::Result<(u64, u64)> {
    let only: Option<&str> = args
        .iter()
        .position(|a| a == "--scenario")
        .and_then(|i| args.get(i + 1))
        .map(String::as_str);
    let tools = node::ensure_tools(root)?;
    let client = build_client(root)?;
    let out = root.join("target/conformance");
    let _ = fs::remove_dir_all(&out);
    fs::create_dir_all(&out)?;
    let command = format!("{} conformance-client", client.display());

    let mut outcomes: BTreeMap<String, Outcome> = BTreeMap::new();
    let runs: Vec<(String, Vec<String>)> = match only {
        Some(s) => vec![(s.replace('/', "_"), vec!["--scenario".into(), s.into()])],
        None => {
            let mut runs = vec![
                (
                    "2025-11-25".to_owned(),
                    vec!["--requirements".into(), "2025-11-25".into()],
                ),
                (
                    "2026-07-28".to_owned(),
                    vec!["--requirements".into(), "2026-07-28".into()],
                ),
                (
                    "sse-retry".to_owned(),
                    vec!["--scenario".into(), "sse-retry".into()],
                ),
            ];
            for s in EXTRA_SCENARIOS {
                runs.push((s.replace('/', "_"), vec!["--scenario".into(), (*s).into()]));
            }
            runs
        }
    };
    for (label, selection) in &runs {
        let dir = out.join(label);
        eprintln!("== conformance: {label}");
        let status = Command::new(&tools.npx)
            .current_dir(&tools.dir)
            .env("PATH", &tools.path)
            .args(["--prefix", "."])
            .args(["conformance", "client", "--command", &command])
            .args(selection)
            .arg("-o")
            .arg(&dir)
            .args(["--timeout", "60000"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .context("running the conformance suite")?;
        // The suite exits non-zero when anything failed; the checks decide.
        let _ = status;
        for (scenario, outcome) in read_results(&dir)? {
            // A scenario in both sets fails if it fails in either; the solo
            // `sse-retry` run replaces the crowded one.
            let keep_old =
                label != "sse-retry" && outcomes.get(&scenario).is_some_and(|old| !old.passed());
            if !keep_old {
                outcomes.insert(scenario, outcome);
            }
        }
    }
    if outcomes.is_empty() {
        bail!("the conformance suite produced no results (see target/conformance)");
    }
    let expected = read_expected(&root.join("xtask/conformance-expected-failures.txt"))?;
    Ok(report(&outcomes, &expected, only.is_some()))
}

fn build_client(root: &Path) -> anyhow::Result<PathBuf> {
    crate::test_built_executable(root, "mcp").context("building the mcp binary")
}

/// Every `checks.json` under `dir`, by scenario name (the folder path minus
/// its timestamp).
fn read_results(dir: &Path) -> anyhow::Result<BTreeMap<String, Outcome>> {
    Ok(checks_under(dir)?
        .into_iter()
        .map(|(folder, checks)| (strip_timestamp(&folder), summarise(&checks)))
        .collect())
}

/// Every `checks.json` under `dir` (the suite's result folders, which nest
/// when a scenario's name holds `/`): its folder relative to `dir`, and
/// its checks.
pub(crate) fn checks_under(dir: &Path) -> anyhow::Result<Vec<(String, Value)>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n == "checks.json") {
                let folder = path.parent().unwrap_or(dir);
                let rel = folder
                    .strip_prefix(dir)
                    .unwrap_or(folder)
                    .to_string_lossy()
                    .into_owned();
                let checks: Value = serde_json::from_str(&fs::read_to_string(&path)?)
                    .with_context(|| format!("reading {}", path.display()))?;
                out.push((rel, checks));
            }
        }
    }
    Ok(out)
}

/// `auth/metadata-default-2026-11-29T14-04-59-999Z` → `auth/metadata-default`.
pub(crate) fn strip_timestamp(folder: &str) -> String {
    // The timestamp starts at the last `-YYYY-`.
    let bytes = folder.as_bytes();
    for i in (0..folder.len().saturating_sub(24)).rev() {
        if bytes[i] == b'-'
            && folder[i + 1..].len() >= 24
            && folder[i + 1..i + 5].bytes().all(|b| b.is_ascii_digit())
            && folder.as_bytes().get(i + 5) == Some(&b'-')
            && folder[i + 1..].contains('T')
        {
            return folder[..i].to_owned();
        }
    }
    folder.to_owned()
}

fn summarise(checks: &Value) -> Outcome {
    let mut outcome = Outcome {
        passed_checks: 0,
        failed_checks: 0,
        first_failure: None,
    };
    for check in checks.as_array().into_iter().flatten() {
        match check.get("status").and_then(Value::as_str) {
            Some("SUCCESS") => outcome.passed_checks += 1,
            Some("FAILURE") | Some("WARNING") => {
                outcome.failed_checks += 1;
                if outcome.first_failure.is_none() {
                    let id = check.get("id").and_then(Value::as_str).unwrap_or("?");
                    let msg = check
                        .get("errorMessage")
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    let mut line = format!("{id}: {msg}");
                    line.truncate(110);
                    outcome.first_failure = Some(line.replace('\n', " "));
                }
            }
            _ => {}
        }
    }
    outcome
}

/// `scenario  # reason` per line; a missing reason is an error.
fn read_expected(path: &Path) -> anyhow::Result<BTreeMap<String, String>> {
    let text = fs::read_to_string(path).unwrap_or_default();
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((name, reason)) = line.split_once('#') else {
            bail!(
                "{}:{}: an expected failure needs a reason after `#`",
                path.display(),
                n + 1
            );
        };
        let reason = reason.trim();
        if reason.is_empty() {
            bail!("{}:{}: empty reason", path.display(), n + 1);
        }
        out.insert(name.trim().to_owned(), reason.to_owned());
    }
    Ok(out)
}

fn report(
    outcomes: &BTreeMap<String, Outcome>,
    expected: &BTreeMap<String, String>,
    partial: bool,
) -> (u64, u64) {
    let mut passed = 0u64;
    let mut failed = 0u64;
    let mut expected_seen = 0u64;
    println!(
        "{:<48} {:>6} {:>6}  verdict / first failure",
        "scenario", "pass", "fail"
    );
    for (scenario, o) in outcomes {
        let listed = expected.get(scenario);
        let verdict = match (o.passed(), listed) {
            (true, None) => {
                passed += 1;
                "ok".to_owned()
            }
            (true, Some(_)) => {
                failed += 1;
                "STALE expected failure: it passes now".to_owned()
            }
            (false, Some(reason)) => {
                expected_seen += 1;
                format!("expected failure ({reason})")
            }
            (false, None) => {
                failed += 1;
                format!("FAILED {}", o.first_failure.clone().unwrap_or_default())
            }
        };
        println!(
            "{scenario:<48} {:>6} {:>6}  {verdict}",
            o.passed_checks, o.failed_checks
        );
    }
    if !partial {
        for name in expected.keys().filter(|n| !outcomes.contains_key(*n)) {
            failed += 1;
            println!(
                "{name:<48} {:>6} {:>6}  STALE expected failure: scenario not run",
                "-", "-"
            );
        }
    }
    println!(
        "({expected_seen} expected failures, each with its reason in xtask/conformance-expected-failures.txt)"
    );
    println!("conformance: {passed} passed, {failed} failed");
    (passed, failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenario_names_lose_their_timestamp() {
        assert_eq!(
            strip_timestamp("auth/metadata-default-2026-11-29T14-04-59-999Z"),
            "auth/metadata-default"
        );
        assert_eq!(
            strip_timestamp("tools_call-2026-11-29T14-04-57-599Z"),
            "tools_call"
        );
        assert_eq!(strip_timestamp("sse-retry"), "sse-retry");
    }

    #[test]
    fn warnings_count_as_failures() {
        let checks = serde_json::json!([
            {"id": "a", "status": "SUCCESS"},
            {"id": "b", "status": "WARNING", "errorMessage": "late"},
            {"id": "c", "status": "SKIPPED"}
        ]);
        let o = summarise(&checks);
        assert_eq!((o.passed_checks, o.failed_checks), (1, 1));
        assert!(!o.passed());
        assert_eq!(o.first_failure.as_deref(), Some("b: late"));
    }

    #[test]
    fn stale_and_new_failures_both_fail_the_ratchet() {
        let mut outcomes = BTreeMap::new();
        let ok = Outcome {
            passed_checks: 2,
            failed_checks: 0,
            first_failure: None,
        };
        let bad = Outcome {
            passed_checks: 0,
            failed_checks: 1,
            first_failure: Some("x".into()),
        };
        outcomes.insert("fixed".to_owned(), ok.clone());
        outcomes.insert("known".to_owned(), bad.clone());
        outcomes.insert("new".to_owned(), bad);
        outcomes.insert("fine".to_owned(), ok);
        let mut expected = BTreeMap::new();
        expected.insert("fixed".to_owned(), "was broken".to_owned());
        expected.insert("known".to_owned(), "extension".to_owned());
        assert_eq!(report(&outcomes, &expected, false), (1, 2));
    }
}
