//! Repository rules that the compiler does not check.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Which workspace crates each crate may depend on (normal dependencies). The
/// direction is the design's: cli → hub → session → {types, transport → codec},
/// with types a leaf that the transport uses too (for `ErrorCause`), and
/// auth above the transport (it implements the transport's credential seam),
/// used by the hub's hosts and the CLI. Dev-dependencies may add
/// `mcp-testkit`.
const ALLOWED: &[(&str, &[&str])] = &[
    ("mcp-types", &[]),
    // The codec frames bytes and knows nothing of MCP.
    ("mcp-codec", &[]),
    // mcp-auth implements the transport's credential seam (a small trait
    // there), so it sits above the transport, not below it.
    ("mcp-auth", &["mcp-types", "mcp-transport"]),
    // mcp-types is a leaf of plain data; the transport uses its `ErrorCause`
    // for its errors' `cause()`.
    ("mcp-transport", &["mcp-codec", "mcp-types"]),
    ("mcp-session", &["mcp-types", "mcp-transport", "mcp-codec"]),
    (
        "mcp-hub",
        &["mcp-session", "mcp-types", "mcp-transport", "mcp-auth"],
    ),
    // The testkit checks 2026-07-28 headers by the server half's rules
    // (`mcp_types::headers`), so the two cannot drift apart; its fake server
    // binary reads and writes stdio the server half's way (`mcp_server::stdio`).
    ("mcp-testkit", &["mcp-codec", "mcp-types", "mcp-server"]),
    // The server half: wire types and framing only. Its hosts (the OpenAPI
    // server, the gateway) sit above it; it never depends on a session.
    ("mcp-server", &["mcp-types", "mcp-codec"]),
    // OpenAPI documents as tools: the wire types, and the transport's seam
    // for the in-process server. The hub never depends on it: a host hands
    // the hub an OpenAPI connector like any other.
    ("mcp-openapi", &["mcp-types", "mcp-transport", "mcp-server"]),
    // The loopback web view over a hub: it sees what the hub's governed
    // facade hands any host, never a transport. Only the CLI links it (a
    // feature), so a library user who builds a hub never does.
    ("mcp-playground", &["mcp-hub", "mcp-types", "mcp-session"]),
    // The gateway: a hub's governed view served through the server half
    // (the client features it forwards are the session's handler traits).
    (
        "mcp-gateway",
        &[
            "mcp-hub",
            "mcp-server",
            "mcp-session",
            "mcp-types",
            "mcp-transport",
            "mcp-codec",
        ],
    ),
    // The facade: one dependency for hosts, re-exporting the crates below.
    (
        "mcp-client",
        &["mcp-hub", "mcp-session", "mcp-types", "mcp-transport"],
    ),
    (
        "mcp-cli",
        &[
            "mcp-hub",
            "mcp-session",
            "mcp-types",
            "mcp-transport",
            "mcp-auth",
            "mcp-openapi",
            "mcp-playground",
            "mcp-gateway",
            "mcp-testkit",
            // The demo servers' stdio (`mcp_server::stdio`).
            "mcp-server",
        ],
    ),
    ("xtask", &[]),
];

/// Source folders that form sans-IO cores: no tokio, no std IO, no clock.
const SANS_IO: &[&str] = &[
    "mcp-types/src",
    "mcp-codec/src",
    "mcp-session/src/protocol.rs",
    "mcp-session/src/protocol",
    "mcp-server/src/core.rs",
    "mcp-server/src/core",
];

/// Packages whose stdio-only build (`--no-default-features`: no `http`, no
/// `validation`) is checked for [`LEAN_FORBIDDEN`] crates.
const LEAN_PACKAGES: &[&str] = &["mcp-session", "mcp-client"];

/// Crates a stdio-only build must not compile: the HTTP client and server
/// stack, TLS with its crypto back-ends, the JSON Schema validator. A name
/// matches whole or as a `-`-separated part (`tokio-rustls`, `aws-lc-sys`,
/// `jsonschema-regex`).
const LEAN_FORBIDDEN: &[&str] = &["reqwest", "hyper", "rustls", "aws-lc", "ring", "jsonschema"];

/// Runs every check; returns one line per problem.
pub(crate) fn check(root: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    for (krate, allowed) in ALLOWED {
        let dir = root.join(krate);
        check_dependencies(&dir, krate, allowed, &mut problems);
        check_crate_docs(&dir, krate, &mut problems);
    }
    for dir in SANS_IO {
        for file in rust_files(&root.join(dir)) {
            check_sans_io(root, &file, &mut problems);
        }
    }
    for (krate, _) in ALLOWED {
        for file in rust_files(&root.join(krate)) {
            check_no_placeholders(root, &file, &mut problems);
        }
    }
    check_method_names(root, &mut problems);
    check_lean_trees(root, &mut problems);
    problems
}

