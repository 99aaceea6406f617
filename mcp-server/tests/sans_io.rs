//! The core stays sans-IO: no tokio, no clock, no IO, nothing async, in any
//! of its files (its transcript tests aside, which start simulated time from
//! a real instant).

use std::path::{Path, PathBuf};

fn core_files() -> Vec<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![src.join("core.rs")];
    for entry in std::fs::read_dir(src.join("core")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("tests.rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

#[test]
fn the_core_never_imports_tokio_reads_the_clock_or_awaits() {
    let banned = [
        "tokio",
        "Instant::now",
        "SystemTime",
        "std::fs",
        "std::net",
        "std::io",
        "std::thread",
        "async ",
        ".await",
    ];
    let files = core_files();
    assert!(files.len() >= 5, "{files:?}");
    let mut problems = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for word in banned {
                if code.contains(word) {
                    problems.push(format!("{}:{}: `{word}`", file.display(), n + 1));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
