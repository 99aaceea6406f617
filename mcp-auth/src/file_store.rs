//! The token store of the CLI: one JSON file per (MCP server URL, issuer)
//! under `$XDG_DATA_HOME/mcp/oauth/` (`~/.local/share/mcp/oauth/` when the
//! variable is unset).
//!
//! - The directory is created `0700`, files `0600`. A directory that other
//!   users can write, or that belongs to someone else, is refused by name
//!   ([`AuthError::StoreDirectoryUnsafe`]) and not repaired: while it was
//!   open, another user could have removed records or planted links, and
//!   a silent `chmod` would hide that. A file that other users can read or
//!   write, or that belongs to someone else, is refused.
//! - The lock file and the records are opened without following symbolic
//!   links (`O_NOFOLLOW`): a link there is an error naming the file, never
//!   a file created or read somewhere else.
//! - A write goes to a fresh temporary file in the same directory, is
//!   synced, then renamed over the old one: a reader sees the old record or
//!   the new one, never half of either.
//! - An advisory lock (`flock` on `.lock`) serialises writers and keeps
//!   readers off half-finished directory updates, so concurrent CLI
//!   processes do not clobber each other.
//! - File names are hashes: no server URL or issuer appears in a path.

use std::fs::{self, File, OpenOptions};
use std::io::{Read as _, Write as _};
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use mcp_transport::BoxFuture;
use rustix::fs::{FlockOperation, Mode, OFlags};
use sha2::{Digest, Sha256};

use crate::error::{AuthError, StoreDirectoryProblem};
use crate::pkce::random_token;
use crate::store::{RECORD_VERSION, StoredCredentials, TokenStore};
use crate::token::unix_now;

/// Bound on one record file.
const MAX_RECORD_BYTES: u64 = 64 * 1024;

/// Records kept as files in a private directory.
#[derive(Debug, Clone)]
pub struct FileTokenStore {
    dir: PathBuf,
}

impl FileTokenStore {
    /// A store in `dir` (created on first save).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The store under the XDG data directory: `$XDG_DATA_HOME/mcp/oauth`,
    /// else `$HOME/.local/share/mcp/oauth`.
    pub fn default_location() -> Result<Self, AuthError> {
        let data = std::env::var_os("XDG_DATA_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| {
                std::env::var_os("HOME")
                    .map(PathBuf::from)
                    .filter(|p| p.is_absolute())
                    .map(|home| home.join(".local").join("share"))
            })
            .ok_or(AuthError::NoDataDirectory)?;
        Ok(Self::new(data.join("mcp").join("oauth")))
    }

    /// The directory holding the records.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn store_error(path: &Path, source: std::io::Error) -> AuthError {
        AuthError::Store {
            path: path.to_owned(),
            source,
        }
    }

    fn ensure_dir(&self) -> Result<(), AuthError> {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(|e| Self::store_error(&self.dir, e))?;
        // An existing directory keeps its mode: check it.
        self.check_dir()
    }

    /// Refuses a directory that another user owns or can write.
    fn check_dir(&self) -> Result<(), AuthError> {
        let meta = fs::metadata(&self.dir).map_err(|e| Self::store_error(&self.dir, e))?;
        let euid = rustix::process::geteuid().as_raw();
        match directory_problem(meta.is_dir(), meta.mode(), meta.uid(), euid) {
            None => Ok(()),
            Some(problem) => Err(AuthError::StoreDirectoryUnsafe {
                path: self.dir.clone(),
                problem,
            }),
        }
    }

    /// Opens (creating) the lock file, never through a symbolic link, and
    /// takes the lock.
    fn lock(&self, operation: FlockOperation) -> Result<File, AuthError> {
        let path = self.dir.join(".lock");
        let flags = OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let file = open_no_follow(&path, flags, Mode::from_raw_mode(0o600))
            .map_err(|e| Self::store_error(&path, e))?;
        rustix::fs::flock(&file, operation).map_err(|e| Self::store_error(&path, e.into()))?;
        Ok(file)
    }

    fn load_sync(&self, server_url: &str) -> Result<Vec<StoredCredentials>, AuthError> {
        if !self.dir.exists() {
            return Ok(Vec::new());
        }
        self.check_dir()?;
        let _lock = self.lock(FlockOperation::LockShared)?;
        let prefix = format!("{}-", hash(server_url, 32));
        let entries = fs::read_dir(&self.dir).map_err(|e| Self::store_error(&self.dir, e))?;
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| Self::store_error(&self.dir, e))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if !name.starts_with(&prefix) || !name.ends_with(".json") {
                continue;
            }
            let record = read_record(&entry.path())?;
            // The hash only narrows the search; the record says what it is for.
            if record.server_url == server_url {
                out.push(record);
            }
        }
        Ok(out)
    }

    fn save_sync(&self, mut record: StoredCredentials) -> Result<(), AuthError> {
        self.ensure_dir()?;
        let _lock = self.lock(FlockOperation::LockExclusive)?;
        record.version = RECORD_VERSION;
        record.saved_at = unix_now();
        let path = self.record_path(&record.server_url, &record.issuer);
        // Serialising our own types cannot fail (no maps with non-string
        // keys, no failing Serialize impls); an error would still be reported.
        let bytes = serde_json::to_vec_pretty(&record)
            .map_err(|_| AuthError::StoreCorrupt { path: path.clone() })?;
        let tmp = self.dir.join(format!(".tmp-{}", random_token()?));
        let written = (|| {
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&tmp)?;
            file.write_all(&bytes)?;
            file.sync_all()?;
            fs::rename(&tmp, &path)?;
            File::open(&self.dir)?.sync_all()
        })();
        if let Err(e) = written {
            let _ = fs::remove_file(&tmp);
            return Err(Self::store_error(&path, e));
        }
        Ok(())
    }

    fn remove_sync(&self, server_url: &str, issuer: &str) -> Result<(), AuthError> {
        if !self.dir.exists() {
            return Ok(());
        }
        self.check_dir()?;
        let _lock = self.lock(FlockOperation::LockExclusive)?;
        let path = self.record_path(server_url, issuer);
        match fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Self::store_error(&path, e)),
        }
    }

    fn record_path(&self, server_url: &str, issuer: &str) -> PathBuf {
        self.dir.join(format!(
            "{}-{}.json",
            hash(server_url, 32),
            hash(issuer, 16)
        ))
    }
}

