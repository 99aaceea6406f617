//! The operator's control socket: a Unix socket where changed tool lists
//! are reviewed while the host keeps its connection on stdio.
//!
//! One command a line, answered by lines ending with `ok` or `error: …`:
//!
//! | command | answer |
//! |---|---|
//! | `pending` | one JSON object a line per changed tool list waiting (`server`, `generation`, `added`, `removed`, `changed`), then `ok` |
//! | `adopt SERVER GENERATION` | `ok`: the host is served the new list (and told) |
//! | `discard SERVER GENERATION` | `ok`: the host keeps the approved list |
//!
//! Tool names in `pending` are the servers' words, as JSON strings: escape
//! them before they reach a terminal. A line is at most 1 KiB; at most 4
//! connections are served at once, each closed after 60 s without a
//! command. The socket file is made with permissions 0600, and a
//! connection from any other user than the gateway's is closed unanswered;
//! keep it in a private directory (such as `$XDG_RUNTIME_DIR`).

use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use mcp_hub::Hub;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

use crate::GatewayError;
use crate::gateway::{self, Pending};

/// Longest command line.
const MAX_LINE: u64 = 1024;
/// Connections served at once.
const MAX_CONNECTIONS: usize = 4;
/// A connection without a command for this long is closed.
const IDLE: Duration = Duration::from_secs(60);

/// The socket while the gateway serves; removed when dropped.
#[derive(Debug)]
pub(crate) struct ControlSocket {
    path: PathBuf,
    task: JoinHandle<()>,
}

impl Drop for ControlSocket {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Makes the socket at `path` and serves it for `hub`.
pub(crate) fn open(path: &Path, hub: Arc<Hub>) -> Result<ControlSocket, GatewayError> {
    let failed = |what: &'static str| {
        move |source| GatewayError::Control {
            path: path.to_owned(),
            what,
            source,
        }
    };
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_socket() => {
            std::fs::remove_file(path).map_err(failed("removing the old socket"))?;
        }
        Ok(_) => {
            return Err(GatewayError::ControlPathTaken {
                path: path.to_owned(),
            });
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(failed("looking at the path")(e)),
    }
    let listener = UnixListener::bind(path).map_err(failed("binding"))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(failed("setting its permissions"))?;
    // The file is ours, so its owner is who we are. Until the line above
    // the file had the umask's permissions (group-writable under some), and
    // a connection made then outlives the change: every peer is checked.
    let owner = std::fs::symlink_metadata(path)
        .map_err(failed("looking at the socket"))?
        .uid();
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            if stream.peer_cred().map(|c| c.uid()).ok() != Some(owner) {
                tracing::warn!("a connection to the control socket from another user was closed");
                continue;
            }
            let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
                // Too many at once: this one is closed unanswered.
                continue;
            };
            let hub = Arc::clone(&hub);
            tokio::spawn(async move {
                let _slot = slot;
                serve_connection(stream, &hub).await;
            });
        }
    });
    Ok(ControlSocket {
        path: path.to_owned(),
        task,
    })
}

async fn serve_connection(stream: UnixStream, hub: &Hub) {
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::new(read);
    loop {
        let mut line = Vec::new();
        let got = tokio::time::timeout(
            IDLE,
            (&mut read).take(MAX_LINE + 1).read_until(b'\n', &mut line),
        )
        .await;
        let answer = match got {
            Err(_) | Ok(Err(_)) | Ok(Ok(0)) => return,
            Ok(Ok(_)) if line.len() as u64 > MAX_LINE => {
                let _ = write
                    .write_all(b"error: a command is at most 1024 bytes\n")
                    .await;
                return;
            }
            Ok(Ok(_)) => match std::str::from_utf8(&line) {
                Ok(text) => answer(hub, text.trim()),
                Err(_) => "error: a command is UTF-8 text\n".to_owned(),
            },
        };
        if write.write_all(answer.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// The answer to one command, every line ended.
fn answer(hub: &Hub, command: &str) -> String {
    let words: Vec<&str> = command.split_whitespace().collect();
    let outcome = match words.as_slice() {
        ["pending"] => {
            let mut out = String::new();
            for Pending {
                server,
                generation,
                diff,
            } in gateway::pending(hub)
            {
                let line = json!({
                    "server": server,
                    "generation": generation,
                    "added": diff.added,
                    "removed": diff.removed,
                    "changed": diff.changed,
                });
                out.push_str(&line.to_string());
                out.push('\n');
            }
            out.push_str("ok\n");
            return out;
        }
        ["adopt", server, generation] | ["discard", server, generation] => {
            match generation.parse::<u64>() {
                Ok(generation) if words[0] == "adopt" => gateway::adopt(hub, server, generation),
                Ok(generation) => gateway::discard(hub, server, generation),
                Err(_) => return "error: the generation is a number\n".to_owned(),
            }
        }
        _ => {
            return "error: commands are `pending`, `adopt SERVER GENERATION`, `discard SERVER GENERATION`\n"
                .to_owned();
        }
    };
    match outcome {
        Ok(()) => "ok\n".to_owned(),
        Err(e) => format!("error: {e}\n"),
    }
}

/// Sends one command to the gateway at `path` and returns the lines of its
/// answer before `ok`; the gateway's refusal is
/// [`GatewayError::ControlRefused`].
pub async fn send(path: &Path, command: &str) -> Result<Vec<String>, GatewayError> {
    let failed = |what: &'static str| {
        move |source| GatewayError::Control {
            path: path.to_owned(),
            what,
            source,
        }
    };
    let stream = UnixStream::connect(path)
        .await
        .map_err(failed("connecting"))?;
    let (read, mut write) = stream.into_split();
    write
        .write_all(format!("{command}\n").as_bytes())
        .await
        .map_err(failed("sending"))?;
    let mut lines = BufReader::new(read.take(16 * 1024 * 1024)).lines();
    let mut out = Vec::new();
    loop {
        let line = tokio::time::timeout(IDLE, lines.next_line())
            .await
            .map_err(|_| failed("waiting for the answer")(std::io::ErrorKind::TimedOut.into()))?
            .map_err(failed("reading the answer"))?;
        match line {
            Some(line) if line == "ok" => return Ok(out),
            Some(line) => match line.strip_prefix("error: ") {
                Some(message) => return Err(GatewayError::ControlRefused(message.to_owned())),
                None => out.push(line),
            },
            None => {
                return Err(failed("reading the answer")(
                    std::io::ErrorKind::UnexpectedEof.into(),
                ));
            }
        }
    }
}
