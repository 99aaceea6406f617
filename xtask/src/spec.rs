//! `cargo xtask spec`: fetch the official schemas and examples at a pinned
//! commit, verified by SHA-256, for users who have no `../shared/mcp-spec`.
//!
//! The files are test data and stay outside the repository. Downloads use the
//! system `curl`; hashes use `sha256sum`, so xtask needs no HTTP stack.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// The commit of `modelcontextprotocol/modelcontextprotocol` the data comes from.
const SPEC_COMMIT: &str = "b0f60ba5409db7a6582440a7b473cc0398890f15";
/// `sha256  relative/path` per file, relative to the spec directory.
const MANIFEST: &str = include_str!("../spec-manifest.txt");

pub(crate) fn run(root: &Path, args: &[String]) -> anyhow::Result<()> {
    let mut dir = spec_dir(root);
    let mut verify_only = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--dir" => dir = PathBuf::from(it.next().context("--dir needs a value")?),
            "--verify-only" => verify_only = true,
            other => bail!("unknown argument `{other}`"),
        }
    }
    let mut bad = 0usize;
    for line in MANIFEST.lines().filter(|l| !l.trim().is_empty()) {
        let (hash, rel) = line.split_once("  ").context("malformed manifest line")?;
        let path = dir.join(rel);
        if !verify_only && !path.exists() {
            let url = upstream_url(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            let status = Command::new("curl")
                .args(["-fsSL", "--max-time", "60", "-o"])
                .arg(&path)
                .arg(&url)
                .status()
                .context("running curl")?;
            if !status.success() {
                bail!("download failed: {url}");
            }
        }
        match sha256(&path) {
            Some(actual) if actual == hash => {}
            Some(_) => {
                eprintln!("spec: checksum mismatch: {rel}");
                bad += 1;
            }
            None => {
                eprintln!("spec: missing: {rel}");
                bad += 1;
            }
        }
    }
    if bad > 0 {
        bail!(
            "{bad} spec file(s) missing or modified in {}",
            dir.display()
        );
    }
    eprintln!(
        "spec: {} files verified in {}",
        MANIFEST.lines().count(),
        dir.display()
    );
    Ok(())
}

/// `MCP_SPEC_DIR`, resolved against the workspace root, default `../shared/mcp-spec`.
fn spec_dir(root: &Path) -> PathBuf {
    let raw = std::env::var_os("MCP_SPEC_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("../shared/mcp-spec"));
    if raw.is_absolute() {
        raw
    } else {
        root.join(raw)
    }
}

fn upstream_url(rel: &str) -> String {
    let path = if rel == "LICENSE" {
        rel.to_owned()
    } else {
        format!("schema/{rel}")
    };
    format!(
        "https://raw.githubusercontent.com/modelcontextprotocol/modelcontextprotocol/{SPEC_COMMIT}/{path}"
    )
}

fn sha256(path: &Path) -> Option<String> {
    let out = Command::new("sha256sum").arg(path).output().ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8(out.stdout)
        .ok()?
        .split_whitespace()
        .next()
        .map(str::to_owned)
}