/// The stdio-only dependency tree of each of [`LEAN_PACKAGES`] (from
/// `cargo tree`) holds none of [`LEAN_FORBIDDEN`], so the `http` and
/// `validation` features cannot rot into always-on dependencies.
fn check_lean_trees(root: &Path, problems: &mut Vec<String>) {
    for package in LEAN_PACKAGES {
        let output = Command::new(crate::cargo())
            .args(["tree", "-p", package, "--no-default-features"])
            .args(["-e", "normal", "--prefix", "none"])
            .current_dir(root)
            .output();
        match output {
            Ok(out) if out.status.success() => {
                let tree = String::from_utf8_lossy(&out.stdout);
                for name in lean_violations(&tree) {
                    problems.push(format!(
                        "{package} --no-default-features depends on `{name}` (stdio-only builds must not compile HTTP, TLS or jsonschema)"
                    ));
                }
            }
            Ok(out) => problems.push(format!(
                "cargo tree -p {package} --no-default-features failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )),
            Err(e) => problems.push(format!("could not run cargo tree: {e}")),
        }
    }
}

/// The [`LEAN_FORBIDDEN`] crates named in `cargo tree --prefix none` output
/// (one `name vX.Y.Z …` a line), each once.
fn lean_violations(tree: &str) -> Vec<String> {
    let mut found: Vec<String> = tree
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| {
            LEAN_FORBIDDEN.iter().any(|f| {
                *name == *f
                    || name.starts_with(&format!("{f}-"))
                    || name.ends_with(&format!("-{f}"))
                    || name.contains(&format!("-{f}-"))
            })
        })
        .map(str::to_owned)
        .collect();
    found.sort();
    found.dedup();
    found
}

/// The method names the `requests!` / `notifications!` tables of mcp-types
/// define (`Name = "method", …`).
fn method_names(root: &Path) -> Vec<String> {
    let mut names = Vec::new();
    for file in [
        "mcp-types/src/requests.rs",
        "mcp-types/src/notifications.rs",
    ] {
        let text = fs::read_to_string(root.join(file)).unwrap_or_default();
        for line in text.lines() {
            let line = line.trim();
            let Some((name, rest)) = line.split_once(" = \"") else {
                continue;
            };
            if name.chars().all(|c| c.is_ascii_alphanumeric())
                && let Some((method, _)) = rest.split_once('"')
            {
                names.push(method.to_owned());
            }
        }
    }
    names
}

/// Source folders that name methods only through their types.
const METHOD_NAME_DIRS: &[&str] = &["mcp-session/src", "mcp-server/src"];

/// The session and the server name methods only through `Request::METHOD` /
/// `Notification::METHOD`, never as string literals (tests aside).
fn check_method_names(root: &Path, problems: &mut Vec<String>) {
    let names = method_names(root);
    if names.len() < 20 {
        problems.push("tidy: could not read the method tables of mcp-types".to_owned());
        return;
    }
    let files = METHOD_NAME_DIRS
        .iter()
        .flat_map(|dir| rust_files(&root.join(dir)));
    for file in files {
        let rel = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        if rel.ends_with("tests.rs") {
            continue;
        }
        let text = fs::read_to_string(&file).unwrap_or_default();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for (n, line) in code.lines().enumerate() {
            let line = line.split("//").next().unwrap_or("");
            if let Some(name) = names.iter().find(|m| line.contains(&format!("\"{m}\""))) {
                problems.push(format!(
                    "{rel}:{}: method `{name}` as a string literal; use its type's METHOD",
                    n + 1
                ));
            }
        }
    }
}

fn check_dependencies(dir: &Path, krate: &str, allowed: &[&str], problems: &mut Vec<String>) {
    let Ok(manifest) = fs::read_to_string(dir.join("Cargo.toml")) else {
        problems.push(format!("{krate}: no Cargo.toml"));
        return;
    };
    let mut section = String::new();
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line.trim_matches(|c| c == '[' || c == ']').to_owned();
            continue;
        }
        if section != "dependencies" {
            continue;
        }
        let name = line
            .split(|c: char| c == '=' || c == '.' || c.is_whitespace())
            .next()
            .unwrap_or("");
        if name.starts_with("mcp-") && !allowed.contains(&name) {
            problems.push(format!(
                "{krate} depends on {name}, against the dependency direction (allowed: {allowed:?})"
            ));
        }
        if name == "anyhow" && krate != "mcp-cli" && krate != "xtask" {
            problems.push(format!(
                "{krate} depends on anyhow; libraries use their thiserror enum"
            ));
        }
    }
}

