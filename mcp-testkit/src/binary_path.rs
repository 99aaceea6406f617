//! Finding (and if needed building) the `mcp-testkit-server` binary from
//! another crate's tests, where `CARGO_BIN_EXE_*` is not available.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::TestkitError;

/// File name of the stdio binary.
pub const SERVER_BINARY_NAME: &str = "mcp-testkit-server";

/// Environment variable naming the binary explicitly; wins over the search.
pub const SERVER_BINARY_ENV: &str = "MCP_TESTKIT_SERVER";

/// Where the binary is, if it has been built.
///
/// Looks at `$MCP_TESTKIT_SERVER`, then next to the running executable's
/// profile directory: test executables live in `target/<profile>/deps/`
/// (or `target/<triple>/<profile>/deps/`), the binary in
/// `target/<profile>/`. Returns `None` if it is not there: call
/// [`build_server_binary`] to build it, since Cargo does not build the
/// binaries of a dev-dependency.
pub fn server_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(SERVER_BINARY_ENV) {
        let path = PathBuf::from(path);
        return path.is_file().then_some(path);
    }
    let exe = std::env::current_exe().ok()?;
    let profile_dir = profile_dir_of(&exe)?;
    let path = profile_dir.join(binary_file_name());
    path.is_file().then_some(path)
}

/// [`server_binary`], building it first when it is missing: runs
/// `$CARGO build -p mcp-testkit --bin mcp-testkit-server` (plain `cargo` if
/// `CARGO` is unset) for the same profile, target triple and target directory
/// as the running executable. Blocks; call it from a test before starting
/// servers (concurrent calls are safe: Cargo serialises them with its lock).
pub fn build_server_binary() -> Result<PathBuf, TestkitError> {
    if let Some(path) = server_binary() {
        return Ok(path);
    }
    let exe = std::env::current_exe().map_err(|_| TestkitError::NoTargetDir)?;
    let profile_dir = profile_dir_of(&exe).ok_or(TestkitError::NoTargetDir)?;
    let layout = TargetLayout::of(&profile_dir).ok_or(TestkitError::NoTargetDir)?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let mut command = Command::new(cargo);
    command
        .arg("build")
        .arg("--quiet")
        .arg("--manifest-path")
        .arg(&manifest)
        .args(["-p", "mcp-testkit", "--bin", SERVER_BINARY_NAME])
        .arg("--target-dir")
        .arg(&layout.target_dir);
    match layout.profile.as_str() {
        "debug" => {}
        "release" => {
            command.arg("--release");
        }
        other => {
            command.args(["--profile", other]);
        }
    }
    if let Some(triple) = &layout.triple {
        command.arg("--target").arg(triple);
    }
    let status = command.status().map_err(TestkitError::CargoSpawn)?;
    if !status.success() {
        return Err(TestkitError::CargoFailed(status));
    }
    let path = profile_dir.join(binary_file_name());
    if path.is_file() {
        Ok(path)
    } else {
        Err(TestkitError::BinaryMissing(path))
    }
}

fn binary_file_name() -> String {
    format!("{SERVER_BINARY_NAME}{}", std::env::consts::EXE_SUFFIX)
}

/// `target/<profile>` (or `target/<triple>/<profile>`) for an executable in
/// it, in its `deps/` or in its `examples/`.
fn profile_dir_of(exe: &Path) -> Option<PathBuf> {
    let dir = exe.parent()?;
    let name = dir.file_name().and_then(OsStr::to_str);
    if matches!(name, Some("deps" | "examples")) {
        dir.parent().map(Path::to_path_buf)
    } else {
        Some(dir.to_path_buf())
    }
}

/// How a profile directory sits in its target directory.
struct TargetLayout {
    target_dir: PathBuf,
    triple: Option<String>,
    profile: String,
}

impl TargetLayout {
    fn of(profile_dir: &Path) -> Option<Self> {
        let profile = profile_dir.file_name()?.to_str()?.to_owned();
        let parent = profile_dir.parent()?;
        // Cargo marks the root of every target directory with CACHEDIR.TAG;
        // without it one level up, the parent is a `--target` triple folder.
        if parent.join("CACHEDIR.TAG").is_file() {
            return Some(Self {
                target_dir: parent.to_path_buf(),
                triple: None,
                profile,
            });
        }
        let root = parent.parent()?;
        let triple = parent.file_name()?.to_str()?.to_owned();
        root.join("CACHEDIR.TAG").is_file().then(|| Self {
            target_dir: root.to_path_buf(),
            triple: Some(triple),
            profile,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_dir_is_found_from_deps_and_examples() {
        assert_eq!(
            profile_dir_of(Path::new("/t/target/debug/deps/x-123")),
            Some(PathBuf::from("/t/target/debug"))
        );
        assert_eq!(
            profile_dir_of(Path::new("/t/target/release/examples/ex")),
            Some(PathBuf::from("/t/target/release"))
        );
        assert_eq!(
            profile_dir_of(Path::new("/t/target/debug/tool")),
            Some(PathBuf::from("/t/target/debug"))
        );
    }

    #[test]
    fn layout_of_the_running_test_is_a_real_target_dir() {
        let exe = std::env::current_exe().unwrap();
        let profile_dir = profile_dir_of(&exe).unwrap();
        let layout = TargetLayout::of(&profile_dir).unwrap();
        assert!(layout.target_dir.join("CACHEDIR.TAG").is_file());
        assert_eq!(
            layout.profile,
            profile_dir.file_name().unwrap().to_str().unwrap()
        );
    }
}
