//! The process's standard input and output, for serving over stdio.
//!
//! tokio's `stdin()` and `stdout()` hand every read and write to a blocking
//! thread: two thread switches per message, on the path of every call, and
//! a thread pool's CPU on a server that may be one of hundreds. A client
//! starts a server with pipes (what Rust's and Python's process APIs make)
//! or socket pairs (what Node's `child_process` makes, and what our own
//! transport makes once descriptors run short); both can be read and
//! written on the runtime itself, non-blocking. Anything else (a terminal,
//! a file) keeps tokio's blocking-thread form.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileTypeExt as _;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::UnixStream;
use tokio::net::unix::pipe;

/// Standard input, read on the runtime when it is a pipe or a socket.
#[derive(Debug)]
pub struct StdinReader(Input);

#[derive(Debug)]
enum Input {
    Pipe(pipe::Receiver),
    Socket(UnixStream),
    Blocking(tokio::io::Stdin),
}

/// Standard output, written on the runtime when it is a pipe or a socket.
#[derive(Debug)]
pub struct StdoutWriter(Output);

#[derive(Debug)]
enum Output {
    Pipe(pipe::Sender),
    Socket(UnixStream),
    Blocking(tokio::io::Stdout),
}

/// The process's standard input and output for [`serve`](crate::serve)
/// (or a gateway's own loop). Each is read or written on the runtime,
/// non-blocking, when it is a pipe or a socket; otherwise through tokio's
/// `stdin()` / `stdout()`. The standard descriptors are duplicated, not
/// taken: they stay open. Call it inside a tokio runtime with IO enabled.
///
/// The duplicates share the open file with descriptors 0 and 1, so those
/// become non-blocking too: write nothing else to standard output (it is
/// the protocol's anyway).
#[must_use]
pub fn stdio() -> (StdinReader, StdoutWriter) {
    let input = duplicate(io::stdin().as_fd())
        .and_then(input_from)
        .unwrap_or_else(|| Input::Blocking(tokio::io::stdin()));
    let output = duplicate(io::stdout().as_fd())
        .and_then(output_from)
        .unwrap_or_else(|| Output::Blocking(tokio::io::stdout()));
    (StdinReader(input), StdoutWriter(output))
}

fn input_from(fd: OwnedFd) -> Option<Input> {
    match kind(&fd)? {
        Kind::Pipe => pipe::Receiver::from_owned_fd(fd).ok().map(Input::Pipe),
        Kind::Socket => socket(fd).map(Input::Socket),
    }
}

fn output_from(fd: OwnedFd) -> Option<Output> {
    match kind(&fd)? {
        Kind::Pipe => pipe::Sender::from_owned_fd(fd).ok().map(Output::Pipe),
        Kind::Socket => socket(fd).map(Output::Socket),
    }
}

enum Kind {
    Pipe,
    Socket,
}

fn duplicate(fd: std::os::fd::BorrowedFd<'_>) -> Option<OwnedFd> {
    fd.try_clone_to_owned().ok()
}

fn kind(fd: &OwnedFd) -> Option<Kind> {
    let file = std::fs::File::from(fd.try_clone().ok()?);
    let kind = file.metadata().ok()?.file_type();
    if kind.is_fifo() {
        Some(Kind::Pipe)
    } else if kind.is_socket() {
        Some(Kind::Socket)
    } else {
        None
    }
}

fn socket(fd: OwnedFd) -> Option<UnixStream> {
    let stream = std::os::unix::net::UnixStream::from(fd);
    stream.set_nonblocking(true).ok()?;
    UnixStream::from_std(stream).ok()
}