fn check_crate_docs(dir: &Path, krate: &str, problems: &mut Vec<String>) {
    let root_file = ["src/lib.rs", "src/main.rs"]
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.exists());
    let Some(path) = root_file else {
        problems.push(format!("{krate}: no src/lib.rs or src/main.rs"));
        return;
    };
    let text = fs::read_to_string(&path).unwrap_or_default();
    if !text.trim_start().starts_with("//!") {
        problems.push(format!("{krate}: crate root has no `//!` documentation"));
    }
    if !text.contains("#![forbid(unsafe_code)]") {
        problems.push(format!("{krate}: crate root lacks #![forbid(unsafe_code)]"));
    }
}

fn check_sans_io(root: &Path, file: &Path, problems: &mut Vec<String>) {
    let text = fs::read_to_string(file).unwrap_or_default();
    let rel = file
        .strip_prefix(root)
        .unwrap_or(file)
        .display()
        .to_string();
    // Test files may read the clock to start simulated time.
    if rel.ends_with("tests.rs") {
        return;
    }
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        for banned in [
            "tokio::",
            "std::time::SystemTime",
            "Instant::now",
            "std::fs",
            "std::net",
        ] {
            if code.contains(banned) {
                problems.push(format!("{rel}:{}: `{banned}` in a sans-IO module", n + 1));
            }
        }
    }
}

fn check_no_placeholders(root: &Path, file: &Path, problems: &mut Vec<String>) {
    let text = fs::read_to_string(file).unwrap_or_default();
    let rel = file
        .strip_prefix(root)
        .unwrap_or(file)
        .display()
        .to_string();
    if rel.starts_with("xtask/src/tidy.rs") {
        return;
    }
    for (n, line) in text.lines().enumerate() {
        for banned in ["todo!(", "unimplemented!(", "#[ignore"] {
            if line.contains(banned) {
                problems.push(format!("{rel}:{}: `{banned}` is not allowed", n + 1));
            }
        }
    }
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    if dir.is_file() {
        return vec![dir.to_path_buf()];
    }
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if name == "target" || name == "node_modules" {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repository_is_tidy() {
        let problems = check(&crate::workspace_root());
        assert!(
            problems.is_empty(),
            "tidy problems:\n{}",
            problems.join("\n")
        );
    }

    #[test]
    fn upward_dependency_is_caught() {
        let dir = tempdir();
        fs::create_dir_all(dir.join("src")).unwrap();
        fs::write(
            dir.join("Cargo.toml"),
            "[package]\nname = \"mcp-types\"\n[dependencies]\nmcp-session.workspace = true\n",
        )
        .unwrap();
        let mut problems = Vec::new();
        check_dependencies(&dir, "mcp-types", &[], &mut problems);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("mcp-session"));
    }

    #[test]
    fn method_tables_are_read_and_a_literal_is_caught() {
        let root = crate::workspace_root();
        let names = method_names(&root);
        assert!(names.contains(&"tools/call".to_owned()), "{names:?}");
        assert!(names.contains(&"notifications/progress".to_owned()));
        let dir = tempdir();
        let types = dir.join("mcp-types/src");
        fs::create_dir_all(&types).unwrap();
        for file in ["requests.rs", "notifications.rs"] {
            fs::copy(root.join("mcp-types/src").join(file), types.join(file)).unwrap();
        }
        let session = dir.join("mcp-session/src");
        fs::create_dir_all(&session).unwrap();
        fs::write(
            session.join("a.rs"),
            "fn f() -> &'static str { \"tools/call\" }\n// \"tools/list\" in a comment is fine\n#[cfg(test)]\nmod tests { const M: &str = \"ping\"; }\n",
        )
        .unwrap();
        let mut problems = Vec::new();
        check_method_names(&dir, &mut problems);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].contains("a.rs:1: method `tools/call`"),
            "{problems:?}"
        );
    }

    #[test]
    fn http_tls_and_jsonschema_in_a_lean_tree_are_caught() {
        let tree = "mcp-session v0.1.0 (/w/mcp-session)\nbytes v1.11.0\ntokio-rustls v0.26.6\n\
                    reqwest v0.13.5\nstring-interner v0.1.0\naws-lc-sys v0.47.0\n\
                    jsonschema v0.61.2\nring v0.17.14\nhyperlocal v0.9.0\nreqwest v0.13.5 (*)\n";
        assert_eq!(
            lean_violations(tree),
            [
                "aws-lc-sys",
                "jsonschema",
                "reqwest",
                "ring",
                "tokio-rustls"
            ]
        );
        assert!(lean_violations("mcp-types v0.1.0 (/w)\nserde v1.0.0\n").is_empty());
    }

    #[test]
    fn tokio_in_sans_io_is_caught() {
        let dir = tempdir();
        let file = dir.join("core.rs");
        fs::write(
            &file,
            "fn f() { tokio::spawn(async {}); }\n// tokio:: in a comment is fine\n",
        )
        .unwrap();
        let mut problems = Vec::new();
        check_sans_io(&dir, &file, &mut problems);
        assert_eq!(problems.len(), 1, "{problems:?}");
    }

    fn tempdir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "xtask-tidy-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }
}
