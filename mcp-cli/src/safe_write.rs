//! Rewriting a file the user owns (the configuration, the trust store)
//! without letting anyone else's file be written instead, and without losing
//! a concurrent writer's change.
//!
//! - The file is replaced whole: written to a new file of an unpredictable
//!   name created exclusively (`O_EXCL`: a planted file or symlink makes the
//!   create fail, never redirects it) in the same directory, given the old
//!   file's permissions through its own handle, flushed to disk, then renamed
//!   over the old one, and the directory flushed.
//! - A file that is a symlink keeps pointing where it points: its target is
//!   written.
//! - Writers take an exclusive lock on the directory first and hold it from
//!   reading the old contents to the rename, so two `mcp add`s in parallel
//!   both land. A lock that stays taken is a named error after
//!   [`LOCK_WAIT`], never a wait without end.

use std::io::Write;
use std::os::fd::OwnedFd;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::fs::{FlockOperation, Mode, OFlags};

/// How long a writer waits for another writer of the same directory.
pub(crate) const LOCK_WAIT: Duration = Duration::from_secs(10);

/// Symlinks followed before giving up (as the kernel does).
const MAX_LINKS: usize = 40;

/// Why a file could not be rewritten.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WriteError {
    #[error("another process held the lock on {} for {} s", .dir.display(), LOCK_WAIT.as_secs())]
    Busy { dir: PathBuf },
    #[error("too many levels of symbolic links")]
    LinkLoop,
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// The target of `path` once every symlink in its last component is
/// followed (the file itself need not exist).
pub(crate) fn resolve_links(path: &Path) -> Result<PathBuf, WriteError> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = std::fs::read_link(&current)?;
                current = match current.parent() {
                    Some(parent) if link.is_relative() => parent.join(link),
                    _ => link,
                };
            }
            Ok(_) => return Ok(current),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(current),
            Err(e) => return Err(e.into()),
        }
    }
    Err(WriteError::LinkLoop)
}

/// An exclusive lock on the directory of a file about to be rewritten.
#[derive(Debug)]
pub(crate) struct Locked {
    dir: OwnedFd,
    dir_path: PathBuf,
    target: PathBuf,
}

impl Locked {
    /// Locks the directory of `path`'s target (created if missing, with
    /// `dir_mode`), waiting at most [`LOCK_WAIT`] for another writer.
    pub(crate) fn acquire(path: &Path, dir_mode: u32) -> Result<Self, WriteError> {
        let target = resolve_links(path)?;
        let dir_path = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !dir_path.exists() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(dir_mode)
                .create(&dir_path)?;
        }
        let dir = rustix::fs::open(
            &dir_path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(std::io::Error::from)?;
        let deadline = Instant::now() + LOCK_WAIT;
        loop {
            match rustix::fs::flock(&dir, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => break,
                Err(rustix::io::Errno::WOULDBLOCK) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(rustix::io::Errno::WOULDBLOCK) => {
                    return Err(WriteError::Busy { dir: dir_path });
                }
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(std::io::Error::from(e).into()),
            }
        }
        Ok(Self {
            dir,
            dir_path,
            target,
        })
    }

    /// The file that is written (the symlink's target, if `path` was one).
    #[cfg(test)]
    pub(crate) fn target(&self) -> &Path {
        &self.target
    }

    /// Replaces the target's contents with `text`. A new file gets
    /// `new_mode`; an existing one keeps its permissions.
    pub(crate) fn replace(&self, text: &str, new_mode: u32) -> Result<(), WriteError> {
        let name = self
            .target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut temp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            .tempfile_in(&self.dir_path)?;
        let mode = match std::fs::metadata(&self.target) {
            Ok(meta) => meta.permissions().mode() & 0o7777,
            Err(_) => new_mode,
        };
        // Through the handle: the name could be swapped under us, the
        // handle cannot.
        temp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))?;
        temp.write_all(text.as_bytes())?;
        temp.as_file().sync_all()?;
        temp.persist(&self.target).map_err(|e| e.error)?;
        rustix::fs::fsync(&self.dir).map_err(std::io::Error::from)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symlinked_file_keeps_its_link_and_its_target_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        std::fs::write(&real, "old").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink("real.json", &link).unwrap();
        let lock = Locked::acquire(&link, 0o700).unwrap();
        assert_eq!(lock.target(), real);
        lock.replace("new", 0o600).unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        // Nothing but the two names is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn a_new_file_gets_the_new_mode_and_its_directory_is_made() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a/b/state.json");
        Locked::acquire(&file, 0o700)
            .unwrap()
            .replace("{}", 0o600)
            .unwrap();
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dir_mode = std::fs::metadata(dir.path().join("a/b"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(dir_mode & 0o077, 0);
    }

    #[test]
    fn a_symlink_loop_is_a_named_error() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        std::os::unix::fs::symlink("b", &a).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        assert!(matches!(resolve_links(&a), Err(WriteError::LinkLoop)));
    }

    #[test]
    fn the_directory_stays_locked_until_the_writer_is_done() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("c.json");
        let try_lock = || {
            let fd = rustix::fs::open(
                dir.path(),
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .unwrap();
            rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive)
        };
        let writer = Locked::acquire(&file, 0o700).unwrap();
        assert_eq!(try_lock(), Err(rustix::io::Errno::WOULDBLOCK));
        writer.replace("first", 0o600).unwrap();
        assert_eq!(try_lock(), Err(rustix::io::Errno::WOULDBLOCK));
        drop(writer);
        assert_eq!(try_lock(), Ok(()));
    }
}