impl AsyncRead for StdinReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            Input::Pipe(r) => Pin::new(r).poll_read(cx, buf),
            Input::Socket(r) => Pin::new(r).poll_read(cx, buf),
            Input::Blocking(r) => Pin::new(r).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for StdoutWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().0 {
            Output::Pipe(w) => Pin::new(w).poll_write(cx, buf),
            Output::Socket(w) => Pin::new(w).poll_write(cx, buf),
            Output::Blocking(w) => Pin::new(w).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().0 {
            Output::Pipe(w) => Pin::new(w).poll_write_vectored(cx, bufs),
            Output::Socket(w) => Pin::new(w).poll_write_vectored(cx, bufs),
            Output::Blocking(w) => Pin::new(w).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match &self.0 {
            Output::Pipe(w) => w.is_write_vectored(),
            Output::Socket(w) => w.is_write_vectored(),
            Output::Blocking(w) => w.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            Output::Pipe(w) => Pin::new(w).poll_flush(cx),
            Output::Socket(w) => Pin::new(w).poll_flush(cx),
            Output::Blocking(w) => Pin::new(w).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            Output::Pipe(w) => Pin::new(w).poll_shutdown(cx),
            // Like a pipe's: the output ends when the process does. (One
            // socket can carry both directions; shutting its write half
            // here is not this reader's and writer's pair to decide.)
            Output::Socket(w) => Pin::new(w).poll_flush(cx),
            Output::Blocking(w) => Pin::new(w).poll_shutdown(cx),
        }
    }
}

impl StdinReader {
    /// How standard input is read: `"pipe"`, `"socket"` or `"blocking"`
    /// (tokio's blocking-thread `stdin()`).
    #[must_use]
    pub fn mode(&self) -> &'static str {
        match self.0 {
            Input::Pipe(_) => "pipe",
            Input::Socket(_) => "socket",
            Input::Blocking(_) => "blocking",
        }
    }
}

impl StdoutWriter {
    /// How standard output is written: `"pipe"`, `"socket"` or
    /// `"blocking"` (tokio's blocking-thread `stdout()`).
    #[must_use]
    pub fn mode(&self) -> &'static str {
        match self.0 {
            Output::Pipe(_) => "pipe",
            Output::Socket(_) => "socket",
            Output::Blocking(_) => "blocking",
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;

    #[tokio::test]
    async fn pipes_and_sockets_are_used_on_the_runtime_and_carry_bytes() {
        // A socket pair, as Node's child_process gives a child.
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        let theirs_out = theirs.try_clone().unwrap();
        let mut reader = StdinReader(input_from(OwnedFd::from(theirs)).expect("a socket"));
        let mut writer = StdoutWriter(output_from(OwnedFd::from(theirs_out)).expect("a socket"));
        assert_eq!((reader.mode(), writer.mode()), ("socket", "socket"));
        ours.set_nonblocking(true).unwrap();
        let mut ours = UnixStream::from_std(ours).unwrap();
        ours.write_all(b"ping\n").await.unwrap();
        let mut got = [0u8; 5];
        reader.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"ping\n");
        writer.write_all(b"pong\n").await.unwrap();
        writer.flush().await.unwrap();
        ours.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"pong\n");

        // Pipes, as Rust's and Python's process APIs give a child.
        let (read, mut write) = std::io::pipe().unwrap();
        let mut reader = StdinReader(input_from(OwnedFd::from(read)).expect("a pipe"));
        assert_eq!(reader.mode(), "pipe");
        std::io::Write::write_all(&mut write, b"ping\n").unwrap();
        reader.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"ping\n");
        let (mut read, write) = std::io::pipe().unwrap();
        let mut writer = StdoutWriter(output_from(OwnedFd::from(write)).expect("a pipe"));
        assert_eq!(writer.mode(), "pipe");
        writer.write_all(b"pong\n").await.unwrap();
        drop(writer);
        let mut all = Vec::new();
        std::io::Read::read_to_end(&mut read, &mut all).unwrap();
        assert_eq!(all, b"pong\n");
    }

    #[tokio::test]
    async fn a_regular_file_is_not_taken() {
        let file = std::fs::File::open("Cargo.toml").unwrap();
        assert!(input_from(OwnedFd::from(file)).is_none());
    }
}
