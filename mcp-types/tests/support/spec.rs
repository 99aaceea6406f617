//! Where the vendored MCP specification data (schemas, examples) is.
//!
//! `MCP_SPEC_DIR` (relative paths resolve against the workspace root) or, by
//! default, `<workspace root>/../shared/mcp-spec`. When the directory is absent the
//! tests print a note and skip, except under `CI=true`, where that is a failure.

use std::path::{Path, PathBuf};

/// The workspace root (this crate's parent directory).
pub(crate) fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The spec data directory, or `None` (after printing why) when absent outside CI.
pub(crate) fn spec_dir() -> Option<PathBuf> {
    let root = workspace_root();
    let dir = match std::env::var_os("MCP_SPEC_DIR") {
        Some(v) => {
            let p = PathBuf::from(v);
            if p.is_relative() { root.join(p) } else { p }
        }
        None => root.join("../shared/mcp-spec"),
    };
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!(
            "MCP spec data not found at {} (CI=true requires it; set MCP_SPEC_DIR)",
            dir.display()
        );
    }
    eprintln!(
        "MCP spec data not found at {}: skipping (set MCP_SPEC_DIR to run)",
        dir.display()
    );
    None
}

/// Reads and parses one version's `schema.json`.
#[allow(dead_code)]
pub(crate) fn load_schema(dir: &Path, version: &str) -> serde_json::Value {
    let path = dir.join(version).join("schema.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}