/// The first `len` hex digits of SHA-256.
fn hash(text: &str, len: usize) -> String {
    let digest = Sha256::digest(text.as_bytes());
    let mut out: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    out.truncate(len);
    out
}

/// What is wrong with a store directory of this `mode` and `owner`, for a
/// process whose effective user is `euid`.
fn directory_problem(
    is_dir: bool,
    mode: u32,
    owner: u32,
    euid: u32,
) -> Option<StoreDirectoryProblem> {
    if !is_dir {
        Some(StoreDirectoryProblem::NotADirectory)
    } else if owner != euid {
        Some(StoreDirectoryProblem::OwnedByOtherUser { owner })
    } else if mode & 0o022 != 0 {
        Some(StoreDirectoryProblem::WritableByOthers {
            mode: mode & 0o7777,
        })
    } else {
        None
    }
}

/// Opens `path` with `flags` (which include `O_NOFOLLOW`); a symbolic link
/// at `path` is an error that says so.
fn open_no_follow(path: &Path, flags: OFlags, mode: Mode) -> std::io::Result<File> {
    match rustix::fs::open(path, flags, mode) {
        Ok(fd) => Ok(File::from(fd)),
        Err(rustix::io::Errno::LOOP) => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "it is a symbolic link, which is not followed",
        )),
        Err(e) => Err(e.into()),
    }
}

fn read_record(path: &Path) -> Result<StoredCredentials, AuthError> {
    let err = |e| FileTokenStore::store_error(path, e);
    // Non-blocking, so that a FIFO in its place cannot stall the read.
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
    let file = open_no_follow(path, flags, Mode::empty()).map_err(err)?;
    let meta = file.metadata().map_err(err)?;
    if !meta.is_file() {
        return Err(AuthError::StoreCorrupt {
            path: path.to_owned(),
        });
    }
    if meta.mode() & 0o077 != 0 || meta.uid() != rustix::process::geteuid().as_raw() {
        return Err(AuthError::StorePermissions {
            path: path.to_owned(),
        });
    }
    if meta.len() > MAX_RECORD_BYTES {
        return Err(AuthError::StoreCorrupt {
            path: path.to_owned(),
        });
    }
    let mut bytes = Vec::new();
    file.take(MAX_RECORD_BYTES)
        .read_to_end(&mut bytes)
        .map_err(err)?;
    let record: StoredCredentials =
        serde_json::from_slice(&bytes).map_err(|_| AuthError::StoreCorrupt {
            path: path.to_owned(),
        })?;
    if record.version != RECORD_VERSION {
        return Err(AuthError::StoreCorrupt {
            path: path.to_owned(),
        });
    }
    Ok(record)
}

/// Runs blocking file work off the async threads (a lock may wait for
/// another process).
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, AuthError> + Send + 'static,
) -> Result<T, AuthError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| AuthError::Io(std::io::Error::other(e)))?
}

impl TokenStore for FileTokenStore {
    fn load(&self, server_url: &str) -> BoxFuture<'_, Result<Vec<StoredCredentials>, AuthError>> {
        let store = self.clone();
        let server_url = server_url.to_owned();
        Box::pin(blocking(move || store.load_sync(&server_url)))
    }

    fn save(&self, record: StoredCredentials) -> BoxFuture<'_, Result<(), AuthError>> {
        let store = self.clone();
        Box::pin(blocking(move || store.save_sync(record)))
    }

    fn remove(&self, server_url: &str, issuer: &str) -> BoxFuture<'_, Result<(), AuthError>> {
        let store = self.clone();
        let (server_url, issuer) = (server_url.to_owned(), issuer.to_owned());
        Box::pin(blocking(move || store.remove_sync(&server_url, &issuer)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_must_be_ours_and_writable_by_us_only() {
        assert_eq!(directory_problem(true, 0o40700, 1000, 1000), None);
        assert_eq!(directory_problem(true, 0o40755, 1000, 1000), None);
        assert_eq!(
            directory_problem(true, 0o40777, 1000, 1000),
            Some(StoreDirectoryProblem::WritableByOthers { mode: 0o777 })
        );
        assert_eq!(
            directory_problem(true, 0o41770, 1000, 1000),
            Some(StoreDirectoryProblem::WritableByOthers { mode: 0o1770 })
        );
        assert_eq!(
            directory_problem(true, 0o40700, 0, 1000),
            Some(StoreDirectoryProblem::OwnedByOtherUser { owner: 0 })
        );
        assert_eq!(
            directory_problem(false, 0o100600, 1000, 1000),
            Some(StoreDirectoryProblem::NotADirectory)
        );
    }
}
